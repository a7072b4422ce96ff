"""Tests of the compiled tree: sizes, structure, conversions, caching, refused games."""

import os
import warnings

import numpy as np
from open_spiel.python import policy as policy_lib
import pyspiel
import pytest

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import flat_tree
from ggp_cr.algorithms.tree.game_size import game_size

GOOFSPIEL3 = "turn_based_simultaneous_game(game=goofspiel(imp_info=True,num_cards=3))"

OPTIONAL_GAMES = {
    "python_ii_goofspiel": "python_ii_goofspiel(num_cards=3)",
    "python_princess_monster": "python_princess_monster(max_turns=2)",
    "python_leduc": "python_leduc(max_raises=1,cards_per_suit=2)",
}


def _registered(short_name):
  return short_name in [g.short_name for g in pyspiel.registered_games()]


def _optional(short_name):
  return pytest.param(
      OPTIONAL_GAMES[short_name],
      marks=pytest.mark.skipif(not _registered(short_name),
                               reason=f"{short_name} is not registered yet"))


GAMES = ["kuhn_poker", "leduc_poker", GOOFSPIEL3, "python_rps",
         "python_rps(n=5)"] + [_optional(name) for name in OPTIONAL_GAMES]


class _TwoMovesGame(pyspiel.Game):
  """Test game: player 0 moves twice (actions 0/1), then player 1 guesses the sum.

  With forget=True, player 0's second information state forgets its first move
  (imperfect recall). Returns are (r, offset - r) with r = 1 if the guess is right.
  """

  def __init__(self, params=None):
    params = {"forget": False, "offset": 0.0, **(params or {})}
    self.forget = params["forget"]
    utility = (pyspiel.GameType.Utility.ZERO_SUM if params["offset"] == 0 else
               pyspiel.GameType.Utility.CONSTANT_SUM)
    game_type = pyspiel.GameType(
        short_name="test_two_moves",
        long_name="test two moves",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=utility,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2, min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=False,
        provides_observation_tensor=False,
        parameter_specification={"forget": False, "offset": 0.0})
    super().__init__(game_type, pyspiel.GameInfo(
        num_distinct_actions=3, max_chance_outcomes=0, num_players=2,
        min_utility=-1.0, max_utility=1.0 + params["offset"],
        utility_sum=params["offset"], max_game_length=3), params)
    self.offset = params["offset"]

  def new_initial_state(self):
    return _TwoMovesState(self)


class _TwoMovesState(pyspiel.State):

  def __init__(self, game):
    super().__init__(game)
    self.moves = ()

  def current_player(self):
    if len(self.moves) == 3:
      return pyspiel.PlayerId.TERMINAL
    return 0 if len(self.moves) < 2 else 1

  def _legal_actions(self, player):
    return [0, 1, 2] if len(self.moves) == 2 else [0, 1]

  def _apply_action(self, action):
    self.moves += (action,)

  def _action_to_string(self, player, action):
    return str(action)

  def is_terminal(self):
    return len(self.moves) == 3

  def returns(self):
    if not self.is_terminal():
      return [0.0, 0.0]
    r = -1.0 if self.moves[0] + self.moves[1] == self.moves[2] else 1.0
    return [r, self.get_game().offset - r]

  def information_state_string(self, player):
    if player == 1:
      return "guess"
    if self.get_game().forget and len(self.moves) == 1:
      return "second"
    return str(self.moves)

  def __str__(self):
    return str(self.moves)


class _GenericPolicy(policy_lib.Policy):
  """A non-tabular policy: asks `function(state)`, so conversions must build states."""

  def __init__(self, game, function):
    super().__init__(game, [0, 1])
    self._function = function

  def action_probabilities(self, state, player_id=None):
    return self._function(state)


def _two_moves(**params):
  return _TwoMovesGame(params)


