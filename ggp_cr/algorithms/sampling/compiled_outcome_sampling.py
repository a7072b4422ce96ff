"""Outcome-sampling MCCFR on the compiled tree: the fast path of outcome_sampling.py.

The same algorithm as `outcome_sampling.OutcomeSamplingSolver` ([S] §1.3.3–1.3.4,
§1.4.1, §3.3.3, Algorithm 2: alternating updates, exploration e, regret matcher,
cumulative-strategy exponent, ExpAvg baselines, incremental tree building,
information-set targeting with q(h) = delta * s1 + (1 - delta) * s2), run by numba
loops over a `flat_tree.CompiledTree` with per-(information set, action) flat
arrays. It draws from the same SplitMix64 generator in the same order, so with equal
seeds both solvers sample the same histories and hold the same tables (up to float
rounding). Public-subgame targeting needs live states: use the live solver for it.
"""

import numba
import numpy as np

from ggp_cr.algorithms import contracts
from ggp_cr.algorithms.cfr import regret_matching
from ggp_cr.algorithms.sampling import compiled_targets
from ggp_cr.algorithms.sampling import outcome_sampling
from ggp_cr.algorithms.sampling import targets
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import flat_tree

_TERMINAL = -4
_CHANCE = -1

# node_target values (compiled_targets): off the target, on a path to it, in it.
_OFF_TARGET = compiled_targets.OFF_TARGET
_IN_TARGET = compiled_targets.IN_TARGET


# A tracking state's table is indexed by player id + _PLAYER_OFFSET (ids -4..1).
_PLAYER_OFFSET = 4


@numba.njit(cache=True)
def _root_payoff(u, j, opponent, utility_sum, root_gain, root_offset):
  """Player 0's payoff at a terminal below root j of player 0's utility u in the whole
  game, when o's payoff there is root_gain_j·u_o + root_offset_j (the caller's map)."""
  u_o = u if opponent == 0 else utility_sum - u
  value = root_gain[j] * u_o + root_offset[j]
  return value if opponent == 0 else -value


@numba.njit(cache=True)
def _random(rng_state):
  """SplitMix64 step on rng_state[0]; a float uniform in [0, 1)."""
  rng_state[0] += np.uint64(0x9E3779B97F4A7C15)
  z = rng_state[0]
  z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
  z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
  z = z ^ (z >> np.uint64(31))
  return float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@numba.njit(cache=True)
def _sample_index(probabilities, count, r):
  total = 0.0
  for index in range(count - 1):
    total += probabilities[index]
    if r < total:
      return index
  return count - 1


