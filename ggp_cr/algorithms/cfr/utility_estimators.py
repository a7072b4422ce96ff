"""Utility estimators for depth-limited CFR ([S] §3.3.2, §5.2.3, App. A.5).

Below its depth limit, depth-limited CFR asks an estimator for a history's utility
instead of recursing. In general game playing no game-specific evaluation function is
available, so the thesis offers one general estimator, RandomPlayoutUtilityEstimator:
the mean utility of N uniformly random playouts from the history (chance plays by its
distribution). Here it runs on the compiled tree with its own seeded random stream, so
the same seed gives the same estimates regardless of what else runs in the process.
"""

import numba
import numpy as np

from ggp_cr.algorithms.config import components

_GOLDEN_GAMMA = np.uint64(0x9E3779B97F4A7C15)


@numba.njit(cache=True)
def _next_uniform(rng_state):
  """SplitMix64 step on rng_state[0]; returns a double in [0, 1)."""
  rng_state[0] += _GOLDEN_GAMMA
  z = rng_state[0]
  z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
  z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
  z = z ^ (z >> np.uint64(31))
  return (z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@numba.njit(cache=True)
def random_playouts(nodes, num_playouts, node_player, node_first_child,
                    node_num_children, node_chance_prob, node_utility, rng_state, out):
  """out[i] = mean player-0 utility of `num_playouts` playouts from nodes[i].

  Decision nodes pick a child uniformly, chance nodes by their probabilities.
  Returns the number of histories entered below the start nodes.
  """
  visited = 0
  for i in range(len(nodes)):
    total = 0.0
    for _ in range(num_playouts):
      node = nodes[i]
      while node_num_children[node] > 0:
        first = node_first_child[node]
        count = node_num_children[node]
        if node_player[node] >= 0:
          child = first + min(int(_next_uniform(rng_state) * count), count - 1)
        else:
          threshold = _next_uniform(rng_state)
          child = first + count - 1
          cumulative = 0.0
          for c in range(first, first + count - 1):
            cumulative += node_chance_prob[c]
            if threshold < cumulative:
              child = c
              break
        node = child
        visited += 1
      total += node_utility[node]
    out[i] = total / num_playouts
  return visited


class RandomPlayout:
  """RandomPlayout{n}: mean player-0 utility of n uniform random playouts ([S] §3.3.2).

  Every call draws fresh playouts, as the thesis's estimator does on every visit.
  `rng_state` (a one-element uint64 array) is its random stream's state.
  """

  def __init__(self, num_playouts=1, seed=0):
    if isinstance(num_playouts, bool) or not isinstance(num_playouts, (int, np.integer)) \
        or num_playouts < 1:
      raise ValueError(f"num_playouts must be an integer >= 1, got {num_playouts!r}.")
    self.num_playouts = int(num_playouts)
    self.seed = int(seed)
    self.rng_state = np.array([self.seed % 2**64], dtype=np.uint64)

  def __repr__(self):
    return f"RandomPlayout({self.num_playouts}, seed={self.seed})"

  def estimate(self, tree, nodes, out):
    """Writes the estimates of tree nodes `nodes` into `out`; returns histories visited."""
    return random_playouts(nodes, self.num_playouts, tree.node_player,
                           tree.node_first_child, tree.node_num_children,
                           tree.node_chance_prob, tree.node_utility, self.rng_state,
                           out)


def parse_utility_estimator(spec, seed=0):
  """Parses ``randomplayout(n)`` (or the thesis's ``RandomPlayout{n}``; config.components)."""
  return RandomPlayout(components.parse_playouts(spec), seed=seed)
