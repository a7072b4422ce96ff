"""The next subgames' inputs from a solved gadget view ([S] ch. 2, §6).

`NextRootEstimates` accumulates w, o's reach and CBV at the next roots by scatter-adds,
each CFR+ iteration's exact self-play values (continual_resolving's full-width
convention); `exact_next_root_inputs` gives exact counterfactual best-response values
instead (the bot's use_cbr), from one whole-tree pass.
"""

import copy

import numba
import numpy as np

from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.resolving.gadget import prefix as gadget_prefix
from ggp_cr.algorithms.tree import flat_tree

_CHANCE = -1
_original_value = numba.njit(cache=True, inline="always")(
    gadget_prefix.original_values)


@numba.njit(cache=True)
def _climb(node_parent, node_player, node_infoset, node_action_index,
           node_chance_prob, infoset_action_offset, slots, local, copies, player):
  """(chance × `player`'s reach, the other player's reach) of each node `local[i]`
  from the node `copies[i]` above it, under the strategy `slots`."""
  own = np.ones(len(local))
  other = np.ones(len(local))
  for i in range(len(local)):
    node = local[i]
    while node != copies[i]:
      parent = node_parent[node]
      acting = node_player[parent]
      if acting == _CHANCE:
        own[i] *= node_chance_prob[node]
      else:
        p = slots[infoset_action_offset[node_infoset[parent]] + node_action_index[node]]
        if acting == player:
          own[i] *= p
        else:
          other[i] *= p
      node = parent
  return own, other


class NextRootEstimates:
  """The next subgames' inputs collected while CFR+ solves `view` ([S] ch. 2, §6).

  `trace` is the SubgameTrace of view.player below the view's roots
  (`view.trace(state_keys)`). After each iteration, `add(strategy)` adds the exact
  self-play quantities of that iteration's current strategy at every next root r:
  w(r) = π_{-o}(r) (the view's w times chance and p's reach from r's root), o's reach
  (the view's opponent_reach times o's reach from the root), and w(r)·v_o(r) with
  v_o in the original game's units: continual_resolving's full-width convention.
  `inputs(group)` turns the means into a next gadget's inputs by scatter-adds.
  """

  def __init__(self, view, trace):
    self.view = view
    self.trace = trace
    self.iterations = 0
    self._j, self._local, self._copies = view.locate(trace)
    self._position = None
    self._w = view.w[view.active_roots][self._j]
    self._prior = view.opponent_reach[view.active_roots][self._j]
    num = trace.num_next_roots
    self.reach_sum = np.zeros(num)
    self.opponent_reach_sum = np.zeros(num)
    self.value_sum = np.zeros(num)
    self.weight_sum = np.zeros(num)

  def fresh(self):
    """Estimates of the same view and trace with nothing added (sharing the next
    roots' located nodes: no climb)."""
    other = copy.copy(self)
    other.iterations = 0
    for name in ("reach_sum", "opponent_reach_sum", "value_sum", "weight_sum"):
      setattr(other, name, np.zeros_like(getattr(self, name)))
    return other

  def add(self, strategy, deadline=None):
    """Adds one iteration's quantities for the strategy `strategy` (the view's slot
    form, e.g. its average strategy); with `deadline` (time.perf_counter()) nothing
    is added if the view's pass gives up there (GadgetView.evaluate). Returns
    whether they were added."""
    return self.view.evaluate(strategy, self.observe, deadline)

  def observe(self, reach, values):
    """Adds one iteration's quantities from a CFR pass on the view: `reach[k]` the
    (player 0, player 1, chance) reach of the view's internal position k, `values[n]`
    player 0's value below the view's node n (cfr.GeneralCFRSolver.
    evaluate_and_update_policy's `observe`)."""
    view = self.view
    if self._position is None:
      self._position = (view.positions(self._local), view.positions(self._copies),
                        view.value_nodes(self._local),
                        np.asarray(view.shift, dtype=np.float64)[self._j],
                        np.asarray(view.scale, dtype=np.float64)[self._j])
    local_position, copy_position, value_node, shift, scale = self._position
    self.iterations += 1
    _observe(view.player, float(view.utility_sum), local_position, copy_position,
             value_node, self._w, self._prior, shift, scale, reach, values,
             self.reach_sum, self.opponent_reach_sum, self.value_sum, self.weight_sum)

  @property
  def local_nodes(self):
    """The view's node of each next root."""
    return self._local

  def means(self):
    """(mean w, mean o reach) per next root over the iterations added."""
    count = max(self.iterations, 1)
    return self.reach_sum / count, self.opponent_reach_sum / count

  def group_means(self, group):
    """`means` of the next roots `group`."""
    reach, opponent_reach = self.means()
    return reach[group], opponent_reach[group]

  def inputs(self, group, unsampled_value=None, exact=None):
    """(w, o's reach, {o's key: CBV}) of the next roots `group` (indices into
    trace.next_roots): k_I = Σ_{r∈I} mean w(r), CBV(I) = k_I · Σ w v_o / Σ w.
    A key with k_I > 0 but no weight gets k_I times its value in `exact` (a callable
    giving {key: CBV_norm} for such keys, e.g. `exact_normalised_values`) or else
    `unsampled_value` (default: the game's minimum utility), as the live path."""
    group = np.asarray(group, dtype=np.int64)
    reach, opponent_reach = self.group_means(group)
    keys, _, inverse = flat_tree.unique_ids(self.trace.next_root_key[group])
    k = np.bincount(inverse, weights=reach, minlength=len(keys))
    total = np.bincount(inverse, weights=self.value_sum[group], minlength=len(keys))
    weight = np.bincount(inverse, weights=self.weight_sum[group], minlength=len(keys))
    if unsampled_value is None:
      unsampled_value = self.view.whole.game.min_utility()
    unsampled = (k > 0) & ~(weight > 0)
    known = exact() if exact is not None and unsampled.any() else {}
    cbv = {}
    for key, k_i, t, wt in zip(keys.tolist(), k.tolist(), total.tolist(),
                               weight.tolist()):
      if k_i > 0:
        cbv[key] = k_i * t / wt if wt > 0 else k_i * known.get(key, unsampled_value)
    self.unsampled = int(unsampled.sum())
    return reach, opponent_reach, cbv


