"""Resolving gadgets as views on the compiled tree of the whole game ([S] §1.4.2,
ch. 2, §6; [H] §G-I).

`GadgetView` is gadget_game.GadgetGame without pyspiel: the gadget laid out as a small
CompiledTree of its own, node for node the pyspiel gadget's compiled tree, so every
exhaustive kernel runs on it unchanged; the whole game (`variant=None`, roots [0]) is a
view too. The layout and payoffs: docs/algorithms/resolving.md, "Module notes".
"""

import collections.abc

import numba
import numpy as np

from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.resolving.gadget import gadget_game
from ggp_cr.algorithms.resolving.gadget import prefix as gadget_prefix
from ggp_cr.algorithms.resolving.subgames import subgame_trace
from ggp_cr.algorithms.tree import flat_tree

VARIANTS = gadget_game.VARIANTS
_gadget_payoff = gadget_prefix.gadget_payoff
_TERMINAL = -4
_CHANCE = -1


@numba.njit(cache=True)
def _lay_out(node_player, node_infoset, node_first_child, node_num_children,
             node_chance_prob, node_utility, subtree_nodes, prefix_player,
             prefix_parent, prefix_first_child, prefix_num_children,
             prefix_action_index, prefix_chance_prob, prefix_utility, prefix_depth,
             prefix_infoset, copies, roots, opponent, utility_sum, scale, shift,
             num_whole_infosets, num_gadget):
  """The view's node arrays in one pass: the prefix (positions below
  len(prefix_player), root copies at `copies`) as given, then each copied root's
  subtree breadth-first, terminal utilities as player 0's gadget payoffs (o's:
  scale·u_o − shift per root). Local infosets get ids in order of first node, after
  the gadget's `num_gadget`. Returns the node arrays, source, root_of and the
  whole-tree infoset of each local infoset (an array of the view's size: the map of
  whole-tree infosets to local ids lives only while the view is laid out)."""
  num_prefix = len(prefix_player)
  size = num_prefix
  for j in range(len(roots)):
    size += subtree_nodes[roots[j]] - 1
  player = np.empty(size, dtype=np.int8)
  parent = np.empty(size, dtype=np.int32)
  first_child = np.empty(size, dtype=np.int32)
  num_children = np.empty(size, dtype=np.int16)
  action_index = np.empty(size, dtype=np.int16)
  chance_prob = np.empty(size)
  utility = np.empty(size)
  depth = np.empty(size, dtype=np.int16)
  infoset = np.empty(size, dtype=np.int32)
  source = np.empty(size, dtype=np.int32)
  root_of = np.empty(size, dtype=np.int32)
  for i in range(num_prefix):
    player[i] = prefix_player[i]
    parent[i] = prefix_parent[i]
    first_child[i] = prefix_first_child[i]
    num_children[i] = prefix_num_children[i]
    action_index[i] = prefix_action_index[i]
    chance_prob[i] = prefix_chance_prob[i]
    utility[i] = prefix_utility[i]
    depth[i] = prefix_depth[i]
    infoset[i] = prefix_infoset[i]
    source[i] = -1
    root_of[i] = -1
  for j in range(len(copies)):
    source[copies[j]] = roots[j]
    root_of[copies[j]] = j
  infoset_map = np.full(num_whole_infosets, -1, dtype=np.int32)
  infoset_source = np.empty(min(num_whole_infosets, size) + num_gadget, dtype=np.int64)
  infoset_source[:num_gadget] = -1
  infoset_count = num_gadget
  end = num_prefix
  for step in range(len(copies) + size - num_prefix):
    local = copies[step] if step < len(copies) else num_prefix + step - len(copies)
    node = source[local]
    j = root_of[local]
    p = node_player[node]
    player[local] = p
    count = node_num_children[node]
    num_children[local] = count
    infoset[local] = -1
    utility[local] = 0.0
    first_child[local] = 0
    if p >= 0:
      before = infoset_count
      infoset[local], infoset_count = flat_tree.intern(node_infoset[node], infoset_map,
                                                       infoset_count)
      if infoset_count > before:
        infoset_source[before] = node_infoset[node]
    if p == _TERMINAL:
      utility[local] = _gadget_payoff(node_utility[node], j, opponent, utility_sum,
                                      scale, shift)
      continue
    first_child[local] = end
    first = node_first_child[node]
    for a in range(count):
      child = end + a
      source[child] = first + a
      root_of[child] = j
      parent[child] = local
      action_index[child] = a
      depth[child] = depth[local] + 1
      chance_prob[child] = node_chance_prob[first + a] if p == _CHANCE else 1.0
    end += count
  return (player, parent, first_child, num_children, action_index, chance_prob,
          utility, depth, infoset, source, root_of,
          infoset_source[:infoset_count].copy())


