r"""Head-to-head tournament: every pair of players, both seatings ([S] §5.3, Table 5.7).

  python -m ggp_cr.examples.tournament     # the default: cr vs oos vs random, small Leduc

  python -m ggp_cr.examples.tournament --game=kuhn_poker \
      --player=random --player="ismcts(simulations=200)" --matches=100 \
      --output=results/kuhn.csv --workers=2

Each pair of players meets --matches times in each seating. One CSV row per match is
appended to --output as it finishes (columns:
ggp_cr.algorithms.evaluation.tournament.RESULT_COLUMNS,
also listed by --list_columns); the configuration goes to a sidecar <output>.config.json.
Rerunning with the same --output and settings plays only the missing matches; a larger
--matches with otherwise the same settings extends the tournament (the matches played
keep their seeds); other settings are refused. At the end the row player's mean
payoff ± 95% CI per pair is printed and saved to <output>.summary.csv, and a heat-map
to --plot (default <output>.heatmap.png); with --merge_with=<other results file> (e.g.
a --pairs_with run's) they also cover that file's pairs. --noplay plays nothing and
summarizes the matches --output holds so far, read only, also while another run is
still playing them (the heat-map's title says how many of the planned were played).

With --load_tree (or --cache_dir=DIR, which also keeps the tree on disk) every worker
loads the game's compiled tree first, so that players with a compiled path use it on
games larger than their extraction limit (the thesis's Table 5.1 games).

--workers is capped at the usable cores and at the matches left to play (said in one
line). Stopping the run (Ctrl-C, SIGTERM, or SIGKILL) stops its worker processes too,
and the same command then plays the rest. A row outside the plan (a pair or match the
configuration does not have) or with a payoff outside the game's range is set aside
in <output>.rejected with a warning, like a malformed one, and the match replayed. On
a first run numba compiles the players' kernels ("compiling kernels (first run
only)") before the progress clock starts.

Matches run in a local process pool (--workers) or on Ray (--executor=ray, with
--ray_address=auto or host:port for a running cluster; without an address a local Ray
instance is started; needs `pip install -e ".[ray]"`). Seeds are derived per match, so
both executors give the same results for the same --seed when budgets are iterations
('1000it'); time budgets ('2s') depend on machine speed.
"""

import os
import sys

from absl import app
from absl import flags

from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.config import number_ranges
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.evaluation import tournament
from ggp_cr.algorithms.evaluation import tournament_summary
from ggp_cr.algorithms.files import output_paths
from ggp_cr.examples import cli

_GAME = flags.DEFINE_string("game", "python_leduc(max_raises=1,cards_per_suit=3)",
                            "Game string, e.g. python_leduc.")
_PLAYERS = flags.DEFINE_multi_string(
    "player", ["cr", "oos", "random"],
    "A player, repeat the flag for each. Accepted:\n" + registry.describe_players())
_SELF_PLAY = flags.DEFINE_bool("self_play", False,
                               "Also play each player against itself.")
_PAIRS_WITH = flags.DEFINE_multi_string(
    "pairs_with", [],
    "Play only the pairs where this player sits (repeat for several): adds a player "
    "to a tournament already played, in a second --output.")
_MERGE_WITH = flags.DEFINE_multi_string(
    "merge_with", [],
    "Another results file of the same game, budgets and seed (e.g. a --pairs_with "
    "run's) whose pairs join this one's in the printed summary, <output>.summary.csv "
    "and the heat-map (repeat for several); --output's rows are unchanged.")
_MATCHES = cli.integer_flag("matches", 50, "Matches per pair and seating.", minimum=1)
_PREPLAY = flags.DEFINE_string("preplay", "1000it",
                               "Pre-play budget: '10s', '500ms', '1000it' or 0.")
_MOVE = flags.DEFINE_string(
    "move", "300it",
    "Per-move budget: '30s', '500ms', '1000it' or 0 (every online player's default, "
    f"{limits.DEFAULT_MOVE}).")
_SEED = cli.integer_flag("seed", 0, "Base seed of all matches.",
                         maximum=number_ranges.MAX_SEED)
_OUTPUT = flags.DEFINE_string("output", os.path.join("results", "tournament.csv"),
                              "Results CSV path.")
_WORKERS = cli.integer_flag("workers", os.cpu_count() or 1,
                            "Parallel matches (1: in this process).", minimum=1)
_EXECUTOR = flags.DEFINE_enum("executor", "local", list(tournament.EXECUTORS),
                              "Where matches run.")
