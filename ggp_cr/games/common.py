"""Shared pieces of ggp_cr's Python games: game types, parameter checks, observers.

Every game of the package is a two-player, zero-sum, sequential pyspiel game with
terminal rewards. Its state is flat (ints and tuples) so that OpenSpiel's clone, a deep
copy of the state's ``__dict__``, is cheap; strings and tensors are built only when an
observer asks for them.

An observer serves the three observation types the package uses:

* information state (``perfect_recall=True``): everything the player has seen and done;
* observation (``perfect_recall=False``, ``private_info=SINGLE_PLAYER``): what the player
  sees now;
* public observation (``private_info=NONE``): what both players see; used by public
  subgame targeting and continual resolving.
"""

import enum

import numpy as np

import pyspiel

# The pseudo-players as ints (a comparison with pyspiel.PlayerId's enum costs more).
_CHANCE = int(pyspiel.PlayerId.CHANCE)
_TERMINAL = int(pyspiel.PlayerId.TERMINAL)

def game_type(short_name, long_name, parameter_specification, chance_mode, **provides):
  """A pyspiel.GameType for a two-player zero-sum sequential game of ours; `provides`
  overrides the provides_* flags (all True by default)."""
  flags = dict(provides_information_state_string=True,
               provides_information_state_tensor=True,
               provides_observation_string=True,
               provides_observation_tensor=True)
  flags.update(provides)
  return pyspiel.GameType(
      short_name=short_name,
      long_name=long_name,
      dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
      chance_mode=chance_mode,
      information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
      utility=pyspiel.GameType.Utility.ZERO_SUM,
      reward_model=pyspiel.GameType.RewardModel.TERMINAL,
      max_num_players=2,
      min_num_players=2,
      parameter_specification=parameter_specification,
      **flags,
  )


def int_parameter(params, name, minimum, maximum=None):
  """Returns integer parameter `name`, raising ValueError naming it if out of range."""
  value = params[name]
  if isinstance(value, bool) or not isinstance(value, int):
    raise ValueError(f"Parameter '{name}' must be an integer, got {value!r}.")
  if value < minimum or (maximum is not None and value > maximum):
    allowed = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
    raise ValueError(f"Parameter '{name}' must be {allowed}, got {value}.")
  return value


def choice_parameter(params, name, choices):
  """Returns string parameter `name`, raising ValueError if it is not in `choices`."""
  value = params[name]
  if value not in choices:
    raise ValueError(
        f"Parameter '{name}' must be one of {', '.join(choices)}; got {value!r}.")
  return value


def check_legal(state, action):
  """Raises ValueError unless `action` is legal for the player to move in `state`."""
  if action not in state.legal_actions():
    raise ValueError(
        f"Illegal action {action} in state:\n{state}\n"
        f"legal actions: {state.legal_actions()}")


class StateError(pyspiel.SpielError, ValueError):
  """A state API call that is invalid where it is made (as OpenSpiel's SpielError)."""


# First line of a serialized state of our games (then the game string, then the
# action history): no pickled attributes, so deserializing replays legal actions only.
STATE_FORMAT = "ggp_cr-state-1"


class Game(pyspiel.Game):
  """Base of the games: states (de)serialize as their action history.

  `state.serialize()` gives STATE_FORMAT, the game string and the action history;
  `deserialize_state` replays the history on a new initial state, so it cannot run
  code, and raises StateError for another format, another game or an illegal action.
  (OpenSpiel's C++ `pyspiel.serialize_game_and_state` keeps its own format.)
  """

  def deserialize_state(self, text):
    lines = str(text).split("\n")
    if len(lines) != 3 or lines[0] != STATE_FORMAT:
      raise StateError(f"Not a serialized {self.get_type().short_name} state (expected "
                       f"'{STATE_FORMAT}', the game string and the actions, one per "
                       f"line); got {str(text)[:80]!r}.")
    if lines[1] != str(self):
      raise StateError(f"The serialized state is of {lines[1]}, not {self}.")
    state = self.new_initial_state()
    for word in lines[2].split():
      try:
        action = int(word)
      except ValueError:
        raise StateError(f"Serialized state: {word!r} is not an action id.") from None
      if action not in state.legal_actions():
        raise StateError(f"Serialized state: action {action} is illegal after "
                         f"{state.history()}.")
      state.apply_action(action)
    return state


