// quotabench's node:test harness, loaded by node_preload.mjs before any workspace module (node and
// tsx). It reads its key and the hidden files' names from an inherited pipe, then:
// - freezes node:assert, node:assert/strict and node:test, so workspace code cannot make every
//   assertion pass or replace the runner's functions;
// - creates the root test (a root `after` hook) so the reporters are set up now, and waits until
//   node has handed its event stream to node_reporter.mjs: nothing the workspace loads later can
//   be the first to call that reporter or forge its stream;
// - signs every record (HMAC-SHA256, a sequence number) and writes it to the verdict channel;
// - with a jest-style command, sets up node_jest.mjs (the jest globals, extensionless imports);
// - installs node_guard.cjs (reads of the hidden test files, the inspector, the internal
//   bindings, worker threads: refused and recorded) and snapshots the built-ins the tests judge
//   with (node_intrinsics.mjs, checked by the reporter); records the exit code.
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after } from 'node:test';
import { isMainThread, receiveMessageOnPort } from 'node:worker_threads';

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
if (!isMainThread) throw new Error('node_preload.mjs belongs to the main thread (workers load node_guard.cjs)');
const setup = JSON.parse(fs.readFileSync(Number(process.env.QB_KEY_FD), 'utf8'));
fs.closeSync(Number(process.env.QB_KEY_FD));
const resultFd = Number(process.env.QB_RESULT_FD);
delete process.env.QB_KEY_FD;
delete process.env.QB_RESULT_FD;
const key = apply(bufferFrom, Buffer, [setup.key, 'hex']);
const work = realpathSync(process.cwd());
const protectedFiles = new Set((setup.protected || []).map((p) => resolve(work, p)));
// Worker threads report what they see here (node_guard.cjs); the name is not a secret: a record
// sent on it can only add evidence.
const evidenceName = `quotabench-${apply(bufferFrom, Buffer, [String(Math.random())]).toString('hex')}`;
const evidence = new BroadcastChannel(evidenceName);
evidence.unref();
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
const text = (v) => (typeof v === 'string' ? v : null);
function fromWorker(data) {
  const line = typeof data?.line === 'number' ? data.line : null;
  const detail = `in a worker thread: ${text(data?.detail) ?? ''}`;
  emit('evidence', { rule: text(data?.rule) ?? 'reads-hidden-tests', file: text(data?.file), line, detail });
}
evidence.onmessage = ({ data }) => fromWorker(data);

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

// A jest-style run (node_run.mjs's first argument; set by the grader's command, before any
// workspace module): its loader hooks are registered now, while module.register is still ours.
const jest = process.argv[2] === '--jest' ? await import(new URL('./node_jest.mjs', import.meta.url)) : null;
jest?.hooks(require('node:module').register);

// What workspace code does with the hidden files, the process's insides and worker threads:
// watched and refused (node_guard.cjs, which worker threads load too).
const { callerInWorkspace, flag } = require('./node_guard.cjs').install({
  work,
  protected: [...protectedFiles],
  channel: evidenceName,
  report: (rule, file, line, detail) => emit('evidence', { rule, file, line, detail }),
});

// ESM named imports (`import { readFileSync } from 'node:fs'`) were bound when this file imported
// node:fs: point them at the wrappers too.
require('node:module').syncBuiltinESMExports();



for (const name of ['node:assert', 'node:assert/strict', 'node:test']) tripwire(require(name), name);
jest?.install((name) => {
  const caller = callerInWorkspace();
  emit('evidence', { rule: 'assert-mutated', file: caller?.file ?? null, line: caller?.line ?? null, detail: `assigned globalThis.${name}` });
});

// A worker's record can still be queued when the process exits: a worker that throws right after
// its refused read can end the process (its error is uncaught here) before the record is handed
// over, which lost the evidence when this thread was busy. Read what is queued before the end.
process.on('exit', (code) => {
  for (let queued = receiveMessageOnPort(evidence); queued !== undefined; queued = receiveMessageOnPort(evidence)) {
    fromWorker(queued.message);
  }
  emit('exit', { code: process.exitCode ?? code });
});
const intrinsics = await import(new URL('./node_intrinsics.mjs', import.meta.url));
const reporter = await import(new URL('./node_reporter.mjs', import.meta.url));
reporter.attach(emit, work, intrinsics.snapshot());
after(() => {});
await reporter.ready;
