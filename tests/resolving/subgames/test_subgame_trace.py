"""The compiled subgame trace equals continual resolving's live trace ([S] ch. 2)."""
# pylint: disable=protected-access

import numpy as np
import pytest

import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.resolving.exact import trunk_inputs
from ggp_cr.algorithms.resolving.gadget import gadget_game
from ggp_cr.algorithms.resolving.live import live_problem
from ggp_cr.algorithms.resolving.live import live_trace
from ggp_cr.algorithms.resolving.subgames import subgame_trace
from ggp_cr.algorithms.tree import compiled_tree

GAMES = ["kuhn_poker", "python_leduc(max_raises=1,cards_per_suit=3)",
         "python_ii_goofspiel(num_cards=4)", "python_princess_monster(max_turns=4)"]


def _live_view(live, tree):
  """{own key: sorted next-root nodes of its group}, {root node: opponent key}."""
  nodes = []
  for root_id in range(live.num_roots):
    history = (tuple(live.problem.root_histories[live.root_of[root_id]]) +
               tuple(live.actions[root_id]))
    nodes.append(trunk_inputs.history_node(tree, history))
  groups = {key: sorted(nodes[r] for r in live.subgame_map.roots(key))
            for key in live.subgame_map.own_keys()}
  own = {key: sorted(nodes[r] for r in live.subgame_map.own_roots(key))
         for key in live.subgame_map.own_keys()}
  return groups, own, dict(zip(nodes, live.opponent_keys))


def _compiled_view(trace, keys, tree):
  groups, own = {}, {}
  for infoset in trace.own_infosets.tolist():
    key = tree.infoset_keys[infoset]
    groups[key] = sorted(trace.next_roots[trace.group_roots(infoset)].tolist())
    own[key] = sorted(trace.next_roots[trace.own_roots(infoset)].tolist())
  opponent = {int(n): keys.key_string(k)
              for n, k in zip(trace.next_roots, trace.next_root_key)}
  return groups, own, opponent


def _assert_equal_traces(live, trace, keys, tree):
  assert trace.num_next_roots == live.num_roots
  assert _compiled_view(trace, keys, tree) == _live_view(live, tree)


@pytest.mark.parametrize("game_string", GAMES)
def test_whole_game_and_next_subgame_traces_equal_the_live_ones(game_string):
  game = pyspiel.load_game(game_string)
  tree = compiled_tree.cached_tree(game)
  keys = subgame_trace.StateKeys.build(tree)
  checked = 0
  for player in (0, 1):
    live = live_trace.Trace(live_problem.Problem(game, player))
    trace = subgame_trace.trace_subgames(tree, keys, player, [0])
    _assert_equal_traces(live, trace, keys, tree)
    # One level down: the live trace of a resolve gadget over a group's roots.
    for own_key in live.subgame_map.own_keys()[:3]:
      group = live.subgame_map.roots(own_key)
      states = [live.root_state(r) for r in group]
      values = {s.information_state_string(1 - player): 0.0 for s in states}
      subgame = gadget_game.Subgame(game, player, states, np.ones(len(states)), values)
      gadget = gadget_game.make_gadget(subgame, "resolve")
      deeper = live_trace.Trace(live_problem.Problem(game, player, gadget))
      roots = [trunk_inputs.history_node(tree, s.history()) for s in states]
      _assert_equal_traces(deeper, subgame_trace.trace_subgames(
          tree, keys, player, roots), keys, tree)
      checked += 1
  assert checked > 0


def test_state_keys_are_cached_and_a_foreign_cache_is_refused(tmp_path):
  kuhn = compiled_tree.cached_tree(pyspiel.load_game("kuhn_poker"))
  built = subgame_trace.StateKeys.build(kuhn, cache_dir=str(tmp_path))
  loaded = subgame_trace.StateKeys.build(kuhn, cache_dir=str(tmp_path))
  assert np.array_equal(built.keys, loaded.keys) and built.strings == loaded.strings
  path, = tmp_path.iterdir()
  leduc = compiled_tree.cached_tree(pyspiel.load_game(GAMES[1]))
  foreign = compiled_tree._cache_path(str(tmp_path), leduc.game)[:-4] + \
      "-state-keys.npz"
  path.rename(foreign)
  with pytest.warns(UserWarning, match="another game"):
    rebuilt = subgame_trace.StateKeys.build(leduc, cache_dir=str(tmp_path))
  assert rebuilt.keys.shape == (2, leduc.num_nodes)


def test_subtree_nodes_count_every_node_below():
  tree = compiled_tree.cached_tree(pyspiel.load_game(GAMES[1]))
  sizes = subgame_trace.StateKeys.build(tree).subtree_nodes
  assert sizes[0] == tree.num_nodes
  for node in (1, 5, 40, tree.num_nodes - 1):
    below, frontier = 0, [node]
    while frontier:
      n = frontier.pop()
      below += 1
      first = int(tree.node_first_child[n])
      frontier += range(first, first + int(tree.node_num_children[n]))
    assert sizes[node] == below


@pytest.mark.parametrize("game_string", GAMES)
def test_trace_steps_count_what_a_trace_walks(game_string):
  """trace_steps (the setup budget's counts) are, summed over any root set, the nodes
  a trace below them walks and the next turns it finds."""
  tree = compiled_tree.cached_tree(pyspiel.load_game(game_string))
  keys = subgame_trace.StateKeys.build(tree)
  rng = np.random.default_rng(0)
  decisions = np.flatnonzero(tree.node_player >= 0)
  for player in (0, 1):
    steps = subgame_trace.trace_steps(tree, player)
    assert steps is subgame_trace.trace_steps(tree, player)  # once per tree
    whole = subgame_trace.SubgameTrace(tree, keys, player, [0])
    assert (steps[0, 0], steps[1, 0]) == (whole.histories_walked, whole.found)
    for size in (1, 7, 40):
      roots = np.sort(rng.choice(decisions, size=min(size, len(decisions)),
                                 replace=False))
      trace = subgame_trace.SubgameTrace(tree, keys, player, roots)
      assert steps[0, roots].sum() == trace.histories_walked
      assert steps[1, roots].sum() == trace.found
      assert subgame_trace.trace_step_sums(tree, player, roots) == (
          trace.histories_walked, trace.found)


@pytest.mark.parametrize("game_string", GAMES)
def test_a_trace_below_last_turns_walks_nothing(game_string):
  """Once trace_steps is computed, trace_subgames walks nothing below roots with no
  next turn below them (and walks below any others); its trace is the walking one."""
  tree = compiled_tree.cached_tree(pyspiel.load_game(game_string))
  keys = subgame_trace.StateKeys.build(tree)
  for player in (0, 1):
    steps = subgame_trace.trace_steps(tree, player)
    own = np.flatnonzero(tree.node_player == player)
    last = own[steps[1, own] == 0]
    assert len(last)  # every finite game has last turns
    for roots in (last, own[:5]):
      walking = subgame_trace.SubgameTrace(tree, keys, player, roots)
      trace = subgame_trace.trace_subgames(tree, keys, player, roots)
      skipped = walking.found == 0
      assert trace.histories_walked == (0 if skipped else walking.histories_walked)
      for name in ("next_roots", "next_root_of", "next_root_key", "group",
                   "own_infosets"):
        np.testing.assert_array_equal(getattr(trace, name), getattr(walking, name))
