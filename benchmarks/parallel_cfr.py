"""Benchmark: CFR+ on one thread against several (cfr/parallel_passes.py, issue 45), in
the same run, on the thesis's Table 5.1 games.

Per game, two CFRPlusSolvers on the same tree (threads=1 and threads=--threads) run
--iterations iterations in turn, --runs times; printed are the medians of the wall
seconds scaled to 10^9 visited states, the CPU seconds of each busy thread (Linux:
/proc/self/task; on a loaded machine they show what an idle one would give, as the
wall seconds then do not) and whether the two average strategies are bit for bit
equal. Last line: `ratio: <float>`, the smallest per-game ratio of one thread's
median wall seconds to the threaded solver's.

  python benchmarks/parallel_cfr.py [--threads=2] [--runs=5] [--iterations=20]
      [--games=...]
"""

import os
import statistics
import time

from absl import app
from absl import flags
import numba
import numpy as np
import pyspiel

from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.tree import compiled_tree

_GAMES = flags.DEFINE_list(
    "games", ["python_latent_ttt", "python_ii_goofspiel(num_cards=6)",
              "python_leduc(stack1=100,stack2=100,max_raises=3,cards_per_suit=30)",
              "python_princess_monster(max_turns=8)"],
    "Game strings ([S] Table 5.1).")
_THREADS = flags.DEFINE_integer("threads", 2, "Threads of the parallel solver.",
                                lower_bound=2)
_RUNS = flags.DEFINE_integer("runs", 5, "Timed runs per solver; medians reported.",
                             lower_bound=1)
_ITERATIONS = flags.DEFINE_integer("iterations", 20, "CFR+ iterations per run.",
                                   lower_bound=1)
_CACHE_DIR = flags.DEFINE_string(
    "cache_dir", os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                              "results", "trees"),
    "Directory of cached compiled trees.")


def _thread_cpu():
  """CPU seconds of each of this process's threads, by thread id ({} off Linux)."""
  seconds = {}
  task_dir = "/proc/self/task"
  if not os.path.isdir(task_dir):
    return seconds
  for tid in os.listdir(task_dir):
    try:
      with open(os.path.join(task_dir, tid, "stat"), encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
      continue
    seconds[tid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
  return seconds


def _timed(solver, iterations):
  """(wall seconds, the busy threads' CPU seconds, largest first) of the iterations."""
  before = _thread_cpu()
  start = time.perf_counter()
  solver.iterate(iterations)
  wall = time.perf_counter() - start
  after = _thread_cpu()
  busy = sorted((after[tid] - before.get(tid, 0.0) for tid in after), reverse=True)
  return wall, busy[:max(solver.threads, 1) + 1]


def main(argv):
  del argv
  if _THREADS.value > numba.config.NUMBA_NUM_THREADS:
    raise SystemExit(f"--threads must be at most NUMBA_NUM_THREADS = "
                     f"{numba.config.NUMBA_NUM_THREADS}, got {_THREADS.value}.")
  print(f"load average: {os.getloadavg()[0]:.2f}; threads: 1 and {_THREADS.value}")
  ratios = []
  for game_string in _GAMES.value:
    tree = compiled_tree.compile_game(pyspiel.load_game(game_string),
                                       cache_dir=_CACHE_DIR.value)
    solvers = [cfr.CFRPlusSolver(tree, threads=threads)
               for threads in (1, _THREADS.value)]
    for solver in solvers:
      solver.iterate(1)  # kernels and split plans; not timed
    scale = 1e9 / (2 * tree.num_nodes * _ITERATIONS.value)
    walls = [[], []]
    cpus = [[], []]
    for _ in range(_RUNS.value):
      for k, solver in enumerate(solvers):
        wall, busy = _timed(solver, _ITERATIONS.value)
        walls[k].append(wall * scale)
        cpus[k].append(busy)
    same = np.array_equal(solvers[0].average_strategy_slots(),
                          solvers[1].average_strategy_slots())
    print(f"{game_string}: {tree.num_nodes:,} nodes; load {os.getloadavg()[0]:.2f}")
    for k, solver in enumerate(solvers):
      busiest = [statistics.median(run[i] for run in cpus[k]) * scale
                 for i in range(min(len(run) for run in cpus[k]))]
      print(f"  threads={solver.threads}: {statistics.median(walls[k]):.2f} s wall "
            f"for 1e9 visited states (runs: "
            f"{', '.join(f'{w:.2f}' for w in walls[k])}); busiest threads' CPU s: "
            f"{', '.join(f'{c:.2f}' for c in busiest)}")
    ratio = statistics.median(walls[0]) / statistics.median(walls[1])
    ratios.append(ratio)
    print(f"  wall ratio {ratio:.2f}; average strategies bit for bit equal: {same}",
          flush=True)
  print(f"ratio: {min(ratios):.2f}")


if __name__ == "__main__":
  app.run(main)
