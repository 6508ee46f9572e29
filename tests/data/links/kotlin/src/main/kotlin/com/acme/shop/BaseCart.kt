package com.acme.shop

import com.acme.money.Money

abstract class BaseCart {
    abstract fun total(items: List<Item>): Money

    open fun audited(total: Money): Money = total
}

interface Priced {
    fun currency(): String
}

data class Item(val sku: String, val quantity: Int)
