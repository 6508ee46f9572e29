#include "money.h"

long half_up(long cents) {
    return (cents + 50) / 100 * 100;
}
