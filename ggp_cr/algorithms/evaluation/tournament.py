"""Head-to-head tournaments that scale out and resume ([S] §4 `tournament`, §5.3, App. A.2.3).

Every pair of players meets in both seatings, `matches` times per seating; the thesis's
Table 5.7 reports the row player's mean payoff with a 95% confidence interval. Matches run
in-process (workers=1), in a local process pool, or on a Ray cluster; each match is seeded
by `matches.match_seeds` from (base seed, pair, seating, match index), so the executor and
the order of completion do not change the results (with iteration budgets).

Results are one CSV row per match (columns in RESULT_COLUMNS), appended by the coordinating
process with a single write per row as each match finishes. The configuration is kept in a
sidecar JSON file next to the CSV; rerunning with the same output path and configuration
plays only the missing matches, and a different configuration is refused. A row outside
the plan (pair, seating, match, players) or with a payoff outside the game's range is
set aside like a malformed one (tournament_plan.row_problems).

The plan is generated lazily (tournament_plan.Plan), local workers die with the
coordinating process and SIGTERM stops it as Ctrl-C does (worker_processes), workers
are capped at the cores and matches (worker_counts), and numba kernels are compiled
before the clock starts (kernel_warm_up).
"""

import dataclasses
import itertools
import json
import os
import pathlib

import pandas as pd

from ggp_cr.algorithms import progress_bars
from ggp_cr.algorithms import worker_processes
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.config import number_ranges
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.config import worker_counts
from ggp_cr.algorithms.evaluation import kernel_warm_up
from ggp_cr.algorithms.evaluation import matches
from ggp_cr.algorithms.evaluation import results_csv
from ggp_cr.algorithms.evaluation import tournament_plan
from ggp_cr.algorithms.files import output_paths
from ggp_cr.algorithms.tree import compiled_tree

FORMAT = "ggp_cr.tournament/1"

RESULT_COLUMNS = {
    "pair": "index of the player pair (order of TournamentConfig.pairs())",
    "seating": "0: the row player is player 0; 1: the row player is player 1",
    "match": "match index within the pair and seating",
    "row_player": "the pair's first player (its payoff is summarised)",
    "col_player": "the pair's second player",
    "player0": "player in seat 0",
    "player1": "player in seat 1",
    "payoff0": "return of seat 0",
    "payoff1": "return of seat 1",
    "row_payoff": "return of the row player",
    "col_payoff": "return of the column player",
    "init_seconds0": "seat 0's bot creation time (players that pre-play when created "
                     "include it; online_solving and oos pre-play in their first move)",
    "init_seconds1": "seat 1's bot creation time",
    "move_seconds0": "seat 0's total time choosing moves",
    "move_seconds1": "seat 1's total time choosing moves",
    "decisions0": "number of moves seat 0 chose",
    "decisions1": "number of moves seat 1 chose",
    "chance_seed": "seed of the chance sampler",
    "seed0": "seed of seat 0's bot",
    "seed1": "seed of seat 1's bot",
    "history": "all actions of the match (chance included), space separated",
}

# Columns holding numbers (checked when an existing file is read back).
NUMERIC_COLUMNS = [c for c in RESULT_COLUMNS if c not in (
    "row_player", "col_player", "player0", "player1", "history")]

# Columns that do not depend on timing: equal for equal seeds with iteration budgets.
DETERMINISTIC_COLUMNS = [c for c in RESULT_COLUMNS if "seconds" not in c]


