"""Native extraction of python_ii_goofspiel ([S] §3.2.2), rules of
ggp_cr/games/ii_goofspiel.py.

A node's state packs both hands, the prizes not shown, the current prize, player 0's
pending bid and the last turn's result from player 0's view; the score is kept apart.
A player's information set is fixed by its own previous slot and what it saw since:
that turn's result and the new prize; a numba dict numbers the pairs. A key is the
key of the player's previous information set with " Bet(b) result, Prize(p)" added.
"""

import numba
from numba import types
import numpy as np

from ggp_cr.algorithms import native_extraction

_TERMINAL, _CHANCE = -4, -1
_MAX_CARDS = 15  # four 15-bit masks and fields fit one int64
_MASK = (1 << _MAX_CARDS) - 1
_HAND1, _PRIZES, _PRIZE, _BID0, _RESULT = 15, 30, 45, 49, 53
_NO_RESULT = 3
_RESULT_WORDS = np.zeros((3, 4), np.uint8)
for _row, _word in enumerate((b"won", b"draw", b"lost")):
  _RESULT_WORDS[_row, :len(_word)] = np.frombuffer(_word, np.uint8)
_RESULT_LENGTHS = np.array([3, 4, 4], np.int64)


@numba.njit(cache=True)
def _popcount(mask):
  count = 0
  while mask:
    mask &= mask - 1
    count += 1
  return count


@numba.njit(cache=True)
def _children(state, score, player, prize_order, random_order, point_difference,
              out_state, out_score, out_player, out_utility, out_prob):
  """The children of a node, in the order of its actions; returns their number."""
  hand0 = state & _MASK
  hand1 = state >> _HAND1 & _MASK
  prizes = state >> _PRIZES & _MASK
  prize = state >> _PRIZE & 15
  count = 0
  if player == _CHANCE:
    num = _popcount(prizes)
    for a in range(_MAX_CARDS):
      if prizes >> a & 1:
        out_state[count] = ((state & ~(_MASK << _PRIZES) & ~(15 << _PRIZE))
                            | (prizes ^ 1 << a) << _PRIZES | (a + 1) << _PRIZE)
        out_score[count], out_player[count] = score, 0
        out_utility[count], out_prob[count] = 0.0, 1.0 / num
        count += 1
  elif player == 0:
    for a in range(_MAX_CARDS):
      if hand0 >> a & 1:
        out_state[count] = (state ^ 1 << a) & ~(15 << _BID0) | a << _BID0
        out_score[count], out_player[count] = score, 1
        out_utility[count], out_prob[count] = 0.0, 1.0
        count += 1
  else:
    bid0 = state >> _BID0 & 15
    for a in range(_MAX_CARDS):
      if not hand1 >> a & 1:
        continue
      result = 0 if bid0 > a else 1 if bid0 == a else 2
      new_score = score + (prize if result == 0 else -prize if result == 2 else 0)
      new_hand1 = hand1 ^ 1 << a
      base = hand0 | new_hand1 << _HAND1 | prizes << _PRIZES | result << _RESULT
      out_score[count], out_prob[count] = new_score, 1.0
      if new_hand1 == 0:
        out_state[count], out_player[count] = base, _TERMINAL
        if point_difference:
          out_utility[count] = new_score
        else:
          out_utility[count] = (new_score > 0) - (new_score < 0)
      else:
        out_utility[count] = 0.0
        if random_order:
          out_state[count], out_player[count] = base, _CHANCE
        else:
          turn = len(prize_order) - _popcount(new_hand1)
          out_state[count] = base | prize_order[turn] << _PRIZE
          out_player[count] = 0
      count += 1
  return count


