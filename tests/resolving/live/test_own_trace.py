"""A subgame whose next turns were not traced in time: own_trace.OwnTrace finds the
roots of the bot's new information set below its own decisions, the sampling solver's
estimates collected by history give them the inputs the full trace would, and the bot
resolves every new subgame instead of staying in the old one (issue 44)."""

import time

import numpy as np
import pyspiel
import pytest

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.resolving import continual_resolving
from ggp_cr.algorithms.resolving import recall
from ggp_cr.algorithms.resolving import settings
from ggp_cr.algorithms.resolving.live import live_resolver
from ggp_cr.algorithms.resolving.live import live_problem
from ggp_cr.algorithms.resolving.live import live_trace
from ggp_cr.algorithms.resolving.live import own_trace

GAME = "python_ii_goofspiel(num_cards=4)"


def _histories(trace, root_ids):
  problem = trace.problem
  return {tuple(problem.root_histories[trace.root_of[r]]) + trace.actions[r]
          for r in root_ids}


def _own_states(game, player):
  """The bot's information states at its first turn and, per state, its keys at the
  next turn in another subgame (the tracked histories of the whole game)."""
  paths = {}

  def walk(state, track, first_key):
    if state.is_terminal():
      return
    acting = state.current_player()
    if acting == player and track == recall.END:
      paths.setdefault(first_key, set()).add(state.information_state_string(player))
      return
    if acting == player and first_key is None:
      first_key = state.information_state_string(player)
    actions = ([a for a, _ in state.chance_outcomes()] if state.is_chance_node()
               else state.legal_actions())
    for action in actions:
      child = state.child(action)
      child_track, _ = recall.advance(track, acting, child.current_player(), player)
      walk(child, child_track, first_key)

  root = game.new_initial_state()
  walk(root, recall.CURRENT if root.current_player() == player else recall.FIRST, None)
  return paths


def _actions(game, player, key):
  """The bot's legal actions at its first turn's information state `key`."""
  state = game.new_initial_state()
  while state.current_player() != player or \
      state.information_state_string(player) != key:
    state = state.child((state.chance_outcomes()[0][0] if state.is_chance_node()
                         else state.legal_actions()[0]))
  return state.legal_actions()


def test_own_trace_maps_the_full_traces_roots_of_the_bots_information_set():
  game = pyspiel.load_game(GAME)
  for player in (0, 1):
    problem = live_problem.Problem(game, player)
    full = live_trace.Trace(problem)
    checked = 0
    for first_key, targets in _own_states(game, player).items():
      for target in targets:
        expected = _histories(full, full.subgame_map.own_roots(target))
        found = 0
        for action in _actions(game, player, first_key):
          own = own_trace.OwnTrace(problem, {first_key: {action}}, target)
          assert own.complete and not own.in_current
          if own.num_roots:
            assert own.subgame_map.own_keys() == [target]
            assert _histories(own, own.subgame_map.roots(target)) == expected
            found += 1
        # (the bot's information state at its next turn holds its own move)
        assert found == 1
        checked += 1
    assert checked >= 5


def _gadgets(count):
  """(player, the whole game's resolver, key, gadget, its Problem) of the first
  `count` next subgames of each seat in GAME (resolve gadgets, VR-MCCFR inputs)."""
  game = pyspiel.load_game(GAME)
  config = settings.ResolverConfig(solver="vr_mccfr")
  for player in (0, 1):
    whole = live_resolver.Resolver(live_problem.Problem(game, player), config, seed=1)
    whole.run(limits.Limit(iterations=100), 0.0)
    for key in sorted(whole.trace.subgame_map.own_keys())[:count]:
      gadget, _, _ = whole.next_subgame(key, "resolve")
      yield player, whole, key, gadget, live_problem.Problem(game, player, gadget)


def test_own_trace_in_a_gadget_maps_the_full_traces_roots():
  """Below a resolve gadget's roots (only those of the bot's information set are
  walked), as at the whole game."""
  checked = fewer = 0
  for _, whole, key, gadget, problem in _gadgets(3):
    full = live_trace.Trace(problem)
    moves = {key: set(gadget.subgame.root_states[0].legal_actions())}
    # The roots above the bot's information set at its entry (live_path.enter).
    own_roots = _histories(whole.trace, whole.trace.subgame_map.own_roots(key))
    fewer += len(own_roots) < len(gadget.subgame.root_states)
    for target in full.subgame_map.own_keys():
      own = own_trace.OwnTrace(problem, moves, target)
      assert own.complete and not own.in_current
      if own.num_roots:
        assert (_histories(own, own.subgame_map.roots(target)) ==
                _histories(full, full.subgame_map.own_roots(target)))
        within = own_trace.OwnTrace(problem, moves, target, own_roots=own_roots)
        assert (_histories(within, within.subgame_map.roots(target)) ==
                _histories(own, own.subgame_map.roots(target)))
        assert within.histories_walked <= own.histories_walked
        checked += 1
  assert checked >= 10 and fewer


