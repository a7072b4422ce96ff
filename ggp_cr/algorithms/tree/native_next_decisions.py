"""A player's next decisions below given histories, walked natively: the histories of
its next information set found on native_driver's state encoding (python_ii_goofspiel,
python_leduc, python_princess_monster, python_latent_ttt), about 1 µs a history.

`next_decisions` walks down from each start to the first histories where `player`
acts again (at a start where it acts, only the own actions given) and labels each
by the game's `seen` (what the player observed since: with the start's information
set and its action, this fixes its information state there, as native_driver's
`fill` numbers information sets). own_trace.OwnTrace walks only the paths it finds
to the bot's new information set; see docs/algorithms/tree.md.
"""

import numba
import numpy as np

from ggp_cr.algorithms.tree import native_driver
from ggp_cr.algorithms.tree import native_extraction
from ggp_cr.algorithms.tree import native_ii_goofspiel
from ggp_cr.algorithms.tree import native_latent_ttt
from ggp_cr.algorithms.tree import native_leduc
from ggp_cr.algorithms.tree import native_princess_monster

_TERMINAL, _CHANCE = native_extraction.TERMINAL, native_extraction.CHANCE
# Per game: native_driver's number, the module with `driver_setup` and `supports`.
_GAMES = {"python_ii_goofspiel": (native_driver.II_GOOFSPIEL, native_ii_goofspiel),
          "python_leduc": (native_driver.LEDUC, native_leduc),
          "python_princess_monster": (native_driver.PRINCESS_MONSTER,
                                      native_princess_monster),
          "python_latent_ttt": (native_driver.LATENT_TTT, native_latent_ttt)}


def supports(game):
  """Whether `game` (pyspiel) has a native walk here."""
  entry = _GAMES.get(game.get_type().short_name)
  return entry is not None and entry[1].supports(game)


def driver(game):
  """native_driver's game number, params, root state, root player and most children
  of a node of `game` (a game `supports` takes)."""
  if not supports(game):
    raise ValueError(f"No native walk of {game}: it covers "
                     f"{', '.join(sorted(_GAMES))} within their native extractors' "
                     "parameters.")
  number, module = _GAMES[game.get_type().short_name]
  params, root_state, root_player, max_children = module.driver_setup(game)
  return number, params, np.int64(root_state), np.int64(root_player), np.int64(
      max_children)


@numba.njit(cache=True)
def replay(game, root_state, root_player, params, history, length, out_state,
            out_player, out_utility, out_prob, out_action):
  """The native (state, player) of the history `history[:length]` from the root."""
  state, player = root_state, root_player
  for step in range(length):
    count = native_driver.expand(game, state, player, params, out_state, out_player,
                                 out_utility, out_prob, out_action)
    found = -1
    for i in range(count):
      if out_action[i] == history[step]:
        found = i
    if found < 0:
      raise ValueError("A history is not one of this game's: an action is not legal.")
    state, player = out_state[found], out_player[found]
  return state, player


