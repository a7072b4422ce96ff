"""Tests of the cfrd_eval example (one resolving step with a fixed trunk, [S] §6)."""

import json
import subprocess
import sys

import pandas as pd
import pyspiel
import pytest

from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.evaluation import gadget_runs
from ggp_cr.algorithms.resolving.exact import trunk_inputs
from ggp_cr.algorithms.resolving.gadget import gadget_game
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
  assert result.returncode != 0 and "header" in result.stderr
  assert output.read_text() == "earlier results\n"
  result = _run("--game=kuhn_poker", "--history=0,1,1", "--solver=openspiel_cfr_plus",
                f"--output={tmp_path / 'other.csv'}")
  assert result.returncode != 0 and "--route=pyspiel" in result.stderr


def test_cfrd_eval_resumes_and_refuses_another_configuration(tmp_path):
  output = tmp_path / "run.csv"
  flags = ["--game=kuhn_poker", "--history=0,1,1", "--variants=resolve,unsafe",
           "--sigmas=0,0.5", "--iterations=10", "--eval_every=5",
           "--trunk_iterations=30", f"--output={output}"]
  assert _run(*flags, "--repeats=1").returncode == 0
  first = pd.read_csv(output)
  trunk = json.loads((tmp_path / "run.config.json").read_text())["trunk"]
  assert trunk["solver"] == "cfr+" and trunk["iterations"] == 30
  assert trunk["exploitability"] == pytest.approx(first["trunk_exploitability"].iloc[0],
                                                 rel=1e-12)
  # A killed run: its last row half-written, one run unfinished.
  lines = output.read_text().splitlines(keepends=True)
  output.write_text("".join(lines[:-2]) + lines[-1][:5])
  result = _run(*flags, "--repeats=2")
  assert result.returncode == 0, result.stderr
  assert "finished runs are skipped" in result.stdout
  again = pd.read_csv(output)
  key = ["variant", "values", "sigma", "repeat", "iteration"]
  merged = first.merge(again, on=key, suffixes=("", "_again"))
  assert len(merged) == len(first)  # the unfinished run was redone, the same numbers
  assert (merged["combined_exploitability"] ==
          merged["combined_exploitability_again"]).all()
  assert len(again) == len(first) + 3  # the extra draw at sigma 0.5
  result = _run(*flags, "--repeats=2", "--iterations=20")
  assert result.returncode != 0 and "iterations: file has 10" in result.stderr
  result = _run(*flags, "--repeats=2", "--trunk_iterations=31")
  assert result.returncode != 0 and "trunk of exploitability" in result.stderr


@pytest.mark.parametrize("game_string,history", [
    ("python_leduc(max_raises=1,cards_per_suit=3)", [0, 1, 1]),
    ("python_ii_goofspiel(num_cards=4)", [0, 0])])
def test_compiled_and_pyspiel_gadgets_give_the_same_rows(game_string, history):
  """The gadget as a view on the compiled tree (cfrd_eval's default) and as a pyspiel
  game give the same evaluations to 1e-9, noise and all three variants included."""
  tree = compiled_tree.cached_tree(pyspiel.load_game(game_string))
  trunk = gadget_runs.trunk_strategy(tree, "cfr+", 20, 0)
  rows = {}
  for route in gadget_runs.ROUTES:
    subgame = trunk_inputs.subgame_from_trunk(tree, trunk, history, values="trunk")
    run = gadget_runs.Run("cfrplayground-cfr+", 12, 4, 0, (6,), route)
    rows[route] = []
    gadget_runs.sweep(tree, trunk, subgame, "trunk", [0.0, 0.3], 2, gadget_game.VARIANTS,
                      run, rows[route].append)
  compiled, reference = (pd.DataFrame(rows[r]) for r in gadget_runs.ROUTES)
  assert len(compiled) == 7 * 5  # 7 runs (unsafe once), evaluated at 1, 4, 6, 8, 12
  pd.testing.assert_frame_equal(compiled, reference, check_exact=False, rtol=0,
                                atol=1e-9)


def test_a_solver_trunk_is_the_tournament_players_strategy():
  """`--trunk_solver=S --trunk_iterations=N` (seed 0) is the strategy a tournament's
  `solver(name=S,iterations=N)` player plays (solver seed 0), so Fig. 6.8 can run on
  the scaled Table 5.7's VR-MCCFR* trunks ([S] §6 used its tournament's strategies)."""
  from ggp_cr.algorithms.bots import players  # pylint: disable=import-outside-toplevel
  game = pyspiel.load_game("kuhn_poker")
  tree = compiled_tree.compile_game(game)
  spec = "vr_mccfr(compiled=true)"
  trunk = gadget_runs.trunk_strategy(tree, spec, 300, 0)
  played = tree.policy_to_slots(players.solved_policy(game, spec, iterations=300, seed=0))
  assert max(abs(a - b) for a, b in zip(trunk, played)) == 0.0
  other = gadget_runs.trunk_strategy(tree, spec, 300, 1)
  assert max(abs(a - b) for a, b in zip(other, played)) > 1e-3  # the seed matters
