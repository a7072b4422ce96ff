"""Linear mixed sampling against pure outcome sampling over the exploration lambda ([M]
Table 5.1).

`run` solves one seeded run and returns (nodes touched, seconds, exploitability =
NashConv / 2); `summarize` gives the mean, standard error and the thesis's value per
method and lambda; `plot` draws them. Used by
`python -m ggp_cr.examples.mixed_sampling_exploration`.
"""

import time

import numpy as np
import pandas as pd

from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.evaluation import figures


COLUMNS = ("method", "lambda", "seed", "solver", "iterations", "nodes_touched",
           "seconds", "exploitability")
NUMERIC_COLUMNS = ("lambda", "seed", "iterations", "nodes_touched", "seconds",
                   "exploitability")


METHODS = {
    "linear mixed": "mixed(schedule=linear,pernode=true,i={iterations},e={lam})",
    "pure OS": "mixed(schedule=os,e={lam})",
}


THESIS = {
    "linear mixed": {0.0: 1.48, 0.25: 1.58, 0.5: 1.65, 0.75: 1.67, 1.0: 1.73},
    "pure OS": {0.0: 2.22, 0.25: 2.22, 0.5: 2.20, 0.75: 2.34, 1.0: 2.37},
}


def done_runs(rows):
  """(solver, seed, iterations) of the rows already written (text, as read back)."""
  return {(row["solver"], int(row["seed"]), int(row["iterations"])) for row in rows}


def run(game, tree, solver_string, seed, iterations):
  solver = registry.make_solver(solver_string, game, seed=seed)
  start = time.perf_counter()
  for _ in range(iterations):
    solver.iteration()
  seconds = time.perf_counter() - start
  slots = solver.average_policy().to_slots(tree)
  return solver.nodes_touched, seconds, exact_br.exploitability_slots(tree, slots)


def summarize(frame, iterations):
  """Mean, standard error and count per method and lambda, with the thesis's value."""
  frame = frame[frame["iterations"] == iterations]
  rows = []
  for (method, lam), group in frame.groupby(["method", "lambda"]):
    values = group["exploitability"].to_numpy()
    rows.append({
        "method": method, "lambda": lam, "runs": len(values),
        "exploitability": values.mean(),
        "stderr": values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else 0.0,
        "nodes_touched": group["nodes_touched"].mean(),
        "thesis": THESIS.get(method, {}).get(float(lam), float("nan")),
    })
  return pd.DataFrame(rows)


def plot(summary, path, title):
  plt = figures.pyplot()
  figure, axes = plt.subplots(figsize=(6.5, 4.2))
  for (method, group), color in zip(summary.groupby("method"), ("C0", "C1")):
    axes.errorbar(group["lambda"], group["exploitability"], yerr=group["stderr"],
                  marker="o", color=color, capsize=3, label=f"{method} (ours)")
    axes.plot(group["lambda"], group["thesis"], marker="x", linestyle="--",
              color=color, label=f"{method} ([M] Table 5.1)")
  axes.set_xlabel("exploration lambda")
  axes.set_ylabel("exploitability (NashConv / 2)")
  axes.set_title(title)
  axes.grid(alpha=0.3)
  axes.legend(fontsize=8)
  figures.save(figure, path)
