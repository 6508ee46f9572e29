#include "cart.h"
#include "money.h"
#include "prices.h"

long cart_total(const struct item *items, int n) {
    long sum = money_zero();
    for (int i = 0; i < n; i++) {
        sum = money_plus(sum, price_of(&items[i]));
    }
    return half_up(sum);
}
