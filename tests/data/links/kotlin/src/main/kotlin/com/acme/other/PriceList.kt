package com.acme.other

class PriceList {
    fun priceOf(sku: String): Long = sku.length.toLong()
}
