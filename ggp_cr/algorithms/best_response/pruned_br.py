"""Pruned exact and error-bounded approximate best response (BRS) on the compiled tree.

[B] ch. 4: a depth-first search with lower bounds λ (Figs 4.1, 4.2), and the
error-bounded approximation with additive ε or relative η ([B] §4.3, Lemma 4.1); the
returned value is the exact value of the returned policy. The search in full:
docs/algorithms/best_response.md.
"""

import dataclasses
import math

import numba
import numpy as np

from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.best_response import policy_validation
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import flat_tree

_TERMINAL = -4
_CHANCE = -1
_EXACT, _ADDITIVE, _RELATIVE = 0, 1, 2

# Indices into the statistics counter array.
_VISITED, _CALLS, _CACHE_HITS, _CUTOFFS_OTHERS, _CUTOFFS_RESPONDER, _ABORTED, _SOLVED = (
    range(7))


@dataclasses.dataclass
class BestResponseResult:
  """What `pruned_best_response` returns.

  `value`: the responder's value of `policy` (best response or approximation) against
  the fixed policy. `policy`: an open_spiel TabularPolicy playing the responder's
  (pure) response at the responder's information states and the fixed policy at the
  opponent's, as `exact_br.best_response` returns; `response_slots` is the same
  profile in slot form. `error_bound`: the guaranteed bound on exact - value (0 for
  the exact search). `exact_value` and `error` (= exact_value - value) are filled when
  measure_error=True. Statistics: `histories_visited` distinct histories the search
  evaluated out of `histories_total` (`histories_unvisited` the rest, [B] §6.2.2's
  "pruned"; zero-reach histories are never evaluated), `histories_visited_thesis` the
  count [B]'s Figure 4.2 would give (it also evaluates the zero-reach histories of an
  information set and their child under the chosen action), `cutoffs_chance_opponent`
  (Fig. 4.1 returns of -∞ at their origin), `cutoffs_responder` (actions cut at a responder information set),
  `aborted_infosets` (information-set evaluations abandoned below λ), `solved_infosets`,
  `calls` (value requests) and `cache_hits` (requests answered from the cache).
  """
  value: float
  policy: object
  response_slots: np.ndarray
  player: int
  epsilon: float
  eta: float
  start_depth: int
  error_bound: float
  exact_value: float = None
  error: float = None
  histories_visited: int = 0
  histories_visited_thesis: int = 0
  histories_total: int = 0
  cutoffs_chance_opponent: int = 0
  cutoffs_responder: int = 0
  aborted_infosets: int = 0
  solved_infosets: int = 0
  calls: int = 0
  cache_hits: int = 0

  @property
  def histories_unvisited(self):
    return self.histories_total - self.histories_visited


def infoset_histories(tree):
  """(start, histories): infoset I's histories are histories[start[I]:start[I + 1]].

  Built once per tree (a stable sort of the decision nodes by information set), so
  within an information set the histories are in breadth-first order.
  """
  return flat_tree.per_tree("infoset_histories", tree, _infoset_histories)


def _infoset_histories(tree):
  """infoset_histories, built."""
  decision = np.flatnonzero(tree.node_infoset >= 0)
  order = np.argsort(tree.node_infoset[decision], kind="stable")
  histories = decision[order].astype(np.int32)
  counts = np.bincount(tree.node_infoset[decision], minlength=tree.num_infosets)
  start = np.zeros(tree.num_infosets + 1, dtype=np.int64)
  np.cumsum(counts, out=start[1:])
  return start, histories


def utility_bounds(tree, player):
  """The smallest and largest terminal utility of `player` in `tree`."""
  terminal = tree.node_utility[tree.node_player == _TERMINAL]
  if player == 1:
    terminal = tree.utility_sum - terminal
  return float(terminal.min()), float(terminal.max())


@numba.njit(cache=True)
def _approximated_infosets(responder, start_depth, infoset_player, infoset_node,
                           infoset_parent_slot, slot_infoset, node_depth):
  """Marks the topmost responder infosets (sequence tree) whose shallowest history is
  at depth >= start_depth: one per root-to-leaf path at most."""
  num_infosets = len(infoset_player)
  approximated = np.zeros(num_infosets, dtype=np.bool_)
  covered = np.zeros(num_infosets, dtype=np.bool_)
  for infoset in range(num_infosets):  # parents come first
    if infoset_player[infoset] != responder:
      continue
    parent_slot = infoset_parent_slot[infoset]
    above = False if parent_slot < 0 else covered[slot_infoset[parent_slot]]
    if not above and node_depth[infoset_node[infoset]] >= start_depth:
      approximated[infoset] = True
    covered[infoset] = above or approximated[infoset]
  return approximated


