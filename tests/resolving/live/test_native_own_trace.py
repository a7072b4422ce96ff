"""own_trace.OwnTrace with the native walk (native_next_decisions) finds what the walk
of every branch on pyspiel states finds: the same next roots, paths, decisions, chance
probabilities, opponent keys, found histories and current starts, along random
matches of the games with a native walk (issue 44)."""

import copy
import pickle
import time

import numpy as np
import pyspiel
import pytest

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.resolving.live import live_problem
from ggp_cr.algorithms.resolving.live import live_trace
from ggp_cr.algorithms.resolving.live import own_trace
from ggp_cr.algorithms.tree import native_next_decisions

GAMES = ["python_ii_goofspiel(num_cards=5)",
         "python_ii_goofspiel(num_cards=4,points_order=random)",
         "python_leduc(cards_per_suit=3)",
         "python_princess_monster(max_turns=4,rows=3,cols=3)",
         "python_princess_monster(max_turns=5,rows=2,cols=3)",
         "python_latent_ttt"]


def _summary(trace):
  """What a trace found, with states by their histories."""
  def start(item):
    state, *rest = item
    return (tuple(state.history()), *rest)

  return {
      "complete": trace.complete, "in_current": trace.in_current,
      "roots": [(j, actions, steps, chance, key, tuple(state.history()))
                for j, actions, steps, chance, key, state in zip(
                    trace.root_of, trace.actions, trace.steps, trace.chance,
                    trace.opponent_keys, trace.states)],
      "found": {key: [(tuple(s.history()), *rest) for s, *rest in found]
                for key, found in trace.found.items()},
      "map": {key: (trace.subgame_map.roots(key), trace.subgame_map.own_roots(key))
              for key in trace.subgame_map.own_keys()},
      "current": [start(item) for item in trace.current_starts],
  }


def _random_action(state, rng):
  if state.is_chance_node():
    outcomes, probabilities = zip(*state.chance_outcomes())
    return outcomes[rng.choice(len(outcomes), p=probabilities)]
  legal = state.legal_actions()
  return legal[rng.integers(len(legal))]


@pytest.mark.parametrize("game_string", GAMES)
def test_native_own_trace_equals_the_walk_of_every_branch(game_string):
  game = pyspiel.load_game(game_string)
  assert native_next_decisions.supports(game)
  checked = native_walks = passed = replayed = deferred_roots = 0
  walked = [0, 0]  # histories walked with and without the native walk
  for seed in range(14):
    rng = np.random.default_rng(seed)
    player = seed % 2
    problem = live_problem.Problem(game, player)
    state = game.new_initial_state()
    own_moves, starts = {}, None
    while not state.is_terminal():
      if state.current_player() == player:
        key = state.information_state_string(player)
        traces = [own_trace.OwnTrace(problem, own_moves, key, starts=starts,
                                      native=native) for native in (True, False)]
        assert _summary(traces[0]) == _summary(traces[1])
        # (and from the game's root: through every turn the bot played)
        from_root = [own_trace.OwnTrace(problem, own_moves, key, native=native)
                     for native in (True, False)]
        assert _summary(from_root[0]) == _summary(from_root[1])
        assert from_root[0].native_paths is not None
        assert traces[1].native_paths is None
        native_walks += traces[0].native_paths is not None
        # (the paths found replayed alone: OwnTrace._replay)
        replayed += traces[0]._start_paths is not None  # pylint: disable=protected-access
        # Roots made only when used (DeferredChild) answer as the states made.
        for deferred, made in zip(traces[0].states, traces[1].states):
          if isinstance(deferred, live_trace.DeferredChild):
            deferred_roots += 1
            assert deferred.clone().history() == made.history()
            assert deferred.legal_actions() == made.legal_actions()
            for seat in (0, 1):
              assert (deferred.information_state_string(seat) ==
                      made.information_state_string(seat))
        walked[0] += traces[0].histories_walked
        walked[1] += traces[1].histories_walked
        checked += 1
        own = traces[0]
        # The bot's histories here start the next walk (as live_path keeps them),
        # or, as after a walk that missed its deadline, the last starts stay: the
        # next walk passes through this turn.
        if starts is None or rng.random() < 0.6:
          starts = (own.current_starts if own.in_current else own.starts_below(key))
          assert starts, "the bot's own history is among its information set's"
          assert tuple(state.history()) in {tuple(s[0].history()) for s in starts}
        else:
          passed += 1
        action = _random_action(state, rng)
        own_moves = {**own_moves, key: {action}}
      else:
        action = _random_action(state, rng)
      state.apply_action(action)
  assert checked >= 15 and native_walks == checked and passed >= 3
  assert replayed >= 3
  assert deferred_roots >= 3 or not hasattr(game.new_initial_state(),
                                            "information_states_after")
  assert walked[0] < walked[1]  # (the native walk prunes the branches off target)


