package com.acme.other

class PriceList {
    fun priceOf(sku: String): Long = sku.length.toLong()
}

fun Long.rounded(): Long = this / 100 * 100
