'use strict';

const table = new Map();

const priceOf = (item) => table.get(item.sku) || 0;

module.exports = { priceOf };
