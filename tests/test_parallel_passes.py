"""Tests of the multi-threaded full-width CFR pass (parallel_passes.py, issue 45):
two threads give one thread's results bit for bit, for every solver of the CFR family."""

import multiprocessing

import numba
import numpy as np
import pytest

from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.cfr import parallel_passes
from ggp_cr.algorithms.cfr import traversal
from ggp_cr.algorithms.cfr import utility_estimators
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.tree import compiled_tree

_TWO_THREADS = pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2,
                                  reason="numba has one thread here")

_GAMES = ["leduc_poker", "python_ii_goofspiel(num_cards=4)", "liars_dice(dice_sides=4)"]

_SOLVERS = {
    "cfr": cfr.CFRSolver,
    "cfr+": cfr.CFRPlusSolver,
    "lcfr": cfr.LCFRSolver,
    "dcfr": cfr.DCFRSolver,
    "pcfr+": cfr.PCFRPlusSolver,
    "dcfr+": cfr.DCFRPlusSolver,
    "pdcfr+": cfr.PDCFRPlusSolver,
    "hs-dcfr": cfr.HSDCFRSolver,
    "hs-pcfr+": cfr.HSPCFRPlusSolver,
    "cfr-simultaneous": lambda g, **k: cfr.CFRSolver(g, alternating_updates=False, **k),
    "cfrplayground": lambda g, **k: cfr.CFRPlusSolver(g, cfrplayground=True, **k),
}


def _assert_identical(one, two):
  for name in ("current_strategy_slots", "average_strategy_slots",
               "cumulative_regrets_slots"):
    np.testing.assert_array_equal(getattr(two, name)(), getattr(one, name)(),
                                  err_msg=name)
  assert one.visited_states == two.visited_states


@pytest.mark.parametrize("game", _GAMES)
def test_split_groups_share_no_information_set(game):
  tree = compiled_tree.cached_tree(game)
  walk = traversal.whole_tree_walk(tree)
  plans = parallel_passes.plans_for(walk, tree)
  players = (0, 1) if game == "leduc_poker" else (0, 1, traversal.BOTH_PLAYERS)
  for player in players:  # leduc's simultaneous passes have none: serial
    split = plans.split(player)
    assert split.units, f"no split for player {player}"
    owner = {}
    for unit in range(len(split.unit_ptr) - 1):
      for j in range(split.unit_ptr[unit], split.unit_ptr[unit + 1]):
        entries = np.arange(split.seg_lo[j], split.seg_hi[j])
        updated = walk.up_player[entries] >= 0 if player == traversal.BOTH_PLAYERS \
            else walk.up_player[entries] == player
        for offset in walk.up_slot_offset[entries[updated]]:
          assert owner.setdefault(offset, unit) == unit
    covered = sum(int(split.seg_hi[j] - split.seg_lo[j]) for j in
                  range(len(split.seg_lo))) + len(split.top_node)
    assert covered == len(walk.up_node)


@_TWO_THREADS
@pytest.mark.parametrize("game,solver",
                         [("leduc_poker", name) for name in sorted(_SOLVERS)] +
                         [(game, name) for game in _GAMES[1:]
                          for name in ("cfr", "cfr+", "dcfr", "pcfr+", "dcfr+", "pdcfr+",
                                       "cfr-simultaneous")])
def test_two_threads_equal_one(game, solver):
  tree = compiled_tree.cached_tree(game)
  one = _SOLVERS[solver](tree, threads=1)
  two = _SOLVERS[solver](tree, threads=2)
  assert (one.threads, two.threads) == (1, 2)
  for _ in range(3):  # 30 iterations, compared along the way
    one.iterate(10)
    two.iterate(10)
    _assert_identical(one, two)
  assert one.threaded_passes == 0
  # Leduc's simultaneous passes have no split (serial); all others run on threads.
  serial = game == "leduc_poker" and solver == "cfr-simultaneous"
  passes = 30 if solver in ("cfr-simultaneous", "cfrplayground") else 60
  assert two.threaded_passes == (0 if serial else passes)


