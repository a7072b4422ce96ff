"""Traversing and game-playing evaluators of online players."""

import copy
import subprocess
import sys
import types

import numpy as np
import pandas as pd
import pytest

import pyspiel
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import expected_game_score
from open_spiel.python.algorithms import exploitability as openspiel_exploitability
from open_spiel.python.bots import policy as policy_bot

from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.bots import players
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.evaluation import evaluators
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import strategy_files


def _random_strategy(game, seed):
  strategy = policy_lib.TabularPolicy(game)
  rng = np.random.default_rng(seed)
  weights = rng.random(strategy.action_probability_array.shape)
  weights *= strategy.legal_actions_mask
  strategy.action_probability_array = weights / weights.sum(axis=1, keepdims=True)
  return strategy


def _fixed_player(strategy):
  return lambda game, player_id, seed, budget: policy_bot.PolicyBot(
      player_id, np.random.RandomState(seed % 2**32), strategy)


def _assert_nash_conv_is_openspiels(game, result):
  """The evaluation's NashConv and exploitability (NashConv / 2) are OpenSpiel's
  nash_conv of the strategy it assembled."""
  expected = openspiel_exploitability.nash_conv(game, result.policy)
  assert result.nash_conv == pytest.approx(expected, abs=1e-9)
  assert result.exploitability == pytest.approx(expected / 2, abs=1e-9)


def _assert_same_strategy(got, expected, keys=None):
  for key in keys if keys is not None else expected.state_lookup:
    np.testing.assert_allclose(got.policy_for_key(key), expected.policy_for_key(key),
                               atol=1e-12, err_msg=key)


@pytest.mark.parametrize("game_string", ["kuhn_poker", "python_rps",
                                         "python_leduc(cards_per_suit=2,max_raises=1)"])
def test_traversing_evaluation_of_a_fixed_strategy_is_that_strategy(game_string):
  game = registry.load_game(game_string)
  strategy = _random_strategy(game, 1)
  result = evaluators.traversing_evaluation(game, _fixed_player(strategy))
  _assert_same_strategy(result.policy, strategy)
  assert result.infosets_defined == result.infosets_total == len(strategy.state_lookup)
  assert result.nash_conv == pytest.approx(
      openspiel_exploitability.nash_conv(game, strategy), abs=1e-9)
  assert result.exploitability == pytest.approx(result.nash_conv / 2)


class _HistoryCheckingBot(pyspiel.Bot):
  """Tracks what it is told and checks it against the state at every decision."""

  def __init__(self, player_id, seen_decisions):
    pyspiel.Bot.__init__(self)
    self._player_id = player_id
    self._history = []
    self._pending = None
    self._seen = seen_decisions

  def restart_at(self, state):
    self._history = list(state.history())

  def inform_action(self, state, player_id, action):
    assert player_id != self._player_id
    self._history.append(action)

  def provides_force_action(self):
    return True

  def force_action(self, state, action):
    assert self._pending is not None
    self._pending = None
    self._history.append(action)

  def step_with_policy(self, state):
    assert self._pending is None, "the previous own move was never settled"
    assert self._history == state.history()
    self._seen.append(tuple(self._history))
    legal = state.legal_actions()
    self._pending = legal[0]
    return [(a, 1.0 / len(legal)) for a in legal], legal[0]

  def step(self, state):
    return self.step_with_policy(state)[1]


def test_traversing_evaluation_replays_each_history_as_the_player_saw_it():
  game = registry.load_game("python_leduc(cards_per_suit=2,max_raises=1)")
  seen = []
  result = evaluators.traversing_evaluation(
      game, lambda g, player_id, seed, budget: _HistoryCheckingBot(player_id, seen))
  assert result.decisions == len(seen) > result.infosets_total
  assert result.nash_conv == pytest.approx(openspiel_exploitability.nash_conv(
      game, policy_lib.UniformRandomPolicy(game)))


def test_traversing_evaluation_is_reproducible_for_a_seeded_search_player():
  game = registry.load_game("kuhn_poker")
  budget = limits.Budget.parse("0", "30it")
  first = evaluators.traversing_evaluation(game, "ismcts(final_policy=visits)", budget,
                                           seed=3)
  second = evaluators.traversing_evaluation(game, "ismcts(final_policy=visits)", budget,
                                            seed=3)
  np.testing.assert_array_equal(first.policy.action_probability_array,
                                second.policy.action_probability_array)
  assert first.nash_conv == second.nash_conv


