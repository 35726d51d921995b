// The JavaScript built-ins hidden tests judge with (Number.isNaN, Array.prototype.includes,
// TypeError[Symbol.hasInstance], JSON, Object.is, ...): node_preload.mjs snapshots them before any
// workspace module loads, and node_reporter.mjs checks them at every test event and at the end.
// A property replaced, added or removed on one of them is `oracle-patched`. node's assert module
// compares with its own saved copies (primordials); the tests' own expressions do not.
const { getOwnPropertyDescriptor, getPrototypeOf, is: same } = Object;
const { ownKeys } = Reflect;
const { apply } = Reflect;
const symbolToString = Symbol.prototype.toString;

const GLOBALS = [
  'Object', 'Function', 'Array', 'String', 'Number', 'Boolean', 'Symbol', 'BigInt', 'Math', 'JSON',
  'Reflect', 'Promise', 'RegExp', 'Date', 'Map', 'Set', 'WeakMap', 'WeakSet', 'WeakRef', 'Proxy',
  'Error', 'TypeError', 'RangeError', 'SyntaxError', 'ReferenceError', 'EvalError', 'URIError',
  'AggregateError', 'ArrayBuffer', 'SharedArrayBuffer', 'DataView', 'Atomics', 'Int8Array',
  'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array',
  'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array', 'Intl', 'parseInt',
  'parseFloat', 'isNaN', 'isFinite', 'encodeURIComponent', 'decodeURIComponent', 'encodeURI',
  'decodeURI', 'structuredClone', 'Buffer', 'URL', 'URLSearchParams', 'TextEncoder', 'TextDecoder',
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
    [getPrototypeOf(Int8Array), 'TypedArray'],
    [getPrototypeOf(Int8Array.prototype), 'TypedArray.prototype'],
    [getPrototypeOf(function* () {}).prototype, 'Generator'],
  ];
  for (const [object, name] of iterators) out.push([object, name, null]);
  return out;
}

// Returns a check: null while every built-in is as it was, else what changed (once).
export function snapshot() {
  const prints = [];
  for (const [object, name, only] of places()) {
    const keys = only ?? ownKeys(object);
    const held = new Map();
    for (const key of keys) {
      if (MOVABLE.has(`${name}${named(key)}`)) continue;
      const d = getOwnPropertyDescriptor(object, key);
      held.set(key, d ? [d.value, d.get, d.set] : null);
    }
    prints.push([object, name, held, only !== null]);
  }
  return function changed() {
    for (const [object, name, held, fixed] of prints) {
      for (const [key, was] of held) {
        const d = getOwnPropertyDescriptor(object, key);
        const now = d ? [d.value, d.get, d.set] : null;
        if ((now === null) !== (was === null) || (now && !(same(now[0], was[0]) && now[1] === was[1] && now[2] === was[2]))) {
          return `${name}${named(key)} was ${now === null ? 'removed' : 'replaced'}`;
        }
      }
      if (fixed) continue;
      for (const key of ownKeys(object)) {
        if (!held.has(key) && !MOVABLE.has(`${name}${named(key)}`)) return `${name}${named(key)} was added`;
      }
    }
    return null;
  };
}