@dataclasses.dataclass(frozen=True)
class TournamentConfig:
  """What a results file holds: game, players, matches per pair and seating, budgets, seed."""
  game: str
  players: tuple
  matches: int
  preplay: str = "0"
  move: str = "0"
  seed: int = 0
  self_play: bool = False
  pairs_with: tuple = ()

  @classmethod
  def create(cls, game, players_, matches_per_seating, preplay="0", move="0", seed=0,
             self_play=False, pairs_with=()):
    """Validates and canonicalises the inputs; raises ValueError naming what is wrong."""
    loaded = registry.load_game(game)
    if loaded.num_players() != 2:
      raise ValueError(f"Tournaments need a two-player game; {loaded} has "
                       f"{loaded.num_players()} players.")
    specs = [registry.parse_player(text) for text in players_]
    for spec in specs:
      if spec.interactive:
        raise ValueError(f"Player {spec} is interactive; play it with "
                         "ggp_cr.examples.play, not in a tournament.")
    texts = [spec.text for spec in specs]
    duplicates = sorted({t for t in texts if texts.count(t) > 1})
    if duplicates:
      raise ValueError(f"Players listed twice: {', '.join(duplicates)}; list each once "
                       "(--self_play adds each player against itself).")
    if len(texts) < (1 if self_play else 2):
      raise ValueError("A tournament needs at least two players (or one with self-play), "
                       f"got {len(texts)}.")
    matches_per_seating = number_ranges.count(matches_per_seating, "matches", minimum=1)
    if int(seed) < 0:
      raise ValueError(f"seed must be >= 0, got {seed}.")
    budget = limits.Budget.parse(preplay, move)
    # A pairs_with player is one of the players written alike or parsed alike.
    def form(spec):
      return spec.name, tuple(sorted((k, repr(v)) for k, v in spec.parameters.items()))
    by_form = {form(spec): spec.text for spec in specs}
    with_specs = [registry.parse_player(text) for text in pairs_with]
    unknown = [spec.text for spec in with_specs if form(spec) not in by_form]
    if unknown:
      raise ValueError(f"pairs_with names {', '.join(unknown)}, not among the players "
                       f"({', '.join(texts)}).")
    with_texts = tuple(by_form[form(spec)] for spec in with_specs)
    return cls(str(loaded), tuple(texts), int(matches_per_seating), str(budget.preplay),
               str(budget.move), int(seed), bool(self_play), with_texts)

  @property
  def budget(self):
    return limits.Budget.parse(self.preplay, self.move)

  def pairs(self):
    """(row, col) player pairs: every unordered pair, plus (p, p) with self-play; with
    `pairs_with`, only the pairs where one of those players sits (to add a player to
    a finished tournament in a second results file)."""
    result = []
    for i, row in enumerate(self.players):
      for col in self.players[i if self.self_play else i + 1:]:
        if not self.pairs_with or row in self.pairs_with or col in self.pairs_with:
          result.append((row, col))
    return result

  def to_json(self):
    return {"format": FORMAT, **dataclasses.asdict(self), "players": list(self.players)}

  @classmethod
  def from_json(cls, data):
    if data.get("format") != FORMAT:
      raise ValueError(f"not a {FORMAT} configuration (format {data.get('format')!r}).")
    fields = {f.name for f in dataclasses.fields(cls)}
    values = {k: v for k, v in data.items() if k in fields}
    values["players"] = tuple(values.get("players", ()))
    values["pairs_with"] = tuple(values.get("pairs_with", ()))
    values["matches"] = number_ranges.count(values.get("matches"), "matches", minimum=1)
    return cls(**values)



PlannedMatch = tournament_plan.PlannedMatch
Plan = tournament_plan.Plan
plan = tournament_plan.plan
row_problems = tournament_plan.row_problems

_WORKER_CACHE = {}


@dataclasses.dataclass(frozen=True)
class TreeLoading:
  """Each worker loads the game's compiled tree before its first match: from
  `cache_dir` (extracted and saved there on the first run), or extracted in memory
  (cache_dir None). Players with a compiled and a live path (cr, oos,
  online_solving: registry.make_bot's `tree`) then take the compiled one whatever
  the game's size; without it they extract only games within their own limit (by
  default the memory limit, and 2,000,000 histories on the generic walk), else play
  live. A tree past the memory limit (tree_limits) is refused: TreeTooLarge."""
  cache_dir: str | None = None


def worker_setup(config_json, tree=None):
  """(config, game, budget, compiled tree or None) of a tournament in this process,
  made once and kept in _WORKER_CACHE: by each worker before its first match, and by
  run_tournament's warm-up before local workers are forked (they inherit it)."""
  key = json.dumps([config_json, tree], sort_keys=True, default=str)
  if key not in _WORKER_CACHE:
    config = TournamentConfig.from_json(config_json)
    _WORKER_CACHE.clear()
    game = registry.load_game(config.game)
    compiled = (None if tree is None else
                compiled_tree.compile_game(game, tree.cache_dir))
    _WORKER_CACHE[key] = (config, game, config.budget, compiled)
  return _WORKER_CACHE[key]


