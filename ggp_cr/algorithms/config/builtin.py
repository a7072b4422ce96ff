"""The built-in solvers and players of the registry ([S] App. A, Table 5.2, §5.1.2; [M] ch. 5).

Imported by registry.py, so every lookup there sees them; they go into entries.py's
table. Every build function and every parser that needs an algorithm imports it when
called (`_attribute`), so registering loads no solver module and no numba. Defaults are
written as they would be typed and parsed like given values; the thesis's settings come
from presets.py.

Solvers: our full-width CFR family (``cfr``, ``cfr-au``, ``cfr+``, ``cfr+2``, ``lcfr``,
``deepstack-cfr``, ``thesis-dcfr``, ``dcfr``, and ``cfrplayground-cfr+``, the thesis's CFR+
as its Java code runs it; ``pcfr+``, ``dcfr+``, ``pdcfr+``, ``hs-dcfr``, ``hs-pcfr+`` of
2021-2024 and ``auto``), outcome sampling (``os_mccfr`` with OpenSpiel's defaults, the
thesis's ``mc_cfr`` and ``vr_mccfr``), external and Meyer's mixed sampling (``es_mccfr``,
``mixed``, ``locus``), and stock OpenSpiel solvers (``openspiel_*``). Players: ``random``,
``solver``, ``strategy``, ``human``, ``mcts``, ``ismcts``, ``online_solving``, ``oos`` and
``cr``.
"""

import functools
import importlib
import math
import pathlib

from ggp_cr.algorithms.config import components
from ggp_cr.algorithms.config import entries
from ggp_cr.algorithms.config import number_ranges
from ggp_cr.algorithms.config import presets
from ggp_cr.algorithms.config import spec_strings

Parameter = spec_strings.Parameter
_int = spec_strings.int_parameter
_float = spec_strings.float_parameter
_choice = spec_strings.choice_parameter
_probability = spec_strings.probability_parameter
_positive = spec_strings.positive_parameter
_bool = spec_strings.bool_parameter


def _attribute(module, name):
  """`module.name`, imported on first use (module relative to ggp_cr.algorithms)."""
  return getattr(importlib.import_module(f"ggp_cr.algorithms.{module}"), name)


def _deferred(module, name):
  """A function calling `module.name`, importing the module at the first call."""
  return lambda *args, **kwargs: _attribute(module, name)(*args, **kwargs)


_regret_matcher = components.parse_regret_matcher
_full_width_matcher = components.parse_full_width_matcher
_baseline = components.parse_baseline
_RM_HELP = "regret matcher: rm, rm+, drm(alpha,beta), erm(inner,gamma)"
_FULL_WIDTH_RM_HELP = _RM_HELP + ", drm+(alpha), prm+, pdrm+(alpha)"


# Our full-width CFR family (cfr/cfr.py), [S] Table 5.2.

def _optional_depth(text):
  if text.lower() == "none":
    return None
  return spec_strings.parse_int(text, "parameter 'dl'", minimum=0)


def _checked_estimator(text):
  # Parsed for validation here; the solver gets a fresh, seeded estimator.
  components.parse_playouts(text)
  return text


_COMMON_PARAMETERS = (
    Parameter("dl", _optional_depth, None,
              "depth limit: histories deeper than this are valued by `ue` "
              "(none = full depth)"),
    Parameter("ue", _checked_estimator, "randomplayout(1)",
              "utility estimator below the depth limit: randomplayout(n)"),
    Parameter("threads", _int("threads", minimum=1), 1,
              "threads of each pass (cfr/parallel_passes.py; results equal one "
              "thread's bit for bit)"),
)


def _depth(seed, dl, ue, threads):
  """The depth-limit keyword arguments of our CFR solvers (a seeded estimator) and
  their thread count."""
  estimator = None
  if dl is not None:
    estimator = _attribute("cfr.utility_estimators", "parse_utility_estimator")(
        ue, seed=seed)
  return dict(depth_limit=dl, utility_estimator=estimator, threads=threads)


