"""Native rules and keys of python_ii_goofspiel ([S] §3.2.2) that native_driver.py walks,
from ggp_cr/games/ii_goofspiel.py (native_driver_games.py registers the extraction).

A node's state packs both hands, the prizes not shown, the current prize, player 0's
pending bid, the last turn's result from player 0's view and the score (one int64).
A player's information set is fixed by its own previous slot and what it saw since:
that turn's result and the new prize (native_driver.py numbers them). A key is the
key of the player's previous information set with " Bet(b) result, Prize(p)" added.
"""

import numba
import numpy as np

from ggp_cr.algorithms.tree import native_extraction

_TERMINAL, _CHANCE = native_extraction.TERMINAL, native_extraction.CHANCE
_MAX_CARDS = 15  # four 15-bit masks and fields fit one int64
_MASK = (1 << _MAX_CARDS) - 1
_HAND1, _PRIZES, _PRIZE, _BID0, _RESULT, _SCORE = 15, 30, 45, 49, 53, 55
_SCORE_OFFSET = 128  # the score, within +-120, is stored + 128 in bits 55-62
_NO_RESULT = 3
_PENDING = _NO_RESULT * 16  # no result and no prize (prizes are >= 1): a bid pending
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
def children(state, player, params, out_state, out_player, out_utility, out_prob,
             out_action):
  """The children of a node in the order of its actions; returns their number.
  params: num_cards, random order?, point difference?, the fixed prize order."""
  num_cards, random_order, point_difference = params[0], params[1], params[2]
  hand0 = state & _MASK
  hand1 = state >> _HAND1 & _MASK
  prizes = state >> _PRIZES & _MASK
  prize = state >> _PRIZE & 15
  score = (state >> _SCORE) - _SCORE_OFFSET
  count = 0
  if player == _CHANCE:
    num = _popcount(prizes)
    for a in range(_MAX_CARDS):
      if prizes >> a & 1:
        out_state[count] = ((state & ~(_MASK << _PRIZES) & ~(15 << _PRIZE))
                            | (prizes ^ 1 << a) << _PRIZES | (a + 1) << _PRIZE)
        out_player[count], out_action[count] = 0, a
        out_utility[count], out_prob[count] = 0.0, 1.0 / num
        count += 1
  elif player == 0:
    for a in range(_MAX_CARDS):
      if hand0 >> a & 1:
        out_state[count] = (state ^ 1 << a) & ~(15 << _BID0) | a << _BID0
        out_player[count], out_action[count] = 1, a
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
      base = (hand0 | new_hand1 << _HAND1 | prizes << _PRIZES | result << _RESULT
              | (new_score + _SCORE_OFFSET) << _SCORE)
      out_action[count], out_prob[count] = a, 1.0
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
          turn = num_cards - _popcount(new_hand1)
          out_state[count] = base | params[3 + turn] << _PRIZE
          out_player[count] = 0
      count += 1
  return count


@numba.njit(cache=True)
def seen(mover, node, state, player, parent, infoset, action_index, inf_offset,
         inf_actions, params):
  """The last turn's result from `mover`'s view and the new prize: result * 16 +
  prize. Player 0 where player 1 bids has seen nothing since its bid: _PENDING."""
  if mover == 0 and player[node] == 1:
    return _PENDING
  result = state[node] >> _RESULT & 3
  if mover == 1 and result != _NO_RESULT:
    result = 2 - result
  return result * 16 + (state[node] >> _PRIZE & 15)


@numba.njit(cache=True)
def _chain(k, inf_parent_slot, slot_infoset, chain):
  """Writes infoset k and its player's earlier infosets (newest first) into chain;
  returns their number."""
  n = 0
  while True:
    chain[n] = k
    n += 1
    if inf_parent_slot[k] < 0:
      return n
    k = slot_infoset[inf_parent_slot[k]]


