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
* a game without chance of at least LARGE_FROM nodes: ``pcfr+`` (Farina, Kroer and
  Sandholm 2021, t^2 averaging), measured to 1e-5 only. Node count is the property
  that splits the games below best, not cleanly: python_princess_monster(5) is one
  miss (pdcfr+ 16% more iterations than pcfr+), and on python_princess_monster(7)
  dcfr needs 36% fewer than pcfr+; depth splits them worse;
* a smaller game without chance: ``pdcfr+`` (Xu et al. 2024) down to 1e-6 and
  ``hs-pcfr+`` (Zhang, McAleer and Sandholm 2024) below, whose averaging schedule
  pays off late (to 1e-7, python_ii_goofspiel(4) and (5): hs-pcfr+ 200 and 402,
  pdcfr+ 200 and 1,359).

Iterations to 1e-5 without chance (goofspiel: imp_info, points descending; evaluated
every 5% of iterations, every 9% on goofspiel(6) and python_ii_goofspiel(6), where
pdcfr+, pcfr+(gamma=1) and dcfr every 19%, docs/benchmarks.md row 11; -: not measured):

  game (nodes)                       pdcfr+  hs-pcfr+  pcfr+  pcfr+(gamma=1)  dcfr
  goofspiel(4), turn-based (1,077)       92       114    223             900  2,925
  python_princess_monster(4) (2,043)    408       523    993           5,010  764,098
  python_ii_goofspiel(4) (2,229)        108       163    302           1,151    273
  python_princess_monster(5) (11,283) 33,645   54,810  29,062         26,360  204,656
  goofspiel(5), turn-based (26,931)     945       857  1,706           4,326  37,095
  python_ii_goofspiel(5) (55,731)       638       318  1,546           4,771  14,674
  python_princess_monster(6) (72,531) 16,988   18,730  11,496         21,684  29,062
  python_princess_monster(7) (399,971) 32,042   80,984  26,360         40,898  16,988
  goofspiel(6), turn-based (969,523)  5,793    10,629  5,312           8,195      -
  python_ii_goofspiel(6) (2,006,323) 25,909  >21,490  10,629          12,953  >16,708
"""

import numpy as np
import pyspiel

# Below this target the predictive family's scheduled variant is chosen.
SCHEDULE_BELOW = 1e-6
# From this many nodes a game without chance gets pcfr+: the geometric middle of the
# largest game measured where pdcfr+ needed fewer iterations to 1e-5 (55,731 nodes)
# and the smallest above it where pcfr+ did (72,531).
LARGE_FROM = 64_000
_CHANCE = int(pyspiel.PlayerId.CHANCE)
# Every solver `choose` may return (registry strings).
CHOICES = ("dcfr", "pcfr+", "pdcfr+", "hs-pcfr+")


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
  if tree.num_nodes >= LARGE_FROM:
    return "pcfr+", f"no chance, {tree.num_nodes:,} nodes >= {LARGE_FROM:,}: PCFR+"
  if epsilon < SCHEDULE_BELOW:
    return "hs-pcfr+", f"no chance, target below {SCHEDULE_BELOW:g}: scheduled PCFR+"
  return "pdcfr+", "no chance: predictive discounted CFR+"
