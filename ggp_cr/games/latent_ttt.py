"""Latent tic-tac-toe, tic-tac-toe with delayed moves ([S] §3.2.4).

A move is revealed to the opponent only at the opponent's next move. The exact
mechanics (the thesis's reference implementation's): docs/games.md.
"""

import pyspiel

from ggp_cr.games import common

_NUM_CELLS = 9
_ALL_CELLS = (1 << _NUM_CELLS) - 1
_NO_MOVE = -1
_TERMINAL = int(pyspiel.PlayerId.TERMINAL)
_ENEMY_SHIFT = 9
_ENEMY_COUNT_SHIFT = 18
_PENDING_SHIFT = 22

# The longest history has 10 moves, 5 per player: found by walking the whole tree
# (4,854,291 histories), which the slow test in tests/test_latent_ttt.py repeats.
_MAX_GAME_LENGTH = 10
_MAX_MOVES_PER_PLAYER = 5

_LINES = tuple(
    sum(1 << cell for cell in line) for line in (
        (0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8),
        (0, 4, 8), (2, 4, 6)))

# Indexed by a mask of a player's own marks: whether they contain a line.
_HAS_LINE = tuple(any(mask & line == line for line in _LINES) for mask in range(1 << 9))

# Indexed by a mask of known cells: the unknown cells, ascending.
_UNKNOWN_CELLS = tuple(
    tuple(c for c in range(_NUM_CELLS) if not mask >> c & 1) for mask in range(1 << 9))

_GAME_TYPE = common.game_type(
    short_name="python_latent_ttt",
    long_name="Python latent tic-tac-toe",
    parameter_specification={},
    chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC)


class LatentTTTGame(common.Game):
  """python_latent_ttt: the thesis's latent tic-tac-toe; no parameters."""

  def __init__(self, params=None):
    if params:
      raise ValueError(f"python_latent_ttt takes no parameters; got {dict(params)}.")
    super().__init__(
        _GAME_TYPE,
        pyspiel.GameInfo(
            num_distinct_actions=_NUM_CELLS,
            max_chance_outcomes=0,
            num_players=2,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=_MAX_GAME_LENGTH),
        params or {})

  def new_initial_state(self):
    return LatentTTTState(self)

  def make_py_observer(self, iig_obs_type=None, params=None):
    return LatentTTTObserver(self, iig_obs_type, params)


class LatentTTTState(common.State):
  """State: the player to move and both players' views, one packed int per player.

  View layout: bits 0-8 the cells the player sees as its own marks, bits 9-17 those it
  sees as the opponent's, bits 18-21 the number of revealed enemy marks (counting those
  its own move overwrote), bits 22-25 its pending move + 1 (0 if none). The number of a
  player's own marks is the size of its own mask: an own mark is never overwritten.
  """

  def __init__(self, game):
    super().__init__(game)
    self.player = 0
    self.view0 = 0
    self.view1 = 0

  def current_player(self):
    return self.player

  def is_terminal(self):
    return self.player == _TERMINAL

  def _legal_actions(self, player):
    # The pending move is always an own mark in the player's view, so it is known.
    view = self.view1 if player else self.view0
    return list(_UNKNOWN_CELLS[(view | view >> _ENEMY_SHIFT) & _ALL_CELLS])

  def _apply_action(self, action):
    player = self.player
    if player == _TERMINAL:
      raise ValueError(f"Cannot apply action {action} to a terminal state:\n{self}")
    own, other = (self.view1, self.view0) if player else (self.view0, self.view1)
    mine = own & _ALL_CELLS
    enemy = own >> _ENEMY_SHIFT & _ALL_CELLS
    enemy_count = own >> _ENEMY_COUNT_SHIFT & 15
    known = mine | enemy
    if not 0 <= action < _NUM_CELLS or known >> action & 1:
      raise ValueError(
          f"Illegal action {action} for player {player} in state:\n{self}\n"
          f"legal actions: {self._legal_actions(player)}")
    revealed = (other >> _PENDING_SHIFT) - 1
    if revealed != _NO_MOVE and not known >> revealed & 1:
      enemy |= 1 << revealed
      enemy_count += 1
    mine |= 1 << action
    enemy &= ~(1 << action)
    own = (mine | enemy << _ENEMY_SHIFT | enemy_count << _ENEMY_COUNT_SHIFT
           | (action + 1) << _PENDING_SHIFT)
    if player:
      self.view1 = own
    else:
      self.view0 = own
    self.player = _TERMINAL if self._game_over(1 - player) else 1 - player

  def _game_over(self, next_player):
    """The thesis's terminal test, with `next_player` to move next."""
    x_view, o_view = self.view0, self.view1
    return (not _has_legal_move(x_view) or not _has_legal_move(o_view)
            or _HAS_LINE[o_view & _ALL_CELLS]
            or (next_player == 0 and _HAS_LINE[x_view & _ALL_CELLS]))

  def _action_to_string(self, player, action):
    return f"Mark({action})"

  def returns(self):
    if self.player != _TERMINAL:
      return [0.0, 0.0]
    x_won = _HAS_LINE[self.view0 & _ALL_CELLS]
    o_won = _HAS_LINE[self.view1 & _ALL_CELLS]
    if x_won == o_won:
      return [0.0, 0.0]
    return [1.0, -1.0] if x_won else [-1.0, 1.0]

  def view(self, player):
    """Player's view as (own marks mask, enemy marks mask, pending cell or -1)."""
    view = self.view1 if player else self.view0
    return (view & _ALL_CELLS, view >> _ENEMY_SHIFT & _ALL_CELLS,
            (view >> _PENDING_SHIFT) - 1)

  def enemy_count(self, player):
    """Player's counter of revealed enemy marks (those overwritten included)."""
    return (self.view1 if player else self.view0) >> _ENEMY_COUNT_SHIFT & 15

  def moves_with_reveals(self, player):
    """Player's information: [(own move, opponent move revealed then, or -1)]."""
    history = self.history()
    return [(history[i], history[i - 1] if i else _NO_MOVE)
            for i in range(player, len(history), 2)]

  def __str__(self):
    return " ".join(
        f"{'XO'[p]}:{_board_string(*self.view(p), p)}" for p in (0, 1)) + (
            f" to move:{self.player}")


