"""The compiled game tree: any two-player zero-sum perfect-recall game as flat arrays.

Spec README.md, architecture principle 2: extracted once, every exhaustive algorithm
runs numba loops over the arrays. Nodes are numbered breadth-first, information sets
after every information set on their paths; a strategy is a float64 vector over
(infoset, action) slots, converted by `policy_to_slots` / `slots_to_tabular_policy`.
The arrays, one by one: docs/algorithms/tree.md.
"""

import copy

import numba
import numpy as np
from open_spiel.python import policy as policy_lib
import pyspiel

from ggp_cr.algorithms.tree import cache_validation
from ggp_cr.algorithms.tree import npz_archives

# Bumped whenever the cached arrays change meaning; older cache files are rebuilt.
_CACHE_FORMAT = 2

NODE_FIELDS = ("node_player", "node_infoset", "node_parent", "node_first_child",
                "node_num_children", "node_action_index", "node_chance_prob",
                "node_utility", "node_depth")
ARRAY_FIELDS = NODE_FIELDS + (
    "level_offsets", "infoset_player", "infoset_num_actions", "infoset_action_offset",
    "infoset_actions", "infoset_parent_slot", "infoset_node", "slot_infoset")

_TERMINAL = int(pyspiel.PlayerId.TERMINAL)
_CHANCE = int(pyspiel.PlayerId.CHANCE)


# The one memo of what is derived from a tree object (traversal layouts, continual
# resolving's state keys, in-place tables and trace steps): {name: {id(tree): (tree,
# value, lasting)}}, the last few trees per name (`per_tree`). Process-wide on purpose:
# trees are shared by every solver and bot of a process (compiled_tree.cached_tree).
_DERIVED = {}


def per_tree(name, tree, build, keep=2, lasting=False):
  """`build(tree)`, memoised under `name` for the last `keep` tree objects used
  (keyed by identity: another tree of the same game gets its own). `lasting`: the
  value is expensive to rebuild, so `forget` keeps it."""
  store = _DERIVED.setdefault(name, {})
  entry = store.pop(id(tree), None)
  if entry is None or entry[0] is not tree:
    entry = (tree, build(tree), lasting)
  store[id(tree)] = entry
  while len(store) > keep:
    store.pop(next(iter(store)))
  return entry[1]


def forget(tree, keep_lasting=True):
  """Drops what `per_tree` holds for `tree` (built again when asked for), but the
  values memoised as `lasting` unless not `keep_lasting`."""
  for store in _DERIVED.values():
    entry = store.get(id(tree))
    if entry is not None and entry[0] is tree and not (keep_lasting and entry[2]):
      del store[id(tree)]


def derived(name, tree):
  """What `per_tree(name, tree, ...)` holds for `tree`, or None (nothing built)."""
  entry = _DERIVED.get(name, {}).get(id(tree))
  return entry[1] if entry is not None and entry[0] is tree else None


def unique_ids(values):
  """np.unique(values, return_index=True, return_inverse=True) of integer ids (nodes,
  infosets, keys): (sorted distinct values, index of each one's first occurrence,
  each value's index into them), all int64, in time linear in the input and its
  range (a dense count over [min, max]; ids of one subgame lie close together), not
  a sort: the resolving bot's setup at subgames of 10^5-10^6 roots."""
  values = np.ascontiguousarray(values, dtype=np.int64).reshape(-1)
  if not len(values):
    empty = np.zeros(0, dtype=np.int64)
    return empty, empty, empty
  if len(values) > 1 and bool(np.all(values[1:] > values[:-1])):
    # Strictly increasing (e.g. a trace's next roots, one per turn found): each value
    # is its own id, without a count over the range.
    return values.copy(), np.arange(len(values)), np.arange(len(values))
  low, high = int(values.min()), int(values.max())
  if (high - low) > 64 * len(values) + 4096:
    distinct, first, inverse = np.unique(values, return_index=True,
                                         return_inverse=True)
    return distinct, first.astype(np.int64), inverse.reshape(-1).astype(np.int64)
  return _dense_unique_ids(values, low, high - low + 1)


