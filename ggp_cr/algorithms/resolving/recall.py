"""Which games continual resolving takes, and where a history stands ([S] ch. 2).

The tracking states of a history relative to the bot's current subgame (CFRPlayground's
CFRDTracker) and the check that a game is two-player zero-sum with perfect recall.
"""

import numba
import numpy as np
import pyspiel

from ggp_cr.algorithms.tree import perfect_recall

_CHANCE = int(pyspiel.PlayerId.CHANCE)

# Tracking states along a history of the solved game ([S] ch. 2; CFRPlayground's
# CFRDTracker): before the bot's first turn in the current subgame, after it, after a
# next subgame root where the opponent acts, and at or below the bot's next turn in a
# different subgame.
FIRST, CURRENT, AFTER_ROOT, END = 0, 1, 2, 3

# Histories walked exhaustively by the perfect-recall check before it samples.
RECALL_CHECK_HISTORIES = perfect_recall.CHECK_HISTORIES
RECALL_CHECK_PLAYOUTS = perfect_recall.CHECK_PLAYOUTS
# Game strings that passed check_game with the default effort in this process.
_CHECKED_GAMES = set()


def advance(track, parent_player, child_player, player):
  """The tracking state of a child history and whether the child is a subgame root.

  A child is a root if both it and its parent are decision nodes of different
  players ([S] ch. 2).
  """
  is_root = (parent_player >= 0 and child_player >= 0 and
             parent_player != child_player)
  if track == FIRST:
    if child_player == player:
      track = CURRENT
  elif track == CURRENT:
    if is_root:
      track = END if child_player == player else AFTER_ROOT
  elif track == AFTER_ROOT:
    if child_player == player:
      track = END
  return track, is_root


_advance = numba.njit(cache=True)(advance)  # the same rule inside the kernel below


@numba.njit(cache=True)
def tracks(node_player, node_parent, player, initial):
  """`advance` over a compiled tree: the tracking state of every node."""
  num_nodes = len(node_player)
  tracks = np.empty(num_nodes, dtype=np.int8)
  tracks[0] = initial
  for node in range(1, num_nodes):
    parent_player = node_player[node_parent[node]]
    child_player = node_player[node]
    track = tracks[node_parent[node]]
    track, _ = _advance(track, parent_player, child_player, player)
    tracks[node] = track
  return tracks


# --- Which games ----------------------------------------------------------------------


def check_game(game, histories=RECALL_CHECK_HISTORIES, playouts=RECALL_CHECK_PLAYOUTS,
               seed=0):
  """Raises ValueError, saying why, unless continual resolving can play `game`.

  The game must have two players, be zero-sum (or constant-sum), sequential, have
  explicit chance and information state strings, and perfect recall. Perfect recall
  (every history of an information state has the same previous own information state
  and action, and the same legal actions, compiled_tree's criterion) is checked on
  the first `histories` histories in depth-first order and on `playouts` random
  playouts beyond them: exhaustively for small games, by sampling for large ones. A
  game that passed with the default effort is not checked again in this process.
  """
  if not isinstance(game, pyspiel.Game):
    raise ValueError(f"game must be a pyspiel game, got {type(game).__name__}.")
  default = (histories, playouts, seed) == (RECALL_CHECK_HISTORIES,
                                            RECALL_CHECK_PLAYOUTS, 0)
  if default and str(game) in _CHECKED_GAMES:
    return
  game_type = game.get_type()
  why = None
  if game.num_players() != 2:
    why = f"it has {game.num_players()} players; continual resolving needs two"
  elif game_type.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
    why = ("it has simultaneous moves; convert it with "
           "pyspiel.load_game_as_turn_based")
  elif game_type.utility not in (pyspiel.GameType.Utility.ZERO_SUM,
                                 pyspiel.GameType.Utility.CONSTANT_SUM):
    why = f"it is not zero-sum or constant-sum ({game_type.utility})"
  elif game_type.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
    why = "it has sampled chance; explicit chance outcomes are needed"
  elif not game_type.provides_information_state_string:
    why = "it provides no information state strings"
  else:
    why = perfect_recall.recall_violation(game, histories, playouts, seed)
  if why is not None:
    raise ValueError(f"Continual resolving cannot play {game}: {why}.")
  if default:
    _CHECKED_GAMES.add(str(game))
