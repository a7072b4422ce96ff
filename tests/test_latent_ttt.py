"""Tests of python_latent_ttt against the mechanics of games.md and [S] §3.2.4."""

import numpy as np
import pytest

import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.tree.game_size import game_size

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8),
         (2, 4, 6))


class SpecReference:
  """The rules exactly as games.md words them, with cells[9] lists: an independent
  implementation to compare the game against."""

  def __init__(self):
    self.cells = [[0] * 9, [0] * 9]
    self.mine = [0, 0]
    self.enemy = [0, 0]
    self.pending = [None, None]
    self.to_move = 0
    self.seen = [[], []]  # per player: (own move, opponent move revealed then)

  def legal(self, p):
    return [c for c in range(9) if self.cells[p][c] == 0 and c != self.pending[p]]

  def play(self, a):
    p, o = self.to_move, 1 - self.to_move
    d = self.pending[o]
    new = list(self.cells[p])
    if d is not None and new[d] == 0:
      new[d] = 2
      self.enemy[p] += 1
    if self.cells[p][a] == 0:
      new[a] = 1
      self.mine[p] += 1
    self.cells[p] = new
    self.pending[p] = a
    self.seen[p].append((a, -1 if d is None else d))
    self.to_move = o

  def has_legal(self, q):
    return self.mine[q] + self.enemy[q] + (self.pending[q] is not None) < 9

  def won(self, q):
    return self.mine[q] >= 3 and any(
        all(self.cells[q][c] == 1 for c in line) for line in LINES)

  def terminal(self):
    return (not self.has_legal(0) or not self.has_legal(1) or self.won(1)
            or (self.won(0) and self.to_move == 0))

  def x_payoff(self):
    if self.won(0) == self.won(1):
      return 0
    return 1 if self.won(0) else -1


@pytest.fixture(name="game")
def fixture_game():
  return pyspiel.load_game("python_latent_ttt")


def _play(game, moves):
  state = game.new_initial_state()
  for move in moves:
    state.apply_action(move)
  return state


def test_game_info(game):
  assert game.num_distinct_actions() == 9
  assert game.num_players() == 2
  assert game.max_game_length() == 10
  assert (game.min_utility(), game.max_utility()) == (-1.0, 1.0)
  state = game.new_initial_state()
  assert state.current_player() == 0
  assert state.legal_actions() == list(range(9))
  assert [state.action_to_string(0, a) for a in (0, 8)] == ["Mark(0)", "Mark(8)"]


def test_move_is_revealed_when_opponent_moves_next(game):
  state = _play(game, [4])
  assert state.observation_string(1) == "p1:.../.../..."
  assert state.legal_actions() == list(range(9))  # O cannot know X took the centre
  state.apply_action(0)  # O marks 0 and sees X's 4 only now
  assert state.observation_string(1) == "p1:o../.X./..."
  assert state.information_state_string(1) == "p1:0/4"
  assert state.observation_string(0) == "p0:.../.x./..."
  state.apply_action(8)  # X marks 8 and sees O's 0
  assert state.observation_string(0) == "p0:O../.X./..x"
  assert state.information_state_string(0) == "p0:4/- 8/0"
  assert state.legal_actions() == [1, 2, 3, 5, 6, 7, 8]  # O has not seen X's 8 yet
  assert state.legal_actions(0) == []


def test_move_onto_just_revealed_cell_overwrites_it(game):
  state = _play(game, [0, 0])  # O marks X's pending cell
  # In O's view the revealed enemy mark is overwritten by O's own; both counters grew.
  assert state.observation_string(1) == "p1:o../.../..."
  assert (state.view(1)[0].bit_count(), state.enemy_count(1)) == (1, 1)
  # O cannot mark 0 again; X's new mark at 1 is not revealed to O yet.
  state.apply_action(1)
  assert state.legal_actions() == list(range(1, 9))


def test_conflicting_move_is_lost(game):
  state = _play(game, [0, 0, 1])
  # X sees O's move onto its own cell 0: it is discarded, not an enemy mark.
  assert state.observation_string(0) == "p0:Xx./.../..."
  assert state.enemy_count(0) == 0
  assert state.information_state_string(0) == "p0:0/- 1/0"


def test_pending_move_is_not_legal(game):
  state = _play(game, [4, 0])
  assert state.view(0)[2] == 4
  assert 4 not in state.legal_actions()
  with pytest.raises(ValueError, match="Illegal action"):
    state.apply_action(4)


def test_o_gets_one_reply_after_x_line(game):
  x_line = [0, 3, 1, 4, 2]
  state = _play(game, x_line)
  assert not state.is_terminal()
  assert state.current_player() == 1
  state.apply_action(8)  # no O line: X wins
  assert state.is_terminal()
  assert state.returns() == [1.0, -1.0]
  state = _play(game, x_line + [5])  # O completes 3-4-5 in its reply: draw
  assert state.is_terminal()
  assert state.returns() == [0.0, 0.0]


