"""Tests of the mixed_sampling_exploration example ([M] Table 5.1)."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pyspiel
import pytest

from ggp_cr.algorithms import contracts
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.tree import compiled_tree


def _run_example(*args):
  return subprocess.run(
      [sys.executable, "-m", "ggp_cr.examples.mixed_sampling_exploration", *args],
      capture_output=True, text=True, check=False, timeout=300)


def test_mixed_sampling_exploration_example_writes_and_resumes(tmp_path):
  args = ["--game=kuhn_poker", "--iterations=16", "--seeds=2", "--lambdas=0,1",
          f"--output_dir={tmp_path}"]
  first = _run_example(*args)
  assert first.returncode == 0, first.stderr
  frame = pd.read_csv(tmp_path / "kuhn_poker.csv")
  assert len(frame) == 2 * 2 * 2  # methods x lambdas x seeds
  assert set(frame["solver"]) == {
      "mixed(schedule=linear,pernode=true,i=16,e=0.0)",
      "mixed(schedule=linear,pernode=true,i=16,e=1.0)",
      "mixed(schedule=os,e=0.0)", "mixed(schedule=os,e=1.0)"}
  assert (tmp_path / "kuhn_poker.png").stat().st_size > 0
  assert "thesis 1.48" in first.stdout
  again = _run_example(*args)  # every run is in the CSV already: nothing is re-run
  assert again.returncode == 0, again.stderr
  assert len(pd.read_csv(tmp_path / "kuhn_poker.csv")) == 8
  assert "seed=" not in again.stdout


@pytest.mark.parametrize("flag", ["--lambdas=0,1.5"])
def test_mixed_sampling_exploration_example_rejects_bad_flags(tmp_path, flag):
  result = _run_example("--game=kuhn_poker", f"--output_dir={tmp_path}", flag)
  assert result.returncode != 0
  assert "Traceback" not in result.stderr


def _mean_exploitability(game, make_solver, seeds, iterations, with_error=False):
  """Mean (and, with_error, its standard error) of the average strategies'
  exploitability (NashConv / 2) over seeds."""
  tree = compiled_tree.cached_tree(game)
  values = []
  for seed in seeds:
    solver = make_solver(seed)
    for _ in range(iterations):
      solver.iteration()
    policy = contracts.python_average_policy(solver, game)
    values.append(exact_br.exploitability_slots(tree, tree.policy_to_slots(policy)))
  if with_error:
    return np.mean(values), np.std(values, ddof=1) / np.sqrt(len(values))
  return np.mean(values)


def test_table_5_1_linear_mixed_learns_and_beats_pure_os_on_leduc():
  """[M] Table 5.1 at lambda = 0 (2^10 iterations on Leduc): linear mixed sampling 1.48,
  pure OS 2.22, uniform 2.374. Thresholds on the mean of seeds 0-3, set from seeds 0-19
  of this code split into five blocks of 4 seeds (block means: linear mixed 1.55-1.63,
  pure OS 2.12-2.22, mixed below pure OS by 0.49-0.67 in every block): linear mixed
  < 2.0 (1.25 x its worst block), pure OS < 2.30 (its worst block plus 0.08, below
  uniform: 1.25 x would not be), and mixed below pure OS by more than 0.3. A solver that
  never updates its regrets stays at uniform's 2.374 and fails all three."""
  game = pyspiel.load_game("leduc_poker")
  seeds = range(4)
  mixed = _mean_exploitability(
      game, lambda seed: registry.make_solver(
          "mixed(schedule=linear,pernode=true,i=1024,e=0.0)", game, seed=seed),
      seeds, 1024)
  pure_os = _mean_exploitability(
      game, lambda seed: registry.make_solver("mixed(schedule=os,e=0.0)", game,
                                                     seed=seed), seeds, 1024)
  assert mixed < 2.0, mixed
  assert pure_os < 2.30, pure_os
  assert mixed < pure_os - 0.3, (mixed, pure_os)


def test_pure_os_lambda_is_the_exploration_of_openspiel_outcome_sampling():
  """[M] built on OpenSpiel's OS, whose updated player samples from
  e * uniform + (1 - e) * sigma and whose opponent samples from sigma; its lambda is that
  e. On Leduc at 2^10 iterations and e = 1 both stay near uniform's 2.37 (30 seeds: 2.40
  vs 2.39), where agreement says nothing, so the check runs on Kuhn (uniform 0.458) at
  1000 iterations, where e matters. Means over blocks of 10 seeds: ours at e = 1
  0.071-0.103 (seeds 0-39), OpenSpiel's Python OS at e = 1 0.091-0.104 (seeds 0-29),
  ours at e = 0 0.153-0.198 (seeds 0-39). So the mean of seeds 0-9 must be below 0.125
  (1.2 x the worst e = 1 block, under the best e = 0 block: e read as 1 - e fails, and
  so does a solver that never learns, at 0.458) for both, and the two means must agree
  within 3 combined standard errors (equal in distribution)."""
  game = pyspiel.load_game("kuhn_poker")
  iterations = 1000
  seeds = range(10)

  def openspiel_os(seed):
    solver = registry.make_solver("openspiel_os_mccfr", game, seed=seed)
    solver._expl = 1.0  # pylint: disable=protected-access  (OpenSpiel's exploration)
    return solver

  reference, reference_error = _mean_exploitability(
      game, openspiel_os, seeds, iterations, with_error=True)
  mean, error = _mean_exploitability(
      game, lambda seed: registry.make_solver("mixed(schedule=os,e=1.0)", game, seed=seed),
      seeds, iterations, with_error=True)
  assert reference < 0.125 and mean < 0.125, (mean, reference)
  assert abs(mean - reference) < 3 * np.hypot(error, reference_error), (
      mean, error, reference, reference_error)
