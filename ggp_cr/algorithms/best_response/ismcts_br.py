"""ISMCTS-BR: an approximate best response by information-set Monte Carlo tree search.

[B] ch. 5, §6.1.2 (after Timbers et al. 2022): at each responder information set a
UCB1 search whose simulations sample histories from the exact belief; the policy's
value is then computed exactly. Details: docs/algorithms/best_response.md.
"""

import dataclasses
import math

import numba
import numpy as np

from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.best_response import policy_validation
from ggp_cr.algorithms.best_response import pruned_br
from ggp_cr.algorithms.tree import compiled_tree

_TERMINAL = -4
_CHANCE = -1


@dataclasses.dataclass
class IsmctsBestResponseResult:
  """What `ismcts_best_response` returns.

  `policy`: an open_spiel TabularPolicy playing the searched (pure) response at the
  responder's information states and the fixed policy at the opponent's;
  `response_slots`: the same in slot form. `value`: the response's exact value against
  the fixed policy; `best_response_value`: the exact best-response value; `error` =
  best_response_value - value >= 0. `searches`: information sets searched;
  `simulations`: simulations per search.
  """
  policy: object
  response_slots: np.ndarray
  player: int
  value: float
  best_response_value: float
  error: float
  searches: int
  simulations: int


@numba.njit(cache=True)
def _reach(node_player, node_infoset, node_first_child, node_num_children,
           node_chance_prob, infoset_action_offset, slots, responder):
  """π_{-responder} of every node, top-down over the breadth-first order."""
  reach = np.zeros(len(node_player))
  reach[0] = 1.0
  for node in range(len(node_player)):
    player = node_player[node]
    if player == _TERMINAL:
      continue
    first = node_first_child[node]
    for k in range(node_num_children[node]):
      if player == _CHANCE:
        reach[first + k] = reach[node] * node_chance_prob[first + k]
      elif player == responder:
        reach[first + k] = reach[node]
      else:
        slot = infoset_action_offset[node_infoset[node]] + k
        reach[first + k] = reach[node] * slots[slot]
  return reach


@numba.njit(cache=True)
def _sample_index(weights, start, end, total):
  """Index k in [start, end) drawn with probability weights[k] / total."""
  target = np.random.random() * total
  cumulative = 0.0
  for k in range(start, end):
    cumulative += weights[k]
    if target < cumulative:
      return k
  for k in range(end - 1, start - 1, -1):  # rounding: the last positive weight
    if weights[k] > 0.0:
      return k
  return end - 1


@numba.njit(cache=True)
def _uct_action(infoset, infoset_action_offset, infoset_num_actions, visits,
                return_sums, infoset_visits, uct_c):
  """UCB1 over the infoset's actions; unvisited actions first, ties at random."""
  offset = infoset_action_offset[infoset]
  num_actions = infoset_num_actions[infoset]
  best_score = -math.inf
  best = -1
  ties = 0
  log_visits = math.log(max(infoset_visits[infoset], 1))
  for a in range(num_actions):
    n = visits[offset + a]
    if n == 0:
      score = math.inf
    else:
      score = return_sums[offset + a] / n + uct_c * math.sqrt(log_visits / n)
    if score > best_score:
      best_score = score
      best = a
      ties = 1
    elif score == best_score:
      ties += 1
      if np.random.random() * ties < 1.0:
        best = a
  return best


