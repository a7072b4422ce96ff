"""The sampling solvers by name, for solver_registry.make_solver ([S] §5.1.2, [M] ch. 5).

* ``os_mccfr(rm,e,cse,bl,delta,inc,compiled)``: outcome-sampling MC-CFR
  (outcome_sampling.py; ``compiled=true`` runs the numba fast path on the compiled
  tree). Defaults are OpenSpiel's outcome sampling: rm, e=0.6, cse=0, no baseline.
* ``mc_cfr(...)`` and ``vr_mccfr(...)``: the same with the thesis's candidates,
  MC-CFR{DRM(1,1), cse 0.3, e 0.7} and VR-MCCFR = that + ExpAvg{0.3} ([S] §5.1.2).
* ``es_mccfr(rm)``: external sampling.
* ``mixed(schedule,i,h,pernode,e,rm)``: Meyer's M(f) (external_sampling.py); e is
  Meyer's exploration lambda ([M] §5.2.2).
* ``locus(criterion,i,h,visits,fraction,e,rm)``: Meyer's locus-based mixing.
* ``openspiel_os_mccfr``, ``openspiel_es_mccfr``: OpenSpiel's Python solvers.

Probabilities (e, delta, fraction) outside [0, 1] are refused with a message
naming the parameter and its range. Importing this module registers the names.
"""

import numpy as np
from open_spiel.python.algorithms import external_sampling_mccfr
from open_spiel.python.algorithms import outcome_sampling_mccfr

from ggp_cr.algorithms import compiled_outcome_sampling
from ggp_cr.algorithms import external_sampling
from ggp_cr.algorithms import outcome_sampling
from ggp_cr.algorithms import number_ranges
from ggp_cr.algorithms import regret_matching
from ggp_cr.algorithms import solver_registry
from ggp_cr.algorithms import spec_strings

Parameter = solver_registry.Parameter


def _probability(name):
  def parse(text):
    value = spec_strings.parse_float(text, f"parameter {name!r}")
    if not 0.0 <= value <= 1.0:
      raise ValueError(f"parameter {name!r} must be in [0, 1], got {value}.")
    return value
  return parse


def _positive(name):
  def parse(text):
    value = spec_strings.parse_float(text, f"parameter {name!r}")
    if not value > 0.0 or value == float("inf"):
      raise ValueError(f"parameter {name!r} must be a positive number, got {value}.")
    return value
  return parse


def _bool(name):
  return lambda text: spec_strings.parse_bool(text, f"parameter {name!r}")


def _baseline(text):
  return outcome_sampling.parse_baseline(text)


_RM_HELP = "regret matcher: rm, rm+, drm(alpha,beta), erm(inner,gamma)"


def _outcome_sampling_parameters(rm, e, cse, bl):
  return (
      Parameter("rm", regret_matching.parse_regret_matcher,
                regret_matching.parse_regret_matcher(rm), _RM_HELP),
      Parameter("e", _probability("e"), e,
                "exploration in [0, 1]: the updated player samples "
                "e/|A| + (1-e) sigma"),
      Parameter("cse", solver_registry.float_parameter(
          "cse", 0.0, number_ranges.MAX_EXPONENT), cse,
                "cumulative-strategy exponent: the sum is multiplied by "
                "(t/(t+1))^cse each iteration"),
      Parameter("bl", _baseline, outcome_sampling.parse_baseline(bl),
                "VR-MCCFR baseline: none or expavg(alpha), alpha in [0, 1]"),
      Parameter("delta", _probability("delta"), 0.0,
                "targeting probability in [0, 1] (used once a target is set)"),
      Parameter("inc", _bool("inc"), True,
                "incremental tree building with uniform playouts"),
      Parameter("compiled", _bool("compiled"), False,
                "run on the compiled tree (numba fast path; the game must fit)"),
  )


def _build_outcome_sampling(game, seed, rm, e, cse, bl, delta, inc, compiled):
  solver_class = (compiled_outcome_sampling.CompiledOutcomeSamplingSolver if compiled
                  else outcome_sampling.OutcomeSamplingSolver)
  return solver_class(game, regret_matcher=rm, exploration=e,
                      cumulative_strategy_exponent=cse, baseline=bl,
                      targeting_probability=delta, incremental=inc, seed=seed)


