"""Hyperparameter schedules of the CFR family (Zhang, McAleer and Sandholm 2024,
"Faster game solving via hyperparameter schedules", arXiv:2404.09097, Eq. 4).

A schedule gives, for iteration t = 1, 2, ..., the DCFR exponents and the averaging
exponent, each linear in s = t / n over a horizon of n iterations:
  alpha(t) = 1 + 3 s,   beta(t) = -1 - 2 s,   gamma(t) = gamma0 - 5 s,
with gamma0 = 30 (the paper's HS-...(30)) or 15. HS-DCFR schedules all three,
HS-PCFR+ only gamma (the one hyperparameter of PCFR+). The paper runs exactly n
iterations (n = 1,000 in its experiments); our choice for longer runs is to hold the
exponents at their t = n values (s capped at 1), which keeps gamma >= gamma0 - 5 > 0
and the discounts within the ranges DCFR's analysis covers.

With a schedule the cumulative strategy is discounted before each iteration's
strategy is added, S_t = S_{t-1} ((t-1)/t)^gamma(t) + pi_i sigma_t (the paper's
Eq. 3; with a constant gamma this is the t^gamma weighting of cfr.py).

Source: Eq. 4 as three independent implementations quote it, identically (the
paper's body and code were not at hand). The paper's Eq. 2 discounts R_t at iteration
t + 1; cfr.py discounts at the end of iteration t with alpha(t), one step of 3/n
earlier than evaluating it at t + 1. With this schedule HS-DCFR(30) is behind DCFR
after 1,000 iterations on kuhn_poker, leduc_poker and liars_dice, against the paper's
claim (docs/reproductions.md, "Modern CFR variants").
"""

import dataclasses

from ggp_cr.algorithms.config import number_ranges

# The paper's horizon (its experiments run 1,000 iterations).
PAPER_HORIZON = 1000


@dataclasses.dataclass(frozen=True)
class HyperparameterSchedule:
  """Eq. 4's schedule: `gamma0` (30 or 15 in the paper, any value > 5 accepted),
  `horizon` n >= 1, and `discounts` whether alpha and beta are scheduled too
  (HS-DCFR) or only gamma (HS-PCFR+)."""
  gamma0: float = 30.0
  horizon: int = PAPER_HORIZON
  discounts: bool = True

  def __post_init__(self):
    number_ranges.check(self.gamma0, "The schedule's gamma0", 5.0,
                        number_ranges.MAX_EXPONENT)
    if self.gamma0 <= 5.0:
      raise ValueError(f"The schedule's gamma0 must be > 5 (gamma falls by 5 over the "
                       f"horizon), got {self.gamma0}.")
    number_ranges.count(self.horizon, "The schedule's horizon", minimum=1)

  def at(self, iteration):
    """(alpha, beta, gamma) of iteration t >= 1 (t = 0: the starting values)."""
    s = min(float(iteration), float(self.horizon)) / self.horizon
    return 1.0 + 3.0 * s, -1.0 - 2.0 * s, self.gamma0 - 5.0 * s

  def __str__(self):
    return (f"hs(gamma0={self.gamma0:g},horizon={self.horizon}"
            + ("" if self.discounts else ",gamma only") + ")")
