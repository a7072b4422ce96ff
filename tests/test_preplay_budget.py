"""Pre-play pays a tree's extraction only if it fits, and a bot's construction counts
against its timed pre-play (issue 44, items 2 and 4)."""

import time

import pyspiel
import pytest

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.bots import online_solving
from ggp_cr.algorithms.resolving import continual_resolving
from ggp_cr.algorithms.resolving.compiled import compiled_path
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import native_driver
from ggp_cr.algorithms.tree import tree_limits

IIGS5 = "python_ii_goofspiel(num_cards=5)"  # 55,731 histories, native route
LEDUC = "leduc_poker"  # 9,457 histories, generic route


@pytest.fixture(name="fresh")
def _fresh(monkeypatch):
  """No tree known in this process, and no numba warm-up of the bots (timed here)."""
  monkeypatch.setattr(compiled_tree, "PROCESS_TREES", compiled_tree._ProcessTrees())  # pylint: disable=protected-access


def test_extraction_refused_when_its_estimate_does_not_fit(fresh, monkeypatch):
  def fail(*args):
    raise AssertionError("counted")
  monkeypatch.setattr(native_driver, "count", fail)
  tree, reason = compiled_tree.available_tree(pyspiel.load_game(IIGS5), seconds=0.01)
  assert tree is None
  assert "not extracted within the pre-play" in reason
  assert "more than the 0.01 s" in reason
  assert "histories estimated x 0.6 us" in reason


def test_extraction_fits_and_the_count_stops_at_what_the_seconds_pay_for(
    fresh, monkeypatch):
  tree, reason = compiled_tree.available_tree(pyspiel.load_game(IIGS5), seconds=10.0)
  assert tree is not None and tree.num_nodes == 55_731, reason
  # An estimate far too low: the count stops at the histories 0.01 s pay for.
  monkeypatch.setattr(compiled_tree, "PROCESS_TREES", compiled_tree._ProcessTrees())  # pylint: disable=protected-access
  monkeypatch.setattr(tree_limits, "estimated_histories", lambda *a, **k: 10.0)
  tree, reason = compiled_tree.available_tree(pyspiel.load_game(IIGS5), seconds=0.01)
  affordable = int(0.01 / tree_limits.NATIVE_SECONDS_PER_HISTORY)
  assert tree is None
  assert "the histories 0.01 s of pre-play pay for" in reason
  assert f"more than {affordable:,} histories" in reason


def test_generic_route_costs_more_a_history(fresh):
  # leduc_poker's 9,457 histories (a C++ game): 0.06 s walked (6 us each), not 0.02 s.
  tree, reason = compiled_tree.available_tree(pyspiel.load_game(LEDUC), seconds=0.02)
  assert tree is None and "x 6 us" in reason
  # cr's state keys by the walk: 6 us more a history.
  tree, reason = compiled_tree.available_tree(
      pyspiel.load_game(LEDUC), seconds=0.08,
      extra_per_history=compiled_path.keys_seconds_per_history(
          pyspiel.load_game(LEDUC)))
  assert tree is None and "x 12 us" in reason
  tree, _ = compiled_tree.available_tree(pyspiel.load_game(LEDUC), seconds=1.0)
  assert tree.num_nodes == 9457


def test_bots_take_the_live_path_when_the_preplay_cannot_pay(fresh):
  game = pyspiel.load_game(IIGS5)
  bot = continual_resolving.ContinualResolvingBot(game, 0, preplay="0.02s",
                                                  move="10it")
  assert bot.path == "live" and "pre-play" in bot.path_reason
  # cr pays the state keys too: 55,731 x (0.6 + 0.7) us = 0.072 s > half of 0.1 s
  bot = continual_resolving.ContinualResolvingBot(game, 0, preplay="0.1s",
                                                  move="10it")
  assert bot.path == "live", bot.path_reason
  assert compiled_path.NATIVE_KEYS_SECONDS_PER_HISTORY > 0
  oos = online_solving.OOSBot(game, 0, preplay="0.1s", move="10it")
  assert oos.path == "compiled", oos.path_reason  # 0.033 s < 0.05 s
  # Without a timed pre-play the bot takes the time it needs.
  bot = continual_resolving.ContinualResolvingBot(game, 0, preplay="10it",
                                                  move="10it")
  assert bot.path == "compiled"


def _slow(monkeypatch, module, name, seconds):
  """Makes module.name take `seconds` longer."""
  original = getattr(module, name)

  def slow(*args, **kwargs):
    time.sleep(seconds)
    return original(*args, **kwargs)
  monkeypatch.setattr(module, name, slow)


@pytest.mark.parametrize("make", [
    lambda game: continual_resolving.ContinualResolvingBot(
        game, 0, preplay="0.5s", move="0.1s", path="live"),
    lambda game: online_solving.OOSBot(game, 0, preplay="0.5s", move="0.1s",
                                       compiled="false"),
])
def test_construction_counts_against_the_preplay(monkeypatch, make):
  # A construction of 0.6 s spends the whole 0.5 s pre-play and 0.1 s of the first
  # move: the first decision is short (it took 0.6 s or more before the fix).
  game = pyspiel.load_game("kuhn_poker")
  make(game)  # warm
  _slow(monkeypatch, online_solving, "choose_tree", 0.6)
  _slow(monkeypatch, compiled_path, "choose_path", 0.6)
  bot = make(game)
  state = game.new_initial_state()
  state.apply_action(0)
  state.apply_action(1)
  start = time.perf_counter()
  bot.step(state)
  assert time.perf_counter() - start < 0.35
  if isinstance(bot, continual_resolving.ContinualResolvingBot):
    assert bot.decisions[0]["construction_seconds"] >= 0.6
  else:
    assert bot.construction_seconds >= 0.6


def test_the_players_process_warm_up_runs_before_the_clock(monkeypatch):
  from ggp_cr.algorithms.config import limits  # pylint: disable=import-outside-toplevel
  from ggp_cr.algorithms.config import registry  # pylint: disable=import-outside-toplevel
  from ggp_cr.algorithms.evaluation import matches  # pylint: disable=import-outside-toplevel
  warmed = []

  def slow_warm_up(spec):
    warmed.append(str(spec))
    time.sleep(0.5)
  monkeypatch.setattr(registry, "warm_up_player", slow_warm_up)
  game = pyspiel.load_game("kuhn_poker")
  seeds = matches.match_seeds(0, "random", "oos", 0, 0)
  result = matches.run_match(game, ["random", "oos"], seeds,
                             limits.Budget.parse("0", "5it"))
  assert warmed == ["random", "oos"]
  assert max(result.init_seconds) < 0.4  # the 0.5 s warm-ups are not timed
  # The registry's own: cr, oos and online_solving have one, random none.
  monkeypatch.undo()
  assert registry.parse_player("random").player_type.warm_up is None
  for name in ("cr", "oos", "online_solving"):
    assert registry.parse_player(name).player_type.warm_up is not None
