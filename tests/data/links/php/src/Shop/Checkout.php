<?php

namespace Acme\Shop;

class Checkout
{
    public function pay(Cart $cart, array $items)
    {
        return $cart->total($items);
    }
}
