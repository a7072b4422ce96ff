r"""Best responses side by side ([B] ch. 6): OpenSpiel's and ours on one policy.

  python -m ggp_cr.examples.best_response --game=leduc_poker --policy="random(seed=3)"
  python -m ggp_cr.examples.best_response --game=kuhn_poker --player=1 \
      --policy="solver(name=cfr+,iterations=100)"
  python -m ggp_cr.examples.best_response --game=leduc_poker --pruning_trials=100 \
      --methods=brs                        # [B] §6.2.2's pruning figures

--policy is the fixed policy the responder --player answers:
  uniform                          every legal action equally likely
  random(seed=N)                   random probabilities per information set
  strategy(path=FILE)              a strategy file written by the solve example
  solver(name=SPEC,iterations=N)   the average policy of a registered solver after N
                                   iterations (see `solve --list_solvers`)

Methods (--methods, comma-separated; default all):
  openspiel_python  open_spiel.python.algorithms.best_response.BestResponsePolicy
  openspiel_cpp     pyspiel.TabularBestResponse (C++)
  exact             ggp_cr exact_br.best_response (compiled tree, two passes)
  brs               pruned exact best response ([B] ch. 4)
  approximate       BRS with each --epsilons (additive) and --etas (relative) bound
  ismcts            ISMCTS-BR with each --ismcts_simulations budget

For each method a row is printed and appended to <output_dir>/<game>__player<P>.csv:
  value          the responder's value of the method's response (for ISMCTS-BR and
                 the approximations: the exact value of the returned policy)
  error          exact best-response value - value (>= 0 up to rounding)
  bound          guaranteed bound on the error (approximate BRS only)
  visited        distinct histories whose value the method evaluated (OpenSpiel's
                 python BR: its value cache; ours: the whole tree for the exact BR);
                 blank where the method does not report it
  time_s         median wall time of --runs runs (policy conversion included; the
                 compiled tree, built once and printed, excluded)
  memory_mb      peak resident memory added by one run, measured in a forked process
                 (Linux; blank elsewhere); the compiled tree is not included
ISMCTS-BR is also run with --ismcts_seeds seeds per budget; the plot
<output_dir>/<game>__player<P>__ismcts.png shows its error against the number of
simulations ([B] Fig. 6.1).

--pruning_trials=N (> 0) prints [B] §6.2.2's figures for BRS on the game: histories
left unvisited against N random mixed opponents and visited against N random
deterministic ones (one random action per information set), counted as our search
counts them and as [B]'s Figure 4.2 would (see
ggp_cr.algorithms.best_response.pruned_br), and writes
<output_dir>/<game>__player<P>__pruning.csv.
"""

import multiprocessing
import os
import time

from absl import app
from absl import flags
import numpy as np
from open_spiel.python.algorithms import best_response as openspiel_best_response
import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.best_response import ismcts_br
from ggp_cr.algorithms.best_response import pruned_br
from ggp_cr.algorithms.bots import fixed_policies
from ggp_cr.algorithms.config import spec_strings
from ggp_cr.algorithms.evaluation import figures
from ggp_cr.algorithms.evaluation import output_paths
from ggp_cr.algorithms.evaluation import results_csv
from ggp_cr.algorithms.evaluation import result_names
from ggp_cr.algorithms.evaluation import timing
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.examples import cli

METHODS = ("openspiel_python", "openspiel_cpp", "exact", "brs", "approximate", "ismcts")

_GAME = flags.DEFINE_string("game", "leduc_poker", "Game string.")
_POLICY = flags.DEFINE_string("policy", "random(seed=3)",
                              "uniform | random(seed=N) | strategy(path=FILE) | "
                              "solver(name=SPEC,iterations=N).")
_PLAYER = flags.DEFINE_integer("player", 0, "The responder, 0 or 1.")
_METHODS = flags.DEFINE_string("methods", ",".join(METHODS),
                               f"Comma-separated subset of {', '.join(METHODS)}.")
_EPSILONS = flags.DEFINE_string("epsilons", "0.01,0.1,1",
                                "Additive error bounds of the approximate BRS.")
_ETAS = flags.DEFINE_string("etas", "0.1,0.5,1", "Relative error bounds (in [0, 1]).")
_START_DEPTH = flags.DEFINE_integer("start_depth", 0,
                                    "Depth from which the approximation may act.")
