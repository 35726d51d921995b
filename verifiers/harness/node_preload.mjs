// quotabench's node entry, loaded with --import before any workspace module (node and tsx). The
// test process the grader started holds the verdict channel's key: it loads the harness
// (node_harness.mjs). A process the tests' own code starts with node's execArgv
// (child_process.fork) inherits this flag but no key, and runs as plain node.
if (process.env.QB_KEY_FD !== undefined) await import('./node_harness.mjs');
