"""The `auto` solver: which of our CFR family to run on a game for a target (issue 46).

The rule, from the iterations each solver needed to reach exploitability 1e-3, 1e-5
and 1e-7 (benchmarks/time_to_epsilon.py; iterations, not seconds, since every
solver of the family runs the same kernels; on trees pruned by the batched pass the
sparser strategies' iterations cost less, and dcfr's on liars_dice were the cheapest
measured; on the grouped pass the matchers keeping instantaneous regrets, pcfr+,
dcfr+, pdcfr+, cost 1.4x dcfr's iteration on leduc_poker, which only widens dcfr's
lead there):

* a game with chance nodes of more than one outcome (cards or dice dealt): ``dcfr``
  (Brown and Sandholm's DCFR(1.5, 0, 2)). To 1e-5 it needed 4,577 iterations on
  leduc_poker (pdcfr+ 9,159, cfr+ 7,701) and 2,287 on liars_dice (dcfr+ 4,577, cfr+
  3,848, pdcfr+ not within 3,113). kuhn_poker is the exception (pdcfr+ 48, dcfr
  12,953), where both take well under a second;
* a game without chance: the predictive family, ``pdcfr+`` (Xu et al. 2024) down to
  1e-6 and ``hs-pcfr+`` (Zhang, McAleer and Sandholm 2024) below, whose averaging
  schedule pays off late. To 1e-5, turn-based goofspiel(4, imp_info, descending):
  pdcfr+ 99, hs-pcfr+ 141, dcfr 6,475; python_ii_goofspiel(5): pdcfr+ 678, hs-pcfr+
  338, dcfr 16,401; to 1e-7 hs-pcfr+ 200 and 402 against pdcfr+ 200 and 1,359.
"""

import numpy as np
import pyspiel

# Below this target the predictive family's scheduled variant is chosen.
SCHEDULE_BELOW = 1e-6
_CHANCE = int(pyspiel.PlayerId.CHANCE)
# Every solver `choose` may return (registry strings).
CHOICES = ("dcfr", "pdcfr+", "hs-pcfr+")


def has_chance(tree):
  """True if the compiled tree has a chance node with more than one outcome."""
  return bool(np.any((tree.node_player == _CHANCE) & (tree.node_num_children > 1)))


def choose(tree, epsilon):
  """(registry string of the solver the rule picks for `tree` and target exploitability
  `epsilon` > 0, the reason in a few words)."""
  if not epsilon > 0:
    raise ValueError(f"The target exploitability must be > 0, got {epsilon!r}.")
  if has_chance(tree):
    return "dcfr", "chance nodes: discounted CFR"
  if epsilon < SCHEDULE_BELOW:
    return "hs-pcfr+", f"no chance, target below {SCHEDULE_BELOW:g}: scheduled PCFR+"
  return "pdcfr+", "no chance: predictive discounted CFR+"
