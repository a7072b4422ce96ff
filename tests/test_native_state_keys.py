"""Native state keys (native_extraction.state_keys) equal the pyspiel walk's
(subgame_trace.StateKeys, route "generic"): keys and extra strings."""
# pylint: disable=protected-access

import numpy as np
import pytest

import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.resolving.exact import trunk_inputs
from ggp_cr.algorithms.resolving.subgames import subgame_trace
from ggp_cr.algorithms.tree import compiled_tree

GAMES = [
    "python_leduc(max_raises=1,cards_per_suit=3)",
    "python_leduc(max_raises=2,cards_per_suit=3,deal_from_deck=True)",
    "python_leduc(max_raises=2,cards_per_suit=2,fold_only_facing_bet=True)",
    "python_leduc(stack1=3,stack2=7,max_raises=3,cards_per_suit=3)",
    "python_leduc(max_raises=0,cards_per_suit=2)",
    "python_ii_goofspiel(num_cards=4)",
    "python_ii_goofspiel(num_cards=3,points_order=random)",
    "python_ii_goofspiel(num_cards=4,points_order=descending,"
    "returns_type=point_difference)",
    "python_ii_goofspiel(num_cards=1)",
    "python_princess_monster(max_turns=4)",
    "python_princess_monster(max_turns=3,rows=2,cols=3)",
    "python_rps",
    "python_rps(n=5)",
]


def _assert_same(tree):
  generic = subgame_trace.StateKeys.build(tree, route="generic")
  native = subgame_trace.StateKeys.build(tree, route="native")
  assert np.array_equal(native.keys, generic.keys)
  assert native.strings == generic.strings
  # The walk finds states the player never acts in (else the test proves little).
  assert generic.strings


@pytest.mark.parametrize("game_string", GAMES)
def test_native_state_keys_equal_the_pyspiel_walk(game_string):
  _assert_same(compiled_tree.cached_tree(pyspiel.load_game(game_string)))


def test_latent_ttt_state_keys_on_sampled_nodes():
  """python_latent_ttt (4.85M histories; the whole walk is the slow test below): at
  sampled decision nodes the non-acting player's key has its string, and no two keys
  of a player share a string (so equal keys iff equal strings)."""
  tree = compiled_tree.cached_tree(pyspiel.load_game("python_latent_ttt"))
  keys = subgame_trace.StateKeys.build(tree, route="native")
  strings = list(tree.infoset_keys) + keys.strings
  players = np.concatenate([tree.infoset_player,
                            np.full(len(keys.strings), -1, np.int8)])
  for p in (0, 1):
    players[keys.keys[p][tree.node_player == 1 - p]] = p
    owned = [strings[k] for k in np.flatnonzero(players == p)]
    assert len(set(owned)) == len(owned)
  assert (players >= 0).all()
  rng = np.random.default_rng(11)
  decisions = np.flatnonzero(tree.node_player >= 0)
  nodes = np.concatenate([rng.choice(decisions, 300, replace=False),
                          decisions[-50:]])  # the deepest, next to terminals
  for node, state in trunk_inputs.node_states(tree, nodes).items():
    other = 1 - int(tree.node_player[node])
    assert keys.key_string(keys.keys[other, node]) == state.information_state_string(
        other)


@pytest.mark.slow
def test_latent_ttt_state_keys_equal_the_pyspiel_walk():
  _assert_same(compiled_tree.cached_tree(pyspiel.load_game("python_latent_ttt")))


def test_native_state_keys_of_a_generically_extracted_tree():
  game = pyspiel.load_game(GAMES[1])
  _assert_same(compiled_tree.compile_game(game, route="generic"))


def test_auto_route_skips_the_pyspiel_walk_where_native(monkeypatch, tmp_path):
  tree = compiled_tree.cached_tree(pyspiel.load_game(GAMES[0]))
  expected = subgame_trace.StateKeys.build(tree, route="generic")

  def refuse(*_):
    raise AssertionError("the pyspiel walk ran")
  monkeypatch.setattr(subgame_trace, "_walk_strings", refuse)
  for _ in range(2):  # built, then read from the cache
    keys = subgame_trace.StateKeys.build(tree, cache_dir=str(tmp_path))
    assert np.array_equal(keys.keys, expected.keys)
    assert keys.strings == expected.strings


def test_state_keys_routes_are_checked():
  kuhn = compiled_tree.cached_tree(pyspiel.load_game("kuhn_poker"))
  with pytest.raises(ValueError, match="no native state keys; games with them: "
                     "python_ii_goofspiel, python_latent_ttt, python_leduc, "
                     "python_princess_monster, python_rps"):
    subgame_trace.StateKeys.build(kuhn, route="native")
  with pytest.raises(ValueError, match="route must be auto, generic or native"):
    subgame_trace.StateKeys.build(kuhn, route="fast")
  assert subgame_trace.StateKeys.build(kuhn).strings  # auto: the walk
