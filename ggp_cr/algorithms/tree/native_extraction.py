"""Native extraction: per-game fast paths building a game's CompiledTree from its rules.

Spec README.md, architecture principle 2. The generic extraction
(`generic_extraction.extract`) walks the Python game history by history; for the package's
own games the rules are simple enough to expand the tree breadth-first in numba, writing
the compiled arrays directly in their final order: a node's children are appended when
the node is reached, so the append order is the breadth-first numbering, and an
information set is numbered when its first history is reached. The `infoset_keys` are
written as bytes once per information set and decoded in one call. Each native
extractor must equal the generic extraction array for array
(tests/test_native_extraction.py); the generic path stays the reference.

`extractor(game)` returns the native extractor of a game (a function game -> tree) or
None; an extractor covers every parameterization its game accepts.
"""

import importlib

import numba
import numpy as np

from ggp_cr.algorithms.tree import flat_tree

TERMINAL, CHANCE = -4, -1
_DECODE_CHUNK = 1 << 14  # keys decoded per call
_EXTRACTORS = {}
_STATE_KEYS = {}
# The module of each game's extractor, imported (and so registered) on first use, so
# that this module imports none of them: imports run from the game modules to here.
_GAME_MODULES = {
    "python_ii_goofspiel": "native_driver_games",
    "python_latent_ttt": "native_driver_games",
    "python_leduc": "native_driver_games",
    "python_princess_monster": "native_princess_monster",
    "python_rps": "native_rps",
}


def register(short_name, supports=None):
  """Decorator: registers a native extractor for the game `short_name`; `supports`
  (game -> bool, default: always) says which parameterizations it covers."""
  def decorate(function):
    _EXTRACTORS[short_name] = (function, supports)
    return function
  return decorate


def extractor(game):
  """The native extractor of `game` (a function game -> CompiledTree) or None if the
  game, or this parameterization of it, has none."""
  short_name = game.get_type().short_name
  if short_name in _GAME_MODULES and short_name not in _EXTRACTORS:
    importlib.import_module(f"ggp_cr.algorithms.tree.{_GAME_MODULES[short_name]}")
  function, supports = _EXTRACTORS.get(short_name, (None, None))
  if function is None or (supports is not None and not supports(game)):
    return None
  return function


def register_state_keys(short_name):
  """Decorator: registers the native state keys of the game `short_name`, a function
  tree -> (other, strings): `other[node]` the key of the player who does not act at
  decision node `node` (the id of that player's infoset with the same information
  state string, else num_infosets + i), -1 at chance and terminal nodes, and
  `strings[i]` the string of extra key num_infosets + i. (The extras' numbering is
  the function's own; subgame_trace.StateKeys renumbers them.)"""
  def decorate(function):
    _STATE_KEYS[short_name] = function
    return function
  return decorate


def state_keys(game):
  """The native state keys function of `game` (see register_state_keys), or None if
  the game, or this parameterization of it, has no native extractor or none."""
  if extractor(game) is None:
    return None
  return _STATE_KEYS.get(game.get_type().short_name)


def native_state_keys_games():
  """Short names of the games with native state keys."""
  for short_name in _GAME_MODULES:
    if short_name not in _EXTRACTORS:
      importlib.import_module(f"ggp_cr.algorithms.tree.{_GAME_MODULES[short_name]}")
  return sorted(_STATE_KEYS)


def has_native(game):
  """Whether `game` has a native extractor."""
  return extractor(game) is not None


# A small instance of each game with a native extractor (python_latent_ttt has
# none): a process's first native extraction and state keys load the kernels, about
# 1.2 s, then 0.1 s for each further game (python_ii_goofspiel(num_cards=5) took 0.73 s
# as a process's first, 0.11 s after these); players load them before any clock.
SMALL_GAMES = ("python_ii_goofspiel(num_cards=3)", "python_leduc(cards_per_suit=2)",
               "python_princess_monster(max_turns=2,rows=2,cols=2)", "python_rps")


def native_games():
  """Short names of the games with a native extractor."""
  return sorted(_GAME_MODULES)


def decode_keys(buffer, length):
  """Infoset keys written by numba as `\\x00`-separated ASCII bytes -> list of str."""
  if length == 0:
    return []
  # Decoded a chunk at a time, so that no text of all the keys exists at once.
  ends = np.append(np.flatnonzero(buffer[:length] == 0)[_DECODE_CHUNK - 1::_DECODE_CHUNK],
                   length)
  keys = []
  start = 0
  for end in ends.tolist():
    keys.extend(str(buffer[start:end].data, "ascii").split("\x00"))
    start = end + 1
  return keys