@numba.njit(cache=True)
def _key_lengths(inf_parent_slot, inf_seen, inf_actions, slot_infoset):
  """The length of every infoset's key (a previous key's length plus its turn's)."""
  lengths = np.empty(len(inf_parent_slot), np.int32)
  for k in range(len(inf_parent_slot)):
    previous = inf_parent_slot[k]
    size = native_extraction.num_digits(inf_seen[k] % 16)
    if previous < 0:  # "p0: Prize(p)"
      size += 11
    elif inf_seen[k] == _PENDING:  # the previous key + " Bet(b)"
      size = (lengths[slot_infoset[previous]] + 6
              + native_extraction.num_digits(inf_actions[previous] + 1))
    else:  # the previous key + " Bet(b) result, Prize(p)"
      size += (lengths[slot_infoset[previous]] + 16 + _RESULT_LENGTHS[inf_seen[k] // 16]
               + native_extraction.num_digits(inf_actions[previous] + 1))
    lengths[k] = size
  return lengths


@numba.njit(cache=True)
def _keys(first, last, inf_player, inf_parent_slot, inf_seen, inf_actions, slot_infoset,
          lengths):
  """"p<player>: Prize(p) Bet(b) won, ..., Prize(p)" per infoset first..last-1, as
  bytes. Each key is written whole from its chain of earlier infosets, so that a
  chunk of keys needs no other chunk."""
  chain = np.empty(_MAX_CARDS + 1, np.int64)
  keys = np.empty(lengths[first:last].sum() + last - first, np.uint8)
  prize_text = np.array([44, 32, 80, 114, 105, 122, 101, 40], np.uint8)  # ", Prize("
  bet_text = np.array([32, 66, 101, 116, 40], np.uint8)  # " Bet("
  length = 0
  for k in range(first, last):
    length = native_extraction.start_key(keys, length, k - first)
    for i in range(_chain(k, inf_parent_slot, slot_infoset, chain) - 1, -1, -1):
      j = chain[i]
      previous = inf_parent_slot[j]
      if previous < 0:  # "p0: Prize("
        keys[length], keys[length + 1] = 112, 48 + inf_player[j]
        keys[length + 2], keys[length + 3] = 58, 32
        length = native_extraction.write_bytes(keys, length + 4, prize_text[2:])
      else:
        length = native_extraction.write_bytes(keys, length, bet_text)
        length = native_extraction.write_int(keys, length, inf_actions[previous] + 1)
        if inf_seen[j] == _PENDING:  # player 0's state while player 1 bids
          keys[length] = 41  # ")"
          length += 1
          continue
        keys[length], keys[length + 1] = 41, 32  # ") "
        result = inf_seen[j] // 16
        length = native_extraction.write_bytes(
            keys, length + 2, _RESULT_WORDS[result, :_RESULT_LENGTHS[result]])
        length = native_extraction.write_bytes(keys, length, prize_text)
      length = native_extraction.write_int(keys, length, inf_seen[j] % 16)
      keys[length] = 41  # ")"
      length += 1
  return keys, length


def supports(game):
  """Native extraction covers num_cards <= 15 (beyond, the tree is far too large)."""
  return game.num_cards <= _MAX_CARDS


def _setup(game):
  """The driver's params, root state and root player."""
  n = game.num_cards
  all_cards = (1 << n) - 1
  random_order = game.is_random_order
  root_state = (all_cards | all_cards << _HAND1 | _NO_RESULT << _RESULT
                | _SCORE_OFFSET << _SCORE)
  if random_order:
    root_state |= all_cards << _PRIZES
    root_player = _CHANCE
  else:
    root_state |= game.prize_order[0] << _PRIZE
    root_player = 0
  params = np.array([n, random_order, game.returns_type == "point_difference"]
                    + list(game.prize_order or []), np.int64)
  return params, np.int64(root_state), root_player


def driver_setup(game):
  """The driver's params, root state, root player and most children of a node
  (native_driver_games, native_next_decisions)."""
  params, root_state, root_player = _setup(game)
  return params, root_state, root_player, game.num_cards


def key_list(inf_player, inf_parent_slot, inf_seen, inf_offset, inf_actions, first):
  """The keys of infosets first.. (those before, if any, are the earlier keys)."""
  slot_infoset = native_extraction.slot_owners(inf_offset, len(inf_actions))
  lengths = _key_lengths(inf_parent_slot, inf_seen, inf_actions, slot_infoset)
  return native_extraction.keys_by_chunks(
      lambda start, last: _keys(first + start, first + last, inf_player,
                                inf_parent_slot, inf_seen, inf_actions, slot_infoset,
                                lengths), len(inf_player) - first)
