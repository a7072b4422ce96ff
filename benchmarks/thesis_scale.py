"""Benchmark: seconds for 10^9 visited states of CFR+ (or --solver) on the thesis's
Table 5.1 games.

Performance bar 3 of the spec (product.md, [S] §5.1): single-threaded CFR+ (ggp_cr's
CFRPlusSolver on the compiled tree) must visit 10^9 states (histories touched; one
alternating iteration touches 2 |H|) in under 60 s on each of python_latent_ttt,
python_ii_goofspiel(num_cards=6), python_leduc(stack1=100,stack2=100,max_raises=3,
cards_per_suit=30) and python_princess_monster(max_turns=8); the aim is 30 s. The thesis's
Java implementation needed 30 minutes.

Tree construction is timed separately and cached on disk (--cache_dir, git-ignored
results/ by default): a later run loads the tree instead of rebuilding it. Each game's
figure is the median over --runs fresh solvers of the wall-clock seconds until
`visited_states` >= --states (CPU seconds are printed too). Games that are not
registered are reported and skipped. Last line: `seconds: <float>`, the largest
per-game median (the bar applies to every game).

With --solver (a registry solver string, e.g. vr_mccfr) it times that solver instead
and prints its speed ratio to the thesis's 10^9 states per 30 minutes and the thesis's
Table 5.7 budgets scaled by it.

--threads=N runs the CFR family's passes on N threads (the solver string's
`threads`, cfr/parallel_passes.py; default 1) and sets numba's thread count to N;
each run prints how many of its passes ran on threads.

  python benchmarks/thesis_scale.py [--runs=3] [--states=1e9] [--games=...]
      [--solver=cfr+] [--threads=2]
"""

import os
import statistics
import time

from absl import app
from absl import flags
import numba
import pyspiel

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.tree import compiled_tree

_GAMES = flags.DEFINE_list(
    "games", ["python_latent_ttt", "python_ii_goofspiel(num_cards=6)",
              "python_leduc(stack1=100,stack2=100,max_raises=3,cards_per_suit=30)",
              "python_princess_monster(max_turns=8)"],
    "Game strings ([S] Table 5.1).")
_STATES = flags.DEFINE_float("states", 1e9, "Visited states per run.")
_RUNS = flags.DEFINE_integer("runs", 3, "Runs per game; the median is reported.")
_SOLVER = flags.DEFINE_string(
    "solver", "cfr+", "Solver string (config.registry), e.g. vr_mccfr: the speed ratio "
    "to the thesis's scales its Table 5.7 budgets.")
_CACHE_DIR = flags.DEFINE_string(
    "cache_dir", os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                              "results", "trees"),
    "Directory of cached compiled trees.")
_WORKERS = flags.DEFINE_integer(
    "workers", 1, "Processes walking the game tree on the generic route (1: serial; "
    "games with a native extractor ignore it).", lower_bound=1)
_THREADS = flags.DEFINE_integer(
    "threads", None, "Threads of the CFR family's passes (the solver string's "
    "`threads`; default: the string's, 1 unless it says otherwise).", lower_bound=1)


def _registered(game_string):
  name = game_string.split("(", 1)[0]
  return name in {game.short_name for game in pyspiel.registered_games()}


def _solver_spec():
  """--solver, with --threads as its `threads` if given (solvers without one
  refuse it)."""
  spec = registry.parse_solver(_SOLVER.value)
  if _THREADS.value is None:
    return spec
  if "threads" not in {parameter.name for parameter in spec.solver_type.parameters}:
    raise SystemExit(f"--threads: solver {spec.solver_type.name} has no threads "
                     f"parameter.")
  return registry.with_parameter(spec, "threads", str(_THREADS.value))


def _run(game, tree, states):
  spec = _solver_spec()
  target = tree if spec.solver_type.accepts_tree else game
  registry.make_solver(spec, target).iterate(1)  # loads the numba kernels; not timed
  solver = registry.make_solver(spec, target)
  wall, cpu = time.perf_counter(), time.process_time()
  batch = 1
  while solver.visited_states < states:
    before = solver.visited_states
    solver.iterate(batch)
    per_iteration = max((solver.visited_states - before) / batch, 1.0)
    batch = max(1, int((states - solver.visited_states) / per_iteration / 4))
  return (time.perf_counter() - wall, time.process_time() - cpu, solver)


def main(argv):
  del argv
  if _THREADS.value is not None:
    if _THREADS.value > numba.config.NUMBA_NUM_THREADS:
      raise SystemExit(f"--threads must be at most NUMBA_NUM_THREADS = "
                       f"{numba.config.NUMBA_NUM_THREADS}, got {_THREADS.value}.")
    numba.set_num_threads(_THREADS.value)
  print(f"threads: {numba.get_num_threads()}; load average: "
        f"{', '.join(f'{load:.2f}' for load in os.getloadavg())}", flush=True)
  results = {}
  for game_string in _GAMES.value:
    if not _registered(game_string):
      print(f"{game_string}: not registered, skipped")
      continue
    game = pyspiel.load_game(game_string)
    start = time.perf_counter()
    tree = compiled_tree.compile_game(game, cache_dir=_CACHE_DIR.value, progress=True,
                                       workers=_WORKERS.value)
    print(f"{game}: {tree}; tree built or loaded from the cache in "
          f"{time.perf_counter() - start:.1f} s ({tree.nbytes() / 2**20:.0f} MiB)",
          flush=True)
    walls, cpus = [], []
    for run in range(_RUNS.value):
      wall, cpu, solver = _run(game, tree, _STATES.value)
      walls.append(wall)
      cpus.append(cpu)
      threaded = getattr(solver, "threaded_passes", None)
      print(f"  run {run + 1}: {solver.visited_states:,} visited states in "
            f"{solver.iterations:,} iterations: {wall:.2f} s wall, {cpu:.2f} s CPU"
            + (f"; {threaded:,} passes on {solver.threads} threads"
               if threaded is not None and solver.threads > 1 else ""), flush=True)
    if hasattr(solver, "average_strategy_slots"):
      nash_conv = exact_br.nash_conv_slots(tree, solver.average_strategy_slots())
      print(f"  NashConv of the last run's average strategy: {nash_conv.nash_conv:.6g}")
    results[str(game)] = statistics.median(walls)
    # The thesis's solvers: about 10^9 visited states in 30 minutes ([S] §5.1).
    ratio = 1800.0 * _STATES.value / 1e9 / results[str(game)]
    print(f"  median: {results[str(game)]:.2f} s wall, {statistics.median(cpus):.2f} s "
          f"CPU for {_STATES.value:.3g} visited states; {ratio:.1f}x the thesis's "
          f"states per second, so its 10 s pre-play / 30 s a move / 40 s offline "
          f"scale to {10 / ratio:.3g} / {30 / ratio:.3g} / {40 / ratio:.3g} s",
          flush=True)
  if not results:
    raise SystemExit("No game of --games is registered.")
  for game_string, seconds in results.items():
    print(f"{game_string}: {seconds:.2f} s")
  print(f"seconds: {max(results.values()):.2f}")


if __name__ == "__main__":
  app.run(main)