def decode_tail(buffer, length, first):
  """The keys from the `first`-th on of a decode_keys buffer."""
  if first == 0:
    return decode_keys(buffer, length)
  separators = np.flatnonzero(buffer[:length] == 0)
  if len(separators) < first:
    return []
  start = int(separators[first - 1]) + 1
  return decode_keys(buffer[start:], length - start)


def keys_by_chunks(write, num_infosets):
  """The infoset keys when `write(first, last)` returns the bytes and length of keys
  first..last-1 (see decode_keys): written and decoded a chunk at a time, so that
  the bytes of all keys never exist next to their strings."""
  keys = []
  for first in range(0, num_infosets, _DECODE_CHUNK):
    keys.extend(decode_keys(*write(first, min(first + _DECODE_CHUNK, num_infosets))))
  return keys


def level_offsets(node_depth):
  """Breadth-first level boundaries (equal to the generic extraction's bincount, but
  found by bisecting the non-decreasing depths: no intp copy of node_depth)."""
  levels = np.arange(node_depth[-1] + 2, dtype=node_depth.dtype)
  return np.searchsorted(node_depth, levels).astype(np.int64)


@numba.njit(cache=True)
def node_arrays(num_nodes):
  """Uninitialised node_player, node_infoset, node_parent, node_first_child,
  node_num_children, node_action_index, node_utility, node_depth (in that order)."""
  return (np.empty(num_nodes, np.int8), np.empty(num_nodes, np.int32),
          np.empty(num_nodes, np.int32), np.empty(num_nodes, np.int32),
          np.empty(num_nodes, np.int16), np.empty(num_nodes, np.int16),
          np.empty(num_nodes, np.float64), np.empty(num_nodes, np.int16))


@numba.njit(cache=True)
def infoset_arrays(num_infosets, num_slots):
  """Uninitialised infoset_player, infoset_num_actions, infoset_action_offset,
  infoset_actions (num_slots), infoset_parent_slot, infoset_node (in that order)."""
  return (np.empty(num_infosets, np.int8), np.empty(num_infosets, np.int16),
          np.empty(num_infosets, np.int32), np.empty(num_slots, np.int32),
          np.empty(num_infosets, np.int32), np.empty(num_infosets, np.int32))


@numba.njit(cache=True)
def trimmed_infosets(infosets, num_infosets, num_slots):
  """Copies of the six infoset arrays (as infoset_arrays orders them) cut to their
  first `num_infosets` entries, infoset_actions to `num_slots`."""
  (inf_player, inf_num_actions, inf_offset, inf_actions, inf_parent_slot,
   inf_node) = infosets
  return (inf_player[:num_infosets].copy(), inf_num_actions[:num_infosets].copy(),
          inf_offset[:num_infosets].copy(), inf_actions[:num_slots].copy(),
          inf_parent_slot[:num_infosets].copy(), inf_node[:num_infosets].copy())


@numba.njit(cache=True)
def start_key(keys, length, infoset):
  """Writes the separator before every key but the first; returns the key's start."""
  if infoset:
    keys[length] = 0
    return length + 1
  return length


@numba.njit(cache=True)
def history_of(node, parent, depth, infoset, action_index, infoset_action_offset,
               infoset_actions, out):
  """Writes the actions leading to `node` into out[:depth[node]] (decision parents
  only: the action of a node is its parent's infoset action at its slot)."""
  while node > 0:
    up = parent[node]
    out[depth[node] - 1] = infoset_actions[infoset_action_offset[infoset[up]] +
                                           action_index[node]]
    node = up


@numba.njit(cache=True, inline="always")
def append_children(node, free, count, out_player, out_utility, out_state, player,
                    utility, state, parent, first_child, num_children, action_index,
                    depth):
  """Writes `node`'s `count` children (a game's `children` output) as nodes free..;
  returns the next free node."""
  first_child[node], num_children[node] = free, count
  for i in range(count):
    child = free + i
    player[child], utility[child], state[child] = (out_player[i], out_utility[i],
                                                   out_state[i])
    parent[child], action_index[child], depth[child] = node, i, depth[node] + 1
  return free + count


@numba.njit(cache=True)
def other_key_arrays(num_nodes):
  """For a state keys pass: each node's key of the player who does not act (all
  -1), and room for each extra key's player and node (uninitialised)."""
  return (np.full(num_nodes, -1, np.int32), np.empty(num_nodes, np.int8),
          np.empty(num_nodes, np.int32))