@pytest.mark.parametrize("weighting", evaluators.WEIGHTINGS)
def test_game_playing_evaluation_of_a_fixed_strategy_matches_it_where_reached(weighting):
  game = registry.load_game("python_leduc(cards_per_suit=2,max_raises=1)")
  strategy = _random_strategy(game, 2)
  result = evaluators.game_playing_evaluation(game, _fixed_player(strategy),
                                              num_matches=30, weighting=weighting)
  assert result.matches == 30
  assert 0 < result.infosets_defined < result.infosets_total
  reached = []
  for key, row in result.policy.state_lookup.items():
    mask = result.policy.legal_actions_mask[row]
    if not np.allclose(result.policy.action_probability_array[row], mask / mask.sum()):
      reached.append(key)
  # A random strategy is never uniform: every defined information set shows up.
  assert len(reached) == result.infosets_defined
  _assert_same_strategy(result.policy, strategy, reached)


class _ReportingBot(pyspiel.Bot):
  """Plays Pick(1) in python_rps and reports computed strategies with weights."""

  reports = iter(())

  def __init__(self, player_id):
    pyspiel.Bot.__init__(self)
    self._player_id = player_id

  def restart_at(self, state):
    pass

  def step_with_policy(self, state):
    return [(0, 1.0)], 0

  def step(self, state):
    return 0

  def computed_strategy(self):
    return next(_ReportingBot.reports)


def test_game_playing_weighting_by_visits_or_uniformly():
  game = registry.load_game("python_rps")
  key = game.new_initial_state().information_state_string(0)
  other = "an information set the player only computed"
  # Seat 0 acts in matches 0 and 2; each report covers its information set and below.
  reports = [{key: {0: 3.0, 1: 1.0}}, {key: {2: 2.0}}]
  expected = {"visits": [0.5, 1 / 6, 1 / 3], "uniform": [0.375, 0.125, 0.5]}
  for weighting, probabilities in expected.items():
    _ReportingBot.reports = iter([reports[0], {}, reports[1], {}])
    result = evaluators.game_playing_evaluation(
        game, lambda g, player_id, seed, budget: _ReportingBot(player_id),
        num_matches=4, weighting=weighting)
    np.testing.assert_allclose(result.policy.policy_for_key(key), probabilities)
  _ReportingBot.reports = iter([{other: {0: 1.0}}])
  with pytest.raises(ValueError, match="reported a strategy for .*only computed"):
    evaluators.game_playing_evaluation(
        game, lambda g, player_id, seed, budget: _ReportingBot(player_id),
        num_matches=1)


def test_terminal_avoiding_opponent_keeps_matches_going():
  game = registry.load_game("python_leduc")
  state = game.new_initial_state()
  while state.is_chance_node():
    state.apply_action(state.chance_outcomes()[0][0])
  bot = evaluators.TerminalAvoidingRandomBot(state.current_player(), 0)
  choices = {bot.step(state) for _ in range(40)}
  assert choices and all(not state.child(a).is_terminal() for a in choices)
  assert len(choices) > 1


def test_bad_input_is_a_clear_error():
  game = registry.load_game("kuhn_poker")

  class Silent(pyspiel.Bot):

    def step(self, state):
      return state.legal_actions()[0]

    def restart_at(self, state):
      pass

  with pytest.raises(ValueError, match="does not report its policy"):
    evaluators.traversing_evaluation(game, lambda g, p, s, b: Silent())
  with pytest.raises(ValueError, match="weighting must be one of visits, uniform"):
    evaluators.game_playing_evaluation(game, "random", weighting="by_luck")
  with pytest.raises(ValueError, match="num_matches must be >= 1"):
    evaluators.game_playing_evaluation(game, "random", num_matches=0)
  with pytest.raises(ValueError, match="load_game_as_turn_based"):
    evaluators.traversing_evaluation(registry.load_game("goofspiel(num_cards=3)"),
                                     "random")
  with pytest.raises(ValueError, match="interactive"):
    evaluators.traversing_evaluation(game, "human")
  with pytest.raises(ValueError, match="Unknown player"):
    evaluators.game_playing_evaluation(game, "oracle")


