"""Gadget views that do not copy the subgame ([S] §1.4.2, ch. 2, §6; [H] §G-I).

`SubgameView` is a copied_view.GadgetView whose CFR+ runs on the whole game's compiled
tree itself, restricted to the subgame (set up per root and depth, not per node), and
equals cfr.CFRPlusSolver on the copying view to rounding. Roots nested in another
root's subtree raise NestedRoots (callers copy then). How the prefix, payoffs and slots
work: docs/algorithms/resolving.md, "Module notes".
"""

import time

import numba
import numpy as np

from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.cfr import iteration_kernels
from ggp_cr.algorithms.cfr import regret_matching
from ggp_cr.algorithms.cfr import traversal
from ggp_cr.algorithms.resolving.compiled import copied_view
from ggp_cr.algorithms.resolving.compiled import packed_walk
from ggp_cr.algorithms.resolving.gadget import prefix as gadget_prefix
from ggp_cr.algorithms.tree import flat_tree

_NO_UPDATE = 2  # traversal.accumulate's update_player that updates no one

# CFR+ packs a subgame's walk (packed_walk.PackedWalk) when it has at least
# PACK_MIN_NODES nodes and its top-down pass would walk fewer than
# PACK_NODES_PER_RANGE nodes a range on the whole tree (scattered: Leduc{3,30}'s
# 198-260 gained 1.4-1.9 times; IIGS{6}'s 739-906 and PAM{8}'s one range with
# thousands of post-order segments 0.8-1.1),
# and, with a deadline, when the packing (about PACK_SECONDS_PER_NODE a node) buys
# more iterations before it than it costs, its passes PACK_SPEEDUP times faster
# (benchmarks/subgame_node_rate.py; docs/algorithms/resolving.md).
PACK_MIN_NODES = 200_000
PACK_NODES_PER_RANGE = 400
PACK_SECONDS_PER_NODE = 6e-8
PACK_SPEEDUP = 1.4


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
def _gadget_leaves(roots, child_begin, node_num_children, node_utility, opponent,
                   utility_sum, scale, shift, values):
  """values[z] = player 0's gadget payoff at each terminal z of the subgame, as the
  copying view lays it out (o's: scale_j·u_o − shift_j below root j)."""
  for j in range(len(roots)):
    a = child_begin[roots[j]]
    b = child_begin[roots[j] + 1]
    while b > a:
      for n in range(a, b):
        if node_num_children[n] == 0:
          values[n] = gadget_prefix.gadget_payoff(node_utility[n], j, opponent,
                                                 utility_sum, scale, shift)
      a, b = child_begin[a], child_begin[b]


@numba.njit(cache=True)
def _infosets(up_lo, up_hi, up_node, up_position, up_player, node_infoset,
              num_infosets):
  """The subgame's information sets (in order of first post-order node), a mask
  over all of the tree's, and per information set found the internal position of
  its first history and its number of histories in the subgame."""
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
      if up_player[i] >= 0:
        infoset = node_infoset[up_node[i]]
        if not inside[infoset]:
          inside[infoset] = True
          index[infoset] = count
          found[count] = infoset
          first[count] = up_position[i]
          count += 1
        histories[index[infoset]] += 1
  return found[:count], inside, first[:count], histories[:count]


