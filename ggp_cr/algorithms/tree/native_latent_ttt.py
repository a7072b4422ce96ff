"""Native rules, fill and keys of python_latent_ttt ([S] §3.2.4): the rules of
ggp_cr/games/latent_ttt.py written once, as the `children` that native_driver.py walks.

The extraction's count walks them through native_driver.py and `fill` calls them;
native_driver_games.py registers the extraction.

A state packs the two views of the game's state class and the cell each player saw
revealed at its last move (its `seen`). A player's information state is its own moves
with the move revealed at each, i.e. the whole history but the opponent's last move:
the decision children of one node form one information set, and distinct nodes give
distinct information sets.
"""

import numba
import numpy as np

from ggp_cr.algorithms.tree import native_extraction
from ggp_cr.games import latent_ttt

_CELLS = 9
_ALL = (1 << _CELLS) - 1
_TERMINAL = native_extraction.TERMINAL
_HAS_LINE = np.array(latent_ttt._HAS_LINE, dtype=np.bool_)  # pylint: disable=protected-access
_POPCOUNT = np.array([bin(m).count("1") for m in range(1 << _CELLS)], dtype=np.int64)
_KEY_BYTES = 3 + 4 * latent_ttt._MAX_MOVES_PER_PLAYER  # pylint: disable=protected-access
# native_driver's state: view0 in bits 0-25, view1 in 26-51, the cell player 0 and 1
# saw revealed at its last move + 1 (0: none) in bits 52-55 and 56-59.
_VIEW_BITS = 26
_VIEW_MASK = (1 << _VIEW_BITS) - 1
_REVEALED = 2 * _VIEW_BITS


@numba.njit(cache=True, inline="always")
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


@numba.njit(cache=True, inline="always")
def _no_legal_move(view, popcount):
  return (popcount[view & _ALL] + (view >> 18 & 15) + (1 if view >> 22 > 0 else 0)
          >= _CELLS)


@numba.njit(cache=True, inline="always")
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
  """The game's rules: the children of a node in the order of its actions (the cells
  its mover does not know, ascending); returns their number (params: unused)."""
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
def fill(num_nodes):
  """The node and infoset arrays, breadth-first, each node expanded by `children`,
  one information set per group of decision siblings, and the keys as bytes."""
  nodes = native_extraction.node_arrays(num_nodes)
  (player, infoset, parent, first_child, num_children, action_index, utility,
   depth) = nodes
  state = np.empty(num_nodes, np.int64)
  # Infoset arrays sized for the worst case (a slot per child), trimmed at the end.
  infosets = native_extraction.infoset_arrays(num_nodes, num_nodes)
  (inf_player, inf_num_actions, inf_offset, inf_actions, inf_parent_slot,
   inf_node) = infosets
  params = np.zeros(1, np.int64)
  out_state, out_player = np.empty(_CELLS, np.int64), np.empty(_CELLS, np.int64)
  out_utility, out_prob = np.empty(_CELLS), np.empty(_CELLS)
  out_action = np.empty(_CELLS, np.int64)
  player[0], parent[0], action_index[0], utility[0], depth[0] = 0, -1, -1, 0.0, 0
  state[0] = 0
  free, num_inf, slot, last_group = 1, 0, 0, -2
  for node in range(num_nodes):
    p = player[node]
    if p < 0:
      infoset[node], first_child[node], num_children[node] = -1, 0, 0
      continue
    count = children(state[node], p, params, out_state, out_player, out_utility,
                     out_prob, out_action)
    group = parent[node]
    if group != last_group:
      last_group = group
      inf_player[num_inf], inf_node[num_inf], inf_offset[num_inf] = p, node, slot
      if depth[node] >= 2:
        inf_parent_slot[num_inf] = (inf_offset[infoset[parent[group]]] +
                                    action_index[group])
      else:
        inf_parent_slot[num_inf] = -1
      inf_num_actions[num_inf] = count
      inf_actions[slot:slot + count] = out_action[:count]
      slot += count
      num_inf += 1
    infoset[node] = num_inf - 1
    free = native_extraction.append_children(
        node, free, count, out_player, out_utility, out_state, player, utility, state,
        parent, first_child, num_children, action_index, depth)
  keys, length = _write_keys(inf_player[:num_inf], inf_node, parent, depth, infoset,
                             action_index, inf_offset, inf_actions)
  return (nodes + native_extraction.trimmed_infosets(infosets, num_inf, slot)
          + (keys, length))


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


def state_keys(tree):
  """The non-acting player's keys and extra strings (native_extraction.state_keys;
  native_driver_games.py registers them)."""
  other, extra_player, extra_node = _other_keys(
      tree.node_player, tree.node_first_child, tree.node_num_children,
      tree.node_infoset, tree.num_infosets)
  keys, length = _write_keys(extra_player, extra_node, tree.node_parent,
                             tree.node_depth, tree.node_infoset, tree.node_action_index,
                             tree.infoset_action_offset, tree.infoset_actions)
  return other, native_extraction.decode_keys(keys, length)