@numba.njit(cache=True)
def _infoset_tables(player, parent, infoset, action_index, infoset_player,
                    infoset_action_offset):
  """Each local infoset's first node (breadth-first) and parent slot: its player's
  previous slot on that node's path, -1 if none ([H] Def. 3's augmented keys: with
  perfect recall the last slot gives the whole sequence)."""
  num_infosets = len(infoset_player)
  first_node = np.full(num_infosets, -1, dtype=np.int32)
  for node in range(len(player)):
    i = infoset[node]
    if i >= 0 and first_node[i] < 0:
      first_node[i] = node
  parent_slot = np.full(num_infosets, -1, dtype=np.int32)
  for i in range(num_infosets):
    p = infoset_player[i]
    child = first_node[i]
    q = parent[child]
    while q >= 0:
      if player[q] == p:
        parent_slot[i] = infoset_action_offset[infoset[q]] + action_index[child]
        break
      child = q
      q = parent[q]
  return parent_slot, first_node


def _whole_game_map(name, tree, make):
  """The whole game's view's map `name` of `tree` (`make(tree)`, an identity or
  zeros): one read-only array per tree, shared by its views and their copies (a
  bot's clones; docs/reproductions.md, IIGoofspiel{7})."""
  def build(t):
    array = make(t)
    array.flags.writeable = False
    return array
  return flat_tree.per_tree("whole_game_" + name, tree, build)


def _internal_positions(tree):
  """Per node, the number of internal nodes before it and itself, minus 1 (its
  breadth-first internal position if internal), int32 while that fits."""
  dtype = np.int32 if tree.num_nodes < 2**31 else np.int64
  positions = np.cumsum(tree.node_num_children > 0, dtype=dtype)
  positions -= 1
  return positions


class _ViewKeys(collections.abc.Sequence):
  """The view's infoset keys, made only when asked for (as the pyspiel gadget's)."""

  def __init__(self, view):
    self._view = view

  def __len__(self):
    return len(self._view.infoset_source)

  def __getitem__(self, index):
    if isinstance(index, slice):
      return [self[i] for i in range(*index.indices(len(self)))]
    view = self._view
    source = int(view.infoset_source[index])
    if source >= 0:
      return view.whole.infoset_keys[source]
    prefix = gadget_game.GADGET_PREFIX
    if view.variant == "max_margin":
      return f"{prefix}max_margin start"
    key = view.state_keys.key_string(view.gate_key[index])
    return f"{prefix}follow or terminate at {key}"


class ViewTree(flat_tree.CompiledTree):
  """A gadget view's CompiledTree; it has no pyspiel game (`game` is None)."""

  @property
  def game(self):
    return None


