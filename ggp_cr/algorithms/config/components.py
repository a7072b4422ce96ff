"""Parsers and value objects of the solvers' components: regret matchers ([S] §1.3,
§3.3.1), VR-MCCFR baselines ([S] §3.3.3), depth-limit utility estimators, and the
fixed policies of best-response studies (bots/fixed_policies.py builds them).

They live in config, with no numba and no solver module, so that parsing a solver
string such as ``vr_mccfr(rm=drm(1,1),bl=expavg(0.5))`` stays light; the solvers
(cfr/, sampling/) import them from here. See cfr/regret_matching.py for the regret
matchers' definitions and kernels, and for running one matcher on one information set
(`regret_matching.matched`, `regret_matching.accumulated`).
"""

import dataclasses
import math

import numpy as np

from ggp_cr.algorithms.config import number_ranges
from ggp_cr.algorithms.config import spec_strings


RM = 0
RM_PLUS = 1
DRM = 2
# Full-width only: they need the iteration's instantaneous regrets apart from the
# cumulative ones (cfr/regret_matching.py).
DRM_PLUS = 3
PDRM_PLUS = 4
FULL_WIDTH_KINDS = (DRM_PLUS, PDRM_PLUS)

# Layout of the float64 parameter array passed to the kernels.
PARAM_KIND = 0
PARAM_ALPHA = 1
PARAM_BETA = 2
PARAM_EXPLORATION = 3
NUM_PARAMS = 4

_KIND_NAMES = {RM: "rm", RM_PLUS: "rm+", DRM: "drm", DRM_PLUS: "drm+",
               PDRM_PLUS: "pdrm+"}

REGRET_MATCHERS_ACCEPTED = ("rm", "rm+", "drm(alpha,beta)", "erm(inner,gamma) with inner one of "
            "rm, rm+, drm(alpha,beta) and gamma in [0, 1]")
FULL_WIDTH_MATCHERS_ACCEPTED = REGRET_MATCHERS_ACCEPTED + (
    "drm+(alpha)", "prm+", "pdrm+(alpha) (full-width CFR only)")


@dataclasses.dataclass(frozen=True)
class RegretMatcher:
  """A regret-matching rule: kind RM, RM_PLUS or DRM, plus ERM exploration gamma."""
  kind: int = RM
  alpha: float = math.inf
  beta: float = math.inf
  exploration: float = 0.0

  def __post_init__(self):
    if self.kind not in _KIND_NAMES:
      raise ValueError(f"Regret matcher kind must be one of {sorted(_KIND_NAMES)}, "
                       f"got {self.kind!r}.")
    for name in ("alpha", "beta"):
      if math.isnan(getattr(self, name)):
        raise ValueError(f"DRM parameter {name} must be a number, got NaN.")
    if not 0.0 <= self.exploration <= 1.0:
      raise ValueError(
          f"ERM exploration gamma must be in [0, 1], got {self.exploration}.")

  def params(self):
    """The float64 parameter array the numba functions take."""
    params = np.zeros(NUM_PARAMS)
    params[PARAM_KIND] = self.kind
    params[PARAM_ALPHA] = self.alpha
    params[PARAM_BETA] = self.beta
    params[PARAM_EXPLORATION] = self.exploration
    return params

  @property
  def needs_instant_regrets(self):
    """True for the full-width-only kinds (drm+, pdrm+), which keep each iteration's
    instantaneous regrets apart from the cumulative ones."""
    return self.kind in FULL_WIDTH_KINDS

  def __str__(self):
    if self.kind == DRM:
      inner = f"drm({_format_number(self.alpha)},{_format_number(self.beta)})"
    elif self.kind == PDRM_PLUS and self.alpha == math.inf:
      inner = "prm+"
    elif self.kind in FULL_WIDTH_KINDS:
      inner = f"{_KIND_NAMES[self.kind]}({_format_number(self.alpha)})"
    else:
      inner = _KIND_NAMES[self.kind]
    if self.exploration > 0:
      return f"erm({inner},{_format_number(self.exploration)})"
    return inner


