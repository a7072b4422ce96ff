"""A whole-tree walk's bottom-up entries regrouped by height and kind (player, action
count), for a bottom-up pass with unrolled loops whose sums are `traversal.accumulate`'s
bit for bit (docs/algorithms/cfr.md, "Grouped bottom-up pass")."""

import numba
import numpy as np


class GroupedEntries:
  """`walk`'s internal nodes in the grouped order: by height (an entry's children
  come before it), then kind, each information set's histories in their post-order
  order, so every regret and sum adds the same numbers in the same order. If some
  information set's histories would change order (histories of one information set at
  different heights), the post-order is kept, cut into runs of one kind.

  `segment_start[s]:segment_start[s + 1]` are the entries of segment s, all of
  player `segment_player[s]` (< 0: chance) and `segment_count[s]` children; `node`,
  `position`, `first_child`, `slot_offset` are the walk's up_* arrays in this order.
  """

  def __init__(self, walk):
    order = np.arange(len(walk.up_node), dtype=np.int64)
    height = _heights(walk.up_parent)
    grouped = np.lexsort((order, walk.up_num_children, walk.up_player, height))
    self.reordered = _keeps_infoset_order(grouped, walk.up_player, walk.up_slot_offset)
    if self.reordered:
      order = grouped
    player = walk.up_player[order]
    count = walk.up_num_children[order]
    kind_changes = np.flatnonzero((player[1:] != player[:-1]) | (count[1:] != count[:-1]))
    self.segment_start = np.concatenate(
        ([0], kind_changes + 1, [len(order)])).astype(np.int64)
    self.segment_player = player[self.segment_start[:-1]].astype(np.int64)
    self.segment_count = count[self.segment_start[:-1]].astype(np.int64)
    # Unsigned: numba then indexes without testing for a negative index (a wrap
    # around): the values of leduc_poker's 2-action histories 1.9x faster.
    self.node = walk.up_node[order].astype(np.uint64)
    self.position = walk.up_position[order].astype(np.uint64)
    self.first_child = walk.up_first_child[order].astype(np.uint64)
    self.slot_offset = np.maximum(walk.up_slot_offset[order], 0).astype(np.uint64)

  def arrays(self):
    """The kernel's tuple (accumulate_grouped's `grouped`)."""
    return (self.segment_start, self.segment_player, self.segment_count, self.node,
            self.position, self.first_child, self.slot_offset)


def unsigned(indices):
  """`indices` (>= 0 where used; -1 marks none) as uint64, which numba indexes
  without testing for a negative index."""
  return np.maximum(indices, 0).astype(np.uint64)


def empty_arrays():
  """An `arrays()` tuple of no entries (for a kernel call that does not use it)."""
  none = np.zeros(0, dtype=np.uint64)
  return (np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64),
          np.zeros(0, dtype=np.int64), none, none, none, none)


@numba.njit(cache=True)
def _heights(up_parent):
  """Each post-order entry's height: 0 if all its children are leaves, else one more
  than its highest internal child's (children come before parents)."""
  height = np.zeros(len(up_parent), dtype=np.int64)
  for i in range(len(up_parent)):
    parent = up_parent[i]
    if parent >= 0 and height[parent] < height[i] + 1:
      height[parent] = height[i] + 1
  return height


def _keeps_infoset_order(order, up_player, up_slot_offset):
  """True if, along `order`, each information set's histories (decision entries of
  one slot offset) keep their increasing post-order entries."""
  entries = order[up_player[order] >= 0]
  slots = up_slot_offset[entries]
  by_slot = np.argsort(slots, kind="stable")
  same = slots[by_slot][1:] == slots[by_slot][:-1]
  return not np.any(same & (entries[by_slot][1:] < entries[by_slot][:-1]))


@numba.njit(cache=True)
def accumulate_grouped(update_player, grouped, chance_prob, strategy, reach, values,
                       regrets, cumulative, strategy_weight):
  """`traversal.accumulate` of the whole walk (visit_decay 1, no clipping, not
  chance-weighted) over GroupedEntries.arrays() `grouped`: the same values, and the
  same regret and sum increments added in the same order, with each segment's loops
  unrolled for 2 and 3 actions. update_player: 0, 1 or traversal.BOTH_PLAYERS (-1)."""
  start, seg_player, seg_count, node, position, first_child, slot_offset = grouped
  for s in range(len(seg_player)):
    q = seg_player[s]
    count = seg_count[s]
    lo = start[s]
    hi = start[s + 1]
    if q < 0:
      for i in range(lo, hi):
        first = np.int64(first_child[i])
        value = 0.0
        for c in range(first, first + count):
          value += chance_prob[c] * values[c]
        values[node[i]] = value
    elif update_player >= 0 and q != update_player:
      _values_only(lo, hi, count, node, first_child, slot_offset, strategy, values)
    elif count == 2:
      _update_2(lo, hi, q, node, position, first_child, slot_offset, strategy, reach,
                values, regrets, cumulative, strategy_weight)
    elif count == 3:
      _update_3(lo, hi, q, node, position, first_child, slot_offset, strategy, reach,
                values, regrets, cumulative, strategy_weight)
    else:
      _update_any(lo, hi, q, count, node, position, first_child, slot_offset,
                  strategy, reach, values, regrets, cumulative, strategy_weight)


