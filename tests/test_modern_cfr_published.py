"""The modern CFR variants (cfr/cfr.py) against what their papers claim (issue 46).

No paper of the family gives its exploitabilities as numbers (they are log-scale
plots; docs/reproductions.md, "Modern CFR variants", says what was searched), so this
pins the published orderings we can check after 1,000 iterations, the horizon the
papers plot, on games of the PDCFR+ authors' code (pdcfrplus/game/game_config.py:
GoofSpielImp4 turn-based, LiarsDice4, Leduc), and our figures to 5%: CFR+ on
leduc_poker turns a one-ulp change of its regrets into a percent-level change of its
exploitability by iteration 500 (the last test), so kernel changes that sum in
another order may move the figures by that much, never by orders of magnitude.
"""

import dataclasses

import numpy as np
import pyspiel
import pytest

from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.cfr import regret_matching
from ggp_cr.algorithms.cfr import schedules
from ggp_cr.algorithms.config import registry

GOOFSPIEL_IMP4 = ("turn_based_simultaneous_game(game=goofspiel(num_cards=4,"
                  "imp_info=True,points_order=descending,returns_type=win_loss))")
LIARS_DICE4 = "liars_dice(numdice=1,dice_sides=4)"

# OpenSpiel exploitability (NashConv / 2) of the average strategy after 1,000
# iterations, as in docs/reproductions.md.
FIGURES = {
    (GOOFSPIEL_IMP4, "cfr+"): 2.680e-4,
    (GOOFSPIEL_IMP4, "dcfr"): 4.096e-4,
    (GOOFSPIEL_IMP4, "pcfr+"): 1.023e-7,
    (GOOFSPIEL_IMP4, "pdcfr+"): 4.755e-12,
    (GOOFSPIEL_IMP4, "hs-dcfr"): 1.638e-4,
    (LIARS_DICE4, "cfr+"): 4.533e-5,
    (LIARS_DICE4, "dcfr"): 2.622e-5,
    (LIARS_DICE4, "pcfr+"): 1.459e-6,
    (LIARS_DICE4, "pdcfr+"): 2.084e-10,
    (LIARS_DICE4, "hs-dcfr"): 2.466e-4,
    ("leduc_poker", "dcfr"): 1.435e-4,
    ("leduc_poker", "pcfr+"): 7.079e-4,
    ("leduc_poker", "hs-dcfr"): 5.471e-4,
    ("kuhn_poker", "dcfr"): 1.465e-4,
    ("kuhn_poker", "hs-dcfr"): 3.634e-4,
}
_HS_PCFR_BELOW = 1e-12  # hs-pcfr+ on the games without poker: 5.7e-15 and 3.5e-17


def _exploitability(game_string, spec, iterations=1000):
  tree = cfr.as_compiled_tree(game_string)
  solver = registry.make_solver(spec, tree)
  solver.iterate(iterations)
  return exact_br.exploitability_slots(tree, solver.average_strategy_slots())


@pytest.fixture(scope="module")
def measured():
  specs = {}
  for game_string, spec in FIGURES:
    specs.setdefault(game_string, set()).add(spec)
  for game_string in (GOOFSPIEL_IMP4, LIARS_DICE4):
    specs[game_string].add("hs-pcfr+")
  return {(game_string, spec): _exploitability(game_string, spec)
          for game_string, names in specs.items() for spec in sorted(names)}


def test_figures_after_1000_iterations(measured):
  for key, figure in FIGURES.items():
    assert measured[key] == pytest.approx(figure, rel=0.05), key


@pytest.mark.parametrize("game_string", [GOOFSPIEL_IMP4, LIARS_DICE4])
def test_predictive_family_leads_on_games_without_poker(measured, game_string):
  # Farina, Kroer and Sandholm 2021: PCFR+ ahead of CFR+ and DCFR on the non-poker
  # games; Xu et al. 2024: PDCFR+ ahead of PCFR+ there; Zhang, McAleer and Sandholm
  # 2024: HS-PCFR+(30) ahead of PCFR+.
  def value(spec):
    return measured[(game_string, spec)]
  assert value("pcfr+") < min(value("cfr+"), value("dcfr")) / 10
  assert value("pdcfr+") < value("pcfr+") / 100
  assert value("hs-pcfr+") < min(_HS_PCFR_BELOW, value("pcfr+"))