def _pyspiel_next_decisions(state, player, own, found, path=()):
  """(history, path) of `player`'s next decisions below `state` in the order of
  the game's actions, walked on pyspiel states (`own`: the actions at a start where
  `player` acts)."""
  at_start = not path
  for action in state.legal_actions():
    if at_start and state.current_player() == player and action not in own:
      continue
    child = state.child(action)
    if child.is_terminal():
      continue
    if child.current_player() == player:
      found.append((tuple(child.history()), path + (action,)))
    else:
      _pyspiel_next_decisions(child, player, own, found, path + (action,))
  return found


@pytest.mark.parametrize("game_string", GAMES)
def test_next_decisions_equal_the_pyspiel_walk(game_string):
  """native_next_decisions from the histories of one information set of a player
  (found along random playouts) finds the pyspiel walk's next decisions, paths and
  order, and its labels (the own action at the start, `seen`) tell their
  information states apart exactly as the states' strings do."""
  game = pyspiel.load_game(game_string)
  checked = 0
  for seed in range(6):
    rng = np.random.default_rng(seed)
    player = seed % 2
    groups = {}  # (depth, the player's information state): histories
    for _ in range(60):
      state = game.new_initial_state()
      depth = int(rng.integers(0, 6))
      while not state.is_terminal() and len(state.history()) < depth:
        state.apply_action(_random_action(state, rng))
      if not state.is_terminal() and not state.is_chance_node():
        key = state.information_state_string(player)
        groups.setdefault((depth, key), {})[tuple(state.history())] = state
    for states in groups.values():
      states = list(states.values())
      acting = states[0].current_player() == player
      own = sorted(states[0].legal_actions()[:2]) if acting else []
      expected = []
      for k, state in enumerate(states):
        expected += [(k, history, path) for history, path in
                     _pyspiel_next_decisions(state, player, own, [])]
      rows, lengths = native_next_decisions.history_rows(
          [state.history() for state in states])
      own_rows = np.full((len(states), max(1, len(own))), -1, np.int64)
      own_rows[:, :len(own)] = own
      starts, path_lengths, seen, paths = native_next_decisions.next_decisions(
          game, player, rows, lengths, own_rows)
      assert [(k, tuple(paths[f, :path_lengths[f]].tolist())) for f, k in
              enumerate(starts.tolist())] == [(k, path) for k, _, path in expected]
      labels = {}  # (own action at the start or -1, seen): information state
      for f, (_, history, path) in enumerate(expected):
        state = game.new_initial_state()
        for action in history:
          state.apply_action(action)
        labels.setdefault((path[0] if acting else -1, int(seen[f])), set()).add(
            state.information_state_string(player))
      assert all(len(keys) == 1 for keys in labels.values())
      assert len(set().union(*labels.values())) == len(labels)
      checked += len(expected)
  assert checked >= 50


def test_native_walk_gives_up_past_its_limit_and_refuses_other_games():
  game = pyspiel.load_game(GAMES[0])
  rows, lengths = native_next_decisions.history_rows([[0]])  # player 0 bid card 1
  own = np.full((1, 1), -1, np.int64)
  starts, path_lengths, _, _ = native_next_decisions.next_decisions(
      game, 0, rows, lengths, own)
  assert len(starts) == 5 and set(path_lengths.tolist()) == {1}  # player 1's bids
  assert native_next_decisions.next_decisions(game, 0, rows, lengths, own,
                                              limit=4) is None
  with pytest.raises(ValueError, match="No native walk"):
    native_next_decisions.next_decisions(pyspiel.load_game("kuhn_poker"), 0, rows,
                                         lengths, own)
  # A deadline passed: the native walk is cut as the walk of every branch is.
  problem = live_problem.Problem(game, 1)
  walk = own_trace.OwnTrace(problem, {}, "p1: Prize(1)", deadline=0.0)
  assert not walk.complete and walk.native_paths is None


