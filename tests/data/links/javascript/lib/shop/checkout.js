'use strict';

const cart = require('./cart');

function pay(items) {
  return cart.total(items);
}

module.exports = { pay };
