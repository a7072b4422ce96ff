"""Princess and monster, a pursuit-evasion game on a grid ([S] §3.2.3).

The grid has `rows` x `cols` cells joined by orthogonal edges. The princess (player 0)
starts at (0, 0), the monster (player 1) at (rows - 1, cols - 1). Each turn the princess
moves, then the monster; a move goes to an adjacent cell (staying put is not allowed).
Nobody observes anything, so a player's information state is its own move sequence.

If both stand on the same cell after any move, the monster wins
2T - princess_moves - monster_moves (the princess gets the negative). If the monster has
made T = `max_turns` moves without a capture, the princess wins 2T.

Action encoding: the action id is the target cell, `r * cols + c`, written `Move(r,c)`.
A player's legal actions are the cells adjacent to its current cell. A grid needs at
least 2 cells so that every cell has a neighbour. The game's utility bounds are +-2T,
which hold for both players on every grid; on the 3x3 grid player 0's payoffs span
[-(2T - 4), 2T], so Δu = 4T - 4.
"""

import pyspiel

from ggp_cr.games import common

_DEFAULT_PARAMS = {"max_turns": 6, "rows": 3, "cols": 3}
# Documented limits: a state string or tensor holds up to T * rows * cols entries.
MAX_TURNS = 100
MAX_SIDE = 20

_GAME_TYPE = common.game_type(
    short_name="python_princess_monster",
    long_name="Python princess and monster",
    parameter_specification=_DEFAULT_PARAMS,
    chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC)

PRINCESS = 0
MONSTER = 1
_TERMINAL = pyspiel.PlayerId.TERMINAL


def _neighbours(rows, cols):
  """For every cell id, the sorted tuple of the ids of its orthogonal neighbours."""
  result = []
  for r in range(rows):
    for c in range(cols):
      cells = []
      if r > 0:
        cells.append((r - 1) * cols + c)
      if c > 0:
        cells.append(r * cols + c - 1)
      if c < cols - 1:
        cells.append(r * cols + c + 1)
      if r < rows - 1:
        cells.append((r + 1) * cols + c)
      result.append(tuple(cells))
  return tuple(result)


class PrincessMonsterGame(common.Game):
  """python_princess_monster(max_turns, rows, cols): T in [1, MAX_TURNS], rows and
  cols in [1, MAX_SIDE], at least 2 cells (tensors grow as T * rows * cols)."""

  def __init__(self, params=None):
    params = {**_DEFAULT_PARAMS, **(params or {})}
    self.max_turns = common.int_parameter(params, "max_turns", 1, MAX_TURNS)
    self.rows = common.int_parameter(params, "rows", 1, MAX_SIDE)
    self.cols = common.int_parameter(params, "cols", 1, MAX_SIDE)
    if self.rows * self.cols < 2:
      raise ValueError(
          "Parameters 'rows' and 'cols' must give a grid of at least 2 cells "
          f"(rows * cols >= 2), got rows={self.rows}, cols={self.cols}.")
    self.num_cells = self.rows * self.cols
    self.neighbours = _neighbours(self.rows, self.cols)
    self.cell_names = tuple(
        f"({cell // self.cols},{cell % self.cols})" for cell in range(self.num_cells))
    super().__init__(
        _GAME_TYPE,
        pyspiel.GameInfo(
            num_distinct_actions=self.num_cells,
            max_chance_outcomes=0,
            num_players=2,
            min_utility=-2.0 * self.max_turns,
            max_utility=2.0 * self.max_turns,
            utility_sum=0.0,
            max_game_length=2 * self.max_turns),
        params)

  def new_initial_state(self):
    return PrincessMonsterState(self)

  def make_py_observer(self, iig_obs_type=None, params=None):
    return PrincessMonsterObserver(self, iig_obs_type, params)


