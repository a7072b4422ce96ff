"""A full-width CFR pass on several cores, equal bit for bit to traversal.py's serial
pass ([S] §1.3; issue 45).

The subtrees below a split depth are grouped so that no group shares an updated
information set with another; each thread runs traversal's serial kernels (reach,
then values, regrets and sums) on whole groups, so every sum is added by one thread
in the serial order; the levels above the split run on one thread, before and
after. Details: docs/algorithms/cfr.md.
"""

import os

import numba
import numpy as np

from ggp_cr.algorithms.cfr import traversal

# A fork-safe threading layer (tbb if installed, else numba's workqueue) unless
# NUMBA_THREADING_LAYER says otherwise: GNU OpenMP terminates a forked child of a
# process that has used it, and the tournaments fork their workers.
# (numba re-reads its configuration from the environment, so both are set.)
if "NUMBA_THREADING_LAYER" not in os.environ:
  os.environ["NUMBA_THREADING_LAYER"] = "forksafe"
  numba.config.THREADING_LAYER = "forksafe"

# Units (groups of subtrees) a pass is cut into, at most; independent of the thread
# count, so the cut does not depend on it (threads take units heaviest first, in snake order).
NUM_UNITS = 16

# A split is used if its largest group of two (greedy) holds at most this share of
# the subtrees' nodes, and the levels above it at most _MAX_TOP_SHARE of the walk.
_MAX_GROUP_SHARE = 0.56
_MAX_TOP_SHARE = 0.02


def threads_for(threads):
  """The thread count of a solver's passes: `threads` (an int >= 1) as given; None
  is 1. Threads are opt-in: on a 2-core machine shared with another session's jobs
  two threads took 1.25-1.4 times one thread's time (docs/algorithms/cfr.md)."""
  if threads is None:
    return 1
  if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) \
      or threads < 1:
    raise ValueError(f"threads must be None (one) or an integer >= 1, got "
                     f"{threads!r}.")
  if threads > numba.config.NUMBA_NUM_THREADS:
    raise ValueError(f"threads must be at most NUMBA_NUM_THREADS = "
                     f"{numba.config.NUMBA_NUM_THREADS}, got {threads}.")
  return int(threads)


class SplitPlan:
  """A walk's internal nodes cut for one updated player (0, 1, BOTH_PLAYERS or
  NO_PLAYER): unit u's subtrees are the post-order segments seg_lo[j]..seg_hi[j]-1,
  j in unit_ptr[u]..unit_ptr[u+1]-1 (increasing), whose internal positions at depth
  split_depth + l are level_lo[j, l]..level_hi[j, l]-1; `top_node` is the walk's
  up_node at the entries above the split (in post-order). `arrays` is what
  iteration_kernels.walk_pass reads: (unit_ptr, seg_lo, seg_hi, level_lo, level_hi), the walk's
  up_* arrays (node, position, first child, child count, player, slot offset) at the
  entries above the split, and the updated information sets (`infosets`) by unit,
  unit u's infoset_ptr[u]..infoset_ptr[u+1]-1 of `unit_infosets`, and those of no
  unit (`top_infosets`: above the split or not in the walk), whose end-of-iteration
  step the threads and then the main thread run. `units` is False if no split depth
  qualified (serial passes)."""

  def __init__(self, walk, depth, update_player, entry_infoset, infosets):
    sizes = _subtree_sizes(walk.up_node, walk.up_first_child, walk.up_num_children,
                           walk.num_nodes)
    self.units = False
    above = np.cumsum(np.bincount(depth)) if len(depth) else np.zeros(1, np.int64)
    for split in range(1, len(above)):
      if above[split - 1] > _MAX_TOP_SHARE * len(depth):
        break  # deeper splits leave even more above them
      found = _split_at(split, update_player, depth, sizes, walk.up_player,
                        walk.up_slot_offset, _MAX_GROUP_SHARE, _MAX_TOP_SHARE,
                        NUM_UNITS)
      if found is not None:
        self.units = True
        self.split_depth = split
        self.unit_ptr, self.seg_lo, self.seg_hi, top = found
        self.top_node = walk.up_node[top]
        self.level_lo, self.level_hi = _level_ranges(
            self.seg_lo, self.seg_hi, walk.up_position, depth, split, int(depth.max()))
        unit_of = _infoset_units(self.unit_ptr, self.seg_lo, self.seg_hi,
                                 update_player, walk.up_player, entry_infoset,
                                 max(int(entry_infoset.max(initial=-1)),
                                     int(infosets.max(initial=-1))) + 1)[infosets]
        in_unit = np.flatnonzero(unit_of >= 0)
        by_unit = in_unit[np.argsort(unit_of[in_unit], kind="stable")]
        infoset_ptr = np.searchsorted(unit_of[by_unit],
                                      np.arange(len(self.unit_ptr))).astype(np.int64)
        self.arrays = (self.unit_ptr, self.seg_lo, self.seg_hi, self.level_lo,
                       self.level_hi, self.top_node, walk.up_position[top],
                       walk.up_first_child[top], walk.up_num_children[top],
                       walk.up_player[top], walk.up_slot_offset[top], infoset_ptr,
                       infosets[by_unit], infosets[unit_of < 0])
        return


