package com.acme.money

class Discount(private val cents: Long) {
    fun apply(amount: Money): Money = Money.of(maxOf(0, amount.cents - cents))
}
