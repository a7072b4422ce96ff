"""Gadget views on the compiled tree equal the pyspiel gadgets solved by our CFR+
([S] §1.4.2; [H] §G-I)."""

import numpy as np
import pytest

import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms import best_response
from ggp_cr.algorithms import cfr
from ggp_cr.algorithms import compiled_subgames
from ggp_cr.algorithms import compiled_tree
from ggp_cr.algorithms import gadget_views
from ggp_cr.algorithms import gadgets

GAMES = ["kuhn_poker", "python_leduc(max_raises=1,cards_per_suit=3)",
         "python_ii_goofspiel(num_cards=4)", "python_princess_monster(max_turns=4)"]
ITERATIONS = 25


def _subgames(game_string, per_player=2):
  """(tree, keys, player, root nodes, trunk) for a few next subgames of a CFR+ trunk."""
  tree = compiled_tree.cached_tree(pyspiel.load_game(game_string))
  keys = compiled_subgames.StateKeys.build(tree)
  trunk_solver = cfr.CFRPlusSolver(tree)
  for _ in range(10):
    trunk_solver.evaluate_and_update_policy()
  trunk = trunk_solver.average_strategy_slots()
  for player in (0, 1):
    trace = compiled_subgames.trace_subgames(tree, keys, player, [0])
    seen = set()
    for infoset in trace.own_infosets.tolist():
      group = tuple(trace.group_roots(infoset).tolist())
      if group in seen:
        continue
      seen.add(group)
      yield tree, keys, player, trace.next_roots[list(group)], trunk
      if len(seen) == per_player:
        break


def _inputs(tree, keys, player, roots, trunk, rng):
  """w, o's reach and noisy CBR values per root key, both as keys and strings."""
  reach = tree.node_reaches(trunk)
  w = reach[player, roots] * reach[2, roots]
  _, response = best_response.best_response_slots(tree, trunk, 1 - player)
  values = tree.node_values(response)[roots]
  if player == 0:
    values = tree.utility_sum - values
  root_keys = keys.keys[1 - player, roots]
  cbv = {}
  for key, value in zip(root_keys.tolist(), (w * values).tolist()):
    cbv[key] = cbv.get(key, 0.0) + value
  cbv = {k: v * rng.normal(1.0, 0.2) for k, v in cbv.items()}
  return w, reach[1 - player, roots], cbv


@pytest.mark.parametrize("variant", gadgets.VARIANTS)
@pytest.mark.parametrize("game_string", GAMES)
def test_view_equals_the_pyspiel_gadget(game_string, variant):
  rng = np.random.default_rng(0)
  compared = 0
  for tree, keys, player, roots, trunk in _subgames(game_string):
    w, opponent_reach, cbv = _inputs(tree, keys, player, roots, trunk, rng)
    if variant == "unsafe" and not np.any(w * opponent_reach > 0):
      continue
    states = gadgets.node_states(tree, roots)
    subgame = gadgets.Subgame(tree.game, player, [states[n] for n in roots.tolist()], w,
                              {keys.key_string(k): v for k, v in cbv.items()},
                              opponent_reach=opponent_reach)
    gadget = gadgets.make_gadget(subgame, variant)
    reference = cfr.CFRPlusSolver(gadget.tree())
    view = gadget_views.GadgetView(tree, keys, player, roots, w, cbv, variant,
                                   opponent_reach)
    # The same layout: node for node, infoset for infoset.
    assert view.tree.num_nodes == gadget.tree().num_nodes
    assert list(view.tree.infoset_keys) == gadget.tree().infoset_keys
    for _ in range(ITERATIONS):
      reference.evaluate_and_update_policy()
    view.run(ITERATIONS)
    average = reference.average_strategy_slots()
    np.testing.assert_allclose(view.average_slots(), average, rtol=0, atol=1e-9)
    gadget_value = gadget.tree().node_values(average)[0]
    if player == 0:
      gadget_value = -gadget_value
    assert view.gadget_value() == pytest.approx(gadget_value, abs=1e-9)
    combined = gadgets.combine(tree, trunk, gadget, average)
    np.testing.assert_allclose(view.combine(trunk), combined, rtol=0, atol=1e-9)
    before = {keys.key_string(k): v for k, v in cbv.items()}
    if variant == "unsafe":  # the gadget's roots only
      inside = w * opponent_reach > 0
      inside_states = [states[n] for n in roots[inside].tolist()]
      subgame = gadgets.Subgame(
          tree.game, player, inside_states, w[inside],
          {s.information_state_string(1 - player): 0.0 for s in inside_states},
          opponent_reach=opponent_reach[inside])
    margin = gadgets.subgame_margin(tree, subgame, combined, before=before)
    assert view.subgame_margin() == pytest.approx(margin, abs=1e-9)
    compared += 1
  assert compared > 0


def test_bad_inputs_are_refused():
  tree = compiled_tree.cached_tree(pyspiel.load_game("kuhn_poker"))
  keys = compiled_subgames.StateKeys.build(tree)
  trace = compiled_subgames.trace_subgames(tree, keys, 0, [0])
  roots = trace.next_roots[:2]
  with pytest.raises(ValueError, match="variant must be one of"):
    gadget_views.GadgetView(tree, keys, 0, roots, [1, 1], {}, "safe")
  with pytest.raises(ValueError, match="lacks values"):
    gadget_views.GadgetView(tree, keys, 0, roots, [1, 1], {}, "resolve")
  with pytest.raises(ValueError, match="w sums to 0"):
    gadget_views.GadgetView(tree, keys, 0, roots, [0, 0], {}, "resolve")
  with pytest.raises(ValueError, match="one entry per root"):
    gadget_views.GadgetView(tree, keys, 0, roots, [1], {}, "resolve")
