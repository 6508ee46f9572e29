#ifndef PRICES_H
#define PRICES_H

struct item {
    const char *sku;
    int quantity;
};

long price_of(const struct item *item);

#endif
