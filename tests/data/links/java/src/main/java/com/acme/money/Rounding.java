package com.acme.money;

public final class Rounding {
    public static long halfUp(long cents) {
        return (cents + 50) / 100 * 100;
    }
}
