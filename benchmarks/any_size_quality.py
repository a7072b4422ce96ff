"""Benchmark (issue 44): play quality past the compiled tree's limit: does continual
resolving beat random, and how does it fare against oos and online_solving, in games
of any size?

For each of --opponents in turn (all games against the first before the next), `cr`
meets the opponent on each of --games in a tournament of the tournament example's
machinery (tournament.run_tournament: both seats, --matches a seat, --preplay and
--move, each bot as registry.make_bot builds it, no tree given). Each (game, opponent)
appends its matches to its own resumable CSV, --results_dir/<game>/<opponent>.csv
(names by result_names.key; the sidecar <csv>.config.json holds the settings): rerun the command to play only the missing matches, or with a larger
--matches to extend; --noplay only summarises what the files hold (also while a run
is writing them). A file extended with a larger --matches (e.g. one game's, to narrow its
interval) keeps its own count when summarised with a smaller one. Time budgets are wall clock: quote the machine's load (each
tournament prints it when it starts and ends).

Per game a table: opponent, matches, cr's mean payoff and its 95% interval
(tournament_summary: 1.96 standard errors), and its means in either seat. The last
line is `cr vs random, smallest lower 95% bound: <float>` over the games played
against random (bar > 0), with how many games hold the full 2 x --matches.

  python benchmarks/any_size_quality.py [--games="g1;g2"]
      [--opponents=random,online_solving,oos] [--matches=50] [--preplay=1s]
      [--move=0.2s] [--workers=2] [--noplay]
"""

import dataclasses
import os

from absl import app
from absl import flags

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.config import presets
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.evaluation import tournament
from ggp_cr.algorithms.evaluation import tournament_summary
from ggp_cr.algorithms.files import output_paths
from ggp_cr.algorithms.files import result_names

_GAMES = flags.DEFINE_string("games", ";".join(presets.ANY_SIZE_GAMES),
                             "Games, separated by ';'.")
_PLAYER = flags.DEFINE_string("player", "cr", "The player measured (registry string).")
_OPPONENTS = flags.DEFINE_list(
    "opponents", ["random"],
    "Opponents (registry strings without commas), played in this order, each on "
    "every game, e.g. random,online_solving,oos.")
_MATCHES = flags.DEFINE_integer("matches", 50, "Matches per seat, game and opponent.",
                                lower_bound=1)
_PREPLAY = flags.DEFINE_string("preplay", "1s", "Pre-play budget, e.g. '1s'.")
_MOVE = flags.DEFINE_string("move", "0.2s", "Per-move budget, e.g. '0.2s'.")
_SEED = flags.DEFINE_integer("seed", 0, "Base seed of the matches.", lower_bound=0)
_WORKERS = flags.DEFINE_integer("workers", 2, "Parallel matches.", lower_bound=1)
_RESULTS_DIR = flags.DEFINE_string(
    "results_dir", os.path.join("results", "any_size_quality"),
    "Folder of the per game and opponent CSVs.")
_PLAY = flags.DEFINE_bool("play", True,
                          "Play the missing matches (--noplay: only summarise).")


def _load():
  return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _results(config, opponent, directory):
  """The rows of `config`'s CSV: played first with --play (resuming), else read. A
  file already extended past --matches is kept whole (its own count)."""
  path = directory / result_names.key(config.game) / (result_names.key(opponent) +
                                                      ".csv")
  sidecar = tournament.sidecar_path(path)
  if sidecar.exists():
    stored = tournament.read_config(sidecar)
    if (stored.matches > config.matches and
        dataclasses.replace(config, matches=stored.matches) == stored):
      config = stored
  if _PLAY.value:
    output_paths.check_file(path, "--results_dir")  # (makes the game's folder)
    print(f"{config.game}, {config.players[0]} vs {opponent}: {path} ({_load()})",
          flush=True)
    rows = tournament.run_tournament(config, path, _WORKERS.value, progress=print,
                                     progress_seconds=60.0)
    print(f"  done ({_load()})", flush=True)
    return rows
  return tournament.read_results(config, path) if path.exists() else None


def main(argv):
  del argv
  directory = output_paths.check_directory(_RESULTS_DIR.value, "--results_dir")
  games = [g.strip() for g in _GAMES.value.split(";") if g.strip()]
  summaries = {game: [] for game in games}
  for opponent in _OPPONENTS.value:
    for game in games:
      config = tournament.TournamentConfig.create(
          game, [_PLAYER.value, opponent], _MATCHES.value, _PREPLAY.value, _MOVE.value,
          _SEED.value)
      rows = _results(config, opponent, directory)
      if rows is not None and len(rows):
        summaries[game].append(tournament_summary.summarize(rows).iloc[0])
  bounds, full = [], 0
  for game in games:
    print(f"\n{registry.load_game(game)}, {_PLAYER.value}'s payoff, preplay "
          f"{_PREPLAY.value}, move {_MOVE.value}:")
    if not summaries[game]:
      print("  not played")
      continue
    for row in summaries[game]:
      print(f"  vs {row['col_player']:<16} matches {row['matches']:>4}  mean "
            f"{row['mean']:+.3f}  95% interval [{row['mean'] - row['ci95']:+.3f}, "
            f"{row['mean'] + row['ci95']:+.3f}]  as seat 0 {row['mean_as_player0']:+.3f}, "
            f"as seat 1 {row['mean_as_player1']:+.3f}")
      if row["col_player"] == "random":
        bounds.append(row["mean"] - row["ci95"])
        full += row["matches"] >= 2 * _MATCHES.value
  smallest = min(bounds) if bounds else float("nan")
  print(f"\n{_PLAYER.value} vs random: {len(bounds)} of {len(games)} games played, "
        f"{full} with {2 * _MATCHES.value} matches")
  print(f"{_PLAYER.value} vs random, smallest lower 95% bound: {smallest:.3f}")


if __name__ == "__main__":
  app.run(main)
