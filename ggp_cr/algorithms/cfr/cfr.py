"""The full-width CFR family on the compiled tree ([S] §1.3, §3.3.2, §5.1.1).

`GeneralCFRSolver` is the thesis's configurable CFR (CFRPlayground's
DepthLimitedCFRSolver): a pluggable regret matcher (regret_matching.py), alternating
(default) or simultaneous updates, a cumulative-strategy discount exponent gamma, and
an optional depth limit below which a utility estimator replaces the subtree.

One iteration t (t = 1, 2, ...), with alternating updates, runs for player 0 and then
player 1 (simultaneous updates: one pass updating both):
1. reach probabilities of the internal nodes, top-down in breadth-first order;
2. values bottom-up in depth-first post-order (the order in which a recursive CFR,
   such as OpenSpiel's, adds up an information set's histories, so that floating-point
   sums agree); at each of the updated player's histories h of information set I,
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

`cfrplayground=True` runs the thesis's own Java solver as it is written (CFRPlayground,
DepthLimitedCFRSolver and RegretMatchingPlus; [S] §3.3.2), which is what its figures
measure ("CFR+" there is CFR{rm=RM+,cse=1}, [S] App. A):
- an iteration is ONE pass; with alternating updates iteration n updates player 1 when
  n is odd and player 0 when n is even (so the thesis's 420 CFR+ iterations are 210
  of ours per player, and its visited states count one pass per iteration);
- RM+ clips a negative regret to 0 after each history's increment, not once per
  iteration after the information set's histories are summed;
- the cumulative strategy starts at 1/|A| per action, and each visited history of the
  updated player multiplies it by (n/(n+1))^gamma before adding pi_i(h) * pi_c(h) *
  sigma_I: an information set with k histories is discounted k times per pass, so its
  effective exponent is about k * gamma.
With these, CFR+ on python_ii_goofspiel(num_cards=5) reaches NashConv 0.0289 after 420
iterations (23,407,020 visited states) and on python_latent_ttt 0.0969 after 23, the
figures of [S] §6 (Figs 6.4 and 6.7).
"""

import copy
import math
import time

import numpy as np
import pyspiel

from ggp_cr.algorithms import contracts
from ggp_cr.algorithms.cfr import grouped_walk
from ggp_cr.algorithms.cfr import iteration_kernels
from ggp_cr.algorithms.cfr import parallel_passes
from ggp_cr.algorithms.cfr import regret_matching
from ggp_cr.algorithms.cfr import schedules
from ggp_cr.algorithms.cfr import traversal
from ggp_cr.algorithms.config import number_ranges
from ggp_cr.algorithms.config import presets
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import flat_tree

_BOTH_PLAYERS = traversal.BOTH_PLAYERS


def as_compiled_tree(game_or_tree):
  """A CompiledTree for a pyspiel game, a game string, or a CompiledTree.

  Games are compiled once per process (compiled_tree.cached_tree), so the solver and
  ggp_cr's exploitability share the tree.
  """
  if isinstance(game_or_tree, flat_tree.CompiledTree):
    return game_or_tree
  if isinstance(game_or_tree, (pyspiel.Game, str)):
    return compiled_tree.cached_tree(game_or_tree)
  raise TypeError(f"Expected a pyspiel game, a game string or a CompiledTree, got "
                  f"{type(game_or_tree).__name__}.")


# Above weight e^_LOG_RESCALE (1e100) the cumulative strategy is rescaled.
_LOG_RESCALE = math.log(1e100)


def strategy_weight(t, exponent, log_scale):
  """(weight, new log_scale, rescale) of iteration t's strategy: t^exponent /
  e^log_scale, computed in log space; when it would exceed 1e100 the scale grows and
  the cumulative sums must be multiplied by `rescale` (else 1.0) before adding."""
  log_weight = exponent * math.log(t) - log_scale
  if log_weight > _LOG_RESCALE:
    return 1.0, log_scale + log_weight, math.exp(-log_weight)
  return math.exp(log_weight), log_scale, 1.0


