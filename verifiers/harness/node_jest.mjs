// quotabench's jest-style layer over node:test, for spec files written for jest (`describe`, `test`,
// `xtest`, `expect`, hooks, extensionless relative imports): node_harness.mjs loads it when the
// command is a jest one (node_run.mjs's `--jest`), before any workspace module.
// - `describe`, `test`, `it` and the hooks are node:test's own functions, not wrappers: node:test
//   records the place of each test's call (its identity) from its caller, which must be the spec;
//   `xtest`, `xit`, `xdescribe` are node:test's `.skip`, so a skipped case is recorded skipped;
// - `expect` is node_expect.mjs's, taken before any workspace module loads;
// - each global is a fixed getter whose setter records the attempt and changes nothing (as the
//   harness does for node:assert), so workspace code cannot swap `expect` or `test` for its own;
// - node_jest_hooks.mjs, on node's loader-hooks thread, resolves `./bowling` to `./bowling.js`
//   (node itself reads `import` syntax in a `.js` file of a package with no "type").
import * as runner from 'node:test';
import { expect } from './node_expect.mjs';

const GLOBALS = {
  describe: runner.describe,
  test: runner.test,
  it: runner.it,
  xdescribe: runner.describe.skip,
  xtest: runner.test.skip,
  xit: runner.it.skip,
  fdescribe: runner.describe.only,
  fit: runner.it.only,
  beforeAll: runner.before,
  afterAll: runner.after,
  beforeEach: runner.beforeEach,
  afterEach: runner.afterEach,
  expect,
};

// `register`: node:module's, taken by the harness before its guard refuses it to everyone else.
export function hooks(register) {
  register(new URL('./node_jest_hooks.mjs', import.meta.url));
}

// `assigned(name)`: records an assignment to one of the globals.
export function install(assigned) {
  for (const [name, value] of Object.entries(GLOBALS)) {
    Object.defineProperty(globalThis, name, {
      enumerable: false,
      configurable: false,
      get: () => value,
      set: () => assigned(name),
    });
  }
}
