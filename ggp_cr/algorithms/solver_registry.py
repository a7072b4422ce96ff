"""Offline solvers by name with parameters, as on the thesis's command line ([S] App. A).

A solver string is ``name`` or ``name(arg,...,key=value,...)``, e.g. ``cfr+``,
``dcfr(1.5,0,2)``, ``cfr(rm=drm(1,1),updates=alternating,cse=1)`` or
``cfr+(dl=4,ue=randomplayout(10))``. `make_solver(spec, game, seed)` builds it.

Every solver returned has either `evaluate_and_update_policy()` (full-width) or
`iteration()` (sampling) and `average_policy()`; ours also expose `visited_states`
and, when they run on a compiled tree, `tree` and `average_strategy_slots()`.
Stock OpenSpiel solvers (``openspiel_*``) are registered for side-by-side runs.
Other modules add their solvers with `register_solver`.
"""

import dataclasses
import math
from typing import Any, Callable

from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import cfr as openspiel_cfr
from open_spiel.python.algorithms import discounted_cfr as openspiel_discounted_cfr
import pyspiel

from ggp_cr.algorithms import cfr
from ggp_cr.algorithms import number_ranges
from ggp_cr.algorithms import regret_matching
from ggp_cr.algorithms import spec_strings
from ggp_cr.algorithms import utility_estimators


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


_SOLVERS = spec_strings.Registry("solver")
Parameter = spec_strings.Parameter
int_parameter = spec_strings.int_parameter
float_parameter = spec_strings.float_parameter
choice_parameter = spec_strings.choice_parameter


def register_solver(name, summary, build, parameters=(), accepts_tree=False):
  """Registers a solver type under `name` (lower case); returns the SolverType."""
  return _SOLVERS.register(SolverType(name.lower(), summary, build, tuple(parameters),
                                      accepts_tree))


def solver_names():
  return _SOLVERS.names()


def describe_solvers():
  """Multi-line help: every solver with its parameters and defaults."""
  return _SOLVERS.describe()


def parse_solver(text):
  """Parses a solver string; raises ValueError listing what is accepted on bad input."""
  if isinstance(text, SolverSpec):
    return text
  call, solver_type, values = _SOLVERS.parse(text)
  return SolverSpec(str(call), solver_type, values)


def make_solver(spec, game, seed=0):
  """Builds the solver of `spec` (a SolverSpec or string) on `game`.

  `game` is a pyspiel game, or a CompiledTree for solver types with `accepts_tree`.
  """
  spec = parse_solver(spec)
  return spec.solver_type.build(game, seed, **spec.parameters)


def python_average_policy(solver, game):
  """The solver's average policy as an open_spiel Python policy.

  OpenSpiel's C++ solvers return a pyspiel policy; it is converted via their tabular
  average policy.
  """
  average = solver.average_policy()
  if isinstance(average, policy_lib.Policy):
    return average
  return policy_lib.pyspiel_policy_to_python_policy(game,
                                                    solver.tabular_average_policy())


def _optional_depth(text):
  if text.lower() == "none":
    return None
  return spec_strings.parse_int(text, "parameter 'dl'", minimum=0)


def _checked_estimator(text):
  # Parsed for validation here; the solver gets a fresh, seeded estimator.
  utility_estimators.parse_utility_estimator(text)
  return text


# Our full-width CFR family (cfr.py), [S] Table 5.2.

_UPDATES = ("alternating", "simultaneous")


def _depth_parameters():
  return (
      Parameter("dl", _optional_depth, None,
                "depth limit: histories deeper than this are valued by `ue` "
                "(none = full depth)"),
      Parameter("ue", _checked_estimator, "randomplayout(1)",
                "utility estimator below the depth limit: randomplayout(n)"),
  )


def _build_general_cfr(game, seed, rm, updates, cse, dl, ue):
  estimator = None
  if dl is not None:
    estimator = utility_estimators.parse_utility_estimator(ue, seed=seed)
  return cfr.GeneralCFRSolver(
      game, regret_matcher=rm, alternating_updates=(updates == "alternating"),
      cumulative_strategy_exponent=cse, depth_limit=dl, utility_estimator=estimator)


def _register_cfr_preset(name, summary):
  preset = cfr.PRESETS[name]
  register_solver(name, summary, _build_general_cfr, (
      Parameter("rm", regret_matching.parse_regret_matcher,
                regret_matching.parse_regret_matcher(preset["regret_matcher"]),
                "regret matcher: rm, rm+, drm(alpha,beta), erm(inner,gamma)"),
      Parameter("updates", choice_parameter("updates", _UPDATES),
                "alternating" if preset["alternating_updates"] else "simultaneous",
                "alternating or simultaneous updates"),
      Parameter("cse", float_parameter("cse", 0.0, number_ranges.MAX_EXPONENT),
                preset["cumulative_strategy_exponent"],
                "cumulative strategy exponent gamma: iteration t weighs t^gamma"),
  ) + _depth_parameters(), accepts_tree=True)


