"""Tests of the solve example and of strategy files."""

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pyspiel
import pytest

from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.cfr import utility_estimators
from ggp_cr.algorithms.evaluation import solver_runs
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import strategy_files


def _run(*args):
  return subprocess.run([sys.executable, "-m", "ggp_cr.examples.solve", *args],
                        capture_output=True, text=True, timeout=300, check=False)


def test_solve_writes_csv_plot_resumes_and_saves_a_strategy_that_loads_back(tmp_path):
  strategy = tmp_path / "kuhn.npz"
  common = ("--game=kuhn_poker", "--solver=dcfr(1.5,0,2)", "--eval_every=10",
            f"--output_dir={tmp_path}")
  first = _run(*common, "--iterations=20")
  assert first.returncode == 0, first.stderr
  resumed = _run(*common, "--iterations=40", "--resume", f"--save_strategy={strategy}",
                 "--workers=2")
  assert resumed.returncode == 0, resumed.stderr
  assert "Resumed after 20 iterations" in resumed.stdout

  (csv_path,) = tmp_path.glob("kuhn_poker-*__*.csv")
  frame = pd.read_csv(csv_path)
  assert tuple(frame.columns) == solver_runs.COLUMNS
  assert frame["iterations"].tolist() == [10, 20, 30, 40]
  tree = compiled_tree.compile_game(pyspiel.load_game("kuhn_poker"))
  assert frame["visited_states"].tolist() == [2 * tree.num_nodes * i
                                              for i in (10, 20, 30, 40)]
  np.testing.assert_allclose(frame["exploitability"], frame["nash_conv"] / 2)
  (png,) = tmp_path.glob("kuhn_poker-*.png")
  assert png.stat().st_size > 0
  # The resumed run is the uninterrupted run.
  solver = cfr.DCFRSolver(tree, 1.5, 0, 2)
  for iterations in range(1, 41):
    solver.evaluate_and_update_policy()
    if iterations % 10 == 0:
      expected = exact_br.nash_conv_slots(
          tree, solver.average_strategy_slots()).nash_conv
      assert frame["nash_conv"].iloc[iterations // 10 - 1] == pytest.approx(
          expected, abs=1e-12)
  np.testing.assert_array_equal(strategy_files.load_strategy(strategy, tree),
                                solver.average_strategy_slots())

  loaded = _run(f"--load_strategy={strategy}")
  assert loaded.returncode == 0, loaded.stderr
  assert f"nash_conv:      {frame['nash_conv'].iloc[-1]:.9g}" in loaded.stdout

  again = _run(*common, "--iterations=1")
  assert again.returncode != 0 and "--resume" in again.stderr


def test_solve_refuses_a_damaged_strategy_file(tmp_path):
  bad = tmp_path / "bad.npz"
  bad.write_bytes(b"not a strategy")
  result = _run(f"--load_strategy={bad}")
  assert result.returncode != 0
  assert "Cannot read strategy file" in result.stderr
  assert "Traceback" not in result.stderr


def test_eval_every_parsing_and_schedule():
  assert solver_runs.parse_eval_every("log") == ("log", None)
  assert solver_runs.parse_eval_every("25") == ("iterations", 25)
  assert solver_runs.parse_eval_every("1.5s") == ("seconds", 1.5)
  for bad in ("0", "-3", "xs", "0s", "abc"):
    with pytest.raises(ValueError):
      solver_runs.parse_eval_every(bad)
  schedule = solver_runs.EvaluationSchedule("log", None)
  assert [i for i in range(1, 40) if schedule.due(i, 0.0)] == [1, 2, 4, 8, 16, 32]
  schedule = solver_runs.EvaluationSchedule("seconds", 1.0)
  assert [t for t in (0.5, 1.2, 1.7, 2.0, 4.5) if schedule.due(0, t)] == [1.2, 2.0, 4.5]
  schedule = solver_runs.EvaluationSchedule("log", None)
  schedule.catch_up(20, 0.0)
  assert [i for i in range(21, 70) if schedule.due(i, 0.0)] == [32, 64]
  schedule = solver_runs.EvaluationSchedule("iterations", 10)
  schedule.catch_up(20, 0.0)
  assert [i for i in range(21, 45) if schedule.due(i, 0.0)] == [30, 40]