def _build_general_cfr(game, seed, rm, updates, cse, dl, ue, threads,
                       cfrplayground=False):
  return _attribute("cfr.cfr", "GeneralCFRSolver")(
      game, regret_matcher=rm, alternating_updates=(updates == "alternating"),
      cumulative_strategy_exponent=cse, cfrplayground=cfrplayground,
      **_depth(seed, dl, ue, threads))


def _register_cfr_preset(name, summary):
  preset = presets.CFR_PRESETS[name]
  build = functools.partial(_build_general_cfr,
                            cfrplayground=preset.get("cfrplayground", False))
  entries.register_solver(name, summary, build, (
      Parameter("rm", _full_width_matcher, preset["regret_matcher"], _FULL_WIDTH_RM_HELP),
      Parameter("updates", _choice("updates", presets.CFR_UPDATES),
                "alternating" if preset["alternating_updates"] else "simultaneous",
                "alternating or simultaneous updates"),
      Parameter("cse", _float("cse", 0.0, number_ranges.MAX_EXPONENT),
                preset["cumulative_strategy_exponent"],
                "cumulative strategy exponent gamma: iteration t weighs t^gamma"),
  ) + _COMMON_PARAMETERS, accepts_tree=True)


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
_register_cfr_preset("cfrplayground-cfr+", "[S]'s CFR+ as its Java code runs it: one "
                     "player's pass per iteration, RM+ clipped per history, averaging "
                     "discounted per history (the thesis's CFR+ figures)")


# DCFR exponents (Brown & Sandholm 2019): finite, within number_ranges.MAX_EXPONENT;
# beta = -inf (negative regrets zeroed, as RM+) is the one infinity accepted.
_DCFR_ALPHA = _float("alpha", 0.0, number_ranges.MAX_EXPONENT, allowed=())
_DCFR_BETA = _float("beta", -number_ranges.MAX_EXPONENT, number_ranges.MAX_EXPONENT,
                    allowed=(-math.inf,))
_DCFR_GAMMA = _float("gamma", 0.0, number_ranges.MAX_EXPONENT, allowed=())


def _build_dcfr(game, seed, alpha, beta, gamma, updates, dl, ue, threads):
  matcher = components.RegretMatcher(kind=components.DRM, alpha=alpha, beta=beta)
  return _build_general_cfr(game, seed, matcher, updates, gamma, dl, ue, threads)


entries.register_solver(
    "dcfr", "Discounted CFR(alpha,beta,gamma) (= OpenSpiel's DCFRSolver)", _build_dcfr, (
        Parameter("alpha", _DCFR_ALPHA, 1.5,
                  "positive regrets x t^alpha/(t^alpha+1), alpha in [0, 100]"),
        Parameter("beta", _DCFR_BETA, 0.0,
                  "negative regrets x t^beta/(t^beta+1), beta in [-100, 100] or -inf"),
        Parameter("gamma", _DCFR_GAMMA, 2.0,
                  "iteration t's strategy weighs t^gamma"),
        Parameter("updates", _choice("updates", presets.CFR_UPDATES), "alternating",
                  "alternating or simultaneous updates"),
    ) + _COMMON_PARAMETERS, accepts_tree=True)


# The solvers of 2021-2024 (cfr/cfr.py; each class's docstring cites its paper).

_UPDATES = Parameter("updates", _choice("updates", presets.CFR_UPDATES), "alternating",
                     "alternating or simultaneous updates")
_PLUS_ALPHA = _float("alpha", 0.0, number_ranges.MAX_EXPONENT, allowed=())


def _build_named(solver_class):
  """A build function passing the registry's parameters to cfr.cfr.<solver_class>."""
  def build(game, seed, dl, ue, threads, updates=None, **kwargs):
    if updates is not None:
      kwargs["alternating_updates"] = updates == "alternating"
    return _attribute("cfr.cfr", solver_class)(game, **kwargs,
                                               **_depth(seed, dl, ue, threads))
  return build


def _register_modern(name, summary, solver_class, parameters):
  entries.register_solver(name, summary, _build_named(solver_class),
                          parameters + _COMMON_PARAMETERS, accepts_tree=True)


