"""The compiled game tree: any two-player zero-sum perfect-recall game as flat arrays.

Spec README.md, architecture principle 2: the tree of a sequential pyspiel game is
extracted once into numpy arrays, and every exhaustive algorithm (CFR family, best
response, exploitability, gadgets, evaluators) runs numba loops over them.

Nodes are numbered in breadth-first order, root = 0; the children of a node are
contiguous and in the order of `state.legal_actions()` (decision) or
`state.chance_outcomes()` (chance). Per node (arrays of length `num_nodes`):
- `node_player`        int8    0 or 1 (decision), -1 chance, -4 terminal
- `node_infoset`       int32   information-set index of a decision node, -1 otherwise
- `node_parent`        int32   -1 for the root
- `node_first_child`   int32   index of the first child (0 for terminals)
- `node_num_children`  int16   0 for terminals
- `node_action_index`  int16   slot of the node among its parent's children (-1 at root)
- `node_chance_prob`   float64 probability of the node given its parent when the
                               parent is a chance node, 1.0 otherwise
- `node_utility`       float64 player 0's utility at terminals, 0 elsewhere; player 1
                               gets `utility_sum - node_utility` (the negative in
                               zero-sum games)
- `node_depth`         int16
- `level_offsets`      int64   nodes of depth d are level_offsets[d]:level_offsets[d+1]
Per information set (arrays of length `num_infosets`), numbered in the breadth-first
order of their first history, so an information set comes after every information set
on the paths to it:
- `infoset_player`        int8
- `infoset_num_actions`   int16
- `infoset_action_offset` int32   slots of infoset i are [offset, offset + num_actions)
                                  in flat per-(infoset, action) arrays of length
                                  `num_infoset_actions`
- `infoset_actions`       int32   the legal action ids, indexed by slot
- `infoset_parent_slot`   int32   (added) the slot of the same player's previous
                                  (infoset, action) on every path to the infoset, -1
                                  if it is the player's first decision (perfect recall
                                  makes this unique); the player's sequence tree
- `infoset_node`          int32   (added) the first history (breadth-first) of the
                                  infoset, used to rebuild a representative state
- `infoset_keys`          list of str, the `information_state_string` of each infoset
Per slot: `slot_infoset` int32 (added), the infoset owning each slot.
Game-level: `game_string`, `num_nodes`, `num_infosets`, `num_infoset_actions`,
`max_depth`, `num_distinct_actions` (added), `utility_sum` (added; 0 in zero-sum games).

A behavioural strategy "in slot form" is a float64 vector of length
`num_infoset_actions` whose slots of each infoset sum to 1. `policy_to_slots` and
`slots_to_tabular_policy` convert to and from OpenSpiel policies.
"""

import array
import collections
import hashlib
import importlib.metadata
import inspect
import os
import re
import tempfile
import time
import warnings
import zipfile

import numba
import numpy as np
from open_spiel.python import policy as policy_lib
import pyspiel

# Bumped whenever the cached arrays change meaning; older cache files are rebuilt.
_CACHE_FORMAT = 1

_NODE_FIELDS = ("node_player", "node_infoset", "node_parent", "node_first_child",
                "node_num_children", "node_action_index", "node_chance_prob",
                "node_utility", "node_depth")
_ARRAY_FIELDS = _NODE_FIELDS + (
    "level_offsets", "infoset_player", "infoset_num_actions", "infoset_action_offset",
    "infoset_actions", "infoset_parent_slot", "infoset_node", "slot_infoset")

_TERMINAL = int(pyspiel.PlayerId.TERMINAL)
_CHANCE = int(pyspiel.PlayerId.CHANCE)