def test_dcfr_leads_pcfr_plus_on_leduc(measured):
  # Farina, Kroer and Sandholm 2021: on poker DCFR stays ahead of PCFR+.
  assert measured[("leduc_poker", "dcfr")] < measured[("leduc_poker", "pcfr+")] / 3


def test_hs_dcfr_beats_dcfr_only_on_goofspiel(measured):
  # Against Zhang, McAleer and Sandholm's claim, with the schedule of
  # schedules.py (docs/reproductions.md): recorded so a corrected schedule shows.
  assert measured[(GOOFSPIEL_IMP4, "hs-dcfr")] < measured[(GOOFSPIEL_IMP4, "dcfr")]
  for game_string in ("kuhn_poker", "leduc_poker", LIARS_DICE4):
    assert measured[(game_string, "hs-dcfr")] > 2 * measured[(game_string, "dcfr")]


@dataclasses.dataclass(frozen=True)
class _OnePart(schedules.HyperparameterSchedule):
  """The HS-DCFR schedule with gamma held at DCFR's 2 (hold="gamma") or alpha and
  beta held at DCFR's 1.5 and 0 (hold="discounts")."""
  hold: str = "gamma"

  def at(self, iteration):
    alpha, beta, gamma = super().at(iteration)
    return (alpha, beta, 2.0) if self.hold == "gamma" else (1.5, 0.0, gamma)


def test_hs_dcfr_loses_by_its_gamma_schedule(measured):
  """alpha(t) and beta(t) with gamma = 2 are ahead of DCFR on kuhn_poker and
  goofspiel and within 1.3x of it on leduc_poker and liars_dice (asserted to 1.5x);
  gamma(t) alone is more than 3x behind on all four (asserted 2x)."""
  for game_string, ahead in [("kuhn_poker", True), (GOOFSPIEL_IMP4, True),
                             ("leduc_poker", False), (LIARS_DICE4, False)]:
    tree = cfr.as_compiled_tree(game_string)
    figures = {}
    for hold in ("gamma", "discounts"):
      solver = cfr.GeneralCFRSolver(
          tree, regret_matcher=regret_matching.RegretMatcher(
              kind=regret_matching.DRM, alpha=1.0, beta=-1.0),
          schedule=_OnePart(hold=hold))
      solver.iterate(1000)
      figures[hold] = exact_br.exploitability_slots(tree, solver.average_strategy_slots())
    dcfr = measured[(game_string, "dcfr")]
    assert figures["gamma"] < (dcfr if ahead else 1.5 * dcfr), game_string
    assert figures["discounts"] > 2 * dcfr, game_string


def test_cfr_plus_on_leduc_amplifies_one_ulp():
  """Why LiteEFG's CFR+ leaves ours after about 100 leduc_poker iterations: one unit
  in the last place on our own regrets after iteration 1 grows to the same
  1e-7 at iteration 120 and 1e-3 at 150 of the average strategy."""
  tree = cfr.as_compiled_tree(pyspiel.load_game("leduc_poker"))
  first, second = cfr.CFRPlusSolver(tree), cfr.CFRPlusSolver(tree)
  first.iterate(1)
  second.iterate(1)
  state = second.state_dict()
  state["regrets"] = state["regrets"] * (1.0 + 2.0 ** -52)
  second.load_state_dict(state)
  gaps = []
  for iterations in (50, 150):
    first.iterate(iterations - first.iterations)
    second.iterate(iterations - second.iterations)
    gaps.append(np.abs(first.average_strategy_slots()
                       - second.average_strategy_slots()).max())
  assert 0 < gaps[0] < 1e-11
  assert gaps[1] > 1e-4