def play_planned(config_json, planned, tree=None):
  """Plays one planned match and returns its CSV row (a dict); runs in any worker.

  `tree`: None, or a TreeLoading: the worker loads the game's compiled tree before
  its first match (see run_tournament)."""
  config, game, budget, compiled = worker_setup(config_json, tree)
  seeds = matches.match_seeds(config.seed, planned.row, planned.col, planned.seating,
                              planned.index)
  seats = planned.seats
  result = matches.run_match(game, seats, seeds, budget, tree=compiled)
  row_seat = planned.seating
  return {
      "pair": planned.pair, "seating": planned.seating, "match": planned.index,
      "row_player": planned.row, "col_player": planned.col,
      "player0": seats[0], "player1": seats[1],
      "payoff0": result.returns[0], "payoff1": result.returns[1],
      "row_payoff": result.returns[row_seat], "col_payoff": result.returns[1 - row_seat],
      "init_seconds0": round(result.init_seconds[0], 6),
      "init_seconds1": round(result.init_seconds[1], 6),
      "move_seconds0": round(result.move_seconds[0], 6),
      "move_seconds1": round(result.move_seconds[1], 6),
      "decisions0": result.decisions[0], "decisions1": result.decisions[1],
      "chance_seed": seeds.chance, "seed0": seeds.bots[0], "seed1": seeds.bots[1],
      "history": " ".join(str(action) for action in result.history),
  }


def sidecar_path(output):
  output = pathlib.Path(output)
  return output.with_name(output.stem + ".config.json")


def check_stored_config(path, config):
  """Raises ValueError, naming what differs, unless the results file `path`'s sidecar
  holds `config` or a tournament that `config` extends by more matches a seating."""
  sidecar = sidecar_path(path)
  if not sidecar.exists():
    raise ValueError(
        f"{path} holds results but its configuration file {sidecar.name} is missing, so "
        "it cannot be resumed or read safely; choose another --output or move the file "
        "away.")
  stored = read_config(sidecar)
  if (config.matches > stored.matches and
      dataclasses.replace(stored, matches=config.matches) == config):
    return  # More matches extend the tournament: those played keep their seeds.
  if stored != config:
    now = dataclasses.asdict(config)
    differences = [f"{name}: file has {value!r}, this run has {now[name]!r}"
                   for name, value in dataclasses.asdict(stored).items()
                   if value != now[name]]
    raise ValueError(
        f"{path} holds results of a different tournament configuration ("
        + "; ".join(differences) + "). Use another --output, or the original settings "
        "to resume it.")


def _frame(rows):
  """Checked rows (dicts of text, as results_csv gives them) as a DataFrame with the
  numeric columns as numbers and the history as text."""
  frame = pd.DataFrame.from_records(rows, columns=list(RESULT_COLUMNS))
  frame[NUMERIC_COLUMNS] = frame[NUMERIC_COLUMNS].apply(pd.to_numeric)
  return frame


def _read_rows(path, config):
  """The good rows of the results file `path` of a tournament of `config` (rows
  outside its plan or range skipped: row_problems) as a DataFrame, read only (the
  file's configuration is not checked)."""
  return _frame(results_csv.read_good_rows(
      path, RESULT_COLUMNS, numeric=NUMERIC_COLUMNS, key=("pair", "seating", "match"),
      check=row_problems(config)))


def read_results(config, path):
  """The rows the results file `path` of a tournament of `config` holds, as a
  DataFrame, read only: no lock is taken and nothing is set aside or rewritten, so a
  tournament can be summarized while it is played (a half-written last row is
  skipped with a warning). The file's configuration is checked as a resume checks it.
  """
  if not pathlib.Path(path).is_file():
    raise ValueError(f"{path} is not a tournament results file: nothing to read.")
  check_stored_config(path, config)
  return _read_rows(path, config)


def read_config(sidecar):
  """The TournamentConfig in the configuration file `sidecar`; ValueError if it
  cannot be read or is not one."""
  try:
    return TournamentConfig.from_json(json.loads(pathlib.Path(sidecar).read_text()))
  except (ValueError, TypeError, OSError) as error:
    raise ValueError(f"Cannot read the configuration file {sidecar}: {error}") from None


