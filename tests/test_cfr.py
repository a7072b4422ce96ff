"""Tests of the full-width CFR family, depth-limited CFR and the solver registry."""

import copy

import numpy as np
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import cfr as openspiel_cfr
from open_spiel.python.algorithms import discounted_cfr as openspiel_discounted_cfr
from open_spiel.python.algorithms import exploitability
from open_spiel.python.algorithms import expected_game_score
import pyspiel
import pytest

from ggp_cr.algorithms import contracts
from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.cfr import traversal
from ggp_cr.algorithms.cfr import utility_estimators
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.tree import compiled_tree

# (ours, OpenSpiel's) solver pairs that must agree.
_PAIRS = {
    "cfr": (cfr.CFRSolver, openspiel_cfr.CFRSolver),
    "cfr+": (cfr.CFRPlusSolver, openspiel_cfr.CFRPlusSolver),
    "dcfr(1.5,0,2)": (lambda g: cfr.DCFRSolver(g, 1.5, 0.0, 2.0),
                      lambda g: openspiel_discounted_cfr.DCFRSolver(g, 1.5, 0, 2)),
    "lcfr": (cfr.LCFRSolver, openspiel_discounted_cfr.LCFRSolver),
    "cfr-simultaneous": (
        lambda g: cfr.CFRSolver(g, alternating_updates=False),
        lambda g: openspiel_cfr._CFRSolver(  # pylint: disable=protected-access
            g, alternating_updates=False, linear_averaging=False,
            regret_matching_plus=False)),
}


def _run_both(game, name, iterations):
  ours_class, theirs_class = _PAIRS[name]
  ours, theirs = ours_class(game), theirs_class(game)
  for _ in range(iterations):
    ours.evaluate_and_update_policy()
    theirs.evaluate_and_update_policy()
  return ours, theirs


def _openspiel_exploitability(game, policy):
  # OpenSpiel's C++ exploitability: the same value as its Python one, faster.
  return pyspiel.exploitability(game, policy_lib.python_policy_to_pyspiel_policy(policy))


def _assert_same_exploitability(game, ours, theirs):
  for which in ("average_policy", "current_policy"):
    expected = _openspiel_exploitability(game, getattr(theirs, which)())
    actual = _openspiel_exploitability(game, getattr(ours, which)())
    assert actual == pytest.approx(expected, abs=1e-9), which


@pytest.mark.parametrize("name", sorted(_PAIRS))
def test_matches_openspiel_on_kuhn_after_100_iterations(name):
  game = pyspiel.load_game("kuhn_poker")
  ours, theirs = _run_both(game, name, 100)
  _assert_same_exploitability(game, ours, theirs)


@pytest.mark.parametrize("name", ["cfr", "cfr+", "dcfr(1.5,0,2)"])
def test_matches_openspiel_on_leduc_after_3_iterations(name):
  # OpenSpiel's Python CFR needs ~0.3 s per Leduc iteration (up to 1 s on a busy
  # machine); the 100-iteration comparison is the slow test below.
  game = pyspiel.load_game("leduc_poker")
  ours, theirs = _run_both(game, name, 3)
  _assert_same_exploitability(game, ours, theirs)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(_PAIRS))
def test_matches_openspiel_on_leduc_after_100_iterations(name):
  game = pyspiel.load_game("leduc_poker")
  ours, theirs = _run_both(game, name, 100)
  _assert_same_exploitability(game, ours, theirs)


# Thesis-mode Leduc with two ranks and one raise per round (245 histories): chance
# probabilities differ between the histories of one information set (the public rank
# is uniform over 2 ranks, or certain when both players hold the same rank), so a
# dropped chance weight changes the regrets; both players act in both rounds, so a
# dropped own reach changes the average strategy.
SMALL_LEDUC = "python_leduc(cards_per_suit=2,max_raises=1)"


def _openspiel_cfr(regret_matching_plus, alternating_updates, linear_averaging):
  return lambda g: openspiel_cfr._CFRSolver(  # pylint: disable=protected-access
      g, regret_matching_plus=regret_matching_plus,
      alternating_updates=alternating_updates, linear_averaging=linear_averaging)


