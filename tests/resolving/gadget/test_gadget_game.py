"""Tests of the resolving gadgets (ggp_cr/algorithms/gadget_game.py).

Exploitability here is OpenSpiel's (NashConv / 2). Gadgets are solved with our CFR+
on their compiled trees; every bound that involves an approximate gadget solution
carries the gadget's own NashConv as its tolerance:
- resolve: Σ_I max(0, CBV_after(I) − CBV(I)) <= NashConv(gadget), so the combined
  strategy's exploitability grows by at most NashConv(gadget) / 2 (Burch et al. 2014)
  and its margin is >= −NashConv(gadget);
- max_margin: o's best-response value in the gadget is exactly −SM ([H] Lemma 7).
"""

import numpy as np
import pytest

import pyspiel
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import cfr as openspiel_cfr
from open_spiel.python.algorithms import exploitability as openspiel_exploitability

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.resolving.exact import trunk_inputs
from ggp_cr.algorithms.resolving.gadget import gadget_game
from ggp_cr.algorithms.tree import compiled_tree

KUHN_SUBGAMES = ([0, 1, 0], [0, 1, 1], [0, 1, 0, 1])


def _solve(tree, iterations):
  solver = cfr.CFRPlusSolver(tree)
  for _ in range(iterations):
    solver.evaluate_and_update_policy()
  return solver.average_strategy_slots()


def _solve_gadget(gadget, iterations):
  slots = _solve(gadget.tree(), iterations)
  return slots, exact_br.nash_conv_slots(gadget.tree(), slots).nash_conv


@pytest.fixture(scope="module")
def kuhn():
  tree = compiled_tree.compile_game(pyspiel.load_game("kuhn_poker"))
  return tree, _solve(tree, 2000)


@pytest.fixture(scope="module")
def leduc():
  """Leduc with a far-from-equilibrium trunk (10 CFR+ iterations)."""
  tree = compiled_tree.compile_game(pyspiel.load_game("leduc_poker"))
  return tree, _solve(tree, 10)


@pytest.fixture(scope="module")
def rps():
  tree = compiled_tree.compile_game(pyspiel.load_game("python_rps"))
  return tree, tree.uniform_slots()


def _pure(tree, player, key, action):
  """A strategy in slot form putting all of `key`'s weight on `action`."""
  slots = tree.uniform_slots()
  infoset = tree.infoset_index(player, key)
  offset = tree.infoset_action_offset[infoset]
  actions = tree.infoset_actions[offset:offset + tree.infoset_num_actions[infoset]]
  slots[offset:offset + len(actions)] = (actions == action).astype(float)
  return slots


def test_rps_resolve_is_safe_where_unsafe_resolving_is_not(rps):
  """[H] §F.2: against the uniform trunk, 'always rock' solves the unsafe gadget but
  is exploitable; the resolve gadget rejects it and recovers an equilibrium."""
  tree, trunk = rps
  subgame = trunk_inputs.subgame_from_trunk(tree, trunk, [0])
  assert subgame.player == 1
  assert subgame.root_histories == ((0,), (1,), (2,))
  np.testing.assert_allclose(subgame.reach, 1.0)
  assert subgame.opponent_values == pytest.approx(dict.fromkeys(subgame.infosets, 0.0))
  unsafe = gadget_game.make_gadget(subgame, "unsafe")
  rock = _pure(unsafe.tree(), 1, "p1", 0)
  rock_nash_conv = exact_br.nash_conv_slots(unsafe.tree(), rock).nash_conv
  assert rock_nash_conv == pytest.approx(0)
  combined_rock = trunk_inputs.combine(tree, trunk, unsafe, rock)
  assert exact_br.exploitability_slots(tree, combined_rock) == pytest.approx(0.5)
  assert trunk_inputs.subgame_margin(tree, subgame, combined_rock) == pytest.approx(-1.0)

  resolve = gadget_game.make_gadget(subgame, "resolve")
  rock_in_resolve = _pure(resolve.tree(), 1, "p1", 0)
  assert exact_br.nash_conv_slots(resolve.tree(), rock_in_resolve).nash_conv > 0.5
  slots, nash_conv = _solve_gadget(resolve, 1000)
  combined = trunk_inputs.combine(tree, trunk, resolve, slots)
  assert exact_br.exploitability_slots(tree, combined) <= nash_conv / 2 + 1e-12
  assert trunk_inputs.subgame_margin(tree, subgame, combined) >= -nash_conv


