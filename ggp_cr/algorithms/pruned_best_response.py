"""Pruned exact and error-bounded approximate best response (BRS) on the compiled tree.

[B] ch. 4 (Figures 4.1, 4.2; after Bošanský et al. 2014, §4.2). A depth-first search
returns reach-weighted values: the value of history h is Σ_z π_{-i}(z) u_i(z) over the
terminals z below h that the responder i's best response reaches, where π_{-i} is the
reach of the opponent and chance. A call carries a lower bound λ and returns -∞ once
the value provably cannot reach λ:
- chance and opponent nodes (Fig. 4.1) visit children in decreasing reach; child a gets
  λ' = λ - (v + (w - w_a)·MaxUtility) (v: sum so far, w: unvisited reach incl. a) and
  the node is cut off when λ' > w_a·MaxUtility or the child returns -∞;
- at a responder history (Fig. 4.2) the whole information set is evaluated, its
  histories in decreasing reach (taken from the tree's infoset -> histories index, so
  no game-specific enumeration is needed). Per action the value summed over the
  histories done so far, plus Min/MaxUtility times the remaining reach, bounds the
  action's total from below/above. The leader (the action with the highest lower bound
  L) is evaluated first at each history and never cut; another action a is cut as soon
  as its upper bound falls below L, which it learns through λ'. After a history h the
  search returns -∞ if h was the history the call was made for and no surviving
  action reaches λ there. A completed information set stores the chosen action and the
  value of each of its histories (the value cache per history); every finite value
  returned is exact and cached.

Error-bounded approximation ([B] §4.3, Lemma 4.1): from `start_depth` d on, the first
responder information set I on each root-to-leaf path (the topmost one in the
responder's sequence tree whose shallowest history has depth >= d) cuts more: an action
is cut when its upper bound is below T(L) instead of L, so the chosen action is at most
T(L) - L below the best (the leader's lower bound never decreases, so the slack does
not accumulate). Below I nothing is approximated.
- additive ε: T(L) = L + ε·W_I, W_I = Σ_{h∈I} π_{-i}(h). The loss at I is at most
  ε·W_I; the approximated histories reached by one pure plan are an antichain, so their
  π_{-i} sum to at most 1 and the root value is at least exact - ε.
- relative η ∈ [0, 1] ([B] Lemma 4.1): values shifted by the worst case,
  x = v - W·MinUtility >= 0, and T(L) is chosen so that x(chosen) >= (1 - η)·x(best).
  Sums and maxima preserve the factor, so value - MinUtility >= (1 - η)(exact -
  MinUtility). (The thesis states "η% lower" for the raw values, which only holds for
  non-negative utilities; the shift makes it hold for any utilities.)
In both modes the returned value is the exact value of the returned policy.

MinUtility / MaxUtility are the responder's extreme terminal utilities in the tree
(the game's min_utility / max_utility or tighter).
"""

import dataclasses
import math
import weakref

import numba
import numpy as np

from ggp_cr.algorithms import best_response
from ggp_cr.algorithms import compiled_tree
from ggp_cr.algorithms import policy_validation

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
  opponent's, as `best_response.best_response` returns; `response_slots` is the same
  profile in slot form. `error_bound`: the guaranteed bound on exact - value (0 for
  the exact search). `exact_value` and `error` (= exact_value - value) are filled when
  measure_error=True. Statistics: `histories_visited` distinct histories the search
  evaluated out of `histories_total` (`histories_unvisited` the rest, [B] §6.2.2's
  "pruned"; zero-reach histories are never evaluated), `histories_visited_thesis` the
  count [B]'s Figure 4.2 would give (it also evaluates the zero-reach histories of an
  information set and their child under the chosen action), `cutoffs_chance_opponent` (Fig. 4.1 returns of -∞ at their origin),
  `cutoffs_responder` (actions cut at a responder information set),
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


_infoset_index_cache = weakref.WeakKeyDictionary()


def infoset_histories(tree):
  """(start, histories): infoset I's histories are histories[start[I]:start[I + 1]].

  Built once per tree (a stable sort of the decision nodes by information set), so
  within an information set the histories are in breadth-first order.
  """
  index = _infoset_index_cache.get(tree)
  if index is None:
    decision = np.flatnonzero(tree.node_infoset >= 0)
    order = np.argsort(tree.node_infoset[decision], kind="stable")
    histories = decision[order].astype(np.int32)
    counts = np.bincount(tree.node_infoset[decision], minlength=tree.num_infosets)
    start = np.zeros(tree.num_infosets + 1, dtype=np.int64)
    np.cumsum(counts, out=start[1:])
    index = (start, histories)
    _infoset_index_cache[tree] = index
  return index


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


