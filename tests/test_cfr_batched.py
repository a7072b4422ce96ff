"""GeneralCFRSolver.iterate's batched kernel (iteration_kernels.run_iterations) against the
per-iteration path (evaluate_and_update_policy): equal iteration by iteration for
every full-width solver of the family, across batch boundaries, with and without
skipping the subtrees the opponent never reaches."""

import numpy as np
import pytest

from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.tree import compiled_tree

_SPECS = ("cfr", "cfr-au", "cfr+", "cfr+2", "lcfr", "deepstack-cfr", "thesis-dcfr",
          "dcfr", "dcfr(updates=simultaneous)", "pcfr+", "pcfr+(updates=simultaneous)",
          "dcfr+", "dcfr+(updates=simultaneous)", "pdcfr+", "hs-dcfr(horizon=20)",
          "hs-pcfr+(horizon=20)", "hs-pcfr+(horizon=20,updates=simultaneous)",
          "cfr(rm=erm(rm+,0.1),cse=1.5)",
          "cfr(cse=60)")  # weights beyond 1e100 from t = 47: the sums are rescaled


def _tables(solver):
  return (solver.cumulative_regrets_slots(), solver.current_strategy_slots(),
          solver.average_strategy_slots())


@pytest.mark.parametrize("prune_nodes", [0, 10**9])  # traversal.accumulate_pruned or not
@pytest.mark.parametrize("game", ["kuhn_poker", "leduc_poker"])
@pytest.mark.parametrize("spec", _SPECS)
def test_batched_iterations_equal_single_ones(game, spec, prune_nodes, monkeypatch):
  monkeypatch.setattr(cfr, "_BATCH", 7)  # several batches, one cut short
  monkeypatch.setattr(cfr, "_PRUNE_NODES", prune_nodes)
  tree = compiled_tree.cached_tree(game)
  single = registry.make_solver(registry.parse_solver(spec), tree)
  batched = registry.make_solver(registry.parse_solver(spec), tree)
  done = 0
  for chunk in (1, 2, 7, 13, 30):
    for _ in range(chunk):
      single.evaluate_and_update_policy()
    batched.iterate(chunk)
    done += chunk
    assert batched.iterations == single.iterations == done
    assert batched.visited_states == single.visited_states
    for ours, theirs in zip(_tables(batched), _tables(single)):
      np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
  assert batched.state_dict()["log_weight_scale"] == \
      single.state_dict()["log_weight_scale"]


def test_depth_limited_and_playground_solvers_iterate_one_by_one():
  tree = compiled_tree.cached_tree("kuhn_poker")
  for spec in ("cfr+(dl=1,ue=randomplayout(1))", "cfrplayground-cfr+"):
    solver = registry.make_solver(registry.parse_solver(spec), tree, seed=3)
    twin = registry.make_solver(registry.parse_solver(spec), tree, seed=3)
    solver.iterate(5)
    for _ in range(5):
      twin.evaluate_and_update_policy()
    np.testing.assert_array_equal(solver.average_strategy_slots(),
                                  twin.average_strategy_slots())
