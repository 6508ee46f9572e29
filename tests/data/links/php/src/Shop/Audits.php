<?php

namespace Acme\Shop;

trait Audits
{
    public function audit($amount)
    {
        return $amount;
    }
}
