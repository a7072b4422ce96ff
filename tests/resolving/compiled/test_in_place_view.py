"""Subgame views (CFR+ in place on the whole tree) equal the copying gadget views
solved by our CFR+ ([S] §1.4.2, ch. 2; [H] §G-I), which test_copied_view ties to the
pyspiel gadgets."""

import numpy as np
import pytest

import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.resolving.compiled import compiled_resolver
from ggp_cr.algorithms.resolving.compiled import copied_view
from ggp_cr.algorithms.resolving.compiled import in_place_view
from ggp_cr.algorithms.resolving.compiled import next_root_estimates
from ggp_cr.algorithms.resolving.compiled import subgame_layout
from ggp_cr.algorithms.resolving.gadget import gadget_game
from ggp_cr.algorithms.resolving.subgames import subgame_trace
from ggp_cr.algorithms.tree import compiled_tree
from test_copied_view import GAMES, _inputs, _subgames

ITERATIONS = 20


def _both(tree, keys, player, roots, w, cbv, variant, opponent_reach):
  copy = copied_view.GadgetView(tree, keys, player, roots, w, cbv, variant,
                                 opponent_reach)
  view = in_place_view.SubgameView(tree, keys, player, roots, w, cbv, variant,
                                   opponent_reach)
  return copy, view


@pytest.mark.parametrize("variant", gadget_game.VARIANTS)
@pytest.mark.parametrize("game_string", GAMES)
def test_subgame_view_equals_the_copying_view(game_string, variant):
  rng = np.random.default_rng(1)
  compared = 0
  for tree, keys, player, roots, trunk in _subgames(game_string):
    w, opponent_reach, cbv = _inputs(tree, keys, player, roots, trunk, rng)
    if variant == "unsafe" and not np.any(w * opponent_reach > 0):
      continue
    copy, view = _both(tree, keys, player, roots, w, cbv, variant, opponent_reach)
    assert view.num_nodes == copy.tree.num_nodes
    trace = copy.trace()
    copy_estimates = next_root_estimates.NextRootEstimates(copy, trace)
    view_estimates = next_root_estimates.NextRootEstimates(view, view.trace())
    next_root_estimates.solve_with_estimates(copy, copy_estimates, ITERATIONS)
    next_root_estimates.solve_with_estimates(view, view_estimates, ITERATIONS)
    assert view.iterations == copy.iterations == ITERATIONS
    # Average strategies, gadget infosets included, slot for slot.
    np.testing.assert_allclose(view.to_copy_slots(copy), copy.average_slots(),
                               rtol=0, atol=1e-9)
    np.testing.assert_allclose(view.combine(trunk), copy.combine(trunk), rtol=0,
                               atol=1e-9)
    for infoset in copy.infoset_source[copy.infoset_source >= 0].tolist():
      np.testing.assert_allclose(view.average_at(infoset), copy.average_at(infoset),
                                 rtol=0, atol=1e-9)
    assert view.gadget_value() == pytest.approx(copy.gadget_value(), abs=1e-9)
    assert view.subgame_margin() == pytest.approx(copy.subgame_margin(), abs=1e-9)
    # The next subgames' inputs read from the passes.
    for name in ("reach_sum", "opponent_reach_sum", "value_sum", "weight_sum"):
      np.testing.assert_allclose(getattr(view_estimates, name),
                                 getattr(copy_estimates, name), rtol=0, atol=1e-9)
    # ... and from a strategy (the estimates after a refused subgame).
    copy_estimates.add(copy.average_slots())
    view_estimates.add(view.average_slots())
    np.testing.assert_allclose(view_estimates.value_sum, copy_estimates.value_sum,
                               rtol=0, atol=1e-9)
    compared += 1
  assert compared > 0


def _views_and_alone(subgames, rng, iterations):
  """In-place views of `subgames` (one tree's), and each one's average strategy
  after `iterations` solved alone."""
  views, alone = [], []
  for tree, keys, player, roots, trunk in subgames:
    w, _, cbv = _inputs(tree, keys, player, roots, trunk, rng)
    views.append(in_place_view.SubgameView(tree, keys, player, roots, w, cbv))
    single = in_place_view.SubgameView(tree, keys, player, roots, w, cbv)
    single.run(iterations)
    alone.append(single.average_slots())
  return views, alone


def test_views_of_one_tree_can_be_solved_in_turns():
  """Views share the tree's scratch arrays: interleaved iterations give what each
  view gives alone."""
  subgames = list(_subgames("python_leduc(max_raises=1,cards_per_suit=3)", 2))
  views, alone = _views_and_alone(subgames[:2], np.random.default_rng(2), 6)
  for _ in range(6):
    for view in views:
      view.run(1)
  for view, expected in zip(views, alone):
    np.testing.assert_array_equal(view.average_slots(), expected)


@pytest.mark.parametrize("max_restored", [64, 1])
def test_the_whole_game_solve_shares_the_views_scratch(monkeypatch, max_restored):
  """The whole game's CFR+ (compiled_resolver.CompiledResolver.whole_game) runs its
  passes on the in-place views' scratch arrays: interleaved with in-place views'
  iterations (their gadget payoffs restored one by one, or all copied back), it
  and they give what each gives alone, bit for bit."""
  monkeypatch.setattr(subgame_layout, "_MAX_RESTORED", max_restored)
  subgames = list(_subgames("python_leduc(max_raises=1,cards_per_suit=3)", 2))
  tree, keys, player = subgames[0][:3]
  views, alone = _views_and_alone(subgames[:2], np.random.default_rng(3), 4)
  plain = copied_view.GadgetView(tree, keys, player, [0], [1.0], variant=None)
  plain_estimates = next_root_estimates.NextRootEstimates(plain, plain.trace())
  next_root_estimates.solve_with_estimates(plain, plain_estimates, 4)
  whole = compiled_resolver.CompiledResolver.whole_game(tree, keys, player)
  scratch = subgame_layout.whole_tree_scratch(tree)
  assert whole.view.solver._values is scratch.values  # pylint: disable=protected-access
  for _ in range(4):
    whole.iterate(1)
    for view in views:
      view.run(1)
  np.testing.assert_array_equal(whole.view.average_slots(), plain.average_slots())
  for name in ("reach_sum", "opponent_reach_sum", "value_sum", "weight_sum"):
    np.testing.assert_array_equal(getattr(whole.estimates, name),
                                  getattr(plain_estimates, name))
  for view, expected in zip(views, alone):
    np.testing.assert_array_equal(view.average_slots(), expected)


def test_nested_roots_and_the_whole_game_are_refused():
  tree = compiled_tree.cached_tree(pyspiel.load_game("kuhn_poker"))
  keys = subgame_trace.StateKeys.build(tree)
  child = int(tree.node_first_child[0])
  with pytest.raises(subgame_layout.NestedRoots, match="below another root"):
    in_place_view.SubgameView(tree, keys, 0, [child, int(tree.node_first_child[child])],
                              [0.5, 0.5], variant="unsafe")
  with pytest.raises(ValueError, match="variant must be one of"):
    in_place_view.SubgameView(tree, keys, 0, [0], [1.0], variant=None)
