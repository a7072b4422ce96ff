"""live_trace.OwnTrace with the native walk (native_next_decisions) finds what the walk
of every branch on pyspiel states finds: the same next roots, paths, decisions, chance
probabilities, opponent keys, found histories and current starts, along random
matches of the games with a native walk (issue 44)."""

import numpy as np
import pyspiel
import pytest

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.resolving.live import live_trace
from ggp_cr.algorithms.tree import native_next_decisions

GAMES = ["python_ii_goofspiel(num_cards=5)",
         "python_ii_goofspiel(num_cards=4,points_order=random)",
         "python_leduc(cards_per_suit=3)"]


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
  checked = native_walks = passed = 0
  walked = [0, 0]  # histories walked with and without the native walk
  for seed in range(14):
    rng = np.random.default_rng(seed)
    player = seed % 2
    problem = live_trace.Problem(game, player)
    state = game.new_initial_state()
    own_moves, starts = {}, None
    while not state.is_terminal():
      if state.current_player() == player:
        key = state.information_state_string(player)
        traces = [live_trace.OwnTrace(problem, own_moves, key, starts=starts,
                                      native=native) for native in (True, False)]
        assert _summary(traces[0]) == _summary(traces[1])
        # (and from the game's root: through every turn the bot played)
        from_root = [live_trace.OwnTrace(problem, own_moves, key, native=native)
                     for native in (True, False)]
        assert _summary(from_root[0]) == _summary(from_root[1])
        assert from_root[0].native_paths is not None
        assert traces[1].native_paths is None
        native_walks += traces[0].native_paths is not None
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
  assert walked[0] < walked[1]  # (the native walk prunes the branches off target)


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
  problem = live_trace.Problem(game, 1)
  own_trace = live_trace.OwnTrace(problem, {}, "p1: Prize(1)", deadline=0.0)
  assert not own_trace.complete and own_trace.native_paths is None
