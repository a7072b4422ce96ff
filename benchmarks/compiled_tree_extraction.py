"""Benchmark: time and memory of extracting a game's compiled tree.

Spec README.md, architecture principle 2: trees are extracted once; python_latent_ttt
(4.85M histories) must fit in a few GB, during extraction too. Prints the tree size,
the extraction time, the bytes per history held by the tree's arrays, and the peak
resident memory growth of the process during extraction per history; last,
`seconds: <float>`, the extraction time (there is no OpenSpiel peer to compare with).

  python benchmarks/compiled_tree_extraction.py [--game=python_latent_ttt]
"""

import resource
import time

from absl import app
from absl import flags
import pyspiel

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.tree import compiled_tree

_GAME = flags.DEFINE_string("game", "python_latent_ttt", "Game string.")


def _peak_rss_bytes():
  return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def main(argv):
  del argv
  game = pyspiel.load_game(_GAME.value)
  baseline = _peak_rss_bytes()
  start = time.perf_counter()
  tree = compiled_tree.compile_game(game, progress=True)
  seconds = time.perf_counter() - start
  growth = _peak_rss_bytes() - baseline
  keys_bytes = sum(len(key) for key in tree.infoset_keys)
  print(f"game: {game}")
  print(f"tree: {tree}")
  print(f"extraction: {seconds:.1f} s, "
        f"{seconds / tree.num_nodes * 1e6:.2f} us per history")
  print(f"tree arrays: {tree.nbytes() / 2**20:.1f} MiB, "
        f"{tree.nbytes() / tree.num_nodes:.1f} bytes per history "
        f"(+ {keys_bytes / 2**20:.1f} MiB of infoset key text)")
  print(f"peak memory growth during extraction: {growth / 2**20:.1f} MiB, "
        f"{growth / tree.num_nodes:.1f} bytes per history")
  print(f"seconds: {seconds:.1f}")


if __name__ == "__main__":
  app.run(main)
