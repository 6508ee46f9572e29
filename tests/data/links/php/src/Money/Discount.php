<?php

namespace Acme\Money;

class Discount
{
    public function __construct(private int $cents)
    {
    }

    public function apply(Money $amount): Money
    {
        return Money::of(max(0, $amount->cents - $this->cents));
    }
}