# The search's arrays, packed so that a recursive call passes few of them (numba's
# call cost grows with the number of array arguments):
# node_ints[row, node], int32
_PLAYER, _INFOSET, _PARENT, _FIRST_CHILD, _NUM_CHILDREN, _ACTION_INDEX, _SEEN = range(7)
# node_reals[row, node]: chance probability, responder's utility, cached value (NaN:
# unknown), π_{-i} (-1: not computed yet)
_CHANCE_PROB, _UTILITY, _CACHED, _REACH = range(4)
# infoset_ints[row, infoset]; _START has one more entry (infoset_nodes index)
_ACTION_OFFSET, _NUM_ACTIONS, _APPROXIMATED, _BEST_INDEX, _START = range(5)
# integers[:_SCRATCH]: the statistics counters and the tops of the scratch stacks;
# integers[_SCRATCH:] and floats[:] are the scratch stacks.
_FLOAT_TOP, _INTEGER_TOP = 7, 8
_SCRATCH = 9


@numba.njit(cache=True)
def _reach_of(node, node_ints, node_reals, infoset_ints, slots, integers, responder):
  """π_{-responder}(node), computed on demand along the path from the nearest known
  ancestor and remembered. The path is kept on top of the integer stack."""
  path = integers[_INTEGER_TOP]
  length = 0
  current = node
  while node_reals[_REACH, current] < 0.0:
    integers[path + length] = current
    length += 1
    current = node_ints[_PARENT, current]
  value = node_reals[_REACH, current]
  for k in range(length - 1, -1, -1):
    child = integers[path + k]
    parent = node_ints[_PARENT, child]
    player = node_ints[_PLAYER, parent]
    if player == _CHANCE:
      value *= node_reals[_CHANCE_PROB, child]
    elif player != responder:
      value *= slots[infoset_ints[_ACTION_OFFSET, node_ints[_INFOSET, parent]] +
                     node_ints[_ACTION_INDEX, child]]
    node_reals[_REACH, child] = value
  return value


@numba.njit(cache=True)
def _threshold(leader_lower, total_weight, approximated, mode, epsilon, eta,
               min_utility):
  """T(L): an action is cut when its upper bound falls below this."""
  if not approximated or mode == _EXACT:
    return leader_lower
  if mode == _ADDITIVE:
    return leader_lower + epsilon * total_weight
  if eta >= 1.0:
    return math.inf
  floor = total_weight * min_utility
  return floor + (leader_lower - floor) / (1.0 - eta)


@numba.njit(cache=True)
def _sort_descending(keys, key_base, order, order_base, count):
  """order[order_base:+count] = 0..count-1 sorted by keys[key_base + k], descending,
  stable (insertion sort: the lists are short)."""
  for k in range(count):
    key = keys[key_base + k]
    m = k
    while m > 0 and keys[key_base + order[order_base + m - 1]] < key:
      order[order_base + m] = order[order_base + m - 1]
      m -= 1
    order[order_base + m] = k


