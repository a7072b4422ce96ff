r"""Benchmark: wall time to an exploitability, our CFR family against its peers (issue 46).

For each game and solver, the solver runs alone (one process, one thread) and its
average strategy is evaluated after iterations 1, 2, 3, ..., growing by --growth
(2^(1/4) by default: the times found are at most ~19% above the exact crossings, the
same for every solver); the evaluation is not timed. The time to a target is the
solver's wall time (--clock=process: its CPU time) at the first evaluation whose exploitability (OpenSpiel's,
NashConv / 2, by ggp_cr's exact best response on the compiled tree) is <= the target.
A run stops once every target is reached or after --cap seconds of solver time. A
peer stops after its family's cap factor times our fastest time to the strictest
target (--liteefg_cap_factor 50 and --openspiel_cap_factor 100 by default: the bars,
so a peer stopped there shows a ratio >= the bar and no more time is spent), at most
--peer_cap, and once it has run as long as its family's fastest member that reached
that target (the family's best time is then known). A target not reached is
reported as a lower bound ">= X s" (X the time spent). Against the machine's noise
(this machine's speed swings up to 2.5x between runs minutes apart), each of ours
whose run takes at most --repeat_below seconds runs --repeats times (3 by default,
fresh solvers) and the run of median time to the strictest target is kept; a
derived peer's time an iteration (below) is likewise the median of --repeats chunks.

--peer_times=derived (for games where racing the peers takes hours) does not run a
peer to the target: its time is the iterations its twin among ours, the same
algorithm with equal iterates (TWINS; tests/test_modern_cfr.py, tests/test_cfr.py),
needed to reach the target at the same checkpoints, times the peer's own time an
iteration, measured over --peer_sample seconds after one untimed iteration (every
iteration of these full-width solvers costs the same). Every peer is sampled first;
a twin then runs (if it is not one of ours already run) until it reaches the
target, or --cap seconds, or the first checkpoint whose iterations at the peer's
time an iteration reach the peer's cap (its family's cap factor times our fastest
time to the strictest target, the race's cap without --peer_cap, which bounds a
raced peer's own time; a capped peer again shows a ratio >= the bar). A twin stopped short gives a lower bound. Lines
and rows say "derived". --peer_times=auto decides per game and peer, once ours have
run: a peer whose cap (its family's cap factor times our fastest time to the
strictest target, at most --peer_cap) is at most --race_below seconds races, any
other is derived; the line before the peers' says which.

--solvers=auto (alone or among others) runs, on each game, the solver
ggp_cr/algorithms/cfr/solver_choice.py picks for its tree at the strictest target;
the line "auto chose ..." names it, and its lines and rows carry its own name.

Solvers: ours (--solvers, registry strings) and the peers (--peers): OpenSpiel's C++
CFR+ and CFR (pyspiel) and, when the `liteefg` package (the bench extra) is importable,
LiteEFG's CFR+, DCFR(1.5, 0, 2) and PCFR+ (linear averaging as in its examples),
single-threaded. LiteEFG's set-up (writing the game's file from OpenSpiel) is not
timed. OpenSpiel's C++ solvers are left out on Python games unless
--openspiel_on_python_games (their iterations call the Python game's states: 48-389 s
an iteration on the race's two).

Prints a table per game (with the machine's load averages before and after it) and
writes <output_dir>/time_to_epsilon.csv (one row per game, solver and target),
<output_dir>/traces.csv (every evaluation) and, with --plot (default), a log-log plot
of exploitability against seconds per game, every solver on it. The ratios
compare our fastest solver with a peer family's fastest at the last (strictest)
target, per game; a peer's lower bound gives a lower bound on the ratio (the
family's smallest time, reached or a bound, counts), and a game where ours does not
reach the target counts as ratio 0 (conservative both ways). The
OpenSpiel C++ ratio has its own line; the last line is `ratio: <float>`, the smallest
over games of LiteEFG's best time / ours (nan if LiteEFG is not importable).
--combine prints these lines over the games of several runs' CSV files (one run a
game, each with the flags it needs) without running anything.

  PYTHONPATH=. python benchmarks/time_to_epsilon.py                  # the full race
  PYTHONPATH=. python benchmarks/time_to_epsilon.py --solvers=auto --peer_times=auto \
      --peer_sample=10 --clock=process --cache_dir=results/trees    # 36 min at load 6
  PYTHONPATH=. python benchmarks/time_to_epsilon.py --games=kuhn_poker --cap=10
  PYTHONPATH=. python benchmarks/time_to_epsilon.py --games=liars_dice  # one game
  PYTHONPATH=. python benchmarks/time_to_epsilon.py --combine="a/time_to_epsilon.csv;b/time_to_epsilon.csv"
"""