@numba.njit(cache=True)
def previous_slot(mover, node, parent, player, infoset, action_index,
                  infoset_action_offset):
  """The slot of `mover`'s last own decision on the path to `node` (excluded), or -1.
  (`mover` need not act at `node`: the non-acting player's state, see state_keys.)"""
  child = node
  up = parent[node]
  while up >= 0 and player[up] != mover:
    child = up
    up = parent[up]
  if up < 0:
    return -1
  return infoset_action_offset[infoset[up]] + action_index[child]


@numba.njit(cache=True)
def grow(array, size):
  """`array` copied into a new array of at least `size` entries (doubling)."""
  bigger = np.empty(max(size, 2 * len(array)), array.dtype)
  bigger[:len(array)] = array
  return bigger


@numba.njit(cache=True)
def num_digits(value):
  """The number of decimal digits of non-negative `value`."""
  digits = 1
  while value >= 10 ** digits:
    digits += 1
  return digits


@numba.njit(cache=True)
def write_int(buffer, position, value):
  """Writes non-negative `value` in decimal at `position`; returns the end."""
  digits = num_digits(value)
  for i in range(digits - 1, -1, -1):
    buffer[position + i] = 48 + value % 10
    value //= 10
  return position + digits


@numba.njit(cache=True)
def write_bytes(buffer, position, text):
  """Writes the uint8 array `text` at `position`; returns the end."""
  for i in range(len(text)):
    buffer[position + i] = text[i]
  return position + len(text)


@numba.njit(cache=True)
def slot_owners(infoset_action_offset, num_slots):
  """The infoset owning each slot."""
  owner = np.empty(num_slots, np.int32)
  for k in range(len(infoset_action_offset)):
    end = (infoset_action_offset[k + 1] if k + 1 < len(infoset_action_offset)
           else num_slots)
    owner[infoset_action_offset[k]:end] = k
  return owner


def name_table(names):
  """ASCII names -> (uint8 table padded with zeros, lengths) for numba key writers."""
  encoded = [name.encode("ascii") for name in names]
  table = np.zeros((len(encoded), max(map(len, encoded))), np.uint8)
  for row, name in enumerate(encoded):
    table[row, :len(name)] = np.frombuffer(name, np.uint8)
  return table, np.array([len(name) for name in encoded], np.int64)


def build_tree(game, nodes, infosets, keys):
  """CompiledTree from the node arrays (dict), infoset arrays (dict) and key list.

  `nodes` holds the nine node fields, `infosets` the six infoset_* fields;
  `level_offsets` and `slot_infoset` are derived here. Our games are zero-sum.
  """
  arrays = dict(nodes)
  arrays.update(infosets)
  arrays["level_offsets"] = level_offsets(nodes["node_depth"])
  arrays["slot_infoset"] = np.repeat(
      np.arange(len(infosets["infoset_player"]), dtype=np.int32),
      infosets["infoset_num_actions"])
  tree = flat_tree.CompiledTree(str(game), 0.0, game.num_distinct_actions(), keys,
                                arrays)
  tree._game = game  # pylint: disable=protected-access
  return tree


def tree_from_filled(game, filled, chance_prob=None):
  """CompiledTree from the tuple of a game's numba `_fill`: the eight node arrays
  but node_chance_prob (all 1 if None: no chance), the six infoset arrays, the key
  bytes and their length."""
  return tree_from_arrays(game, filled[:14], decode_keys(*filled[14:]), chance_prob)


def tree_from_arrays(game, arrays, keys, chance_prob=None):
  """CompiledTree from the eight node arrays but node_chance_prob (all 1 if None: no
  chance), the six infoset arrays (as in tree_from_filled) and the key list."""
  (player, infoset, parent, first_child, num_children, action_index, utility, depth,
   inf_player, inf_num_actions, inf_offset, inf_actions, inf_parent_slot,
   inf_node) = arrays
  nodes = {"node_player": player, "node_infoset": infoset, "node_parent": parent,
           "node_first_child": first_child, "node_num_children": num_children,
           "node_action_index": action_index,
           "node_chance_prob": (np.ones(len(player)) if chance_prob is None
                                else chance_prob),
           "node_utility": utility,
           "node_depth": depth}
  infosets = {"infoset_player": inf_player, "infoset_num_actions": inf_num_actions,
              "infoset_action_offset": inf_offset, "infoset_actions": inf_actions,
              "infoset_parent_slot": inf_parent_slot, "infoset_node": inf_node}
  return build_tree(game, nodes, infosets, keys)