@pytest.mark.parametrize("game_string", GAMES)
def test_sizes_match_game_size(game_string):
  game = pyspiel.load_game(game_string)
  tree = compiled_tree.compile_game(game)
  size = game_size(game)
  assert tree.num_nodes == size.histories
  assert [np.sum(tree.infoset_player == p) for p in range(2)] == size.infosets
  assert tree.max_depth == size.max_depth
  assert tree.num_infoset_actions == tree.infoset_num_actions.sum()


@pytest.mark.parametrize("game_string", [GOOFSPIEL3, "leduc_poker"])
def test_structure(game_string):
  game = pyspiel.load_game(game_string)
  tree = compiled_tree.compile_game(game)
  nodes = np.arange(1, tree.num_nodes)
  parents = tree.node_parent[1:]
  np.testing.assert_array_equal(
      tree.node_first_child[parents] + tree.node_action_index[1:], nodes)
  np.testing.assert_array_equal(tree.node_depth[1:], tree.node_depth[parents] + 1)
  assert np.all(np.diff(tree.node_depth) >= 0)
  assert np.all(np.diff(parents) >= 0)  # breadth-first: parents in order
  assert tree.level_offsets[-1] == tree.num_nodes
  # Chance probabilities of each chance node's children sum to 1.
  chance = np.flatnonzero(tree.node_player == -1)
  for node in chance:
    first = tree.node_first_child[node]
    assert tree.node_chance_prob[first:first + tree.node_num_children[node]].sum() == (
        pytest.approx(1.0))
  # Walk the game along the first-child-then-last path and compare node data.
  state, node = game.new_initial_state(), 0
  while not state.is_terminal():
    if state.is_chance_node():
      assert tree.node_player[node] == -1
      actions = [a for a, _ in state.chance_outcomes()]
    else:
      player = state.current_player()
      assert tree.node_player[node] == player
      infoset = tree.node_infoset[node]
      assert tree.infoset_keys[infoset] == state.information_state_string(player)
      offset = tree.infoset_action_offset[infoset]
      assert tree.infoset_actions[
          offset:offset + tree.infoset_num_actions[infoset]].tolist() == (
              state.legal_actions())
      actions = state.legal_actions()
    index = len(actions) - 1
    state.apply_action(actions[index])
    node = tree.node_first_child[node] + index
  assert tree.node_player[node] == -4
  assert tree.node_utility[node] == state.returns()[0]


def test_infosets_are_numbered_after_their_parent_sequence():
  tree = compiled_tree.compile_game("leduc_poker")
  has_parent = tree.infoset_parent_slot >= 0
  parent_infoset = tree.slot_infoset[tree.infoset_parent_slot[has_parent]]
  assert np.all(parent_infoset < np.flatnonzero(has_parent))
  assert np.all(tree.infoset_player[parent_infoset] ==
                tree.infoset_player[has_parent])
  # Every history of an infoset lies at or after its representative node.
  decision = tree.node_infoset >= 0
  assert np.all(tree.infoset_node[tree.node_infoset[decision]] <=
                np.flatnonzero(decision))