@numba.njit(cache=True)
def _run(num_iterations, first_iteration, node_player, node_infoset, node_first_child,
         node_num_children, node_chance_prob, node_utility, utility_sum,
         infoset_action_offset, max_depth, max_actions, params, exploration, cse,
         decay, use_baselines, delta, node_target, targeting, incremental, start,
         in_memory, visits, regrets, current, cumulative, last_average, regret_updates,
         baselines, rng_state, node_gate, playout_track, track_next, playout_from,
         node_next_root, node_root_w, node_root_of, root_gain, root_offset,
         resolving_player, value_sum, weight_sum, prefix_player, prefix_infoset, prefix_offset, prefix_first_child,
         prefix_num_children, prefix_chance_prob, prefix_utility, prefix_gate,
         prefix_root, root_node, root_w, whole_utility_sum, infoset_map):
  """Runs `num_iterations` iterations (one episode per player each); returns the
  number of nodes touched. Hooks for a caller's subgame semantics (continual
  resolving's gadgets, resolving.compiled.view_sampling; empty arrays turn each off):
  `node_gate` marks CFR-D-aware gates (Follow = child 0 walked with probability 1,
  Terminate = child 1 valued exactly); `playout_track` >= 0 starts a finite automaton
  over the path (`track_next[state, parent player + 4, child player + 4]`, the
  caller's table) and playouts start only in its state `playout_from`;
  `node_next_root` the next roots whose sampled values, weighted by w(h)/q(h), are
  added to value_sum / weight_sum (w from `node_root_w` at root copies, times chance
  and `resolving_player`'s current strategy below them; o's values mapped back per
  root j = `node_root_of` by the inverse of o's payoff map: (v_o - root_offset_j) /
  root_gain_j).

  In place (`prefix_player` non-empty; view_sampling.InPlaceSampler): the tree is
  the whole game's and the gadget's prefix is given apart, as nodes numbered from
  len(node_player) on (prefix_*: player, infoset (the tree's ids, the gadget's after
  them), its first slot, children in prefix numbering, chance probability, player 0's
  payoff, CFR-D-aware gate, the root index j of a root copy), each root copy standing
  for whole-tree node root_node[j] (w root_w[j]); `infoset_map` (if non-empty)
  gives the tables' id of each of the tree's infosets (the subgame's compact tables,
  `infoset_action_offset` then indexed by those ids); terminals below root j pay o
  root_gain_j·u_o + root_offset_j (`_root_payoff`) and
  `utility_sum` is the gadget's (0); node_gate, node_root_w and node_root_of are
  unused."""
  touched = 0
  gates = len(node_gate) > 0
  bounded = playout_track >= 0
  collecting = len(node_next_root) > 0
  in_place = len(prefix_player) > 0
  mapped = len(infoset_map) > 0
  num_nodes = len(node_player)
  opponent = 1 - resolving_player
  path_w_child = np.empty(max_depth + 1)
  path_child = np.empty(max_depth + 1, np.int64)
  path_acting = np.empty(max_depth + 1, np.int64)
  path_infoset = np.empty(max_depth + 1, np.int64)
  path_offset = np.empty(max_depth + 1, np.int64)
  path_count = np.empty(max_depth + 1, np.int64)
  path_chance = np.empty(max_depth + 1)
  path_terminate = np.empty(max_depth + 1)
  path_gate = np.empty(max_depth + 1, np.bool_)
  path_index = np.empty(max_depth + 1, np.int64)
  path_q = np.empty(max_depth + 1)
  path_q_child = np.empty(max_depth + 1)
  path_reach = np.empty(max_depth + 1)
  untargeted = np.empty(max_actions)
  targeted = np.empty(max_actions)
  action_values = np.empty(max_actions)
  for it in range(num_iterations):
    t = first_iteration + it
    for player in range(2):
      targeted_episode = False
      if targeting:
        targeted_episode = _random(rng_state) < delta
      eff_delta = delta if targeting else 0.0
      node = num_nodes if in_place else 0
      s1 = start
      s2 = start
      reach = 1.0
      on_target = targeting
      below = False
      depth = 0
      leaf_value = 0.0
      root = -1  # in place: the root index j of the episode
      track = playout_track
      w = node_root_w[0] if collecting and not in_place else 0.0
      while True:
        touched += 1
        if node < num_nodes:
          acting = node_player[node]
          if acting == _TERMINAL:
            leaf_value = node_utility[node]
            if in_place:
              leaf_value = _root_payoff(leaf_value, root, opponent, whole_utility_sum,
                                         root_gain, root_offset)
        else:
          acting = prefix_player[node - num_nodes]
          if acting == _TERMINAL:
            leaf_value = prefix_utility[node - num_nodes]
        if acting == _TERMINAL:
          if player == 1:
            leaf_value = utility_sum - leaf_value
          break
        infoset = -1
        offset = 0
        if node < num_nodes:
          first = node_first_child[node]
          count = node_num_children[node]
          probabilities = node_chance_prob
          base = first
          at_gate = gates and node_gate[node] != 0
          if acting != _CHANCE:
            infoset = node_infoset[node]
            if mapped:
              infoset = infoset_map[infoset]
            offset = infoset_action_offset[infoset]
          if at_gate:
            path_terminate[depth] = node_utility[first + 1]
        else:
          k = node - num_nodes
          base = prefix_first_child[k]
          first = num_nodes + base
          count = prefix_num_children[k]
          probabilities = prefix_chance_prob
          at_gate = prefix_gate[k] != 0
          infoset = prefix_infoset[k]
          offset = prefix_offset[k]
          if at_gate:
            path_terminate[depth] = prefix_utility[base + 1]
        is_new = False
        if acting == _CHANCE:
          for a in range(count):
            untargeted[a] = probabilities[base + a]
        else:
          if not in_memory[infoset]:
            in_memory[infoset] = True
            is_new = True
            for a in range(count):
              current[offset + a] = 1.0 / count
          else:
            regret_matching.current_strategy(regrets, current, offset, count, params)
          visits[infoset] += 1
          if acting == player and exploration > 0.0:
            for a in range(count):
              untargeted[a] = exploration / count + (1.0 - exploration) * current[
                  offset + a]
          else:
            for a in range(count):
              untargeted[a] = current[offset + a]
        if on_target and node_target[node] == _IN_TARGET:
          below = True
        restricted = on_target and not below
        allowed_total = 0.0
        if restricted:
          for a in range(count):
            if node_target[first + a] != _OFF_TARGET:
              allowed_total += untargeted[a]
        if restricted and allowed_total > 0.0:
          for a in range(count):
            if node_target[first + a] != _OFF_TARGET:
              targeted[a] = untargeted[a] / allowed_total
            else:
              targeted[a] = 0.0
        else:
          for a in range(count):
            targeted[a] = untargeted[a]
        if at_gate:
          index = 0
          targeted[0] = untargeted[0] = 1.0
        else:
          r = _random(rng_state)
          if targeted_episode:
            index = _sample_index(targeted, count, r)
          else:
            index = _sample_index(untargeted, count, r)
        child = first + index
        entered = False
        if child >= num_nodes and prefix_root[child - num_nodes] >= 0:
          root = prefix_root[child - num_nodes]
          child = root_node[root]
          entered = True
        if collecting:
          if in_place:
            if entered:
              w = root_w[root]
            elif node < num_nodes:
              if acting == _CHANCE:
                w *= untargeted[index]
              elif acting == resolving_player:
                w *= current[offset + index]
          elif node_root_w[child] >= 0.0:
            w = node_root_w[child]
          elif node_root_of[node] >= 0:
            if acting == _CHANCE:
              w *= untargeted[index]
            elif acting == resolving_player:
              w *= current[offset + index]
          path_w_child[depth] = w
        if restricted:
          on_target = node_target[child] != _OFF_TARGET
        s1_child = s1 * targeted[index]
        s2_child = s2 * untargeted[index]
        path_child[depth] = child
        path_acting[depth] = acting
        path_infoset[depth] = infoset
        path_offset[depth] = offset
        path_count[depth] = count
        path_chance[depth] = untargeted[index]
        path_gate[depth] = at_gate
        path_index[depth] = index
        path_q[depth] = eff_delta * s1 + (1.0 - eff_delta) * s2
        path_q_child[depth] = eff_delta * s1_child + (1.0 - eff_delta) * s2_child
        path_reach[depth] = reach
        depth += 1
        if acting == _CHANCE:
          reach *= untargeted[index]
        elif acting != player:
          reach *= current[offset + index]
        s1 = s1_child
        s2 = s2_child
        if bounded:
          child_player = (node_player[child] if child < num_nodes else
                          prefix_player[child - num_nodes])
          track = track_next[track, acting + _PLAYER_OFFSET,
                             child_player + _PLAYER_OFFSET]
        node = child
        if is_new and incremental and not at_gate and (
            not bounded or track == playout_from):
          while node_player[node] != _TERMINAL:
            touched += 1
            first = node_first_child[node]
            count = node_num_children[node]
            r = _random(rng_state)
            if node_player[node] == _CHANCE:
              total = 0.0
              chosen = count - 1
              for a in range(count - 1):
                total += node_chance_prob[first + a]
                if r < total:
                  chosen = a
                  break
              node = first + chosen
            else:
              node = first + int(r * count)
          touched += 1
          leaf_value = node_utility[node]
          if in_place:
            leaf_value = _root_payoff(leaf_value, root, opponent, whole_utility_sum,
                                       root_gain, root_offset)
          if player == 1:
            leaf_value = utility_sum - leaf_value
          break

      value = leaf_value
      for d in range(depth - 1, -1, -1):
        index = path_index[d]
        conditional = path_q_child[d] / path_q[d]
        acting = path_acting[d]
        child = path_child[d]
        if collecting and child < num_nodes and node_next_root[child] >= 0:
          weight = path_w_child[d] / path_q_child[d]
          child_value = value if player == opponent else utility_sum - value
          j = root if in_place else node_root_of[child]
          next_root = node_next_root[child]
          value_sum[next_root] += weight * (child_value - root_offset[j]) / root_gain[j]
          weight_sum[next_root] += weight
        if acting == _CHANCE:
          value = path_chance[d] * value / conditional
          continue
        infoset = path_infoset[d]
        offset = path_offset[d]
        count = path_count[d]
        if path_gate[d]:
          action_values[0] = value
          terminate = path_terminate[d]
          action_values[1] = terminate if player == 0 else utility_sum - terminate
        elif use_baselines:
          for a in range(count):
            action_values[a] = baselines[player, offset + a]
          b = baselines[player, offset + index]
          action_values[index] = b + (value - b) / conditional
          baselines[player, offset + index] = b + decay * (value - b)
        else:
          for a in range(count):
            action_values[a] = 0.0
          action_values[index] = value / conditional
        node_value = 0.0
        for a in range(count):
          node_value += current[offset + a] * action_values[a]
        weight = path_reach[d] / path_q[d]
        if acting == player:
          regret_updates[infoset] += 1
          for a in range(count):
            regrets[offset + a] += weight * (action_values[a] - node_value)
          regret_matching.discount_regrets(regrets, offset, count, params,
                                           float(regret_updates[infoset]))
        else:
          if cse > 0.0:
            multiplier = (last_average[infoset] / t) ** cse
            for a in range(count):
              cumulative[offset + a] *= multiplier
          for a in range(count):
            cumulative[offset + a] += weight * current[offset + a]
          last_average[infoset] = t
        value = node_value
  return touched


