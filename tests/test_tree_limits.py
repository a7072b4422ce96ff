"""The compiled-tree limit set by memory and the refusals before allocation (issue 44,
items 1-2): tree_limits, the extractions' capped counts, compile_game, available_tree,
game_size and the examples' one-line error."""

import subprocess
import sys

import numpy as np
import pyspiel
import pytest

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import game_size
from ggp_cr.algorithms.tree import native_driver
from ggp_cr.algorithms.tree import native_ii_goofspiel
from ggp_cr.algorithms.tree import native_latent_ttt
from ggp_cr.algorithms.tree import native_princess_monster
from ggp_cr.algorithms.tree import parallel_extraction
from ggp_cr.algorithms.tree import tree_limits

IIGS5 = "python_ii_goofspiel(num_cards=5)"  # 55,731 histories
IIGS13 = "python_ii_goofspiel(num_cards=13)"  # about 1.5e20 histories


def test_limit_is_share_of_memory_over_bytes_per_history(monkeypatch):
  monkeypatch.delenv(tree_limits.MEMORY_SHARE_VARIABLE, raising=False)
  memory = 8_000_000
  assert tree_limits.nodes_limit(True, 0.5, memory) == (
      memory // 2 // tree_limits.NATIVE_BYTES_PER_HISTORY)
  assert tree_limits.nodes_limit(False, 0.25, memory) == (
      memory // 4 // tree_limits.GENERIC_BYTES_PER_HISTORY)
  assert tree_limits.nodes_limit(True, memory=memory) == (
      memory * tree_limits.MEMORY_SHARE // tree_limits.NATIVE_BYTES_PER_HISTORY)
  monkeypatch.setenv(tree_limits.MEMORY_SHARE_VARIABLE, "0.1")
  assert tree_limits.memory_share() == 0.1
  tree_limits.set_memory_share(0.3)
  try:
    assert tree_limits.memory_share() == 0.3
  finally:
    tree_limits.set_memory_share(None)
  assert tree_limits.available_memory() > 0
  for bad in (0, 1.5, "half", True):
    with pytest.raises(ValueError, match=r"in \(0, 1\]"):
      tree_limits.nodes_limit(True, bad, memory)
  monkeypatch.setenv(tree_limits.MEMORY_SHARE_VARIABLE, "lots")
  with pytest.raises(ValueError, match="memory share must be a number"):
    tree_limits.memory_share()


def test_extraction_limit_by_route():
  memory = 80_000_000  # 500,000 native histories at share 0.5
  native = tree_limits.nodes_limit(True, 0.5, memory)
  assert compiled_tree.extraction_limit(pyspiel.load_game(IIGS5), None, 0.5,
                                        memory) == native
  assert compiled_tree.extraction_limit(pyspiel.load_game(IIGS5), 1000, 0.5,
                                        memory) == 1000
  huge = 10**12
  assert compiled_tree.extraction_limit(pyspiel.load_game("kuhn_poker"), None, 0.5,
                                        huge) == compiled_tree.GENERIC_WALK_LIMIT
  with pytest.raises(ValueError, match="None .set by memory. or a non-negative"):
    compiled_tree.extraction_limit(pyspiel.load_game("kuhn_poker"), -1)


def test_native_counts_stop_just_past_their_cap():
  game = pyspiel.load_game(IIGS13)
  params, root_state, root_player = native_ii_goofspiel._setup(game)  # pylint: disable=protected-access
  counted = native_driver.count(native_driver.II_GOOFSPIEL, root_state, root_player,
                                params, 13, 40, 1000)
  assert 1000 < counted <= 1000 + 13  # stopped at the cap: no 1.5e20-history walk
  params, root_state, root_player = native_ii_goofspiel._setup(  # pylint: disable=protected-access
      pyspiel.load_game(IIGS5))
  assert native_driver.count(native_driver.II_GOOFSPIEL, root_state, root_player, params,
                             5, 16, 10**9) == 55731
  monster = pyspiel.load_game("python_princess_monster(max_turns=30,rows=4,cols=4)")
  params, root_state, _, _ = native_princess_monster.driver_setup(monster)
  assert 500 < native_princess_monster._count(params, root_state, 500) <= 501  # pylint: disable=protected-access
  params, root_state, root_player, cells = native_latent_ttt.driver_setup(None)
  assert 300 < native_driver.count(native_driver.LATENT_TTT, root_state, root_player,
                                   params, cells, 10, 300) <= 301


def _no_fill(monkeypatch):
  def fail(*args):
    raise AssertionError("the tree was allocated")
  monkeypatch.setattr(native_driver, "fill", fail)


def test_native_extraction_refused_by_count_before_allocation(monkeypatch):
  _no_fill(monkeypatch)
  with pytest.raises(tree_limits.TreeTooLarge, match="more than 1,000 histories; the "
                     "compiled-tree limit is 1,000"):
    compiled_tree.compile_game(IIGS5, max_nodes=1000)


def test_far_larger_tree_refused_by_estimate_after_a_short_count(monkeypatch):
  _no_fill(monkeypatch)
  monkeypatch.setattr(tree_limits, "CHECK_AFTER", 100)
  caps = []
  original = native_driver.count
  monkeypatch.setattr(native_driver, "count",
                      lambda *args: caps.append(args[-1]) or original(*args))
  with pytest.raises(tree_limits.TreeTooLarge, match=r"about 55,731 histories \("
                     r"estimated from random paths\); the compiled-tree limit is 500"):
    compiled_tree.compile_game(IIGS5, max_nodes=500)
  assert caps == [100]  # counted to CHECK_AFTER only, then refused by the estimate


def test_hopeless_tree_refused_at_sight_without_a_count(monkeypatch):
  _no_fill(monkeypatch)
  monkeypatch.setattr(native_driver, "count", None)
  with pytest.raises(tree_limits.TreeTooLarge, match="about 150,.* histories .estimated"):
    compiled_tree.compile_game(IIGS13, max_nodes=10**9)
  monkeypatch.setattr(tree_limits, "SIGHT_FACTOR", 10**12)  # not hopeless: counted
  with pytest.raises(TypeError, match="'NoneType' object is not callable"):
    compiled_tree.compile_game(IIGS13, max_nodes=10**9)


def test_default_limit_is_set_by_memory(monkeypatch):
  _no_fill(monkeypatch)
  monkeypatch.setattr(tree_limits, "available_memory", lambda: 1_000_000)
  with pytest.raises(tree_limits.TreeTooLarge,
                     match="limit is 5,000 histories. .the limit is 0.4 of available"):
    compiled_tree.compile_game(IIGS5)


def test_near_limit_tree_counted_exactly_then_extracted(monkeypatch):
  monkeypatch.setattr(tree_limits, "CHECK_AFTER", 1000)
  tree = compiled_tree.compile_game(IIGS5, max_nodes=55731)
  assert tree.num_nodes == 55731
  with pytest.raises(tree_limits.TreeTooLarge, match="more than 55,730 histories"):
    compiled_tree.compile_game(IIGS5, max_nodes=55730)


def test_generic_walk_refuses_during_the_walk(monkeypatch):
  with pytest.raises(tree_limits.TreeTooLarge, match="more than 20 histories"):
    compiled_tree.compile_game("kuhn_poker", max_nodes=20)
  monkeypatch.setattr(tree_limits, "CHECK_AFTER", 100)
  walked = []
  original = tree_limits.refuse_if_far_larger
  monkeypatch.setattr(tree_limits, "refuse_if_far_larger",
                      lambda game, limit: walked.append(limit) or original(game, limit))
  with pytest.raises(tree_limits.TreeTooLarge, match="about 55,731 histories"):
    compiled_tree.compile_game(IIGS5, route="generic", max_nodes=1000)
  assert walked == [1000]  # estimated at the 100th history, refused there


def test_parallel_extraction_refused_before_its_workers_start():
  with pytest.raises(tree_limits.TreeTooLarge, match="about 55,731 histories"):
    parallel_extraction.extract_parallel(pyspiel.load_game(IIGS5), 2, max_nodes=500)
  assert not parallel_extraction._pools  # pylint: disable=protected-access


def test_estimate_exact_on_uniform_tree_and_unbiased():
  assert tree_limits.estimated_histories(pyspiel.load_game(IIGS5)) == 55731
  leduc = compiled_tree.compile_game("python_leduc")
  estimate = tree_limits.estimated_histories(pyspiel.load_game("python_leduc"), seed=3)
  assert 0.5 < estimate / leduc.num_nodes < 2


def test_checked_count_without_limit():
  assert tree_limits.checked_count(None, lambda cap: cap, None) == np.iinfo(np.int64).max


def test_available_tree_refuses_and_names_size_and_limit(monkeypatch):
  _no_fill(monkeypatch)
  tree, reason = compiled_tree.available_tree(pyspiel.load_game(IIGS13), memory=10**8)
  assert tree is None
  limit = tree_limits.nodes_limit(True, memory=10**8)
  assert f"(estimated from random paths); the compiled-tree limit is {limit:,}" in reason
  tree, reason5 = compiled_tree.available_tree(pyspiel.load_game(IIGS5), 1000)
  assert tree is None and "more than 1,000" in reason5
  monkeypatch.setattr(native_driver, "count", None)  # a refusal is not counted again
  assert compiled_tree.available_tree(pyspiel.load_game(IIGS13), memory=10**8) == (
      None, reason)


def test_game_size_refuses_past_its_limit(monkeypatch):
  with pytest.raises(tree_limits.TreeTooLarge, match="more than 30 histories"):
    game_size.game_size(pyspiel.load_game("kuhn_poker"), max_histories=30)
  with pytest.raises(tree_limits.TreeTooLarge, match="estimated"):
    game_size.game_size(pyspiel.load_game(IIGS13), max_histories=10**6)
  monkeypatch.setattr(tree_limits, "CHECK_AFTER", 100)
  with pytest.raises(tree_limits.TreeTooLarge, match="about 55,731 histories"):
    game_size.game_size(pyspiel.load_game(IIGS5), max_histories=1000)
  assert game_size.game_size(pyspiel.load_game("kuhn_poker"),
                             max_histories=58).histories == 58


def test_examples_refuse_in_one_line(tmp_path):
  result = subprocess.run(
      [sys.executable, "-m", "ggp_cr.examples.solve", f"--game={IIGS13}",
       "--iterations=1", "--tree_memory_share=0.01", f"--output_dir={tmp_path}"],
      capture_output=True, text=True, timeout=120, check=False)
  assert result.returncode == 1
  lines = result.stderr.strip().splitlines()
  assert len(lines) == 1 and lines[0].startswith("error: ") and "estimated" in lines[0]
  assert "the limit is 0.01 of available memory" in lines[0]


def test_examples_refuse_a_bad_memory_share_in_one_line():
  result = subprocess.run(
      [sys.executable, "-m", "ggp_cr.examples.game_info", "--tree_memory_share=2"],
      capture_output=True, text=True, timeout=120, check=False)
  assert result.returncode == 1
  assert result.stderr.strip() == ("error: --tree_memory_share: the tree memory share "
                                   "must be a number in (0, 1]; got 2.0.")
