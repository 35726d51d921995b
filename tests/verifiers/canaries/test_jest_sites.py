"""Canaries of jest-style specs (verifiers/canaries/node.py): the tests inside `describe` blocks
and the sites of their expectations, without a sandbox."""

from __future__ import annotations

import random

from tests.support.sites import changed
from verifiers.canaries import node
from verifiers.canaries.sites import CONTRADICTION, NEW_INPUT
from verifiers.mechanics import syntax_problems

SPEC = b"""import { score, Game } from './game';

describe('Game', () => {
  test('scores', () => {
    expect(score(3, 4)).toEqual(7);
    expect(score(0, 0)).toStrictEqual([0, 0]);
  });

  describe('rules', () => {
    it('says no', () => {
      expect(new Game().over()).toBeFalsy();
      expect(new Game().winner()).not.toBeNull();
      expect(() => new Game().roll(11)).toThrow(new Error('too many pins'));
    }, 5000);

    xtest('is skipped', () => {
      expect(score(1, 1)).toBe(2);
    });

    test('waits', async () => {
      await expect(new Game().later()).resolves.toBeDefined();
    });
  });
});
"""


def _claims(unit) -> list[tuple[str, str, bytes]]:
    out = []
    for site in unit.sites:
        text = changed(SPEC, site)
        line_start = text.rfind(b"\n", 0, site.start) + 1
        out.append((site.kind, site.how, text[line_start : text.find(b"\n", site.start)].strip()))
    return out


def test_tests_inside_describe_and_their_expectations():
    tests = node.tests_of("game.spec.js", SPEC, "javascript", random.Random(4))
    assert [u.name for u in tests.units] == ["scores", "says no", "waits"]  # an xtest never runs
    scores, rules, waits = (_claims(u) for u in tests.units)
    kinds = {(kind, how) for kind, how, _ in scores}
    assert (CONTRADICTION, "number moved") in kinds and (CONTRADICTION, "collection altered") in kinds
    assert (NEW_INPUT, "input changed") in kinds
    assert all(
        b"toEqual(7)" not in line for kind, _, line in scores if kind == CONTRADICTION and b"score(3, 4)" in line
    )
    lines = {line for _, _, line in rules}
    assert b"expect(new Game().over()).toBeTruthy();" in lines  # truth flipped
    assert b"expect(new Game().winner()).toBeNull();" in lines  # `.not` taken out
    assert any(b"toThrow(new Error(" in line and b"too many pins" not in line for line in lines)
    assert [line for _, _, line in waits] == [b"await expect(new Game().later()).resolves.not.toBeDefined();"]


def test_every_change_keeps_the_spec_valid():
    for seed in range(6):
        tests = node.tests_of("game.spec.js", SPEC, "javascript", random.Random(seed))
        for unit in tests.units:
            for site in unit.sites:
                assert syntax_problems(changed(SPEC, site), "javascript") == [], (seed, site)


def test_a_commonjs_spec_knows_its_required_names():
    spec = b"""const { score, Game: Bowling } = require('./game');

test('scores like a game', () => {
  expect(score(3)).toEqual(new Bowling(3).total());
});
"""
    (unit,) = node.tests_of("game.spec.js", spec, "javascript", random.Random(1)).units
    changed = [s for s in unit.sites if s.how == "number moved"]
    assert changed and all(s.kind == NEW_INPUT for s in changed)  # the expected side calls the module
