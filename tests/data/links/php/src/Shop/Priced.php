<?php

namespace Acme\Shop;

interface Priced
{
    public function total(array $items): \Acme\Money\Money;
}