@numba.njit(cache=True)
def _infoset_units(unit_ptr, seg_lo, seg_hi, update_player, up_player, entry_infoset,
                   size):
  """Per information set (index < size), the unit holding its updated histories, or
  -1 (none below the split: a split's units share no updated information set)."""
  unit_of = np.full(size, -1, dtype=np.int64)
  for u in range(len(unit_ptr) - 1):
    for j in range(unit_ptr[u], unit_ptr[u + 1]):
      for i in range(seg_lo[j], seg_hi[j]):
        q = up_player[i]
        if q >= 0 and (update_player == traversal.BOTH_PLAYERS or q == update_player):
          unit_of[entry_infoset[i]] = u
  return unit_of


@numba.njit(cache=True)
def _subtree_sizes(up_node, up_first_child, up_num_children, num_nodes):
  """Per post-order entry, its subtree's internal node count (children first)."""
  entry_of = np.full(num_nodes, -1, dtype=np.int32)
  sizes = np.empty(len(up_first_child), dtype=np.int32)
  for i in range(len(up_first_child)):
    entry_of[up_node[i]] = i
    size = 1
    first = up_first_child[i]
    for c in range(first, first + up_num_children[i]):
      j = entry_of[c]
      if j >= 0:
        size += sizes[j]
    sizes[i] = size
  return sizes


def _split_at(split, update_player, depth, sizes, up_player, up_slot_offset,
              max_group_share, max_top_share, num_units):
  """(unit_ptr, seg_lo, seg_hi, top entries) of the split at `split`, or None."""
  result = _components(split, update_player, depth, sizes, up_player, up_slot_offset)
  if result is None:
    return None
  seg_lo, seg_hi, component, top = result
  total = len(depth)
  if len(top) > max_top_share * total or len(seg_lo) == 0:
    return None
  weights = np.bincount(component, weights=seg_hi - seg_lo)
  order = np.argsort(-weights, kind="stable")
  bins = np.zeros(2)
  units = np.zeros(num_units)
  unit_of = np.empty(len(weights), dtype=np.int64)
  for c in order:  # greedy: the heaviest group first, into the lightest bin
    bins[np.argmin(bins)] += weights[c]
    unit_of[c] = np.argmin(units)
    units[unit_of[c]] += weights[c]
  if bins.max() > max_group_share * bins.sum():
    return None
  rank = np.empty(num_units, dtype=np.int64)
  rank[np.argsort(-units, kind="stable")] = np.arange(num_units)
  unit_of = rank[unit_of]  # units numbered heaviest first
  seg_unit = unit_of[component]
  by_unit = np.argsort(seg_unit, kind="stable")  # segments stay increasing per unit
  unit_ptr = np.searchsorted(seg_unit[by_unit], np.arange(num_units + 1)).astype(np.int64)
  return unit_ptr, seg_lo[by_unit], seg_hi[by_unit], top


