#include "cart.h"

long pay(const struct item *items, int n) {
    return cart_total(items, n);
}
