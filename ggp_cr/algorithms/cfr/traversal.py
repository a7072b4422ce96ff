"""The compiled tree laid out for full-width CFR passes ([S] §1.3; cfr.py).

`TraversalTree` streams the tree's internal nodes: top-down in breadth-first order
(`propagate_positions`, reach probabilities) and bottom-up in depth-first post-order
(`accumulate`, values, regrets and cumulative strategies). A subtree's internal
nodes are one contiguous segment of the post-order, and its nodes at each depth one
contiguous range of the breadth-first order, so the kernels also run on parts of the
tree (continual resolving's subgame_cfr).
"""

import numba
import numpy as np

from ggp_cr.algorithms.tree import flat_tree

# accumulate's update_player that updates both players.
BOTH_PLAYERS = -1
NO_PLAYER = -2  # accumulate: values only, no player's tables updated


@numba.njit(cache=True, inline="always")
def unsigned_index(i):
  """i (>= 0) as an unsigned index: numba indexes an array with a signed integer
  only after testing it for a wrap-around (a negative index), which keeps the
  kernels' loops from being compiled tight; liars_dice's reach column 2.6x faster
  (docs/benchmarks.md note 11). Never pass a negative number."""
  return np.uint64(i)


_index = unsigned_index


class TraversalTree:
  """The part of the compiled tree one CFR iteration walks, laid out for streaming.

  Without a depth limit this is the whole tree. With one, histories deeper than the
  limit that the estimator may evaluate become leaves (`leaf_nodes`, valued by the
  estimator) and everything below them is dropped; breadth-first order and contiguous
  children survive the filtering. `tree_node` maps each node here to the tree's node.

  Only internal (chance and decision) nodes need reach probabilities, so they get
  compact positions 0..K-1 in breadth-first order. The top-down pass reads per
  position (after the root) its parent's position, the parent's player, the slot of
  the action taken (decision parents) and the chance probability (chance parents);
  the bottom-up pass reads per internal node, in depth-first post-order, its node,
  position, first child, child count, player and slot offset. Both read their arrays
  front to back.
  """

  def __init__(self, tree, depth_limit, estimable):
    is_leaf = np.zeros(tree.num_nodes, dtype=bool)
    if depth_limit is not None:
      is_leaf = ((tree.node_depth > depth_limit) & (tree.node_num_children > 0))
      if estimable is not None:
        is_leaf &= estimable
    if is_leaf.any():
      keep = np.ones(tree.num_nodes, dtype=bool)
      _mark_kept(tree.node_parent, is_leaf, keep)
      self.tree_node = np.flatnonzero(keep).astype(np.int32)
      new_index = np.full(tree.num_nodes, -1, dtype=np.int32)
      new_index[self.tree_node] = np.arange(len(self.tree_node), dtype=np.int32)
      old_parent = tree.node_parent[self.tree_node]
      parent = np.where(old_parent >= 0, new_index[np.maximum(old_parent, 0)],
                        -1).astype(np.int32)
      leaf_here = is_leaf[self.tree_node]
      num_children = np.where(leaf_here, 0, tree.node_num_children[self.tree_node])
      num_children = num_children.astype(np.int16)
      first_child = np.where(num_children > 0,
                             new_index[tree.node_first_child[self.tree_node]],
                             0).astype(np.int32)
      player = tree.node_player[self.tree_node]
      infoset = tree.node_infoset[self.tree_node]
      self.chance_prob = tree.node_chance_prob[self.tree_node]
      self.utility = tree.node_utility[self.tree_node]
      self.leaf_nodes = np.flatnonzero(leaf_here).astype(np.int32)
      self.leaf_tree_nodes = self.tree_node[self.leaf_nodes]
    else:
      self.tree_node = None
      parent = tree.node_parent
      num_children = tree.node_num_children
      first_child = tree.node_first_child
      player = tree.node_player
      infoset = tree.node_infoset
      self.chance_prob = tree.node_chance_prob
      self.utility = tree.node_utility
      self.leaf_nodes = np.zeros(0, dtype=np.int32)
      self.leaf_tree_nodes = self.leaf_nodes
    self.num_nodes = len(player)
    slot_offset = np.where(player >= 0, tree.infoset_action_offset[np.maximum(infoset, 0)],
                           -1).astype(np.int32)

    internal = np.flatnonzero(num_children > 0).astype(np.int32)
    position = np.full(self.num_nodes, -1, dtype=np.int32)
    position[internal] = np.arange(len(internal), dtype=np.int32)
    self.num_internal = len(internal)
    below_root = internal[1:]
    parents = parent[below_root]
    self.down_parent = position[parents]
    self.down_player = player[parents]
    self.down_slot = np.where(self.down_player >= 0,
                              slot_offset[parents] + (below_root - first_child[parents]),
                              -1).astype(np.int32)
    self.down_chance_prob = self.chance_prob[below_root]

    postorder = _internal_postorder(first_child, num_children, tree.max_depth + 1)
    self.up_node = postorder
    self.up_position = position[postorder]
    self.up_first_child = first_child[postorder]
    self.up_num_children = num_children[postorder]
    self.up_player = player[postorder]
    self.up_slot_offset = slot_offset[postorder]
    # accumulate_pruned's: each entry's parent entry (-1 at the root) and where its
    # subtree starts.
    entry = np.full(self.num_nodes, -1, dtype=np.int32)
    entry[postorder] = np.arange(len(postorder), dtype=np.int32)
    self.up_parent = np.where(postorder > 0, entry[parent[postorder]],
                              -1).astype(np.int32)
    self.up_start = _subtree_starts(self.up_parent)
    self._player_sums = None

  @property
  def player_sums(self):
    """add_sums' arrays: each player's histories in post-order (position, slot
    offset, action count); made when first asked (the whole-tree solver's pruned
    batches), as continual resolving's passes never read them (7.7 B a history)."""
    if self._player_sums is None:
      entries = [np.flatnonzero(self.up_player == p) for p in (0, 1)]
      self._player_sums = [(self.up_position[e], self.up_slot_offset[e],
                            self.up_num_children[e]) for e in entries]
    return self._player_sums

  def __deepcopy__(self, memo):
    """Shared, not copied: it is read-only, and a copy of a solver (a continual-
    resolving bot's clone) walks the same tree (IIGoofspiel{6}'s whole-tree walk is
    40 B a history; docs/reproductions.md)."""
    return self


