"""Native extraction equals the generic extraction array for array (native_extraction.py)."""

import numpy as np
import pyspiel
import pytest

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import native_driver
from ggp_cr.algorithms.tree import native_extraction
from ggp_cr.algorithms.tree import native_princess_monster

def _assert_same_tree(game_string):
  game = pyspiel.load_game(game_string)
  native = compiled_tree.compile_game(game, route="native")
  generic = compiled_tree.compile_game(game, route="generic")
  assert compiled_tree.tree_differences(native, generic) == []


@pytest.mark.parametrize("game_string", [
    "python_rps", "python_rps(n=1)", "python_rps(n=5)", "python_rps(n=9)",
    "python_princess_monster(max_turns=1)", "python_princess_monster(max_turns=2)",
    "python_princess_monster(max_turns=3)", "python_princess_monster(max_turns=5)",
    "python_princess_monster(max_turns=3,rows=1,cols=2)",
    "python_princess_monster(max_turns=3,rows=2,cols=3)",
    "python_princess_monster(max_turns=4,rows=2,cols=3)",
    "python_princess_monster(max_turns=4,rows=1,cols=5)",
    "python_princess_monster(max_turns=2,rows=4,cols=4)",
    "python_princess_monster(max_turns=2,rows=11,cols=12)",
    "python_ii_goofspiel(num_cards=1)", "python_ii_goofspiel(num_cards=2)",
    "python_ii_goofspiel(num_cards=3)", "python_ii_goofspiel(num_cards=4)",
    "python_ii_goofspiel(num_cards=3,points_order=random)",
    "python_ii_goofspiel(num_cards=3,points_order=random,returns_type=point_difference)",
    "python_ii_goofspiel(num_cards=3,points_order=descending)",
    "python_ii_goofspiel(num_cards=4,points_order=descending,"
    "returns_type=point_difference)",
    "python_ii_goofspiel(num_cards=4,points_order=random)",
    "python_ii_goofspiel(num_cards=5,returns_type=point_difference)",
    "python_leduc", "python_leduc(cards_per_suit=2)", "python_leduc(max_raises=0)",
    "python_leduc(max_raises=1,cards_per_suit=2)",
    "python_leduc(max_raises=2,cards_per_suit=2)",
    "python_leduc(max_raises=1,cards_per_suit=3)",
    "python_leduc(stack1=1)", "python_leduc(stack2=2)", "python_leduc(stack2=4)",
    "python_leduc(stack1=5,max_raises=2,cards_per_suit=2)",
    "python_leduc(stack1=3,stack2=7,max_raises=3,cards_per_suit=2)",
    "python_leduc(deal_from_deck=true)",
    "python_leduc(cards_per_suit=2,deal_from_deck=true)",
    "python_leduc(fold_only_facing_bet=true)",
    "python_leduc(fold_only_facing_bet=true,deal_from_deck=true)",
    "python_leduc(max_raises=1,cards_per_suit=2,deal_from_deck=true,stack2=3)",
    "python_leduc(max_raises=1,cards_per_suit=2,fold_only_facing_bet=true,"
    "deal_from_deck=true)",
    "python_leduc(max_raises=1,cards_per_suit=12,deal_from_deck=true)",
    "python_leduc(stack1=100,stack2=100,max_raises=4,cards_per_suit=3)"])
def test_native_equals_generic(game_string):
  _assert_same_tree(game_string)


@pytest.mark.parametrize("game_string", [
    "python_ii_goofspiel(num_cards=4,points_order=random)",
    "python_ii_goofspiel(num_cards=5,returns_type=point_difference)",
    "python_leduc(max_raises=2,cards_per_suit=2)"])
def test_keys_equal_across_chunk_boundaries(game_string, monkeypatch):
  # Keys are written and decoded a chunk of infosets at a time; small chunks put
  # many boundaries (and a last, partial chunk) into trees the default suite can
  # compare with the generic extraction.
  monkeypatch.setattr(native_extraction, "_DECODE_CHUNK", 7)
  _assert_same_tree(game_string)


@pytest.mark.slow
@pytest.mark.parametrize("game_string", [
    "python_princess_monster(max_turns=6)", "python_princess_monster(max_turns=8)",
    "python_ii_goofspiel(num_cards=5,points_order=random)",
    "python_ii_goofspiel(num_cards=6)",
    "python_leduc(stack1=100,stack2=100,max_raises=1,cards_per_suit=7)",
    "python_leduc(stack1=100,stack2=100,max_raises=3,cards_per_suit=30)"])
def test_native_equals_generic_thesis_sizes(game_string):
  _assert_same_tree(game_string)


@pytest.mark.slow
def test_latent_ttt_full_tree():
  _assert_same_tree("python_latent_ttt")


def test_route_auto_picks_native_and_native_refuses_other_games():
  game = pyspiel.load_game("python_latent_ttt")
  assert native_extraction.has_native(game)
  assert not native_extraction.has_native(pyspiel.load_game("kuhn_poker"))
  # Beyond what a native extractor covers, "auto" falls back to the generic walk.
  assert not native_extraction.has_native(
      pyspiel.load_game("python_ii_goofspiel(num_cards=16)"))
  with pytest.raises(ValueError, match="no native extractor"):
    compiled_tree.compile_game("python_ii_goofspiel(num_cards=16)", route="native")
  with pytest.raises(ValueError, match="no native extractor"):
    compiled_tree.compile_game("kuhn_poker", route="native")
  with pytest.raises(ValueError, match="route must be"):
    compiled_tree.compile_game("kuhn_poker", route="fast")


@pytest.mark.parametrize("game_string", [
    "python_rps", "python_princess_monster(max_turns=3)",
    "python_ii_goofspiel(num_cards=3,points_order=random)",
    "python_leduc(max_raises=1,cards_per_suit=2)"])
def test_cache_files_are_identical_by_either_route(tmp_path, game_string):
  game = pyspiel.load_game(game_string)
  contents = []
  for route in ("native", "generic"):
    directory = tmp_path / route
    compiled_tree.compile_game(game, cache_dir=str(directory), route=route)
    path, = directory.iterdir()
    contents.append(path.read_bytes())
  assert contents[0] == contents[1]


@pytest.mark.parametrize("game_string", [
    "python_princess_monster(max_turns=3)",
    "python_princess_monster(max_turns=3,rows=1,cols=2)",
    "python_princess_monster(max_turns=4,rows=2,cols=3)",
    "python_princess_monster(max_turns=2,rows=4,cols=4)"])
def test_driver_rules_of_princess_monster_build_its_native_tree(game_string):
  """python_princess_monster's rules as native_driver walks them (native_next_decisions)
  and its constant `seen` give its native extraction's arrays (utilities included)."""
  game = pyspiel.load_game(game_string)
  tree = compiled_tree.compile_game(game, route="native")
  params, root_state, root_player, max_children = (
      native_princess_monster.driver_setup(game))
  number = native_driver.PRINCESS_MONSTER
  num_nodes = native_driver.count(number, root_state, root_player, params, max_children,
                                  2 * game.max_turns + 1, 1 << 40)
  assert num_nodes == len(tree.node_player)
  arrays, _, _ = native_driver.fill(number, num_nodes, root_state, root_player, params,
                                    max_children, False)
  names = ["node_player", "node_infoset", "node_parent", "node_first_child",
           "node_num_children", "node_action_index", "node_utility", "node_depth",
           "infoset_player", "infoset_num_actions", "infoset_action_offset",
           "infoset_actions", "infoset_parent_slot", "infoset_node"]
  for name, array in zip(names, arrays):
    assert np.array_equal(array, getattr(tree, name)), name
