'use strict';

// a namesake of lib/shop/prices.js and lib/money/rounding.js: nothing in lib/shop uses it
exports.priceOf = function priceOf(item) {
  return item.listPrice;
};

exports.halfUp = function halfUp(cents) {
  return Math.floor(cents + 0.5);
};
