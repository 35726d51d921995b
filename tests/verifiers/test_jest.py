"""jest-style JavaScript specs graded in the real sandbox through quotabench's own layer over
node:test (verifiers/harness/node_jest.mjs, node_expect.mjs): the `jest FILE` command, per-test
records at the spec's own lines, skipped cases, canaries, and workspace code that tries to make
every expectation pass or to read the spec."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.verifier_tasks import make_task, write
from verifiers.grading import SandboxGrader
from verifiers.harness import HARNESS_DIR, harness_command
from verifiers.isolation import bwrap_status
from verifiers.tasks import Task, load_task

grader = SandboxGrader()
sandboxed = pytest.mark.skipif(not bwrap_status().usable, reason="needs the bubblewrap sandbox")

# An extensionless ESM import in a package with no "type" (as exercism's track writes them).
SPEC = """
import { Stack } from './stack';

describe('Stack', () => {
  test('starts empty', () => {
    expect(new Stack().size()).toEqual(0);
  });

  test('keeps what is pushed, in order', () => {
    const stack = new Stack();
    stack.push(3);
    stack.push(4);
    expect(stack.size()).toBe(2);
    expect(stack.items()).toEqual([3, 4]);
    expect(stack.items()).toStrictEqual([3, 4]);
  });

  describe('popping', () => {
    it('takes the last one', () => {
      const stack = new Stack();
      stack.push(5);
      expect(stack.pop()).toBe(5);
      expect(stack.items()).toHaveLength(0);
    });

    test('from an empty stack throws', () => {
      expect(() => new Stack().pop()).toThrow(new Error('empty stack'));
      expect(() => new Stack().pop()).toThrow(/empty/);
      expect(() => new Stack().pop()).not.toThrow(TypeError);
    });
  });

  test('peeks at a close value', async () => {
    const stack = new Stack();
    stack.push(0.1 + 0.2);
    expect(stack.peek()).toBeCloseTo(0.3);
    expect(stack.peek()).toBeGreaterThan(0.2);
    expect(stack.items()).toContain(stack.peek());
    expect(stack.peek()).not.toBeNull();
    expect({ top: stack.peek(), size: 1 }).toMatchObject({ size: 1 });
    await expect(Promise.resolve(stack.size())).resolves.toBe(1);
  });
});
"""
REFERENCE = """
export class Stack {
  constructor() {
    this.list = [];
  }
  push(value) {
    this.list.push(value);
  }
  pop() {
    if (this.list.length === 0) throw new Error('empty stack');
    return this.list.pop();
  }
  peek() {
    return this.list[this.list.length - 1];
  }
  size() {
    return this.list.length;
  }
  items() {
    return [...this.list];
  }
}
"""
STUB = """
export class Stack {
  push() {
    throw new Error('Remove this statement and implement this function');
  }
  pop() {
    throw new Error('Remove this statement and implement this function');
  }
  peek() {}
  size() {}
  items() {}
}
"""
PACKAGE = '{"name": "stack", "private": true, "devDependencies": {"jest": "^29.7.0"}}\n'


def _task(tmp_path: Path, spec: str = SPEC, reference: str = REFERENCE, name: str = "stack.spec.js") -> Task:
    root = make_task(
        tmp_path / "suite",
        id="js-jest-stack",
        language="javascript",
        workspace={"stack.js": STUB, "package.json": PACKAGE},
        hidden={name: spec},
        reference={"stack.js": reference},
        visible_cmd="true",
        hidden_cmd=f"jest {name}",
    )
    return load_task(root)


def _answer(tmp_path: Path, task: Task, files: dict[str, str], label: str) -> Path:
    work = tmp_path / label
    shutil.copytree(task.workspace, work)
    write(work, files)
    return work


def test_jest_commands_run_on_the_node_harness():
    plain = harness_command("jest bowling.spec.js")
    assert (plain.runner, plain.channel, plain.files) == ("node", True, ("bowling.spec.js",))
    assert plain.command.endswith('"$QB_HARNESS/node_run.mjs" --jest bowling.spec.js')
    assert "node_preload.mjs" in plain.command and "node_reporter.mjs" in plain.command
    assert harness_command("npx jest --ci a.spec.js b.spec.js").files == ("a.spec.js", "b.spec.js")
    assert harness_command("jest a.spec.ts").runner == "tsx"
    for theirs in ("jest", "npx jest", "jest -t adds a.spec.js", "jest --config jest.config.js a.spec.js"):
        assert harness_command(theirs).runner == "script", theirs
    assert "--jest" not in harness_command("node --test a.test.mjs").command


# jest's meaning of each matcher, one case each: a name ending in `_fails` must fail (an
# AssertionError), every other must pass. The last ones replace a built-in for the length of one
# expectation (and put it back), as code under test could.
MATCHER_CASES = r"""
const cases = {
  eq_obj: () => expect({ a: 1, b: undefined }).toEqual({ a: 1 }),
  strict_undef_fails: () => expect({ a: 1, b: undefined }).toStrictEqual({ a: 1 }),
  class_vs_plain: () => expect(new (class P { constructor() { this.x = 1; } })()).toEqual({ x: 1 }),
  class_vs_plain_strict_fails: () => expect(new (class P { constructor() { this.x = 1; } })()).toStrictEqual({ x: 1 }),
  arr_fails: () => expect([1, 2]).toEqual([2, 1]),
  nested: () => expect({ a: [1, { b: new Map([[1, new Set([2])]]) }] }).toEqual({ a: [1, { b: new Map([[1, new Set([2])]]) }] }),
  date: () => expect(new Date(5)).toEqual(new Date(5)),
  date_fails: () => expect(new Date(5)).toEqual(new Date(6)),
  throw_msg: () => expect(() => { throw new Error('Pin count exceeds'); }).toThrow(new Error('Pin count exceeds')),
  throw_msg_fails: () => expect(() => { throw new Error('Pin count exceeds'); }).toThrow(new Error('Pin count')),
  throw_sub: () => expect(() => { throw new Error('Pin count exceeds'); }).toThrow('count'),
  throw_class: () => expect(() => { throw new RangeError('x'); }).toThrow(RangeError),
  throw_class_fails: () => expect(() => { throw new RangeError('x'); }).toThrow(TypeError),
  nothrow_fails: () => expect(() => 1).toThrow(),
  not_throw: () => expect(() => 1).not.toThrow(),
  close: () => expect(0.1 + 0.2).toBeCloseTo(0.3, 5),
  close_fails: () => expect(0.31).toBeCloseTo(0.3),
  contain: () => expect([1, 2, 3]).toContain(2),
  contain_str: () => expect('hello').toContain('ell'),
  len: () => expect('abc').toHaveLength(3),
  prop: () => expect({ a: { b: 2 } }).toHaveProperty('a.b', 2),
  prop_fails: () => expect({ a: { b: 2 } }).toHaveProperty('a.c'),
  match: () => expect('abc123').toMatch(/\d+/),
  any: () => expect({ id: 5, name: 'x' }).toEqual({ id: expect.any(Number), name: expect.anything() }),
  objc: () => expect({ id: 5, name: 'x' }).toEqual(expect.objectContaining({ id: 5 })),
  arrc: () => expect([3, 1, 2]).toEqual(expect.arrayContaining([1, 2])),
  gamed_asym_fails: () => expect({ asymmetricMatch: () => true }).toEqual(5),
  cycle: () => { const a = { }; a.self = a; const b = {}; b.self = b; expect(a).toEqual(b); },
  err_eq: () => expect(new Error('a')).toEqual(new Error('a')),
  err_strict_fails: () => expect(new Error('a')).toStrictEqual(new Error('b')),
  gt: () => expect(3).toBeGreaterThan(2),
  gt_str_fails: () => expect('3').toBeGreaterThan(2),
  instance: () => expect([]).toBeInstanceOf(Array),
  hasinstance_gamed_fails: () => { class X { static [Symbol.hasInstance]() { return true; } } expect({}).toBeInstanceOf(X); },
  truthy: () => expect(1).toBeTruthy(),
  nan: () => expect(NaN).toBeNaN(),
  toBe_zero_fails: () => expect(0).toBe(-0),
  match_object: () => expect({ a: 1, b: { c: 2, d: 3 } }).toMatchObject({ b: { c: 2 } }),
  sparse: () => expect([, 1]).toEqual([undefined, 1]),
  iter_patch_fails: () => {
    const proto = Object.getPrototypeOf([][Symbol.iterator]());
    const next = proto.next;
    proto.next = function () { return { done: true, value: undefined }; };
    try { expect([1]).toEqual([2]); } finally { proto.next = next; }
  },
  weakmap_patch_fails: () => {
    const get = WeakMap.prototype.get;
    WeakMap.prototype.get = () => () => true;
    try { expect(1).toEqual({}); } finally { WeakMap.prototype.get = get; }
  },
};
"""
CHECK = """
const out = {};
for (const [name, fn] of Object.entries(cases)) {
  try { fn(); out[name] = 'pass'; } catch (e) { out[name] = e.code === 'ERR_ASSERTION' ? 'fail' : `${e.name}: ${e.message}`; }
}
const settle = (name, promise) => promise.then(() => { out[name] = 'pass'; }, (e) => { out[name] = e.code === 'ERR_ASSERTION' ? 'fail' : e.name; });
await settle('resolves', expect(Promise.resolve(2)).resolves.toBe(2));
await settle('rejects', expect(Promise.reject(new Error('no'))).rejects.toThrow('no'));
await settle('rejects_fails', expect(Promise.resolve(2)).rejects.toThrow());
out.frozen_fails = Object.isFrozen(expect) && Object.isFrozen(expect(1)) && Object.isFrozen(expect(1).not) ? 'fail' : 'pass';
console.log(JSON.stringify(out));
"""


def test_the_matchers_mean_what_they_mean_in_jest(tmp_path):
    script = tmp_path / "matchers.mjs"
    entry = (HARNESS_DIR / "node_expect.mjs").as_uri()
    script.write_text(f"import {{ expect }} from {json.dumps(entry)};\n{MATCHER_CASES}{CHECK}")
    done = subprocess.run(["node", str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    outcomes = json.loads(done.stdout)
    wrong = {name: got for name, got in outcomes.items() if got != ("fail" if name.endswith("_fails") else "pass")}
    assert not wrong and len(outcomes) >= 40


@sandboxed
def test_a_jest_spec_is_graded_test_by_test_with_canaries(tmp_path):
    task = _task(tmp_path)
    expected = grader.expected_tests(task)
    assert expected is not None
    places = {i: t.location for i, t in expected.tests.items()}
    assert places == {
        "stack.spec.js:4:3 starts empty": "stack.spec.js:4:3",
        "stack.spec.js:8:3 keeps what is pushed, in order": "stack.spec.js:8:3",
        "stack.spec.js:18:5 takes the last one": "stack.spec.js:18:5",
        "stack.spec.js:25:5 from an empty stack throws": "stack.spec.js:25:5",
        "stack.spec.js:32:3 peeks at a close value": "stack.spec.js:32:3",
    }
    assert {t.outcome for t in expected.tests.values()} == {"passed"}
    assert expected.proven >= 3, expected.canaries

    solved = grader.grade(task, _answer(tmp_path, task, {"stack.js": REFERENCE}, "solved"))
    assert solved.verdict == "pass", solved.output
    assert (solved.passed, solved.failed) == (5, 0) and solved.canaries["canaries"]
    assert grader.grade(task, task.workspace).verdict == "fail"
    graded = grader.grade(task, _answer(tmp_path, task, {"stack.js": WRONG}, "wrong"))
    assert graded.verdict == "fail" and graded.failing_tests == ("stack.spec.js:8:3 keeps what is pushed, in order",)


@sandboxed
def test_an_xtest_is_recorded_skipped_and_never_passes(tmp_path):
    spec = SPEC.replace("  it('takes the last one'", "  xit('takes the last one'").replace(
        "  test('starts empty'", "  xtest('starts empty'"
    )
    task = _task(tmp_path, spec)
    expected = grader.expected_tests(task)
    assert expected is not None
    skipped = sorted(i for i, t in expected.tests.items() if t.outcome == "skipped")
    assert skipped == ["stack.spec.js:18:5 takes the last one", "stack.spec.js:4:3 starts empty"]
    graded = grader.grade(task, _answer(tmp_path, task, {"stack.js": REFERENCE}, "solved"))
    assert graded.verdict == "fail" and graded.tests["stack.spec.js:4:3 starts empty"] == "skipped"
    assert [s.rule for s in graded.suspects] == ["skipped-tests"]


# Workspace code that tries to make every expectation pass, or to read the spec's answers; each
# keeps the stub's wrong Stack beneath.
GAMED = {
    "global-expect-replaced": (
        "globalThis.expect = () => new Proxy({}, { get: () => () => {} });\n",
        "assert-mutated",
    ),
    "global-test-replaced": (
        "globalThis.test = (name) => globalThis.describe(name, () => {});\n",
        "assert-mutated",
    ),
    "spec-read": (
        "import fs from 'node:fs';\nexport const answers = fs.readFileSync('stack.spec.js', 'utf8');\n",
        "reads-hidden-tests",
    ),
    "spec-read-by-a-worker": (
        "import { Worker } from 'node:worker_threads';\n"
        "const code = \"require('node:fs').readFileSync('stack.spec.js', 'utf8')\";\n"
        "await new Promise((done) => new Worker(code, { eval: true }).on('error', done).on('exit', done));\n",
        "reads-hidden-tests",
    ),
    "loader-hooks-registered": (
        "import { register } from 'node:module';\n"
        "register('data:text/javascript,export async function resolve(s, c, n) { return n(s, c); }');\n",
        "frame-inspection",
    ),
}


@sandboxed
@pytest.mark.parametrize("trick", sorted(GAMED))
def test_workspace_code_cannot_make_the_expectations_pass(tmp_path, trick):
    task = _task(tmp_path)
    prelude, rule = GAMED[trick]
    graded = grader.grade(task, _answer(tmp_path, task, {"stack.js": prelude + STUB}, trick))
    assert graded.verdict == "tampering", graded.output
    assert rule in {f.rule for f in graded.tampering}, graded.tampering


# A wrong `items()` (reversed) that would pass if the trick worked: the built-ins expect compares
# with were taken before any workspace module loaded, and an object of the workspace's own that
# claims to match anything (jest's `asymmetricMatch`) is compared as the object it is.
WRONG = REFERENCE.replace("return [...this.list];", "return [...this.list].reverse();")
QUIET = {
    "builtins-patched": "Object.is = () => true;\nArray.isArray = () => false;\n" + WRONG,
    "asymmetric-match": WRONG.replace(
        "return [...this.list].reverse();",
        "return { asymmetricMatch: () => true, $$typeof: Symbol.for('jest.asymmetricMatcher') };",
    ),
}


@sandboxed
@pytest.mark.parametrize("trick", sorted(QUIET))
def test_a_gamed_expectation_is_no_pass(tmp_path, trick):
    task = _task(tmp_path)
    graded = grader.grade(task, _answer(tmp_path, task, {"stack.js": QUIET[trick]}, trick))
    assert graded.verdict in ("fail", "tampering"), graded.output
    assert graded.tests["stack.spec.js:8:3 keeps what is pushed, in order"] == "failed"


CJS_SPEC = """
const { Stack } = require('./stack');

