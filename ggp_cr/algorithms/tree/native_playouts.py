"""Uniform random playouts on native_driver's state encoding ([S] §3.3.2's
RandomPlayout): python_ii_goofspiel, python_leduc, python_princess_monster,
python_latent_ttt (native_next_decisions.supports).

`mean_returns` replays each history natively and plays it out `playouts` times,
chance by its probabilities and every player uniformly over its legal actions,
seeded; subgame_tree.playout_returns on pyspiel states is the reference
(tests/resolving/live/test_subgame_tree.py).
"""

import numba
import numpy as np

from ggp_cr.algorithms.tree import native_driver
from ggp_cr.algorithms.tree import native_extraction
from ggp_cr.algorithms.tree import native_next_decisions

_TERMINAL, _CHANCE = native_extraction.TERMINAL, native_extraction.CHANCE

supports = native_next_decisions.supports


@numba.njit(cache=True)
def _mean_returns(game, root_state, root_player, params, max_children, rows, lengths,
                  playouts, seed):
  """Player 0's mean return of `playouts` playouts below each history
  rows[k, :lengths[k]]."""
  np.random.seed(seed)
  out_state = np.empty(max_children, np.int64)
  out_player = np.empty(max_children, np.int64)
  out_utility = np.empty(max_children)
  out_prob = np.empty(max_children)
  out_action = np.empty(max_children, np.int64)
  means = np.empty(len(lengths))
  for k in range(len(lengths)):
    start, start_player = native_next_decisions.replay(
        game, root_state, root_player, params, rows[k], lengths[k], out_state,
        out_player, out_utility, out_prob, out_action)
    total = 0.0
    for _ in range(playouts):
      state, player, utility = start, start_player, 0.0
      while player != _TERMINAL:
        count = native_driver.expand(game, state, player, params, out_state,
                                     out_player, out_utility, out_prob, out_action)
        if player == _CHANCE:
          draw, chosen = np.random.random(), -1
          for i in range(count):
            if out_prob[i] > 0:
              chosen = i
              draw -= out_prob[i]
              if draw < 0:
                break
        else:
          chosen = np.random.randint(count)
        state, player = out_state[chosen], out_player[chosen]
        utility = out_utility[chosen]
      total += utility
    means[k] = total / playouts
  return means


def mean_returns(game, histories, playouts, seed):
  """Player 0's mean return of `playouts` uniform random playouts below each of
  `histories` (action lists from the root of `game`, none terminal; a game
  `supports` takes), seeded by `seed` (any numpy seed). Our native games are zero-sum: player 1's
  is its negation."""
  number, params, root_state, root_player, max_children = (
      native_next_decisions.driver(game))
  rows, lengths = native_next_decisions.history_rows(histories)
  stream = np.random.default_rng(seed).integers(2**32)  # (numba's seed is 32-bit)
  return _mean_returns(number, root_state, root_player, params, max_children, rows,
                       lengths, np.int64(playouts), np.int64(stream))


def warm_up(game):
  """Loads the kernel (a player's process warm-up, before any clock) on `game`, a
  small game `supports` takes."""
  mean_returns(game, [[]], 1, 0)
