"""Benchmark: building continual resolving's StateKeys, native vs the pyspiel walk.

subgame_trace.StateKeys holds the information state of the player who does not
act at every decision node of a compiled tree; the games with a native extractor
build it natively (native_extraction.state_keys), every other game by a pyspiel walk
over the whole game (route "generic"). For each game (tree by native extraction, not
timed) prints the native build's time (median of --repeats, after one untimed call
that loads its numba code), the generic build's (one run; --generic=false skips it),
whether both agree (keys and strings) and generic / native. Last line `ratio:
<float>`, the smallest generic / native over the games timed both ways.

  python benchmarks/state_keys_build.py [--generic=false] [--repeats=3]
      [--game="python_leduc(max_raises=3,cards_per_suit=10)" --game=python_rps]
"""

import statistics
import time

from absl import app
from absl import flags
import numpy as np
import pyspiel

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.resolving.subgames import subgame_trace
from ggp_cr.algorithms.tree import compiled_tree

_DEFAULT_GAMES = ("python_leduc(stack1=100,stack2=100,max_raises=3,cards_per_suit=30)",
                  "python_ii_goofspiel(num_cards=6)", "python_princess_monster(max_turns=8)",
                  "python_latent_ttt")

_GAMES = flags.DEFINE_multi_string("game", list(_DEFAULT_GAMES), "A game string.")
_GENERIC = flags.DEFINE_bool("generic", True, "Also time the (slow) pyspiel walk.")
_REPEATS = flags.DEFINE_integer("repeats", 3, "Timed native builds per game.")


def _timed(tree, route):
  start = time.perf_counter()
  keys = subgame_trace.StateKeys.build(tree, route=route)
  return time.perf_counter() - start, keys


def main(argv):
  del argv
  ratios = []
  for game_string in _GAMES.value:
    tree = compiled_tree.compile_game(pyspiel.load_game(game_string), route="native")
    print(f"game: {game_string}  {tree.num_nodes:,} histories", flush=True)
    first, native = _timed(tree, "native")
    seconds = statistics.median(_timed(tree, "native")[0]
                                for _ in range(_REPEATS.value))
    print(f"  native : {seconds:8.2f} s (first call {first:.2f} s), "
          f"{len(native.strings):,} extra strings", flush=True)
    if _GENERIC.value:
      walk, generic = _timed(tree, "generic")
      same = (np.array_equal(native.keys, generic.keys)
              and native.strings == generic.strings)
      print(f"  generic: {walk:8.2f} s  {'equal' if same else 'DIFFERENT'}  "
            f"generic / native {walk / seconds:.1f}", flush=True)
      if not same:
        raise SystemExit(f"{game_string}: native and generic state keys differ.")
      ratios.append(walk / seconds)
  if ratios:
    print(f"ratio: {min(ratios):.1f}")


if __name__ == "__main__":
  app.run(main)
