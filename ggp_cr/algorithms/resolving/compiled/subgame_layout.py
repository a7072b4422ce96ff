"""A subgame's layout on the whole game's compiled tree ([S] §1.4.2, ch. 2, §6).

`SubgameStructure`: a SubgameView's ranges per depth and post-order segments on the
whole tree (set up per root and depth, not per node), its information sets, the gadget's
slots and one read-only pass; the per-tree tables they share (`prepare`), and the level
order of the tree's internal positions. Roots nested in another root's subtree raise
NestedRoots. How the prefix, payoffs and slots work: docs/algorithms/resolving.md,
"Module notes".
"""

import numba
import numpy as np

from ggp_cr.algorithms.cfr import traversal
from ggp_cr.algorithms.resolving.gadget import prefix as gadget_prefix
from ggp_cr.algorithms.tree import flat_tree

_NO_UPDATE = 2  # traversal.accumulate's update_player that updates no one


class NestedRoots(ValueError):
  """A root lies below another root: the subgame cannot be solved in place."""


@numba.njit(cache=True)
def _tables(node_num_children, node_parent, up_node):
  """Per node: the first child a breadth-first node would have (children of nodes
  a..b-1 are child_begin[a]..child_begin[b]-1), the number of internal nodes before
  it (its position if internal), its index in the post-order `up_node`, and the number
  of internal nodes in its subtree."""
  n = len(node_num_children)
  child_begin = np.empty(n + 1, dtype=np.int32)
  position_before = np.empty(n + 1, dtype=np.int32)
  child_begin[0] = 1
  position_before[0] = 0
  for i in range(n):
    c = node_num_children[i]
    child_begin[i + 1] = child_begin[i] + c
    position_before[i + 1] = position_before[i] + (1 if c > 0 else 0)
  post_index = np.full(n, -1, dtype=np.int32)
  for i in range(len(up_node)):
    post_index[up_node[i]] = i
  internal_below = np.zeros(n, dtype=np.int32)
  for i in range(n - 1, 0, -1):
    if node_num_children[i] > 0:
      internal_below[i] += 1
    internal_below[node_parent[i]] += internal_below[i]
  if n and node_num_children[0] > 0:
    internal_below[0] += 1
  return child_begin, position_before, post_index, internal_below


@numba.njit(cache=True)
def _ranges(roots, child_begin, position_before, post_index, internal_below,
            max_depth):
  """Per root: its position; the ranges of internal positions below the roots, depth
  step by depth step (all roots' nodes one level below their root, then two, ...: a
  node's parent is always in an earlier range), adjacent ranges merged; the post-order
  segments of the roots' subtrees in root order, adjacent segments merged (sibling
  roots' segments are adjacent); whether the roots' segments come in post-order
  without overlap (else the caller checks for nested roots); and the subgame's node
  count."""
  num_roots = len(roots)
  root_position = np.empty(num_roots, dtype=np.int64)
  up_lo = np.empty(num_roots, dtype=np.int64)
  up_hi = np.empty(num_roots, dtype=np.int64)
  begin = np.empty(num_roots, dtype=np.int64)
  end = np.empty(num_roots, dtype=np.int64)
  nodes = num_roots
  ordered = True
  segments = 0
  for j in range(num_roots):
    a = roots[j]
    root_position[j] = position_before[a]
    hi = post_index[a] + 1
    lo = hi - internal_below[a]
    if segments and lo < up_hi[segments - 1]:
      ordered = False
    if segments and up_hi[segments - 1] == lo:
      up_hi[segments - 1] = hi
    else:
      up_lo[segments] = lo
      up_hi[segments] = hi
      segments += 1
    begin[j] = child_begin[a]
    end[j] = child_begin[a + 1]
  # Ranges per depth step: at most one per root and step, fewer once merged.
  capacity = 2 * num_roots + 16
  down_lo = np.empty(capacity, dtype=np.int64)
  down_hi = np.empty(capacity, dtype=np.int64)
  count = 0
  deeper = True
  while deeper:
    deeper = False
    for j in range(num_roots):
      a, b = begin[j], end[j]
      if b <= a:
        continue
      nodes += b - a
      lo = position_before[a]
      hi = position_before[b]
      if hi > lo:
        if count and down_hi[count - 1] == lo:
          down_hi[count - 1] = hi
        else:
          if count == capacity:
            capacity *= 2
            grown_lo = np.empty(capacity, dtype=np.int64)
            grown_hi = np.empty(capacity, dtype=np.int64)
            grown_lo[:count] = down_lo[:count]
            grown_hi[:count] = down_hi[:count]
            down_lo, down_hi = grown_lo, grown_hi
          down_lo[count] = lo
          down_hi[count] = hi
          count += 1
      begin[j], end[j] = child_begin[a], child_begin[b]
      deeper = True
  return (root_position, down_lo[:count], down_hi[:count], up_lo[:segments],
          up_hi[:segments], ordered, nodes)


