"""CFR+ on a subgame's packed walk (packed_walk.PackedWalk) equals CFR+ in place on
the whole tree (subgame_cfr.SubgameCFRPlus), the same sums in the same order
([S] §1.3.1; issue 45)."""

import copy

import numpy as np
import pytest

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.resolving.compiled import in_place_view
from ggp_cr.algorithms.resolving.compiled import next_root_estimates
from ggp_cr.algorithms.resolving.compiled import subgame_cfr
from ggp_cr.algorithms.resolving.compiled import subgame_layout
from ggp_cr.algorithms.resolving.gadget import gadget_game
from test_copied_view import GAMES, _gadget_arguments, _inputs, _subgames

ITERATIONS = 20


def _view(arguments, pack):
  # In place unpruned: a pruned pass leaves the values it skips stale (root_values;
  # test_pruned_passes ties the pruned solve to this one).
  return in_place_view.SubgameView(
      *arguments, solver=lambda view: subgame_cfr.SubgameCFRPlus(view, pack=pack,
                                                                   prune=False))


@pytest.mark.parametrize("variant", gadget_game.VARIANTS)
@pytest.mark.parametrize("game_string", GAMES)
def test_packed_walk_equals_the_in_place_solve(game_string, variant):
  rng = np.random.default_rng(3)
  compared = 0
  for arguments in _gadget_arguments(game_string, variant, rng):
    try:
      in_place, packed = _view(arguments, False), _view(arguments, True)
    except subgame_layout.NestedRoots:
      continue
    assert in_place.solver.packed is None and packed.solver.packed is not None
    assert packed.solver.packed.num_nodes == in_place.solver.subgame_nodes
    estimates = [next_root_estimates.NextRootEstimates(v, v.trace())
                 for v in (in_place, packed)]
    # Interleaved: the in-place solve's shared scratch arrays do not disturb the
    # packed one's own.
    for _ in range(ITERATIONS):
      for view, estimate in zip((in_place, packed), estimates):
        next_root_estimates.solve_with_estimates(view, estimate, 1)
    for name in ("_regrets", "_cumulative", "_strategy"):
      np.testing.assert_allclose(getattr(packed.solver, name),
                                 getattr(in_place.solver, name), rtol=0, atol=1e-9)
      np.testing.assert_array_equal(getattr(packed.solver, name),
                                    getattr(in_place.solver, name))
    np.testing.assert_array_equal(packed.solver.root_values(),
                                  in_place.solver.root_values())
    for name in ("reach_sum", "opponent_reach_sum", "value_sum", "weight_sum"):
      np.testing.assert_allclose(getattr(estimates[1], name),
                                 getattr(estimates[0], name), rtol=0, atol=1e-9)
    # ... and the inputs read from one pass of a strategy (after a refusal).
    for view, estimate in zip((in_place, packed), estimates):
      estimate.add(view.average_slots())
    np.testing.assert_allclose(estimates[1].value_sum, estimates[0].value_sum,
                               rtol=0, atol=1e-9)
    compared += 1
  assert compared > 0


def test_packing_is_chosen_by_scatter_size_and_deadline(monkeypatch):
  """Auto: a subgame of at least PACK_MIN_NODES nodes with fewer nodes per range
  than PACK_NODES_PER_RANGE is packed if the packing fits the deadline."""
  tree, keys, player, roots, trunk = next(_subgames("python_leduc(max_raises=1,"
                                                    "cards_per_suit=3)"))
  w, opponent_reach, cbv = _inputs(tree, keys, player, roots, trunk,
                                   np.random.default_rng(0))
  arguments = (tree, keys, player, roots, w, cbv, "resolve", opponent_reach)
  assert in_place_view.SubgameView(*arguments).solver.packed is None  # small
  monkeypatch.setattr(subgame_cfr, "PACK_MIN_NODES", 0)
  monkeypatch.setattr(subgame_cfr, "PACK_NODES_PER_RANGE", float("inf"))
  assert in_place_view.SubgameView(*arguments).solver.packed is not None
  late = in_place_view.SubgameView(
      *arguments, solver=lambda view: subgame_cfr.SubgameCFRPlus(view, deadline=0.0))
  assert late.solver.packed is None
  monkeypatch.setattr(subgame_cfr, "PACK_NODES_PER_RANGE", 0.0)
  assert in_place_view.SubgameView(*arguments).solver.packed is None


def test_a_copy_shares_the_walk_and_continues_equal():
  """A deep copy of a packed solve (a continual-resolving bot's clone: the tree
  and its keys shared) shares the read-only packed walk and the whole tree's walk,
  writes its own values and reach, and continues bit for bit as the original."""
  arguments = next(_gadget_arguments("python_leduc(max_raises=1,cards_per_suit=3)",
                                     "resolve", np.random.default_rng(1)))
  tree, keys = arguments[0], arguments[1]
  original = _view(arguments, True)
  estimates = next_root_estimates.NextRootEstimates(original, original.trace())
  next_root_estimates.solve_with_estimates(original, estimates, 3)
  copied, copied_estimates = copy.deepcopy((original, estimates),
                                           {id(tree): tree, id(keys): keys})
  packed, copied_packed = original.solver.packed, copied.solver.packed
  assert copied_packed.down_parent is packed.down_parent
  assert copied_packed.up_node is packed.up_node
  assert copied.solver._tables.walk is original.solver._tables.walk  # pylint: disable=protected-access
  assert copied_packed.values is not packed.values
  assert copied_packed.reach is not packed.reach
  for _ in range(5):  # interleaved: neither disturbs the other
    for view, estimate in ((original, estimates), (copied, copied_estimates)):
      next_root_estimates.solve_with_estimates(view, estimate, 1)
  for name in ("_regrets", "_cumulative", "_strategy"):
    np.testing.assert_array_equal(getattr(copied.solver, name),
                                  getattr(original.solver, name))
  np.testing.assert_array_equal(copied_estimates.value_sum, estimates.value_sum)
