package com.acme.money

class Money private constructor(val cents: Long) {
    fun plus(other: Money): Money = Money(cents + other.cents)

    companion object {
        fun zero(): Money = Money(0)

        fun of(cents: Long): Money = Money(cents)
    }
}