class GadgetView:
  """A resolving gadget of `tree`'s subgame at `root_nodes` (module docstring).

  Args:
    tree: the whole game's CompiledTree.
    state_keys: its subgame_trace.StateKeys (the opponent's root keys).
    player: the resolving player p.
    root_nodes: the subgame's root nodes R (non-terminal, distinct).
    w: π_{-o}(h) per root.
    opponent_values: {o's key at a root: CBV(I)} (unnormalised), needed for every
      root key with k_I > 0 (resolve, max_margin).
    variant: "resolve", "max_margin", "unsafe", or None for the whole game (roots
      [0]).
    opponent_reach: π_o(h) per root (unsafe only; default 1).
    solver: makes the view's solver from it (default CFR+; view_sampling's sampling).
  Raises ValueError as gadget_game.Subgame / GadgetGame do on bad inputs.
  Attributes: `tree` (the view's CompiledTree), `root_copies` (local node of each
  root with positive gadget probability), `active_roots` (their indices into
  root_nodes), `source` (whole-tree node of each local node, -1 in the prefix),
  `infoset_source` (whole-tree infoset of each local infoset, -1 for the gadget's),
  `slot_source` (likewise per slot); `local_infoset_of` maps back.
  """

  def __init__(self, tree, state_keys, player, root_nodes, w, opponent_values=None,
               variant="resolve", opponent_reach=None, solver=None):
    if variant is not None and variant not in VARIANTS:
      raise ValueError(f"variant must be one of {', '.join(VARIANTS)} or None; got "
                       f"{variant!r}.")
    if player not in (0, 1):
      raise ValueError(f"player must be 0 or 1, got {player!r}.")
    self.whole = tree
    self.state_keys = state_keys
    self.player = int(player)
    self.opponent = 1 - self.player
    self.variant = variant
    self.root_nodes = np.asarray(root_nodes, dtype=np.int64)
    num_roots = len(self.root_nodes)
    # Roots come sorted (a trace's next roots): a sort of 10^5-10^6 ids took 30 ms.
    ordered = self.root_nodes
    if not np.all(ordered[1:] > ordered[:-1]):
      ordered = np.sort(ordered)
    if num_roots == 0 or np.any(ordered[1:] == ordered[:-1]):
      raise ValueError("root_nodes must be a non-empty set of distinct nodes.")
    if np.any(tree.node_player[self.root_nodes] == _TERMINAL):
      raise ValueError("root_nodes must be non-terminal.")
    weights = gadget_game._weights  # pylint: disable=protected-access
    self.w = weights(w, "w", num_roots)
    self.opponent_reach = (np.ones(num_roots) if opponent_reach is None else
                           weights(opponent_reach, "opponent_reach", num_roots))
    self.root_key = (state_keys.keys[self.opponent, self.root_nodes].astype(np.int64)
                     if variant is not None else np.full(num_roots, -1, np.int64))
    self.infoset_keys, first, self.root_infoset = flat_tree.unique_ids(self.root_key)
    self.k = np.bincount(self.root_infoset, weights=self.w,
                         minlength=len(self.infoset_keys))
    self.total_reach = float(self.w.sum())
    if not self.total_reach > 0:
      raise ValueError("The resolving player and chance never reach the subgame "
                       "(w sums to 0); there is nothing to resolve.")
    self.cbv = self._values(opponent_values)
    if variant is None:
      if num_roots != 1 or self.root_nodes[0] != 0:
        raise ValueError("The whole game (variant None) has the single root 0.")
      self.tree = tree
      # Identities and zeros, one per tree (_whole_game_map), made only if read.
      self._source = self._local_root = None
      self._slot_source = self._infoset_source = None
      self.root_copies = np.zeros(1, dtype=np.int64)
      self.active_roots = np.zeros(1, dtype=np.int64)
      self.scale = np.ones(1)
      self.shift = np.zeros(1)
    else:
      self._build(first)
    self.solver = self._solver() if solver is None else solver(self)

  def _solver(self):
    """CFR+ on the view's tree."""
    return cfr.CFRPlusSolver(self.tree)

  def _values(self, opponent_values):
    """CBV per root key (self.infoset_keys, sorted) from {key: value}, checked
    (vectorised: 10^3-10^4 keys at a deep subgame)."""
    given, keys = dict(opponent_values or {}), self.infoset_keys
    given_keys = np.fromiter(map(int, given), dtype=np.int64, count=len(given))
    values = np.fromiter(map(float, given.values()), dtype=np.float64, count=len(given))
    where = np.searchsorted(keys, given_keys)
    known = where < len(keys)
    known[known] = keys[where[known]] == given_keys[known]
    if not known.all():
      raise ValueError(f"opponent_values has keys that are not player {self.opponent}'s"
                       f" keys at the roots: {given_keys[~known][:5].tolist()}.")
    if not np.isfinite(values).all():
      bad = int(np.flatnonzero(~np.isfinite(values))[0])
      raise ValueError(f"opponent_values must be finite, got {float(values[bad])!r} "
                       f"for key {int(given_keys[bad])}.")
    cbv = np.full(len(keys), np.nan)
    cbv[where] = values
    missing = keys[(self.k > 0) & np.isnan(cbv)]
    if self.variant in ("resolve", "max_margin") and len(missing):
      raise ValueError(f"opponent_values lacks values for reachable root keys of "
                       f"player {self.opponent}: {missing[:5].tolist()}.")
    return np.nan_to_num(cbv, nan=0.0)

  def _plan(self, first):
    """The gadget's prefix per active root (gadget_prefix.plan; both kinds of view lay
    it out): `active_roots`, `scale`, `shift`, `root_chance`, `gate`, `gate_key` (o's
    key of each resolve gate), `terminate_value` and `choice_counts`."""
    prefix = gadget_prefix.plan(self.variant, self.w, self.root_infoset, self.k,
                                self.cbv, first, self.opponent_reach)
    self.active_roots = prefix.active
    self.scale = prefix.scale
    self.shift = prefix.shift
    self.root_chance = prefix.root_chance
    self.gate = prefix.gate
    self.choice_counts = prefix.choice_counts
    self.terminate_value = prefix.terminate_value
    self.gate_key = (self.infoset_keys[prefix.gate_infoset]
                     if self.variant == "resolve" else np.zeros(0, dtype=np.int64))

  def _build(self, first):
    """The gadget's prefix in numpy, then the subtrees' breadth-first copy."""
    tree = self.whole
    variant = self.variant
    self._plan(first)
    active, scale, shift = self.active_roots, self.scale, self.shift
    n = len(active)
    roots = self.root_nodes[active]
    if variant == "max_margin":
      num_prefix = 1 + len(self.choice_counts) + n
    else:
      num_prefix = 1 + (3 * n if variant == "resolve" else n)
    # The prefix's arrays; _lay_out appends the copied subtrees.
    size = num_prefix
    player = np.empty(size, dtype=np.int8)
    parent = np.full(size, -1, dtype=np.int32)
    first_child = np.zeros(size, dtype=np.int32)
    num_children = np.zeros(size, dtype=np.int16)
    action_index = np.full(size, -1, dtype=np.int16)
    chance_prob = np.ones(size)
    utility = np.zeros(size)
    depth = np.zeros(size, dtype=np.int16)
    infoset = np.full(size, -1, dtype=np.int32)
    extra_actions = []
    if variant == "resolve":
      # 0: chance over roots; 1..n: o's gates; then (Follow copy, Terminate) per gate.
      player[0], num_children[0], first_child[0] = _CHANCE, n, 1
      gates = 1 + np.arange(n)
      player[gates] = self.opponent
      parent[gates], action_index[gates], depth[gates] = 0, np.arange(n), 1
      chance_prob[gates] = self.root_chance
      infoset[gates] = self.gate
      num_children[gates] = 2
      copies = 1 + n + 2 * np.arange(n)
      first_child[gates] = copies
      leaves = copies + 1
      parent[copies] = gates
      parent[leaves] = gates
      action_index[copies], action_index[leaves] = 0, 1
      depth[copies] = depth[leaves] = 2
      player[leaves] = _TERMINAL
      o_value = self.terminate_value[self.gate]
      utility[leaves] = o_value if self.opponent == 0 else -o_value
      extra_actions = [np.arange(2)] * len(self.gate_key)
    elif variant == "unsafe":
      player[0], num_children[0], first_child[0] = _CHANCE, n, 1
      copies = 1 + np.arange(n)
      parent[copies], action_index[copies], depth[copies] = 0, np.arange(n), 1
      chance_prob[copies] = self.root_chance
    else:
      counts = self.choice_counts
      c = len(counts)
      player[0], num_children[0], first_child[0], infoset[0] = self.opponent, c, 1, 0
      deals = 1 + np.arange(c)
      player[deals] = _CHANCE
      parent[deals], action_index[deals], depth[deals] = 0, np.arange(c), 1
      num_children[deals] = counts
      first_child[deals] = 1 + c + np.concatenate(([0], np.cumsum(counts)[:-1]))
      copies = 1 + c + np.arange(n)
      parent[copies] = np.repeat(deals, counts)
      action_index[copies] = np.concatenate([np.arange(m) for m in counts])
      depth[copies] = 2
      chance_prob[copies] = self.root_chance
      extra_actions = [np.arange(c)]
    num_gadget = len(extra_actions)
    (player, parent, first_child, num_children, action_index, chance_prob, utility,
     depth, infoset, source, root_of, infoset_source) = _lay_out(
         tree.node_player, tree.node_infoset, tree.node_first_child,
         tree.node_num_children, tree.node_chance_prob, tree.node_utility,
         self.state_keys.subtree_nodes, player, parent, first_child, num_children,
         action_index, chance_prob, utility, depth, infoset, copies.astype(np.int64),
         roots.astype(np.int64), self.opponent, tree.utility_sum,
         np.asarray(scale, dtype=np.float64), np.asarray(shift, dtype=np.float64),
         tree.num_infosets, num_gadget)
    num_infosets = len(infoset_source)
    inner = infoset_source[num_gadget:]
    num_actions = np.concatenate(
        ([len(a) for a in extra_actions], tree.infoset_num_actions[inner])).astype(
            np.int16)
    offset = np.zeros(num_infosets, dtype=np.int32)
    np.cumsum(num_actions[:-1], out=offset[1:])
    slot_infoset = np.repeat(np.arange(num_infosets, dtype=np.int32), num_actions)
    within = np.arange(len(slot_infoset)) - offset[slot_infoset]
    inner_slot = slot_infoset >= num_gadget
    actions = np.empty(len(slot_infoset), dtype=np.int32)
    actions[~inner_slot] = tree.num_distinct_actions + within[~inner_slot]
    self._slot_source = np.where(
        inner_slot, tree.infoset_action_offset[infoset_source[slot_infoset]] + within,
        -1)
    actions[inner_slot] = tree.infoset_actions[self._slot_source[inner_slot]]
    infoset_player = np.concatenate((np.full(num_gadget, self.opponent),
                                     tree.infoset_player[inner])).astype(np.int8)
    parent_slot, first_node = _infoset_tables(player, parent, infoset, action_index,
                                              infoset_player, offset)
    arrays = {
        "node_player": player, "node_infoset": infoset, "node_parent": parent,
        "node_first_child": first_child, "node_num_children": num_children,
        "node_action_index": action_index, "node_chance_prob": chance_prob,
        "node_utility": utility, "node_depth": depth,
        "level_offsets": np.concatenate(([0], np.cumsum(np.bincount(depth)))).astype(
            np.int64),
        "infoset_player": infoset_player, "infoset_num_actions": num_actions,
        "infoset_action_offset": offset, "infoset_actions": actions,
        "infoset_parent_slot": parent_slot, "infoset_node": first_node,
        "slot_infoset": slot_infoset}
    self._infoset_source = infoset_source
    # local_infoset_of's lookup: the view's whole-tree infosets sorted, their local ids.
    order = np.argsort(inner, kind="stable")
    self._sorted_infosets = inner[order]
    self._sorted_local = order + num_gadget
    self._source = source
    self._local_root = root_of
    self.root_copies = copies.astype(np.int64)
    self.tree = ViewTree(
        f"{variant} gadget view of {tree.game_string}", 0.0,
        tree.num_distinct_actions + (len(extra_actions[0]) if extra_actions else 0),
        _ViewKeys(self), arrays)

  @property
  def source(self):
    """The whole-tree node of each local node (-1 in the prefix)."""
    if self._source is None:
      return _whole_game_map("source", self.whole, lambda t: np.arange(t.num_nodes))
    return self._source

  @property
  def local_root(self):
    """The index into root_nodes of each local node's root (-1 in the prefix)."""
    if self._local_root is None:
      return _whole_game_map("local_root", self.whole,
                             lambda t: np.zeros(t.num_nodes, dtype=np.int32))
    return self._local_root

  @property
  def slot_source(self):
    """The whole-tree slot of each local slot (-1 for the gadget's)."""
    if self._slot_source is None:
      return _whole_game_map("slot_source", self.whole,
                             lambda t: np.arange(t.num_infoset_actions))
    return self._slot_source

  @property
  def infoset_source(self):
    """The whole-tree infoset of each local infoset (-1 for the gadget's)."""
    if self._infoset_source is None:
      return _whole_game_map("infoset_source", self.whole,
                             lambda t: np.arange(t.num_infosets))
    return self._infoset_source

  def local_infoset_of(self, infoset):
    """The local infoset of whole-tree infoset `infoset` (-1 if outside the view)."""
    if self.variant is None:
      return int(infoset)
    at = int(np.searchsorted(self._sorted_infosets, infoset))
    if at < len(self._sorted_infosets) and self._sorted_infosets[at] == infoset:
      return int(self._sorted_local[at])
    return -1

  def trace(self, state_keys=None):
    """The subgame_trace.SubgameTrace of p below the gadget's roots."""
    return subgame_trace.trace_subgames(
        self.whole, state_keys or self.state_keys, self.player,
        self.root_nodes[self.active_roots])

  # --- Solving ----------------------------------------------------------------------

  def locate(self, trace):
    """(j, local, copies) per next root of `trace`: its active root's index, its
    local node and its active root's local node (next_root_estimates)."""
    copies = self.root_copies[trace.next_root_of]
    if self.variant is None:
      # The whole game: its local nodes are the tree's (a climb per next root took
      # 67 ms at PAM{8}'s 543k next roots, in a deferred trace within a 0.1 s move).
      local = np.asarray(trace.next_roots, dtype=np.int64)
      return np.zeros(len(copies), dtype=np.int32), local, copies
    local = flat_tree.nodes_in_copies(
        self.whole.node_parent, self.whole.node_action_index, trace.next_roots,
        self.root_nodes[self.active_roots][trace.next_root_of], copies,
        self.tree.node_first_child)
    return self.local_root[copies], local, copies

  @property
  def num_nodes(self):
    """Nodes of the gadget (its prefix and the copied subgame)."""
    return self.tree.num_nodes

  def laid_out(self):
    """(the gadget's CompiledTree, the average strategy in its slot form)."""
    return self.tree, self.average_slots()

  def whole_nodes(self, local_nodes):
    """The whole-tree node of each of the view's nodes."""
    if self.variant is None:
      return np.array(local_nodes, dtype=np.int64)
    return self.source[local_nodes]

  def positions(self, nodes):
    """Internal positions (CFR's reach rows, breadth-first) of local internal nodes
    (the whole game's: one array per tree, shared by its views and their copies)."""
    if self.variant is None:
      return flat_tree.per_tree("internal_positions", self.tree,
                                _internal_positions)[nodes]
    if getattr(self, "_position", None) is None:
      self._position = _internal_positions(self.tree)
    return self._position[nodes]

  def value_nodes(self, nodes):
    """The entries of a pass's values (`evaluate`'s `observe`) of the view's nodes."""
    return np.asarray(nodes)

  def opponent_values(self, node_values, local_nodes, j):
    """o's original-unit values at local nodes below active roots j (player 0's in)."""
    values = node_values[local_nodes]
    if self.opponent == 1:
      values = self.utility_sum - values
    return gadget_prefix.original_values(values, self.scale[j], self.shift[j])

  @property
  def utility_sum(self):
    """u_0 + u_1 at the view's terminals (0 in a gadget: its payoffs are zero-sum)."""
    return self.tree.utility_sum

  def evaluate(self, slots, observe, deadline=None):
    """observe(reach, values) of a CFR pass with strategy `slots`: reach per internal
    position, player 0's values per node (exact node passes under a depth limit).
    A CFR+ view's pass gives up at time.perf_counter() `deadline` without calling
    observe (cfr.GeneralCFRSolver.evaluate_strategy); returns whether it called it."""
    if getattr(self.solver, "depth_limit", 0) is None:
      return self.solver.evaluate_strategy(np.asarray(slots, dtype=np.float64), observe,
                                           deadline)
    tree = self.tree
    internal = np.flatnonzero(tree.node_num_children > 0)
    observe(tree.node_reaches(slots)[:, internal].T, tree.node_values(slots))
    return True

  def average_at(self, infoset):
    """The average strategy at whole-tree infoset `infoset` (uniform if outside the
    view or never reached), over its actions in the tree's order."""
    count = int(self.whole.infoset_num_actions[infoset])
    local = self.local_infoset_of(infoset)
    if local < 0:
      return np.full(count, 1.0 / count)
    offset = int(self.tree.infoset_action_offset[local])
    # A CFR solver normalises this information set only (the whole slot form took
    # 2-20 ms on latent TTT's whole tree at every decision).
    at = getattr(self.solver, "average_strategy_at", None)
    if at is not None:
      return at(offset, count)
    return self.average_slots()[offset:offset + count]

  @property
  def iterations(self):
    return self.solver.iterations

  def run(self, iterations):
    """`iterations` CFR+ iterations on the view ([S] §1.3.1)."""
    for _ in range(iterations):
      self.solver.evaluate_and_update_policy()

  def average_slots(self):
    """The solver's average strategy in the view's slot form."""
    return self.solver.average_strategy_slots()

  def _own_slots(self):
    own = self.tree.infoset_player[self.tree.slot_infoset] == self.player
    return np.flatnonzero(own & (self.slot_source >= 0))

  def resolved_strategy(self, slots=None):
    """(slots of the whole tree, probabilities): p's strategy in the subgame as
    whole-tree slots (the view's average strategy unless `slots` is given)."""
    slots = self.average_slots() if slots is None else slots
    own = self._own_slots()
    return self.slot_source[own], slots[own]

  def combine(self, profile, slots=None):
    """[S] §6's combination: a copy of the whole-tree `profile` with p's subgame
    infosets replaced by the resolved strategy (trunk_inputs.combine)."""
    combined = np.array(profile, dtype=np.float64)
    where, probabilities = self.resolved_strategy(slots)
    combined[where] = probabilities
    return combined

  def gadget_value(self, slots=None):
    """o's expected gadget payoff under `slots` (default: the average profile)."""
    slots = self.average_slots() if slots is None else slots
    value = float(self.tree.node_values(slots)[0])
    return value if self.opponent == 0 else self.tree.utility_sum - value

  def counterfactual_best_response_values(self, slots=None):
    """{o's root key: CBV_after(I) = Σ_{h∈I} w(h) v_o^BR(h)} against p's strategy in
    `slots` (default: average), o best-responding in the subgame ([H] §E.1)."""
    slots = self.average_slots() if slots is None else slots
    _, response = exact_br.best_response_slots(self.tree, slots, self.opponent)
    values = self.opponent_values(self.tree.node_values(response),
                                  self.root_copies, self.local_root[self.root_copies])
    root_infoset = self.root_infoset[self.active_roots]
    after = np.bincount(root_infoset, weights=self.w[self.active_roots] * values,
                        minlength=len(self.infoset_keys))
    return dict(zip(self.infoset_keys.tolist(), after.tolist()))

  def subgame_margin(self, slots=None, before=None):
    """SM = min_{I: k_I>0} (CBV_before(I) − CBV_after(I)) ([H] Def. 5), unnormalised;
    `before` defaults to the values the view was given. The unsafe gadget leaves out
    roots o never reaches: there, CBV_after and the minimum cover the gadget's roots."""
    after = self.counterfactual_best_response_values(slots)
    before = (dict(zip(self.infoset_keys.tolist(), self.cbv.tolist()))
              if before is None else before)
    inside = np.zeros(len(self.infoset_keys), dtype=bool)
    active = self.active_roots
    inside[self.root_infoset[active[self.w[active] > 0]]] = True
    return min(before[k] - after[k]
               for k, i in zip(self.infoset_keys.tolist(), inside.tolist()) if i)