_register_modern(
    "pcfr+", "predictive CFR+ (Farina, Kroer, Sandholm 2021): prm+, t^gamma averaging",
    "PCFRPlusSolver", (
        Parameter("gamma", _DCFR_GAMMA, 2.0, "iteration t's strategy weighs t^gamma"),
        _UPDATES))
_register_modern(
    "dcfr+", "DCFR+ (Xu et al. 2024): drm+(alpha), t^gamma averaging", "DCFRPlusSolver", (
        Parameter("alpha", _PLUS_ALPHA, 1.5,
                  "regrets x (t-1)^alpha/((t-1)^alpha+1) before adding, then clipped"),
        Parameter("gamma", _DCFR_GAMMA, 4.0, "iteration t's strategy weighs t^gamma"),
        _UPDATES))
_register_modern(
    "pdcfr+", "predictive DCFR+ (Xu et al. 2024): pdrm+(alpha), t^gamma averaging",
    "PDCFRPlusSolver", (
        Parameter("alpha", _PLUS_ALPHA, 2.3,
                  "regret discount exponent, as dcfr+'s; prediction x t^alpha/(t^alpha+1)"),
        Parameter("gamma", _DCFR_GAMMA, 5.0, "iteration t's strategy weighs t^gamma"),
        _UPDATES))
_HS_PARAMETERS = (
    Parameter("gamma0", _float("gamma0", 5.0, number_ranges.MAX_EXPONENT, allowed=()),
              30.0, "the schedule's starting averaging exponent (> 5; the paper's 30 or 15)"),
    Parameter("horizon", _int("horizon", minimum=1), 1000,
              "iterations n over which the schedule moves (held afterwards)"),
)
_register_modern(
    "hs-dcfr", "HS-DCFR (Zhang, McAleer, Sandholm 2024): DCFR with scheduled "
    "alpha, beta, gamma", "HSDCFRSolver", _HS_PARAMETERS)
_register_modern(
    "hs-pcfr+", "HS-PCFR+ (Zhang, McAleer, Sandholm 2024): PCFR+ with a scheduled gamma",
    "HSPCFRPlusSolver", _HS_PARAMETERS + (_UPDATES,))


def _build_auto(game, seed, eps):
  """The solver cfr/solver_choice.py picks for `game` and target `eps`."""
  tree = _attribute("cfr.cfr", "as_compiled_tree")(game)
  spec, _ = _attribute("cfr.solver_choice", "choose")(tree, eps)
  return entries.make_solver(spec, tree, seed=seed)


entries.register_solver(
    "auto", "the fastest of our CFR family for the game and target exploitability "
    "(cfr/solver_choice.py: dcfr with chance nodes, else pcfr+ from 64k nodes, else "
    "pdcfr+, hs-pcfr+ below 1e-6)",
    _build_auto, (Parameter("eps", _positive("eps"), 1e-5,
                            "target exploitability (NashConv / 2)"),),
    accepts_tree=True)


# Outcome, external and mixed sampling (sampling/), [S] §5.1.2, [M] ch. 5.

def _outcome_sampling_parameters(rm, e, cse, bl):
  return (
      Parameter("rm", _regret_matcher, rm, _RM_HELP),
      Parameter("e", _probability("e"), e,
                "exploration in [0, 1]: the updated player samples e/|A| + (1-e) sigma"),
      Parameter("cse", _float("cse", 0.0, number_ranges.MAX_EXPONENT), cse,
                "cumulative-strategy exponent: the sum is multiplied by "
                "(t/(t+1))^cse each iteration"),
      Parameter("bl", _baseline, bl,
                "VR-MCCFR baseline: none or expavg(alpha), alpha in [0, 1]"),
      Parameter("delta", _probability("delta"), 0.0,
                "targeting probability in [0, 1] (used once a target is set)"),
      Parameter("inc", _bool("inc"), True,
                "incremental tree building with uniform playouts"),
      Parameter("compiled", _bool("compiled"), False,
                "run on the compiled tree (numba fast path; the game must fit)"),
  )


