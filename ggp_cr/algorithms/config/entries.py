"""The table of named solver and player types: what `register_solver` / `register_player`
record, and the lookups on it (parse a string, build a solver, describe the entries).

builtin.py fills it; everyone else reads it through registry.py, which loads builtin.py
first (registry.py's docstring says how strings name and configure an entry).
"""

import dataclasses
from typing import Any, Callable

from ggp_cr.algorithms.config import spec_strings


@dataclasses.dataclass(frozen=True)
class SolverType:
  """A registered solver: `build(game, seed, **params)` -> solver object.

  `accepts_tree`: `build` also takes a CompiledTree in place of the game.
  """
  name: str
  summary: str
  build: Callable[..., Any]
  parameters: tuple = ()
  accepts_tree: bool = False

  def usage(self):
    return spec_strings.usage(self.name, self.parameters)


@dataclasses.dataclass(frozen=True)
class PlayerType:
  """A registered player: `build(game, player_id, seed, budget, **params)` -> Bot;
  `accepts_tree`: `build` also takes `tree=`, the game's CompiledTree its caller holds;
  `warm_up`: None or a callable loading, once per process, what the player's first
  bot would otherwise load on its clock (imports, numba kernels; `warm_up_player`)."""
  name: str
  summary: str
  build: Callable[..., Any]
  parameters: tuple = ()
  interactive: bool = False
  accepts_tree: bool = False
  warm_up: Callable[[], Any] = None

  def usage(self):
    return spec_strings.usage(self.name, self.parameters)


@dataclasses.dataclass(frozen=True)
class SolverSpec:
  """A parsed solver string: its type and parameter values (defaults filled in)."""
  text: str
  solver_type: SolverType
  parameters: dict

  @property
  def name(self):
    return self.solver_type.name

  def __str__(self):
    return self.text


@dataclasses.dataclass(frozen=True)
class PlayerSpec:
  """A parsed player string: its type and parameter values (defaults filled in)."""
  text: str
  player_type: PlayerType
  parameters: dict

  @property
  def name(self):
    return self.player_type.name

  @property
  def interactive(self):
    return self.player_type.interactive

  def __str__(self):
    return self.text


_SOLVERS = spec_strings.Registry("solver")
_PLAYERS = spec_strings.Registry("player")


def register_solver(name, summary, build, parameters=(), accepts_tree=False):
  """Registers a solver type under `name` (lower case); returns the SolverType."""
  return _SOLVERS.register(SolverType(name.lower(), summary, build, tuple(parameters),
                                      accepts_tree))


def register_player(name, summary, build, parameters=(), interactive=False,
                    accepts_tree=False, warm_up=None):
  """Registers a player type under `name` (lower case); returns the PlayerType."""
  return _PLAYERS.register(
      PlayerType(name.lower(), summary, build, tuple(parameters), interactive,
                 accepts_tree, warm_up))


def solver_names():
  return _SOLVERS.names()


def player_names():
  return _PLAYERS.names()


def describe_solvers():
  """Multi-line help: every solver with its parameters and defaults."""
  return _SOLVERS.describe()


def describe_players():
  """Multi-line help: every player type with its parameters and defaults."""
  return _PLAYERS.describe()


def parse_solver(text):
  """Parses a solver string; raises ValueError listing what is accepted on bad input."""
  if isinstance(text, SolverSpec):
    return text
  call, solver_type, values = _SOLVERS.parse(text)
  return SolverSpec(str(call), solver_type, values)


def given_parameters(spec):
  """Names of the parameters a SolverSpec's text sets (by position or by name); the
  others hold their defaults."""
  call = spec_strings.parse_call(spec.text)
  names = [parameter.name for parameter in spec.solver_type.parameters]
  return set(names[:len(call.args)]) | set(call.kwargs)


def with_parameter(spec, name, text):
  """The SolverSpec `spec` with parameter `name` set to `text` (as it would be typed)."""
  call = spec_strings.parse_call(spec.text)
  names = [parameter.name for parameter in spec.solver_type.parameters]
  kwargs = dict(zip(names, call.args), **call.kwargs)
  kwargs[name] = text
  return parse_solver(str(spec_strings.Call(call.name, (), kwargs)))


def parse_player(text):
  """Parses a player string; raises ValueError listing what is accepted on bad input."""
  if isinstance(text, PlayerSpec):
    return text
  call, player_type, values = _PLAYERS.parse(text)
  return PlayerSpec(str(call), player_type, values)


def make_solver(spec, game, seed=0):
  """Builds the solver of `spec` (a SolverSpec or string) on `game`.

  `game` is a pyspiel game, or a CompiledTree for solver types with `accepts_tree`.
  """
  spec = parse_solver(spec)
  return spec.solver_type.build(game, seed, **spec.parameters)