def test_own_trace_of_a_turn_in_the_current_subgame_maps_nothing():
  game = pyspiel.load_game(GAME)
  problem = live_problem.Problem(game, 0)
  first = game.new_initial_state()
  key = first.information_state_string(0)
  own = own_trace.OwnTrace(problem, {}, key)
  assert own.in_current and own.num_roots == 0


def test_inputs_from_an_own_trace_equal_the_full_traces():
  """Equal seeds draw equal samples whether or not the trace completed: the sums by
  history at an OwnTrace's roots equal the full trace's at the same roots, and the
  reaches too (to rounding); the gadgets have the same roots and Terminate values
  where the OwnTrace's group is the full group's."""
  game = pyspiel.load_game(GAME)
  config = settings.ResolverConfig(solver="vr_mccfr")
  compared = gadgets = 0
  for player in (0, 1):
    problem = live_problem.Problem(game, player)
    full = live_resolver.Resolver(problem, config, seed=7)
    cut = live_resolver.Resolver(live_problem.Problem(game, player), config, seed=7,
                                 deadline=time.perf_counter() - 1.0)
    assert not cut.trace.complete and cut.solver_collects_by_history
    for resolver in (full, cut):
      resolver.run(limits.Limit(iterations=200), 0.0)
    for first_key, targets in _own_states(game, player).items():
      for target, action in [(t, a) for t in sorted(targets)
                             for a in _actions(game, player, first_key)]:
        # Only the bot's move (the reach of its step is the move's probability).
        own = own_trace.OwnTrace(cut.problem, {first_key: {action}}, target)
        if not own.num_roots:
          continue
        group = own.subgame_map.roots(target)
        reach, opponent_reach, values, weights = cut.solver.estimates(group, own)
        by_history = {next(iter(_histories(own, [r]))): r for r in group}
        full_group = full.trace.subgame_map.own_roots(target)
        f_reach, f_opponent, f_values, f_weights = full.solver.estimates(full_group)
        for root_id in full_group:
          history = next(iter(_histories(full.trace, [root_id])))
          mine = by_history[history]
          np.testing.assert_allclose(
              [reach[mine], opponent_reach[mine], values[mine], weights[mine]],
              [f_reach[root_id], f_opponent[root_id], f_values[root_id],
               f_weights[root_id]], rtol=1e-12, atol=1e-12)
          compared += 1
        if set(full.trace.subgame_map.roots(target)) == set(full_group):
          try:
            mine_gadget, _, _ = cut.next_subgame(target, "resolve", trace=own)
          except Exception as error:  # pylint: disable=broad-except
            mine_gadget = error
          try:
            full_gadget, _, _ = full.next_subgame(target, "resolve")
          except Exception as error:  # pylint: disable=broad-except
            full_gadget = error
          if isinstance(full_gadget, Exception):
            assert type(mine_gadget) is type(full_gadget)
            continue
          assert (mine_gadget.subgame.root_histories ==
                  full_gadget.subgame.root_histories)
          np.testing.assert_allclose(mine_gadget.terminate_utility,
                                     full_gadget.terminate_utility, atol=1e-12)
          gadgets += 1
  assert compared > 50 and gadgets > 5, (compared, gadgets)


class _Cut(live_trace.Trace):
  """A full trace cut (as one past its deadline)."""

  def __init__(self, problem, tree=None, deadline=None, made=None):
    super().__init__(problem, tree, time.perf_counter() - 1.0, made)


def _cut_bot_against_lowest(monkeypatch, seat, plies):
  """The live path's bot in `seat` of python_ii_goofspiel(num_cards=6), every full
  trace cut (_Cut), after `plies` plies (None: the match) against player 1 bidding
  its lowest card (iteration budgets), and the state."""
  monkeypatch.setattr(live_trace, "Trace", _Cut)
  game = pyspiel.load_game("python_ii_goofspiel(num_cards=6)")
  bot = continual_resolving.ContinualResolvingBot(
      game, seat, preplay="200it", move="50it", path="live", seed=seat)
  state = game.new_initial_state()
  while not state.is_terminal() and (plies is None or len(state.history()) < plies):
    state.apply_action(bot.step(state) if state.current_player() == seat else
                       state.legal_actions()[0])
  return bot, state


