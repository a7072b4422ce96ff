"""Benchmark: time and memory of extracting games' compiled trees, by route.

Spec README.md, architecture principle 2: trees are extracted once; python_latent_ttt
(4.85M histories) must fit in a few GB, during extraction too. For each game and route
(generic serial walk, generic walk in 2 worker processes, native extractor; see native_extraction.py) prints the cold
extraction time (no tree cache; median of --repeats runs), histories per second, the
bytes held by the tree's arrays and the peak resident memory growth during extraction
(Linux: the peak is reset through /proc/self/clear_refs before each run; for the
2-worker route, of the main process only). Every run is
made in a fresh process; the native route's first call there also loads its numba
code from numba's on-disk cache, so it is reported apart ("first call") and the
native figures are those of a second extraction in the same process. Last line:
`seconds: <float>`, the python_latent_ttt extraction by the default route
(compile_game's "auto") as a first call in a fresh process, numba load included
(there is no OpenSpiel peer to compare with).

  python benchmarks/compiled_tree_extraction.py [--generic=false] [--repeats=3]
      [--games=python_latent_ttt,python_ii_goofspiel(num_cards=6)]
"""

import concurrent.futures
import gc
import multiprocessing
import statistics
import sys
import time

from absl import app
from absl import flags
import pyspiel

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import native_extraction

_DEFAULT_GAMES = ("python_latent_ttt", "python_ii_goofspiel(num_cards=6)",
                  "python_leduc(stack1=100,stack2=100,max_raises=3,cards_per_suit=30)",
                  "python_princess_monster(max_turns=8)")
# One line per column: (name, compile_game keywords, flag that enables it).
_ROUTES = (
    ("generic", {"route": "generic"}, "generic"),
    ("generic, 2 workers", {"route": "generic", "workers": 2}, "generic"),
    ("native", {"route": "native"}, "native"),
)

_GAMES = flags.DEFINE_list("games", list(_DEFAULT_GAMES), "Game strings.")
_GENERIC = flags.DEFINE_bool("generic", True, "Run the (slow) generic serial route.")
_NATIVE = flags.DEFINE_bool("native", True, "Run the native route.")
_REPEATS = flags.DEFINE_integer("repeats", 1, "Timed runs per game and route.")
_TIMING_GAME = "python_latent_ttt"


def _memory_kib(field):
  with open("/proc/self/status", encoding="ascii") as status:
    for line in status:
      if line.startswith(field + ":"):
        return int(line.split()[1])
  raise RuntimeError(f"/proc/self/status has no {field}.")


def _run(game_string, keywords):
  """(seconds, peak memory growth in bytes, tree) of one cold extraction."""
  game = pyspiel.load_game(game_string)
  gc.collect()
  with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
    refs.write("5")  # resets VmHWM, the peak resident set, to the current one
  baseline = _memory_kib("VmRSS")
  start = time.perf_counter()
  tree = compiled_tree.compile_game(game, **keywords)
  seconds = time.perf_counter() - start
  return seconds, (_memory_kib("VmHWM") - baseline) * 1024, tree


def _measure(game_string, keywords):
  """One run in a fresh process: (first-call seconds, seconds, memory growth, tree
  summary). For the native route the measured run is the second: the first loads
  numba's cache (its time is the first-call seconds)."""
  first, growth, tree = _run(game_string, keywords)
  seconds = first
  if keywords.get("route") == "native":
    del tree
    seconds, growth, tree = _run(game_string, keywords)
  return (first, seconds, growth, tree.num_nodes, tree.nbytes(),
          sum(map(sys.getsizeof, tree.infoset_keys)), repr(tree))


def main(argv):
  del argv
  enabled = {"generic": _GENERIC.value, "native": _NATIVE.value}
  timing = None
  context = multiprocessing.get_context("spawn")
  for game_string in _GAMES.value:
    game = pyspiel.load_game(game_string)
    print(f"game: {game}", flush=True)
    tree = None
    for name, keywords, flag in _ROUTES:
      if not enabled[flag]:
        continue
      if keywords.get("route") == "native" and not native_extraction.has_native(game):
        print(f"  {name:>10}: no native extractor")
        continue
      runs = []
      for _ in range(_REPEATS.value):
        # A non-daemonic worker process, so that the 2-worker route can start its own.
        with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
          runs.append(pool.submit(_measure, game_string, keywords).result())
      first, seconds, growth = (statistics.median(run[i] for run in runs)
                                for i in range(3))
      num_nodes, arrays, keys, tree = runs[0][3:]
      print(f"  {name:>10}: {seconds:8.2f} s  {num_nodes / seconds:>12,.0f} "
            f"histories/s  first call {first:.2f} s  peak growth "
            f"{growth / 2**20:7.1f} MiB = {growth / arrays:.2f} x the arrays "
            f"({arrays / 2**20:.1f} MiB), {growth / (arrays + keys):.2f} x arrays + "
            f"key strings ({keys / 2**20:.1f} MiB)", flush=True)
      if game_string == _TIMING_GAME and (
          keywords.get("route") == ("native" if native_extraction.has_native(game)
                                    else "generic")):
        timing = first
    if tree is not None:
      print(f"  tree: {tree}", flush=True)
  if timing is not None:
    print(f"seconds: {timing:.2f}")


if __name__ == "__main__":
  app.run(main)
