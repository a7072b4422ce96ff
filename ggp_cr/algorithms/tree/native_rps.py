"""Native extraction of python_rps(n) ([S] §3.2), rules of ggp_cr/games/rps.py.

Player 0 picks (one information set "p0"), player 1 picks without seeing it (one
information set "p1"), then n * n terminals; built with numpy.
"""

import numpy as np

from ggp_cr.algorithms.tree import native_extraction
from ggp_cr.algorithms.tree import tree_limits
from ggp_cr.games import rps


@native_extraction.register("python_rps")
def extract(game, max_nodes=None):
  """The CompiledTree of python_rps(n), any odd n >= 1; TreeTooLarge past
  `max_nodes` histories, before the tree is allocated."""
  n = game.n
  num_nodes = tree_limits.checked_count(game, lambda cap: 1 + n + n * n, max_nodes)
  picks = np.arange(n)
  player = np.full(num_nodes, -4, np.int8)
  player[0], player[1:n + 1] = 0, 1
  infoset = np.full(num_nodes, -1, np.int32)
  infoset[0], infoset[1:n + 1] = 0, 1
  parent = np.empty(num_nodes, np.int32)
  parent[0], parent[1:n + 1] = -1, 0
  parent[n + 1:] = np.repeat(np.arange(1, n + 1, dtype=np.int32), n)
  first_child = np.zeros(num_nodes, np.int32)
  first_child[0] = 1
  first_child[1:n + 1] = n + 1 + n * picks
  num_children = np.zeros(num_nodes, np.int16)
  num_children[:n + 1] = n
  action_index = np.empty(num_nodes, np.int16)
  action_index[0], action_index[1:n + 1] = -1, picks
  action_index[n + 1:] = np.tile(picks, n)
  utility = np.zeros(num_nodes)
  utility[n + 1:] = [rps.winner(n, i + 1, j + 1) for i in range(n) for j in range(n)]
  depth = np.full(num_nodes, 2, np.int16)
  depth[0], depth[1:n + 1] = 0, 1
  nodes = {"node_player": player, "node_infoset": infoset, "node_parent": parent,
           "node_first_child": first_child, "node_num_children": num_children,
           "node_action_index": action_index, "node_chance_prob": np.ones(num_nodes),
           "node_utility": utility, "node_depth": depth}
  infosets = {"infoset_player": np.array([0, 1], np.int8),
              "infoset_num_actions": np.array([n, n], np.int16),
              "infoset_action_offset": np.array([0, n], np.int32),
              "infoset_actions": np.tile(picks, 2).astype(np.int32),
              "infoset_parent_slot": np.array([-1, -1], np.int32),
              "infoset_node": np.array([0, 1], np.int32)}
  return native_extraction.build_tree(game, nodes, infosets, ["p0", "p1"])


@native_extraction.register_state_keys("python_rps")
def state_keys(tree):
  """The non-acting player's keys and extra strings (native_extraction.state_keys):
  player 1 at the root is in its one information set "p1"; player 0 where player 1
  picks has seen its own pick, "p0 pick:<k>" (extra key 2 + pick)."""
  n = tree.game.n
  other = np.full(tree.num_nodes, -1, np.int32)
  other[0] = 1
  other[1:n + 1] = 2 + np.arange(n)
  return other, [f"p0 pick:{pick + 1}" for pick in range(n)]
