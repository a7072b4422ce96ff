"""The subgame solvers of continual resolving, which collect gadget inputs ([S] §3.3).

`SamplingSolver`: outcome-sampling VR-MCCFR / MC-CFR on live gadget states with
CFR-D-aware sampling; `FullWidthSolver`: CFR+ or depth-limited CFR+ on the gadget's
compiled tree. Both collect the next roots' reach and opponent values (see
docs/algorithms/resolving.md for the conventions).
"""

import copy

import numpy as np
import pyspiel

from ggp_cr.algorithms import contracts
from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.resolving import recall
from ggp_cr.algorithms.resolving.compiled import view_solvers
from ggp_cr.algorithms.resolving.gadget import gadget_game
from ggp_cr.algorithms.resolving.gadget import prefix as gadget_prefix
from ggp_cr.algorithms.sampling import outcome_sampling

_CHANCE = int(pyspiel.PlayerId.CHANCE)


# --- Solvers with estimate collection -------------------------------------------------


class SamplingSolver(outcome_sampling.LiveSolver):
  """Outcome-sampling MC-CFR / VR-MCCFR on live states ([S] §3.3.3, Algorithm 2) that
  collects the next subgames' estimates and samples CFR-D-aware (module docstring).

  The updates are outcome_sampling.OutcomeSamplingSolver's (alternating episodes,
  exploration e for the updated player, stochastically weighted averaging with the
  cumulative-strategy exponent, ExpAvg baselines, playouts for new information
  states); targeting is not used (the thesis's choice t = 0 for continual resolving,
  [S] §5.2.2).
  """

  def __init__(self, problem, trace, config, seed, warm=None):
    super().__init__(problem.game, config.regret_matcher, config.baseline)
    self.problem = problem
    self.trace = trace
    outcome_sampling.warm_up(config.regret_matcher)
    self._exploration = config.exploration
    self._cse = config.cumulative_strategy_exponent
    self._cfrd_aware = config.cfrd_aware_sampling and problem.gate_depth >= 0
    self._rng = outcome_sampling.SplitMix64(seed)
    self._track = problem.initial_track()
    self.iterations = 0
    self.value_sum = [0.0] * trace.num_roots
    self.weight_sum = [0.0] * trace.num_roots
    # Without a complete trace, the sums per next root history (OwnTrace's roots
    # are known only at the next decision).
    self.sums_by_history = None if trace.complete else {}
    if warm is not None:
      self.iterations = warm.iterations
      for key, data in warm.table.items():
        if not key.startswith(gadget_game.GADGET_PREFIX):
          self._table[key] = copy.deepcopy(data)

  def iteration(self):
    self.iterations += 1
    for player in (0, 1):
      self._walk(self.problem.game.new_initial_state(), player, 0, 1.0, 1.0, 1.0, 1.0,
                 self._track, 1.0, 0)

  def _collect(self, root_id, player, value, weight, j):
    problem = self.problem
    opponent_value = value if player == problem.opponent else problem.utility_sum - value
    original = gadget_prefix.original_values(
        opponent_value, problem.value_scale[j], problem.value_shift[j])
    if self.sums_by_history is not None:
      sums = self.sums_by_history.setdefault(root_id, [0.0, 0.0])
      sums[0] += weight * original
      sums[1] += weight
      return
    self.value_sum[root_id] += weight * original
    self.weight_sum[root_id] += weight

  def _walk(self, state, player, depth, reach0, reach1, reach_chance, q, track, w, j):
    """Samples below `state`; returns player's value estimate there. reach0/1 and
    reach_chance are the players' and chance's reach, q the sampling probability, w
    the original game's π_{-o} (from root j on), track the tracking state."""
    self.nodes_touched += 1
    if state.is_terminal():
      return state.player_return(player)
    problem = self.problem
    if state.is_chance_node():
      outcomes, probs = zip(*state.chance_outcomes())
      index = outcome_sampling.sample_index(probs, self._rng.random())
      probability = probs[index]
      state.apply_action(outcomes[index])
      depth += 1
      if depth > problem.prefix:
        w *= probability
      elif depth == problem.prefix:
        j = problem.root_index(state)
        w = problem.root_weight[j]
      track, _ = recall.advance(track, _CHANCE, state.current_player(), problem.player)
      return self._walk(state, player, depth, reach0, reach1, reach_chance * probability,
                        q * probability, track, w, j)
    if depth == problem.gate_depth and self._cfrd_aware:
      return self._gate(state, player, depth, reach0, reach1, reach_chance, q, track)
    acting = state.current_player()
    data, is_new = self._data(state, acting)
    actions = data.actions
    strategy = data.strategy
    sampling = outcome_sampling.sampling_distribution(
        strategy, self._exploration if acting == player else 0.0)
    index = outcome_sampling.sample_index(sampling, self._rng.random())
    sampled = sampling[index]
    sigma = float(strategy[index])
    state.apply_action(actions[index])
    child_track, is_root = recall.advance(track, acting, state.current_player(),
                                   problem.player)
    child_depth = depth + 1
    child_w, child_j = w, j
    if child_depth > problem.prefix:
      if acting == problem.player:
        child_w = w * sigma
    elif child_depth == problem.prefix:
      child_j = problem.root_index(state)
      child_w = problem.root_weight[child_j]
    root_id = -1
    if is_root and child_depth > problem.prefix and track in (recall.CURRENT, recall.AFTER_ROOT):
      root_id = tuple(problem.original_state(state).history())
      if self.sums_by_history is None:
        root_id = self.trace.root_ids.get(root_id, -1)
    child_q = q * sampled
    if is_new and child_track == recall.END:
      child_value = self._playout(state, player)
    else:
      child_value = self._walk(
          state, player, child_depth, reach0 * sigma if acting == 0 else reach0,
          reach1 * sigma if acting == 1 else reach1, reach_chance, child_q,
          child_track, child_w, child_j)
    if root_id != -1:
      self._collect(root_id, player, child_value, child_w / child_q, child_j)
    action_values = outcome_sampling.sampled_action_values(data, player, index,
                                                           child_value, sampled,
                                                           self._decay)
    value = float(strategy @ action_values)
    reach_other = (reach1 if player == 0 else reach0) * reach_chance
    self._update(data, acting, player, action_values, value, reach_other / q,
                 self.iterations, self._cse)
    return value

  def _gate(self, state, player, depth, reach0, reach1, reach_chance, q, track):
    """CFR-D-aware sampling at the resolve gadget's follow/terminate node: follow is
    always walked (probability 1) and terminate is valued exactly ([S] §3.3.3)."""
    problem = self.problem
    opponent = problem.opponent
    data, _ = self._data(state, opponent)
    strategy = data.strategy
    gadget = problem.gadget
    follow = data.actions.index(gadget.follow_action)
    terminate_value = problem.terminate_value(state)
    if player != opponent:
      terminate_value = -terminate_value
    sigma = float(strategy[follow])
    state.apply_action(gadget.follow_action)
    child_track, _ = recall.advance(track, opponent, state.current_player(), problem.player)
    j = problem.root_index(state)
    follow_value = self._walk(
        state, player, depth + 1, reach0 * sigma if opponent == 0 else reach0,
        reach1 * sigma if opponent == 1 else reach1, reach_chance, q, child_track,
        problem.root_weight[j], j)
    action_values = np.full(len(data.actions), terminate_value)
    action_values[follow] = follow_value
    value = float(strategy @ action_values)
    reach_other = (reach1 if player == 0 else reach0) * reach_chance
    self._update(data, opponent, player, action_values, value, reach_other / q,
                 self.iterations, self._cse)
    return value

  def probabilities(self, key, legal):
    """The average strategy at information state `key`, over `legal` (or None)."""
    data = self.table.get(key)
    if data is None:
      return None
    average = dict(zip(data.actions, data.average().tolist()))
    return [average.get(a, 0.0) for a in legal]

  def own_average_strategies(self, tree, player):
    """{infoset index of `tree`: average probabilities} for player's infosets here."""
    result = {}
    for key, data in self.table.items():
      if key.startswith(gadget_game.GADGET_PREFIX):
        continue
      try:
        infoset = tree.infoset_index(player, key)
      except KeyError:
        continue
      result[infoset] = dict(zip(data.actions, data.average().tolist()))
    return result

  def estimates(self, root_ids, trace=None):
    """(w, opponent reach, value sums, weight sums) of the next roots `root_ids` of
    `trace` (default: the solver's; else a own_trace.OwnTrace of this subgame), as
    arrays over all its next roots (zero elsewhere; module docstring)."""
    trace = self.trace if trace is None else trace
    problem = self.problem
    averages = {}
    # (a step's probability, once per step: the histories of the bot's information
    # set share most of their decisions)
    known = {}

    def probability(step):
      """The average strategy's probability of `step` (uniform where unvisited),
      kept in `known`."""
      _, key, index, count = step
      if key not in averages:
        data = self.table.get(key)
        averages[key] = data.average() if data is not None else None
      average = averages[key]
      value = known[step] = 1.0 / count if average is None else float(average[index])
      return value

    num_roots = trace.num_roots
    reach = np.zeros(num_roots)
    opponent_reach = np.zeros(num_roots)
    player = problem.player
    root_weight, opponent_root_reach = problem.root_weight, problem.opponent_root_reach
    root_of, chance, all_steps = trace.root_of, trace.chance, trace.steps
    for root_id in root_ids:
      j = root_of[root_id]
      own = root_weight[j] * chance[root_id]
      other = opponent_root_reach[j]
      for step in all_steps[root_id]:
        value = known.get(step)
        if value is None:
          value = probability(step)
        if step[0] == player:
          own *= value
        else:
          other *= value
      reach[root_id] = own
      opponent_reach[root_id] = other
    if self.sums_by_history is None:
      return reach, opponent_reach, np.array(self.value_sum), np.array(self.weight_sum)
    value_sum = np.zeros(num_roots)
    weight_sum = np.zeros(num_roots)
    # (by the histories the solver reached, usually far fewer than the roots)
    wanted = set(root_ids)
    for history, (values, weights) in self.sums_by_history.items():
      root_id = trace.root_ids.get(history)
      if root_id is not None and root_id in wanted:
        value_sum[root_id], weight_sum[root_id] = values, weights
    return reach, opponent_reach, value_sum, weight_sum