def _live_match(game, seat, rng):
  """The live path's bot in `seat` after a match against uniform random (iteration
  budgets)."""
  bot = continual_resolving.ContinualResolvingBot(
      game, seat, preplay="200it", move="50it", path="live", seed=seat)
  state = game.new_initial_state()
  while not state.is_terminal():
    if state.current_player() == seat:
      state.apply_action(bot.step(state))
    else:
      state.apply_action(int(rng.choice(state.legal_actions())))
  return bot


def test_the_bot_resolves_every_new_subgame_when_traces_do_not_complete(monkeypatch):
  """Every full trace cut (as a trace past its deadline): the bot still enters a new
  subgame at each of its later turns in goofspiel (each is one), by OwnTrace."""

  monkeypatch.setattr(live_trace, "Trace", _Cut)
  game = pyspiel.load_game(GAME)
  rng = np.random.default_rng(0)
  for seat in (0, 1):
    bot = _live_match(game, seat, rng)
    later = bot.decisions[1:]
    assert len(later) == 3
    for record in later:
      assert record["new_subgame"] and record["own_trace"], record
      assert "OwnTrace" in record["fallback"]


def test_after_a_refused_subgame_the_bot_resolves_the_next_one(monkeypatch):
  """A complete trace's map ends at the refused subgame's turn: the bot stays, and
  at its next turn finds the next subgame by OwnTrace through the turn it played."""
  from ggp_cr.algorithms.resolving import protocol  # pylint: disable=import-outside-toplevel
  refuse = live_resolver.Resolver.next_subgame
  refused = []

  def once(self, key, variant, deadline=None, trace=None):
    if self.problem.gadget is None and not refused:
      refused.append(key)
      raise protocol.CannotResolve("refused by the test")
    return refuse(self, key, variant, deadline, trace)

  monkeypatch.setattr(live_resolver.Resolver, "next_subgame", once)
  game = pyspiel.load_game(GAME)
  rng = np.random.default_rng(1)
  for seat in (0, 1):
    refused.clear()
    bot = _live_match(game, seat, rng)
    first, second, third = bot.decisions[1:]
    assert not first["new_subgame"] and "refused by the test" in first["fallback"]
    assert second["new_subgame"] and second["own_trace"], second
    assert third["new_subgame"] and "own_trace" not in third, third


def _roots(trace, root_ids):
  """{history of next root: (steps, chance, opponent key)} of `root_ids`."""
  problem = trace.problem
  return {tuple(problem.root_histories[trace.root_of[r]]) + trace.actions[r]:
          (trace.steps[r], trace.chance[r], trace.opponent_keys[r]) for r in root_ids}


def test_the_first_decisions_starts_are_its_information_sets_histories():
  """OwnTrace with no moves and the bot's first key (live_path.LivePath.first) finds
  exactly the histories of its first information set, with their chance
  probability, and an OwnTrace from them maps what one from the root maps."""
  game = pyspiel.load_game(GAME)
  checked = 0
  for player in (0, 1):
    problem = live_problem.Problem(game, player)
    for first_key, targets in _own_states(game, player).items():
      starts = own_trace.OwnTrace(problem, {}, first_key)
      assert starts.in_current and starts.complete and starts.num_roots == 0
      histories = {tuple(state.history()) for state, *_ in starts.current_starts}
      expected = set()

      def walk(state):
        if state.is_terminal():
          return
        if state.current_player() == player:
          if state.information_state_string(player) == first_key:  # pylint: disable=cell-var-from-loop
            expected.add(tuple(state.history()))
          return
        for action in (state.legal_actions() if not state.is_chance_node() else
                       [a for a, _ in state.chance_outcomes()]):
          walk(state.child(action))

      walk(game.new_initial_state())
      assert histories == expected
      for state, _, _, j, actions, _, chance in starts.current_starts:
        assert j == 0 and tuple(actions) == tuple(state.history())
        replay, probability = game.new_initial_state(), 1.0
        for action in actions:
          if replay.is_chance_node():
            probability *= dict(replay.chance_outcomes())[action]
          replay.apply_action(action)
        assert chance == pytest.approx(probability, rel=1e-12)
      for target in targets:
        for action in _actions(game, player, first_key):
          moves = {first_key: {action}}
          # (the walks of every branch: the native walk prunes both alike,
          # tests/resolving/live/test_native_own_trace.py)
          own = own_trace.OwnTrace(problem, moves, target, native=False)
          from_starts = own_trace.OwnTrace(problem, moves, target,
                                            starts=starts.current_starts,
                                            native=False)
          assert from_starts.complete and not from_starts.in_current
          assert (_roots(from_starts, range(from_starts.num_roots)) ==
                  _roots(own, range(own.num_roots)))
          assert from_starts.histories_walked <= own.histories_walked
          checked += 1
  assert checked >= 10