class ResultsFile:
  """The append-only CSV of match rows plus its configuration sidecar.

  Opening checks (before any match is played) that the location is writable, that an
  existing file was written by the same configuration (or one with fewer matches a
  pair and seating: a run with more extends it, and the sidecar then records the
  larger count), and that no other run holds it.
  Malformed rows and a trailing partial line (a write cut short by a crash) are set
  aside (results_csv.AppendOnlyCsv); complete rows are never rewritten.
  """

  def __init__(self, output, config):
    self.path = pathlib.Path(output)
    self.config = config
    output_paths.check_file(self.path, "--output")
    output_paths.check_file(sidecar_path(self.path), "--output's configuration file")
    self._output = results_csv.AppendOnlyCsv(
        self.path, RESULT_COLUMNS, numeric=NUMERIC_COLUMNS,
        key=("pair", "seating", "match"), lock=True, kind="tournament CSV",
        check_existing=self._check_sidecar, check=row_problems(config))
    try:
      self._write_sidecar()
    except ValueError:
      self.close()
      raise

  def _check_sidecar(self):
    check_stored_config(self.path, self.config)

  def _write_sidecar(self):
    sidecar = sidecar_path(self.path)
    temporary = sidecar.with_name(sidecar.name + ".tmp")
    try:
      temporary.write_text(json.dumps(self.config.to_json(), indent=2) + "\n")
      os.replace(temporary, sidecar)
    except OSError as error:
      raise ValueError(f"Cannot write {sidecar}: {error.strerror}.") from None

  def rows(self):
    """The finished rows as a DataFrame (history kept as text): those checked when the
    file was opened and those appended since."""
    return _frame(self._output.rows)

  def finished_keys(self):
    frame = self.rows()
    return set(zip(frame["pair"], frame["seating"], frame["match"]))

  def append(self, row):
    """Appends one row with a single write, so a killed run never leaves half a row."""
    self._output.append(row)

  def fileno(self):
    return self._output.fileno()

  def close(self):
    self._output.close()

  def __enter__(self):
    return self

  def __exit__(self, *unused):
    self.close()


def _run_in_process(config_json, todo, tree):
  for planned in todo:
    yield play_planned(config_json, planned, tree)


def import_ray():
  """Imports ray, or explains how to install the optional extra."""
  try:
    import ray  # pylint: disable=g-import-not-at-top
  except ImportError:
    raise ValueError('--executor=ray needs the optional extra: pip install -e ".[ray]" '
                     "(or pip install ray).") from None
  return ray


def _run_ray(config_json, todo, workers, ray_address, tree):
  ray = import_ray()
  started_here = not ray.is_initialized()
  if started_here:
    if ray_address:
      ray.init(address=ray_address, log_to_driver=False)
    else:
      ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
  remote = ray.remote(play_planned)
  todo = iter(todo)
  try:
    pending = []
    while True:  # at most two matches per worker in flight: the plan stays lazy
      pending += [remote.remote(config_json, planned, tree)
                  for planned in itertools.islice(todo, 2 * workers - len(pending))]
      if not pending:
        break
      ready, pending = ray.wait(pending, num_returns=1)
      yield ray.get(ready[0])
  finally:
    if started_here:
      ray.shutdown()


EXECUTORS = ("local", "ray")