class SampledNextRootEstimates(NextRootEstimates):
  """The next subgames' inputs collected while VR-MCCFR / MC-CFR samples `view`
  (view_sampling.py): the sampled values weighted by w(h)/q(h) go into value_sum /
  weight_sum (the kernel's scatter-adds), and the mean w and o's reach are those of
  the solver's average strategy `average()` (for plain averaging
  Σ_t π^{σ^t} = T π^{σ̄}) from each next root's root on, continual_resolving's
  sampling convention (o's gadget infosets above the roots do not count). `tree` is
  the tree of the view's nodes and of `average`'s slots (default: view.tree; an
  in-place view's: the whole tree)."""

  def __init__(self, view, trace, average, tree=None):
    super().__init__(view, trace)
    self._average = average
    self._tree = view.tree if tree is None else tree

  def group_means(self, group):
    """(w, o's reach) of the next roots `group` under the average strategy, each
    climbed from the root to its active root (depth × roots, not a tree pass)."""
    tree = self._tree
    own, other = _climb(
        tree.node_parent, tree.node_player, tree.node_infoset, tree.node_action_index,
        tree.node_chance_prob, tree.infoset_action_offset, self._average(),
        self._local[group], self._copies[group], self.view.player)
    return self._w[group] * own, self._prior[group] * other

  def means(self):
    return self.group_means(np.arange(self.trace.num_next_roots))


@numba.njit(cache=True)
def _observe(player, utility_sum, local_position, copy_position, value_node, w0, prior,
             shift, scale, reach, values, reach_sum, opponent_reach_sum, value_sum,
             weight_sum):
  """NextRootEstimates.observe's sums, per next root i: w = w0 · π_p π_c from its
  root, o's reach relative to its root times the prior, o's value in the original
  game's units ((u_o + shift) / scale of the view's payoff)."""
  opponent = 1 - player
  for i in range(len(value_node)):
    k, c = local_position[i], copy_position[i]
    # The live path's order of operations (live_solvers.FullWidthSolver: w0 over
    # the root's reach, times the reach): equal reaches give bitwise equal w, so
    # RM+'s ties (dl_cfr+'s playout values) break the same way on both paths.
    w = w0[i] / (reach[c, player] * reach[c, 2]) * reach[k, player] * reach[k, 2]
    at_root = reach[c, opponent]
    ratio = reach[k, opponent] / at_root if at_root > 0 else 0.0
    value = values[value_node[i]]
    if opponent == 1:
      value = utility_sum - value
    value = _original_value(value, scale[i], shift[i])
    reach_sum[i] += w
    opponent_reach_sum[i] += prior[i] * ratio
    value_sum[i] += w * value
    weight_sum[i] += w


def solve_with_estimates(view, estimates, iterations):
  """`iterations` CFR+ iterations on `view`, adding each iteration's estimates. A
  depth-limited solver's pass holds playout estimates at its cut histories: its
  estimates are then the exact values of the iteration's starting strategy (one
  pass of their own, uniform where the strategy was never updated: the random
  playout's expectation), as the live path's (live_solvers.FullWidthSolver)."""
  solver = view.solver
  for _ in range(iterations):
    if getattr(solver, "depth_limit", None) is None:
      solver.evaluate_and_update_policy(estimates.observe)
      continue
    strategy = solver.current_strategy_slots()
    solver.evaluate_and_update_policy()
    estimates.add(strategy)


def exact_normalised_values(tree, profile, player, next_roots, next_root_keys):
  """{o's key: CBV_norm(I)} of o's counterfactual best response to `profile` at the
  whole-tree next roots, over the keys with positive exact reach ([H] Def. 5's value
  that safe resolving keeps; the live path's values of unsampled keys)."""
  w, _, cbv = exact_next_root_inputs(tree, profile, player, next_roots, next_root_keys)
  keys, inverse = np.unique(next_root_keys, return_inverse=True)
  k = np.bincount(inverse.reshape(-1), weights=w, minlength=len(keys))
  return {key: cbv[key] / k_i for key, k_i in zip(keys.tolist(), k.tolist())
          if k_i > 0}


def exact_next_root_inputs(tree, profile, player, next_roots, next_root_keys):
  """(w, o's reach, {o's key: CBV}) at whole-tree nodes `next_roots` from a whole
  profile (e.g. view.combine(trunk)): w and o's reach from `profile`, CBV from o's
  counterfactual best response to it ([H] §E.1; the bot's use_cbr)."""
  opponent = 1 - player
  reach = tree.node_reaches(profile)
  _, response = exact_br.best_response_slots(tree, profile, opponent)
  values = tree.node_values(response)[next_roots]
  if opponent == 1:
    values = tree.utility_sum - values
  w = reach[player, next_roots] * reach[2, next_roots]
  keys, inverse = np.unique(next_root_keys, return_inverse=True)
  cbv = np.bincount(inverse.reshape(-1), weights=w * values, minlength=len(keys))
  return w, reach[opponent, next_roots], dict(zip(keys.tolist(), cbv.tolist()))