def test_evaluate_example_writes_rows_and_plot(tmp_path):
  output = tmp_path / "ev.csv"
  command = [sys.executable, "-m", "ggp_cr.examples.evaluate", "--game=kuhn_poker",
             "--player=ismcts", "--evaluator=traversing", "--evaluator=game_playing",
             "--matches=10", "--move=5it", "--move=20it", f"--output={output}"]
  result = subprocess.run(command, capture_output=True, text=True, timeout=120)
  assert result.returncode == 0, result.stderr
  lines = output.read_text().splitlines()
  assert lines[0].startswith("game,player,evaluator") and len(lines) == 5
  assert (tmp_path / "ev.png").stat().st_size > 1000
  # The values written are the evaluators' (same player, budget and seed 0, run here),
  # whose NashConv is OpenSpiel's on the evaluated strategy; the columns agree.
  frame = pd.read_csv(output)
  game = registry.load_game("kuhn_poker")
  for row in frame.itertuples():
    budget = limits.Budget.parse("0", row.move)
    assert row.move_amount == budget.move.iterations
    if row.evaluator == "traversing":
      result = evaluators.traversing_evaluation(game, "ismcts", budget, seed=0)
      assert row.matches == 0 and row.infosets_defined == row.infosets_total == 12
    else:
      result = evaluators.game_playing_evaluation(game, "ismcts", budget, 10, seed=0)
      assert row.matches == 10 and 0 < row.infosets_defined <= row.infosets_total == 12
    _assert_nash_conv_is_openspiels(game, result)
    assert row.nash_conv == pytest.approx(result.nash_conv, abs=1e-12)
    assert row.exploitability == pytest.approx(row.nash_conv / 2, abs=1e-12)
    assert row.infosets_defined == result.infosets_defined
  bad = subprocess.run(command[:-3] + ["--move=5it", "--move=1s", f"--output={output}"],
                       capture_output=True, text=True, timeout=120)
  assert bad.returncode == 1 and "one unit" in bad.stderr


def test_traversing_evaluation_of_a_saved_strategy_player_is_the_saved_strategy(tmp_path):
  game = registry.load_game("python_leduc(cards_per_suit=2,max_raises=1)")
  tree = compiled_tree.cached_tree(game)
  rng = np.random.default_rng(4)
  slots = rng.random(tree.num_infoset_actions)
  sums = np.zeros(tree.num_infosets)
  np.add.at(sums, tree.slot_infoset, slots)
  slots /= sums[tree.slot_infoset]
  path = tmp_path / "s.npz"
  strategy_files.save_strategy(path, tree, slots)
  result = evaluators.traversing_evaluation(game, f"strategy(path={path})")
  np.testing.assert_allclose(tree.policy_to_slots(result.policy), slots, atol=1e-12)
  assert result.nash_conv == pytest.approx(
      exact_br.nash_conv_slots(tree, slots).nash_conv, abs=1e-12)


class _TableSolver:
  """Fixed average-strategy sums for every information set (contracts.SumsSolver)."""

  def __init__(self, table, targeting_probability):
    self.table = table
    self.targeting_probability = targeting_probability

  def runs_on(self, tree):
    del tree
    return True

  def average_sums(self, tree, infoset):
    data = self.table[tree.infoset_keys[infoset]]
    return dict(zip(data.actions, data.cumulative.tolist()))


class _TableBot(pyspiel.Bot):
  """Passes/checks with a uniform policy; its decisions' solver holds fixed
  average-strategy sums for every information set (contracts.SolvingBot)."""

  def __init__(self, player_id, table, targeting_probability, asked):
    pyspiel.Bot.__init__(self)
    self._player_id = player_id
    self._asked = asked
    self._solver = _TableSolver(table, targeting_probability)

  def decision_solver(self):
    return self._solver

  def restart_at(self, state):
    pass

  def step_with_policy(self, state):
    self._asked.append(state.information_state_string())
    legal = state.legal_actions()
    return [(a, 1 / len(legal)) for a in legal], legal[0]

  def step(self, state):
    return self.step_with_policy(state)[1]


@pytest.mark.parametrize("scope, targeting", [
    ("successors", 0.0), ("thesis", 0.5), ("thesis", 0.0), ("current", 0.0)])
def test_game_playing_scope_selects_which_solver_sums_are_added(scope, targeting):
  game = registry.load_game("kuhn_poker")
  tree = compiled_tree.cached_tree(game)
  rng = np.random.default_rng(0)
  table = {key: types.SimpleNamespace(actions=[0, 1], cumulative=rng.random(2) * 5)
           for key in tree.infoset_keys}
  asked = []
  result = evaluators.game_playing_evaluation(
      game, lambda g, player_id, seed, budget: _TableBot(player_id, table, targeting,
                                                         asked),
      num_matches=1, scope=scope)
  # Seat 0 passes with its card c; the terminal-avoiding opponent bets; seat 0 folds.
  card = asked[0]
  assert asked == [card, card + "pb"]
  expected = {
      "successors": {card, card + "pb"},
      "thesis": ({card, card + "pb"} if targeting else
                 {"0", "1", "2", "0pb", "1pb", "2pb"}),
      "current": set(asked),
  }[scope]
  assert result.infosets_defined == len(expected)
  for key in tree.infoset_keys:
    probabilities = result.policy.policy_for_key(key)[:2]
    if key in expected and scope != "current":
      np.testing.assert_allclose(probabilities,
                                 table[key].cumulative / table[key].cumulative.sum())
    else:
      np.testing.assert_allclose(probabilities, [0.5, 0.5])