@numba.njit(cache=True)
def _walk(game, root_state, root_player, params, max_children, max_below, player,
          histories, lengths, own_actions, limit):
  """Per start k (histories[k, :lengths[k]]), its histories where `player` acts next
  (following only own_actions[k] (-1 padded) at a start where it acts). Returns
  (start, path length, seen) per history found and their paths (rows, -1 padded);
  stops once more than `limit` are found (then returns limit + 1 of them)."""
  state = np.zeros(max_below + 1, np.int64)  # the path's nodes: the start is node 0
  node_player = np.zeros(max_below + 1, np.int64)
  parent = np.arange(-1, max_below, dtype=np.int64)
  infoset = np.arange(max_below + 1, dtype=np.int64)  # node d's actions at d * width
  offset = np.arange(max_below + 1, dtype=np.int64) * max_children
  actions = np.zeros((max_below + 1) * max_children, np.int64)
  action_index = np.zeros(max_below + 1, np.int64)
  child_state = np.zeros((max_below + 1, max_children), np.int64)
  child_player = np.zeros((max_below + 1, max_children), np.int64)
  child_prob = np.zeros((max_below + 1, max_children))
  utility = np.zeros(max_children)
  num = np.zeros(max_below + 1, np.int64)
  position = np.zeros(max_below + 1, np.int64)
  capacity = 1024
  starts = np.empty(capacity, np.int64)
  path_lengths = np.empty(capacity, np.int64)
  seen = np.empty(capacity, np.int64)
  paths = np.full((capacity, max_below), -1, np.int32)
  found = 0
  for k in range(len(lengths)):
    if found > limit:
      break
    state[0], node_player[0] = replay(
        game, root_state, root_player, params, histories[k], lengths[k], child_state[0],
        child_player[0], utility, child_prob[0], actions[:max_children])
    num[0] = native_driver.expand(game, state[0], node_player[0], params,
                                  child_state[0], child_player[0], utility,
                                  child_prob[0], actions[:max_children])
    position[0], top = 0, 0
    while top >= 0 and found <= limit:
      i = position[top]
      if i == num[top]:
        top -= 1
        continue
      position[top] = i + 1
      action = actions[offset[top] + i]
      if top == 0 and node_player[0] == player:
        own = False
        for a in own_actions[k]:
          own = own or a == action
        if not own:
          continue
      if child_player[top, i] == _TERMINAL:
        continue
      if node_player[top] == _CHANCE and not child_prob[top, i] > 0:
        continue
      below = top + 1
      state[below], node_player[below] = child_state[top, i], child_player[top, i]
      action_index[below] = i
      if node_player[below] == player:
        if found == capacity:
          capacity *= 2
          starts = native_extraction.grow(starts, capacity)
          path_lengths = native_extraction.grow(path_lengths, capacity)
          seen = native_extraction.grow(seen, capacity)
          wider = np.full((capacity, max_below), -1, np.int32)
          wider[:found] = paths[:found]
          paths = wider
        starts[found], path_lengths[found] = k, below
        seen[found] = native_driver.seen_since(game, player, below, state, node_player,
                                               parent, infoset, action_index, offset,
                                               actions, params)
        for d in range(below):
          paths[found, d] = actions[offset[d] + position[d] - 1]
        found += 1
        continue
      if below == max_below:
        raise ValueError("The walk passed max_below moves without the player's turn.")
      num[below] = native_driver.expand(
          game, state[below], node_player[below], params, child_state[below],
          child_player[below], utility, child_prob[below],
          actions[offset[below]:offset[below] + max_children])
      position[below], top = 0, below
  return starts[:found], path_lengths[:found], seen[:found], paths[:found]


@numba.njit(cache=True)
def extended_rows(rows, lengths, which, starts, paths, path_lengths):
  """The histories rows[starts[f]] + paths[f] (f in `which`) as rows (-1 padded) and
  their lengths."""
  new_lengths = np.empty(len(which), np.int64)
  for n in range(len(which)):
    new_lengths[n] = lengths[starts[which[n]]] + path_lengths[which[n]]
  out = np.full((len(which), max(1, new_lengths.max() if len(which) else 1)), -1,
                np.int64)
  for n in range(len(which)):
    f = which[n]
    length = lengths[starts[f]]
    out[n, :length] = rows[starts[f], :length]
    out[n, length:new_lengths[n]] = paths[f, :path_lengths[f]]
  return out, new_lengths


def history_rows(histories):
  """Action lists as rows of an int64 array (-1 padded) and their lengths."""
  lengths = np.array([len(h) for h in histories], np.int64)
  rows = np.full((len(histories), max(1, lengths.max(initial=0))), -1, np.int64)
  for k, history in enumerate(histories):
    rows[k, :len(history)] = history
  return rows, lengths


def next_decisions(game, player, rows, lengths, own_rows, limit=1 << 62, max_below=16):
  """`player`'s next decisions below each history rows[k, :lengths[k]] (history_rows)
  of `game` (a game `supports` takes): a start where `player` acts follows only its
  own actions own_rows[k] (-1 padded); every other node, all its actions. Returns
  (start, path length, seen) per history found, in depth-first order of the game's
  actions, and their paths from the start (an int32 array, -1 padded); None if
  more than `limit` are found. Raises ValueError for a game without a native
  walk, or past `max_below` moves below a start."""
  number, params, root_state, root_player, max_children = driver(game)
  starts, path_lengths, seen, paths = _walk(
      number, root_state, root_player, params, max_children,
      np.int64(max_below), np.int64(player), rows, lengths,
      np.asarray(own_rows, np.int64), np.int64(limit))
  if len(starts) > limit:
    return None
  return starts, path_lengths, seen, paths


def warm_up(game):
  """Loads the kernels (a player's process warm-up, before any clock) on `game`, a
  small game `supports` takes."""
  rows, lengths = history_rows([[]])
  starts, path_lengths, _, paths = next_decisions(game, 1, rows, lengths,
                                                  np.full((1, 1), -1, np.int64))
  extended_rows(rows, lengths, np.arange(len(starts)), starts, paths, path_lengths)
