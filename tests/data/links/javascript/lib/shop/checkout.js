'use strict';

const cart = require('./cart');

function pay(items) {
  return cart.total(items);
}

module.exports = { pay };

// a `require` in a function binds `cart` in the function only; package data is no code
function refund(items) {
  const cart = require('../other/prices');
  const meta = require('../../package.json');
  return cart.priceOf(items[0]) + meta.version;
}
