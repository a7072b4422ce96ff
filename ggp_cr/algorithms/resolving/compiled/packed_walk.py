"""A subgame's CFR walk packed into contiguous arrays of its own ([S] §1.3; issue 45).

`PackedWalk` copies the whole tree's walk (traversal.TraversalTree) of a subgame's
nodes into a numbering of its own, in one linear pass of streaming writes, so that
CFR passes over a subgame scattered in the whole tree read contiguous memory. Why
and when: docs/algorithms/resolving.md, "Module notes".
"""

import copy

import numba
import numpy as np

from ggp_cr.algorithms.resolving.gadget import prefix as gadget_prefix


@numba.njit(cache=True)
def _entries(roots, child_begin, position_before, max_steps):
  """Root by root, the whole tree's node range of each depth step below the root
  (step 0: the root), its first internal position, and their local numbers: nodes
  and internal positions numbered step by step, the roots in order within a step
  (so that a node's parent has a smaller position). Returns (first entry of each
  root and one past the last, node_lo, node_hi, pos_lo, local node_lo, local
  pos_lo, node count, internal count)."""
  num_roots = len(roots)
  first = np.empty(num_roots + 1, dtype=np.int64)
  count = 0
  for j in range(num_roots):  # the entries' count
    a, b = roots[j], roots[j] + 1
    while b > a:
      count += 1
      a, b = child_begin[a], child_begin[b]
  node_lo = np.empty(count, dtype=np.int64)
  node_hi = np.empty(count, dtype=np.int64)
  step = np.empty(count, dtype=np.int64)
  count = 0
  step_nodes = np.zeros(max_steps + 1, dtype=np.int64)
  step_internal = np.zeros(max_steps + 1, dtype=np.int64)
  for j in range(num_roots):
    first[j] = count
    a, b = roots[j], roots[j] + 1
    s = 0
    while b > a:
      node_lo[count] = a
      node_hi[count] = b
      step[count] = s
      step_nodes[s] += b - a
      step_internal[s] += position_before[b] - position_before[a]
      count += 1
      a, b = child_begin[a], child_begin[b]
      s += 1
  first[num_roots] = count
  # Step-major local numbers.
  node_run = np.empty(max_steps + 1, dtype=np.int64)
  pos_run = np.empty(max_steps + 1, dtype=np.int64)
  nodes = 0
  internal = 0
  for s in range(max_steps + 1):
    node_run[s] = nodes
    pos_run[s] = internal
    nodes += step_nodes[s]
    internal += step_internal[s]
  local_node_lo = np.empty(count, dtype=np.int64)
  local_pos_lo = np.empty(count, dtype=np.int64)
  pos_lo = np.empty(count, dtype=np.int64)
  for e in range(count):
    s = step[e]
    a, b = node_lo[e], node_hi[e]
    pos_lo[e] = position_before[a]
    local_node_lo[e] = node_run[s]
    local_pos_lo[e] = pos_run[s]
    node_run[s] += b - a
    pos_run[s] += position_before[b] - position_before[a]
  return (first, node_lo, node_hi, pos_lo, local_node_lo, local_pos_lo, nodes,
          internal)


@numba.njit(cache=True)
def _fill(roots, first, node_lo, node_hi, pos_lo, local_node_lo, local_pos_lo,
          position_before, post_index, internal_below, node_depth, node_num_children,
          node_chance_prob, node_utility, opponent, utility_sum, scale, shift,
          down_parent, down_player, down_slot, down_chance_prob, up_node, up_position,
          up_first_child, up_num_children, up_player, up_slot_offset,
          l_down_parent, l_down_player, l_down_slot, l_down_chance_prob, l_up_node,
          l_up_position, l_up_first_child, l_up_num_children, l_up_player,
          l_up_slot_offset, l_chance_prob, l_values):
  """The packed arrays: per local node its chance probability and (terminals)
  player 0's gadget payoff (subgame_layout._write_leaves' gadget values); per local
  internal position after the roots its top-down entries; the bottom-up entries in
  the whole post-order of the roots' subtrees, root by root (subgame_layout's
  order), with local nodes and positions."""
  for j in range(len(roots)):
    for e in range(first[j], first[j + 1]):
      a, b = node_lo[e], node_hi[e]
      base = local_node_lo[e] - a
      for n in range(a, b):
        local = n + base
        l_chance_prob[local] = node_chance_prob[n]
        if node_num_children[n] == 0:
          l_values[local] = gadget_prefix.gadget_payoff(node_utility[n], j, opponent,
                                                       utility_sum, scale, shift)
      if e == first[j]:
        continue  # the root: its reach comes from the gadget's prefix
      parent_shift = local_pos_lo[e - 1] - pos_lo[e - 1]
      p_lo = pos_lo[e]
      p_hi = position_before[b]
      q = local_pos_lo[e] - 1
      for p in range(p_lo - 1, p_hi - 1):
        l_down_parent[q] = down_parent[p] + parent_shift
        l_down_player[q] = down_player[p]
        l_down_slot[q] = down_slot[p]
        l_down_chance_prob[q] = down_chance_prob[p]
        q += 1
  o = 0
  for j in range(len(roots)):
    root = roots[j]
    hi = post_index[root] + 1
    lo = hi - internal_below[root]
    top = node_depth[root]
    f = first[j]
    for i in range(lo, hi):
      n = up_node[i]
      e = f + node_depth[n] - top
      l_up_node[o] = n - node_lo[e] + local_node_lo[e]
      l_up_position[o] = up_position[i] - pos_lo[e] + local_pos_lo[e]
      l_up_first_child[o] = up_first_child[i] - node_lo[e + 1] + local_node_lo[e + 1]
      l_up_num_children[o] = up_num_children[i]
      l_up_player[o] = up_player[i]
      l_up_slot_offset[o] = up_slot_offset[i]
      o += 1


