"""Benchmark (issue: continual resolving on the compiled tree): one resolve's time.

A resolve is what continual resolving does when the bot enters a new subgame ([S]
ch. 2): turn the previous solve's estimates into the gadget's inputs, set the gadget
up as the bot does (compiled_resolver.subgame_view: a copy of a small subgame, else
a view solved in place on the whole game's compiled tree), trace the next subgames
below it, and
run the first --iterations CFR+ iterations collecting the next estimates. The trunk
(the whole game, --trunk_iterations CFR+ iterations with estimates) is solved first
and timed separately, as are the tree's extraction and the state keys (cached under
--cache_dir). Per player, --subgames next subgames of the trunk are drawn (seeded)
among the bot's next turns and resolved; per resolve it prints the roots, the view's
nodes and the time of each part. The last line is `seconds: <median resolve>`.

With --sampling_subgames=N > 0, the first N resolved subgames per player are also
sampled by continual resolving's VR-MCCFR ([S] §3.3.3, the thesis's candidate) for
--sampling_iterations iterations (two episodes each) on both paths, each from fresh
tables with the same seed: compiled (view_sampling on a copying gadget view, and
on the in-place SubgameView: its episodes/s and setup are printed too) and live
(live_solvers.SamplingSolver on the pyspiel gadget); setup (compiled: copy + trace;
live: gadget + trace of live states) is timed apart from the episodes. It prints
episodes/s of both and their ratio, then `sampling ratio: <median compiled / live>`
before the last line.

  python benchmarks/cr_compiled_resolve.py
      [--game=python_leduc(max_raises=3,cards_per_suit=30)] [--cache_dir=DIR]
      [--iterations=100] [--trunk_iterations=2] [--subgames=10] [--seed=0]
      [--sampling_subgames=0] [--sampling_iterations=1000]
"""

import statistics
import time

from absl import app
from absl import flags
import numpy as np
import pyspiel

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.resolving import settings
from ggp_cr.algorithms.resolving.compiled import compiled_resolver
from ggp_cr.algorithms.resolving.compiled import copied_view
from ggp_cr.algorithms.resolving.compiled import in_place_view
from ggp_cr.algorithms.resolving.compiled import next_root_estimates
from ggp_cr.algorithms.resolving.compiled import subgame_layout
from ggp_cr.algorithms.resolving.compiled import view_solvers
from ggp_cr.algorithms.resolving.exact import trunk_inputs
from ggp_cr.algorithms.resolving.gadget import gadget_game
from ggp_cr.algorithms.resolving.live import live_solvers
from ggp_cr.algorithms.resolving.live import live_problem
from ggp_cr.algorithms.resolving.live import live_trace
from ggp_cr.algorithms.resolving.subgames import subgame_trace
from ggp_cr.algorithms.tree import compiled_tree

_GAME = flags.DEFINE_string("game", "python_leduc(max_raises=3,cards_per_suit=30)",
                            "Game string.")
_CACHE_DIR = flags.DEFINE_string("cache_dir", None,
                                 "Directory caching the tree and its state keys.")
_ITERATIONS = flags.DEFINE_integer("iterations", 100, "CFR+ iterations per resolve.")
_TRUNK_ITERATIONS = flags.DEFINE_integer("trunk_iterations", 2,
                                         "CFR+ iterations of the trunk (untimed).")
_SUBGAMES = flags.DEFINE_integer("subgames", 10, "Resolves per player.")
_SEED = flags.DEFINE_integer("seed", 0, "Seed drawing the subgames.")
_SAMPLING_SUBGAMES = flags.DEFINE_integer(
    "sampling_subgames", 0, "Subgames per player also sampled by VR-MCCFR on both "
    "paths (0: none).")
_SAMPLING_ITERATIONS = flags.DEFINE_integer(
    "sampling_iterations", 1000, "VR-MCCFR iterations per path and subgame.")
