"""Which games continual resolving takes, and where a history stands ([S] ch. 2).

The tracking states of a history relative to the bot's current subgame (CFRPlayground's
CFRDTracker) and the check that a game is two-player zero-sum with perfect recall.
"""

import numba
import numpy as np
import pyspiel

from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import perfect_recall

_CHANCE = int(pyspiel.PlayerId.CHANCE)

# Tracking states along a history of the solved game ([S] ch. 2; CFRPlayground's
# CFRDTracker): before the bot's first turn in the current subgame, after it, after a
# next subgame root where the opponent acts, and at or below the bot's next turn in a
# different subgame.
FIRST, CURRENT, AFTER_ROOT, END = 0, 1, 2, 3


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


# The same rule inside kernels, inlined (a call per child cost a fifth of a trace).
advance_compiled = numba.njit(cache=True, inline="always")(advance)


def transition_table(player, player_ids=range(-4, 2)):
  """`advance` as a table for kernels that take it as an argument (sampling's
  bounded playouts): [track, parent player + 4, child player + 4] -> next track, for
  the player ids -4..1."""
  ids = list(player_ids)
  table = np.zeros((4, len(ids), len(ids)), np.int8)
  for track in (FIRST, CURRENT, AFTER_ROOT, END):
    for i, parent in enumerate(ids):
      for j, child in enumerate(ids):
        table[track, i, j] = advance(track, parent, child, player)[0]
  return table


# `transition_table` of each player, made once (constants: a sampler's setup reads
# them, nothing writes them).
TRANSITION_TABLES = (transition_table(0), transition_table(1))


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
    track, _ = advance_compiled(track, parent_player, child_player, player)
    tracks[node] = track
  return tracks


# --- Which games ----------------------------------------------------------------------


def check_game(game):
  """Raises ValueError, saying why, unless continual resolving can play `game`: the
  game checks of compiled_tree.check_game, then the bounded perfect-recall check of
  perfect_recall.py (a game that passed is not checked again in this process)."""
  if not isinstance(game, pyspiel.Game):
    raise ValueError(f"game must be a pyspiel game, got {type(game).__name__}.")
  try:
    compiled_tree.check_game(game)
  except ValueError as error:
    raise ValueError(f"Continual resolving cannot play {game}: {error}") from None
  perfect_recall.check_perfect_recall(game, "Continual resolving")
