#pragma once

#include <vector>

#include "money.h"

namespace acme {

struct Item {
  long quantity;
};

class Cart {
 public:
  Money Total(const std::vector<Item>& items);

 private:
  Money Audit(const Money& amount);
};

}  // namespace acme
