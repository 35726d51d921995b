// quotabench's loader hooks for jest-style specs (node_jest.mjs registers them, before the guard
// refuses module.register): a relative or absolute specifier node cannot find as written is tried
// as jest finds it, with `.js`, `.mjs`, `.cjs` or `/index.js` after it. Nothing else is changed:
// no format, no source (a hook that rewrote either could hand a hidden file's text to a module).
const TRIES = ['.js', '.mjs', '.cjs', '/index.js', '/index.mjs', '/index.cjs'];
const UNFOUND = new Set(['ERR_MODULE_NOT_FOUND', 'ERR_UNSUPPORTED_DIR_IMPORT']);

export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (error) {
    const path = specifier.startsWith('./') || specifier.startsWith('../') || specifier.startsWith('/');
    if (!path || !UNFOUND.has(error?.code) || !context.parentURL?.startsWith('file:')) throw error;
    for (const suffix of TRIES) {
      try {
        return await nextResolve(specifier.replace(/\/$/, '') + suffix, context);
      } catch {
        // the next way of writing it
      }
    }
    throw error;
  }
}
