"""One resolving step with a fixed trunk strategy ([S] §6, Table 6.1, Figures 6.4-6.8).

`trunk_strategy` solves (or the caller loads) the trunk; `sweep` builds each gadget
variant from the subgame's (noisy) opponent values, solves it with a solver string and
hands a row of `COLUMNS` to `append` every `eval_every` iterations (and at the first
and last); `plot` draws the mean combined exploitability and subgame margin. Used by
`python -m ggp_cr.examples.cfrd_eval`. Exploitabilities are OpenSpiel's (NashConv / 2).
"""

import numpy as np

from ggp_cr.algorithms import contracts
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.evaluation import figures
from ggp_cr.algorithms.resolving import gadgets
from ggp_cr.algorithms.resolving import subgames

COLUMNS = ("variant", "values", "sigma", "repeat", "iteration", "trunk_exploitability",
           "combined_exploitability", "gadget_exploitability", "margin")


def _average_slots(solver, game, tree):
  return tree.policy_to_slots(contracts.python_average_policy(solver, game))


def _solver(spec, game, seed):
  solver = registry.make_solver(spec, game, seed=seed)
  return solver, contracts.step_function(solver)


def trunk_strategy(tree, solver_string, iterations, seed):
  """The average strategy (slots) after `iterations` of `solver_string` on the game."""
  solver, step = _solver(solver_string, tree.game, seed)
  for _ in range(iterations):
    step()
  return _average_slots(solver, tree.game, tree)


def evaluate_gadget(tree, trunk, subgame, exact_values, variant, run, append, labels):
  """Solves one gadget (`run`: solver, iterations, eval_every, seed), appending a row
  every eval_every iterations and at the first and last."""
  solver_string, iterations, eval_every, seed = run
  gadget = gadgets.make_gadget(subgame, variant)
  gadget_tree = gadget.tree()
  solver, step = _solver(solver_string, gadget, seed)
  for iteration in range(1, iterations + 1):
    step()
    if iteration % eval_every and iteration not in (1, iterations):
      continue
    average = _average_slots(solver, gadget, gadget_tree)
    combined = subgames.combine(tree, trunk, gadget, average)
    exploitability = exact_br.exploitability_slots
    append({**labels, "variant": variant, "iteration": iteration,
            "combined_exploitability": exploitability(tree, combined),
            "gadget_exploitability": exploitability(gadget_tree, average),
            "margin": subgames.subgame_margin(tree, subgame, combined, exact_values)})


def sweep(tree, trunk, subgame, values, sigmas, repeats, variants, run, append):
  """Every variant for every sigma (`repeats` noise draws for sigma > 0, one for 0,
  drawn with `run`'s seed); the unsafe gadget ignores the values, so it runs once."""
  exact_values = subgames.opponent_root_values(tree, trunk, subgame)
  trunk_exploitability = exact_br.exploitability_slots(tree, trunk)
  rng = np.random.default_rng(run[3])
  for sigma in sigmas:
    for repeat in range(repeats if sigma > 0 else 1):
      noisy = subgame.with_noise(sigma, rng)
      labels = {"values": values, "sigma": sigma, "repeat": repeat,
                "trunk_exploitability": trunk_exploitability}
      for variant in variants:
        if variant == "unsafe" and (sigma != sigmas[0] or repeat > 0):
          continue
        evaluate_gadget(tree, trunk, noisy, exact_values, variant, run, append, labels)


def plot(csv_path, png_path, title):
  """Mean combined exploitability (log) and subgame margin per variant and sigma."""
  plt = figures.pyplot()
  import pandas as pd  # pylint: disable=g-import-not-at-top
  frame = pd.read_csv(csv_path)
  means = frame.groupby(["variant", "sigma", "iteration"], as_index=False).mean(
      numeric_only=True)
  figure, (top, bottom) = plt.subplots(2, 1, figsize=(7, 8), sharex=True)
  for (variant, sigma), group in means.groupby(["variant", "sigma"]):
    label = f"{variant}, σ={sigma:g}"
    top.plot(group["iteration"], group["combined_exploitability"], label=label)
    bottom.plot(group["iteration"], group["margin"], label=label)
  top.axhline(frame["trunk_exploitability"].iloc[0], color="black", linestyle="--",
              label="trunk")
  top.set_yscale("log")
  top.set_ylabel("combined exploitability (NashConv / 2)")
  top.legend()
  bottom.axhline(0.0, color="black", linewidth=0.5)
  bottom.set_xscale("log")
  bottom.set_xlabel("gadget solver iterations")
  bottom.set_ylabel("subgame margin")
  figure.suptitle(title)
  figures.save(figure, png_path)
