"""Solver data carried over to the next subgame on the compiled path (continual
resolving's keep_solver_data; MCCR / gtlib2, [S] ch. 2, §3.4.1).

`carry_over` starts a compiled view's solver from the previous view's tables at the
infosets both hold (matched by whole-tree id) and continues its iteration count, as
the live path's warm starts do; random streams are not carried. What each solver
copies: docs/algorithms/resolving.md, "Module notes".
"""

import numpy as np

from ggp_cr.algorithms.resolving.compiled import subgame_cfr
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
  if isinstance(solver, subgame_cfr.SubgameCFRPlus):
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
