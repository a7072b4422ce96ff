"""How large a compiled tree this process may build: a limit set by memory, and a safe
size estimate that refuses a far larger tree before anything is allocated.

Issue 44, items 1-2 (spec README.md, architecture principle 2). The limit is a share
(`memory_share`, default 0.4; the scripts' --tree_memory_share flag or the
GGP_CR_TREE_MEMORY_SHARE environment variable set it) of the memory available now,
divided by the peak bytes one history costs while its route extracts it:
NATIVE_BYTES_PER_HISTORY (the 35 bytes of flat_tree's node arrays, the infoset
arrays, keys and the extractor's work arrays) or GENERIC_BYTES_PER_HISTORY (the live
walk's Python buffers and dicts, then their breadth-first copies). The rest of the
memory is left to what runs on the tree: CFR+ with its best-response evaluations adds
about 90 bytes a history (python_ii_goofspiel(6), examples/solve).

Exact sizes come from the extractions' own counts, which stop at the limit. The size
is estimated by Knuth's random-path estimator (`estimated_histories`, unbiased): before
anything is counted, a tree whose mean over SIGHT_PATHS paths exceeds SIGHT_FACTOR
times the limit is refused (`refuse_at_sight`; a tree within the limit is refused so
with probability below 1/SIGHT_FACTOR, Markov's inequality); past CHECK_AFTER counted
histories, one whose median of group means exceeds REFUSE_FACTOR times the limit is
(`refuse_if_far_larger`; probability below 0.6^groups, Markov per group). The others
are counted exactly, up to the limit.
"""

import os
import sys
import time

import numpy as np

# Peak resident bytes per history while extracting, measured on python_ii_goofspiel(6)
# (52 native, 112 generic), python_ii_goofspiel(7) (43 native: 4.2 GB for 98 M) and
# python_leduc(cards_per_suit=20) (69 native), with room for longer keys.
NATIVE_BYTES_PER_HISTORY = 80
GENERIC_BYTES_PER_HISTORY = 250
MEMORY_SHARE = 0.4
MEMORY_SHARE_VARIABLE = "GGP_CR_TREE_MEMORY_SHARE"
CHECK_AFTER = 1_000_000  # exact counts below this cost a fraction of a second
REFUSE_FACTOR = 10
ESTIMATE_GROUPS = 15
ESTIMATE_PATHS_PER_GROUP = 16
SIGHT_PATHS = 16
SIGHT_FACTOR = 1000
# Seconds one history costs its route's extraction, measured on this project's 2-core
# machine (docs/benchmarks.md, bars 8-9): native python_ii_goofspiel(6) 0.52 us,
# (7) 0.42 us; the generic walk of a Python game, python_ii_goofspiel(6) 11.8 us,
# python_latent_ttt 9.8 us, of a C++ game, liars_dice 2.4 us (9.2 us under load 6),
# leduc_poker 3.2 us; rounded up. A timed extraction (`within_seconds`) is
# predicted from a quick estimate of the size (BUDGET_GROUPS x BUDGET_PATHS paths)
# and capped at the histories its seconds pay for.
NATIVE_SECONDS_PER_HISTORY = 0.6e-6
GENERIC_SECONDS_PER_HISTORY = 12e-6
CPP_GENERIC_SECONDS_PER_HISTORY = 6e-6
BUDGET_GROUPS = 5
BUDGET_PATHS = 8


class TreeTooLarge(ValueError):
  """The game has more histories than the extraction's limit."""


_share = None  # set by set_memory_share (the scripts' flag)


def check_memory_share(share):
  """Raises ValueError unless `share` is a number in (0, 1]."""
  if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 1:
    raise ValueError(f"the tree memory share must be a number in (0, 1]; got {share!r}.")


def set_memory_share(share):
  """Sets this process's default share of available memory a tree may take (None: the
  environment variable's, else MEMORY_SHARE)."""
  global _share  # pylint: disable=global-statement
  if share is not None:
    check_memory_share(share)
  _share = share


def memory_share():
  """The share set by set_memory_share, else GGP_CR_TREE_MEMORY_SHARE, else
  MEMORY_SHARE."""
  if _share is not None:
    return _share
  text = os.environ.get(MEMORY_SHARE_VARIABLE)
  if text is None:
    return MEMORY_SHARE
  try:
    share = float(text)
  except ValueError:
    share = text
  check_memory_share(share)
  return share


