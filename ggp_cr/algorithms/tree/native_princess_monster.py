"""Native extraction of python_princess_monster ([S] §3.2.3): the rules of
ggp_cr/games/princess_monster.py written once, as the `children` that native_driver.py
walks and that the extraction's count and fill call.

A state packs both cells and the moves left in one int64; the mover alternates with
the depth. A player observes nothing (`seen` is constant), so its information set is
fixed by its own previous (infoset, action) slot: the extraction numbers them through
a slot -> next information set table.
"""

import numba
from numba import types
import numpy as np

from ggp_cr.algorithms.tree import native_extraction
from ggp_cr.algorithms.tree import tree_limits

_TERMINAL = native_extraction.TERMINAL
_CELL_BITS = 9  # a cell in 9 bits: the game's grids have at most 400 cells
_CELL_MASK = (1 << _CELL_BITS) - 1
_MONSTER, _LEFT = _CELL_BITS, 2 * _CELL_BITS  # the state's fields' first bits
_MOST_CHILDREN = 4  # a cell has at most 4 neighbours


@numba.njit(cache=True, inline="always")
def _outcome(princess, monster, moves_left, max_moves):
  """(whether a history is terminal, the princess's utility there) after a move that
  leaves `moves_left` moves: a capture pays -moves_left, surviving all max_moves
  pays max_moves."""
  if princess == monster:
    return True, float(-moves_left)
  if moves_left == 0:
    return True, float(max_moves)
  return False, 0.0


@numba.njit(cache=True)
def _count(params, root_state, limit):
  """Histories (at most `limit` + 1), a level of `children` at a time: a history's
  subtree is its state's, so each level holds its distinct states with the number of
  histories reaching each."""
  out_state = np.empty(_MOST_CHILDREN, np.int64)
  out_player = np.empty(_MOST_CHILDREN, np.int64)
  out_utility, out_prob = np.empty(_MOST_CHILDREN), np.empty(_MOST_CHILDREN)
  out_action = np.empty(_MOST_CHILDREN, np.int64)
  level = numba.typed.Dict.empty(key_type=types.int64, value_type=types.int64)
  level[root_state] = 1
  num_nodes, player = 1, 0  # the mover alternates with the depth
  while len(level) and num_nodes <= limit:
    below = numba.typed.Dict.empty(key_type=types.int64, value_type=types.int64)
    for state, histories in level.items():
      count = children(state, player, params, out_state, out_player, out_utility,
                       out_prob, out_action)
      for i in range(count):
        if histories > limit - num_nodes:
          return limit + 1
        num_nodes += histories
        if out_player[i] != _TERMINAL:
          below[out_state[i]] = below.get(out_state[i], 0) + histories
    level, player = below, 1 - player
  return num_nodes


