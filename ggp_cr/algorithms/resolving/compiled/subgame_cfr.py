"""CFR+ on a subgame laid out in place on the whole game's tree ([S] §1.3.1, §1.4.2).

`SubgameCFRPlus` runs on a subgame_layout.SubgameStructure: passes on the whole tree
that skip unreached subtrees (level by level where that keeps the sums' order), or on
the subgame's walk packed into arrays of its own; equal to cfr.CFRPlusSolver on the
copying view to rounding. How: docs/algorithms/resolving.md, "Module notes".
"""

import time

import numba
import numpy as np

from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.cfr import iteration_kernels
from ggp_cr.algorithms.cfr import regret_matching
from ggp_cr.algorithms.cfr import traversal
from ggp_cr.algorithms.resolving.compiled import packed_walk
from ggp_cr.algorithms.resolving.compiled import subgame_layout

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
def _values_of_level(lo, hi, pos_node, pos_first_child, pos_num_children, pos_slot,
                     strategy, values):
  """values of player positions lo..hi-1 from their children's, none skipped (the
  reach is not read). Consecutive positions' children are consecutive nodes
  (breadth-first: first_child[k + 1] = first_child[k] + num_children[k]), so the
  first child is read once."""
  first = pos_first_child[lo] if hi > lo else 0
  for k in range(lo, hi):
    offset = pos_slot[k]
    count = pos_num_children[k]
    value = 0.0
    for a in range(count):
      value += strategy[offset + a] * values[first + a]
    values[pos_node[k]] = value
    first += count


@numba.njit(cache=True)
def _own_level(update_player, kept, lo, hi, pos_node, pos_first_child,
               pos_num_children, pos_slot, strategy, reach, values, regrets):
  """`_level_accumulate` on positions lo..hi-1 of a level that holds only
  `update_player`'s: each tested as there, its value and regrets as there (no
  player read per position; the first child carried as in `_values_of_level`)."""
  other = 1 - update_player
  first = pos_first_child[lo] if hi > lo else 0
  for k in range(lo, hi):
    count = pos_num_children[k]
    chance = reach[k, 2]
    if reach[k, other] * chance == 0.0 and (
        kept < 0 or reach[k, kept] * chance == 0.0):
      first += count
      continue
    offset = pos_slot[k]
    value = 0.0
    for a in range(count):
      value += strategy[offset + a] * values[first + a]
    values[pos_node[k]] = value
    counterfactual = reach[k, other] * chance
    if update_player == 0:
      for a in range(count):
        regrets[offset + a] += counterfactual * (values[first + a] - value)
    else:
      for a in range(count):
        regrets[offset + a] += counterfactual * (value - values[first + a])
    first += count


@numba.njit(cache=True)
def _level_accumulate(update_player, kept, level_lo, level_hi, level_player, pos_node,
                      pos_first_child, pos_num_children, pos_player, pos_slot,
                      chance_prob, strategy, reach, values, regrets):
  """traversal.accumulate_pruned's values and regrets (no sums) over internal
  positions level_lo[s]..level_hi[s]-1, segment by segment (`level_segments`:
  deepest level first), skipping each position where accumulate_pruned skips its
  subtree: the same additions in the same order, bit for bit (why: the notes on
  `compiled/subgame_cfr` in docs/algorithms/resolving.md). A level of only the
  other player's positions runs `_values_of_level`, one of only `update_player`'s
  `_own_level`. The body repeats accumulate_pruned's on purpose (its docstring)."""
  other = 1 - update_player
  for s in range(len(level_lo)):
    if level_player[s] == other:
      _values_of_level(level_lo[s], level_hi[s], pos_node, pos_first_child,
                       pos_num_children, pos_slot, strategy, values)
      continue
    if level_player[s] == update_player:
      _own_level(update_player, kept, level_lo[s], level_hi[s], pos_node,
                 pos_first_child, pos_num_children, pos_slot, strategy, reach, values,
                 regrets)
      continue
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
def _pruned_pass(update_player, player, column, kept, root_position, root_slot,
                 root_chance, down_lo, down_hi, up_lo, up_hi, infosets, first,
                 histories, infoset_action_offset, infoset_num_actions, down_parent,
                 down_player, down_slot, down_chance_prob, up_node, up_position,
                 up_first_child, up_num_children, up_player, up_slot_offset,
                 up_parent, up_start, chance_prob, strategy, reach, values, regrets,
                 cumulative, weight, level_lo, level_hi, level_player, levels):
  """`subgame_pass` of a CFR+ iteration for `update_player` (0 or 1) that skips the
  subtrees it has no counterfactual reach in (traversal.accumulate_pruned, `kept`
  as there), its sums added per information set (`_infoset_sums` of its
  `infosets` in the subgame), its reach redone for player `column` only if given
  (>= 0: the reach array holds the previous pass's, which differs in that player's
  strategy alone), else all of it; its values and regrets level by level
  (`_level_accumulate` over the segments level_lo/level_hi, their levels' players
  level_player, `levels` a _Levels' arrays) if there are such segments, else along
  the post-order segments."""
  subgame_layout.root_reach(column, player, root_position, root_slot, root_chance,
                            strategy, reach)
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
    _level_accumulate(update_player, kept, level_lo, level_hi, level_player, levels[0],
                      levels[1], levels[2], levels[3], levels[4], chance_prob, strategy,
                      reach, values, regrets)
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


class SubgameCFRPlus(subgame_layout.SubgameStructure):
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
    self._level_lo = self._level_hi = self._level_player = np.zeros(0, dtype=np.int64)
    if by_level and self.level_order_keeps_sums():
      levels = self._tables.levels
      self._level_lo, self._level_hi = subgame_layout.level_segments(
          self._root_position, self._down_lo, self._down_hi, levels.start)
      # Each segment's level's player (_level_accumulate skips no position of
      # the other player's levels).
      self._level_player = levels.level_player[
          np.searchsorted(levels.start, self._level_lo, side="right") - 1]
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
    subgame_layout.subgame_pass(
        update_player, self._view.player, packed.root_position, self._root_slot,
        self._root_chance, packed.down_lo, packed.down_hi, packed.up_lo, packed.up_hi,
        packed.down_parent, packed.down_player, packed.down_slot,
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
                 self._level_hi, self._level_player, self._level_arrays())
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
