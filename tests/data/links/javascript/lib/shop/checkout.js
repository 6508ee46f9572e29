'use strict';

const cart = require('./cart');

function pay(items) {
  return cart.total(items);
}

module.exports = { pay };

// a `require` in a function does not rebind the file's `cart`; package data is no code
function refund(items) {
  const cart = require('../other/prices');
  const meta = require('../../package.json');
  return cart.priceOf(items[0]) + meta.version;
}