def test_sampled_own_trace_keeps_a_subset_of_the_next_roots(monkeypatch):
  """With a sample that pays for 4 histories of the target (of many), OwnTrace walks a
  uniform random 4 of them: each next root it keeps, with its path, decisions, chance
  and opponent key, is one the full trace finds; `sampled` says 4 of how many."""
  # (bot (player 0) bids 6 then 5; player 1 bids 1 then 2)
  problem, own_moves, starts, target = _bot_turn((5, 0, 4, 1))
  full = own_trace.OwnTrace(problem, own_moves, target, starts=starts)
  assert full.complete and full.sampled is None and full.num_roots > 4
  monkeypatch.setattr(own_trace, "SAMPLED_SECONDS_PER_TARGET", 200.0)
  samples = []
  for seed in (0, 1):
    end = time.perf_counter() + 1000.0  # (pays for 4 histories at 200 s each)
    sampled = own_trace.OwnTrace(problem, own_moves, target, starts=starts,
                                  sample=(np.random.default_rng(seed), end, None))
    assert sampled.complete and sampled.sampled == (4, len(full.found[target]))
    assert sampled.num_roots == 4 and len(sampled.found[target]) == 4
    full_roots = {history: r for history, r in full.root_ids.items()}
    for history, r in sampled.root_ids.items():
      f = full_roots[history]
      assert (sampled.root_of[r], sampled.actions[r], sampled.steps[r],
              sampled.chance[r], sampled.opponent_keys[r]) == (
                  full.root_of[f], full.actions[f], full.steps[f], full.chance[f],
                  full.opponent_keys[f])
    samples.append(frozenset(sampled.root_ids))
  assert samples[0] != samples[1]  # (a seeded draw)
  # Without a sample the same time would not be asked about: the full trace.
  assert own_trace.OwnTrace(problem, own_moves, target, starts=starts).sampled is None


def test_sampled_own_trace_without_the_native_walk_keeps_random_starts():
  """Without the native walk, a sample whose time is out walks one random start: its
  next roots are among the full trace's, and `sampled` is (1 start, of how many)."""
  game = pyspiel.load_game("python_ii_goofspiel(num_cards=6)")
  problem = live_problem.Problem(game, 0)
  state = game.new_initial_state()
  own_moves, starts = {}, None
  for action in (5, 0, 4, 1, 3, 2):
    if state.current_player() == 0:
      key = state.information_state_string(0)
      own = own_trace.OwnTrace(problem, own_moves, key, starts=starts, native=False)
      starts = own.current_starts if own.in_current else own.starts_below(key)
      own_moves = {**own_moves, key: {action}}
    state.apply_action(action)
  target = state.information_state_string(0)
  assert len(starts) > 1
  full = own_trace.OwnTrace(problem, own_moves, target, starts=starts, native=False)
  assert full.complete and full.sampled is None
  firsts = set()
  for seed in range(4):
    sampled = own_trace.OwnTrace(
        problem, own_moves, target, starts=starts, native=False,
        sample=(np.random.default_rng(seed), time.perf_counter() - 1.0, None))
    assert sampled.complete and sampled.sampled == (1, len(starts))
    assert 0 < sampled.num_roots < full.num_roots
    assert set(sampled.root_ids) <= set(full.root_ids)
    assert set(sampled.subgame_map.own_keys()) == {target}
    firsts.add(frozenset(sampled.root_ids))
  assert len(firsts) > 1  # (a seeded draw of the start)


def _bot_turn(actions):
  """After `actions` in python_ii_goofspiel(num_cards=6) with the bot in seat 0:
  (problem, its moves, its starts (the histories of its last information set),
  its information state now), as live_path keeps them."""
  game = pyspiel.load_game("python_ii_goofspiel(num_cards=6)")
  problem = live_problem.Problem(game, 0)
  state = game.new_initial_state()
  own_moves, starts = {}, None
  for action in actions:
    if state.current_player() == 0:
      key = state.information_state_string(0)
      own = own_trace.OwnTrace(problem, own_moves, key, starts=starts)
      starts = own.current_starts if own.in_current else own.starts_below(key)
      own_moves = {**own_moves, key: {action}}
    state.apply_action(action)
  return problem, own_moves, starts, state.information_state_string(0)


def _unit_clock(monkeypatch):
  """A clock of one unit a call (reset by setting the list's item) and a history of
  the target walked at 1000 units (NATIVE_SECONDS_PER_TARGET)."""
  ticks = [0.0]

  def clock():
    ticks[0] += 1.0
    return ticks[0]

  monkeypatch.setattr(own_trace.time, "perf_counter", clock)
  monkeypatch.setattr(own_trace, "NATIVE_SECONDS_PER_TARGET", 1000.0)
  return ticks


def test_a_sample_cut_to_the_deadline_is_walked(monkeypatch):
  """A sample cut to what the deadline pays for (NATIVE_SECONDS_PER_TARGET a history
  walked) is walked, however little time is left over: it was refused as out of time
  when the slack was below one history's seconds."""
  problem, own_moves, starts, target = _bot_turn((5, 0, 4, 1))
  found = len(own_trace.OwnTrace(problem, own_moves, target,
                                  starts=starts).found[target])
  assert found > 4
  ticks = _unit_clock(monkeypatch)
  monkeypatch.setattr(own_trace, "SAMPLED_SECONDS_PER_TARGET", 1e-9)
  kept = set()
  for slack in range(60):  # (one of these leaves less than a unit over 4 histories)
    ticks[0] = 0.0
    sampled = own_trace.OwnTrace(
        problem, own_moves, target, deadline=1000.0 * (len(starts) + 4) + slack,
        starts=starts, sample=(np.random.default_rng(0), 1e12, None))
    if sampled.sampled is not None:
      assert sampled.complete, slack
      kept.add(sampled.sampled)
  assert (4, found) in kept