def test_starts_below_a_gadget_map_what_its_roots_map():
  """The histories a trace found at the bot's next turn, as starts in the gadget
  of that subgame (Trace.starts_below), give an OwnTrace the same next roots,
  steps and chance as one walked from the gadget's roots; and staying in the same
  subgame (a refused one), the same as one walked through that turn."""
  game = pyspiel.load_game(GAME)
  checked = stayed = 0
  for player, whole, key, gadget, problem in _gadgets(4):
    starts = whole.trace.starts_below(key, problem)
    assert {tuple(s.history()) for s, *_ in starts} == {
        tuple(s.history()) for s, *_ in whole.trace.found[key]}
    full = live_trace.Trace(problem)
    turn = whole.trace.found[key][0][0]  # a history of the bot's turn at `key`
    first_key = next(k for k, targets in _own_states(game, player).items()
                     if key in targets)
    for action in turn.legal_actions():
      moves = {key: {action}}
      for target in full.subgame_map.own_keys():
        own = own_trace.OwnTrace(problem, moves, target)
        from_starts = own_trace.OwnTrace(problem, moves, target, starts=starts)
        assert from_starts.complete and not from_starts.in_current
        assert (_roots(from_starts, range(from_starts.num_roots)) ==
                _roots(own, range(own.num_roots)))
        checked += own.num_roots > 0
        # Staying in the whole game (refused there): from the turn's histories,
        # as from the root through the turn.
        moves = {first_key: set(_actions(game, player, first_key)),
                 key: {action}}
        own = own_trace.OwnTrace(whole.problem, moves, target)
        from_starts = own_trace.OwnTrace(whole.problem, moves, target,
                                          starts=whole.trace.starts_below(key))
        assert (_roots(from_starts, range(from_starts.num_roots)) ==
                _roots(own, range(own.num_roots)))
        stayed += own.num_roots > 0
        moves = {key: {action}}
  assert checked >= 5 and stayed >= 5, (checked, stayed)


def test_root_states_kept_by_the_trace_equal_their_replays():
  game = pyspiel.load_game(GAME)
  trace = live_trace.Trace(live_problem.Problem(game, 1))
  for root_id in range(trace.num_roots):
    replay = game.new_initial_state()
    for action in trace.actions[root_id]:
      replay.apply_action(action)
    kept = trace.root_state(root_id)
    assert kept.history() == replay.history()
    assert kept is not trace.root_state(root_id, copy=False)
    assert trace.opponent_keys[root_id] == replay.information_state_string(0)
    for _, key, _, _ in trace.steps[root_id]:
      assert isinstance(key, str)


def test_an_own_trace_cut_and_resumed_maps_what_an_uncut_one_maps(monkeypatch):
  """A walk from starts cut by its deadline in the middle of a start keeps what the
  starts before found; resumed, it ends equal to one never cut (the start it was
  in is walked again, its histories found once)."""
  game = pyspiel.load_game("python_ii_goofspiel(num_cards=5)")
  player = 1
  problem = live_problem.Problem(game, player)
  first_key, targets = sorted(_own_states(game, player).items())[0]
  starts = own_trace.OwnTrace(problem, {}, first_key).current_starts
  action = _actions(game, player, first_key)[0]
  moves = {first_key: {action}}
  whole = {t: own_trace.OwnTrace(problem, moves, t, starts=starts) for t in targets}
  ticks = [0]

  def clock():
    ticks[0] += 1
    return float(ticks[0])

  monkeypatch.setattr(own_trace.time, "perf_counter", clock)
  resumed = 0
  for target, uncut in whole.items():
    if not uncut.num_roots:
      continue
    for cut_at in (3, 7, 10):
      ticks[0] = 0
      cut = own_trace.OwnTrace(problem, moves, target, deadline=cut_at, starts=starts)
      assert not cut.complete and 0.0 <= cut.progress < 1.0
      assert cut.resume(None) and cut.complete and cut.progress == 1.0
      assert (_roots(cut, range(cut.num_roots)) ==
              _roots(uncut, range(uncut.num_roots)))
      assert ([tuple(s.history()) for s, *_ in cut.found[target]] ==
              [tuple(s.history()) for s, *_ in uncut.found[target]])
      resumed += 1
  assert resumed >= 6
  # A walk from the roots is abandoned, not resumed.
  ticks[0] = 0
  cut = own_trace.OwnTrace(problem, moves, sorted(targets)[0], deadline=5)
  assert not cut.complete and not cut.resume(None) and cut.num_roots == 0
  assert cut.progress is None