import contextlib
import csv
import gc
import importlib
import math
import os
import tempfile
import time

from absl import app
from absl import flags
import numpy as np
import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the python_* games)
from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.cfr import solver_choice
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.config import spec_strings
from ggp_cr.algorithms.evaluation import figures
from ggp_cr.algorithms.evaluation import results_csv
from ggp_cr.algorithms.evaluation import solver_runs
from ggp_cr.algorithms.files import result_names
from ggp_cr.algorithms.tree import compiled_tree

GAMES = ("leduc_poker;"
         "turn_based_simultaneous_game(game=goofspiel(imp_info=True,num_cards=5,"
         "points_order=descending));"
         "liars_dice;"
         "python_leduc(max_raises=3,cards_per_suit=30);"
         "python_ii_goofspiel(num_cards=6)")
OURS = "cfr+,dcfr,pcfr+,dcfr+,pdcfr+,hs-dcfr,hs-pcfr+"
LITEEFG = {  # our name: (LiteEFG baseline module, averaging in the environment)
    "liteefg_cfr+": ("CFRplus", True),
    "liteefg_dcfr": ("DCFR", False),
    "liteefg_pcfr+": ("PCFR", True),
}
OPENSPIEL = ("openspiel_cpp_cfr_plus", "openspiel_cpp_cfr")
# Each peer's twin among ours: the same iterates, checked by the tests.
TWINS = {"liteefg_cfr+": "cfr+", "liteefg_dcfr": "dcfr",
         "liteefg_pcfr+": "pcfr+(gamma=1)", "openspiel_cpp_cfr_plus": "cfr+",
         "openspiel_cpp_cfr": "cfr-au"}
PEERS = ",".join(OPENSPIEL + tuple(LITEEFG))
AUTO = "auto"  # in --solvers: solver_choice.choose's pick per game

_GAMES = flags.DEFINE_string("games", GAMES, "Game strings, separated by ';'.")
_SOLVERS = flags.DEFINE_string("solvers", OURS, "Our solvers (registry strings), "
                               "separated by ','; 'none' for none; 'auto' for the one "
                               "cfr/solver_choice.py picks per game at the strictest "
                               "target.")
_PEERS = flags.DEFINE_string("peers", PEERS, f"Peers among {PEERS}, separated by ','; "
                             "'none' for none.")
_TARGETS = flags.DEFINE_string("targets", "1e-3,1e-5", "Exploitabilities to reach.")
_CAP = flags.DEFINE_float("cap", 600.0, "Seconds of solver time per run of ours at most.")
_LITEEFG_CAP_FACTOR = flags.DEFINE_float(
    "liteefg_cap_factor", 50.0, "A LiteEFG solver runs at most this many times our "
    "fastest time to the strictest target (our time spent if none reached it) ...")
_OPENSPIEL_CAP_FACTOR = flags.DEFINE_float(
    "openspiel_cap_factor", 100.0, "... an OpenSpiel C++ solver this many times ...")
_PEER_CAP = flags.DEFINE_float("peer_cap", 3600.0, "... and at most this many seconds.")
_GROWTH = flags.DEFINE_float("growth", 2 ** 0.25,
                             "Factor between evaluated iteration counts (> 1).")
