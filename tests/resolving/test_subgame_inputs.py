"""Continual resolving's subgames and their inputs on both paths: the subgame map,
the full-width and sampled estimates, and the fallbacks when a subgame cannot be
entered ([S] ch. 2, §3.4.1)."""


import numpy as np
import pytest

import pyspiel
from open_spiel.python.algorithms import exploitability as openspiel_exploitability

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.evaluation import evaluators
from ggp_cr.algorithms.resolving import continual_resolving as cr
from ggp_cr.algorithms.resolving import settings
from ggp_cr.algorithms.resolving.exact import trunk_inputs
from ggp_cr.algorithms.resolving.live import live_resolver
from ggp_cr.algorithms.resolving.live import live_problem
from ggp_cr.algorithms.resolving.live import live_trace
from ggp_cr.algorithms.tree import compiled_tree
from test_continual_resolving import SMALL_LEDUC


# --- Subgames and estimates -----------------------------------------------------------


@pytest.mark.parametrize("game_string", [
    "kuhn_poker", SMALL_LEDUC, "python_princess_monster(max_turns=3)"])
def test_subgame_map_gives_the_augmented_closure_roots(game_string):
  """In these games (no observation refines a non-acting player's information state)
  the thesis's merged root sets are the roots of the smallest subgame closed under
  augmented information sets (trunk_inputs.subgame_root_nodes)."""
  game = pyspiel.load_game(game_string)
  tree = compiled_tree.cached_tree(game)
  compared = 0
  for player in (0, 1):
    trace = live_trace.Trace(live_problem.Problem(game, player))
    for key in trace.subgame_map.own_keys():
      group = trace.subgame_map.roots(key)
      ours = sorted(tuple(trace.root_state(r).history()) for r in group)
      some_root = trace.root_state(trace.subgame_map.own_roots(key)[0])
      nodes = trunk_inputs.subgame_root_nodes(tree, some_root.history())
      states = trunk_inputs.node_states(tree, nodes)
      assert ours == sorted(tuple(states[n].history()) for n in nodes), key
      compared += 1
  assert compared > 0


def _expected_utility(state, policy_of, player):
  if state.is_terminal():
    return state.returns()[player]
  if state.is_chance_node():
    return sum(p * _expected_utility(state.child(a), policy_of, player)
               for a, p in state.chance_outcomes())
  probabilities = policy_of(state)
  return sum(probabilities[a] * _expected_utility(state.child(a), policy_of, player)
             for a in state.legal_actions())


def test_full_width_estimates_are_self_play_means_over_iterations():
  """Kuhn, the whole game solved by CFR+ as player 0: w(r) and CBV_norm(I) at the next
  roots equal the means over iterations of the exact self-play quantities."""
  game = pyspiel.load_game("kuhn_poker")
  tree = compiled_tree.cached_tree(game)
  config = settings.ResolverConfig(solver="cfr+")
  problem = live_problem.Problem(game, 0)
  resolver = live_resolver.Resolver(problem, config, seed=0)
  reference = cfr.CFRPlusSolver(tree)
  trace = resolver.trace
  iterations = 7
  reach_sum = np.zeros(trace.num_roots)
  value_sum = np.zeros(trace.num_roots)
  for _ in range(iterations):
    slots = reference.current_strategy_slots()
    reference.evaluate_and_update_policy()
    resolver.solver.iteration()

    def policy_of(state, slots=slots):
      infoset = tree.infoset_index(state.current_player(),
                                   state.information_state_string())
      offset = int(tree.infoset_action_offset[infoset])
      actions = tree.infoset_actions[offset:offset + len(state.legal_actions())]
      return dict(zip(actions.tolist(), slots[offset:offset + len(actions)]))

    for root_id in range(trace.num_roots):
      root = trace.root_state(root_id)
      cards, actions = root.history()[:2], root.history()[2:]
      w = 1.0 / 6.0
      state = game.new_initial_state()
      state.apply_action(cards[0])
      state.apply_action(cards[1])
      for action in actions:
        if state.current_player() == 0:
          w *= policy_of(state)[action]
        state.apply_action(action)
      reach_sum[root_id] += w
      value_sum[root_id] += w * _expected_utility(root, policy_of, 1)
  reach, _, values, weights = resolver.solver.estimates(range(trace.num_roots))
  np.testing.assert_allclose(reach, reach_sum / iterations, atol=1e-12)
  np.testing.assert_allclose(values / weights, value_sum / reach_sum, atol=1e-12)


