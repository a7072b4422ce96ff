"""Extracting a game's compiled tree (flat_tree.py), and caching it on disk and in memory.

Spec README.md, architecture principle 2: the tree of a sequential two-player zero-sum
perfect-recall pyspiel game is extracted once (`compile_game`), optionally cached in a
directory keyed by the game string and the code defining the game's rules, and kept
per process (`cached_tree`).
"""

import collections
import hashlib
import importlib.metadata
import inspect
import os
import re
import sys
import time
import warnings

import numpy as np
import pyspiel

from ggp_cr.algorithms.files import output_paths
from ggp_cr.algorithms.tree import cache_validation
from ggp_cr.algorithms.tree import flat_tree
from ggp_cr.algorithms.tree import generic_extraction
from ggp_cr.algorithms.tree import tree_limits

def check_game(game):
  """Raises ValueError unless `game` is two-player, sequential, zero-sum (or
  constant-sum), with explicit chance and information state strings: what compile_game,
  the sampling solvers and continual resolving need besides perfect recall."""
  game_type = game.get_type()
  if game.num_players() != 2:
    raise ValueError(f"{game} has {game.num_players()} players; only two-player games "
                     "are supported.")
  if game_type.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
    raise ValueError(f"{game} is not sequential ({game_type.dynamics}); convert it "
                     "with pyspiel.load_game_as_turn_based.")
  if game_type.utility not in (pyspiel.GameType.Utility.ZERO_SUM,
                               pyspiel.GameType.Utility.CONSTANT_SUM):
    raise ValueError(f"{game} is not zero-sum or constant-sum ({game_type.utility}); "
                     "only those games are supported.")
  if game_type.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
    raise ValueError(f"{game} has sampled chance; explicit chance outcomes are needed.")
  if not game_type.provides_information_state_string:
    raise ValueError(f"{game} does not provide information state strings.")


def tree_differences(tree, other):
  """Names of the fields (arrays with their dtypes, keys, game-level values) in which
  two CompiledTrees differ; empty if they are equal bit for bit."""
  names = [name for name in flat_tree.ARRAY_FIELDS
           if getattr(tree, name).dtype != getattr(other, name).dtype or
           not np.array_equal(getattr(tree, name), getattr(other, name))]
  return names + [name for name in ("infoset_keys", "game_string", "utility_sum",
                                    "num_distinct_actions")
                  if getattr(tree, name) != getattr(other, name)]


def is_cpp_game(game):
  """Whether `game` is one of OpenSpiel's C++ games (not a Python game)."""
  return type(game).__module__ in ("pyspiel", "builtins")


def _implementation_fingerprint(game):
  """What identifies the code that defines `game`'s rules.

  For a Python game, the bytes of the module defining its class, so that a cached tree
  is not reused after the game's rules change; for a C++ game, OpenSpiel's version.
  """
  game_class = type(game)
  if is_cpp_game(game):
    return f"open_spiel {importlib.metadata.version('open_spiel')}".encode("utf-8")
  with open(inspect.getsourcefile(game_class), "rb") as source:
    return source.read()


def _cache_path(cache_dir, game):
  game_string = str(game)
  readable = re.sub(r"[^A-Za-z0-9_.=,-]+", "_", game_string)[:80]
  digest = hashlib.sha1(game_string.encode("utf-8"))
  digest.update(_implementation_fingerprint(game))
  return os.path.join(cache_dir, f"{readable}-{digest.hexdigest()[:16]}.npz")


TreeTooLarge = tree_limits.TreeTooLarge


def compile_game(game, cache_dir=None, progress=False, workers=1, max_nodes=None,
                 route="auto", memory_share=None):
  """Extracts the tree of `game` (a pyspiel game or game string) into a CompiledTree.

  `route` is "auto" (the game's native extractor if it has one, see
  native_extraction.py, else the generic walk), "generic" or "native" (ValueError if
  the game has none); every route gives the same tree, bit for bit. On the generic
  route, `workers` > 1 walks subtrees in that many processes (parallel_extraction),
  but only for a tree of more than PARALLEL_MIN_HISTORIES histories: a smaller one is
  walked serially (said when `progress`), starting the processes would cost more.
  `max_nodes` (default: tree_limits.nodes_limit of the route, a share of available
  memory, `memory_share` if given): every route raises TreeTooLarge past that many
  histories before allocating the tree (a cached tree is returned whatever its size).

  If `cache_dir` is given, the tree is read from / written to an npz file there keyed
  by the game string and the code defining the game's rules; an unreadable or mismatched file is reported (warning) and
  rebuilt. `progress` shows a progress bar of the walk and prints the tree built. Raises ValueError if the
  game has more than two players, is general-sum, simultaneous, has sampled chance,
  lacks information state strings, or has imperfect recall.
  """
  from ggp_cr.algorithms.tree import parallel_extraction  # pylint: disable=import-outside-toplevel
  parallel_extraction.check_workers(workers)
  if isinstance(game, str):
    game = pyspiel.load_game(game)
  check_game(game)
  native = _native_extractor(game, route)
  game_string = str(game)
  path = None
  if cache_dir is not None:
    output_paths.check_directory(cache_dir, "cache_dir")
    path = _cache_path(cache_dir, game)
    if os.path.exists(path):
      try:
        tree = flat_tree.CompiledTree.load(path, game_string)
        cache_validation.spot_check_against_game(path, tree, game)
        tree._game = game  # pylint: disable=protected-access
        return tree
      except ValueError as error:
        warnings.warn(f"Refusing the cached tree: {error} Rebuilding it.")
  start = time.time()
  by_memory = max_nodes is None
  if by_memory:
    max_nodes = tree_limits.nodes_limit(native is not None, memory_share)
  try:
    tree_limits.refuse_at_sight(game, max_nodes)
    if native is not None:
      tree = native(game, max_nodes)
    elif workers > 1:
      tree = _serially_if_small(game, game_string, progress, max_nodes, workers)
      if tree is None:
        tree = parallel_extraction.extract_parallel(game, workers, progress=progress,
                                                    max_nodes=max_nodes)
    else:
      tree = generic_extraction.extract(game, game_string, progress, max_nodes)
  except TreeTooLarge as error:
    if not by_memory:
      raise
    raise TreeTooLarge(f"{error} {tree_limits.memory_hint(memory_share)}") from None
  if progress or tree.num_nodes > tree_limits.CHECK_AFTER:
    print(f"  {tree} built in {time.time() - start:.1f} s", flush=True,
          file=sys.stdout if progress else sys.stderr)
  if path is not None:
    tree.save(path)
  return tree