@numba.njit(cache=True)
def _root_segments(roots, post_index, internal_below):
  """Each root's post-order segment (the nested-roots check when _ranges found them
  out of order)."""
  up_hi = np.empty(len(roots), dtype=np.int64)
  up_lo = np.empty(len(roots), dtype=np.int64)
  for j in range(len(roots)):
    up_hi[j] = post_index[roots[j]] + 1
    up_lo[j] = up_hi[j] - internal_below[roots[j]]
  return up_lo, up_hi


@numba.njit(cache=True)
def _write_leaves(roots, child_begin, node_num_children, node_utility, values, gadget,
                  opponent, utility_sum, scale, shift):
  """values[z] at each terminal z of the subgame below `roots`, as the copying view
  lays it out: with `gadget`, player 0's gadget payoff (o's: scale_j·u_o − shift_j
  below root j); without, player 0's utility in the tree (what the payoffs
  overwrote; opponent, utility_sum, scale and shift unread)."""
  for j in range(len(roots)):
    a = child_begin[roots[j]]
    b = child_begin[roots[j] + 1]
    while b > a:
      for n in range(a, b):
        if node_num_children[n] == 0:
          if gadget:
            values[n] = gadget_prefix.gadget_payoff(node_utility[n], j, opponent,
                                                   utility_sum, scale, shift)
          else:
            values[n] = node_utility[n]
      a, b = child_begin[a], child_begin[b]


# _TreeTables.owner while the value array's terminals hold the tree's utilities (a
# whole-tree solver's pass, `claim`).
_WHOLE_TREE = "the whole tree's utilities"
# In-place subgames whose payoffs `claim` restores one by one; after more, it copies
# all of the tree's utilities back.
_MAX_RESTORED = 64
# _write_leaves' unread scale and shift when it restores the tree's utilities.
_NO_SCALE = np.zeros(0)


@numba.njit(cache=True)
def _infosets(up_lo, up_hi, up_infoset, up_position, num_infosets):
  """The subgame's information sets (in order of first post-order node), a mask
  over all of the tree's, and per information set found the internal position of
  its first history and its number of histories in the subgame (`up_infoset`: the
  information set of each post-order entry, -1 at chance)."""
  inside = np.zeros(num_infosets, dtype=np.bool_)
  index = np.empty(num_infosets, dtype=np.int32)
  total = 0
  for j in range(len(up_lo)):
    total += up_hi[j] - up_lo[j]
  found = np.empty(total, dtype=np.int32)
  first = np.empty(total, dtype=np.int64)
  histories = np.zeros(total, dtype=np.int64)
  count = 0
  for j in range(len(up_lo)):
    for i in range(up_lo[j], up_hi[j]):
      infoset = up_infoset[i]
      if infoset >= 0:
        if not inside[infoset]:
          inside[infoset] = True
          index[infoset] = count
          found[count] = infoset
          first[count] = up_position[i]
          count += 1
        histories[index[infoset]] += 1
  return found[:count], inside, first[:count], histories[:count]


@numba.njit(cache=True)
def _single_depth(node_infoset, node_player, node_depth, num_infosets):
  """Whether every information set's histories lie at one depth."""
  depth = np.full(num_infosets, -1, dtype=np.int64)
  for n in range(len(node_infoset)):
    if node_player[n] >= 0:
      i = node_infoset[n]
      if depth[i] < 0:
        depth[i] = node_depth[n]
      elif depth[i] != node_depth[n]:
        return False
  return True


