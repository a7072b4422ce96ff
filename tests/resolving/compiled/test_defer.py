"""After a refused subgame the compiled path traces the next turns below it and
resolves the next subgame the bot enters (CompiledResolver.defer; [S] §3.4.1)."""
# pylint: disable=protected-access


import time

import numpy as np
import pytest

import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.resolving import continual_resolving
from ggp_cr.algorithms.resolving import move_budget
from ggp_cr.algorithms.resolving import protocol
from ggp_cr.algorithms.resolving.compiled import compiled_resolver
from ggp_cr.algorithms.resolving.gadget import gadget_game
from ggp_cr.algorithms.tree import compiled_tree
from test_build_ahead import _first_subgame
from test_paths_agree import GAMES
from test_paths_agree import _random_match


def _within(seconds):
  """Setup limits of a move ending `seconds` from now."""
  return move_budget.SetupLimits(deadline=time.perf_counter() + seconds)


def _slow_check(self, stage):
  """SetupClock.check of a setup found running at 3 times its estimate."""
  del stage
  self.pace = 3.0
  raise protocol.CannotResolve("forced")


@pytest.mark.parametrize("player", [0, 1])
def test_after_a_refused_subgame_the_next_one_below_it_is_resolved(player, monkeypatch):
  """defer: the next turns below a refused subgame are traced (the same as the
  refused subgame's own trace would find), located in the current view, and their
  estimates let the bot resolve the next subgame it enters."""
  current = _first_subgame(player)
  refused = int(current.trace.own_infosets[0])
  resolved, _ = current.next_subgame(refused, "resolve")  # what a build would trace
  with pytest.raises(protocol.CannotResolve, match="nodes, more than"):
    current.next_subgame(refused, "resolve", move_budget.SetupLimits(max_nodes=1))
  trace = current.trace
  assert not current.defer(refused, max_roots=0) and current.trace is trace
  # The estimate counts every root, whatever the trace below them finds.
  group = len(trace.group_roots(refused))
  monkeypatch.setattr(move_budget, "TRACE_SECONDS_PER_WALKED", 0.0)
  monkeypatch.setattr(move_budget, "TRACE_SECONDS_PER_FOUND", 0.0)
  monkeypatch.setattr(move_budget, "DEFER_SECONDS_PER_ROOT", 1.0)
  assert not current.defer(refused, max_seconds=group - 0.5) and current.trace is trace
  # ... at the pace of the refused setup, if it was given up running slow.
  monkeypatch.setattr(move_budget.SetupClock, "check", _slow_check)
  with pytest.raises(protocol.CannotResolve, match="forced"):
    current.next_subgame(refused, "resolve", _within(1e6))
  assert not current.defer(refused, max_seconds=2 * group + 0.5)
  assert current.defer(refused, max_seconds=3 * group + 0.5)
  current = _first_subgame(player)
  assert current.defer(refused, max_seconds=group + 0.5)
  current = _first_subgame(player)
  assert current.defer(refused)
  assert refused not in current.trace and current.refused == 1
  assert set(resolved.trace.own_infosets.tolist()) <= set(
      current.trace.own_infosets.tolist())
  assert np.isin(resolved.trace.next_roots, current.trace.next_roots).all()
  local = current.estimates._local  # pylint: disable=protected-access
  np.testing.assert_array_equal(current.view.whole_nodes(local),
                                current.trace.next_roots)
  below = int(current.trace.own_infosets[0])
  with pytest.raises(protocol.CannotResolve, match="would not fit the move"):
    current.next_subgame(below, "resolve", _within(-1.0))
  with pytest.raises(protocol.CannotResolve, match="would not fit the move"):
    # The setup fits, but not with the first iteration's time kept free after it.
    current.next_subgame(below, "resolve", move_budget.SetupLimits(
        deadline=time.perf_counter() + 10.0,
        first_iteration_seconds=lambda nodes, next_roots: 10.0 * nodes))
  # The pass of the average would not fit (its estimate, a second a node).
  monkeypatch.setattr(move_budget, "AVERAGE_PASS_SECONDS_PER_NODE", 1.0)
  with pytest.raises(protocol.CannotResolve, match="no iterations"):
    current.next_subgame(below, "resolve", _within(10.0))
  monkeypatch.undo()
  for infoset in current.trace.own_infosets.tolist():  # one pass of the average
    try:
      _, info = current.next_subgame(infoset, "resolve")
    except protocol.CannotResolve as error:
      assert "zero" in str(error)
      continue
    assert "average strategy" in info["after_refused"]
    break
  else:
    assert False, "no subgame below the refused one was resolved"
  current.iterate(5)
  entered = 0
  for infoset in current.trace.own_infosets.tolist():
    try:
      nxt, info = current.next_subgame(infoset, "resolve")
    except protocol.CannotResolve as error:
      assert "zero" in str(error)
      continue
    entered += 1
    assert "refused" in info["after_refused"]
    assert nxt.view.total_reach > 0
  assert entered > 0


