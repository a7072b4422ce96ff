"""Native extraction of python_latent_ttt ([S] §3.2.4), rules of ggp_cr/games/latent_ttt.py,
and its rules as native_driver.py walks them.

A node's state is the two packed views of the game's state class. A player's
information state is its own moves with the move revealed at each, i.e. the whole
history but the opponent's last move: the decision children of one node form one
information set, and distinct nodes give distinct information sets. For
native_driver (native_next_decisions), a state packs both views and the cell each
player saw revealed at its last move, its `seen`.
"""

import numba
import numpy as np

from ggp_cr.algorithms.tree import native_extraction
from ggp_cr.algorithms.tree import tree_limits
from ggp_cr.games import latent_ttt

_CELLS = 9
_ALL = (1 << _CELLS) - 1
_TERMINAL = -4
_HAS_LINE = np.array(latent_ttt._HAS_LINE, dtype=np.bool_)  # pylint: disable=protected-access
_POPCOUNT = np.array([bin(m).count("1") for m in range(1 << _CELLS)], dtype=np.int64)
_KEY_BYTES = 3 + 4 * latent_ttt._MAX_MOVES_PER_PLAYER  # pylint: disable=protected-access
# native_driver's state: view0 in bits 0-25, view1 in 26-51, the cell player 0 and 1
# saw revealed at its last move + 1 (0: none) in bits 52-55 and 56-59.
_VIEW_BITS = 26
_VIEW_MASK = (1 << _VIEW_BITS) - 1
_REVEALED = 2 * _VIEW_BITS


@numba.njit(cache=True)
def _play(own, other, action):
  """The mover's view after marking `action` (the game's `_apply_action`)."""
  mine = own & _ALL
  enemy = own >> 9 & _ALL
  enemy_count = own >> 18 & 15
  known = mine | enemy
  revealed = (other >> 22) - 1
  if revealed != -1 and not known >> revealed & 1:
    enemy |= 1 << revealed
    enemy_count += 1
  mine |= 1 << action
  enemy &= ~(1 << action)
  return mine | enemy << 9 | enemy_count << 18 | (action + 1) << 22


@numba.njit(cache=True)
def _no_legal_move(view, popcount):
  return (popcount[view & _ALL] + (view >> 18 & 15) + (1 if view >> 22 > 0 else 0)
          >= _CELLS)


@numba.njit(cache=True)
def _outcome(view0, view1, next_player, has_line, popcount):
  """(terminal?, player 0's utility) with `next_player` to move (the game's test)."""
  x_line = has_line[view0 & _ALL]
  o_line = has_line[view1 & _ALL]
  over = (_no_legal_move(view0, popcount) or _no_legal_move(view1, popcount) or o_line
          or (next_player == 0 and x_line))
  if not over or x_line == o_line:
    return over, 0.0
  return True, 1.0 if x_line else -1.0


@numba.njit(cache=True, inline="always")
def children(state, player, params, out_state, out_player, out_utility, out_prob,
             out_action):
  """native_driver's children of a node in the order of its actions (the cells its
  mover does not know, ascending); returns their number (params: unused)."""
  view0, view1 = state & _VIEW_MASK, state >> _VIEW_BITS & _VIEW_MASK
  own, other = (view1, view0) if player else (view0, view1)
  known = (own | own >> 9) & _ALL
  revealed = other >> 22  # (the cell + 1; 0: none)
  shift = _REVEALED + 4 * player
  kept = state >> _REVEALED & ~(15 << 4 * player)  # (the other player's field)
  count = 0
  for a in range(_CELLS):
    if known >> a & 1:
      continue
    v0, v1 = view0, view1
    if player:
      v1 = _play(v1, v0, a)
    else:
      v0 = _play(v0, v1, a)
    over, utility = _outcome(v0, v1, 1 - player, _HAS_LINE, _POPCOUNT)
    out_state[count] = (v0 | v1 << _VIEW_BITS | kept << _REVEALED
                        | revealed << shift)
    out_player[count] = _TERMINAL if over else 1 - player
    out_utility[count], out_prob[count], out_action[count] = utility, 1.0, a
    count += 1
  return count


