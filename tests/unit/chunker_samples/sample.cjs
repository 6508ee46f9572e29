'use strict';

const EventEmitter = require('events');

/**
 * A router: CommonJS, the way Express writes one.
 */
var proto = module.exports = function (options) {
  return new EventEmitter(options);
};

// dispatch a request to the matching layer
proto.handle = function handle(req, res, out) {
  return this.match(req) ? res.end() : out();
};

Layer.prototype.match = function match(path) {
  return this.regexp.test(path);
};

exports.compile = function compile(val) {
  return exports.parse(val);
};

module.exports.parse = (val) => String(val).split(',');

exports.version = '1.0.0';
