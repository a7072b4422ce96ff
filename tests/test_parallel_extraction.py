"""Tests of the parallel extraction: the serial tree bit for bit (issue 13, item 1)."""

import array

import pyspiel
import pytest

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import parallel_extraction

GAMES = ["kuhn_poker", "leduc_poker", "python_ii_goofspiel(num_cards=4)",
         "python_leduc(cards_per_suit=3)", "python_princess_monster(max_turns=4)",
         "python_rps"]


@pytest.fixture(scope="module", autouse=True)
def _stop_pools():
  yield
  parallel_extraction.shutdown_pools()


@pytest.mark.parametrize("game_string", GAMES)
@pytest.mark.parametrize("workers", [2, 3])
def test_parallel_equals_serial(game_string, workers):
  """Cut depths from the first level down to a frontier of thousands of histories."""
  game = pyspiel.load_game(game_string)
  serial = compiled_tree.compile_game(game, route="generic")
  depths = set()
  for frontier_size in (2, 7, 40, 1000):
    depth = parallel_extraction._cut_depth(game, frontier_size)  # pylint: disable=protected-access
    if depth is None or depth in depths:
      continue
    depths.add(depth)
    tree = parallel_extraction.extract_parallel(
        game, workers, frontier_size=frontier_size, keep_workers=True)
    assert compiled_tree.tree_differences(serial, tree) == [], frontier_size
  assert depths


def test_compile_game_workers_and_progress(capsys):
  serial = compiled_tree.compile_game("leduc_poker")
  tree = parallel_extraction.extract_parallel(pyspiel.load_game("leduc_poker"), 2,
                                              progress=True)
  assert compiled_tree.tree_differences(serial, tree) == []
  out = capsys.readouterr().out
  assert "subtrees at depth" in out and "16 runs" in out
  # compile_game walks a tree this small serially whatever the workers (issue 43).
  tree = compiled_tree.compile_game("leduc_poker", workers=16, progress=True)
  assert compiled_tree.tree_differences(serial, tree) == []
  out = capsys.readouterr().out
  assert "walked serially, not by 16 workers" in out and "runs" not in out
  # A tree without a level as wide as the frontier is extracted serially.
  tree = parallel_extraction.extract_parallel(pyspiel.load_game("kuhn_poker"), 2,
                                              frontier_size=10**6)
  assert compiled_tree.tree_differences(compiled_tree.compile_game("kuhn_poker"),
                                        tree) == []


@pytest.mark.parametrize("workers", [0, -2, 1.5, True, "2", None])
def test_workers_is_validated(workers):
  with pytest.raises(ValueError, match="workers must be a positive int"):
    compiled_tree.compile_game("kuhn_poker", workers=workers)


def test_game_whose_string_does_not_reload(monkeypatch):
  game = pyspiel.load_game("leduc_poker")
  monkeypatch.setattr(parallel_extraction.pyspiel, "load_game",
                      lambda _: pyspiel.load_game_as_turn_based("kuhn_poker"))
  with pytest.raises(ValueError, match="reloads the game from its string"):
    parallel_extraction.extract_parallel(game, 2)


def _part(parent_slot, key):
  """A walked part of one decision node of player 0 with two actions."""
  return (array.array("i", [-1]), array.array("h", [0]), array.array("b", [0]),
          array.array("i", [0]), array.array("h", [2]), array.array("d", [1.0]),
          array.array("d", [0.0]), array.array("h", [1]), [key], [0], [0],
          [parent_slot], [(0, 1)])


def test_imperfect_recall_across_parts_is_refused():
  """Two runs disagree on the previous decision before a shared information state."""
  merger = parallel_extraction._Merger("test_game")  # pylint: disable=protected-access
  merger.add(_part(-1, "first"))
  merger.add(_part(-2 - 0, "second"), [0])
  merger.add(_part(-2 - 0, "second"), [0])
  assert len(merger.keys) == 2 and merger.num_nodes == 3
  with pytest.raises(ValueError, match="does not have perfect recall.*'second'"):
    merger.add(_part(-2 - 1, "second"), [0])
