"""ggp_cr's algorithms: they take any pyspiel game and return OpenSpiel policies and bots.

One package per concept (spec README.md, architecture principle 5; docs/algorithms/
has a page per package, one line per module):

  tree/           the compiled game tree, its extraction and cache, shared kernels,
                  slots <-> policies, strategy files
  cfr/            regret matchers, the full-width CFR family (with PCFR+, DCFR+, PDCFR+,
                  hyperparameter schedules and the `auto` choice), utility estimators
  sampling/       outcome, external and mixed sampling MCCFR, targeting, baselines
  resolving/      ContinualResolvingBot, the gadget, the compiled and live resolvers
  best_response/  exact, pruned and ISMCTS best responses, policy validation
  bots/           budgets, online solving / OOS, strategy, solver, search, human players
  evaluation/     matches, tournaments, evaluators, results files, solver runs
  config/         the spec-string parser and the one registry of named components

The names below are loaded on first use (PEP 562), so `import ggp_cr.algorithms` is cheap.
"""

import importlib

_EXPORTS = {
    "game_size": "ggp_cr.algorithms.tree.game_size",
    "exploitability": "ggp_cr.algorithms.best_response.exact_br",
    "nash_conv": "ggp_cr.algorithms.best_response.exact_br",
    "pruned_best_response": "ggp_cr.algorithms.best_response.pruned_br",
    "ismcts_best_response": "ggp_cr.algorithms.best_response.ismcts_br",
    "OnlineSolvingBot": "ggp_cr.algorithms.bots.online_solving",
    "OOSBot": "ggp_cr.algorithms.bots.online_solving",
    "ContinualResolvingBot": "ggp_cr.algorithms.resolving.continual_resolving",
    "CFRPlusSolver": "ggp_cr.algorithms.cfr.cfr",
    "CFRSolver": "ggp_cr.algorithms.cfr.cfr",
    "DCFRSolver": "ggp_cr.algorithms.cfr.cfr",
    "GeneralCFRSolver": "ggp_cr.algorithms.cfr.cfr",
    "LCFRSolver": "ggp_cr.algorithms.cfr.cfr",
    "PCFRPlusSolver": "ggp_cr.algorithms.cfr.cfr",
    "DCFRPlusSolver": "ggp_cr.algorithms.cfr.cfr",
    "PDCFRPlusSolver": "ggp_cr.algorithms.cfr.cfr",
    "HSDCFRSolver": "ggp_cr.algorithms.cfr.cfr",
    "HSPCFRPlusSolver": "ggp_cr.algorithms.cfr.cfr",
    "Budget": "ggp_cr.algorithms.config.limits",
    "make_bot": "ggp_cr.algorithms.config.registry",
    "parse_player": "ggp_cr.algorithms.config.registry",
    "game_playing_evaluation": "ggp_cr.algorithms.evaluation.evaluators",
    "traversing_evaluation": "ggp_cr.algorithms.evaluation.evaluators",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
  module = _EXPORTS.get(name)
  if module is None:
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
  value = getattr(importlib.import_module(module), name)
  globals()[name] = value
  return value


def __dir__():
  return sorted(set(globals()) | set(_EXPORTS))