def _build_outcome_sampling(game, seed, rm, e, cse, bl, delta, inc, compiled):
  solver_class = (
      _attribute("sampling.compiled_outcome_sampling", "CompiledOutcomeSamplingSolver")
      if compiled else _attribute("sampling.outcome_sampling", "OutcomeSamplingSolver"))
  return solver_class(game, regret_matcher=rm, exploration=e,
                      cumulative_strategy_exponent=cse, baseline=bl,
                      targeting_probability=delta, incremental=inc, seed=seed)


entries.register_solver(
    "os_mccfr", "outcome-sampling MC-CFR ([S] §3.3.3), OpenSpiel's defaults",
    _build_outcome_sampling,
    _outcome_sampling_parameters(**presets.OPENSPIEL_OUTCOME_SAMPLING))
entries.register_solver(
    "mc_cfr", "the thesis's MC-CFR candidate: drm(1,1), e=0.7, cse=0.3 ([S] §5.1.2)",
    _build_outcome_sampling, _outcome_sampling_parameters(**presets.THESIS_MC_CFR))
entries.register_solver(
    "vr_mccfr", "the thesis's VR-MCCFR candidate: mc_cfr + expavg(0.3) baseline",
    _build_outcome_sampling, _outcome_sampling_parameters(**presets.THESIS_VR_MCCFR))

entries.register_solver(
    "es_mccfr", "external-sampling MCCFR ([M] §4.2)",
    lambda game, seed, rm: _attribute("sampling.external_sampling",
                                      "ExternalSamplingSolver")(
                                          game, regret_matcher=rm, seed=seed),
    (Parameter("rm", _regret_matcher, "rm", _RM_HELP),))

_MIXING_PARAMETERS = (
    Parameter("i", _int("i", minimum=1), 1024,
              "planned total iterations I (linear schedule, iteration criterion)"),
    Parameter("h", _positive("h"), 8.0, "half-life H in iterations (exponential)"),
    Parameter("e", _probability("e"), 0.6,
              "exploration in [0, 1] of the updated player's OS sampling "
              "(OpenSpiel's 0.6; [M]'s lambda, §5.2.2)"),
    Parameter("rm", _regret_matcher, "rm", _RM_HELP),
)

entries.register_solver(
    "mixed", "Meyer's mixed ES/OS sampling M(f) ([M] §5.2)",
    lambda game, seed, schedule, pernode, i, h, e, rm: _attribute(
        "sampling.external_sampling", "MixedSamplingSolver")(
            game, schedule=schedule, num_iterations=i, half_life=h, per_node=pernode,
            exploration=e, regret_matcher=rm, seed=seed),
    (Parameter("schedule", _choice("schedule", presets.MIXING_SCHEDULES), "linear",
               "ES probability f(i): linear 1-i/I, exponential 2^(-i/H), es, os"),
     Parameter("pernode", _bool("pernode"), False,
               "draw ES/OS at every node instead of once per iteration")) +
    _MIXING_PARAMETERS)

entries.register_solver(
    "locus", "Meyer's locus-based ES/OS mixing ([M] §5.3)",
    lambda game, seed, criterion, visits, fraction, i, h, e, rm: _attribute(
        "sampling.external_sampling", "LocusSamplingSolver")(
            game, criterion=criterion, num_iterations=i, half_life=h,
            visit_threshold=visits, iteration_fraction=fraction, exploration=e,
            regret_matcher=rm, seed=seed),
    (Parameter("criterion", _choice("criterion", presets.LOCUS_CRITERIA), "iteration",
               "confidence: iteration (>= fraction*I), exponential (H), visits"),
     Parameter("visits", _int("visits", minimum=0), 100,
               "visits an information set needs (visits criterion)"),
     Parameter("fraction", _probability("fraction"), 0.5,
               "fraction of I after which OS may be used (iteration criterion)")) +
    _MIXING_PARAMETERS)


# Stock OpenSpiel solvers, for side-by-side runs.

def _stock(module, name, seed_numpy=False):
  """An OpenSpiel solver class; `seed_numpy`: it samples with numpy's global generator."""
  def build(game, seed, **kwargs):
    solver_class = getattr(importlib.import_module(module), name)
    if seed_numpy:
      importlib.import_module("numpy").random.seed(seed)
    return solver_class(game, **kwargs)
  return build