_SIMULATIONS = flags.DEFINE_string("ismcts_simulations", "1,10,100,1000,10000",
                                   "ISMCTS-BR budgets: simulations per searched "
                                   "information set.")
_ISMCTS_SEEDS = flags.DEFINE_integer("ismcts_seeds", 5,
                                     "Seeds per ISMCTS-BR budget (for the plot).")
_UCT_C = flags.DEFINE_float("uct_c", 1.0, "ISMCTS-BR's UCB1 constant (returns in [0, 1]).")
_RUNS = flags.DEFINE_integer("runs", 3, "Timed runs per method (median reported).")
_PRUNING_TRIALS = flags.DEFINE_integer("pruning_trials", 0,
                                       "Random opponents per kind for [B] §6.2.2's "
                                       "pruning figures (0: skip).")
_OUTPUT_DIR = flags.DEFINE_string("output_dir", "best_response_results",
                                  "Directory of the CSV files and the plot.")
_WORKERS = flags.DEFINE_integer(
    "workers", 1, "Processes extracting the compiled game tree (1: serial).", lower_bound=1)


def _parse_numbers(text, name):
  return [spec_strings.parse_float(part, name) for part in text.split(",") if part]


def _run_and_report_memory(function, connection):
  try:
    with open("/proc/self/clear_refs", "w") as file:
      file.write("5")  # resets the peak resident set size
    baseline = _status_kilobytes("VmRSS")
    function()
    connection.send((_status_kilobytes("VmHWM") - baseline) / 1024)
  except OSError:
    connection.send(None)


def _status_kilobytes(field):
  with open("/proc/self/status") as file:
    for line in file:
      if line.startswith(field + ":"):
        return int(line.split()[1])
  raise OSError(f"/proc/self/status has no {field}")


def peak_memory_mb(function):
  """Peak resident memory (MB) that one call of `function` adds, in a forked process;
  None where /proc or fork is unavailable."""
  if not os.path.exists("/proc/self/clear_refs"):
    return None
  try:
    context = multiprocessing.get_context("fork")
  except ValueError:
    return None
  receiver, sender = context.Pipe(duplex=False)
  process = context.Process(target=_run_and_report_memory, args=(function, sender))
  process.start()
  result = receiver.recv() if receiver.poll(3600) else None
  process.join()
  return result


class Comparison:
  """Runs the methods on one game, policy and responder and collects the rows."""

  def __init__(self, game, tree, slots, player, runs):
    self.game = game
    self.tree = tree
    self.slots = slots
    self.player = player
    self.runs = runs
    self.tabular = tree.slots_to_tabular_policy(slots)
    self.exact_value = float(exact_br.best_response_values(tree, slots)[player])
    self.rows = []

  def add(self, method, function, value_of, visited_of=None, bound=None):
    seconds, result = timing.median_seconds(function, self.runs)
    value = value_of(result)
    row = dict(method=method, value=value, error=self.exact_value - value,
               bound=bound(result) if bound else None,
               visited=visited_of(result) if visited_of else None,
               time_s=seconds, memory_mb=peak_memory_mb(function))
    self.rows.append(row)
    print(format_row(row), flush=True)
    return result

  def openspiel_python(self):
    def run():
      responder = openspiel_best_response.BestResponsePolicy(self.game, self.player,
                                                             self.tabular)
      return responder.value(self.game.new_initial_state()), len(responder.cache_value)
    self.add("openspiel_python", run, lambda r: r[0], lambda r: r[1])

  def openspiel_cpp(self):
    tree = self.tree
    opponent = np.flatnonzero(tree.infoset_player == 1 - self.player)
    table = {}
    for infoset in opponent.tolist():
      start = int(tree.infoset_action_offset[infoset])
      end = start + int(tree.infoset_num_actions[infoset])
      table[tree.infoset_keys[infoset]] = list(zip(tree.infoset_actions[start:end].tolist(),
                                                   self.slots[start:end].tolist()))

    def run():
      responder = pyspiel.TabularBestResponse(self.game, self.player, table)
      return responder.value_from_state(self.game.new_initial_state())
    self.add("openspiel_cpp", run, lambda r: r)

  def exact(self):
    self.add("exact", lambda: exact_br.best_response(self.game, self.tabular,
                                                          self.player),
             lambda r: r[0], lambda r: self.tree.num_nodes)

  def brs(self, label="brs", **kwargs):
    self.add(label, lambda: pruned_br.pruned_best_response(
        self.game, self.tabular, self.player, **kwargs),
             lambda r: r.value, lambda r: r.histories_visited,
             (lambda r: r.error_bound) if kwargs else None)

  def ismcts(self, simulations, seeds, uct_c):
    """One timed row per budget (seed 0) and every seed's error for the plot."""
    errors = {}
    for budget in simulations:
      self.add(f"ismcts(simulations={budget})",
               lambda b=budget: ismcts_br.ismcts_best_response(
                   self.game, self.tabular, self.player, b, seed=0, uct_c=uct_c),
               lambda r: r.value)
      errors[budget] = [
          ismcts_br.ismcts_best_response(
              self.game, self.tabular, self.player, budget, seed=seed,
              uct_c=uct_c).error for seed in range(seeds)]
    return errors


