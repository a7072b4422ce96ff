"""One resolving step with a fixed trunk strategy ([S] §6, Table 6.1, Figures 6.4-6.8).

`trunk_strategy` solves (or the caller loads) the trunk; `sweep` builds each gadget
variant from the subgame's (noisy) opponent values, solves it with a solver string and
hands a row of `COLUMNS` to `append` at the iterations `Run.evaluated` picks; `plot`
draws the mean combined exploitability and subgame margin. Used by
`python -m ggp_cr.examples.cfrd_eval`. Exploitabilities are OpenSpiel's (NashConv / 2),
always of the combined strategy on the whole game's CompiledTree.

Two routes solve a gadget: "compiled" (`view_of_subgame`: a copied_view.GadgetView,
the gadget laid out on the whole game's compiled tree, for solver strings that run on a
CompiledTree) and
"pyspiel" (gadget_game.GadgetGame, for every solver string, e.g. OpenSpiel's own). They
give the same rows to 1e-9 (tests/test_cfrd_eval.py); the compiled route is the one
that reaches latent tic-tac-toe (4.9M histories).
"""

import dataclasses

import numpy as np

from ggp_cr.algorithms import contracts
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.evaluation import figures
from ggp_cr.algorithms.resolving.compiled import copied_view
from ggp_cr.algorithms.resolving.exact import trunk_inputs
from ggp_cr.algorithms.resolving.gadget import gadget_game
from ggp_cr.algorithms.resolving.subgames import subgame_trace

COLUMNS = ("variant", "values", "sigma", "repeat", "iteration", "trunk_exploitability",
           "combined_exploitability", "gadget_exploitability", "margin")
ROUTES = ("compiled", "pyspiel")
# The columns naming one gadget run (one variant, sigma and noise draw).
RUN_KEY = ("variant", "values", "sigma", "repeat")


@dataclasses.dataclass(frozen=True)
class Run:
  """How each gadget is solved: `iterations` of `solver` (a solver string), evaluated
  at every multiple of `eval_every`, at each of `eval_at` and at the first and last
  iteration; `seed` seeds the solver and the noise; `route` is one of ROUTES."""
  solver: str
  iterations: int
  eval_every: int
  seed: int = 0
  eval_at: tuple = ()
  route: str = "compiled"

  def evaluated(self, iteration):
    return (iteration % self.eval_every == 0 or iteration in (1, self.iterations)
            or iteration in self.eval_at)


def on_tree(solver_string):
  """Whether the solver string's type runs on a CompiledTree (registry accepts_tree)."""
  return registry.parse_solver(solver_string).solver_type.accepts_tree


def _average_slots(solver, game, tree):
  if game is None:
    return solver.average_strategy_slots()
  return tree.policy_to_slots(contracts.python_average_policy(solver, game))


def _solver(spec, game, seed):
  solver = registry.make_solver(spec, game, seed=seed)
  return solver, contracts.step_function(solver)


def trunk_strategy(tree, solver_string, iterations, seed):
  """The average strategy (slots) after `iterations` of `solver_string` on the game
  (on `tree` itself when the solver runs on a CompiledTree)."""
  game = tree if on_tree(solver_string) else tree.game
  solver, step = _solver(solver_string, game, seed)
  for _ in range(iterations):
    step()
  return _average_slots(solver, None if game is tree else game, tree)


def view_of_subgame(tree, subgame, variant="resolve"):
  """The GadgetView of a gadget_game.Subgame (roots as histories, values keyed by o's
  information state strings) on the whole game's CompiledTree `tree`: the compiled
  counterpart of gadget_game.make_gadget(subgame, variant), node for node the same gadget
  (tests/test_cfrd_eval.py compares the two). Only the roots' keys are interned (no
  walk of the whole game). Returns (view, {o's string: the view's integer key})."""
  if tree.game_string != str(subgame.game):
    raise ValueError(f"The compiled tree is of {tree.game_string}, the subgame of "
                     f"{subgame.game}.")
  roots = [trunk_inputs.history_node(tree, history) for history in subgame.root_histories]
  strings = list(subgame.infosets)
  key_of = {text: tree.num_infosets + i for i, text in enumerate(strings)}
  keys = np.full((2, tree.num_nodes), -1, dtype=np.int32)
  keys[subgame.opponent, roots] = [key_of[text] for text in subgame.opponent_keys]
  state_keys = subgame_trace.StateKeys(tree, keys, strings)
  values = {key_of[text]: v for text, v in subgame.opponent_values.items()}
  view = copied_view.GadgetView(tree, state_keys, subgame.player, roots,
                                 subgame.reach, values, variant,
                                 subgame.opponent_reach)
  return view, key_of


class _CompiledGadget:
  """The gadget as a GadgetView on the whole tree (copied_view)."""

  def __init__(self, tree, subgame, variant, exact_values):
    self.view, key_of = view_of_subgame(tree, subgame, variant)
    self.tree = self.view.tree
    self.game = None
    self._before = {key_of[k]: v for k, v in exact_values.items() if k in key_of}
    self._whole, self._subgame, self._exact = tree, subgame, exact_values

  def combine(self, trunk, average):
    return self.view.combine(trunk, average)

  def margin(self, average, combined):
    if self.view.variant == "unsafe":  # o's roots outside the gadget count too
      return trunk_inputs.subgame_margin(self._whole, self._subgame, combined, self._exact)
    return self.view.subgame_margin(average, before=self._before)


