"""Compiled VR-MCCFR / MC-CFR on gadget views, as continual resolving samples
([S] §3.3.3, ch. 2, App. A.5).

`ViewSampler` is live_solvers.SamplingSolver on a copied_view.GadgetView (the same
random stream, tables and estimates to rounding); `InPlaceSampler` samples an
in_place_view.SubgameView without copying it. The live path's semantics they switch
on: docs/algorithms/resolving.md, "Module notes".
"""

import numba
import numpy as np

from ggp_cr.algorithms.resolving import recall
from ggp_cr.algorithms.resolving.compiled import next_root_estimates
from ggp_cr.algorithms.resolving.compiled import subgame_layout
from ggp_cr.algorithms.resolving.gadget import prefix as gadget_prefix
from ggp_cr.algorithms.sampling import compiled_outcome_sampling
from ggp_cr.algorithms.tree import flat_tree

_TERMINAL = -4
_CHANCE = -1


_VARIANT_CODES = {"resolve": 0, "unsafe": 1, "max_margin": 2}


@numba.njit(cache=True)
def _prefix_arrays(variant, opponent, first_gate, root_chance, gate_ids,
                   table_offsets, terminate_value, choice_counts, root_player,
                   cfrd_aware):
  """The gadget prefix's node arrays (player, infoset, table offset, first child,
  children, chance probability, utility, CFR-D gate flag, root index of each root's
  copy) for `root_chance`'s roots, laid out as GadgetView._build lays them: resolve
  (variant 0) a chance node over o's Follow/Terminate gates, each followed by the
  root's copy and the Terminate leaf; unsafe (1) a chance node over the roots;
  max_margin (2) o's choice of infoset, a chance node per choice over its roots. One
  pass, no temporaries (numpy's took 130 ms at 503k roots of PAM{8}, most of a
  0.2 s move)."""
  n = len(root_chance)
  c = len(choice_counts)
  size = 1 + 3 * n if variant == 0 else (1 + n if variant == 1 else 1 + c + n)
  player = np.full(size, _TERMINAL, np.int8)
  infoset = np.full(size, -1, np.int32)
  offset = np.zeros(size, np.int32)
  first_child = np.zeros(size, np.int32)
  num_children = np.zeros(size, np.int32)
  chance_prob = np.ones(size)
  utility = np.zeros(size)
  gate = np.zeros(size, np.int8)
  root_of = np.full(size, -1, np.int32)
  sign = 1.0 if opponent == 0 else -1.0
  if variant == 2:
    player[0], num_children[0], first_child[0] = opponent, c, 1
    infoset[0], offset[0] = first_gate, table_offsets[first_gate]
    before = 0
    for i in range(c):
      player[1 + i] = _CHANCE
      num_children[1 + i] = choice_counts[i]
      first_child[1 + i] = 1 + c + before
      before += choice_counts[i]
  else:
    player[0], num_children[0], first_child[0] = _CHANCE, n, 1
  for j in range(n):
    if variant == 0:
      g = 1 + j
      copy = 1 + n + 2 * j
      player[g] = opponent
      chance_prob[g] = root_chance[j]
      infoset[g] = first_gate + gate_ids[j]
      offset[g] = table_offsets[first_gate + gate_ids[j]]
      num_children[g] = 2
      first_child[g] = copy
      utility[copy + 1] = sign * terminate_value[gate_ids[j]]
      if cfrd_aware:
        gate[g] = 1
    else:
      copy = (1 + j) if variant == 1 else (1 + c + j)
      chance_prob[copy] = root_chance[j]
    player[copy] = root_player[j]
    root_of[copy] = j
  return (player, infoset, offset, first_child, num_children, chance_prob, utility,
          gate, root_of)


def initial_track(view):
  """The tracking state at the view's root (live_problem.Problem.initial_track)."""
  if view.variant is None and int(view.tree.node_player[0]) == view.player:
    return recall.CURRENT
  return recall.FIRST


