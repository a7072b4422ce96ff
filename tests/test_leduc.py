"""Tests of python_leduc: thesis sizes, rules, all-in play, peer check with leduc_poker."""

import numpy as np
import pytest

import pyspiel
from open_spiel.python import policy
from open_spiel.python.algorithms import cfr
from open_spiel.python.algorithms import exploitability

from ggp_cr.algorithms.tree.game_size import game_size
from ggp_cr.games import leduc

FOLD, CALL, RAISE = leduc.FOLD, leduc.CALL, leduc.RAISE
OPENSPIEL_MODE = "python_leduc(fold_only_facing_bet=true,deal_from_deck=true)"


def play(game_string, actions):
  state = pyspiel.load_game(game_string).new_initial_state()
  for action in actions:
    state.apply_action(action)
  return state


@pytest.mark.parametrize("game_string,histories,infosets,utility_range", [
    # [S] Table 5.4: LeducPoker{100,100,4,3} and LeducPoker{100,100,1,7}.
    ("python_leduc(stack1=100,stack2=100,max_raises=4,cards_per_suit=3)",
     6529, 840, 50),
    ("python_leduc(stack1=100,stack2=100,max_raises=1,cards_per_suit=7)",
     11635, 616, 14),
])
def test_thesis_sizes(game_string, histories, infosets, utility_range):
  size = game_size(pyspiel.load_game(game_string))
  assert size.histories == histories
  assert sum(size.infosets) == infosets
  assert size.infosets[0] == size.infosets[1]
  assert size.utility_range == utility_range
  assert size.max_actions == 3


@pytest.mark.parametrize("max_raises", [0, 1, 2, 3])
def test_utility_range_without_binding_stacks(max_raises):
  game = pyspiel.load_game(f"python_leduc(max_raises={max_raises},cards_per_suit=2)")
  size = game_size(game)
  assert size.utility_range == 2 * (1 + 6 * max_raises)
  assert game.max_utility() - game.min_utility() == size.utility_range


def test_utility_range_with_binding_stack():
  # Player 0 can put in at most its stack of 5, so nobody wins or loses more.
  game = pyspiel.load_game("python_leduc(stack1=5,max_raises=2,cards_per_suit=2)")
  size = game_size(game)
  assert size.utility_range == 10
  assert (game.min_utility(), game.max_utility()) == (-5, 5)


def test_peer_sizes_match_leduc_poker():
  ours = game_size(pyspiel.load_game(OPENSPIEL_MODE))
  theirs = game_size(pyspiel.load_game("leduc_poker"))
  assert ours.histories == theirs.histories == 9457
  assert ours.infosets == theirs.infosets
  assert sum(ours.infosets) == 936
  assert ours.utility_range == theirs.utility_range
  assert ours.max_depth == theirs.max_depth


def test_peer_uniform_nash_conv_matches_leduc_poker():
  values = []
  for name in (OPENSPIEL_MODE, "leduc_poker"):
    game = pyspiel.load_game(name)
    values.append(exploitability.nash_conv(game, policy.UniformRandomPolicy(game)))
  assert values[0] == pytest.approx(4.747222222222222, abs=1e-9)
  assert values[0] == pytest.approx(values[1], abs=1e-9)


def test_peer_cfr_exploitability_matches_leduc_poker():
  """OpenSpiel's python CFR; exploitability by its C++ best response (faster)."""
  trajectories = []
  for name in (OPENSPIEL_MODE, "leduc_poker"):
    game = pyspiel.load_game(name)
    solver = cfr.CFRSolver(game)
    trajectory = []
    for _ in range(2):
      solver.evaluate_and_update_policy()
      average = policy.python_policy_to_pyspiel_policy(solver.average_policy())
      trajectory.append(pyspiel.exploitability(game, average))
    trajectories.append(trajectory)
  np.testing.assert_allclose(trajectories[0], trajectories[1], rtol=0, atol=1e-9)
  assert trajectories[0][1] < trajectories[0][0]


def test_thesis_deal_excludes_shared_rank_from_public_card():
  state = play("python_leduc(cards_per_suit=4)", [])
  assert state.chance_outcomes() == [(r, 0.25) for r in range(4)]
  state.apply_action(2)
  assert state.chance_outcomes() == [(r, 0.25) for r in range(4)]  # Independent ranks.
  shared = state.child(2)
  different = state.child(1)
  for s in (shared, different):
    s.apply_action(CALL)
    s.apply_action(CALL)
    assert s.is_chance_node()
  assert shared.chance_outcomes() == [(r, pytest.approx(1 / 3)) for r in (0, 1, 3)]
  assert different.chance_outcomes() == [(r, 0.25) for r in range(4)]
  with pytest.raises(ValueError, match="chance outcome 2"):
    shared.apply_action(2)