def _restore_state(game_string, history):
  """Unpickles a state of ours: replays `history` in the game (see Game)."""
  game = pyspiel.load_game(game_string)
  return game.deserialize_state(
      f"{STATE_FORMAT}\n{game}\n{' '.join(map(str, history))}")


class State(pyspiel.State):
  """Base of the games' states: answers `legal_actions` in Python.

  pyspiel's own `legal_actions` goes through C++ and back into `_legal_actions`, which
  costs several microseconds a call; this gives the same answer directly. A subclass
  defines `current_player`, `_legal_actions(player)` and, with chance nodes,
  `_chance_outcomes`. `chance_outcomes` off a chance node and `apply_action` at a
  terminal raise StateError; states serialize and pickle as their action history.
  """

  def chance_outcomes(self):
    """The (outcome, probability) pairs of a chance node; StateError elsewhere."""
    if self.current_player() != _CHANCE:
      kind = "terminal" if self.is_terminal() else "decision"
      raise StateError(f"chance_outcomes() called at a {kind} node of "
                       f"{self.get_game()}; only chance nodes have outcomes.")
    return self._chance_outcomes()

  def _chance_outcomes(self):
    raise NotImplementedError

  def apply_action(self, action):
    if self.current_player() == _TERMINAL:
      raise StateError(f"Cannot apply action {action} to a terminal state: the game "
                       "is over.")
    super().apply_action(action)

  def serialize(self):
    return f"{STATE_FORMAT}\n{self.get_game()}\n{' '.join(map(str, self.history()))}"

  def __reduce__(self):
    return _restore_state, (str(self.get_game()), tuple(self.history()))

  def legal_actions(self, player=None):
    """The legal actions of `player` (default: the player to move), as pyspiel's."""
    current = self.current_player()
    if current == _TERMINAL:
      return []
    if current == _CHANCE:
      return [outcome for outcome, _ in self.chance_outcomes()]
    if player is None or player == current:
      return list(self._legal_actions(current))
    if player < 0:
      raise ValueError(f"No legal actions for pseudo-player {player}.")
    return []


class ObservationKind(enum.Enum):
  """The three kinds of observation a game of ours provides."""
  INFO_STATE = "info_state"
  OBSERVATION = "observation"
  PUBLIC = "public"


def observation_kind(iig_obs_type):
  """Maps an IIGObservationType to the ObservationKind it asks for."""
  if iig_obs_type is None:
    return ObservationKind.OBSERVATION
  if iig_obs_type.private_info == pyspiel.PrivateInfoType.ALL_PLAYERS:
    raise ValueError(
        "Observations with private_info=ALL_PLAYERS are not provided by ggp_cr games; "
        "use SINGLE_PLAYER or NONE.")
  if iig_obs_type.private_info == pyspiel.PrivateInfoType.NONE:
    if not iig_obs_type.public_info:
      raise ValueError("An observation with neither public nor private info is empty.")
    return ObservationKind.PUBLIC
  if iig_obs_type.perfect_recall:
    return ObservationKind.INFO_STATE
  return ObservationKind.OBSERVATION


class GameObserver:
  """Base of the games' observers, conforming to OpenSpiel's PyObserver interface.

  A subclass defines `tensor_layout(kind)` (a list of (name, shape) pieces),
  `fill_tensor(state, player)` writing into `self.dict` (already zeroed) and
  `observation_string(state, player)`, all according to `self.kind`.
  """

  def __init__(self, game, iig_obs_type, params):
    if params:
      raise ValueError(f"Observation parameters are not supported; got {params}.")
    self.game = game
    self.kind = observation_kind(iig_obs_type)
    layout = self.tensor_layout(self.kind)
    size = sum(int(np.prod(shape)) for _, shape in layout)
    self.tensor = np.zeros(size, np.float32)
    self.dict = {}
    offset = 0
    for name, shape in layout:
      n = int(np.prod(shape))
      self.dict[name] = self.tensor[offset:offset + n].reshape(shape)
      offset += n

  def tensor_layout(self, kind):
    raise NotImplementedError

  def fill_tensor(self, state, player):
    raise NotImplementedError

  def observation_string(self, state, player):
    raise NotImplementedError

  def set_from(self, state, player):
    """Updates `tensor` and `dict` to reflect `state` from `player`'s view."""
    self.tensor.fill(0)
    self.fill_tensor(state, player)

  def string_from(self, state, player):
    """The observation of `state` from `player`'s view, as a string."""
    return self.observation_string(state, player)
