"""Benchmark: what deciding the compiled path costs (issue 44, items 1-2).

For each game, a fresh process runs compiled_tree.available_tree(game) with the default
limit (a share of available memory, tree_limits) and reports the wall time of the
decision (the extraction included when the tree fits), the process's peak resident
memory, and the decision. The last line, `max refusal seconds: <float>`, is the longest
time a refused game took.

  PYTHONPATH=. python benchmarks/path_decision.py \\
      [--games="python_ii_goofspiel(num_cards=6);python_ii_goofspiel(num_cards=13)"]
"""

import json
import subprocess
import sys

from absl import app
from absl import flags

_GAMES = flags.DEFINE_string(
    "games", "python_ii_goofspiel(num_cards=6);python_ii_goofspiel(num_cards=8);"
    "python_ii_goofspiel(num_cards=13);liars_dice(numdice=2)",
    "Semicolon-separated game strings (python_ii_goofspiel(num_cards=7) extracts about "
    "98 M histories, about 4.3 GB).")

_CHILD = """
import json, resource, sys, time
import pyspiel
import ggp_cr
from ggp_cr.algorithms.tree import compiled_tree
game = pyspiel.load_game(sys.argv[1])
start = time.perf_counter()
tree, reason = compiled_tree.available_tree(game)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "compiled": tree is not None, "reason": reason,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Unexpected arguments: {argv[1:]}")
  longest_refusal = 0.0
  for game in filter(None, _GAMES.value.split(";")):
    result = subprocess.run([sys.executable, "-c", _CHILD, game], capture_output=True,
                            text=True, check=False)
    if result.returncode:
      raise app.UsageError(f"{game}: {result.stderr.strip().splitlines()[-1]}")
    row = json.loads(result.stdout.strip().splitlines()[-1])
    if not row["compiled"]:
      longest_refusal = max(longest_refusal, row["seconds"])
    print(f"{game}: {'compiled' if row['compiled'] else 'refused'} in "
          f"{row['seconds']:.2f} s, peak {row['peak_mb']:.0f} MB; {row['reason']}",
          flush=True)
  print(f"max refusal seconds: {longest_refusal:.3f}")


if __name__ == "__main__":
  app.run(main)
