package com.acme.shop;

import java.util.List;
import com.acme.money.Money;
import com.acme.money.*;
import static com.acme.money.Rounding.halfUp;

public class Cart extends BaseCart implements Priced {
    private final PriceList prices;

    public Cart(PriceList prices) {
        this.prices = prices;
    }

    @Override
    public Money total(List<Item> items) {
        Money sum = Money.zero();
        for (Item item : items) {
            sum = sum.plus(this.prices.priceOf(item));
        }
        var discount = new Discount(halfUp(sum.cents()));
        return super.audited(discount.apply(sum));
    }
}