def test_sampling_reach_estimates_come_from_the_average_strategy():
  game = pyspiel.load_game("kuhn_poker")
  problem = live_problem.Problem(game, 0)
  resolver = live_resolver.Resolver(problem, settings.ResolverConfig(), seed=1)
  for _ in range(50):
    resolver.solver.iteration()
  trace = resolver.trace
  reach, _, values, weights = resolver.solver.estimates(range(trace.num_roots))
  for root_id in range(trace.num_roots):
    root = trace.root_state(root_id)
    card = root.history()[0]
    key = f"{card}"  # Kuhn's information state of player 0 before acting: its card.
    own = resolver.probabilities(key, [0, 1])
    assert reach[root_id] == pytest.approx(own[0] / 6.0)  # Check (pass), then bet.
  assert np.all(weights > 0) and np.all(np.abs(values / weights) <= 2.0)


# --- Fallbacks ------------------------------------------------------------------------


def _kuhn_check_bet(card0, card1):
  game = pyspiel.load_game("kuhn_poker")
  state = game.new_initial_state()
  for action in (card0, card1, 0, 1):
    state.apply_action(action)
  return game, state


def test_zero_own_reach_keeps_the_current_subgame():
  game, state = _kuhn_check_bet(2, 0)
  bot = cr.ContinualResolvingBot(game, 0, preplay="30it", move="10it", seed=0,
                                 path="live")
  first = game.new_initial_state()
  first.apply_action(2)
  first.apply_action(0)
  bot.step(first)
  bot.resolver.solver.table["2"].cumulative[:] = [0.0, 1.0]  # Never checks with a K.
  bot.step(state)
  assert bot.decisions[-1]["fallback"].startswith("kept the current subgame")
  assert not bot.decisions[-1]["new_subgame"]


def test_unsafe_gadget_after_a_zero_probability_opponent_move_becomes_resolve():
  game, state = _kuhn_check_bet(1, 0)
  bot = cr.ContinualResolvingBot(game, 0, preplay="30it", move="10it", variant="unsafe",
                                 path="live", seed=0)
  first = game.new_initial_state()
  first.apply_action(1)
  first.apply_action(0)
  bot.step(first)
  table = bot.resolver.solver.table
  for card in "012":
    key = f"{card}p"  # Player 1 after a check: never bets, in the trunk.
    if key in table:
      table[key].cumulative[:] = [1.0, 0.0]
  bot.step(state)
  assert bot.decisions[-1]["variant"] == "resolve"
  assert "zero joint reach" in bot.decisions[-1]["fallback"]


class _RecordedBot(cr.ContinualResolvingBot):
  """Keeps every copy made, so that a test can read all decisions of a traversal."""
  copies = []

  def clone(self):
    other = super().clone()
    _RecordedBot.copies.append(other)
    return other


def test_every_history_works_with_tiny_budgets_and_unsampled_values():
  """Small Leduc, every information set of both seats with 2 iterations a move: the
  opponent reached information sets the solves never sampled (fallback values), and
  no decision fails (each information set's copy decides: no decision sharing)."""
  game = pyspiel.load_game(SMALL_LEDUC)
  _RecordedBot.copies = []
  evaluation = evaluators.traversing_evaluation(
      game, lambda g, p, seed, budget: _RecordedBot(g, p, preplay="2it", move="2it",
                                                    seed=p), share_decisions=False)
  tree = compiled_tree.cached_tree(game)
  assert evaluation.decisions == tree.num_infosets
  assert evaluation.nash_conv == pytest.approx(
      openspiel_exploitability.nash_conv(game, evaluation.policy), abs=1e-9)
  records = [d for bot in _RecordedBot.copies for d in bot.decisions]
  assert sum(d.get("unsampled_opponent_infosets", 0) for d in records) > 0
  assert sum(d.get("roots", 0) > 0 for d in records) > tree.num_infosets // 2