@numba.njit(cache=True)
def _fill(num_nodes, params, root_state, names, name_lengths):
  """The node and infoset arrays, breadth-first, each node expanded by `children`,
  a player's information set found from its previous own slot (a slot -> next
  information set table), and the keys as bytes."""
  nodes = native_extraction.node_arrays(num_nodes)
  (player, infoset, parent, first_child, num_children, action_index, utility,
   depth) = nodes
  state = np.empty(num_nodes, np.int64)
  # Infoset arrays sized for the worst case, trimmed at the end.
  infosets = native_extraction.infoset_arrays(num_nodes, num_nodes)
  (inf_player, inf_num_actions, inf_offset, inf_actions, inf_parent_slot,
   inf_node) = infosets
  next_infoset = np.full(num_nodes, -1, np.int32)  # own slot -> next own infoset
  first_infoset = np.full(2, -1, np.int32)
  out_state = np.empty(_MOST_CHILDREN, np.int64)
  out_player = np.empty(_MOST_CHILDREN, np.int64)
  out_utility, out_prob = np.empty(_MOST_CHILDREN), np.empty(_MOST_CHILDREN)
  out_action = np.empty(_MOST_CHILDREN, np.int64)
  player[0], parent[0], action_index[0], depth[0], utility[0] = 0, -1, -1, 0, 0.0
  state[0] = root_state
  free, num_inf, slot = 1, 0, 0
  for node in range(num_nodes):
    p = player[node]
    if p < 0:
      infoset[node], first_child[node], num_children[node] = -1, 0, 0
      continue
    count = children(state[node], p, params, out_state, out_player, out_utility,
                     out_prob, out_action)
    if depth[node] >= 2:
      up = parent[node]
      previous = inf_offset[infoset[parent[up]]] + action_index[up]
      k = next_infoset[previous]
    else:
      previous = -1
      k = first_infoset[p]
    if k < 0:
      k = num_inf
      num_inf += 1
      if previous >= 0:
        next_infoset[previous] = k
      else:
        first_infoset[p] = k
      inf_player[k], inf_node[k], inf_offset[k], inf_parent_slot[k] = (
          p, node, slot, previous)
      inf_num_actions[k] = count
      inf_actions[slot:slot + count] = out_action[:count]
      slot += count
    infoset[node] = k
    free = native_extraction.append_children(
        node, free, count, out_player, out_utility, out_state, player, utility, state,
        parent, first_child, num_children, action_index, depth)
  keys, length = _write_keys(inf_player[:num_inf], inf_node[:num_inf], parent, depth,
                             infoset, action_index, inf_offset, inf_actions, names,
                             name_lengths, params[0])
  return (nodes + native_extraction.trimmed_infosets(infosets, num_inf, slot)
          + (keys, length))


