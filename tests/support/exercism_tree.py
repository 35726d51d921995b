"""Small Exercism exercises of our own, written in the track layout (`exercises/practice/<name>/`)
or in the polyglot benchmark's (`<lang>/exercises/practice/<name>/`), for the importer's tests."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.verifier_tasks import write


def config(solution: list[str], test: list[str], example: list[str]) -> str:
    return json.dumps({"authors": ["us"], "files": {"solution": solution, "test": test, "example": example}}, indent=2)


def exercise(track: Path, name: str, files: dict[str, str], *, intro: bool = False) -> Path:
    folder = track / "exercises" / "practice" / name
    docs = {".docs/instructions.md": f"# Instructions\n\nSolve {name}.\n"}
    if intro:
        docs[".docs/introduction.md"] = f"# Introduction\n\nA story about {name}.\n"
        docs[".docs/instructions.append.md"] = "# Instructions append\n\nMind the edge cases.\n"
    write(folder, {**docs, **files})
    return folder


LEAP_TEST = """
import unittest

import pytest

from leap import (
    leap_year,
)


class LeapTest(unittest.TestCase):
    def test_year_not_divisible_by_4_in_common_year(self):
        self.assertIs(leap_year(2015), False)

    def test_year_divisible_by_2_not_divisible_by_4_in_common_year(self):
        self.assertIs(leap_year(1970), False)

    @pytest.mark.skip(reason="enable when the first ones pass")
    def test_year_divisible_by_4_not_divisible_by_100_in_leap_year(self):
        self.assertIs(leap_year(1996), True)

    @unittest.skip("later")
    def test_year_divisible_by_100_not_divisible_by_400_in_common_year(self):
        self.assertIs(leap_year(2100), False)

    def test_year_divisible_by_400_is_leap_year(self):
        self.assertIs(leap_year(2000), True)

    def test_year_divisible_by_200_not_divisible_by_400_in_common_year(self):
        self.assertIs(leap_year(1800), False)
"""


def python_leap(track: Path) -> Path:
    return exercise(
        track,
        "leap",
        {
            ".meta/config.json": config(["leap.py"], ["leap_test.py"], [".meta/example.py"]),
            ".meta/example.py": "def leap_year(year):\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n",
            "leap.py": "def leap_year(year):\n    pass\n",
            "leap_test.py": LEAP_TEST,
        },
        intro=True,
    )


def python_numpy(track: Path) -> Path:
    return exercise(
        track,
        "matrix-sum",
        {
            ".meta/config.json": config(["matrix_sum.py"], ["matrix_sum_test.py"], [".meta/example.py"]),
            ".meta/example.py": "def total(m):\n    return sum(map(sum, m))\n",
            "matrix_sum.py": "def total(m):\n    pass\n",
            "matrix_sum_test.py": "import numpy\n\nfrom matrix_sum import total\n\n\ndef test_total():\n"
            "    assert total(numpy.ones((2, 2))) == 4\n",
        },
    )


def python_broken_config(track: Path) -> Path:
    return exercise(
        track,
        "broken",
        {
            ".meta/config.json": '{"files": {"solution": ["broken.py"],',
            "broken.py": "def f():\n    pass\n",
            "broken_test.py": "from broken import f\n\n\ndef test_f():\n    assert f() == 1\n",
        },
    )


GRAINS_TEST = """
use grains::*;

#[test]
fn grains_on_square_1() {
    assert_eq!(square(1), 1);
}

#[test]
#[ignore]
fn grains_on_square_2() {
    assert_eq!(square(2), 2);
}

#[test]
#[ignore]
fn grains_on_square_3() {
    assert_eq!(square(3), 4);
}

#[test]
#[ignore = "later"]
fn grains_on_square_16() {
    assert_eq!(square(16), 32_768);
}

#[test]
#[ignore]
fn grains_on_square_64() {
    assert_eq!(square(64), 9_223_372_036_854_775_808);
}

#[test]
#[ignore]
#[should_panic(expected = "Square must be between 1 and 64")]
fn square_0_is_invalid() {
    square(0);
}
"""


def rust_grains(track: Path) -> Path:
    return exercise(
        track,
        "grains",
        {
            ".meta/config.json": config(["src/lib.rs"], ["tests/grains.rs"], [".meta/example.rs"]),
            ".meta/example.rs": "pub fn square(s: u32) -> u64 {\n    if !(1..=64).contains(&s) {\n"
            '        panic!("Square must be between 1 and 64");\n    }\n    1u64 << (s - 1)\n}\n',
            ".gitignore": "/target\nCargo.lock\n",
            "Cargo.toml": '[package]\nname = "grains"\nversion = "1.2.0"\nedition = "2021"\n\n[dependencies]\n',
            "src/lib.rs": 'pub fn square(s: u32) -> u64 {\n    todo!("grains on square {s}")\n}\n',
            "tests/grains.rs": GRAINS_TEST,
        },
    )


def rust_with_crate(track: Path) -> Path:
    return exercise(
        track,
        "dice",
        {
            ".meta/config.json": config(["src/lib.rs"], ["tests/dice.rs"], [".meta/example.rs"]),
            ".meta/example.rs": "pub fn roll() -> u8 {\n    rand::random::<u8>() % 6 + 1\n}\n",
            "Cargo.toml": '[package]\nname = "dice"\nversion = "0.1.0"\nedition = "2021"\n\n'
            '[dependencies]\nrand = "0.8"\n',
            "src/lib.rs": "pub fn roll() -> u8 {\n    todo!()\n}\n",
            "tests/dice.rs": "#[test]\nfn in_range() {\n    assert!((1..=6).contains(&dice::roll()));\n}\n",
        },
    )


TWO_FER_SPEC = """
import { twoFer } from './two-fer';

