"""Benchmark (product.md bar 6): do OOS and the online solving player keep their time?

Plays --matches self-play matches per game and player with a --move budget (and a
--preplay budget spent at each bot's first move) and reports, per game and player, the
largest and the median ratio of a move's wall-clock time to its budget. The bar is an
overrun below 5% (ratio < 1.05). The last line is the largest ratio over all.
--compiled is the players' `compiled` (auto: each game's tree is loaded first, from
--cache_dir if given, so both run compiled; false: live states).

  python benchmarks/online_time_budget.py [--move=0.2] [--preplay=0.5] [--matches=2]
      [--compiled=auto|true|false] [--cache_dir=DIR]
"""

import statistics

from absl import app
from absl import flags
import pyspiel

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.bots import online_solving
from ggp_cr.algorithms.config import presets
from ggp_cr.algorithms.evaluation import timing
from ggp_cr.algorithms.tree import compiled_tree

_GAMES = flags.DEFINE_list(
    "games", ["leduc_poker", "python_ii_goofspiel(num_cards=6)", "python_latent_ttt",
              "python_princess_monster(max_turns=8)",
              "python_leduc(max_raises=3,cards_per_suit=30)"], "Games.")
_MOVE = flags.DEFINE_float("move", 0.2, "Per-move budget in seconds.")
_PREPLAY = flags.DEFINE_float("preplay", 0.5, "Pre-play budget in seconds.")
_MATCHES = flags.DEFINE_integer("matches", 2, "Self-play matches per game and player.")
_COMPILED = flags.DEFINE_enum("compiled", "auto", presets.COMPILED_CHOICES,
                              "The players' compiled: auto, true or false.")
_CACHE_DIR = flags.DEFINE_string("cache_dir", None, "Directory of cached trees.")

_PLAYERS = {
    "oos": lambda game, p, seed, preplay, move: online_solving.OOSBot(
        game, p, preplay=f"{preplay}s", move=f"{move}s", seed=seed,
        compiled=_COMPILED.value),
    "online_solving": lambda game, p, seed, preplay, move: (
        online_solving.OnlineSolvingBot(game, p, preplay=f"{preplay}s", move=f"{move}s",
                                        seed=seed, compiled=_COMPILED.value)),
}


def _ratios(game, make, seed):
  """Move time / budget of every move of one self-play match."""
  bots = [make(game, p, seed + p, _PREPLAY.value, _MOVE.value) for p in (0, 1)]
  return timing.budget_ratios(game, bots, seed, _PREPLAY.value, _MOVE.value)


def main(argv):
  del argv
  worst = 0.0
  for game_string in _GAMES.value:
    game = pyspiel.load_game(game_string)
    if _COMPILED.value != "false":
      compiled_tree.cached_tree(game, _CACHE_DIR.value)
    for name, make in _PLAYERS.items():
      ratios = []
      for match in range(_MATCHES.value):
        ratios += _ratios(game, make, 2 * match)
      worst = max(worst, max(ratios))
      path = make(game, 0, 0, _PREPLAY.value, _MOVE.value).path
      print(f"{game_string} {name} ({path}): {len(ratios)} moves, time/budget max "
            f"{max(ratios):.3f} median {statistics.median(ratios):.3f}", flush=True)
  print("largest move time / budget (bar < 1.05):")
  print(f"ratio: {worst:.3f}")


if __name__ == "__main__":
  app.run(main)
