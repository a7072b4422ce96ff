"""Benchmark: full-width CFR+ per iteration, ggp_cr vs OpenSpiel's C++ CFRPlusSolver.

Performance bar 1 of the spec (product.md): on leduc_poker, ggp_cr's CFRPlusSolver
(compiled tree + numba) against `pyspiel.CFRPlusSolver` in the same process, with the
same exploitability after --iterations (default 1000) to 1e-9. Both solvers run the
iterations in interleaved chunks of --chunk iterations; each chunk's time per
iteration is one sample and the figures are the medians over the chunks. CPU time of
this process (time.process_time) is the measure, so other load on the machine does not
count against either solver; wall-clock medians are printed too. The tree build is
timed separately. Last line: `ratio: <float>` = OpenSpiel's median CPU time per
iteration / ggp_cr's.

  python benchmarks/cfr_vs_openspiel.py [--game=leduc_poker] [--iterations=1000]
"""

import statistics
import time

from absl import app
from absl import flags
from open_spiel.python import policy as policy_lib
import pyspiel

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.tree import compiled_tree

_GAME = flags.DEFINE_string("game", "leduc_poker", "Game string.")
_ITERATIONS = flags.DEFINE_integer("iterations", 1000, "Iterations of both solvers.")
_CHUNK = flags.DEFINE_integer("chunk", 50, "Iterations per timed chunk.")
_WORKERS = flags.DEFINE_integer(
    "workers", 1, "Processes walking the game tree on the generic route (1: serial; "
    "games with a native extractor ignore it).", lower_bound=1)


def _timed_chunk(solver, iterations):
  wall, cpu = time.perf_counter(), time.process_time()
  for _ in range(iterations):
    solver.evaluate_and_update_policy()
  return ((time.process_time() - cpu) / iterations,
          (time.perf_counter() - wall) / iterations)


def main(argv):
  del argv
  if _ITERATIONS.value % _CHUNK.value:
    raise app.UsageError("--iterations must be a multiple of --chunk.")
  game = pyspiel.load_game(_GAME.value)
  print(f"game: {game}")
  start = time.perf_counter()
  tree = compiled_tree.compile_game(game, workers=_WORKERS.value)
  print(f"tree: {tree}, built in {time.perf_counter() - start:.3f} s")
  ours = cfr.CFRPlusSolver(tree)
  theirs = pyspiel.CFRPlusSolver(game)

  samples = {"ggp_cr": [], "openspiel": []}
  for chunk in range(_ITERATIONS.value // _CHUNK.value):
    samples["ggp_cr"].append(_timed_chunk(ours, _CHUNK.value))
    samples["openspiel"].append(_timed_chunk(theirs, _CHUNK.value))
    print(f"  {(chunk + 1) * _CHUNK.value:5d} iterations: ggp_cr "
          f"{samples['ggp_cr'][-1][0] * 1e3:.3f} ms/it, OpenSpiel C++ "
          f"{samples['openspiel'][-1][0] * 1e3:.3f} ms/it (CPU)", flush=True)

  ours_exploitability = exact_br.exploitability_slots(
      tree, ours.average_strategy_slots())
  theirs_exploitability = pyspiel.exploitability(game, theirs.average_policy())
  ours_openspiel = pyspiel.exploitability(
      game, policy_lib.python_policy_to_pyspiel_policy(ours.average_policy()))
  difference = max(abs(ours_exploitability - theirs_exploitability),
                   abs(ours_openspiel - theirs_exploitability))
  print(f"exploitability after {_ITERATIONS.value} iterations: ggp_cr "
        f"{ours_exploitability!r} (OpenSpiel's C++ exploitability of it: "
        f"{ours_openspiel!r}), OpenSpiel {theirs_exploitability!r}, "
        f"difference {difference:.2e}")
  if difference > 1e-9:
    raise SystemExit(f"FAIL: exploitabilities differ by {difference:.3e} > 1e-9")

  medians = {}
  for name, values in samples.items():
    cpu = statistics.median(v[0] for v in values)
    wall = statistics.median(v[1] for v in values)
    medians[name] = cpu
    print(f"{name:9s} median of {len(values)} chunks: {cpu * 1e3:.4f} ms/iteration CPU, "
          f"{wall * 1e3:.4f} ms/iteration wall")
  print(f"visited states per ggp_cr iteration: {2 * tree.num_nodes:,}; "
        f"{2 * tree.num_nodes / medians['ggp_cr'] / 1e6:.1f} M states/s CPU")
  print(f"ratio: {medians['openspiel'] / medians['ggp_cr']:.2f}")


if __name__ == "__main__":
  app.run(main)
