"""Exact best response, exploitability and NashConv on the compiled tree.

`nash_conv` and `exploitability` (= NashConv / 2) have the signatures and values of
OpenSpiel's `exploitability` module; the counterfactual best response ([S] §1.1) is
computed in two linear passes over the tree. Details: docs/algorithms/best_response.md.
"""

import collections

import numba
import numpy as np

from ggp_cr.algorithms.best_response import policy_validation
from ggp_cr.algorithms.tree import compiled_tree

_TERMINAL = -4
_CHANCE = -1

NashConvReturn = collections.namedtuple("NashConvReturn",
                                        ["nash_conv", "player_improvements"])


@numba.njit(cache=True)
def _terminal_sums(node_player, node_infoset, node_first_child, node_num_children,
                   node_chance_prob, node_utility, infoset_action_offset, slots,
                   utility_sum):
  """Top-down pass: per responder, Σ π_{-p}(z) u_p(z) per last own slot.

  Returns (slot_values[2, num_slots + 1], on-policy value of player 0); index
  num_slots is the root bucket of a responder who has not acted yet.
  """
  num_nodes = len(node_player)
  num_slots = len(slots)
  cf_reach0 = np.empty(num_nodes)   # reach of player 1 and chance (responder 0)
  cf_reach1 = np.empty(num_nodes)   # reach of player 0 and chance (responder 1)
  reach = np.empty(num_nodes)       # reach of everyone
  last0 = np.empty(num_nodes, dtype=np.int32)
  last1 = np.empty(num_nodes, dtype=np.int32)
  cf_reach0[0] = 1.0
  cf_reach1[0] = 1.0
  reach[0] = 1.0
  last0[0] = num_slots
  last1[0] = num_slots
  slot_values = np.zeros((2, num_slots + 1))
  on_policy_value = 0.0
  for node in range(num_nodes):
    player = node_player[node]
    if player == _TERMINAL:
      u0 = node_utility[node]
      slot_values[0, last0[node]] += cf_reach0[node] * u0
      slot_values[1, last1[node]] += cf_reach1[node] * (utility_sum - u0)
      on_policy_value += reach[node] * u0
      continue
    first = node_first_child[node]
    end = first + node_num_children[node]
    if player == _CHANCE:
      for child in range(first, end):
        p = node_chance_prob[child]
        cf_reach0[child] = cf_reach0[node] * p
        cf_reach1[child] = cf_reach1[node] * p
        reach[child] = reach[node] * p
        last0[child] = last0[node]
        last1[child] = last1[node]
    else:
      slot = infoset_action_offset[node_infoset[node]]
      for child in range(first, end):
        p = slots[slot]
        reach[child] = reach[node] * p
        if player == 0:
          cf_reach0[child] = cf_reach0[node]
          cf_reach1[child] = cf_reach1[node] * p
          last0[child] = slot
          last1[child] = last1[node]
        else:
          cf_reach0[child] = cf_reach0[node] * p
          cf_reach1[child] = cf_reach1[node]
          last0[child] = last0[node]
          last1[child] = slot
        slot += 1
  return slot_values, on_policy_value


@numba.njit(cache=True)
def _best_actions(infoset_player, infoset_num_actions, infoset_action_offset,
                  infoset_parent_slot, slot_values):
  """Bottom-up over the sequence trees; returns (best action index per infoset,
  best-response value per player). Modifies slot_values in place."""
  num_infosets = len(infoset_player)
  root = slot_values.shape[1] - 1
  best_index = np.zeros(num_infosets, dtype=np.int32)
  for infoset in range(num_infosets - 1, -1, -1):
    player = infoset_player[infoset]
    offset = infoset_action_offset[infoset]
    best = slot_values[player, offset]
    arg = 0
    for a in range(1, infoset_num_actions[infoset]):
      value = slot_values[player, offset + a]
      if value > best:
        best = value
        arg = a
    best_index[infoset] = arg
    parent = infoset_parent_slot[infoset]
    slot_values[player, root if parent < 0 else parent] += best
  return best_index, slot_values[:, root].copy()


def _solve(tree, slots):
  slots = tree.check_slots(slots)
  slot_values, on_policy_value = _terminal_sums(
      tree.node_player, tree.node_infoset, tree.node_first_child,
      tree.node_num_children, tree.node_chance_prob, tree.node_utility,
      tree.infoset_action_offset, slots, tree.utility_sum)
  best_index, values = _best_actions(
      tree.infoset_player, tree.infoset_num_actions, tree.infoset_action_offset,
      tree.infoset_parent_slot, slot_values)
  on_policy = np.array([on_policy_value, tree.utility_sum - on_policy_value])
  return best_index, values, on_policy


def best_response_values(tree, slots):
  """Each player's best-response value against `slots` (a profile in slot form)."""
  return _solve(tree, slots)[1]


def on_policy_values(tree, slots):
  """Each player's expected utility when both play `slots`."""
  return _solve(tree, slots)[2]


def best_response_slots(tree, slots, player):
  """Player `player`'s best response to `slots`: (value, profile in slot form).

  The returned profile plays the pure best response at `player`'s infosets and
  `slots` at the opponent's, so its value for `player` is the best-response value.
  """
  if player not in (0, 1):
    raise ValueError(f"player must be 0 or 1, got {player}.")
  best_index, values, _ = _solve(tree, slots)
  response = np.array(slots, dtype=np.float64)
  own = np.flatnonzero(tree.infoset_player == player)
  response[np.isin(tree.slot_infoset, own)] = 0.0
  response[tree.infoset_action_offset[own] + best_index[own]] = 1.0
  return values[player], response


def best_response(game, policy, player):
  """Exact best response of `player` to `policy` in `game` (game or game string).

  Returns (value, TabularPolicy): the best-response value, and a TabularPolicy that
  plays the pure best response at `player`'s information states and `policy` at the
  opponent's (like OpenSpiel's BestResponsePolicy).
  """
  player = policy_validation.check_player(player)
  tree = compiled_tree.cached_tree(game)
  value, response = best_response_slots(
      tree, policy_validation.profile_slots(tree, policy), player)
  return value, tree.slots_to_tabular_policy(response)


def nash_conv_slots(tree, slots):
  """NashConvReturn of the profile `slots`: NashConv and each player's improvement."""
  _, values, on_policy = _solve(tree, slots)
  improvements = values - on_policy
  return NashConvReturn(nash_conv=float(improvements.sum()),
                        player_improvements=improvements)


def exploitability_slots(tree, slots):
  """OpenSpiel's exploitability (NashConv / 2) of the profile `slots` on `tree`."""
  values = best_response_values(tree, slots)
  return float((values.sum() - tree.utility_sum) / 2)


def nash_conv(game, policy, return_only_nash_conv=True, use_cpp_br=False):
  """NashConv of `policy` (any policy.Policy) in `game`, like OpenSpiel's nash_conv.

  With return_only_nash_conv=False, returns a NashConvReturn with the per-player
  improvements. `use_cpp_br` exists for signature compatibility and has no effect:
  the best response here is always the exact compiled one.
  """
  del use_cpp_br
  tree = compiled_tree.cached_tree(game)
  result = nash_conv_slots(tree, policy_validation.profile_slots(tree, policy))
  return result.nash_conv if return_only_nash_conv else result


def exploitability(game, policy):
  """Exploitability (NashConv / 2) of `policy` in `game`, like OpenSpiel's."""
  tree = compiled_tree.cached_tree(game)
  return exploitability_slots(tree, policy_validation.profile_slots(tree, policy))
