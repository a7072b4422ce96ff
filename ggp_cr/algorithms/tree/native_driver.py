"""The breadth-first driver shared by the native extractors of games with chance (its
count by python_latent_ttt's too), and the game rules native_next_decisions walks
(python_princess_monster's and python_latent_ttt's too).

Spec README.md, architecture principle 2; see native_extraction.py. A game supplies
`children(state, player, params, out_state, out_player, out_utility, out_prob,
out_action)`, expanding a node whose state is one int64, and `seen(mover, node, state,
player, parent, infoset, action_index, infoset_action_offset, infoset_actions, params)`,
what `mover` observed since its own previous decision (at a node where it acts, or where
the other player acts: its information state there, see `other_identities`); `params` is an int64 array. Numba cannot
cache functions taking functions, so the games are dispatched here by number.
"""

import numba
from numba import types
import numpy as np

from ggp_cr.algorithms.tree import native_extraction
from ggp_cr.algorithms.tree import native_ii_goofspiel
from ggp_cr.algorithms.tree import native_latent_ttt
from ggp_cr.algorithms.tree import native_leduc
from ggp_cr.algorithms.tree import native_princess_monster

_TERMINAL, _CHANCE = native_extraction.TERMINAL, native_extraction.CHANCE
LEDUC, II_GOOFSPIEL, PRINCESS_MONSTER, LATENT_TTT = 0, 1, 2, 3
_IDENTITY = types.UniTuple(types.int64, 3)  # (player, previous own slot, seen)


@numba.njit(cache=True, inline="always")
def expand(game, state, player, params, out_state, out_player, out_utility, out_prob,
           out_action):
  """The game's `children` of a node (the game by its number here; inlined, latent
  TTT's first: docs/algorithms/tree.md)."""
  if game == LATENT_TTT:
    return native_latent_ttt.children(state, player, params, out_state, out_player,
                                      out_utility, out_prob, out_action)
  if game == LEDUC:
    return native_leduc.children(state, player, params, out_state, out_player,
                                 out_utility, out_prob, out_action)
  if game == PRINCESS_MONSTER:
    return native_princess_monster.children(state, player, params, out_state,
                                            out_player, out_utility, out_prob,
                                            out_action)
  return native_ii_goofspiel.children(state, player, params, out_state, out_player,
                                      out_utility, out_prob, out_action)


@numba.njit(cache=True)
def seen_since(game, mover, node, state, player, parent, infoset, action_index,
               inf_offset, inf_actions, params):
  """The game's `seen` (the game by its number here)."""
  if game == LEDUC:
    return native_leduc.seen(mover, node, state, player, parent, infoset, action_index,
                             inf_offset, inf_actions, params)
  if game == PRINCESS_MONSTER:
    return native_princess_monster.seen(mover, node, state, player, parent, infoset,
                                        action_index, inf_offset, inf_actions, params)
  if game == LATENT_TTT:
    return native_latent_ttt.seen(mover, node, state, player, parent, infoset,
                                  action_index, inf_offset, inf_actions, params)
  return native_ii_goofspiel.seen(mover, node, state, player, parent, infoset,
                                  action_index, inf_offset, inf_actions, params)


@numba.njit(cache=True)
def count(game, root_state, root_player, params, max_children, max_depth, limit):
  """Histories below a root, by a depth-first walk that stops once it passes `limit`
  (then returns at most `limit` + max_children)."""
  state = np.zeros((max_depth + 1, max_children), np.int64)
  player = np.zeros((max_depth + 1, max_children), np.int64)
  utility = np.zeros(max_children)
  prob = np.zeros(max_children)
  action = np.zeros(max_children, np.int64)
  num = np.zeros(max_depth + 1, np.int64)
  position = np.zeros(max_depth + 1, np.int64)
  num[0] = expand(game, root_state, root_player, params, state[0], player[0], utility,
                  prob, action)
  num_nodes, top = 1 + num[0], 0
  while top >= 0 and num_nodes <= limit:
    i = position[top]
    if i == num[top]:
      top -= 1
      continue
    position[top] = i + 1
    if player[top, i] == _TERMINAL:
      continue
    num[top + 1] = expand(game, state[top, i], player[top, i], params, state[top + 1],
                          player[top + 1], utility, prob, action)
    num_nodes += num[top + 1]
    top += 1
    position[top] = 0
  return num_nodes


