"""One whole-tree CFR iteration as numba kernels ([S] §1.3): a pass on one thread or
on several (walk_pass, split_pass), the matcher's end-of-iteration step, and batches of
iterations in one call (run_iterations); cfr.py's solvers drive them."""

import numba
import numpy as np

from ggp_cr.algorithms.cfr import grouped_walk
from ggp_cr.algorithms.cfr import parallel_passes
from ggp_cr.algorithms.cfr import regret_matching
from ggp_cr.algorithms.cfr import traversal

_BOTH_PLAYERS = traversal.BOTH_PLAYERS
_index = traversal.unsigned_index


# The end-of-iteration kernels divide only by positive numbers (a positive regret sum,
# an action count, t^alpha + 1), so numpy's error model (no zero-divisor test before
# each division) changes no result: a leduc_poker end step 6.0 -> 4.7 us a player.
@numba.njit(cache=True, error_model="numpy")
def end_iteration(infosets, infoset_action_offset, infoset_num_actions, regrets,
                   strategy, params, iteration):
  """The matcher's end-of-iteration step and new current strategy of `infosets`
  (the step's multipliers and the matcher's params read once, not per information
  set, with run_iterations and the inlined helpers: a leduc_poker DCFR iteration
  from 130 to 78 us, docs/benchmarks.md note 11)."""
  positive, negative = regret_matching.discount_multipliers(params, iteration)
  kind = params[regret_matching.PARAM_KIND]
  exploration = params[regret_matching.PARAM_EXPLORATION]
  for i in infosets:
    offset = infoset_action_offset[_index(i)]
    count = infoset_num_actions[_index(i)]
    regret_matching.discount_with(regrets, offset, count, kind, positive, negative)
    regret_matching.matched_strategy(regrets, strategy, offset, count, exploration)


@numba.njit(cache=True, error_model="numpy")
def end_iteration_with_instant(infosets, infoset_action_offset, infoset_num_actions,
                               regrets, instant, strategy, params, iteration):
  """`end_iteration` of the matchers that keep the iteration's instantaneous regrets
  apart (drm+, pdrm+): folds `instant` into `regrets` and zeroes it."""
  previous, current = regret_matching.instant_multipliers(params, iteration)
  kind = params[regret_matching.PARAM_KIND]
  exploration = params[regret_matching.PARAM_EXPLORATION]
  for i in infosets:
    regret_matching.update_with_instant(regrets, instant, strategy,
                                        infoset_action_offset[_index(i)],
                                        infoset_num_actions[_index(i)], kind,
                                        exploration, previous, current)


@numba.njit(cache=True)
def end_infosets(infosets, end):
  """`end_iteration` (`end_iteration_with_instant` if the iteration's matcher keeps
  instantaneous regrets) of `infosets`; `end` is (infoset_action_offset,
  infoset_num_actions, regrets, instant, with_instant, strategy, params, iteration)."""
  (action_offset, num_actions, regrets, instant, with_instant, strategy, params,
   iteration) = end
  if with_instant:
    end_iteration_with_instant(infosets, action_offset, num_actions, regrets, instant,
                               strategy, params, iteration)
  else:
    end_iteration(infosets, action_offset, num_actions, regrets, strategy, params,
                  iteration)


@numba.njit(cache=True)
def walk_pass(workers, split, update_player, down_parent, down_player, down_slot,
              down_chance_prob, up_node, up_position, up_first_child, up_num_children,
              up_player, up_slot_offset, chance_prob, strategy, reach, values, target,
              cumulative, strategy_weight, visit_decay, clip_per_history,
              chance_weighted, finish, infosets, end):
  """traversal.propagate_reach and accumulate over the whole walk (their arguments;
  `target` receives the regret increments), then if `finish` end_infosets(infosets,
  end): on `workers` threads (split_pass) if `split` (parallel_passes' PassPlans.
  arrays, whose updated information sets are `infosets`) has units, else serially;
  the results are the serial pass's bit for bit. Returns whether it ran on threads."""
  if workers > 1 and len(split[0]) > 1:
    split_pass(workers, split, update_player, down_parent, down_player, down_slot,
               down_chance_prob, up_node, up_position, up_first_child,
               up_num_children, up_player, up_slot_offset, chance_prob, strategy,
               reach, values, target, cumulative, strategy_weight, visit_decay,
               clip_per_history, chance_weighted, finish, end)
    return True
  traversal.propagate_reach(down_parent, down_player, down_slot, down_chance_prob,
                            strategy, reach)
  _accumulate_then_end(update_player, up_node, up_position, up_first_child,
                       up_num_children, up_player, up_slot_offset, chance_prob,
                       strategy, reach, values, target, cumulative, strategy_weight,
                       visit_decay, clip_per_history, chance_weighted, finish,
                       infosets, end)
  return False


