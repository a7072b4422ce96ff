"""The best_response example: policy parsing, the comparison table, CSV and plot."""

import csv
import subprocess
import sys

import numpy as np
import pyspiel
import pytest

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.bots import fixed_policies
from ggp_cr.algorithms.tree import compiled_tree


def test_policy_strings():
  game = pyspiel.load_game("kuhn_poker")
  tree = compiled_tree.cached_tree(game)
  np.testing.assert_allclose(fixed_policies.fixed_policy_slots("uniform", game, tree), 0.5)
  first = fixed_policies.fixed_policy_slots("random(seed=3)", game, tree)
  np.testing.assert_array_equal(first, fixed_policies.fixed_policy_slots("random(seed=3)", game, tree))
  assert not np.allclose(first, fixed_policies.fixed_policy_slots("random(seed=4)", game, tree))
  solved = fixed_policies.fixed_policy_slots("solver(name=cfr+,iterations=20)", game, tree)
  np.testing.assert_allclose(np.add.reduceat(solved, tree.infoset_action_offset), 1.0)
  for bad in ("foo", "random(3)", "solver(iterations=0)", "uniform(x=1)"):
    with pytest.raises(ValueError):
      fixed_policies.fixed_policy_slots(bad, game, tree)


def test_runs_and_writes_the_table_and_plot(tmp_path):
  completed = subprocess.run(
      [sys.executable, "-m", "ggp_cr.examples.best_response", "--game=kuhn_poker",
       "--player=1", "--runs=1", "--epsilons=0.1", "--etas=1",
       "--ismcts_simulations=1,100", "--ismcts_seeds=2", "--pruning_trials=3",
       f"--output_dir={tmp_path}"], capture_output=True, text=True, timeout=300,
      check=True)
  assert "[B] §6.2.2 pruning figures" in completed.stdout
  with open(tmp_path / "kuhn_poker__player1.csv") as file:
    rows = list(csv.DictReader(file))
  methods = [row["method"] for row in rows]
  assert methods == ["openspiel_python", "openspiel_cpp", "exact", "brs",
                     "brs(epsilon=0.1)", "brs(eta=1)", "ismcts(simulations=1)",
                     "ismcts(simulations=100)"]
  exact = float(rows[2]["value"])
  for row in rows[:4]:
    assert float(row["value"]) == pytest.approx(exact, abs=1e-9)
  for row in rows:
    assert float(row["error"]) >= -1e-9
  assert (tmp_path / "kuhn_poker__player1__ismcts.png").stat().st_size > 0
  with open(tmp_path / "kuhn_poker__player1__pruning.csv") as file:
    assert len(list(csv.DictReader(file))) == 6