# Iterations per run_iterations call (its per-iteration numbers: 48 bytes each), at
# most _BATCH_NODES node visits a pass each (about 0.25 s), so a call on a large tree
# returns to Python (signals, time checks) as often as a few iterations do.
_BATCH = 4096
_BATCH_NODES = 50_000_000
# Trees from this size on are iterated with accumulate_pruned (run_iterations'
# `prune`), measured against the unpruned pass in the same process: a dcfr iteration
# on liars_dice (295k nodes; 85-88% of a pass's histories unreached by the opponent
# after 1,000 iterations) 1.4x faster, pdcfr+ on IIGS{6} (2M) 1.7x, dcfr on
# Leduc{3,30} (4.4M) 1.1x, but dcfr on leduc_poker (9k, 17-24% unreached) 1.1x
# slower (the test per history costs more than it saves).
_PRUNE_NODES = 100_000
# evaluate_strategy with a deadline: entries of the walk (reach top-down, then values
# bottom-up) per kernel call between two looks at the clock (about 1 ms of a pass).
EVALUATE_BLOCK = 1 << 17
# A one-thread unpruned batch runs grouped_walk's pass (a leduc_poker dcfr iteration
# 2.3x faster) once the solver reaches this many iterations: the grouping costs about
# 13 leduc_poker iterations, too much for a subgame resolved a few iterations a move.
_GROUP_FROM = 32
# A pass's scratch arrays: every pass (and every run_iterations call) writes them before
# it reads them, and `observe` reads them within the pass's call, so copies of a solver
# share them (GeneralCFRSolver.__deepcopy__).
_SCRATCH = ("_reach", "_grouped_reach", "_values", "_leaf_estimates")


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
    cfrplayground: iterate as the thesis's Java solver does (module docstring)
      instead of as OpenSpiel's CFR; accepts the matchers rm and rm+.
    schedule: a schedules.HyperparameterSchedule: its gamma(t) replaces
      cumulative_strategy_exponent (the sum discounted by ((t-1)/t)^gamma(t) before
      iteration t's strategy is added), and with `discounts` its alpha(t), beta(t)
      those of the drm matcher.
    threads: threads of each pass (parallel_passes.py; results equal bit for bit
      to one thread's); None is one (threads are opt-in, parallel_passes.threads_for).
    scratch: optional scratch arrays of the passes shared with other solvers of the
      whole tree (no depth limit): an object with `reach` and `values` arrays of this
      solver's shapes and `claim()`, called before every pass, after which `values`
      holds the tree's utilities at its terminals (continual resolving's whole-game
      solve and in-place subgames: subgame_layout.whole_tree_scratch).
  """

  def __init__(self, game, regret_matcher="rm", alternating_updates=True,
               cumulative_strategy_exponent=0.0, depth_limit=None,
               utility_estimator=None, estimable=None, cfrplayground=False,
               schedule=None, threads=None, scratch=None):
    self._tree = as_compiled_tree(game)
    tree = self._tree
    self.regret_matcher = regret_matching.parse_full_width_matcher(regret_matcher)
    if not isinstance(alternating_updates, (bool, np.bool_)):
      raise ValueError(f"alternating_updates must be True or False, got "
                       f"{alternating_updates!r}.")
    self.alternating_updates = bool(alternating_updates)
    self.cumulative_strategy_exponent = number_ranges.exponent(
        cumulative_strategy_exponent, "cumulative_strategy_exponent")
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
    if not isinstance(cfrplayground, (bool, np.bool_)):
      raise ValueError(f"cfrplayground must be True or False, got {cfrplayground!r}.")
    self.cfrplayground = bool(cfrplayground)
    if self.cfrplayground and (
        self.regret_matcher.kind not in (regret_matching.RM, regret_matching.RM_PLUS)
        or self.regret_matcher.exploration > 0.0):
      raise ValueError(f"cfrplayground=True accepts the regret matchers rm and rm+, got "
                       f"{self.regret_matcher}.")
    if schedule is not None:
      if not isinstance(schedule, schedules.HyperparameterSchedule):
        raise ValueError(f"schedule must be None or a HyperparameterSchedule, got "
                         f"{schedule!r}.")
      if self.cfrplayground:
        raise ValueError("cfrplayground=True runs without a schedule.")
      if schedule.discounts and self.regret_matcher.kind != regret_matching.DRM:
        raise ValueError(f"A schedule of alpha and beta needs a drm matcher, got "
                         f"{self.regret_matcher}.")
    self.schedule = schedule
    self.depth_limit = depth_limit
    self.utility_estimator = utility_estimator
    self._walk = (traversal.whole_tree_walk(tree)
                  if depth_limit is None and estimable is None
                  else traversal.TraversalTree(tree, depth_limit, estimable))
    self.threads = parallel_passes.threads_for(threads)
    self._plans = (parallel_passes.plans_for(self._walk, tree) if self.threads > 1
                   else None)
    self._serial_split = parallel_passes.serial_split(self._walk)
    # grouped_walk.GroupedEntries and the reach array of its batches (_iterate_batched)
    self._grouped = self._grouped_reach = self._grouped_indices = None
    self._params = self.regret_matcher.params()
    self._player_infosets = [
        np.flatnonzero(tree.infoset_player == p).astype(np.int32) for p in (0, 1)]
    self._all_infosets = np.arange(tree.num_infosets, dtype=np.int32)
    self._regrets = np.zeros(tree.num_infoset_actions)
    # drm+ / pdrm+: the pass adds the instantaneous regrets here, the end folds them.
    self._instant = (np.zeros(tree.num_infoset_actions)
                     if self.regret_matcher.needs_instant_regrets else None)
    self._cumulative = np.zeros(tree.num_infoset_actions)
    if self.cfrplayground:  # its average strategy starts from a uniform weight 1
      self._cumulative = tree.normalise_per_infoset(self._cumulative)
    self._strategy = np.empty(tree.num_infoset_actions)
    iteration_kernels.end_iteration(self._all_infosets, tree.infoset_action_offset,
                  tree.infoset_num_actions, self._regrets, self._strategy,
                  self._params, 1.0)
    self._scratch = scratch
    if scratch is None:
      self._values = self._walk.utility.copy()
      self._reach = np.empty((max(self._walk.num_internal, 1), 3))
    else:
      self._values, self._reach = scratch.values, scratch.reach
      if (depth_limit is not None or estimable is not None or
          self._values.shape != self._walk.utility.shape or
          self._reach.shape != (max(self._walk.num_internal, 1), 3)):
        raise ValueError("scratch serves a solver of the whole tree (no depth limit, "
                         "no estimable) with arrays of its walk's shapes.")
    self._leaf_estimates = np.empty(len(self._walk.leaf_nodes))
    self._iteration = 0
    # Strategy weights are t^gamma / e^_log_weight_scale, computed in log space; the
    # scale grows (and the sums are rescaled) before the weights could overflow.
    self._log_weight_scale = 0.0
    self.visited_states = 0
    self.threaded_passes = 0  # passes that ran on several threads

  @property
  def tree(self):
    """The CompiledTree the solver runs on."""
    return self._tree

  @property
  def iterations(self):
    """Number of completed iterations."""
    return self._iteration

  def iterate(self, num_iterations=1):
    """Runs `num_iterations` CFR iterations (contracts.Solver)."""
    count = contracts.iteration_count(num_iterations)
    if not self.cfrplayground and not len(self._walk.leaf_nodes):
      self._iterate_batched(count)
      return
    for _ in range(count):
      self.evaluate_and_update_policy()

  def evaluate_and_update_policy(self, observe=None):
    """Runs one CFR iteration (both players).

    `observe(reach, values)`, if given, is called after the iteration's first pass,
    while both hold the iteration's starting strategy: `reach[k]` the (player 0,
    player 1, chance) reach of internal node k (internal nodes numbered in
    breadth-first order), `values[n]` player 0's expected utility below node n (no
    depth limit) — continual resolving reads its estimates there without a pass of
    its own.
    """
    if self.cfrplayground:
      self._iteration += 1
      self._playground_iteration(observe)
      return
    t, weight, decay = self._next_iteration()
    if self.alternating_updates:
      for player in (0, 1):
        self._decay_sums(self._player_infosets[player], decay)
        self._traverse(player, weight)
        if observe is not None and player == 0:
          observe(self._reach, self._values)
        self._end(self._player_infosets[player], t)
    else:
      self._decay_sums(self._all_infosets, decay)
      self._traverse(_BOTH_PLAYERS, weight)
      if observe is not None:
        observe(self._reach, self._values)
      self._end(self._all_infosets, t)

  def _next_iteration(self):
    """Starts an iteration: (t, the weight of its strategy in the cumulative sums,
    the factor the sums are multiplied by first), the sums rescaled and the
    scheduled discounts set."""
    t, weight, decay, rescale, alpha, beta = self._scalars_rows(1)[0]
    if rescale != 1.0:
      self._cumulative *= rescale
    if not math.isnan(alpha):
      self._params[regret_matching.PARAM_ALPHA] = alpha
      self._params[regret_matching.PARAM_BETA] = beta
    return t, weight, decay

  def _iteration_scalars(self):
    """Counts the next iteration: (t, strategy weight, decay of the sums, rescale of
    the sums before it, scheduled alpha, beta or nan, nan), from Python floats."""
    self._iteration += 1
    t = float(self._iteration)
    if self.schedule is not None:
      alpha, beta, gamma = self.schedule.at(self._iteration)
      if not self.schedule.discounts:
        alpha = beta = math.nan
      return t, 1.0, ((t - 1.0) / t) ** gamma, 1.0, alpha, beta
    weight, self._log_weight_scale, rescale = strategy_weight(
        t, self.cumulative_strategy_exponent, self._log_weight_scale)
    return t, weight, 1.0, rescale, math.nan, math.nan

  def _scalars_rows(self, count):
    """The next `count` iterations' `_iteration_scalars` as rows of an array,
    counted; without a schedule or a rescale in numpy (a Python call per iteration
    cost a leduc_poker iteration 3-10%), the same numbers for any count."""
    if self.schedule is None:
      t = np.arange(self._iteration + 1, self._iteration + count + 1, dtype=np.float64)
      log_weight = (self.cumulative_strategy_exponent * np.log(t)
                    - self._log_weight_scale)
      if log_weight[-1] <= _LOG_RESCALE:  # increasing in t: no rescale in the rows
        self._iteration += count
        rows = np.empty((count, 6))
        rows[:, 0] = t
        rows[:, 1] = np.exp(log_weight)
        rows[:, 2:4] = 1.0
        rows[:, 4:] = math.nan
        return rows
      if count > 1:  # row by row, as the single iterations get them
        return np.concatenate([self._scalars_rows(1) for _ in range(count)])
    return np.array([self._iteration_scalars() for _ in range(count)], dtype=np.float64)

  def _iterate_batched(self, num_iterations):
    """`num_iterations` iterations of the whole tree in one kernel call per batch
    (run_iterations): the per-iteration numbers come from `_scalars_rows`, so the
    run equals `evaluate_and_update_policy`'s iteration by iteration."""
    walk, tree = self._walk, self._tree
    instant = self._instant if self._instant is not None else self._regrets[:0]
    batch = max(1, min(_BATCH, _BATCH_NODES // max(walk.num_nodes, 1)))
    splits = ((self._split(0), self._split(1), self._serial_split)
              if self.alternating_updates else
              (self._serial_split, self._serial_split, self._split(_BOTH_PLAYERS)))
    prune = self.alternating_updates and walk.num_nodes >= _PRUNE_NODES
    grouped, reach = grouped_walk.empty_arrays(), self._reach
    self._claim_scratch()
    if self.threads == 1 and not prune and (
        self._grouped is not None or self._iteration + num_iterations >= _GROUP_FROM):
      if self._grouped is None:
        self._grouped = grouped_walk.GroupedEntries(walk)
        # Column by column (a pass redoes one column): 1.05x faster on leduc_poker.
        self._grouped_reach = np.asfortranarray(self._reach)
      grouped, reach = self._grouped.arrays(), self._grouped_reach
    indices = (self._player_infosets[0], self._player_infosets[1], self._all_infosets,
               tree.infoset_action_offset, tree.infoset_num_actions, walk.down_parent,
               walk.down_slot)
    if len(grouped[1]):  # unsigned, as grouped's (grouped_walk.unsigned): 1.1x faster
      indices = self._grouped_indices or tuple(map(grouped_walk.unsigned, indices))
      self._grouped_indices = indices
    done = 0
    while done < num_iterations:
      count = min(batch, num_iterations - done)
      scalars = self._scalars_rows(count)
      self.threaded_passes += iteration_kernels.run_iterations(
          self.alternating_updates, *indices[:6], walk.down_player, indices[6],
          walk.down_chance_prob,
          walk.up_node, walk.up_position, walk.up_first_child, walk.up_num_children,
          walk.up_player, walk.up_slot_offset, walk.up_parent, walk.up_start,
          walk.player_sums[0], walk.player_sums[1], walk.chance_prob, self._strategy,
          reach, self._values, self._regrets, instant, self._instant is not None,
          self._cumulative, self._params, scalars, self.threads, *splits, prune, grouped)
      self.visited_states += count * walk.num_nodes * (
          2 if self.alternating_updates else 1)
      done += count

  def _decay_sums(self, infosets, decay):
    if decay != 1.0:
      tree = self._tree
      iteration_kernels.scale_infosets(infosets, tree.infoset_action_offset,
                                       tree.infoset_num_actions, self._cumulative,
                                       decay)

  def _playground_iteration(self, observe):
    """One CFRPlayground iteration: a single pass (module docstring)."""
    n = self._iteration
    player = _BOTH_PLAYERS
    infosets = self._all_infosets
    if self.alternating_updates:
      player = 1 if n % 2 else 0
      infosets = self._player_infosets[player]
    decay = (n / (n + 1.0)) ** self.cumulative_strategy_exponent
    self._traverse(player, 1.0, visit_decay=decay, playground=True)
    if observe is not None:
      observe(self._reach, self._values)
    self._end(infosets, float(n))

  def _claim_scratch(self):
    if self._scratch is not None:
      self._scratch.claim()

  def _traverse(self, update_player, weight, visit_decay=1.0, playground=False):
    walk = self._walk
    tree = self._tree
    self._claim_scratch()
    if len(walk.leaf_nodes):
      self.visited_states += self.utility_estimator.estimate(
          tree, walk.leaf_tree_nodes, self._leaf_estimates)
      self._values[walk.leaf_nodes] = self._leaf_estimates
    self.threaded_passes += self._walk_pass(
        update_player, self._strategy,
        self._regrets if self._instant is None else self._instant, weight,
        visit_decay, playground and self.regret_matcher.kind == regret_matching.RM_PLUS,
        playground)
    self.visited_states += walk.num_nodes

  def _split(self, update_player):
    """walk_pass's split arrays of `update_player`'s passes."""
    if self._plans is None:
      return self._serial_split
    return self._plans.arrays(update_player)

  def _walk_pass(self, update_player, strategy, regrets, weight, visit_decay, clip,
                 chance_weighted):
    """One pass over the walk (walk_pass) on the solver's threads, without the end
    of the iteration (the caller's _end); whether it ran on threads."""
    walk, tree = self._walk, self._tree
    return iteration_kernels.walk_pass(
        self.threads, self._split(update_player), update_player, walk.down_parent,
        walk.down_player, walk.down_slot, walk.down_chance_prob, walk.up_node,
        walk.up_position, walk.up_first_child, walk.up_num_children, walk.up_player,
        walk.up_slot_offset, walk.chance_prob, strategy, self._reach, self._values,
        regrets, self._cumulative, weight, visit_decay, clip, chance_weighted, False,
        self._all_infosets[:0],
        (tree.infoset_action_offset, tree.infoset_num_actions, self._regrets,
         self._regrets, False, self._strategy, self._params, 0.0))

  def _end(self, infosets, t):
    tree = self._tree
    instant = self._instant if self._instant is not None else self._regrets[:0]
    iteration_kernels.end_infosets(
        infosets, (tree.infoset_action_offset, tree.infoset_num_actions, self._regrets,
                   instant, self._instant is not None, self._strategy, self._params,
                   float(t)))

  def current_strategy_slots(self):
    """The current strategy in slot form (a copy)."""
    return self._strategy.copy()

  def evaluate_strategy(self, slots, observe, deadline=None, now=time.perf_counter):
    """Calls observe(reach, values) as `evaluate_and_update_policy`'s observe would
    see a pass with the strategy `slots` (reach per internal position, player 0's
    values per node), in this solver's layout and without changing its regrets,
    sums or strategy. The pass reuses the iteration's scratch arrays (every pass
    overwrites them; the leaves keep their utilities without a depth limit): fresh
    ones beyond glibc's 32 MiB mapping threshold were page-faulted at every call,
    and a pass over Leduc{3,30}'s whole tree took 57-114 ms instead of 27-40 ms.

    With `deadline` (a time of `now()`) the pass runs serially in blocks of
    EVALUATE_BLOCK entries, the same products and sums in the same order, and
    gives up, without calling observe, when `now()` is past the deadline before a
    block: a process that gets a sliver of a core stops within a block instead of
    finishing the pass (latent TTT's whole-tree pass, about 25 ms, took 1.2 s on
    the overloaded machine). Returns whether observe was called."""
    walk = self._walk
    if len(walk.leaf_nodes):
      raise ValueError("evaluate_strategy needs the whole tree (no depth limit).")
    self._claim_scratch()
    if deadline is None:
      # No player is updated: the tables are read-only arguments.
      self._walk_pass(traversal.NO_PLAYER, slots, self._regrets, 0.0, 1.0, False,
                      False)
    elif not self._blocked_pass(slots, deadline, now):
      return False
    observe(self._reach, self._values)
    return True

  def _blocked_pass(self, slots, deadline, now):
    """evaluate_strategy's pass in blocks (traversal.propagate_reach's and
    accumulate's ranges, serially); False if it stopped at the deadline."""
    walk, reach = self._walk, self._reach
    reach[0] = 1.0
    stop = len(walk.down_parent) + 1
    for start in range(1, stop, EVALUATE_BLOCK):
      if now() > deadline:
        return False
      traversal.propagate_positions(
          start, min(start + EVALUATE_BLOCK, stop), walk.down_parent,
          walk.down_player, walk.down_slot, walk.down_chance_prob, slots, reach)
    stop = len(walk.up_node)
    for start in range(0, stop, EVALUATE_BLOCK):
      if now() > deadline:
        return False
      traversal.accumulate(
          traversal.NO_PLAYER, start, min(start + EVALUATE_BLOCK, stop), walk.up_node,
          walk.up_position, walk.up_first_child, walk.up_num_children, walk.up_player,
          walk.up_slot_offset, walk.chance_prob, slots, reach, self._values,
          self._regrets, self._cumulative, 0.0, 1.0, False, False)
    return True

  def average_strategy_at(self, offset, count):
    """The average strategy at the information set of slots offset..offset+count-1
    (average_strategy_slots' values there, without normalising every slot)."""
    tree, out = self._tree, np.empty(count)
    # (the tree's index types: the kernel compiled for average_strategy_slots)
    flat_tree.normalise_infosets(
        self._cumulative[offset:offset + count],
        np.zeros(1, dtype=tree.infoset_action_offset.dtype),
        np.full(1, count, dtype=tree.infoset_num_actions.dtype), out)
    return out

  def average_strategy_slots(self):
    """The average strategy in slot form; uniform at information sets never reached."""
    return self._tree.normalise_per_infoset(self._cumulative)

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
    """Arrays and counters that `load_state_dict` restores (for resumable runs).

    Includes the utility estimator's random state when it has one, so a resumed
    depth-limited run continues exactly as an uninterrupted one.
    """
    state = {"regrets": self._regrets.copy(), "cumulative": self._cumulative.copy(),
             "strategy": self._strategy.copy(), "iteration": self._iteration,
             "log_weight_scale": self._log_weight_scale,
             "visited_states": self.visited_states}
    if isinstance(self.utility_estimator, contracts.RandomEstimator):
      state["estimator_rng_state"] = self.utility_estimator.rng_state.copy()
    return state

  def load_state_dict(self, state):
    """Restores what `state_dict` returned; raises ValueError (nothing changed) unless
    the arrays have this solver's shapes and finite values (strategy a distribution
    per infoset, cumulative >= 0), and the counters are finite and in range."""
    arrays = {}
    for name in ("regrets", "cumulative", "strategy"):
      try:
        array = np.asarray(state[name], dtype=np.float64)
      except (TypeError, ValueError):
        raise ValueError(f"Solver state {name!r} is not numeric.") from None
      if array.shape != (self._tree.num_infoset_actions,):
        raise ValueError(f"Solver state {name!r} has shape {array.shape}, expected "
                         f"({self._tree.num_infoset_actions},).")
      if not np.all(np.isfinite(array)):
        raise ValueError(f"Solver state {name!r} holds NaN or infinite values.")
      arrays[name] = array
    sums = np.add.reduceat(arrays["strategy"], self._tree.infoset_action_offset)
    if np.any(arrays["cumulative"] < 0) or np.any(arrays["strategy"] < 0) or \
        np.any(np.abs(sums - 1.0) > 1e-6):
      raise ValueError("Solver state has a negative cumulative strategy or a current "
                       "strategy that is not a distribution.")
    iteration = number_ranges.count(state["iteration"], "Solver state 'iteration'")
    visited = number_ranges.count(state["visited_states"],
                                  "Solver state 'visited_states'")
    if "log_weight_scale" in state:
      log_scale = number_ranges.check(state["log_weight_scale"],
                                      "Solver state 'log_weight_scale'", 0.0)
    else:  # checkpoints written before the log-space weights
      log_scale = math.log(number_ranges.check(state["weight_scale"],
                                               "Solver state 'weight_scale'", 1.0))
    self._regrets[:] = arrays["regrets"]
    self._cumulative[:] = arrays["cumulative"]
    self._strategy[:] = arrays["strategy"]
    self._iteration = iteration
    self._log_weight_scale = log_scale
    self.visited_states = visited
    if "estimator_rng_state" in state and isinstance(self.utility_estimator,
                                                     contracts.RandomEstimator):
      self.utility_estimator.rng_state[:] = state["estimator_rng_state"]

  def __deepcopy__(self, memo):
    """A copy (a continual-resolving bot's clone) that shares the passes' scratch
    arrays (`_SCRATCH`) and the read-only walk and copies the rest: the copies
    continue bit for bit as the original (pruned passes weigh the stale values they
    skip by 0, and these stay finite). The whole-game resolver's reach and values are
    26 B a history (docs/reproductions.md, IIGoofspiel{7})."""
    other = type(self).__new__(type(self))
    memo[id(self)] = other
    for key, value in self.__dict__.items():
      other.__dict__[key] = value if key in _SCRATCH else copy.deepcopy(value, memo)
    return other

  def __repr__(self):
    return (f"{type(self).__name__}(rm={self.regret_matcher}, updates="
            f"{'alternating' if self.alternating_updates else 'simultaneous'}, "
            + (f"cse={self.cumulative_strategy_exponent:g}" if self.schedule is None
               else f"schedule={self.schedule}")
            + (", cfrplayground" if self.cfrplayground else "")
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


class PCFRPlusSolver(GeneralCFRSolver):
  """Predictive CFR+ (Farina, Kroer and Sandholm 2021, "Faster game solving via
  predictive Blackwell approachability: connecting regret matching and mirror
  descent"): the matcher prm+ (regret_matching.py; the prediction of the next
  instantaneous regret is the last one), strategy weights t^gamma.

  gamma = 2 (quadratic averaging) is how Xu et al. 2024 and Zhang et al. 2024 run it
  (LiteEFG's example averages linearly: gamma = 1). Alternating updates by default;
  alternating_updates=False updates both players from the same iterate.
  """

  def __init__(self, game, gamma=2.0, alternating_updates=True, **kwargs):
    super().__init__(game, regret_matcher="prm+", alternating_updates=alternating_updates,
                     cumulative_strategy_exponent=gamma, **kwargs)


class DCFRPlusSolver(GeneralCFRSolver):
  """DCFR+ (Xu et al. 2024, "Minimizing weighted counterfactual regret with optimistic
  online mirror descent", IJCAI): the matcher drm+(alpha), R_t = [R_{t-1} (t-1)^alpha /
  ((t-1)^alpha + 1) + r_t]^+, strategy weights t^gamma; the paper's alpha = 1.5,
  gamma = 4, alternating updates.

  The paper's formula is followed; the authors' code (PDCFRPlus, dcfr_plus.py)
  divides by (t-1)^alpha + 1.5, which after 1,000 iterations is 3% lower on kuhn_poker
  and 4x lower on liars_dice(dice_sides=4) (docs/reproductions.md).
  """
  _KIND = regret_matching.DRM_PLUS

  def __init__(self, game, alpha=1.5, gamma=4.0, alternating_updates=True, **kwargs):
    super().__init__(game, regret_matcher=regret_matching.RegretMatcher(
        kind=self._KIND, alpha=float(alpha)), alternating_updates=alternating_updates,
                     cumulative_strategy_exponent=gamma, **kwargs)


class PDCFRPlusSolver(DCFRPlusSolver):
  """PDCFR+ (Xu et al. 2024, "Minimizing weighted counterfactual regret with optimistic
  online mirror descent", IJCAI): DCFR+'s regrets, and the strategy proportional to
  the prediction [R_t t^alpha / (t^alpha + 1) + r_t]^+ (matcher pdrm+(alpha));
  strategy weights t^gamma; the paper's alpha = 2.3, gamma = 5, alternating updates.
  """
  _KIND = regret_matching.PDRM_PLUS

  def __init__(self, game, alpha=2.3, gamma=5.0, alternating_updates=True, **kwargs):
    super().__init__(game, alpha, gamma, alternating_updates, **kwargs)


class HSDCFRSolver(GeneralCFRSolver):
  """HS-DCFR(gamma0) (Zhang, McAleer and Sandholm 2024, "Faster game solving via
  hyperparameter schedules"): DCFR with alpha(t), beta(t) and gamma(t) of
  schedules.py over `horizon` iterations, alternating updates.

  The paper writes DCFR as discount-then-add, R_{t+1} = R_t d_t + r_{t+1}; this runs
  OpenSpiel's add-then-discount order, whose regrets are the paper's times d_t and
  hence give the same strategies. Measured against the paper's claim, HS-DCFR(30)
  beats DCFR after 1,000 iterations only on goofspiel (docs/reproductions.md).
  """

  def __init__(self, game, gamma0=30.0, horizon=schedules.PAPER_HORIZON, **kwargs):
    schedule = schedules.HyperparameterSchedule(gamma0, horizon, discounts=True)
    alpha, beta, _ = schedule.at(0)  # the schedule's start; it sets each iteration's
    super().__init__(game, regret_matcher=regret_matching.RegretMatcher(
        kind=regret_matching.DRM, alpha=alpha, beta=beta), alternating_updates=True,
                     schedule=schedule, **kwargs)


class HSPCFRPlusSolver(GeneralCFRSolver):
  """HS-PCFR+(gamma0) (Zhang, McAleer and Sandholm 2024, "Faster game solving via
  hyperparameter schedules"): PCFR+ (prm+) with the averaging exponent gamma(t) of
  schedules.py over `horizon` iterations; alternating updates by default.
  """

  def __init__(self, game, gamma0=30.0, horizon=schedules.PAPER_HORIZON,
               alternating_updates=True, **kwargs):
    super().__init__(game, regret_matcher="prm+", alternating_updates=alternating_updates,
                     schedule=schedules.HyperparameterSchedule(gamma0, horizon,
                                                               discounts=False),
                     **kwargs)


# [S] Table 5.2's configurations and the thesis's candidate, as GeneralCFRSolver arguments.
PRESETS = presets.CFR_PRESETS