@numba.njit(cache=True)
def fill(game, num_nodes, root_state, root_player, params, max_children, keep_states):
  """The breadth-first node arrays and the infoset arrays (but the keys).

  A node's state is needed until the node is expanded; unless `keep_states` (the
  game's `seen` reads the states of ancestors), it is held in the node's
  node_utility entry (0 at non-terminals) meanwhile, so no array of states is made.

  A node's information set is identified by the mover, its own previous slot and
  `seen_since`, what it observed since (an int64); a numba dict numbers
  the identities in breadth-first order. Returns the node arrays, node_chance_prob,
  the infoset arrays and each infoset's `seen`.
  """
  (player, infoset, parent, first_child, num_children, action_index, utility,
   depth) = native_extraction.node_arrays(num_nodes)
  chance_prob = np.empty(num_nodes, np.float64)
  state = np.empty(num_nodes, np.int64) if keep_states else utility.view(np.int64)
  capacity = 1024
  (inf_player, inf_num_actions, inf_offset, inf_actions, inf_parent_slot,
   inf_node) = native_extraction.infoset_arrays(capacity, capacity)
  inf_seen = np.empty(capacity, np.int64)
  lookup = numba.typed.Dict.empty(key_type=_IDENTITY, value_type=types.int64)
  out_state = np.empty(max_children, np.int64)
  out_player = np.empty(max_children, np.int64)
  out_utility = np.empty(max_children)
  out_prob = np.empty(max_children)
  out_action = np.empty(max_children, np.int64)
  player[0], parent[0], action_index[0], depth[0] = root_player, -1, -1, 0
  chance_prob[0], utility[0] = 1.0, 0.0
  state[0] = root_state
  free, num_inf, slot = 1, 0, 0
  for node in range(num_nodes):
    p = player[node]
    if p == _TERMINAL:
      infoset[node], first_child[node], num_children[node] = -1, 0, 0
      continue
    count = expand(game, state[node], p, params, out_state, out_player, out_utility,
                   out_prob, out_action)
    if p == _CHANCE:
      infoset[node] = -1
    else:
      observed = seen_since(game, p, node, state, player, parent, infoset,
                            action_index, inf_offset, inf_actions, params)
      previous = native_extraction.previous_slot(p, node, parent, player, infoset,
                                                 action_index, inf_offset)
      identity = (np.int64(p), np.int64(previous), observed)
      k = lookup.get(identity, -1)
      if k < 0:
        k = num_inf
        num_inf += 1
        lookup[identity] = k
        if k == len(inf_player):
          inf_player = native_extraction.grow(inf_player, k + 1)
          inf_num_actions = native_extraction.grow(inf_num_actions, k + 1)
          inf_offset = native_extraction.grow(inf_offset, k + 1)
          inf_parent_slot = native_extraction.grow(inf_parent_slot, k + 1)
          inf_node = native_extraction.grow(inf_node, k + 1)
          inf_seen = native_extraction.grow(inf_seen, k + 1)
        if slot + count > len(inf_actions):
          inf_actions = native_extraction.grow(inf_actions, slot + count)
        inf_player[k], inf_node[k], inf_offset[k], inf_parent_slot[k] = (
            p, node, slot, previous)
        inf_num_actions[k], inf_seen[k] = count, observed
        inf_actions[slot:slot + count] = out_action[:count]
        slot += count
      infoset[node] = k
    if not keep_states:
      utility[node] = 0.0
    first_child[node] = free
    num_children[node] = count
    for i in range(count):
      child = free + i
      player[child], utility[child], chance_prob[child] = (out_player[i], out_utility[i],
                                                           out_prob[i])
      if keep_states or out_player[i] != _TERMINAL:
        state[child] = out_state[i]
      parent[child], action_index[child], depth[child] = node, i, depth[node] + 1
    free += count
  infosets = native_extraction.trimmed_infosets(
      (inf_player, inf_num_actions, inf_offset, inf_actions, inf_parent_slot, inf_node),
      num_inf, slot)
  return ((player, infoset, parent, first_child, num_children, action_index, utility,
           depth) + infosets, chance_prob, inf_seen[:num_inf].copy())


