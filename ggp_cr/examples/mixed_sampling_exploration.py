r"""Meyer's Table 5.1: exploration lambda in mixed ES/OS sampling vs pure OS ([M] §5.2.2).

  python -m ggp_cr.examples.mixed_sampling_exploration [--game=leduc_poker] \
      [--iterations=1024] [--lambdas=0,0.25,0.5,0.75,1] [--seeds=10]

For every lambda and seed, runs 2^10 iterations (by default) of
* linear mixed sampling, re-drawn at every node: mixed(schedule=linear,pernode=true),
  the method of [M] Figure 5.2d and Table 5.1(a), and
* pure outcome sampling: mixed(schedule=os), Table 5.1(b),
where the updated player's OS nodes sample uniformly with probability lambda, else from
the current strategy: lambda is the exploration e of OpenSpiel's outcome sampling,
which [M] built on (0.6 there; lambda = 0 is on-policy OS), see external_sampling.py.
The exploitability of the average strategy is OpenSpiel's (NashConv / 2), as in [M].
Each run appends a row to <output_dir>/<game>.csv (method, lambda, seed, solver,
iterations, nodes_touched, seconds, exploitability); runs already in the file (same
solver string, seed and iterations) are skipped, so an interrupted sweep resumes. Then
the mean (and standard error) per method and lambda is printed next to the thesis's
figures and plotted to <output_dir>/<game>.png.
"""

import os
import re

from absl import app
from absl import flags
import pandas as pd

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.evaluation import mixed_sampling
from ggp_cr.algorithms.evaluation import results_csv
from ggp_cr.algorithms.files import output_paths
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.examples import cli

_GAME = flags.DEFINE_string("game", "leduc_poker", "Game string.")
_ITERATIONS = cli.integer_flag("iterations", 1024, "Iterations per run (I).", minimum=1)
_LAMBDAS = flags.DEFINE_list("lambdas", ["0", "0.25", "0.5", "0.75", "1"],
                             "Exploration lambdas in [0, 1].")
_SEEDS = cli.integer_flag("seeds", 10, "Seeds per method and lambda.", minimum=1)
_OUTPUT_DIR = flags.DEFINE_string(
    "output_dir", os.path.join("results", "mixed_sampling"),
    "Directory of the CSV and plot.")
_WORKERS = cli.workers_flag(
    "Processes walking the game tree on the generic route (1: serial; games with a "
    "native extractor ignore it)")

# [M] Table 5.1 (Leduc Hold'em, 2^10 iterations, OpenSpiel exploitability).


def _lambdas():
  values = []
  for text in _LAMBDAS.value:
    try:
      value = float(text)
    except ValueError:
      raise app.UsageError(
          f"--lambdas must be numbers in [0, 1], got {text!r}.") from None
    if not 0.0 <= value <= 1.0:
      raise app.UsageError(f"--lambdas must be in [0, 1], got {value}.")
    values.append(value)
  return values


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Unexpected arguments: {argv[1:]}")
  lambdas = _lambdas()
  try:
    game = registry.load_game(_GAME.value)
  except ValueError as error:
    raise app.UsageError(str(error)) from None
  tree = compiled_tree.cached_tree(game, workers=cli.useful_workers(_WORKERS))
  try:
    output_paths.check_directory(_OUTPUT_DIR.value, "--output_dir")
  except ValueError as error:
    raise app.UsageError(str(error)) from None
  name = re.sub(r"[^A-Za-z0-9_.=,+-]+", "_", str(game)).strip("_")
  csv_path = os.path.join(_OUTPUT_DIR.value, f"{name}.csv")
  iterations = _ITERATIONS.value
  solver_strings = set()
  try:
    output = results_csv.AppendOnlyCsv(
        csv_path, mixed_sampling.COLUMNS, numeric=mixed_sampling.NUMERIC_COLUMNS,
        key=("solver", "seed", "iterations"))
  except ValueError as error:
    raise app.UsageError(str(error)) from None
  done = mixed_sampling.done_runs(output.rows)
  with output:
    for method, template in mixed_sampling.METHODS.items():
      for lam in lambdas:
        solver_string = template.format(iterations=iterations, lam=lam)
        solver_strings.add(solver_string)
        for seed in range(_SEEDS.value):
          if (solver_string, seed, iterations) in done:
            continue
          nodes, seconds, value = mixed_sampling.run(game, tree, solver_string, seed,
                                                     iterations)
          output.append({"method": method, "lambda": lam, "seed": seed,
                         "solver": solver_string, "iterations": iterations,
                         "nodes_touched": nodes, "seconds": round(seconds, 3),
                         "exploitability": value})
          print(f"{method:12s} lambda={lam:<5g} seed={seed:<3d} exploitability "
                f"{value:.4f}  nodes {nodes:,}  {seconds:.1f} s", flush=True)
  frame = pd.read_csv(csv_path)
  summary = mixed_sampling.summarize(frame[frame["solver"].isin(solver_strings)],
                                     iterations)
  print(f"\n{game}, {iterations} iterations, exploitability (NashConv/2), mean ± s.e.:")
  for row in summary.itertuples():
    print(f"  {row.method:12s} lambda={row[2]:<5g} ours {row.exploitability:.3f} ± "
          f"{row.stderr:.3f} ({row.runs} runs, {row.nodes_touched:,.0f} nodes)   "
          f"thesis {row.thesis:.2f}")
  plot_path = os.path.join(_OUTPUT_DIR.value, f"{name}.png")
  mixed_sampling.plot(summary, plot_path, f"{game}, {iterations} iterations")
  print(f"CSV: {csv_path}\nPlot: {plot_path}")


if __name__ == "__main__":
  cli.run(main)