@pytest.mark.parametrize("game_name", ["kuhn", "leduc"])
def test_value_convention(game_name, request):
  """Unnormalised CBVs: with p's trunk strategy, o's best response is worth Σ_I CBV(I)
  in the resolve gadget and 0 in the max-margin gadget; Terminate pays K·CBV/k_I."""
  tree, trunk = request.getfixturevalue(game_name)
  history = [0, 1, 1] if game_name == "kuhn" else [0, 2, 1, 2]
  subgame = trunk_inputs.subgame_from_trunk(tree, trunk, history)
  exact = trunk_inputs.opponent_root_values(tree, trunk, subgame)
  assert subgame.opponent_values == pytest.approx(exact)
  for key, value in subgame.normalised_values().items():
    assert value * subgame.infoset_reach[key] == pytest.approx(exact[key])
  o = subgame.opponent

  resolve = gadget_game.make_gadget(subgame, "resolve")
  trunk_in_resolve = trunk_inputs.gadget_slots_from_original(resolve, tree, trunk)
  values = exact_br.best_response_values(resolve.tree(), trunk_in_resolve)
  assert values[o] == pytest.approx(sum(exact.values()), abs=1e-12)
  state = resolve.new_initial_state()
  root, _ = state.chance_outcomes()[0]
  state.apply_action(root)
  assert state.current_player() == o
  state.apply_action(resolve.terminate_action)
  key = subgame.opponent_keys[root]
  assert state.returns()[o] == pytest.approx(
      subgame.total_reach * exact[key] / subgame.infoset_reach[key])
  assert state.returns()[subgame.player] == -state.returns()[o]

  max_margin = gadget_game.make_gadget(subgame, "max_margin")
  trunk_in_margin = trunk_inputs.gadget_slots_from_original(max_margin, tree, trunk)
  values = exact_br.best_response_values(max_margin.tree(), trunk_in_margin)
  assert values[o] == pytest.approx(0, abs=1e-12)


def test_max_margin_best_response_is_minus_the_margin(leduc):
  """[H] Lemma 7: o's value of choosing I is CBV_after(I) − CBV(I), so o's best
  response in the max-margin gadget is worth exactly −SM, for any strategy of p."""
  tree, trunk = leduc
  subgame = trunk_inputs.subgame_from_trunk(tree, trunk, [0, 2, 1])
  gadget = gadget_game.make_gadget(subgame, "max_margin")
  for iterations in (1, 7, 50):
    slots, _ = _solve_gadget(gadget, iterations)
    combined = trunk_inputs.combine(tree, trunk, gadget, slots)
    margin = trunk_inputs.subgame_margin(tree, subgame, combined)
    value = exact_br.best_response_values(gadget.tree(), slots)[subgame.opponent]
    assert value == pytest.approx(-margin, abs=1e-12)


@pytest.mark.parametrize("history", KUHN_SUBGAMES)
@pytest.mark.parametrize("variant", ["resolve", "max_margin"])
def test_kuhn_resolving_an_equilibrium_keeps_an_equilibrium(kuhn, history, variant):
  tree, trunk = kuhn
  trunk_exploitability = exact_br.exploitability_slots(tree, trunk)
  assert trunk_exploitability < 1e-4
  subgame = trunk_inputs.subgame_from_trunk(tree, trunk, history)
  gadget = gadget_game.make_gadget(subgame, variant)
  slots, nash_conv = _solve_gadget(gadget, 2000)
  assert nash_conv < 1e-3
  combined = trunk_inputs.combine(tree, trunk, gadget, slots)
  bound = nash_conv / 2 * (1 if variant == "resolve" else len(subgame.infosets))
  assert exact_br.exploitability_slots(tree, combined) <= (
      trunk_exploitability + bound + 1e-12)


