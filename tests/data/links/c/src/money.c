#include "money.h"

long money_zero(void) {
    return 0;
}

long money_plus(long a, long b) {
    return a + b;
}
