package com.acme.shop

import com.acme.money.Money
import com.acme.money.*
import com.acme.money.halfUp as round
import com.acme.money.rounded

class Cart(private val prices: PriceList) : BaseCart(), Priced {
    override fun total(items: List<Item>): Money {
        var sum = Money.zero()
        for (item in items) {
            val price: Money = prices.priceOf(item)
            sum = price.plus(sum)
            if (item.weight() > 1000) sum = sum.doubled()
        }
        val discount = Discount(round(sum.cents))
        return super.audited(discount.apply(sum).rounded())
    }

    override fun currency(): String = "EUR"
}