@pytest.mark.parametrize("history,by", [([0, 2, 1], "augmented"),
                                        ([0, 2, 2], "augmented"),
                                        ([0, 2, 1, 2], "augmented"),
                                        ([3, 1, 2, 1, 4], "public")])
def test_leduc_resolving_with_exact_values_never_hurts(leduc, history, by):
  """Burch et al. 2014, Theorem 1 ([H] Theorem 4), up to the gadget's NashConv; the
  max-margin gadget keeps a margin at least the resolve gadget's ([H] §I.3)."""
  tree, trunk = leduc
  trunk_exploitability = exact_br.exploitability_slots(tree, trunk)
  subgame = trunk_inputs.subgame_from_trunk(tree, trunk, history, by=by)
  resolve = gadget_game.make_gadget(subgame, "resolve")
  slots, nash_conv = _solve_gadget(resolve, 300)
  combined = trunk_inputs.combine(tree, trunk, resolve, slots)
  assert exact_br.exploitability_slots(tree, combined) <= (
      trunk_exploitability + nash_conv / 2 + 1e-12)
  resolve_margin = trunk_inputs.subgame_margin(tree, subgame, combined)
  assert resolve_margin >= -nash_conv
  max_margin = gadget_game.make_gadget(subgame, "max_margin")
  slots, nash_conv = _solve_gadget(max_margin, 300)
  margin = trunk_inputs.subgame_margin(tree, subgame,
                                  trunk_inputs.combine(tree, trunk, max_margin, slots))
  assert margin >= resolve_margin - nash_conv
  assert margin > 0


def test_unsafe_resolving_can_lose_margin(kuhn):
  """Solved unsafe gadgets ignore o's alternatives: facing a bet in Kuhn, the
  equilibrium CFR+ finds is exploitable and its margin negative."""
  tree, trunk = kuhn
  subgame = trunk_inputs.subgame_from_trunk(tree, trunk, [0, 1, 1])
  unsafe = gadget_game.make_gadget(subgame, "unsafe")
  slots, nash_conv = _solve_gadget(unsafe, 2000)
  assert nash_conv < 1e-3
  combined = trunk_inputs.combine(tree, trunk, unsafe, slots)
  assert trunk_inputs.subgame_margin(tree, subgame, combined) < -0.01
  assert exact_br.exploitability_slots(tree, combined) > (
      exact_br.exploitability_slots(tree, trunk) + 0.01)


@pytest.mark.parametrize("variant", gadget_game.VARIANTS)
def test_gadgets_work_with_openspiel(kuhn, variant):
  tree, trunk = kuhn
  subgame = trunk_inputs.subgame_from_trunk(tree, trunk, [0, 1, 0])
  gadget = gadget_game.make_gadget(subgame, variant)
  pyspiel.random_sim_test(gadget, num_sims=20, serialize=False, verbose=False)
  solver = openspiel_cfr.CFRPlusSolver(gadget)
  for _ in range(10):
    solver.evaluate_and_update_policy()
  average = solver.average_policy()
  assert openspiel_exploitability.exploitability(gadget, average) == pytest.approx(
      exact_br.exploitability_slots(gadget.tree(),
                                         gadget.tree().policy_to_slots(average)))
  cpp_solver = pyspiel.CFRSolver(gadget)
  for _ in range(10):
    cpp_solver.evaluate_and_update_policy()
  cpp_average = cpp_solver.average_policy()
  assert pyspiel.exploitability(gadget, cpp_average) == pytest.approx(
      exact_br.exploitability_slots(gadget.tree(),
                                         gadget.tree().policy_to_slots(cpp_average)))
  # Policies from OpenSpiel's solvers map back onto the original game.
  strategy = trunk_inputs.resolved_strategy(gadget, average)
  for key in strategy:
    assert tree.infoset_index(subgame.player, key) >= 0


