"""BRS (pruned exact best response) and its error-bounded approximation ([B] ch. 4)."""

import numpy as np
from open_spiel.python import policy as policy_lib
import pyspiel
import pytest

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.best_response import pruned_br as pbr
from ggp_cr.algorithms.tree import compiled_tree

GAMES = ["kuhn_poker", "leduc_poker", "python_rps", "python_ii_goofspiel(num_cards=3)",
         "python_princess_monster(max_turns=2)",
         "python_leduc(max_raises=1,cards_per_suit=2)"]


def random_profiles(tree, seed, count):
  rng = np.random.default_rng(seed)
  kinds = ["mixed", "sparse", "deterministic"]
  return [tree.random_slots(rng, kinds[k % 3]) for k in range(count)]


@pytest.mark.parametrize("game", GAMES)
def test_equals_exact_best_response_and_policy_attains_it(game):
  tree = compiled_tree.cached_tree(game)
  for slots in random_profiles(tree, seed=len(game), count=50):
    exact = exact_br.best_response_values(tree, slots)
    for player in (0, 1):
      value, response, bound, statistics = pbr.pruned_best_response_slots(
          tree, slots, player)
      assert value == pytest.approx(exact[player], abs=1e-9)
      attained = exact_br.on_policy_values(tree, response)[player]
      assert attained == pytest.approx(exact[player], abs=1e-9)
      assert bound == 0.0
      assert 0 < statistics["histories_visited"] <= tree.num_nodes
      assert (statistics["histories_visited"] <= statistics["histories_visited_thesis"]
              <= tree.num_nodes)


class _UnevenGame(pyspiel.Game):
  """Information sets spanning two depths, with two decisions of each player.

  Chance picks c ∈ {0, 1} (0.4 / 0.6); if c = 0, player 1 moves x ∈ {0, 1}. Player 0,
  seeing nothing, moves b ∈ {0, 1} (depth 1 or 2); player 1, seeing b, moves
  d ∈ {0, 1, 2}; player 0, seeing d, moves e ∈ {0, 1}. Player 0 gets an irregular
  payoff of (c, x, b, d, e).
  """

  def __init__(self, params=None):
    game_type = pyspiel.GameType(
        short_name="test_brs_uneven", long_name="test BRS uneven depths",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2, min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=False, provides_observation_string=False,
        provides_observation_tensor=False, parameter_specification={})
    super().__init__(game_type, pyspiel.GameInfo(
        num_distinct_actions=3, max_chance_outcomes=2, num_players=2, min_utility=-6.0,
        max_utility=6.0, utility_sum=0.0, max_game_length=5), params or {})

  def new_initial_state(self):
    return _UnevenState(self)


class _UnevenState(pyspiel.State):

  def __init__(self, game):
    super().__init__(game)
    self.chance = None
    self.moves = ()  # x (only if c = 0), b, d, e

  def _own_start(self):
    return 1 if self.chance == 0 else 0

  def current_player(self):
    if self.chance is None:
      return pyspiel.PlayerId.CHANCE
    done = len(self.moves) - self._own_start()
    if done < 0:
      return 1
    return (0, 1, 0, pyspiel.PlayerId.TERMINAL)[done]

  def chance_outcomes(self):
    return [(0, 0.4), (1, 0.6)]

  def _legal_actions(self, player):
    return [0, 1, 2] if len(self.moves) - self._own_start() == 1 else [0, 1]

  def _apply_action(self, action):
    if self.chance is None:
      self.chance = action
    else:
      self.moves += (action,)

  def _action_to_string(self, player, action):
    return str(action)

  def is_terminal(self):
    return self.chance is not None and len(self.moves) - self._own_start() == 3

  def returns(self):
    if not self.is_terminal():
      return [0.0, 0.0]
    x = self.moves[0] if self.chance == 0 else 2
    b, d, e = self.moves[-3:]
    u0 = float((3 * self.chance + 5 * x + 7 * b + 11 * d + 13 * e + b * d * e) % 13 - 6)
    return [u0, -u0]

  def information_state_string(self, player=None):
    if player is None:
      player = self.current_player()
    start = self._own_start()
    if player == 0:
      return f"p0 {self.moves[start:]}"
    return f"p1 own={self.moves[:start]} seen={self.moves[start:start + 1]}"

  def __str__(self):
    return f"{self.chance} {self.moves}"


