// quotabench's jest-style `expect` (node_jest.mjs makes it a global): jest's matchers, failing with
// node:assert's AssertionError (a test's failure is then "assertion", as node:assert's are).
// Loaded before any workspace module: every built-in it uses is taken now, the matchers are
// frozen, and no value under test is ever handed what it is compared with. Only the expected side
// may be an asymmetric matcher, and only one made here (expect.any, expect.objectContaining, ...):
// an object of the workspace's with an `asymmetricMatch` of its own is compared as any object.
import assert from 'node:assert';
import util from 'node:util';

// consts, not live import bindings (which syncBuiltinESMExports could move)
const { AssertionError } = assert;
const { inspect, types } = util;
const custom = inspect.custom;

const { apply, ownKeys, getPrototypeOf, get: getOf } = Reflect;
const { is, freeze, getOwnPropertyDescriptor, hasOwn } = Object;
const toObject = Object;
const { isArray } = Array;
const CLASSES = { Number, String, Boolean, BigInt, Symbol, Function, Object };
const hasInstance = Function.prototype[Symbol.hasInstance];
const isEnumerable = Object.prototype.propertyIsEnumerable;
const includes = String.prototype.includes;
const split = String.prototype.split;
const regexpExec = RegExp.prototype.exec;
const regexpSource = getOwnPropertyDescriptor(RegExp.prototype, 'source').get;
const regexpFlags = getOwnPropertyDescriptor(RegExp.prototype, 'flags').get;
const getTime = Date.prototype.getTime;
const mapGet = Map.prototype.get;
const mapHas = Map.prototype.has;
const mapSize = getOwnPropertyDescriptor(Map.prototype, 'size').get;
const mapEntries = Map.prototype.entries;
const setHas = Set.prototype.has;
const setSize = getOwnPropertyDescriptor(Set.prototype, 'size').get;
const setValues = Set.prototype.values;
const mapIteratorNext = getPrototypeOf(new Map().entries()).next;
const setIteratorNext = getPrototypeOf(new Set().values()).next;
const weakGet = WeakMap.prototype.get;
const weakSet = WeakMap.prototype.set;
const numberValue = Number.prototype.valueOf;
const stringValue = String.prototype.valueOf;
const booleanValue = Boolean.prototype.valueOf;
const { isMap, isSet, isDate, isRegExp, isNativeError, isPromise, isNumberObject, isStringObject, isBooleanObject } = types;
const { abs, pow } = Math;
const isNaNValue = Number.isNaN;
const show = (value) => {
  try {
    return inspect(value, { depth: 4, breakLength: 100 });
  } catch {
    return '<a value that cannot be shown>';
  }
};
// No spread, for-of or destructuring of arrays below: each asks Array.prototype[Symbol.iterator],
// which workspace code could replace for the length of one test (and put back before the end).

// -- asymmetric matchers: only these, only on the expected side --------------------------------
const asymmetric = new WeakMap(); // matcher -> (value) => boolean
const ruleOf = (value) => (typeof value === 'object' && value !== null ? apply(weakGet, asymmetric, [value]) : undefined);

function matcher(label, test) {
  const made = freeze({ __proto__: null, [custom]: () => label });
  apply(weakSet, asymmetric, [made, test]);
  return made;
}

function typeOf(value, Class) {
  if (Class === CLASSES.Number) return typeof value === 'number' || isNumberObject(value);
  if (Class === CLASSES.String) return typeof value === 'string' || isStringObject(value);
  if (Class === CLASSES.Boolean) return typeof value === 'boolean' || isBooleanObject(value);
  if (Class === CLASSES.BigInt) return typeof value === 'bigint';
  if (Class === CLASSES.Symbol) return typeof value === 'symbol';
  if (Class === CLASSES.Function) return typeof value === 'function';
  if (Class === CLASSES.Object) return typeof value === 'object' && value !== null;
  return instanceOf(value, Class);
}

// `instanceof` without the class's own Symbol.hasInstance (which could say yes to anything)
function instanceOf(value, Class) {
  return typeof Class === 'function' && apply(hasInstance, Class, [value]);
}

// -- equality (jest's `equals`; `strict` is toStrictEqual's) --------------------------------------
function keysOf(object, strict) {
  const all = ownKeys(object);
  const keys = [];
  for (let i = 0; i < all.length; i++) {
    const key = all[i];
    if (!apply(isEnumerable, object, [key])) continue;
    if (!strict && getOf(object, key) === undefined) continue;
    keys[keys.length] = key;
  }
  return keys;
}