def other_copies(view, trace):
  """(local nodes, their next roots' indices) of the copies of `trace`'s next roots
  on the copying copied_view.GadgetView `view` that its `locate` does not give: a
  next root below a root that lies below another root (nested roots, copied twice)
  has a copy under each; empty otherwise. The live solver collects a next root's
  samples at every copy (its trace keys roots by history), so ViewSampler collects
  at these too."""
  roots = view.root_nodes[view.active_roots]
  order = np.argsort(roots)
  ordered = roots[order]
  parent = view.whole.node_parent
  above = parent[roots]
  nested = False
  while (above >= 0).any() and not nested:
    position = np.minimum(np.searchsorted(ordered, above), len(ordered) - 1)
    nested = bool(((above >= 0) & (ordered[position] == above)).any())
    above = np.where(above >= 0, parent[np.maximum(above, 0)], -1)
  if not nested:
    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
  found, under = [], []
  node = trace.next_roots.copy()
  while (node >= 0).any():
    position = np.minimum(np.searchsorted(ordered, node), len(ordered) - 1)
    hit = (node >= 0) & (ordered[position] == node)
    hit &= order[position] != trace.next_root_of
    found.append(np.flatnonzero(hit))
    under.append(order[position[hit]])
    node = np.where(node >= 0, parent[np.maximum(node, 0)], -1)
  index = np.concatenate(found).astype(np.int64)
  j = np.concatenate(under).astype(np.int64)
  local = flat_tree.nodes_in_copies(
      parent, view.whole.node_action_index, trace.next_roots[index], roots[j],
      view.root_copies[j], view.tree.node_first_child)
  return local, index


class ViewSampler:
  """The sampling solver of a settings.ResolverConfig `config` on `view` (module
  docstring), collecting estimates at the next roots of `trace`
  (subgame_trace.SubgameTrace of view.player below the view's roots).

  Attributes: `solver` (the compiled_outcome_sampling solver; the view's average
  strategy is its), `estimates` (SampledNextRootEstimates of `trace`)."""

  def __init__(self, view, trace, config, seed):
    if not config.sampling:
      raise ValueError(f"ViewSampler runs the sampling solvers "
                       f"(vr_mccfr, mc_cfr), not {config.solver!r}.")
    self.view = view
    self.estimates = None
    self.solver = self._make_solver(config, seed)
    self._gate, self._track, self._root_w, self._root_of = self._resolving(config)
    self._next_root = None
    self.collect(trace)

  def _make_solver(self, config, seed):
    return compiled_outcome_sampling.CompiledOutcomeSamplingSolver(
        self.view.tree, regret_matcher=config.regret_matcher,
        exploration=config.exploration,
        cumulative_strategy_exponent=config.cumulative_strategy_exponent,
        baseline=config.baseline, seed=seed)

  def _resolving(self, config):
    """(node_gate, playout_track, node_root_w, node_root_of) of the kernel."""
    view = self.view
    tree = view.tree
    gate = np.zeros(0, np.int8)
    if view.variant == "resolve" and config.cfrd_aware_sampling:
      infoset = tree.node_infoset
      gate = ((infoset >= 0) & (view.infoset_source[np.maximum(infoset, 0)] < 0)
              ).astype(np.int8)
    root_w = np.full(tree.num_nodes, -1.0)
    root_w[view.root_copies] = view.w[view.active_roots]
    return gate, initial_track(view), root_w, view.local_root

  @property
  def node_tree(self):
    """The tree of the view's nodes and of the average strategy's slots."""
    return self.view.tree

  def _set_estimates(self, trace):
    view = self.view
    self.estimates = next_root_estimates.SampledNextRootEstimates(
        view, trace, self.average_strategy_slots, self.node_tree)

  def _node_map(self):
    """The next roots' index per view node (-1 elsewhere)."""
    if self._next_root is None:
      self._next_root = np.full(self.view.tree.num_nodes, -1, np.int64)
    return self._next_root

  def collect(self, trace):
    """Collects the estimates of `trace`'s next roots from now on (fresh sums; the
    next roots' node map is reset, not reallocated: a deferred subgame's move), at
    every copy of a next root (`other_copies`: nested roots)."""
    node_map = self._node_map()
    if self.estimates is not None:
      node_map[self._collected] = -1
    self._set_estimates(trace)
    local = self.estimates.local_nodes
    node_map[local] = np.arange(len(local))
    other, index = self._other_copies(trace)
    node_map[other] = index
    self._collected = np.concatenate((local, other))
    self._set_resolving(node_map)

  def _other_copies(self, trace):
    return other_copies(self.view, trace)

  def _set_resolving(self, node_map):
    view = self.view
    gain, offset = gadget_prefix.payoff_map(view.scale, view.shift)
    self.solver.set_resolving(
        self._gate, self._track, recall.TRANSITION_TABLES[view.player], recall.END,
        node_map, self._root_w, self._root_of, gain, offset, view.player,
        self.estimates.value_sum, self.estimates.weight_sum)

  @property
  def iterations(self):
    return self.solver.iterations

  def run(self, iterations):
    """`iterations` iterations (one episode per player each)."""
    self.solver.run(iterations)
    self.estimates.iterations += int(iterations)

  def average_strategy_slots(self):
    return self.solver.average_strategy_slots()

  targeting_probability = 0.0  # contracts.SumsSolver: no targeting ([S] §5.2.2)

  def runs_on(self, tree):
    """Whether `tree` is the whole game's tree of this view (contracts.SumsSolver)."""
    return tree.game_string == self.view.whole.game_string

  def average_sums(self, tree, infoset):
    """{action: average-strategy sum} at whole-tree infoset `infoset` (empty outside
    the view; contracts.SumsSolver)."""
    local = self.view.local_infoset_of(infoset)
    if local < 0:
      return {}
    return self.solver.average_sums(self.view.tree, local)


