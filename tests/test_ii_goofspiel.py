"""Tests of python_ii_goofspiel: rules, sizes, views, bad input and the OpenSpiel peer."""

import numpy as np
import pytest

import pyspiel
from open_spiel.python import policy
from open_spiel.python.algorithms import cfr
from open_spiel.python.algorithms import exploitability

from ggp_cr.algorithms.tree.game_size import game_size
from ggp_cr.games import ii_goofspiel

PUBLIC = pyspiel.IIGObservationType(
    public_info=True, perfect_recall=False, private_info=pyspiel.PrivateInfoType.NONE)


def _play(game_string, actions):
  state = pyspiel.load_game(game_string).new_initial_state()
  for action in actions:
    state.apply_action(action)
  return state


def _all_states(game):
  """Every history of `game`, root first."""
  stack = [game.new_initial_state()]
  while stack:
    state = stack.pop()
    yield state
    if state.is_terminal():
      continue
    if state.is_chance_node():
      actions = [a for a, _ in state.chance_outcomes()]
    else:
      actions = state.legal_actions()
    stack.extend(state.child(a) for a in actions)


def _rebuilt_information_state_string(state, player):
  """The information state string rebuilt from `state.turns()` (the state extends
  its own as actions are applied)."""
  parts = []
  for prize, card0, card1 in state.turns():
    own, other = (card1, card0) if player else (card0, card1)
    if card1:
      parts.append(f"Prize({prize}) Bet({own}) {ii_goofspiel.result(own, other)}")
    elif own:
      parts.append(f"Prize({prize}) Bet({own})")
    else:
      parts.append(f"Prize({prize})")
  return f"p{player}: {', '.join(parts)}" if parts else f"p{player}:"


def _decision_infosets(game):
  """Per player, the information states where that player has a real choice."""
  infosets = [set(), set()]
  for state in _all_states(game):
    if state.is_terminal() or state.is_chance_node():
      continue
    if len(state.legal_actions()) > 1:
      player = state.current_player()
      infosets[player].add(state.information_state_string(player))
  return infosets


def test_sizes_match_thesis_table():
  """[S] Table 5.4: IIGoofspiel{4} has 2,229 histories and 738 information sets."""
  size = game_size(pyspiel.load_game("python_ii_goofspiel(num_cards=4)"))
  assert size.histories == 2229
  assert sum(size.infosets) == 738
  assert size.utility_range == 2
  assert size.max_actions == 4


@pytest.mark.parametrize("num_cards", [1, 2, 3, 4])
@pytest.mark.parametrize("points_order", ["ascending", "descending"])
def test_history_count_follows_from_rules(num_cards, points_order):
  """Each turn with m cards left multiplies the histories by m (player 0) and m again."""
  expected, leaves = 1, 1
  for m in range(num_cards, 0, -1):
    expected += leaves * m + leaves * m * m
    leaves *= m * m
  game = pyspiel.load_game(
      f"python_ii_goofspiel(num_cards={num_cards},points_order={points_order})")
  size = game_size(game)
  assert size.histories == expected
  assert size.max_depth == 2 * num_cards


def test_random_order_reveals_each_prize_by_chance():
  game = pyspiel.load_game("python_ii_goofspiel(num_cards=3,points_order=random)")
  state = game.new_initial_state()
  assert state.is_chance_node()
  assert state.chance_outcomes() == [(0, 1 / 3), (1, 1 / 3), (2, 1 / 3)]
  assert state.action_to_string(pyspiel.PlayerId.CHANCE, 1) == "Prize(2)"
  for action in [1, 0, 2]:  # prize 2; p0 bids 1, p1 bids 3: p1 wins 2 points
    state.apply_action(action)
  assert state.is_chance_node()
  assert [a for a, _ in state.chance_outcomes()] == [0, 2]
  for action in [2, 2, 0]:  # prize 3; p0 bids 3, p1 bids 1: p0 wins 3 points
    state.apply_action(action)
  assert state.chance_outcomes() == [(0, 1.0)]  # the last prize is still a chance node
  for action in [0, 1, 1]:  # prize 1; both bid 2
    state.apply_action(action)
  assert state.is_terminal()
  assert state.returns() == [1.0, -1.0]
  assert state.information_state_string(1) == (
      "p1: Prize(2) Bet(3) won, Prize(3) Bet(1) lost, Prize(1) Bet(2) draw")