@_TWO_THREADS
@pytest.mark.parametrize("solver", ["cfr+", "dcfr", "pdcfr+"])
def test_threads_equal_one_pruned_thread(monkeypatch, solver):
  """On a tree past cfr._PRUNE_NODES one thread's batched passes skip the subtrees the
  opponent never reaches while threaded passes walk them all: the same results."""
  monkeypatch.setattr(cfr, "_PRUNE_NODES", 0)
  tree = compiled_tree.cached_tree(_GAMES[2])
  one = _SOLVERS[solver](tree, threads=1)
  two = _SOLVERS[solver](tree, threads=2)
  for _ in range(3):
    one.iterate(20)
    two.iterate(20)
    _assert_identical(one, two)
  assert one.threaded_passes == 0 and two.threaded_passes == 120


@_TWO_THREADS
@pytest.mark.parametrize("batched", [True, False])
def test_threaded_passes_read_the_split(batched):
  # A split missing one subtree changes the threaded solver's results (the serial
  # pass would not read it): the threads path is the one that runs, in iterate()'s
  # batched kernel and in evaluate_and_update_policy.
  tree = compiled_tree.cached_tree("python_ii_goofspiel(num_cards=4)")
  one = cfr.CFRPlusSolver(tree, threads=1)
  two = cfr.CFRPlusSolver(tree, threads=2)
  plans = parallel_passes.plans_for(two._walk, tree)  # pylint: disable=protected-access
  split = plans.split(0)
  split.arrays = (split.arrays[0], split.arrays[1], split.arrays[2].copy()) + \
      split.arrays[3:]
  split.arrays[2][0] = split.arrays[1][0]  # the first subtree emptied
  try:
    for solver in (one, two):
      if batched:
        solver.iterate(3)
      else:
        for _ in range(3):
          solver.evaluate_and_update_policy()
    assert two.threaded_passes == 6
    assert not np.array_equal(one.average_strategy_slots(),
                              two.average_strategy_slots())
  finally:
    plans._splits.clear()  # pylint: disable=protected-access


@_TWO_THREADS
def test_depth_limited_and_observed_passes_equal_one():
  tree = compiled_tree.cached_tree("leduc_poker")
  solvers = [cfr.CFRPlusSolver(tree, depth_limit=4, threads=threads,
                               utility_estimator=utility_estimators.RandomPlayout(2, 7))
             for threads in (1, 2)]
  for solver in solvers:
    solver.iterate(20)
  _assert_identical(*solvers)
  observed = []
  for threads in (1, 2):
    solver = cfr.CFRPlusSolver(tree, threads=threads)
    solver.iterate(10)
    solver.evaluate_and_update_policy(
        lambda reach, values: observed.append((reach.copy(), values.copy())))
    solver.evaluate_strategy(solver.average_strategy_slots(),
                             lambda reach, values: observed.append(
                                 (reach.copy(), values.copy())))
  for (reach_one, values_one), (reach_two, values_two) in zip(observed[:2],
                                                               observed[2:]):
    np.testing.assert_array_equal(reach_two, reach_one)
    np.testing.assert_array_equal(values_two, values_one)


def test_thread_count_choice():
  small = compiled_tree.cached_tree("kuhn_poker")
  assert cfr.CFRPlusSolver(small).threads == 1
  assert parallel_passes.threads_for(None) == 1  # opt-in (docs/algorithms/cfr.md)
  spec = registry.parse_solver("cfr+(threads=2)")
  assert registry.make_solver(spec, small).threads == 2
  for bad in (0, -1, 1.5, True, "2", numba.config.NUMBA_NUM_THREADS + 1):
    with pytest.raises(ValueError, match="threads must be"):
      cfr.CFRPlusSolver(small, threads=bad)


@_TWO_THREADS
def test_forked_child_runs_parallel_passes_after_its_parent():
  # GNU OpenMP terminates such children; the tournaments fork their workers.
  tree = compiled_tree.cached_tree("leduc_poker")
  cfr.CFRPlusSolver(tree, threads=2).iterate(2)
  context = multiprocessing.get_context("fork")
  with context.Pool(1) as pool:
    visited = pool.apply_async(_two_thread_run, ("leduc_poker",)).get(timeout=120)
  assert visited == 2 * 2 * tree.num_nodes


def _two_thread_run(game):
  solver = cfr.CFRPlusSolver(compiled_tree.cached_tree(game), threads=2)
  solver.iterate(2)
  assert solver.threaded_passes == 4
  return solver.visited_states