class InPlaceSampler(ViewSampler):
  """ViewSampler on a in_place_view.SubgameView: no copy of the subgame. The
  kernel samples the gadget's prefix from arrays of its own (laid out and numbered
  as the copying view's, so draws come in the same order: the copying sampler with
  the same seed holds the same tables, tests/resolving/compiled/test_view_sampling.py) and walks the
  whole tree below the chosen root, terminals paid per root. Its tables are compact
  (the subgame's infosets in SubgameStructure's order, then the gadget's: whole-tree
  tables page-faulted at every newly visited infoset), reached through a map from
  the tree's infoset ids; that map and the next roots' map over the tree's nodes are
  shared by the samplers of one tree (the one that ran last holds them).
  `view_slots` gives a table in the SubgameView's slot form."""

  def _make_solver(self, config, seed):
    view = self.view
    tree = view.whole
    self._structure = subgame_layout.SubgameStructure(view)
    # The tables' infosets: the subgame's (in SubgameStructure's order), then the
    # gadget's; compact, so that a resolve touches few fresh pages.
    self._infosets = np.concatenate(self._structure.infosets)
    counts = np.concatenate((tree.infoset_num_actions[self._infosets],
                             self._structure.gadget_counts)).astype(np.int64)
    self._table_offsets = np.concatenate(([0], np.cumsum(counts)[:-1]))
    num = len(self._infosets)
    subgame_slots = int(counts[:num].sum())
    starts = np.concatenate((
        tree.infoset_action_offset[self._infosets].astype(np.int64),
        self._base + self._table_offsets[num:] - subgame_slots))
    # The view's slot of each of the tables' slots.
    self._view_slots = np.repeat(starts - self._table_offsets, counts) + np.arange(
        counts.sum())
    order = np.argsort(self._infosets)
    self._sorted = (self._infosets[order], order)
    solver = compiled_outcome_sampling.CompiledOutcomeSamplingSolver(
        tree, regret_matcher=config.regret_matcher, exploration=config.exploration,
        cumulative_strategy_exponent=config.cumulative_strategy_exponent,
        baseline=config.baseline, seed=seed, infoset_actions=counts)
    self._prefix_arguments = self._prefix(config)
    solver.set_prefix(self._prefix_arguments, self._tables.infoset_map,
                      self._table_offsets)
    return solver

  def _prefix(self, config):
    """The kernel's prefix arguments: copied_view.GadgetView._build's prefix."""
    view = self.view
    tree = view.whole
    roots = view.root_nodes[view.active_roots]
    first_gate = len(self._infosets)  # the gadget's infosets' first id
    resolve = view.variant == "resolve"
    arrays = _prefix_arrays(
        _VARIANT_CODES[view.variant], int(view.opponent), first_gate,
        np.asarray(view.root_chance, np.float64),
        np.asarray(view.gate if resolve else np.zeros(0), np.int64),
        np.asarray(self._table_offsets, np.int64),
        np.asarray(view.terminate_value if resolve else np.zeros(0), np.float64),
        np.asarray(view.choice_counts, np.int64), tree.node_player[roots],
        bool(config.cfrd_aware_sampling))
    return arrays + (roots.astype(np.int64),
                     np.asarray(view.w[view.active_roots], np.float64),
                     float(tree.utility_sum))

  def _other_copies(self, trace):
    del trace  # a SubgameView's roots are never nested (subgame_layout.NestedRoots)
    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)

  def _resolving(self, config):
    del config  # the gate is the prefix's; no per-node root arrays
    return (np.zeros(0, np.int8), initial_track(self.view), np.zeros(0),
            np.zeros(0, np.int32))

  def _node_map(self):
    """The next roots' node map over the whole tree, shared with the infoset map by
    the tree's samplers: cleared of the last holder's entries and set to this
    one's."""
    tables = self._tables
    holder = tables.next_root_holder
    if holder is not self:
      if holder is not None:
        tables.infoset_map[holder._infosets] = -1  # pylint: disable=protected-access
        if holder.estimates is not None:
          tables.next_root[holder.estimates.local_nodes] = -1
      tables.infoset_map[self._infosets] = np.arange(len(self._infosets))
      if self.estimates is not None:
        local = self.estimates.local_nodes
        tables.next_root[local] = np.arange(len(local))
      tables.next_root_holder = self
    return tables.next_root

  def run(self, iterations):
    # The kernel reads the tree's shared maps, now holding this sampler's entries.
    # A copy of this sampler (a bot's clone: deepcopy) has a solver holding private
    # copies of them, taken when another sampler may have held them: point it at
    # the shared ones again.
    self._set_resolving(self._node_map())
    self.solver.set_prefix(self._prefix_arguments, self._tables.infoset_map,
                           self._table_offsets)
    super().run(iterations)

  @property
  def node_tree(self):
    return self.view.whole

  # What in_place_view.SubgameView asks of its solver, answered by the subgame's
  # structure (subgame_layout.SubgameStructure: no CFR+ tables).
  _STRUCTURE = ("subgame_nodes", "own_infosets", "inside", "_base", "_tables",
                "positions", "value_nodes")

  def __getattr__(self, name):
    if name in InPlaceSampler._STRUCTURE and "_structure" in self.__dict__:
      return getattr(self.__dict__["_structure"], name)
    raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

  def evaluate(self, strategy, observe):
    self._structure.evaluate(strategy, observe)

  def view_slots(self, values):
    """Per-slot table `values` (e.g. the solver's regrets) in the view's slot form
    (zero outside the subgame and gadget)."""
    size = self._base + int(self._structure.gadget_counts.sum())
    out = np.zeros(size)
    out[self._view_slots] = values
    return out

  def table_infoset(self, infoset):
    """The tables' id of whole-tree infoset `infoset` (-1 outside the subgame)."""
    ordered, order = self._sorted
    i = int(np.searchsorted(ordered, infoset))
    return int(order[i]) if i < len(ordered) and ordered[i] == infoset else -1

  def average_strategy_slots(self):
    return self._structure.average_strategy_slots(self.view_slots(
        self.solver.cumulative))

  def average_at(self, infoset):
    local = self.table_infoset(infoset)
    count = int(self.view.whole.infoset_num_actions[infoset])
    if local < 0:
      return np.full(count, 1.0 / count)
    offset = int(self._table_offsets[local])
    total = self.solver.cumulative[offset:offset + count]
    s = total.sum()
    return total / s if s > 0 else np.full(count, 1.0 / count)

  def average_sums(self, tree, infoset):
    local = self.table_infoset(infoset)
    if local < 0:
      return {}
    offset = int(self._table_offsets[local])
    count = int(tree.infoset_num_actions[infoset])
    at = int(tree.infoset_action_offset[infoset])
    return dict(zip(tree.infoset_actions[at:at + count].tolist(),
                    self.solver.cumulative[offset:offset + count].tolist()))