_RAY_ADDRESS = flags.DEFINE_string("ray_address", None,
                                   "Ray cluster address for --executor=ray.")
_LOAD_TREE = flags.DEFINE_bool(
    "load_tree", False,
    "Each worker loads the game's compiled tree before its first match, so that cr, oos "
    "and online_solving take their compiled path whatever the game's size (without it "
    "they extract only trees within the memory limit, and at most 2,000,000 histories "
    "on the generic walk, and play larger ones on live states); a tree past the "
    "memory limit (--tree_memory_share) is refused.")
_CACHE_DIR = flags.DEFINE_string(
    "cache_dir", None,
    "Directory of compiled trees for --load_tree (implies it): read from there, or "
    "extracted and saved there on the first run.")
_PROGRESS_SECONDS = flags.DEFINE_float("progress_seconds", 0.5,
                                       "Seconds between progress-bar redraws.")
_PLAY = flags.DEFINE_bool(
    "play", True,
    "Play the missing matches. --noplay: only summarize and plot the matches --output "
    "holds (read only; it may be being written by a running tournament).")
_PLOT = flags.DEFINE_string("plot", None,
                            "Heat-map PNG path (default: <output>.heatmap.png).")
_LIST_COLUMNS = flags.DEFINE_bool("list_columns", False,
                                  "Print the CSV columns and exit.")


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Unexpected arguments: {argv[1:]}")
  if _LIST_COLUMNS.value:
    for name, meaning in tournament.RESULT_COLUMNS.items():
      print(f"{name}: {meaning}")
    return 0
  try:
    config = tournament.TournamentConfig.create(
        _GAME.value, _PLAYERS.value, _MATCHES.value, _PREPLAY.value, _MOVE.value,
        _SEED.value, _SELF_PLAY.value, _PAIRS_WITH.value)
    tournament.merge_configs(config, _MERGE_WITH.value)  # before any match
    # --output first, so that a heat-map path derived from it blames --output.
    output = (output_paths.check_file if _PLAY.value else output_paths.file_path)(
        _OUTPUT.value, "--output")
    heatmap_path = output_paths.check_file(
        _PLOT.value or output.with_name(output.stem + ".heatmap.png"),
        "--plot" if _PLOT.value else "--output (its heat-map, --plot's default)")
    tree = (tournament.TreeLoading(_CACHE_DIR.value)
            if _LOAD_TREE.value or _CACHE_DIR.value else None)
    if _PLAY.value:
      rows = tournament.run_tournament(
          config, _OUTPUT.value, _WORKERS.value, _EXECUTOR.value, _RAY_ADDRESS.value,
          progress=print, progress_seconds=_PROGRESS_SECONDS.value, tree=tree)
    else:
      rows = tournament.read_results(config, _OUTPUT.value)
    played, planned = len(rows), len(tournament.plan(config))
    rows, players = tournament.merge_results(config, rows, _MERGE_WITH.value)
  except ValueError as error:
    print(f"error: {error}", file=sys.stderr)
    return 1
  except KeyboardInterrupt:
    print(f"\ninterrupted: finished matches are kept in {_OUTPUT.value}; rerun the same "
          "command to play the rest.", file=sys.stderr)
    return cli.EXIT_INTERRUPTED
  summary = tournament_summary.summarize(rows)
  summary_path = output.with_name(output.stem + ".summary.csv")
  summary.to_csv(summary_path, index=False)
  print(f"\n{config.game}, budget {config.budget}: mean payoff of the row player "
        "± 95% CI")
  print(tournament_summary.format_summary(summary))
  means, cis = tournament_summary.payoff_matrix(rows, players)
  fewest, most = tournament_summary.matches_per_seating(rows)
  count = (f"{played} of {planned} planned matches played" if played < planned else
           f"{fewest} matches per seating" if fewest == most else
           f"{fewest}-{most} matches per seating")
  if played < planned:
    print(f"\n{played} of the {planned} planned matches are in {output}.")
  tournament_summary.plot_heatmap(
      means, cis, heatmap_path,
      f"{config.game}: mean payoff of row player vs column player (± 95% CI), "
      f"{count}, budget {config.budget}" +
      (f", with the pairs of {len(_MERGE_WITH.value)} more file(s)"
       if _MERGE_WITH.value else ""))
  print(f"\nrows: {output}\nsummary: {summary_path}\nheat-map: {heatmap_path}")
  return 0


if __name__ == "__main__":
  cli.run(main)