@numba.njit(cache=True)
def _count(root_state, root_player, prize_order, random_order, point_difference):
  """Histories, by a depth-first walk."""
  levels = 3 * _MAX_CARDS + 2
  state = np.zeros((levels, _MAX_CARDS), np.int64)
  score = np.zeros((levels, _MAX_CARDS), np.int64)
  player = np.zeros((levels, _MAX_CARDS), np.int64)
  utility = np.zeros(_MAX_CARDS)
  prob = np.zeros(_MAX_CARDS)
  num = np.zeros(levels, np.int64)
  position = np.zeros(levels, np.int64)
  num[0] = _children(root_state, 0, root_player, prize_order, random_order,
                     point_difference, state[0], score[0], player[0], utility, prob)
  num_nodes, top = 1 + num[0], 0
  while top >= 0:
    i = position[top]
    if i == num[top]:
      top -= 1
      continue
    position[top] = i + 1
    if player[top, i] == _TERMINAL:
      continue
    num[top + 1] = _children(state[top, i], score[top, i], player[top, i], prize_order,
                             random_order, point_difference, state[top + 1],
                             score[top + 1], player[top + 1], utility, prob)
    num_nodes += num[top + 1]
    top += 1
    position[top] = 0
  return num_nodes


@numba.njit(cache=True)
def _fill(num_nodes, root_state, root_player, prize_order, random_order,
          point_difference):
  """The node and infoset arrays, breadth-first, and the keys as bytes."""
  player = np.empty(num_nodes, np.int8)
  infoset = np.empty(num_nodes, np.int32)
  parent = np.empty(num_nodes, np.int32)
  first_child = np.empty(num_nodes, np.int32)
  num_children = np.empty(num_nodes, np.int16)
  action_index = np.empty(num_nodes, np.int16)
  chance_prob = np.empty(num_nodes, np.float64)
  utility = np.empty(num_nodes, np.float64)
  depth = np.empty(num_nodes, np.int16)
  state = np.empty(num_nodes, np.int64)
  score = np.empty(num_nodes, np.int16)
  capacity = 1024
  inf_player = np.empty(capacity, np.int8)
  inf_num_actions = np.empty(capacity, np.int16)
  inf_offset = np.empty(capacity, np.int32)
  inf_parent_slot = np.empty(capacity, np.int32)
  inf_node = np.empty(capacity, np.int32)
  inf_seen = np.empty(capacity, np.int8)  # result * 16 + prize seen since last decision
  inf_actions = np.empty(capacity, np.int32)
  lookup = numba.typed.Dict.empty(key_type=types.int64, value_type=types.int64)
  out_state = np.empty(_MAX_CARDS, np.int64)
  out_score = np.empty(_MAX_CARDS, np.int64)
  out_player = np.empty(_MAX_CARDS, np.int64)
  out_utility = np.empty(_MAX_CARDS)
  out_prob = np.empty(_MAX_CARDS)
  player[0], parent[0], action_index[0], depth[0] = root_player, -1, -1, 0
  chance_prob[0], utility[0], state[0], score[0] = 1.0, 0.0, root_state, 0
  free, num_inf, slot = 1, 0, 0
  for node in range(num_nodes):
    p = player[node]
    if p == _TERMINAL:
      infoset[node], first_child[node], num_children[node] = -1, 0, 0
      continue
    count = _children(state[node], score[node], p, prize_order, random_order,
                      point_difference, out_state, out_score, out_player, out_utility,
                      out_prob)
    if p == _CHANCE:
      infoset[node] = -1
    else:
      result = state[node] >> _RESULT & 3
      if p == 1 and result != _NO_RESULT:
        result = 2 - result
      seen = result * 16 + (state[node] >> _PRIZE & 15)
      previous = native_extraction.previous_slot(node, parent, player, infoset,
                                                 action_index, inf_offset)
      key = ((previous + 1) * 64 + seen) * 2 + p
      k = lookup.get(key, -1)
      if k < 0:
        k = num_inf
        num_inf += 1
        lookup[key] = k
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
        inf_num_actions[k], inf_seen[k] = count, seen
        hand = state[node] >> (_HAND1 if p else 0) & _MASK
        i = 0
        for a in range(_MAX_CARDS):
          if hand >> a & 1:
            inf_actions[slot + i] = a
            i += 1
        slot += count
      infoset[node] = k
    first_child[node] = free
    num_children[node] = count
    for i in range(count):
      child = free + i
      state[child], score[child], player[child] = out_state[i], out_score[i], out_player[i]
      utility[child], chance_prob[child] = out_utility[i], out_prob[i]
      parent[child], action_index[child], depth[child] = node, i, depth[node] + 1
    free += count
  keys, length = _keys(num_inf, inf_player, inf_parent_slot, inf_seen, inf_offset,
                       inf_actions[:slot])
  return ((player, infoset, parent, first_child, num_children, action_index, utility,
           depth, inf_player[:num_inf].copy(), inf_num_actions[:num_inf].copy(),
           inf_offset[:num_inf].copy(), inf_actions[:slot].copy(),
           inf_parent_slot[:num_inf].copy(), inf_node[:num_inf].copy(), keys, length),
          chance_prob)