# Trees smaller than this are laid out afresh for each solver (milliseconds), so that
# the many small gadget copies of a match do not push a large tree's layout (seconds
# to rebuild) out of the memo.
_SHARED_WALK_NODES = 200_000


def whole_tree_walk(tree):
  """The TraversalTree of all of `tree` (read-only), shared by every solver on the
  same tree object if the tree has at least _SHARED_WALK_NODES nodes (the last 2
  such trees' are kept)."""
  if tree.num_nodes < _SHARED_WALK_NODES:
    return TraversalTree(tree, None, None)
  return flat_tree.per_tree("whole_tree_walk", tree,
                            lambda t: TraversalTree(t, None, None))


@numba.njit(cache=True)
def _mark_kept(parent, is_leaf, keep):
  """keep[n] = False below any leaf (nodes are breadth-first: parents come first)."""
  for n in range(1, len(parent)):
    p = parent[n]
    keep[n] = keep[p] and not is_leaf[p]


@numba.njit(cache=True)
def _internal_postorder(first_child, num_children, max_stack):
  """Internal nodes in depth-first post-order (children in order, before parents).

  Accumulating regrets in this order adds each information set's histories in the
  order of a recursive CFR, as OpenSpiel's solvers do, so that floating-point sums
  (and hence whole runs) agree with theirs. Within one depth the order is increasing
  in the breadth-first numbering, so the walk streams through each level.
  """
  num_internal = 0
  for n in range(len(num_children)):
    if num_children[n] > 0:
      num_internal += 1
  order = np.empty(num_internal, dtype=np.int32)
  if num_internal == 0:
    return order
  stack_node = np.empty(max_stack, dtype=np.int32)
  stack_next = np.empty(max_stack, dtype=np.int32)
  top = 0
  stack_node[0] = 0
  stack_next[0] = 0
  filled = 0
  while top >= 0:
    n = stack_node[top]
    k = stack_next[top]
    if k < num_children[n]:
      stack_next[top] = k + 1
      child = first_child[n] + k
      if num_children[child] > 0:
        top += 1
        stack_node[top] = child
        stack_next[top] = 0
    else:
      order[filled] = n
      filled += 1
      top -= 1
  return order


