"""Best responses side by side ([B] ch. 6): OpenSpiel's and ours on one policy.

`Comparison` times each method on one game, policy and responder (median of runs, peak
memory in a forked process) and collects rows of `_COLUMNS`; `plot_ismcts` draws [B]
Fig. 6.1 and `pruning_figures` gives [B] §6.2.2's visited histories. Used by
`python -m ggp_cr.examples.best_response`.
"""

import multiprocessing
import os

import numpy as np
from open_spiel.python.algorithms import best_response as openspiel_best_response
import pyspiel

from ggp_cr.algorithms import worker_processes
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.best_response import ismcts_br
from ggp_cr.algorithms.best_response import pruned_br
from ggp_cr.algorithms.evaluation import figures
from ggp_cr.algorithms.evaluation import results_csv
from ggp_cr.algorithms.evaluation import timing

METHODS = ("openspiel_python", "openspiel_cpp", "exact", "brs", "approximate", "ismcts")


def _run_and_report_memory(function, connection, parent):
  worker_processes.tie_to_parent(parent)
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
  """Peak resident memory (MB) that one call of `function` adds, in a forked process
  that dies with this one (worker_processes); None where /proc or fork is unavailable."""
  if not os.path.exists("/proc/self/clear_refs"):
    return None
  try:
    context = multiprocessing.get_context("fork")
  except ValueError:
    return None
  receiver, sender = context.Pipe(duplex=False)
  process = context.Process(target=_run_and_report_memory, args=(function, sender, os.getpid()))
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

  def run(self, methods, epsilons, etas, start_depth, simulations, seeds, uct_c):
    """Prints and collects the rows of `methods` (names in METHODS) in order; returns
    ISMCTS-BR's errors per budget (None without "ismcts")."""
    # Load the numba kernels once so that no timed run includes it.
    pruned_br.pruned_best_response(self.game, self.tabular, self.player, eta=0.5)
    ismcts_br.ismcts_best_response(self.game, self.tabular, self.player, 1, 0)
    print(f"exact best-response value: {self.exact_value:.9g}\n")
    print(header())
    errors = None
    for method in methods:
      if method in ("openspiel_python", "openspiel_cpp", "exact", "brs"):
        getattr(self, method)()
      elif method == "approximate":
        for epsilon in epsilons:
          self.brs(f"brs(epsilon={epsilon:g})", epsilon=epsilon, start_depth=start_depth)
        for eta in etas:
          self.brs(f"brs(eta={eta:g})", eta=eta, start_depth=start_depth)
      elif method == "ismcts":
        errors = self.ismcts(simulations, seeds, uct_c)
      else:
        raise ValueError(f"Unknown method {method!r}; choose from {', '.join(METHODS)}.")
    return errors

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


def write_csv(path, rows, extra=None):
  """Writes `rows` (a fresh file) with the `extra` columns first; None as ""."""
  extra = extra or {}
  columns = list(extra) + [name for name in (rows[0] if rows else _COLUMNS)
                          if name not in extra]
  with results_csv.AppendOnlyCsv(path, columns, replace=True) as output:
    for row in rows:
      output.append({**extra, **{k: ("" if v is None else v) for k, v in row.items()}})


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
