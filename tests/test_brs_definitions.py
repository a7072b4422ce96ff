"""The ε- and η-bounded BRS pinned to its definition ([B] §4.3, Lemma 4.1;
pruned_br's docstring): the pruning threshold T(L), a hand-built game whose one
responder information set cuts exactly when the action gap is below the bound, and
fixed-seed golden errors and visits on Kuhn and Leduc."""

import math

import numpy as np
import pytest

from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import expected_game_score
from open_spiel.python.algorithms import exploitability as openspiel_exploitability
import pyspiel

from ggp_cr.algorithms.best_response import pruned_br


@pytest.mark.parametrize("leader_lower", [-0.6, 0.0, 0.6])
def test_additive_threshold_is_leader_plus_epsilon_times_weight(leader_lower):
  """T(L) = L + ε·W_I whatever the sign of L (not L·(1+ε), not L + ε·|L|); only at
  approximated information sets."""
  threshold = pruned_br._threshold  # pylint: disable=protected-access
  additive = pruned_br._ADDITIVE  # pylint: disable=protected-access
  exact = pruned_br._EXACT  # pylint: disable=protected-access
  assert threshold(leader_lower, 0.5, True, additive, 0.2, 0.0, -2.0) == pytest.approx(
      leader_lower + 0.1, abs=1e-15)
  assert threshold(leader_lower, 0.5, False, additive, 0.2, 0.0, -2.0) == leader_lower
  assert threshold(leader_lower, 0.5, True, exact, 0.2, 0.0, -2.0) == leader_lower


@pytest.mark.parametrize("leader_lower, expected", [
    # W = 0.5, MinUtility = -2: floor W·Min = -1, T = -1 + (L + 1)/(1 - η).
    (-0.6, -0.2), (0.0, 1.0), (0.6, 2.2)])
def test_relative_threshold_keeps_a_one_minus_eta_share_above_the_floor(leader_lower,
                                                                        expected):
  """T(L) with η = 0.5: an action survives iff its shifted upper bound U - W·Min
  reaches (L - W·Min)/(1 - η); η = 1 cuts everything but the leader."""
  threshold = pruned_br._threshold  # pylint: disable=protected-access
  relative = pruned_br._RELATIVE  # pylint: disable=protected-access
  assert threshold(leader_lower, 0.5, True, relative, 0.0, 0.5, -2.0) == pytest.approx(
      expected, abs=1e-15)
  assert threshold(leader_lower, 0.5, True, relative, 0.0, 1.0, -2.0) == math.inf


# Chance deals the responder's one information set I with probability 1/2 (W_I = 1/2;
# else 0). At I: a pays -0.3; b a fair coin, -0.5 or 1 (= MaxUtility). Exact: b,
# worth 0.25 at I, 0.125 at the root. With L = W·(-0.3) = -0.15, b's first outcome
# leaves its upper bound at W·0.25 = 0.125 exactly, so b is cut after one outcome iff
# T(L) > 0.125, and at I before its chance node iff T(L) > W·Max = 0.5:
# additive ε: cut iff -0.15 + ε/2 > 0.125, ε > 0.55 (the gap 0.25 - (-0.3)); at I iff
# ε > 1.3. Relative η (Min = -0.5, floor W·Min = -0.25): x(a) = 0.1, x(b) = 0.375,
# cut iff (1 - η)·0.375 < 0.1, η > 11/15; at I iff 0.1/(1 - η) > 0.75, η > 13/15.
# Cut: value -0.15, error 0.275 = W_I × the gap.
ONE_INFOSET = """EFG 2 R "one responder information set" { "responder" "other" }
c "" 1 "deal" { "I" 0.5 "out" 0.5 } 0
p "" 1 1 "I" { "a" "b" } 0
t "" 1 "a" { -0.3, 0.3 }
c "" 2 "coin" { "low" 0.5 "high" 0.5 } 0
t "" 2 "b low" { -0.5, 0.5 }
t "" 3 "b high" { 1.0, -1.0 }
t "" 4 "out" { 0.0, 0.0 }
"""
KEEP_B = dict(value=0.125, error=0.0, response=[0.0, 1.0], visited=7)
CUT_AT_COIN = dict(value=-0.15, error=0.275, response=[1.0, 0.0], visited=6)
CUT_AT_I = dict(value=-0.15, error=0.275, response=[1.0, 0.0], visited=4)