def available_memory():
  """Bytes of memory available to this process now (MemAvailable of /proc/meminfo,
  else free physical pages)."""
  try:
    with open("/proc/meminfo", encoding="ascii") as meminfo:
      for line in meminfo:
        if line.startswith("MemAvailable:"):
          return int(line.split()[1]) * 1024
  except OSError:
    pass
  return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def nodes_limit(native, share=None, memory=None):
  """The most histories a tree may have to be extracted by its route (`native`: a
  native extractor, else the generic walk): `share` (default memory_share()) of
  `memory` bytes (default available_memory()) over the route's bytes per history."""
  share = memory_share() if share is None else share
  check_memory_share(share)
  memory = available_memory() if memory is None else memory
  per_history = NATIVE_BYTES_PER_HISTORY if native else GENERIC_BYTES_PER_HISTORY
  return int(share * memory // per_history)


def too_large(game_string, size, limit, estimated=False):
  """The TreeTooLarge of a tree of `size` histories (or more) past `limit`."""
  what = (f"about {size:,.0f} histories (estimated from random paths)" if estimated
          else f"more than {limit:,} histories")
  return TreeTooLarge(f"{game_string} has {what}; the compiled-tree limit is "
                      f"{limit:,} histories.")


def memory_hint(share=None):
  """Where a memory-set limit comes from, for error messages."""
  share = memory_share() if share is None else share
  return (f"(the limit is {share:g} of available memory; --tree_memory_share or "
          f"{MEMORY_SHARE_VARIABLE} sets the share)")


def estimated_histories(game, seed=0, groups=ESTIMATE_GROUPS,
                        paths=ESTIMATE_PATHS_PER_GROUP):
  """Knuth's estimate of the number of histories of `game`: along a uniformly random
  root-to-terminal path, 1 + b0 + b0 b1 + ... (b the numbers of children) has the
  tree's size as its mean; returns the median of `groups` means of `paths` paths."""
  rng = np.random.default_rng(seed)
  means = []
  for _ in range(groups):
    total = 0.0
    for _ in range(paths):
      state, width, size = game.new_initial_state(), 1.0, 1.0
      while not state.is_terminal():
        actions = ([a for a, _ in state.chance_outcomes()] if state.is_chance_node()
                   else state.legal_actions())
        width *= len(actions)
        size += width
        state.apply_action(actions[rng.integers(len(actions))])
      total += size
    means.append(total / paths)
  return float(np.median(means))


def refuse_at_sight(game, limit):
  """Raises TreeTooLarge if the mean of SIGHT_PATHS random-path estimates of `game`'s
  size exceeds SIGHT_FACTOR * `limit` (a tree within the limit is refused so with
  probability below 1 / SIGHT_FACTOR): a game far too large is refused in
  milliseconds, before any count."""
  estimate = estimated_histories(game, groups=1, paths=SIGHT_PATHS)
  if estimate > SIGHT_FACTOR * limit:
    raise too_large(str(game), estimate, limit, estimated=True)


def refuse_if_far_larger(game, limit):
  """Raises TreeTooLarge if `game`'s estimated size exceeds REFUSE_FACTOR * `limit`;
  prints the estimate (and that the extraction goes on) on stderr."""
  estimate = estimated_histories(game)
  if estimate > REFUSE_FACTOR * limit:
    raise too_large(str(game), estimate, limit, estimated=True)
  print(f"  {game}: about {estimate:,.0f} histories (estimated), limit {limit:,}; "
        "extracting...", file=sys.stderr, flush=True)


def seconds_per_history(native, extra=0.0, cpp=False):
  """Seconds one history costs its route's extraction (`native`, else the generic
  walk of a C++ game if `cpp`, else of a Python game) plus `extra` (what the caller
  builds per history after it, e.g. state keys)."""
  if native:
    route = NATIVE_SECONDS_PER_HISTORY
  else:
    route = CPP_GENERIC_SECONDS_PER_HISTORY if cpp else GENERIC_SECONDS_PER_HISTORY
  return route + extra


def _amount(value, decimals=1):
  """`value` with thousands separators, or in scientific notation past 10^9."""
  return f"{value:,.{decimals}f}" if value < 1e9 else f"{value:.2e}"


def within_seconds(game, seconds, per_history):
  """(the most histories an extraction of `game` costing `per_history` seconds each
  may have to end within `seconds`, None) or (0, why not): the game's quick size
  estimate (estimated_histories, BUDGET_GROUPS x BUDGET_PATHS random paths) already
  costs more than `seconds`."""
  if seconds < 0:
    raise ValueError(f"seconds must be >= 0; got {seconds!r}.")
  affordable = int(seconds / per_history)
  estimate = estimated_histories(game, groups=BUDGET_GROUPS, paths=BUDGET_PATHS)
  if estimate > affordable:
    return 0, (f"its extraction would take about {_amount(estimate * per_history)} s "
               f"({_amount(estimate, 0)} histories estimated x {per_history * 1e6:.2g} us), "
               f"more than the {seconds:.3g} s it may take of the pre-play")
  return affordable, None


def checked_count(game, count, limit):
  """The number of histories of `game` from `count(cap)` (an exact count that stops
  once it passes `cap`), refusing past `limit` (None: no limit): first counted up to
  CHECK_AFTER, then estimated, then counted up to `limit`."""
  if limit is None:
    return count(np.iinfo(np.int64).max)
  first_cap = min(limit, CHECK_AFTER)
  num_nodes = count(first_cap)
  if num_nodes > first_cap:
    if num_nodes > limit:
      raise too_large(str(game), num_nodes, limit)
    refuse_if_far_larger(game, limit)
    start = time.time()
    num_nodes = count(limit)
    if num_nodes > limit:
      raise too_large(str(game), num_nodes, limit)
    print(f"  counted {num_nodes:,} histories in {time.time() - start:.1f} s; "
          "building the tree...", file=sys.stderr, flush=True)
  return num_nodes