# Trees up to this many histories are walked serially whatever the workers: a worker
# interpreter takes a second or more to start, the serial walk 0.03 s for Leduc's 9,457
# histories and 0.7 s for Liar's Dice's 294,883 (issue 43: 16 workers took 22 s
# instead of 1 s on a 9k-history tree). A larger tree's parallel walk starts over.
PARALLEL_MIN_HISTORIES = 100_000


def _serially_if_small(game, game_string, progress, max_nodes, workers):
  """The tree of `game` walked serially if it has at most PARALLEL_MIN_HISTORIES
  histories (or `max_nodes`, if smaller: TreeTooLarge beyond it), else None; compile_game
  always gives a limit."""
  if max_nodes <= PARALLEL_MIN_HISTORIES:
    tree = generic_extraction.extract(game, game_string, progress, max_nodes)
  else:
    try:
      tree = generic_extraction.extract(game, game_string, False,
                                        PARALLEL_MIN_HISTORIES)
    except generic_extraction.TreeTooLarge:
      return None
  if progress:
    print(f"  {tree.num_nodes:,} histories: walked serially, not by {workers} "
          f"workers (they help beyond {PARALLEL_MIN_HISTORIES:,})", flush=True)
  return tree


def _native_extractor(game, route):
  """The game's native extractor (game -> tree) if `route` picks it, else None."""
  from ggp_cr.algorithms.tree import native_extraction  # pylint: disable=import-outside-toplevel
  if route not in ("auto", "generic", "native"):
    raise ValueError(f"route must be auto, generic or native; got {route!r}.")
  native = None if route == "generic" else native_extraction.extractor(game)
  if route == "native" and native is None:
    raise ValueError(f"{game} has no native extractor; games with one: "
                     f"{', '.join(native_extraction.native_games())}.")
  return native


_IN_PROCESS_CACHE_SIZE = 4


class _ProcessTrees:
  """What this process knows of games' trees: `trees` (the last
  _IN_PROCESS_CACHE_SIZE compiled, by game string) and `refused` (available_tree's
  (game string, limit arguments) -> why it refused)."""

  def __init__(self):
    self.trees = collections.OrderedDict()
    self.refused = {}


# The one process-wide memo of trees (algorithms.process_state lists it).
PROCESS_TREES = _ProcessTrees()


def cached_tree(game, cache_dir=None, workers=1, max_nodes=None):
  """compile_game(game, cache_dir, workers=workers, max_nodes=max_nodes), memoised in
  this process per game string (last 4 games)."""
  if isinstance(game, str):
    game = pyspiel.load_game(game)
  game_string = str(game)
  trees = PROCESS_TREES.trees
  tree = trees.get(game_string)
  if tree is None:
    tree = compile_game(game, cache_dir, workers=workers, max_nodes=max_nodes)
    trees[game_string] = tree
    if len(trees) > _IN_PROCESS_CACHE_SIZE:
      trees.popitem(last=False)
  else:
    trees.move_to_end(game_string)
  return tree


# `available_tree`'s default limit: None, set by memory (tree_limits.nodes_limit);
# a generic walk (live states, about 0.1-0.5 M histories a second) is also held to
# GENERIC_WALK_LIMIT histories so that a first extraction stays within seconds. Native
# extractors (tens of millions a second) and cached trees have no other limit.
COMPILED_NODES_LIMIT = None
GENERIC_WALK_LIMIT = 2_000_000
# The share of a timed pre-play a bot's "auto" choice may spend extracting the tree
# (issue 44): the rest is left to its warm-up and its pre-play solve.
PREPLAY_EXTRACTION_SHARE = 0.5


