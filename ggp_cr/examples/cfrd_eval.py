r"""One resolving step with a fixed trunk strategy ([S] §6, Table 6.1, Figures 6.4-6.8).

  python -m ggp_cr.examples.cfrd_eval --game=python_leduc --history=0,0,1,2 \
      --trunk_solver=cfr+ --trunk_iterations=100 --variants=resolve,max_margin,unsafe \
      --sigmas=0,0.1,0.5 --repeats=5 --iterations=1000 --output=cfrd_eval.csv

A trunk strategy is computed (--trunk_solver for --trunk_iterations) or loaded from a
strategy file (--trunk_strategy, as written by --save_trunk or by the solve example's
--save_strategy; ggp_cr.algorithms.tree.strategy_files). The subgame is the one
containing --history (comma-separated action ids from the root; the default is [S]
Table 6.1's Leduc subgame Deal(0->1), Deal(0->2), Call, Raise), resolved for the player
acting there. Its gadget is built from the opponent's exact counterfactual best-response
values (--values=cbr) or its counterfactual values under the trunk (--values=trunk),
each multiplied by an independent N(1, sigma) factor for every sigma in --sigmas
(--repeats draws for sigma > 0, as [S] §6 did 50 times), and solved by --solver. Solvers
are solver strings of ggp_cr.algorithms.config.registry (cfr+, dcfr(1.5,0,2),
vr_mccfr, openspiel_cpp_cfr_plus, ...); an iteration is one
`evaluate_and_update_policy()` or `iteration()`. The combined strategy (trunk, with the
resolving player's subgame information sets taken from the gadget's average strategy)
is evaluated every --eval_every iterations, at each of --eval_at and at the first and
last, always on the whole game's compiled tree. The unsafe gadget ignores the values, so
it runs once (first sigma, repeat 0). --route=compiled (default) solves the gadget as
a view on the compiled tree (copied_view; solver strings that run on a CompiledTree),
--route=pyspiel as a pyspiel game (any solver string); both give the same rows.

The run is resumable: its settings (and, for the reader, the trunk's solver and
iterations or strategy file and its exploitability) go to <output>.config.json;
rerunning with the same settings skips the runs (variant, values, sigma, draw) that
reached --iterations and redoes unfinished ones (more --sigmas, --repeats or --variants
may be added; noise draw r at sigma s is seeded by (--seed, s, r) alone). --overwrite
starts afresh.

One CSV row per evaluation is appended to --output as the run goes: variant, values,
sigma, repeat, iteration, trunk_exploitability, combined_exploitability,
gadget_exploitability and margin. Exploitabilities are OpenSpiel's (NashConv / 2; [S]
reports NashConv, twice these); the gadget's is that of the gadget's average strategy
in the gadget game. margin is the subgame margin min_I (CBV_trunk(I) − CBV_combined(I))
over the opponent's root information sets, in unnormalised counterfactual values,
measured against the exact trunk values whatever --values and --sigmas say. A plot of
the mean combined and gadget exploitability and margin per variant, values and sigma
goes to --plot (mean over the draws).
"""

import json
import os
import sys

from absl import app
from absl import flags

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.config import number_ranges
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.evaluation import gadget_runs
from ggp_cr.algorithms.evaluation import results_csv
from ggp_cr.algorithms.files import output_paths
from ggp_cr.algorithms.resolving.exact import trunk_inputs
from ggp_cr.algorithms.resolving.gadget import gadget_game
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import strategy_files
from ggp_cr.examples import cli

_GAME = flags.DEFINE_string("game", "python_leduc", "Game string.")
_HISTORY = flags.DEFINE_string(
    "history", "0,0,1,2", "Comma-separated action ids from the root to a history of "
    "the subgame (empty: the root).")
_ROOTS_BY = flags.DEFINE_enum(
    "roots_by", "augmented", ["augmented", "public"],
    "How the subgame's roots are found (trunk_inputs.subgame_root_nodes).")
_PLAYER = cli.integer_flag("player", None, "Resolving player (default: the one "
                           "acting at --history)", maximum=1)
_TRUNK_SOLVER = flags.DEFINE_string("trunk_solver", "cfr+",
                                    "Solver string computing the trunk.")
_TRUNK_ITERATIONS = cli.integer_flag("trunk_iterations", 100,
                                     "Iterations of --trunk_solver.", minimum=1)
_TRUNK_STRATEGY = flags.DEFINE_string(
    "trunk_strategy", None, "Load the trunk from this strategy file (.npz) instead.")
_SAVE_TRUNK = flags.DEFINE_string("save_trunk", None,
                                  "Save the computed trunk to this strategy file.")
_VARIANTS = flags.DEFINE_list("variants", ["resolve"],
                              f"Gadget variants, of {', '.join(gadget_game.VARIANTS)}.")
_VALUES = flags.DEFINE_enum("values", "cbr", ["cbr", "trunk"],
                            "Opponent values: exact counterfactual best response, or "
                            "the opponent's trunk strategy.")