@numba.njit(cache=True)
def seen(mover, node, state, player, parent, infoset, action_index, inf_offset,
         inf_actions, params):
  """What `mover` observed since its previous decision: the opponent's move revealed
  at its own last move (+ 1; 0: none)."""
  return state[node] >> (_REVEALED + 4 * mover) & 15


def supports(game):
  """Every python_latent_ttt (the game has no parameters)."""
  del game
  return True


def driver_setup(game):
  """native_driver's params, root state, root player and most children of a node
  (native_next_decisions)."""
  del game
  return np.zeros(1, np.int64), np.int64(0), 0, _CELLS


@numba.njit(cache=True)
def _count(has_line, popcount, limit):
  """(histories, information sets, slots) by a depth-first walk that stops once the
  histories pass `limit`."""
  view0 = np.zeros(12, np.int64)
  view1 = np.zeros(12, np.int64)
  player = np.zeros(12, np.int64)
  next_action = np.zeros(12, np.int64)
  any_decision = np.zeros(12, np.bool_)
  num_nodes, num_infosets, num_slots = 1, 1, _CELLS
  top = 0
  while top >= 0 and num_nodes <= limit:
    p = player[top]
    own = view1[top] if p else view0[top]
    known = (own | own >> 9) & _ALL
    a = next_action[top]
    while a < _CELLS and known >> a & 1:
      a += 1
    if a == _CELLS:
      top -= 1
      continue
    next_action[top] = a + 1
    num_nodes += 1
    v0, v1 = view0[top], view1[top]
    if p:
      v1 = _play(v1, v0, a)
    else:
      v0 = _play(v0, v1, a)
    over, _ = _outcome(v0, v1, 1 - p, has_line, popcount)
    if over:
      continue
    if not any_decision[top]:
      any_decision[top] = True
      num_infosets += 1
      child_own = v0 if p else v1
      num_slots += _CELLS - popcount[(child_own | child_own >> 9) & _ALL]
    top += 1
    view0[top], view1[top], player[top] = v0, v1, 1 - p
    next_action[top] = 0
    any_decision[top] = False
  return num_nodes, num_infosets, num_slots


@numba.njit(cache=True)
def _fill(num_nodes, num_infosets, num_slots, has_line, popcount):
  """The node and infoset arrays, breadth-first, and the keys as bytes."""
  (player, infoset, parent, first_child, num_children, action_index, utility,
   depth) = native_extraction.node_arrays(num_nodes)
  views = np.empty((num_nodes, 2), np.int32)
  (inf_player, inf_num_actions, inf_offset, inf_actions, inf_parent_slot,
   inf_node) = native_extraction.infoset_arrays(num_infosets, num_slots)
  player[0], parent[0], action_index[0], utility[0], depth[0] = 0, -1, -1, 0.0, 0
  views[0, 0], views[0, 1] = 0, 0
  free, num_inf, slot, last_group = 1, 0, 0, -2
  for node in range(num_nodes):
    p = player[node]
    if p < 0:
      infoset[node], first_child[node], num_children[node] = -1, 0, 0
      continue
    own = views[node, p]
    known = (own | own >> 9) & _ALL
    group = parent[node]
    if group != last_group:
      last_group = group
      inf_player[num_inf] = p
      inf_node[num_inf] = node
      inf_offset[num_inf] = slot
      if depth[node] >= 2:
        inf_parent_slot[num_inf] = (inf_offset[infoset[parent[group]]] +
                                    action_index[group])
      else:
        inf_parent_slot[num_inf] = -1
      count = 0
      for a in range(_CELLS):
        if not known >> a & 1:
          inf_actions[slot + count] = a
          count += 1
      inf_num_actions[num_inf] = count
      slot += count
      num_inf += 1
    infoset[node] = num_inf - 1
    first_child[node] = free
    index = 0
    for a in range(_CELLS):
      if known >> a & 1:
        continue
      child = free
      free += 1
      views[child, 0], views[child, 1] = views[node, 0], views[node, 1]
      views[child, p] = _play(own, views[node, 1 - p], a)
      over, value = _outcome(views[child, 0], views[child, 1], 1 - p, has_line,
                             popcount)
      player[child] = _TERMINAL if over else 1 - p
      utility[child] = value
      parent[child] = node
      action_index[child] = index
      depth[child] = depth[node] + 1
      index += 1
    num_children[node] = index
  keys, length = _write_keys(inf_player, inf_node, parent, depth, infoset, action_index,
                             inf_offset, inf_actions)
  return (player, infoset, parent, first_child, num_children, action_index, utility,
          depth, inf_player, inf_num_actions, inf_offset, inf_actions, inf_parent_slot,
          inf_node, keys, length)