def extraction_seconds(preplay):
  """What a bot with pre-play limits.Limit `preplay` may spend extracting its tree:
  PREPLAY_EXTRACTION_SHARE of its seconds, or None (no limit) when it is not timed
  (iterations, or none: the bot then takes the time it needs before the match)."""
  return PREPLAY_EXTRACTION_SHARE * preplay.seconds if preplay.seconds else None


def compile_warm_up_games():
  """The compiled trees of native_extraction.SMALL_GAMES, a small game per native
  extractor: compiling them loads the extractors' kernels (the players' process
  warm-up, before any clock)."""
  from ggp_cr.algorithms.tree import native_extraction  # pylint: disable=import-outside-toplevel
  return [compile_game(pyspiel.load_game(name)) for name in native_extraction.SMALL_GAMES]


def check_nodes_limit(nodes_limit):
  """Raises ValueError unless `nodes_limit` is None (set by memory) or a non-negative
  integer."""
  if nodes_limit is None:
    return
  if isinstance(nodes_limit, bool) or not isinstance(nodes_limit, (int, np.integer)) \
      or nodes_limit < 0:
    raise ValueError("compiled_nodes_limit must be None (set by memory) or a "
                     f"non-negative integer (histories); got {nodes_limit!r}.")


def extraction_limit(game, nodes_limit=COMPILED_NODES_LIMIT, memory_share=None,
                     memory=None):
  """The most histories available_tree extracts for `game`: its route's memory limit
  (tree_limits.nodes_limit with `memory_share` of `memory` bytes, defaults: the
  process's share of available memory), at most `nodes_limit` if given, else at most
  GENERIC_WALK_LIMIT on the generic route."""
  check_nodes_limit(nodes_limit)
  native = _native_extractor(game, "auto") is not None
  limit = tree_limits.nodes_limit(native, memory_share, memory)
  if nodes_limit is not None:
    return min(limit, int(nodes_limit))
  return limit if native else min(limit, GENERIC_WALK_LIMIT)


def available_tree(game, nodes_limit=COMPILED_NODES_LIMIT, cache_dir=None,
                   memory_share=None, memory=None, seconds=None, extra_per_history=0.0):
  """(tree, reason) when `game`'s compiled tree is in this process, in `cache_dir`, or
  extractable within extraction_limit(game, nodes_limit, memory_share, memory)
  histories; else (None, why not: the size or its estimate and the limit; a refused
  extraction is remembered in this process, not tried again). A tree far past the
  limit is refused in about a second, before anything is allocated (tree_limits).
  `seconds` (None: no limit) bounds an extraction's time: its route's seconds per
  history plus `extra_per_history` (what the caller builds per history after it) are
  paid only for a tree whose quick size estimate fits, and the count stops at the
  histories the seconds pay for (tree_limits.within_seconds). How the players with a
  compiled and a live path pick one ("auto"): continual resolving, OOS and the online
  solving player."""
  if isinstance(game, str):
    game = pyspiel.load_game(game)
  check_nodes_limit(nodes_limit)
  source = tree_source(game, cache_dir)
  request = (str(game), nodes_limit, memory_share, memory, seconds, extra_per_history)
  refused = PROCESS_TREES.refused.get(request)
  if source is None and refused is not None:
    return None, refused
  limit = None if source else extraction_limit(game, nodes_limit, memory_share, memory)
  timed = ""
  if source is None and seconds is not None:
    native = _native_extractor(game, "auto") is not None
    per_history = tree_limits.seconds_per_history(native, extra_per_history,
                                                  is_cpp_game(game))
    affordable, why_not = tree_limits.within_seconds(game, seconds, per_history)
    if why_not is not None:
      refused = f"tree not extracted within the pre-play: {why_not}"
      PROCESS_TREES.refused[request] = refused
      return None, refused
    if affordable < limit:
      limit = affordable
      timed = f" (the histories {seconds:.3g} s of pre-play pay for)"
  try:
    tree = cached_tree(game, cache_dir, max_nodes=limit)
  except TreeTooLarge as error:
    refused = f"tree too large for the compiled path{timed}: {error}"
    PROCESS_TREES.refused[request] = refused  # not extracted again
    return None, refused
  if source == "process":
    return tree, "tree compiled in this process"
  if source == "disk":
    return tree, "tree read from the cache"
  return tree, f"tree extracted ({tree.num_nodes:,} histories <= {limit:,}{timed})"


def check_tree_of(tree, game):
  """Raises ValueError unless `tree` is the CompiledTree of pyspiel game `game`."""
  if str(getattr(tree, "game_string", None)) != str(game):
    raise ValueError(f"tree is the compiled tree of "
                     f"{getattr(tree, 'game_string', type(tree).__name__)}, not of "
                     f"{game}; give the tree of {game} (or none).")


def tree_source(game, cache_dir=None):
  """Where cached_tree(game, cache_dir) would find the tree: "process" (memoised),
  "disk" (a cache file exists in `cache_dir`; it may still be refused) or None."""
  if str(game) in PROCESS_TREES.trees:
    return "process"
  if cache_dir is not None and os.path.exists(_cache_path(cache_dir, game)):
    return "disk"
  return None
