"""Tests of the first action's strategy ([S] §6, Figures 6.2-6.3)."""

import numpy as np
from open_spiel.python.bots import uniform_random
import pyspiel
import pytest

import ggp_cr.games  # pylint: disable=unused-import
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.bots import online_solving
from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.evaluation import first_action
from ggp_cr.algorithms.resolving import continual_resolving
from ggp_cr.algorithms.tree import compiled_tree

GAME = "python_leduc(max_raises=1,cards_per_suit=3)"


def test_continual_resolving_first_action_is_its_whole_game_cfr_plus():
  """Compiled continual resolving with CFR+ solves the whole game at its first
  decision (pre-play + move iterations): its first action strategy is CFR+'s average
  after as many iterations, to 1e-9."""
  game = pyspiel.load_game(GAME)
  tree = compiled_tree.cached_tree(game)
  nash_conv, _ = first_action.first_action_evaluation(
      tree, lambda p, seed: continual_resolving.ContinualResolvingBot(
          game, p, preplay="4it", move="3it", solver="cfr+", seed=seed), [0, 1])
  solver = cfr.CFRPlusSolver(tree)
  for _ in range(7):
    solver.evaluate_and_update_policy()
  expected = exact_br.nash_conv_slots(tree, solver.average_strategy_slots()).nash_conv
  assert nash_conv == pytest.approx(expected, abs=1e-9)


def test_online_solving_first_action_reads_the_solvers_sums():
  """An online solving bot's first action strategy is its solver's normalised
  average-strategy sums at each of its information sets (uniform where it has none)."""
  game = pyspiel.load_game(GAME)
  tree = compiled_tree.cached_tree(game)
  bot = online_solving.OnlineSolvingBot(game, 0, preplay="50it", move="50it", seed=1)
  _, state = next(iter(tree.infoset_states([0])))
  bot.step_with_policy(state)
  slots = first_action.first_action_slots(bot, tree, 0)
  solver = bot.decision_solver()
  checked = 0
  for infoset in np.flatnonzero(tree.infoset_player == 0).tolist():
    offset = int(tree.infoset_action_offset[infoset])
    count = int(tree.infoset_num_actions[infoset])
    sums = solver.average_sums(tree, infoset)
    row = np.array([sums.get(a, 0.0) for a in
                    tree.infoset_actions[offset:offset + count].tolist()])
    expected = row / row.sum() if row.sum() > 0 else np.full(count, 1.0 / count)
    np.testing.assert_allclose(slots[offset:offset + count], expected, atol=1e-12)
    checked += row.sum() > 0
  assert checked > 0
  player1 = tree.slot_infoset[tree.infoset_player[tree.slot_infoset] == 1]
  assert len(player1) and np.allclose(
      slots[tree.infoset_player[tree.slot_infoset] == 1],
      tree.uniform_slots()[tree.infoset_player[tree.slot_infoset] == 1])


def test_a_bot_without_a_solver_is_refused():
  game = pyspiel.load_game("kuhn_poker")
  tree = compiled_tree.cached_tree(game)
  with pytest.raises(ValueError, match="no solver with a whole-game strategy"):
    first_action.first_action_evaluation(
        tree, lambda p, seed: uniform_random.UniformRandomBot(p, np.random.RandomState(
            seed)), [0, 1])
