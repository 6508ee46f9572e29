'use strict';

/**
 * An amount of money, in cents.
 */
function Money(cents) {
  this.cents = cents;
}

Money.zero = function zero() {
  return new Money(0);
};

Money.prototype.plus = function plus(other) {
  return new Money(this.cents + other.cents);
};

module.exports = Money;
