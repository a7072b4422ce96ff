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

Full-width only (they keep iteration t's instantaneous regrets r_t apart from the
cumulative R; `update_with_instant`):
* DRM+(alpha) (Xu et al. 2024, "Minimizing weighted counterfactual regret with
  optimistic online mirror descent", DCFR+): R_t = [R_{t-1} d(t-1) + r_t]^+ with
  d(s) = s^alpha / (s^alpha + 1) (d(0) = 0, d = 1 for alpha = inf); the strategy is
  proportional to R_t.
* PDRM+(alpha) (the same paper's PDCFR+): R_t as DRM+, and the strategy is
  proportional to the prediction [R_t d(t) + r_t]^+ (the next iteration's regret
  predicted to equal this one's). PRM+ = PDRM+(inf) is predictive RM+ (Farina, Kroer
  and Sandholm 2021, "Faster game solving via predictive Blackwell approachability"):
  R_t = [R_{t-1} + r_t]^+, strategy proportional to [R_t + r_t]^+.

The discount of iteration t is applied right after t's regrets are added, as in
Brown & Sandholm and OpenSpiel's discounted_cfr (CFRPlayground applied it before adding
the next iteration's regrets with t + 1, one iteration later).

A matcher is a frozen `RegretMatcher` (config.components, with its parser, so that
parsing a solver string loads no numba), parsed from strings such as ``rm``, ``rm+``,
``drm(1.5,0.5)`` or ``erm(rm+,0.01)``. Numba kernels take its `params()` (a float64
array) and call the njit functions below on slices [offset, offset + num_actions) of
flat per-(information set, action) arrays; `matched` and `accumulated` run a matcher on
one information set's regrets.
"""

import numba
import numpy as np

from ggp_cr.algorithms.config import components
from ggp_cr.algorithms.config.components import (  # pylint: disable=g-importing-member
    DRM, DRM_PLUS, NUM_PARAMS, PARAM_ALPHA, PARAM_BETA, PARAM_EXPLORATION, PARAM_KIND,
    PDRM_PLUS, RM, RM_PLUS, RegretMatcher, parse_full_width_matcher,
    parse_regret_matcher)

# The matcher's data, parser and parameter layout live in config (no numba to parse).
ACCEPTED = components.REGRET_MATCHERS_ACCEPTED


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
  matched_strategy(regrets, strategy, offset, num_actions, params[PARAM_EXPLORATION])


@numba.njit(cache=True, inline="always")  # called per information set
def matched_strategy(regrets, strategy, offset, num_actions, exploration):
  """`current_strategy` with the matcher's exploration given: a loop over many
  information sets reads it once (the params array may alias `regrets` as far as
  the compiler knows, so a read per information set is not hoisted)."""
  positive_sum = 0.0
  for a in range(offset, offset + num_actions):  # without a branch: adding 0.0 is exact
    positive_sum += max(regrets[a], 0.0)
  if positive_sum > 0.0:
    for a in range(offset, offset + num_actions):
      strategy[a] = max(regrets[a], 0.0) / positive_sum
  else:
    uniform = 1.0 / num_actions
    for a in range(offset, offset + num_actions):
      strategy[a] = uniform
  _mix_exploration(strategy, offset, num_actions, exploration)


@numba.njit(cache=True, inline="always")
def _mix_exploration(strategy, offset, num_actions, exploration):
  """Mixes `exploration` of the uniform strategy into the strategy of slots
  [offset, offset+num_actions) (nothing at 0)."""
  if exploration > 0.0:
    uniform_part = exploration / num_actions
    for a in range(offset, offset + num_actions):
      strategy[a] = uniform_part + (1.0 - exploration) * strategy[a]


@numba.njit(cache=True)
def discount_multipliers(params, iteration):
  """(positive, negative): DRM's multipliers t^alpha/(t^alpha+1) and t^beta/(t^beta+1)
  of iteration `iteration`, the same for every information set (1, 1 for other
  matchers); `discount_with` applies them."""
  if params[PARAM_KIND] == DRM:
    return (drm_multiplier(params[PARAM_ALPHA], iteration),
            drm_multiplier(params[PARAM_BETA], iteration))
  return 1.0, 1.0


@numba.njit(cache=True, inline="always")  # called per information set
def discount_with(regrets, offset, num_actions, kind, positive, negative):
  """`discount_regrets` with the matcher's kind and the iteration's
  `discount_multipliers` given (read once by a loop over information sets)."""
  if kind == RM_PLUS:
    for a in range(offset, offset + num_actions):
      if regrets[a] < 0.0:
        regrets[a] = 0.0
  elif kind == DRM:
    # Without a branch on the sign (the signs are unpredictable): a zero regret times
    # `negative`, in [0, 1], stays that zero.
    for a in range(offset, offset + num_actions):
      regret = regrets[a]
      regrets[a] = regret * (positive if regret > 0.0 else negative)


@numba.njit(cache=True)
def discount_regrets(regrets, offset, num_actions, params, iteration):
  """Applies the matcher's end-of-iteration step for iteration `iteration` (>= 1).

  RM: nothing; RM+: negative regrets become 0; DRM: positive regrets times
  t^alpha/(t^alpha+1), negative ones times t^beta/(t^beta+1).
  """
  positive, negative = discount_multipliers(params, iteration)
  discount_with(regrets, offset, num_actions, params[PARAM_KIND], positive, negative)


@numba.njit(cache=True)
def accumulate_regrets(regrets, offset, num_actions, increments, params, iteration):
  """Adds increments[0:num_actions] to the slots, then applies `discount_regrets`."""
  for a in range(num_actions):
    regrets[offset + a] += increments[a]
  discount_regrets(regrets, offset, num_actions, params, iteration)


def matched(matcher, regrets):
  """The current strategy of `matcher` (a RegretMatcher) for one information set's
  cumulative `regrets` (`current_strategy` on one slice)."""
  regrets = np.asarray(regrets, dtype=np.float64)
  out = np.empty_like(regrets)
  current_strategy(regrets, out, 0, len(regrets), matcher.params())
  return out


def accumulated(matcher, regrets, increments, iteration):
  """`regrets` + `increments` of one information set, discounted by `matcher` as after
  `iteration` (>= 1; `accumulate_regrets` on one slice); a new array."""
  if matcher.needs_instant_regrets:
    raise ValueError(f"{matcher} keeps instantaneous regrets apart; only the full-width "
                     "CFR solvers run it.")
  result = np.array(regrets, dtype=np.float64)
  accumulate_regrets(result, 0, len(result), np.asarray(increments, dtype=np.float64),
                     matcher.params(), float(iteration))
  return result


@numba.njit(cache=True)
def instant_multipliers(params, iteration):
  """(d(t-1), d(t)) of DRM+ / PDRM+ at iteration t (module docstring), the same for
  every information set; `update_with_instant` applies them."""
  alpha = params[PARAM_ALPHA]
  return drm_multiplier(alpha, iteration - 1.0), drm_multiplier(alpha, iteration)


@numba.njit(cache=True, inline="always")  # called per information set
def update_with_instant(regrets, instant, strategy, offset, num_actions, kind,
                        exploration, previous, current):
  """DRM+ / PDRM+ at the end of iteration t: folds the instantaneous regrets
  `instant` into `regrets`, writes the new strategy and zeroes `instant` (slots
  [offset, offset+num_actions)); kind, exploration: the matcher's params; previous,
  current: t's `instant_multipliers`. Two and three actions run unrolled (the same
  operations: leduc_poker's end step 10.3 -> 8.8 us a player)."""
  if num_actions == 2:
    _fold_2(regrets, instant, strategy, offset, kind, previous, current)
  elif num_actions == 3:
    _fold_3(regrets, instant, strategy, offset, kind, previous, current)
  else:
    _fold_any(regrets, instant, strategy, offset, num_actions, kind, previous, current)
  _mix_exploration(strategy, offset, num_actions, exploration)


@numba.njit(cache=True, inline="always")
def _fold_2(regrets, instant, strategy, o, kind, previous, current):
  """update_with_instant of 2 actions without exploration."""
  r0 = max(regrets[o] * previous + instant[o], 0.0)
  r1 = max(regrets[o + 1] * previous + instant[o + 1], 0.0)
  regrets[o] = r0
  regrets[o + 1] = r1
  if kind == PDRM_PLUS:  # matched to the prediction
    r0 = r0 * current + instant[o]
    r1 = r1 * current + instant[o + 1]
  p0 = max(r0, 0.0)
  p1 = max(r1, 0.0)
  total = 0.0 + p0
  total += p1
  if total > 0.0:
    strategy[o] = p0 / total
    strategy[o + 1] = p1 / total
  else:
    strategy[o] = 0.5
    strategy[o + 1] = 0.5
  instant[o] = 0.0
  instant[o + 1] = 0.0


@numba.njit(cache=True, inline="always")
def _fold_3(regrets, instant, strategy, o, kind, previous, current):
  """update_with_instant of 3 actions without exploration."""
  r0 = max(regrets[o] * previous + instant[o], 0.0)
  r1 = max(regrets[o + 1] * previous + instant[o + 1], 0.0)
  r2 = max(regrets[o + 2] * previous + instant[o + 2], 0.0)
  regrets[o] = r0
  regrets[o + 1] = r1
  regrets[o + 2] = r2
  if kind == PDRM_PLUS:
    r0 = r0 * current + instant[o]
    r1 = r1 * current + instant[o + 1]
    r2 = r2 * current + instant[o + 2]
  p0 = max(r0, 0.0)
  p1 = max(r1, 0.0)
  p2 = max(r2, 0.0)
  total = 0.0 + p0
  total += p1
  total += p2
  if total > 0.0:
    strategy[o] = p0 / total
    strategy[o + 1] = p1 / total
    strategy[o + 2] = p2 / total
  else:
    uniform = 1.0 / 3
    strategy[o] = uniform
    strategy[o + 1] = uniform
    strategy[o + 2] = uniform
  instant[o] = 0.0
  instant[o + 1] = 0.0
  instant[o + 2] = 0.0


@numba.njit(cache=True, inline="always")
def _fold_any(regrets, instant, strategy, offset, num_actions, kind, previous,
              current):
  """update_with_instant of any number of actions without exploration."""
  for a in range(offset, offset + num_actions):
    regrets[a] = max(regrets[a] * previous + instant[a], 0.0)
  if kind == PDRM_PLUS:
    for a in range(offset, offset + num_actions):  # the prediction, in place
      instant[a] = regrets[a] * current + instant[a]
    matched_strategy(instant, strategy, offset, num_actions, 0.0)
  else:
    matched_strategy(regrets, strategy, offset, num_actions, 0.0)
  for a in range(offset, offset + num_actions):
    instant[a] = 0.0