solver_registry.register_solver(
    "os_mccfr", "outcome-sampling MC-CFR ([S] §3.3.3), OpenSpiel's defaults",
    _build_outcome_sampling, _outcome_sampling_parameters("rm", 0.6, 0.0, "none"))
solver_registry.register_solver(
    "mc_cfr", "the thesis's MC-CFR candidate: drm(1,1), e=0.7, cse=0.3 ([S] §5.1.2)",
    _build_outcome_sampling,
    _outcome_sampling_parameters("drm(1,1)", 0.7, 0.3, "none"))
solver_registry.register_solver(
    "vr_mccfr", "the thesis's VR-MCCFR candidate: mc_cfr + expavg(0.3) baseline",
    _build_outcome_sampling,
    _outcome_sampling_parameters("drm(1,1)", 0.7, 0.3, "expavg(0.3)"))

solver_registry.register_solver(
    "es_mccfr", "external-sampling MCCFR ([M] §4.2)",
    lambda game, seed, rm: external_sampling.ExternalSamplingSolver(
        game, regret_matcher=rm, seed=seed),
    (Parameter("rm", regret_matching.parse_regret_matcher,
               regret_matching.parse_regret_matcher("rm"), _RM_HELP),))


def _mixing_parameters():
  return (
      Parameter("i", solver_registry.int_parameter("i", minimum=1), 1024,
                "planned total iterations I (linear schedule, iteration criterion)"),
      Parameter("h", _positive("h"), 8.0,
                "half-life H in iterations (exponential)"),
      Parameter("e", _probability("e"), 0.6,
                "exploration in [0, 1] of the updated player's OS sampling "
                "(OpenSpiel's 0.6; [M]'s lambda, §5.2.2)"),
      Parameter("rm", regret_matching.parse_regret_matcher,
                regret_matching.parse_regret_matcher("rm"), _RM_HELP),
  )


solver_registry.register_solver(
    "mixed", "Meyer's mixed ES/OS sampling M(f) ([M] §5.2)",
    lambda game, seed, schedule, pernode, i, h, e, rm:
    external_sampling.MixedSamplingSolver(
        game, schedule=schedule, num_iterations=i, half_life=h, per_node=pernode,
        exploration=e, regret_matcher=rm, seed=seed),
    (Parameter("schedule", solver_registry.choice_parameter(
        "schedule", external_sampling.SCHEDULES), "linear",
               "ES probability f(i): linear 1-i/I, exponential 2^(-i/H), es, os"),
     Parameter("pernode", _bool("pernode"), False,
               "draw ES/OS at every node instead of once per iteration")) +
    _mixing_parameters())

solver_registry.register_solver(
    "locus", "Meyer's locus-based ES/OS mixing ([M] §5.3)",
    lambda game, seed, criterion, visits, fraction, i, h, e, rm:
    external_sampling.LocusSamplingSolver(
        game, criterion=criterion, num_iterations=i, half_life=h,
        visit_threshold=visits, iteration_fraction=fraction, exploration=e,
        regret_matcher=rm, seed=seed),
    (Parameter("criterion", solver_registry.choice_parameter(
        "criterion", external_sampling.LOCUS_CRITERIA), "iteration",
               "confidence: iteration (>= fraction*I), exponential (H), visits"),
     Parameter("visits", solver_registry.int_parameter("visits", minimum=0), 100,
               "visits an information set needs (visits criterion)"),
     Parameter("fraction", _probability("fraction"), 0.5,
               "fraction of I after which OS may be used (iteration criterion)")) +
    _mixing_parameters())


def _seeded_stock(solver_class):
  """OpenSpiel's MCCFR samples with numpy's global generator: seed it."""
  def build(game, seed):
    np.random.seed(seed)
    return solver_class(game)
  return build


solver_registry.register_solver(
    "openspiel_os_mccfr", "OpenSpiel's Python outcome_sampling_mccfr (e=0.6; seeds "
    "numpy's global generator)",
    _seeded_stock(outcome_sampling_mccfr.OutcomeSamplingSolver))
solver_registry.register_solver(
    "openspiel_es_mccfr", "OpenSpiel's Python external_sampling_mccfr (seeds numpy's "
    "global generator)",
    _seeded_stock(external_sampling_mccfr.ExternalSamplingSolver))
