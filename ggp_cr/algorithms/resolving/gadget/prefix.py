"""The resolving gadget's numbers, written once ([S] §1.4.2, ch. 2, §6; [H] §G-I).

Per subgame root: the gadget's chance probability, o's payoff scale and shift, o's gate
and the resolve gadget's Terminate value, for the resolve, max-margin and unsafe gadgets,
and the Terminate values' cfrplayground scaling; every gadget (pyspiel, views, kernels)
takes its numbers from here.
"""

import dataclasses

import numba
import numpy as np

from ggp_cr.algorithms.tree import flat_tree


def opponent_payoff(u_o, scale, shift):
  """o's gadget payoff at a subgame terminal of o's utility u_o in the original game,
  below a root of o's payoff `scale` and `shift` (`Prefix`)."""
  return scale * u_o - shift


_opponent_payoff = numba.njit(cache=True, inline="always")(opponent_payoff)


@numba.njit(cache=True)
def gadget_payoff(u, j, opponent, utility_sum, scale, shift):
  """Player 0's payoff in a gadget view (compiled views) at a terminal below root j
  of player 0's utility u in the whole game (`opponent_payoff`)."""
  u_o = u if opponent == 0 else utility_sum - u
  value = _opponent_payoff(u_o, scale[j], shift[j])
  return value if opponent == 0 else -value


def original_values(values, scale, shift):
  """o's values in the original game's units from o's gadget values below roots of
  `scale` and `shift` (the inverse of `opponent_payoff`; numbers or arrays)."""
  return (values + shift) / scale


def infoset_payoffs(variant, k, cbv, total):
  """o's payoff scale and shift per root information set I: max_margin k_I and
  CBV(I) (o's margin over its value); resolve and unsafe the gadget's chance
  normaliser `total` (resolve: K = Σ w; unsafe: Σ w·π_o) and 0."""
  if variant == "max_margin":
    return np.asarray(k, np.float64), np.asarray(cbv, np.float64)
  return np.full(len(k), float(total)), np.zeros(len(k))


@dataclasses.dataclass(frozen=True)
class Prefix:
  """The gadget's prefix above the subgame's roots (`plan`).

  active: the roots in the gadget (positive gadget probability), in its order;
  root_chance: the gadget's chance probability of each active root; scale, shift:
  o's payoff scale_j·u_o − shift_j below active root j; gate: o's gate of each active
  root (resolve: its Follow/Terminate infoset, numbered in order of first active
  root; max_margin: o's choice of root infoset; unsafe: -1); gate_infoset: the root
  infoset of each gate; terminate_value: o's Terminate payoff per gate (resolve,
  K·CBV(I)/k_I); choice_counts: the active roots of each choice (max_margin);
  total: the chance normaliser (resolve: K = Σ w; unsafe: Σ w·π_o; max_margin: K).
  """
  active: np.ndarray
  root_chance: np.ndarray
  scale: np.ndarray
  shift: np.ndarray
  gate: np.ndarray
  gate_infoset: np.ndarray
  terminate_value: np.ndarray
  choice_counts: np.ndarray
  total: float


def plan(variant, w, root_infoset, k, cbv, first, opponent_reach=None):
  """The `Prefix` of a gadget of `variant` ("resolve", "max_margin", "unsafe") over
  roots of w(h) = π_{-o}(h) and o's root infoset ids `root_infoset`, with k_I =
  Σ_{h∈I} w(h), CBV(I) and the first root of each infoset, and π_o(h) per root
  (unsafe). Raises ValueError when the unsafe gadget's joint reach is zero."""
  w = np.asarray(w, np.float64)
  root_infoset = np.asarray(root_infoset, np.int64)
  k = np.asarray(k, np.float64)
  cbv = np.asarray(cbv, np.float64)
  total = float(w.sum())
  if variant == "unsafe":
    weights = w * np.asarray(opponent_reach, np.float64)
    total = float(weights.sum())
  else:
    weights = w
  infoset_scale, infoset_shift = infoset_payoffs(variant, k, cbv, total)
  empty = np.zeros(0, np.int64)
  terminate_value = np.zeros(0)
  choice_counts = empty
  if variant == "max_margin":
    # Root infosets in order of first root (gadget_game.Subgame.infosets).
    order = np.argsort(np.asarray(first), kind="stable")
    gate_infoset = order[k[order] > 0]
    per_choice = [np.flatnonzero((root_infoset == c) & (w > 0))
                  for c in gate_infoset.tolist()]
    active = np.concatenate(per_choice)
    choice_counts = np.array([len(r) for r in per_choice], dtype=np.int64)
    root_chance = w[active] / k[root_infoset[active]]
    gate = np.repeat(np.arange(len(gate_infoset)), choice_counts)
  else:
    active = np.flatnonzero(weights > 0)
    if not total > 0:
      raise ValueError("The subgame has zero joint reach; the unsafe gadget needs a "
                       "subgame both players reach.")
    root_chance = weights[active] / total
    if variant == "resolve":
      gate, gate_infoset = flat_tree.first_occurrence_ids(root_infoset[active], len(k))
      terminate_value = opponent_payoff(cbv[gate_infoset] / k[gate_infoset],
                                        infoset_scale[gate_infoset], 0.0)
    else:
      gate, gate_infoset = np.full(len(active), -1, dtype=np.int64), empty
  return Prefix(active=active, root_chance=root_chance,
                scale=infoset_scale[root_infoset[active]],
                shift=infoset_shift[root_infoset[active]], gate=gate,
                gate_infoset=gate_infoset, terminate_value=terminate_value,
                choice_counts=choice_counts, total=total)


def payoff_map(scale, shift):
  """o's payoff below root j as gain_j·u_o + offset_j (compiled_outcome_sampling's
  `root_gain`, `root_offset`): the map of `gadget_payoff`."""
  return scale, -shift


def scaled_values(config, opponent_values, root_mass, parent_root_mass):
  """(the next gadget's opponent values {key: CBV} scaled by `terminate_scale`, what a
  decision records of it: {"terminate_scale": factor} unless CFR-D's values, or no
  `config`, leave them as they are)."""
  if config is None:
    return opponent_values, {}
  scale = terminate_scale(config, root_mass, parent_root_mass)
  record = {} if config.terminate_values == "cfrd" else {"terminate_scale": scale}
  return scale_values(opponent_values, scale), record


def terminate_scale(config, root_mass, parent_root_mass):
  """The factor the next resolve gadget's opponent values (and so its Terminate
  payoffs) are multiplied by, for a resolver whose subgame's roots have total reach
  `root_mass` (Σ w(r), chance × the bot's reach; the whole game: 1) and whose
  parent's had `parent_root_mass` (the whole game's parent: 1).

  "cfrd": 1, CFR-D's gadget ([S] §1.4.2). "cfrplayground": root_mass /
  parent_root_mass, as the thesis's own continual resolving computes them
  (CFRPlayground, ContinualResolvingPlayer and ExternalCFRResolver): it scales each
  gadget's payoffs by the norm N of its range and stores the next roots' reach with
  the gadget's chance probability R/N in it but their counterfactual values without,
  so from the second resolve on the Terminate payoffs are N_prev times CFR-D's,
  N_prev = root_mass / parent_root_mass the norm of the range of the solve that
  estimated them (1 for the whole game's solve).
  """
  if config.terminate_values == "cfrd":
    return 1.0
  return float(root_mass) / float(parent_root_mass)


def scale_values(opponent_values, factor):
  """{opponent key: CBV} times `factor` (terminate_scale)."""
  if factor == 1.0:
    return opponent_values
  return {key: value * factor for key, value in opponent_values.items()}