def test_deck_deal_is_without_replacement():
  state = play("python_leduc(cards_per_suit=3,deal_from_deck=true)", [4])
  assert state.chance_outcomes() == [(c, 0.2) for c in (0, 1, 2, 3, 5)]
  with pytest.raises(ValueError, match="chance outcome 4"):
    state.child(4)
  state.apply_action(5)
  state.apply_action(CALL)
  state.apply_action(CALL)
  assert state.chance_outcomes() == [(c, 0.25) for c in range(4)]
  assert state.action_to_string(pyspiel.PlayerId.CHANCE, 5) == "Deal(2h)"
  assert state.action_to_string(pyspiel.PlayerId.CHANCE, 0) == "Deal(0s)"


def test_action_strings():
  state = play("python_leduc", [])
  assert state.action_to_string(pyspiel.PlayerId.CHANCE, 2) == "Deal(2)"
  state.apply_action(2)
  state.apply_action(0)
  assert [state.action_to_string(0, a) for a in state.legal_actions()] == [
      "Fold", "Call", "Raise"]


def test_betting_round_structure_and_costs():
  # Player 0 checks, player 1 checks: round 1 ends at the public card.
  state = play("python_leduc", [0, 1, CALL])
  assert state.current_player() == 1
  state.apply_action(CALL)
  assert state.is_chance_node()
  assert (state.chips0, state.chips1) == (1, 1)
  # Round 2: raise costs 4, re-raise 8 (match and raise), call matches.
  state.apply_action(2)
  state.apply_action(RAISE)
  assert (state.chips0, state.chips1) == (5, 1)
  state.apply_action(RAISE)
  assert (state.chips0, state.chips1) == (5, 9)
  assert state.legal_actions() == [FOLD, CALL]  # Two raises this round: cap reached.
  with pytest.raises(ValueError, match="Raise"):
    state.child(RAISE)
  state.apply_action(CALL)
  assert state.is_terminal()
  # Public rank 2; player 1 holds rank 1 over player 0's rank 0.
  assert state.returns() == [-9.0, 9.0]


def test_check_raise_call_ends_round_one_with_raise_cost_two():
  state = play("python_leduc", [1, 0, CALL, RAISE])
  assert (state.chips0, state.chips1) == (1, 3)
  assert state.current_player() == 0
  state.apply_action(CALL)
  assert state.is_chance_node()
  assert (state.chips0, state.chips1) == (3, 3)


def test_showdown_pair_beats_higher_rank_and_equal_ranks_split():
  pair_for_0 = play("python_leduc", [0, 2, CALL, CALL, 0, CALL, CALL])
  assert pair_for_0.returns() == [1.0, -1.0]
  higher_for_1 = play("python_leduc", [0, 2, CALL, CALL, 1, CALL, CALL])
  assert higher_for_1.returns() == [-1.0, 1.0]
  split = play("python_leduc", [2, 2, RAISE, CALL, 0, CALL, CALL])
  assert split.returns() == [0.0, 0.0]


def test_fold_rules():
  # Thesis: fold is legal even when nothing is to be called.
  state = play("python_leduc", [0, 1])
  assert FOLD in state.legal_actions()
  assert state.child(FOLD).returns() == [-1.0, 1.0]
  raised = state.child(RAISE)
  assert raised.child(FOLD).returns() == [1.0, -1.0]
  strict = play("python_leduc(fold_only_facing_bet=true)", [0, 1])
  assert strict.legal_actions() == [CALL, RAISE]
  with pytest.raises(ValueError, match="Fold"):
    strict.child(FOLD)
  strict.apply_action(RAISE)
  assert strict.legal_actions() == [FOLD, CALL, RAISE]


def test_all_in_excess_goes_back_to_the_raiser():
  # Player 1's stack of 2 covers only 1 of player 0's raise of 2.
  state = play("python_leduc(stack2=2)", [1, 0])
  state.apply_action(RAISE)
  assert (state.chips0, state.chips1) == (2, 1)
  assert state.legal_actions() == [FOLD, CALL]  # Player 1 cannot raise.
  state.apply_action(CALL)
  assert (state.chips0, state.chips1) == (2, 2)
  state.apply_action(2)
  # Player 1 has nothing left: player 0's raise is returned in full.
  state.apply_action(RAISE)
  assert (state.chips0, state.chips1) == (2, 2)
  assert state.legal_actions() == [FOLD, CALL]
  state.apply_action(CALL)
  assert state.returns() == [2.0, -2.0]


def test_raise_needs_own_stack_to_cover_it():
  # Player 1 (stack 4) has 3 left after the ante; a re-raise would cost 4.
  state = play("python_leduc(stack2=4)", [0, 1, RAISE])
  assert state.legal_actions() == [FOLD, CALL]
  # A stack of 1 is the ante alone: never a raise.
  state = play("python_leduc(stack1=1)", [0, 1])
  assert state.legal_actions() == [FOLD, CALL]


