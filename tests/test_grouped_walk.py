"""grouped_walk's regrouped bottom-up pass against traversal.accumulate's post-order
one: the same values, regrets and sums bit for bit, reordered or not, and the solvers'
batched iterations (which run it) equal to their per-iteration path bit for bit."""

import types

import numpy as np
import pytest

from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.cfr import grouped_walk
from ggp_cr.algorithms.cfr import traversal
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.tree import compiled_tree

_GAMES = ("kuhn_poker", "leduc_poker", "liars_dice(dice_sides=3)",
          "turn_based_simultaneous_game(game=goofspiel(imp_info=True,num_cards=4,"
          "points_order=descending))", "python_leduc(cards_per_suit=2,max_raises=1)")


def _passes(tree, walk, accumulate, seed):
  """values, regrets and sums after six passes (players 0, 1, both, twice) with
  random strategies and weights."""
  rng = np.random.default_rng(seed)
  values = walk.utility.copy()
  regrets = rng.normal(size=tree.num_infoset_actions)
  cumulative = rng.random(tree.num_infoset_actions)
  reach = np.empty((walk.num_internal, 3))
  for player in (0, 1, traversal.BOTH_PLAYERS) * 2:
    strategy = tree.normalise_per_infoset(rng.random(tree.num_infoset_actions) ** 3)
    strategy[rng.random(len(strategy)) < 0.2] = 0.0  # some unreached subtrees
    traversal.propagate_reach(walk.down_parent, walk.down_player, walk.down_slot,
                              walk.down_chance_prob, strategy, reach)
    accumulate(player, strategy, reach, values, regrets, cumulative, rng.random() * 7)
  return values, regrets, cumulative


@pytest.mark.parametrize("reordered", [True, False])
@pytest.mark.parametrize("game", _GAMES)
def test_grouped_pass_equals_post_order_pass_bit_for_bit(game, reordered, monkeypatch):
  tree = compiled_tree.cached_tree(game)
  walk = traversal.TraversalTree(tree, None, None)
  if not reordered:
    monkeypatch.setattr(grouped_walk, "_keeps_infoset_order", lambda *args: False)
  grouped = grouped_walk.GroupedEntries(walk)
  assert grouped.reordered == reordered
  if reordered:  # the point: long runs of one kind
    assert len(grouped.segment_player) < len(walk.up_node) / 4

  def post_order(player, strategy, reach, values, regrets, cumulative, weight):
    traversal.accumulate(player, 0, len(walk.up_node), walk.up_node, walk.up_position,
                         walk.up_first_child, walk.up_num_children, walk.up_player,
                         walk.up_slot_offset, walk.chance_prob, strategy, reach, values,
                         regrets, cumulative, weight, 1.0, False, False)

  def regrouped(player, strategy, reach, values, regrets, cumulative, weight):
    grouped_walk.accumulate_grouped(player, grouped.arrays(), walk.chance_prob,
                                    strategy, reach, values, regrets, cumulative, weight)

  for ours, theirs in zip(_passes(tree, walk, regrouped, 5),
                          _passes(tree, walk, post_order, 5)):
    np.testing.assert_array_equal(ours, theirs)


def test_histories_of_one_infoset_at_different_heights_keep_the_post_order():
  # Post-order entries: 0 infoset B (height 0) under 1 infoset A (height 1); 2
  # infoset A (height 0); 3 the chance root. Grouping by height would put A's entry 2
  # before its entry 1.
  walk = types.SimpleNamespace(
      up_node=np.array([3, 1, 2, 0], np.int32), up_position=np.arange(4, dtype=np.int32),
      up_first_child=np.array([5, 3, 7, 1], np.int32),
      up_num_children=np.array([2, 2, 2, 2], np.int32),
      up_player=np.array([1, 0, 0, -1], np.int32),
      up_slot_offset=np.array([2, 0, 0, -1], np.int32),
      up_parent=np.array([1, 3, 3, -1], np.int32))
  grouped = grouped_walk.GroupedEntries(walk)
  assert not grouped.reordered
  np.testing.assert_array_equal(grouped.node, walk.up_node)
  np.testing.assert_array_equal(grouped.segment_start, [0, 1, 3, 4])


@pytest.mark.parametrize("spec", ["cfr+", "dcfr", "pcfr+", "dcfr+", "pdcfr+",
                                  "hs-pcfr+(horizon=20)", "dcfr(updates=simultaneous)",
                                  "pcfr+(updates=simultaneous)"])
def test_batched_iterations_equal_single_ones_bit_for_bit(spec, monkeypatch):
  monkeypatch.setattr(cfr, "_BATCH", 7)
  tree = compiled_tree.cached_tree("leduc_poker")
  single = registry.make_solver(registry.parse_solver(spec), tree)
  batched = registry.make_solver(registry.parse_solver(spec), tree)
  for _ in range(40):
    single.evaluate_and_update_policy()
  batched.iterate(5)  # below cfr._GROUP_FROM: the post-order pass
  assert batched._grouped is None  # pylint: disable=protected-access
  batched.iterate(35)
  assert batched._grouped.reordered  # pylint: disable=protected-access
  for name in ("cumulative_regrets_slots", "current_strategy_slots",
               "average_strategy_slots"):
    np.testing.assert_array_equal(getattr(batched, name)(), getattr(single, name)())