_COLUMNS = ("method", "value", "error", "bound", "visited", "time_s", "memory_mb")


def format_row(row):
  def show(key, width, spec):
    value = row.get(key)
    return f"{'' if value is None else format(value, spec):>{width}}"
  return (f"{row['method']:<28}{show('value', 12, '.6f')}{show('error', 11, '.2e')}"
          f"{show('bound', 10, '.3g')}{show('visited', 9, 'd')}"
          f"{show('time_s', 11, '.4f')}{show('memory_mb', 11, '.1f')}")


def header():
  return (f"{'method':<28}{'value':>12}{'error':>11}{'bound':>10}{'visited':>9}"
          f"{'time_s':>11}{'memory_mb':>11}")


def write_csv(path, rows, extra):
  with results_csv.AppendOnlyCsv(path, list(extra) + list(_COLUMNS),
                                 replace=True) as output:
    for row in rows:
      output.append({**extra, **{k: ("" if row[k] is None else row[k])
                                 for k in _COLUMNS}})


def plot_ismcts(path, game_string, player, errors):
  """[B] Fig. 6.1: ISMCTS-BR's error against simulations per information set."""
  plt = figures.pyplot()

  budgets = sorted(errors)
  figure, axes = plt.subplots(figsize=(7, 4.5))
  for budget in budgets:
    axes.scatter([budget] * len(errors[budget]), errors[budget], color="tab:blue",
                 alpha=0.3, s=14, label="one seed" if budget == budgets[0] else None)
  axes.plot(budgets, [np.mean(errors[b]) for b in budgets], color="tab:blue",
            marker="o", label=f"mean over {len(errors[budgets[0]])} seeds")
  axes.axhline(0.0, color="black", linewidth=0.8, label="exact best response")
  axes.set_xscale("log")
  axes.set_xlabel("simulations per searched information set")
  axes.set_ylabel("error: best-response value − policy value [utility]")
  axes.set_title(f"ISMCTS-BR convergence, {game_string}, responder {player}",
                 fontsize=9)
  axes.grid(True, which="both", alpha=0.3)
  axes.legend()
  figures.save(figure, path)


def pruning_figures(tree, player, trials):
  """[B] §6.2.2: BRS's visited histories against random mixed and deterministic
  opponents; returns the rows (one per opponent)."""
  rows = []
  for kind in ("mixed", "deterministic"):
    rng = np.random.default_rng(1 if kind == "mixed" else 2)
    for trial in range(trials):
      slots = tree.random_slots(rng, kind)
      _, _, _, counts = pruned_br.pruned_best_response_slots(
          tree, slots, player)
      rows.append(dict(opponent=kind, trial=trial, histories=tree.num_nodes,
                       visited=counts["histories_visited"],
                       visited_thesis=counts["histories_visited_thesis"]))
  print(f"\n[B] §6.2.2 pruning figures: BRS for player {player} on {tree.game_string} "
        f"({tree.num_nodes:,} histories), {trials} random opponents each")
  print(f"{'opponent':<15}{'count':<8}{'unvisited min/median/max':>28}"
        f"{'visited fraction (median)':>28}")
  for kind in ("mixed", "deterministic"):
    for count, key in (("ours", "visited"), ("[B]", "visited_thesis")):
      visited = np.array([r[key] for r in rows if r["opponent"] == kind])
      unvisited = tree.num_nodes - visited
      print(f"{kind:<15}{count:<8}"
            f"{f'{unvisited.min()} / {np.median(unvisited):g} / {unvisited.max()}':>28}"
            f"{np.median(visited) / tree.num_nodes:>28.3f}")
  return rows