@pytest.fixture(name="kuhn_tree")
def _kuhn_tree():
  return compiled_tree.compile_game(pyspiel.load_game("kuhn_poker"))


def test_strategy_file_round_trip(tmp_path, kuhn_tree):
  solver = cfr.CFRPlusSolver(kuhn_tree)
  for _ in range(20):
    solver.evaluate_and_update_policy()
  path = tmp_path / "sub" / "s.npz"
  strategy_files.save_strategy(path, kuhn_tree, solver.average_strategy_slots())
  assert os.listdir(tmp_path / "sub") == ["s.npz"]
  assert strategy_files.read_game_string(path) == "kuhn_poker()"
  slots = strategy_files.load_strategy(path, kuhn_tree)
  np.testing.assert_array_equal(slots, solver.average_strategy_slots())
  assert exact_br.nash_conv_slots(kuhn_tree, slots).nash_conv > 0


def test_strategy_file_of_another_game_is_refused(tmp_path, kuhn_tree):
  path = tmp_path / "s.npz"
  strategy_files.save_strategy(path, kuhn_tree, kuhn_tree.uniform_slots())
  leduc = compiled_tree.compile_game(pyspiel.load_game("leduc_poker"))
  with pytest.raises(ValueError, match="is for kuhn_poker"):
    strategy_files.load_strategy(path, leduc)


def _rewrite(path, **changes):
  with np.load(path, allow_pickle=False) as data:
    contents = {name: data[name] for name in data.files}
  contents.update(changes)
  np.savez(path, **contents)


@pytest.mark.parametrize("change,message", [
    (lambda t: {"probabilities": np.full(t.num_infoset_actions, 0.7)},
     "not a distribution"),
    (lambda t: {"infoset_actions": t.infoset_actions[::-1].copy()}, "has actions"),
    (lambda t: {"format": np.array("other")}, "format"),
    (lambda t: {"infoset_player": 1 - t.infoset_player}, "does not have"),
    (lambda t: {"probabilities": np.ones(3)}, "inconsistent"),
])
def test_damaged_strategy_files_are_refused(tmp_path, kuhn_tree, change, message):
  path = tmp_path / "s.npz"
  strategy_files.save_strategy(path, kuhn_tree, kuhn_tree.uniform_slots())
  _rewrite(path, **change(kuhn_tree))
  with pytest.raises(ValueError, match=message):
    strategy_files.load_strategy(path, kuhn_tree)


def test_non_strategy_files_are_refused(tmp_path, kuhn_tree):
  array_file = tmp_path / "a.npy"
  np.save(array_file, kuhn_tree.uniform_slots())
  other = tmp_path / "o.npz"
  np.savez(other, x=np.zeros(2))
  truncated = tmp_path / "t.npz"
  strategy_files.save_strategy(truncated, kuhn_tree, kuhn_tree.uniform_slots())
  truncated.write_bytes(truncated.read_bytes()[:100])
  for path, message in ((array_file, "single array"), (other, "not a strategy file"),
                        (truncated, "Cannot read"), (tmp_path / "missing.npz",
                                                      "Cannot read")):
    with pytest.raises(ValueError, match=message):
      strategy_files.load_strategy(path, kuhn_tree)


def test_checkpoints_are_checked_and_later_rows_dropped(tmp_path, kuhn_tree):
  solver = cfr.CFRPlusSolver(kuhn_tree)
  solver.evaluate_and_update_policy()
  path = tmp_path / "c.checkpoint.npz"
  solver_runs.save_checkpoint(path, "kuhn_poker()", "cfr+", 1, 1.5, solver.state_dict())
  iterations, seconds, state = solver_runs.load_checkpoint(path, "kuhn_poker()", "cfr+")
  assert (iterations, seconds, int(state["iteration"])) == (1, 1.5, 1)
  with pytest.raises(ValueError, match="solver 'cfr\\+', not 'cfr'"):
    solver_runs.load_checkpoint(path, "kuhn_poker()", "cfr")
  with pytest.raises(ValueError, match="Cannot read checkpoint"):
    solver_runs.load_checkpoint(tmp_path / "missing.npz", "kuhn_poker()", "cfr+")
  csv_path = tmp_path / "run.csv"
  rows = "".join(f"g,s,0.1,{i},0,0.5,0.25\n" for i in (1, 2, 4, 8))
  csv_path.write_text(",".join(solver_runs.COLUMNS) + "\n" + rows)
  solver_runs.truncate_rows(csv_path, 4)
  assert pd.read_csv(csv_path)["iterations"].tolist() == [1, 2, 4]