@numba.njit(cache=True)
def _write_keys(players, nodes, parent, depth, infoset, action_index, inf_offset,
                inf_actions, names, name_lengths, max_moves):
  """Keys "p<player> moves:(r,c) (r,c) ...": the moves of players[i] on the path to
  nodes[i] (where it acts, or where the other player does), as bytes."""
  keys = np.empty(len(players) * (10 + (max_moves // 2 + 1) * (names.shape[1] + 1)),
                  np.uint8)
  history = np.empty(max_moves + 1, np.int64)
  prefix = np.array([112, 48, 32, 109, 111, 118, 101, 115, 58], np.uint8)  # "p0 moves:"
  length = 0
  for k in range(len(players)):
    node = nodes[k]
    native_extraction.history_of(node, parent, depth, infoset, action_index, inf_offset,
                                 inf_actions, history)
    length = native_extraction.start_key(keys, length, k)
    p = players[k]
    for i in range(len(prefix)):
      keys[length + i] = prefix[i]
    keys[length + 1] += p
    length += len(prefix)
    for i in range(p, depth[node], 2):
      if i != p:
        keys[length] = 32
        length += 1
      cell = history[i]
      for j in range(name_lengths[cell]):
        keys[length + j] = names[cell, j]
      length += name_lengths[cell]
  return keys, length


@numba.njit(cache=True)
def _other_keys(player, parent, infoset, action_index, inf_player, inf_offset,
                inf_parent_slot, num_slots):
  """The key of the player who does not act at each decision node: its information
  set (fixed by its previous own slot, the parent's, as in `_fill`) if it has one,
  else an extra key; and each extra's player and first node."""
  num_inf = len(inf_player)
  next_key = np.full(num_slots, -1, np.int64)  # own slot -> next own key
  first_key = np.full(2, -1, np.int64)
  for k in range(num_inf):
    if inf_parent_slot[k] >= 0:
      next_key[inf_parent_slot[k]] = k
    else:
      first_key[inf_player[k]] = k
  other, extra_player, extra_node = native_extraction.other_key_arrays(len(player))
  num_extra = 0
  for node in range(len(player)):
    if player[node] < 0:
      continue
    mover = 1 - player[node]
    up = parent[node]
    previous = inf_offset[infoset[up]] + action_index[node] if up >= 0 else -1
    k = next_key[previous] if previous >= 0 else first_key[mover]
    if k < 0:
      k = num_inf + num_extra
      if previous >= 0:
        next_key[previous] = k
      else:
        first_key[mover] = k
      extra_player[num_extra], extra_node[num_extra] = mover, node
      num_extra += 1
    other[node] = k
  return other, extra_player[:num_extra].copy(), extra_node[:num_extra].copy()


@numba.njit(cache=True, inline="always")
def children(state, player, params, out_state, out_player, out_utility, out_prob,
             out_action):
  """The game's rules: the children of a node in the order of its actions (the target
  cells, ascending); returns their number. params: max_moves, num_cells, each cell's
  number of neighbours, then its 4 neighbour slots."""
  max_moves, num_cells = params[0], params[1]
  princess, monster = state & _CELL_MASK, state >> _MONSTER & _CELL_MASK
  moves_left = (state >> _LEFT) - 1
  own = monster if player else princess
  for i in range(params[2 + own]):
    target = params[2 + num_cells + 4 * own + i]
    if player:
      monster = target
    else:
      princess = target
    out_state[i] = princess | monster << _MONSTER | moves_left << _LEFT
    out_action[i], out_prob[i] = target, 1.0
    over, out_utility[i] = _outcome(princess, monster, moves_left, max_moves)
    out_player[i] = _TERMINAL if over else 1 - player
  return params[2 + own]


@numba.njit(cache=True)
def seen(mover, node, state, player, parent, infoset, action_index, inf_offset,
         inf_actions, params):
  """What `mover` observed since its previous decision: nothing, 0 (its previous
  own slot alone fixes its information set)."""
  return 0


def supports(game):
  """Every python_princess_monster: its grids' cells fit the state's 9-bit fields."""
  return game.num_cells <= _CELL_MASK + 1


def driver_setup(game):
  """native_driver's params, root state, root player and most children of a node
  (native_next_decisions)."""
  neighbours, num_neighbours = _neighbours(game)
  max_moves = 2 * game.max_turns
  params = np.concatenate([[max_moves, game.num_cells], num_neighbours,
                           neighbours.reshape(-1)]).astype(np.int64)
  root_state = (game.num_cells - 1) << _MONSTER | max_moves << _LEFT
  return params, np.int64(root_state), 0, _MOST_CHILDREN


def _neighbours(game):
  """Each cell's neighbours (padded to _MOST_CHILDREN) and their number."""
  num_cells = game.num_cells
  neighbours = np.zeros((num_cells, _MOST_CHILDREN), np.int64)
  num_neighbours = np.zeros(num_cells, np.int64)
  for cell, targets in enumerate(game.neighbours):
    neighbours[cell, :len(targets)] = targets
    num_neighbours[cell] = len(targets)
  return neighbours, num_neighbours


@native_extraction.register("python_princess_monster")
def extract(game, max_nodes=None):
  """The CompiledTree of python_princess_monster, any max_turns, rows and cols;
  TreeTooLarge past `max_nodes` histories, before the tree is allocated."""
  params, root_state, _, _ = driver_setup(game)
  names, name_lengths = native_extraction.name_table(game.cell_names)
  num_nodes = tree_limits.checked_count(
      game, lambda cap: _count(params, root_state, cap), max_nodes)
  return native_extraction.tree_from_filled(
      game, _fill(num_nodes, params, root_state, names, name_lengths))


@native_extraction.register_state_keys("python_princess_monster")
def state_keys(tree):
  """The non-acting player's keys and extra strings (native_extraction.state_keys):
  a player observes nothing, so where the other player moves it is in the information
  set its last own move leads to, if it has one (its string is its own moves)."""
  other, extra_player, extra_node = _other_keys(
      tree.node_player, tree.node_parent, tree.node_infoset, tree.node_action_index,
      tree.infoset_player, tree.infoset_action_offset, tree.infoset_parent_slot,
      len(tree.infoset_actions))
  names, name_lengths = native_extraction.name_table(tree.game.cell_names)
  keys, length = _write_keys(extra_player, extra_node, tree.node_parent,
                             tree.node_depth, tree.node_infoset, tree.node_action_index,
                             tree.infoset_action_offset, tree.infoset_actions, names,
                             name_lengths, 2 * tree.game.max_turns)
  return other, native_extraction.decode_keys(keys, length)
