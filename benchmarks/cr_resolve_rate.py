"""Benchmark (issue: continual resolving on the compiled tree): does the bot resolve
every subgame it enters within its move budget?

Per game, the whole game's tree and its state keys are read from --cache_dir (or
extracted into it; timed separately, outside the matches), then continual resolving
(--solver, the compiled path when the tree fits: the record says which) plays
--matches matches in each seat against a uniform random player, with --preplay
seconds at its first decision and --move seconds a move. Per game it prints: the
share of the bot's later decisions that entered a new subgame and resolved it (built
its gadget and ran at least one iteration on it, in the decision or, built ahead at
the end of the bot's previous decision, in that one: move_budget.SubgameBudget.
build_ahead; which
decisions enter one is decided by the reference subgame structure, subgame_trace'
trace along the match's history, whatever the bot's path saw: a live trace cut short
hides entries; after a subgame the bot did not resolve, the compiled bot traces
below it and can resolve the next one), the median and max resolve time (the
decision's setup: gadget inputs, gadget and trace; for a subgame built ahead, plus
the build and the iterations ahead in the decision before), and the max decision time /
budget (pre-play counts at the first decision). Per game, `iterations before acting (median)`
and the first decision's iterations (pre-play and its move, on the whole game);
the third-to-last line is `min median iterations: <int>`, the smallest of those
medians over the games (issue 45's bar >= 8 at 0.1 s a move), the second-to-last
`max time/budget: <float>` (bar < 1.05), the last `resolved: <float>`, the smallest
share over the games (bar >= 0.95). Timings are wall clock: quote medians of a quiet
machine.

  python benchmarks/cr_resolve_rate.py --cache_dir=DIR [--game=...] [--matches=5]
      [--preplay=1] [--move=0.1] [--solver=cfr+]
"""

import collections
import statistics
import time

from absl import app
from absl import flags
import numpy as np
import pyspiel

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.evaluation import matches
from ggp_cr.algorithms.evaluation import timing
from ggp_cr.algorithms.resolving import continual_resolving
from ggp_cr.algorithms.resolving.compiled import compiled_resolver
from ggp_cr.algorithms.resolving.subgames import subgame_trace
from ggp_cr.algorithms.tree import compiled_tree

_GAMES = flags.DEFINE_multi_string(
    "game", ["python_leduc(max_raises=3,cards_per_suit=30)",
             "python_ii_goofspiel(num_cards=6)", "python_princess_monster(max_turns=8)",
             "python_latent_ttt"], "Games (repeat the flag).")
_CACHE_DIR = flags.DEFINE_string("cache_dir", None,
                                 "Directory of the cached trees and state keys.")
_SOLVER = flags.DEFINE_string("solver", "cfr+", "The bot's subgame solver.")
_PREPLAY = flags.DEFINE_float("preplay", 1.0, "Pre-play budget in seconds.")
_MOVE = flags.DEFINE_float("move", 0.1, "Per-move budget in seconds.")
_MATCHES = flags.DEFINE_integer("matches", 5, "Matches per seat and game.")
_SEED = flags.DEFINE_integer("seed", 0,
                             "Seed of chance, the random player and the bot.")


def _match(game, seat, seed):
  """One match of the bot in `seat` against uniform random: (decision seconds /
  budget, the bot's records, whether each decision entered a new subgame). The
  garbage of earlier matches is collected first, as matches.play does in a
  tournament (timing.budget_ratios)."""
  matches.collect_between_matches()
  tree = compiled_tree.cached_tree(game)
  keys = compiled_resolver.state_keys(tree)
  trace = None
  entered = []
  bot = continual_resolving.ContinualResolvingBot(
      game, seat, preplay=f"{_PREPLAY.value}s", move=f"{_MOVE.value}s",
      solver=_SOLVER.value, cache_dir=_CACHE_DIR.value, seed=seed, tree=tree)
  ratios = []
  timed_step = timing.timed_decisions(bot.step, _PREPLAY.value, _MOVE.value, ratios)

  def decide(state):
    nonlocal trace
    infoset = tree.infoset_index(seat, state.information_state_string(seat))
    entered.append(trace is not None and infoset in trace)
    if trace is None or entered[-1]:
      roots = [0] if trace is None else trace.next_roots[trace.group_roots(infoset)]
      trace = subgame_trace.trace_subgames(tree, keys, seat, roots)
    return timed_step(state)

  matches.play_against_random(game, seat, decide,
                              np.random.default_rng([_SEED.value, seed]))
  return ratios, bot.decisions, entered


