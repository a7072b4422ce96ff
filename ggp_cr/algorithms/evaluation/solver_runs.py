"""Bookkeeping of a solver run ([S] App. A, `solve`): when to evaluate, CSV rows, checkpoints.

`python -m ggp_cr.examples.solve` runs a solver for a budget and evaluates its average
strategy on a schedule, appending rows with `COLUMNS` to a CSV and writing checkpoints
so that an interrupted run resumes where it stopped. `AverageStrategyEvaluator` computes
the NashConv of a solver's average strategy; `log_spaced_budgets` and
`run_until_visited` drive a sampling solver to budgets of visited states ([S] §5.1's
measure, used by `python -m ggp_cr.examples.offline_mccfr_comparison`).
"""

import contextlib
import glob
import math
import os
import signal
import threading
import time

import numpy as np

from ggp_cr.algorithms import contracts
from ggp_cr.algorithms import progress_bars
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.config import number_ranges
from ggp_cr.algorithms.evaluation import figures
from ggp_cr.algorithms.evaluation import results_csv
from ggp_cr.algorithms.files import result_names
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import npz_archives

COLUMNS = ("game", "solver", "time", "iterations", "visited_states", "nash_conv",
           "exploitability")
CHECKPOINT_FORMAT = "ggp_cr-solve-checkpoint-1"


def parse_eval_every(text):
  """'log' -> ('log', None); 'N' -> ('iterations', N); 'Ns' -> ('seconds', N)."""
  text = text.strip().lower()
  if text == "log":
    return "log", None
  try:
    if text.endswith("s"):
      value = float(text[:-1])
      if value > 0 and math.isfinite(value):
        return "seconds", value
    else:
      value = int(text)
      if value > 0:
        return "iterations", value
  except ValueError:
    pass
  raise ValueError(f"--eval_every must be 'log', a positive integer of iterations or "
                   f"seconds such as '30s'; got {text!r}.")


class EvaluationSchedule:
  """Decides after which iterations the average strategy is evaluated."""

  def __init__(self, kind, every):
    self._kind = kind
    self._every = every
    self._next = 1 if kind == "log" else every

  def catch_up(self, iterations, seconds):
    """Skips the evaluations of a run resumed after `iterations` and `seconds`."""
    if self._kind == "seconds":
      while self._next <= seconds:
        self._next += self._every
    else:
      while self._next <= iterations:
        self._next = 2 * self._next if self._kind == "log" else self._next + self._every

  def due(self, iterations, seconds):
    if self._kind == "seconds":
      if seconds < self._next:
        return False
      while self._next <= seconds:
        self._next += self._every
      return True
    if iterations < self._next:
      return False
    self._next = 2 * self._next if self._kind == "log" else self._next + self._every
    return True


class AverageStrategyEvaluator:
  """NashConv of a solver's average strategy on the compiled tree of its game.

  Reads the solver's slots directly when it runs on that tree (ggp_cr's CFR and
  compiled sampling solvers); converts its Python average policy otherwise.
  """

  def __init__(self, game, solver, cache_dir=None, tree=None):
    self._game = game
    self._solver = solver
    if tree is None:  # `tree`: the game's CompiledTree when the caller has it
      tree = solver.tree if isinstance(solver, contracts.TreeSolver) else (
          compiled_tree.compile_game(game, cache_dir=cache_dir))
    self.tree = tree

  def average_slots(self):
    if isinstance(self._solver, contracts.TreeSolver) and self._solver.tree is self.tree:
      return self._solver.average_strategy_slots()
    return self.tree.policy_to_slots(
        contracts.python_average_policy(self._solver, self._game))

  def nash_conv(self, slots):
    return exact_br.nash_conv_slots(self.tree, slots).nash_conv


def log_spaced_budgets(total, points_per_decade):
  """Budgets 10^(k/points_per_decade) from 10^3 up to `total` (always included).

  Raises ValueError unless total >= 1 and points_per_decade >= 1.
  """
  if total < 1:
    raise ValueError(f"total must be >= 1, got {total}.")
  if points_per_decade < 1:
    raise ValueError(f"points_per_decade must be >= 1, got {points_per_decade}.")
  budgets = []
  exponent = 3 * points_per_decade
  while 10 ** (exponent / points_per_decade) < total:
    budgets.append(int(round(10 ** (exponent / points_per_decade))))
    exponent += 1
  return budgets + [int(total)]


