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
const writeSync = fs.writeSync;
const setup = JSON.parse(fs.readFileSync(Number(process.env.QB_KEY_FD), 'utf8'));
fs.closeSync(Number(process.env.QB_KEY_FD));
const resultFd = Number(process.env.QB_RESULT_FD);
delete process.env.QB_KEY_FD;
delete process.env.QB_RESULT_FD;
const key = Buffer.from(setup.key, 'hex');
const work = fs.realpathSync(process.cwd());
const protectedFiles = new Set((setup.protected || []).map((p) => path.resolve(work, p)));
let seq = 0;

function emit(kind, data = {}) {
  const body = JSON.stringify({ k: kind, seq: seq++, ...data });
  const mac = createHmac('sha256', key).update(body).digest('hex');
  let line = Buffer.from(`${mac} ${body}\n`);
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
  let sites = null;
  try {
    Error.prepareStackTrace = (_, callsites) => callsites;
    const holder = {};
    Error.captureStackTrace(holder);
    sites = holder.stack;
  } catch {
    sites = null;
  } finally {
    try { Error.prepareStackTrace = original; } catch { /* made read-only by someone */ }
  }
  if (!Array.isArray(sites)) return { file: null, line: null, hidden: true };
  for (const site of sites) {
    let file = site.getFileName?.() || '';
    if (file.startsWith('file://')) file = new URL(file).pathname;
    if (file.startsWith(work + path.sep) && !protectedFiles.has(file)) {
      return { file: path.relative(work, file), line: site.getLineNumber?.() ?? null, hidden: false };
    }
  }
  return null;
}

function watchRead(target) {
  if (typeof target === 'number') return;
  let full;
  try {
    const text = target instanceof URL ? target.pathname : Buffer.isBuffer(target) ? target.toString() : String(target);
    full = path.resolve(work, text);
    try { full = fs.realpathSync(full); } catch { /* not there: not a hidden file either */ }
  } catch {
    return;
  }
  if (!protectedFiles.has(full)) return;
  const caller = callerInWorkspace();
  if (caller === null) return;
  const where = `${caller.file}:${caller.line}`;
  if (seen.has(where)) return;
  seen.add(where);
  emit('evidence', {
    rule: 'reads-hidden-tests',
    file: caller.file,
    line: caller.line,
    detail: `opened ${path.relative(work, full)}${caller.hidden ? ' (with the call stack hidden)' : ''}`,
  });
}

function wrap(owner, name) {
  const original = owner[name];
  if (typeof original !== 'function') return;
  const wrapped = function (target, ...rest) {
    watchRead(target);
    return original.call(this, target, ...rest);
  };
  Object.defineProperty(wrapped, 'name', { value: original.name });
  owner[name] = wrapped;
}
for (const name of ['readFileSync', 'readFile', 'openSync', 'open', 'createReadStream', 'readSync']) wrap(fs, name);
for (const name of ['readFile', 'open']) wrap(fs.promises, name);



for (const name of ['node:assert', 'node:assert/strict', 'node:test']) tripwire(require(name), name);

process.on('exit', (code) => emit('exit', { code: process.exitCode ?? code }));

const reporter = await import(new URL('./node_reporter.mjs', import.meta.url));
reporter.attach(emit, work);
after(() => {});
await reporter.ready;