def _prepare(game):
  """Reads or extracts the tree and its state keys, then prepares the process for
  the game's bots (timed, outside the matches): one bot built on the tree faults in
  the heap its decisions reuse (compiled_path.CompiledPath.warm_up, once per
  process: 340 MiB for PAM{8}, 1.9 s at load 6, which the first match's pre-play
  paid, leaving seat 0 no pre-play iteration) and the tree's derived arrays."""
  start = time.perf_counter()
  tree = compiled_tree.cached_tree(game, _CACHE_DIR.value)
  middle = time.perf_counter()
  compiled_resolver.state_keys(tree, _CACHE_DIR.value)
  keys_ready = time.perf_counter()
  continual_resolving.ContinualResolvingBot(
      game, 0, preplay="1it", move="1it", solver=_SOLVER.value,
      cache_dir=_CACHE_DIR.value, seed=0, tree=tree)
  print(f"{game}: {tree.num_nodes:,} nodes; tree ready in {middle - start:.1f} s, "
        f"state keys in {keys_ready - middle:.1f} s (extracted, or read from "
        f"--cache_dir), process prepared in {time.perf_counter() - keys_ready:.1f} s",
        flush=True)


def main(argv):
  del argv
  continual_resolving.warm_up_process()  # kernels loaded before any clock
  worst, smallest, fewest = 0.0, 1.0, None
  for game_string in _GAMES.value:
    game = pyspiel.load_game(game_string)
    _prepare(game)
    ratios, later, entered, decisions, firsts = [], [], [], [], []
    path = None
    for match in range(_MATCHES.value):
      for seat in (0, 1):
        match_ratios, records, match_entered = _match(game, seat, 2 * match + seat)
        ratios += match_ratios
        decisions += records
        later += records[1:]
        firsts += [records] if records else []
        entered += [r for r, new in zip(records[1:], match_entered[1:]) if new]
        if records:
          path = records[0]["path"], records[0]["path_reason"]
    # Resolved: a new subgame was built and solved (at least one iteration on it,
    # in this decision or, built ahead, in the previous one).
    resolved = [r for r in entered if r["new_subgame"] and
                r["iterations"] + r.get("iterations_ahead", 0) > 0]
    ahead = sum("iterations_ahead" in r for r in resolved)
    reasons = collections.Counter(
        r.get("fallback", "the bot's own trace saw no new subgame" if not
              r["new_subgame"] else "built, no iteration ran")[:100] for r in entered
        if r not in resolved)
    share = len(resolved) / len(entered) if entered else 1.0
    times = [r["setup_seconds"] + r.get("built_ahead_seconds", 0.0)
             for r in resolved] or [float("nan")]
    worst = max(worst, max(ratios))
    smallest = min(smallest, share)
    print(f"{game_string} cr({_SOLVER.value}, {path[0]} path: {path[1]}): "
          f"{len(later)} later decisions, {len(entered)} entered a new subgame, "
          f"{len(resolved)} resolved it (share {share:.3f}); resolve median "
          f"{1000 * statistics.median(times):.1f} ms, max {1000 * max(times):.1f} ms; "
          f"time/budget max {max(ratios):.3f}, median {statistics.median(ratios):.3f}",
          flush=True)
    before = [r["iterations"] + r.get("iterations_ahead", 0) for r in resolved]
    if resolved:
      sizes = [r["subgame_nodes"] for r in resolved]
      iterations = [r["iterations"] for r in resolved]
      print(f"  resolved subgames: median {statistics.median(sizes):,.0f} nodes (max "
            f"{max(sizes):,}), median {statistics.median(iterations):g} {_SOLVER.value} "
            f"iterations in the decision (min {min(iterations)}); {ahead} built "
            "ahead in the decision before")
      # One CFR+ iteration from zero regrets leaves a uniform average strategy.
      print(f"  share acted on after one iteration (built ahead + in the decision): "
            f"{sum(b == 1 for b in before) / len(before):.3f}")
    # A game whose matches entered no new subgame has no median to count.
    if entered:
      acted_after = int(statistics.median(before)) if before else 0
      fewest = acted_after if fewest is None else min(fewest, acted_after)
      print(f"  iterations before acting (median): {acted_after}")
    # The first decision's iterations (pre-play and its move: the whole game).
    first = [records[0]["iterations"] for records in firsts]
    print(f"  iterations at the first decision (median): "
          f"{statistics.median(first):g}")
    for reason, count in reasons.most_common():
      print(f"  not resolved ({count}): {reason}")
    slowest = dict(max(zip(ratios, decisions), key=lambda pair: pair[0])[1])
    if "built_ahead" in slowest:  # what the end of the move built
      slowest["built_ahead"] = ", ".join(
          f"{b['roots']:,} roots {b['seconds']:.4g} s" for b in slowest["built_ahead"])
    print("  slowest decision: " + ", ".join(
        f"{k} {slowest[k]:.4g}" if isinstance(slowest[k], float) else f"{k} {slowest[k]}"
        for k in ("setup_seconds", "iterate_seconds", "seconds", "iterations",
                  "subgame_nodes", "roots", "ahead_reserve_seconds", "built_ahead",
                  "fallback")
        if k in slowest))
  print(f"min median iterations: {fewest if fewest is not None else 'none entered'}")
  print(f"max time/budget: {worst:.3f}")
  print(f"resolved: {smallest:.3f}")


if __name__ == "__main__":
  app.run(main)
