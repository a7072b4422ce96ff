"""Native rules and keys of python_leduc ([S] §3.2) that native_driver.py walks, from
ggp_cr/games/leduc.py (native_driver_games.py registers the extraction).

A node's state packs the three cards, both players' chips and the raises of the
current round into one int64. A player's information set is fixed by its own previous
slot and what it saw since (the opponent's actions, its own or the public card); a key
is the key of the player's previous information set with its action and those events
appended ("P0 card:2 R1:cr public:1 R2:").
"""

import numba
import numpy as np

from ggp_cr.algorithms.tree import native_extraction

_TERMINAL, _CHANCE = native_extraction.TERMINAL, native_extraction.CHANCE
_FOLD, _CALL, _RAISE = 0, 1, 2
_CARD1, _PUBLIC, _CHIPS0, _CHIPS1, _RAISES = 8, 16, 24, 38, 52
_CHIPS_LIMIT = 1 << 14
_RAISES_LIMIT = 1 << 11
_MAX_CARDS = 254
_EVENT_BASE = 4 + _MAX_CARDS  # seen: events 1..3 an action + 1, 4 + card a card
_LETTERS = np.array([102, 99, 114], np.uint8)  # f c r


@numba.njit(cache=True)
def children(state, player, params, out_state, out_player, out_utility, out_prob,
             out_action):
  """The children of a node in the order of its actions; returns their number."""
  stack0, stack1, max_raises, num_cards = params[0], params[1], params[2], params[3]
  fold_only_facing_bet, deck = params[4], params[5]
  card0 = (state & 255) - 1
  card1 = (state >> _CARD1 & 255) - 1
  public = (state >> _PUBLIC & 255) - 1
  chips0 = state >> _CHIPS0 & (_CHIPS_LIMIT - 1)
  chips1 = state >> _CHIPS1 & (_CHIPS_LIMIT - 1)
  raises = state >> _RAISES
  count = 0
  if player == _CHANCE:
    for card in range(num_cards):
      if deck and (card == card0 or card == card1):
        continue
      if not deck and card1 >= 0 and card0 == card1 and card == card0:
        continue
      if card0 < 0:
        out_state[count], out_player[count] = state | (card + 1), _CHANCE
      elif card1 < 0:
        out_state[count], out_player[count] = state | (card + 1) << _CARD1, 0
      else:
        out_state[count] = (state & ~(np.int64(_RAISES_LIMIT - 1) << _RAISES)
                            | (card + 1) << _PUBLIC)
        out_player[count] = 0
      out_utility[count], out_action[count] = 0.0, card
      count += 1
    for i in range(count):
      out_prob[i] = 1.0 / count
    return count
  size = 4 if public >= 0 else 2
  own_chips, other_chips = (chips1, chips0) if player else (chips0, chips1)
  own_stack, other_stack = (stack1, stack0) if player else (stack0, stack1)
  cost = size * (2 if raises else 1)
  for action in range(3):
    if action == _FOLD and fold_only_facing_bet and not raises:
      continue
    if action == _RAISE and (raises >= max_raises or own_stack - own_chips < cost):
      continue
    new_own, next_player, value, new_raises = own_chips, 1 - player, 0.0, raises
    if action == _RAISE:
      new_own = own_chips + cost - max(0, size - (other_stack - other_chips))
      new_raises = raises + 1
    elif action == _CALL:
      new_own = other_chips
      if player == 1 or raises:
        next_player = _CHANCE if public < 0 else _TERMINAL
    else:
      next_player = _TERMINAL
      value = -float(chips0) if player == 0 else float(chips1)
    c0, c1 = (other_chips, new_own) if player else (new_own, other_chips)
    if action == _CALL and next_player == _TERMINAL:
      rank0, rank1, rank = card0, card1, public
      if deck:
        rank0, rank1, rank = card0 // 2, card1 // 2, public // 2
      if rank0 != rank1:
        value = float(c1) if rank0 == rank or (rank1 != rank and rank0 > rank1) else (
            -float(c0))
    out_state[count] = (state & ((1 << _CHIPS0) - 1) | c0 << _CHIPS0 | c1 << _CHIPS1
                        | new_raises << _RAISES)
    out_player[count], out_utility[count] = next_player, value
    out_prob[count], out_action[count] = 1.0, action
    count += 1
  return count