# OpenSpiel's peer of every preset it has one of ("cfr+2", weights t^2 with RM+,
# has none).
_PRESET_PEERS = {
    "cfr": _openspiel_cfr(False, False, False),
    "cfr-au": _openspiel_cfr(False, True, False),
    "deepstack-cfr": _openspiel_cfr(True, False, False),
    "cfr+": _openspiel_cfr(True, True, True),
    "lcfr": openspiel_discounted_cfr.LCFRSolver,
    "dcfr": lambda g: openspiel_discounted_cfr.DCFRSolver(g, 1.5, 0, 2),
    "thesis-dcfr": lambda g: openspiel_discounted_cfr.DCFRSolver(g, 1.5, 0.5, 1.5),
}


def _assert_same_slots(tree, ours, theirs):
  for which in ("average_policy", "current_policy"):
    np.testing.assert_allclose(
        tree.policy_to_slots(getattr(ours, which)()),
        tree.policy_to_slots(getattr(theirs, which)()), rtol=0, atol=1e-9,
        err_msg=which)


@pytest.mark.parametrize("name", sorted(_PAIRS))
def test_preset_classes_match_openspiel_on_non_uniform_chance(name):
  game = pyspiel.load_game(SMALL_LEDUC)
  tree = compiled_tree.cached_tree(game)
  ours, theirs = _run_both(game, name, 30)
  _assert_same_slots(tree, ours, theirs)
  _assert_same_exploitability(game, ours, theirs)


@pytest.mark.parametrize("preset", sorted(_PRESET_PEERS))
def test_general_solver_presets_match_openspiel_on_non_uniform_chance(preset):
  game = pyspiel.load_game(SMALL_LEDUC)
  tree = compiled_tree.cached_tree(game)
  ours = cfr.GeneralCFRSolver(tree, **cfr.PRESETS[preset])
  theirs = _PRESET_PEERS[preset](game)
  for _ in range(25):
    ours.evaluate_and_update_policy()
    theirs.evaluate_and_update_policy()
  _assert_same_slots(tree, ours, theirs)


@pytest.mark.parametrize("ours_class,theirs_class", [
    (cfr.CFRPlusSolver, pyspiel.CFRPlusSolver),
    # CFR with alternating updates: the time-to-epsilon benchmark's derived peer
    # times rely on these equal iterates.
    (cfr.CFRSolver, pyspiel.CFRSolver)])
def test_matches_openspiel_cpp_solvers_on_leduc(ours_class, theirs_class):
  game = pyspiel.load_game("leduc_poker")
  ours, theirs = ours_class(game), theirs_class(game)
  for _ in range(20):
    ours.evaluate_and_update_policy()
    theirs.evaluate_and_update_policy()
  expected = pyspiel.exploitability(game, theirs.average_policy())
  assert exploitability.exploitability(game, ours.average_policy()) == pytest.approx(
      expected, abs=1e-9)


def test_cfr_plus_reaches_kuhn_game_value():
  game = pyspiel.load_game("kuhn_poker")
  solver = cfr.CFRPlusSolver(game)
  for _ in range(1000):
    solver.evaluate_and_update_policy()
  average = solver.average_policy()
  assert exploitability.exploitability(game, average) < 1e-3
  value = expected_game_score.policy_value(game.new_initial_state(),
                                           [average, average])
  assert value[0] == pytest.approx(-1 / 18, abs=1e-3)


def test_general_solver_with_preset_arguments_equals_preset_class():
  tree = compiled_tree.compile_game(pyspiel.load_game("kuhn_poker"))
  general = cfr.GeneralCFRSolver(tree, **cfr.PRESETS["cfr+"])
  preset = cfr.CFRPlusSolver(tree)
  for _ in range(30):
    general.evaluate_and_update_policy()
    preset.evaluate_and_update_policy()
  np.testing.assert_array_equal(general.average_strategy_slots(),
                                preset.average_strategy_slots())


