#include "cart.h"

namespace acme {

long Pay(Cart& cart, const std::vector<Item>& items) { return cart.Total(items).cents(); }

}  // namespace acme
