#ifndef CART_H
#define CART_H

#include "prices.h"

long cart_total(const struct item *items, int n);

#endif