def test_information_sets_at_several_depths():
  tree = compiled_tree.compile_game(_UnevenGame())
  assert set(tree.node_depth[tree.node_infoset == tree.infoset_index(0, "p0 ()")]
             .tolist()) == {1, 2}
  for slots in random_profiles(tree, seed=4, count=30):
    exact = exact_br.best_response_values(tree, slots)
    for player in (0, 1):
      assert pbr.pruned_best_response_slots(tree, slots, player)[0] == pytest.approx(
          exact[player], abs=1e-9)
      for setting in (dict(epsilon=0.5), dict(eta=0.5, start_depth=2)):
        value, _, bound, _ = pbr.pruned_best_response_slots(tree, slots, player,
                                                            **setting)
        assert -1e-9 <= exact[player] - value <= bound + 1e-9


def test_policy_input_matches_openspiel_cpp_best_response():
  game = pyspiel.load_game("leduc_poker")
  tabular = policy_lib.TabularPolicy(game)
  rng = np.random.default_rng(7)
  weights = rng.random(tabular.action_probability_array.shape) * tabular.legal_actions_mask
  tabular.action_probability_array = weights / weights.sum(axis=1, keepdims=True)
  as_dict = {key: list(enumerate(row)) for key, row in
             zip(tabular.states_per_player[0] + tabular.states_per_player[1],
                 tabular.action_probability_array)}
  for player in (0, 1):
    result = pbr.pruned_best_response(game, tabular, player, measure_error=True)
    cpp_value = pyspiel.TabularBestResponse(game, player, as_dict).value(
        game.new_initial_state().history_str())
    assert result.value == pytest.approx(cpp_value, abs=1e-9)
    assert result.error == pytest.approx(0.0, abs=1e-9)
    assert result.histories_unvisited == result.histories_total - result.histories_visited
    # The returned TabularPolicy plays the response: OpenSpiel agrees on its value.
    tree = compiled_tree.cached_tree(game)
    replayed = tree.policy_to_slots(result.policy)
    assert exact_br.on_policy_values(tree, replayed)[player] == pytest.approx(
        result.value, abs=1e-9)


def test_policy_object_reads_only_the_opponent():
  game = pyspiel.load_game("kuhn_poker")
  only_player1 = policy_lib.TabularPolicy(game, players=[1])
  result = pbr.pruned_best_response(game, only_player1, 0, measure_error=True)
  assert result.error == pytest.approx(0.0, abs=1e-12)
  generic = policy_lib.UniformRandomPolicy(game)
  assert pbr.pruned_best_response(game, generic, 1).value == pytest.approx(
      pbr.pruned_best_response(game, policy_lib.TabularPolicy(game), 1).value, abs=1e-12)


def test_pruning_on_leduc_matches_the_thesis_magnitudes():
  """[B] §6.2.2: mixed opponents leave some histories unvisited; deterministic ones
  leave most of the tree unvisited (the thesis explores about a quarter)."""
  tree = compiled_tree.cached_tree("leduc_poker")
  rng = np.random.default_rng(3)
  mixed = pbr.pruned_best_response_slots(tree, tree.random_slots(rng, "mixed"), 0)[3]
  pure = pbr.pruned_best_response_slots(tree, tree.random_slots(rng, "deterministic"),
                                        0)[3]
  assert 0 < tree.num_nodes - mixed["histories_visited"] < tree.num_nodes // 4
  assert pure["histories_visited_thesis"] < tree.num_nodes // 2
  assert pure["histories_visited"] < mixed["histories_visited"]
  assert mixed["cache_hits"] > 0 and mixed["cutoffs_responder"] > 0


@pytest.mark.parametrize("game", ["kuhn_poker", "leduc_poker",
                                  "python_ii_goofspiel(num_cards=3)",
                                  "python_leduc(max_raises=1,cards_per_suit=2)"])
def test_approximation_never_violates_its_bound(game):
  tree = compiled_tree.cached_tree(game)
  settings = [dict(epsilon=0.0), dict(epsilon=0.05), dict(epsilon=0.5),
              dict(epsilon=3.0), dict(eta=0.0), dict(eta=0.1), dict(eta=0.5),
              dict(eta=1.0), dict(epsilon=0.5, start_depth=3),
              dict(eta=0.5, start_depth=6)]
  largest_error = 0.0
  for slots in random_profiles(tree, seed=11, count=6):
    exact = exact_br.best_response_values(tree, slots)
    for player in (0, 1):
      for setting in settings:
        value, response, bound, _ = pbr.pruned_best_response_slots(
            tree, slots, player, **setting)
        error = exact[player] - value
        assert -1e-9 <= error <= bound + 1e-9, (setting, error, bound)
        if setting.get("epsilon") == 0.0 or setting.get("eta") == 0.0:
          assert error == pytest.approx(0.0, abs=1e-9)
        attained = exact_br.on_policy_values(tree, response)[player]
        assert attained == pytest.approx(value, abs=1e-9)
        largest_error = max(largest_error, error)
  assert largest_error > 1e-6  # the approximation does give something up


