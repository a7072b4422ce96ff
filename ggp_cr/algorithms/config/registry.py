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

The entries live in entries.py's table, which builtin.py fills with the built-ins: this
module loads builtin.py, so every lookup here sees them; their build functions import
the algorithms only when called, so importing this module loads no solver and no numba.
Adding an entry is one `register_solver` / `register_player` call naming its build
function.
"""

import numbers

import pyspiel

# builtin.py registers the built-in entries when imported.
from ggp_cr.algorithms.config import builtin  # pylint: disable=unused-import
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.config import openspiel_errors
from ggp_cr.algorithms.config.entries import (  # pylint: disable=g-importing-member
    PlayerSpec, PlayerType, SolverSpec, SolverType, describe_players, describe_solvers,
    given_parameters, make_solver, parse_player, parse_solver, player_names,
    register_player, register_solver, solver_names, with_parameter)


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
