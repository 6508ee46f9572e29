<?php

namespace Acme\Shop;

use Acme\Money\Money;
use Acme\Money\{Discount, Rounding as R};
use function Acme\Money\half_up;

final class Cart extends BaseCart implements Priced
{
    use Audits;

    public function __construct(private PriceList $prices)
    {
    }

    public function total(array $items): Money
    {
        $sum = Money::zero();
        foreach ($items as $item) {
            $sum = $sum->plus($this->prices->priceOf($item));
        }
        $discount = new Discount(half_up(R::cents($sum)));
        return $this->audit($discount->apply($sum));
    }
}
