"""How continual resolving solves each subgame: `ResolverConfig` ([S] ch. 2, §5.1-5.2).

The solver (cfr+, dl_cfr+, vr_mccfr, mc_cfr) and its settings, the gadget variant and
its Terminate values, checked once; both resolver paths read them.
"""

import dataclasses

import numpy as np

from ggp_cr.algorithms.cfr import regret_matching
from ggp_cr.algorithms.config import presets
from ggp_cr.algorithms.sampling import outcome_sampling

SOLVERS = presets.CR_SOLVERS
TERMINATE_VALUES = presets.TERMINATE_VALUES
SAMPLING_SOLVERS = presets.CR_SAMPLING_SOLVERS
VARIANTS = presets.GADGET_VARIANTS
# The sampling solvers' defaults: the thesis's VR-MCCFR candidate ([S] §5.1.2).
_THESIS = presets.THESIS_VR_MCCFR


@dataclasses.dataclass(frozen=True)
class ResolverConfig:
  """How each subgame is solved (see the module docstring for the choices)."""
  solver: str = "vr_mccfr"
  variant: str = "resolve"
  keep_solver_data: bool = False
  use_cbr: bool = False
  regret_matcher: object = _THESIS["rm"]
  exploration: float = _THESIS["e"]
  cumulative_strategy_exponent: float = _THESIS["cse"]
  baseline: object = _THESIS["bl"]
  cfrd_aware_sampling: bool = True
  depth_limit: int = 4
  playouts: int = 1
  terminate_values: str = "cfrd"

  def __post_init__(self):
    if self.solver not in SOLVERS:
      raise ValueError(f"solver must be one of {', '.join(SOLVERS)}; got "
                       f"{self.solver!r}.")
    if self.variant not in VARIANTS:
      raise ValueError(f"variant must be one of {', '.join(VARIANTS)}; got "
                       f"{self.variant!r}.")
    if self.terminate_values not in TERMINATE_VALUES:
      raise ValueError(f"terminate_values must be one of {', '.join(TERMINATE_VALUES)}; "
                       f"got {self.terminate_values!r}.")
    if self.terminate_values != "cfrd" and self.variant != "resolve":
      raise ValueError(f"terminate_values {self.terminate_values!r} changes the resolve "
                       f"gadget's Terminate payoffs; the {self.variant} gadget has none "
                       "(accepted with variant 'resolve' only).")
    object.__setattr__(self, "regret_matcher",
                       regret_matching.parse_regret_matcher(self.regret_matcher))
    object.__setattr__(self, "exploration", outcome_sampling.check_probability(
        "exploration", self.exploration))
    object.__setattr__(
        self, "cumulative_strategy_exponent",
        outcome_sampling.check_cumulative_strategy_exponent(
            self.cumulative_strategy_exponent))
    baseline = outcome_sampling.parse_baseline(self.baseline)
    if self.solver == "mc_cfr":
      baseline = None
    object.__setattr__(self, "baseline", baseline)
    for name in ("depth_limit", "playouts"):
      value = getattr(self, name)
      if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or \
          value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}.")

  @property
  def sampling(self):
    return self.solver in SAMPLING_SOLVERS