@numba.njit(cache=True)
def _infoset_sums(update_player, infosets, first, histories, infoset_action_offset,
                  infoset_num_actions, strategy, reach, cumulative, weight):
  """`update_player`'s sums s_I += weight pi_i(h) sigma_I over its histories h in
  the subgame, information set by information set (`first`: the position of one of
  I's histories; `histories`: their count): pi_i(h) is the same product at every h
  in I (perfect recall), so each history adds the same number, and adding it
  histories[n] times to each slot gives traversal.accumulate_pruned's sums bit for
  bit without visiting the histories (scattered in the tree). Up to four slots are
  summed side by side in registers (the same additions per slot, in the same
  order; 3 times faster than through memory)."""
  for n in range(len(infosets)):
    own = weight * reach[first[n], update_player]
    if own == 0.0:  # adding 0.0 leaves a sum unchanged
      continue
    a = infoset_action_offset[infosets[n]]
    stop = a + infoset_num_actions[infosets[n]]
    count = histories[n]
    while a + 4 <= stop:
      x0, x1 = own * strategy[a], own * strategy[a + 1]
      x2, x3 = own * strategy[a + 2], own * strategy[a + 3]
      s0, s1, s2, s3 = cumulative[a], cumulative[a + 1], cumulative[a + 2], \
          cumulative[a + 3]
      for _ in range(count):
        s0 += x0
        s1 += x1
        s2 += x2
        s3 += x3
      cumulative[a], cumulative[a + 1] = s0, s1
      cumulative[a + 2], cumulative[a + 3] = s2, s3
      a += 4
    if a + 2 <= stop:
      x0, x1 = own * strategy[a], own * strategy[a + 1]
      s0, s1 = cumulative[a], cumulative[a + 1]
      for _ in range(count):
        s0 += x0
        s1 += x1
      cumulative[a], cumulative[a + 1] = s0, s1
      a += 2
    if a < stop:
      x0 = own * strategy[a]
      s0 = cumulative[a]
      for _ in range(count):
        s0 += x0
      cumulative[a] = s0


@numba.njit(cache=True)
def _level_accumulate(update_player, kept, level_lo, level_hi, pos_node,
                      pos_first_child, pos_num_children, pos_player, pos_slot,
                      chance_prob, strategy, reach, values, regrets):
  """traversal.accumulate_pruned's values and regrets (no sums) over internal
  positions level_lo[s]..level_hi[s]-1, segment by segment (`_level_segments`:
  deepest level first, increasing within a level), skipping each position where
  accumulate_pruned skips its subtree (pi_-i pi_c = 0, and pi_kept pi_c = 0 if
  `kept` >= 0; a zero reach stays zero below). A level's positions and their
  children are read front to back (1.3-1.4 times faster than the post-order on
  PAM{8}'s subgames); each information set's histories lie on one level
  (_Levels.single_depth), in increasing order there as in the post-order, so
  every regret gets the same additions in the same order. The body repeats
  accumulate_pruned's on purpose (its docstring)."""
  other = 1 - update_player
  for s in range(len(level_lo)):
    for k in range(level_lo[s], level_hi[s]):
      chance = reach[k, 2]
      if reach[k, other] * chance == 0.0 and (
          kept < 0 or reach[k, kept] * chance == 0.0):
        continue
      first = pos_first_child[k]
      count = pos_num_children[k]
      q = pos_player[k]
      value = 0.0
      if q < 0:
        for c in range(first, first + count):
          value += chance_prob[c] * values[c]
        values[pos_node[k]] = value
        continue
      offset = pos_slot[k]
      for a in range(count):
        value += strategy[offset + a] * values[first + a]
      values[pos_node[k]] = value
      if q == update_player:
        counterfactual = reach[k, other] * chance
        if q == 0:
          for a in range(count):
            regrets[offset + a] += counterfactual * (values[first + a] - value)
        else:
          for a in range(count):
            regrets[offset + a] += counterfactual * (value - values[first + a])


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