def _components(split, update_player, depth, sizes, up_player, up_slot_offset):
  """The post-order segments of the subtrees at depth `split`, each's group (joined
  by the updated player's information sets) and the entries above; None if an
  updated information set has histories both above and below the split."""
  segment_end = np.flatnonzero(depth == split)
  seg_hi = (segment_end + 1).astype(np.int64)
  seg_lo = seg_hi - sizes[segment_end]
  top = np.flatnonzero(depth < split).astype(np.int64)
  component = _join(seg_lo, seg_hi, top, update_player, up_player, up_slot_offset)
  if component is None:
    return None
  return seg_lo, seg_hi, component, top


@numba.njit(cache=True)
def _join(seg_lo, seg_hi, top, update_player, up_player, up_slot_offset):
  """Union-find of the segments over the updated players' information sets (keyed by
  slot offset); the groups numbered 0.. by first segment; None if an information set
  is both above and below the split."""
  num_segments = len(seg_lo)
  parent = np.arange(num_segments)
  key_size = 1
  for i in range(len(up_slot_offset)):
    key_size = max(key_size, up_slot_offset[i] + 1)
  first_segment = np.full(key_size, -1, dtype=np.int64)
  above = np.zeros(key_size, dtype=np.bool_)
  for i in top:
    q = up_player[i]
    if q >= 0 and (update_player == traversal.BOTH_PLAYERS or q == update_player):
      above[up_slot_offset[i]] = True
  for s in range(num_segments):
    for i in range(seg_lo[s], seg_hi[s]):
      q = up_player[i]
      if q < 0 or not (update_player == traversal.BOTH_PLAYERS or q == update_player):
        continue
      key = up_slot_offset[i]
      if above[key]:
        return None
      other = first_segment[key]
      if other < 0:
        first_segment[key] = s
        continue
      a = s
      while parent[a] != a:
        a = parent[a]
      b = other
      while parent[b] != b:
        b = parent[b]
      if a != b:
        parent[max(a, b)] = min(a, b)
  component = np.empty(num_segments, dtype=np.int64)
  number = np.full(num_segments, -1, dtype=np.int64)
  count = 0
  for s in range(num_segments):
    a = s
    while parent[a] != a:
      a = parent[a]
    parent[s] = a
    if number[a] < 0:
      number[a] = count
      count += 1
    component[s] = number[a]
  return component


class PassPlans:
  """The split arrays of one walk (SplitPlan.arrays, or the walk's empty ones if no
  split qualified), made on first use per updated player."""

  def __init__(self, walk, tree):
    tree_node = walk.up_node if walk.tree_node is None else \
        walk.tree_node[walk.up_node]
    self._walk = walk
    self._tree = tree
    self._depth = tree.node_depth[tree_node].astype(np.int64)
    self._entry_infoset = tree.node_infoset[tree_node]
    self._splits = {}

  def split(self, update_player):
    """The SplitPlan of `update_player`."""
    if update_player not in self._splits:
      tree = self._tree
      infosets = (np.arange(tree.num_infosets, dtype=np.int32)
                  if update_player == traversal.BOTH_PLAYERS else
                  np.flatnonzero(tree.infoset_player == update_player).astype(np.int32))
      self._splits[update_player] = SplitPlan(self._walk, self._depth, update_player,
                                              self._entry_infoset, infosets)
    return self._splits[update_player]

  def arrays(self, update_player):
    """The split arrays of `update_player` for iteration_kernels.walk_pass (no units:
    serial)."""
    plan = self.split(update_player)
    return plan.arrays if plan.units else serial_split(self._walk)


