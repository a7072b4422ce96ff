"""Native extraction of python_princess_monster ([S] §3.2.3), rules of
ggp_cr/games/princess_monster.py.

A node's state is both cells; the mover alternates with the depth. A player observes
nothing, so its information set is fixed by its own previous (infoset, action) slot:
the information sets are numbered through a slot -> next information set table.
"""

import numba
import numpy as np

from ggp_cr.algorithms.tree import native_extraction

_TERMINAL = -4


@numba.njit(cache=True)
def _count(neighbours, num_neighbours, start_monster, max_moves):
  """Histories, by a depth-first walk."""
  cells = np.zeros((max_moves + 1, 2), np.int64)
  next_index = np.zeros(max_moves + 1, np.int64)
  cells[0, 1] = start_monster
  num_nodes, top = 1, 0
  while top >= 0:
    p = top & 1
    own = cells[top, p]
    i = next_index[top]
    if i == num_neighbours[own]:
      top -= 1
      continue
    next_index[top] = i + 1
    num_nodes += 1
    other = cells[top, 1 - p]
    target = neighbours[own, i]
    if target == other or top + 1 == max_moves:
      continue
    top += 1
    cells[top, p], cells[top, 1 - p] = target, other
    next_index[top] = 0
  return num_nodes


@numba.njit(cache=True)
def _fill(num_nodes, neighbours, num_neighbours, start_monster, max_moves, names,
          name_lengths):
  """The node and infoset arrays, breadth-first, and the keys as bytes."""
  (player, infoset, parent, first_child, num_children, action_index, utility,
   depth) = native_extraction.node_arrays(num_nodes)
  utility[:] = 0.0
  cells = np.empty((num_nodes, 2), np.int32)
  # Infoset arrays sized for the worst case, trimmed by the caller.
  (inf_player, inf_num_actions, inf_offset, inf_actions, inf_parent_slot,
   inf_node) = native_extraction.infoset_arrays(num_nodes, num_nodes)
  next_infoset = np.full(num_nodes, -1, np.int32)  # own slot -> next own infoset
  first_infoset = np.full(2, -1, np.int32)
  player[0], parent[0], action_index[0], depth[0] = 0, -1, -1, 0
  cells[0, 0], cells[0, 1] = 0, start_monster
  free, num_inf, slot = 1, 0, 0
  for node in range(num_nodes):
    p = player[node]
    if p < 0:
      infoset[node], first_child[node], num_children[node] = -1, 0, 0
      continue
    own = cells[node, p]
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
      inf_num_actions[k] = num_neighbours[own]
      for i in range(num_neighbours[own]):
        inf_actions[slot + i] = neighbours[own, i]
      slot += num_neighbours[own]
    infoset[node] = k
    first_child[node] = free
    num_children[node] = num_neighbours[own]
    moves_left = max_moves - depth[node] - 1
    for i in range(num_neighbours[own]):
      child = free
      free += 1
      cells[child, p], cells[child, 1 - p] = neighbours[own, i], cells[node, 1 - p]
      if cells[child, 0] == cells[child, 1]:
        player[child] = _TERMINAL
        utility[child] = -moves_left
      elif moves_left == 0:
        player[child] = _TERMINAL
        utility[child] = max_moves
      else:
        player[child] = 1 - p
      parent[child] = node
      action_index[child] = i
      depth[child] = depth[node] + 1
  # Keys "p<player> moves:(r,c) (r,c) ...", once per infoset.
  keys = np.empty(num_inf * (10 + (max_moves // 2 + 1) * (names.shape[1] + 1)),
                  np.uint8)
  history = np.empty(max_moves + 1, np.int64)
  prefix = np.array([112, 48, 32, 109, 111, 118, 101, 115, 58], np.uint8)  # "p0 moves:"
  length = 0
  for k in range(num_inf):
    node = inf_node[k]
    native_extraction.history_of(node, parent, depth, infoset, action_index, inf_offset,
                                 inf_actions, history)
    length = native_extraction.start_key(keys, length, k)
    p = inf_player[k]
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
  return (player, infoset, parent, first_child, num_children, action_index, utility,
          depth, inf_player[:num_inf].copy(), inf_num_actions[:num_inf].copy(),
          inf_offset[:num_inf].copy(), inf_actions[:slot].copy(),
          inf_parent_slot[:num_inf].copy(), inf_node[:num_inf].copy(), keys, length)


@native_extraction.register("python_princess_monster")
def extract(game):
  """The CompiledTree of python_princess_monster, any max_turns, rows and cols."""
  num_cells = game.num_cells
  neighbours = np.zeros((num_cells, 4), np.int64)
  num_neighbours = np.zeros(num_cells, np.int64)
  for cell, targets in enumerate(game.neighbours):
    neighbours[cell, :len(targets)] = targets
    num_neighbours[cell] = len(targets)
  encoded = [name.encode("ascii") for name in game.cell_names]
  names = np.zeros((num_cells, max(map(len, encoded))), np.uint8)
  for cell, name in enumerate(encoded):
    names[cell, :len(name)] = np.frombuffer(name, np.uint8)
  name_lengths = np.array([len(name) for name in encoded], np.int64)
  max_moves = 2 * game.max_turns
  start_monster = num_cells - 1
  num_nodes = _count(neighbours, num_neighbours, start_monster, max_moves)
  filled = _fill(num_nodes, neighbours, num_neighbours, start_monster, max_moves, names,
                 name_lengths)
  return native_extraction.tree_from_filled(game, filled)