@numba.njit(cache=True)
def _value(node, lower_bound, node_ints, node_reals, infoset_ints, infoset_nodes,
           slots, integers, floats, params):
  """BRS_i(h, λ) of [B] Figures 4.1 and 4.2: the reach-weighted value of `node` for
  the responder, or -inf if it is proven to be below `lower_bound`.

  Per-call arrays live on the two scratch stacks; every return restores the tops of
  the call's entry.
  """
  responder, min_utility, max_utility, mode, epsilon, eta = params
  cached = node_reals[_CACHED, node]
  if not math.isnan(cached):
    integers[_CACHE_HITS] += 1
    return cached
  integers[_CALLS] += 1
  player = node_ints[_PLAYER, node]

  if player != responder:
    if node_ints[_SEEN, node] == 0:
      node_ints[_SEEN, node] = 1
      integers[_VISITED] += 1
    weight = node_reals[_REACH, node]
    if player == _TERMINAL:
      return node_reals[_UTILITY, node] * weight
    # Figure 4.1: chance and opponent nodes, children by decreasing reach.
    first = node_ints[_FIRST_CHILD, node]
    num_children = node_ints[_NUM_CHILDREN, node]
    float_base = integers[_FLOAT_TOP]
    integer_base = integers[_INTEGER_TOP]
    integers[_FLOAT_TOP] += num_children
    integers[_INTEGER_TOP] += num_children
    remaining = 0.0
    for k in range(num_children):
      if player == _CHANCE:
        probability = node_reals[_CHANCE_PROB, first + k]
      else:
        probability = slots[infoset_ints[_ACTION_OFFSET, node_ints[_INFOSET, node]] + k]
      child_weight = weight * probability
      floats[float_base + k] = child_weight
      node_reals[_REACH, first + k] = child_weight
      remaining += child_weight
    _sort_descending(floats, float_base, integers, integer_base, num_children)
    value = 0.0
    for position in range(num_children):
      k = integers[integer_base + position]
      child_weight = floats[float_base + k]
      if child_weight <= 0.0:
        break
      child_bound = lower_bound - (value + (remaining - child_weight) * max_utility)
      if child_bound > child_weight * max_utility:
        integers[_CUTOFFS_OTHERS] += 1
        value = -math.inf
        break
      child_value = _value(first + k, child_bound, node_ints, node_reals, infoset_ints,
                           infoset_nodes, slots, integers, floats, params)
      if child_value == -math.inf:
        value = -math.inf
        break
      value += child_value
      remaining -= child_weight
    integers[_FLOAT_TOP] = float_base
    integers[_INTEGER_TOP] = integer_base
    if value > -math.inf:
      node_reals[_CACHED, node] = value
    return value

  # Figure 4.2: the responder's information set, histories by decreasing reach.
  infoset = node_ints[_INFOSET, node]
  start = infoset_ints[_START, infoset]
  size = infoset_ints[_START, infoset + 1] - start
  num_actions = infoset_ints[_NUM_ACTIONS, infoset]
  float_base = integers[_FLOAT_TOP]
  integer_base = integers[_INTEGER_TOP]
  weights = float_base                   # size floats
  totals = weights + size                # num_actions floats
  history_values = totals + num_actions  # (histories with reach > 0) x num_actions
  order = integer_base                   # size integers
  alive = order + size                   # num_actions integers (1 = not cut)
  integers[_INTEGER_TOP] = alive + num_actions
  for k in range(size):
    floats[weights + k] = _reach_of(infoset_nodes[start + k], node_ints, node_reals,
                                    infoset_ints, slots, integers, responder)
  _sort_descending(floats, weights, integers, order, size)
  num_positive = 0
  total_weight = 0.0
  for position in range(size):
    weight = floats[weights + integers[order + position]]
    if weight <= 0.0:
      break
    num_positive += 1
    total_weight += weight
  for action in range(num_actions):
    floats[totals + action] = 0.0
    integers[alive + action] = 1
  integers[_FLOAT_TOP] = history_values + num_positive * num_actions
  is_approximated = infoset_ints[_APPROXIMATED, infoset] == 1
  remaining = total_weight
  leader = -1
  aborted = False
  for j in range(num_positive):
    history = infoset_nodes[start + integers[order + j]]
    history_weight = floats[weights + integers[order + j]]
    row = history_values + j * num_actions
    rest = remaining - history_weight
    if node_ints[_SEEN, history] == 0:
      node_ints[_SEEN, history] = 1
      integers[_VISITED] += 1
    first = node_ints[_FIRST_CHILD, history]
    first_action = leader
    for step in range(-1, num_actions):
      # The leader first, then the others in action order.
      if step < 0:
        if first_action < 0:
          continue
        action = first_action
      else:
        action = step
        if action == first_action or integers[alive + action] == 0:
          continue
      child_bound = -math.inf
      if leader >= 0 and action != leader:
        threshold = _threshold(floats[totals + leader] + rest * min_utility,
                               total_weight, is_approximated, mode, epsilon, eta,
                               min_utility)
        child_bound = threshold - (floats[totals + action] + rest * max_utility)
        if child_bound > history_weight * max_utility:
          integers[alive + action] = 0
          integers[_CUTOFFS_RESPONDER] += 1
          continue
      node_reals[_REACH, first + action] = history_weight
      child_value = _value(first + action, child_bound, node_ints, node_reals,
                           infoset_ints, infoset_nodes, slots, integers, floats, params)
      if child_value == -math.inf:
        integers[alive + action] = 0
        integers[_CUTOFFS_RESPONDER] += 1
        continue
      floats[row + action] = child_value
      floats[totals + action] += child_value
      if leader < 0 or floats[totals + action] > floats[totals + leader]:
        leader = action
    remaining = rest
    if history == node and lower_bound > -math.inf:
      best_here = -math.inf
      for action in range(num_actions):
        if integers[alive + action] == 1 and floats[row + action] > best_here:
          best_here = floats[row + action]
      if best_here < lower_bound:
        integers[_ABORTED] += 1
        aborted = True
        break
  value = -math.inf
  if not aborted:
    chosen = max(leader, 0)
    infoset_ints[_BEST_INDEX, infoset] = chosen
    for j in range(num_positive):
      node_reals[_CACHED, infoset_nodes[start + integers[order + j]]] = floats[
          history_values + j * num_actions + chosen]
    for j in range(num_positive, size):
      node_reals[_CACHED, infoset_nodes[start + integers[order + j]]] = 0.0
    integers[_SOLVED] += 1
    value = node_reals[_CACHED, node]
  integers[_FLOAT_TOP] = float_base
  integers[_INTEGER_TOP] = integer_base
  return value


