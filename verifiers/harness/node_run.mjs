// quotabench's node:test entry: imports each test file named on the command line, in order, in
// this one process (where node_preload.mjs and node_reporter.mjs already run).
import path from 'node:path';
import { pathToFileURL } from 'node:url';

for (const file of process.argv.slice(2)) {
  await import(pathToFileURL(path.resolve(file)).href);
}