@numba.njit(cache=True)
def node_states(game, root_state, params, player, first_child, num_children,
                max_children):
  """Every node's state, recomputed from a tree's breadth-first arrays (its nodes'
  children in the order of `expand`, as `fill` wrote them)."""
  num_nodes = len(player)
  state = np.empty(num_nodes, np.int64)
  out_state = np.empty(max_children, np.int64)
  out_player = np.empty(max_children, np.int64)
  out_utility = np.empty(max_children)
  out_prob = np.empty(max_children)
  out_action = np.empty(max_children, np.int64)
  state[0] = root_state
  for node in range(num_nodes):
    if player[node] == _TERMINAL:
      continue
    count = expand(game, state[node], player[node], params, out_state, out_player,
                   out_utility, out_prob, out_action)
    if count != num_children[node]:
      raise ValueError("The tree is not this game's: a node's children differ.")
    state[first_child[node]:first_child[node] + count] = out_state[:count]
  return state


@numba.njit(cache=True)
def other_identities(game, state, params, player, parent, infoset, action_index,
                     inf_player, inf_offset, inf_actions, inf_parent_slot, inf_node):
  """The information state of the player who does not act, at every decision node.

  It is identified as an information set is in `fill` (that player as the mover: its
  previous own slot and what it saw since), so it is the information set with that
  identity if the player has one, else an extra state numbered num_infosets + i in
  breadth-first order. Returns each node's key (-1 at chance and terminal nodes),
  each infoset's `seen` and each extra's player, previous slot and `seen`.
  """
  num_inf = len(inf_player)
  lookup = numba.typed.Dict.empty(key_type=_IDENTITY, value_type=types.int64)
  inf_seen = np.empty(num_inf, np.int64)
  for k in range(num_inf):
    inf_seen[k] = seen_since(game, inf_player[k], inf_node[k], state, player, parent,
                             infoset, action_index, inf_offset, inf_actions, params)
    lookup[(np.int64(inf_player[k]), np.int64(inf_parent_slot[k]), inf_seen[k])] = k
  other = np.full(len(player), -1, np.int32)
  capacity = 1024
  extra_player = np.empty(capacity, np.int8)
  extra_previous = np.empty(capacity, np.int32)
  extra_seen = np.empty(capacity, np.int64)
  num_extra = 0
  for node in range(len(player)):
    if player[node] < 0:
      continue
    mover = 1 - player[node]
    previous = native_extraction.previous_slot(mover, node, parent, player, infoset,
                                               action_index, inf_offset)
    observed = seen_since(game, mover, node, state, player, parent, infoset,
                          action_index, inf_offset, inf_actions, params)
    identity = (np.int64(mover), np.int64(previous), observed)
    k = lookup.get(identity, -1)
    if k < 0:
      k = num_inf + num_extra
      lookup[identity] = k
      if num_extra == len(extra_player):
        extra_player = native_extraction.grow(extra_player, num_extra + 1)
        extra_previous = native_extraction.grow(extra_previous, num_extra + 1)
        extra_seen = native_extraction.grow(extra_seen, num_extra + 1)
      extra_player[num_extra], extra_previous[num_extra] = mover, previous
      extra_seen[num_extra] = observed
      num_extra += 1
    other[node] = k
  return (other, inf_seen, extra_player[:num_extra].copy(),
          extra_previous[:num_extra].copy(), extra_seen[:num_extra].copy())


def tree_identities(game, tree, root_state, params, max_children):
  """`other_identities` of a game's CompiledTree (extracted by any route): each
  node's key of the player who does not act, each infoset's `seen`, and the extras'
  (players, previous slots, seens)."""
  state = node_states(game, root_state, params, tree.node_player, tree.node_first_child,
                      tree.node_num_children, max_children)
  other, inf_seen, *extra = other_identities(
      game, state, params, tree.node_player, tree.node_parent, tree.node_infoset,
      tree.node_action_index, tree.infoset_player, tree.infoset_action_offset,
      tree.infoset_actions, tree.infoset_parent_slot, tree.infoset_node)
  return other, inf_seen, extra
