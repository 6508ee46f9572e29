package com.example.orders;

import java.util.List;
import java.util.Objects;

/**
 * Computes order totals.
 */
@Service
public class OrderService {
    private final TaxPolicy taxPolicy;

    public OrderService(TaxPolicy taxPolicy) {
        this.taxPolicy = Objects.requireNonNull(taxPolicy);
    }

    /** Sum of line totals plus tax. */
    @Transactional(readOnly = true)
    public long total(List<LineItem> items) {
        long subtotal = items.stream().mapToLong(LineItem::amount).sum();
        return subtotal + taxPolicy.taxFor(subtotal);
    }

    public static class LineItem {
        private final long amount;

        LineItem(long amount) {
            this.amount = amount;
        }

        long amount() {
            return amount;
        }
    }

    interface TaxPolicy {
        long taxFor(long subtotal);
    }
}
