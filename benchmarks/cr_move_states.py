"""Benchmark (issue 14): does continual resolving search as much in a move as the
scaled Table 5.7 budgets assume?

The scaled budgets (README, "Scaled [S] Table 5.7") divide the thesis's 10 s pre-play
and 30 s a move by one speed ratio: our standalone compiled VR-MCCFR's visited states
a second on the whole game against the thesis's 10^9 per 30 minutes ([S] §5.1). That
assumes continual resolving visits states at the standalone solver's rate during its
moves. This benchmark measures both in one run, on one game:

- the peer: the standalone solver (--peer, a registry solver string) on the whole
  compiled tree, iterating for --move seconds as a timed move does (anytime.spend),
  --runs times after a warm-up; its median visited states a second;
- continual resolving (--player, a registry player string, the tournament's `cr` by
  default) in --matches matches a seat against uniform random, with --preplay and
  --move seconds; each decision's record gives the histories its solver touched
  (`visited_states`) and its budget.

Per decision, share = visited states / (budget seconds * the peer's rate): 1 means the
move searched as much as the budget scaling assumes. Printed: the median share of the
first decisions (pre-play + move) and of the later ones, the median share of the budget
spent iterating (`iterate_seconds`), and the median iterations and visited states a
later decision. Last line `ratio: <float>`, the median share of the later decisions.
Wall clock: quote medians of runs on a quiet machine.

  python benchmarks/cr_move_states.py --cache_dir=results/trees
      [--game="python_ii_goofspiel(num_cards=6)"] [--preplay=1.45] [--move=4.35]
      [--matches=3] [--peer="vr_mccfr(compiled=true)"] [--player=cr]
"""

import statistics
import time

from absl import app
from absl import flags
import pyspiel

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.bots import anytime
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.evaluation import timing
from ggp_cr.algorithms.resolving.compiled import compiled_resolver
from ggp_cr.algorithms.tree import compiled_tree

_GAME = flags.DEFINE_string("game", "python_ii_goofspiel(num_cards=6)", "Game string.")
_CACHE_DIR = flags.DEFINE_string("cache_dir", None,
                                 "Directory of the cached trees and state keys.")
_PREPLAY = flags.DEFINE_float("preplay", 1.45, "Pre-play budget in seconds.",
                              lower_bound=0.0)
_MOVE = flags.DEFINE_float("move", 4.35, "Per-move budget in seconds.", lower_bound=0.01)
_MATCHES = flags.DEFINE_integer("matches", 3, "Matches per seat.", lower_bound=1)
_RUNS = flags.DEFINE_integer("runs", 3, "Timed runs of the peer; the median is used.",
                             lower_bound=1)
_PEER = flags.DEFINE_string("peer", "vr_mccfr(compiled=true)",
                            "The standalone solver whose rate scaled the budgets.")
_PLAYER = flags.DEFINE_string("player", "cr", "The continual resolving player string.")
_SEED = flags.DEFINE_integer("seed", 0, "Seed of chance, the players and the peer.")


def _peer_rate(tree):
  """The peer's median visited states a second over --runs timed moves."""
  spec = registry.parse_solver(_PEER.value)
  target = tree if spec.solver_type.accepts_tree else pyspiel.load_game(tree.game_string)
  registry.make_solver(spec, target).iterate(1)  # loads the numba kernels; not timed
  rates = []
  for run in range(_RUNS.value):
    solver = registry.make_solver(spec, target)
    start = time.perf_counter()
    anytime.spend(limits.Limit(seconds=_MOVE.value), start, solver.iterate,
                  batch_share=getattr(solver, "batch_share", None))
    elapsed = time.perf_counter() - start
    rates.append(solver.visited_states / elapsed)
    print(f"  peer run {run + 1}: {solver.visited_states:,} visited states in "
          f"{solver.iterations:,} iterations, {elapsed:.3f} s", flush=True)
  return statistics.median(rates)


def _share(record, rate):
  """A decision's visited states over what its budget buys at the peer's `rate`."""
  return record["visited_states"] / (record["budget_seconds"] * rate)


def main(argv):
  del argv
  registry.parse_player(_PLAYER.value)  # a bad string fails before the tree loads
  game = pyspiel.load_game(_GAME.value)
  start = time.perf_counter()
  tree = compiled_tree.cached_tree(game, _CACHE_DIR.value)
  compiled_resolver.state_keys(tree, _CACHE_DIR.value)
  print(f"{game}: {tree.num_nodes:,} nodes; tree and state keys ready in "
        f"{time.perf_counter() - start:.1f} s", flush=True)
  rate = _peer_rate(tree)
  print(f"peer {_PEER.value}: {rate:,.0f} visited states a second (median)", flush=True)
  budget = limits.Budget.parse(f"{_PREPLAY.value}s", f"{_MOVE.value}s")
  first, later = [], []
  for match in range(_MATCHES.value):
    for seat in (0, 1):
      seed = _SEED.value + 2 * match + seat
      bots = [registry.make_bot("random", game, player, seed) for player in (0, 1)]
      bots[seat] = registry.make_bot(_PLAYER.value, game, seat, seed, budget)
      if not hasattr(bots[seat], "decisions"):
        raise SystemExit(f"--player={_PLAYER.value} keeps no decision records: give "
                         "a continual resolving player (cr or cr(...)).")
      timing.budget_ratios(game, bots, seed, _PREPLAY.value, _MOVE.value)
      records = bots[seat].decisions
      first += records[:1]
      later += records[1:]
      print(f"  match {match + 1} seat {seat}: {len(records)} decisions, shares "
            + " ".join(f"{_share(r, rate):.2f}" for r in records), flush=True)
  if not later:
    raise SystemExit(f"{_PLAYER.value} made no decision after its first: nothing to "
                     "compare with the peer's rate.")

  def share(records):
    return statistics.median(_share(r, rate) for r in records)

  iterating = statistics.median(r["iterate_seconds"] / r["budget_seconds"] for r in later)
  print(f"{_PLAYER.value} on {_GAME.value}, {_PREPLAY.value} s / {_MOVE.value} s: "
        f"median share of the peer's visited states: first decisions {share(first):.3f}, "
        f"later {share(later):.3f}; later decisions iterate {iterating:.3f} of the move, "
        f"median {statistics.median(r['iterations'] for r in later):,.0f} iterations and "
        f"{statistics.median(r['visited_states'] for r in later):,.0f} visited states")
  print(f"ratio: {share(later):.3f}")


if __name__ == "__main__":
  app.run(main)
