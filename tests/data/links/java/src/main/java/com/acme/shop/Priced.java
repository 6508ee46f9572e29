package com.acme.shop;

public interface Priced {
    String currency();
}
