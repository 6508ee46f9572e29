#include "money.h"

namespace acme {

Money Money::Zero() { return Money(0); }

Money Money::Plus(const Money& other) const { return Money(cents_ + other.cents_); }

Money Discount::Apply(const Money& amount) const {
  return amount.cents() > cents_ ? Money::Zero() : amount;
}

}  // namespace acme