_OPENSPIEL = "open_spiel.python.algorithms."
entries.register_solver("openspiel_cfr", "OpenSpiel's Python cfr.CFRSolver",
                        _stock(_OPENSPIEL + "cfr", "CFRSolver"))
entries.register_solver("openspiel_cfr_plus", "OpenSpiel's Python cfr.CFRPlusSolver",
                        _stock(_OPENSPIEL + "cfr", "CFRPlusSolver"))
entries.register_solver("openspiel_lcfr", "OpenSpiel's Python discounted_cfr.LCFRSolver",
                        _stock(_OPENSPIEL + "discounted_cfr", "LCFRSolver"))
entries.register_solver(
    "openspiel_dcfr", "OpenSpiel's Python discounted_cfr.DCFRSolver",
    _stock(_OPENSPIEL + "discounted_cfr", "DCFRSolver"), (
        Parameter("alpha", _DCFR_ALPHA, 1.5, "positive exponent"),
        Parameter("beta", _DCFR_BETA, 0.0, "negative exponent"),
        Parameter("gamma", _DCFR_GAMMA, 2.0, "strategy weight exponent"),
    ))
entries.register_solver("openspiel_cpp_cfr", "OpenSpiel's C++ pyspiel.CFRSolver",
                        _stock("pyspiel", "CFRSolver"))
entries.register_solver("openspiel_cpp_cfr_plus", "OpenSpiel's C++ pyspiel.CFRPlusSolver",
                        _stock("pyspiel", "CFRPlusSolver"))
entries.register_solver(
    "openspiel_os_mccfr", "OpenSpiel's Python outcome_sampling_mccfr (e=0.6; seeds "
    "numpy's global generator)",
    _stock(_OPENSPIEL + "outcome_sampling_mccfr", "OutcomeSamplingSolver", True))
entries.register_solver(
    "openspiel_es_mccfr", "OpenSpiel's Python external_sampling_mccfr (seeds numpy's "
    "global generator)",
    _stock(_OPENSPIEL + "external_sampling_mccfr", "ExternalSamplingSolver", True))


# Players (bots/, resolving/).

_SIMULATIONS_HELP = ("simulations per move (default: the per-move budget in iterations, "
                     "1000it if it is 0; no time budgets)")

entries.register_player("random", "uniform random legal action",
                        _deferred("bots.players", "build_random"))


def _solver_text(text):
  return str(entries.parse_solver(text))


entries.register_player(
    "solver",
    "a fixed strategy: the average strategy of an offline solver after a budget, "
    "computed once per process (e.g. solver(name=cfr+,iterations=1000))",
    _deferred("bots.players", "build_solver"),
    (Parameter("name", _solver_text, "cfr+",
               "solver string of the solver registry, e.g. cfr+, dcfr(1.5,0,2)"),
     Parameter("iterations", _int("iterations", 1), None,
               "iterations to run (default 1000 when seconds is not given either)"),
     Parameter("seconds", _float("seconds", 0.0, number_ranges.MAX_SECONDS), None,
               "wall-clock seconds to run (results then depend on machine speed)"),
     Parameter("solver_seed", _int("solver_seed", 0), 0,
               "seed of sampling solvers (the same strategy in every match)")))


def _strategy_path(text):
  path = pathlib.Path(text).expanduser()
  if not path.is_file():
    raise ValueError(f"parameter 'path': no strategy file {str(path)!r}.")
  return str(path)


entries.register_player(
    "strategy", "a fixed strategy saved by the solve example (--save_strategy)",
    _deferred("bots.players", "build_strategy"),
    (Parameter("path", _strategy_path, spec_strings.REQUIRED, "strategy file (.npz)"),))

entries.register_player("human", "a person typing moves at the terminal (play only)",
                        _deferred("bots.players", "build_human"), interactive=True)