@numba.njit(cache=True)
def _values_only(lo, hi, count, node, first_child, slot_offset, strategy, values):
  """Values of entries lo..hi-1 of a player not updated, `count` actions each (the
  first product is added to 0.0, as accumulate's sum starts: the same bits)."""
  one, two = np.uint64(1), np.uint64(2)  # unsigned offsets keep indices unsigned
  if count == 2:
    for i in range(lo, hi):
      f = first_child[i]
      o = slot_offset[i]
      value = 0.0 + strategy[o] * values[f]
      values[node[i]] = value + strategy[o + one] * values[f + one]
  elif count == 3:
    for i in range(lo, hi):
      f = first_child[i]
      o = slot_offset[i]
      value = 0.0 + strategy[o] * values[f]
      value += strategy[o + one] * values[f + one]
      values[node[i]] = value + strategy[o + two] * values[f + two]
  else:
    for i in range(lo, hi):
      f = np.int64(first_child[i])
      o = np.int64(slot_offset[i])
      value = 0.0
      for a in range(count):
        value += strategy[o + a] * values[f + a]
      values[node[i]] = value


@numba.njit(cache=True)
def _update_2(lo, hi, q, node, position, first_child, slot_offset, strategy, reach,
              values, regrets, cumulative, strategy_weight):
  """Entries lo..hi-1 of updated player q, 2 actions: value, regrets, sums."""
  other = 1 - q
  one = np.uint64(1)
  for i in range(lo, hi):
    f = first_child[i]
    o = slot_offset[i]
    o1 = o + one
    k = position[i]
    s0 = strategy[o]
    s1 = strategy[o1]
    v0 = values[f]
    v1 = values[f + one]
    value = 0.0 + s0 * v0
    value += s1 * v1
    values[node[i]] = value
    counterfactual = reach[k, other] * reach[k, 2]
    if q == 0:
      regrets[o] += counterfactual * (v0 - value)
      regrets[o1] += counterfactual * (v1 - value)
    else:
      regrets[o] += counterfactual * (value - v0)
      regrets[o1] += counterfactual * (value - v1)
    own = strategy_weight * reach[k, q]
    cumulative[o] += own * s0
    cumulative[o1] += own * s1


@numba.njit(cache=True)
def _update_3(lo, hi, q, node, position, first_child, slot_offset, strategy, reach,
              values, regrets, cumulative, strategy_weight):
  """Entries lo..hi-1 of updated player q, 3 actions: value, regrets, sums."""
  other = 1 - q
  one, two = np.uint64(1), np.uint64(2)
  for i in range(lo, hi):
    f = first_child[i]
    o = slot_offset[i]
    o1 = o + one
    o2 = o + two
    k = position[i]
    s0 = strategy[o]
    s1 = strategy[o1]
    s2 = strategy[o2]
    v0 = values[f]
    v1 = values[f + one]
    v2 = values[f + two]
    value = 0.0 + s0 * v0
    value += s1 * v1
    value += s2 * v2
    values[node[i]] = value
    counterfactual = reach[k, other] * reach[k, 2]
    if q == 0:
      regrets[o] += counterfactual * (v0 - value)
      regrets[o1] += counterfactual * (v1 - value)
      regrets[o2] += counterfactual * (v2 - value)
    else:
      regrets[o] += counterfactual * (value - v0)
      regrets[o1] += counterfactual * (value - v1)
      regrets[o2] += counterfactual * (value - v2)
    own = strategy_weight * reach[k, q]
    cumulative[o] += own * s0
    cumulative[o1] += own * s1
    cumulative[o2] += own * s2


@numba.njit(cache=True)
def _update_any(lo, hi, q, count, node, position, first_child, slot_offset, strategy,
                reach, values, regrets, cumulative, strategy_weight):
  """Entries lo..hi-1 of updated player q, `count` actions: value, regrets, sums."""
  other = 1 - q
  for i in range(lo, hi):
    f = np.int64(first_child[i])
    o = np.int64(slot_offset[i])
    k = position[i]
    value = 0.0
    for a in range(count):
      value += strategy[o + a] * values[f + a]
    values[node[i]] = value
    counterfactual = reach[k, other] * reach[k, 2]
    if q == 0:
      for a in range(count):
        regrets[o + a] += counterfactual * (values[f + a] - value)
    else:
      for a in range(count):
        regrets[o + a] += counterfactual * (value - values[f + a])
    own = strategy_weight * reach[k, q]
    for a in range(count):
      cumulative[o + a] += own * strategy[o + a]
