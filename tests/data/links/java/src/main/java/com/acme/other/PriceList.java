package com.acme.other;

public class PriceList {
    public long priceOf(String sku) {
        return 0;
    }

    public long audited(long total) {
        return total;
    }
}