@pytest.mark.parametrize("preset", sorted(cfr.PRESETS))
def test_every_preset_converges_on_kuhn(preset):
  tree = compiled_tree.compile_game(pyspiel.load_game("kuhn_poker"))
  solver = cfr.GeneralCFRSolver(tree, **cfr.PRESETS[preset])
  for _ in range(300):
    solver.evaluate_and_update_policy()
  assert exploitability.exploitability(tree.game, solver.average_policy()) < 0.02


def test_explorative_matcher_keeps_every_action_possible():
  tree = compiled_tree.compile_game(pyspiel.load_game("kuhn_poker"))
  solver = cfr.GeneralCFRSolver(tree, regret_matcher="erm(rm+,0.1)")
  for _ in range(50):
    solver.evaluate_and_update_policy()
  strategy = solver.current_strategy_slots()
  assert strategy.min() >= 0.1 / 2 - 1e-12
  assert exploitability.exploitability(tree.game, solver.average_policy()) < 0.1


def test_cumulative_strategy_exponent_weights_iteration_t_by_t_to_gamma():
  tree = compiled_tree.compile_game(pyspiel.load_game("kuhn_poker"))
  gamma = 1.5
  solver = cfr.GeneralCFRSolver(tree, "rm", cumulative_strategy_exponent=gamma)
  expected = np.zeros(tree.num_infoset_actions)
  reference = cfr.GeneralCFRSolver(tree, "rm")
  for t in range(1, 6):
    # The exponent does not change regrets or strategies: a plain-averaging twin
    # gives each iteration's contribution.
    before = reference._cumulative.copy()  # pylint: disable=protected-access
    reference.evaluate_and_update_policy()
    expected += t**gamma * (reference._cumulative - before)  # pylint: disable=protected-access
    solver.evaluate_and_update_policy()
  np.testing.assert_allclose(solver._cumulative, expected, rtol=1e-12)  # pylint: disable=protected-access


def test_visited_states_count_histories_per_pass():
  tree = compiled_tree.compile_game(pyspiel.load_game("kuhn_poker"))
  alternating = cfr.CFRSolver(tree)
  simultaneous = cfr.CFRSolver(tree, alternating_updates=False)
  for _ in range(3):
    alternating.evaluate_and_update_policy()
    simultaneous.evaluate_and_update_policy()
  assert alternating.visited_states == 3 * 2 * tree.num_nodes
  assert simultaneous.visited_states == 3 * tree.num_nodes


def test_policies_are_tabular_policies_openspiel_accepts():
  game = pyspiel.load_game("kuhn_poker")
  solver = cfr.CFRSolver(game)
  solver.evaluate_and_update_policy()
  for policy in (solver.current_policy(), solver.average_policy()):
    assert set(policy.state_lookup) == set(policy_lib.TabularPolicy(game).state_lookup)
    assert exploitability.nash_conv(game, policy) > 0


def test_state_dict_round_trip_resumes_exactly():
  tree = compiled_tree.compile_game(pyspiel.load_game("kuhn_poker"))
  straight = cfr.DCFRSolver(tree)
  resumed = cfr.DCFRSolver(tree)
  for _ in range(7):
    straight.evaluate_and_update_policy()
    resumed.evaluate_and_update_policy()
  restored = cfr.DCFRSolver(tree)
  restored.load_state_dict(resumed.state_dict())
  for _ in range(5):
    straight.evaluate_and_update_policy()
    restored.evaluate_and_update_policy()
  np.testing.assert_array_equal(straight.average_strategy_slots(),
                                restored.average_strategy_slots())
  assert restored.iterations == 12
  assert restored.visited_states == straight.visited_states