class PackedWalk:
  """The walk of the subgame below whole-tree nodes `roots` (none below another,
  each internal) in its own numbering (module docstring): the arrays of
  subgame_layout's pass, its local values (the terminals' gadget payoffs for
  `opponent`, `scale`, `shift` per root) and reach, and the local node and
  position of whole-tree nodes (`local_nodes`, `local_positions`). `walk` is the
  whole tree's traversal.TraversalTree, `tables` the subgame_layout per-tree
  tables (child_begin, position_before, post_index, internal_below)."""

  def __init__(self, tree, walk, tables, roots, opponent, scale, shift):
    roots = np.asarray(roots, dtype=np.int64)
    (first, self._node_lo, node_hi, self._pos_lo, self._local_node_lo,
     self._local_pos_lo, nodes, internal) = _entries(
         roots, tables.child_begin, tables.position_before, tree.max_depth + 1)
    self.num_nodes, self.num_internal = int(nodes), int(internal)
    below = max(internal - 1, 0)
    self.down_parent = np.empty(below, dtype=walk.down_parent.dtype)
    self.down_player = np.empty(below, dtype=walk.down_player.dtype)
    self.down_slot = np.empty(below, dtype=walk.down_slot.dtype)
    self.down_chance_prob = np.empty(below, dtype=walk.down_chance_prob.dtype)
    self.up_node = np.empty(internal, dtype=walk.up_node.dtype)
    self.up_position = np.empty(internal, dtype=walk.up_position.dtype)
    self.up_first_child = np.empty(internal, dtype=walk.up_first_child.dtype)
    self.up_num_children = np.empty(internal, dtype=walk.up_num_children.dtype)
    self.up_player = np.empty(internal, dtype=walk.up_player.dtype)
    self.up_slot_offset = np.empty(internal, dtype=walk.up_slot_offset.dtype)
    self.chance_prob = np.empty(nodes)
    self.values = np.empty(nodes)
    self.reach = np.empty((max(internal, 1), 3))
    _fill(roots, first, self._node_lo, node_hi, self._pos_lo, self._local_node_lo,
          self._local_pos_lo, tables.position_before, tables.post_index,
          tables.internal_below, tree.node_depth, tree.node_num_children,
          tree.node_chance_prob, tree.node_utility, opponent, tree.utility_sum,
          np.asarray(scale, dtype=np.float64), np.asarray(shift, dtype=np.float64),
          walk.down_parent, walk.down_player, walk.down_slot, walk.down_chance_prob,
          walk.up_node, walk.up_position, walk.up_first_child, walk.up_num_children,
          walk.up_player, walk.up_slot_offset, self.down_parent, self.down_player,
          self.down_slot, self.down_chance_prob, self.up_node, self.up_position,
          self.up_first_child, self.up_num_children, self.up_player,
          self.up_slot_offset, self.chance_prob, self.values)
    self._order = np.argsort(self._node_lo, kind="stable")
    self._sorted_lo = self._node_lo[self._order]
    self._position_before = tables.position_before
    num_roots = len(roots)
    # The roots are step 0: local nodes and internal positions 0..R-1.
    self.root_nodes = np.arange(num_roots, dtype=np.int64)
    self.root_position = np.arange(num_roots, dtype=np.int64)
    self.down_lo = np.array([num_roots] if internal > num_roots else [],
                            dtype=np.int64)
    self.down_hi = np.array([internal] if internal > num_roots else [], dtype=np.int64)
    self.up_lo = np.array([0], dtype=np.int64)
    self.up_hi = np.array([internal], dtype=np.int64)

  def __deepcopy__(self, memo):
    """A copy (a continual-resolving bot's clone) shares the read-only walk and
    maps and copies what the passes write: `values` and `reach`."""
    other = copy.copy(self)
    other.values = self.values.copy()
    other.reach = self.reach.copy()
    memo[id(self)] = other
    return other

  def _entry(self, nodes):
    nodes = np.asarray(nodes, dtype=np.int64)
    return nodes, self._order[np.searchsorted(self._sorted_lo, nodes, "right") - 1]

  def local_nodes(self, nodes):
    """The local node of each whole-tree node of the subgame."""
    nodes, e = self._entry(nodes)
    return nodes - self._node_lo[e] + self._local_node_lo[e]

  def local_positions(self, nodes):
    """The local internal position of each whole-tree internal node of the
    subgame."""
    nodes, e = self._entry(nodes)
    return (self._position_before[nodes] - self._pos_lo[e] + self._local_pos_lo[e])
