package com.acme.money;

public class Discount {
    private final long cents;

    public Discount(long cents) {
        this.cents = cents;
    }

    public Money apply(Money amount) {
        return Money.of(Math.max(0, amount.cents() - cents));
    }
}