def run_tournament(config, output, workers=1, executor="local", ray_address=None,
                   progress=print, progress_seconds=5.0, tree=None):
  """Plays the matches of `config` not yet in `output`; returns all rows as a DataFrame.

  Args:
    config: a TournamentConfig.
    output: path of the results CSV (its sidecar JSON is written next to it).
    workers: processes for the local executor (1: in this process), or CPUs of the
      local Ray instance started when no ray_address is given; capped at the matches
      to play and, locally, at the usable cores (worker_counts, said in `progress`).
    executor: "local" or "ray".
    ray_address: address of a running Ray cluster (executor="ray").
    progress: callable taking a line of text (the plan), beside a progress bar
      (progress_bars), or None for silence.
    progress_seconds: minimum interval between the bar's redraws.
    tree: None, or a TreeLoading: each worker loads the game's compiled tree first.
  """
  if executor not in EXECUTORS:
    raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}.")
  number_ranges.count(workers, "workers", minimum=1)
  if executor == "ray":
    import_ray()
  with worker_processes.sigterm_as_interrupt(), ResultsFile(output, config) as results:
    done = results.finished_keys()  # all in the plan: row_problems set others aside
    planned = plan(config)
    todo = (p for p in planned if p.key not in done)
    remaining = len(planned) - len(done)
    workers = worker_counts.useful_workers(workers, remaining, "workers", progress,
                                           cores=executor == "local")
    if progress is not None:
      progress(f"{len(planned)} matches planned, {len(done)} already in "
               f"{results.path}, {remaining} to play ({executor}, {workers} worker(s)).")
    config_json = config.to_json()
    if remaining:  # before the clock and the fork, with the workers' own setup
      _, game, _, compiled = worker_setup(config_json, tree)
      kernel_warm_up.warm_up(config, game, compiled, progress)
    if not remaining:
      stream = iter(())
    elif executor == "ray":
      stream = _run_ray(config_json, todo, workers, ray_address, tree)
    elif workers == 1:
      stream = _run_in_process(config_json, todo, tree)
    else:
      stream = worker_processes.run_pool(
          play_planned, ((config_json, p, tree) for p in todo), workers,
          close_fds=(results.fileno(),))
    with progress_bars.bar(len(planned), "match", "matches", len(done),
                           progress_seconds, shown=progress is not None) as meter:
      for row in stream:
        results.append(row)
        meter.set_postfix_str(f"last: {row['row_player']} vs {row['col_player']} "
                              f"seating {row['seating']} match {row['match']}: row payoff "
                              f"{row['row_payoff']:g}", refresh=False)
        meter.update()
    return results.rows()


def merge_configs(config, paths):
  """The configurations of the results files `paths` to merge with a tournament of
  `config` (merge_results), checked before any match is played: each file and its
  configuration exist, with the same game, budgets and seed. Raises ValueError
  naming the file and what differs."""
  configs = []
  for path in paths:
    sidecar = sidecar_path(path)
    if not pathlib.Path(path).is_file() or not sidecar.is_file():
      raise ValueError(f"{path} is not a tournament results file with its "
                       f"configuration {sidecar.name} beside it.")
    stored = read_config(sidecar)
    differences = [f"{name}: {path} has {getattr(stored, name)!r}, this tournament "
                   f"{getattr(config, name)!r}" for name in ("game", "preplay", "move",
                                                            "seed")
                   if getattr(stored, name) != getattr(config, name)]
    if differences:
      raise ValueError("Cannot merge results of another setting (" +
                       "; ".join(differences) + ").")
    configs.append(stored)
  return configs


def merge_results(config, rows, paths):
  """`rows` (of a tournament of `config`) with the rows of the results files `paths`,
  and the players of all of them in order of first listing: one summary and heat-map
  of a tournament grown by --pairs_with runs in other files.

  Each file must be a results file (rows and configuration sidecar, checked as a
  resume checks them) of the same game, budgets and seed (merge_configs), with no
  pair of players already in `rows` or an earlier file. Their pair numbers are shifted past the
  earlier ones (rows are told apart by pair, seating and match). Raises ValueError
  naming the file and what differs."""
  frames, players = [rows], list(config.players)
  played = {frozenset(p) for p in zip(rows["row_player"], rows["col_player"])}
  for path, stored in zip(paths, merge_configs(config, paths)):
    frame = _read_rows(path, stored)  # merge_configs read and checked its configuration
    pairs = {frozenset(p) for p in zip(frame["row_player"], frame["col_player"])}
    overlap = sorted(" vs ".join(sorted(p)) for p in pairs & played)
    if overlap:
      raise ValueError(f"{path} repeats pairs already merged: {'; '.join(overlap)}.")
    played |= pairs
    shift = max((int(f["pair"].max()) + 1 for f in frames if len(f)), default=0)
    frame = frame.assign(pair=frame["pair"] + shift)
    frames.append(frame)
    players += [p for p in stored.players if p not in players]
  return pd.concat(frames, ignore_index=True), players
