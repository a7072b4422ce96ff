"""The full-width CFR family on the compiled tree ([S] §1.3, §3.3.2, §5.1.1).

`GeneralCFRSolver` is the thesis's configurable CFR (CFRPlayground's
DepthLimitedCFRSolver): a pluggable regret matcher (regret_matching.py), alternating
(default) or simultaneous updates, a cumulative-strategy discount exponent gamma, and
an optional depth limit below which a utility estimator replaces the subtree.

One iteration t (t = 1, 2, ...), with alternating updates, runs for player 0 and then
player 1 (simultaneous updates: one pass updating both):
1. reach probabilities top-down over the breadth-first node arrays;
2. values bottom-up; at each of the updated player's histories h of information set I,
   regret r_I[a] += pi_-i(h) * (u_i(ha) - u_i(h)) and cumulative strategy
   s_I[a] += t^gamma * pi_i(h) * sigma_I[a];
3. the matcher's end-of-iteration step (RM+ clipping, DRM discounting with t) and the
   new current strategy of the updated player's information sets.
Weighting iteration t's strategy by t^gamma is the thesis's "multiply the cumulative
strategy by (t/(t+1))^gamma before adding" ([S] §5.1.1) up to a common factor, which
the average strategy's normalisation removes. The order of operations is that of
OpenSpiel's cfr.py and discounted_cfr.py, so `CFRSolver`, `CFRPlusSolver`,
`LCFRSolver` and `DCFRSolver` reproduce OpenSpiel's solvers of the same names.

Presets of [S] Table 5.2 are in `PRESETS`; `visited_states` counts histories touched
(including random-playout histories), the thesis's measure of progress ([S] §5.1).
"""

import math

import numba
import numpy as np
import pyspiel

from ggp_cr.algorithms import compiled_tree
from ggp_cr.algorithms import regret_matching

_BOTH_PLAYERS = -1


def as_compiled_tree(game_or_tree):
  """A CompiledTree for a pyspiel game, a game string, or a CompiledTree.

  Games are compiled once per process (compiled_tree.cached_tree), so the solver and
  ggp_cr's exploitability share the tree.
  """
  if isinstance(game_or_tree, compiled_tree.CompiledTree):
    return game_or_tree
  if isinstance(game_or_tree, (pyspiel.Game, str)):
    return compiled_tree.cached_tree(game_or_tree)
  raise TypeError(f"Expected a pyspiel game, a game string or a CompiledTree, got "
                  f"{type(game_or_tree).__name__}.")