def test_gadgets_on_python_games():
  game = pyspiel.load_game("python_leduc(max_raises=1,cards_per_suit=2)")
  tree = compiled_tree.compile_game(game)
  trunk = _solve(tree, 5)
  state = game.new_initial_state()
  for action in (0, 1, 1):
    state.apply_action(action)
  for by in ("augmented", "public"):
    subgame = trunk_inputs.subgame_from_trunk(tree, trunk, state, by=by)
    for variant in gadget_game.VARIANTS:
      gadget = gadget_game.make_gadget(subgame, variant)
      pyspiel.random_sim_test(gadget, num_sims=10, serialize=False, verbose=False)
      combined = trunk_inputs.combine(tree, trunk, gadget, _solve(gadget.tree(), 20))
      # A strategy, equal to the trunk except at the resolving player's information
      # sets (some of which the gadget's solve changed).
      np.testing.assert_allclose(
          np.add.reduceat(combined, tree.infoset_action_offset), 1.0, atol=1e-12)
      changed = np.unique(tree.slot_infoset[np.abs(combined - trunk) > 1e-12])
      assert len(changed) > 0
      assert np.all(tree.infoset_player[changed] == subgame.player)


def test_gadget_strings_keep_the_original_ones(kuhn):
  tree, trunk = kuhn
  subgame = trunk_inputs.subgame_from_trunk(tree, trunk, [0, 1, 0])
  gadget = gadget_game.make_gadget(subgame, "resolve")
  gadget_tree = gadget.tree()
  original_keys = set(tree.infoset_keys)
  for key, player in zip(gadget_tree.infoset_keys, gadget_tree.infoset_player):
    if key.startswith(gadget_game.GADGET_PREFIX):
      assert player == subgame.opponent
      assert key.split(" at ")[-1] in subgame.infosets
    else:
      assert key in original_keys
  assert sorted(trunk_inputs.resolved_strategy(gadget, gadget_tree.uniform_slots())) == [
      "0p", "1p", "2p"]
  # combine changes p's subgame infosets only.
  slots = _pure(gadget_tree, 1, "0p", 1)
  combined = trunk_inputs.combine(tree, trunk, gadget, slots)
  changed = tree.slot_infoset[np.flatnonzero(~np.isclose(combined, trunk))]
  assert set(tree.infoset_player[changed]) == {1}
  assert {tree.infoset_keys[i] for i in changed} <= {"0p", "1p", "2p"}
  tabular = tree.slots_to_tabular_policy(combined)
  assert isinstance(tabular, policy_lib.TabularPolicy)
  assert tabular.policy_for_key("0p")[1] == pytest.approx(1.0)


def test_subgame_roots(kuhn, leduc):
  tree, _ = kuhn
  for history in KUHN_SUBGAMES:
    augmented = trunk_inputs.subgame_root_nodes(tree, history)
    public = trunk_inputs.subgame_root_nodes(tree, history, by="public")
    np.testing.assert_array_equal(augmented, public)
    assert len(augmented) == 6
  # After a chance node there is no new root: the whole game is the subgame.
  np.testing.assert_array_equal(trunk_inputs.subgame_root_nodes(tree, [0, 1]), [0])
  tree, _ = leduc
  round_two = [3, 1, 2, 1, 4]   # raise, call, public card: player 0 acts
  public = trunk_inputs.subgame_root_nodes(tree, round_two, by="public")
  assert len(public) == 20 and set(tree.node_player[public]) == {0}
  # Under augmented information sets the round-2 decision belongs to the subgame
  # rooted at player 1's first decision, since only chance moved in between ([S] §2).
  augmented = trunk_inputs.subgame_root_nodes(tree, round_two)
  np.testing.assert_array_equal(augmented, trunk_inputs.subgame_root_nodes(tree, [3, 1, 2]))


