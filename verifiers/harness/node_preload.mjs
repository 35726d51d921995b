// quotabench's node:test harness, loaded with --import before any workspace module (node and
// tsx). It reads its key and the hidden files' names from an inherited pipe, then:
// - freezes node:assert, node:assert/strict and node:test, so workspace code cannot make every
//   assertion pass or replace the runner's functions;
// - creates the root test (a root `after` hook) so the reporters are set up now, and waits until
//   node has handed its event stream to node_reporter.mjs: nothing the workspace loads later can
//   be the first to call that reporter or forge its stream;
// - signs every record (HMAC-SHA256, a sequence number) and writes it to the verdict channel;
// - records what workspace code does with the hidden test files (a read), and the exit code.
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after } from 'node:test';

const require = createRequire(import.meta.url);
// Taken now, before any workspace module runs: workspace code may later replace JSON.stringify,
// Buffer.from, Function.prototype.call or the Hmac prototype's methods, and must not be able to
// change (or read) what is signed. Records are encoded here with these alone.
const { apply } = Reflect;
const makeHmac = createHmac; // a const, not the live import binding syncBuiltinESMExports could move
const writeSync = fs.writeSync;
const realpathSync = fs.realpathSync;
const { resolve, relative, sep } = path;
const isFinite = Number.isFinite;
const bufferFrom = Buffer.from;
const keysOf = Object.keys;
const isArray = Array.isArray;
const charCodeAt = String.prototype.charCodeAt;
const hmacProto = Object.getPrototypeOf(makeHmac('sha256', 'probe'));
const hmacUpdate = hmacProto.update;
const hmacDigest = hmacProto.digest;
const HEX = '0123456789abcdef';
const setup = JSON.parse(fs.readFileSync(Number(process.env.QB_KEY_FD), 'utf8'));
fs.closeSync(Number(process.env.QB_KEY_FD));
const resultFd = Number(process.env.QB_RESULT_FD);
delete process.env.QB_KEY_FD;
delete process.env.QB_RESULT_FD;
const key = apply(bufferFrom, Buffer, [setup.key, 'hex']);
const work = realpathSync(process.cwd());
const protectedFiles = new Set((setup.protected || []).map((p) => resolve(work, p)));
let seq = 0;

function quote(text) {
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const c = apply(charCodeAt, text, [i]);
    if (c === 34) out += '\\"';
    else if (c === 92) out += '\\\\';
    else if (c < 32) out += '\\u00' + HEX[c >> 4] + HEX[c & 15];
    else out += text[i];
  }
  return out + '"';
}

function encode(value) {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return isFinite(value) ? '' + value : 'null';
  if (typeof value === 'string') return quote(value);
  if (isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i ? ',' : '') + encode(value[i]);
    return out + ']';
  }
  if (typeof value === 'object') {
    const names = keysOf(value);
    let out = '{';
    for (let i = 0; i < names.length; i++) out += (i ? ',' : '') + quote(names[i]) + ':' + encode(value[names[i]]);
    return out + '}';
  }
  return quote('' + value);
}

function emit(kind, data = {}) {
  const body = encode({ k: kind, seq: seq++, ...data });
  const mac = makeHmac('sha256', key);
  apply(hmacUpdate, mac, [body]);
  let line = apply(bufferFrom, Buffer, [`${apply(hmacDigest, mac, ['hex'])} ${body}\n`]);
  try {
    while (line.length) line = line.subarray(writeSync(resultFd, line));
  } catch {
    // the channel was closed under us: the missing end record says so
  }
}

emit('start', { runner: 'node', node: process.version });

// Each export of the assertion and test modules becomes a fixed getter whose setter records the
// attempt (and changes nothing); then the objects are frozen, so no property can be redefined.
function tripwire(object, label) {
  for (const name of Object.getOwnPropertyNames(object)) {
    const descriptor = Object.getOwnPropertyDescriptor(object, name);
    if (!descriptor.configurable || !('value' in descriptor)) continue;
    const value = descriptor.value;
    Object.defineProperty(object, name, {
      enumerable: descriptor.enumerable,
      configurable: false,
      get: () => value,
      set: () => {
        const caller = callerInWorkspace();
        emit('evidence', {
          rule: 'assert-mutated',
          file: caller?.file ?? null,
          line: caller?.line ?? null,
          detail: `assigned ${label}.${name}`,
        });
      },
    });
  }
  Object.freeze(object);
}

