"""Tests of the cfrd_eval example (one resolving step with a fixed trunk, [S] §6)."""

import subprocess
import sys

import pandas as pd


def _run(*args):
  return subprocess.run([sys.executable, "-m", "ggp_cr.examples.cfrd_eval", *args],
                        capture_output=True, text=True, timeout=300, check=False)


def test_cfrd_eval_writes_csv_and_plot(tmp_path):
  output = tmp_path / "kuhn.csv"
  result = _run("--game=kuhn_poker", "--history=0,1,1", "--trunk_iterations=50",
                "--variants=resolve,max_margin,unsafe", "--sigmas=0,0.3", "--repeats=2",
                "--iterations=20", "--eval_every=10", f"--output={output}")
  assert result.returncode == 0, result.stderr
  frame = pd.read_csv(output)
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
  assert (tmp_path / "kuhn.png").stat().st_size > 0
  rerun = _run("--game=kuhn_poker", f"--output={output}")
  assert rerun.returncode != 0 and "--overwrite" in rerun.stderr


def test_cfrd_eval_rejects_bad_flags(tmp_path):
  output = tmp_path / "bad.csv"
  for flag, message in [("--history=0,1,7", "not legal"),
                        ("--solver=nosuch", "Unknown solver"),
                        (f"--trunk_strategy={tmp_path / 'none.npz'}", "trunk_strategy")]:
    result = _run("--game=kuhn_poker", "--history=0,1,1", "--iterations=2",
                  f"--output={output}", flag)
    assert result.returncode != 0
    assert message in result.stderr + result.stdout, (flag, result.stderr)
  assert not output.exists()
