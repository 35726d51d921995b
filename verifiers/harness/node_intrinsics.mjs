// The JavaScript built-ins hidden tests judge with (Number.isNaN, Array.prototype.includes,
// TypeError[Symbol.hasInstance], JSON, Object.is, ...): node_preload.mjs snapshots them before any
// workspace module loads, and node_reporter.mjs checks them when the tests are over.
// A property replaced, added or removed on one of them is `oracle-patched`: an act when one the
// tests judge with was replaced or removed, or a symbol (Symbol.hasInstance: what instanceof asks)
// added; a suspect when a polyfill added a named one. node's assert module
// compares with its own saved copies (primordials); the tests' own expressions do not.
const { getOwnPropertyDescriptor, getPrototypeOf, is: same } = Object;
const { ownKeys } = Reflect;
const MISSING = Symbol('missing');
const { apply } = Reflect;
const symbolToString = Symbol.prototype.toString;

// What tests judge with; node's own classes (Buffer, URL, ...) and the rarer typed arrays are
// left out: each object checked costs a little.
const GLOBALS = [
  'Object', 'Function', 'Array', 'String', 'Number', 'Boolean', 'Symbol', 'BigInt', 'Math', 'JSON',
  'Reflect', 'Promise', 'RegExp', 'Date', 'Map', 'Set', 'WeakMap', 'WeakSet', 'Error', 'TypeError',
  'RangeError', 'SyntaxError', 'ReferenceError', 'Uint8Array', 'parseInt', 'parseFloat', 'isNaN',
  'isFinite', 'structuredClone',
];
// Error's stack hooks are set and reset by node and its source maps; the scan reads them instead.
const MOVABLE = new Set(['Error.prepareStackTrace', 'Error.stackTraceLimit']);

function named(key) {
  return typeof key === 'symbol' ? `[${apply(symbolToString, key, [])}]` : `.${key}`;
}

function places() {
  const out = [[globalThis, 'globalThis', GLOBALS]];
  for (const name of GLOBALS) {
    const value = getOwnPropertyDescriptor(globalThis, name)?.value;
    if ((typeof value !== 'object' && typeof value !== 'function') || value === null) continue;
    out.push([value, name, null]);
    const proto = typeof value === 'function' ? getOwnPropertyDescriptor(value, 'prototype')?.value : null;
    if (proto && typeof proto === 'object') out.push([proto, `${name}.prototype`, null]);
  }
  const iterators = [
    [getPrototypeOf([][Symbol.iterator]()), 'ArrayIterator'],
    [getPrototypeOf(getPrototypeOf([][Symbol.iterator]())), 'Iterator'],
    [getPrototypeOf(new Map().entries()), 'MapIterator'],
    [getPrototypeOf(new Set().values()), 'SetIterator'],
    [getPrototypeOf(''[Symbol.iterator]()), 'StringIterator'],
    [getPrototypeOf(Uint8Array), 'TypedArray'],
    [getPrototypeOf(Uint8Array.prototype), 'TypedArray.prototype'],
    [getPrototypeOf(function* () {}).prototype, 'Generator'],
  ];
  for (const [object, name] of iterators) out.push([object, name, null]);
  return out;
}

// Returns a check: null while every built-in is as it was, else [what changed, whether it is an act].
export function snapshot() {
  const prints = [];
  for (const [object, name, only] of places()) {
    const keys = [];
    const values = [];
    const getters = [];
    const setters = [];
    for (const key of only ?? ownKeys(object)) {
      if (MOVABLE.has(`${name}${named(key)}`)) continue;
      const d = getOwnPropertyDescriptor(object, key);
      keys.push(key);
      values.push(d?.value);
      getters.push(d === undefined ? MISSING : d.get);
      setters.push(d?.set);
    }
    prints.push([object, name, keys, values, getters, setters, only === null ? ownKeys(object).length : -1]);
  }
  return function changed() {
    let addition = null;
    for (const [object, name, keys, values, getters, setters, count] of prints) {
      for (let i = 0; i < keys.length; i++) {
        const d = getOwnPropertyDescriptor(object, keys[i]);
        const kept = d === undefined
          ? getters[i] === MISSING
          : getters[i] !== MISSING && same(d.value, values[i]) && d.get === getters[i] && d.set === setters[i];
        if (!kept) return [`${name}${named(keys[i])} was ${d === undefined ? 'removed' : 'replaced'}`, true];
      }
      if (count >= 0 && ownKeys(object).length !== count) {
        const known = new Set(keys);
        for (const added of ownKeys(object)) {
          if (known.has(added) || MOVABLE.has(`${name}${named(added)}`)) continue;
          if (typeof added === 'symbol') return [`${name}${named(added)} was added`, true];
          addition ??= [`${name}${named(added)} was added`, false];
        }
      }
    }
    return addition;
  };
}
