#include "prices.h"

long price_of(const struct item *item) {
    return item->quantity * 100L;
}