class FullWidthSolver:
  """CFR+ (or depth-limited CFR+ with RandomPlayout, [S] §3.3.2) on the solved game's
  compiled tree (problem.tree(): the whole gadget's, or subgame_tree's depth-limited
  one), adding each iteration's self-play estimates at the next roots."""

  def __init__(self, problem, trace, config, seed, warm=None):
    self.problem = problem
    self.trace = trace
    tree = problem.tree()
    self.tree = tree
    if config.solver == "cfr+":
      self.solver = cfr.CFRPlusSolver(tree)
    else:
      self.solver = view_solvers.depth_limited_cfr_plus(tree, problem.player,
                                           problem.initial_track(), config, seed)
    if warm is not None:
      self._warm_start(warm)
    self.iterations = 0
    self._nodes = np.array(trace.nodes, dtype=np.int64)
    self._root_of = np.array(trace.root_of, dtype=np.int64)
    num_roots = trace.num_roots
    self._reach_sum = np.zeros(num_roots)
    self._opponent_reach_sum = np.zeros(num_roots)
    self._value_sum = np.zeros(num_roots)
    self._weight_sum = np.zeros(num_roots)
    if num_roots:
      chance = tree.node_reaches(tree.uniform_slots())[2]
      root_nodes = np.array([trace.current_root_nodes[j] for j in trace.root_of])
      weights = np.array(problem.root_weight)[self._root_of]
      self._own_factor = weights / chance[root_nodes]
      self._root_nodes = root_nodes
      self._opponent_prior = np.array(problem.opponent_root_reach)[self._root_of]
      self._scale = np.array(problem.value_scale)[self._root_of]
      self._shift = np.array(problem.value_shift)[self._root_of]

  @property
  def nodes_touched(self):
    return self.solver.visited_states

  def _warm_start(self, warm):
    """Regrets and strategy sums of the previous subgame's information states."""
    old_tree, new_tree = warm.tree, self.tree
    old_state, state = warm.solver.state_dict(), self.solver.state_dict()
    for infoset, key in enumerate(new_tree.infoset_keys):
      player = int(new_tree.infoset_player[infoset])
      if key.startswith(gadget_game.GADGET_PREFIX):
        continue
      try:
        old = old_tree.infoset_index(player, key)
      except KeyError:
        continue
      count = int(new_tree.infoset_num_actions[infoset])
      if int(old_tree.infoset_num_actions[old]) != count:
        continue
      new_offset = int(new_tree.infoset_action_offset[infoset])
      old_offset = int(old_tree.infoset_action_offset[old])
      for name in ("regrets", "cumulative", "strategy"):
        state[name][new_offset:new_offset + count] = \
            old_state[name][old_offset:old_offset + count]
    state["iteration"] = old_state["iteration"]
    state["log_weight_scale"] = old_state["log_weight_scale"]
    self.solver.load_state_dict(state)

  def iterate(self, num_iterations=1):
    for _ in range(contracts.iteration_count(num_iterations)):
      self.iteration()

  def iteration(self):
    strategy = self.solver.current_strategy_slots()
    self.solver.evaluate_and_update_policy()
    self.iterations += 1
    self._add_estimates(strategy)

  def _add_estimates(self, strategy):
    if not len(self._nodes):
      return
    problem = self.problem
    tree = self.tree
    reach = tree.node_reaches(strategy)
    values = tree.node_values(strategy)[self._nodes]
    nodes = self._nodes
    w = self._own_factor * reach[problem.player, nodes] * reach[2, nodes]
    at_root = reach[problem.opponent, self._root_nodes]
    opponent = self._opponent_prior * np.divide(
        reach[problem.opponent, nodes], at_root, out=np.zeros(len(nodes)),
        where=at_root > 0)
    if problem.opponent == 1:
      values = tree.utility_sum - values
    original = gadget_prefix.original_values(values, self._scale, self._shift)
    self._reach_sum += w
    self._opponent_reach_sum += opponent
    self._value_sum += w * original
    self._weight_sum += w

  def probabilities(self, key, legal):
    try:
      infoset = self.tree.infoset_index(self.problem.player, key)
    except KeyError:
      return None
    return self._infoset_average(infoset, legal)

  def _infoset_average(self, infoset, legal):
    offset = int(self.tree.infoset_action_offset[infoset])
    count = int(self.tree.infoset_num_actions[infoset])
    average = self.solver.average_strategy_slots()[offset:offset + count]
    actions = self.tree.infoset_actions[offset:offset + count].tolist()
    probabilities = dict(zip(actions, average.tolist()))
    return [probabilities.get(a, 0.0) for a in legal]

  def average_slots(self):
    return self.solver.average_strategy_slots()

  def estimates(self, root_ids):
    del root_ids  # All next roots are accumulated anyway.
    if self.iterations == 0:
      self._add_estimates(self.solver.current_strategy_slots())
      count = 1
    else:
      count = self.iterations
    result = (self._reach_sum / count, self._opponent_reach_sum / count,
              self._value_sum.copy(), self._weight_sum.copy())
    if self.iterations == 0:
      for array in (self._reach_sum, self._opponent_reach_sum, self._value_sum,
                    self._weight_sum):
        array[:] = 0.0
    return result
