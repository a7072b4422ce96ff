"""Tests of the mixed_sampling_exploration example ([M] Table 5.1)."""

import subprocess
import sys

import pandas as pd
import pytest


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
      "mixed(schedule=linear,pernode=true,i=16,lambda=0.0)",
      "mixed(schedule=linear,pernode=true,i=16,lambda=1.0)",
      "mixed(schedule=os,lambda=0.0)", "mixed(schedule=os,lambda=1.0)"}
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
