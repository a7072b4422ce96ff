"""Benchmark: OOS's episodes a second on the compiled tree vs on live states.

Per game, OOS (IST, the authors' settings) plays --matches matches a seat against
random play (uniform, but never the first action, a fold in poker, while there is
another) with a --move budget in seconds (no pre-play), once with the compiled
solver (compiled_outcome_sampling, the game's tree loaded first, from --cache_dir if
given) and once with the live one (outcome_sampling); a move's episodes a second are
2 x its iterations (one episode per player each) over its wall time, target-change
work included. Prints each path's median and, last, the smallest of the games'
compiled / live ratios.

  python benchmarks/oos_compiled_speed.py [--move=1] [--matches=2] [--cache_dir=DIR]
"""

import statistics
import time

from absl import app
from absl import flags
import numpy as np
import pyspiel

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.bots import online_solving
from ggp_cr.algorithms.tree import compiled_tree

_GAMES = flags.DEFINE_list(
    "games", ["python_leduc(max_raises=3,cards_per_suit=30)",
              "python_ii_goofspiel(num_cards=6)"], "Games.")
_MOVE = flags.DEFINE_float("move", 1.0, "Per-move budget in seconds.")
_MATCHES = flags.DEFINE_integer("matches", 2, "Matches a seat and path.")
_CACHE_DIR = flags.DEFINE_string("cache_dir", None, "Directory of cached trees.")


def _episodes_per_second(game, compiled, seat, seed):
  """Episodes a second of each of OOS's moves in one match against random play."""
  bot = online_solving.OOSBot(game, seat, move=f"{_MOVE.value}s", seed=seed,
                              compiled=compiled)
  rng = np.random.default_rng(seed)
  state = game.new_initial_state()
  rates = []
  while not state.is_terminal():
    if state.is_chance_node():
      outcomes, probs = zip(*state.chance_outcomes())
      state.apply_action(outcomes[rng.choice(len(outcomes), p=probs)])
    elif state.current_player() == seat:
      start = time.perf_counter()
      state.apply_action(bot.step(state))
      rates.append(2 * bot.iterations_per_move[-1] / (time.perf_counter() - start))
    else:  # random, but no fold (the first action) while there is another
      actions = state.legal_actions()
      state.apply_action(actions[rng.integers(min(1, len(actions) - 1), len(actions))])
  return rates


def main(argv):
  del argv
  ratios = []
  for game_string in _GAMES.value:
    game = pyspiel.load_game(game_string)
    start = time.perf_counter()
    tree = compiled_tree.cached_tree(game, _CACHE_DIR.value)
    print(f"{game_string}: {tree.num_nodes:,} histories, tree ready in "
          f"{time.perf_counter() - start:.1f} s", flush=True)
    medians = {}
    for compiled in ("true", "false"):
      rates = []
      for match in range(_MATCHES.value):
        for seat in (0, 1):
          rates += _episodes_per_second(game, compiled, seat, 2 * match + seat)
      medians[compiled] = statistics.median(rates)
      print(f"  {'compiled' if compiled == 'true' else 'live'}: {len(rates)} moves, "
            f"median {medians[compiled]:,.0f} episodes/s", flush=True)
    ratios.append(medians["true"] / medians["false"])
    print(f"  compiled / live: {ratios[-1]:.1f}", flush=True)
  print("smallest compiled / live episodes-a-second ratio:")
  print(f"ratio: {min(ratios):.1f}")


if __name__ == "__main__":
  app.run(main)
