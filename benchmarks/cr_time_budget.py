"""Benchmark (product.md bar 6): does continual resolving keep its time budget?

Plays --matches self-play matches per game and solver with a --move budget (and a
--preplay budget spent at each bot's first decision) and reports, per game and solver,
the largest and the median ratio of a decision's wall-clock time to its budget (the
trace of the next turns and the gadget's construction count), and how many decisions
resolved a new subgame or fell back (e.g. a subgame too large to build in time). The
bar is an overrun below 5% (ratio < 1.05). The last line is the largest ratio over all.

  python benchmarks/cr_time_budget.py [--move=0.2] [--preplay=0.5] [--matches=2]
      [--cache_dir=DIR]
"""

import statistics

from absl import app
from absl import flags
import pyspiel

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.evaluation import timing
from ggp_cr.algorithms.resolving import continual_resolving

_GAMES = flags.DEFINE_multi_string(
    "game", ["leduc_poker", "python_ii_goofspiel(num_cards=6)", "python_latent_ttt",
             "python_princess_monster(max_turns=8)",
             "python_leduc(max_raises=3,cards_per_suit=30)"], "Games (repeat the flag).")
_SOLVERS = flags.DEFINE_list("solvers", ["vr_mccfr"], "Solvers of the bot.")
_MOVE = flags.DEFINE_float("move", 0.2, "Per-move budget in seconds.")
_PREPLAY = flags.DEFINE_float("preplay", 0.5, "Pre-play budget in seconds.")
_MATCHES = flags.DEFINE_integer("matches", 2, "Self-play matches per game and solver.")
_CACHE_DIR = flags.DEFINE_string(
    "cache_dir", None, "Directory of cached trees and state keys: the bots take the "
    "compiled path on every game whose tree is there (or extracted into it); without "
    "it, on trees up to the compiled path's size limit (each line says which path).")


def _ratios(game, solver, seed):
  """Decision time / budget of every decision of one self-play match, and the bots'
  decision records."""
  bots = [continual_resolving.ContinualResolvingBot(
      game, p, preplay=f"{_PREPLAY.value}s", move=f"{_MOVE.value}s", solver=solver,
      cache_dir=_CACHE_DIR.value, seed=seed + p) for p in (0, 1)]
  records = []
  ratios = timing.budget_ratios(
      game, bots, seed, _PREPLAY.value, _MOVE.value,
      on_decision=lambda player: records.append(bots[player].decisions[-1]))
  return ratios, records


def main(argv):
  del argv
  worst = 0.0
  for game_string in _GAMES.value:
    game = pyspiel.load_game(game_string)
    for solver in _SOLVERS.value:
      ratios, records = [], []
      for match in range(_MATCHES.value):
        match_ratios, match_records = _ratios(game, solver, 2 * match)
        ratios += match_ratios
        records += match_records
      worst = max(worst, max(ratios))
      resolved = sum("roots" in r for r in records)
      fallbacks = sum("fallback" in r for r in records)
      slowest = records[ratios.index(max(ratios))]
      print(f"{game_string} cr({solver}, {records[0]['path']} path: "
            f"{records[0]['path_reason']}): {len(ratios)} decisions, time/budget max "
            f"{max(ratios):.3f} (setup {slowest['setup_seconds']:.3f} s, "
            f"{slowest['iterations']} iterations) median "
            f"{statistics.median(ratios):.3f}; {resolved} resolved a new subgame, "
            f"{fallbacks} fell back", flush=True)
      if "fallback" in slowest:
        print(f"  slowest decision's fallback: {slowest['fallback']}", flush=True)
  print(f"max time/budget: {worst:.3f}")


if __name__ == "__main__":
  app.run(main)
