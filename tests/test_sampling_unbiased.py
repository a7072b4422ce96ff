"""Unbiasedness oracles of every sampling estimator ([S] §1.3.3-1.3.4, [M] ch. 4-5).

MCCFR's estimates are unbiased (Lanctot et al. 2009): from a fixed strategy sigma, the
expected regret increment of one iteration at (I, a) is the full-width counterfactual
regret sum_{h in I} pi_-i(h) (u_i(ha) - u_i(h)), and the expected cumulative-strategy
increment of stochastically weighted averaging is sigma(I) sum_{h in I} pi_own(h)
pi_c(h). Both are computed exactly here on the compiled tree (`node_reaches`,
`node_values`), independently of the solvers, and compared with the mean of many
seeded one-iteration increments within a few standard errors.

Each sample starts from the same tables: regrets = SCALE * sigma, so that regret
matching plays sigma, and SCALE so large that the first episode's update (player 0's)
changes the strategy player 1's episode sees by < 1e-7; cumulative sums and baselines
reset to fixed values. Baselines are random, not zero, so that a wrong correction
term shows. Games: kuhn_poker and a small thesis-mode python_leduc, whose chance
probabilities differ between the histories of one information set.
"""

import numpy as np
import pyspiel
import pytest

from ggp_cr.algorithms.sampling import compiled_outcome_sampling
from ggp_cr.algorithms.sampling import external_sampling
from ggp_cr.algorithms.sampling import outcome_sampling
from ggp_cr.algorithms.tree import compiled_tree

KUHN = "kuhn_poker"
SMALL_LEDUC = "python_leduc(cards_per_suit=2,max_raises=1)"
SCALE = 1e9
# Largest |mean - exact| / standard error allowed over all slots (a few hundred
# slots per test, so a normal z would exceed 5 with probability < 1e-4).
MAX_Z = 5.0
MIN_HITS = 30


def _tree(game_string):
  return compiled_tree.cached_tree(pyspiel.load_game(game_string))


def _fixed_strategy(tree, seed):
  """A non-uniform strategy with every probability >= 0.3 / |A|."""
  mixed = tree.random_slots(np.random.default_rng(seed))
  return 0.7 * mixed + 0.3 * tree.uniform_slots()


def exact_increments(tree, slots):
  """(expected regret increment, expected cumulative-strategy increment) per slot of
  one alternating-updates iteration from `slots`, by full-width recursion."""
  reach = tree.node_reaches(slots)
  values0 = tree.node_values(slots)
  values = (values0, tree.utility_sum - values0)
  regrets = np.zeros(tree.num_infoset_actions)
  cumulative = np.zeros(tree.num_infoset_actions)
  for node in np.flatnonzero(tree.node_player >= 0).tolist():
    player = int(tree.node_player[node])
    offset = int(tree.infoset_action_offset[tree.node_infoset[node]])
    count = int(tree.node_num_children[node])
    first = int(tree.node_first_child[node])
    children = np.arange(first, first + count)
    u = values[player]
    regrets[offset:offset + count] += (reach[1 - player, node] * reach[2, node] *
                                       (u[children] - u[node]))
    cumulative[offset:offset + count] += (reach[player, node] * reach[2, node] *
                                          slots[offset:offset + count])
  return regrets, cumulative


def _assert_unbiased(samples, exact, what):
  """Every slot's mean within MAX_Z standard errors of `exact`.

  Importance-weighted increments are heavy-tailed: at a slot hit by a handful of
  samples the sample standard error is unreliable, so only slots with at least
  MIN_HITS nonzero increments are held to it (the rest must merely be finite);
  those must be more than 30% of the slots.
  """
  samples = np.asarray(samples)
  assert np.all(np.isfinite(samples)), what
  hits = (samples != 0.0).sum(axis=0)
  mean = samples.mean(axis=0)
  error = samples.std(axis=0, ddof=1) / np.sqrt(len(samples))
  deviation = np.abs(mean - exact)
  tested = hits >= MIN_HITS
  assert tested.mean() > 0.3, (what, tested.mean())
  z = deviation[tested] / error[tested]
  assert z.max() < MAX_Z, (what, z.max(), mean[tested], exact[tested])


def _check_against_exact(tree, slots, regret_samples, cumulative_samples):
  exact_regrets, exact_cumulative = exact_increments(tree, slots)
  # The oracle is not trivially zero: the check has something to detect.
  assert np.abs(exact_regrets).max() > 0.05
  _assert_unbiased(regret_samples, exact_regrets, "regrets")
  _assert_unbiased(cumulative_samples, exact_cumulative, "cumulative strategy")


