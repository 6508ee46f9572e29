#include "cart.h"

#include "money.h"
#include "rounding.h"

namespace acme {

Money Cart::Total(const std::vector<Item>& items) {
  Money sum = Money::Zero();
  for (const Item& item : items) {
    sum = sum.Plus(Money::Zero());
  }
  Discount* discount = new Discount(HalfUp(sum.cents()));
  return discount->Apply(Audit(sum));
}

}  // namespace acme