# UCT exploration constant: finite (an infinite one fails inside OpenSpiel's MCTS).
_SEARCH_PARAMETERS = (
    Parameter("simulations", _int("simulations", 1), None, _SIMULATIONS_HELP),
    Parameter("uct_c", _float("uct_c", 0.0, number_ranges.MAX_CONSTANT), 2.0,
              "UCT exploration constant"),
    Parameter("rollouts", _int("rollouts", 1), 1, "random rollouts per leaf evaluation"),
)

entries.register_player(
    "mcts", "OpenSpiel's Python UCT search (perfect-information games only)",
    _deferred("bots.players", "build_mcts"), _SEARCH_PARAMETERS)
entries.register_player(
    "ismcts",
    "OpenSpiel's Python information-set MCTS (Cowling et al. 2011); on Python games "
    "it samples histories by enumeration (small games)",
    _deferred("bots.players", "build_ismcts"),
    _SEARCH_PARAMETERS + (
        Parameter("final_policy", _choice("final_policy", presets.ISMCTS_FINAL_POLICIES),
                  "max_visits", "how the move is chosen from the search statistics"),))


def parse_online_solver(text):
  """Parses a solver string, refusing solvers other than the outcome-sampling ones."""
  spec = entries.parse_solver(text)
  if spec.name not in presets.ONLINE_SOLVERS:
    raise ValueError(f"The online solving player needs an outcome-sampling solver "
                     f"({', '.join(presets.ONLINE_SOLVERS)}), got {spec.name!r}.")
  return spec


_TARGETING = Parameter(
    "targeting", _choice("targeting", presets.TARGETING_SCHEMES), presets.IST,
    "ist (information-set) or pst (public-subgame) targeting")
_ONLINE_COMPILED = Parameter(
    "compiled", _choice("compiled", presets.COMPILED_CHOICES), "auto",
    "auto (the compiled tree when it fits and targeting is ist), true or false")

entries.register_player(
    "online_solving",
    "the thesis's solving player: re-solves the whole game with an outcome-sampling "
    "solver every move, acts from the average strategy ([S] §3.4.2)",
    _deferred("bots.online_solving", "build_online_solving"),
    (Parameter("solver", lambda text: str(parse_online_solver(text)),
               presets.DEFAULT_ONLINE_SOLVER,
               "os_mccfr, mc_cfr or vr_mccfr with parameters (delta = targeting "
               "probability)"),
     _TARGETING, _ONLINE_COMPILED), accepts_tree=True,
    warm_up=_deferred("bots.online_solving", "warm_up_process"))
entries.register_player(
    "oos", "Online Outcome Sampling (Lisý et al. 2015)",
    _deferred("bots.online_solving", "build_oos"),
    (_TARGETING,
     Parameter("delta", _probability("delta"), 0.9, "targeting probability in [0, 1]"),
     Parameter("e", _probability("e"), 0.6, "exploration in [0, 1]"),
     Parameter("gamma", _probability("gamma"), 0.01,
               "explorative regret matching's uniform share in [0, 1]"),
     Parameter("reweight", _bool("reweight"), True,
               "re-weight iterations after a target change"),
     _ONLINE_COMPILED), accepts_tree=True,
    warm_up=_deferred("bots.online_solving", "warm_up_process"))

_CR_SOLVER_HELP = (
    "the subgame solver: vr_mccfr, mc_cfr, cfr+ or dl_cfr+ (each on the compiled tree "
    "when the game's tree is loaded or fits the memory limit, at most 2,000,000 "
    "histories on the generic walk; on live pyspiel gadgets otherwise), or one of those registered solver strings with parameters, e.g. "
    "vr_mccfr(e=0.6,rm=rm+), cfr+(dl=3,ue=randomplayout(2)) (= dl_cfr+)")
# Resolver settings a cr subgame-solver string may set, by registry parameter name.
_CR_SAMPLING_SETTINGS = {"rm": "rm", "e": "e", "cse": "cse", "bl": "bl"}


