// Copied next to a JS/TS module by verifiers/mutants/equivalence.py: wraps each exported
// function so every call (arguments before and after, the result, or what it threw; promises
// when they settle) is appended to .qb-trace as a QBTRACE line. Not used by quotabench itself.
import { appendFileSync } from 'node:fs';

const show = (value) => {
  try {
    return JSON.stringify(value, (key, x) => {
      if (typeof x === 'bigint') return `${x}n`;
      if (x === undefined) return '<undefined>';
      if (typeof x === 'function') return '<function>';
      if (typeof x === 'number' && !Number.isFinite(x)) return String(x);
      if (x instanceof Map) return { map: [...x.entries()] };
      if (x instanceof Set) return { set: [...x.values()] };
      if (x instanceof Error) return { error: x.name, message: x.message };
      return x;
    });
  } catch (error) {
    return `<unshowable ${String(error && error.name)}>`;
  }
};
const record = (line) => appendFileSync('.qb-trace', `QBTRACE ${line.replaceAll('\n', '\\n')}\n`);
const isClass = (f) => /^class\b/.test(Function.prototype.toString.call(f));
let inside = false;
let budget = 400;

// Type-aware neighbours of one argument (EvalPlus-style input mutation).
const neighbours = (v) => {
  if (typeof v === 'boolean') return [!v];
  if (typeof v === 'number') return Number.isInteger(v) ? [v + 1, v - 1, 0, -v] : [v + 1, -v, 0];
  if (typeof v === 'string') return ['', v.slice(0, Math.floor(v.length / 2)), `${v} ${v}`, v.toUpperCase()];
  if (Array.isArray(v)) return [[], v.slice(0, Math.floor(v.length / 2)), [...v].reverse()];
  return [];
};

function vary(name, f, self, args) {
  const shownArgs = show(args);
  if (shownArgs === undefined || shownArgs.length > 2000) return;
  const seen = new Set([shownArgs]);
  inside = true;
  try {
    args.forEach((value, i) => {
      for (const other of neighbours(value)) {
        const changed = [...args.slice(0, i), other, ...args.slice(i + 1)];
        const key = show(changed);
        if (seen.has(key) || budget <= 0) continue;
        seen.add(key);
        budget -= 1;
        let shown;
        try {
          const r = f.apply(self, structuredClone(changed));
          if (r && typeof r.then === 'function') {
            r.then(() => {}, () => {});
            continue;
          }
          shown = `-> ${show(r)}`;
        } catch (error) {
          shown = `threw ${error && error.name}`;
        }
        record(`variant ${name}${key} ${shown}`);
      }
    });
  } finally {
    inside = false;
  }
}

export function qbWrap(name, f) {
  if (typeof f !== 'function' || isClass(f)) return f;
  return function (...args) {
    if (inside) return f.apply(this, args);
    const before = show(args);
    let saved;
    try {
      saved = structuredClone(args);
    } catch {
      saved = undefined;
    }
    let result;
    try {
      result = f.apply(this, args);
    } catch (error) {
      record(`${name}${before} threw ${error && error.name} / ${show(args)}`);
      if (saved) vary(name, f, this, saved);
      throw error;
    }
    if (result && typeof result.then === 'function') {
      result.then(
        (v) => record(`${name}${before} resolved ${show(v)}`),
        (e) => record(`${name}${before} rejected ${e && e.name}`),
      );
    } else {
      record(`${name}${before} -> ${show(result)} / ${show(args)}`);
      if (saved) vary(name, f, this, saved);
    }
    return result;
  };
}