@numba.njit(cache=True)
def _keys(num_inf, inf_player, inf_parent_slot, inf_seen, inf_offset, inf_actions):
  """"p<player>: Prize(p) Bet(b) won, ..., Prize(p)" per infoset, as bytes."""
  slot_infoset = np.empty(len(inf_actions), np.int32)
  for k in range(num_inf):
    end = inf_offset[k + 1] if k + 1 < num_inf else len(inf_actions)
    slot_infoset[inf_offset[k]:end] = k
  start = np.empty(num_inf, np.int64)
  end = np.empty(num_inf, np.int64)
  bound = 0
  for k in range(num_inf):  # bound: 26 bytes a turn, turns = own decisions so far
    turns = 1
    previous = inf_parent_slot[k]
    while previous >= 0:
      turns += 1
      previous = inf_parent_slot[slot_infoset[previous]]
    bound += 6 + 26 * turns
  keys = np.empty(bound, np.uint8)
  prize_text = np.array([44, 32, 80, 114, 105, 122, 101, 40], np.uint8)  # ", Prize("
  bet_text = np.array([32, 66, 101, 116, 40], np.uint8)  # " Bet("
  length = 0
  for k in range(num_inf):
    if k:
      keys[length] = 0
      length += 1
    start[k] = length
    previous = inf_parent_slot[k]
    if previous < 0:
      keys[length:length + 4] = np.array([112, 48 + inf_player[k], 58, 32], np.uint8)
      length = native_extraction.write_bytes(keys, length + 4, prize_text[2:])
    else:
      before = slot_infoset[previous]
      for i in range(start[before], end[before]):
        keys[length] = keys[i]
        length += 1
      length = native_extraction.write_bytes(keys, length, bet_text)
      length = native_extraction.write_int(keys, length, inf_actions[previous] + 1)
      keys[length], keys[length + 1] = 41, 32  # ") "
      result = inf_seen[k] // 16
      length = native_extraction.write_bytes(
          keys, length + 2, _RESULT_WORDS[result, :_RESULT_LENGTHS[result]])
      length = native_extraction.write_bytes(keys, length, prize_text)
    length = native_extraction.write_int(keys, length, inf_seen[k] % 16)
    keys[length] = 41  # ")"
    length += 1
    end[k] = length
  return keys, length


def supports(game):
  """Native extraction covers num_cards <= 15 (beyond, the tree is far too large)."""
  return game.num_cards <= _MAX_CARDS


@native_extraction.register("python_ii_goofspiel", supports)
def extract(game):
  """The CompiledTree of python_ii_goofspiel, any points_order and returns_type."""
  n = game.num_cards
  all_cards = (1 << n) - 1
  random_order = game.is_random_order
  prize_order = np.array(game.prize_order or [0], np.int64)
  root_state = all_cards | all_cards << _HAND1 | _NO_RESULT << _RESULT
  if random_order:
    root_state |= all_cards << _PRIZES
    root_player = _CHANCE
  else:
    root_state |= int(prize_order[0]) << _PRIZE
    root_player = 0
  point_difference = game.returns_type == "point_difference"
  num_nodes = _count(root_state, root_player, prize_order, random_order,
                     point_difference)
  filled, chance_prob = _fill(num_nodes, root_state, root_player, prize_order,
                              random_order, point_difference)
  return native_extraction.tree_from_filled(game, filled, chance_prob)