@numba.njit(cache=True)
def _accumulate_then_end(update_player, up_node, up_position, up_first_child,
                         up_num_children, up_player, up_slot_offset, chance_prob,
                         strategy, reach, values, target, cumulative, strategy_weight,
                         visit_decay, clip_per_history, chance_weighted, finish,
                         infosets, end):
  """traversal.accumulate over all of the up_* entries, then if `finish`
  end_infosets(infosets, end): a serial pass's bottom-up half, or split_pass's top."""
  traversal.accumulate(update_player, 0, len(up_node), up_node, up_position,
                       up_first_child, up_num_children, up_player, up_slot_offset,
                       chance_prob, strategy, reach, values, target, cumulative,
                       strategy_weight, visit_decay, clip_per_history, chance_weighted)
  if finish:
    end_infosets(infosets, end)


@numba.njit(cache=True, parallel=True)
def split_pass(workers, split, update_player, down_parent, down_player, down_slot,
               down_chance_prob, up_node, up_position, up_first_child, up_num_children,
               up_player, up_slot_offset, chance_prob, strategy, reach, values, target,
               cumulative, strategy_weight, visit_decay, clip_per_history,
               chance_weighted, finish, end):
  """walk_pass on threads, one parallel region: the reach above the split; on
  `workers` threads, their units (parallel_passes.thread_units) and, if `finish`,
  the end of their units' information sets (no other thread reads those slots
  afterwards: units share no updated information set); then accumulate above the
  split in post-order and the end of the other information sets."""
  top_node, top_position, top_first_child = split[5], split[6], split[7]
  top_num_children, top_player, top_slot_offset = split[8], split[9], split[10]
  infoset_ptr, unit_infosets, top_infosets = split[11], split[12], split[13]
  reach[0, 0] = 1.0
  reach[0, 1] = 1.0
  reach[0, 2] = 1.0
  # Breadth-first order: the positions above the split are 0..len(top_node)-1.
  traversal.propagate_positions(1, len(top_node), down_parent, down_player, down_slot,
                                down_chance_prob, strategy, reach)
  for w in numba.prange(workers):
    parallel_passes.thread_units(
        w, workers, split, update_player, down_parent, down_player, down_slot,
        down_chance_prob, up_node, up_position, up_first_child, up_num_children,
        up_player, up_slot_offset, chance_prob, strategy, reach, values, target,
        cumulative, strategy_weight, visit_decay, clip_per_history, chance_weighted)
    if finish:
      for u in parallel_passes.worker_units(w, workers, len(infoset_ptr) - 1):
        end_infosets(unit_infosets[infoset_ptr[u]:infoset_ptr[u + 1]], end)
  _accumulate_then_end(update_player, top_node, top_position, top_first_child,
                       top_num_children, top_player, top_slot_offset, chance_prob,
                       strategy, reach, values, target, cumulative, strategy_weight,
                       visit_decay, clip_per_history, chance_weighted, finish,
                       top_infosets, end)


@numba.njit(cache=True)
def scale_infosets(infosets, infoset_action_offset, infoset_num_actions, values,
                   factor):
  """values[slots of `infosets`] *= factor (a scheduled averaging discount)."""
  for i in infosets:
    offset = infoset_action_offset[i]
    for a in range(offset, offset + infoset_num_actions[i]):
      values[a] *= factor