def test_infoset_states_of_a_few_infosets_are_those_of_the_whole_walk():
  """A few infosets (their paths marked in a set) and many (an array of the tree's
  size) get the states the walk of every infoset gives, in that infoset."""
  tree = compiled_tree.compile_game("python_ii_goofspiel(num_cards=5)")
  every = {i: s.history() for i, s in tree.infoset_states()}
  rng = np.random.default_rng(0)
  few = rng.choice(tree.num_infosets, 5, replace=False).tolist()
  many = rng.choice(tree.num_infosets, tree.num_infosets // 2, replace=False).tolist()
  assert len(few) * (tree.max_depth + 1) < tree.num_nodes // 64 < len(many)
  for chosen in (few, many):
    states = dict(tree.infoset_states(chosen))
    assert sorted(states) == sorted(chosen)
    for infoset, state in states.items():
      assert state.history() == every[infoset]
      player = int(tree.infoset_player[infoset])
      assert state.information_state_string(player) == tree.infoset_keys[infoset]


@pytest.mark.parametrize("game_string", ["kuhn_poker", GOOFSPIEL3, "python_rps"])
def test_policy_round_trip(game_string):
  game = pyspiel.load_game(game_string)
  tree = compiled_tree.compile_game(game)
  rng = np.random.default_rng(0)
  slots = rng.random(tree.num_infoset_actions)
  slots /= np.bincount(tree.slot_infoset, weights=slots)[tree.slot_infoset]
  tabular = tree.slots_to_tabular_policy(slots)
  np.testing.assert_array_equal(tree.policy_to_slots(tabular), slots)
  # The same policy as OpenSpiel builds it, and through the generic path.
  reference = policy_lib.TabularPolicy(game)
  assert sorted(reference.state_lookup) == sorted(tabular.state_lookup)
  np.testing.assert_array_equal(reference.legal_actions_mask[
      [reference.state_lookup[k] for k in tree.infoset_keys]],
                                tabular.legal_actions_mask[
      [tabular.state_lookup[k] for k in tree.infoset_keys]])
  for key, row in reference.state_lookup.items():
    reference.action_probability_array[row] = tabular.policy_for_key(key)
  np.testing.assert_array_equal(tree.policy_to_slots(reference), slots)
  np.testing.assert_array_equal(
      tree.policy_to_slots(_GenericPolicy(game, tabular.action_probabilities)), slots)
  # The rebuilt states belong to their rows; rows follow player, then infoset order.
  for row in (0, len(tabular.states) - 1):
    state = tabular.states[row]
    assert tabular.state_lookup[state.information_state_string()] == row
  order = np.concatenate([np.flatnonzero(tree.infoset_player == p) for p in (0, 1)])
  assert [tabular.state_lookup[tree.infoset_keys[i]] for i in order] == list(
      range(len(order)))
  # A later conversion shares the rows (built once per tree) but not the probabilities.
  again = tree.slots_to_tabular_policy(tree.uniform_slots())
  assert again.state_lookup is tabular.state_lookup
  np.testing.assert_array_equal(tree.policy_to_slots(tabular), slots)
  np.testing.assert_array_equal(tree.policy_to_slots(again), tree.uniform_slots())


def test_policy_missing_an_infoset_is_reported_by_key():
  game = pyspiel.load_game("kuhn_poker")
  tree = compiled_tree.compile_game(game)
  only_player0 = policy_lib.TabularPolicy(game, players=[0])
  first_key_of_player1 = tree.infoset_keys[np.flatnonzero(tree.infoset_player == 1)[0]]
  with pytest.raises(ValueError, match=repr(first_key_of_player1).replace("[", r"\[")):
    tree.policy_to_slots(only_player0)
  generic = _GenericPolicy(game, only_player0.action_probabilities)
  with pytest.raises(ValueError, match="no action probabilities for player 1"):
    tree.policy_to_slots(generic)


def test_cache_round_trip_and_corrupt_file(tmp_path):
  tree = compiled_tree.compile_game("leduc_poker", cache_dir=str(tmp_path))
  files = os.listdir(tmp_path)
  assert len(files) == 1 and files[0].endswith(".npz")
  loaded = compiled_tree.compile_game("leduc_poker", cache_dir=str(tmp_path))
  for name in flat_tree.ARRAY_FIELDS:
    np.testing.assert_array_equal(getattr(tree, name), getattr(loaded, name))
  assert loaded.infoset_keys == tree.infoset_keys
  path = os.path.join(tmp_path, files[0])
  with open(path, "wb") as file:
    file.write(b"not a tree")
  with pytest.warns(UserWarning, match="not a readable tree cache"):
    rebuilt = compiled_tree.compile_game("leduc_poker", cache_dir=str(tmp_path))
  assert rebuilt.num_nodes == tree.num_nodes
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    compiled_tree.compile_game("leduc_poker", cache_dir=str(tmp_path))
  with pytest.raises(ValueError, match="holds leduc_poker"):
    flat_tree.CompiledTree.load(path, "kuhn_poker()")


def test_cache_is_keyed_by_the_code_defining_the_rules(tmp_path, monkeypatch):
  """A Python game's cached tree is not reused once its module's source changes."""
  game = pyspiel.load_game("python_rps")
  compiled_tree.compile_game(game, cache_dir=str(tmp_path))
  compiled_tree.compile_game(game, cache_dir=str(tmp_path))
  assert len(os.listdir(tmp_path)) == 1
  monkeypatch.setattr(compiled_tree, "_implementation_fingerprint",
                      lambda game: b"edited rules")
  compiled_tree.compile_game(game, cache_dir=str(tmp_path))
  assert len(os.listdir(tmp_path)) == 2


@pytest.mark.parametrize("game_string, message", [
    ("kuhn_poker(players=3)", "has 3 players"),
    ("goofspiel(num_cards=3)", "load_game_as_turn_based"),
    ("turn_based_simultaneous_game(game=goofspiel(num_cards=3,"
     "returns_type=total_points))", "not zero-sum or constant-sum"),
])
def test_refused_games(game_string, message):
  with pytest.raises(ValueError, match=message):
    compiled_tree.compile_game(game_string)


def test_imperfect_recall_is_refused():
  compiled_tree.compile_game(_two_moves())
  with pytest.raises(ValueError, match="does not have perfect recall.*'second'"):
    compiled_tree.compile_game(_two_moves(forget=True))


@pytest.mark.parametrize("solver", ["os_mccfr", "vr_mccfr", "es_mccfr",
                                    "mixed(schedule=linear)", "locus"])
def test_sampling_solvers_refuse_imperfect_recall(solver):
  """Issue 12: the live sampling solvers ran on imperfect-recall games without a word;
  they run the same bounded perfect-recall check as continual resolving."""
  registry.make_solver(solver, _two_moves(), seed=0)  # perfect recall: accepted
  with pytest.raises(ValueError, match="Sampling MCCFR cannot run .*perfect recall"):
    registry.make_solver(solver, _two_moves(forget=True), seed=0)


def test_constant_sum_game():
  tree = compiled_tree.compile_game(_two_moves(offset=2.0))
  assert tree.utility_sum == 2.0
  terminal = tree.node_player == -4
  assert set(tree.node_utility[terminal].tolist()) == {-1.0, 1.0}


def test_forget_keeps_what_was_memoised_as_lasting():
  """flat_tree.forget drops a tree's per_tree values but those memoised as lasting
  (expensive to rebuild), and those too when asked."""
  tree = compiled_tree.compile_game("kuhn_poker")
  assert flat_tree.per_tree("test_plain", tree, lambda t: 1) == 1
  assert flat_tree.per_tree("test_lasting", tree, lambda t: 2, lasting=True) == 2
  flat_tree.forget(tree)
  assert flat_tree.derived("test_plain", tree) is None
  assert flat_tree.derived("test_lasting", tree) == 2
  flat_tree.forget(tree, keep_lasting=False)
  assert flat_tree.derived("test_lasting", tree) is None


@pytest.mark.parametrize("size,span", [(0, 10), (1, 1), (7, 1000), (5000, 20000),
                                        (50, 10**9)])
def test_unique_ids_equals_numpy_unique(size, span):
  """The linear-time unique of ids (dense count, or np.unique for sparse ids) gives
  np.unique's distinct values, first indices and inverse."""
  values = np.random.default_rng(size).integers(0, span, size) - 3
  ours = flat_tree.unique_ids(values)
  expected = np.unique(values, return_index=True, return_inverse=True)
  for got, want in zip(ours, expected):
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want.reshape(-1))


@pytest.mark.parametrize("size,span", [(0, 5), (1, 1), (9, 3), (5000, 300)])
def test_first_occurrence_ids(size, span):
  """Ids in order of first occurrence, and the distinct values in that order, as a
  dictionary numbering them one by one would give."""
  values = np.random.default_rng(size).integers(0, span, size)
  numbered, ordered = flat_tree.first_occurrence_ids(values, span)
  ids = {}
  for value in values.tolist():
    ids.setdefault(value, len(ids))
  assert numbered.tolist() == [ids[v] for v in values.tolist()]
  assert ordered.tolist() == list(ids)
