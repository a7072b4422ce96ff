"""Continual resolving plays as recorded before the package was reorganised ([S] ch. 2).

Replays record_behaviour.py's cases (both paths, in-place subgames, each solver and
gadget variant) and compares every decision's key, policy (to 1e-9) and action.
"""

import json

import pytest

import record_behaviour

with open(record_behaviour.FIXTURE, encoding="utf-8") as _f:
  _RECORDS = json.load(_f)
_CASES = record_behaviour.cases()


def test_the_fixture_holds_every_case():
  assert sorted(_RECORDS) == sorted(name for name, *_ in _CASES)


@pytest.mark.parametrize("case", _CASES, ids=[case[0] for case in _CASES])
def test_decisions_equal_the_records(case):
  name, game, seat, seed, path, options = case
  played = record_behaviour.play(game, seat, seed, path, options)
  recorded = _RECORDS[name]
  assert len(played) == len(recorded)
  for now, before in zip(played, recorded):
    assert now["key"] == before["key"]
    assert now["actions"] == before["actions"]
    assert now["policy"] == pytest.approx(before["policy"], abs=1e-9)
    assert (now["action"], now["new_subgame"], now["iterations"]) == (
        before["action"], before["new_subgame"], before["iterations"])