@numba.njit(cache=True)
def _write_keys(players, nodes, parent, depth, infoset, action_index, inf_offset,
                inf_actions):
  """Keys "p<player>:<move>/<revealed or ->" ...: the moves of players[i] on the path
  to nodes[i] (where it acts, or where the other player does), as bytes."""
  keys = np.empty(len(players) * (_KEY_BYTES + 1), np.uint8)
  history = np.empty(16, np.int64)
  length = 0
  for k in range(len(players)):
    node = nodes[k]
    d = depth[node]
    native_extraction.history_of(node, parent, depth, infoset, action_index, inf_offset,
                                 inf_actions, history)
    length = native_extraction.start_key(keys, length, k)
    p = players[k]
    keys[length], keys[length + 1], keys[length + 2] = 112, 48 + p, 58  # "p0:"
    length += 3
    for i in range(p, d, 2):
      if i != p:
        keys[length] = 32
        length += 1
      keys[length] = 48 + history[i]
      keys[length + 1] = 47  # "/"
      keys[length + 2] = 45 if i == 0 else 48 + history[i - 1]  # "-" or the reveal
      length += 3
  return keys, length


@numba.njit(cache=True)
def _other_keys(player, first_child, num_children, infoset, num_infosets):
  """The key of the player who does not act at each decision node: the information
  set of the node's decision children (it saw the whole history to the node, as they
  do) if it has any, else an extra key; and each extra's player and node."""
  other, extra_player, extra_node = native_extraction.other_key_arrays(len(player))
  num_extra = 0
  for node in range(len(player)):
    if player[node] < 0:
      continue
    k = -1
    for child in range(first_child[node], first_child[node] + num_children[node]):
      if player[child] >= 0:
        k = infoset[child]
        break
    if k < 0:
      k = num_infosets + num_extra
      extra_player[num_extra], extra_node[num_extra] = 1 - player[node], node
      num_extra += 1
    other[node] = k
  return other, extra_player[:num_extra].copy(), extra_node[:num_extra].copy()


@native_extraction.register("python_latent_ttt")
def extract(game, max_nodes=None):
  """The CompiledTree of python_latent_ttt (no parameters); TreeTooLarge past
  `max_nodes` histories, before the tree is allocated."""
  counts = []

  def count(cap):
    counts.append(_count(_HAS_LINE, _POPCOUNT, cap))
    return counts[-1][0]

  tree_limits.checked_count(game, count, max_nodes)
  num_nodes, num_infosets, num_slots = counts[-1]
  return native_extraction.tree_from_filled(
      game, _fill(num_nodes, num_infosets, num_slots, _HAS_LINE, _POPCOUNT))


@native_extraction.register_state_keys("python_latent_ttt")
def state_keys(tree):
  """The non-acting player's keys and extra strings (native_extraction.state_keys)."""
  other, extra_player, extra_node = _other_keys(
      tree.node_player, tree.node_first_child, tree.node_num_children,
      tree.node_infoset, tree.num_infosets)
  keys, length = _write_keys(extra_player, extra_node, tree.node_parent,
                             tree.node_depth, tree.node_infoset, tree.node_action_index,
                             tree.infoset_action_offset, tree.infoset_actions)
  return other, native_extraction.decode_keys(keys, length)
