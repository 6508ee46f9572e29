#ifndef MONEY_H
#define MONEY_H

long money_zero(void);
long money_plus(long a, long b);
long half_up(long cents);

#endif