def _sample_live(solver, tree, slots, num_samples, baselines=None, cumulative=None):
  """One-iteration increments of a live solver (table keyed by information state)."""
  cumulative = np.zeros(tree.num_infoset_actions) if cumulative is None else cumulative
  table = solver.table
  entries = []
  for infoset, key in enumerate(tree.infoset_keys):
    offset = int(tree.infoset_action_offset[infoset])
    stop = offset + int(tree.infoset_num_actions[infoset])
    data = outcome_sampling.InfosetData(tree.infoset_actions[offset:stop].tolist(),
                                        baselines is not None)
    table[key] = data
    entries.append((data, offset, stop))
  regret_samples = np.empty((num_samples, tree.num_infoset_actions))
  cumulative_samples = np.empty((num_samples, tree.num_infoset_actions))
  for sample in range(num_samples):
    for data, offset, stop in entries:
      data.regrets[:] = SCALE * slots[offset:stop]
      data.cumulative[:] = cumulative[offset:stop]
      if baselines is not None:
        data.baselines[:] = baselines[:, offset:stop]
    solver.iteration()
    for data, offset, stop in entries:
      regret_samples[sample, offset:stop] = data.regrets - SCALE * slots[offset:stop]
      cumulative_samples[sample, offset:stop] = data.cumulative - cumulative[offset:stop]
  return regret_samples, cumulative_samples


def _sample_compiled(solver, slots, num_samples, baselines=None):
  regret_samples = np.empty((num_samples, len(slots)))
  cumulative_samples = np.empty((num_samples, len(slots)))
  for sample in range(num_samples):
    solver.regrets[:] = SCALE * slots
    solver.cumulative[:] = 0.0
    if baselines is not None:
      solver.baselines[:] = baselines
    solver.run(1)
    regret_samples[sample] = solver.regrets - SCALE * slots
    cumulative_samples[sample] = solver.cumulative
  return regret_samples, cumulative_samples


def _random_baselines(tree, seed):
  return np.random.default_rng(seed).uniform(-2.0, 2.0, (2, tree.num_infoset_actions))


_GAMES = [(KUHN, 20000, 4000), (SMALL_LEDUC, 20000, 3000)]


@pytest.mark.parametrize("with_baseline", [False, True])
@pytest.mark.parametrize("game_string,compiled_samples,live_samples", _GAMES)
def test_outcome_sampling_increments_are_unbiased(game_string, compiled_samples,
                                                  live_samples, with_baseline):
  tree = _tree(game_string)
  slots = _fixed_strategy(tree, 1)
  baselines = _random_baselines(tree, 2) if with_baseline else None
  baseline = "expavg(0.5)" if with_baseline else None
  compiled = compiled_outcome_sampling.CompiledOutcomeSamplingSolver(
      tree, exploration=0.4, baseline=baseline, incremental=False, seed=3)
  _check_against_exact(tree, slots, *_sample_compiled(compiled, slots,
                                                      compiled_samples, baselines))
  live = outcome_sampling.OutcomeSamplingSolver(
      tree.game, exploration=0.4, baseline=baseline, seed=4)
  _check_against_exact(tree, slots, *_sample_live(live, tree, slots, live_samples,
                                                  baselines))


@pytest.mark.parametrize("game_string,_,live_samples", _GAMES)
def test_external_sampling_increments_are_unbiased(game_string, _, live_samples):
  tree = _tree(game_string)
  slots = _fixed_strategy(tree, 5)
  solver = external_sampling.ExternalSamplingSolver(tree.game, seed=6)
  _check_against_exact(tree, slots, *_sample_live(solver, tree, slots, live_samples))


@pytest.mark.parametrize("per_node", [False, True])
@pytest.mark.parametrize("game_string,_,live_samples", _GAMES)
def test_mixed_sampling_increments_are_unbiased(game_string, _, live_samples,
                                                per_node):
  tree = _tree(game_string)
  slots = _fixed_strategy(tree, 7)
  solver = external_sampling.MixedSamplingSolver(
      tree.game, schedule=lambda i: 0.5, per_node=per_node, exploration=0.3, seed=8)
  _check_against_exact(tree, slots, *_sample_live(solver, tree, slots, live_samples))
  # Both kinds of node were sampled.
  assert solver.outcome_nodes > 0 and solver.external_nodes > 0


@pytest.mark.parametrize("game_string,_,live_samples", _GAMES)
def test_locus_sampling_increments_are_unbiased(game_string, _, live_samples):
  tree = _tree(game_string)
  slots = _fixed_strategy(tree, 9)
  # Average strategies whose largest probability is near the Beta(60, 10) cutoff's
  # mean 6/7, so that nodes are sampled OS- or ES-style at random; scaled up so that
  # one iteration barely moves them.
  peaked = np.where(np.arange(tree.num_infoset_actions) ==
                    tree.infoset_action_offset[tree.slot_infoset], 0.86,
                    0.14 / (tree.infoset_num_actions[tree.slot_infoset] - 1))
  solver = external_sampling.LocusSamplingSolver(
      tree.game, criterion="visits", visit_threshold=0, exploration=0.3, seed=10)
  _check_against_exact(tree, slots, *_sample_live(solver, tree, slots, live_samples,
                                                  cumulative=1e6 * peaked))
  assert solver.outcome_nodes > 0 and solver.external_nodes > 0