def main(argv):
  del argv
  methods = [m.strip() for m in _METHODS.value.split(",") if m.strip()]
  unknown = set(methods) - set(METHODS)
  if unknown:
    raise app.UsageError(f"--methods: unknown {sorted(unknown)}; choose from "
                         f"{', '.join(METHODS)}.")
  if _PLAYER.value not in (0, 1):
    raise app.UsageError(f"--player must be 0 or 1, got {_PLAYER.value}.")
  if _RUNS.value < 1 or _ISMCTS_SEEDS.value < 1 or _PRUNING_TRIALS.value < 0:
    raise app.UsageError("--runs and --ismcts_seeds must be >= 1, --pruning_trials "
                         ">= 0.")
  try:
    output_paths.check_directory(_OUTPUT_DIR.value, "--output_dir")
    game = pyspiel.load_game(_GAME.value)
    start = time.perf_counter()
    tree = compiled_tree.cached_tree(game, workers=_WORKERS.value)
    build_seconds = time.perf_counter() - start
    slots = fixed_policies.fixed_policy_slots(_POLICY.value, game, tree)
    epsilons = _parse_numbers(_EPSILONS.value, "--epsilons")
    etas = _parse_numbers(_ETAS.value, "--etas")
    budgets = [int(b) for b in _parse_numbers(_SIMULATIONS.value,
                                              "--ismcts_simulations")]
  except (ValueError, pyspiel.SpielError) as error:
    raise app.UsageError(str(error)) from None
  player = _PLAYER.value
  name = result_names.key(tree.game_string)
  print(f"game:   {tree.game_string}\ntree:   {tree}, {tree.nbytes() / 2**20:.1f} MB, "
        f"built in {build_seconds:.3f} s\npolicy: {_POLICY.value}, responder: {player}")
  comparison = Comparison(game, tree, slots, player, _RUNS.value)
  # Load the numba kernels once so that no timed run includes it.
  pruned_br.pruned_best_response(game, comparison.tabular, player, eta=0.5)
  ismcts_br.ismcts_best_response(game, comparison.tabular, player, 1, 0)
  print(f"exact best-response value: {comparison.exact_value:.9g}\n")
  print(header())
  errors = None
  for method in methods:
    if method == "openspiel_python":
      comparison.openspiel_python()
    elif method == "openspiel_cpp":
      comparison.openspiel_cpp()
    elif method == "exact":
      comparison.exact()
    elif method == "brs":
      comparison.brs()
    elif method == "approximate":
      try:
        for epsilon in epsilons:
          comparison.brs(f"brs(epsilon={epsilon:g})", epsilon=epsilon,
                         start_depth=_START_DEPTH.value)
        for eta in etas:
          comparison.brs(f"brs(eta={eta:g})", eta=eta, start_depth=_START_DEPTH.value)
      except ValueError as error:
        raise app.UsageError(str(error)) from None
    elif method == "ismcts":
      errors = comparison.ismcts(budgets, _ISMCTS_SEEDS.value, _UCT_C.value)
  base = os.path.join(_OUTPUT_DIR.value, f"{name}__player{player}")
  extra = dict(game=tree.game_string, policy=_POLICY.value, player=player)
  write_csv(base + ".csv", comparison.rows, extra)
  print(f"\nwrote {base}.csv")
  if errors:
    plot_ismcts(base + "__ismcts.png", tree.game_string, player, errors)
    print(f"wrote {base}__ismcts.png")
  if _PRUNING_TRIALS.value:
    rows = pruning_figures(tree, player, _PRUNING_TRIALS.value)
    with results_csv.AppendOnlyCsv(base + "__pruning.csv", list(rows[0]),
                                   replace=True) as output:
      for row in rows:
        output.append(row)
    print(f"wrote {base}__pruning.csv")


if __name__ == "__main__":
  cli.run(main)
