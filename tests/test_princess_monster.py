"""Tests of python_princess_monster against [S] §3.2.3 and Tables 5.4 / 5.5."""

import pickle

import pytest

import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.tree.game_size import game_size


def _play(game, moves):
  """Applies moves given as (row, col) targets, alternating princess and monster."""
  state = game.new_initial_state()
  for r, c in moves:
    state.apply_action(r * game.cols + c)
  return state


def test_thesis_table_5_4_sizes():
  size = game_size(pyspiel.load_game("python_princess_monster(max_turns=5)"))
  assert size.histories == 11283
  assert sum(size.infosets) == 146
  assert size.infosets == [73, 73]
  assert size.utility_range == 16
  assert size.max_actions == 4
  assert size.max_depth == 10


def test_thesis_table_5_5_sizes():
  size = game_size(pyspiel.load_game("python_princess_monster(max_turns=6)"))
  assert size.histories == 72531
  assert sum(size.infosets) == 402
  assert size.utility_range == 20


@pytest.mark.parametrize("max_turns", [1, 2, 3, 4])
def test_utility_range_is_4t_minus_4_on_3x3(max_turns):
  game = pyspiel.load_game(f"python_princess_monster(max_turns={max_turns})")
  assert game_size(game).utility_range == 4 * max_turns - 4


@pytest.mark.parametrize("rows,cols,max_turns", [
    (1, 2, 2), (1, 3, 2), (2, 2, 3), (2, 3, 3), (3, 3, 4), (3, 4, 3)])
def test_utility_bounds_hold(rows, cols, max_turns):
  game = pyspiel.load_game(
      f"python_princess_monster(max_turns={max_turns},rows={rows},cols={cols})")
  stack = [game.new_initial_state()]
  while stack:
    state = stack.pop()
    if state.is_terminal():
      for value in state.returns():
        assert game.min_utility() <= value <= game.max_utility()
      assert sum(state.returns()) == 0
      continue
    stack.extend(state.child(a) for a in state.legal_actions())


def test_defaults():
  game = pyspiel.load_game("python_princess_monster")
  assert (game.max_turns, game.rows, game.cols) == (6, 3, 3)
  assert game.num_distinct_actions() == 9
  assert game.max_game_length() == 12
  state = game.new_initial_state()
  assert state.current_player() == 0
  assert [state.action_to_string(0, a) for a in state.legal_actions()] == [
      "Move(0,1)", "Move(1,0)"]
  state.apply_action(1)
  assert state.current_player() == 1
  assert [state.action_to_string(1, a) for a in state.legal_actions()] == [
      "Move(1,2)", "Move(2,1)"]


def test_capture_by_monster_pays_2t_minus_moves():
  game = pyspiel.load_game("python_princess_monster(max_turns=5)")
  state = _play(game, [(0, 1), (1, 2), (1, 1)])
  assert not state.is_terminal()
  state.apply_action(1 * 3 + 1)  # monster moves onto the princess at (1,1)
  assert state.is_terminal()
  assert state.returns() == [-(10 - 4), 10 - 4]


def test_capture_by_princess_move():
  # On 2x3 the corners are 3 steps apart, so captures happen on princess moves.
  game = pyspiel.load_game("python_princess_monster(max_turns=4,rows=2,cols=3)")
  state = _play(game, [(0, 1), (0, 2)])
  assert not state.is_terminal()
  state.apply_action(0 * 3 + 2)  # the princess walks onto the monster at (0,2)
  assert state.is_terminal()
  assert state.returns() == [-(8 - 3), 8 - 3]


def test_princess_move_onto_monster_on_1x2_grid():
  game = pyspiel.load_game("python_princess_monster(max_turns=3,rows=1,cols=2)")
  state = game.new_initial_state()
  assert state.legal_actions() == [1]
  state.apply_action(1)
  assert state.is_terminal()
  assert state.returns() == [-5.0, 5.0]


def test_princess_wins_after_t_monster_moves():
  game = pyspiel.load_game("python_princess_monster(max_turns=2)")
  state = _play(game, [(0, 1), (1, 2), (0, 0)])
  assert not state.is_terminal()
  state.apply_action(2 * 3 + 2)
  assert state.is_terminal()
  assert state.returns() == [4.0, -4.0]
  assert state.legal_actions() == []


def test_information_state_is_own_moves_only():
  game = pyspiel.load_game("python_princess_monster(max_turns=3)")
  a = _play(game, [(0, 1), (1, 2), (0, 2)])
  b = _play(game, [(0, 1), (2, 1), (0, 2)])
  assert a.information_state_string(0) == b.information_state_string(0)
  assert a.information_state_tensor(0) == b.information_state_tensor(0)
  assert a.information_state_string(1) != b.information_state_string(1)
  assert a.information_state_string(0) == "p0 moves:(0,1) (0,2)"
  assert a.information_state_string(1) == "p1 moves:(1,2)"
  # Perfect recall: the same cell reached by different paths is a different info state.
  c = _play(game, [(1, 0), (1, 2), (0, 0), (2, 2), (0, 1)])
  d = _play(game, [(0, 1), (1, 2), (0, 0), (2, 2), (0, 1)])
  assert c.information_state_string(0) != d.information_state_string(0)
  assert c.observation_string(0) == d.observation_string(0) == "p0 at:(0,1) own moves:3"