class PrincessMonsterState(common.State):
  """State: both players' cells and the number of moves left (2T minus moves made).

  Counting moves left keeps the terminal test and the player to move free of game
  lookups: its parity is that of the moves made, and it is the monster's win on capture.
  `_info0` and `_info1` are the players' information state strings, extended as
  actions are applied.
  """

  def __init__(self, game):
    super().__init__(game)
    self.princess_cell = 0
    self.monster_cell = game.num_cells - 1
    self.moves_left = 2 * game.max_turns
    self._info0, self._info1 = "p0 moves:", "p1 moves:"

  def current_player(self):
    if self.princess_cell == self.monster_cell or not self.moves_left:
      return _TERMINAL
    return self.moves_left & 1

  def is_terminal(self):
    return self.princess_cell == self.monster_cell or not self.moves_left

  def _legal_actions(self, player):
    cell = self.monster_cell if player else self.princess_cell
    return list(self.get_game().neighbours[cell])

  def _apply_action(self, action):
    if self.princess_cell == self.monster_cell or not self.moves_left:
      raise ValueError(f"Cannot apply action {action} to a terminal state:\n{self}")
    mover = self.moves_left & 1
    legal = self.get_game().neighbours[self.monster_cell if mover else self.princess_cell]
    if action not in legal:
      raise ValueError(
          f"Illegal action {action} for player {mover} in state:\n{self}\n"
          f"legal actions: {list(legal)}")
    self._info0, self._info1 = self.information_states_after(action)
    if mover:
      self.monster_cell = action
    else:
      self.princess_cell = action
    self.moves_left -= 1

  def information_states_after(self, action):
    """Both players' information state strings after `action` (legal here), without
    a copy of the state (live_trace's deferred children): the mover's gains its
    move's cell."""
    name = self.get_game().cell_names[action]
    if self.moves_left & 1:
      info = self._info1
      return self._info0, info + (name if info[-1] == ":" else " " + name)
    info = self._info0
    return info + (name if info[-1] == ":" else " " + name), self._info1

  def _action_to_string(self, player, action):
    game = self.get_game()
    return f"Move({action // game.cols},{action % game.cols})"

  def returns(self):
    if self.princess_cell == self.monster_cell:
      return [float(-self.moves_left), float(self.moves_left)]
    if not self.moves_left:
      princess_wins = 2 * self.get_game().max_turns
      return [float(princess_wins), float(-princess_wins)]
    return [0.0, 0.0]

  def moves_made(self):
    """The number of moves made by both players together."""
    return 2 * self.get_game().max_turns - self.moves_left

  def information_state_string(self, player=None):
    """The cells of `player`'s moves so far (default: the player to move), as pyspiel's
    (answered in Python for Python callers; the observer gives C++ the same)."""
    if player is None:
      player = self.current_player()
    if player != 0 and player != 1:
      raise ValueError(f"No information state for player {player}.")
    return self._info1 if player else self._info0

  def own_moves(self, player):
    """The target cells of `player`'s moves so far, in order."""
    return self.history()[player::2]

  def __str__(self):
    names = self.get_game().cell_names
    return (f"princess:{names[self.princess_cell]} monster:{names[self.monster_cell]} "
            f"moves made:{self.moves_made()}")


class PrincessMonsterObserver(common.GameObserver):
  """Info state: the player's own moves. Observation: the player's cell and number of
  own moves (the thesis's imperfect-recall information set). Public: moves made."""

  def tensor_layout(self, kind):
    game = self.game
    if kind == common.ObservationKind.PUBLIC:
      return [("moves_made", (2 * game.max_turns + 1,))]
    if kind == common.ObservationKind.INFO_STATE:
      return [("player", (2,)), ("own_moves", (game.max_turns, game.num_cells))]
    return [("player", (2,)), ("cell", (game.num_cells,)),
            ("own_moves_made", (game.max_turns + 1,))]

  def fill_tensor(self, state, player):
    if self.kind == common.ObservationKind.PUBLIC:
      self.dict["moves_made"][state.moves_made()] = 1
      return
    self.dict["player"][player] = 1
    if self.kind == common.ObservationKind.INFO_STATE:
      own_moves = self.dict["own_moves"]
      for turn, cell in enumerate(state.own_moves(player)):
        own_moves[turn, cell] = 1
      return
    cell = state.monster_cell if player == MONSTER else state.princess_cell
    self.dict["cell"][cell] = 1
    self.dict["own_moves_made"][(state.moves_made() + 1 - player) // 2] = 1

  def observation_string(self, state, player):
    if self.kind == common.ObservationKind.PUBLIC:
      return f"moves made:{state.moves_made()}"
    names = self.game.cell_names
    if self.kind == common.ObservationKind.INFO_STATE:
      return state.information_state_string(player)
    cell = state.monster_cell if player == MONSTER else state.princess_cell
    return f"p{player} at:{names[cell]} own moves:{(state.moves_made() + 1 - player) // 2}"


pyspiel.register_game(_GAME_TYPE, PrincessMonsterGame)
