package com.acme.shop;

import java.util.List;
import com.acme.money.Money;

public class Checkout {
    public Money pay(Cart cart, List<Item> items) {
        return cart.total(items);
    }
}