@numba.njit(cache=True)
def run_iterations(alternating, infosets_0, infosets_1, all_infosets, action_offset,
                   num_actions, down_parent, down_player, down_slot, down_chance_prob,
                   up_node, up_position, up_first_child, up_num_children, up_player,
                   up_slot_offset, up_parent, up_start, player_sums_0,
                   player_sums_1, chance_prob, strategy, reach, values, regrets,
                   instant, with_instant, cumulative, params, scalars, workers,
                   split_0, split_1, split_both, prune, grouped):
  """CFR iterations on the whole tree without returning to Python, one per row of
  `scalars` (t, strategy weight, decay of the sums, rescale of the sums, scheduled
  alpha and beta or nan), each exactly as GeneralCFRSolver.evaluate_and_update_policy
  runs it: Python's per-iteration calls cost a leduc_poker iteration 10-15%. The
  passes run on `workers` threads with the split arrays of player 0's, player 1's
  and simultaneous passes (walk_pass, which also runs the end of the iteration).
  With alternating updates a one-thread pass after the call's first redoes only the
  reach column of the player updated last. With `prune` (alternating updates only) a
  one-thread pass skips the subtrees the opponent or chance never reaches
  (traversal.accumulate_pruned, the sums added by traversal.add_sums over
  `player_sums_0` or `_1`, TraversalTree.player_sums; the values there are left
  stale); without, it runs
  grouped_walk.accumulate_grouped over `grouped` (GroupedEntries.arrays() of the
  walk) if that has entries, else traversal.accumulate. Returns how many passes ran
  on threads."""
  target = instant if with_instant else regrets
  threaded = 0
  full_reach = True  # the first pass; later ones redo only the changed player's column
  for row in range(scalars.shape[0]):
    t = scalars[row, 0]
    weight = scalars[row, 1]
    decay = scalars[row, 2]
    rescale = scalars[row, 3]
    if rescale != 1.0:
      for a in range(len(cumulative)):
        cumulative[a] *= rescale
    if not np.isnan(scalars[row, 4]):
      params[regret_matching.PARAM_ALPHA] = scalars[row, 4]
      params[regret_matching.PARAM_BETA] = scalars[row, 5]
    for update in range(2 if alternating else 1):
      player = update if alternating else _BOTH_PLAYERS
      infosets = all_infosets if not alternating else (
          infosets_0 if update == 0 else infosets_1)
      if decay != 1.0:
        scale_infosets(infosets, action_offset, num_actions, cumulative, decay)
      if workers > 1:
        end = (action_offset, num_actions, regrets, instant, with_instant, strategy,
               params, t)
        split = split_both if not alternating else (split_0 if update == 0 else
                                                    split_1)
        threaded += walk_pass(
            workers, split, player, down_parent, down_player, down_slot,
            down_chance_prob, up_node, up_position, up_first_child, up_num_children,
            up_player, up_slot_offset, chance_prob, strategy, reach, values, target,
            cumulative, weight, 1.0, False, False, True, infosets, end)
        continue
      # One thread: walk_pass's serial branch written out, its flags constant (the
      # dispatch through walk_pass cost a leduc_poker iteration about 5%).
      if full_reach or not alternating:
        traversal.propagate_reach(down_parent, down_player, down_slot,
                                  down_chance_prob, strategy, reach)
        full_reach = False
      else:  # alternating: the previous pass changed only the other player's strategy
        traversal.propagate_column(1 - player, 1, len(down_parent) + 1, down_parent,
                                   down_player, down_slot, strategy, reach)
      if prune:
        sums = player_sums_0 if player == 0 else player_sums_1
        traversal.add_sums(player, sums[0], sums[1], sums[2], strategy, reach,
                           cumulative, weight)
        traversal.accumulate_pruned(
            player, 0, len(up_node), up_node, up_position, up_first_child,
            up_num_children, up_player, up_slot_offset, up_parent, up_start,
            chance_prob, strategy, reach, values, target, -1)
      elif len(grouped[1]):
        grouped_walk.accumulate_grouped(player, grouped, chance_prob, strategy, reach,
                                        values, target, cumulative, weight)
      else:
        traversal.accumulate(player, 0, len(up_node), up_node, up_position,
                             up_first_child, up_num_children, up_player, up_slot_offset,
                             chance_prob, strategy, reach, values, target, cumulative,
                             weight, 1.0, False, False)
      if with_instant:
        end_iteration_with_instant(infosets, action_offset, num_actions, regrets,
                                   instant, strategy, params, t)
      else:
        end_iteration(infosets, action_offset, num_actions, regrets, strategy, params,
                      t)
  return threaded