@numba.njit(cache=True, inline="always")
def intern(value, ids, count):
  """(the id of `value` in order of first occurrence, the ids given so far): ids[v]
  is v's id (-1 until it occurs); `count` ids given. The caller records the value
  of a new id (when the count grew), which keeps arrays out of this inlined call."""
  if ids[value] < 0:
    ids[value] = count
    count += 1
  return ids[value], count


@numba.njit(cache=True)
def first_occurrence_ids(values, num_values):
  """Each of `values` (ids below `num_values`) numbered in order of first
  occurrence, and the distinct values in that order."""
  ids = np.full(num_values, -1, dtype=np.int64)
  ordered = np.empty(num_values, dtype=np.int64)
  numbered = np.empty(len(values), dtype=np.int64)
  count = 0
  for i in range(len(values)):
    before = count
    numbered[i], count = intern(values[i], ids, count)
    if count > before:
      ordered[before] = values[i]
  return numbered, ordered[:count]


@numba.njit(cache=True)
def _dense_unique_ids(values, low, span):
  first_at = np.zeros(span, dtype=np.int32)  # first index + 1; 0: absent
  for i in range(len(values)):
    v = values[i] - low
    if first_at[v] == 0:
      first_at[v] = i + 1
  count = 0
  for v in range(span):
    if first_at[v]:
      count += 1
  distinct = np.empty(count, dtype=np.int64)
  first = np.empty(count, dtype=np.int64)
  count = 0
  for v in range(span):
    if first_at[v]:
      distinct[count] = v + low
      first[count] = first_at[v] - 1
      count += 1
      first_at[v] = count  # now the distinct index + 1
  inverse = np.empty(len(values), dtype=np.int64)
  for i in range(len(values)):
    inverse[i] = first_at[values[i] - low] - 1
  return distinct, first, inverse


@numba.njit(cache=True)
def nodes_in_copies(node_parent, node_action_index, targets, target_roots, copies,
                    copy_first_child):
  """The node of each tree node `targets[i]` in a copy of the subtree of its
  ancestor `target_roots[i]` whose root is node `copies[i]` of a tree whose first
  children are `copy_first_child` and whose children keep their order (a resolving
  gadget's copy of its roots' subtrees): the action path climbed from the target,
  then descended in the copy."""
  local = np.empty(len(targets), dtype=np.int64)
  path = np.empty(64, dtype=np.int64)
  for i in range(len(targets)):
    length = 0
    node = targets[i]
    while node != target_roots[i]:
      if length == len(path):
        grown = np.empty(2 * length, dtype=np.int64)
        grown[:length] = path
        path = grown
      path[length] = node_action_index[node]
      length += 1
      node = node_parent[node]
    at = copies[i]
    for k in range(length - 1, -1, -1):
      at = copy_first_child[at] + path[k]
    local[i] = at
  return local


@numba.njit(cache=True)
def actions_below(node_parent, node_infoset, node_action_index, nodes, infoset,
                  first_node):
  """Per node `nodes[i]`: the index (in the infoset's action order) of the action
  taken at its ancestor history in infoset `infoset` (with perfect recall, at most
  one ancestor is in it), or -1 if it has none. `first_node` is the infoset's first
  history (`infoset_node`): breadth-first numbering makes every ancestor's id
  smaller than its child's, and no history of the infoset is numbered below its
  first, so each climb stops there instead of at the root (PAM{8}'s 542k next roots
  climbed about 14 levels each, a few below the bot's infoset)."""
  below = np.full(len(nodes), -1, dtype=np.int16)
  for i in range(len(nodes)):
    child = nodes[i]
    node = node_parent[child]
    while node >= first_node:
      if node_infoset[node] == infoset:
        below[i] = node_action_index[child]
        break
      child = node
      node = node_parent[node]
  return below


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



@numba.njit(cache=True)
def normalise_infosets(cumulative, infoset_action_offset, infoset_num_actions, out):
  """out = cumulative normalised per infoset; uniform where an infoset's sum is 0."""
  for i in range(len(infoset_action_offset)):
    offset = infoset_action_offset[i]
    count = infoset_num_actions[i]
    total = 0.0
    for a in range(offset, offset + count):
      total += cumulative[a]
    if total > 0.0:
      for a in range(offset, offset + count):
        out[a] = cumulative[a] / total
    else:
      for a in range(offset, offset + count):
        out[a] = 1.0 / count