def test_tensors():
  game = pyspiel.load_game("python_princess_monster(max_turns=3)")
  assert game.information_state_tensor_size() == 2 + 3 * 9
  assert game.observation_tensor_size() == 2 + 9 + 4
  state = _play(game, [(0, 1), (1, 2), (1, 1)])
  tensor = state.information_state_tensor(0)
  assert tensor[:2] == [1, 0]
  assert [i for i, x in enumerate(tensor[2:]) if x] == [0 * 9 + 1, 1 * 9 + 4]
  tensor = state.observation_tensor(1)
  assert tensor[:2] == [0, 1]
  assert [i for i, x in enumerate(tensor[2:11]) if x] == [5]
  assert [i for i, x in enumerate(tensor[11:]) if x] == [1]


def test_public_observer_shows_moves_made_only():
  game = pyspiel.load_game("python_princess_monster(max_turns=3)")
  public = game.make_py_observer(
      pyspiel.IIGObservationType(
          public_info=True, perfect_recall=False,
          private_info=pyspiel.PrivateInfoType.NONE))
  a = _play(game, [(0, 1), (1, 2)])
  b = _play(game, [(1, 0), (2, 1)])
  for player in (0, 1):
    assert public.string_from(a, player) == "moves made:2"
    assert public.string_from(b, player) == "moves made:2"
    public.set_from(a, player)
    assert list(public.tensor) == [0, 0, 1, 0, 0, 0, 0]


@pytest.mark.parametrize("game_string,message", [
    ("python_princess_monster(max_turns=0)", "max_turns"),
    ("python_princess_monster(max_turns=-3)", "max_turns"),
    ("python_princess_monster(rows=0)", "rows"),
    ("python_princess_monster(cols=0)", "cols"),
    ("python_princess_monster(rows=1,cols=1)", "rows"),
    ("python_princess_monster(max_turns=two)", "max_turns"),
    ("python_princess_monster(turns=3)", "turns"),
])
def test_bad_parameters_fail_at_load(game_string, message):
  with pytest.raises((ValueError, pyspiel.SpielError), match=message):
    pyspiel.load_game(game_string)


def test_illegal_actions_raise():
  game = pyspiel.load_game("python_princess_monster(max_turns=2)")
  state = game.new_initial_state()
  for action in (0, 4, 8):  # staying put, diagonal, far away
    with pytest.raises(ValueError, match="Illegal action"):
      state.apply_action(action)
  assert str(state) == "princess:(0,0) monster:(2,2) moves made:0"
  with pytest.raises(ValueError, match="pseudo-player"):
    state.legal_actions(-1)
  assert state.legal_actions(1) == []
  state = _play(game, [(0, 1), (1, 2), (0, 0), (2, 2)])
  assert state.is_terminal()
  with pytest.raises(ValueError, match="terminal"):
    state.apply_action(1)


def test_python_legal_actions_match_openspiel_route():
  """The Python fast path returns what the C++ route (legal_actions_mask) computes."""
  game = pyspiel.load_game("python_princess_monster(max_turns=3,rows=2,cols=3)")
  stack = [game.new_initial_state()]
  while stack:
    state = stack.pop()
    mask = state.legal_actions_mask()
    assert state.legal_actions() == [a for a, legal in enumerate(mask) if legal]
    stack.extend(state.child(a) for a in state.legal_actions())


def test_python_information_state_strings_match_openspiel_route():
  """The Python fast path answers as the C++ route (the info-state observer) does,
  with the cells of the player's own moves."""
  game = pyspiel.load_game("python_princess_monster(max_turns=3,rows=2,cols=3)")
  names = game.cell_names
  stack = [game.new_initial_state()]
  while stack:
    state = stack.pop()
    for player in (0, 1):
      key = state.information_state_string(player)
      assert key == pyspiel.State.information_state_string(state, player)
      assert key == f"p{player} moves:" + " ".join(
          names[cell] for cell in state.history()[player::2])
    stack.extend(state.child(a) for a in state.legal_actions())


def test_information_states_after_an_action_are_the_childs():
  """information_states_after (no copy: live_trace's deferred children) answers the
  child's strings, the cells of each player's own moves, at every history and action,
  and leaves the state as it was; a pickled state keeps its strings."""
  game = pyspiel.load_game("python_princess_monster(max_turns=3,rows=2,cols=3)")
  names = game.cell_names
  stack, checked = [game.new_initial_state()], 0
  while stack:
    state = stack.pop()
    before = (state.information_state_string(0), state.information_state_string(1))
    for action in state.legal_actions():
      history = state.history() + [action]
      assert state.information_states_after(action) == tuple(
          f"p{player} moves:" + " ".join(names[cell] for cell in history[player::2])
          for player in (0, 1))
      checked += 1
    assert before == (state.information_state_string(0),
                      state.information_state_string(1))
    copied = pickle.loads(pickle.dumps(state))
    assert before == (copied.information_state_string(0),
                      copied.information_state_string(1))
    stack.extend(state.child(a) for a in state.legal_actions())
  assert checked > 100
