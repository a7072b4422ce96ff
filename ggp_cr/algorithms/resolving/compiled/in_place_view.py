"""Gadget views that do not copy the subgame ([S] §1.4.2, ch. 2, §6; [H] §G-I).

`SubgameView` is a copied_view.GadgetView whose CFR+ (subgame_cfr.SubgameCFRPlus) runs
on the whole game's compiled tree itself, restricted to the subgame (its layout:
subgame_layout.SubgameStructure), and equals cfr.CFRPlusSolver on the copying view to
rounding. Roots nested in another root's subtree raise subgame_layout.NestedRoots
(callers copy then). Notes: docs/algorithms/resolving.md, "Module notes".
"""

import numpy as np

from ggp_cr.algorithms.resolving.compiled import copied_view
from ggp_cr.algorithms.resolving.compiled import subgame_cfr


class SubgameView(copied_view.GadgetView):
  """copied_view.GadgetView solved in place (module docstring); same arguments.
  Raises subgame_layout.NestedRoots (a ValueError) when a root lies below another.
  It has no laid out `tree`; `to_copy_slots` maps its strategies onto the copying
  view's, whose exact gadget value, best responses and margins then apply."""

  def __init__(self, tree, state_keys, player, root_nodes, w, opponent_values=None,
               variant="resolve", opponent_reach=None, solver=None):
    if variant is None:
      raise ValueError("variant must be one of resolve, max_margin, unsafe; the whole "
                       "game (variant None) is solved by GadgetView.")
    self._copy = None
    super().__init__(tree, state_keys, player, root_nodes, w, opponent_values,
                     variant, opponent_reach, solver)

  def _build(self, first):
    self._plan(first)

  def _solver(self, deadline=None, reserve=0.0):
    """Its CFR+ (SubgameCFRPlus, packing when that pays before `deadline`)."""
    return subgame_cfr.SubgameCFRPlus(self, deadline=deadline, reserve=reserve)

  # Its solver: SubgameCFRPlus, or view_sampling.InPlaceSampler (which answers
  # subgame_nodes, own_infosets, _base, _tables, evaluate and average_at from its
  # SubgameStructure).

  @property
  def num_nodes(self):
    """Nodes the view spans: the subgame's and the gadget's prefix."""
    prefix = {"resolve": 1 + 2 * len(self.active_roots),
              "max_margin": 1 + len(self.choice_counts),
              "unsafe": 1}[self.variant]
    return self.solver.subgame_nodes + prefix

  def locate(self, trace):
    j = np.asarray(trace.next_root_of, dtype=np.int64)
    return j, trace.next_roots, self.root_nodes[self.active_roots][j]

  def whole_nodes(self, local_nodes):
    """The view's nodes are the whole tree's."""
    return np.asarray(local_nodes)

  def positions(self, nodes):
    return self.solver.positions(nodes)

  def value_nodes(self, nodes):
    return self.solver.value_nodes(nodes)

  @property
  def utility_sum(self):
    return 0.0

  def evaluate(self, slots, observe, deadline=None):
    """copied_view.GadgetView.evaluate; the pass in place runs whole (`deadline` is
    not checked inside it; a subgame's pass is a fraction of the whole tree's)."""
    del deadline
    self.solver.evaluate(np.asarray(slots, dtype=np.float64), observe)
    return True

  def average_at(self, infoset):
    return self.solver.average_at(infoset)

  def resolved_strategy(self, slots=None):
    slots = self.average_slots() if slots is None else slots
    tree = self.whole
    own = self.solver.own_infosets
    counts = tree.infoset_num_actions[own].astype(np.int64)
    starts = np.repeat(tree.infoset_action_offset[own].astype(np.int64), counts)
    where = starts + (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts,
                                                          counts))
    return where, slots[where]

  def to_copy_slots(self, copy, slots=None):
    """`slots` (default: the average strategy) in the slot form of `copy`, the
    copying GadgetView of the same inputs."""
    slots = self.average_slots() if slots is None else slots
    inner = copy.slot_source >= 0
    out = np.empty(copy.tree.num_infoset_actions)
    out[inner] = slots[copy.slot_source[inner]]
    out[~inner] = slots[self.solver._base + np.flatnonzero(~inner)]  # pylint: disable=protected-access
    return out

  def copy(self):
    """The copying GadgetView of the same inputs (built once, on request)."""
    if self._copy is None:
      self._copy = copied_view.GadgetView(
          self.whole, self.state_keys, self.player, self.root_nodes, self.w,
          dict(zip(self.infoset_keys.tolist(), self.cbv.tolist())), self.variant,
          self.opponent_reach)
    return self._copy

  def laid_out(self):
    """(the copy's CompiledTree, the average strategy in its slot form)."""
    copy = self.copy()
    return copy.tree, self.to_copy_slots(copy)

  def gadget_value(self, slots=None):
    """o's expected gadget payoff (GadgetView.gadget_value, on the copy)."""
    copy = self.copy()
    return copy.gadget_value(self.to_copy_slots(copy, slots))

  def counterfactual_best_response_values(self, slots=None):
    """GadgetView.counterfactual_best_response_values, on the copy."""
    copy = self.copy()
    return copy.counterfactual_best_response_values(self.to_copy_slots(copy, slots))

  def subgame_margin(self, slots=None, before=None):
    """GadgetView.subgame_margin, on the copy."""
    copy = self.copy()
    return copy.subgame_margin(self.to_copy_slots(copy, slots), before)
