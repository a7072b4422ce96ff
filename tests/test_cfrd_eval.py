"""Tests of the cfrd_eval example (one resolving step with a fixed trunk, [S] §6)."""

import subprocess
import sys

import pandas as pd
import pyspiel
import pytest

from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import strategy_files


def _run(*args):
  return subprocess.run([sys.executable, "-m", "ggp_cr.examples.cfrd_eval", *args],
                        capture_output=True, text=True, timeout=300, check=False)


def test_cfrd_eval_writes_csv_plot_and_reuses_a_saved_trunk(tmp_path):
  trunk = tmp_path / "trunk.npz"
  flags = ["--game=kuhn_poker", "--history=0,1,1", "--variants=resolve,max_margin,unsafe",
           "--sigmas=0,0.3", "--repeats=2", "--iterations=20", "--eval_every=10"]
  result = _run(*flags, "--trunk_iterations=50", f"--save_trunk={trunk}",
                f"--output={tmp_path / 'first.csv'}")
  assert result.returncode == 0, result.stderr
  frame = pd.read_csv(tmp_path / "first.csv")
  assert list(frame.columns) == ["variant", "values", "sigma", "repeat", "iteration",
                                 "trunk_exploitability", "combined_exploitability",
                                 "gadget_exploitability", "margin"]
  runs = frame.groupby(["variant", "sigma", "repeat"]).size()
  # resolve and max_margin: sigma 0 once, sigma 0.3 twice; unsafe once.
  assert runs.to_dict() == {(v, s, r): 3 for v, s, r in [
      ("max_margin", 0.0, 0), ("max_margin", 0.3, 0), ("max_margin", 0.3, 1),
      ("resolve", 0.0, 0), ("resolve", 0.3, 0), ("resolve", 0.3, 1),
      ("unsafe", 0.0, 0)]}
  assert frame["iteration"].unique().tolist() == [1, 10, 20]
  assert (frame["trunk_exploitability"] == frame["trunk_exploitability"].iloc[0]).all()
  # Values: the trunk's exploitability (OpenSpiel's, NashConv / 2) is that of the saved
  # trunk strategy, and with exact values the safe gadgets keep the combined strategy
  # within CFR-D's bound: trunk exploitability + the gadget's NashConv.
  tree = compiled_tree.cached_tree(pyspiel.load_game("kuhn_poker"))
  saved = strategy_files.load_strategy(str(trunk), tree)
  assert frame["trunk_exploitability"].iloc[0] == pytest.approx(
      exact_br.exploitability_slots(tree, saved), abs=1e-12)
  exact = frame[(frame["sigma"] == 0.0) & frame["variant"].isin(["resolve", "max_margin"])]
  assert len(exact) == 6
  assert (exact["combined_exploitability"] <= exact["trunk_exploitability"] +
          2 * exact["gadget_exploitability"] + 1e-9).all(), exact
  assert (tmp_path / "first.png").stat().st_size > 0
  # The saved trunk gives the same run (same seed).
  again = _run(*flags, f"--trunk_strategy={trunk}", f"--output={tmp_path / 'again.csv'}")
  assert again.returncode == 0, again.stderr
  pd.testing.assert_frame_equal(frame, pd.read_csv(tmp_path / "again.csv"))


def test_cfrd_eval_rejects_bad_flags_and_keeps_existing_output(tmp_path):
  output = tmp_path / "out.csv"
  for flag, message in [("--solver=nosuch", "Unknown solver"),
                        (f"--trunk_strategy={tmp_path / 'none.npz'}", "trunk_strategy")]:
    result = _run("--game=kuhn_poker", "--history=0,1,1", "--iterations=2",
                  f"--output={output}", flag)
    assert result.returncode != 0
    assert message in result.stderr, (flag, result.stderr)
    assert not output.exists()
  output.write_text("earlier results\n")
  result = _run("--game=kuhn_poker", "--history=0,1,1", f"--output={output}")
  assert result.returncode != 0 and "--overwrite" in result.stderr
  assert output.read_text() == "earlier results\n"