@pytest.mark.parametrize("setting, expected", [
    (dict(epsilon=0.0), KEEP_B),
    (dict(epsilon=0.4), KEEP_B),   # ε·W = 0.2 < gap·W = 0.275 (ε alone would cut)
    (dict(epsilon=0.54), KEEP_B),
    (dict(epsilon=0.56), CUT_AT_COIN),
    (dict(epsilon=1.0), CUT_AT_COIN),
    (dict(epsilon=1.5), CUT_AT_I),
    (dict(epsilon=1.0, start_depth=2), KEEP_B),  # I is at depth 1: not approximated
    (dict(eta=0.5), KEEP_B),
    (dict(eta=0.73), KEEP_B),
    (dict(eta=0.74), CUT_AT_COIN),
    (dict(eta=0.9), CUT_AT_I),
])
def test_one_information_set_cuts_exactly_below_the_bound(setting, expected):
  game = pyspiel.load_efg_game(ONE_INFOSET)
  result = pruned_br.pruned_best_response(game, policy_lib.TabularPolicy(game), 0,
                                          measure_error=True, **setting)
  assert result.exact_value == pytest.approx(0.125, abs=1e-12)
  assert result.value == pytest.approx(expected["value"], abs=1e-12)
  assert result.error == pytest.approx(expected["error"], abs=1e-12)
  np.testing.assert_array_equal(result.response_slots, expected["response"])
  assert result.histories_visited == expected["visited"]
  assert result.histories_total == 7


def test_relative_error_bound_by_hand():
  """η = 0.9 cuts b: value - Min = 0.35 ≥ 0.1·(exact - Min), so the exact value is at
  most min(Max, Min + 0.35/0.1) = 1 and the bound is 1 - (-0.15) = 1.15; η = 0.74:
  -0.5 + 0.35/0.26 + 0.15."""
  game = pyspiel.load_efg_game(ONE_INFOSET)
  trunk = policy_lib.TabularPolicy(game)
  assert pruned_br.pruned_best_response(game, trunk, 0, eta=0.9).error_bound == (
      pytest.approx(1.15, abs=1e-12))
  assert pruned_br.pruned_best_response(game, trunk, 0, eta=0.74).error_bound == (
      pytest.approx(-0.5 + 0.35 / 0.26 + 0.15, abs=1e-12))


def _random_policy(game, seed):
  """A TabularPolicy with Dirichlet(1) rows over the legal actions."""
  rng = np.random.default_rng(seed)
  tabular = policy_lib.TabularPolicy(game)
  for row, mask in zip(tabular.action_probability_array, tabular.legal_actions_mask):
    legal = np.flatnonzero(mask)
    row[:] = 0.0
    row[legal] = rng.dirichlet(np.ones(len(legal)))
  return tabular


# Seed 41's Dirichlet policy; per responder (0, then 1) the settings in order. Kuhn
# (58 histories; the exact search visits 56 for responder 0 and 52 for 1): ε = 0.2
# gives nothing up; responder 0 with ε = 1 or η = 0.2 bets its K (W_I = 1/3) where
# checking is 0.0939 better reach-weighted (0.282 per unit of W_I, within ε·W_I =
# 0.333); η = 0.6 checks its Q instead, where betting is 0.0335 better; responder 1
# with η = 0.6 checks behind with Q and K, where betting is 0.1557 better. Summed
# error 0.377044, 398 histories.
# Leduc (9,457 histories; exact: 8,172 and 8,000): responder 0 gives nothing up, the
# cuts only skip histories; responder 1 gives 0.0925 up at ε = 4 and η = 0.2 and 0.2386
# at η = 0.6. Summed error 0.423613, 63,626 histories. Values recorded from pruned_br
# when this test was written; each error is OpenSpiel's.
GOLDEN = [
    ("kuhn_poker", [dict(epsilon=0.2), dict(epsilon=1.0), dict(eta=0.2), dict(eta=0.6)],
     [0.0, 0.093922246496996, 0.093922246496996, 0.033522824080962,
      0.0, 0.0, 0.0, 0.155676900197004],
     [56, 52, 54, 46, 51, 49, 51, 39]),
    ("leduc_poker", [dict(epsilon=1.0), dict(epsilon=4.0), dict(eta=0.2),
                     dict(eta=0.6)],
     [0.0, 0.0, 0.0, 0.0, 0.0, 0.092505147999593, 0.092505147999593,
      0.238602604077669],
     [8169, 8164, 8164, 8128, 7963, 7891, 7900, 7247]),
]


@pytest.mark.parametrize("game_string, settings, errors, visited", GOLDEN)
def test_golden_errors_and_visits(game_string, settings, errors, visited):
  """Each error is OpenSpiel's best-response value minus OpenSpiel's value of the
  returned response (so the golden pins which actions BRS gives up, not how it sums
  values); the visits pin how much it prunes (comment above)."""
  game = pyspiel.load_game(game_string)
  fixed = _random_policy(game, 41)
  measured_errors, measured_visited = [], []
  for player in (0, 1):
    exact = openspiel_exploitability.best_response(game, fixed, player)[
        "best_response_value"]
    for setting in settings:
      result = pruned_br.pruned_best_response(game, fixed, player, **setting)
      attained = expected_game_score.policy_value(
          game.new_initial_state(), [result.policy, result.policy])[player]
      assert attained == pytest.approx(result.value, abs=1e-9)
      measured_errors.append(exact - attained)
      measured_visited.append(result.histories_visited)
  np.testing.assert_allclose(measured_errors, errors, rtol=0, atol=1e-9)
  assert sum(measured_errors) == pytest.approx(sum(errors), abs=1e-9)
  assert measured_visited == visited
