"""CFR+ on a subgame in place with pruned passes (subgame_cfr.SubgameCFRPlus's
`_prune`: unreached subtrees skipped, one reach column redone) equals the unpruned
in-place solve bit for bit ([S] §1.3.1; issue 45)."""

import time

import numpy as np
import pytest
import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.bots import anytime
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.resolving import move_budget
from ggp_cr.algorithms.resolving import protocol
from ggp_cr.algorithms.resolving.compiled import compiled_resolver
from ggp_cr.algorithms.resolving.compiled import in_place_view
from ggp_cr.algorithms.resolving.compiled import next_root_estimates
from ggp_cr.algorithms.resolving.compiled import subgame_cfr
from ggp_cr.algorithms.resolving.compiled import subgame_layout
from ggp_cr.algorithms.resolving.gadget import gadget_game
from ggp_cr.algorithms.tree import compiled_tree
from test_copied_view import GAMES, _gadget_arguments

ITERATIONS = 20


def _view(arguments, prune, by_level=True):
  return in_place_view.SubgameView(
      *arguments, solver=lambda view: subgame_cfr.SubgameCFRPlus(
          view, pack=False, prune=prune, by_level=by_level))


def _views(game_string, variant, seed):
  """(unpruned, pruned) views of a few subgames of `game_string` (both players)."""
  for arguments in _gadget_arguments(game_string, variant,
                                     np.random.default_rng(seed)):
    try:
      yield _view(arguments, False), _view(arguments, True)
    except subgame_layout.NestedRoots:
      continue