@numba.njit(cache=True)
def _search_all(node_player, node_infoset, node_first_child, node_num_children,
                node_chance_prob, node_utility, infoset_player, infoset_action_offset,
                infoset_num_actions, infoset_parent_slot, slot_infoset, infoset_start,
                infoset_nodes, slots, reach, responder, utility_sum, min_utility,
                max_utility, max_depth, simulations, uct_c, seed):
  """Runs one search per reached responder infoset; returns (chosen action index per
  infoset, -1 where not searched; number of searches)."""
  np.random.seed(seed)
  num_infosets = len(infoset_player)
  num_slots = len(slots)
  chosen = np.full(num_infosets, -1, dtype=np.int32)
  in_tree = np.full(num_infosets, -1, dtype=np.int64)   # id of the search holding it
  infoset_visits = np.zeros(num_infosets, dtype=np.int64)
  visits = np.zeros(num_slots, dtype=np.int64)
  return_sums = np.zeros(num_slots)
  node_weights = reach[infoset_nodes]
  path_infosets = np.empty(max_depth + 1, dtype=np.int32)
  path_slots = np.empty(max_depth + 1, dtype=np.int32)
  span = max_utility - min_utility
  searches = 0
  for root in range(num_infosets):
    if infoset_player[root] != responder:
      continue
    parent_slot = infoset_parent_slot[root]
    if parent_slot >= 0:
      parent = slot_infoset[parent_slot]
      if chosen[parent] != parent_slot - infoset_action_offset[parent]:
        continue
    start = infoset_start[root]
    end = infoset_start[root + 1]
    belief_total = 0.0
    for k in range(start, end):
      belief_total += node_weights[k]
    if belief_total <= 0.0:
      continue
    search_id = searches
    searches += 1
    for _ in range(simulations):
      node = infoset_nodes[_sample_index(node_weights, start, end, belief_total)]
      depth = 0
      expanding = True
      while node_player[node] != _TERMINAL:
        player = node_player[node]
        first = node_first_child[node]
        if player == _CHANCE:
          node = _sample_index(node_chance_prob, first, first + node_num_children[node],
                               1.0)
        elif player != responder:
          offset = infoset_action_offset[node_infoset[node]]
          slot_end = offset + node_num_children[node]
          total = 0.0
          for slot in range(offset, slot_end):
            total += slots[slot]
          node = first + _sample_index(slots, offset, slot_end, total) - offset
        else:
          infoset = node_infoset[node]
          if in_tree[infoset] != search_id:
            if not expanding:
              node = first + int(np.random.random() * node_num_children[node])
              continue
            in_tree[infoset] = search_id
            infoset_visits[infoset] = 0
            offset = infoset_action_offset[infoset]
            for a in range(infoset_num_actions[infoset]):
              visits[offset + a] = 0
              return_sums[offset + a] = 0.0
            expanding = False
          action = _uct_action(infoset, infoset_action_offset, infoset_num_actions,
                               visits, return_sums, infoset_visits, uct_c)
          path_infosets[depth] = infoset
          path_slots[depth] = infoset_action_offset[infoset] + action
          depth += 1
          node = first + action
      utility = node_utility[node] if responder == 0 else utility_sum - node_utility[node]
      reward = (utility - min_utility) / span if span > 0 else 0.5
      for k in range(depth):
        infoset_visits[path_infosets[k]] += 1
        visits[path_slots[k]] += 1
        return_sums[path_slots[k]] += reward
    offset = infoset_action_offset[root]
    best = 0
    for a in range(1, infoset_num_actions[root]):
      n, m = visits[offset + a], visits[offset + best]
      if n > m or (n == m and n > 0 and
                   return_sums[offset + a] / n > return_sums[offset + best] / m):
        best = a
    chosen[root] = best
  return chosen, searches


def ismcts_best_response(game, policy, player, simulations, seed, uct_c=1.0):
  """ISMCTS-BR of `player` against `policy` ([B] ch. 5; Timbers et al. 2022).

  `game`: a pyspiel game or game string (compiled once per process; any game the
  compiled tree accepts, Python games included). `policy`: an open_spiel
  policy.Policy or a profile in slot form (only the opponent's part is read and
  checked). `simulations` (>= 1) per searched information set; `seed` makes the run
  deterministic; `uct_c` (>= 0) is UCB1's exploration constant for returns in [0, 1].
  Returns an IsmctsBestResponseResult with the response's exact value.
  """
  player = policy_validation.check_player(player)
  if (isinstance(simulations, bool) or not isinstance(simulations, (int, np.integer))
      or simulations < 1):
    raise ValueError(f"simulations must be an integer >= 1, got {simulations!r}.")
  if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not (
      0 <= seed < 2**32):
    raise ValueError(f"seed must be an integer in [0, 2**32), got {seed!r}.")
  if not (isinstance(uct_c, (int, float)) and math.isfinite(uct_c) and uct_c >= 0):
    raise ValueError(f"uct_c must be a finite number >= 0, got {uct_c!r}.")
  tree = compiled_tree.cached_tree(game)
  slots = policy_validation.opponent_slots(tree, policy, player)
  return _search(tree, slots, player, int(simulations), int(seed), float(uct_c))


def _search(tree, slots, player, simulations, seed, uct_c):
  reach = _reach(tree.node_player, tree.node_infoset, tree.node_first_child,
                 tree.node_num_children, tree.node_chance_prob,
                 tree.infoset_action_offset, slots, player)
  infoset_start, infoset_nodes = pruned_br.infoset_histories(tree)
  min_utility, max_utility = pruned_br.utility_bounds(tree, player)
  chosen, searches = _search_all(
      tree.node_player, tree.node_infoset, tree.node_first_child,
      tree.node_num_children, tree.node_chance_prob, tree.node_utility,
      tree.infoset_player, tree.infoset_action_offset, tree.infoset_num_actions,
      tree.infoset_parent_slot, tree.slot_infoset, infoset_start, infoset_nodes, slots,
      reach, player, tree.utility_sum, min_utility, max_utility, tree.max_depth,
      simulations, uct_c, seed)
  response = np.array(slots, dtype=np.float64)
  own = np.flatnonzero(tree.infoset_player == player)
  response[np.isin(tree.slot_infoset, own)] = 0.0
  response[tree.infoset_action_offset[own] + np.maximum(chosen[own], 0)] = 1.0
  value = float(exact_br.on_policy_values(tree, response)[player])
  best_value = float(exact_br.best_response_values(tree, slots)[player])
  return IsmctsBestResponseResult(
      policy=tree.slots_to_tabular_policy(response), response_slots=response,
      player=player, value=value, best_response_value=best_value,
      error=best_value - value, searches=int(searches), simulations=simulations)
