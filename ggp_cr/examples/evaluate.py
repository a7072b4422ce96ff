r"""Exploitability of an online player at several per-move budgets ([S] §3.5, §5.2, A.2.2).

  python -m ggp_cr.examples.evaluate --game=kuhn_poker --player=ismcts \
      --evaluator=traversing --evaluator=game_playing --matches=200 \
      --move=10it --move=100it --move=1000it --output=results/kuhn_ismcts.csv

For each evaluator and each --move budget the player's whole-game strategy is assembled
(traversing: asked at every information set, exact, small games; game_playing: Lisý et
al.'s aggregate over --matches matches against a random opponent) and its exact
exploitability computed. One CSV row per (evaluator, budget) is appended to --output as
it finishes (columns below); a plot of NashConv against the per-move budget goes to
<output>.png. NashConv is the sum of both players' best-response gains, what [S] calls
exploitability; `exploitability` is OpenSpiel's (NashConv / 2).

Columns: game, player, evaluator, preplay, move (budget strings), move_amount and
move_unit (the per-move budget as a number of iterations or seconds), seed, matches,
scope and weighting (game_playing; see evaluators.py), nash_conv, exploitability, decisions (bot decisions asked),
mean_init_seconds (bot creation with pre-play), mean_move_seconds, infosets_defined and
infosets_total (information sets whose strategy came from the player), seconds (wall
time of the evaluation).
"""

import pathlib
import sys

from absl import app
from absl import flags

from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.config import number_ranges
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.evaluation import evaluators
from ggp_cr.algorithms.evaluation import figures
from ggp_cr.algorithms.evaluation import results_csv
from ggp_cr.algorithms.files import output_paths
from ggp_cr.examples import cli

_GAME = flags.DEFINE_string("game", "kuhn_poker", "Game string.")
_PLAYER = flags.DEFINE_string("player", "ismcts",
                              "Player to evaluate. Accepted:\n" +
                              registry.describe_players())
_EVALUATORS = flags.DEFINE_multi_enum("evaluator", ["traversing"],
                                      ["traversing", "game_playing"],
                                      "Evaluators to run (repeat the flag).")
_PREPLAY = flags.DEFINE_string("preplay", "0", "Pre-play budget ('1s', '1000it', 0).")
_MOVES = flags.DEFINE_multi_string("move", ["10it", "100it", "1000it"],
                                   "Per-move budgets, repeat the flag ('100it', '0.5s').")
_MATCHES = cli.integer_flag("matches", 200, "Matches of the game-playing evaluator.",
                            minimum=1)
_WEIGHTING = flags.DEFINE_enum("weighting", "visits", list(evaluators.WEIGHTINGS),
                               "How the game-playing evaluator weights strategies.")
_SCOPE = flags.DEFINE_enum(
    "scope", "successors", list(evaluators.SCOPES),
    "Which information sets a game-playing decision contributes: successors (Lisý et "
    "al.), thesis ([S] §3.5) or current.")
_SEED = cli.integer_flag("seed", 0, "Base seed.", maximum=number_ranges.MAX_SEED)
_OUTPUT = flags.DEFINE_string("output", "evaluate.csv", "Results CSV path.")

COLUMNS = ["game", "player", "evaluator", "preplay", "move", "move_amount", "move_unit",
           "seed", "matches", "scope", "weighting", "nash_conv", "exploitability", "decisions",
           "mean_init_seconds", "mean_move_seconds", "infosets_defined", "infosets_total",
           "seconds"]


def _plot(rows, path, title):
  plt = figures.pyplot()
  figure, axes = plt.subplots(figsize=(7, 4.5))
  for evaluator in sorted({row["evaluator"] for row in rows}):
    points = sorted((row["move_amount"], row["nash_conv"]) for row in rows
                    if row["evaluator"] == evaluator)
    axes.plot(*zip(*points), marker="o", label=evaluator.replace("_", "-"))
  unit = rows[0]["move_unit"]
  axes.set_xscale("log")
  axes.set_xlabel(f"per-move budget ({unit})")
  axes.set_ylabel("NashConv (sum of best-response gains)")
  axes.set_title(title)
  axes.grid(True, which="both", alpha=0.3)
  axes.legend(title="evaluator")
  figures.save(figure, path)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Unexpected arguments: {argv[1:]}")
  try:
    game = registry.load_game(_GAME.value)
    spec = registry.parse_player(_PLAYER.value)
    budgets = [limits.Budget.parse(_PREPLAY.value, move) for move in _MOVES.value]
    units = {"iterations" if b.move.iterations is not None else "seconds"
             for b in budgets}
    if len(units) > 1 or any(b.move.is_zero for b in budgets):
      raise ValueError("--move budgets must all be positive and in one unit "
                       "(all iterations, e.g. '100it', or all seconds, e.g. '0.5s').")
    output_paths.check_file(_OUTPUT.value, "--output")
    output = results_csv.AppendOnlyCsv(_OUTPUT.value, COLUMNS)
  except ValueError as error:
    print(f"error: {error}", file=sys.stderr)
    return 1
  rows = []
  try:
    for evaluator in _EVALUATORS.value:
      for budget in budgets:
        print(f"{evaluator} evaluation of {spec} on {game}, budget {budget}")
        if evaluator == "traversing":
          result = evaluators.traversing_evaluation(game, spec, budget, _SEED.value,
                                                    progress=print)
        else:
          result = evaluators.game_playing_evaluation(
              game, spec, budget, _MATCHES.value, _SEED.value, _WEIGHTING.value,
              _SCOPE.value, progress=print)
        row = {
            "game": str(game), "player": str(spec), "evaluator": evaluator,
            "preplay": str(budget.preplay), "move": str(budget.move),
            "move_amount": (budget.move.iterations if budget.move.iterations is not None
                            else budget.move.seconds),
            "move_unit": units.copy().pop(), "seed": _SEED.value,
            "matches": result.matches,
            "scope": _SCOPE.value if evaluator == "game_playing" else "",
            "weighting": _WEIGHTING.value if evaluator == "game_playing" else "",
            "nash_conv": result.nash_conv,
            "exploitability": result.exploitability, "decisions": result.decisions,
            "mean_init_seconds": round(result.mean_init_seconds, 6),
            "mean_move_seconds": round(result.mean_move_seconds, 6),
            "infosets_defined": result.infosets_defined,
            "infosets_total": result.infosets_total,
            "seconds": round(result.seconds, 3),
        }
        output.append(row)
        rows.append(row)
        print(f"  NashConv {result.nash_conv:.6f} (OpenSpiel exploitability "
              f"{result.exploitability:.6f}), {result.infosets_defined}/"
              f"{result.infosets_total} information sets, {result.seconds:.1f} s")
  except ValueError as error:
    print(f"error: {error}", file=sys.stderr)
    return 1
  finally:
    output.close()
  output = pathlib.Path(_OUTPUT.value)
  plot_path = output.with_suffix(".png")
  _plot(rows, plot_path, f"{spec} on {game}, pre-play {budgets[0].preplay}")
  print(f"rows: {output}\nplot: {plot_path}")
  return 0


if __name__ == "__main__":
  cli.run(main)
