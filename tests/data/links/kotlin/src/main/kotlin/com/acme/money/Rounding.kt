package com.acme.money

fun halfUp(cents: Long): Long = (cents + 50) / 100 * 100

fun Money.rounded(): Money = Money.of(halfUp(cents))

fun Money.doubled(): Money = plus(this)
