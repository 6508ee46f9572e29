'use strict';

// the package's entry: what the shop exports, and the rounding helpers under a name
module.exports = require('./shop/checkout');
module.exports.rounding = require('./money/rounding');
