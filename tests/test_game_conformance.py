"""Checks every ggp_cr game against OpenSpiel's own machinery.

Each small configuration must pass `pyspiel.random_sim_test` with serialization, keep
clones independent, run OpenSpiel's C++ CFR, outcome-sampling MCCFR and exploitability,
OpenSpiel's python exploitability, and an `rl_environment` episode with tensors.
"""

import numpy as np
import pytest

import pyspiel
from open_spiel.python import policy
from open_spiel.python import rl_environment
from open_spiel.python.algorithms import exploitability

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.tree import compiled_tree

# Small enough for exhaustive checks in seconds.
SMALL_GAMES = [
    "python_rps",
    "python_rps(n=5)",
    "python_ii_goofspiel(num_cards=3)",
    "python_ii_goofspiel(num_cards=3,points_order=random,returns_type=point_difference)",
    "python_princess_monster(max_turns=2)",
    "python_princess_monster(max_turns=3,rows=2,cols=3)",
    "python_leduc(max_raises=1,cards_per_suit=2)",
    "python_leduc(max_raises=1,cards_per_suit=2,fold_only_facing_bet=true,deal_from_deck=true)",
]

# Games whose trees are too big for exhaustive checks but fine for playouts.
PLAYOUT_GAMES = SMALL_GAMES + [
    "python_latent_ttt",
    "python_ii_goofspiel",
    "python_leduc",
    "python_princess_monster",
]


@pytest.mark.parametrize("game_string", PLAYOUT_GAMES)
def test_random_sim_with_serialization(game_string):
  game = pyspiel.load_game(game_string)
  pyspiel.random_sim_test(game, num_sims=200, serialize=True, verbose=False)


@pytest.mark.parametrize("game_string", PLAYOUT_GAMES)
def test_clones_do_not_alias(game_string):
  game = pyspiel.load_game(game_string)
  rng = np.random.default_rng(0)
  for _ in range(20):
    state = game.new_initial_state()
    while not state.is_terminal():
      before = str(state)
      clone = state.clone()
      if state.is_chance_node():
        outcomes, probs = zip(*state.chance_outcomes())
        action = outcomes[rng.choice(len(outcomes), p=probs)]
      else:
        action = rng.choice(state.legal_actions())
      clone.apply_action(action)
      assert str(state) == before, "applying an action to a clone changed the original"
      state.apply_action(action)
      assert str(state) == str(clone)


@pytest.mark.parametrize("game_string", SMALL_GAMES)
def test_openspiel_solvers_run(game_string):
  game = pyspiel.load_game(game_string)
  solver = pyspiel.CFRSolver(game)
  for _ in range(5):
    solver.evaluate_and_update_policy()
  # OpenSpiel's C++ CFR and its exploitability agree with ggp_cr's compiled CFR and
  # best response (OpenSpiel's exploitability, NashConv / 2, on both sides).
  tree = compiled_tree.cached_tree(game)
  ours = cfr.CFRSolver(tree)
  for _ in range(5):
    ours.evaluate_and_update_policy()
  cpp_value = pyspiel.exploitability(game, solver.average_policy())
  assert cpp_value == pytest.approx(
      exact_br.exploitability_slots(tree, ours.average_strategy_slots()), abs=1e-9)
  mccfr = pyspiel.OutcomeSamplingMCCFRSolver(game, seed=1)
  for _ in range(50):
    mccfr.run_iteration()
  average = policy.tabular_policy_from_callable(
      game, lambda state: dict(mccfr.average_policy().get_state_policy(state)))
  assert pyspiel.exploitability(game, mccfr.average_policy()) == pytest.approx(
      exact_br.exploitability_slots(tree, tree.policy_to_slots(average)),
      abs=1e-9)
  py_value = exploitability.exploitability(game, policy.UniformRandomPolicy(game))
  assert py_value == pytest.approx(
      exact_br.exploitability_slots(tree, tree.uniform_slots()), abs=1e-9)


@pytest.mark.parametrize("game_string", PLAYOUT_GAMES)
def test_rl_environment_episode(game_string):
  env = rl_environment.Environment(
      game_string, chance_event_sampler=rl_environment.ChanceEventSampler(seed=3))
  spec = env.observation_spec()
  time_step = env.reset()
  rng = np.random.default_rng(3)
  while not time_step.last():
    player = time_step.observations["current_player"]
    info_state = time_step.observations["info_state"][player]
    assert len(info_state) == spec["info_state"][0]
    legal = time_step.observations["legal_actions"][player]
    time_step = env.step([rng.choice(legal)])
  assert sum(time_step.rewards) == pytest.approx(0.0)


@pytest.mark.parametrize("game_string", PLAYOUT_GAMES)
def test_observation_kinds(game_string):
  """Info state, observation and public observation strings and tensors all work."""
  game = pyspiel.load_game(game_string)
  public = game.make_py_observer(
      pyspiel.IIGObservationType(
          public_info=True, perfect_recall=False,
          private_info=pyspiel.PrivateInfoType.NONE))
  state = game.new_initial_state()
  rng = np.random.default_rng(5)
  while not state.is_terminal():
    if not state.is_chance_node():
      player = state.current_player()
      assert state.information_state_string(player)
      assert len(state.information_state_tensor(player)) == (
          game.information_state_tensor_size())
      assert len(state.observation_tensor(player)) == game.observation_tensor_size()
      state.observation_string(player)
      public.set_from(state, player)
      assert public.string_from(state, 0) == public.string_from(state, 1)
      action = rng.choice(state.legal_actions())
    else:
      outcomes, probs = zip(*state.chance_outcomes())
      action = outcomes[rng.choice(len(outcomes), p=probs)]
    assert state.action_to_string(state.current_player(), action)
    state.apply_action(action)
