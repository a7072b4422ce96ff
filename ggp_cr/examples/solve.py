r"""Runs an offline solver on a game and tracks its exploitability ([S] App. A, `solve`).

  python -m ggp_cr.examples.solve --game=leduc_poker --solver=cfr+ --time_limit=60
  python -m ggp_cr.examples.solve --game=leduc_poker --solver=openspiel_cpp_cfr_plus \
      --time_limit=60          # same output directory: the plot shows both runs
  python -m ggp_cr.examples.solve --game=kuhn_poker --solver="dcfr(1.5,0,2)" \
      --iterations=1000 --eval_every=100 --save_strategy=kuhn.strategy.npz
  python -m ggp_cr.examples.solve --load_strategy=kuhn.strategy.npz

Solvers are chosen by name with parameters (--list_solvers prints them all): ours,
e.g. cfr, cfr+, lcfr, dcfr(1.5,0,2), pcfr+, pdcfr+, hs-pcfr+ or
cfr(rm=drm(1,1),updates=alternating,cse=1), and stock OpenSpiel ones (openspiel_cfr,
openspiel_cfr_plus, openspiel_dcfr, openspiel_cpp_cfr_plus, ...) for side-by-side runs.
--solver="auto(eps=1e-5)" runs the one of ours that reaches that exploitability fastest
by the rule of ggp_cr/algorithms/cfr/solver_choice.py (dcfr on games with chance
nodes, else pcfr+ from 64k nodes, else pdcfr+, or hs-pcfr+ below 1e-6) and prints
its choice.

The solver runs until --iterations or --time_limit (whichever comes first) and its
average strategy is evaluated per --eval_every: ``log`` (iterations 1, 2, 4, 8, ...,
and the last), ``N`` (every N iterations) or ``Ns`` (every N seconds of solver time).
Each evaluation appends a row to <output_dir>/<game>__<solver>.csv and prints it
(<game> and <solver>: a readable prefix of the string plus a hash of all of it, so
two configurations never share a file):

  game            the game string
  solver          the solver string
  time            seconds spent in the solver's iterations (tree construction and
                  evaluations excluded; the construction time is printed once)
  iterations      iterations completed
  visited_states  histories touched so far, including random-playout histories
                  ([S] §5.1's measure); empty for stock OpenSpiel solvers
  nash_conv       sum of both players' best-response gains (the thesis's and
                  CFRPlayground's "exploitability")
  exploitability  NashConv / 2 (OpenSpiel's `exploitability`)

A log-log plot of exploitability against --plot_x of every run of the game in
<output_dir> is written to <output_dir>/<game>.png. --save_strategy writes the average
strategy (atomically, after every evaluation) to a strategy file holding the game
string and information-set keys; --load_strategy evaluates such a file instead of
solving and refuses a damaged file or one of another game.

ggp_cr's CFR solvers also write <output_dir>/<game>__<solver>.checkpoint.npz at every
evaluation; after an interruption, the same command with --resume (and the same or a
larger budget) continues from the last checkpoint and appends to the CSV, as an
uninterrupted run would have (only the time column reflects the actual run).
"""

import os
import time

from absl import app
from absl import flags

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms import contracts
from ggp_cr.algorithms import progress_bars
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.config import number_ranges
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.evaluation import solver_runs
from ggp_cr.algorithms.files import output_paths
from ggp_cr.algorithms.files import result_names
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import strategy_files
from ggp_cr.examples import cli

_GAME = flags.DEFINE_string("game", "kuhn_poker",
                            "Game string, e.g. leduc_poker or python_leduc(max_raises=3).")
_SOLVER = flags.DEFINE_string("solver", "cfr+", "Solver string, see --list_solvers.")
_LIST_SOLVERS = flags.DEFINE_bool("list_solvers", False,
                                  "Print the accepted solvers and exit.")
_ITERATIONS = cli.integer_flag("iterations", None, "Stop after this many iterations.",
                               minimum=1)
_TIME_LIMIT = flags.DEFINE_float("time_limit", None,
                                 "Stop after this many seconds of solver time.")
_EVAL_EVERY = flags.DEFINE_string(
    "eval_every", "log", "When to evaluate: 'log' (iterations 1, 2, 4, ...), 'N' "
    "(every N iterations) or 'Ns' (every N seconds of solver time).")
