"""Tests of outcome-sampling MCCFR, live (outcome_sampling) and compiled (numba)."""

import numpy as np
from open_spiel.python.algorithms import exploitability as openspiel_exploitability
from open_spiel.python.algorithms import outcome_sampling_mccfr
import pyspiel
import pytest

import ggp_cr.games  # pylint: disable=unused-import
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.sampling import compiled_outcome_sampling
from ggp_cr.algorithms.sampling import outcome_sampling
from ggp_cr.algorithms.tree import compiled_tree

MC_CFR = dict(regret_matcher="drm(1,1)", exploration=0.7,
              cumulative_strategy_exponent=0.3)
VR_MCCFR = dict(MC_CFR, baseline="expavg(0.3)")
CONFIGS = [dict(), MC_CFR, VR_MCCFR]


def _exploitability(game, solver):
  tree = compiled_tree.cached_tree(game)
  return exact_br.exploitability_slots(tree,
                                            solver.average_policy().to_slots(tree))


def _play(game, actions):
  state = game.new_initial_state()
  for action in actions:
    state.apply_action(action)
  return state


@pytest.mark.parametrize("game_string,iterations", [
    ("kuhn_poker", 3000),
    ("python_ii_goofspiel(num_cards=3)", 1000),
    ("python_princess_monster(max_turns=2)", 1000),
    ("python_leduc(max_raises=1,cards_per_suit=2)", 3000),
])
@pytest.mark.parametrize("config", CONFIGS)
def test_exploitability_falls_well_below_uniform(game_string, iterations, config):
  game = pyspiel.load_game(game_string)
  tree = compiled_tree.cached_tree(game)
  uniform = exact_br.exploitability_slots(tree, tree.uniform_slots())
  solver = outcome_sampling.OutcomeSamplingSolver(game, seed=3, **config)
  for _ in range(iterations):
    solver.iteration()
  assert _exploitability(game, solver) < 0.5 * uniform


@pytest.mark.parametrize("config", CONFIGS)
def test_rps_stays_near_its_uniform_equilibrium(config):
  game = pyspiel.load_game("python_rps")
  solver = outcome_sampling.OutcomeSamplingSolver(game, seed=1, **config)
  for _ in range(1000):
    solver.iteration()
  assert _exploitability(game, solver) < 0.1


def test_average_policy_works_with_openspiel_exploitability():
  game = pyspiel.load_game("kuhn_poker")
  solver = outcome_sampling.OutcomeSamplingSolver(game, seed=0)
  for _ in range(500):
    solver.iteration()
  ours = _exploitability(game, solver)
  live = openspiel_exploitability.exploitability(game, solver.average_policy())
  tabular = openspiel_exploitability.exploitability(
      game, solver.average_policy().to_tabular())
  assert live == pytest.approx(ours, abs=1e-12)
  assert tabular == pytest.approx(ours, abs=1e-12)


def test_same_order_of_magnitude_as_openspiel_on_leduc():
  """Median over seeds at equal iterations (OpenSpiel's iteration is also one
  episode per player): plain OS, e = 0.6 like OpenSpiel, no incremental tree."""
  game = pyspiel.load_game("leduc_poker")
  iterations = 1000
  ours, theirs = [], []
  for seed in range(3):
    solver = outcome_sampling.OutcomeSamplingSolver(game, seed=seed, incremental=False)
    for _ in range(iterations):
      solver.iteration()
    ours.append(_exploitability(game, solver))
    np.random.seed(seed)
    reference = outcome_sampling_mccfr.OutcomeSamplingSolver(game)
    for _ in range(iterations):
      reference.iteration()
    theirs.append(exact_br.exploitability(game, reference.average_policy()))
  ratio = np.median(ours) / np.median(theirs)
  assert 1 / 3 < ratio < 3, (ours, theirs)