_PEER_TIMES = flags.DEFINE_enum(
    "peer_times", "race", ["race", "derived", "auto"], "Peers run to the target "
    "(race) or timed per iteration, their iterations those of their twin (derived); "
    "auto: per game and peer, race if the peer's cap (its family's cap factor times "
    "our fastest time to the strictest target, at most --peer_cap) is at most "
    "--race_below seconds, else derived.")
_RACE_BELOW = flags.DEFINE_float(
    "race_below", 180.0, "--peer_times=auto races a peer whose cap is at most this "
    "many seconds.")
_OPENSPIEL_ON_PYTHON = flags.DEFINE_bool(
    "openspiel_on_python_games", False, "Run OpenSpiel's C++ peers on Python games "
    "too (they call the Python game's states: minutes an iteration on large ones).")
_PEER_SAMPLE = flags.DEFINE_float("peer_sample", 20.0, "Seconds of a derived peer's "
                                  "per-iteration measurement (at least 2 iterations "
                                  "a chunk, --repeats chunks).")
_REPEATS = flags.DEFINE_integer(
    "repeats", 3, "Timings repeated against the machine's noise, the median kept: "
    "each of ours whose first run takes at most --repeat_below seconds runs this "
    "many times (fresh solvers), and a derived peer's sample is cut into this many "
    "chunks, its time an iteration their median (>= 1).")
_REPEAT_BELOW = flags.DEFINE_float(
    "repeat_below", 60.0, "Ours run --repeats times only if a run takes at most "
    "this many seconds.")
_CACHE_DIR = flags.DEFINE_string("cache_dir", None, "Directory of compiled trees "
                                  "(compiled_tree.compile_game's cache); none by default.")
_CLOCK = flags.DEFINE_enum(
    "clock", "wall", ["wall", "process"], "Solver time as wall time or as the "
    "process's CPU time (every solver is single-threaded; on a shared machine CPU "
    "time does not count the time other jobs hold the cores).")
_COMBINE = flags.DEFINE_string(
    "combine", None, "Runs nothing: the ratio lines over the games of these "
    "time_to_epsilon.csv files (separated by ';'), e.g. one run per game.")
_PLOT = flags.DEFINE_bool("plot", True, "Write the log-log plot of each game.")
_OUTPUT_DIR = flags.DEFINE_string("output_dir", os.path.join("results", "time_to_epsilon"),
                                  "Directory of the CSV files and plots.")


class LiteEFGSolver:
  """LiteEFG's baseline `name` (a LITEEFG key) on a pyspiel game, single-threaded:
  `iterate(n)` and `average_policy()` (an open_spiel TabularPolicy). The strategy is
  recorded for the environment's linear average before each update, so the average
  is over the same iterates as ours (tests/test_modern_cfr.py checks them equal)."""

  def __init__(self, game, name, strategies=True):
    leg = importlib.import_module("LiteEFG")
    module_name, self._env_average = LITEEFG[name]
    module = importlib.import_module(f"LiteEFG.baselines.{module_name}")
    leg.set_threads(1)
    with tempfile.TemporaryDirectory() as directory, _working_directory(directory), \
        (contextlib.nullcontext() if strategies else _without_state_lookup()):
      # LiteEFG writes the game's file to the working directory.
      self._env = leg.OpenSpielEnv(game, traverse_type="Enumerate", regenerate=False)
    with contextlib.redirect_stdout(open(os.devnull, "w")):  # its banner
      self._graph = module.graph()
    self._env.set_graph(self._graph)

  def iterate(self, num_iterations=1):
    for _ in range(num_iterations):
      if self._env_average:
        self._env.update_strategy(self._graph.current_strategy(), update_best=False)
      self._graph.update_graph(self._env)

  def average_policy(self):
    if self._env_average:
      return self._env.get_strategy(self._graph.current_strategy(),
                                    "linear-avg-iterate")[0]
    node = self._graph.current_strategy("average-iterate")
    self._env.update_strategy(node, update_best=False)
    return self._env.get_strategy(node, "last-iterate")[0]