def test_game_playing_evaluation_of_the_online_solving_player():
  game = registry.load_game("kuhn_poker")
  budget = limits.Budget.parse("200it", "50it")
  by_scope = {scope: evaluators.game_playing_evaluation(
      game, "online_solving", budget, num_matches=6, scope=scope)
              for scope in evaluators.SCOPES}
  defined = {scope: result.infosets_defined for scope, result in by_scope.items()}
  assert defined["current"] < defined["successors"] <= 12, defined
  assert defined["current"] <= defined["thesis"], defined
  for result in by_scope.values():
    assert 0 <= result.nash_conv < 0.9166  # better than uniform random (0.9167)
    _assert_nash_conv_is_openspiels(game, result)


class _StatefulBot(pyspiel.Bot):
  """Its policy depends on its random stream and on the moves it was held to."""

  def __init__(self, player_id, seed, clonable):
    pyspiel.Bot.__init__(self)
    self._player_id = player_id
    self._rng = np.random.default_rng(seed)
    self._clonable = clonable
    self.moves = []

  def is_clonable(self):
    return self._clonable

  def clone(self):
    other = _StatefulBot(self._player_id, 0, self._clonable)
    other._rng = copy.deepcopy(self._rng)  # pylint: disable=protected-access
    other.moves = list(self.moves)
    return other

  def restart_at(self, state):
    pass

  def provides_force_action(self):
    return True

  def force_action(self, state, action):
    self.moves.append(action)

  def step_with_policy(self, state):
    legal = state.legal_actions()
    weights = self._rng.random(len(legal)) + 0.3 * np.arange(len(legal)) * sum(
        self.moves)
    return list(zip(legal, weights / weights.sum())), legal[0]

  def step(self, state):
    return self.step_with_policy(state)[1]


def test_clonable_bots_are_asked_once_per_information_set_with_the_same_result():
  game = registry.load_game("python_leduc(cards_per_suit=2,max_raises=2)")
  results = {clonable: evaluators.traversing_evaluation(
      game, lambda g, player_id, seed, budget, c=clonable: _StatefulBot(player_id, seed,
                                                                        c))
             for clonable in (True, False)}
  np.testing.assert_allclose(results[True].policy.action_probability_array,
                             results[False].policy.action_probability_array,
                             atol=1e-15)
  assert results[True].decisions == results[True].infosets_total
  assert results[False].decisions > results[True].decisions


def test_game_playing_reads_the_continual_resolving_subgame_solver():
  game = registry.load_game("kuhn_poker")
  budget = limits.Budget.parse("100it", "50it")
  by_scope = {scope: evaluators.game_playing_evaluation(
      game, "cr", budget, num_matches=6, scope=scope)
              for scope in ("successors", "current")}
  defined = {scope: result.infosets_defined for scope, result in by_scope.items()}
  assert defined["current"] < defined["successors"], defined
  for result in by_scope.values():
    _assert_nash_conv_is_openspiels(game, result)


@pytest.mark.parametrize("game_string", ["kuhn_poker", "python_ii_goofspiel(num_cards=3)"])
def test_value_against_uniform_equals_openspiel_policy_value(game_string):
  """evaluators.value_against_uniform: the mean over seats of a random mixed
  profile's expected payoff against uniform random, equal to OpenSpiel's
  expected_game_score.policy_value to 1e-9."""
  game = pyspiel.load_game(game_string)
  tree = compiled_tree.cached_tree(game)
  slots = tree.random_slots(np.random.default_rng(7))
  profile = tree.slots_to_tabular_policy(slots)
  uniform = policy_lib.UniformRandomPolicy(game)
  seats = [expected_game_score.policy_value(
      game.new_initial_state(), [profile, uniform] if seat == 0 else
      [uniform, profile])[seat] for seat in (0, 1)]
  assert evaluators.value_against_uniform(tree, slots) == pytest.approx(
      sum(seats) / 2, abs=1e-9)
  assert evaluators.value_against_uniform(tree, tree.uniform_slots()) == pytest.approx(
      0.0, abs=1e-12)
