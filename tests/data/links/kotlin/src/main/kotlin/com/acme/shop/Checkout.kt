package com.acme.shop

import com.acme.money.Money

class Checkout {
    fun pay(cart: Cart, items: List<Item>): Money = cart.total(items)
}