def level_segments(root_position, down_lo, down_hi, level_start):
  """(lo, hi) of a subgame's internal positions (the roots', increasing, and its
  top-down ranges), cut at the levels' starts `level_start` (each depth's first
  position) and ordered deepest level first, increasing within a level, adjacent
  ones merged."""
  # The roots' positions (increasing: roots in increasing order) as ranges first:
  # a subgame may have 10^5-10^6 roots.
  root_position = np.asarray(root_position, dtype=np.int64)
  breaks = np.flatnonzero(np.diff(root_position) != 1) + 1
  root_lo = root_position[np.concatenate(([0], breaks))] if len(root_position) else \
      root_position
  root_hi = root_position[np.append(breaks, len(root_position)) - 1] + 1 if len(
      root_position) else root_position
  lo = np.concatenate((root_lo, down_lo)).astype(np.int64)
  hi = np.concatenate((root_hi, down_hi)).astype(np.int64)
  first = np.searchsorted(level_start, lo, side="right") - 1
  last = np.searchsorted(level_start, hi - 1, side="right") - 1
  pieces = last - first + 1
  level = np.repeat(first, pieces) + (np.arange(pieces.sum()) -
                                      np.repeat(np.cumsum(pieces) - pieces, pieces))
  lo = np.maximum(np.repeat(lo, pieces), level_start[level])
  hi = np.minimum(np.repeat(hi, pieces), level_start[level + 1])
  order = np.lexsort((lo, -level))
  lo, hi, level = lo[order], hi[order], level[order]
  starts = np.flatnonzero(np.concatenate((
      [True], (lo[1:] != hi[:-1]) | (level[1:] != level[:-1]))))
  ends = np.append(starts[1:], len(lo)) - 1
  return lo[starts], hi[ends]


class _Levels:
  """The tree's internal positions (breadth-first) laid out for `_level_accumulate`:
  per position its node, first child, child count, player and first slot
  (unsigned); where each depth's positions start; per depth the player of all its
  positions (-2: several, or none); whether every information set lies on one
  level."""

  def __init__(self, tree, walk):
    entry = np.empty(walk.num_internal, dtype=np.int64)
    entry[walk.up_position] = np.arange(walk.num_internal)
    # Unsigned indices (no negative-index wraparound in the kernel): 1.3 times
    # faster on PAM{8}. A chance position's slot (-1) wraps around, never read.
    self.node = walk.up_node[entry].astype(np.uint32)
    self.first_child = walk.up_first_child[entry].astype(np.uint32)
    self.num_children = walk.up_num_children[entry].astype(np.uint16)
    self.player = walk.up_player[entry]
    self.slot = walk.up_slot_offset[entry].astype(np.uint32)
    depth = tree.node_depth[self.node]
    self.start = np.searchsorted(depth, np.arange(int(depth.max(initial=0)) + 2))
    self.level_player = np.full(len(self.start) - 1, -2, dtype=np.int64)
    filled = np.flatnonzero(self.start[1:] > self.start[:-1])
    if len(filled):
      lowest = np.minimum.reduceat(self.player, self.start[filled])
      highest = np.maximum.reduceat(self.player, self.start[filled])
      self.level_player[filled] = np.where(lowest == highest, lowest, -2)
    self.single_depth = bool(_single_depth(tree.node_infoset, tree.node_player,
                                           tree.node_depth, tree.num_infosets))


