// quotabench's node:test reporter: one signed record per finished test (its name and
// file:line:column, which is its identity), then the session's end. node_preload.mjs attaches
// the signer and makes sure node calls this reporter before any workspace module loads; a second
// call (from workspace code, with a stream of its own) is itself recorded as evidence.
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { Duplex, Readable, Transform, Writable } from 'node:stream';

// Taken at load (before any workspace module): what the checks below compare with.
const { getPrototypeOf, getOwnPropertyNames, getOwnPropertyDescriptor } = Object;
const { apply } = Reflect;
const { relative, sep } = path;
const startsWith = String.prototype.startsWith;
let emit = null;
let work = '';
let builtins = () => null;
let claimed = false;
let markReady;
export const ready = new Promise((resolve) => { markReady = resolve; });

export function attach(signer, folder, intrinsics) {
  if (emit === null) {
    emit = signer;
    work = folder;
    builtins = intrinsics;
  }
}

// An own data property of an object or of one of its prototypes; never a getter's value (a
// thrown object may be the workspace's).
function dataValue(object, key) {
  try {
    for (let o = object; o !== null && (typeof o === 'object' || typeof o === 'function'); o = getPrototypeOf(o)) {
      const d = getOwnPropertyDescriptor(o, key);
      if (d !== undefined) return 'value' in d ? d.value : undefined;
    }
  } catch {
    return undefined;
  }
  return undefined;
}

// How a test failed: "assertion" for node:assert's AssertionError, else the thrown error's name.
function failureOf(error) {
  const cause = dataValue(error, 'code') === 'ERR_TEST_FAILURE' ? dataValue(error, 'cause') : error;
  if (cause === null || (typeof cause !== 'object' && typeof cause !== 'function')) return typeof cause;
  if (dataValue(cause, 'code') === 'ERR_ASSERTION') return 'assertion';
  const name = dataValue(cause, 'name');
  return typeof name === 'string' ? name : '?';
}

function where(data) {
  let file = data.file || '';
  if (apply(startsWith, file, ['file://'])) file = new URL(file).pathname;
  const rel = apply(startsWith, file, [work + sep]) ? relative(work, file) : file;
  return `${rel}:${data.line ?? '?'}:${data.column ?? '?'}`;
}

// What node's events reach this reporter through (the stream classes, EventEmitter, and the
// source's own prototype chain): code that replaced one of their methods could feed this
// reporter events of its own.
const STREAMS = [Readable.prototype, Writable.prototype, Duplex.prototype, Transform.prototype, EventEmitter.prototype];

function snapshot(object) {
  const protos = [...STREAMS];
  for (let proto = getPrototypeOf(object); proto !== null && proto !== Object.prototype; proto = getPrototypeOf(proto)) {
    protos.push(proto);
  }
  const prints = [];
  for (const proto of protos) {
    for (const name of getOwnPropertyNames(proto)) {
      const d = getOwnPropertyDescriptor(proto, name);
      prints.push([proto, name, d.value, d.get, d.set]);
    }
  }
  return prints;
}

function changed(prints) {
  for (const [proto, name, value, get, set] of prints) {
    const d = getOwnPropertyDescriptor(proto, name);
    if (d === undefined || d.value !== value || d.get !== get || d.set !== set) return name;
  }
  return null;
}

export default async function* quotabenchReporter(source) {
  if (claimed) {
    emit?.('evidence', { rule: 'runner-patched', file: null, line: null, detail: 'the test reporter was called a second time' });
    return;
  }
  claimed = true;
  markReady();
  const prints = snapshot(source);
  let flagged = false;
  let oracle = false;
  const check = (last) => {
    const name = flagged ? null : changed(prints);
    if (name !== null) {
      flagged = true;
      emit?.('evidence', { rule: 'runner-patched', file: null, line: null, detail: `the test event stream's ${name} was replaced` });
    }
    // The built-ins once, at the end: a check per event costs more than the tests here, and one
    // made when a pass arrives comes after the test's own microtasks (which could restore them).
    const builtin = oracle || !last ? null : builtins();
    if (builtin !== null) {
      oracle = true;
      // a polyfill adds to a built-in too: a suspect then; a replaced one is an act
      const [detail, act] = builtin;
      emit?.('evidence', { rule: 'oracle-patched', file: null, line: null, detail: `the built-in ${detail}`, act });
    }
  };
  const counts = { passed: 0, failed: 0, skipped: 0 };
  for await (const event of source) {
    check(false);
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const data = event.data || {};
    if (data.details?.type === 'suite') continue;
    let outcome = event.type === 'test:pass' ? 'passed' : 'failed';
    if (data.skip !== undefined || data.todo !== undefined) outcome = 'skipped';
    counts[outcome] += 1;
    const loc = where(data);
    const failed = outcome === 'failed' ? { error: failureOf(data.details?.error) } : {};
    emit?.('test', { id: `${loc} ${data.name}`, loc, when: 'call', outcome, ...failed });
  }
  check(true);
  emit?.('finish', counts);
}
