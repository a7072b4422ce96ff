"""Generalized rock-paper-scissors, the thesis's debugging game ([S] §3.2).

Player 0 picks a number 1..n, then player 1 picks one without seeing it. Equal picks
draw; otherwise the higher number wins iff (higher - lower) > (n - 1) / 2. With n = 3 this
is rock-paper-scissors. Action k means picking k + 1.
"""

import pyspiel

from ggp_cr.games import common

_DEFAULT_PARAMS = {"n": 3}
# Largest n: the payoff matrix and tensors grow as n^2.
MAX_N = 1001

_GAME_TYPE = common.game_type(
    short_name="python_rps",
    long_name="Python generalized rock-paper-scissors",
    parameter_specification=_DEFAULT_PARAMS,
    chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC)


def winner(n, pick0, pick1):
  """Returns +1 if pick0 beats pick1, -1 if it loses, 0 on a draw (picks are 1..n)."""
  if pick0 == pick1:
    return 0
  higher_is_0 = pick0 > pick1
  higher_wins = abs(pick0 - pick1) > (n - 1) // 2
  return 1 if higher_is_0 == higher_wins else -1


class RPSGame(common.Game):
  """python_rps(n): generalized rock-paper-scissors with odd n in [1, MAX_N]."""

  def __init__(self, params=None):
    params = {**_DEFAULT_PARAMS, **(params or {})}
    n = common.int_parameter(params, "n", 1, MAX_N)
    if n % 2 == 0:
      raise ValueError(f"Parameter 'n' must be odd (n >= 1), got {n}.")
    self.n = n
    super().__init__(
        _GAME_TYPE,
        pyspiel.GameInfo(
            num_distinct_actions=n,
            max_chance_outcomes=0,
            num_players=2,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=2),
        params)

  def new_initial_state(self):
    return RPSState(self)

  def make_py_observer(self, iig_obs_type=None, params=None):
    return RPSObserver(self, iig_obs_type, params)


class RPSState(common.State):
  """State: the picks made so far, as a tuple of action ids."""

  def __init__(self, game):
    super().__init__(game)
    self.picks = ()

  def current_player(self):
    if len(self.picks) == 2:
      return pyspiel.PlayerId.TERMINAL
    return len(self.picks)

  def _legal_actions(self, player):
    return list(range(self.get_game().n))

  def _apply_action(self, action):
    common.check_legal(self, action)
    self.picks += (action,)

  def _action_to_string(self, player, action):
    return f"Pick({action + 1})"

  def is_terminal(self):
    return len(self.picks) == 2

  def returns(self):
    if len(self.picks) < 2:
      return [0.0, 0.0]
    w = winner(self.get_game().n, self.picks[0] + 1, self.picks[1] + 1)
    return [float(w), float(-w)]

  def __str__(self):
    return " ".join(f"p{i}:{a + 1}" for i, a in enumerate(self.picks))


class RPSObserver(common.GameObserver):
  """Info state and observation: the player's own pick. Public: how many picks."""

  def tensor_layout(self, kind):
    if kind == common.ObservationKind.PUBLIC:
      return [("picks_made", (3,))]
    return [("player", (2,)), ("own_pick", (self.game.n,))]

  def fill_tensor(self, state, player):
    if self.kind == common.ObservationKind.PUBLIC:
      self.dict["picks_made"][len(state.picks)] = 1
      return
    self.dict["player"][player] = 1
    if len(state.picks) > player:
      self.dict["own_pick"][state.picks[player]] = 1

  def observation_string(self, state, player):
    if self.kind == common.ObservationKind.PUBLIC:
      return f"picks made:{len(state.picks)}"
    if len(state.picks) > player:
      return f"p{player} pick:{state.picks[player] + 1}"
    return f"p{player}"


pyspiel.register_game(_GAME_TYPE, RPSGame)
