'use strict';

const path = require('path');

/**
 * Resolves a module path relative to the project root.
 */
function resolveFrom(root, name) {
  return path.resolve(root, name);
}

class Loader {
  constructor(root) {
    this.root = root;
  }

  load(name) {
    return require(resolveFrom(this.root, name));
  }

  static create() {
    return new Loader(process.cwd());
  }
}

const once = (fn) => {
  let done = false;
  return (...args) => (done ? undefined : ((done = true), fn(...args)));
};

module.exports = { Loader, once, resolveFrom };