_OUTPUT_DIR = flags.DEFINE_string("output_dir", os.path.join("results", "solve"),
                                  "Directory of the CSV files and plots.")
_OVERWRITE = flags.DEFINE_bool("overwrite", False,
                               "Replace an existing CSV of the same game and solver.")
_RESUME = flags.DEFINE_bool(
    "resume", False, "Continue an interrupted run of the same game and solver in "
    "--output_dir from its checkpoint (ggp_cr's CFR solvers write one at every "
    "evaluation), up to the new --iterations / --time_limit.")
_PLOT_X = flags.DEFINE_enum("plot_x", "time", ["time", "iterations", "visited_states"],
                            "x axis of the plot.")
_SEED = cli.integer_flag("seed", 0, "Seed of solvers that sample.",
                         maximum=number_ranges.MAX_SEED)
_CACHE_DIR = flags.DEFINE_string(
    "cache_dir", None, "Cache compiled game trees in this directory (e.g. results/trees).")
_SAVE_STRATEGY = flags.DEFINE_string(
    "save_strategy", None, "Write the average strategy to this strategy file.")
_LOAD_STRATEGY = flags.DEFINE_string(
    "load_strategy", None,
    "Evaluate this strategy file instead of solving (its game unless --game is given).")
_WORKERS = cli.workers_flag(
    "Processes walking the game tree on the generic route (1: serial; games with a "
    "native extractor and trees of at most 100,000 histories ignore it)")

def load_game(game_string):
  try:
    return registry.load_game(game_string)
  except ValueError as error:
    raise app.UsageError(str(error)) from None


def evaluate_strategy_file(path):
  game_string = _GAME.value if _GAME.present else None
  try:
    if game_string is None:
      game_string = strategy_files.read_game_string(path)
    game = load_game(game_string)
    tree = compiled_tree.compile_game(game, cache_dir=_CACHE_DIR.value,
                                       workers=cli.useful_workers(_WORKERS))
    slots = strategy_files.load_strategy(path, tree)
  except ValueError as error:
    raise app.UsageError(str(error)) from None
  nash_conv = exact_br.nash_conv_slots(tree, slots).nash_conv
  print(f"strategy file:  {path}")
  print(f"game:           {tree.game_string}")
  print(f"nash_conv:      {nash_conv:.9g}")
  print(f"exploitability: {nash_conv / 2:.9g}")