@numba.njit(cache=True)
def _node_reaches(node_player, node_infoset, node_parent, node_action_index,
                  node_chance_prob, infoset_action_offset, slots):
  """Rows: player 0's, player 1's and chance's reach probability of every node."""
  num_nodes = len(node_player)
  reach = np.ones((3, num_nodes))
  for node in range(1, num_nodes):
    parent = node_parent[node]
    for row in range(3):
      reach[row, node] = reach[row, parent]
    mover = node_player[parent]
    if mover == _CHANCE:
      reach[2, node] *= node_chance_prob[node]
    else:
      reach[mover, node] *= slots[infoset_action_offset[node_infoset[parent]] +
                                  node_action_index[node]]
  return reach


@numba.njit(cache=True)
def _node_values(node_player, node_infoset, node_first_child, node_num_children,
                 node_chance_prob, node_utility, infoset_action_offset, slots):
  """Player 0's expected utility below every node when both play `slots`."""
  num_nodes = len(node_player)
  values = np.zeros(num_nodes)
  for node in range(num_nodes - 1, -1, -1):
    player = node_player[node]
    if player == _TERMINAL:
      values[node] = node_utility[node]
      continue
    first = node_first_child[node]
    total = 0.0
    if player == _CHANCE:
      for child in range(first, first + node_num_children[node]):
        total += node_chance_prob[child] * values[child]
    else:
      slot = infoset_action_offset[node_infoset[node]]
      for child in range(first, first + node_num_children[node]):
        total += slots[slot] * values[child]
        slot += 1
    values[node] = total
  return values



