"""A test game whose continual-resolving subgames have nested roots ([S] ch. 2).

None of the package's games has them (tests/resolving/compiled/test_nested_next_roots.py shows why):
a group of next roots is nested when one next root r lies below another r' of the
same group. Here player 1's move at r' (after player 0's first move) either goes
straight to player 0's next turn s (a root itself: its parent is player 1's) or
through a chance node to s' (no root: a chance parent), and player 0 sees neither
player 1's move nor the chance outcome, so s and s' are one information set: the
group holds r' (closest root above s') and s (below r'). Below s player 1 moves at
q and player 0 again at t (a root and a next turn), so the next subgame's own next
roots t lie below both of its nested roots.

Moves: chance c (seen by player 0), player 0's a (seen by both), player 1's b
(seen by player 1), if b = 1 chance d (seen by player 1), player 0's x (seen by
player 0), player 1's y (seen by both), player 0's z. Player 0's payoff mixes all
of them.
"""

import pyspiel

from ggp_cr.games import common

SHORT_NAME = "python_nested_roots_test"

_GAME_TYPE = common.game_type(
    short_name=SHORT_NAME,
    long_name="Test game with nested continual-resolving roots",
    parameter_specification={},
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC)

# What each player sees of the moves c, a, b, d, x, y, z.
_SEEN = {0: {"c", "a", "x", "y", "z"}, 1: {"a", "b", "d", "y"}}


def _payoff(m):
  u = (1.0 if m["x"] == m["c"] else -1.0) * (2.0 if m["b"] else 1.0)
  u += 0.5 if m["z"] != m["y"] else -0.5
  u += (0.5 * m.get("d", 0) - 0.25) * (1.0 if m["a"] else -1.0)
  u += 0.25 if m["a"] == m["b"] else -0.25
  return u


class NestedRootsGame(common.Game):
  """The test game (module docstring)."""

  def __init__(self, params=None):
    super().__init__(
        _GAME_TYPE,
        pyspiel.GameInfo(num_distinct_actions=2, max_chance_outcomes=2,
                         num_players=2, min_utility=-4.0, max_utility=4.0,
                         utility_sum=0.0, max_game_length=7),
        params or {})

  def new_initial_state(self):
    return NestedRootsState(self)

  def make_py_observer(self, iig_obs_type=None, params=None):
    return NestedRootsObserver(self, iig_obs_type, params)


class NestedRootsState(common.State):
  """State: the moves so far as (name, value) pairs."""

  def __init__(self, game):
    super().__init__(game)
    self.moves = ()

  def _next(self):
    names = [name for name, _ in self.moves]
    order = ["c", "a", "b"]
    if len(names) >= 3 and self.moves[2][1] == 1:
      order.append("d")
    order += ["x", "y", "z"]
    return order[len(names)] if len(names) < len(order) else None

  def current_player(self):
    name = self._next()
    if name is None:
      return pyspiel.PlayerId.TERMINAL
    if name in ("c", "d"):
      return pyspiel.PlayerId.CHANCE
    return 1 if name in ("b", "y") else 0

  def _chance_outcomes(self):
    return [(0, 0.5), (1, 0.5)]

  def _legal_actions(self, player):
    return [0, 1]

  def _apply_action(self, action):
    common.check_legal(self, action)
    self.moves += ((self._next(), action),)

  def _action_to_string(self, player, action):
    return f"{self._next()}={action}"

  def is_terminal(self):
    return self._next() is None

  def returns(self):
    if not self.is_terminal():
      return [0.0, 0.0]
    u = _payoff(dict(self.moves))
    return [u, -u]

  def decisions(self):
    return sum(name not in ("c", "d") for name, _ in self.moves)

  def seen(self, player):
    return [(name, value) for name, value in self.moves if name in _SEEN[player]]

  def __str__(self):
    return " ".join(f"{name}={value}" for name, value in self.moves)


class NestedRootsObserver(common.GameObserver):
  """Information state: the moves the player saw; public: the decisions made."""

  _NAMES = "cabdxyz"

  def tensor_layout(self, kind):
    if kind == common.ObservationKind.PUBLIC:
      return [("decisions", (6,))]
    return [("player", (2,)), ("seen", (7, 2))]

  def fill_tensor(self, state, player):
    if self.kind == common.ObservationKind.PUBLIC:
      self.dict["decisions"][state.decisions()] = 1
      return
    self.dict["player"][player] = 1
    for name, value in state.seen(player):
      self.dict["seen"][self._NAMES.index(name), value] = 1

  def observation_string(self, state, player):
    if self.kind == common.ObservationKind.PUBLIC:
      return f"decisions:{state.decisions()}"
    seen = " ".join(f"{name}={value}" for name, value in state.seen(player))
    return f"p{player} {seen}"


if SHORT_NAME not in pyspiel.registered_names():
  pyspiel.register_game(_GAME_TYPE, NestedRootsGame)
