"""Benchmark: best-response time, ggp_cr's BRS and exact BR vs OpenSpiel's python and C++.

For each game, a random tabular policy (random probabilities per information set) and
both responders, the median wall time of several runs of
- OpenSpiel python: best_response.BestResponsePolicy(game, p, policy).value(root)
- OpenSpiel C++:    pyspiel.TabularBestResponse(game, p, table).value_from_state(root),
                    the {info state: [(action, prob)]} table built beforehand (untimed)
- ggp_cr exact:     exact_br.best_response(game, policy, p) (compiled tree)
- ggp_cr BRS:       pruned_br.pruned_best_response(game, policy, p)
(ours: policy conversion and the returned TabularPolicy included; the compiled tree,
built once per game, is timed separately). All values agree to 1e-9. A time is the sum
over both responders. Prints per game the times and ratios OpenSpiel / ours, and last
`ratio: <float>` = the smallest, over the games, of (the faster of OpenSpiel's two best
responses) / BRS.

  python benchmarks/best_response_vs_openspiel.py [--games=a;b] [--openspiel_runs=3]
"""

import time

from absl import app
from absl import flags
import numpy as np
from open_spiel.python.algorithms import best_response as openspiel_best_response
import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.best_response import pruned_br
from ggp_cr.algorithms.evaluation import timing
from ggp_cr.algorithms.tree import compiled_tree

_GAMES = flags.DEFINE_string("games", "leduc_poker;python_ii_goofspiel(num_cards=5)",
                             "Semicolon-separated game strings.")
_OPENSPIEL_RUNS = flags.DEFINE_integer("openspiel_runs", 3,
                                       "Timed runs of each OpenSpiel best response.")
_OUR_RUNS = flags.DEFINE_integer("our_runs", 21, "Timed runs of each of ours.")
_SEED = flags.DEFINE_integer("seed", 0, "Seed of the random policy.")
_WORKERS = flags.DEFINE_integer(
    "workers", 1, "Processes walking the game tree on the generic route (1: serial; "
    "games with a native extractor ignore it).", lower_bound=1)


def _both_players(function):
  return lambda: [function(player) for player in (0, 1)]


def _table(tree, slots, player):
  """The opponent's part of `slots` as TabularBestResponse's dictionary."""
  table = {}
  for infoset in np.flatnonzero(tree.infoset_player == 1 - player).tolist():
    start = int(tree.infoset_action_offset[infoset])
    end = start + int(tree.infoset_num_actions[infoset])
    table[tree.infoset_keys[infoset]] = list(zip(tree.infoset_actions[start:end].tolist(),
                                                 slots[start:end].tolist()))
  return table


def benchmark(game_string, seed, openspiel_runs, our_runs):
  """Prints one game's figures; returns (faster OpenSpiel time) / BRS time."""
  game = pyspiel.load_game(game_string)
  start = time.perf_counter()
  tree = compiled_tree.cached_tree(game, workers=_WORKERS.value)
  build_seconds = time.perf_counter() - start
  weights = np.random.default_rng(seed).random(tree.num_infoset_actions)
  slots = weights / np.add.reduceat(weights, tree.infoset_action_offset)[
      tree.slot_infoset]
  policy = tree.slots_to_tabular_policy(slots)
  tables = [_table(tree, slots, player) for player in (0, 1)]
  root = game.new_initial_state()
  print(f"\ngame: {tree.game_string}\ntree: {tree}, built in {build_seconds:.3f} s")

  def openspiel_python(player):
    return openspiel_best_response.BestResponsePolicy(game, player, policy).value(root)

  def openspiel_cpp(player):
    return pyspiel.TabularBestResponse(game, player, tables[player]).value_from_state(
        root)

  def exact(player):
    return exact_br.best_response(game, policy, player)[0]

  def brs(player):
    return pruned_br.pruned_best_response(game, policy, player).value

  for function in (exact, brs):  # loads the numba kernels
    _both_players(function)()
  seconds, values = {}, {}
  for name, function, runs in (("OpenSpiel python", openspiel_python, openspiel_runs),
                               ("OpenSpiel C++", openspiel_cpp, openspiel_runs),
                               ("ggp_cr exact", exact, our_runs),
                               ("ggp_cr BRS", brs, our_runs)):
    seconds[name], values[name] = timing.median_seconds(_both_players(function), runs)
    print(f"  {name:<18} median of {runs:>2}: {seconds[name]:10.4f} s   values "
          f"{values[name][0]:.9f}, {values[name][1]:.9f}", flush=True)
  reference = values["ggp_cr exact"]
  for name, value in values.items():
    assert np.allclose(value, reference, rtol=0, atol=1e-9), (name, value, reference)
  visited = [pruned_br.pruned_best_response_slots(tree, slots, p)[3][
      "histories_visited"] for p in (0, 1)]
  print(f"  BRS visited {visited[0]:,} and {visited[1]:,} of {tree.num_nodes:,} "
        "histories (responder 0, 1)")
  for ours in ("ggp_cr exact", "ggp_cr BRS"):
    for theirs in ("OpenSpiel python", "OpenSpiel C++"):
      print(f"  {theirs} / {ours}: {seconds[theirs] / seconds[ours]:.1f}")
  return min(seconds["OpenSpiel python"], seconds["OpenSpiel C++"]) / seconds[
      "ggp_cr BRS"]


def main(argv):
  del argv
  ratios = [benchmark(game, _SEED.value, _OPENSPIEL_RUNS.value, _OUR_RUNS.value)
            for game in _GAMES.value.split(";") if game.strip()]
  print(f"\nratio: {min(ratios):.1f}")


if __name__ == "__main__":
  app.run(main)