class CompiledTree:
  """Flat arrays of a game tree; see the module docstring for the fields."""

  def __init__(self, game_string, utility_sum, num_distinct_actions, infoset_keys,
               arrays):
    self.game_string = game_string
    self.utility_sum = float(utility_sum)
    self.num_distinct_actions = int(num_distinct_actions)
    self.infoset_keys = infoset_keys
    for name in _ARRAY_FIELDS:
      setattr(self, name, arrays[name])
    self.num_nodes = len(self.node_player)
    self.num_infosets = len(self.infoset_player)
    self.num_infoset_actions = len(self.infoset_actions)
    self.max_depth = len(self.level_offsets) - 2
    self._game = None
    self._key_index = None

  def __repr__(self):
    return (f"CompiledTree({self.game_string}: {self.num_nodes:,} nodes, "
            f"{self.num_infosets:,} infosets, {self.num_infoset_actions:,} slots, "
            f"depth {self.max_depth})")

  @property
  def game(self):
    """The pyspiel game, loaded from `game_string` on first use."""
    if self._game is None:
      self._game = pyspiel.load_game(self.game_string)
    return self._game

  def nbytes(self):
    """Bytes held by the numpy arrays (the infoset key strings not included)."""
    return sum(getattr(self, name).nbytes for name in _ARRAY_FIELDS)

  def infoset_index(self, player, key):
    """The index of `player`'s information set with information state `key`."""
    if self._key_index is None:
      self._key_index = [{}, {}]
      for index, (p, k) in enumerate(zip(self.infoset_player.tolist(),
                                         self.infoset_keys)):
        self._key_index[p][k] = index
    try:
      return self._key_index[player][key]
    except KeyError:
      raise KeyError(f"Player {player} has no information state {key!r} in "
                     f"{self.game_string}.") from None

  def node_reaches(self, slots):
    """Rows: player 0's, player 1's and chance's reach of every node under `slots`."""
    return _node_reaches(self.node_player, self.node_infoset, self.node_parent,
                         self.node_action_index, self.node_chance_prob,
                         self.infoset_action_offset, slots)

  def node_values(self, slots):
    """Player 0's expected utility below every node when both play `slots`."""
    return _node_values(self.node_player, self.node_infoset, self.node_first_child,
                        self.node_num_children, self.node_chance_prob, self.node_utility,
                        self.infoset_action_offset, slots)

  def uniform_slots(self):
    """The uniform random strategy of both players in slot form."""
    return 1.0 / self.infoset_num_actions[self.slot_infoset].astype(np.float64)

  def random_slots(self, rng, kind="mixed"):
    """A random strategy of both players in slot form, drawn with numpy `rng`.

    `kind` is "mixed" (uniform weights per action, normalised), "sparse" (about half
    of each infoset's actions get probability zero) or "deterministic" (one action
    with probability one per infoset).
    """
    if kind == "deterministic":
      slots = np.zeros(self.num_infoset_actions)
      choice = (rng.random(self.num_infosets) * self.infoset_num_actions).astype(np.int64)
      slots[self.infoset_action_offset + choice] = 1.0
      return slots
    if kind not in ("mixed", "sparse"):
      raise ValueError(f"kind must be mixed, sparse or deterministic; got {kind!r}.")
    weights = rng.random(self.num_infoset_actions)
    if kind == "sparse":
      weights *= rng.random(self.num_infoset_actions) < 0.5
      sums = np.add.reduceat(weights, self.infoset_action_offset)[self.slot_infoset]
      weights = np.where(sums > 0, weights, 1.0)
    return weights / np.add.reduceat(weights, self.infoset_action_offset)[self.slot_infoset]

  def infoset_states(self, infosets=None):
    """Yields (infoset, state) with one representative state per infoset.

    The states are rebuilt from the root along the recorded action paths, sharing
    common prefixes; `infosets` (default: all) selects which ones.
    """
    if infosets is None:
      infosets = range(self.num_infosets)
    targets = {}
    for infoset in infosets:
      targets.setdefault(int(self.infoset_node[infoset]), []).append(int(infoset))
    needed = np.zeros(self.num_nodes, dtype=bool)
    for node in targets:
      while node >= 0 and not needed[node]:
        needed[node] = True
        node = self.node_parent[node]
    stack = [(0, self.game.new_initial_state())]
    while stack:
      node, state = stack.pop()
      for infoset in targets.get(node, ()):
        yield infoset, state
      first = int(self.node_first_child[node])
      children = [c for c in range(first, first + int(self.node_num_children[node]))
                  if needed[c]]
      if not children:
        continue
      if state.is_chance_node():
        actions = [a for a, _ in state.chance_outcomes()]
      else:
        actions = state.legal_actions()
      for child in reversed(children):
        stack.append((child, state.child(actions[child - first])))

  def policy_to_slots(self, policy):
    """Any open_spiel policy.Policy / TabularPolicy -> strategy in slot form.

    A plain TabularPolicy is read by key; any other policy is asked
    `action_probabilities(state)` at one representative state per information set.
    Probabilities are taken as given (not renormalised), as OpenSpiel's best
    response does. Raises ValueError naming a missing information state, or an
    illegal action given positive probability.
    """
    if (isinstance(policy, policy_lib.TabularPolicy) and
        type(policy).action_probabilities is
        policy_lib.TabularPolicy.action_probabilities):
      return self._tabular_policy_to_slots(policy)
    slots = np.zeros(self.num_infoset_actions)
    for infoset, state in self.infoset_states():
      try:
        probabilities = policy.action_probabilities(state)
      except (KeyError, IndexError) as error:
        raise ValueError(
            f"The policy has no action probabilities for player "
            f"{self.infoset_player[infoset]}'s information state "
            f"{self.infoset_keys[infoset]!r}: {error!r}") from None
      self._fill_slots(slots, infoset, probabilities)
    return slots

  def _fill_slots(self, slots, infoset, probabilities):
    offset = int(self.infoset_action_offset[infoset])
    actions = self.infoset_actions[
        offset:offset + int(self.infoset_num_actions[infoset])].tolist()
    for action, probability in probabilities.items():
      if action in actions:
        slots[offset + actions.index(action)] = probability
      elif probability > 0:
        raise ValueError(
            f"The policy gives probability {probability} to illegal action {action} "
            f"in information state {self.infoset_keys[infoset]!r}.")

  def _tabular_policy_to_slots(self, policy):
    try:
      rows = np.fromiter(map(policy.state_lookup.__getitem__, self.infoset_keys),
                         dtype=np.int64, count=self.num_infosets)
    except KeyError as error:
      key, = error.args
      infoset = self.infoset_keys.index(key)
      raise ValueError(
          f"The policy has no entry for player {self.infoset_player[infoset]}'s "
          f"information state {key!r}.") from None
    table = policy.action_probability_array
    if table.shape[1] <= self.infoset_actions.max(initial=0):
      raise ValueError(
          f"The policy's table has {table.shape[1]} actions; {self.game_string} "
          f"has {self.num_distinct_actions}.")
    return np.asarray(table[rows[self.slot_infoset], self.infoset_actions],
                      dtype=np.float64)

  def slots_to_tabular_policy(self, slots, players=None):
    """Strategy in slot form -> open_spiel TabularPolicy, without walking the game.

    Rows are grouped by player (as TabularPolicy guarantees) and, within a player,
    in infoset-index order. `states` is a lazy sequence rebuilding each state on
    access; `state_in` is None.
    """
    slots = np.asarray(slots, dtype=np.float64)
    if slots.shape != (self.num_infoset_actions,):
      raise ValueError(f"slots must have shape ({self.num_infoset_actions},), got "
                       f"{slots.shape}.")
    players = sorted(players if players is not None else range(2))
    order = np.concatenate([np.flatnonzero(self.infoset_player == p) for p in players])
    tabular = policy_lib.TabularPolicy.__new__(policy_lib.TabularPolicy)
    policy_lib.Policy.__init__(tabular, self.game, players)
    tabular.game_type = self.game.get_type()
    tabular.state_lookup = {}
    tabular.states_per_player = [[], []]
    for row, infoset in enumerate(order.tolist()):
      key = self.infoset_keys[infoset]
      tabular.state_lookup.setdefault(key, row)
      tabular.states_per_player[self.infoset_player[infoset]].append(key)
    tabular.states = _LazyStates(self, order)
    tabular.state_in = None
    in_order = np.isin(self.slot_infoset, order)
    row_of_infoset = np.full(self.num_infosets, -1, dtype=np.int64)
    row_of_infoset[order] = np.arange(len(order))
    slot_rows = row_of_infoset[self.slot_infoset[in_order]]
    slot_actions = self.infoset_actions[in_order]
    tabular.legal_actions_mask = np.zeros((len(order), self.num_distinct_actions),
                                          dtype=np.int64)
    tabular.legal_actions_mask[slot_rows, slot_actions] = 1
    tabular.action_probability_array = np.zeros(
        (len(order), self.num_distinct_actions))
    tabular.action_probability_array[slot_rows, slot_actions] = slots[in_order]
    return tabular

  def save(self, path):
    """Writes the tree to `path` (npz), atomically: a temporary file is renamed."""
    keys = "\x00".join(self.infoset_keys).encode("utf-8")
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=directory, suffix=".tmp")
    try:
      with os.fdopen(handle, "wb") as file:
        np.savez(file, cache_format=np.int64(_CACHE_FORMAT),
                 game_string=np.array(self.game_string),
                 utility_sum=np.float64(self.utility_sum),
                 num_distinct_actions=np.int64(self.num_distinct_actions),
                 infoset_keys=np.frombuffer(keys, dtype=np.uint8),
                 **{name: getattr(self, name) for name in _ARRAY_FIELDS})
      os.replace(temporary, path)
    except BaseException:
      os.unlink(temporary)
      raise

  @classmethod
  def load(cls, path, game_string=None):
    """Reads a tree written by `save`; raises ValueError if it is unreadable,
    of another format version, or (given `game_string`) of another game."""
    try:
      with np.load(path, allow_pickle=False) as data:
        contents = {name: data[name] for name in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
      raise ValueError(
          f"Cache file {path} is not a readable tree cache ({error}).") from None
    expected = _ARRAY_FIELDS + ("cache_format", "game_string", "utility_sum",
                                "num_distinct_actions", "infoset_keys")
    missing = set(expected) - set(contents)
    if missing:
      raise ValueError(f"Cache file {path} lacks {sorted(missing)}.")
    if int(contents["cache_format"]) != _CACHE_FORMAT:
      raise ValueError(f"Cache file {path} has format {int(contents['cache_format'])}, "
                       f"expected {_CACHE_FORMAT}.")
    stored_game = str(contents["game_string"])
    if game_string is not None and stored_game != game_string:
      raise ValueError(f"Cache file {path} holds {stored_game}, not {game_string}.")
    blob = contents["infoset_keys"].tobytes().decode("utf-8")
    num_infosets = len(contents["infoset_player"])
    keys = blob.split("\x00") if num_infosets else []
    if len(keys) != num_infosets:
      raise ValueError(f"Cache file {path} has {len(keys)} keys for {num_infosets} "
                       "infosets.")
    return cls(stored_game, contents["utility_sum"], contents["num_distinct_actions"],
               keys, contents)


class _LazyStates(collections.abc.Sequence):
  """TabularPolicy.states of a compiled tree: rebuilds each state when accessed."""

  def __init__(self, tree, infosets):
    self._tree = tree
    self._infosets = infosets

  def __len__(self):
    return len(self._infosets)

  def __getitem__(self, index):
    if isinstance(index, slice):
      return [self[i] for i in range(*index.indices(len(self)))]
    (_, state), = self._tree.infoset_states([self._infosets[index]])
    return state


def check_game(game):
  """Raises ValueError unless `game` is a game compile_game accepts."""
  game_type = game.get_type()
  if game.num_players() != 2:
    raise ValueError(f"{game} has {game.num_players()} players; only two-player games "
                     "can be compiled.")
  if game_type.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
    raise ValueError(f"{game} is not sequential ({game_type.dynamics}); convert it "
                     "with pyspiel.load_game_as_turn_based.")
  if game_type.utility not in (pyspiel.GameType.Utility.ZERO_SUM,
                               pyspiel.GameType.Utility.CONSTANT_SUM):
    raise ValueError(f"{game} is not zero-sum or constant-sum ({game_type.utility}); "
                     "only those games can be compiled.")
  if game_type.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
    raise ValueError(f"{game} has sampled chance; explicit chance outcomes are needed.")
  if not game_type.provides_information_state_string:
    raise ValueError(f"{game} does not provide information state strings.")


def _implementation_fingerprint(game):
  """What identifies the code that defines `game`'s rules.

  For a Python game, the bytes of the module defining its class, so that a cached tree
  is not reused after the game's rules change; for a C++ game, OpenSpiel's version.
  """
  game_class = type(game)
  if game_class.__module__ in ("pyspiel", "builtins"):
    return f"open_spiel {importlib.metadata.version('open_spiel')}".encode("utf-8")
  with open(inspect.getsourcefile(game_class), "rb") as source:
    return source.read()


def _cache_path(cache_dir, game):
  game_string = str(game)
  readable = re.sub(r"[^A-Za-z0-9_.=,-]+", "_", game_string)[:80]
  digest = hashlib.sha1(game_string.encode("utf-8"))
  digest.update(_implementation_fingerprint(game))
  return os.path.join(cache_dir, f"{readable}-{digest.hexdigest()[:16]}.npz")


def compile_game(game, cache_dir=None, progress=False, route="auto"):
  """Extracts the tree of `game` (a pyspiel game or game string) into a CompiledTree.

  If `cache_dir` is given, the tree is read from / written to an npz file there keyed
  by the game string and the code defining the game's rules; an unreadable or mismatched file is reported (warning) and
  rebuilt. `progress` prints a line every million histories. `route` is "auto" (the
  game's native extractor if it has one, see native_extraction.py, else the generic
  walk), "generic" or "native" (ValueError if the game has none); both routes give the
  same tree. Raises ValueError if the
  game has more than two players, is general-sum, simultaneous, has sampled chance,
  lacks information state strings, or has imperfect recall.
  """
  if isinstance(game, str):
    game = pyspiel.load_game(game)
  check_game(game)
  extract = _route_extractor(game, route)
  game_string = str(game)
  path = None
  if cache_dir is not None:
    path = _cache_path(cache_dir, game)
    if os.path.exists(path):
      try:
        tree = CompiledTree.load(path, game_string)
        tree._game = game  # pylint: disable=protected-access
        return tree
      except ValueError as error:
        warnings.warn(f"Refusing the cached tree: {error} Rebuilding it.")
  start = time.time()
  tree = extract(game, game_string, progress)
  if progress:
    print(f"  {tree} built in {time.time() - start:.1f} s", flush=True)
  if path is not None:
    tree.save(path)
  return tree


def _route_extractor(game, route):
  """The function (game, game_string, progress) -> tree that `route` picks."""
  from ggp_cr.algorithms import native_extraction  # pylint: disable=import-outside-toplevel
  native = native_extraction.extractor(game)
  if route == "generic" or (route == "auto" and native is None):
    return _extract
  if route not in ("auto", "native"):
    raise ValueError(f"route must be auto, generic or native; got {route!r}.")
  if native is None:
    raise ValueError(f"{game} has no native extractor; games with one: "
                     f"{', '.join(native_extraction.native_games())}.")
  return lambda game, game_string, progress: native(game)


def _extract(game, game_string, progress):
  """Depth-first walk recording each history once, then breadth-first renumbering.

  Only the root-to-node stack holds states; the last child of a node reuses its
  parent's state. Imperfect recall is detected when two histories of one infoset
  disagree on the player's previous (infoset, action) or on the legal actions.
  """
  utility_sum = game.utility_sum() if (
      game.get_type().utility == pyspiel.GameType.Utility.CONSTANT_SUM) else 0.0
  parents = array.array("i")
  action_indices = array.array("h")
  players = array.array("b")
  infosets = array.array("i")
  num_children = array.array("h")
  chance_probs = array.array("d")
  utilities = array.array("d")
  depths = array.array("h")
  lookup = ({}, {})
  keys = []
  infoset_player = []
  infoset_offset = []
  infoset_parent_slot = []
  infoset_actions = []        # one tuple per infoset, interned
  interned_actions = {}
  num_slots = 0
  start = time.time()

  # Frame: [state, actions, probs or None, next child, node, depth, slot base or -1,
  #         player, own last slot of player 0, of player 1].
  stack = []
  state, parent, action_index, prob, depth, last0, last1 = (
      game.new_initial_state(), -1, -1, 1.0, 0, -1, -1)
  node = 0
  while True:
    # Record `state` as history `node`.
    parents.append(parent)
    action_indices.append(action_index)
    chance_probs.append(prob)
    depths.append(depth)
    if state.is_terminal():
      returns = state.returns()
      if abs(returns[0] + returns[1] - utility_sum) > 1e-9 * (1 + abs(returns[0])):
        raise ValueError(
            f"{game_string} is not zero-sum: terminal returns {returns} sum to "
            f"{returns[0] + returns[1]}, not {utility_sum}.")
      players.append(_TERMINAL)
      infosets.append(-1)
      num_children.append(0)
      utilities.append(returns[0])
    elif state.is_chance_node():
      outcomes = state.chance_outcomes()
      players.append(_CHANCE)
      infosets.append(-1)
      num_children.append(len(outcomes))
      utilities.append(0.0)
      stack.append([state, [a for a, _ in outcomes], [p for _, p in outcomes], 0,
                    node, depth, -1, -1, last0, last1])
    else:
      player = state.current_player()
      key = state.information_state_string(player)
      legal = tuple(state.legal_actions())
      last = last1 if player else last0
      infoset = lookup[player].get(key)
      if infoset is None:
        infoset = len(keys)
        lookup[player][key] = infoset
        keys.append(key)
        infoset_player.append(player)
        infoset_offset.append(num_slots)
        infoset_parent_slot.append(last)
        infoset_actions.append(interned_actions.setdefault(legal, legal))
        num_slots += len(legal)
      elif infoset_parent_slot[infoset] != last or infoset_actions[infoset] != legal:
        raise ValueError(_recall_message(game_string, player, key, infoset_actions,
                                         infoset_parent_slot, infoset, legal, last))
      players.append(player)
      infosets.append(infoset)
      num_children.append(len(legal))
      utilities.append(0.0)
      stack.append([state, legal, None, 0, node, depth, infoset_offset[infoset],
                    player, last0, last1])
    node += 1
    if progress and node % 1_000_000 == 0:
      print(f"  ... {node:,} histories, {len(keys):,} infosets after "
            f"{time.time() - start:.1f} s", flush=True)
    # Next history in depth-first order.
    while stack:
      frame = stack[-1]
      actions = frame[1]
      action_index = frame[3]
      if action_index == len(actions):
        stack.pop()
        continue
      frame[3] = action_index + 1
      state = frame[0]
      if action_index + 1 == len(actions):
        stack.pop()
        state.apply_action(actions[action_index])
      else:
        state = state.child(actions[action_index])
      parent, depth = frame[4], frame[5] + 1
      last0, last1 = frame[8], frame[9]
      if frame[2] is not None:
        prob = frame[2][action_index]
      else:
        prob = 1.0
        if frame[7]:
          last1 = frame[6] + action_index
        else:
          last0 = frame[6] + action_index
      break
    else:
      break
  del lookup, interned_actions
  if max(num_children, default=0) >= 2**15:
    raise ValueError(f"{game_string} has a node with more than 32767 children.")
  return _renumber_breadth_first(
      game, game_string, utility_sum, parents, action_indices, players, infosets,
      num_children, chance_probs, utilities, depths, keys, infoset_player,
      infoset_offset, infoset_parent_slot, infoset_actions)


def _recall_message(game_string, player, key, infoset_actions, infoset_parent_slot,
                    infoset, legal, last):
  if infoset_actions[infoset] != legal:
    what = (f"legal actions {list(infoset_actions[infoset])} and {list(legal)} differ")
  else:
    what = (f"the player's own previous decision differs (slots "
            f"{infoset_parent_slot[infoset]} and {last})")
  return (f"{game_string} does not have perfect recall: two histories of player "
          f"{player}'s information state {key!r} disagree: {what}.")


def _renumber_breadth_first(game, game_string, utility_sum, parents, action_indices,
                            players, infosets, num_children, chance_probs, utilities,
                            depths, keys, infoset_player, infoset_offset,
                            infoset_parent_slot, infoset_actions):
  """Depth-first (preorder) arrays -> the breadth-first CompiledTree.

  A stable sort of the preorder by depth is the breadth-first order with each
  node's children contiguous and in order.
  """
  depth = np.frombuffer(depths, dtype=np.int16)
  order = np.argsort(depth, kind="stable").astype(np.int32)
  num_nodes = len(order)
  new_index = np.empty(num_nodes, dtype=np.int32)
  new_index[order] = np.arange(num_nodes, dtype=np.int32)
  del depths

  def take(buffer, dtype):
    return np.frombuffer(buffer, dtype=dtype)[order]

  arrays = {"node_depth": depth[order]}
  old_parent = take(parents, np.int32)
  del parents
  arrays["node_parent"] = np.where(old_parent >= 0, new_index[old_parent], -1).astype(
      np.int32)
  del old_parent, new_index
  arrays["node_action_index"] = take(action_indices, np.int16)
  arrays["node_player"] = take(players, np.int8)
  arrays["node_num_children"] = take(num_children, np.int16)
  arrays["node_chance_prob"] = take(chance_probs, np.float64)
  arrays["node_utility"] = take(utilities, np.float64)
  old_infoset = take(infosets, np.int32)
  del action_indices, players, num_children, chance_probs, utilities, infosets, order

  first_child = np.zeros(num_nodes, dtype=np.int32)
  is_first = arrays["node_action_index"] == 0
  first_child[arrays["node_parent"][is_first]] = np.flatnonzero(is_first)
  arrays["node_first_child"] = first_child
  arrays["level_offsets"] = np.concatenate(
      ([0], np.cumsum(np.bincount(arrays["node_depth"])))).astype(np.int64)

  # Infosets in breadth-first order of their first history.
  num_infosets = len(keys)
  decision = np.flatnonzero(old_infoset >= 0)
  first_node = np.full(num_infosets, num_nodes, dtype=np.int64)
  np.minimum.at(first_node, old_infoset[decision], decision)
  infoset_order = np.argsort(first_node, kind="stable")
  renumber = np.empty(num_infosets, dtype=np.int32)
  renumber[infoset_order] = np.arange(num_infosets, dtype=np.int32)
  arrays["node_infoset"] = np.where(
      old_infoset >= 0, renumber[np.maximum(old_infoset, 0)], -1).astype(np.int32)
  arrays["infoset_node"] = first_node[infoset_order].astype(np.int32)
  old_num_actions = np.array([len(a) for a in infoset_actions], dtype=np.int16)
  num_actions = old_num_actions[infoset_order]
  offset = np.zeros(num_infosets, dtype=np.int32)
  np.cumsum(num_actions[:-1], out=offset[1:])
  arrays["infoset_player"] = np.array(infoset_player, dtype=np.int8)[infoset_order]
  arrays["infoset_num_actions"] = num_actions
  arrays["infoset_action_offset"] = offset
  slot_infoset = np.repeat(np.arange(num_infosets, dtype=np.int32), num_actions)
  arrays["slot_infoset"] = slot_infoset
  flat_actions = np.fromiter(
      (a for i in infoset_order.tolist() for a in infoset_actions[i]), dtype=np.int32,
      count=int(num_actions.sum()))
  arrays["infoset_actions"] = flat_actions
  # Old slot -> new slot, for the parent slots.
  old_offset = np.array(infoset_offset, dtype=np.int64)
  old_slot_infoset = np.repeat(np.arange(num_infosets), old_num_actions)
  old_slot_to_new = (offset[renumber[old_slot_infoset]] +
                     (np.arange(len(old_slot_infoset)) - old_offset[old_slot_infoset]))
  old_parent_slot = np.array(infoset_parent_slot, dtype=np.int64)[infoset_order]
  arrays["infoset_parent_slot"] = np.where(
      old_parent_slot >= 0, old_slot_to_new[np.maximum(old_parent_slot, 0)],
      -1).astype(np.int32)
  ordered_keys = [keys[i] for i in infoset_order.tolist()]
  tree = CompiledTree(game_string, utility_sum, game.num_distinct_actions(),
                      ordered_keys, arrays)
  tree._game = game  # pylint: disable=protected-access
  return tree


_in_process_cache = collections.OrderedDict()
_IN_PROCESS_CACHE_SIZE = 4


def cached_tree(game):
  """compile_game(game), memoised in this process per game string (last 4 games)."""
  if isinstance(game, str):
    game = pyspiel.load_game(game)
  game_string = str(game)
  tree = _in_process_cache.get(game_string)
  if tree is None:
    tree = compile_game(game)
    _in_process_cache[game_string] = tree
    if len(_in_process_cache) > _IN_PROCESS_CACHE_SIZE:
      _in_process_cache.popitem(last=False)
  else:
    _in_process_cache.move_to_end(game_string)
  return tree