@numba.njit(cache=True)
def _reach_of(node, tree_arrays, search_arrays, responder):
  """π_{-responder}(node), computed on demand along the path from the nearest known
  ancestor and remembered."""
  (node_player, node_infoset, node_parent, _, _, node_action_index, node_chance_prob,
   _, infoset_action_offset, _, _, _, _, slots) = tree_arrays
  reach, path = search_arrays[1], search_arrays[5]
  length = 0
  current = node
  while reach[current] < 0.0:
    path[length] = current
    length += 1
    current = node_parent[current]
  value = reach[current]
  for k in range(length - 1, -1, -1):
    child = path[k]
    parent = node_parent[child]
    player = node_player[parent]
    if player == _CHANCE:
      value *= node_chance_prob[child]
    elif player != responder:
      value *= slots[infoset_action_offset[node_infoset[parent]] +
                     node_action_index[child]]
    reach[child] = value
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
def _value(node, lower_bound, tree_arrays, search_arrays, params):
  """BRS_i(h, λ) of [B] Figures 4.1 and 4.2: the reach-weighted value of `node` for
  the responder, or -inf if it is proven to be below `lower_bound`."""
  (node_player, node_infoset, _, node_first_child, node_num_children, _,
   node_chance_prob, node_utility, infoset_action_offset, infoset_num_actions,
   infoset_start, infoset_nodes, approximated, slots) = tree_arrays
  value_cache, reach, best_index, visited, stats, _ = search_arrays
  responder, utility_sum, min_utility, max_utility, mode, epsilon, eta = params
  cached = value_cache[node]
  if not math.isnan(cached):
    stats[_CACHE_HITS] += 1
    return cached
  stats[_CALLS] += 1
  player = node_player[node]

  if player != responder:
    if not visited[node]:
      visited[node] = True
      stats[_VISITED] += 1
    weight = reach[node]
    if player == _TERMINAL:
      utility = node_utility[node] if responder == 0 else utility_sum - node_utility[node]
      return utility * weight
    # Figure 4.1: chance and opponent nodes.
    first = node_first_child[node]
    num_children = node_num_children[node]
    child_weights = np.empty(num_children)
    remaining = 0.0
    for k in range(num_children):
      if player == _CHANCE:
        probability = node_chance_prob[first + k]
      else:
        probability = slots[infoset_action_offset[node_infoset[node]] + k]
      child_weights[k] = weight * probability
      reach[first + k] = child_weights[k]
      remaining += child_weights[k]
    order = np.argsort(-child_weights, kind="mergesort")
    value = 0.0
    for k in order:
      child_weight = child_weights[k]
      if child_weight <= 0.0:
        break
      child_bound = lower_bound - (value + (remaining - child_weight) * max_utility)
      if child_bound > child_weight * max_utility:
        stats[_CUTOFFS_OTHERS] += 1
        return -math.inf
      child_value = _value(first + k, child_bound, tree_arrays, search_arrays, params)
      if child_value == -math.inf:
        return -math.inf
      value += child_value
      remaining -= child_weight
    value_cache[node] = value
    return value

  # Figure 4.2: the responder's information set, histories by decreasing reach.
  infoset = node_infoset[node]
  start = infoset_start[infoset]
  size = infoset_start[infoset + 1] - start
  weights = np.empty(size)
  for k in range(size):
    weights[k] = _reach_of(infoset_nodes[start + k], tree_arrays, search_arrays,
                           responder)
  order = np.argsort(-weights, kind="mergesort")
  num_positive = 0
  total_weight = 0.0
  for k in order:
    if weights[k] <= 0.0:
      break
    num_positive += 1
    total_weight += weights[k]
  num_actions = infoset_num_actions[infoset]
  totals = np.zeros(num_actions)
  alive = np.ones(num_actions, dtype=np.bool_)
  history_values = np.empty((num_positive, num_actions))
  is_approximated = approximated[infoset]
  remaining = total_weight
  leader = -1
  for j in range(num_positive):
    history = infoset_nodes[start + order[j]]
    history_weight = weights[order[j]]
    rest = remaining - history_weight
    if not visited[history]:
      visited[history] = True
      stats[_VISITED] += 1
    first = node_first_child[history]
    first_action = leader
    for step in range(-1, num_actions):
      # The leader first, then the others in action order.
      if step < 0:
        if first_action < 0:
          continue
        action = first_action
      else:
        action = step
        if action == first_action or not alive[action]:
          continue
      child_bound = -math.inf
      if leader >= 0 and action != leader:
        threshold = _threshold(totals[leader] + rest * min_utility, total_weight,
                               is_approximated, mode, epsilon, eta, min_utility)
        child_bound = threshold - (totals[action] + rest * max_utility)
        if child_bound > history_weight * max_utility:
          alive[action] = False
          stats[_CUTOFFS_RESPONDER] += 1
          continue
      reach[first + action] = history_weight
      child_value = _value(first + action, child_bound, tree_arrays, search_arrays,
                           params)
      if child_value == -math.inf:
        alive[action] = False
        stats[_CUTOFFS_RESPONDER] += 1
        continue
      history_values[j, action] = child_value
      totals[action] += child_value
      if leader < 0 or totals[action] > totals[leader]:
        leader = action
    remaining = rest
    if history == node and lower_bound > -math.inf:
      best_here = -math.inf
      for action in range(num_actions):
        if alive[action] and history_values[j, action] > best_here:
          best_here = history_values[j, action]
      if best_here < lower_bound:
        stats[_ABORTED] += 1
        return -math.inf
  chosen = max(leader, 0)
  best_index[infoset] = chosen
  for j in range(num_positive):
    value_cache[infoset_nodes[start + order[j]]] = history_values[j, chosen]
  for j in range(num_positive, size):
    value_cache[infoset_nodes[start + order[j]]] = 0.0
  stats[_SOLVED] += 1
  return value_cache[node]