@pytest.mark.parametrize("config", [
    dict(), VR_MCCFR, dict(incremental=False, regret_matcher="rm+"),
    dict(VR_MCCFR, regret_matcher="erm(drm(1.5,0),0.05)", exploration=1.0),
])
def test_compiled_fast_path_samples_the_same_histories(config):
  game = pyspiel.load_game("kuhn_poker")
  tree = compiled_tree.cached_tree(game)
  live = outcome_sampling.OutcomeSamplingSolver(game, seed=11, **config)
  fast = compiled_outcome_sampling.CompiledOutcomeSamplingSolver(game, seed=11, **config)
  for _ in range(2000):
    live.iteration()
  fast.run(2000)
  assert live.nodes_touched == fast.nodes_touched
  for infoset, key in enumerate(tree.infoset_keys):
    data = live.table[key]
    slots = slice(tree.infoset_action_offset[infoset],
                  tree.infoset_action_offset[infoset] + tree.infoset_num_actions[infoset])
    np.testing.assert_allclose(data.regrets, fast.regrets[slots], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(data.cumulative, fast.cumulative[slots], rtol=1e-9,
                               atol=1e-9)
  assert _exploitability(game, live) == pytest.approx(
      exact_br.exploitability_slots(tree, fast.average_strategy_slots()), abs=1e-9)


def test_compiled_fast_path_targets_like_the_live_solver():
  """Player 0's information set '0pb' of Kuhn has no dead-end prefixes, so both
  targetings allow the same actions everywhere."""
  game = pyspiel.load_game("kuhn_poker")
  target = _play(game, [0, 1, 0, 1])
  assert target.information_state_string(0) == "0pb"
  config = dict(VR_MCCFR, targeting_probability=0.7)
  live = outcome_sampling.OutcomeSamplingSolver(game, seed=2, **config)
  fast = compiled_outcome_sampling.CompiledOutcomeSamplingSolver(game, seed=2, **config)
  live.set_target(target, 0)
  fast.set_target(target, 0)
  for _ in range(1000):
    live.iteration()
  fast.run(1000)
  assert live.nodes_touched == fast.nodes_touched
  tree = fast.tree
  infoset = tree.infoset_index(0, "0pb")
  offset = tree.infoset_action_offset[infoset]
  np.testing.assert_allclose(live.table["0pb"].cumulative,
                             fast.cumulative[offset:offset + 2], rtol=1e-9)


def test_variance_reduction_helps_on_leduc():
  """[S] §5.1.2: the VR-MCCFR candidate beats the same MC-CFR without a baseline
  (medians over seeds, compiled fast path)."""
  tree = compiled_tree.cached_tree(pyspiel.load_game("leduc_poker"))
  results = {}
  for name, config in (("mc", MC_CFR), ("vr", VR_MCCFR)):
    values = []
    for seed in range(3):
      solver = compiled_outcome_sampling.CompiledOutcomeSamplingSolver(
          tree, seed=seed, **config)
      solver.run(100_000)
      values.append(
          exact_br.exploitability_slots(tree, solver.average_strategy_slots()))
    results[name] = np.median(values)
  assert results["vr"] < results["mc"], results


def test_deterministic_per_seed():
  game = pyspiel.load_game("python_ii_goofspiel(num_cards=3)")

  def run(seed):
    solver = outcome_sampling.OutcomeSamplingSolver(game, seed=seed, **VR_MCCFR)
    for _ in range(200):
      solver.iteration()
    return {k: d.cumulative.tolist() for k, d in solver.table.items()}

  assert run(7) == run(7)
  assert run(7) != run(8)


def test_incremental_tree_adds_one_information_set_per_episode():
  game = pyspiel.load_game("leduc_poker")
  incremental = outcome_sampling.OutcomeSamplingSolver(game, seed=0)
  incremental.iteration()
  assert len(incremental.table) <= 2
  full = outcome_sampling.OutcomeSamplingSolver(game, seed=0, incremental=False)
  full.iteration()
  assert len(full.table) > 2
  for _ in range(200):
    incremental.iteration()
  assert len(incremental.table) <= 2 * incremental.iterations


def test_nodes_touched_counts_every_sampled_state():
  game = pyspiel.load_game("python_rps")
  solver = outcome_sampling.OutcomeSamplingSolver(game, seed=0, incremental=False)
  for _ in range(10):
    solver.iteration()
  assert solver.nodes_touched == 10 * 2 * 3  # two decisions and a terminal


@pytest.mark.parametrize("scheme", ["ist", "pst"])
def test_targeting_concentrates_samples_on_the_target(scheme):
  game = pyspiel.load_game("leduc_poker")
  target = _play(game, [0, 3, 1, 2])
  key = target.information_state_string(0)
  betting = "[Round1: 1 2][Round2: ]"
  visits = []
  for delta in (0.0, 0.9):
    solver = outcome_sampling.OutcomeSamplingSolver(
        game, seed=4, targeting_probability=delta, **VR_MCCFR)
    solver.set_target(target, 0, scheme)
    for _ in range(1000):
      solver.iteration()
    if scheme == "ist":
      visits.append(solver.table[key].visits)
    else:  # the public state: player 0 to act after call, raise; any cards
      visits.append(sum(data.visits for k, data in solver.table.items()
                        if k.endswith(betting) and "[Player: 0]" in k))
  assert visits[1] > 2 * visits[0]


def test_dead_end_prefixes_are_excluded():
  """Player 1 holding the Jack facing a bet ('1b'... card 1): the history where chance
  first gives player 0 card 1 is AOH-consistent for player 1 but has no consistent
  continuation; it must be excluded from the targeted samples once met."""
  game = pyspiel.load_game("kuhn_poker")
  target_state = _play(game, [0, 1, 1])
  solver = outcome_sampling.OutcomeSamplingSolver(game, seed=0, targeting_probability=1.0)
  target = solver.set_target(target_state, 1)
  for _ in range(300):
    solver.iteration()
  assert target.prefixes[()].allowed == [True, False, True]
  assert target.prefixes[(1,)].allowed == [False, False]


def test_pst_needs_public_observations():
  game = pyspiel.load_game_as_turn_based("goofspiel(imp_info=True,num_cards=3)")
  solver = outcome_sampling.OutcomeSamplingSolver(game, seed=0)
  state = game.new_initial_state()
  state.apply_action(state.legal_actions()[0])
  with pytest.raises(ValueError, match="public observations"):
    solver.set_target(state, 1, "pst")


@pytest.mark.parametrize("kwargs,match", [
    (dict(exploration=1.5), "Exploration e must be in"),
    (dict(exploration=-0.1), "Exploration e must be in"),
    (dict(targeting_probability=2.0), "delta must be in"),
    (dict(cumulative_strategy_exponent=-1), "cse"),
    (dict(baseline="expavg(1.5)"), r"alpha of expavg\(alpha\) must be in"),
    (dict(baseline="mean"), "Accepted baselines"),
    (dict(regret_matcher="rm++"), "Accepted"),
    (dict(seed=-3), "seed"),
])
def test_bad_parameters_are_rejected(kwargs, match):
  game = pyspiel.load_game("kuhn_poker")
  with pytest.raises(ValueError, match=match):
    outcome_sampling.OutcomeSamplingSolver(game, **kwargs)
  with pytest.raises(ValueError, match=match):
    compiled_outcome_sampling.CompiledOutcomeSamplingSolver(game, **kwargs)


@pytest.mark.parametrize("game_string,match", [
    ("goofspiel(num_cards=3)", "sequential"),
    ("kuhn_poker(players=3)", "players"),
])
def test_unsupported_games_are_rejected(game_string, match):
  with pytest.raises(ValueError, match=match):
    outcome_sampling.OutcomeSamplingSolver(pyspiel.load_game(game_string))


def test_bad_targets_are_rejected():
  game = pyspiel.load_game("kuhn_poker")
  solver = outcome_sampling.OutcomeSamplingSolver(game)
  state = _play(game, [0, 1])
  with pytest.raises(ValueError, match="scheme"):
    solver.set_target(state, 0, "everything")
  with pytest.raises(ValueError, match="player"):
    solver.set_target(state, 2)
  with pytest.raises(ValueError, match="terminal"):
    solver.set_target(_play(game, [0, 1, 0, 0]), 0)
  fast = compiled_outcome_sampling.CompiledOutcomeSamplingSolver(game)
  with pytest.raises(ValueError, match="act"):
    fast.set_target(state, 1)


def test_ist_uses_information_states_where_observations_are_missing():
  """liars_dice provides no observation strings; targeting still concentrates."""
  game = pyspiel.load_game("liars_dice")
  assert not game.get_type().provides_observation_string
  target = _play(game, [0, 3, 2])  # dice 1 and 4, player 0 bids
  key = target.information_state_string(1)
  visits = []
  for delta in (0.0, 0.9):
    solver = outcome_sampling.OutcomeSamplingSolver(game, seed=0,
                                                    targeting_probability=delta)
    solver.set_target(target, 1)
    for _ in range(300):
      solver.iteration()
    visits.append(solver.table[key].visits if key in solver.table else 0)
  assert visits[1] > 10 * max(visits[0], 1)
