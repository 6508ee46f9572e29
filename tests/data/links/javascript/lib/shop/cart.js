'use strict';

const Money = require('../money/money');
const rounding = require('../money/rounding');
const { halfUp } = require('../money/rounding');
const { priceOf: lookup } = require('./prices');

exports.total = function total(items) {
  let sum = Money.zero();
  for (const item of items) {
    sum = sum.plus(new Money(halfUp(lookup(item))));
  }
  return rounding.cents(sum);
};