def _check_flags():
  if _ITERATIONS.value is None and _TIME_LIMIT.value is None:
    raise app.UsageError("Give --iterations and/or --time_limit.")
  if _TIME_LIMIT.value is not None and not _TIME_LIMIT.value > 0:
    raise app.UsageError(f"--time_limit must be > 0 seconds, got {_TIME_LIMIT.value}.")
  try:
    if _TIME_LIMIT.value is not None:
      number_ranges.seconds(_TIME_LIMIT.value, "--time_limit")
    return solver_runs.parse_eval_every(_EVAL_EVERY.value)
  except ValueError as error:
    raise app.UsageError(str(error)) from None


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Unexpected arguments: {argv[1:]}")
  if _LIST_SOLVERS.value:
    print(registry.describe_solvers())
    return
  try:
    if _CACHE_DIR.value is not None:
      output_paths.check_directory(_CACHE_DIR.value, "--cache_dir")
    if not _LOAD_STRATEGY.value:
      output_paths.check_directory(_OUTPUT_DIR.value, "--output_dir")
    if _SAVE_STRATEGY.value:
      output_paths.check_file(_SAVE_STRATEGY.value, "--save_strategy")
  except ValueError as error:
    raise app.UsageError(str(error)) from None
  if _LOAD_STRATEGY.value:
    evaluate_strategy_file(_LOAD_STRATEGY.value)
    return
  schedule = solver_runs.EvaluationSchedule(*_check_flags())
  try:
    spec = registry.parse_solver(_SOLVER.value)
  except ValueError as error:
    raise app.UsageError(str(error)) from None
  game = load_game(_GAME.value)
  csv_path = os.path.join(_OUTPUT_DIR.value,
                          f"{result_names.key(str(game))}__"
                          f"{result_names.key(str(spec))}.csv")
  checkpoint = solver_runs.checkpoint_path(csv_path)
  if _RESUME.value:
    if _OVERWRITE.value:
      raise app.UsageError("--resume and --overwrite exclude each other.")
    if not (os.path.exists(csv_path) and os.path.exists(checkpoint)):
      raise app.UsageError(f"Nothing to resume: {csv_path} or {checkpoint} is missing.")
  elif os.path.exists(csv_path) and not _OVERWRITE.value:
    raise app.UsageError(f"{csv_path} exists; pass --resume to continue that run, "
                         "--overwrite to replace it, or choose another --output_dir.")
  os.makedirs(_OUTPUT_DIR.value, exist_ok=True)

  start = time.perf_counter()
  try:
    target = game
    if spec.solver_type.accepts_tree:
      target = compiled_tree.compile_game(game, cache_dir=_CACHE_DIR.value,
                                          progress=True, workers=cli.useful_workers(_WORKERS))
    solver = registry.make_solver(spec, target, seed=_SEED.value)
    evaluator = solver_runs.AverageStrategyEvaluator(game, solver,
                                                     _CACHE_DIR.value)
  except ValueError as error:
    raise app.UsageError(f"Cannot run {spec} on {game}: {error}") from None
  if spec.name == "auto":
    print(f"auto chose {solver!r}")
  print(f"Solving {game} with {spec}; setup (tree construction) took "
        f"{time.perf_counter() - start:.2f} s; writing {csv_path}", flush=True)

  iterations, solver_seconds = 0, 0.0
  resumable = isinstance(solver, contracts.Resumable)
  if _RESUME.value:
    if not resumable:
      raise app.UsageError(f"{spec} cannot be resumed (no solver state to restore).")
    try:
      iterations, solver_seconds, state = solver_runs.load_checkpoint(checkpoint, str(game),
                                                          str(spec))
      solver.load_state_dict(state)
      solver_runs.truncate_rows(csv_path, iterations)
    except (ValueError, KeyError) as error:
      raise app.UsageError(f"Cannot resume from {checkpoint}: {error}") from None
    schedule.catch_up(iterations, solver_seconds)
    print(f"Resumed after {iterations:,} iterations and {solver_seconds:.2f} s.")

  def spent(iterations, seconds):
    return ((_ITERATIONS.value is not None and iterations >= _ITERATIONS.value) or
            (_TIME_LIMIT.value is not None and seconds >= _TIME_LIMIT.value))

  def save(iterations, seconds, slots):
    """The checkpoint and strategy of the evaluation just written to the CSV."""
    if resumable:
      solver_runs.save_checkpoint(checkpoint, str(game), str(spec), iterations, seconds,
                                  solver.state_dict())
    if _SAVE_STRATEGY.value:
      strategy_files.save_strategy(_SAVE_STRATEGY.value, evaluator.tree, slots)

  try:
    output = solver_runs.open_rows(csv_path, resume=_RESUME.value)
  except ValueError as error:
    raise app.UsageError(str(error)) from None
  by_iterations = _ITERATIONS.value is not None
  meter = progress_bars.bar(_ITERATIONS.value if by_iterations else _TIME_LIMIT.value,
                            "it" if by_iterations else "s", "solving",
                            iterations if by_iterations else solver_seconds)
  with output, meter:
    try:
      iterations, interrupted = solver_runs.solve_loop(
          solver, evaluator, output, schedule, spent, save, (game, spec), iterations,
          solver_seconds, lambda seconds: meter.update(
              1 if by_iterations else min(seconds, max(meter.total - meter.n, 0))))
      meter.close()
      if interrupted:
        print(f"Interrupted after {iterations:,} iterations; {csv_path} holds every "
              "evaluation so far" + ("; rerun with --resume to continue." if resumable
                                     else "."))
    finally:
      meter.close()
      plot = solver_runs.plot_runs(_OUTPUT_DIR.value, str(game), _PLOT_X.value)
      print(f"Plot: {plot}")
  if _SAVE_STRATEGY.value and os.path.exists(_SAVE_STRATEGY.value):
    print(f"Average strategy saved to {_SAVE_STRATEGY.value}")
  return cli.EXIT_INTERRUPTED if interrupted else 0


if __name__ == "__main__":
  cli.run(main)
