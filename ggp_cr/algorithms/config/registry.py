"""The one registry of named solvers and players ([S] App. A, CFRPlayground's strings).

A solver or player is chosen by a string ``name`` or ``name(arg,...,key=value,...)``,
e.g. ``cfr+``, ``dcfr(1.5,0,2)``, ``vr_mccfr(e=0.5)``, ``ismcts(simulations=500)`` or
``cr(solver=cfr+)``; positional arguments fill the parameters in the order listed by
`describe_solvers()` / `describe_players()`.

* `make_solver(spec, game, seed)` builds a solver (see contracts.Solver); stock
  OpenSpiel solvers (``openspiel_*``) are registered too, for side-by-side runs.
* `make_bot(spec, game, player_id, seed, budget)` builds one seat's pyspiel.Bot for one
  match: the seed makes its randomness reproducible and the budget carries the pre-play
  and per-move limits (limits.py; a zero per-move limit gives every online player the
  same default, limits.DEFAULT_MOVE).

The built-in entries are registered by builtin.py, loaded at the first lookup; their
build functions import the algorithms only when called, so importing this module loads
no solver and no numba. Adding an entry is one `register_solver` / `register_player`
call naming its build function.
"""

import dataclasses
import importlib
import numbers
from typing import Any, Callable

import pyspiel

from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.config import openspiel_errors
from ggp_cr.algorithms.config import spec_strings


def _load_builtin():
  importlib.import_module("ggp_cr.algorithms.config.builtin")


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


_SOLVERS = spec_strings.Registry("solver", loader=_load_builtin)
_PLAYERS = spec_strings.Registry("player", loader=_load_builtin)


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


def warm_up_player(spec):
  """Runs the player type's process warm-up (PlayerType.warm_up), if it has one:
  before a match's clock, so that no bot's pre-play pays for the process's first
  imports and kernel loads (issue 44)."""
  spec = parse_player(spec)
  if spec.player_type.warm_up is not None:
    spec.player_type.warm_up()


def make_bot(spec, game, player_id, seed, budget=limits.Budget(), tree=None):
  """Creates the bot of `spec` (a PlayerSpec or string) for one seat of one match:
  `player_id` is the seat, an int in [0, game.num_players()). `tree`: the game's
  CompiledTree when the caller holds it, handed to players that accept one
  (`accepts_tree`: they then use it rather than look for one)."""
  spec = parse_player(spec)
  seats = game.num_players()
  if (isinstance(player_id, bool) or not isinstance(player_id, numbers.Integral) or
      not 0 <= player_id < seats):
    raise ValueError(f"player_id must be a seat of {game}: an int in [0, {seats - 1}], "
                     f"got {player_id!r}.")
  extra = {}
  if tree is not None and spec.player_type.accepts_tree:
    extra["tree"] = tree
  return spec.player_type.build(game, int(player_id), seed, budget, **spec.parameters,
                                **extra)


def load_game(text):
  """pyspiel.load_game with a one-paragraph ValueError on an unknown or bad game."""
  name = str(text).split("(", 1)[0].strip()
  if name not in pyspiel.registered_names():
    raise ValueError(f"Cannot load game {text!r}: unknown game name {name!r}. Registered "
                     f"games: {', '.join(sorted(pyspiel.registered_names()))}.")
  try:
    with openspiel_errors.quiet():
      return pyspiel.load_game(text)
  except (pyspiel.SpielError, ValueError, RuntimeError) as error:
    raise ValueError(f"Cannot load game {text!r}: {error}") from None
