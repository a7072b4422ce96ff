"""benchmarks/information_set_sizes.py's count equals pyspiel's information sets."""

import collections
import importlib.util
import os

import pyspiel
import pytest

import ggp_cr  # pylint: disable=unused-import

_PATH = os.path.join(os.path.dirname(__file__), "..", "benchmarks",
                     "information_set_sizes.py")
_SPEC = importlib.util.spec_from_file_location("information_set_sizes", _PATH)
sizes = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(sizes)


def _information_sets(game):
  """{(player, information state string): (histories, own bids, results, pending)}."""
  found = {}
  stack = [(game.new_initial_state(), [], [])]
  while stack:
    state, bids0, bids1 = stack.pop()
    if state.is_terminal():
      continue
    if state.is_chance_node():
      for action, _ in state.chance_outcomes():
        stack.append((state.child(action), bids0, bids1))
      continue
    player = state.current_player()
    own, other = (bids0, bids1) if player == 0 else (bids1, bids0)
    turns = len(own)
    results = tuple(sizes.result(a, b) for a, b in zip(own, other[:turns]))
    key = (player, state.information_state_string(player))
    entry = found.setdefault(key, [0, tuple(own), results, len(other) > turns])
    entry[0] += 1
    assert (entry[1], entry[2]) == (tuple(own), results)
    for action in state.legal_actions():
      if player == 0:
        stack.append((state.child(action), bids0 + [action], bids1))
      else:
        stack.append((state.child(action), bids0, bids1 + [action]))
  return found


@pytest.mark.parametrize("num_cards", [3, 4, 5])
def test_count_equals_the_histories_of_each_information_set(num_cards):
  game = pyspiel.load_game(f"python_ii_goofspiel(num_cards={num_cards})")
  found = _information_sets(game)
  per_player = collections.Counter(player for player, _ in found)
  assert per_player[0] > 1 and per_player[1] > 1
  for (player, _), (histories, own, results, pending) in found.items():
    assert pending == (player == 1)
    assert sizes.information_set_size(num_cards, own, results, pending) == histories


def test_decision_sizes_along_a_match():
  # Player 0 bids 0, 1, 2 and player 1 bids 2, 1, 0 with four cards.
  along = sizes.decision_sizes(4, [0, 1, 2, 3], [2, 1, 0, 3])
  assert along[0] == (1, 4)
  # Turn 2: player 0 lost with card 0 (the opponent bid one of 1, 2, 3): 3 histories.
  assert along[1][0] == 3


def test_refuses_mismatched_results():
  with pytest.raises(ValueError, match="one result per own bid"):
    sizes.information_set_size(4, (0, 1), (1,), False)