_SIGMAS = flags.DEFINE_list("sigmas", ["0"], "Relative noise levels sigma >= 0.")
_REPEATS = cli.integer_flag("repeats", 10, "Noise draws per sigma > 0.", minimum=1)
_SEED = cli.integer_flag("seed", 0, "Seed of the noise.",
                         maximum=number_ranges.MAX_SEED)
_SOLVER = flags.DEFINE_string("solver", "cfr+", "Solver string for the gadget.")
_ITERATIONS = cli.integer_flag("iterations", 1000, "Gadget solver iterations.",
                               minimum=1)
_EVAL_EVERY = cli.integer_flag("eval_every", 10,
                               "Evaluate every this many iterations (and at 1).",
                               minimum=1)
_EVAL_AT = flags.DEFINE_list("eval_at", [], "Also evaluate at these iterations.")
_ROUTE = flags.DEFINE_enum("route", "compiled", list(gadget_runs.ROUTES),
                           "Gadget as a view on the compiled tree, or a pyspiel game.")
_OUTPUT = flags.DEFINE_string("output", "cfrd_eval.csv", "CSV path.")
_OVERWRITE = flags.DEFINE_bool("overwrite", False, "Replace an existing --output.")
_PLOT = flags.DEFINE_string("plot", None, "PNG path (default: --output with .png).")
_WORKERS = cli.workers_flag(
    "Processes walking the game tree on the generic route (1: serial; games with a "
    "native extractor ignore it)")

def _parse_history(text):
  try:
    return [int(a) for a in text.split(",") if a.strip()]
  except ValueError:
    raise app.UsageError(f"--history must be comma-separated action ids, got "
                         f"{text!r}.") from None


def _parse_sigmas(texts):
  try:
    sigmas = [float(s) for s in texts]
  except ValueError:
    raise app.UsageError(f"--sigmas must be numbers, got {texts}.") from None
  if any(not s >= 0 for s in sigmas):
    raise app.UsageError(f"--sigmas must be >= 0, got {texts}.")
  return sigmas


def _check_flags():
  unknown = [v for v in _VARIANTS.value if v not in gadget_game.VARIANTS]
  if unknown or not _VARIANTS.value:
    raise app.UsageError(f"--variants must be a non-empty list of "
                         f"{', '.join(gadget_game.VARIANTS)}; got {_VARIANTS.value}.")
  for flag in (_TRUNK_SOLVER, _SOLVER):
    try:
      registry.parse_solver(flag.value)
    except ValueError as error:
      raise app.UsageError(f"--{flag.name}: {error}") from None
  if _ROUTE.value == "compiled" and not gadget_runs.on_tree(_SOLVER.value):
    raise app.UsageError(f"--solver={_SOLVER.value} does not run on a compiled tree; "
                         "pass --route=pyspiel.")
  try:
    output_paths.check_file(_OUTPUT.value, "--output")
    output_paths.check_file(_config_path(), "--output's configuration file")
    output_paths.check_file(
        _PLOT.value or os.path.splitext(_OUTPUT.value)[0] + ".png", "--plot")
    if _SAVE_TRUNK.value:
      output_paths.check_file(_SAVE_TRUNK.value, "--save_trunk")
  except ValueError as error:
    raise app.UsageError(str(error)) from None


def _eval_at():
  try:
    return tuple(number_ranges.count(i, "--eval_at", minimum=1)
                 for i in _EVAL_AT.value)
  except ValueError as error:
    raise app.UsageError(str(error)) from None


def _config_path():
  return os.path.splitext(_OUTPUT.value)[0] + ".config.json"


def _config():
  """The settings a resumed run must share (sigmas, repeats, variants and values may
  change; the trunk is checked by its exploitability, so it may be loaded)."""
  names = ("game", "history", "roots_by", "player", "seed", "solver", "iterations",
           "eval_every", "eval_at", "route")
  return {name: flags.FLAGS[name].value for name in names}


def _trunk_provenance(trunk_exploitability):
  """Where the trunk came from, for the reader of the configuration file; a resume
  compares only the trunk's exploitability (the rows'), since it may be loaded."""
  source = ({"strategy_file": _TRUNK_STRATEGY.value} if _TRUNK_STRATEGY.value else
            {"solver": _TRUNK_SOLVER.value, "iterations": _TRUNK_ITERATIONS.value})
  return {**source, "exploitability": trunk_exploitability}


