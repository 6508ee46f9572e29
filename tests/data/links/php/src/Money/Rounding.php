<?php

namespace Acme\Money;

final class Rounding
{
    public static function cents(Money $amount): int
    {
        return $amount->cents;
    }
}

function half_up(int $cents): int
{
    return intdiv($cents + 50, 100) * 100;
}