def test_o_line_ends_game_at_once(game):
  state = _play(game, [0, 3, 1, 4, 8, 5])
  assert state.is_terminal()
  assert state.returns() == [-1.0, 1.0]
  with pytest.raises(ValueError, match="terminal"):
    state.apply_action(2)


def test_game_ends_when_a_player_has_no_legal_move(game):
  state = _play(game, [0, 1, 2, 4, 3, 5, 7])
  assert not state.is_terminal()
  state.apply_action(6)  # O: 4 own marks, 4 seen enemy marks and a pending move
  assert state.is_terminal()
  assert state.returns() == [0.0, 0.0]


def test_lost_moves_decide_the_winner(game):
  # O marks 0 (X's pending cell): in X's view it is lost, in O's it overwrites.
  # O goes on with 3 and 6 and has the column 0-3-6 in its own view.
  state = _play(game, [0, 0, 1, 3, 8, 6])
  assert state.observation_string(1) == "p1:OX./O../o.X"
  assert state.is_terminal()
  assert state.returns() == [-1.0, 1.0]


def test_matches_spec_reference_on_random_playouts(game):
  rng = np.random.default_rng(0)
  for _ in range(300):
    state, reference = game.new_initial_state(), SpecReference()
    while True:
      assert state.is_terminal() == reference.terminal()
      if state.is_terminal():
        assert state.returns() == [reference.x_payoff(), -reference.x_payoff()]
        break
      player = state.current_player()
      assert player == reference.to_move
      assert state.legal_actions() == reference.legal(player)
      assert state.legal_actions_mask() == [
          int(c in reference.legal(player)) for c in range(9)]
      for p in (0, 1):
        mine, enemy, pending = state.view(p)
        assert [1 if mine >> c & 1 else 2 if enemy >> c & 1 else 0
                for c in range(9)] == reference.cells[p]
        assert pending == (-1 if reference.pending[p] is None else reference.pending[p])
        assert state.moves_with_reveals(p) == reference.seen[p]
        assert state.information_state_string(p) == f"p{p}:" + " ".join(
            f"{a}/{'-' if d == -1 else d}" for a, d in reference.seen[p])
      action = int(rng.choice(state.legal_actions()))
      state.apply_action(action)
      reference.play(action)


def test_tensors(game):
  state = _play(game, [4, 0, 8])
  assert game.information_state_tensor_size() == 2 + 2 * 5 * 9
  assert game.observation_tensor_size() == 2 + 27 + 9
  tensor = np.array(state.information_state_tensor(0))
  assert list(tensor[:2]) == [1, 0]
  own_moves = tensor[2:2 + 45].reshape(5, 9)
  revealed = tensor[2 + 45:].reshape(5, 9)
  assert [list(np.flatnonzero(row)) for row in own_moves[:3]] == [[4], [8], []]
  assert [list(np.flatnonzero(row)) for row in revealed[:3]] == [[], [0], []]
  tensor = np.array(state.observation_tensor(0))
  view = tensor[2:29].reshape(9, 3)
  assert list(view.argmax(axis=1)) == [2, 0, 0, 0, 1, 0, 0, 0, 1]
  assert list(np.flatnonzero(tensor[29:])) == [8]


def test_public_observer_counts_moves(game):
  public = game.make_py_observer(
      pyspiel.IIGObservationType(
          public_info=True, perfect_recall=False,
          private_info=pyspiel.PrivateInfoType.NONE))
  for moves in ([4, 0, 8], [0, 0, 1]):
    state = _play(game, moves)
    assert public.string_from(state, 0) == public.string_from(state, 1) == "moves made:3"
    public.set_from(state, 1)
    assert list(np.flatnonzero(public.tensor)) == [3]


def test_bad_input(game):
  with pytest.raises((ValueError, pyspiel.SpielError), match="size"):
    pyspiel.load_game("python_latent_ttt(size=4)")
  state = game.new_initial_state()
  for action in (-2, 9):
    with pytest.raises(ValueError, match="Illegal action"):
      state.apply_action(action)
  state.apply_action(0)
  state.apply_action(5)
  with pytest.raises(ValueError, match="Illegal action"):
    state.apply_action(0)  # X's own mark
  state.apply_action(1)
  with pytest.raises(ValueError, match="Illegal action"):
    state.apply_action(0)  # revealed to O now
  with pytest.raises(ValueError, match="pseudo-player"):
    state.legal_actions(-1)


@pytest.mark.slow
def test_thesis_table_5_1_sizes(game):
  size = game_size(game)
  assert size.histories == 4854291
  assert sum(size.infosets) == 342196
  assert size.utility_range == 2
  assert size.max_actions == 9
  assert size.infosets == [192602, 149594]
  assert size.max_depth == game.max_game_length() == 10