@numba.njit(cache=True)
def subgame_pass(update_player, player, root_position, root_slot, root_chance,
                 down_lo, down_hi, up_lo, up_hi, down_parent, down_player, down_slot,
                 down_chance_prob, up_node, up_position, up_first_child,
                 up_num_children, up_player, up_slot_offset, chance_prob, strategy,
                 reach, values, regrets, cumulative, weight):
  """One CFR pass over the subgame: the roots' reach from the gadget's prefix (p: 1;
  o: strategy[root_slot[j]], 1 where it is -1; chance: root_chance[j]), reach
  top-down range by range, values (and `update_player`'s regrets and sums) bottom-up
  segment by segment."""
  root_reach(-1, player, root_position, root_slot, root_chance, strategy, reach)
  for s in range(len(down_lo)):
    traversal.propagate_positions(down_lo[s], down_hi[s], down_parent, down_player,
                            down_slot, down_chance_prob, strategy, reach)
  for j in range(len(up_lo)):
    traversal.accumulate(update_player, up_lo[j], up_hi[j], up_node, up_position,
                   up_first_child, up_num_children, up_player, up_slot_offset,
                   chance_prob, strategy, reach, values, regrets, cumulative, weight,
                   1.0, False, False)


@numba.njit(cache=True)
def root_reach(column, player, root_position, root_slot, root_chance, strategy,
                reach):
  """The roots' reach from the gadget's prefix (p: 1; o: strategy[root_slot[j]], 1
  where it is -1; chance: root_chance[j]): all three columns (`column` -1) or one."""
  opponent = 1 - player
  for j in range(len(root_position)):
    k = root_position[j]
    if column < 0 or column == player:
      reach[k, player] = 1.0
    if column < 0 or column == opponent:
      reach[k, opponent] = strategy[root_slot[j]] if root_slot[j] >= 0 else 1.0
    if column < 0:
      reach[k, 2] = root_chance[j]




class _TreeTables:
  """What every SubgameView of one tree shares: the whole tree's CFR traversal, the
  _tables arrays, scratch reach and value arrays (one pass at a time; `owner` is
  the solver whose gadget payoffs the value array's terminals hold) and the sampling
  solvers' next-root map. Fresh
  arrays of the tree's size would cost a page fault per 4 KiB touched at every
  resolve."""

  def __init__(self, tree):
    self.tree = tree
    self.walk = traversal.whole_tree_walk(tree)
    (self.child_begin, self.position_before, self.post_index,
     self.internal_below) = _tables(tree.node_num_children, tree.node_parent,
                                    self.walk.up_node)
    # Each post-order entry's information set (-1 at chance): a subgame's setup
    # reads it in order (_infosets) instead of gathering it through the nodes.
    self.up_infoset = np.where(
        self.walk.up_player >= 0, tree.node_infoset[self.walk.up_node],
        -1).astype(np.int32)
    # Zeros, not garbage: a pruned pass weighs the stale values it skips by 0.
    self.reach = np.zeros((max(self.walk.num_internal, 1), 3))
    self.values = np.zeros(tree.num_nodes)
    self.owner = None
    # The roots of the in-place subgames whose gadget payoffs were written into
    # `values` since it last held the tree's utilities (None: unknown, `claim`
    # copies them all).
    self.payoffs_below = None
    # The CFR+ solver whose last iteration pass the reach array holds (None: another
    # pass wrote it since), so that its next pass redoes one player's column.
    self.reach_owner = None
    # view_sampling.InPlaceSampler's next roots (`next_root`, made when a sampler
    # first asks: CFR+ never does) and tables' infoset ids (-1 elsewhere), and the
    # sampler that holds them.
    self._next_root = None
    self.infoset_map = np.full(tree.num_infosets, -1, dtype=np.int32)
    self.next_root_holder = None
    self.touched = False
    self._levels = None

  @property
  def next_root(self):
    """Per node, its next root's index in view_sampling.InPlaceSampler's holder
    (-1 elsewhere)."""
    if self._next_root is None:
      self._next_root = np.full(self.tree.num_nodes, -1, dtype=np.int64)
    return self._next_root

  @property
  def levels(self):
    """The tree's _Levels (built on first use; `prepare` builds it)."""
    if self._levels is None:
      self._levels = _Levels(self.tree, self.walk)
    return self._levels

  def __deepcopy__(self, memo):
    """Shared, not copied: copies of a solver (a continual-resolving bot's clone)
    use the same arrays."""
    return self

  def wrote_payoffs(self, roots):
    """Records that an in-place subgame at `roots` wrote its gadget payoffs into
    `values` (SubgameStructure._own_values)."""
    if self.payoffs_below is not None:
      self.payoffs_below.append(roots)
      if len(self.payoffs_below) > _MAX_RESTORED:
        self.payoffs_below = None

  def claim(self):
    """Before a pass of the whole-tree CFR solver that uses `reach` and `values` as
    its scratch (cfr.GeneralCFRSolver's `scratch`, `whole_tree_scratch`): the
    terminals get the tree's utilities back where in-place subgames wrote their
    gadget payoffs, and no in-place solver's reach is left."""
    if self.owner is not _WHOLE_TREE:
      if self.payoffs_below is None:
        np.copyto(self.values, self.walk.utility)
      else:
        tree = self.tree
        for roots in self.payoffs_below:
          _write_leaves(roots, self.child_begin, tree.node_num_children,
                        self.walk.utility, self.values, False, 0, 0.0, _NO_SCALE,
                        _NO_SCALE)
      self.payoffs_below = []
      self.owner = _WHOLE_TREE
    self.reach_owner = None


