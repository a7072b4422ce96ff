"""Regret matchers shared by the full-width and sampling CFR solvers ([S] §1.3, §3.3.1).

* RM   (regret matching): the strategy is proportional to the positive cumulative
  regrets; all of them zero or negative gives the uniform strategy.
* RM+  (regret matching+, Tammelin et al. 2015): as RM, but after each iteration's
  regrets are added, negative cumulative regrets are reset to zero.
* DRM(alpha, beta) (discounted regret matching, Brown & Sandholm 2019): after iteration
  t's regrets are added, positive cumulative regrets are multiplied by
  t^alpha / (t^alpha + 1) and negative ones by t^beta / (t^beta + 1). alpha = inf keeps
  positive regrets, beta = -inf zeroes negative ones, so DRM(inf, inf) = RM and
  DRM(inf, -inf) = RM+.
* ERM(inner, gamma) (explorative regret matching, Lisý et al. 2015): the strategy is
  gamma / |A| + (1 - gamma) * inner strategy; the regrets are updated as by `inner`.

The discount of iteration t is applied right after t's regrets are added, as in
Brown & Sandholm and OpenSpiel's discounted_cfr (CFRPlayground applied it before adding
the next iteration's regrets with t + 1, one iteration later).

A matcher is a frozen `RegretMatcher`, parsed from strings such as ``rm``, ``rm+``,
``drm(1.5,0.5)`` or ``erm(rm+,0.01)``. Numba kernels take its `params()` (a float64
array) and call the njit functions below on slices [offset, offset + num_actions) of
flat per-(information set, action) arrays.
"""

import dataclasses
import math

import numba
import numpy as np

from ggp_cr.algorithms.config import spec_strings

RM = 0
RM_PLUS = 1
DRM = 2

# Layout of the float64 parameter array passed to the kernels.
PARAM_KIND = 0
PARAM_ALPHA = 1
PARAM_BETA = 2
PARAM_EXPLORATION = 3
NUM_PARAMS = 4

_KIND_NAMES = {RM: "rm", RM_PLUS: "rm+", DRM: "drm"}

ACCEPTED = ("rm", "rm+", "drm(alpha,beta)", "erm(inner,gamma) with inner one of "
            "rm, rm+, drm(alpha,beta) and gamma in [0, 1]")


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

  def __str__(self):
    if self.kind == DRM:
      inner = f"drm({_format_number(self.alpha)},{_format_number(self.beta)})"
    else:
      inner = _KIND_NAMES[self.kind]
    if self.exploration > 0:
      return f"erm({inner},{_format_number(self.exploration)})"
    return inner

  def strategy(self, regrets):
    """The current strategy for one information set's cumulative regrets."""
    regrets = np.asarray(regrets, dtype=np.float64)
    out = np.empty_like(regrets)
    current_strategy(regrets, out, 0, len(regrets), self.params())
    return out

  def accumulate(self, regrets, increments, iteration):
    """Returns `regrets` + `increments`, discounted as after `iteration` (>= 1)."""
    result = np.array(regrets, dtype=np.float64)
    accumulate_regrets(result, 0, len(result),
                       np.asarray(increments, dtype=np.float64), self.params(),
                       float(iteration))
    return result


def _format_number(value):
  """Shortest text that parses back to `value`: 1 rather than 1.0, inf, -inf."""
  value = float(value)
  if not math.isfinite(value):
    return "inf" if value > 0 else "-inf"
  if value.is_integer() and abs(value) < 1e15:
    return str(int(value))
  return repr(value)


def parse_regret_matcher(spec):
  """Parses ``rm``, ``rm+``, ``drm(alpha,beta)`` or ``erm(inner,gamma)``.

  A RegretMatcher is returned unchanged. Raises ValueError listing the accepted forms.
  """
  if isinstance(spec, RegretMatcher):
    return spec
  try:
    return _from_call(spec_strings.parse_call(spec), allow_erm=True)
  except ValueError as error:
    raise ValueError(f"Bad regret matcher {spec!r}: {error} Accepted: "
                     f"{'; '.join(ACCEPTED)}.") from None


