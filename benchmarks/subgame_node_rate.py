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
segments its passes walk (subgame_layout._ranges), and the share of the iteration
outside the two passes' kernels (gadget gates, regret matching, Python); then the
same subgame with its walk packed (packed_walk.PackedWalk): the packing's time, its
iteration's ns per node and pass, its ratio to the whole tree's, the in-place over
packed speed-up (the median of --repeats pairs of iterations timed one after the
other), and which layout SubgameCFRPlus chooses (`should_pack`). Medians
of --repeats timed iterations after one untimed (packing: of --repeats packings);
the last lines are `max in-place/whole ratio: <float>`, `min packed speed-up
(subgames chosen packed): <float>` and `max chosen/whole ratio: <float>` (the
layout chosen) over subgames of at least move_budget.MEASURED_NODES
nodes (move_budget.VIEW_SLOWDOWN's measurement). Wall clock: quote the load.

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
from ggp_cr.algorithms.resolving.compiled import subgame_cfr
from ggp_cr.algorithms.resolving.compiled import subgame_layout
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


def _paired_ratio(run, other):
  """The median over --repeats pairs of run()'s time over other()'s, timed one
  after the other (after one untimed each): the machine's load changes less
  within a pair than between two series."""
  run()
  other()
  ratios = []
  for _ in range(_REPEATS.value):
    start = time.perf_counter()
    run()
    middle = time.perf_counter()
    other()
    ratios.append((middle - start) / (time.perf_counter() - middle))
  return statistics.median(ratios)


def _passes(solver):
  """The iteration's two passes alone (the solver's own tables, both players)."""
  # pylint: disable=protected-access
  def run():
    for player in (0, 1):
      solver._traverse(player, solver._strategy, 1.0, solver._regrets,
                       solver._cumulative)
  return run


def _packed(arguments):
  """(the view with its walk packed, the median seconds of packing it)."""
  made = [None]

  def packing():
    made[0] = None  # its memory freed, as a bot frees its last subgame's
    made[0] = in_place_view.SubgameView(
        *arguments, solver=lambda v: subgame_cfr.SubgameCFRPlus(v, pack=False))
    start = time.perf_counter()
    made[0].solver._pack()  # pylint: disable=protected-access
    return time.perf_counter() - start

  seconds = statistics.median(packing() for _ in range(_REPEATS.value))
  return made[0], seconds


def main(argv):
  del argv
  worst = chosen_worst = 0.0
  speedups = []  # paired in-place / packed of the subgames chosen packed
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
        view = in_place_view.SubgameView(
            *arguments, solver=lambda v: subgame_cfr.SubgameCFRPlus(v, pack=False))
      except subgame_layout.NestedRoots:
        continue
      solver = view.solver
      nodes = solver.subgame_nodes
      if nodes in sizes:
        continue
      sizes.add(nodes)
      iteration = _median_seconds(solver.evaluate_and_update_policy)
      passes = _median_seconds(_passes(solver))
      ns = 1e9 * iteration / (2 * nodes)
      packed, packing = _packed(arguments)
      packed_ns = 1e9 * _median_seconds(packed.solver.evaluate_and_update_policy) / (
          2 * nodes)
      speedup = _paired_ratio(solver.evaluate_and_update_policy,
                              packed.solver.evaluate_and_update_policy)
      chosen_ns = packed_ns if solver.should_pack() else ns
      if solver.should_pack():
        speedups.append(speedup)
      if nodes >= move_budget.MEASURED_NODES:
        worst = max(worst, ns / whole_ns)
        chosen_worst = max(chosen_worst, chosen_ns / whole_ns)
      # pylint: disable-next=protected-access
      ranges, segments = len(solver._down_lo), len(solver._up_lo)
      print(f"  {nodes:,} nodes, {len(arguments[3]):,} roots ({ranges:,} ranges top-"
            f"down, {segments:,} segments bottom-up): {ns:.2f} ns a node and "
            f"pass ({1000 * iteration:.2f} ms an iteration), {ns / whole_ns:.2f} x the "
            f"whole tree's; outside the passes {max(1 - passes / iteration, 0.0):.2f}",
            flush=True)
      print(f"    packed ({solver.nodes_per_range:,.0f} nodes a range; packing "
            f"{1000 * packing:.2f} ms, {1e9 * packing / nodes:.1f} ns a node): "
            f"{packed_ns:.2f} ns a node and pass, {packed_ns / whole_ns:.2f} x the "
            f"whole tree's, in place / packed {speedup:.2f} (paired); chosen: "
            f"{'packed' if solver.should_pack() else 'in place'}", flush=True)
      if len(sizes) >= _SUBGAMES.value:
        break
  print(f"max in-place/whole ratio: {worst:.2f}")
  print(f"min packed speed-up (subgames chosen packed): "
        f"{min(speedups) if speedups else float('nan'):.2f}")
  print(f"max chosen/whole ratio: {chosen_worst:.2f}")


if __name__ == "__main__":
  app.run(main)