def _solve_both_equally(views, estimates):
  """ITERATIONS iterations of both views with their next-root estimates, then
  their tables and estimates equal bit for bit."""
  # Interleaved: the other solve's passes overwrite the shared reach and values,
  # so a pruned solve must redo its whole reach after them (reach_owner) ...
  for _ in range(ITERATIONS // 2):
    for view, estimate in zip(views, estimates):
      next_root_estimates.solve_with_estimates(view, estimate, 1)
  # ... and alone, it redoes one column a pass.
  for view, estimate in zip(views, estimates):
    next_root_estimates.solve_with_estimates(view, estimate, ITERATIONS // 2)
  for name in ("_regrets", "_cumulative", "_strategy"):
    np.testing.assert_array_equal(getattr(views[1].solver, name),
                                  getattr(views[0].solver, name))
  for name in ("reach_sum", "opponent_reach_sum", "value_sum", "weight_sum"):
    np.testing.assert_array_equal(getattr(estimates[1], name),
                                  getattr(estimates[0], name))


@pytest.mark.parametrize("variant", gadget_game.VARIANTS)
@pytest.mark.parametrize("game_string", GAMES)
def test_pruned_passes_equal_the_unpruned_solve(game_string, variant):
  compared = 0
  for plain, pruned in _views(game_string, variant, 4):
    estimates = [next_root_estimates.NextRootEstimates(v, v.trace())
                 for v in (plain, pruned)]
    _solve_both_equally((plain, pruned), estimates)
    assert pruned.solver.pruned_passes == 2 * ITERATIONS
    assert plain.solver.pruned_passes == 0
    # A pass of a strategy (evaluate) after pruned passes: the whole reach again.
    for view, estimate in zip((plain, pruned), estimates):
      estimate.add(view.average_slots())
      next_root_estimates.solve_with_estimates(view, estimate, 1)
    np.testing.assert_array_equal(estimates[1].value_sum, estimates[0].value_sum)
    np.testing.assert_array_equal(pruned.solver._regrets,  # pylint: disable=protected-access
                                  plain.solver._regrets)  # pylint: disable=protected-access
    compared += 1
  assert compared > 0


@pytest.mark.parametrize("variant", gadget_game.VARIANTS)
@pytest.mark.parametrize("game_string", GAMES)
def test_level_order_passes_equal_the_post_order_ones(game_string, variant):
  """Pruned passes bottom-up level by level (SubgameCFRPlus.by_level: every
  information set on one level, roots on one depth in order) add the same numbers
  in the same order as along the post-order: bit for bit."""
  by_level = 0
  for arguments in _gadget_arguments(game_string, variant, np.random.default_rng(8)):
    try:
      post, level = _view(arguments, True, False), _view(arguments, True, True)
    except subgame_layout.NestedRoots:
      continue
    assert not post.solver.by_level
    by_level += level.solver.by_level
    estimates = [next_root_estimates.NextRootEstimates(v, v.trace())
                 for v in (post, level)]
    _solve_both_equally((post, level), estimates)
  if variant != "max_margin":  # (its roots come by o's choice, not in order)
    assert by_level > 0


def test_level_segments_cover_the_subgame_deepest_first():
  """_level_segments: the roots' and ranges' positions, each once, cut at the
  level starts, deepest level first and increasing within a level."""
  level_start = np.array([0, 1, 3, 7, 12, 20])
  lo, hi = subgame_layout.level_segments(  # pylint: disable=protected-access
      np.array([1, 2]), np.array([3, 8]), np.array([6, 16]), level_start)
  positions = np.concatenate([np.arange(a, b) for a, b in zip(lo, hi)])
  np.testing.assert_array_equal(np.sort(positions), [1, 2, 3, 4, 5] + list(range(8, 16)))
  levels = np.searchsorted(level_start, lo, side="right") - 1
  np.testing.assert_array_equal(
      levels, np.searchsorted(level_start, hi - 1, side="right") - 1)
  assert list(levels) == sorted(levels, reverse=True)
  np.testing.assert_array_equal(lo, [12, 8, 3, 1])
  np.testing.assert_array_equal(hi, [16, 12, 6, 3])


@pytest.mark.parametrize("count", range(1, 8))
def test_infoset_sums_add_each_history_in_turn(count):
  """_infoset_sums (slots summed side by side in registers) equals adding the
  same number once per history, slot by slot, bit for bit."""
  rng = np.random.default_rng(count)
  infosets = np.arange(3, dtype=np.int32)
  counts = np.full(3, count, dtype=np.int16)
  offsets = (np.arange(3) * count).astype(np.int32)
  strategy, reach = rng.random(3 * count), rng.random((5, 2))
  first, histories = np.array([0, 3, 4]), np.array([7, 0, 1000])
  cumulative = rng.random(3 * count)
  expected = cumulative.copy()
  for n in range(3):
    own = 0.3 * reach[first[n], 1]
    for _ in range(histories[n]):
      for a in range(offsets[n], offsets[n] + count):
        expected[a] += own * strategy[a]
  subgame_cfr._infoset_sums(  # pylint: disable=protected-access
      1, infosets, first, histories, offsets, counts, strategy, reach, cumulative, 0.3)
  np.testing.assert_array_equal(cumulative, expected)


def test_pruned_passes_skip_unreached_subtrees():
  """After CFR+ zeroed actions, a pruned iteration leaves internal values of the
  subgame untouched (a marker survives there) and still equals the unpruned one."""
  skipped = 0
  for plain, pruned in _views("python_princess_monster(max_turns=4)", "resolve", 5):
    plain.run(ITERATIONS)
    pruned.run(ITERATIONS)
    plain.run(1)
    # pylint: disable=protected-access
    solver = pruned.solver
    walk = solver._tables.walk
    inside = np.concatenate([walk.up_node[lo:hi] for lo, hi in
                             zip(solver._up_lo, solver._up_hi)])
    solver._tables.values[inside] = 12345.0  # finite: weighed by 0 where skipped
    pruned.run(1)
    skipped += int(np.sum(solver._tables.values[inside] == 12345.0))
    for name in ("_regrets", "_cumulative", "_strategy"):
      np.testing.assert_array_equal(getattr(solver, name),
                                    getattr(plain.solver, name))
  assert skipped > 0


def test_level_passes_compute_the_other_players_levels_whole():
  """A pruned pass level by level computes the values on the levels of the player
  it does not update also where the updated player's counterfactual reach is 0 (a
  pass skipped those before and left them stale; their reach is not read now),
  and still equals the unpruned solve."""
  overwritten = 0
  for plain, pruned in _views("python_princess_monster(max_turns=4)", "resolve", 5):
    # pylint: disable=protected-access
    solver = pruned.solver
    assert solver.by_level
    plain.run(ITERATIONS)
    pruned.run(ITERATIONS)
    plain.run(1)
    levels = solver._tables.levels
    # An iteration's last pass updates player 1: player 0's levels are the other's.
    positions = np.concatenate([
        np.arange(lo, hi) for lo, hi, q in zip(solver._level_lo, solver._level_hi,
                                               solver._level_player) if q == 0])
    nodes = levels.node[positions].astype(np.int64)
    prune = solver._prune

    def marked(update_player, weight, observed):
      if update_player == 1:  # finite: weighed by 0 where skipped
        solver._tables.values[nodes] = 12345.0
      prune(update_player, weight, observed)

    solver._prune = marked
    pruned.run(1)
    reach = solver._tables.reach[positions]  # the last pass's
    unreached = reach[:, 0] * reach[:, 2] == 0.0
    # (a value computed from children a pass skipped may be the marker again)
    overwritten += int(np.sum(unreached & (solver._tables.values[nodes] != 12345.0)))
    for name in ("_regrets", "_cumulative", "_strategy"):
      np.testing.assert_array_equal(getattr(solver, name),
                                    getattr(plain.solver, name))
  assert overwritten > 0


@pytest.mark.parametrize("game_string", GAMES)
def test_consecutive_positions_have_consecutive_children(game_string):
  """The level passes read a segment's first child once and carry it
  (subgame_cfr._values_of_level, _own_level): each internal position's children
  follow the previous position's (the tree is breadth-first)."""
  tree = compiled_tree.cached_tree(pyspiel.load_game(game_string))
  tables = subgame_layout._tree_tables(tree)  # pylint: disable=protected-access
  levels = tables.levels
  first = levels.first_child.astype(np.int64)
  np.testing.assert_array_equal(first[1:], first[:-1] + levels.num_children[:-1])
  np.testing.assert_array_equal(first, tables.child_begin[levels.node.astype(np.int64)])


def test_own_levels_run_on_a_game_of_alternating_levels():
  """PAM's levels hold one player each, so its pruned passes run `_own_level` on
  the updated player's levels (and equal the unpruned solve: the tests above)."""
  _, pruned = next(_views("python_princess_monster(max_turns=4)", "resolve", 5))
  # pylint: disable=protected-access
  assert set(pruned.solver._level_player.tolist()) == {0, 1}


def test_the_anytime_loop_decays_its_estimate_fast_for_pruned_passes():
  """A resolver solving in place with pruned passes (later iterations faster than
  the first, and steady) decays the anytime loop's per-iteration estimate by
  move_budget.PRUNED_RUN_DECAY and starts an iteration while
  move_budget.PRUNED_RUN_MARGIN times it fits; others use protocol.AnytimeRun's."""
  plain, pruned = next(_views("python_princess_monster(max_turns=4)", "resolve", 6))
  fast = compiled_resolver.CompiledResolver(pruned)
  other = compiled_resolver.CompiledResolver(plain)
  assert fast.run_decay == move_budget.PRUNED_RUN_DECAY < protocol.AnytimeRun.run_decay
  assert other.run_decay == protocol.AnytimeRun.run_decay
  default = protocol.AnytimeRun().run_margin
  for iterations in range(4):  # the first pruned iteration runs at the default
    assert fast.run_margin == (move_budget.PRUNED_RUN_MARGIN if iterations >= 2
                               else default)
    assert other.run_margin == default
    fast.iterate(1)
    other.iterate(1)
  assert move_budget.PRUNED_RUN_MARGIN < default


def test_the_anytime_loop_asks_a_callable_margin_before_each_iteration():
  """anytime.spend with a callable margin (CompiledResolver.run_margin's, through
  protocol.AnytimeRun.run) reads it before each iteration: here it turns
  prohibitive after three iterations, which end the run."""
  done = []
  margin = lambda: 1.0 if len(done) < 3 else 1e15
  ran = anytime.spend(limits.Limit(seconds=60.0), time.perf_counter(),
                      lambda n: done.extend([n]), margin=margin, decay=0.5)
  assert ran == 3 and done == [1, 1, 1]


def test_prepare_after_a_solve_keeps_it_equal():
  """subgame_layout.prepare zeroing the shared arrays after a view was solved (its
  reach and terminal payoffs gone) does not change the solve."""
  plain, pruned = next(_views("python_princess_monster(max_turns=4)", "resolve", 7))
  plain.run(3)
  pruned.run(3)
  tables = pruned.solver._tables  # pylint: disable=protected-access
  tables.touched = False
  subgame_layout.prepare(pruned.whole)
  pruned.run(3)  # the view that ran last first
  plain.run(3)
  np.testing.assert_array_equal(pruned.average_slots(), plain.average_slots())
