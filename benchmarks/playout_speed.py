r"""Random-playout throughput of our games against their C++ twins in OpenSpiel.

  python benchmarks/playout_speed.py --seconds=3 --repeats=5

A playout walks from the root to a terminal, at each step listing the legal actions (or
chance outcomes), picking one uniformly at random and creating the child with
`state.child(action)` (a clone plus apply_action), as tree algorithms do. Pairs:
python_ii_goofspiel(6) vs C++ goofspiel(imp_info=True,num_cards=6) turn-based, and
python_leduc in OpenSpiel mode vs C++ leduc_poker. Prints playouts/s (median of the
repeats) and the ratio ours / C++, the last line being the worst pair's ratio
(product.md performance bar 5: bar 0.1, aim 0.2).
"""

import random
import statistics
import time

from absl import app
from absl import flags

import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the games)

_SECONDS = flags.DEFINE_float("seconds", 2.0, "Seconds per measurement.")
_REPEATS = flags.DEFINE_integer("repeats", 5, "Measurements per game (median taken).")

PAIRS = [
    ("python_ii_goofspiel(num_cards=6,points_order=ascending)",
     "turn_based:goofspiel(imp_info=True,num_cards=6,points_order=ascending)"),
    ("python_leduc(fold_only_facing_bet=true,deal_from_deck=true)", "leduc_poker"),
]


def load(game_string):
  if game_string.startswith("turn_based:"):
    return pyspiel.load_game_as_turn_based(game_string[len("turn_based:"):])
  return pyspiel.load_game(game_string)


def playouts_per_second(game, seconds, rng):
  """Number of random playouts completed per second over about `seconds`."""
  root = game.new_initial_state()
  count = 0
  start = time.perf_counter()
  deadline = start + seconds
  while True:
    for _ in range(100):
      state = root
      while not state.is_terminal():
        if state.is_chance_node():
          outcomes, probs = zip(*state.chance_outcomes())
          action = rng.choices(outcomes, probs)[0]
        else:
          action = rng.choice(state.legal_actions())
        state = state.child(action)
      count += 1
    now = time.perf_counter()
    if now >= deadline:
      return count / (now - start)


def main(argv):
  del argv
  rng = random.Random(0)
  ratios = []
  for ours, theirs in PAIRS:
    speeds = {}
    for name in (ours, theirs):
      game = load(name)
      runs = [playouts_per_second(game, _SECONDS.value, rng)
              for _ in range(_REPEATS.value)]
      speeds[name] = statistics.median(runs)
      print(f"{name:70s} {speeds[name]:12,.0f} playouts/s (median of {len(runs)})")
    ratio = speeds[ours] / speeds[theirs]
    ratios.append(ratio)
    print(f"  ratio ours / C++: {ratio:.3f}")
  print(f"ratio: {min(ratios):.3f}")


if __name__ == "__main__":
  app.run(main)