@pytest.mark.parametrize("returns_type,expected", [
    ("win_loss", [-1.0, 1.0]), ("point_difference", [-4.0, 4.0])])
def test_returns(returns_type, expected):
  # Prizes 1, 2, 3: p0 bids 3, 1, 2 and p1 bids 1, 2, 3: p0 wins 1, p1 wins 2 + 3.
  state = _play(f"python_ii_goofspiel(num_cards=3,returns_type={returns_type})",
                [2, 0, 0, 1, 1, 2])
  assert state.is_terminal()
  assert state.returns() == expected


def test_draw_pays_zero_with_win_loss():
  # Prizes 1, 2, 3: p0 wins 1 and 2 (3 points), p1 wins 3.
  state = _play("python_ii_goofspiel(num_cards=3)", [1, 0, 2, 1, 0, 2])
  assert state.returns() == [0.0, 0.0]


def test_players_see_only_their_own_bids_and_the_results():
  game = "python_ii_goofspiel(num_cards=3)"
  state = _play(game, [2])  # p0 bids 3
  assert state.current_player() == 1
  assert state.information_state_string(1) == "p1: Prize(1)"
  assert state.information_state_string(0) == "p0: Prize(1) Bet(3)"
  assert state.action_to_string(1, 0) == "Bet(1)"
  state.apply_action(0)  # p1 bids 1 and loses
  assert state.information_state_string(0) == "p0: Prize(1) Bet(3) won, Prize(2)"
  assert state.information_state_string(1) == "p1: Prize(1) Bet(1) lost, Prize(2)"
  # Player 1 cannot tell whether player 0 bid 2 or 3 when player 1 bid 1.
  other = _play(game, [1, 0])
  assert other.information_state_string(1) == state.information_state_string(1)
  assert other.information_state_string(0) != state.information_state_string(0)


def test_last_turn_is_played_explicitly():
  state = _play("python_ii_goofspiel(num_cards=3)", [0, 1, 2, 0])
  assert state.legal_actions() == [1]
  state.apply_action(1)
  assert state.legal_actions() == [2]
  state.apply_action(2)
  assert state.is_terminal()


@pytest.mark.parametrize("points_order", ["ascending", "descending", "random"])
def test_python_answers_match_openspiel_base_class(points_order):
  """The Python fast paths agree with what C++ computes from `_legal_actions`."""
  game = pyspiel.load_game(
      f"python_ii_goofspiel(num_cards=4,points_order={points_order})")
  rng = np.random.default_rng(0)
  for _ in range(20):
    state = game.new_initial_state()
    while True:
      assert state.is_chance_node() == pyspiel.State.is_chance_node(state)
      assert state.legal_actions() == pyspiel.State.legal_actions(state)
      for player in (0, 1):
        assert state.legal_actions(player) == pyspiel.State.legal_actions(state, player)
        assert state.information_state_string(player) == (
            pyspiel.State.information_state_string(state, player))
        assert state.information_state_string(player) == (
            _rebuilt_information_state_string(state, player))
        assert state.clone().information_state_string(player) == (
            state.information_state_string(player))
      if state.is_terminal():
        break
      action = rng.choice(state.legal_actions())
      state.apply_action(action)