_CONFIG = settings.ResolverConfig()  # vr_mccfr, the thesis's candidate


def _sample_both(tree, keys, player, trace, estimates, infoset, iterations):
  """Episodes/s of VR-MCCFR on the subgame of `infoset`: (compiled on the copy,
  live, setup seconds of each, (episodes/s, setup seconds) in place or None if its
  roots are nested)."""
  group = trace.group_roots(infoset)
  w, opponent_reach, cbv = estimates.inputs(group)
  roots = trace.next_roots[group]
  runs = []
  for kind in (copied_view.GadgetView, in_place_view.SubgameView):
    start = time.perf_counter()
    try:
      view = kind(tree, keys, player, roots, w, cbv, "resolve", opponent_reach,
                  solver=view_solvers.sampler(_CONFIG, 1))
    except subgame_layout.NestedRoots:
      runs.append(None)
      continue
    built = time.perf_counter() - start
    start = time.perf_counter()
    view.solver.run(iterations)
    runs.append((2 * iterations / (time.perf_counter() - start), built))
  (compiled, copy_setup), in_place = runs
  setup = [copy_setup]
  start = time.perf_counter()
  states = trunk_inputs.node_states(tree, roots)
  subgame = gadget_game.Subgame(tree.game, player, [states[n] for n in roots.tolist()], w,
                            {keys.key_string(k): v for k, v in cbv.items()},
                            opponent_reach=opponent_reach)
  problem = live_problem.Problem(tree.game, player, gadget_game.make_gadget(subgame, "resolve"))
  live = live_solvers.SamplingSolver(problem, live_trace.Trace(problem), _CONFIG, 1)
  setup.append(time.perf_counter() - start)
  start = time.perf_counter()
  live.iterate(iterations)
  return compiled, 2 * iterations / (time.perf_counter() - start), setup, in_place


def _warm_up():
  """Compiles the numba kernels on Kuhn poker, outside the timings."""
  tree = compiled_tree.cached_tree(pyspiel.load_game("kuhn_poker"))
  keys = subgame_trace.StateKeys.build(tree)
  for copy_nodes_limit in (None, 0):  # a copy, and a view in place
    _resolve_once(tree, keys, 0, 2, copy_nodes_limit)


def _warm_up_sampling():
  """Loads the sampling kernels on Kuhn poker, outside the timings."""
  tree = compiled_tree.cached_tree(pyspiel.load_game("kuhn_poker"))
  keys = subgame_trace.StateKeys.build(tree)
  trace, estimates = _solve_trunk(tree, keys, 0, 1)
  _sample_both(tree, keys, 0, trace, estimates, trace.own_infosets[0], 2)


def _solve_trunk(tree, keys, player, iterations):
  view = copied_view.GadgetView(tree, keys, player, [0], [1.0], variant=None)
  trace = view.trace()
  estimates = next_root_estimates.NextRootEstimates(view, trace)
  next_root_estimates.solve_with_estimates(view, estimates, iterations)
  return trace, estimates


def _resolve(tree, keys, player, trace, estimates, infoset, iterations,
             copy_nodes_limit=None):
  """One resolve; returns (roots, view nodes, {part: seconds}, "copied" / "in place")."""
  times = {}
  start = time.perf_counter()
  group = trace.group_roots(infoset)
  w, opponent_reach, cbv = estimates.inputs(group)
  times["inputs"] = time.perf_counter() - start
  start = time.perf_counter()
  nodes = trace.next_roots[group]
  view, how = compiled_resolver.subgame_view(
      tree, keys, player, nodes, w, cbv, "resolve", opponent_reach,
      int(keys.subtree_nodes[nodes].sum()), copy_nodes_limit=copy_nodes_limit)
  times["view"] = time.perf_counter() - start
  start = time.perf_counter()
  next_trace = view.trace()
  times["trace"] = time.perf_counter() - start
  start = time.perf_counter()
  next_estimates = next_root_estimates.NextRootEstimates(view, next_trace)
  next_root_estimates.solve_with_estimates(view, next_estimates, iterations)
  times["cfr+"] = time.perf_counter() - start
  return len(group), view.num_nodes, times, "copied" if how else "in place"


