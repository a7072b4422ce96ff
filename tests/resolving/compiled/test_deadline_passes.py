"""A pass of the average strategy over a compiled view gives up at its deadline
between blocks of the walk (a starved process stops there instead of finishing the
pass), with the same reach and values as the whole pass when it ends in time; the
average strategy at one information set without normalising every slot."""

import itertools

import numpy as np
import pytest

import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.resolving.compiled import compiled_resolver
from ggp_cr.algorithms.resolving.subgames import subgame_trace
from ggp_cr.algorithms.tree import compiled_tree

_GAME = "python_leduc(max_raises=1,cards_per_suit=3)"


def _solver(iterations=5):
  tree = compiled_tree.cached_tree(pyspiel.load_game(_GAME))
  solver = cfr.CFRPlusSolver(tree)
  solver.iterate(iterations)
  return solver


def _observed(solver, slots, **kwargs):
  seen = []
  done = solver.evaluate_strategy(
      slots, lambda reach, values: seen.append((reach.copy(), values.copy())), **kwargs)
  return done, seen


def test_a_blocked_pass_equals_the_whole_pass(monkeypatch):
  """In blocks (several: a small EVALUATE_BLOCK), the pass observes the same reach
  and values, bit for bit, as the serial kernel over the whole walk."""
  solver = _solver()
  slots = solver.average_strategy_slots()
  whole = _observed(solver, slots)
  monkeypatch.setattr(cfr, "EVALUATE_BLOCK", 7)
  blocked = _observed(solver, slots, deadline=float("inf"))
  assert whole[0] and blocked[0]
  np.testing.assert_array_equal(whole[1][0][0], blocked[1][0][0])
  np.testing.assert_array_equal(whole[1][0][1], blocked[1][0][1])


@pytest.mark.parametrize("looks", [1, 2, 5])
def test_a_pass_past_its_deadline_stops_within_a_block(monkeypatch, looks):
  """A clock that passes the deadline at its `looks`-th reading: the pass stops
  there (no more kernel calls than looks - 1), observes nothing and returns False;
  the solver's tables are unchanged."""
  solver = _solver()
  slots = solver.average_strategy_slots()
  regrets, sums = solver.cumulative_regrets_slots(), solver.average_strategy_slots()
  monkeypatch.setattr(cfr, "EVALUATE_BLOCK", 7)
  calls = []
  propagate = cfr.traversal.propagate_positions
  monkeypatch.setattr(cfr.traversal, "propagate_positions",
                      lambda *a: (calls.append(a[0]), propagate(*a))[1])
  clock = itertools.count(1)
  done, seen = _observed(solver, slots, deadline=looks - 0.5, now=lambda: next(clock))
  assert not done and not seen
  assert len(calls) == looks - 1
  np.testing.assert_array_equal(solver.cumulative_regrets_slots(), regrets)
  np.testing.assert_array_equal(solver.average_strategy_slots(), sums)


def test_next_root_estimates_add_nothing_past_the_deadline():
  """NextRootEstimates.add with a deadline already past adds nothing (the whole
  game's view: the pass over the whole tree); with a later one it adds what add
  without a deadline adds."""
  tree = compiled_tree.cached_tree(pyspiel.load_game(_GAME))
  keys = subgame_trace.StateKeys.build(tree)
  whole = compiled_resolver.CompiledResolver.whole_game(tree, keys, 0)
  whole.iterate(3)
  slots = whole.view.average_slots()
  late, timed, plain = (whole.estimates.fresh() for _ in range(3))
  assert not late.add(slots, deadline=-1.0)
  assert late.iterations == 0 and not late.reach_sum.any()
  assert timed.add(slots, deadline=float("inf")) and plain.add(slots)
  for name in ("reach_sum", "opponent_reach_sum", "value_sum", "weight_sum"):
    np.testing.assert_array_equal(getattr(timed, name), getattr(plain, name))


def test_the_average_at_one_infoset_is_the_slot_forms():
  """GadgetView.average_at of a CFR+ view (one information set normalised) equals
  the whole average strategy's slots there, bit for bit."""
  tree = compiled_tree.cached_tree(pyspiel.load_game(_GAME))
  keys = subgame_trace.StateKeys.build(tree)
  whole = compiled_resolver.CompiledResolver.whole_game(tree, keys, 1)
  whole.iterate(4)
  slots = whole.view.average_slots()
  for infoset in range(tree.num_infosets):
    offset = int(tree.infoset_action_offset[infoset])
    count = int(tree.infoset_num_actions[infoset])
    np.testing.assert_array_equal(whole.probabilities(infoset),
                                  slots[offset:offset + count])