@numba.njit(cache=True)
def _thesis_visited_count(node_ints, node_reals, infoset_ints, infoset_player,
                          responder, infoset_nodes):
  """Distinct histories [B]'s Figure 4.2 evaluates: the visited ones plus, for every
  solved responder information set, its zero-reach histories and their child under
  the chosen action (the thesis's loop over H' does not skip zero reach; a zero-reach
  chance/opponent child returns 0 at once, Fig. 4.1 skipping w_a = 0)."""
  marked = node_ints[_SEEN].copy()
  count = 0
  for node in range(len(marked)):
    count += marked[node]
  for infoset in range(len(infoset_player)):
    chosen = infoset_ints[_BEST_INDEX, infoset]
    if infoset_player[infoset] != responder or chosen < 0:
      continue
    for k in range(infoset_ints[_START, infoset], infoset_ints[_START, infoset + 1]):
      history = infoset_nodes[k]
      if node_reals[_REACH, history] != 0.0:
        continue
      child = node_ints[_FIRST_CHILD, history] + chosen
      for touched in range(2):
        touched_node = history if touched == 0 else child
        if marked[touched_node] == 0:
          marked[touched_node] = 1
          count += 1
  return count


def _scratch_sizes(tree, infoset_start, infoset_nodes):
  """Sizes of the float and integer scratch stacks: one frame per pending call, each
  at most what the largest chance/opponent node or responder information set needs.

  A call's child is one depth deeper than the call's history or, at a responder
  information set, than another history of the set. If every information set lies at
  one depth, pending calls therefore have distinct depths (max_depth + 1 frames);
  otherwise each of at most max_depth responder calls may restart higher up.
  """
  largest_infoset = int(np.diff(infoset_start).max(initial=0))
  most_actions = int(tree.infoset_num_actions.max(initial=0))
  most_children = int(tree.node_num_children.max(initial=0))
  depths = tree.node_depth[infoset_nodes]
  first_depth = tree.node_depth[tree.infoset_node][tree.node_infoset[infoset_nodes]]
  frames = tree.max_depth + 1
  if np.any(depths != first_depth):
    frames *= tree.max_depth + 1
  floats = max(most_children, largest_infoset * (most_actions + 1) + most_actions)
  integers = max(most_children, largest_infoset + most_actions)
  # The integer stack also holds, on top, the path of one reach computation.
  return frames * floats, frames * integers + tree.max_depth + 1


def _check_parameters(tree, epsilon, eta, start_depth):
  if epsilon is not None and eta is not None:
    raise ValueError("Give epsilon (additive) or eta (relative), not both.")
  if epsilon is not None and not (isinstance(epsilon, (int, float)) and
                                  math.isfinite(epsilon) and epsilon >= 0):
    raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon!r}.")
  if eta is not None and not (isinstance(eta, (int, float)) and 0 <= eta <= 1):
    raise ValueError(f"eta must be in [0, 1], got {eta!r}.")
  if (isinstance(start_depth, bool) or not isinstance(start_depth, (int, np.integer))
      or start_depth < 0):
    raise ValueError(f"start_depth must be an integer >= 0, got {start_depth!r}.")