def _open_output(trunk_exploitability):
  """The results CSV, resumed when its configuration file matches (module docstring)
  and its rows have the same trunk exploitability."""
  config, path = _config(), _config_path()

  def check_existing():
    try:
      with open(path, encoding="utf-8") as file:
        stored = json.load(file)
    except (OSError, ValueError) as error:
      raise ValueError(f"{_OUTPUT.value} holds rows but its configuration {path} is "
                       f"unreadable ({error}); pass --overwrite.") from None
    differences = [f"{k}: file has {stored.get(k)!r}, this run {v!r}"
                   for k, v in config.items() if stored.get(k) != v]
    if differences:
      raise ValueError(f"{_OUTPUT.value} holds another run ({'; '.join(differences)});"
                       " pass --overwrite or another --output.")

  output = results_csv.AppendOnlyCsv(
      _OUTPUT.value, gadget_runs.COLUMNS, numeric=gadget_runs.COLUMNS[2:],
      key=gadget_runs.RUN_KEY + ("iteration",), replace=_OVERWRITE.value, lock=True,
      kind="cfrd_eval CSV", check_existing=check_existing)
  earlier = {float(row["trunk_exploitability"]) for row in output.rows}
  if any(abs(e - trunk_exploitability) > 1e-12 for e in earlier):
    output.close()
    raise ValueError(f"{_OUTPUT.value} holds runs on a trunk of exploitability "
                     f"{sorted(earlier)}, this trunk has {trunk_exploitability!r}; "
                     "pass --overwrite or another --output.")
  with open(path, "w", encoding="utf-8") as file:
    json.dump({**config, "trunk": _trunk_provenance(trunk_exploitability)}, file,
              indent=2)
  done = gadget_runs.finished_runs(output.rows, _ITERATIONS.value)
  output.keep(lambda row: (row["variant"], row["values"], float(row["sigma"]),
                           int(row["repeat"])) in done)
  return output, done


def _trunk(tree):
  if _TRUNK_STRATEGY.value:
    try:
      return strategy_files.load_strategy(_TRUNK_STRATEGY.value, tree)
    except ValueError as error:
      raise app.UsageError(f"--trunk_strategy: {error}") from None
  print(f"trunk: {_TRUNK_ITERATIONS.value} iterations of {_TRUNK_SOLVER.value}")
  try:
    trunk = gadget_runs.trunk_strategy(tree, _TRUNK_SOLVER.value,
                                       _TRUNK_ITERATIONS.value, _SEED.value)
  except ValueError as error:
    raise app.UsageError(str(error)) from None
  if _SAVE_TRUNK.value:
    strategy_files.save_strategy(_SAVE_TRUNK.value, tree, trunk)
  return trunk


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Unexpected arguments: {argv[1:]}")
  _check_flags()
  eval_at = _eval_at()
  history = _parse_history(_HISTORY.value)
  sigmas = _parse_sigmas(_SIGMAS.value)
  try:
    game = registry.load_game(_GAME.value)
  except ValueError as error:
    raise app.UsageError(str(error)) from None
  try:
    tree = compiled_tree.compile_game(game, workers=cli.useful_workers(_WORKERS))
    trunk_inputs.history_node(tree, history)
    trunk = _trunk(tree)
    subgame = trunk_inputs.subgame_from_trunk(tree, trunk, history, _PLAYER.value,
                                         _VALUES.value, _ROOTS_BY.value)
  except ValueError as error:
    print(f"error: {error}", file=sys.stderr)
    return 1
  trunk_exploitability = exact_br.exploitability_slots(tree, trunk)
  print(f"{tree}\ntrunk exploitability {trunk_exploitability:.6g}\n{subgame}")

  try:
    output, done = _open_output(trunk_exploitability)
  except ValueError as error:
    raise app.UsageError(str(error)) from None
  if done:
    print(f"resuming {_OUTPUT.value}: {len(done)} finished runs are skipped")

  def append(row):
    output.append(row)
    print(f"{row['variant']:>10} σ={row['sigma']:<5g} #{row['repeat']:<3} "
          f"it {row['iteration']:>6}: combined {row['combined_exploitability']:.6g}  "
          f"gadget {row['gadget_exploitability']:.3g}  margin {row['margin']:.4g}",
          flush=True)

  run = gadget_runs.Run(_SOLVER.value, _ITERATIONS.value, _EVAL_EVERY.value,
                        _SEED.value, eval_at, _ROUTE.value)
  with output:
    try:
      gadget_runs.sweep(tree, trunk, subgame, _VALUES.value, sigmas, _REPEATS.value,
                        _VARIANTS.value, run, append, done)
    except ValueError as error:
      raise app.UsageError(str(error)) from None
  png_path = _PLOT.value or os.path.splitext(_OUTPUT.value)[0] + ".png"
  trunk_name = (f"trunk {_TRUNK_STRATEGY.value}" if _TRUNK_STRATEGY.value else
                f"trunk {_TRUNK_ITERATIONS.value} it. of {_TRUNK_SOLVER.value}")
  gadget_runs.plot(_OUTPUT.value, png_path, f"{_GAME.value}, subgame at "
                   f"[{_HISTORY.value}],\n{trunk_name},\nplayer {subgame.player} "
                   f"resolves with {_SOLVER.value}")
  print(f"wrote {_OUTPUT.value} and {png_path}")
  return 0


if __name__ == "__main__":
  cli.run(main)