@numba.njit(cache=True)
def propagate_reach(down_parent, down_player, down_slot, down_chance_prob, strategy,
                     reach):
  """reach[k] = (pi_0, pi_1, pi_chance) of internal position k, top-down."""
  reach[0, 0] = 1.0
  reach[0, 1] = 1.0
  reach[0, 2] = 1.0
  propagate_positions(1, len(down_parent) + 1, down_parent, down_player, down_slot,
                       down_chance_prob, strategy, reach)


@numba.njit(cache=True)
def propagate_positions(start, stop, down_parent, down_player, down_slot,
                         down_chance_prob, strategy, reach):
  """reach of internal positions start..stop-1 (> 0) from their parents' reach."""
  for k in range(start, stop):
    i = _index(k - 1)
    p = _index(down_parent[i])
    r0 = reach[p, 0]
    r1 = reach[p, 1]
    rc = reach[p, 2]
    q = down_player[i]
    if q == 0:
      r0 *= strategy[_index(down_slot[i])]
    elif q == 1:
      r1 *= strategy[_index(down_slot[i])]
    else:
      rc *= down_chance_prob[i]
    row = _index(k)
    reach[row, 0] = r0
    reach[row, 1] = r1
    reach[row, 2] = rc


@numba.njit(cache=True)
def propagate_column(column, start, stop, down_parent, down_player, down_slot,
                     strategy, reach):
  """reach[k, column] of internal positions start..stop-1 (> 0) from their parents',
  top-down: after an end-of-iteration step changed only player `column`'s strategy,
  its column is the only one to redo (the same products as propagate_positions')."""
  c = _index(column)
  for k in range(start, stop):
    i = _index(k - 1)
    r = reach[_index(down_parent[i]), c]
    if down_player[i] == column:
      r *= strategy[_index(down_slot[i])]
    reach[_index(k), c] = r


@numba.njit(cache=True)
def accumulate(update_player, start, stop, up_node, up_position, up_first_child,
               up_num_children, up_player, up_slot_offset, chance_prob, strategy, reach,
               values, regrets, cumulative, strategy_weight, visit_decay,
               clip_per_history, chance_weighted):
  """Values bottom-up (player 0's utility) and the updated players' regrets and sums,
  over post-order entries start..stop-1 (a subtree's internal nodes are contiguous
  in post-order).

  `values` holds the leaves' utilities on entry; internal nodes are overwritten. Each
  of an updated player's histories sets s_I = visit_decay * s_I + strategy_weight *
  pi_i(h) [* pi_c(h) if chance_weighted] * sigma_I (visit_decay 1 is the plain sum);
  with `clip_per_history` a negative regret is set to 0 after each history's
  increment (CFRPlayground's RM+) instead of once per iteration.
  """
  for entry in range(start, stop):
    i = _index(entry)
    n = _index(up_node[i])
    first = _index(up_first_child[i])
    count = _index(up_num_children[i])
    q = up_player[i]
    value = 0.0
    if q < 0:
      for c in range(first, first + count):
        value += chance_prob[c] * values[c]
      values[n] = value
      continue
    offset = _index(up_slot_offset[i])
    for a in range(count):
      value += strategy[offset + a] * values[first + a]
    values[n] = value
    if update_player != BOTH_PLAYERS and update_player != q:
      continue
    k = _index(up_position[i])
    if q == 0:
      counterfactual = reach[k, 1] * reach[k, 2]
      for a in range(count):
        regrets[offset + a] += counterfactual * (values[first + a] - value)
      own = strategy_weight * reach[k, 0]
    else:
      counterfactual = reach[k, 0] * reach[k, 2]
      for a in range(count):
        regrets[offset + a] += counterfactual * (value - values[first + a])
      own = strategy_weight * reach[k, 1]
    if clip_per_history:
      for a in range(count):
        if regrets[offset + a] < 0.0:
          regrets[offset + a] = 0.0
    if chance_weighted:
      own *= reach[k, 2]
    for a in range(count):
      cumulative[offset + a] = visit_decay * cumulative[offset + a] + \
          own * strategy[offset + a]


