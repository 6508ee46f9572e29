package com.acme.shop;

public record Item(String sku, int quantity) {
}
