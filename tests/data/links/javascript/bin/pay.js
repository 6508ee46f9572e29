#!/usr/bin/env node
'use strict';

const shop = require('../lib');

function main(items) {
  return shop.pay(items);
}

main(JSON.parse(process.argv[2] || '[]'));