@numba.njit(cache=True)
def add_sums(update_player, positions, slot_offsets, counts, strategy, reach,
             cumulative, strategy_weight):
  """s_I += strategy_weight * pi_i(h) * sigma_I over player i's histories h given by
  their `positions`, `slot_offsets` and action `counts` (TraversalTree.player_sums:
  post-order, the order of `accumulate`'s sums), skipping those of pi_i(h) = 0
  (adding 0.0 leaves a sum unchanged): accumulate_pruned's sums, in arrays of their
  own (liars_dice 0.10 -> 0.07 ms a pass against reading them through the post-order
  entries)."""
  own_column = _index(update_player)
  for h in range(len(positions)):
    own = strategy_weight * reach[_index(positions[h]), own_column]
    if own != 0.0:
      offset = _index(slot_offsets[h])
      for a in range(offset, offset + _index(counts[h])):
        cumulative[a] += own * strategy[a]


@numba.njit(cache=True)
def accumulate_pruned(update_player, start, stop, up_node, up_position,
                      up_first_child, up_num_children, up_player, up_slot_offset,
                      up_parent, up_start, chance_prob, strategy, reach, values,
                      regrets, kept):
  """`accumulate` over post-order entries start..stop-1 (whole subtrees: the whole
  tree, or a subgame's segment) for one updated player i (visit_decay 1, no
  clipping, not chance-weighted) that skips every subtree whose counterfactual reach
  pi_-i is 0: its values are left stale (finite on entry: they are weighed by 0),
  and its regret increments would be 0 while its parent weighs its value by 0 (an
  opponent's action of probability 0) or is skipped too. With `kept` a player (else
  -1) a subtree is skipped only if pi_kept pi_c is 0 there as well (an observer reads
  values weighed by that reach). The sums s_I are left to `add_sums` (which reads
  nothing this writes). Regrets, and with add_sums the sums, come out as
  `accumulate`'s: the same numbers added in the same order.

  pi_-i(h) = 0 holds below any such h, and fails above any h where it fails, so a
  skipped subtree is found at its first post-order entry j by walking up from
  there while the parent (inside the range) has its subtree start at j
  (`up_start`) and is unreached. The value and regret lines repeat `accumulate`'s
  on purpose: with them in shared njit helpers (inlined or not) a leduc_poker pass
  took 2x as long.
  """
  other = _index(1 - update_player)
  kept_column = _index(max(kept, 0))  # read only if kept >= 0
  j = start
  while j < stop:
    k = _index(up_position[_index(j)])
    if reach[k, other] * reach[k, 2] == 0.0 and (
        kept < 0 or reach[k, kept_column] * reach[k, 2] == 0.0):
      top = j
      parent = up_parent[_index(top)]
      while 0 <= parent < stop and up_start[_index(parent)] == j:
        kp = _index(up_position[_index(parent)])
        if reach[kp, other] * reach[kp, 2] != 0.0 or (
            kept >= 0 and reach[kp, kept_column] * reach[kp, 2] != 0.0):
          break
        top = parent
        parent = up_parent[_index(top)]
      j = top + 1
      continue
    first = _index(up_first_child[_index(j)])
    count = _index(up_num_children[_index(j)])
    q = up_player[_index(j)]
    value = 0.0
    if q < 0:
      for c in range(first, first + count):
        value += chance_prob[c] * values[c]
      values[_index(up_node[_index(j)])] = value
      j += 1
      continue
    offset = _index(up_slot_offset[_index(j)])
    for a in range(count):
      value += strategy[offset + a] * values[first + a]
    values[_index(up_node[_index(j)])] = value
    if q == update_player:
      counterfactual = reach[k, other] * reach[k, 2]
      if q == 0:
        for a in range(count):
          regrets[offset + a] += counterfactual * (values[first + a] - value)
      else:
        for a in range(count):
          regrets[offset + a] += counterfactual * (value - values[first + a])
    j += 1


@numba.njit(cache=True)
def _subtree_starts(up_parent):
  """The post-order entry where each entry's subtree starts (its entry minus its
  internal descendants)."""
  size = np.ones(len(up_parent), dtype=np.int32)
  for i in range(len(up_parent)):
    if up_parent[i] >= 0:
      size[up_parent[i]] += size[i]
  return (np.arange(len(up_parent)) - size + 1).astype(np.int32)