def test_relative_bound_and_measured_error_are_reported():
  game = "leduc_poker"
  tree = compiled_tree.cached_tree(game)
  slots = random_profiles(tree, seed=5, count=1)[0]
  result = pbr.pruned_best_response(game, slots, 1, eta=0.5, measure_error=True)
  min_utility, max_utility = pbr.utility_bounds(tree, 1)
  assert (result.value - min_utility >=
          0.5 * (result.exact_value - min_utility) - 1e-9)
  assert result.error == pytest.approx(result.exact_value - result.value)
  assert 0 <= result.error <= result.error_bound + 1e-9
  assert pbr.pruned_best_response(game, slots, 1).exact_value is None


def test_start_depth_beyond_the_tree_is_exact():
  tree = compiled_tree.cached_tree("leduc_poker")
  slots = random_profiles(tree, seed=9, count=1)[0]
  exact = exact_br.best_response_values(tree, slots)[0]
  value = pbr.pruned_best_response_slots(tree, slots, 0, eta=1.0,
                                         start_depth=tree.max_depth + 1)[0]
  assert value == pytest.approx(exact, abs=1e-9)


def _leduc_illegal_row(tabular):
  rows, actions = np.nonzero(tabular.legal_actions_mask == 0)
  return rows[0], actions[0]


@pytest.mark.parametrize("kwargs, message", [
    (dict(epsilon=-0.1), "epsilon"),
    (dict(epsilon=float("nan")), "epsilon"),
    (dict(eta=1.5), "eta"),
    (dict(eta=-0.01), "eta"),
    (dict(epsilon=0.1, eta=0.1), "not both"),
    (dict(start_depth=-1), "start_depth"),
])
def test_bad_parameters(kwargs, message):
  game = pyspiel.load_game("kuhn_poker")
  with pytest.raises(ValueError, match=message):
    pbr.pruned_best_response(game, policy_lib.TabularPolicy(game), 0, **kwargs)


@pytest.mark.parametrize("player", [2, -1, True, 0.0, "0"])
def test_bad_player(player):
  game = pyspiel.load_game("kuhn_poker")
  with pytest.raises(ValueError, match="player"):
    pbr.pruned_best_response(game, policy_lib.TabularPolicy(game), player)


def test_bad_policies():
  game = pyspiel.load_game("leduc_poker")
  tabular = policy_lib.TabularPolicy(game)
  row = tabular.state_lookup[tabular.states_per_player[1][0]]
  tabular.action_probability_array[row] *= 0.5
  with pytest.raises(ValueError, match="sum to"):
    pbr.pruned_best_response(game, tabular, 0)
  # The responder's own rows are not read: responder 1 ignores player 1's bad row.
  assert pbr.pruned_best_response(game, tabular, 1).value == pytest.approx(
      pbr.pruned_best_response(game, policy_lib.TabularPolicy(game), 1).value)

  tabular = policy_lib.TabularPolicy(game)
  row, action = _leduc_illegal_row(tabular)
  tabular.action_probability_array[row, action] = 0.5
  responder = 0 if row >= len(tabular.states_per_player[0]) else 1
  with pytest.raises(ValueError, match="illegal action"):
    pbr.pruned_best_response(game, tabular, responder)

  tabular = policy_lib.TabularPolicy(game)
  tabular.action_probability_array[0] = np.where(tabular.legal_actions_mask[0], -1.0, 0.0)
  with pytest.raises(ValueError, match="probabilities must be in"):
    pbr.pruned_best_response(game, tabular, 1)

  with pytest.raises(ValueError, match="shape"):
    pbr.pruned_best_response(game, np.ones(3), 0)
  with pytest.raises(ValueError, match="policy must be"):
    pbr.pruned_best_response(game, {"a": 1}, 0)
  with pytest.raises(ValueError, match="no entry"):
    pbr.pruned_best_response(game, policy_lib.TabularPolicy(game, players=[0]), 0)


class _IllegalPolicy(policy_lib.Policy):
  """Puts all mass on action 2 (raise), also where raising is illegal."""

  def action_probabilities(self, state, player_id=None):
    return {2: 1.0}


def test_generic_policy_naming_an_illegal_action():
  game = pyspiel.load_game("leduc_poker")
  with pytest.raises(ValueError, match="illegal action 2"):
    pbr.pruned_best_response(game, _IllegalPolicy(game, [0, 1]), 1)