def run_until_visited(solver, target):
  """Runs iterations of a sampling solver until it has visited `target` states.

  Solvers running a batch in one kernel call (contracts.OnlineSolver with a
  `batch_share`: the compiled sampling solver) run batches sized by
  their mean states per iteration so far, at most as many iterations as they have run
  (so the mean is not a few episodes'); others run one iteration at a time. Returns
  the iterations run. The run stops at the first
  iteration reaching `target`, or, batched, may overshoot it by a batch's noise.
  """
  iterations = 0
  batched = isinstance(solver, contracts.OnlineSolver) and solver.batch_share is not None
  while solver.visited_states < target:
    count = 1
    if batched and solver.iterations > 0:
      per_iteration = max(solver.visited_states / solver.iterations, 1.0)
      count = max(1, min(int((target - solver.visited_states) / per_iteration),
                         solver.iterations))
    solver.iterate(count)
    iterations += count
  return iterations


def checkpoint_path(csv_path):
  return os.path.splitext(csv_path)[0] + ".checkpoint.npz"


def save_checkpoint(path, game_string, solver_string, iterations, seconds, state):
  """Writes the solver's state_dict, iterations and solver time atomically."""
  npz_archives.write_atomically(
      path, format=np.array(CHECKPOINT_FORMAT), game_string=np.array(game_string),
      solver=np.array(solver_string), iterations=np.int64(iterations),
      seconds=np.float64(seconds),
      **{f"state_{name}": value for name, value in state.items()})


def load_checkpoint(path, game_string, solver_string):
  """(iterations, seconds, state_dict) of a checkpoint of this game and solver.

  Raises ValueError if the file is unreadable, of another game or solver, or its
  counters are out of range or disagree with the solver state's (the state's arrays
  are checked by the solver's load_state_dict).
  """
  contents = npz_archives.read(path, "checkpoint")
  if str(contents.get("format")) != CHECKPOINT_FORMAT or not {
      "game_string", "solver", "iterations", "seconds"} <= set(contents):
    raise ValueError(f"{path} is not a solve checkpoint.")
  for name, expected in (("game_string", game_string), ("solver", solver_string)):
    if str(contents[name]) != expected:
      raise ValueError(f"Checkpoint {path} is for {name} {str(contents[name])!r}, not "
                       f"{expected!r}.")
  state = {name[len("state_"):]: value for name, value in contents.items()
           if name.startswith("state_")}
  iterations = number_ranges.count(contents["iterations"],
                                   f"Checkpoint {path}: iterations", minimum=1)
  seconds = number_ranges.check(contents["seconds"], f"Checkpoint {path}: seconds", 0.0)
  if "iteration" in state and number_ranges.count(
      state["iteration"], f"Checkpoint {path}: solver iteration") != iterations:
    raise ValueError(f"Checkpoint {path} says {iterations} iterations but its solver "
                     f"state holds {int(state['iteration'])}.")
  return iterations, seconds, state


# Rounding slack of the checks below: an exact NashConv at an equilibrium can be -1e-16.
_SLACK = 1e-9


def row_problem(row):
  """The problem of a solve CSV row (a dict of text with finite numbers), or None
  when its values lie in their ranges: time, nash_conv and exploitability not
  negative (beyond rounding), exploitability NashConv / 2, iterations a whole number
  >= 1, visited_states empty or a whole number >= 0."""
  for name in ("time", "nash_conv", "exploitability"):
    if float(row[name]) < -_SLACK:
      return f"{name} {row[name]} is negative"
  nash_conv, exploitability = float(row["nash_conv"]), float(row["exploitability"])
  if abs(nash_conv / 2 - exploitability) > _SLACK * max(1.0, abs(nash_conv)):
    return f"exploitability {row['exploitability']} is not nash_conv / 2"
  for name, low in (("iterations", 1), ("visited_states", 0)):
    if row[name] != "" and not (float(row[name]).is_integer() and
                                float(row[name]) >= low):
      return f"{name} {row[name]} is not a whole number >= {low}"
  return None


def open_rows(csv_path, resume):
  """The results writer of a run: appending to a resumed run's rows (checked, bad
  ones, out-of-range ones included (`row_problem`), set aside), or a fresh file."""
  return results_csv.AppendOnlyCsv(csv_path, COLUMNS, numeric=COLUMNS[2:],
                                   nullable=("visited_states",), key=("iterations",),
                                   replace=not resume, check=row_problem)


def truncate_rows(csv_path, iterations):
  """Drops the rows after `iterations` (evaluated after the checkpoint), atomically,
  after setting malformed or half-written rows aside (results_csv)."""
  with open_rows(csv_path, resume=True) as output:
    output.keep(lambda row: float(row["iterations"]) <= iterations)


def csv_row(game, spec, seconds, iterations, visited, nash_conv):
  """One row of `COLUMNS` (exploitability = NashConv / 2, OpenSpiel's convention)."""
  return {"game": str(game), "solver": str(spec), "time": f"{seconds:.6f}",
          "iterations": iterations, "visited_states": "" if visited is None else visited,
          "nash_conv": repr(nash_conv), "exploitability": repr(nash_conv / 2)}


