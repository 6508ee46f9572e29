#include "cart.h"

namespace acme {

Money Cart::Audit(const Money& amount) { return amount; }

}  // namespace acme
