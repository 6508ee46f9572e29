<?php

namespace Acme\Shop;

use Acme\Money\Discount;
use Acme\Money\Rounding;

/**
 * Written before PHP 7.4: its properties and parameters are typed in docblocks, or by
 * what the constructor assigns them.
 */
class Ledger
{
    /** @var PriceList */
    private $prices;

    private $rounding;

    private $discount;

    /**
     * @param Discount|null $discount
     */
    public function __construct(PriceList $prices, $discount = null)
    {
        $this->prices = $prices;
        $this->rounding = new Rounding();
        $this->discount = $discount;
    }

    /**
     * @param Cart $cart
     * @param array[] $items
     */
    public function record($cart, $items): int
    {
        /** @var Checkout $checkout */
        $checkout = $this->open();
        $checkout->pay($cart, $items);
        $this->discount->apply($cart->total($items));
        return $this->rounding->cents($this->prices->priceOf($items[0]));
    }

    public function open(): Checkout
    {
        return new Checkout();
    }

    public function keep(): static
    {
        return $this;
    }

    public function rerecord($cart): int
    {
        return $this->keep()->open()->pay($cart, []);
    }
}