def _format_number(value):
  """Shortest text that parses back to `value`: 1 rather than 1.0, inf, -inf."""
  value = float(value)
  if not math.isfinite(value):
    return "inf" if value > 0 else "-inf"
  if value.is_integer() and abs(value) < 1e15:
    return str(int(value))
  return repr(value)


def parse_regret_matcher(spec, full_width=False):
  """Parses ``rm``, ``rm+``, ``drm(alpha,beta)`` or ``erm(inner,gamma)``; with
  `full_width` also ``drm+(alpha)``, ``prm+`` and ``pdrm+(alpha)`` (cfr/regret_matching.py),
  which only the full-width CFR solvers run.

  A RegretMatcher is returned unchanged if its kind is accepted. Raises ValueError
  listing the accepted forms.
  """
  accepted = FULL_WIDTH_MATCHERS_ACCEPTED if full_width else REGRET_MATCHERS_ACCEPTED
  try:
    if isinstance(spec, RegretMatcher):
      if spec.needs_instant_regrets and not full_width:
        raise ValueError("only the full-width CFR solvers run it.")
      return spec
    return _from_call(spec_strings.parse_call(spec), allow_erm=True,
                      full_width=full_width)
  except ValueError as error:
    raise ValueError(f"Bad regret matcher {str(spec)!r}: {error} Accepted: "
                     f"{'; '.join(accepted)}.") from None


def parse_full_width_matcher(spec):
  """`parse_regret_matcher` with the full-width-only kinds accepted."""
  return parse_regret_matcher(spec, full_width=True)


def _from_call(call, allow_erm, full_width):
  def fail(why):
    raise ValueError(f"{why}.")

  if call.kwargs:
    fail("arguments are positional")
  if not full_width and call.name in ("prm+", "drm+", "pdrm+"):
    fail(f"{call.name} keeps instantaneous regrets apart; only the full-width CFR "
         "solvers run it")
  if call.name == "prm+":
    if call.args:
      fail("prm+ takes no arguments")
    return RegretMatcher(kind=PDRM_PLUS)
  if call.name in ("drm+", "pdrm+"):
    if len(call.args) != 1:
      fail(f"{call.name} takes one exponent, {call.name}(alpha)")
    alpha = number_ranges.exponent(
        spec_strings.parse_float(call.args[0], f"{call.name} alpha"),
        f"{call.name} alpha", allowed=(math.inf,))
    return RegretMatcher(kind=DRM_PLUS if call.name == "drm+" else PDRM_PLUS,
                         alpha=alpha)
  if call.name in ("rm", "rm+"):
    if call.args:
      fail(f"{call.name} takes no arguments")
    return RegretMatcher(kind=RM if call.name == "rm" else RM_PLUS)
  if call.name == "drm":
    if len(call.args) != 2:
      fail("drm takes two exponents, drm(alpha,beta)")
    alpha = number_ranges.exponent(spec_strings.parse_float(call.args[0], "DRM alpha"),
                                   "DRM alpha", allowed=(math.inf,))
    beta = number_ranges.exponent(spec_strings.parse_float(call.args[1], "DRM beta"),
                                  "DRM beta", -number_ranges.MAX_EXPONENT,
                                  allowed=(math.inf, -math.inf))
    return RegretMatcher(kind=DRM, alpha=alpha, beta=beta)
  if call.name == "erm" and allow_erm:
    if len(call.args) != 2:
      fail("erm takes an inner matcher and gamma, erm(inner,gamma)")
    inner = _from_call(spec_strings.parse_call(call.args[0]), allow_erm=False,
                       full_width=full_width)
    gamma = spec_strings.parse_float(call.args[1], "ERM gamma")
    if not 0.0 <= gamma <= 1.0:
      fail(f"ERM gamma must be in [0, 1], got {gamma}")
    return dataclasses.replace(inner, exploration=gamma)
  if call.name == "erm":
    fail("erm cannot be nested")
  fail(f"unknown name {call.name!r}")


