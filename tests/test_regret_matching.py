"""Tests of the regret matchers and the configuration-string parser."""

import math

import numba
import numpy as np
import pytest

from ggp_cr.algorithms.cfr import regret_matching
from ggp_cr.algorithms.cfr.regret_matching import (  # pylint: disable=g-importing-member
    accumulated, matched, parse_regret_matcher)
from ggp_cr.algorithms.config import spec_strings


def test_rm_is_proportional_to_positive_regrets():
  rm = parse_regret_matcher("rm")
  np.testing.assert_allclose(matched(rm, [2.0, -1.0, 6.0]), [0.25, 0.0, 0.75])


@pytest.mark.parametrize("spec", ["rm", "rm+", "drm(1.5,0.5)", "erm(rm,0.2)"])
def test_no_positive_regret_gives_uniform(spec):
  matcher = parse_regret_matcher(spec)
  np.testing.assert_allclose(matched(matcher, [0.0, 0.0, 0.0, 0.0]), [0.25] * 4)
  np.testing.assert_allclose(matched(matcher, [-1.0, 0.0, -3.0]), [1 / 3] * 3)


def test_rm_keeps_negative_regrets_and_rm_plus_clips_them():
  regrets, increments = [1.0, -0.5, 2.0], [-2.0, 0.25, 1.0]
  np.testing.assert_allclose(
      accumulated(parse_regret_matcher("rm"), regrets, increments, 3), [-1.0, -0.25, 3.0])
  np.testing.assert_allclose(
      accumulated(parse_regret_matcher("rm+"), regrets, increments, 3), [0.0, 0.0, 3.0])


def test_drm_discounts_positive_and_negative_regrets_separately():
  matcher = parse_regret_matcher("drm(1.5,0.5)")
  t = 4.0
  result = accumulated(matcher, [3.0, -2.0, 0.0], [1.0, -2.0, 0.0], t)
  positive = t**1.5 / (t**1.5 + 1)
  negative = t**0.5 / (t**0.5 + 1)
  np.testing.assert_allclose(result, [4.0 * positive, -4.0 * negative, 0.0])


def test_drm_with_infinite_exponents_emulates_rm_and_rm_plus():
  regrets, increments = [1.0, -0.5, 2.0], [-2.0, 0.25, 1.0]
  for t in (1, 2, 7):
    np.testing.assert_array_equal(
        accumulated(parse_regret_matcher("drm(inf,inf)"), regrets, increments, t),
        accumulated(parse_regret_matcher("rm"), regrets, increments, t))
    np.testing.assert_array_equal(
        accumulated(parse_regret_matcher("drm(inf,-inf)"), regrets, increments, t) + 0.0,
        accumulated(parse_regret_matcher("rm+"), regrets, increments, t))


def test_lcfr_discount_is_t_over_t_plus_one():
  # DRM(1,1) multiplies every regret by t/(t+1): after T iterations of constant regret
  # r the cumulative regret is r * sum_t t / (T+1) = r * T/2.
  matcher = parse_regret_matcher("drm(1,1)")
  regrets = np.zeros(2)
  for t in range(1, 11):
    regrets = accumulated(matcher, regrets, [1.0, -1.0], t)
  np.testing.assert_allclose(regrets, [5.0, -5.0])


def test_erm_mixes_uniform_into_inner_strategy():
  matcher = parse_regret_matcher("erm(rm+,0.1)")
  np.testing.assert_allclose(matched(matcher, [3.0, 1.0]),
                             [0.05 + 0.9 * 0.75, 0.05 + 0.9 * 0.25])
  # The regret update is the inner matcher's.
  np.testing.assert_allclose(accumulated(matcher, [1.0, 1.0], [-3.0, 1.0], 1), [0.0, 2.0])


def test_parse_and_format_round_trip():
  for spec in ["rm", "rm+", "drm(1.5,0.5)", "drm(1,-inf)", "erm(rm+,0.01)",
               "erm(drm(1,1),0.3)"]:
    matcher = parse_regret_matcher(spec)
    assert str(matcher) == spec
    assert parse_regret_matcher(str(matcher)) == matcher
  assert parse_regret_matcher(" RM+ ") == parse_regret_matcher("rm+")
  assert parse_regret_matcher("DRM{1.5,0}") == regret_matching.RegretMatcher(
      kind=regret_matching.DRM, alpha=1.5, beta=0.0)