@pytest.mark.parametrize("kwargs", [
    dict(regret_matcher="nope"),
    dict(alternating_updates="yes"),
    dict(cumulative_strategy_exponent=-1),
    dict(depth_limit=-1, utility_estimator=utility_estimators.RandomPlayout(1)),
    dict(depth_limit=2),
    dict(depth_limit=2, utility_estimator=utility_estimators.RandomPlayout(1),
         estimable=np.ones(3, dtype=bool)),
])
def test_bad_arguments_raise_value_error(kwargs):
  with pytest.raises(ValueError):
    cfr.GeneralCFRSolver(pyspiel.load_game("kuhn_poker"), **kwargs)


def test_refuses_games_the_tree_cannot_hold():
  with pytest.raises(ValueError, match="players"):
    cfr.CFRSolver(pyspiel.load_game("kuhn_poker(players=3)"))
  with pytest.raises(TypeError):
    cfr.CFRSolver(42)


# Depth-limited CFR.

def test_depth_limit_beyond_the_tree_is_plain_cfr():
  tree = compiled_tree.compile_game(pyspiel.load_game("leduc_poker"))
  plain = cfr.CFRPlusSolver(tree)
  limited = cfr.CFRPlusSolver(tree, depth_limit=tree.max_depth,
                              utility_estimator=utility_estimators.RandomPlayout(5))
  for _ in range(10):
    plain.evaluate_and_update_policy()
    limited.evaluate_and_update_policy()
  np.testing.assert_array_equal(plain.average_strategy_slots(),
                                limited.average_strategy_slots())
  assert limited.visited_states == plain.visited_states


class _ExactUniformValue:
  """Estimator returning each node's exact value under the uniform strategy."""

  def __init__(self, tree):
    self.values = _uniform_values(tree)

  def estimate(self, tree, nodes, out):
    out[:] = self.values[nodes]
    return 0


def _uniform_values(tree):
  """Player 0's expected utility of every node under uniform random play."""
  values = tree.node_utility.copy()
  for node in range(tree.num_nodes - 1, -1, -1):
    count = tree.node_num_children[node]
    if count == 0:
      continue
    children = slice(tree.node_first_child[node], tree.node_first_child[node] + count)
    if tree.node_player[node] == pyspiel.PlayerId.CHANCE:
      values[node] = np.dot(tree.node_chance_prob[children], values[children])
    else:
      values[node] = values[children].mean()
  return values


def test_depth_limited_cfr_uses_estimates_below_the_limit():
  game = pyspiel.load_game("kuhn_poker")
  tree = compiled_tree.compile_game(game)
  # Kuhn: root chance (0), chance (1), player 0 (2), player 1 (3), ...
  solver = cfr.CFRPlusSolver(tree, depth_limit=2,
                             utility_estimator=_ExactUniformValue(tree))
  solver.evaluate_and_update_policy()
  kept = int(tree.level_offsets[4])
  assert solver.visited_states == 2 * kept
  # Player 0's first decision sees player 1 as uniform: bet/pass regrets follow the
  # uniform continuation values, so its strategy moves; player 1 is never reached.
  player1 = tree.infoset_player == 1
  strategy = solver.current_strategy_slots()
  assert np.all(strategy[np.isin(tree.slot_infoset, np.flatnonzero(player1))] == 0.5)
  assert np.any(strategy[np.isin(tree.slot_infoset, np.flatnonzero(~player1))] != 0.5)


def test_estimable_mask_forces_expansion():
  tree = compiled_tree.compile_game(pyspiel.load_game("kuhn_poker"))
  estimable = np.ones(tree.num_nodes, dtype=bool)
  estimable[tree.level_offsets[3]:tree.level_offsets[4]] = False
  solver = cfr.CFRPlusSolver(tree, depth_limit=2,
                             utility_estimator=_ExactUniformValue(tree),
                             estimable=estimable)
  solver.evaluate_and_update_policy()
  assert solver.visited_states == 2 * int(tree.level_offsets[5])


