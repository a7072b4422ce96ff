"""Parallel extraction of a compiled tree: the subtrees below a frontier in processes.

Issue 13, item 1 (spec README.md, architecture principle 2): for any pyspiel game,
`extract_parallel` returns exactly the arrays of generic_extraction's serial extraction
(same breadth-first node numbering, infoset ids and keys).

The main process walks the top of the tree (depths below the cut depth D) depth-first,
recording each child at depth D as a frontier entry (its action history, parent and
the players' last slots); D is the first depth holding at least `frontier_size`
histories. Contiguous runs of frontier entries are walked depth-first by worker
processes, which reload the game by its string and replay each history. The top's
preorder followed by the runs' preorders in frontier order is a sequence whose stable
sort by depth is the breadth-first order, so once the parts' infosets are merged by
(player, key) and their slots renumbered, generic_extraction's breadth-first renumbering
applies unchanged. The worker processes die with their parent, even on SIGKILL
(worker_processes.tie_to_parent), and are capped at the usable cores (worker_counts).
"""

import atexit
import bisect
import multiprocessing
import os

import numpy as np
import pyspiel

from ggp_cr.algorithms import progress_bars
from ggp_cr.algorithms import worker_processes
from ggp_cr.algorithms.config import worker_counts
from ggp_cr.algorithms.tree import generic_extraction
from ggp_cr.algorithms.tree import tree_limits

# Runs of frontier entries per worker: enough for dynamic load balancing.
_TASKS_PER_WORKER = 8
# Default frontier size per worker.
_FRONTIER_PER_WORKER = 64

_pools = {}
_worker_games = {}


def check_workers(workers):
  """Raises ValueError unless `workers` is a positive int."""
  if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or (
      workers < 1):
    raise ValueError(f"workers must be a positive int (1 = serial extraction); got "
                     f"{workers!r}.")


def _pool(workers):
  """A 'spawn' process pool of `workers` processes tied to this one, kept for later
  extractions."""
  pool = _pools.get(workers)
  if pool is None:
    pool = multiprocessing.get_context("spawn").Pool(
        workers, initializer=worker_processes.tie_to_parent, initargs=(os.getpid(),))
    _pools[workers] = pool
  return pool


def _stop_pool(workers):
  pool = _pools.pop(workers, None)
  if pool is not None:
    pool.terminate()
    pool.join()


def shutdown_pools():
  """Stops the worker processes kept for later extractions."""
  for workers in list(_pools):
    _stop_pool(workers)


atexit.register(shutdown_pools)


def _cut_depth(game, frontier_size):
  """The first depth >= 1 with at least `frontier_size` histories, None if none."""
  level, depth = [game.new_initial_state()], 0
  while level:
    if depth >= 1 and len(level) >= frontier_size:
      return depth
    children = []
    for state in level:
      if state.is_chance_node():
        children.extend(state.child(a) for a, _ in state.chance_outcomes())
      elif not state.is_terminal():
        children.extend(map(state.child, state.legal_actions()))
    level, depth = children, depth + 1
  return None


def _walk_run(task):
  """Worker: the preorder walk of a run of frontier entries (generic_extraction.walk),
  TreeTooLarge past `max_nodes` histories."""
  game_string, utility_sum, depth, entries, max_nodes = task
  game = _worker_games.get(game_string)
  if game is None:
    try:
      game = pyspiel.load_game(game_string)
    except pyspiel.SpielError as error:
      raise ValueError(
          f"A worker process (which imports ggp_cr) cannot load {game_string!r}: "
          f"{str(error).splitlines()[0]}") from None
    _worker_games.clear()
    _worker_games[game_string] = game

  def roots():
    for history, action_index, prob, last0, last1 in entries:
      state = game.new_initial_state()
      for action in history:
        state.apply_action(action)
      yield state, -1, action_index, prob, depth, last0, last1

  return generic_extraction.walk(game, game_string, utility_sum, roots(), False,
                                 max_nodes=max_nodes, estimate=False)


def _external(slot):
  """A slot of the top part as seen from a worker: -2 - slot (-1 stays -1)."""
  return -2 - slot if slot >= 0 else -1


