"""Compiled VR-MCCFR / MC-CFR on gadget views, as continual resolving samples
([S] §3.3.3, ch. 2, App. A.5).

`ViewSampler` is subgame_solvers.SamplingSolver on a gadget_views.GadgetView's tree
(the pyspiel gadget's compiled tree node for node): compiled_outcome_sampling's
kernel with the live path's semantics switched on by arrays over the view's nodes:
CFR-D-aware sampling at the resolve gadget's follow/terminate node (Follow walked
with probability 1, Terminate valued exactly), playouts for new information sets
only at or below the bot's next turn in another subgame (recall.END, so every next
root a sample passes is valued), and the sampled values at the next roots, weighted
by w(h)/q(h), scatter-added into next_root_estimates.SampledNextRootEstimates. It
draws from the same SplitMix64 stream in the same order as the live solver, so with
equal seeds both hold the same tables and estimates to rounding
(tests/test_view_sampling.py). The in-place SubgameView is not sampled (yet): the
compiled path copies a subgame for the sampling solvers.
"""

import numpy as np

from ggp_cr.algorithms.resolving import next_root_estimates
from ggp_cr.algorithms.resolving import recall
from ggp_cr.algorithms.sampling import compiled_outcome_sampling


def initial_track(view):
  """The tracking state at the view's root (tracing.Problem.initial_track)."""
  if view.variant is None and int(view.tree.node_player[0]) == view.player:
    return recall.CURRENT
  return recall.FIRST


class ViewSampler:
  """The sampling solver of a resolver.ResolverConfig `config` on `view` (module
  docstring), collecting estimates at the next roots of `trace`
  (compiled_subgames.SubgameTrace of view.player below the view's roots).

  Attributes: `solver` (the compiled_outcome_sampling solver; the view's average
  strategy is its), `estimates` (SampledNextRootEstimates of `trace`)."""

  def __init__(self, view, trace, config, seed):
    if not config.sampling:
      raise ValueError(f"ViewSampler runs the sampling solvers "
                       f"(vr_mccfr, mc_cfr), not {config.solver!r}.")
    tree = view.tree
    self.view = view
    self.solver = compiled_outcome_sampling.CompiledOutcomeSamplingSolver(
        tree, regret_matcher=config.regret_matcher, exploration=config.exploration,
        cumulative_strategy_exponent=config.cumulative_strategy_exponent,
        baseline=config.baseline, seed=seed)
    gate = np.zeros(0, np.int8)
    if view.variant == "resolve" and config.cfrd_aware_sampling:
      infoset = tree.node_infoset
      gate = ((infoset >= 0) & (view.infoset_source[np.maximum(infoset, 0)] < 0)
              ).astype(np.int8)
    self._gate = gate
    self._root_w = np.full(tree.num_nodes, -1.0)
    self._root_w[view.root_copies] = view.w[view.active_roots]
    self._next_root = np.full(tree.num_nodes, -1, np.int64)
    self.estimates = None
    self.collect(trace)

  def collect(self, trace):
    """Collects the estimates of `trace`'s next roots from now on (fresh sums; the
    next roots' node map is reset, not reallocated: a deferred subgame's move)."""
    if self.estimates is not None:
      self._next_root[self.estimates.local_nodes] = -1
    view = self.view
    self.estimates = next_root_estimates.SampledNextRootEstimates(
        view, trace, self.solver.average_strategy_slots)
    local = self.estimates.local_nodes
    self._next_root[local] = np.arange(len(local))
    self.solver.set_resolving(
        self._gate, initial_track(view), self._next_root, self._root_w, view.local_root,
        view.scale, view.shift, view.player, self.estimates.value_sum,
        self.estimates.weight_sum)

  @property
  def iterations(self):
    return self.solver.iterations

  def run(self, iterations):
    """`iterations` iterations (one episode per player each)."""
    self.solver.run(iterations)
    self.estimates.iterations += int(iterations)

  def average_strategy_slots(self):
    return self.solver.average_strategy_slots()

  targeting_probability = 0.0  # contracts.SumsSolver: no targeting ([S] §5.2.2)

  def runs_on(self, tree):
    """Whether `tree` is the whole game's tree of this view (contracts.SumsSolver)."""
    return tree.game_string == self.view.whole.game_string

  def average_sums(self, tree, infoset):
    """{action: average-strategy sum} at whole-tree infoset `infoset` (empty outside
    the view; contracts.SumsSolver)."""
    local = int(self.view.local_infoset[infoset])
    if local < 0:
      return {}
    return self.solver.average_sums(self.view.tree, local)
