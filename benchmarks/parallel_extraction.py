"""Benchmark: speed-up of the parallel compiled-tree extraction over the serial one.

Issue 13, item 1: `compile_game(game, workers=2)` must return the serial tree bit for
bit (checked here) in less time. Per game, the cold serial extraction and the cold
2-worker extraction (process start-up included) are timed `--repeats` times; the
medians and their ratio are printed, with the CPU seconds of all processes (the
parallel overhead) and the CPU-bound speed-up: serial CPU seconds over the main
process's plus the workers' per worker, i.e. the speed-up on an otherwise idle machine
with enough cores (both less sensitive to other load than wall-clock seconds). Last
`ratio: <float>`, the smallest wall-clock speed-up over the games. Timings on a shared
machine are noisy.

  python benchmarks/parallel_extraction.py [--games=...] [--workers=2] [--repeats=1]
"""

import resource
import statistics
import time

from absl import app
from absl import flags
import numpy as np
import pyspiel

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import parallel_extraction

_GAMES = flags.DEFINE_list(
    "games", ["python_ii_goofspiel(num_cards=6)",
              "python_leduc(stack1=100,stack2=100,max_raises=3,cards_per_suit=30)",
              "python_princess_monster(max_turns=8)"],
    "Game strings (python_latent_ttt takes about 4 minutes serially).")
_WORKERS = flags.DEFINE_integer("workers", 2, "Worker processes of the parallel run.")
_REPEATS = flags.DEFINE_integer("repeats", 1, "Timed runs per game and route.")


def _cpu_seconds():
  """CPU seconds of this process and of its ended (joined) child processes."""
  return np.array([usage.ru_utime + usage.ru_stime for usage in (
      resource.getrusage(resource.RUSAGE_SELF),
      resource.getrusage(resource.RUSAGE_CHILDREN))])


def _timed(game, workers):
  """(wall seconds, CPU seconds of all processes, CPU-bound seconds, tree) of a cold
  extraction; CPU-bound: this process's CPU plus the workers' shared evenly, the wall
  time on an otherwise idle machine with `workers` cores (the runs are balanced)."""
  parallel_extraction.shutdown_pools()
  cpu, start = _cpu_seconds(), time.perf_counter()
  tree = compiled_tree.compile_game(game, workers=workers, route="generic")
  seconds = time.perf_counter() - start
  parallel_extraction.shutdown_pools()  # joins the workers, so their CPU time counts
  own, children = _cpu_seconds() - cpu
  return seconds, own + children, own + children / workers, tree


def main(argv):
  del argv
  ratios = []
  for game_string in _GAMES.value:
    game = pyspiel.load_game(game_string)
    serial, parallel, serial_cpu, parallel_cpu, bound = [], [], [], [], []
    for _ in range(_REPEATS.value):
      seconds, cpu, _, reference = _timed(game, 1)
      serial.append(seconds)
      serial_cpu.append(cpu)
      seconds, cpu, cpu_bound, tree = _timed(game, _WORKERS.value)
      parallel.append(seconds)
      parallel_cpu.append(cpu)
      bound.append(serial_cpu[-1] / cpu_bound)
      differences = compiled_tree.tree_differences(reference, tree)
      if differences:
        raise AssertionError(f"{game_string}: the parallel tree differs in "
                             f"{differences}.")
      del reference, tree
    ratio = statistics.median(serial) / statistics.median(parallel)
    ratios.append(ratio)
    print(f"{game}: serial {statistics.median(serial):.1f} s, {_WORKERS.value} workers "
          f"{statistics.median(parallel):.1f} s (medians of {_REPEATS.value}), "
          f"speed-up {ratio:.2f}x; CPU seconds of all processes: serial "
          f"{statistics.median(serial_cpu):.1f}, parallel "
          f"{statistics.median(parallel_cpu):.1f}, CPU-bound speed-up "
          f"{statistics.median(bound):.2f}x", flush=True)
  print(f"ratio: {min(ratios):.2f}")


if __name__ == "__main__":
  app.run(main)