def test_random_playout_is_unbiased():
  tree = compiled_tree.compile_game(pyspiel.load_game("leduc_poker"))
  exact = _uniform_values(tree)
  nodes = np.array([0, int(tree.level_offsets[2]), int(tree.level_offsets[4]) + 3],
                   dtype=np.int32)
  estimator = utility_estimators.RandomPlayout(20000, seed=3)
  out = np.empty(len(nodes))
  visited = estimator.estimate(tree, nodes, out)
  assert visited > 20000 * len(nodes)
  # Leduc payoffs lie in [-13, 13]: 4 standard errors are below 13 * 4 / sqrt(20000).
  np.testing.assert_allclose(out, exact[nodes], atol=13 * 4 / np.sqrt(20000))


def test_random_playout_is_seeded():
  tree = compiled_tree.compile_game(pyspiel.load_game("kuhn_poker"))
  nodes = np.arange(5, dtype=np.int32)
  outs = []
  for seed in (7, 7, 8):
    out = np.empty(5)
    utility_estimators.RandomPlayout(3, seed=seed).estimate(tree, nodes, out)
    outs.append(out)
  np.testing.assert_array_equal(outs[0], outs[1])
  assert not np.array_equal(outs[0], outs[2])


def test_parse_utility_estimator():
  assert utility_estimators.parse_utility_estimator("RandomPlayout{10}").num_playouts == 10
  assert utility_estimators.parse_utility_estimator("randomplayout").num_playouts == 1
  for bad in ("randomplayout(0)", "playout(3)", "randomplayout(x)"):
    with pytest.raises(ValueError):
      utility_estimators.parse_utility_estimator(bad)


# Solver registry.

@pytest.mark.parametrize("spec,expected", [
    ("cfr", "GeneralCFRSolver(rm=rm, updates=simultaneous, cse=0)"),
    ("cfr-au", "GeneralCFRSolver(rm=rm, updates=alternating, cse=0)"),
    ("cfr+", "GeneralCFRSolver(rm=rm+, updates=alternating, cse=1)"),
    ("cfr+2", "GeneralCFRSolver(rm=rm+, updates=alternating, cse=2)"),
    ("lcfr", "GeneralCFRSolver(rm=drm(1,1), updates=alternating, cse=1)"),
    ("dcfr(1.5,0,2)", "GeneralCFRSolver(rm=drm(1.5,0), updates=alternating, cse=2)"),
    ("dcfr(gamma=1.5,beta=0.5)",
     "GeneralCFRSolver(rm=drm(1.5,0.5), updates=alternating, cse=1.5)"),
    ("cfr(rm=drm(1,1),updates=alternating,cse=1)",
     "GeneralCFRSolver(rm=drm(1,1), updates=alternating, cse=1)"),
    ("cfr+(dl=2,ue=randomplayout(4))",
     "GeneralCFRSolver(rm=rm+, updates=alternating, cse=1, depth_limit=2, "
     "estimator=RandomPlayout(4, seed=5))"),
])
def test_registry_builds_our_solvers(spec, expected):
  solver = registry.make_solver(spec, pyspiel.load_game("kuhn_poker"), seed=5)
  assert repr(solver) == expected


def test_registry_dcfr_matches_openspiel():
  game = pyspiel.load_game("kuhn_poker")
  ours = registry.make_solver("dcfr(1.5,0,2)", game)
  theirs = registry.make_solver("openspiel_dcfr(1.5,0,2)", game)
  for _ in range(20):
    ours.evaluate_and_update_policy()
    theirs.evaluate_and_update_policy()
  _assert_same_exploitability(game, ours, theirs)


def test_registry_builds_stock_solvers():
  game = pyspiel.load_game("kuhn_poker")
  for name in ("openspiel_cfr", "openspiel_cfr_plus", "openspiel_lcfr",
               "openspiel_cpp_cfr", "openspiel_cpp_cfr_plus"):
    solver = registry.make_solver(name, game)
    solver.evaluate_and_update_policy()
    policy = contracts.python_average_policy(solver, game)
    assert exploitability.nash_conv(game, policy) > 0