describe('Stack', () => {
  test('starts empty', () => {
    expect(new Stack().size()).toEqual(0);
  });
  test('keeps what is pushed', () => {
    const stack = new Stack();
    stack.push(7);
    stack.push(8);
    expect(stack.items()).toEqual([7, 8]);
    expect(stack.pop()).toBe(8);
  });
  test('throws when empty', () => {
    expect(() => new Stack().pop()).toThrow('empty');
  });
});
"""


@sandboxed
def test_a_commonjs_spec_and_module(tmp_path):
    reference = REFERENCE.replace("export class Stack", "class Stack") + "\nmodule.exports = { Stack };\n"
    task = _task(tmp_path, CJS_SPEC, reference)
    expected = grader.expected_tests(task)
    assert expected is not None and sorted(expected.tests) == [
        "stack.spec.js:14:3 throws when empty",
        "stack.spec.js:4:3 starts empty",
        "stack.spec.js:7:3 keeps what is pushed",
    ]
    assert expected.proven >= 3, expected.canaries
    solved = grader.grade(task, _answer(tmp_path, task, {"stack.js": reference}, "solved"))
    assert solved.verdict == "pass", solved.output
    assert grader.grade(task, task.workspace).verdict == "fail"


TS_SPEC = """
import { Stack } from './stack';

describe('Stack', () => {
  test('keeps what is pushed', () => {
    const stack: Stack = new Stack();
    stack.push(7);
    expect(stack.items()).toEqual([7]);
  });
});
"""


@sandboxed
@pytest.mark.skipif(shutil.which("tsx") is None, reason="needs tsx")
def test_a_typescript_spec_runs_under_tsx(tmp_path):
    root = make_task(
        tmp_path / "suite",
        id="ts-jest-stack",
        language="typescript",
        workspace={
            "stack.ts": "export class Stack {\n  push(v: number): void {}\n  items(): number[] { return []; }\n}\n"
        },
        hidden={"stack.test.ts": TS_SPEC},
        reference={
            "stack.ts": "export class Stack {\n  list: number[] = [];\n  push(v: number): void { this.list.push(v); }\n"
            "  items(): number[] { return [...this.list]; }\n}\n"
        },
        visible_cmd="true",
        hidden_cmd="jest stack.test.ts",
    )
    task = load_task(root)
    expected = grader.expected_tests(task)
    assert expected is not None and list(expected.tests) == ["stack.test.ts:4:3 keeps what is pushed"]
    assert grader.grade(task, task.reference).verdict == "pass"
    assert grader.grade(task, task.workspace).verdict == "fail"