def _cr_solver(text):
  """cr's `solver`: (resolver solver name, {cr parameter: value}) from one of
  presets.CR_SOLVERS or a registry solver string the resolver can run ([S] §3.4.1:
  the thesis's candidates; CFR+ and depth-limited CFR+ on the gadget's tree).
  Parameters written in the string override cr's own; the others keep cr's values."""
  name = spec_strings.parse_call(text).name if isinstance(text, str) else None
  if name == "dl_cfr+" and text.strip() == "dl_cfr+":
    return "dl_cfr+", {}
  try:
    spec = entries.parse_solver(text)
  except ValueError as error:
    raise ValueError(f"cr's solver: {error}") from None
  explicit = spec_strings.parse_call(text).kwargs
  if spec.name in presets.CR_SAMPLING_SOLVERS:
    unusable = set(explicit) - set(_CR_SAMPLING_SETTINGS)
    if unusable:
      raise ValueError(f"cr's solver {text!r}: {', '.join(sorted(unusable))} cannot be "
                       f"set for a subgame solver; accepted: "
                       f"{', '.join(_CR_SAMPLING_SETTINGS)}.")
    return spec.name, {_CR_SAMPLING_SETTINGS[key]: spec.parameters[key]
                       for key in explicit}
  if spec.name == "cfr+":
    unusable = set(explicit) - {"dl", "ue"}
    if unusable:
      raise ValueError(f"cr's solver {text!r}: the resolver's CFR+ is fixed (RM+, "
                       f"alternating, linear averaging); {', '.join(sorted(unusable))} "
                       "cannot be set; accepted: dl, ue.")
    if spec.parameters["dl"] is None:
      return "cfr+", {}
    return "dl_cfr+", {"dl": spec.parameters["dl"],
                       "playouts": components.parse_playouts(spec.parameters["ue"])}
  raise ValueError(f"cr's solver must be one of {', '.join(presets.CR_SOLVERS)} (with "
                   f"parameters, as registered solvers), got {text!r}.")


def _build_cr(game, player_id, seed, budget, solver, **settings):
  """build_cr with the settings cr's solver string carries over cr's own."""
  name, overrides = solver
  settings.update(overrides)
  return _attribute("resolving.continual_resolving", "build_cr")(
      game, player_id, seed, budget, solver=name, **settings)


entries.register_player(
    "cr",
    "continual resolving ([S] ch. 2): resolves each subgame through a gadget, with "
    "estimates from the previous solve",
    _build_cr,
    (Parameter("solver", _cr_solver, "vr_mccfr", _CR_SOLVER_HELP),
     Parameter("variant", _choice("variant", presets.GADGET_VARIANTS), "resolve",
               "gadget: resolve, max_margin or unsafe"),
     Parameter("keep", _bool("keep"), False, "keep the solver's tables between subgames"),
     Parameter("cbr", _bool("cbr"), False,
               "exact counterfactual best-response gadget values (small games)"),
     Parameter("rm", _regret_matcher, presets.THESIS_VR_MCCFR["rm"],
               "sampling solvers' regret matcher"),
     Parameter("e", _probability("e"), presets.THESIS_VR_MCCFR["e"],
               "sampling solvers' exploration"),
     Parameter("cse", _float("cse", 0.0, number_ranges.MAX_EXPONENT),
               presets.THESIS_VR_MCCFR["cse"],
               "sampling solvers' cumulative-strategy exponent"),
     Parameter("bl", _baseline, presets.THESIS_VR_MCCFR["bl"],
               "vr_mccfr's baseline: none or expavg(alpha)"),
     Parameter("cfrd_aware", _bool("cfrd_aware"), True,
               "evaluate both actions at the gadget's follow/terminate node"),
     Parameter("dl", _int("dl", 1), 4, "dl_cfr+'s depth limit in the gadget"),
     Parameter("playouts", _int("playouts", 1), 1, "dl_cfr+'s random playouts per leaf"),
     Parameter("terminate", _choice("terminate", presets.TERMINATE_VALUES), "cfrd",
               "the resolve gadget's Terminate payoffs: cfrd (CFR-D's) or cfrplayground "
               "(the thesis's code's: scaled by the previous range's mass from the "
               "second resolve on)")), accepts_tree=True,
    warm_up=_deferred("resolving.continual_resolving", "warm_up_process"))