@pytest.mark.parametrize("spec,message", [
    ("nope", "Unknown solver"),
    ("cfr(foo=1)", "unknown parameter 'foo'"),
    ("cfr(rm=xyz)", "regret matcher"),
    ("cfr(updates=sometimes)", "alternating, simultaneous"),
    ("cfr(cse=-1)", "'cse' must be in [0, 100]"),
    ("dcfr(1,2,3,4,5,6,7,8)", "at most"),
    ("cfr+(dl=-2)", "'dl' must be >= 0"),
    ("cfr+(ue=magic)", "randomplayout"),
    ("cfr(", "Malformed"),
    ("openspiel_cfr(1)", "at most 0"),
])
def test_registry_refuses_bad_specs_listing_what_is_accepted(spec, message):
  with pytest.raises(ValueError) as error:
    registry.parse_solver(spec)
  assert message in str(error.value)


@pytest.mark.parametrize("game_string", ["kuhn_poker", "python_ii_goofspiel(num_cards=4)"])
def test_evaluate_strategy_is_a_read_only_pass(game_string):
  """evaluate_strategy gives the reach per internal position and the values per node
  of a strategy (as the tree's own reach and value passes) and changes no table."""
  tree = compiled_tree.cached_tree(pyspiel.load_game(game_string))
  solver, twin = cfr.CFRPlusSolver(tree), cfr.CFRPlusSolver(tree)
  for _ in range(3):
    solver.evaluate_and_update_policy()
    twin.evaluate_and_update_policy()
  rng = np.random.default_rng(0)
  slots = tree.normalise_per_infoset(rng.random(tree.num_infoset_actions))
  seen = []
  solver.evaluate_strategy(slots, lambda reach, values: seen.append(
      (reach.copy(), values.copy())))
  internal = np.flatnonzero(tree.node_num_children > 0)
  np.testing.assert_allclose(seen[0][0], tree.node_reaches(slots)[:, internal].T,
                             rtol=0, atol=1e-12)
  np.testing.assert_allclose(seen[0][1], tree.node_values(slots), rtol=0, atol=1e-12)
  for _ in range(2):  # regrets, sums and later passes as the twin's, not asked
    observed = []
    for each in (solver, twin):
      each.evaluate_and_update_policy(lambda reach, values: observed.append(
          (reach.copy(), values.copy())))
    np.testing.assert_array_equal(observed[0][0], observed[1][0])
    np.testing.assert_array_equal(observed[0][1], observed[1][1])
  np.testing.assert_array_equal(solver.current_strategy_slots(),
                                twin.current_strategy_slots())
  np.testing.assert_array_equal(solver.average_strategy_slots(),
                                twin.average_strategy_slots())


def test_a_deep_copy_shares_the_walk_and_continues_equal(monkeypatch):
  """A deep copy of a solver (a continual-resolving bot's clone) shares the
  read-only traversal.TraversalTree and continues bit for bit as the original."""
  monkeypatch.setattr(traversal, "_SHARED_WALK_NODES", 0)
  tree = compiled_tree.cached_tree(pyspiel.load_game("leduc_poker"))
  original = cfr.CFRPlusSolver(tree)
  original.iterate(3)
  copied = copy.deepcopy(original, {id(tree): tree})
  assert copied._walk is original._walk  # pylint: disable=protected-access
  # The passes' scratch is shared too (a pass writes it before reading it).
  assert copied._values is original._values  # pylint: disable=protected-access
  assert copied._reach is original._reach  # pylint: disable=protected-access
  assert copied._regrets is not original._regrets  # pylint: disable=protected-access
  original.iterate(4)
  copied.iterate(4)
  np.testing.assert_array_equal(copied.average_strategy_slots(),
                                original.average_strategy_slots())
  # Interleaved, each pass's observed reach and values are its own solver's.
  seen = []
  for _ in range(3):
    for solver in (original, copied):
      solver.evaluate_and_update_policy(
          lambda reach, values: seen.append((reach.copy(), values.copy())))
  for first, second in zip(seen[::2], seen[1::2]):
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
  np.testing.assert_array_equal(copied.average_strategy_slots(),
                                original.average_strategy_slots())