_register_cfr_preset("cfr", "CFR, RM with simultaneous updates ([S] Table 5.2); "
                     "the general form takes every parameter")
_register_cfr_preset("cfr-au", "CFR with alternating updates (= OpenSpiel's CFRSolver)")
_register_cfr_preset("cfr+", "CFR+: RM+, alternating, linear averaging "
                     "(= OpenSpiel's CFRPlusSolver)")
_register_cfr_preset("cfr+2", "CFR+ with cumulative strategy exponent 2")
_register_cfr_preset("lcfr", "Linear CFR = DCFR(1,1,1) (= OpenSpiel's LCFRSolver)")
_register_cfr_preset("deepstack-cfr", "RM+, simultaneous updates, plain averaging")
_register_cfr_preset("thesis-dcfr", "the thesis's candidate DCFR(1.5,0.5,1.5), "
                     "alternating ([S] §5.1.1)")


# DCFR exponents (Brown & Sandholm 2019): finite, within number_ranges.MAX_EXPONENT;
# beta = -inf (negative regrets zeroed, as RM+) is the one infinity accepted.
_DCFR_ALPHA = float_parameter("alpha", 0.0, number_ranges.MAX_EXPONENT, allowed=())
_DCFR_BETA = float_parameter("beta", -number_ranges.MAX_EXPONENT,
                             number_ranges.MAX_EXPONENT, allowed=(-math.inf,))
_DCFR_GAMMA = float_parameter("gamma", 0.0, number_ranges.MAX_EXPONENT, allowed=())


def _build_dcfr(game, seed, alpha, beta, gamma, updates, dl, ue):
  return _build_general_cfr(
      game, seed, regret_matching.RegretMatcher(kind=regret_matching.DRM, alpha=alpha,
                                                beta=beta),
      updates, gamma, dl, ue)


register_solver(
    "dcfr", "Discounted CFR(alpha,beta,gamma) (= OpenSpiel's DCFRSolver)", _build_dcfr, (
        Parameter("alpha", _DCFR_ALPHA, 1.5,
                  "positive regrets x t^alpha/(t^alpha+1), alpha in [0, 100]"),
        Parameter("beta", _DCFR_BETA, 0.0,
                  "negative regrets x t^beta/(t^beta+1), beta in [-100, 100] or -inf"),
        Parameter("gamma", _DCFR_GAMMA, 2.0,
                  "iteration t's strategy weighs t^gamma"),
        Parameter("updates", choice_parameter("updates", _UPDATES), "alternating",
                  "alternating or simultaneous updates"),
    ) + _depth_parameters(), accepts_tree=True)


# Stock OpenSpiel solvers, for side-by-side runs.

def _stock(build):
  return lambda game, seed: build(game)


register_solver("openspiel_cfr", "OpenSpiel's Python cfr.CFRSolver",
                _stock(openspiel_cfr.CFRSolver))
register_solver("openspiel_cfr_plus", "OpenSpiel's Python cfr.CFRPlusSolver",
                _stock(openspiel_cfr.CFRPlusSolver))
register_solver("openspiel_lcfr", "OpenSpiel's Python discounted_cfr.LCFRSolver",
                _stock(openspiel_discounted_cfr.LCFRSolver))
register_solver(
    "openspiel_dcfr", "OpenSpiel's Python discounted_cfr.DCFRSolver",
    lambda game, seed, alpha, beta, gamma: openspiel_discounted_cfr.DCFRSolver(
        game, alpha=alpha, beta=beta, gamma=gamma), (
            Parameter("alpha", _DCFR_ALPHA, 1.5, "positive exponent"),
            Parameter("beta", _DCFR_BETA, 0.0, "negative exponent"),
            Parameter("gamma", _DCFR_GAMMA, 2.0,
                      "strategy weight exponent"),
        ))
register_solver("openspiel_cpp_cfr", "OpenSpiel's C++ pyspiel.CFRSolver",
                _stock(pyspiel.CFRSolver))
register_solver("openspiel_cpp_cfr_plus", "OpenSpiel's C++ pyspiel.CFRPlusSolver",
                _stock(pyspiel.CFRPlusSolver))

# The sampling solvers (os_mccfr, mc_cfr, vr_mccfr, es_mccfr, mixed, locus) register
# themselves; imported last because that module uses the definitions above.
# pylint: disable-next=wrong-import-position,unused-import
from ggp_cr.algorithms import sampling_registry
