// quotabench's node:test entry: imports each test file named on the command line, in order, in
// this one process (where node_preload.mjs and node_reporter.mjs already run). A first `--jest`
// says the files are jest-style specs: the harness read it and set up node_jest.mjs.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const files = process.argv.slice(2);
for (const file of files[0] === '--jest' ? files.slice(1) : files) {
  await import(pathToFileURL(path.resolve(file)).href);
}