def _tree_tables(tree):
  return flat_tree.per_tree("in_place_tables", tree, _TreeTables)


def whole_tree_scratch(tree):
  """The scratch arrays (cfr.GeneralCFRSolver's `scratch`) that the whole-game
  CFR+ solve shares with every SubgameView of `tree` (and every copy of itself):
  its own were 26 B a history (docs/reproductions.md, IIGoofspiel{7})."""
  return _tree_tables(tree)


def prepare(tree):
  """Builds the arrays every SubgameView of `tree` shares and touches them once, so
  that no subgame of a match pays for it (continual resolving calls this in
  pre-play)."""
  tables = _tree_tables(tree)
  tables.levels  # pylint: disable=pointless-statement  (built before play)
  if not tables.touched:
    tables.values.fill(0.0)
    tables.reach.fill(0.0)
    # A solver's reach and gadget payoffs, if one ran before, are gone.
    tables.owner = tables.reach_owner = tables.payoffs_below = None
    tables.touched = True


class SubgameStructure:
  """What every solver of a SubgameView needs, without tables: the subgame's ranges
  and post-order segments on the whole tree, its information sets, the gadget's slots
  after the tree's (`_base`), and one read-only pass (`evaluate`) (module docstring).
  view_sampling.InPlaceSampler samples with it; SubgameCFRPlus adds CFR+'s tables."""

  def __init__(self, view):
    self._view = view
    tree = view.whole
    self._tables = tables = _tree_tables(tree)
    walk = tables.walk
    roots = view.root_nodes[view.active_roots]
    self._roots = roots
    # The roots' nodes in the value array (the whole tree's; packed: 0..R-1).
    self._value_roots = roots
    (self._root_position, self._down_lo, self._down_hi, self._up_lo, self._up_hi,
     ordered, self.subgame_nodes) = _ranges(roots, tables.child_begin,
                                            tables.position_before, tables.post_index,
                                            tables.internal_below, tree.max_depth)
    if not ordered:
      up_lo, up_hi = _root_segments(roots, tables.post_index, tables.internal_below)
      order = np.argsort(up_lo)
      if np.any(up_lo[order][1:] < up_hi[order][:-1]):
        raise NestedRoots("A root of the subgame lies below another root.")
    infosets, self.inside, first, histories = _infosets(
        self._up_lo, self._up_hi, tables.up_infoset, walk.up_position,
        tree.num_infosets)
    owner = tree.infoset_player[infosets]
    # The subgame's information sets per player, with the position of a history of
    # each and their count (_infoset_sums).
    self.infosets = [infosets[owner == p] for p in (0, 1)]
    self._infoset_histories = [(first[owner == p], histories[owner == p])
                               for p in (0, 1)]
    self.own_infosets = self.infosets[view.player]
    self._base = tree.num_infoset_actions
    if view.variant == "resolve":
      counts = np.full(len(view.gate_key), 2, dtype=np.int16)
    elif view.variant == "max_margin":
      counts = np.array([len(view.choice_counts)], dtype=np.int16)
    else:
      counts = np.zeros(0, dtype=np.int16)
    self._gate_counts = self.gadget_counts = counts
    self._gate_offsets = (self._base + np.concatenate(
        ([0], np.cumsum(counts)[:-1])).astype(np.int32) if len(counts) else
                          np.zeros(0, dtype=np.int32))
    self._gate_ids = np.arange(len(counts), dtype=np.int32)
    # o's slot whose probability is each root's reach from the prefix (resolve:
    # Follow at its gate; max_margin: the choice of its infoset; unsafe: none, -1).
    if view.variant == "resolve":
      self._root_slot = self._gate_offsets[view.gate].astype(np.int64)
    elif view.variant == "max_margin":
      self._root_slot = (self._base + view.gate).astype(np.int64)
    else:
      self._root_slot = np.full(len(roots), -1, dtype=np.int64)
    self._root_chance = np.asarray(view.root_chance, dtype=np.float64)
    self.visited_states = 0

  @property
  def _values(self):
    return self._tables.values

  @property
  def _reach(self):
    return self._tables.reach

  @property
  def nodes_per_range(self):
    """The subgame's nodes per top-down range its passes walk on the whole tree
    (few: its nodes lie scattered; its post-order segments, one or more a root,
    are walked in order and do not count)."""
    return self.subgame_nodes / max(len(self._down_lo), 1)

  def positions(self, nodes):
    """The rows of the pass's reach (`observe`'s) of whole-tree internal nodes."""
    return self._tables.position_before[nodes]

  def value_nodes(self, nodes):
    """The entries of the pass's values (`observe`'s) of whole-tree nodes."""
    return np.asarray(nodes)

  def _own_values(self):
    """Writes player 0's gadget payoffs at the subgame's terminals into the shared
    value array unless they are there (internal nodes are overwritten by every
    pass)."""
    tables = self._tables
    if tables.owner is not self:
      view = self._view
      tree = view.whole
      _write_leaves(self._roots, tables.child_begin, tree.node_num_children,
                    tree.node_utility, tables.values, True, view.opponent,
                    tree.utility_sum, np.asarray(view.scale, dtype=np.float64),
                    np.asarray(view.shift, dtype=np.float64))
      tables.wrote_payoffs(self._roots)
      tables.owner = self

  def _traverse(self, update_player, strategy, weight, regrets, cumulative):
    tables = self._tables
    walk = tables.walk
    self._own_values()
    tables.reach_owner = None
    subgame_pass(update_player, self._view.player, self._root_position,
                 self._root_slot, self._root_chance, self._down_lo, self._down_hi,
                 self._up_lo, self._up_hi, walk.down_parent, walk.down_player,
                 walk.down_slot, walk.down_chance_prob, walk.up_node, walk.up_position,
                 walk.up_first_child, walk.up_num_children, walk.up_player,
                 walk.up_slot_offset, walk.chance_prob, strategy, tables.reach,
                 self._values, regrets, cumulative, weight)
    self.visited_states += self.subgame_nodes

  def root_values(self):
    """o's gadget payoff at each active root after a pass."""
    values = self._values[self._value_roots]
    return values if self._view.opponent == 0 else -values

  def evaluate(self, strategy, observe):
    """observe(reach, values) of one pass with `strategy` (view slot form), no
    update."""
    self._traverse(_NO_UPDATE, strategy, 0.0, _EMPTY, _EMPTY)
    observe(self._reach, self._values)

  def _offsets(self):
    tree = self._view.whole
    infosets = np.concatenate(self.infosets)
    return (np.concatenate((tree.infoset_action_offset[infosets], self._gate_offsets)),
            np.concatenate((tree.infoset_num_actions[infosets], self._gate_counts)))

  def average_strategy_slots(self, cumulative):
    """The average strategy in the view's slot form (uniform where never reached;
    zero outside the subgame and gadget) of the sums `cumulative` (view slot form)."""
    out = np.zeros(len(cumulative))
    offsets, counts = self._offsets()
    flat_tree.normalise_infosets(cumulative, offsets, counts, out)
    return out


_EMPTY = np.zeros(0)  # the tables of a pass that updates no one
