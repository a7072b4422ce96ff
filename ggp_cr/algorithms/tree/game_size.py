"""Size statistics of any pyspiel game, as reported in [S] Tables 5.1 and 5.4.

|H| counts every history (root, chance, decision and terminal nodes), |I| counts the
information sets at which each player acts, Δu is max - min utility of player 0, max |A|
is the largest number of legal actions at a decision node and depth the longest history.
"""

import dataclasses
import time

import pyspiel

from ggp_cr.algorithms.tree import tree_limits


@dataclasses.dataclass
class GameSize:
  """Sizes of a game tree; `infosets` has one count per player."""
  histories: int
  infosets: list
  utility_range: float
  max_actions: int
  max_depth: int
  seconds: float

  def as_dict(self):
    return dataclasses.asdict(self)


def game_size(game, progress_every=0, max_histories=None):
  """Walks the whole tree of `game` and returns its GameSize.

  Works for any sequential pyspiel game whose players provide information state
  strings; simultaneous-move games must first be converted with
  `pyspiel.load_game_as_turn_based`. If `progress_every` > 0, prints a progress line
  every that many histories. Past `max_histories` raises tree_limits.TreeTooLarge,
  before the walk or at tree_limits.CHECK_AFTER histories if the estimated size is far
  larger (tree_limits).
  """
  if game.get_type().dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
    raise ValueError(
        f"{game} is not sequential; convert it with pyspiel.load_game_as_turn_based.")
  start = time.time()
  if max_histories is not None:
    tree_limits.refuse_at_sight(game, max_histories)
  num_players = game.num_players()
  infosets = [set() for _ in range(num_players)]
  histories = 0
  max_actions = 0
  max_depth = 0
  min_utility = float("inf")
  max_utility = float("-inf")
  stack = [(game.new_initial_state(), 0)]
  while stack:
    state, depth = stack.pop()
    histories += 1
    if max_histories is not None and histories >= min(max_histories + 1,
                                                      tree_limits.CHECK_AFTER):
      if histories > max_histories:
        raise tree_limits.too_large(str(game), max_histories, max_histories)
      if histories == tree_limits.CHECK_AFTER:
        tree_limits.refuse_if_far_larger(game, max_histories)
    if progress_every and histories % progress_every == 0:
      print(f"  ... {histories:,} histories after {time.time() - start:.1f} s", flush=True)
    max_depth = max(max_depth, depth)
    if state.is_terminal():
      u = state.returns()[0]
      min_utility = min(min_utility, u)
      max_utility = max(max_utility, u)
      continue
    if state.is_chance_node():
      actions = [a for a, _ in state.chance_outcomes()]
    else:
      player = state.current_player()
      infosets[player].add(state.information_state_string(player))
      actions = state.legal_actions()
      max_actions = max(max_actions, len(actions))
    for action in actions:
      stack.append((state.child(action), depth + 1))
  return GameSize(
      histories=histories,
      infosets=[len(s) for s in infosets],
      utility_range=max_utility - min_utility,
      max_actions=max_actions,
      max_depth=max_depth,
      seconds=time.time() - start)