def _from_call(call, allow_erm):
  def fail(why):
    raise ValueError(f"{why}.")

  if call.kwargs:
    fail("arguments are positional")
  if call.name in ("rm", "rm+"):
    if call.args:
      fail(f"{call.name} takes no arguments")
    return RegretMatcher(kind=RM if call.name == "rm" else RM_PLUS)
  if call.name == "drm":
    if len(call.args) != 2:
      fail("drm takes two exponents, drm(alpha,beta)")
    alpha = spec_strings.parse_float(call.args[0], "DRM alpha")
    beta = spec_strings.parse_float(call.args[1], "DRM beta")
    return RegretMatcher(kind=DRM, alpha=alpha, beta=beta)
  if call.name == "erm" and allow_erm:
    if len(call.args) != 2:
      fail("erm takes an inner matcher and gamma, erm(inner,gamma)")
    inner = _from_call(spec_strings.parse_call(call.args[0]), allow_erm=False)
    gamma = spec_strings.parse_float(call.args[1], "ERM gamma")
    if not 0.0 <= gamma <= 1.0:
      fail(f"ERM gamma must be in [0, 1], got {gamma}")
    return dataclasses.replace(inner, exploration=gamma)
  if call.name == "erm":
    fail("erm cannot be nested")
  fail(f"unknown name {call.name!r}")


@numba.njit(cache=True)
def drm_multiplier(exponent, iteration):
  """t^exponent / (t^exponent + 1); 1 for exponent = inf, 0 for exponent = -inf."""
  if exponent == np.inf:
    return 1.0
  if exponent == -np.inf:
    return 0.0
  power = iteration ** exponent
  if power == np.inf:
    return 1.0
  return power / (power + 1.0)


@numba.njit(cache=True)
def current_strategy(regrets, strategy, offset, num_actions, params):
  """Writes the regret-matched strategy of slots [offset, offset+num_actions)."""
  positive_sum = 0.0
  for a in range(offset, offset + num_actions):
    if regrets[a] > 0.0:
      positive_sum += regrets[a]
  if positive_sum > 0.0:
    for a in range(offset, offset + num_actions):
      strategy[a] = max(regrets[a], 0.0) / positive_sum
  else:
    uniform = 1.0 / num_actions
    for a in range(offset, offset + num_actions):
      strategy[a] = uniform
  exploration = params[PARAM_EXPLORATION]
  if exploration > 0.0:
    uniform_part = exploration / num_actions
    for a in range(offset, offset + num_actions):
      strategy[a] = uniform_part + (1.0 - exploration) * strategy[a]


@numba.njit(cache=True)
def discount_regrets(regrets, offset, num_actions, params, iteration):
  """Applies the matcher's end-of-iteration step for iteration `iteration` (>= 1).

  RM: nothing; RM+: negative regrets become 0; DRM: positive regrets times
  t^alpha/(t^alpha+1), negative ones times t^beta/(t^beta+1).
  """
  kind = params[PARAM_KIND]
  if kind == RM_PLUS:
    for a in range(offset, offset + num_actions):
      if regrets[a] < 0.0:
        regrets[a] = 0.0
  elif kind == DRM:
    positive = drm_multiplier(params[PARAM_ALPHA], iteration)
    negative = drm_multiplier(params[PARAM_BETA], iteration)
    for a in range(offset, offset + num_actions):
      if regrets[a] > 0.0:
        regrets[a] *= positive
      elif regrets[a] < 0.0:
        regrets[a] *= negative


@numba.njit(cache=True)
def accumulate_regrets(regrets, offset, num_actions, increments, params, iteration):
  """Adds increments[0:num_actions] to the slots, then applies `discount_regrets`."""
  for a in range(num_actions):
    regrets[offset + a] += increments[a]
  discount_regrets(regrets, offset, num_actions, params, iteration)
