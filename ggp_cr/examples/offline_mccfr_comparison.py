r"""The thesis's offline MC-CFR comparison ([S] §5.1.2, Figure 5.11) on Table 5.4's games.

  python -m ggp_cr.examples.offline_mccfr_comparison
  python -m ggp_cr.examples.offline_mccfr_comparison --visited_states=100000000 \
      --seeds=20 --game="python_leduc(max_raises=2)"

Runs each solver (--solver, repeatable; default the three below) on each game (--game,
repeatable; default [S] Table 5.4's four games) for --seeds seeds (0, 1, ...) until it
has visited --visited_states states, evaluating its average strategy at log-spaced
budgets of visited states (--points_per_decade from 10^3, and the last):

  vr_mccfr(compiled=true)             the VR-MCCFR candidate: DRM(1,1), cumulative-
                                      strategy exponent 0.3, exploration 0.7, ExpAvg(0.3)
                                      baseline
  mc_cfr(compiled=true)               the MC-CFR candidate: the same without baseline
  os_mccfr(rm=rm+,e=1,compiled=true)  MC-CFR+ of [S] Table 5.3: regret matching+,
                                      exploration 1 (like every Table 5.3 configuration),
                                      no cumulative-strategy discounting, no baseline

`compiled=true` is the numba fast path on the compiled game tree. Each evaluation
appends a row to <output_dir>/offline_mccfr_comparison.csv as it happens:

  game            the game string
  solver          the solver string (--list_solvers of the solve example)
  seed            the solver's seed
  visited_states  histories touched so far ([S] §5.1's measure; the run stops at the
                  first iteration reaching the budget, so it may overshoot slightly)
  iterations      iterations completed (one sampled episode per player each)
  time            seconds spent in the solver's iterations (evaluations excluded)
  nash_conv       sum of both players' best-response gains: the thesis's
                  "exploitability"
  exploitability  NashConv / 2 (OpenSpiel's `exploitability`)

At the end, <output_dir>/offline_mccfr_comparison.png shows one log-log panel per game:
NashConv against visited states, one line per solver (median over seeds at each
evaluation; the band spans the seeds' quartiles).
"""

import os

from absl import app
from absl import flags

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.config import number_ranges
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.evaluation import offline_comparison
from ggp_cr.algorithms.evaluation import results_csv
from ggp_cr.algorithms.evaluation import solver_runs
from ggp_cr.algorithms.files import output_paths
from ggp_cr.examples import cli

TABLE_5_4_GAMES = (
    "python_ii_goofspiel(num_cards=4)",
    "python_leduc(stack1=100,stack2=100,max_raises=4,cards_per_suit=3)",
    "python_leduc(stack1=100,stack2=100,max_raises=1,cards_per_suit=7)",
    "python_princess_monster(max_turns=5)",
)
NAME = "offline_mccfr_comparison"

_GAMES = flags.DEFINE_multi_string("game", list(TABLE_5_4_GAMES),
                                   "Game string (repeatable); default [S] Table 5.4.")
_SOLVERS = flags.DEFINE_multi_string(
    "solver", list(offline_comparison.THESIS_NAMES),
    "Solver string (repeatable) with a visited_states "
    "count, e.g. the defaults: the thesis's VR-MCCFR and MC-CFR candidates and MC-CFR+.")
_VISITED_STATES = cli.integer_flag(
    "visited_states", 10_000_000, "Budget of visited states per run.", minimum=1)
_POINTS_PER_DECADE = cli.integer_flag(
    "points_per_decade", 4, "Evaluations per factor 10 of visited states.", minimum=1,
    maximum=number_ranges.MAX_KEPT)
_SEEDS = cli.integer_flag("seeds", 5, "Runs (seeds 0, 1, ...) per game and solver.",
                          minimum=1)
_OUTPUT_DIR = flags.DEFINE_string("output_dir", os.path.join("results", NAME),
                                  "Directory of the CSV and the plot.")
_OVERWRITE = flags.DEFINE_bool("overwrite", False, "Replace an existing CSV.")
_WORKERS = cli.workers_flag(
    "Processes walking the game tree on the generic route (1: serial; games with a "
    "native extractor ignore it)")


def _check_flags():
  """(games, solver specs, budgets), or UsageError naming the bad flag."""
  try:
    budgets = solver_runs.log_spaced_budgets(_VISITED_STATES.value,
                                             _POINTS_PER_DECADE.value)
  except ValueError as error:
    raise app.UsageError(f"--visited_states / --points_per_decade: {error}") from None
  games = []
  for game_string in _GAMES.value:
    try:
      games.append(registry.load_game(game_string))
    except ValueError as error:
      raise app.UsageError(f"--game: {error}") from None
  try:
    specs = [registry.parse_solver(text) for text in _SOLVERS.value]
  except ValueError as error:
    raise app.UsageError(f"--solver: {error}") from None
  return games, specs, budgets


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Unexpected arguments: {argv[1:]}")
  games, specs, budgets = _check_flags()
  workers = cli.useful_workers(_WORKERS)
  csv_path = os.path.join(_OUTPUT_DIR.value, f"{NAME}.csv")
  if os.path.exists(csv_path) and not _OVERWRITE.value:
    raise app.UsageError(f"{csv_path} exists; pass --overwrite to replace it or choose "
                         "another --output_dir.")
  try:
    output_paths.check_directory(_OUTPUT_DIR.value, "--output_dir")
  except ValueError as error:
    raise app.UsageError(str(error)) from None
  print(f"Budgets of visited states: {', '.join(f'{b:,}' for b in budgets)}; writing "
        f"{csv_path}", flush=True)
  with results_csv.AppendOnlyCsv(csv_path, offline_comparison.COLUMNS,
                                 replace=True) as output:
    for game in games:
      for spec in specs:
        for seed in range(_SEEDS.value):
          try:
            offline_comparison.run(output, game, spec, seed, budgets, workers)
          except ValueError as error:
            raise app.UsageError(str(error)) from None
  plot_path = os.path.join(_OUTPUT_DIR.value, f"{NAME}.png")
  offline_comparison.plot(csv_path, plot_path)
  print(f"Plot: {plot_path}")


if __name__ == "__main__":
  cli.run(main)