class _TraversalTree:
  """The part of the compiled tree one CFR iteration walks, in breadth-first order.

  Without a depth limit this is the whole tree. With one, histories deeper than the
  limit that the estimator may evaluate become leaves (`leaf_nodes`, valued by the
  estimator) and everything below them is dropped; breadth-first order and contiguous
  children survive the filtering. `tree_node` maps each node here to the tree's node.
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
      self.parent = np.where(old_parent >= 0, new_index[np.maximum(old_parent, 0)],
                             -1).astype(np.int32)
      leaf_here = is_leaf[self.tree_node]
      self.num_children = np.where(leaf_here, 0, tree.node_num_children[self.tree_node])
      self.num_children = self.num_children.astype(np.int16)
      self.first_child = np.where(
          self.num_children > 0, new_index[tree.node_first_child[self.tree_node]],
          0).astype(np.int32)
      self.player = tree.node_player[self.tree_node]
      self.infoset = tree.node_infoset[self.tree_node]
      self.chance_prob = tree.node_chance_prob[self.tree_node]
      self.utility = tree.node_utility[self.tree_node]
      self.leaf_nodes = np.flatnonzero(leaf_here).astype(np.int32)
    else:
      self.tree_node = None
      self.parent = tree.node_parent
      self.num_children = tree.node_num_children
      self.first_child = tree.node_first_child
      self.player = tree.node_player
      self.infoset = tree.node_infoset
      self.chance_prob = tree.node_chance_prob
      self.utility = tree.node_utility
      self.leaf_nodes = np.zeros(0, dtype=np.int32)
    self.num_nodes = len(self.player)
    parent_player = self.player[np.maximum(self.parent, 0)]
    parent_player[0] = -1
    self.parent_player = parent_player
    decision_parent = parent_player >= 0
    edge_slot = np.full(self.num_nodes, -1, dtype=np.int32)
    parents = self.parent[decision_parent]
    edge_slot[decision_parent] = (
        tree.infoset_action_offset[self.infoset[parents]] +
        (np.flatnonzero(decision_parent) - self.first_child[parents]))
    self.edge_slot = edge_slot
    self.internal = _internal_postorder(self.first_child, self.num_children,
                                        tree.max_depth + 1)
    self.leaf_tree_nodes = (self.tree_node[self.leaf_nodes]
                            if self.tree_node is not None else self.leaf_nodes)


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
def _propagate_reach(parent, parent_player, edge_slot, chance_prob, strategy, reach):
  """reach[n] = (pi_0(n), pi_1(n), pi_c(n)) under `strategy`, top-down."""
  reach[0, 0] = 1.0
  reach[0, 1] = 1.0
  reach[0, 2] = 1.0
  for n in range(1, len(parent)):
    p = parent[n]
    r0 = reach[p, 0]
    r1 = reach[p, 1]
    rc = reach[p, 2]
    q = parent_player[n]
    if q == 0:
      r0 *= strategy[edge_slot[n]]
    elif q == 1:
      r1 *= strategy[edge_slot[n]]
    else:
      rc *= chance_prob[n]
    reach[n, 0] = r0
    reach[n, 1] = r1
    reach[n, 2] = rc


@numba.njit(cache=True)
def _accumulate(update_player, internal, node_player, node_infoset, first_child,
                num_children, chance_prob, infoset_action_offset, strategy, reach,
                values, regrets, cumulative, strategy_weight):
  """Values bottom-up (player 0's utility) and the updated players' regrets and sums.

  `values` holds the leaves' utilities on entry; internal nodes are overwritten.
  """
  for index in range(len(internal)):
    n = internal[index]
    first = first_child[n]
    count = num_children[n]
    q = node_player[n]
    value = 0.0
    if q < 0:
      for c in range(first, first + count):
        value += chance_prob[c] * values[c]
      values[n] = value
      continue
    offset = infoset_action_offset[node_infoset[n]]
    for a in range(count):
      value += strategy[offset + a] * values[first + a]
    values[n] = value
    if update_player != _BOTH_PLAYERS and update_player != q:
      continue
    if q == 0:
      counterfactual = reach[n, 1] * reach[n, 2]
      for a in range(count):
        regrets[offset + a] += counterfactual * (values[first + a] - value)
      own = strategy_weight * reach[n, 0]
    else:
      counterfactual = reach[n, 0] * reach[n, 2]
      for a in range(count):
        regrets[offset + a] += counterfactual * (value - values[first + a])
      own = strategy_weight * reach[n, 1]
    for a in range(count):
      cumulative[offset + a] += own * strategy[offset + a]


@numba.njit(cache=True)
def _end_iteration(infosets, infoset_action_offset, infoset_num_actions, regrets,
                   strategy, params, iteration):
  """The matcher's end-of-iteration step and new current strategy of `infosets`."""
  for i in infosets:
    offset = infoset_action_offset[i]
    count = infoset_num_actions[i]
    regret_matching.discount_regrets(regrets, offset, count, params, iteration)
    regret_matching.current_strategy(regrets, strategy, offset, count, params)


@numba.njit(cache=True)
def _normalise_per_infoset(cumulative, infoset_action_offset, infoset_num_actions, out):
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


class GeneralCFRSolver:
  """CFR with a pluggable regret matcher ([S] §3.3.2), OpenSpiel's solver API.

  Args:
    game: a pyspiel game, game string or CompiledTree (a game is compiled once per
      process; pass a CompiledTree built with compile_game(cache_dir=...) to cache it
      on disk).
    regret_matcher: a RegretMatcher or its string, e.g. "rm+", "drm(1.5,0.5)".
    alternating_updates: update players one after the other (default) or both in one
      pass per iteration.
    cumulative_strategy_exponent: gamma >= 0; iteration t's strategy is weighted t^gamma
      in the average (0: plain average, 1: linear, as CFR+).
    depth_limit: histories deeper than this (root depth 0) are valued by
      `utility_estimator` instead of being expanded; None expands everything.
    utility_estimator: e.g. utility_estimators.RandomPlayout(n, seed); required with a
      depth limit.
    estimable: optional bool array over tree nodes; only nodes marked True may be cut
      (continual resolving uses it to reach the player's next turn, [S] App. A.5).
  """

  def __init__(self, game, regret_matcher="rm", alternating_updates=True,
               cumulative_strategy_exponent=0.0, depth_limit=None,
               utility_estimator=None, estimable=None):
    self._tree = as_compiled_tree(game)
    tree = self._tree
    self.regret_matcher = regret_matching.parse_regret_matcher(regret_matcher)
    if not isinstance(alternating_updates, (bool, np.bool_)):
      raise ValueError(f"alternating_updates must be True or False, got "
                       f"{alternating_updates!r}.")
    self.alternating_updates = bool(alternating_updates)
    gamma = float(cumulative_strategy_exponent)
    if not 0.0 <= gamma < math.inf:
      raise ValueError(f"cumulative_strategy_exponent must be a finite number >= 0, got "
                       f"{cumulative_strategy_exponent!r}.")
    self.cumulative_strategy_exponent = gamma
    if depth_limit is not None:
      if isinstance(depth_limit, bool) or not isinstance(depth_limit, (int, np.integer)) \
          or depth_limit < 0:
        raise ValueError(f"depth_limit must be None or an integer >= 0, got "
                         f"{depth_limit!r}.")
      if utility_estimator is None:
        raise ValueError("A depth_limit needs a utility_estimator, e.g. "
                         "utility_estimators.RandomPlayout(1).")
    if estimable is not None:
      estimable = np.asarray(estimable, dtype=bool)
      if estimable.shape != (tree.num_nodes,):
        raise ValueError(f"estimable must be a bool array of shape ({tree.num_nodes},), "
                         f"got {estimable.shape}.")
    self.depth_limit = depth_limit
    self.utility_estimator = utility_estimator
    self._walk = _TraversalTree(tree, depth_limit, estimable)
    self._params = self.regret_matcher.params()
    self._player_infosets = [
        np.flatnonzero(tree.infoset_player == p).astype(np.int32) for p in (0, 1)]
    self._all_infosets = np.arange(tree.num_infosets, dtype=np.int32)
    self._regrets = np.zeros(tree.num_infoset_actions)
    self._cumulative = np.zeros(tree.num_infoset_actions)
    self._strategy = np.empty(tree.num_infoset_actions)
    _end_iteration(self._all_infosets, tree.infoset_action_offset,
                   tree.infoset_num_actions, self._regrets, self._strategy,
                   self._params, 1.0)
    self._values = self._walk.utility.copy()
    self._reach = np.empty((self._walk.num_nodes, 3))
    self._leaf_estimates = np.empty(len(self._walk.leaf_nodes))
    self._iteration = 0
    # Strategy weights are t^gamma / _weight_scale; the scale grows (and the sums are
    # rescaled) before the weights could overflow.
    self._weight_scale = 1.0
    self.visited_states = 0

  @property
  def tree(self):
    """The CompiledTree the solver runs on."""
    return self._tree

  @property
  def iteration(self):
    """Number of completed iterations."""
    return self._iteration

  def evaluate_and_update_policy(self):
    """Runs one CFR iteration (both players)."""
    self._iteration += 1
    t = float(self._iteration)
    weight = t**self.cumulative_strategy_exponent / self._weight_scale
    if weight > 1e100:
      self._cumulative *= 1.0 / weight
      self._weight_scale *= weight
      weight = 1.0
    if self.alternating_updates:
      for player in (0, 1):
        self._traverse(player, weight)
        self._end(self._player_infosets[player], t)
    else:
      self._traverse(_BOTH_PLAYERS, weight)
      self._end(self._all_infosets, t)

  def _traverse(self, update_player, weight):
    walk = self._walk
    tree = self._tree
    if len(walk.leaf_nodes):
      self.visited_states += self.utility_estimator.estimate(
          tree, walk.leaf_tree_nodes, self._leaf_estimates)
      self._values[walk.leaf_nodes] = self._leaf_estimates
    _propagate_reach(walk.parent, walk.parent_player, walk.edge_slot,
                     walk.chance_prob, self._strategy, self._reach)
    _accumulate(update_player, walk.internal, walk.player, walk.infoset,
                walk.first_child, walk.num_children, walk.chance_prob,
                tree.infoset_action_offset, self._strategy, self._reach,
                self._values, self._regrets, self._cumulative, weight)
    self.visited_states += walk.num_nodes

  def _end(self, infosets, t):
    tree = self._tree
    _end_iteration(infosets, tree.infoset_action_offset, tree.infoset_num_actions,
                   self._regrets, self._strategy, self._params, t)

  def current_strategy_slots(self):
    """The current strategy in slot form (a copy)."""
    return self._strategy.copy()

  def average_strategy_slots(self):
    """The average strategy in slot form; uniform at information sets never reached."""
    out = np.empty_like(self._cumulative)
    _normalise_per_infoset(self._cumulative, self._tree.infoset_action_offset,
                           self._tree.infoset_num_actions, out)
    return out

  def cumulative_regrets_slots(self):
    """The cumulative regrets in slot form (a copy)."""
    return self._regrets.copy()

  def current_policy(self):
    """The current strategy as an open_spiel TabularPolicy (a new object)."""
    return self._tree.slots_to_tabular_policy(self._strategy)

  def average_policy(self):
    """The average strategy as an open_spiel TabularPolicy (a new object)."""
    return self._tree.slots_to_tabular_policy(self.average_strategy_slots())

  def state_dict(self):
    """Arrays and counters that `load_state_dict` restores (for resumable runs)."""
    return {"regrets": self._regrets.copy(), "cumulative": self._cumulative.copy(),
            "strategy": self._strategy.copy(), "iteration": self._iteration,
            "weight_scale": self._weight_scale, "visited_states": self.visited_states}

  def load_state_dict(self, state):
    """Restores what `state_dict` returned; shapes must match this solver's tree."""
    for name in ("regrets", "cumulative", "strategy"):
      array = np.asarray(state[name], dtype=np.float64)
      if array.shape != (self._tree.num_infoset_actions,):
        raise ValueError(f"Solver state {name!r} has shape {array.shape}, expected "
                         f"({self._tree.num_infoset_actions},).")
    self._regrets[:] = state["regrets"]
    self._cumulative[:] = state["cumulative"]
    self._strategy[:] = state["strategy"]
    self._iteration = int(state["iteration"])
    self._weight_scale = float(state["weight_scale"])
    self.visited_states = int(state["visited_states"])

  def __repr__(self):
    return (f"{type(self).__name__}(rm={self.regret_matcher}, updates="
            f"{'alternating' if self.alternating_updates else 'simultaneous'}, "
            f"cse={self.cumulative_strategy_exponent:g}"
            + (f", depth_limit={self.depth_limit}, estimator={self.utility_estimator}"
               if self.depth_limit is not None else "") + ")")


class CFRSolver(GeneralCFRSolver):
  """CFR (Zinkevich et al. 2007): regret matching, uniform averaging.

  Alternating updates by default, as OpenSpiel's cfr.CFRSolver, which this reproduces
  ("CFR-au" in [S] Table 5.2); alternating_updates=False is the thesis's "CFR".
  """

  def __init__(self, game, alternating_updates=True, **kwargs):
    super().__init__(game, regret_matcher="rm", alternating_updates=alternating_updates,
                     cumulative_strategy_exponent=0.0, **kwargs)


class CFRPlusSolver(GeneralCFRSolver):
  """CFR+ (Tammelin et al. 2015; [S] §1.3.1): RM+, alternating updates, linear averaging.

  cumulative_strategy_exponent=2 is [S] Table 5.2's "CFR+2". Reproduces OpenSpiel's
  cfr.CFRPlusSolver.
  """

  def __init__(self, game, cumulative_strategy_exponent=1.0, **kwargs):
    super().__init__(game, regret_matcher="rm+", alternating_updates=True,
                     cumulative_strategy_exponent=cumulative_strategy_exponent, **kwargs)


class DCFRSolver(GeneralCFRSolver):
  """Discounted CFR(alpha, beta, gamma) (Brown & Sandholm 2019; [S] §1.3.2).

  DRM(alpha, beta), alternating updates, strategy weights t^gamma. The default
  (1.5, 0, 2) is Brown & Sandholm's; the thesis's candidate is (1.5, 0.5, 1.5).
  Reproduces OpenSpiel's discounted_cfr.DCFRSolver.
  """

  def __init__(self, game, alpha=1.5, beta=0.0, gamma=2.0, **kwargs):
    super().__init__(game, regret_matcher=regret_matching.RegretMatcher(
        kind=regret_matching.DRM, alpha=float(alpha), beta=float(beta)),
                     alternating_updates=True, cumulative_strategy_exponent=gamma,
                     **kwargs)


class LCFRSolver(DCFRSolver):
  """Linear CFR = DCFR(1, 1, 1) (Brown & Sandholm 2019); reproduces OpenSpiel's."""

  def __init__(self, game, **kwargs):
    super().__init__(game, alpha=1.0, beta=1.0, gamma=1.0, **kwargs)


# [S] Table 5.2's configurations and the thesis's candidate ([S] §5.1.1), as
# GeneralCFRSolver arguments.
PRESETS = {
    "cfr": dict(regret_matcher="rm", alternating_updates=False,
                cumulative_strategy_exponent=0.0),
    "cfr-au": dict(regret_matcher="rm", alternating_updates=True,
                   cumulative_strategy_exponent=0.0),
    "deepstack-cfr": dict(regret_matcher="rm+", alternating_updates=False,
                          cumulative_strategy_exponent=0.0),
    "cfr+": dict(regret_matcher="rm+", alternating_updates=True,
                 cumulative_strategy_exponent=1.0),
    "cfr+2": dict(regret_matcher="rm+", alternating_updates=True,
                  cumulative_strategy_exponent=2.0),
    "lcfr": dict(regret_matcher="drm(1,1)", alternating_updates=True,
                 cumulative_strategy_exponent=1.0),
    "dcfr": dict(regret_matcher="drm(1.5,0)", alternating_updates=True,
                 cumulative_strategy_exponent=2.0),
    "thesis-dcfr": dict(regret_matcher="drm(1.5,0.5)", alternating_updates=True,
                        cumulative_strategy_exponent=1.5),
}