def test_a_subgame_left_is_freed_before_the_moves_iterations(monkeypatch):
  """The resolver of the subgame the bot leaves is freed when it enters the next,
  before the move's iterations (on return it cost liars_dice(numdice=2)'s moves
  about 10 ms past their deadline)."""
  import weakref  # pylint: disable=import-outside-toplevel
  game = pyspiel.load_game(GAME)
  left = []
  checked = []
  run = live_resolver.Resolver.run

  def checking_run(self, limit, start):
    for ref in left:
      if ref() is not None and ref() is not self:
        checked.append(False)
      else:
        checked.append(True)
    left[:] = [weakref.ref(self)]
    return run(self, limit, start)

  monkeypatch.setattr(live_resolver.Resolver, "run", checking_run)
  bot = _live_match(game, 0, np.random.default_rng(2))
  entered = sum(record["new_subgame"] for record in bot.decisions[1:])
  assert entered >= 2 and checked.count(False) == 0 and len(checked) >= 3


def test_a_trace_is_skipped_where_the_last_cut_ones_pace_says_it_cannot_end():
  """After a trace below a gadget was cut, the next one is not started when the
  cut one's seconds per root, times the new gadget's roots, exceed the time left
  (record trace_skipped_at_least_seconds); one that ends forgets the bound."""
  from ggp_cr.algorithms.resolving import move_budget  # pylint: disable=import-outside-toplevel
  from ggp_cr.algorithms.resolving.live import live_path  # pylint: disable=import-outside-toplevel
  config = settings.ResolverConfig(solver="vr_mccfr")
  _, _, _, _, problem = next(_gadgets(1))
  path = live_path.LivePath(problem.original, problem.player, config)
  roots = len(problem.root_states)
  move = move_budget.MoveBudget(time.perf_counter(), 100.0)
  path._cut_seconds_per_root = 100.0 / roots  # pylint: disable=protected-access
  record = {}
  resolver = path._resolver(problem, record, move, 0)  # pylint: disable=protected-access
  assert record["trace_skipped_at_least_seconds"] == pytest.approx(100.0)
  assert not resolver.trace.complete
  assert path._cut_seconds_per_root == 100.0 / roots  # pylint: disable=protected-access
  path._cut_seconds_per_root = 1.0 / roots  # pylint: disable=protected-access
  record = {}
  resolver = path._resolver(problem, record, move, 0)  # pylint: disable=protected-access
  assert "trace_skipped_at_least_seconds" not in record and resolver.trace.complete
  assert path._cut_seconds_per_root is None  # pylint: disable=protected-access


def test_a_subgame_on_sampled_roots_is_recorded_as_such(monkeypatch):
  """With seconds, where the bot's information set holds more histories than the move
  pays for (here 2, at 200 s each), the live path builds the next subgame over a
  sample of their roots instead of refusing it, and records it apart: roots_sampled
  and subgame_kind (live_path.SAMPLED_KIND), also on the subgames below."""
  from ggp_cr.algorithms.resolving import move_budget  # pylint: disable=import-outside-toplevel
  from ggp_cr.algorithms.resolving.live import live_path  # pylint: disable=import-outside-toplevel

  seat = 0
  bot, state = _cut_bot_against_lowest(monkeypatch, seat, 4)  # (two turns)
  key = state.information_state_string(seat)
  assert all("subgame_kind" not in r for r in bot.decisions)
  path, current = bot._path, bot.resolver  # pylint: disable=protected-access
  full = own_trace.OwnTrace(current.problem, current.own_moves, key,
                             own_roots=current.own_root_histories,
                             starts=current.own_starts)
  assert full.num_roots > 2
  monkeypatch.setattr(own_trace, "SAMPLED_SECONDS_PER_TARGET", 200.0)
  record = {}
  # (its build ends 500 s on: 2 histories at 200 s each)
  move = move_budget.MoveBudget(time.perf_counter(), 500.0 / move_budget.BUILD_SHARE)
  resolver = path.enter(current, key, record, move, 3, None)
  assert record["roots_sampled"] == f"2 of {full.num_roots}"
  assert record["roots"] == 2 and record["subgame_kind"] == live_path.SAMPLED_KIND
  assert resolver.sampled_roots and len(resolver.own_starts) == 2
  # Below it, every subgame is one on sampled roots (its roots lie below a sample).
  monkeypatch.setattr(own_trace, "SAMPLED_SECONDS_PER_TARGET", 1e-9)
  resolver.run(limits.Limit(iterations=5), time.perf_counter())
  action = resolver.own_starts[0][0].legal_actions()[0]
  path.played(resolver, key, action)
  below = resolver.own_starts[0][0].child(action)
  below.apply_action(below.legal_actions()[0])
  record = {}
  later = path.enter(resolver, below.information_state_string(seat), record,
                     move_budget.MoveBudget(time.perf_counter(), 1000.0), 4, None)
  assert "roots_sampled" not in record
  assert record["subgame_kind"] == live_path.SAMPLED_KIND and later.sampled_roots