@pytest.mark.parametrize("points_order", ["ascending", "descending", "random"])
def test_views_are_consistent(points_order):
  """Info-state tensors split histories exactly as the strings do; public views agree."""
  game = pyspiel.load_game(
      f"python_ii_goofspiel(num_cards=3,points_order={points_order})")
  public = game.make_py_observer(PUBLIC)
  string_of_tensor = {}
  strings = set()
  for state in _all_states(game):
    if state.is_chance_node():
      continue
    for player in (0, 1):
      key = state.information_state_string(player)
      assert key == _rebuilt_information_state_string(state, player)
      strings.add(key)
      tensor = tuple(state.information_state_tensor(player))
      assert string_of_tensor.setdefault(tensor, key) == key
      assert sum(state.observation_tensor(player)) > 0
      assert state.observation_string(player)
    assert public.string_from(state, 0) == public.string_from(state, 1)
    public.set_from(state, 0)
    tensor0 = public.tensor.copy()
    public.set_from(state, 1)
    np.testing.assert_array_equal(tensor0, public.tensor)
  assert len(string_of_tensor) == len(strings)


def test_public_view_shows_who_won_each_turn():
  game = pyspiel.load_game("python_ii_goofspiel(num_cards=3)")
  public = game.make_py_observer(PUBLIC)
  state = _play("python_ii_goofspiel(num_cards=3)", [2, 0, 0])
  assert public.string_from(state, 0) == "prize:2 prizes left:3 p1 to bid results:p0"
  state.apply_action(1)
  assert public.string_from(state, 1) == "prize:3 prizes left: p0 to bid results:p0,p1"


@pytest.mark.parametrize("game_string,message", [
    ("python_ii_goofspiel(num_cards=0)", "num_cards"),
    ("python_ii_goofspiel(num_cards=-3)", "num_cards"),
    ("python_ii_goofspiel(points_order=sorted)", "points_order"),
    ("python_ii_goofspiel(returns_type=total_points)", "returns_type"),
])
def test_bad_parameters_fail_at_load(game_string, message):
  with pytest.raises(ValueError, match=message):
    pyspiel.load_game(game_string)


def test_wrong_parameter_type_fails():
  with pytest.raises(pyspiel.SpielError, match="num_cards"):
    pyspiel.load_game("python_ii_goofspiel(num_cards=four)")
  with pytest.raises(ValueError, match="num_cards"):
    ii_goofspiel.IIGoofspielGame({"num_cards": "4"})
  with pytest.raises(ValueError, match="points_order"):
    ii_goofspiel.IIGoofspielGame({"points_order": 1})


@pytest.mark.parametrize("game_string,prefix,action", [
    ("python_ii_goofspiel(num_cards=3)", [], 3),  # no card 4
    ("python_ii_goofspiel(num_cards=3)", [], -2),
    ("python_ii_goofspiel(num_cards=3)", [1, 0], 1),  # p0 bid card 2 already
    ("python_ii_goofspiel(num_cards=3)", [1, 0, 2], 0),  # p1 bid card 1 already
    # Prize 2 was shown already.
    ("python_ii_goofspiel(num_cards=3,points_order=random)", [1, 0, 0], 1),
    ("python_ii_goofspiel(num_cards=1)", [0, 0], 0),  # game over
])
def test_illegal_actions_raise(game_string, prefix, action):
  state = _play(game_string, prefix)
  before = (str(state), state.history())
  with pytest.raises(ValueError):
    state.apply_action(action)
  assert (str(state), state.history()) == before


def _openspiel_peer(returns_type):
  return pyspiel.load_game_as_turn_based(
      "goofspiel(imp_info=True,num_cards=4,points_order=descending,"
      f"returns_type={returns_type})")


def _ours(returns_type):
  return pyspiel.load_game(
      "python_ii_goofspiel(num_cards=4,points_order=descending,"
      f"returns_type={returns_type})")