describe('twoFer()', () => {
  test('no name given', () => {
    expect(twoFer()).toEqual('One for you, one for me.');
  });

  xtest('a name given', () => {
    expect(twoFer('Alice')).toEqual('One for Alice, one for me.');
  });

  describe('another name', () => {
    test.skip('another name given', () => {
      expect(twoFer('Bob')).toEqual('One for Bob, one for me.');
    });

    xit('says "xtest(" literally', () => {
      expect(twoFer('xtest(')).toEqual('One for xtest(, one for me.');
    });
  });
});
"""


def javascript_two_fer(track: Path) -> Path:
    return exercise(
        track,
        "two-fer",
        {
            ".meta/config.json": config(["two-fer.js"], ["two-fer.spec.js"], [".meta/proof.ci.js"]),
            # an example in .meta/ imports the exercise's helper files from one folder up
            ".meta/proof.ci.js": "import { me } from '../greeting';\n\n"
            "export const twoFer = (name = 'you') => `One for ${name}, one for ${me}.`;\n",
            "greeting.js": "export const me = 'me';\n",
            "two-fer.js": "export const twoFer = () => {\n  throw new Error('Remove this line and implement the function');\n};\n",
            "two-fer.spec.js": TWO_FER_SPEC,
            "package.json": json.dumps({"name": "@exercism/javascript-two-fer", "private": True}),
            "babel.config.js": "module.exports = { presets: ['@exercism/babel-preset-javascript'] };\n",
            ".eslintrc": "{}\n",
        },
    )


def javascript_lodash(track: Path) -> Path:
    return exercise(
        track,
        "chunky",
        {
            ".meta/config.json": config(["chunky.js"], ["chunky.spec.js"], [".meta/proof.ci.js"]),
            ".meta/proof.ci.js": "import _ from 'lodash';\nexport const chunk = (a) => _.chunk(a, 2);\n",
            "chunky.js": "export const chunk = () => {\n  throw new Error('todo');\n};\n",
            "chunky.spec.js": "import { chunk } from './chunky';\n\ntest('pairs', () => {\n"
            "  expect(chunk([1, 2, 3])).toEqual([[1, 2], [3]]);\n});\n",
        },
    )


def go_hello(track: Path) -> Path:
    return exercise(
        track,
        "hello-world",
        {
            ".meta/config.json": config(["hello_world.go"], ["hello_world_test.go"], [".meta/example.go"]),
            ".meta/example.go": 'package greeting\n\nfunc HelloWorld() string {\n\treturn "Hello, World!"\n}\n',
            "hello_world.go": 'package greeting\n\nfunc HelloWorld() string {\n\treturn ""\n}\n',
            "hello_world_test.go": 'package greeting\n\nimport "testing"\n\nfunc TestHelloWorld(t *testing.T) {\n'
            '\tif HelloWorld() != "Hello, World!" {\n\t\tt.Fatal("wrong")\n\t}\n}\n',
            "go.mod": "module greeting\n\ngo 1.18\n",
        },
    )


def go_with_module(track: Path) -> Path:
    return exercise(
        track,
        "uuid-gen",
        {
            ".meta/config.json": config(["uuid_gen.go"], ["uuid_gen_test.go"], [".meta/example.go"]),
            ".meta/example.go": 'package uuidgen\n\nimport "github.com/google/uuid"\n\nfunc New() string { return uuid.NewString() }\n',
            "uuid_gen.go": 'package uuidgen\n\nfunc New() string { return "" }\n',
            "uuid_gen_test.go": 'package uuidgen\n\nimport "testing"\n\nfunc TestNew(t *testing.T) {\n'
            '\tif len(New()) != 36 {\n\t\tt.Fatal("wrong")\n\t}\n}\n',
            "go.mod": "module uuidgen\n\ngo 1.18\n",
        },
    )


def java_hello(track: Path) -> Path:
    return exercise(
        track,
        "hello-world",
        {
            ".meta/config.json": config(
                ["src/main/java/Greeter.java"],
                ["src/test/java/GreeterTest.java"],
                [".meta/src/reference/java/Greeter.java"],
            ),
            ".meta/src/reference/java/Greeter.java": 'class Greeter {\n    String getGreeting() { return "Hello, World!"; }\n}\n',
            "src/main/java/Greeter.java": 'class Greeter {\n    String getGreeting() { return ""; }\n}\n',
            "src/test/java/GreeterTest.java": "import org.junit.jupiter.api.Test;\n\nclass GreeterTest {\n    @Test\n    void greets() {}\n}\n",
        },
    )


def polyglot_tree(root: Path) -> Path:
    """A polyglot-benchmark checkout: python, rust, javascript, go and java exercises."""
    for build in (python_leap, python_numpy, python_broken_config):
        build(root / "python")
    for build in (rust_grains, rust_with_crate):
        build(root / "rust")
    for build in (javascript_two_fer, javascript_lodash):
        build(root / "javascript")
    go_hello(root / "go")
    go_with_module(root / "go")
    java_hello(root / "java")
    return root