@contextlib.contextmanager
def sigint_flag():
  """Within it (main thread only), SIGINT sets the yielded list's flag instead of
  raising KeyboardInterrupt wherever the interpreter is: library code that catches
  BaseException could swallow that, leaving a run that ignores Ctrl-C (a solve under
  load once ran on for 60 s). A second SIGINT raises KeyboardInterrupt (a step that
  runs long). The previous handler is restored on exit. Elsewhere the flag never
  changes and KeyboardInterrupt is raised as usual."""
  flag = [False]
  if threading.current_thread() is not threading.main_thread():
    yield flag
    return
  def handler(unused_signum, unused_frame):
    if flag[0]:
      raise KeyboardInterrupt
    flag[0] = True
  previous = signal.signal(signal.SIGINT, handler)
  try:
    yield flag
  finally:
    signal.signal(signal.SIGINT, previous)


def solve_loop(solver, evaluator, output, schedule, spent, save, labels, iterations=0,
               seconds=0.0, on_step=None):
  """Steps `solver` until `spent(iterations, seconds)`; at each evaluation the
  `schedule` calls for (and the last) appends a `csv_row` (`labels` = game, spec) to
  `output`, prints it and calls `save(iterations, seconds, slots)`. `on_step`, if
  given, is called with each iteration's seconds (it advances a progress bar).

  Counts continue from `iterations` and `seconds` (solver time, evaluations excluded).
  Returns (iterations, interrupted): SIGINT stops the loop once the current step and
  its evaluation are done and saved (sigint_flag); outside the main thread it raises
  KeyboardInterrupt, and the evaluation written but not yet saved is saved again, so
  checkpoint and CSV agree.
  """
  step = contracts.step_function(solver)
  last_iterations, last_seconds = iterations, seconds
  unsaved = None
  try:
    with sigint_flag() as interrupted:
      while not interrupted[0] and not spent(iterations, seconds):
        tick = time.perf_counter()
        step()
        elapsed = time.perf_counter() - tick
        seconds += elapsed
        iterations += 1
        if on_step is not None:
          on_step(elapsed)
        if not (schedule.due(iterations, seconds) or spent(iterations, seconds)):
          continue
        slots = evaluator.average_slots()
        nash_conv = evaluator.nash_conv(slots)
        visited = contracts.visited_states(solver)
        output.append(csv_row(*labels, seconds, iterations, visited, nash_conv))
        unsaved = (iterations, seconds, slots)
        rate = (iterations - last_iterations) / max(seconds - last_seconds, 1e-9)
        visited_text = "" if visited is None else f"  {visited:>15,} states"
        progress_bars.write(f"{seconds:9.2f} s  {iterations:>10,} it{visited_text}  "
                            f"nash_conv {nash_conv:.6g}  exploitability "
                            f"{nash_conv / 2:.6g}  ({rate:,.1f} it/s)")
        last_iterations, last_seconds = iterations, seconds
        save(*unsaved)
        unsaved = None
  except KeyboardInterrupt:
    if unsaved is not None:  # interrupted while saving: the state is still that row's
      save(*unsaved)
    return iterations, True
  return iterations, interrupted[0]


def plot_runs(output_dir, game_string, plot_x):
  """Log-log plot of every run of `game_string` in `output_dir`; returns its path."""
  plt = figures.pyplot()
  import pandas as pd  # pylint: disable=g-import-not-at-top

  figure, axes = plt.subplots(figsize=(7, 4.5))
  pattern = os.path.join(output_dir, f"{result_names.key(game_string)}__*.csv")
  for path in sorted(glob.glob(pattern)):
    frame = pd.read_csv(path)
    frame = frame[(frame["game"] == game_string) & (frame[plot_x] > 0)]
    frame = frame.dropna(subset=[plot_x])
    if frame.empty:
      continue
    axes.plot(frame[plot_x], frame["exploitability"], marker=".",
              label=str(frame["solver"].iloc[0]))
  labels = {"time": "solver time [s]", "iterations": "iterations",
            "visited_states": "visited states (histories touched)"}
  axes.set_xscale("log")
  axes.set_yscale("log")
  axes.set_xlabel(labels[plot_x])
  axes.set_ylabel("exploitability = NashConv / 2 [utility]")
  axes.set_title(f"Average-strategy exploitability in {game_string}")
  axes.grid(True, which="both", alpha=0.3)
  if axes.lines:
    axes.legend()
  path = os.path.join(output_dir, f"{result_names.key(game_string)}.png")
  figures.save(figure, path)
  return path
