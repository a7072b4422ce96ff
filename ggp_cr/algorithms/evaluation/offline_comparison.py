"""Offline MC-CFR comparison at equal visited states ([S] §5.1.2, Table 5.4, Fig. 5.11).

`run` drives one sampling solver (seeded) to each budget of visited states and appends
a row of `COLUMNS` per budget (NashConv and OpenSpiel's exploitability = NashConv / 2);
`plot` draws one log-log panel per game of the median NashConv over seeds. Used by
`python -m ggp_cr.examples.offline_mccfr_comparison`.
"""

import time

from ggp_cr.algorithms import contracts
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.evaluation import figures
from ggp_cr.algorithms.evaluation import solver_runs
from ggp_cr.algorithms.tree import compiled_tree


THESIS_NAMES = {
    "vr_mccfr(compiled=true)": "VR-MCCFR candidate",
    "mc_cfr(compiled=true)": "MC-CFR candidate",
    "os_mccfr(rm=rm+,e=1,compiled=true)": "MC-CFR+",
}


COLUMNS = ("game", "solver", "seed", "visited_states", "iterations", "time", "nash_conv",
           "exploitability")


def _make_solver(spec, game, seed, workers):
  target = (compiled_tree.cached_tree(game, workers=workers)
            if spec.solver_type.accepts_tree else game)
  try:
    solver = registry.make_solver(spec, target, seed=seed)
  except ValueError as error:
    raise ValueError(f"Cannot run {spec} on {game}: {error}") from None
  if contracts.visited_states(solver) is None:
    raise ValueError(f"--solver {spec} does not count visited states.")
  return solver


def run(output, game, spec, seed, budgets, workers=1):
  """One run of `spec` on `game`: a CSV row per budget, a summary line printed.

  Raises ValueError if the solver does not run on the game or count visited states
  (`workers` processes extract a compiled tree)."""
  solver = _make_solver(spec, game, seed, workers)
  evaluator = solver_runs.AverageStrategyEvaluator(game, solver)
  iterations, seconds, nash_conv = 0, 0.0, None
  for budget in budgets:
    tick = time.perf_counter()
    iterations += solver_runs.run_until_visited(solver, budget)
    seconds += time.perf_counter() - tick
    nash_conv = evaluator.nash_conv(evaluator.average_slots())
    output.append({"game": str(game), "solver": str(spec), "seed": seed,
                   "visited_states": solver.visited_states, "iterations": iterations,
                   "time": f"{seconds:.6f}", "nash_conv": repr(nash_conv),
                   "exploitability": repr(nash_conv / 2)})
  print(f"{str(game):70s} {str(spec):38s} seed {seed:2d}: {solver.visited_states:>12,} "
        f"states, {iterations:>10,} it, {seconds:6.2f} s, NashConv {nash_conv:.4g}",
        flush=True)


def plot(csv_path, plot_path):
  """One log-log panel per game of the median NashConv over seeds per solver."""
  plt = figures.pyplot()
  import pandas as pd  # pylint: disable=g-import-not-at-top

  frame = pd.read_csv(csv_path)
  frame["evaluation"] = frame.groupby(["game", "solver", "seed"]).cumcount()
  games = list(dict.fromkeys(frame["game"]))
  columns = min(len(games), 2)
  rows = -(-len(games) // columns)
  figure, axes_grid = plt.subplots(rows, columns, figsize=(6.5 * columns, 4.5 * rows),
                                   squeeze=False)
  for axes, game in zip(axes_grid.flat, games):
    of_game = frame[frame["game"] == game]
    for solver in dict.fromkeys(of_game["solver"]):
      runs = of_game[of_game["solver"] == solver].groupby("evaluation")
      x = runs["visited_states"].median()
      label = f"{THESIS_NAMES[solver]}: {solver}" if solver in THESIS_NAMES else solver
      seeds = of_game[of_game["solver"] == solver]["seed"].nunique()
      line, = axes.plot(x, runs["nash_conv"].median(), marker=".",
                        label=f"{label} (median of {seeds})")
      axes.fill_between(x, runs["nash_conv"].quantile(0.25),
                        runs["nash_conv"].quantile(0.75), color=line.get_color(),
                        alpha=0.2, linewidth=0)
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("visited states (histories touched)")
    axes.set_ylabel("NashConv (the thesis's exploitability)")
    axes.set_title(game, fontsize=9)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=7)
  for axes in list(axes_grid.flat)[len(games):]:
    axes.set_visible(False)
  figure.suptitle("Offline MC-CFR comparison ([S] §5.1.2, Fig. 5.11)")
  figures.save(figure, plot_path)