def test_a_deferred_child_is_its_state_made_once():
  """DeferredChild answers history and strings without the state, makes it once for
  anything else, copies and pickles, and its children are the state's."""
  game = pyspiel.load_game("python_ii_goofspiel(num_cards=4)")
  parent = game.new_initial_state()
  parent.apply_action(1)
  made = parent.child(2)
  deferred = live_trace.DeferredChild(parent, 2, 0, parent.information_states_after(2))
  assert deferred.history() == made.history() and deferred.current_player() == 0
  assert deferred.child(0).history() == made.child(0).history()
  assert deferred._state is None  # pylint: disable=protected-access
  assert deferred.legal_actions() == made.legal_actions()
  assert deferred.state() is deferred.state()  # (made once)
  for copied in (copy.deepcopy(deferred), pickle.loads(pickle.dumps(deferred))):
    assert copied.history() == made.history()
    assert copied.information_state_string(1) == made.information_state_string(1)


def test_a_sample_pays_only_for_the_starts_above_its_histories(monkeypatch):
  """A replayed walk passes a start with no history of the target below it at no
  cost, so the deadline's cap on the sample counts only the starts above them: here
  4 of 5 starts, each above one history; time for 5 histories keeps 2 of the 4, and
  for 6 it keeps 3 (3 histories and their 3 starts: only the starts above the kept
  histories count; every start above one counted kept 2)."""
  # (a draw at bid 3: not below the start where player 1 bid 3 first)
  problem, own_moves, starts, target = _bot_turn((0, 1, 2, 2))
  full = own_trace.OwnTrace(problem, own_moves, target, starts=starts)
  above = sum(1 for paths in full._start_paths if paths)  # pylint: disable=protected-access
  assert (len(starts), above, len(full.found[target])) == (5, 4, 4)
  ticks = _unit_clock(monkeypatch)
  monkeypatch.setattr(own_trace, "SAMPLED_SECONDS_PER_TARGET", 1e-9)
  kept = set()
  for slack in range(60):
    ticks[0] = 0.0
    sampled = own_trace.OwnTrace(
        problem, own_moves, target, deadline=1000.0 * (above + 2) + slack,
        starts=starts, sample=(np.random.default_rng(0), 1e12, None))
    if sampled.sampled is not None:
      assert sampled.complete and len(sampled.found[target]) == sampled.sampled[0]
      kept.add(sampled.sampled)
  assert (2, 4) in kept and (3, 4) in kept


def test_a_replayed_sample_pays_its_roots_only(monkeypatch):
  """With the replay, a sample's end pays for its roots at their pace only (the
  pace holds a root's start; live_path leaves the native walk out of it): starts
  costing far more apart do not refuse it. native_seconds is the native walk's."""
  problem, own_moves, starts, target = _bot_turn((5, 0, 4, 1))
  full = own_trace.OwnTrace(problem, own_moves, target, starts=starts)
  assert full.native_seconds > 0
  assert own_trace.OwnTrace(problem, own_moves, target, starts=starts,
                             native=False).native_seconds == 0
  ticks = _unit_clock(monkeypatch)
  kept = set()
  for end in range(5, 80):  # (a root's pace: 1 unit)
    ticks[0] = 0.0
    sampled = own_trace.OwnTrace(problem, own_moves, target, starts=starts,
                                  sample=(np.random.default_rng(0), end, 1.0))
    if sampled.complete and sampled.sampled is not None:
      kept.add(sampled.sampled[0])
  assert kept and min(kept) >= 1


def test_a_measured_pace_below_the_constant_keeps_the_whole_walk(monkeypatch):
  """The deadline's cap on a sample assumes a sample's measured pace a history where
  it is below NATIVE_SECONDS_PER_TARGET (a root replayed in bulk costs less): time
  for every history at the pace keeps them all (exact), where the constant's cap
  gave up the walk."""
  problem, own_moves, starts, target = _bot_turn((5, 0, 4, 1))
  found = len(own_trace.OwnTrace(problem, own_moves, target,
                                  starts=starts).found[target])
  ticks = _unit_clock(monkeypatch)  # (the constant: 1000 units)
  runs = {}
  for pace in (None, 10.0):
    ticks[0] = 0.0
    runs[pace] = own_trace.OwnTrace(
        problem, own_moves, target, deadline=40.0 * (len(starts) + found),
        starts=starts, sample=(np.random.default_rng(0), 1e12, pace))
  assert runs[10.0].complete and runs[10.0].sampled is None
  assert len(runs[10.0].found[target]) == found
  assert not runs[None].complete and runs[None].sampled is None

