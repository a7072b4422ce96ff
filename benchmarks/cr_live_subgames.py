"""Benchmark (issue 44 item 3): does continual resolving on the live path (games too
large to compile) resolve a new subgame at each of its later decisions?

Continual resolving (--solver, path='live') plays --matches matches in each seat
against a uniform random player, --preplay seconds at its first decision and --move
seconds a move. Per game: the new subgames resolved per match (of the later
decisions; in goofspiel each later decision is a new subgame), the decisions solved
on a depth-limited compiled tree (full-width solvers), the iterations a move
(median, min, max), the fallbacks recorded, and max decision time / budget (pre-play
counts at the first decision). The last two lines are `max time/budget: <float>` and
`resolved: <float>` (the share of later decisions that resolved a new subgame).
Timings are wall clock: quote medians of a quiet machine.

  python benchmarks/cr_live_subgames.py --game='python_ii_goofspiel(num_cards=7)'
      [--move=1] [--matches=3] [--solver=vr_mccfr]
"""

import collections
import statistics

from absl import app
from absl import flags
import numpy as np
import pyspiel

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.evaluation import matches
from ggp_cr.algorithms.evaluation import timing
from ggp_cr.algorithms.resolving import continual_resolving

_GAMES = flags.DEFINE_multi_string(
    "game", ["python_ii_goofspiel(num_cards=7)"], "Games (repeat the flag).")
_SOLVER = flags.DEFINE_string("solver", "vr_mccfr", "The bot's subgame solver.")
_PREPLAY = flags.DEFINE_float("preplay", 1.0, "Pre-play budget in seconds.")
_MOVE = flags.DEFINE_float("move", 1.0, "Per-move budget in seconds.")
_MATCHES = flags.DEFINE_integer("matches", 3, "Matches per seat and game.")
_SEED = flags.DEFINE_integer("seed", 0,
                             "Seed of chance, the random player and the bot.")


def _match(game, seat, seed):
  """One match of the bot in `seat` against uniform random: (decision seconds /
  budget, the bot's records)."""
  matches.collect_between_matches()
  bot = continual_resolving.ContinualResolvingBot(
      game, seat, preplay=f"{_PREPLAY.value}s", move=f"{_MOVE.value}s",
      solver=_SOLVER.value, path="live", seed=seed)
  ratios = []
  decide = timing.timed_decisions(bot.step, _PREPLAY.value, _MOVE.value, ratios)
  matches.play_against_random(game, seat, decide,
                              np.random.default_rng([_SEED.value, seed]))
  return ratios, bot.decisions


def main(argv):
  del argv
  continual_resolving.warm_up_process()  # kernels loaded before any clock
  worst, shares = 0.0, []
  for game_string in _GAMES.value:
    game = pyspiel.load_game(game_string)
    per_match, trees, iterations, fallbacks = [], [], [], collections.Counter()
    resolved = later = 0
    for match in range(_MATCHES.value):
      for seat in (0, 1):
        ratios, records = _match(game, seat, _SEED.value + 2 * match + seat)
        worst = max([worst] + ratios)  # (a match may end before the bot's turn)
        new = sum(r["new_subgame"] for r in records[1:])
        per_match.append(f"{new}/{len(records[1:])}")
        trees.append(sum("tree_nodes" in r for r in records[1:]))
        iterations += [r["iterations"] for r in records[1:]]
        fallbacks.update(r["fallback"].split(";")[0] for r in records[1:]
                         if r.get("fallback"))
        resolved += new
        later += len(records[1:])
    shares.append(resolved / max(later, 1))
    print(f"{game_string}, {_SOLVER.value}, {_MOVE.value} s a move:")
    print(f"  new subgames resolved per match: {' '.join(per_match)}")
    print(f"  on a depth-limited compiled tree per match: {trees}")
    if iterations:
      print(f"  iterations a move: median {statistics.median(iterations):.0f}, "
            f"min {min(iterations)}, max {max(iterations)}")
    for reason, count in fallbacks.most_common():
      print(f"  fallback x{count}: {reason}")
  print(f"max time/budget: {worst:.3f}")
  print(f"resolved: {min(shares):.3f}")


if __name__ == "__main__":
  app.run(main)