def check_probability(name, value, allow_zero=True):
  """Returns `value` as a float, raising ValueError unless it lies in [0, 1]."""
  try:
    value = float(value)
  except (TypeError, ValueError):
    raise ValueError(f"{name} must be a number in [0, 1], got {value!r}.") from None
  low_ok = value >= 0.0 if allow_zero else value > 0.0
  if not (low_ok and value <= 1.0):
    allowed = "[0, 1]" if allow_zero else "(0, 1]"
    raise ValueError(f"{name} must be in {allowed}, got {value}.")
  return value


@dataclasses.dataclass(frozen=True)
class ExpAvgBaseline:
  """VR-MCCFR baseline: b <- (1 - alpha) * b + alpha * sampled child value."""
  alpha: float

  def __post_init__(self):
    check_probability("The baseline decay alpha of expavg(alpha)", self.alpha)

  def __str__(self):
    return f"expavg({self.alpha:g})"


BASELINES_ACCEPTED = "none, expavg(alpha) with alpha in [0, 1]"


def parse_baseline(spec):
  """None / ExpAvgBaseline / 'none' / 'expavg(alpha)' -> None or ExpAvgBaseline."""
  if spec is None or isinstance(spec, ExpAvgBaseline):
    return spec
  try:
    call = spec_strings.parse_call(spec)
  except ValueError as error:
    raise ValueError(f"{error} Accepted baselines: {BASELINES_ACCEPTED}.") from None
  if call.name == "none" and not call.args and not call.kwargs:
    return None
  if call.name == "expavg" and len(call.args) == 1 and not call.kwargs:
    return ExpAvgBaseline(spec_strings.parse_float(call.args[0], "expavg alpha"))
  raise ValueError(f"Bad baseline {spec!r}. Accepted baselines: {BASELINES_ACCEPTED}.")


def parse_playouts(spec):
  """The playout count n of ``randomplayout(n)`` (or the thesis's ``RandomPlayout{n}``;
  n defaults to 1), the one depth-limit utility estimator."""
  call = spec_strings.parse_call(spec)
  if call.name not in ("randomplayout", "random_playout") or call.kwargs or \
      len(call.args) > 1:
    raise ValueError(f"Unknown utility estimator {spec!r}; accepted: randomplayout(n) "
                     "with n >= 1 playouts.")
  return spec_strings.parse_int(call.args[0], "RandomPlayout n", minimum=1) \
      if call.args else 1


FIXED_POLICIES_ACCEPTED = ("uniform, random(seed=N), strategy(path=FILE) or "
                           "solver(name=SPEC,iterations=N)")


@dataclasses.dataclass(frozen=True)
class FixedPolicy:
  """A parsed fixed policy: `kind` uniform, random (`seed`), strategy (`path`) or
  solver (`solver` string run for `iterations`)."""
  kind: str
  seed: int = 0
  path: str = ""
  solver: str = "cfr+"
  iterations: int = 100


def parse_fixed_policy(text):
  """Parses ``uniform``, ``random(seed=N)``, ``strategy(path=FILE)`` or
  ``solver(name=SPEC,iterations=N)``; raises ValueError naming the accepted forms."""
  call = spec_strings.parse_call(text)
  if call.args:
    raise ValueError(f"Policy {text!r} takes keyword arguments only; use "
                     f"{FIXED_POLICIES_ACCEPTED}.")
  if call.name == "uniform" and not call.kwargs:
    return FixedPolicy("uniform")
  if call.name == "random" and set(call.kwargs) <= {"seed"}:
    return FixedPolicy("random", seed=spec_strings.parse_int(
        call.kwargs.get("seed", "0"), "random's seed", 0))
  if call.name == "strategy" and set(call.kwargs) == {"path"}:
    return FixedPolicy("strategy", path=call.kwargs["path"])
  if call.name == "solver" and set(call.kwargs) <= {"name", "iterations"}:
    iterations = spec_strings.parse_int(call.kwargs.get("iterations", "100"),
                                        "solver's iterations", 1)
    return FixedPolicy("solver", solver=call.kwargs.get("name", "cfr+"),
                       iterations=iterations)
  raise ValueError(f"A policy must be {FIXED_POLICIES_ACCEPTED}; got {text!r}.")