def test_a_cut_traces_pace_is_over_the_roots_it_began():
  """A trace below a gadget cut at its deadline gives the next ones its seconds over
  the roots it began, not over all of them (a pace it had not kept)."""
  from ggp_cr.algorithms.resolving import move_budget  # pylint: disable=import-outside-toplevel
  from ggp_cr.algorithms.resolving.live import live_path  # pylint: disable=import-outside-toplevel
  config = settings.ResolverConfig(solver="vr_mccfr")
  checked = 0
  for _, _, _, _, problem in _gadgets(3):
    roots = len(problem.root_states)
    for ticks_left in range(4, 5 * roots, 3):
      path = live_path.LivePath(problem.original, problem.player, config)
      ticks = [0.0]

      def clock():  # (one unit a call)
        ticks[0] += 1.0
        return ticks[0]

      with pytest.MonkeyPatch.context() as patch:
        patch.setattr(time, "perf_counter", clock)
        move = move_budget.MoveBudget(0.0, ticks_left / move_budget.TRACE_SHARE)
        resolver = path._resolver(problem, {}, move, 0)  # pylint: disable=protected-access
      trace = resolver.trace
      begun = len(trace.current_root_nodes)
      if trace.complete or not 0 < begun < roots:
        continue
      pace = path._cut_seconds_per_root  # pylint: disable=protected-access
      assert pace == trace.seconds / begun and pace > trace.seconds / roots
      checked += 1
  assert checked >= 3


def test_after_a_cut_own_trace_the_bot_resolves_at_a_later_decision(monkeypatch):
  """A walk from more starts than the move pays for (here 2: such a walk is cut, its
  deadline already passed) leaves the bot in the current subgame; its next walk,
  one turn deeper, starts at a seeded sample of the cut walk's starts
  (live_path.CUT_STARTS_SHARE) and the bot resolves a new subgame on sampled roots
  there, recorded, instead of staying in the old subgame for the rest of the match
  (issue 44: the walk from the old starts was cut again at every later turn)."""
  from ggp_cr.algorithms.resolving.live import live_path  # pylint: disable=import-outside-toplevel

  class Bounded(own_trace.OwnTrace):
    def __init__(self, problem, own_moves, target, deadline=None, own_roots=None,
                 starts=None, **kwargs):
      if starts is not None and len(starts) > 2:
        deadline = time.perf_counter() - 1.0
      super().__init__(problem, own_moves, target, deadline, own_roots, starts,
                       **kwargs)

  monkeypatch.setattr(own_trace, "OwnTrace", Bounded)
  bot, _ = _cut_bot_against_lowest(monkeypatch, 0, None)  # (the whole match)
  decisions = bot.decisions
  cut = [n for n, r in enumerate(decisions) if not r["new_subgame"] and
         "not traced within the time budget" in r.get("fallback", "")]
  assert cut, decisions
  first = cut[0]
  later = decisions[first + 1:]
  recovered = [r for r in later if r["new_subgame"]]
  assert recovered, later  # (the old code: no new subgame after the cut)
  assert "seeded sample" in decisions[first]["fallback"], decisions[first]
  assert "own_trace_recovery" in recovered[0], recovered[0]
  assert recovered[0]["subgame_kind"] == live_path.SAMPLED_KIND