def _resolve_once(tree, keys, player, iterations, copy_nodes_limit=None):
  trace, estimates = _solve_trunk(tree, keys, player, 1)
  reach, _ = estimates.means()
  for infoset in trace.own_infosets.tolist():
    if reach[trace.own_roots(infoset)].sum() > 0:
      return _resolve(tree, keys, player, trace, estimates, infoset, iterations,
                      copy_nodes_limit)
  return None


def main(argv):
  del argv
  game = pyspiel.load_game(_GAME.value)
  start = time.perf_counter()
  tree = compiled_tree.compile_game(game, cache_dir=_CACHE_DIR.value)
  print(f"game: {game}")
  print(f"tree: {tree}, ready in {time.perf_counter() - start:.1f} s (extracted, or "
        "read from --cache_dir)")
  start = time.perf_counter()
  keys = subgame_trace.StateKeys.build(tree, cache_dir=_CACHE_DIR.value)
  print(f"state keys: {len(keys.strings):,} non-acting strings, ready in "
        f"{time.perf_counter() - start:.1f} s")
  _warm_up()
  if _SAMPLING_SUBGAMES.value:
    _warm_up_sampling()
  rng = np.random.default_rng(_SEED.value)
  totals = []
  ratios = []
  for player in (0, 1):
    start = time.perf_counter()
    trace, estimates = _solve_trunk(tree, keys, player, _TRUNK_ITERATIONS.value)
    print(f"player {player}: trunk trace + {_TRUNK_ITERATIONS.value} CFR+ iterations "
          f"in {time.perf_counter() - start:.2f} s; {trace.num_next_roots:,} next "
          f"roots, {len(trace.own_infosets):,} next turns, "
          f"{trace.histories_walked:,} nodes walked")
    reach, _ = estimates.means()
    candidates = [i for i in trace.own_infosets.tolist()
                  if reach[trace.own_roots(i)].sum() > 0]
    chosen = rng.choice(candidates, size=min(_SUBGAMES.value, len(candidates)),
                        replace=False)
    for number, infoset in enumerate(chosen.tolist()):
      roots, nodes, times, kind = _resolve(tree, keys, player, trace, estimates,
                                           infoset, _ITERATIONS.value)
      total = sum(times.values())
      totals.append(total)
      parts = ", ".join(f"{k} {1000 * v:.2f} ms" for k, v in times.items())
      print(f"  resolve {tree.infoset_keys[infoset]!r}: {roots} roots, {nodes:,} view "
            f"nodes ({kind}), {1000 * total:.1f} ms ({parts})")
      if number < _SAMPLING_SUBGAMES.value:
        compiled, live, setup, in_place = _sample_both(
            tree, keys, player, trace, estimates, infoset, _SAMPLING_ITERATIONS.value)
        ratios.append(compiled / live)
        print(f"    vr_mccfr: compiled {compiled:,.0f} episodes/s (copy + trace "
              f"{setup[0]:.2f} s), live {live:,.0f} episodes/s (gadget + trace "
              f"{setup[1]:.2f} s), ratio {compiled / live:.1f}")
        if in_place is not None:
          print(f"    vr_mccfr in place: {in_place[0]:,.0f} episodes/s (view + trace "
                f"{in_place[1]:.3f} s), {in_place[0] / compiled:.2f}x the copy's")
  print(f"resolves: {len(totals)}, median {1000 * statistics.median(totals):.1f} ms, "
        f"max {1000 * max(totals):.1f} ms")
  if ratios:
    print(f"sampling ratio: {statistics.median(ratios):.1f}")
  print(f"seconds: {statistics.median(totals):.6f}")


if __name__ == "__main__":
  app.run(main)