@pytest.mark.parametrize("spec", [
    "", "foo", "rm(1)", "drm(1)", "drm(a,1)", "drm(nan,1)", "erm(rm,1.5)",
    "erm(erm(rm,0.1),0.1)", "erm(rm)", "rm+)", "drm(1,2", "drm(alpha=1,beta=2)"])
def test_bad_specs_are_refused_listing_accepted_forms(spec):
  with pytest.raises(ValueError) as error:
    parse_regret_matcher(spec)
  assert "rm" in str(error.value)


def test_kernels_work_on_slices_and_from_other_numba_functions():
  params = parse_regret_matcher("rm+").params()

  @numba.njit
  def update_all(regrets, strategy, offsets, sizes, params, increments):
    for i in range(len(offsets)):
      regret_matching.accumulate_regrets(
          regrets, offsets[i], sizes[i], increments[offsets[i]:], params, 1.0)
      regret_matching.current_strategy(regrets, strategy, offsets[i], sizes[i], params)

  regrets = np.array([1.0, 2.0, 0.0, -1.0, 5.0])
  strategy = np.zeros(5)
  update_all(regrets, strategy, np.array([0, 2]), np.array([2, 3]), params,
             np.array([0.0, 1.0, 1.0, -1.0, 0.0]))
  np.testing.assert_allclose(regrets, [1.0, 3.0, 1.0, 0.0, 5.0])
  np.testing.assert_allclose(strategy, [0.25, 0.75, 1 / 6, 0.0, 5 / 6])


def test_drm_multiplier_limits():
  assert regret_matching.drm_multiplier(math.inf, 1.0) == 1.0
  assert regret_matching.drm_multiplier(-math.inf, 5.0) == 0.0
  assert regret_matching.drm_multiplier(2.0, 3.0) == pytest.approx(9 / 10)
  assert regret_matching.drm_multiplier(1e6, 3.0) == 1.0


def test_spec_string_parser():
  call = spec_strings.parse_call("CFR(rm=drm(1,1), updates=alternating, cse=1)")
  assert call.name == "cfr"
  assert call.args == ()
  assert call.kwargs == {"rm": "drm(1,1)", "updates": "alternating", "cse": "1"}
  call = spec_strings.parse_call("dcfr(1.5,0,2)")
  assert call.args == ("1.5", "0", "2") and call.kwargs == {}
  assert spec_strings.parse_call("cfr+").name == "cfr+"
  assert spec_strings.parse_call("x()").args == ()
  for bad in ["a(b", "a(b))", "a(,b)", "a(k=1,k=2)", "a(k=1,2)", "(1)", "a=1", "a(b}"]:
    with pytest.raises(ValueError):
      spec_strings.parse_call(bad)


@pytest.mark.parametrize("kind", [regret_matching.DRM_PLUS, regret_matching.PDRM_PLUS])
@pytest.mark.parametrize("num_actions", [1, 2, 3, 4])
@pytest.mark.parametrize("exploration", [0.0, 0.1])
def test_update_with_instant_equals_a_plain_reference_bit_for_bit(kind, num_actions,
                                                                  exploration):
  # Its unrolled 2- and 3-action forms against the formulas, written plainly.
  rng = np.random.default_rng(num_actions)
  for trial in range(50):
    regrets = np.maximum(rng.normal(size=num_actions + 2), 0.0)
    instant = rng.normal(size=num_actions + 2)
    if trial % 5 == 0:  # no positive regret: uniform
      regrets[:], instant[:] = 0.0, -1.0
    strategy = np.full(num_actions + 2, 7.0)
    previous, current = rng.random(), rng.random()
    folded = [max(regrets[1 + a] * previous + instant[1 + a], 0.0)
              for a in range(num_actions)]
    matched = [r * current + instant[1 + a] if kind == regret_matching.PDRM_PLUS
               else r for a, r in enumerate(folded)]
    total = 0.0
    for m in matched:
      total += max(m, 0.0)
    expected = [max(m, 0.0) / total if total > 0.0 else 1.0 / num_actions
                for m in matched]
    if exploration > 0.0:
      expected = [exploration / num_actions + (1.0 - exploration) * e for e in expected]
    regret_matching.update_with_instant(
        regrets, instant, strategy, 1, num_actions, kind, exploration, previous, current)
    assert list(regrets[1:1 + num_actions]) == folded
    assert list(strategy[1:1 + num_actions]) == expected
    assert not instant[1:1 + num_actions].any()
    assert strategy[0] == strategy[-1] == 7.0
