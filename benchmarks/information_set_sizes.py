"""Benchmark (issue 44): how many histories the bot's information set holds at each
decision of python_ii_goofspiel, and what share of decisions an exact resolve could
afford at a given cost a root.

Continual resolving past the compiled tree's limit resolves a gadget over the histories
of the bot's information set (knowledge-limited, docs/algorithms/resolving.md, "Games
too large to compile"). Here random matches (both players bid uniformly) are played
and, at each decision of either seat, the histories of the mover's information set are
counted exactly: the opponent's bid sequences consistent with the mover's own bids and
the results it saw (and, for the second bidder, the opponent's pending bid). A count by
subsets of cards used, not an enumeration, so python_ii_goofspiel(num_cards=13)'s
late information sets (10^6-10^8 histories) take milliseconds; the count equals
pyspiel's grouping by `information_state_string` (tests/test_information_set_sizes.py).

Per decision: the median, 90th percentile and largest count. The last line,
`exact share bound: <float>`, is the share of all decisions whose information set
holds at most `--move / --seconds_per_root` histories: an upper bound on the share of
decisions resolved exactly by any resolver paying that much a root (the solve
itself not counted).

  PYTHONPATH=. python benchmarks/information_set_sizes.py [--num_cards=13]
      [--matches=200] [--move=0.2] [--seconds_per_root=4e-6] [--seed=0]
"""

import functools
import statistics

from absl import app
from absl import flags
import numpy as np

_MAX_CARDS = 20  # the count's memo is indexed by subsets of the cards
_NUM_CARDS = flags.DEFINE_integer("num_cards", 13, "Cards of python_ii_goofspiel.",
                                  lower_bound=1, upper_bound=_MAX_CARDS)
_MATCHES = flags.DEFINE_integer("matches", 200, "Random matches.", lower_bound=1)
_MOVE = flags.DEFINE_float("move", 0.2, "Seconds a move.", lower_bound=0.0)
_SECONDS_PER_ROOT = flags.DEFINE_float(
    "seconds_per_root", 4e-6, "Seconds an exact resolve pays a root of its gadget.",
    lower_bound=1e-12)
_SEED = flags.DEFINE_integer("seed", 0, "Seed of the matches.", lower_bound=0)


def result(own, other):
  """+1, 0 or -1: the turn's result for the player who bid `own` against `other`."""
  return (own > other) - (own < other)


def information_set_size(num_cards, own_bids, results, pending):
  """Histories of python_ii_goofspiel(num_cards) (prizes in a fixed order) in the
  information set of a player who bid `own_bids` (card indices) with `results` (its
  results, +1/0/-1) and now bids; `pending`: the opponent has already bid this turn
  (the second bidder), unseen."""
  if len(own_bids) != len(results):
    raise ValueError(f"one result per own bid: {len(own_bids)} bids, "
                     f"{len(results)} results")
  if not 0 < num_cards <= _MAX_CARDS:
    raise ValueError(f"num_cards in 1..{_MAX_CARDS}, got {num_cards}")
  turns = len(own_bids)

  @functools.lru_cache(maxsize=None)
  def count(turn, used):
    if turn == turns:
      return num_cards - turn if pending else 1
    return sum(count(turn + 1, used | 1 << card) for card in range(num_cards)
               if not used >> card & 1
               and result(own_bids[turn], card) == results[turn])

  return count(0, 0)


def decision_sizes(num_cards, bids0, bids1):
  """Per turn, the sizes of player 0's and player 1's information sets at their bids,
  along the match where they bid `bids0` and `bids1`."""
  sizes = []
  for turn in range(num_cards):
    results0 = tuple(result(a, b) for a, b in zip(bids0[:turn], bids1[:turn]))
    results1 = tuple(-r for r in results0)
    sizes.append((information_set_size(num_cards, tuple(bids0[:turn]), results0, False),
                  information_set_size(num_cards, tuple(bids1[:turn]), results1, True)))
  return sizes


def main(argv):
  del argv
  num_cards = _NUM_CARDS.value
  rng = np.random.default_rng(_SEED.value)
  per_turn = [[] for _ in range(num_cards)]
  for _ in range(_MATCHES.value):
    bids0 = [int(card) for card in rng.permutation(num_cards)]
    bids1 = [int(card) for card in rng.permutation(num_cards)]
    for turn, sizes in enumerate(decision_sizes(num_cards, bids0, bids1)):
      per_turn[turn].extend(sizes)
  affordable = _MOVE.value / _SECONDS_PER_ROOT.value
  print(f"python_ii_goofspiel(num_cards={num_cards}), {_MATCHES.value} random matches, "
        f"both seats; an exact resolve at {_SECONDS_PER_ROOT.value:g} s a root affords "
        f"{affordable:,.0f} roots in {_MOVE.value:g} s")
  print("turn  median  p90  largest  share affordable")
  fits = 0
  for turn, sizes in enumerate(per_turn):
    sizes = sorted(sizes)
    affordable_here = sum(size <= affordable for size in sizes)
    fits += affordable_here
    print(f"{turn + 1:4d}  {statistics.median(sizes):,.0f}  "
          f"{sizes[int(0.9 * (len(sizes) - 1))]:,}  {sizes[-1]:,}  "
          f"{affordable_here / len(sizes):.2f}", flush=True)
  print(f"exact share bound: {fits / sum(len(sizes) for sizes in per_turn):.3f}")


if __name__ == "__main__":
  app.run(main)