def test_run_until_visited_batches_only_the_compiled_solver():
  from ggp_cr.algorithms.config import registry  # pylint: disable=import-outside-toplevel
  game = pyspiel.load_game("kuhn_poker")
  counts = {}
  for spec in ("os_mccfr(compiled=true)", "os_mccfr(compiled=false)"):
    solver = registry.make_solver(spec, game, seed=0)
    calls = []
    iterate = solver.iterate
    solver.iterate = lambda n=1, iterate=iterate: (calls.append(n), iterate(n))
    iterations = solver_runs.run_until_visited(solver, 5000)
    assert solver.visited_states >= 5000 and iterations == solver.iterations
    counts[spec] = (len(calls), max(calls))
  assert counts["os_mccfr(compiled=false)"][1] == 1
  assert counts["os_mccfr(compiled=true)"][1] > 1
  assert counts["os_mccfr(compiled=true)"][0] < counts["os_mccfr(compiled=false)"][0]


def test_depth_limited_checkpoint_restores_the_estimator_stream(kuhn_tree):
  def solver():
    return cfr.GeneralCFRSolver(kuhn_tree, regret_matcher="rm+", depth_limit=1,
                                utility_estimator=utility_estimators.RandomPlayout(2, 7))
  first = solver()
  first.iterate(3)
  state = first.state_dict()
  assert "estimator_rng_state" in state
  first.iterate(2)
  resumed = solver()
  resumed.load_state_dict(state)
  resumed.iterate(2)
  np.testing.assert_array_equal(resumed.average_strategy_slots(),
                                first.average_strategy_slots())


def test_solve_loop_rows_and_a_save_interrupted_is_saved_again(tmp_path, kuhn_tree):
  def run(path, save):
    solver = cfr.GeneralCFRSolver(kuhn_tree, regret_matcher="rm+")
    evaluator = solver_runs.AverageStrategyEvaluator(kuhn_tree.game, solver)
    with solver_runs.open_rows(path, resume=False) as output:
      return solver_runs.solve_loop(
          solver, evaluator, output, solver_runs.EvaluationSchedule("log", None),
          lambda iterations, seconds: iterations >= 8, save, ("kuhn_poker()", "cfr+"))

  saved = []
  assert run(tmp_path / "full.csv", lambda i, s, slots: saved.append(i)) == (8, False)
  assert saved == [1, 2, 4, 8]
  assert list(pd.read_csv(tmp_path / "full.csv")["iterations"]) == [1, 2, 4, 8]

  def interrupted_save(iterations, seconds, slots):
    saved.append(iterations)
    if len(saved) == 2:
      raise KeyboardInterrupt

  saved = []
  assert run(tmp_path / "cut.csv", interrupted_save) == (2, True)
  assert saved == [1, 2, 2]  # the row of iteration 2 is written, so its state is saved
  assert list(pd.read_csv(tmp_path / "cut.csv")["iterations"]) == [1, 2]


def test_sigint_flag_sets_a_flag_then_restores_the_handler():
  """solve_loop's SIGINT handling: within sigint_flag a SIGINT sets the flag (no
  KeyboardInterrupt mid-step, which library code could swallow), a second one raises
  KeyboardInterrupt; the previous handler is back afterwards."""
  import os  # pylint: disable=g-import-not-at-top
  import signal  # pylint: disable=g-import-not-at-top
  import time  # pylint: disable=g-import-not-at-top
  from ggp_cr.algorithms.evaluation import solver_runs  # pylint: disable=g-import-not-at-top
  before = signal.getsignal(signal.SIGINT)
  with solver_runs.sigint_flag() as interrupted:
    assert not interrupted[0]
    os.kill(os.getpid(), signal.SIGINT)
    for _ in range(100):  # the handler runs at the next bytecode boundary
      if interrupted[0]:
        break
      time.sleep(0.01)
    assert interrupted[0]
    with pytest.raises(KeyboardInterrupt):  # a second one interrupts at once
      os.kill(os.getpid(), signal.SIGINT)
      for _ in range(100):
        time.sleep(0.01)
  assert signal.getsignal(signal.SIGINT) is before