def _no_resolving():
  """The kernel's gadget arguments that turn the gadget semantics off."""
  empty = np.zeros(0)
  return (np.zeros(0, np.int8), -1, np.zeros((1, 1, 1), np.int8), -1,
          np.zeros(0, np.int64), empty, np.zeros(0, np.int32), empty, empty, 0,
          np.zeros(0), np.zeros(0))


def _no_prefix():
  """The kernel's in-place arguments that turn in-place solving off."""
  empty_int = np.zeros(0, np.int32)
  return (np.zeros(0, np.int8), empty_int, empty_int, empty_int, empty_int,
          np.zeros(0), np.zeros(0), np.zeros(0, np.int8),
          empty_int, np.zeros(0, np.int64), np.zeros(0), 0.0)


class CompiledOutcomeSamplingSolver:
  """Outcome-sampling MC-CFR / VR-MCCFR over a compiled tree (numba).

  Takes a pyspiel game (compiled once per process through `compiled_tree.cached_tree`)
  or a CompiledTree, and the hyper-parameters of `OutcomeSamplingSolver`. Targeting is
  information-set targeting (`set_target`); `iteration_weight` is as in the live solver.
  `infoset_actions` (action counts) sizes the tables for other information sets than
  the tree's: an in-place gadget's (`set_prefix`; view_sampling.InPlaceSampler reads
  those tables, the tree-indexed readers here do not apply).
  """

  def __init__(self, game_or_tree, regret_matcher="rm", exploration=0.6,
               cumulative_strategy_exponent=0.0, baseline=None,
               targeting_probability=0.0, incremental=True, seed=None,
               infoset_actions=None):
    if isinstance(game_or_tree, flat_tree.CompiledTree):
      self.tree = game_or_tree
    else:
      outcome_sampling.check_sampling_game(game_or_tree)
      self.tree = compiled_tree.cached_tree(game_or_tree)
    self.game = self.tree.game
    self.regret_matcher = regret_matching.parse_regret_matcher(regret_matcher)
    self.exploration = outcome_sampling.check_probability("Exploration e", exploration)
    self.cumulative_strategy_exponent = (
        outcome_sampling.check_cumulative_strategy_exponent(
            cumulative_strategy_exponent))
    self.baseline = outcome_sampling.parse_baseline(baseline)
    self.targeting_probability = outcome_sampling.check_probability(
        "Targeting probability delta", targeting_probability)
    self.incremental = bool(incremental)
    tree = self.tree
    self._params = self.regret_matcher.params()
    self._rng_state = np.array([outcome_sampling.new_seed(seed)], dtype=np.uint64)
    if infoset_actions is None:
      slots, infosets = tree.num_infoset_actions, tree.num_infosets
    else:
      slots, infosets = int(np.sum(infoset_actions)), len(infoset_actions)
    self._in_memory = (np.zeros if self.incremental else np.ones)(infosets, np.bool_)
    self.visits = np.zeros(infosets, np.int64)
    self.regrets = np.zeros(slots)
    # Per infoset of `infoset_actions` (the tree's by default). A current strategy is
    # written at an information set's first visit (incremental)
    # or computed from the regrets at every visit.
    self._current = np.zeros(slots)
    self.cumulative = np.zeros(slots)
    self._last_average = np.zeros(infosets)
    self._regret_updates = np.zeros(infosets, np.int64)
    self.baselines = np.zeros((2, slots if self.baseline else 0))
    self._node_target = np.zeros(0, np.int8)
    self.iteration_weight = 1.0
    self.iterations = 0
    self.nodes_touched = 0
    self._max_actions = int(max(tree.node_num_children.max(initial=1), 1))
    self._resolving = _no_resolving()
    self._prefix = _no_prefix()
    self._prefix_depth = 0
    self._infoset_map = np.zeros(0, np.int32)
    self._offsets = tree.infoset_action_offset

  def set_resolving(self, node_gate, playout_track, track_next, playout_from,
                    node_next_root, node_root_w, node_root_of, root_gain, root_offset,
                    resolving_player, value_sum, weight_sum):
    """Continual resolving's gadget semantics (the kernel `_run`'s arguments of the
    same names; view_sampling.py): value_sum / weight_sum are added to in place."""
    self._resolving = (
        np.asarray(node_gate, np.int8), int(playout_track),
        np.asarray(track_next, np.int8), int(playout_from),
        np.asarray(node_next_root, np.int64), np.asarray(node_root_w, np.float64),
        np.asarray(node_root_of, np.int32), np.asarray(root_gain, np.float64),
        np.asarray(root_offset, np.float64), int(resolving_player), value_sum,
        weight_sum)

  def set_prefix(self, prefix, infoset_map, infoset_action_offset):
    """Solves in place (view_sampling.InPlaceSampler): `prefix` holds the kernel's
    prefix arguments (`_run`'s prefix_player to whole_utility_sum), `infoset_map`
    the tables' id of each of the tree's infosets and `infoset_action_offset` each
    id's first slot (the tables of the constructor's `infoset_actions`)."""
    self._prefix = tuple(prefix)
    self._infoset_map = infoset_map
    self._offsets = np.asarray(infoset_action_offset, np.int32)
    self._max_actions = max(self._max_actions, int(self._prefix[4].max(initial=1)))
    self._prefix_depth = 3  # at most three prefix nodes above a root

  batch_share = 0.01  # contracts.OnlineSolver: batches of a hundredth of a budget

  def warm_up(self):
    """Compiles or loads the numba kernels (iterations, targeting, re-weighting)."""
    self.run(0)
    self._target_sums(np.array([_IN_TARGET], np.int8))
    tree = self.tree
    compiled_targets.mark_target(tree.node_infoset[:0], tree.node_parent[:0], 0, np.zeros(0, np.int8))
    if tree.num_infosets:  # builds the tree's key index (0.3 s on latent_ttt)
      tree.infoset_index(int(tree.infoset_player[0]), tree.infoset_keys[0])

  def _target_sums(self, node_target):
    tree = self.tree
    return compiled_targets.target_sums(
        tree.node_player, tree.node_first_child, tree.node_num_children,
        tree.node_chance_prob, tree.node_infoset, self._offsets, node_target,
        self._in_memory, self.cumulative, tree.max_depth, self._max_actions)

  def check_targeting(self, scheme):
    if scheme != targets.IST:
      raise ValueError("The compiled solver supports information-set targeting only; "
                       "use targeting='ist' or a live solver for 'pst'.")

  def average_probabilities(self, state, player):
    """The average strategy at `player`'s information set in `state` (uniform where
    nothing was accumulated), over state.legal_actions(player)."""
    legal = state.legal_actions(player)
    tree = self.tree
    infoset = tree.infoset_index(player, state.information_state_string(player))
    offset = int(tree.infoset_action_offset[infoset])
    cumulative = self.cumulative[offset:offset + len(legal)]
    total = cumulative.sum()
    if total > 0:
      return (cumulative / total).tolist()
    return [1.0 / len(legal)] * len(legal)

  def set_target(self, state, player, scheme=targets.IST, deadline=None):
    """Information-set targeting of `player`'s information set in `state` (the
    player must be the one to act there); its nodes' ancestors are exactly the
    target's prefixes (no dead ends; `deadline` is not needed)."""
    del deadline
    self.check_targeting(scheme)
    if state.current_player() != player:
      raise ValueError(f"Information-set targeting needs player {player} to act in the "
                       f"target state; player {state.current_player()} does.")
    tree = self.tree
    infoset = tree.infoset_index(player, state.information_state_string(player))
    node_target = np.zeros(tree.num_nodes, np.int8)
    compiled_targets.mark_target(tree.node_infoset, tree.node_parent, infoset, node_target)
    self._node_target = node_target

  def target_weight(self, delta, deadline=None):
    """OOS's re-weighting factor for the current target, as
    outcome_sampling.target_weight computes it on the live solver's table (1 without
    a target or when no target node is reached); `deadline` is not needed."""
    del deadline
    if len(self._node_target) == 0:
      return 1.0
    if self._node_target[0] == _IN_TARGET:
      return 1.0
    sums1, sums2 = self._target_sums(self._node_target)
    if sums2 <= 0.0:
      return 1.0
    return delta * sums1 / sums2 + (1.0 - delta)

  def clear_target(self):
    self._node_target = np.zeros(0, np.int8)

  def run(self, num_iterations):
    """Runs `num_iterations` iterations (one episode per player each)."""
    num_iterations = contracts.iteration_count(num_iterations)
    tree = self.tree
    targeting = len(self._node_target) > 0 and self.targeting_probability > 0.0
    node_target = self._node_target if targeting else np.zeros(1, np.int8)
    decay = self.baseline.alpha if self.baseline is not None else 0.0
    touched = _run(
        int(num_iterations), self.iterations + 1, tree.node_player,
        tree.node_infoset, tree.node_first_child, tree.node_num_children,
        tree.node_chance_prob, tree.node_utility, tree.utility_sum,
        self._offsets, tree.max_depth + self._prefix_depth,
        self._max_actions, self._params,
        self.exploration, self.cumulative_strategy_exponent, decay,
        self.baseline is not None, self.targeting_probability, node_target, targeting,
        self.incremental, 1.0 / self.iteration_weight, self._in_memory, self.visits,
        self.regrets, self._current, self.cumulative, self._last_average,
        self._regret_updates, self.baselines, self._rng_state, *self._resolving,
        *self._prefix, self._infoset_map)
    self.iterations += int(num_iterations)
    self.nodes_touched += int(touched)

  def iteration(self):
    """One iteration: an episode with each player as the updated player."""
    self.run(1)

  def runs_on(self, tree):
    """Whether `tree` is of this solver's game (contracts.SumsSolver)."""
    return tree.game_string == self.tree.game_string

  def average_sums(self, tree, infoset):
    """{action: average-strategy sum} at `infoset` of `tree` (contracts.SumsSolver)."""
    offset = int(tree.infoset_action_offset[infoset])
    count = int(tree.infoset_num_actions[infoset])
    actions = tree.infoset_actions[offset:offset + count].tolist()
    return dict(zip(actions, self.cumulative[offset:offset + count].tolist()))

  def iterate(self, num_iterations=1):
    """Runs `num_iterations` iterations in one kernel call (contracts.Solver)."""
    self.run(num_iterations)

  @property
  def visited_states(self):
    """Histories touched so far (the solver registry's name for nodes_touched)."""
    return self.nodes_touched

  def average_strategy_slots(self):
    """The average strategy in slot form (uniform where nothing was accumulated)."""
    return self.tree.normalise_per_infoset(self.cumulative)

  def average_policy(self):
    """The average strategy as an open_spiel TabularPolicy."""
    return self.tree.slots_to_tabular_policy(self.average_strategy_slots())