def test_noise(kuhn):
  tree, trunk = kuhn
  subgame = trunk_inputs.subgame_from_trunk(tree, trunk, [0, 1, 0])
  rng = np.random.default_rng(0)
  assert subgame.with_noise(0.0, rng).opponent_values == subgame.opponent_values
  noisy = subgame.with_noise(0.5, rng)
  assert noisy.opponent_values != subgame.opponent_values
  assert noisy.fingerprint() != subgame.fingerprint()
  with pytest.raises(ValueError, match="sigma"):
    subgame.with_noise(-1.0, rng)


def test_bad_input(kuhn):
  tree, trunk = kuhn
  game = tree.game
  roots = [[0, 1, 0], [0, 2, 0]]
  values = {"0p": 0.0}
  with pytest.raises(ValueError, match="non-empty"):
    gadget_game.Subgame(game, 1, [], [], {})
  with pytest.raises(ValueError, match="player must be 0 or 1"):
    gadget_game.Subgame(game, 2, roots, [0.5, 0.5], values)
  with pytest.raises(ValueError, match="one entry per root"):
    gadget_game.Subgame(game, 1, roots, [0.5], values)
  with pytest.raises(ValueError, match=">= 0"):
    gadget_game.Subgame(game, 1, roots, [0.5, -0.5], values)
  with pytest.raises(ValueError, match="nothing to resolve"):
    gadget_game.Subgame(game, 1, roots, [0.0, 0.0], values)
  # Values keyed by the resolving player's own information states.
  with pytest.raises(ValueError, match="not player 0's information states"):
    gadget_game.Subgame(game, 1, roots, [0.5, 0.5], {"1p": 0.0, "0p": 0.0})
  with pytest.raises(ValueError, match="lacks values"):
    gadget_game.Subgame(game, 1, roots, [0.5, 0.5], {})
  with pytest.raises(ValueError, match="twice"):
    gadget_game.Subgame(game, 1, [[0, 1, 0], [0, 1, 0]], [0.5, 0.5], values)
  with pytest.raises(ValueError, match="terminal"):
    gadget_game.Subgame(game, 1, [[0, 1, 0, 0]], [1.0], {})
  with pytest.raises(ValueError, match="not legal"):
    gadget_game.Subgame(game, 1, [[0, 0]], [1.0], {})
  with pytest.raises(ValueError, match="not of"):
    other = pyspiel.load_game("leduc_poker").new_initial_state()
    gadget_game.Subgame(game, 1, [other], [1.0], {})
  with pytest.raises(ValueError, match="simultaneous|not sequential"):
    gadget_game.Subgame(pyspiel.load_game("matrix_rps"), 1, [[]], [1.0], {})
  subgame = gadget_game.Subgame(game, 1, roots, [0.5, 0.5], values)
  with pytest.raises(ValueError, match="variant must be one of"):
    gadget_game.make_gadget(subgame, "safe")
  with pytest.raises(ValueError, match="opponent_reach"):
    gadget_game.make_gadget(subgame, "unsafe")
  with pytest.raises(ValueError, match="compiled tree is of"):
    leduc_tree = compiled_tree.compile_game(pyspiel.load_game("leduc_poker"))
    trunk_inputs.combine(leduc_tree, leduc_tree.uniform_slots(),
                    gadget_game.make_gadget(subgame), np.array([]))
  with pytest.raises(ValueError, match="values must be"):
    trunk_inputs.subgame_from_trunk(tree, trunk, [0, 1, 0], values="exact")
  with pytest.raises(ValueError, match="by must be"):
    trunk_inputs.subgame_root_nodes(tree, [0, 1, 0], by="depth")
  with pytest.raises(ValueError, match="pass player"):
    trunk_inputs.subgame_from_trunk(tree, trunk, [0])
  with pytest.raises(ValueError, match="terminal"):
    trunk_inputs.subgame_root_nodes(tree, [0, 1, 0, 0])