const seen = new Set();
function callerInWorkspace() {
  const original = Error.prepareStackTrace;
  const limit = Error.stackTraceLimit;
  let sites = null;
  try {
    Error.prepareStackTrace = (_, callsites) => callsites;
    Error.stackTraceLimit = 64; // workspace code may have set it to 0 to hide itself
    const holder = {};
    Error.captureStackTrace(holder);
    sites = holder.stack;
  } catch {
    sites = null;
  } finally {
    try { Error.prepareStackTrace = original; } catch { /* made read-only by someone */ }
    try { Error.stackTraceLimit = limit; } catch { /* made read-only by someone */ }
  }
  if (!isArray(sites) || sites.length === 0) return { file: null, line: null, hidden: true };
  for (const site of sites) {
    let file = site.getFileName?.() || '';
    if (file.startsWith('file://')) file = new URL(file).pathname;
    if (file.startsWith(work + sep) && !protectedFiles.has(file)) {
      return { file: relative(work, file), line: site.getLineNumber?.() ?? null, hidden: false };
    }
  }
  return null;
}

function flag(rule, caller, detail) {
  const where = `${rule}:${caller.file}:${caller.line}`;
  if (seen.has(where)) return;
  seen.add(where);
  emit('evidence', {
    rule,
    file: caller.file,
    line: caller.line,
    detail: `${detail}${caller.hidden ? ' (with the call stack hidden)' : ''}`,
  });
}

function watchRead(target) {
  if (typeof target === 'number') return;
  let full;
  try {
    const text = target instanceof URL ? target.pathname : Buffer.isBuffer(target) ? target.toString() : String(target);
    full = resolve(work, text);
    try { full = realpathSync(full); } catch { /* not there: not a hidden file either */ }
  } catch {
    return;
  }
  if (!protectedFiles.has(full)) return;
  const caller = callerInWorkspace();
  if (caller !== null) flag('reads-hidden-tests', caller, `opened ${relative(work, full)}`);
}

const hiddenNames = [...protectedFiles].map((p) => p.slice(p.lastIndexOf(sep) + 1));

function watchCommand(args) {
  const words = [];
  for (const a of args) {
    if (typeof a === 'string') words.push(a);
    else if (isArray(a)) for (const w of a) if (typeof w === 'string') words.push(w);
  }
  const text = words.join(' ');
  const hit = hiddenNames.find((name) => text.includes(name));
  if (hit === undefined) return;
  const caller = callerInWorkspace();
  if (caller !== null) flag('reads-hidden-tests', caller, `runs a command naming ${hit}`);
}

function wrap(owner, name, watch) {
  const original = owner[name];
  if (typeof original !== 'function') return;
  const wrapped = function (...args) {
    watch(args);
    return apply(original, this, args);
  };
  Object.defineProperty(wrapped, 'name', { value: original.name });
  owner[name] = wrapped;
}
// Every way to read a file's bytes or to give it another name (then read that), and every way to
// start a process (that could read it for us).
const READS = ['readFileSync', 'readFile', 'openSync', 'open', 'createReadStream', 'opendir', 'opendirSync'];
const COPIES = ['copyFile', 'copyFileSync', 'cp', 'cpSync', 'link', 'linkSync', 'symlink', 'symlinkSync', 'rename', 'renameSync'];
const byFirst = (args) => watchRead(args[0]);
for (const name of [...READS, ...COPIES]) wrap(fs, name, byFirst);
for (const name of ['readFile', 'open', 'copyFile', 'cp', 'link', 'symlink', 'rename']) wrap(fs.promises, name, byFirst);
const children = require('node:child_process');
for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
  wrap(children, name, watchCommand);
}
// ESM named imports (`import { readFileSync } from 'node:fs'`) were bound when this file imported
// node:fs: point them at the wrappers too.
require('node:module').syncBuiltinESMExports();



for (const name of ['node:assert', 'node:assert/strict', 'node:test']) tripwire(require(name), name);

process.on('exit', (code) => emit('exit', { code: process.exitCode ?? code }));

const reporter = await import(new URL('./node_reporter.mjs', import.meta.url));
reporter.attach(emit, work);
after(() => {});
await reporter.ready;