def test_same_information_states_as_openspiel():
  """Per player, our decision information states are as many as OpenSpiel's.

  OpenSpiel plays the forced last turn automatically, so its information states are
  exactly those where the player has more than one action; ours also include the
  forced last-turn ones, which `_decision_infosets` leaves out.
  """
  ours = [len(s) for s in _decision_infosets(_ours("win_loss"))]
  theirs = [len(s) for s in _decision_infosets(_openspiel_peer("win_loss"))]
  assert ours == theirs == [81, 81]


def test_uniform_nash_conv_matches_openspiel():
  ours, theirs = _ours("win_loss"), _openspiel_peer("win_loss")
  assert exploitability.nash_conv(ours, policy.UniformRandomPolicy(ours)) == (
      pytest.approx(exploitability.nash_conv(theirs, policy.UniformRandomPolicy(theirs)),
                    abs=1e-12))


def _cfr_exploitability(game, iterations):
  solver = cfr.CFRSolver(game)
  for _ in range(iterations):
    solver.evaluate_and_update_policy()
  return exploitability.exploitability(game, solver.average_policy())


def test_cfr_exploitability_matches_openspiel_win_loss():
  """50 iterations of OpenSpiel's python CFR on both games, `win_loss` returns.

  The solver visits the same information sets with the same actions in the same order
  and sees the same terminal values, so the two runs do the same arithmetic; the forced
  last turn only adds one-action information sets whose regrets stay 0. The ~1e-17
  residues that can split CFR trajectories on `win_loss` ties therefore arise
  identically on both sides (the runs agree to the last bit here); the 1e-9 tolerance
  only absorbs summation-order differences.
  """
  ours = _cfr_exploitability(_ours("win_loss"), 50)
  theirs = _cfr_exploitability(_openspiel_peer("win_loss"), 50)
  assert ours == pytest.approx(theirs, abs=1e-9)
  assert 0 < ours < 0.05


def test_cfr_exploitability_matches_openspiel_point_difference():
  """As above with `point_difference`, which has far fewer exact ties.

  OpenSpiel pays each player its points minus the mean of both players' points, i.e.
  half of the difference of the sums, while ours pays the whole difference (games.md).
  Regret matching is scale-invariant, so the strategies coincide and our
  exploitability is exactly twice OpenSpiel's.
  """
  ours_game, theirs_game = _ours("point_difference"), _openspiel_peer("point_difference")
  final = _play("python_ii_goofspiel(num_cards=4,points_order=descending,"
                "returns_type=point_difference)", [3, 0, 2, 1, 1, 2, 0, 3])
  assert final.returns() == [4 + 3 - 2 - 1, -(4 + 3 - 2 - 1)]
  ours = _cfr_exploitability(ours_game, 50)
  theirs = _cfr_exploitability(theirs_game, 50)
  assert ours == pytest.approx(2 * theirs, abs=1e-9)


def test_actions_of_a_mask_are_its_set_bits():
  rng = np.random.default_rng(0)
  for bits in (1, 7, 8, 9, 13, 16, 17, ii_goofspiel.MAX_CARDS):
    for _ in range(50):
      mask = int(rng.integers(0, 2, size=bits) @ (1 << np.arange(bits, dtype=object)))
      assert ii_goofspiel._actions_of(mask) == tuple(  # pylint: disable=protected-access
          k for k in range(bits) if mask >> k & 1)


@pytest.mark.parametrize("points_order", ["ascending", "random"])
def test_information_states_after_an_action_are_the_childs(points_order):
  """information_states_after (no copy) answers what the child's strings are, at
  every history and action, and the state is left as it was."""
  game = pyspiel.load_game(
      f"python_ii_goofspiel(num_cards=4,points_order={points_order})")
  checked = 0
  for state in _all_states(game):
    if state.is_terminal():
      continue
    before = (state.information_state_string(0), state.information_state_string(1))
    for action in state.legal_actions():
      child = state.child(action)
      assert state.information_states_after(action) == (
          child.information_state_string(0), child.information_state_string(1))
      checked += 1
    assert before == (state.information_state_string(0),
                      state.information_state_string(1))
  assert checked > 1000
