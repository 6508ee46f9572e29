package com.acme.money;

public final class Money {
    private final long cents;

    private Money(long cents) {
        this.cents = cents;
    }

    public static Money zero() {
        return new Money(0);
    }

    public static Money of(long cents) {
        return new Money(cents);
    }

    public Money plus(Money other) {
        return new Money(cents + other.cents);
    }

    public long cents() {
        return cents;
    }
}