def _has_legal_move(view):
  """has_legal of the thesis: own marks + enemy marks + pending move < 9."""
  return ((view & _ALL_CELLS).bit_count() + (view >> _ENEMY_COUNT_SHIFT & 15)
          + (view >> _PENDING_SHIFT > 0) < _NUM_CELLS)


def _board_string(mine, enemy, pending, player):
  """A view as 3 rows of 3 cells: '.' unknown, own mark, opponent's mark; the pending
  move is in lower case."""
  own, other = "XO"[player], "OX"[player]
  cells = []
  for c in range(_NUM_CELLS):
    if mine >> c & 1:
      cells.append(own.lower() if c == pending else own)
    elif enemy >> c & 1:
      cells.append(other)
    else:
      cells.append(".")
  return "/".join("".join(cells[r:r + 3]) for r in (0, 3, 6))


class LatentTTTObserver(common.GameObserver):
  """Info state: own moves with the reveals seen then, e.g. `p0:4/- 8/0` (X marked 4,
  then marked 8 and saw O's 0). Observation: the player's current view (the thesis's
  imperfect-recall information set) with its pending move. Public: moves made."""

  def tensor_layout(self, kind):
    if kind == common.ObservationKind.PUBLIC:
      return [("moves_made", (_MAX_GAME_LENGTH + 1,))]
    if kind == common.ObservationKind.INFO_STATE:
      return [("player", (2,)),
              ("own_moves", (_MAX_MOVES_PER_PLAYER, _NUM_CELLS)),
              ("revealed", (_MAX_MOVES_PER_PLAYER, _NUM_CELLS))]
    return [("player", (2,)), ("view", (_NUM_CELLS, 3)), ("pending", (_NUM_CELLS,))]

  def fill_tensor(self, state, player):
    if self.kind == common.ObservationKind.PUBLIC:
      self.dict["moves_made"][len(state.history())] = 1
      return
    self.dict["player"][player] = 1
    if self.kind == common.ObservationKind.INFO_STATE:
      own_moves, revealed = self.dict["own_moves"], self.dict["revealed"]
      for turn, (move, reveal) in enumerate(state.moves_with_reveals(player)):
        own_moves[turn, move] = 1
        if reveal != _NO_MOVE:
          revealed[turn, reveal] = 1
      return
    mine, enemy, pending = state.view(player)
    view = self.dict["view"]
    for c in range(_NUM_CELLS):
      view[c, 1 if mine >> c & 1 else 2 if enemy >> c & 1 else 0] = 1
    if pending != _NO_MOVE:
      self.dict["pending"][pending] = 1

  def observation_string(self, state, player):
    if self.kind == common.ObservationKind.PUBLIC:
      return f"moves made:{len(state.history())}"
    if self.kind == common.ObservationKind.INFO_STATE:
      return f"p{player}:" + " ".join(
          f"{move}/{'-' if reveal == _NO_MOVE else reveal}"
          for move, reveal in state.moves_with_reveals(player))
    return f"p{player}:{_board_string(*state.view(player), player)}"


pyspiel.register_game(_GAME_TYPE, LatentTTTGame)