class _Merger:
  """Concatenates the parts' preorder arrays and merges their infosets by key."""

  _DTYPES = (np.int32, np.int16, np.int8, np.int32, np.int16, np.float64, np.float64,
             np.int16)

  def __init__(self, game_string):
    self.game_string = game_string
    self.columns = [[] for _ in self._DTYPES]
    self.num_nodes = 0
    self.lookup = ({}, {})
    self.keys = []
    self.infoset_player = []
    self.infoset_offset = []
    self.infoset_parent_slot = []
    self.infoset_actions = []
    self.num_slots = 0

  def add(self, walked, root_parents=None):
    """Appends one part; `root_parents` are the merged indices of its roots' parents."""
    (parents, action_indices, players, infosets, num_children, chance_probs, utilities,
     depths, keys, infoset_player, infoset_offset, infoset_parent_slot,
     infoset_actions) = walked
    # The last entry maps infoset -1 (not a decision node) to -1.
    renumber = np.array(self._merge_infosets(keys, infoset_player, infoset_offset,
                                             infoset_parent_slot, infoset_actions) +
                        [-1], dtype=np.int32)
    columns = [np.frombuffer(buffer, dtype=dtype) for buffer, dtype in zip(
        (parents, action_indices, players, infosets, num_children, chance_probs,
         utilities, depths), self._DTYPES)]
    parent = columns[0] + np.int32(self.num_nodes)
    if root_parents is not None:
      parent[columns[0] < 0] = root_parents
    columns[0] = parent
    columns[3] = renumber[columns[3]]
    for column, values in zip(self.columns, columns):
      column.append(values)
    self.num_nodes += len(parent)

  def _merge_infosets(self, keys, players, offsets, parent_slots, actions):
    """The merged index of each of a part's infosets, adding the new ones."""
    renumber = []
    for infoset, key in enumerate(keys):
      player = players[infoset]
      last = parent_slots[infoset]
      if last >= 0:
        owner = bisect.bisect_right(offsets, last) - 1
        last = self.infoset_offset[renumber[owner]] + last - offsets[owner]
      elif last <= -2:
        last = -2 - last
      legal = actions[infoset]
      merged = self.lookup[player].get(key)
      if merged is None:
        merged = len(self.keys)
        self.lookup[player][key] = merged
        self.keys.append(key)
        self.infoset_player.append(player)
        self.infoset_offset.append(self.num_slots)
        self.infoset_parent_slot.append(last)
        self.infoset_actions.append(legal)
        self.num_slots += len(legal)
      elif (self.infoset_parent_slot[merged] != last or
            self.infoset_actions[merged] != legal):
        raise ValueError(generic_extraction.recall_message(
            self.game_string, player, key, self.infoset_actions,
            self.infoset_parent_slot, merged, legal, last))
      renumber.append(merged)
    return renumber

  def tree(self, game, utility_sum):
    """The CompiledTree of the merged parts."""
    columns = []
    while self.columns:
      parts = self.columns.pop(0)
      columns.append(np.concatenate(parts))
      parts.clear()
    del self.lookup
    return generic_extraction.renumber_breadth_first(
        game, self.game_string, utility_sum, *columns, self.keys, self.infoset_player,
        self.infoset_offset, self.infoset_parent_slot, self.infoset_actions)


def extract_parallel(game, workers, frontier_size=None, progress=False,
                     keep_workers=False, max_nodes=None):
  """The CompiledTree of `game`, subtrees walked by `workers` processes.

  Equals generic_extraction's serial extraction array for array. `frontier_size` (default
  64 per worker) is the least number of histories at the cut depth; a tree without
  such a depth is extracted serially. `progress` shows a bar over the runs. The worker
  processes are stopped afterwards unless `keep_workers` (then `shutdown_pools` stops
  them). TreeTooLarge past `max_nodes` histories: at once if the estimated size is far
  larger (tree_limits), else once the walked parts pass it. `workers` is capped at the
  usable cores (said when `progress`).
  """
  check_workers(workers)
  workers = worker_counts.useful_workers(workers, None, "workers",
                                         print if progress else None)
  game_string = str(game)
  try:
    reloaded = repr(str(pyspiel.load_game(game_string)))
  except pyspiel.SpielError as error:
    reloaded = f"an error ({str(error).splitlines()[0]})"
  if reloaded != repr(game_string):
    raise ValueError(f"Parallel extraction reloads the game from its string in each "
                     f"worker process, but {game_string!r} gives {reloaded}.")
  utility_sum = generic_extraction.game_utility_sum(game)
  if max_nodes is not None:
    tree_limits.refuse_if_far_larger(game, max_nodes)
  depth = _cut_depth(game, frontier_size or _FRONTIER_PER_WORKER * workers)
  if depth is None:
    return generic_extraction.extract(game, game_string, progress, max_nodes)
  pool = _pool(workers)  # the workers start up while the top is walked
  try:
    frontier = []
    merger = _Merger(game_string)
    merger.add(generic_extraction.walk(
        game, game_string, utility_sum,
        [(game.new_initial_state(), -1, -1, 1.0, 0, -1, -1)], False, depth, frontier,
        max_nodes=max_nodes, estimate=False))
    num_tasks = min(len(frontier), _TASKS_PER_WORKER * workers)
    bounds = np.linspace(0, len(frontier), num_tasks + 1).round().astype(int).tolist()
    tasks = [(game_string, utility_sum, depth,
              [(history, action_index, prob, _external(last0), _external(last1))
               for history, _, action_index, prob, last0, last1 in frontier[lo:hi]],
              max_nodes)
             for lo, hi in zip(bounds[:-1], bounds[1:])]
    root_parents = np.array([entry[1] for entry in frontier], dtype=np.int32)
    del frontier
    if progress:
      print(f"  {len(root_parents):,} subtrees at depth {depth} in {num_tasks} runs for "
            f"{workers} workers", flush=True)
    with progress_bars.bar(num_tasks, "run", "extracting", shown=bool(progress)) as meter:
      for done, walked in enumerate(pool.imap(_walk_run, tasks), 1):
        merger.add(walked, root_parents[bounds[done - 1]:bounds[done]])
        if max_nodes is not None and merger.num_nodes > max_nodes:
          raise tree_limits.too_large(game_string, merger.num_nodes, max_nodes)
        meter.update()
  except BaseException:
    _stop_pool(workers)
    raise
  if not keep_workers:
    _stop_pool(workers)
  return merger.tree(game, utility_sum)