class _NoStates:
  """Stands in for the TabularPolicy LiteEFG's OpenSpielEnv builds (all of a game's
  states: an hour of python calls for a python game) only to map strategies back."""
  state_lookup = {}

  def __init__(self, game):
    del game


@contextlib.contextmanager
def _without_state_lookup():
  """An OpenSpielEnv made within cannot report strategies (a derived peer needs none);
  its game file, iterations and their cost are the same."""
  module = importlib.import_module("LiteEFG.src.Environment.OpenSpiel.OpenSpielToGameFile")
  policy_class = module.TabularPolicy
  module.TabularPolicy = _NoStates
  try:
    yield
  finally:
    module.TabularPolicy = policy_class


@contextlib.contextmanager
def _working_directory(path):
  previous = os.getcwd()
  os.chdir(path)
  try:
    yield
  finally:
    os.chdir(previous)


def liteefg_importable():
  try:
    importlib.import_module("LiteEFG")
  except ImportError:
    return False
  return True


def _clock():
  """The solver clock of --clock, in seconds."""
  return time.process_time() if _CLOCK.value == "process" else time.perf_counter()


def run(solver, evaluator, targets, cap, growth, max_iterations=None):
  """Times `solver` to each target, stopping at the first checkpoint of at least
  `max_iterations` (if given); returns ({target: (seconds, iterations, reached)},
  [(iterations, seconds, exploitability)])."""
  iterations, seconds, trace, found = 0, 0.0, [], {}
  next_count = 1
  while True:
    count = next_count - iterations
    start = _clock()
    if hasattr(solver, "iterate"):
      solver.iterate(count)
    else:  # OpenSpiel's C++ solvers
      for _ in range(count):
        solver.evaluate_and_update_policy()
    seconds += _clock() - start
    iterations = next_count
    exploitability = evaluator.nash_conv(evaluator.average_slots()) / 2
    trace.append((iterations, seconds, exploitability))
    for target in targets:
      if target not in found and exploitability <= target:
        found[target] = (seconds, iterations, True)
    if len(found) == len(targets) or seconds >= cap or (
        max_iterations is not None and iterations >= max_iterations):
      break
    per_iteration = seconds / iterations
    next_count = max(iterations + 1, math.ceil(iterations * growth))
    affordable = iterations + max(1, int((cap - seconds) / max(per_iteration, 1e-9)))
    next_count = min(next_count, affordable)
  for target in targets:
    found.setdefault(target, (seconds, iterations, False))
  return found, trace


def make(name, game, tree, strategies=True):
  """Solver `name` on `game`; a LiteEFG one without its strategies if not
  `strategies` (LiteEFGSolver)."""
  if name in LITEEFG:
    return LiteEFGSolver(game, name, strategies)
  spec = registry.parse_solver(name)
  return registry.make_solver(spec, tree if spec.solver_type.accepts_tree else game)


def seconds_per_iteration(solver, sample, chunks=1):
  """A peer's time an iteration: after one untimed iteration, the median over
  `chunks` chunks of iterations, each until `sample` / `chunks` seconds have passed
  (at least 2 iterations), of a chunk's time an iteration."""
  step = solver.iterate if hasattr(solver, "iterate") else (
      lambda n: [solver.evaluate_and_update_policy() for _ in range(n)])
  step(1)
  rates = []
  for _ in range(chunks):
    count, start = 0, _clock()
    while count < 2 or _clock() - start < sample / chunks:
      step(1)
      count += 1
    rates.append((_clock() - start) / count)
  return float(np.median(rates))


