'use strict';
// What workspace code does with the hidden test files, the process's insides and worker
// threads, under node and tsx: node_preload.mjs installs this in the main thread before any
// workspace module loads, and the Worker wrapper below installs it first in every worker thread
// workspace code starts (a worker does not run the preload).
// - every way to read a file's bytes, give it another name, or start a process naming it: a
//   hidden test file is refused (EACCES) and the attempt recorded;
// - the inspector (a session reads any closure and any script's source) and the internal
//   bindings (raw file reads no wrapper sees) are refused and recorded; SIGUSR1, which would
//   start the inspector, is kept from doing so by a listener of our own;
// - worker threads start with this guard first, told the hidden files whatever env they get.
const fs = require('node:fs');
const path = require('node:path');
const { isMainThread, Worker: BaseWorker } = require('node:worker_threads');
const children = require('node:child_process');
const inspector = require('node:inspector');

const { apply } = Reflect;
const { isArray } = Array;
const { resolve, relative, sep } = path;
const realpathSync = fs.realpathSync;

function install({ work, protected: hidden, channel, report, everyone = false }) {
  const protectedFiles = new Set(hidden);
  const hiddenNames = [...protectedFiles].map((p) => p.slice(p.lastIndexOf(sep) + 1));
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
    // In a worker workspace code started, everything is the workspace's (its eval'd code has no file).
    return everyone ? { file: null, line: null, hidden: false } : null;
  }

  function flag(rule, caller, detail) {
    const where = `${rule}:${caller.file}:${caller.line}`;
    if (seen.has(where)) return;
    seen.add(where);
    report(rule, caller.file, caller.line, `${detail}${caller.hidden ? ' (with the call stack hidden)' : ''}`);
  }

  function refusal(what) {
    const error = new Error(`${what}: not available to code graded by quotabench`);
    error.code = 'EACCES';
    return error;
  }

  function watchRead(target) {
    if (typeof target === 'number') return;
    let full;
    try {
      // fs takes any object with an href and a protocol for a URL: read it as fs will
      const urlish = target !== null && typeof target === 'object' && !Buffer.isBuffer(target) && target.href !== undefined && target.protocol !== undefined;
      const text = target instanceof URL ? target.pathname : urlish ? new URL(String(target.href)).pathname : Buffer.isBuffer(target) ? target.toString() : String(target);
      full = resolve(work, text);
      try { full = realpathSync(full); } catch { /* not there: not a hidden file either */ }
    } catch {
      return;
    }
    if (!protectedFiles.has(full)) return;
    const caller = callerInWorkspace();
    if (caller !== null) {
      flag('reads-hidden-tests', caller, `opened ${relative(work, full)}`);
      throw refusal(`${relative(work, full)} is a hidden test file`);
    }
  }

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
    if (caller !== null) {
      flag('reads-hidden-tests', caller, `runs a command naming ${hit}`);
      throw refusal(`a command naming ${hit}`);
    }
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

  function refuse(owner, name, what) {
    if (typeof owner?.[name] !== 'function') return;
    Object.defineProperty(owner, name, {
      configurable: false,
      writable: false,
      value: function refused() {
        flag('frame-inspection', callerInWorkspace() ?? { file: null, line: null, hidden: false }, what);
        throw refusal(what);
      },
    });
  }

  // Every way to read a file's bytes or to give it another name (then read that), and every way
  // to start a process (that could read it for us).
  const READS = ['readFileSync', 'readFile', 'openSync', 'open', 'openAsBlob', 'createReadStream', 'opendir', 'opendirSync'];
  const COPIES = ['copyFile', 'copyFileSync', 'cp', 'cpSync', 'link', 'linkSync', 'symlink', 'symlinkSync', 'rename', 'renameSync'];
  const byFirst = (args) => watchRead(args[0]);
  for (const name of [...READS, ...COPIES]) wrap(fs, name, byFirst);
  for (const name of ['readFile', 'open', 'copyFile', 'cp', 'link', 'symlink', 'rename']) wrap(fs.promises, name, byFirst);
  for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
    wrap(children, name, watchCommand);
  }

  for (const name of ['binding', '_linkedBinding', '_debugProcess', '_debugEnd']) refuse(process, name, `process.${name}`);
  for (const name of ['open', 'close', 'waitForDebugger']) refuse(inspector, name, `inspector.${name}`);
  // A loader of the workspace's own runs on a hooks thread no guard is in; a heap snapshot holds
  // every script's source.
  refuse(require('node:module'), 'register', 'module.register');
  for (const name of ['writeHeapSnapshot', 'getHeapSnapshot']) refuse(require('node:v8'), name, `v8.${name}`);
  for (const session of [inspector.Session, require('node:inspector/promises').Session]) {
    for (const name of ['connect', 'connectToMainThread', 'post']) refuse(session.prototype, name, `an inspector session's ${name}`);
  }
  if (isMainThread) {
    const quiet = { file: null, line: null, hidden: false };
    process.on('SIGUSR1', () => flag('frame-inspection', quiet, "SIGUSR1 (the inspector's signal) was sent"));
  }
  guardWorkers({ work, protected: [...protectedFiles], channel });
  return { callerInWorkspace, flag };
}

// A worker runs this guard before its own code; its execArgv is the main thread's without the
// harness's preload and reporters (which belong to the main thread), whatever it asked for.
function guardWorkers(given) {
  const threads = require('node:worker_threads');
  const execArgv = process.execArgv.filter((a) => !a.includes('node_preload.mjs') && !a.startsWith('--test-reporter'));
  const prelude = `require(${JSON.stringify(__filename)}).worker(${JSON.stringify(given)});\n`;
  function Worker(filename, options = {}) {
    let code = filename;
    if (options?.eval) code = prelude + String(filename);
    else {
      const href = filename instanceof URL ? filename.href : String(filename).startsWith('file:') || String(filename).startsWith('data:') ? String(filename) : new URL(`file://${resolve(String(filename))}`).href;
      code = `${prelude}import(${JSON.stringify(href)});\n`;
    }
    return new BaseWorker(code, { ...options, eval: true, execArgv });
  }
  // An instance's constructor must not lead back to the unguarded class.
  Object.defineProperty(BaseWorker.prototype, 'constructor', { value: Worker, writable: false, configurable: false });
  Worker.prototype = BaseWorker.prototype;
  threads.Worker = Worker;
}

function worker(given) {
  const channel = new BroadcastChannel(given.channel);
  channel.unref();
  install({
    work: given.work,
    protected: given.protected,
    channel: given.channel,
    report: (rule, file, line, detail) => channel.postMessage({ rule, file, line, detail }),
    everyone: true,
  });
  require('node:module').syncBuiltinESMExports();
}

module.exports = { install, worker };
