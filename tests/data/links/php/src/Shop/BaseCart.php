<?php

namespace Acme\Shop;

use Acme\Money\Money;

abstract class BaseCart
{
    abstract public function total(array $items): Money;
}