function each(iterator, next, visit) {
  for (let step = apply(next, iterator, []); !step.done; step = apply(next, iterator, [])) {
    if (!visit(step.value)) return false;
  }
  return true;
}

// The pairs being compared further up (a cycle compares equal where it closes the same way).
function cycle(seen, a, b) {
  for (let at = seen; at !== null; at = at.up) if (at.a === a) return at.b === b ? 1 : 0;
  return -1;
}

const BRANDS = freeze([
  freeze([isDate, (x, y) => is(apply(getTime, x, []), apply(getTime, y, []))]),
  freeze([isRegExp, (x, y) => apply(regexpSource, x, []) === apply(regexpSource, y, []) && apply(regexpFlags, x, []) === apply(regexpFlags, y, [])]),
  freeze([isNumberObject, (x, y) => is(apply(numberValue, x, []), apply(numberValue, y, []))]),
  freeze([isStringObject, (x, y) => apply(stringValue, x, []) === apply(stringValue, y, [])]),
  freeze([isBooleanObject, (x, y) => apply(booleanValue, x, []) === apply(booleanValue, y, [])]),
]);

function equals(a, b, strict, seen = null) {
  const rule = ruleOf(b);
  if (rule !== undefined) return rule(a);
  if (is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (isNativeError(a) && isNativeError(b)) {
    return getOf(a, 'message') === getOf(b, 'message') && (!strict || getPrototypeOf(a) === getPrototypeOf(b));
  }
  if (isArray(a) !== isArray(b)) return false;
  if (strict && getPrototypeOf(a) !== getPrototypeOf(b)) return false;
  for (let i = 0; i < BRANDS.length; i++) {
    const brand = BRANDS[i][0];
    if (brand(a) !== brand(b)) return false;
    if (brand(a)) return BRANDS[i][1](a, b);
  }
  const closed = cycle(seen, a, b);
  if (closed >= 0) return closed === 1;
  seen = { a, b, up: seen };
  if (isMap(a) !== isMap(b) || isSet(a) !== isSet(b)) return false;
  if (isMap(a)) {
    if (apply(mapSize, a, []) !== apply(mapSize, b, [])) return false;
    return each(apply(mapEntries, a, []), mapIteratorNext, (entry) => {
      const key = entry[0];
      if (apply(mapHas, b, [key])) return equals(entry[1], apply(mapGet, b, [key]), strict, seen);
      return !each(apply(mapEntries, b, []), mapIteratorNext, (other) => !(equals(key, other[0], strict, seen) && equals(entry[1], other[1], strict, seen)));
    });
  }
  if (isSet(a)) {
    if (apply(setSize, a, []) !== apply(setSize, b, [])) return false;
    return each(apply(setValues, a, []), setIteratorNext, (value) =>
      apply(setHas, b, [value]) || !each(apply(setValues, b, []), setIteratorNext, (other) => !equals(value, other, strict, seen)));
  }
  if (strict && isArray(a) && getOf(a, 'length') !== getOf(b, 'length')) return false;
  const keys = keysOf(a, strict);
  if (keysOf(b, strict).length !== keys.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (strict ? !hasOwn(b, key) : getOf(b, key) === undefined) return false;
    if (!equals(getOf(a, key), getOf(b, key), strict, seen)) return false;
  }
  return true;
}

// toMatchObject: every property the expected object has, the received has, equal (recursively)
function subset(a, b, seen = null) {
  const rule = ruleOf(b);
  if (rule !== undefined) return rule(a);
  if (typeof b !== 'object' || b === null || isDate(b) || isRegExp(b) || isMap(b) || isSet(b)) return equals(a, b, false);
  if (typeof a !== 'object' || a === null || isArray(a) !== isArray(b)) return false;
  if (isArray(b) && getOf(a, 'length') !== getOf(b, 'length')) return false;
  const closed = cycle(seen, a, b);
  if (closed >= 0) return closed === 1;
  seen = { a, b, up: seen };
  const keys = keysOf(b, true);
  for (let i = 0; i < keys.length; i++) {
    if (!(keys[i] in a) || !subset(getOf(a, keys[i]), getOf(b, keys[i]), seen)) return false;
  }
  return true;
}

function items(value) {
  if (typeof value === 'string') return null;
  if (isArray(value)) return value;
  if (isSet(value)) {
    const out = [];
    each(apply(setValues, value, []), setIteratorNext, (v) => { out[out.length] = v; return true; });
    return out;
  }
  if (value !== null && typeof value === 'object' && typeof value[Symbol.iterator] === 'function') {
    const out = [];
    for (const v of value) out[out.length] = v;
    return out;
  }
  return undefined;
}

function messageOf(thrown) {
  const message = thrown !== null && (typeof thrown === 'object' || typeof thrown === 'function') ? getOf(thrown, 'message') : thrown;
  try {
    return `${message}`;
  } catch {
    return '';
  }
}

function numbers(name, received, expected) {
  const ok = (v) => typeof v === 'number' || typeof v === 'bigint';
  if (!ok(received) || !ok(expected)) fail(name, received, expected, `${name} compares numbers`);
}

// -- the matchers: each says whether the claim holds ---------------------------------------------
const MATCHERS = {
  toBe: (r, e) => is(r, e),
  toEqual: (r, e) => equals(r, e, false),
  toStrictEqual: (r, e) => equals(r, e, true),
  toMatchObject: (r, e) => subset(r, e),
  toBeCloseTo(r, e, digits = 2) {
    numbers('toBeCloseTo', r, e);
    if (r === Infinity && e === Infinity) return true;
    if (r === -Infinity && e === -Infinity) return true;
    return abs(e - r) < pow(10, -digits) / 2;
  },
  toBeGreaterThan: (r, e) => (numbers('toBeGreaterThan', r, e), r > e),
  toBeGreaterThanOrEqual: (r, e) => (numbers('toBeGreaterThanOrEqual', r, e), r >= e),
  toBeLessThan: (r, e) => (numbers('toBeLessThan', r, e), r < e),
  toBeLessThanOrEqual: (r, e) => (numbers('toBeLessThanOrEqual', r, e), r <= e),
  toBeTruthy: (r) => !!r,
  toBeFalsy: (r) => !r,
  toBeNull: (r) => r === null,
  toBeUndefined: (r) => r === undefined,
  toBeDefined: (r) => r !== undefined,
  toBeNaN: (r) => typeof r === 'number' && isNaNValue(r),
  toBeInstanceOf: (r, e) => instanceOf(r, e),
  toContain(r, e) {
    if (typeof r === 'string') return typeof e === 'string' && apply(includes, r, [e]);
    const list = items(r);
    if (list == null) fail('toContain', r, e, 'toContain looks in a string, an array or an iterable');
    for (let i = 0; i < list.length; i++) if (list[i] === e) return true;
    return false;
  },
  toContainEqual(r, e) {
    const list = items(r);
    if (list == null) fail('toContainEqual', r, e, 'toContainEqual looks in an array or an iterable');
    for (let i = 0; i < list.length; i++) if (equals(list[i], e, false)) return true;
    return false;
  },
  toHaveLength(r, e) {
    if (r === null || r === undefined || typeof getOf(toObject(r), 'length') !== 'number') {
      fail('toHaveLength', r, e, 'the received value has no length');
    }
    return getOf(toObject(r), 'length') === e;
  },
  toHaveProperty(r, path, ...value) {
    const steps = isArray(path) ? path : apply(split, `${path}`, ['.']);
    let at = r;
    for (let i = 0; i < steps.length; i++) {
      if (at === null || at === undefined || !(steps[i] in toObject(at))) return false;
      at = getOf(toObject(at), steps[i]);
    }
    return value.length === 0 || equals(at, value[0], false);
  },
  toMatch(r, e) {
    if (typeof r !== 'string') fail('toMatch', r, e, 'toMatch reads a string');
    return isRegExp(e) ? apply(regexpExec, e, [r]) !== null : apply(includes, r, [`${e}`]);
  },
  toThrow(thrown, e) { // `thrown`: what calling the function (or the promise) did
    if (!thrown.threw) return false;
    const value = thrown.value;
    if (e === undefined) return true;
    const rule = ruleOf(e);
    if (rule !== undefined) return rule(value);
    if (typeof e === 'function') return instanceOf(value, e);
    if (typeof e === 'string') return apply(includes, messageOf(value), [e]);
    if (isRegExp(e)) return apply(regexpExec, e, [messageOf(value)]) !== null;
    if (e !== null && typeof e === 'object') return messageOf(value) === messageOf(e);
    return false;
  },
};
MATCHERS.toThrowError = MATCHERS.toThrow;
freeze(MATCHERS);
const NAMES = freeze(ownKeys(MATCHERS));

function fail(name, received, expected, message) {
  throw new AssertionError({ message, actual: received, expected, operator: name });
}

function claim(name, received, args, negated, thrown) {
  const given = [thrown ?? received];
  for (let i = 0; i < args.length; i++) given[given.length] = args[i];
  const holds = apply(MATCHERS[name], null, given);
  if (!!holds !== negated) return;
  const shown = thrown ? (thrown.threw ? `threw ${show(thrown.value)}` : 'did not throw') : show(received);
  let wanted = '';
  for (let i = 0; i < args.length; i++) wanted += `${i ? ', ' : `\nExpected: ${negated ? 'not ' : ''}`}${show(args[i])}`;
  const message = `expect(received).${negated ? 'not.' : ''}${name}(${args.length ? 'expected' : ''})${wanted}\nReceived: ${shown}`;
  throw new AssertionError({ message, actual: received, expected: args[0], operator: name });
}

function run(fn) {
  try {
    fn();
    return { threw: false, value: undefined };
  } catch (value) {
    return { threw: true, value };
  }
}

// received, how (null | 'resolves' | 'rejects'), negated: one frozen object of matchers
function matchers(received, how, negated) {
  const out = { __proto__: null };
  for (let i = 0; i < NAMES.length; i++) {
    const name = NAMES[i];
    const throwing = name === 'toThrow' || name === 'toThrowError';
    out[name] = how === null
      ? (...args) => {
        if (throwing && typeof received !== 'function') fail(name, received, args[0], `${name} calls a function; received ${show(received)}`);
        claim(name, received, args, negated, throwing ? run(received) : null);
      }
      : async (...args) => {
        if (!isPromise(received) && (received === null || typeof received?.then !== 'function')) {
          fail(name, received, args[0], `.${how} needs a promise; received ${show(received)}`);
        }
        let settled;
        try {
          settled = { ok: true, value: await received };
        } catch (error) {
          settled = { ok: false, value: error };
        }
        if (settled.ok !== (how === 'resolves')) {
          fail(name, settled.value, args[0], `expected the promise to ${how === 'resolves' ? 'resolve' : 'reject'}; it ${settled.ok ? 'resolved to' : 'rejected with'} ${show(settled.value)}`);
        }
        claim(name, settled.value, args, negated, throwing ? { threw: !settled.ok, value: settled.value } : null);
      };
  }
  if (!negated) out.not = matchers(received, how, true);
  if (how === null && !negated) {
    out.resolves = matchers(received, 'resolves', false);
    out.rejects = matchers(received, 'rejects', false);
  }
  return freeze(out);
}

export function expect(received) {
  return matchers(received, null, false);
}
expect.any = (Class) => matcher(`Any<${Class?.name ?? Class}>`, (v) => typeOf(v, Class));
expect.anything = () => matcher('Anything', (v) => v !== null && v !== undefined);
function containsAll(v, list) {
  if (!isArray(v)) return false;
  for (let i = 0; i < list.length; i++) {
    let found = false;
    for (let j = 0; j < v.length && !found; j++) found = equals(v[j], list[i], false);
    if (!found) return false;
  }
  return true;
}

expect.arrayContaining = (list) => matcher(`ArrayContaining ${show(list)}`, (v) => containsAll(v, list));
expect.objectContaining = (object) => matcher(`ObjectContaining ${show(object)}`, (v) => subset(v, object));
expect.stringContaining = (text) => matcher(`StringContaining ${show(text)}`, (v) => typeof v === 'string' && apply(includes, v, [text]));
expect.stringMatching = (pattern) => matcher(`StringMatching ${show(pattern)}`, (v) => typeof v === 'string' && (isRegExp(pattern) ? apply(regexpExec, pattern, [v]) !== null : apply(includes, v, [pattern])));
expect.closeTo = (number, digits = 2) => matcher(`CloseTo ${number}`, (v) => typeof v === 'number' && abs(number - v) < pow(10, -digits) / 2);
freeze(expect);
