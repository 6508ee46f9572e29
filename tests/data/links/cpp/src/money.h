#pragma once

namespace acme {

class Money {
 public:
  static Money Zero();
  Money Plus(const Money& other) const;
  long cents() const { return cents_; }

 private:
  explicit Money(long cents) : cents_(cents) {}
  long cents_;
};

class Discount {
 public:
  explicit Discount(long cents) : cents_(cents) {}
  Money Apply(const Money& amount) const;

 private:
  long cents_;
};

}  // namespace acme
