"""Nested roots in continual resolving's subgames ([S] ch. 2): compiled sampling
collects a next root's values under every copy of it, as the live solver does.

A subgame's roots are nested when one next root of a group lies below another of
the same group; the copying view (copied_view.GadgetView) then holds the inner
root's subtree twice, and a next root below it has two copies. None of the
package's games has such a group (test_the_package_games_have_no_nested_groups
says why); tests/nested_roots_game.py is built to have them.
"""

import numpy as np
import pytest

import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.resolving import settings
from ggp_cr.algorithms.resolving.gadget import gadget_game
from ggp_cr.algorithms.resolving.live import live_resolver
from ggp_cr.algorithms.resolving.live import live_problem
from ggp_cr.algorithms.resolving.subgames import subgame_trace
from ggp_cr.algorithms.tree import compiled_tree

import nested_roots_game
from test_view_sampling import _assert_inputs_equal
from test_view_sampling import _assert_same_tables
from test_view_sampling import _both
from test_view_sampling import _compare_next_inputs
from test_view_sampling import _inputs

NESTED = nested_roots_game.SHORT_NAME


def _nested_groups(game_string, player, depth=2):
  """The number of next-root groups with a root below another root of the same
  group, over the traces of the whole game and `depth` - 1 levels of subgames."""
  tree = compiled_tree.cached_tree(pyspiel.load_game(game_string))
  keys = subgame_trace.StateKeys.build(tree)
  found = 0
  level = [np.zeros(1, dtype=np.int64)]
  for _ in range(depth):
    below = []
    for roots in level:
      trace = subgame_trace.trace_subgames(tree, keys, player, roots)
      for group in np.unique(trace.group):
        nodes = trace.next_roots[trace.group == group]
        members = set(nodes.tolist())
        for node in nodes.tolist():
          parent = int(tree.node_parent[node])
          while parent >= 0 and parent not in members:
            parent = int(tree.node_parent[parent])
          found += parent >= 0
        below.append(nodes)
    level = below
  return found


def _copies_of_next_roots(view):
  """How many copies of each of the view's next roots it holds (one per active
  root at or above it)."""
  tree = view.whole
  roots = set(view.root_nodes[view.active_roots].tolist())
  counts = []
  for node in view.trace().next_roots.tolist():
    count = 0
    while node >= 0:
      count += node in roots
      node = int(tree.node_parent[node])
    counts.append(count)
  return np.array(counts)


@pytest.mark.parametrize("game_string", [
    "kuhn_poker", "python_leduc(max_raises=1,cards_per_suit=3)",
    "python_ii_goofspiel(num_cards=4)", "python_princess_monster(max_turns=4)"])
def test_the_package_games_have_no_nested_groups(game_string):
  """A next root r' has the next turn s' as its pair only if the path from r' to s'
  crosses no other root; a next root s below r' is a root on the way to the player
  (its parent the opponent's). For both to be in one group the player must not tell
  s from s' (or the opponent's keys must join them): in these games the player sees
  every opponent move (poker, princess-monster's turns) or there is no chance node
  after the opponent's move (goofspiel), so s and s' never share a group."""
  assert _nested_groups(game_string, 0) == _nested_groups(game_string, 1) == 0


def test_the_test_game_has_nested_groups():
  assert _nested_groups(NESTED, 0) > 0


@pytest.mark.parametrize("solver", ["vr_mccfr", "mc_cfr"])
@pytest.mark.parametrize("variant", gadget_game.VARIANTS)
def test_nested_next_roots_are_sampled_as_the_live_solver(variant, solver):
  """Player 0's subgame with nested roots, copied, sampled with the live solver's
  seed: the same tables, and the same inputs of the next subgames, whose roots t
  lie below both nested roots (two copies each, both collected) to 1e-9."""
  config = settings.ResolverConfig(solver=solver, variant=variant)
  game, live, ours = _both(NESTED, 0, config)
  live.solver.iterate(300)
  ours.iterate(300)
  _assert_same_tables(live, ours.view)
  compared = 0
  for own_key in live.trace.subgame_map.own_keys():
    live_inputs = _inputs(live, own_key, variant)
    our_inputs = _inputs(ours, own_key, variant)
    _assert_inputs_equal(our_inputs, live_inputs)
    view = our_inputs[2]
    copies = _copies_of_next_roots(view.view)
    if not (copies > 1).any():
      continue
    deeper = live_resolver.Resolver(live_problem.Problem(game, 0, live_inputs[2]), config, seed=11)
    deeper.solver.iterate(300)
    view.iterate(300)
    _assert_same_tables(deeper, view.view)
    compared += _compare_next_inputs(deeper, view, deeper.trace.subgame_map.own_keys())
  assert compared > 0