def pruned_best_response_slots(tree, slots, player, epsilon=None, eta=None,
                               start_depth=0):
  """`pruned_best_response` on a compiled tree and a checked profile in slot form.

  Returns (value, response_slots, error_bound, statistics dict); the statistics are
  the BestResponseResult fields of the same names.
  """
  _check_parameters(tree, epsilon, eta, start_depth)
  mode = _EXACT if epsilon is None and eta is None else (
      _ADDITIVE if epsilon is not None else _RELATIVE)
  min_utility, max_utility = utility_bounds(tree, player)
  infoset_start, infoset_nodes = infoset_histories(tree)
  node_ints = np.stack([tree.node_player, tree.node_infoset, tree.node_parent,
                        tree.node_first_child, tree.node_num_children,
                        tree.node_action_index,
                        np.zeros(tree.num_nodes, dtype=np.int32)]).astype(np.int32)
  utility = tree.node_utility if player == 0 else tree.utility_sum - tree.node_utility
  node_reals = np.stack([tree.node_chance_prob, utility,
                         np.full(tree.num_nodes, np.nan), np.full(tree.num_nodes, -1.0)])
  node_reals[_REACH, 0] = 1.0
  infoset_ints = np.zeros((5, tree.num_infosets + 1), dtype=np.int64)
  infoset_ints[_ACTION_OFFSET, :-1] = tree.infoset_action_offset
  infoset_ints[_NUM_ACTIONS, :-1] = tree.infoset_num_actions
  infoset_ints[_APPROXIMATED, :-1] = _approximated_infosets(
      player, start_depth, tree.infoset_player, tree.infoset_node,
      tree.infoset_parent_slot, tree.slot_infoset, tree.node_depth)
  infoset_ints[_BEST_INDEX] = -1
  infoset_ints[_START] = infoset_start
  float_size, integer_size = _scratch_sizes(tree, infoset_start, infoset_nodes)
  integers = np.zeros(_SCRATCH + integer_size, dtype=np.int64)
  integers[_INTEGER_TOP] = _SCRATCH
  floats = np.empty(float_size)
  params = (np.int64(player), min_utility, max_utility, np.int64(mode),
            float(epsilon or 0.0), float(eta or 0.0))
  value = float(_value(0, -math.inf, node_ints, node_reals, infoset_ints, infoset_nodes,
                       slots, integers, floats, params))
  best_index = infoset_ints[_BEST_INDEX, :-1]

  response = np.array(slots, dtype=np.float64)
  own = np.flatnonzero(tree.infoset_player == player)
  response[np.isin(tree.slot_infoset, own)] = 0.0
  response[tree.infoset_action_offset[own] + np.maximum(best_index[own], 0)] = 1.0
  if mode == _EXACT:
    error_bound = 0.0
  elif mode == _ADDITIVE:
    error_bound = float(epsilon)
  else:
    # value - Min >= (1 - eta)(exact - Min), and exact <= Max.
    highest = max_utility if eta >= 1 else min(
        max_utility, min_utility + (value - min_utility) / (1.0 - eta))
    error_bound = max(highest - value, 0.0)
  statistics = dict(
      histories_visited=int(integers[_VISITED]),
      histories_visited_thesis=int(_thesis_visited_count(
          node_ints, node_reals, infoset_ints, tree.infoset_player, player,
          infoset_nodes)),
      histories_total=tree.num_nodes,
      cutoffs_chance_opponent=int(integers[_CUTOFFS_OTHERS]),
      cutoffs_responder=int(integers[_CUTOFFS_RESPONDER]),
      aborted_infosets=int(integers[_ABORTED]), solved_infosets=int(integers[_SOLVED]),
      calls=int(integers[_CALLS]), cache_hits=int(integers[_CACHE_HITS]))
  return value, response, error_bound, statistics


def pruned_best_response(game, policy, player, epsilon=None, eta=None, start_depth=0,
                         measure_error=False):
  """Best response of `player` to `policy` by BRS with pruning ([B] ch. 4).

  `game`: a pyspiel game or game string (compiled once per process). `policy`: an
  open_spiel policy.Policy (only the opponent's information states are read) or a
  profile in slot form. Exact by default; with `epsilon` (additive, >= 0) or `eta`
  (relative, in [0, 1], [B] Lemma 4.1) the first responder information set at depth
  >= `start_depth` on each path may choose a worse action within the bound (see the
  module docstring). Returns a BestResponseResult; `measure_error` adds the exact
  value and the true error.
  """
  player = policy_validation.check_player(player)
  tree = compiled_tree.cached_tree(game)
  slots = policy_validation.opponent_slots(tree, policy, player)
  value, response, error_bound, statistics = pruned_best_response_slots(
      tree, slots, player, epsilon, eta, start_depth)
  result = BestResponseResult(
      value=value, policy=tree.slots_to_tabular_policy(response),
      response_slots=response, player=player, epsilon=epsilon, eta=eta,
      start_depth=start_depth, error_bound=error_bound, **statistics)
  if measure_error:
    result.exact_value = float(exact_br.best_response_values(tree, slots)[player])
    result.error = result.exact_value - value
  return result