class _PyspielGadget:
  """The gadget as a pyspiel game (gadget_game.GadgetGame)."""

  def __init__(self, tree, subgame, variant, exact_values):
    self.game = gadget_game.make_gadget(subgame, variant)
    self.tree = self.game.tree()
    self._whole, self._subgame, self._exact = tree, subgame, exact_values

  def combine(self, trunk, average):
    return trunk_inputs.combine(self._whole, trunk, self.game, average)

  def margin(self, average, combined):
    del average
    return trunk_inputs.subgame_margin(self._whole, self._subgame, combined, self._exact)


def evaluate_gadget(tree, trunk, subgame, exact_values, variant, run, append, labels):
  """Solves one gadget as `run` (a Run) says, appending a row at each evaluation."""
  if run.route not in ROUTES:
    raise ValueError(f"route must be one of {', '.join(ROUTES)}, got {run.route!r}.")
  if run.route == "compiled" and not on_tree(run.solver):
    raise ValueError(f"{run.solver} does not run on a compiled tree; use the pyspiel "
                     "route for it.")
  kind = _CompiledGadget if run.route == "compiled" else _PyspielGadget
  gadget = kind(tree, subgame, variant, exact_values)
  solver, step = _solver(run.solver, gadget.game or gadget.tree, run.seed)
  for iteration in range(1, run.iterations + 1):
    step()
    if not run.evaluated(iteration):
      continue
    average = _average_slots(solver, gadget.game, gadget.tree)
    combined = gadget.combine(trunk, average)
    exploitability = exact_br.exploitability_slots
    append({**labels, "variant": variant, "iteration": iteration,
            "combined_exploitability": exploitability(tree, combined),
            "gadget_exploitability": exploitability(gadget.tree, average),
            "margin": gadget.margin(average, combined)})


def noise_rng(seed, sigma, repeat):
  """The generator of noise draw `repeat` at `sigma`: its own stream, so that a run
  can be resumed or extended by sigmas and draws without changing earlier draws."""
  return np.random.default_rng([seed, int(round(sigma * 1e6)), repeat])


def sweep(tree, trunk, subgame, values, sigmas, repeats, variants, run, append,
          done=frozenset()):
  """Every variant for every sigma (`repeats` noise draws for sigma > 0, one for 0);
  the unsafe gadget ignores the values, so it runs once (first sigma, draw 0). Runs
  whose RUN_KEY (as a tuple of variant, values, float sigma, int repeat) is in `done`
  are skipped."""
  exact_values = trunk_inputs.opponent_root_values(tree, trunk, subgame)
  trunk_exploitability = exact_br.exploitability_slots(tree, trunk)
  for sigma in sigmas:
    for repeat in range(repeats if sigma > 0 else 1):
      todo = [v for v in variants
              if (v, values, sigma, repeat) not in done
              and not (v == "unsafe" and (sigma != sigmas[0] or repeat > 0))]
      if not todo:
        continue
      noisy = subgame.with_noise(sigma, noise_rng(run.seed, sigma, repeat))
      labels = {"values": values, "sigma": sigma, "repeat": repeat,
                "trunk_exploitability": trunk_exploitability}
      for variant in todo:
        evaluate_gadget(tree, trunk, noisy, exact_values, variant, run, append, labels)


def finished_runs(rows, iterations):
  """RUN_KEYs of the rows (dicts of text) whose run reached `iterations`."""
  return {(row["variant"], row["values"], float(row["sigma"]), int(row["repeat"]))
          for row in rows if int(row["iteration"]) == iterations}


def plot(csv_path, png_path, title, trunk_label="trunk"):
  """Mean combined exploitability, gadget exploitability (both log; [S] Figs 6.4-6.7
  show both) and subgame margin per variant, values and sigma."""
  plt = figures.pyplot()
  import pandas as pd  # pylint: disable=g-import-not-at-top
  frame = pd.read_csv(csv_path)
  keys = ["variant", "values", "sigma"]
  means = frame.groupby(keys + ["iteration"], as_index=False).mean(numeric_only=True)
  draws = frame.groupby(keys)["repeat"].nunique()
  figure, (top, middle, bottom) = plt.subplots(3, 1, figsize=(7, 10), sharex=True)
  sigmas = sorted(frame["sigma"].unique())
  variants = sorted(frame["variant"].unique())
  dashes = ["-", "--", ":", "-."]
  for (variant, values, sigma), group in means.groupby(keys):
    count = draws[(variant, values, sigma)]
    label = f"{variant}, {values}, σ={sigma:g}" + (f" (mean of {count})" if count > 1
                                                    else "")
    # Noise sweeps: colour by sigma, dash by variant; else colour by variant.
    if len(sigmas) > 1:
      style = {"color": f"C{sigmas.index(sigma)}",
               "linestyle": dashes[variants.index(variant) % len(dashes)]}
    else:
      style = {"color": f"C{variants.index(variant)}",
               "linestyle": "-" if values == "cbr" else "--"}
    top.plot(group["iteration"], group["combined_exploitability"], label=label, **style)
    middle.plot(group["iteration"], group["gadget_exploitability"], **style)
    bottom.plot(group["iteration"], group["margin"], **style)
  top.axhline(frame["trunk_exploitability"].iloc[0], color="black", linestyle="--",
              label=trunk_label)
  top.set_yscale("log")
  top.set_ylabel("combined exploitability\n(NashConv / 2)")
  top.legend(fontsize="small")
  middle.set_yscale("log")
  middle.set_ylabel("gadget exploitability\n(NashConv / 2)")
  bottom.axhline(0.0, color="black", linewidth=0.5)
  bottom.set_xscale("log")
  bottom.set_xlabel("gadget solver iterations")
  bottom.set_ylabel("subgame margin")
  figure.suptitle(title, fontsize="medium")
  figures.save(figure, png_path)
