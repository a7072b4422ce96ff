"""The offline_mccfr_comparison example ([S] §5.1.2, Fig. 5.11), run as a subprocess."""

import subprocess
import sys

import pandas as pd


def _run(*args):
  return subprocess.run(
      [sys.executable, "-m", "ggp_cr.examples.offline_mccfr_comparison", *args],
      capture_output=True, text=True, timeout=300)


def test_writes_tidy_csv_and_plot(tmp_path):
  result = _run("--game=python_ii_goofspiel(num_cards=3)", "--visited_states=20000",
                "--seeds=1", f"--output_dir={tmp_path}")
  assert result.returncode == 0, result.stderr
  frame = pd.read_csv(tmp_path / "offline_mccfr_comparison.csv")
  assert list(frame.columns) == ["game", "solver", "seed", "visited_states", "iterations",
                                 "time", "nash_conv", "exploitability"]
  assert frame["solver"].nunique() == 3
  assert (frame["exploitability"] * 2 == frame["nash_conv"]).all()
  # Values: every solver spends the budget in increasing checkpoints and learns. Uniform
  # play is 0.667 exploitable here; seed 0 ends at 0.005 (VR-MCCFR), 0.002 (MCCFR) and
  # 0.021 (OS), so 0.1 leaves a margin of about 5 over the worst and fails a solver that
  # does not learn.
  for solver, rows in frame.groupby("solver"):
    assert rows["visited_states"].is_monotonic_increasing, solver
    assert rows["iterations"].is_monotonic_increasing, solver
    assert rows["visited_states"].iloc[-1] >= 20000, solver
    assert rows["exploitability"].iloc[-1] < min(0.1, rows["exploitability"].iloc[0]), (
        solver, rows["exploitability"].tolist())
  assert (tmp_path / "offline_mccfr_comparison.png").stat().st_size > 0


def test_rejects_an_unknown_solver(tmp_path):
  result = _run("--solver=nonsense", f"--output_dir={tmp_path}")
  assert result.returncode != 0
  assert "nonsense" in result.stderr + result.stdout