@pytest.mark.parametrize("variant", gadget_game.VARIANTS)
@pytest.mark.parametrize("game_string", GAMES[1:])
def test_defer_reuses_the_refused_resolvers_trace(game_string, variant):
  """A subgame built but refused (its first iteration would not fit) is not traced
  again: defer takes its resolver's trace, and the result equals a fresh trace
  (max_margin orders its roots by choice: the indices are mapped back)."""
  game = pyspiel.load_game(game_string)
  tree = compiled_tree.cached_tree(game)
  keys = compiled_resolver.state_keys(tree)
  compared = 0

  def second_subgame(player):
    whole = compiled_resolver.CompiledResolver.whole_game(tree, keys, player)
    whole.iterate(5)
    for infoset in whole.trace.own_infosets.tolist():
      try:
        current, _ = whole.next_subgame(infoset, "resolve")
      except protocol.CannotResolve:
        continue
      if current.trace.num_next_roots:
        current.iterate(5)
        return current
    return None

  for player in (0, 1):
    current = second_subgame(player)
    if current is None:
      continue
    for infoset in current.trace.own_infosets.tolist():
      try:
        built, _ = current.next_subgame(infoset, variant)
      except protocol.CannotResolve:
        continue
      fresh = second_subgame(player)
      assert fresh.defer(infoset)
      complete = len(built.view.active_roots) == len(
          current.trace.group_roots(infoset))
      assert current.defer(infoset, max_roots=0, refused=built) == complete
      if not complete:
        continue
      compared += 1
      for name in ("next_roots", "next_root_of", "next_root_key", "group",
                   "own_infosets"):
        np.testing.assert_array_equal(getattr(current.trace, name),
                                      getattr(fresh.trace, name))
      break
  assert compared


@pytest.mark.parametrize("solver", ["cfr+", "vr_mccfr"])
def test_the_bot_resolves_again_after_a_refused_subgame(monkeypatch, solver,
                                                        subgame_view):
  """In each match the bot's first new subgame is refused; later ones are resolved,
  and the records say which strategy was played."""
  original = compiled_resolver.CompiledResolver.next_subgame
  refused = set()
  bot = None  # The bot's warm-up on Kuhn poker is not refused.

  def refuse_first(self, infoset, *args, **kwargs):
    if bot is not None and bot._matches not in refused:  # pylint: disable=protected-access
      refused.add(bot._matches)  # pylint: disable=protected-access
      raise protocol.CannotResolve("refused by the test")
    return original(self, infoset, *args, **kwargs)

  monkeypatch.setattr(compiled_resolver.CompiledResolver, "next_subgame",
                      refuse_first)
  rng = np.random.default_rng(0)
  later = 0
  for game_string in GAMES[2:]:
    game = pyspiel.load_game(game_string)
    for player in (0, 1):
      bot = None
      bot = continual_resolving.ContinualResolvingBot(
          game, player, preplay="5it", move="5it", solver=solver, seed=0)
      refused.clear()
      for _ in range(3):
        bot.restart()
        for state in _random_match(game, player, rng):
          bot.step(state)
        entered = [r for r in bot.decisions if r.get("enters_new_subgame")]
        assert not entered[0]["new_subgame"]
        assert "refused by the test" in entered[0]["fallback"]
        assert "traced" in entered[0]["fallback"]
        assert entered[0]["strategy"].startswith("the current subgame's solve")
        for record in entered[1:]:
          assert record["new_subgame"] or "zero" in record["fallback"]
        later += sum(r["new_subgame"] for r in entered[1:])
        if len(entered) > 1 and entered[1]["new_subgame"]:
          assert "after_refused" in entered[1]
  assert later > 0