@numba.njit(cache=True)
def _thesis_visited_count(visited, reach, best_index, infoset_player, responder,
                          infoset_start, infoset_nodes, node_first_child, node_player):
  """Distinct histories [B]'s Figure 4.2 evaluates: `visited` plus, for every solved
  responder information set, its zero-reach histories and their child under the
  chosen action (the thesis's loop over H' does not skip zero reach; a zero-reach
  chance/opponent child returns 0 at once, Fig. 4.1 skipping w_a = 0)."""
  marked = visited.copy()
  count = 0
  for node in range(len(marked)):
    if marked[node]:
      count += 1
  for infoset in range(len(infoset_player)):
    if infoset_player[infoset] != responder or best_index[infoset] < 0:
      continue
    for k in range(infoset_start[infoset], infoset_start[infoset + 1]):
      history = infoset_nodes[k]
      if reach[history] != 0.0:
        continue
      child = node_first_child[history] + best_index[infoset]
      for touched in range(2):
        touched_node = history if touched == 0 else child
        if not marked[touched_node]:
          marked[touched_node] = True
          count += 1
  return count


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
  approximated = _approximated_infosets(
      player, start_depth, tree.infoset_player, tree.infoset_node,
      tree.infoset_parent_slot, tree.slot_infoset, tree.node_depth)
  tree_arrays = (tree.node_player, tree.node_infoset, tree.node_parent,
                 tree.node_first_child, tree.node_num_children, tree.node_action_index,
                 tree.node_chance_prob, tree.node_utility, tree.infoset_action_offset,
                 tree.infoset_num_actions, infoset_start, infoset_nodes, approximated,
                 slots)
  reach = np.full(tree.num_nodes, -1.0)
  reach[0] = 1.0
  best_index = np.full(tree.num_infosets, -1, dtype=np.int32)
  search_arrays = (np.full(tree.num_nodes, np.nan), reach, best_index,
                   np.zeros(tree.num_nodes, dtype=np.bool_), np.zeros(7, dtype=np.int64),
                   np.empty(tree.max_depth + 1, dtype=np.int32))
  params = (np.int64(player), float(tree.utility_sum), min_utility, max_utility,
            np.int64(mode), float(epsilon or 0.0), float(eta or 0.0))
  value = float(_value(0, -math.inf, tree_arrays, search_arrays, params))

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
  stats = search_arrays[4]
  statistics = dict(
      histories_visited=int(stats[_VISITED]),
      histories_visited_thesis=int(_thesis_visited_count(
          search_arrays[3], reach, best_index, tree.infoset_player, player,
          infoset_start, infoset_nodes, tree.node_first_child, tree.node_player)),
      histories_total=tree.num_nodes,
      cutoffs_chance_opponent=int(stats[_CUTOFFS_OTHERS]),
      cutoffs_responder=int(stats[_CUTOFFS_RESPONDER]),
      aborted_infosets=int(stats[_ABORTED]), solved_infosets=int(stats[_SOLVED]),
      calls=int(stats[_CALLS]), cache_hits=int(stats[_CACHE_HITS]))
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
    result.exact_value = float(best_response.best_response_values(tree, slots)[player])
    result.error = result.exact_value - value
  return result
