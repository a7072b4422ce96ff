"""Solver data carried over to the next subgame on the compiled path (continual
resolving's keep_solver_data; MCCR / gtlib2, [S] ch. 2, §3.4.1).

The live path (live_solvers: FullWidthSolver._warm_start, SamplingSolver's `warm`)
starts a subgame's solver from the previous subgame's tables at the information
states both hold (the gadget's own infosets start fresh) and continues its iteration
count. `carry_over` does the same between two compiled views' solvers, matching
infosets by their whole-tree id: CFR+ and dl_cfr+ (cfr.GeneralCFRSolver on a copy,
in_place_view.SubgameCFRPlus in place) copy regrets, cumulative and current
strategy, the iteration and the weights' log scale; the sampling solvers
(view_sampling.ViewSampler, InPlaceSampler) copy every per-infoset table of
compiled_outcome_sampling (regrets, current strategy, cumulative strategy,
baselines, visits, regret updates, last averaging iteration, and whether it is in
memory: a carried infoset is no longer new, so no playout starts there) and the
iteration count. Random streams are not carried: each subgame's solver has its own
seed, as on the live path.
"""

import numpy as np

from ggp_cr.algorithms.resolving.compiled import in_place_view
from ggp_cr.algorithms.resolving.compiled import view_sampling

_FULL_WIDTH_SLOTS = ("_regrets", "_cumulative", "_strategy")
_FULL_WIDTH_SCALARS = ("_iteration", "_log_weight_scale")
_SAMPLING_SLOTS = ("regrets", "_current", "cumulative")
_SAMPLING_INFOSETS = ("_in_memory", "visits", "_last_average", "_regret_updates")


def _tables(view):
  """(kind, the object holding the tables, whole-tree infoset of each table infoset
  (-1: the gadget's), each one's first slot in the tables) of `view`'s solver."""
  solver = view.solver
  if isinstance(solver, view_sampling.InPlaceSampler):
    # pylint: disable=protected-access
    infosets, offsets = solver._infosets, solver._table_offsets
    gadget = np.full(len(offsets) - len(infosets), -1)
    return "sampling", solver.solver, np.concatenate((infosets, gadget)), offsets
  if isinstance(solver, view_sampling.ViewSampler):
    return ("sampling", solver.solver, view.infoset_source,
            view.tree.infoset_action_offset)
  if isinstance(solver, in_place_view.SubgameCFRPlus):
    infosets = np.concatenate(solver.infosets)
    return ("full_width", solver, infosets, view.whole.infoset_action_offset[infosets])
  return "full_width", solver, view.infoset_source, view.tree.infoset_action_offset


def carry_over(new_view, old_view):
  """Starts `new_view`'s solver (not yet iterated) from `old_view`'s tables at the
  whole-tree infosets both hold (module docstring); raises ValueError if the two
  solvers are not of one kind (both full width or both sampling)."""
  kind, new, new_ids, new_offsets = _tables(new_view)
  old_kind, old, old_ids, old_offsets = _tables(old_view)
  if kind != old_kind:
    raise ValueError(f"Solver data carry over between solvers of one kind only; got "
                     f"{old_kind} and {kind}.")
  whole = new_view.whole
  index = np.full(whole.num_infosets, -1, dtype=np.int64)
  inside = np.flatnonzero(old_ids >= 0)
  index[old_ids[inside]] = inside
  new_ids = np.asarray(new_ids)
  mine = np.flatnonzero(new_ids >= 0)
  mine = mine[index[new_ids[mine]] >= 0]
  theirs = index[new_ids[mine]]
  counts = whole.infoset_num_actions[new_ids[mine]].astype(np.int64)
  within = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
  new_slots = np.repeat(np.asarray(new_offsets)[mine], counts) + within
  old_slots = np.repeat(np.asarray(old_offsets)[theirs], counts) + within
  if kind == "full_width":
    for name in _FULL_WIDTH_SLOTS:
      getattr(new, name)[new_slots] = getattr(old, name)[old_slots]
    for name in _FULL_WIDTH_SCALARS:
      setattr(new, name, getattr(old, name))
    return
  for name in _SAMPLING_SLOTS:
    getattr(new, name)[new_slots] = getattr(old, name)[old_slots]
  if new.baselines.size:
    new.baselines[:, new_slots] = old.baselines[:, old_slots]
  for name in _SAMPLING_INFOSETS:
    getattr(new, name)[mine] = getattr(old, name)[theirs]
  new.iterations = old.iterations