def _level_segments(root_position, down_lo, down_hi, level_start):
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
  (unsigned); where each depth's positions start; whether every information set
  lies on one level."""

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
    self.single_depth = bool(_single_depth(tree.node_infoset, tree.node_player,
                                           tree.node_depth, tree.num_infosets))


@numba.njit(cache=True)
def _pass(update_player, player, root_position, root_slot, root_chance, down_lo,
          down_hi, up_lo, up_hi, down_parent, down_player, down_slot, down_chance_prob,
          up_node, up_position, up_first_child, up_num_children, up_player,
          up_slot_offset, chance_prob, strategy, reach, values, regrets, cumulative,
          weight):
  """One CFR pass over the subgame: the roots' reach from the gadget's prefix (p: 1;
  o: strategy[root_slot[j]], 1 where it is -1; chance: root_chance[j]), reach
  top-down range by range, values (and `update_player`'s regrets and sums) bottom-up
  segment by segment."""
  _root_reach(-1, player, root_position, root_slot, root_chance, strategy, reach)
  for s in range(len(down_lo)):
    traversal.propagate_positions(down_lo[s], down_hi[s], down_parent, down_player,
                            down_slot, down_chance_prob, strategy, reach)
  for j in range(len(up_lo)):
    traversal.accumulate(update_player, up_lo[j], up_hi[j], up_node, up_position,
                   up_first_child, up_num_children, up_player, up_slot_offset,
                   chance_prob, strategy, reach, values, regrets, cumulative, weight,
                   1.0, False, False)


@numba.njit(cache=True)
def _root_reach(column, player, root_position, root_slot, root_chance, strategy,
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


@numba.njit(cache=True)
def _pruned_pass(update_player, player, column, kept, root_position, root_slot,
                 root_chance, down_lo, down_hi, up_lo, up_hi, infosets, first,
                 histories, infoset_action_offset, infoset_num_actions, down_parent,
                 down_player, down_slot, down_chance_prob, up_node, up_position,
                 up_first_child, up_num_children, up_player, up_slot_offset,
                 up_parent, up_start, chance_prob, strategy, reach, values, regrets,
                 cumulative, weight, level_lo, level_hi, levels):
  """`_pass` of a CFR+ iteration for `update_player` (0 or 1) that skips the
  subtrees it has no counterfactual reach in (traversal.accumulate_pruned, `kept`
  as there), its sums added per information set (`_infoset_sums` of its
  `infosets` in the subgame), its reach redone for player `column` only if given
  (>= 0: the reach array holds the previous pass's, which differs in that player's
  strategy alone), else all of it; its values and regrets level by level
  (`_level_accumulate` over the segments level_lo/level_hi, `levels` a _Levels'
  arrays) if there are such segments, else along the post-order segments."""
  _root_reach(column, player, root_position, root_slot, root_chance, strategy, reach)
  for s in range(len(down_lo)):
    if column < 0:
      traversal.propagate_positions(down_lo[s], down_hi[s], down_parent, down_player,
                                    down_slot, down_chance_prob, strategy, reach)
    else:
      traversal.propagate_column(column, down_lo[s], down_hi[s], down_parent,
                                 down_player, down_slot, strategy, reach)
  _infoset_sums(update_player, infosets, first, histories, infoset_action_offset,
                infoset_num_actions, strategy, reach, cumulative, weight)
  if len(level_lo):
    _level_accumulate(update_player, kept, level_lo, level_hi, levels[0], levels[1],
                      levels[2], levels[3], levels[4], chance_prob, strategy, reach,
                      values, regrets)
    return
  for j in range(len(up_lo)):
    traversal.accumulate_pruned(update_player, up_lo[j], up_hi[j], up_node,
                                up_position, up_first_child, up_num_children,
                                up_player, up_slot_offset, up_parent, up_start,
                                chance_prob, strategy, reach, values, regrets, kept)


@numba.njit(cache=True)
def _update_gates(values, roots, negate, root_slot, terminate, root_chance, strategy,
                  weight, regrets, cumulative):
  """The resolve gadget's Follow/Terminate regrets and sums of o from the roots'
  values, root by root (the order in which the copy's post-order visits the gates)."""
  for j in range(len(roots)):
    follow = -values[roots[j]] if negate else values[roots[j]]
    f = root_slot[j]
    gate_value = strategy[f] * follow + strategy[f + 1] * terminate[j]
    regrets[f] += root_chance[j] * (follow - gate_value)
    regrets[f + 1] += root_chance[j] * (terminate[j] - gate_value)
    cumulative[f] += weight * strategy[f]
    cumulative[f + 1] += weight * strategy[f + 1]


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
    # Zeros, not garbage: a pruned pass weighs the stale values it skips by 0.
    self.reach = np.zeros((max(self.walk.num_internal, 1), 3))
    self.values = np.zeros(tree.num_nodes)
    self.owner = None
    # The CFR+ solver whose last iteration pass the reach array holds (None: another
    # pass wrote it since), so that its next pass redoes one player's column.
    self.reach_owner = None
    # view_sampling.InPlaceSampler's next roots and tables' infoset ids (-1
    # elsewhere), and the sampler that holds them.
    self.next_root = np.full(tree.num_nodes, -1, dtype=np.int64)
    self.infoset_map = np.full(tree.num_infosets, -1, dtype=np.int32)
    self.next_root_holder = None
    self.touched = False
    self._levels = None

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


def _tree_tables(tree):
  return flat_tree.per_tree("in_place_tables", tree, _TreeTables)


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
    tables.owner = tables.reach_owner = None
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
        self._up_lo, self._up_hi, walk.up_node, walk.up_position, walk.up_player,
        tree.node_infoset, tree.num_infosets)
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
      _gadget_leaves(self._roots, tables.child_begin, tree.node_num_children,
                     tree.node_utility, view.opponent, tree.utility_sum,
                     np.asarray(view.scale, dtype=np.float64),
                     np.asarray(view.shift, dtype=np.float64), tables.values)
      tables.owner = self

  def _traverse(self, update_player, strategy, weight, regrets, cumulative):
    tables = self._tables
    walk = tables.walk
    self._own_values()
    tables.reach_owner = None
    _pass(update_player, self._view.player, self._root_position, self._root_slot,
          self._root_chance, self._down_lo, self._down_hi, self._up_lo, self._up_hi,
          walk.down_parent, walk.down_player, walk.down_slot, walk.down_chance_prob,
          walk.up_node, walk.up_position, walk.up_first_child, walk.up_num_children,
          walk.up_player, walk.up_slot_offset, walk.chance_prob, strategy,
          tables.reach, self._values, regrets, cumulative, weight)
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


class SubgameCFRPlus(SubgameStructure):
  """CFR+ ([S] §1.3.1: RM+, alternating updates, linear averaging) on a SubgameView
  (module docstring); cfr.CFRPlusSolver's solving API. Its passes run on the whole
  tree, skipping unreached subtrees if `prune` (`_prune`; `pruned_passes` counts
  them), or on the subgame's walk packed into arrays of its own (`pack` True; None:
  when `should_pack` and `packing_pays` before time.perf_counter() `deadline`
  with `reserve` seconds kept free), with the same sums in the same order; pruned
  passes run bottom-up level by level where that keeps the order
  (`level_order_keeps_sums`), unless `by_level` is False (the post-order walk)."""

  def __init__(self, view, pack=None, deadline=None, reserve=0.0, prune=True,
               by_level=True):
    super().__init__(view)
    self._level_lo = self._level_hi = np.zeros(0, dtype=np.int64)
    if by_level and self.level_order_keeps_sums():
      self._level_lo, self._level_hi = _level_segments(
          self._root_position, self._down_lo, self._down_hi,
          self._tables.levels.start)
    self.packed = None
    # Iteration passes on the whole tree skip unreached subtrees (`_prune`).
    self.prune = bool(prune)
    self.pruned_passes = 0
    if pack is None:
      pack = self.should_pack() and self.packing_pays(deadline, reserve)
    if pack:
      self._pack()
    size = self._base + int(self._gate_counts.sum())
    self._regrets = np.zeros(size)
    self._cumulative = np.zeros(size)
    self._strategy = np.zeros(size)
    self._params = regret_matching.parse_regret_matcher("rm+").params()
    for p in (0, 1):
      self._end(p, 1.0)
    self._iteration = 0
    self._log_weight_scale = 0.0

  @property
  def iterations(self):
    return self._iteration

  def should_pack(self):
    """Whether packing pays (PACK_MIN_NODES, PACK_NODES_PER_RANGE), measured by
    benchmarks/subgame_node_rate.py: the subgame is large and scattered."""
    return (self.subgame_nodes >= PACK_MIN_NODES and
            self.nodes_per_range < PACK_NODES_PER_RANGE)

  def packing_seconds(self):
    """The estimated seconds of packing the subgame's walk."""
    return PACK_SECONDS_PER_NODE * self.subgame_nodes

  def packing_pays(self, deadline, reserve=0.0):
    """Whether packing now buys more iterations before time.perf_counter()
    `deadline` than it costs (None: no deadline, an iteration budget: it does),
    with the packed passes PACK_SPEEDUP times faster, and leaves `reserve`
    seconds (the first iteration's) free."""
    if deadline is None:
      return True
    left = deadline - time.perf_counter()
    packing = self.packing_seconds()
    return packing + reserve <= left and packing <= left * (1 - 1 / PACK_SPEEDUP)

  def _pack(self):
    """Lays the walk out in packed_walk.PackedWalk (the view's roots are
    internal)."""
    view = self._view
    tree = view.whole
    self.packed = packed_walk.PackedWalk(
        tree, self._tables.walk, self._tables, self._roots, view.opponent,
        view.scale, view.shift)
    self._value_roots = self.packed.root_nodes

  def write_payoffs(self):
    """Writes its gadget payoffs at the subgame's terminals into the shared value
    array now, unless they are there (its first pass would:
    CompiledResolver.payoffs_ahead does it in a move's leftover time); nothing when
    packed (its own arrays hold them)."""
    if self.packed is None:
      self._own_values()

  @property
  def prunes_in_place(self):
    """Whether its passes skip unreached subtrees on the whole tree (pruned, not
    packed)."""
    return self.prune and self.packed is None

  @property
  def _values(self):
    return self._tables.values if self.packed is None else self.packed.values

  @property
  def _reach(self):
    return self._tables.reach if self.packed is None else self.packed.reach

  def positions(self, nodes):
    if self.packed is None:
      return super().positions(nodes)
    return self.packed.local_positions(nodes)

  def value_nodes(self, nodes):
    if self.packed is None:
      return super().value_nodes(nodes)
    return self.packed.local_nodes(nodes)

  def _traverse(self, update_player, strategy, weight, regrets, cumulative):
    packed = self.packed
    if packed is None:
      super()._traverse(update_player, strategy, weight, regrets, cumulative)
      return
    _pass(update_player, self._view.player, packed.root_position, self._root_slot,
          self._root_chance, packed.down_lo, packed.down_hi, packed.up_lo,
          packed.up_hi, packed.down_parent, packed.down_player, packed.down_slot,
          packed.down_chance_prob, packed.up_node, packed.up_position,
          packed.up_first_child, packed.up_num_children, packed.up_player,
          packed.up_slot_offset, packed.chance_prob, strategy, packed.reach,
          packed.values, regrets, cumulative, weight)
    self.visited_states += self.subgame_nodes

  def _prune(self, update_player, weight, observed):
    """An iteration's pass for `update_player` on the whole tree that skips the
    subtrees where its counterfactual reach is 0 (_pruned_pass), and those only
    where the view's player's reach is 0 as well if the pass is `observed` (the
    next-root estimates weigh its values by that reach); after this solver's
    previous pass (nothing else wrote the reach since) it redoes the reach of the
    player updated then only. Equal to `_traverse`'s pass: the same products and
    sums in the same order."""
    tables = self._tables
    walk = tables.walk
    tree = self._view.whole
    self._own_values()
    player = self._view.player
    column = 1 - update_player if tables.reach_owner is self else -1
    kept = player if observed and update_player == player else -1
    first, histories = self._infoset_histories[update_player]
    _pruned_pass(update_player, player, column, kept, self._root_position,
                 self._root_slot, self._root_chance, self._down_lo, self._down_hi,
                 self._up_lo, self._up_hi, self.infosets[update_player], first,
                 histories, tree.infoset_action_offset, tree.infoset_num_actions,
                 walk.down_parent, walk.down_player, walk.down_slot,
                 walk.down_chance_prob, walk.up_node, walk.up_position,
                 walk.up_first_child, walk.up_num_children, walk.up_player,
                 walk.up_slot_offset, walk.up_parent, walk.up_start,
                 walk.chance_prob, self._strategy, tables.reach, tables.values,
                 self._regrets, self._cumulative, weight, self._level_lo,
                 self._level_hi, self._level_arrays())
    tables.reach_owner = self
    self.pruned_passes += 1
    self.visited_states += self.subgame_nodes

  def level_order_keeps_sums(self):
    """Whether a pass level by level (_level_accumulate) adds every regret in the
    post-order's order: each information set on one level, the roots on one depth
    in increasing order (then each level's nodes come in increasing order in the
    post-order too)."""
    roots = self._roots
    depth = self._view.whole.node_depth[roots]
    return bool(self._tables.levels.single_depth and len(roots) and
                depth.min() == depth.max() and np.all(roots[1:] > roots[:-1]))

  @property
  def by_level(self):
    """Whether its pruned passes run bottom-up level by level (_level_accumulate)."""
    return len(self._level_lo) > 0

  def _level_arrays(self):
    levels = self._tables.levels
    return (levels.node, levels.first_child, levels.num_children, levels.player,
            levels.slot)

  def _update_gadget(self, strategy, weight):
    """o's regrets and sums at the gadget's infosets from the roots' values, as
    traversal.accumulate would at the copy's prefix nodes."""
    view = self._view
    if view.variant == "resolve":
      _update_gates(self._values, self._value_roots, view.opponent == 1,
                    self._root_slot,
                    self._terminate(), self._root_chance, strategy, weight,
                    self._regrets, self._cumulative)
    elif view.variant == "max_margin":
      # Summed in the copy's order (its chance nodes', then o's choice's).
      choice_values = np.zeros(len(view.choice_counts))
      np.add.at(choice_values, view.gate, view.root_chance * self.root_values())
      slots = slice(self._base, self._base + len(choice_values))
      top = 0.0
      for probability, value in zip(strategy[slots].tolist(), choice_values.tolist()):
        top += probability * value
      self._regrets[slots] += choice_values - top
      self._cumulative[slots] += weight * strategy[slots]

  def _terminate(self):
    """o's Terminate payoff per active root (resolve)."""
    if getattr(self, "_terminate_value", None) is None:
      view = self._view
      self._terminate_value = np.asarray(view.terminate_value[view.gate],
                                         dtype=np.float64)
    return self._terminate_value

  def _end(self, player, t):
    tree = self._view.whole
    iteration_kernels.end_iteration(self.infosets[player], tree.infoset_action_offset,
                                    tree.infoset_num_actions, self._regrets,
                                    self._strategy, self._params, t)
    if player == self._view.opponent and len(self._gate_ids):
      iteration_kernels.end_iteration(self._gate_ids, self._gate_offsets,
                                      self._gate_counts, self._regrets, self._strategy,
                                      self._params, t)

  def evaluate_and_update_policy(self, observe=None):
    """One CFR+ iteration; `observe` as cfr.GeneralCFRSolver's (reach per whole-tree
    internal position, player 0's values per whole-tree node, at the subgame)."""
    self._iteration += 1
    t = float(self._iteration)
    weight, self._log_weight_scale, rescale = cfr.strategy_weight(
        t, 1.0, self._log_weight_scale)
    if rescale != 1.0:
      self._cumulative *= rescale
    for player in (0, 1):
      if self.prunes_in_place:
        self._prune(player, weight, observe is not None and player == 0)
      else:
        self._traverse(player, self._strategy, weight, self._regrets,
                       self._cumulative)
      if player == self._view.opponent:
        self._update_gadget(self._strategy, weight)
      if observe is not None and player == 0:
        observe(self._reach, self._values)
      self._end(player, t)

  def average_strategy_slots(self, cumulative=None):
    """The average strategy in the view's slot form (uniform where never reached;
    zero outside the subgame and gadget) of `cumulative` (default: this solver's
    sums)."""
    return super().average_strategy_slots(
        self._cumulative if cumulative is None else cumulative)

  def average_at(self, infoset):
    """The average strategy at whole-tree infoset `infoset` (uniform outside)."""
    tree = self._view.whole
    count = int(tree.infoset_num_actions[infoset])
    if not self.inside[infoset]:
      return np.full(count, 1.0 / count)
    offset = int(tree.infoset_action_offset[infoset])
    total = self._cumulative[offset:offset + count]
    s = total.sum()
    return total / s if s > 0 else np.full(count, 1.0 / count)


class SubgameView(copied_view.GadgetView):
  """copied_view.GadgetView solved in place (module docstring); same arguments.
  Raises NestedRoots (a ValueError) when a root lies below another. It has no laid
  out `tree`; `to_copy_slots` maps its strategies onto the copying view's, whose
  exact gadget value, best responses and margins then apply."""

  def __init__(self, tree, state_keys, player, root_nodes, w, opponent_values=None,
               variant="resolve", opponent_reach=None, solver=None):
    if variant is None:
      raise ValueError("variant must be one of resolve, max_margin, unsafe; the whole "
                       "game (variant None) is solved by GadgetView.")
    self._copy = None
    super().__init__(tree, state_keys, player, root_nodes, w, opponent_values,
                     variant, opponent_reach, solver)

  def _build(self, first):
    self._plan(first)

  def _solver(self, deadline=None, reserve=0.0):
    """Its CFR+ (SubgameCFRPlus, packing when that pays before `deadline`)."""
    return SubgameCFRPlus(self, deadline=deadline, reserve=reserve)

  # Its solver: SubgameCFRPlus, or view_sampling.InPlaceSampler (which answers
  # subgame_nodes, own_infosets, _base, _tables, evaluate and average_at from its
  # SubgameStructure).

  @property
  def num_nodes(self):
    """Nodes the view spans: the subgame's and the gadget's prefix."""
    prefix = {"resolve": 1 + 2 * len(self.active_roots),
              "max_margin": 1 + len(self.choice_counts),
              "unsafe": 1}[self.variant]
    return self.solver.subgame_nodes + prefix

  def locate(self, trace):
    j = np.asarray(trace.next_root_of, dtype=np.int64)
    return j, trace.next_roots, self.root_nodes[self.active_roots][j]

  def whole_nodes(self, local_nodes):
    """The view's nodes are the whole tree's."""
    return np.asarray(local_nodes)

  def positions(self, nodes):
    return self.solver.positions(nodes)

  def value_nodes(self, nodes):
    return self.solver.value_nodes(nodes)

  @property
  def utility_sum(self):
    return 0.0

  def evaluate(self, slots, observe, deadline=None):
    """copied_view.GadgetView.evaluate; the pass in place runs whole (`deadline` is
    not checked inside it; a subgame's pass is a fraction of the whole tree's)."""
    del deadline
    self.solver.evaluate(np.asarray(slots, dtype=np.float64), observe)
    return True

  def average_at(self, infoset):
    return self.solver.average_at(infoset)

  def resolved_strategy(self, slots=None):
    slots = self.average_slots() if slots is None else slots
    tree = self.whole
    own = self.solver.own_infosets
    counts = tree.infoset_num_actions[own].astype(np.int64)
    starts = np.repeat(tree.infoset_action_offset[own].astype(np.int64), counts)
    where = starts + (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts,
                                                          counts))
    return where, slots[where]

  def to_copy_slots(self, copy, slots=None):
    """`slots` (default: the average strategy) in the slot form of `copy`, the
    copying GadgetView of the same inputs."""
    slots = self.average_slots() if slots is None else slots
    inner = copy.slot_source >= 0
    out = np.empty(copy.tree.num_infoset_actions)
    out[inner] = slots[copy.slot_source[inner]]
    out[~inner] = slots[self.solver._base + np.flatnonzero(~inner)]  # pylint: disable=protected-access
    return out

  def copy(self):
    """The copying GadgetView of the same inputs (built once, on request)."""
    if self._copy is None:
      self._copy = copied_view.GadgetView(
          self.whole, self.state_keys, self.player, self.root_nodes, self.w,
          dict(zip(self.infoset_keys.tolist(), self.cbv.tolist())), self.variant,
          self.opponent_reach)
    return self._copy

  def laid_out(self):
    """(the copy's CompiledTree, the average strategy in its slot form)."""
    copy = self.copy()
    return copy.tree, self.to_copy_slots(copy)

  def gadget_value(self, slots=None):
    """o's expected gadget payoff (GadgetView.gadget_value, on the copy)."""
    copy = self.copy()
    return copy.gadget_value(self.to_copy_slots(copy, slots))

  def counterfactual_best_response_values(self, slots=None):
    """GadgetView.counterfactual_best_response_values, on the copy."""
    copy = self.copy()
    return copy.counterfactual_best_response_values(self.to_copy_slots(copy, slots))

  def subgame_margin(self, slots=None, before=None):
    """GadgetView.subgame_margin, on the copy."""
    copy = self.copy()
    return copy.subgame_margin(self.to_copy_slots(copy, slots), before)