@numba.njit(cache=True)
def seen(mover, node, state, player, parent, infoset, action_index, inf_offset,
         inf_actions, params):
  """The opponent's actions and the cards `mover` saw since its previous decision."""
  observed = 0
  child = node
  up = parent[node]
  while up >= 0 and player[up] != mover:
    if player[up] == _CHANCE:
      dealt = state[child]
      if state[up] & 255 == 0:
        code = 4 + (dealt & 255) - 1 if mover == 0 else 0
      elif state[up] >> _CARD1 & 255 == 0:
        code = 4 + (dealt >> _CARD1 & 255) - 1 if mover == 1 else 0
      else:
        code = 4 + (dealt >> _PUBLIC & 255) - 1
    else:
      code = 1 + inf_actions[inf_offset[infoset[up]] + action_index[child]]
    if code:
      observed = observed * _EVENT_BASE + code
    child = up
    up = parent[up]
  return observed


@numba.njit(cache=True)
def _keys(inf_player, inf_parent_slot, inf_seen, inf_offset, inf_actions, names,
          name_lengths):
  """"P<player> card:<card> R1:<bets>[ public:<card> R2:<bets>]" per infoset."""
  num_inf = len(inf_player)
  owner = native_extraction.slot_owners(inf_offset, len(inf_actions))
  start = np.empty(num_inf, np.int64)
  end = np.empty(num_inf, np.int64)
  bound = np.empty(num_inf, np.int64)
  total = 0
  for k in range(num_inf):
    previous = inf_parent_slot[k]
    bound[k] = (bound[owner[previous]] if previous >= 0 else 0) + 24 + 2 * names.shape[1]
    total += bound[k] + 1
  keys = np.empty(total, np.uint8)
  card_text = np.array([80, 48, 32, 99, 97, 114, 100, 58], np.uint8)  # "P0 card:"
  round1_text = np.array([32, 82, 49, 58], np.uint8)  # " R1:"
  public_text = np.array([32, 112, 117, 98, 108, 105, 99, 58], np.uint8)  # " public:"
  round2_text = np.array([32, 82, 50, 58], np.uint8)  # " R2:"
  length = 0
  for k in range(num_inf):
    length = native_extraction.start_key(keys, length, k)
    start[k] = length
    previous = inf_parent_slot[k]
    if previous >= 0:
      before = owner[previous]
      for i in range(start[before], end[before]):
        keys[length] = keys[i]
        length += 1
      keys[length] = _LETTERS[inf_actions[previous]]
      length += 1
    seen = inf_seen[k]
    while seen:  # the earliest event is the lowest digit
      code = seen % _EVENT_BASE
      seen //= _EVENT_BASE
      if code < 4:
        keys[length] = _LETTERS[code - 1]
        length += 1
        continue
      card = code - 4
      if previous < 0:
        length = native_extraction.write_bytes(keys, length, card_text)
        keys[length - 7] += inf_player[k]
      else:
        length = native_extraction.write_bytes(keys, length, public_text)
      length = native_extraction.write_bytes(keys, length,
                                             names[card, :name_lengths[card]])
      length = native_extraction.write_bytes(
          keys, length, round1_text if previous < 0 else round2_text)
    end[k] = length
  return keys, length


def supports(game):
  """Native extraction covers chips below 2^14, max_raises below 2^11, <= 254 cards."""
  most_chips = min(max(game.stacks), 1 + 6 * game.max_raises)
  return (most_chips < _CHIPS_LIMIT and game.max_raises < _RAISES_LIMIT
          and game.num_cards <= _MAX_CARDS)


def _setup(game):
  """The driver's params, root state and most children of a node."""
  params = np.array([game.stacks[0], game.stacks[1], game.max_raises, game.num_cards,
                     game.fold_only_facing_bet, game.deal_from_deck], np.int64)
  root_state = np.int64(1 << _CHIPS0 | 1 << _CHIPS1)  # the antes
  return params, root_state, max(game.num_cards, 3)


def driver_setup(game):
  """The driver's params, root state, root player and most children of a node
  (native_driver_games, native_next_decisions)."""
  params, root_state, max_children = _setup(game)
  return params, root_state, _CHANCE, max_children


def write_keys(game, inf_player, inf_parent_slot, inf_seen, inf_offset, inf_actions):
  names, name_lengths = native_extraction.name_table(
      [game.card_name(card) for card in range(game.num_cards)])
  return _keys(inf_player, inf_parent_slot, inf_seen, inf_offset, inf_actions, names,
               name_lengths)
