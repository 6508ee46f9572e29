'use strict';

exports.halfUp = function halfUp(cents) {
  return Math.round(cents);
};

exports.cents = (money) => exports.halfUp(money.cents);
