"""Benchmark (product.md bar 4): outcome-sampling MCCFR speed vs OpenSpiel's C++.

Runs, in one process and on the same game, OpenSpiel's C++
`pyspiel.OutcomeSamplingMCCFRSolver` (calling back into the Python game), our live
`OutcomeSamplingSolver` and our compiled fast path `CompiledOutcomeSamplingSolver`,
each for --seconds per run, --runs times, and reports the median speed of each.

Speeds are episodes per second: OpenSpiel's C++ `run_iteration` samples one episode
(it alternates the updated player), ours sample one per player per iteration, so one
of our iterations counts two episodes. All three use the same hyper-parameters:
exploration 0.6, regret matching, no baseline, no incremental tree building. The tree
is extracted once before timing (its time is printed separately; --cache_dir keeps it
on disk). The last line is the ratio compiled / OpenSpiel C++.

  python benchmarks/os_mccfr_vs_openspiel.py [--game=python_ii_goofspiel(num_cards=6)]
      [--seconds=5] [--runs=5] [--cache_dir=DIR]
"""

import statistics
import time

from absl import app
from absl import flags
import pyspiel

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.sampling import compiled_outcome_sampling
from ggp_cr.algorithms.sampling import outcome_sampling
from ggp_cr.algorithms.tree import compiled_tree

_GAME = flags.DEFINE_string("game", "python_ii_goofspiel(num_cards=6)", "Game string.")
_SECONDS = flags.DEFINE_float("seconds", 5.0, "Seconds per timed run.")
_RUNS = flags.DEFINE_integer("runs", 5, "Timed runs per solver (the median is reported).")
_CACHE_DIR = flags.DEFINE_string("cache_dir", None,
                                 "Directory caching the compiled tree between runs.")
_WORKERS = flags.DEFINE_integer(
    "workers", 1, "Processes walking the game tree on the generic route (1: serial; "
    "games with a native extractor ignore it).", lower_bound=1)

_EXPLORATION = 0.6


def _episodes_per_second(step, episodes_per_step, seconds):
  """Calls step() for `seconds`; returns episodes per second."""
  steps = 0
  start = time.perf_counter()
  while True:
    step()
    steps += 1
    elapsed = time.perf_counter() - start
    if elapsed >= seconds:
      return steps * episodes_per_step / elapsed


def main(argv):
  del argv
  game = pyspiel.load_game(_GAME.value)
  start = time.perf_counter()
  tree = compiled_tree.compile_game(game, cache_dir=_CACHE_DIR.value,
                                     workers=_WORKERS.value)
  print(f"game: {game}")
  print(f"tree: {tree}, ready in {time.perf_counter() - start:.1f} s (extracted, or "
        f"read from --cache_dir if it was cached there)")

  speeds = {"openspiel_cpp": [], "live": [], "compiled": []}
  batch = 10_000
  for run in range(_RUNS.value):
    cpp = pyspiel.OutcomeSamplingMCCFRSolver(game, _EXPLORATION, run)
    speeds["openspiel_cpp"].append(
        _episodes_per_second(cpp.run_iteration, 1, _SECONDS.value))
    live = outcome_sampling.OutcomeSamplingSolver(
        game, exploration=_EXPLORATION, incremental=False, seed=run)
    speeds["live"].append(_episodes_per_second(live.iteration, 2, _SECONDS.value))
    fast = compiled_outcome_sampling.CompiledOutcomeSamplingSolver(
        tree, exploration=_EXPLORATION, incremental=False, seed=run)
    fast.run(1)  # numba compilation outside the timing
    speeds["compiled"].append(
        _episodes_per_second(lambda: fast.run(batch), 2 * batch, _SECONDS.value))
    print(f"run {run}: " + ", ".join(f"{name} {values[-1]:,.0f}"
                                     for name, values in speeds.items()) +
          " episodes/s", flush=True)

  medians = {name: statistics.median(values) for name, values in speeds.items()}
  for name, value in medians.items():
    print(f"median {name}: {value:,.0f} episodes/s")
  print(f"live / openspiel_cpp: {medians['live'] / medians['openspiel_cpp']:.2f}")
  print(f"ratio: {medians['compiled'] / medians['openspiel_cpp']:.1f}")


if __name__ == "__main__":
  app.run(main)
