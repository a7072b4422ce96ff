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

import os
import time

from absl import app
from absl import flags
import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.bots import fixed_policies
from ggp_cr.algorithms.config import number_ranges
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.config import spec_strings
from ggp_cr.algorithms.evaluation import br_comparison
from ggp_cr.algorithms.files import output_paths
from ggp_cr.algorithms.files import result_names
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.examples import cli

METHODS = br_comparison.METHODS

_GAME = flags.DEFINE_string("game", "leduc_poker", "Game string.")
_POLICY = flags.DEFINE_string("policy", "random(seed=3)",
                              "uniform | random(seed=N) | strategy(path=FILE) | "
                              "solver(name=SPEC,iterations=N).")
_PLAYER = cli.integer_flag("player", 0, "The responder", maximum=1)
_METHODS = flags.DEFINE_string("methods", ",".join(METHODS),
                               f"Comma-separated subset of {', '.join(METHODS)}.")
_EPSILONS = flags.DEFINE_string("epsilons", "0.01,0.1,1",
                                "Additive error bounds of the approximate BRS.")
_ETAS = flags.DEFINE_string("etas", "0.1,0.5,1", "Relative error bounds (in [0, 1]).")
_START_DEPTH = cli.integer_flag("start_depth", 0,
                                "Depth from which the approximation may act.")
_SIMULATIONS = flags.DEFINE_string("ismcts_simulations", "1,10,100,1000,10000",
                                   "ISMCTS-BR budgets: simulations per searched "
                                   "information set.")
_ISMCTS_SEEDS = cli.integer_flag("ismcts_seeds", 5,
                                 "Seeds per ISMCTS-BR budget (for the plot).",
                                 minimum=1, maximum=number_ranges.MAX_KEPT)
_UCT_C = flags.DEFINE_float("uct_c", 1.0, "ISMCTS-BR's UCB1 constant (returns in [0, 1]).")
_RUNS = cli.integer_flag("runs", 3, "Timed runs per method (median reported).",
                         minimum=1, maximum=number_ranges.MAX_KEPT)
_PRUNING_TRIALS = cli.integer_flag("pruning_trials", 0,
                                   "Random opponents per kind for [B] §6.2.2's "
                                   "pruning figures (0: skip).",
                                   maximum=number_ranges.MAX_KEPT)
_OUTPUT_DIR = flags.DEFINE_string("output_dir", "best_response_results",
                                  "Directory of the CSV files and the plot.")
_WORKERS = cli.workers_flag(
    "Processes walking the game tree on the generic route (1: serial; games with a "
    "native extractor ignore it)")


def _parse_numbers(text, name):
  return [spec_strings.parse_float(part, name) for part in text.split(",") if part]


def main(argv):
  del argv
  methods = [m.strip() for m in _METHODS.value.split(",") if m.strip()]
  unknown = set(methods) - set(METHODS)
  if unknown:
    raise app.UsageError(f"--methods: unknown {sorted(unknown)}; choose from "
                         f"{', '.join(METHODS)}.")
  try:
    budgets = [number_ranges.count(part, "--ismcts_simulations", minimum=1)
               for part in _SIMULATIONS.value.split(",") if part]
    output_paths.check_directory(_OUTPUT_DIR.value, "--output_dir")
    game = registry.load_game(_GAME.value)
    start = time.perf_counter()
    tree = compiled_tree.cached_tree(game, workers=cli.useful_workers(_WORKERS))
    build_seconds = time.perf_counter() - start
    slots = fixed_policies.fixed_policy_slots(_POLICY.value, game, tree)
    epsilons = _parse_numbers(_EPSILONS.value, "--epsilons")
    etas = _parse_numbers(_ETAS.value, "--etas")
  except (ValueError, pyspiel.SpielError) as error:
    raise app.UsageError(str(error)) from None
  player = _PLAYER.value
  name = result_names.key(tree.game_string)
  print(f"game:   {tree.game_string}\ntree:   {tree}, {tree.nbytes() / 2**20:.1f} MB, "
        f"built in {build_seconds:.3f} s\npolicy: {_POLICY.value}, responder: {player}")
  comparison = br_comparison.Comparison(game, tree, slots, player, _RUNS.value)
  try:
    errors = comparison.run(methods, epsilons, etas, _START_DEPTH.value, budgets,
                            _ISMCTS_SEEDS.value, _UCT_C.value)
  except ValueError as error:
    raise app.UsageError(str(error)) from None
  base = os.path.join(_OUTPUT_DIR.value, f"{name}__player{player}")
  extra = dict(game=tree.game_string, policy=_POLICY.value, player=player)
  br_comparison.write_csv(base + ".csv", comparison.rows, extra)
  print(f"\nwrote {base}.csv")
  if errors:
    br_comparison.plot_ismcts(base + "__ismcts.png", tree.game_string, player, errors)
    print(f"wrote {base}__ismcts.png")
  if _PRUNING_TRIALS.value:
    rows = br_comparison.pruning_figures(tree, player, _PRUNING_TRIALS.value)
    br_comparison.write_csv(base + "__pruning.csv", rows)
    print(f"wrote {base}__pruning.csv")


if __name__ == "__main__":
  cli.run(main)