def serial_split(walk):
  """iteration_kernels.walk_pass's split arrays of no units (a serial pass), typed as
  a split's."""
  empty = np.zeros(0, dtype=np.int64)
  levels = np.zeros((0, 1), dtype=np.int64)
  no_infosets = np.zeros(0, dtype=np.int32)
  return (np.zeros(1, dtype=np.int64), empty, empty, levels, levels,
          walk.up_node[:0], walk.up_position[:0], walk.up_first_child[:0],
          walk.up_num_children[:0], walk.up_player[:0], walk.up_slot_offset[:0],
          np.zeros(1, dtype=np.int64), no_infosets, no_infosets)


def plans_for(walk, tree):
  """The walk's PassPlans (kept on the walk, which solvers on one tree share)."""
  plans = getattr(walk, "pass_plans", None)
  if plans is None:
    plans = PassPlans(walk, tree)
    walk.pass_plans = plans
  return plans


@numba.njit(cache=True)
def _level_ranges(seg_lo, seg_hi, up_position, depth, split, max_depth):
  """Per segment and depth split.., the range of its internal positions (a subtree's
  nodes at one depth are contiguous in breadth-first order)."""
  lo = np.full((len(seg_lo), max_depth - split + 1), np.iinfo(np.int64).max)
  hi = np.zeros((len(seg_lo), max_depth - split + 1), dtype=np.int64)
  count = np.zeros((len(seg_lo), max_depth - split + 1), dtype=np.int64)
  for j in range(len(seg_lo)):
    for i in range(seg_lo[j], seg_hi[j]):
      level = depth[i] - split
      lo[j, level] = min(lo[j, level], up_position[i])
      hi[j, level] = max(hi[j, level], up_position[i] + 1)
      count[j, level] += 1
  for j in range(len(seg_lo)):
    for level in range(max_depth - split + 1):
      if count[j, level] == 0:
        lo[j, level] = 0
      elif hi[j, level] - lo[j, level] != count[j, level]:
        raise ValueError("A subtree's positions at one depth are not contiguous.")
  return lo, hi


@numba.njit(cache=True)
def worker_units(worker, workers, num_units):
  """The units (heaviest first) worker `worker` of `workers` takes: snake order,
  w, 2 W - 1 - w, 2 W + w, ..."""
  units = []
  for u in range(num_units):
    lap, rank = divmod(u, workers)
    if (rank if lap % 2 == 0 else workers - 1 - rank) == worker:
      units.append(u)
  return units


@numba.njit(cache=True)
def thread_units(worker, workers, split, update_player, down_parent, down_player,
                  down_slot, down_chance_prob, up_node, up_position, up_first_child,
                  up_num_children, up_player, up_slot_offset, chance_prob, strategy,
                  reach, values, regrets, cumulative, strategy_weight, visit_decay,
                  clip_per_history, chance_weighted):
  """Thread `worker`'s part of iteration_kernels.split_pass: unit by unit (worker_units), each
  subtree's reach (level by level) and its accumulate (the unit's subtrees in
  post-order). A function of its own, not the parallel loop's body: compiled so,
  the pass ran 3-5% faster (IIGS{6})."""
  unit_ptr, seg_lo, seg_hi, level_lo, level_hi = (split[0], split[1], split[2],
                                                  split[3], split[4])
  for u in worker_units(worker, workers, len(unit_ptr) - 1):
    for j in range(unit_ptr[u], unit_ptr[u + 1]):
      for level in range(level_lo.shape[1]):
        traversal.propagate_positions(level_lo[j, level], level_hi[j, level],
                                      down_parent, down_player, down_slot,
                                      down_chance_prob, strategy, reach)
      traversal.accumulate(update_player, seg_lo[j], seg_hi[j], up_node, up_position,
                           up_first_child, up_num_children, up_player, up_slot_offset,
                           chance_prob, strategy, reach, values, regrets, cumulative,
                           strategy_weight, visit_decay, clip_per_history,
                           chance_weighted)
