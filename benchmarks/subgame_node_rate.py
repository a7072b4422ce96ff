"""Benchmark (issue 45): a CFR+ iteration's time per node on continual resolving's
subgames solved in place, against whole-game CFR+ on the same tree in the same run.

Per game, the tree is read from --cache_dir (or compiled into it), then a continual-
resolving CFR+ bot (1 s pre-play, 0.1 s a move) plays --matches matches in each seat
against a uniform random player, and the arguments of every later subgame it sets up
are kept. Per game it prints the whole tree's CFR+ iteration (cfr.CFRPlusSolver) in
ns per node and pass (two passes an iteration, alternating updates), then for up to
--subgames of the kept subgames of distinct sizes, solved in place
(in_place_view.SubgameView, roots nested: skipped), their iteration's ns per node and
pass, its ratio to the whole tree's, how many position ranges and post-order
segments its passes walk (in_place_view._ranges), and the share of the iteration
outside the two passes' kernels (gadget gates, regret matching, Python). Medians of
--repeats timed iterations after one untimed; the last line is `max in-place/whole
ratio: <float>` over subgames of at least move_budget.MEASURED_NODES nodes
(move_budget.VIEW_SLOWDOWN's measurement). Wall clock: quote the load.

  python benchmarks/subgame_node_rate.py --cache_dir=DIR [--game=...] [--matches=1]
      [--subgames=6] [--repeats=5]
"""

import statistics
import time

from absl import app
from absl import flags
import numpy as np
import pyspiel

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.evaluation import matches
from ggp_cr.algorithms.resolving import continual_resolving
from ggp_cr.algorithms.resolving import move_budget
from ggp_cr.algorithms.resolving.compiled import compiled_resolver
from ggp_cr.algorithms.resolving.compiled import in_place_view
from ggp_cr.algorithms.tree import compiled_tree

_GAMES = flags.DEFINE_multi_string(
    "game", ["python_princess_monster(max_turns=8)", "python_ii_goofspiel(num_cards=6)",
             "python_leduc(max_raises=3,cards_per_suit=30)", "python_latent_ttt"],
    "Games (repeat the flag).")
_CACHE_DIR = flags.DEFINE_string("cache_dir", None, "Directory of the cached trees.")
_MATCHES = flags.DEFINE_integer("matches", 1,
                                "Matches per seat whose subgames are kept.")
_SUBGAMES = flags.DEFINE_integer("subgames", 6,
                                 "Subgames timed per game (distinct sizes).")
_REPEATS = flags.DEFINE_integer("repeats", 5, "Timed iterations per solver (median).")
_SEED = flags.DEFINE_integer("seed", 0,
                             "Seed of chance, the random player and the bot.")


def _subgames(game, tree):
  """The view arguments of every later subgame the bot set up in its matches."""
  kept = []
  make = compiled_resolver.subgame_view

  def keeping(*arguments, **keywords):
    kept.append(arguments[:8])
    return make(*arguments, **keywords)

  compiled_resolver.subgame_view = keeping
  try:
    for match in range(_MATCHES.value):
      for seat in (0, 1):
        seed = 2 * match + seat
        bot = continual_resolving.ContinualResolvingBot(
            game, seat, preplay="1s", move="0.1s", solver="cfr+",
            cache_dir=_CACHE_DIR.value, seed=seed, tree=tree)
        matches.play_against_random(game, seat, bot.step,
                                    np.random.default_rng([_SEED.value, seed]))
  finally:
    compiled_resolver.subgame_view = make
  return kept


def _median_seconds(run):
  run()
  times = []
  for _ in range(_REPEATS.value):
    start = time.perf_counter()
    run()
    times.append(time.perf_counter() - start)
  return statistics.median(times)


def _passes(solver):
  """The iteration's two passes alone (the solver's own tables, both players)."""
  # pylint: disable=protected-access
  def run():
    for player in (0, 1):
      solver._traverse(player, solver._strategy, 1.0, solver._regrets,
                       solver._cumulative)
  return run


def main(argv):
  del argv
  worst = 0.0
  for game_string in _GAMES.value:
    game = pyspiel.load_game(game_string)
    tree = compiled_tree.cached_tree(game, _CACHE_DIR.value)
    compiled_resolver.state_keys(tree, _CACHE_DIR.value)
    kept = _subgames(game, tree)
    whole = cfr.CFRPlusSolver(tree)
    whole_ns = 1e9 * _median_seconds(whole.evaluate_and_update_policy) / (
        2 * tree.num_nodes)
    print(f"{game_string}: whole tree {tree.num_nodes:,} nodes, CFR+ {whole_ns:.2f} "
          f"ns a node and pass; {len(kept)} subgames set up", flush=True)
    sizes = set()
    for arguments in kept:
      try:
        view = in_place_view.SubgameView(*arguments)
      except in_place_view.NestedRoots:
        continue
      solver = view.solver
      nodes = solver.subgame_nodes
      if nodes in sizes:
        continue
      sizes.add(nodes)
      iteration = _median_seconds(solver.evaluate_and_update_policy)
      passes = _median_seconds(_passes(solver))
      ns = 1e9 * iteration / (2 * nodes)
      if nodes >= move_budget.MEASURED_NODES:
        worst = max(worst, ns / whole_ns)
      # pylint: disable-next=protected-access
      ranges, segments = len(solver._down_lo), len(solver._up_lo)
      print(f"  {nodes:,} nodes, {len(arguments[3]):,} roots ({ranges:,} ranges top-"
            f"down, {segments:,} segments bottom-up): {ns:.2f} ns a node and "
            f"pass ({1000 * iteration:.2f} ms an iteration), {ns / whole_ns:.2f} x the "
            f"whole tree's; outside the passes {max(1 - passes / iteration, 0.0):.2f}",
            flush=True)
      if len(sizes) >= _SUBGAMES.value:
        break
  print(f"max in-place/whole ratio: {worst:.2f}")


if __name__ == "__main__":
  app.run(main)