def test_information_state_is_perfect_recall_and_private():
  # Round 1 check-raise-call and raise-call leave the same chips; info states differ.
  check_raise = play("python_leduc", [0, 1, CALL, RAISE, CALL, 2])
  raise_call = play("python_leduc", [0, 1, RAISE, CALL, 2])
  assert (check_raise.chips0, check_raise.chips1) == (raise_call.chips0, raise_call.chips1)
  assert check_raise.information_state_string(0) != raise_call.information_state_string(0)
  assert check_raise.information_state_string(0) == "P0 card:0 R1:crc public:2 R2:"
  assert check_raise.information_state_string(1) == "P1 card:1 R1:crc public:2 R2:"
  # Player 1's info state does not depend on player 0's card.
  other_card = play("python_leduc", [2, 1, CALL, RAISE, CALL, 2])
  assert other_card.information_state_string(1) == check_raise.information_state_string(1)
  assert other_card.information_state_string(0) != check_raise.information_state_string(0)


def test_public_observation_is_shared_and_hides_private_cards():
  game = pyspiel.load_game("python_leduc(deal_from_deck=true)")
  public = game.make_py_observer(pyspiel.IIGObservationType(
      public_info=True, perfect_recall=False, private_info=pyspiel.PrivateInfoType.NONE))
  a = play("python_leduc(deal_from_deck=true)", [0, 3, RAISE, CALL, 5])
  b = play("python_leduc(deal_from_deck=true)", [2, 1, RAISE, CALL, 5])
  assert public.string_from(a, 0) == public.string_from(a, 1) == public.string_from(b, 0)
  assert public.string_from(a, 0) == "dealt:2 R1:rc public:2h R2:"
  public.set_from(a, 0)
  tensor_a = public.tensor.copy()
  public.set_from(b, 1)
  np.testing.assert_array_equal(tensor_a, public.tensor)


@pytest.mark.parametrize("game_string", [
    "python_leduc(max_raises=2,cards_per_suit=2)",
    "python_leduc(max_raises=1,cards_per_suit=2,deal_from_deck=true,stack2=3)",
])
def test_tensors_identify_the_strings(game_string):
  """Over the whole tree, info-state and observation tensors match their strings 1:1."""
  game = pyspiel.load_game(game_string)
  for kind in ("information_state", "observation"):
    by_string, by_tensor = {}, {}
    stack = [game.new_initial_state()]
    while stack:
      state = stack.pop()
      if state.is_terminal():
        continue
      if not state.is_chance_node():
        for player in (0, 1):
          text = getattr(state, f"{kind}_string")(player)
          tensor = tuple(getattr(state, f"{kind}_tensor")(player))
          assert by_string.setdefault(text, tensor) == tensor
          assert by_tensor.setdefault(tensor, text) == text
      stack.extend(state.child(a) for a in state.legal_actions())


@pytest.mark.parametrize("game_string,message", [
    ("python_leduc(stack1=0)", "'stack1' must be >= 1"),
    ("python_leduc(stack2=-3)", "'stack2' must be >= 1"),
    ("python_leduc(max_raises=-1)", "'max_raises' must be >= 0"),
    ("python_leduc(cards_per_suit=1)", "'cards_per_suit' must be >= 2, got 1: .*public"),
    ("python_leduc(cards_per_suit=1,deal_from_deck=true)", "'cards_per_suit' must be >= 2"),
    ("python_leduc(cards_per_suit=0)", "'cards_per_suit' must be >= 2, got 0"),
])
def test_bad_parameters_fail_at_load(game_string, message):
  with pytest.raises(ValueError, match=message):
    pyspiel.load_game(game_string)


def test_bad_parameter_names_and_types():
  with pytest.raises(pyspiel.SpielError, match="Unknown parameter"):
    pyspiel.load_game("python_leduc(stack=3)")
  with pytest.raises(pyspiel.SpielError, match="deal_from_deck"):
    pyspiel.load_game("python_leduc(deal_from_deck=2)")
  with pytest.raises(ValueError, match="Unknown parameter"):
    leduc.LeducGame({"stack": 3})
  with pytest.raises(ValueError, match="'deal_from_deck' must be true or false"):
    leduc.LeducGame({"deal_from_deck": 1})
  with pytest.raises(ValueError, match="'max_raises' must be an integer"):
    leduc.LeducGame({"max_raises": 1.5})


def test_illegal_actions_raise():
  state = play("python_leduc(max_raises=1)", [0, 1])
  with pytest.raises(ValueError, match="Illegal action 3"):
    state.child(3)
  with pytest.raises(ValueError, match="Raise"):
    state.child(RAISE).child(RAISE)
  with pytest.raises(ValueError, match="chance outcome 3"):
    play("python_leduc", [3])
  with pytest.raises(ValueError, match="terminal"):
    state.child(FOLD).apply_action(CALL)