def median_run(runs, target):
  """Of several runs' (results, trace) of one solver, the one whose time to
  `target` is the median (the lower middle of an even count): a run that does not
  reach it counts as slower than every run that does."""
  def key(run_result):
    seconds, _, reached = run_result[0][target]
    return (not reached, seconds)
  return sorted(runs, key=key)[(len(runs) - 1) // 2]


def derived(twin_result, twin_trace, per_iteration):
  """A peer's (results, trace) from its twin's: the same iterations, each costing
  `per_iteration` seconds."""
  results = {target: (iterations * per_iteration, iterations, reached)
             for target, (_, iterations, reached) in twin_result.items()}
  return results, [(i, i * per_iteration, e) for i, _, e in twin_trace]


def family(name):
  """(the peer family's members, its cap factor) of a peer's name."""
  if name in LITEEFG:
    return list(LITEEFG), _LITEEFG_CAP_FACTOR.value
  return list(OPENSPIEL), _OPENSPIEL_CAP_FACTOR.value


def bar_cap(results, ours, name, target, limit=None):
  """Seconds peer `name` needs to show its family's bar at `target`: the cap factor
  times our best time there (our time spent if none reached it), at most `limit`
  (--peer_cap by default)."""
  limit = _PEER_CAP.value if limit is None else limit
  _, factor = family(name)
  ours_best = _best(results, ours, target)
  return min(limit, factor * ours_best[0]) if ours_best else limit


def peer_cap(results, ours, name, target):
  """Seconds peer `name` may run: its family's cap factor times our best at
  `target`, at most --peer_cap, and no longer than a member of its family that
  reached `target` took (module docstring)."""
  members, _ = family(name)
  cap = bar_cap(results, ours, name, target)
  family_best = _best(results, members, target)
  if family_best and family_best[1]:
    cap = min(cap, family_best[0])
  return cap


def with_auto(names, tree, epsilon):
  """(`names` with "auto" replaced by the solver solver_choice picks for `tree` at
  `epsilon`, a name given twice once; the line saying the choice, or None)."""
  if AUTO not in names:
    return names, None
  chosen, reason = solver_choice.choose(tree, epsilon)
  resolved = list(dict.fromkeys(chosen if n == AUTO else n for n in names))
  return resolved, f"  auto chose {chosen} at {epsilon:g} ({reason})"


def game_peer_names(game, peers):
  """The peers of `peers` that run on `game` (module docstring), a line if some do not."""
  if _OPENSPIEL_ON_PYTHON.value or compiled_tree.is_cpp_game(game):
    return list(peers)
  left_out = [p for p in peers if p in OPENSPIEL]
  if left_out:
    print(f"  {left_out} left out on a Python game (--openspiel_on_python_games)")
  return [p for p in peers if p not in OPENSPIEL]


def derived_peers(results, ours, peers, target):
  """The peers of `peers` whose times are derived (--peer_times; auto: those whose
  bar_cap at `target`, from our `results`, exceeds --race_below)."""
  if _PEER_TIMES.value == "auto":
    return [p for p in peers
            if bar_cap(results, ours, p, target) > _RACE_BELOW.value]
  return list(peers) if _PEER_TIMES.value == "derived" else []


def _load():
  return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _time_text(result):
  seconds, _, reached = result
  return f"{seconds:.3g} s" if reached else f">= {seconds:.3g} s"


def _best(results, names, target):
  """(seconds, reached) of the fastest of `names` at `target`: the fastest that
  reached it, else the largest lower bound; None if none ran."""
  ran = [results[n][target] for n in names if n in results]
  if not ran:
    return None
  reached = [r for r in ran if r[2]]
  if reached:
    return min(r[0] for r in reached), True
  return max(r[0] for r in ran), False


def _peers_best(results, names, target):
  """(seconds, reached) of the smallest time of `names` at `target`, a time
  reached or a lower bound (a peer stopped short might have been the fastest);
  None if none ran."""
  ran = [results[n][target] for n in names if n in results]
  if not ran:
    return None
  seconds, _, reached = min(ran, key=lambda r: (r[0], not r[2]))
  return seconds, reached


def ratio(results, ours, peers, target):
  """Peers' best time / ours at `target` (conservative: module docstring)."""
  mine, theirs = _best(results, ours, target), _peers_best(results, peers, target)
  if mine is None or theirs is None:
    return None
  if not mine[1]:
    return 0.0
  return theirs[0] / mine[0]


def plot(output_dir, game_string, traces, peers, derived=()):
  """Exploitability against seconds, one line per solver (peers dashed; `derived`
  ones labelled so)."""
  plt = figures.pyplot()
  figure, axes = plt.subplots(figsize=(7, 4.5))
  colours = plt.get_cmap("tab20").colors
  for k, (name, trace) in enumerate(traces.items()):
    axes.plot([t[1] for t in trace], [max(t[2], 1e-16) for t in trace], marker=".",
              markersize=3, label=name + (" (derived)" if name in derived else ""),
              color=colours[k % len(colours)], linestyle="--" if name in peers else "-")
  axes.set_xscale("log")
  axes.set_yscale("log")
  axes.set_xlabel("solver CPU time [s]" if _CLOCK.value == "process" else
                  "solver wall time [s]")
  axes.set_ylabel("exploitability = NashConv / 2")
  axes.set_title(f"Time to exploitability in {game_string}")
  axes.grid(True, which="both", alpha=0.3)
  axes.legend(fontsize=7)
  path = os.path.join(output_dir, f"{result_names.key(game_string)}.png")
  figures.save(figure, path)
  return path


def _report(game_string, name, results, traces, targets, setup, note, rows,
            trace_rows):
  """Prints solver `name`'s line and adds its rows to `rows` and `trace_rows`."""
  last = traces[name][-1]
  print(f"  {name:24s} " + "  ".join(
      f"{t:g}: {_time_text(results[name][t]):>12s} ({results[name][t][1]:,} it)"
      for t in targets) + f"  [{last[1] / last[0] * 1e3:.3g} ms/it, set-up "
      f"{setup:.1f} s{note}]", flush=True)
  for target in targets:
    seconds, iterations, reached = results[name][target]
    rows.append(dict(game=game_string, solver=name, target=target, seconds=seconds,
                     iterations=iterations, reached=reached, derived=note.startswith(", derived")))
  trace_rows += [dict(game=game_string, solver=name, iterations=i, seconds=s,
                      exploitability=e) for i, s, e in traces[name]]


def _names(text):
  """Names separated by commas outside brackets ("pdcfr+(alpha=1.5,gamma=4),cfr+")."""
  return [] if text.strip().lower() == "none" else [
      n for n in spec_strings.split_top_level(text, text) if n]


# time_to_epsilon.csv's columns (_report's rows), as --combine reads them back.
COLUMNS = ("game", "solver", "target", "seconds", "iterations", "reached", "derived")


def _row_problem(row):
  """What is wrong with a time_to_epsilon.csv row beyond its numbers, or None."""
  for column in ("reached", "derived"):
    if row[column] not in ("True", "False"):
      return f"{column} is {row[column]!r}, not True or False"
  return None


def combine(paths):
  """The ratio lines over the games of several runs' time_to_epsilon.csv files (a
  game in two files: the later file's rows), at each game's strictest target. Each
  file is checked as results_csv.read_good_rows checks one (bad rows skipped with a
  warning; a missing file or another header is a ValueError)."""
  games = {}
  for path in paths:
    by_game = {}
    for row in results_csv.read_good_rows(path, COLUMNS,
                                          numeric=("target", "seconds", "iterations"),
                                          check=_row_problem):
      by_game.setdefault(row["game"], []).append(row)
    games.update(by_game)
  ratios = {"LiteEFG": [], "OpenSpiel C++": []}
  for game, rows in games.items():
    target = min(float(r["target"]) for r in rows)
    results = {r["solver"]: {target: (float(r["seconds"]), int(r["iterations"]),
                                      r["reached"] == "True")}
               for r in rows if float(r["target"]) == target}
    ours = [n for n in results if n not in LITEEFG and n not in OPENSPIEL]
    line = []
    for label, members in (("LiteEFG", list(LITEEFG)), ("OpenSpiel C++", OPENSPIEL)):
      value = ratio(results, ours, [m for m in members if m in results], target)
      if value is not None:
        ratios[label].append(value)
        line.append(f"{label} {value:.4g}")
    print(f"{game} at {target:g}: " + (", ".join(line) or "no peer"))
  _print_ratios(ratios)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Unexpected arguments: {argv[1:]}")
  if _COMBINE.value:
    try:
      combine([p for p in _COMBINE.value.split(";") if p])
    except ValueError as error:
      raise app.UsageError(f"--combine: {error}") from None
    return
  try:
    targets = sorted((float(t) for t in _TARGETS.value.split(",")), reverse=True)
  except ValueError:
    raise app.UsageError(f"--targets must be numbers separated by ',', got "
                         f"{_TARGETS.value!r}.") from None
  if not targets or min(targets) <= 0:
    raise app.UsageError("--targets must be positive.")
  if not _RACE_BELOW.value >= 0:
    raise app.UsageError(f"--race_below must be >= 0, got {_RACE_BELOW.value}.")
  if _REPEATS.value < 1:
    raise app.UsageError(f"--repeats must be >= 1, got {_REPEATS.value}.")
  if not _GROWTH.value > 1:
    raise app.UsageError(f"--growth must be > 1, got {_GROWTH.value}.")
  ours, peers = _names(_SOLVERS.value), _names(_PEERS.value)
  unknown = [p for p in peers if p not in LITEEFG and p not in OPENSPIEL]
  if unknown:
    raise app.UsageError(f"Unknown peers {unknown}; accepted: {PEERS}.")
  for name in ours:
    try:
      if name != AUTO:
        registry.parse_solver(name)
    except ValueError as error:
      raise app.UsageError(str(error)) from None
  if not liteefg_importable() and any(p in LITEEFG for p in peers):
    print("LiteEFG is not importable (pip install liteefg, the bench extra): its "
          "solvers are left out.")
    peers = [p for p in peers if p not in LITEEFG]
  os.makedirs(_OUTPUT_DIR.value, exist_ok=True)

  # Load our kernels once (numba's cache) outside any timing: past cfr._GROUP_FROM
  # iterations, where batches switch to the grouped pass (kernels of their own).
  warm = [n for n in ours if n != AUTO] + (
      list(solver_choice.CHOICES) if AUTO in ours else [])
  for name in dict.fromkeys(warm + [TWINS[p] for p in peers]):
    solver = make(name, pyspiel.load_game("kuhn_poker"),
                  compiled_tree.cached_tree("kuhn_poker"))
    solver.iterate(2)
    solver.iterate(2 * cfr._GROUP_FROM)  # pylint: disable=protected-access

  rows, trace_rows, ratios = [], [], {"LiteEFG": [], "OpenSpiel C++": []}
  for game_string in [g.strip() for g in _GAMES.value.split(";") if g.strip()]:
    game = pyspiel.load_game(game_string)
    start = time.perf_counter()
    tree = compiled_tree.compile_game(game, cache_dir=_CACHE_DIR.value)
    print(f"\n{game_string}: {tree.num_nodes:,} nodes, {tree.num_infosets:,} "
          f"information sets (compiled in {time.perf_counter() - start:.1f} s; "
          f"{_load()})", flush=True)
    results, traces = {}, {}
    game_peers = game_peer_names(game, peers)
    game_ours, choice = with_auto(ours, tree, targets[-1])
    if choice:
      print(choice, flush=True)
    derive = None  # the derived peers, known once ours have run
    per_iteration, setups = {}, {}
    for name in game_ours + game_peers:
      if name in game_peers and derive is None:
        derive = derived_peers(results, game_ours, game_peers, targets[-1])
        if _PEER_TIMES.value == "auto":
          print(f"  peers raced: {[p for p in game_peers if p not in derive]}, derived: "
                f"{derive} (--race_below={_RACE_BELOW.value:g} s)", flush=True)
      start = time.perf_counter()
      try:
        solver = make(name, game, tree,
                      strategies=not (name in game_peers and name in derive))
      except (ValueError, RuntimeError, pyspiel.SpielError) as error:
        print(f"  {name}: not run ({error})")
        continue
      setups[name] = time.perf_counter() - start
      if name in game_peers and name in derive:  # sampled here, derived below
        per_iteration[name] = seconds_per_iteration(solver, _PEER_SAMPLE.value,
                                                    _REPEATS.value)
        print(f"  {name:24s} sampled: {per_iteration[name] * 1e3:.4g} ms an iteration "
              f"[set-up {setups[name]:.1f} s; {_load()}]", flush=True)
        del solver  # a python game's peer holds gigabytes
        gc.collect()
        continue
      evaluator = solver_runs.AverageStrategyEvaluator(game, solver, tree=tree)
      cap = _CAP.value if name in game_ours else peer_cap(results, game_ours, name,
                                                         targets[-1])
      runs = [run(solver, evaluator, targets, cap, _GROWTH.value)]
      note = ""
      if name in game_ours and _REPEATS.value > 1 and \
          runs[0][0][targets[-1]][0] <= _REPEAT_BELOW.value:
        for _ in range(_REPEATS.value - 1):
          del solver, evaluator
          gc.collect()
          solver = make(name, game, tree)
          evaluator = solver_runs.AverageStrategyEvaluator(game, solver, tree=tree)
          runs.append(run(solver, evaluator, targets, cap, _GROWTH.value))
        note = ", median of {} runs: {} s".format(len(runs), ", ".join(
            f"{r[0][targets[-1]][0]:.3g}" for r in runs))
      results[name], traces[name] = median_run(runs, targets[-1])
      _report(game_string, name, results, traces, targets, setups[name], note, rows,
              trace_rows)
    twin_runs = {}
    for twin in dict.fromkeys(TWINS[name] for name in per_iteration):
      if twin in results:
        twin_runs[twin] = results[twin], traces[twin]
        continue
      # Not limited by --peer_cap (a raced peer's own time): the twin's run is ours.
      needed = max(
          math.ceil(bar_cap(results, game_ours, name, targets[-1], math.inf) / seconds)
          for name, seconds in per_iteration.items() if TWINS[name] == twin)
      twin_solver = make(twin, game, tree)
      twin_runs[twin] = run(twin_solver, solver_runs.AverageStrategyEvaluator(
          game, twin_solver, tree=tree), targets, _CAP.value, _GROWTH.value, needed)
    for name, seconds in per_iteration.items():
      twin = TWINS[name]
      results[name], traces[name] = derived(*twin_runs[twin], seconds)
      _report(game_string, name, results, traces, targets, setups[name],
              f", derived: {twin}'s iterations", rows, trace_rows)
    for label, members in (("LiteEFG", list(LITEEFG)), ("OpenSpiel C++", OPENSPIEL)):
      value = ratio(results, game_ours, [m for m in members if m in game_peers],
                    targets[-1])
      if value is not None:
        ratios[label].append(value)
        print(f"  {label} best / our best at {targets[-1]:g}: {value:.3g}")
    print(f"  {_load()}")
    if _PLOT.value:
      path = plot(_OUTPUT_DIR.value, game_string, traces, game_peers,
                  list(per_iteration))
      print(f"  plot: {path}")

  _write_tables(_OUTPUT_DIR.value, rows, trace_rows)
  _print_ratios(ratios)


def _write_tables(output_dir, rows, trace_rows):
  for file_name, table, columns in (("time_to_epsilon.csv", rows, COLUMNS),
                                    ("traces.csv", trace_rows, None)):
    if table:
      with open(os.path.join(output_dir, file_name), "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=columns or list(table[0]))
        writer.writeheader()
        writer.writerows(table)
  print(f"\nCSV: {os.path.join(output_dir, 'time_to_epsilon.csv')}")


def _print_ratios(ratios):
  """The last two lines: the smallest ratio over games per peer family."""
  openspiel = min(ratios["OpenSpiel C++"]) if ratios["OpenSpiel C++"] else math.nan
  print(f"OpenSpiel C++ ratio: {openspiel:.4g}")
  print(f"ratio: {min(ratios['LiteEFG']) if ratios['LiteEFG'] else math.nan:.4g}")


if __name__ == "__main__":
  app.run(main)