class _PathSet(set):
  """The nodes on a few root paths, indexed like a bool array (infoset_states)."""

  def __getitem__(self, node):
    return node in self

  def __setitem__(self, node, value):
    del value
    self.add(node)


class CompiledTree:
  """Flat arrays of a game tree; see the module docstring for the fields."""

  def __init__(self, game_string, utility_sum, num_distinct_actions, infoset_keys,
               arrays):
    self.game_string = game_string
    self.utility_sum = float(utility_sum)
    self.num_distinct_actions = int(num_distinct_actions)
    self.infoset_keys = infoset_keys
    for name in ARRAY_FIELDS:
      setattr(self, name, arrays[name])
    self.num_nodes = len(self.node_player)
    self.num_infosets = len(self.infoset_player)
    self.num_infoset_actions = len(self.infoset_actions)
    self.max_depth = len(self.level_offsets) - 2
    self._tabular_templates = {}
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
    return sum(getattr(self, name).nbytes for name in ARRAY_FIELDS)

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
    common prefixes; `infosets` (default: all) selects which ones. A few infosets
    mark their paths in a set, not in an array of the tree's size (the traversing
    evaluator asks a few at a time on trees of 10^8 nodes).
    """
    if infosets is None:
      infosets = range(self.num_infosets)
    targets = {}
    for infoset in infosets:
      targets.setdefault(int(self.infoset_node[infoset]), []).append(int(infoset))
    if len(targets) * (self.max_depth + 1) < self.num_nodes // 64:
      needed = _PathSet()
    else:
      needed = np.zeros(self.num_nodes, dtype=bool)
    for node in targets:
      while node >= 0 and not needed[node]:
        needed[node] = True
        node = int(self.node_parent[node])
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

  def normalise_per_infoset(self, values):
    """`values` (slot form) normalised per information set; uniform where an
    information set's sum is 0 (an average strategy from cumulative weights)."""
    out = np.empty_like(values, dtype=np.float64)
    normalise_infosets(values, self.infoset_action_offset, self.infoset_num_actions,
                           out)
    return out

  def check_slots(self, slots, name="slots"):
    """`slots` as a float64 vector in slot form on this tree; a ValueError naming
    `name` unless its shape is (num_infoset_actions,)."""
    slots = np.asarray(slots, dtype=np.float64)
    if slots.shape != (self.num_infoset_actions,):
      raise ValueError(f"{name} must have shape ({self.num_infoset_actions},) for "
                       f"{self.game_string}, got {slots.shape}.")
    return slots

  def as_slots(self, profile, name="slots"):
    """A profile given in slot form (checked) or as an OpenSpiel policy, in slot form."""
    if isinstance(profile, np.ndarray):
      return self.check_slots(profile, name)
    return self.policy_to_slots(profile)

  def _tabular_template(self, players):
    """A TabularPolicy of `players` built by OpenSpiel's public constructor from one
    state per information set (not from a walk of every state), once per tree.

    Its rows are grouped by player and, within a player, in infoset-index order (the
    constructor sorts the given states by key; the keys are the rows).
    """
    key = tuple(players)
    if key not in self._tabular_templates:
      order = np.concatenate([np.flatnonzero(self.infoset_player == p)
                              for p in players]).astype(np.int64)
      row_of = {int(infoset): row for row, infoset in enumerate(order.tolist())}
      states = {row_of[infoset]: state
                for infoset, state in self.infoset_states(order.tolist())}
      tabular = (policy_lib.TabularPolicy(self.game, list(players), states=states)
                 if states else None)
      self._tabular_templates[key] = (tabular, order)
    return self._tabular_templates[key]

  def slots_to_tabular_policy(self, slots, players=None):
    """Strategy in slot form -> open_spiel TabularPolicy.

    The first call per tree and `players` builds the policy's rows through OpenSpiel's
    public constructor from one rebuilt state per information set (never a walk of
    every state); later calls copy it and fill `action_probability_array`. Rows are
    grouped by player (as TabularPolicy guarantees) and, within a player, in
    infoset-index order.
    """
    slots = self.check_slots(slots)
    players = sorted(players if players is not None else range(2))
    template, order = self._tabular_template(players)
    if template is None:
      raise ValueError(f"{self.game_string}: players {players} have no information "
                       "set, so there is no TabularPolicy of them.")
    tabular = copy.copy(template)
    in_order = np.isin(self.slot_infoset, order)
    row_of_infoset = np.full(self.num_infosets, -1, dtype=np.int64)
    row_of_infoset[order] = np.arange(len(order))
    slot_rows = row_of_infoset[self.slot_infoset[in_order]]
    slot_actions = self.infoset_actions[in_order]
    probabilities = np.zeros_like(template.action_probability_array, dtype=np.float64)
    probabilities[slot_rows, slot_actions] = slots[in_order]
    tabular.action_probability_array = probabilities
    return tabular

  def save(self, path):
    """Writes the tree to `path` (npz), atomically: a temporary file is renamed."""
    keys = "\x00".join(self.infoset_keys).encode("utf-8")
    keys_array = np.frombuffer(keys, dtype=np.uint8)
    arrays = {name: getattr(self, name) for name in ARRAY_FIELDS}
    checksum = cache_validation.arrays_checksum(
        self.game_string, self.utility_sum, self.num_distinct_actions, keys_array,
        arrays)
    npz_archives.write_atomically(
        path, cache_format=np.int64(_CACHE_FORMAT), checksum=np.array(checksum),
        game_string=np.array(self.game_string),
        utility_sum=np.float64(self.utility_sum),
        num_distinct_actions=np.int64(self.num_distinct_actions),
        infoset_keys=keys_array, **arrays)

  @classmethod
  def load(cls, path, game_string=None):
    """Reads a tree written by `save`; raises ValueError if it is unreadable, of
    another format version, (given `game_string`) of another game, fails its checksum
    or breaks an invariant the kernels rely on (cache_validation.check_tree_arrays)."""
    contents = npz_archives.read(
        path, "tree cache", required=ARRAY_FIELDS + (
            "cache_format", "checksum", "game_string", "utility_sum",
            "num_distinct_actions", "infoset_keys"))
    if int(contents["cache_format"]) != _CACHE_FORMAT:
      raise ValueError(f"Cache file {path} has format {int(contents['cache_format'])}, "
                       f"expected {_CACHE_FORMAT}.")
    stored_game = str(contents["game_string"])
    if game_string is not None and stored_game != game_string:
      raise ValueError(f"Cache file {path} holds {stored_game}, not {game_string}.")
    for name in ("cache_format", "checksum", "game_string", "utility_sum",
                 "num_distinct_actions"):
      if contents[name].shape != ():
        raise ValueError(f"Cache file {path} has a non-scalar {name}.")
    if contents["infoset_keys"].dtype != np.uint8:
      raise ValueError(f"Cache file {path} has damaged infoset keys.")
    checksum = cache_validation.arrays_checksum(
        stored_game, contents["utility_sum"], contents["num_distinct_actions"],
        contents["infoset_keys"], contents)
    if str(contents["checksum"]) != checksum:
      raise ValueError(f"Cache file {path} fails its checksum (edited or damaged).")
    if not np.isfinite(contents["utility_sum"]):
      raise ValueError(f"Cache file {path} has a non-finite utility_sum.")
    cache_validation.check_tree_arrays(path, contents,
                                       int(contents["num_distinct_actions"]))
    try:
      blob = contents["infoset_keys"].tobytes().decode("utf-8")
    except UnicodeDecodeError:
      raise ValueError(f"Cache file {path} has damaged infoset keys.") from None
    num_infosets = len(contents["infoset_player"])
    keys = blob.split("\x00") if num_infosets else []
    if len(keys) != num_infosets:
      raise ValueError(f"Cache file {path} has {len(keys)} keys for {num_infosets} "
                       "infosets.")
    return cls(stored_game, contents["utility_sum"], contents["num_distinct_actions"],
               keys, contents)
