"""Outcome-sampling MCCFR on live pyspiel states ([S] §1.3.3–1.3.4, §1.4.1, §3.3.3).

The thesis's MC-CFR (its Algorithm 2, as CFRPlayground implements it): alternating
updates, stochastically weighted averaging, optional VR-MCCFR baselines, incremental
tree building and IST / PST targeting. The algorithm in full:
docs/algorithms/sampling.md; the compiled fast path is compiled_outcome_sampling.
"""

import math
import time

import numpy as np
from open_spiel.python import policy as policy_lib

from ggp_cr.algorithms import contracts
from ggp_cr.algorithms.cfr import regret_matching
from ggp_cr.algorithms.config import components
from ggp_cr.algorithms.sampling import targets
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import perfect_recall



# The baselines' value objects and parser live in config (parsing loads no numba).
check_probability = components.check_probability
ExpAvgBaseline = components.ExpAvgBaseline
BASELINES_ACCEPTED = components.BASELINES_ACCEPTED
parse_baseline = components.parse_baseline


def check_cumulative_strategy_exponent(value):
  """Returns the cumulative-strategy exponent as a float; it must be finite and >= 0."""
  try:
    value = float(value)
  except (TypeError, ValueError):
    raise ValueError(
        f"The cumulative-strategy exponent (cse) must be a number >= 0, got {value!r}."
    ) from None
  if not (math.isfinite(value) and value >= 0.0):
    raise ValueError(
        f"The cumulative-strategy exponent (cse) must be finite and >= 0, got {value}.")
  return value


def warm_up(regret_matcher):
  """Loads (or compiles) the numba regret-matching kernels the solver calls, so that
  a timed budget does not pay for it."""
  params = regret_matcher.params()
  regrets = np.zeros(2)
  regret_matching.current_strategy(regrets, np.zeros(2), 0, 2, params)
  regret_matching.accumulate_regrets(regrets, 0, 2, np.zeros(2), params, 1.0)


def check_sampling_game(game):
  """Raises ValueError unless the sampling solvers can run on `game`: two players,
  zero-sum, sequential, explicit chance, information state strings and perfect recall
  (checked on a bounded part of the tree, perfect_recall.recall_violation)."""
  compiled_tree.check_game(game)
  perfect_recall.check_perfect_recall(game, "Sampling MCCFR")


_MASK64 = (1 << 64) - 1
# Upper bound on the target-consistent histories walked at a target change (the dead
# ends' exclusion, and OOS's re-weighting).
MAX_TARGET_STATES = 50_000


def new_seed(seed):
  """A 64-bit generator seed: `seed` itself, or fresh entropy if it is None."""
  if seed is None:
    return int(np.random.SeedSequence().entropy) & _MASK64
  if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
    raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}.")
  return int(seed) & _MASK64


class SplitMix64:
  """The sampling solvers' random generator (Steele et al.'s SplitMix64).

  The compiled fast path runs the same generator in numba, so a live and a compiled
  solver with the same seed draw the same numbers.
  """

  def __init__(self, seed):
    self.state = new_seed(seed)

  def random(self):
    """A float uniform in [0, 1) (53 random bits)."""
    self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK64
    z = self.state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    z ^= z >> 31
    return (z >> 11) * (1.0 / 9007199254740992.0)


def sample_index(probabilities, r):
  """The index drawn by uniform r in [0, 1) from `probabilities` (a list)."""
  total = 0.0
  last = len(probabilities) - 1
  for index in range(last):
    total += probabilities[index]
    if r < total:
      return index
  return last


class InfosetData:
  """Per-information-set tables of the sampling solvers (small numpy arrays)."""
  __slots__ = ("actions", "regrets", "strategy", "cumulative", "baselines",
               "regret_updates", "last_average_iteration", "visits")

  def __init__(self, actions, with_baselines):
    n = len(actions)
    self.actions = list(actions)
    self.regrets = np.zeros(n)
    self.strategy = np.full(n, 1.0 / n)
    self.cumulative = np.zeros(n)
    self.baselines = np.zeros((2, n)) if with_baselines else None
    self.regret_updates = 0
    self.last_average_iteration = 0
    self.visits = 0

  def average(self):
    """The normalised cumulative strategy (uniform if nothing was accumulated)."""
    total = self.cumulative.sum()
    if total > 0.0:
      return self.cumulative / total
    return np.full(len(self.actions), 1.0 / len(self.actions))


class TablePolicy(policy_lib.Policy):
  """A policy read from a sampling solver's table; uniform at unseen information sets.

  Reflects the table live. `average=True` gives the average (cumulative) strategy,
  otherwise the current regret-matched one.
  """

  def __init__(self, game, table, average=True, regret_params=None):
    super().__init__(game, [0, 1])
    self._table = table
    self._average = average
    self._regret_params = regret_params

  def probabilities(self, key, legal_actions):
    """The strategy at information state `key` as {action: probability}."""
    data = self._table.get(key)
    if data is None:
      return {a: 1.0 / len(legal_actions) for a in legal_actions}
    if self._average:
      probs = data.average()
    else:
      probs = np.empty(len(data.actions))
      regret_matching.current_strategy(data.regrets, probs, 0, len(probs),
                                       self._regret_params)
    return dict(zip(data.actions, probs.tolist()))

  def action_probabilities(self, state, player_id=None):
    player = state.current_player() if player_id is None else player_id
    return self.probabilities(state.information_state_string(player),
                              state.legal_actions(player))

  def to_slots(self, tree):
    """This policy in slot form on a compiled tree of the same game (fast input to
    exact_br.exploitability_slots)."""
    slots = tree.uniform_slots()
    for infoset, key in enumerate(tree.infoset_keys):
      data = self._table.get(key)
      if data is None:
        continue
      offset = int(tree.infoset_action_offset[infoset])
      probs = self.probabilities(key, data.actions)
      slots[offset:offset + len(data.actions)] = [probs[a] for a in data.actions]
    return slots

  def to_tabular(self):
    """This policy as an open_spiel TabularPolicy (enumerates the game's states)."""
    tabular = policy_lib.TabularPolicy(self.game)
    for key, row in tabular.state_lookup.items():
      data = self._table.get(key)
      if data is None:
        continue
      probs = data.average() if self._average else np.asarray(
          list(self.probabilities(key, data.actions).values()))
      tabular.action_probability_array[row] = 0.0
      tabular.action_probability_array[row, data.actions] = probs
    return tabular


def sampling_distribution(strategy, exploration):
  """The distribution an episode samples from: e/|A| + (1-e) sigma ([S] eq. 1.2)."""
  if exploration > 0.0:
    return (exploration / len(strategy) + (1.0 - exploration) * strategy).tolist()
  return strategy.tolist()


def sampled_action_values(data, player, index, child_value, probability, decay):
  """The action values of `player` after sampling action `index` with `probability`:
  the importance-sampled value, corrected by the ExpAvg baseline (VR-MCCFR, [S]
  §3.3.3) when `data` keeps baselines, which then move towards `child_value`."""
  if data.baselines is not None:
    baseline = data.baselines[player]
    action_values = baseline.copy()
    action_values[index] += (child_value - baseline[index]) / probability
    baseline[index] += decay * (child_value - baseline[index])
  else:
    action_values = np.zeros(len(data.actions))
    action_values[index] = child_value / probability
  return action_values


class LiveSolver:
  """The tables of a sampling solver on live pyspiel states: one InfosetData per
  information state string, grown as information sets are sampled.

  Subclasses call `_data` at each decision and `_update` with the sampled values.
  """
  targeting_probability = 0.0

  def __init__(self, game, regret_matcher, baseline=None):
    self.game = game
    self.regret_matcher = regret_matching.parse_regret_matcher(regret_matcher)
    self.baseline = parse_baseline(baseline)
    self._params = self.regret_matcher.params()
    self._decay = self.baseline.alpha if self.baseline is not None else None
    self._table = {}
    self.nodes_touched = 0

  @property
  def table(self):
    """Information state string -> InfosetData."""
    return self._table

  def runs_on(self, tree):
    del tree  # The table is keyed by information state strings (contracts.SumsSolver).
    return True

  def average_sums(self, tree, infoset):
    """{action: average-strategy sum} at `infoset` of `tree` (contracts.SumsSolver)."""
    data = self._table.get(tree.infoset_keys[infoset])
    return {} if data is None else dict(zip(data.actions, data.cumulative.tolist()))

  def iterate(self, num_iterations=1):
    """Runs `num_iterations` iterations (contracts.Solver)."""
    for _ in range(contracts.iteration_count(num_iterations)):
      self.iteration()

  @property
  def visited_states(self):
    """Histories touched so far (the solver registry's name for nodes_touched)."""
    return self.nodes_touched

  def average_policy(self):
    """The average strategy as a policy.Policy (live view of the table)."""
    return TablePolicy(self.game, self._table, average=True)

  def current_policy(self):
    """The current regret-matched strategy as a policy.Policy (live view)."""
    return TablePolicy(self.game, self._table, average=False,
                       regret_params=self._params)

  def _data(self, state, acting):
    """(`acting`'s table entry at `state` with its current strategy, whether new)."""
    key = state.information_state_string(acting)
    data = self._table.get(key)
    is_new = data is None
    if is_new:
      data = InfosetData(state.legal_actions(), self._decay is not None)
      self._table[key] = data
    else:
      regret_matching.current_strategy(data.regrets, data.strategy, 0,
                                       len(data.actions), self._params)
    data.visits += 1
    return data, is_new

  def _playout(self, state, player):
    """Uniform random playout to a terminal with the solver's SplitMix64 `_rng`;
    returns player's payoff."""
    rng = self._rng
    while not state.is_terminal():
      self.nodes_touched += 1
      if state.is_chance_node():
        outcomes, probs = zip(*state.chance_outcomes())
        state.apply_action(outcomes[sample_index(probs, rng.random())])
      else:
        actions = state.legal_actions()
        state.apply_action(actions[int(rng.random() * len(actions))])
    self.nodes_touched += 1
    return state.player_return(player)

  def _update(self, data, acting, player, action_values, value, weight, iteration,
              exponent):
    """The updated player's regrets, or the opponent's average strategy: weighted by
    `weight` = pi_-i(h) / q(h), the cumulative strategy discounted by
    (t_last / t)^exponent since its last update (stochastically weighted averaging)."""
    if acting == player:
      data.regret_updates += 1
      regret_matching.accumulate_regrets(
          data.regrets, 0, len(data.actions), weight * (action_values - value),
          self._params, float(data.regret_updates))
    else:
      if exponent > 0.0 and data.last_average_iteration > 0:
        data.cumulative *= (data.last_average_iteration / iteration) ** exponent
      data.cumulative += weight * data.strategy
      data.last_average_iteration = iteration


def target_weight(game, target, table, delta, max_states=MAX_TARGET_STATES,
                  deadline=None):
  """OOS's re-weighting factor after a target change (bots/online_solving.py).

  Walks the target-consistent histories from the root whose information sets are in
  `table`, with chance probabilities and the average strategy, up to `max_states`
  histories or until time.perf_counter() passes `deadline`; returns
  delta * S1 / S2 + (1 - delta) over the target histories reached, or 1 if none.
  """
  sums = [0.0, 0.0]
  budget = [max_states]

  def walk(state, s1, s2):
    if budget[0] <= 0 or (deadline is not None and time.perf_counter() > deadline):
      return
    budget[0] -= 1
    if state.is_chance_node():
      actions, probs = zip(*state.chance_outcomes())
      probs = list(probs)
    else:
      data = table.get(state.information_state_string(state.current_player()))
      if data is None:
        return
      actions = data.actions
      probs = data.average().tolist()
    allowed = target.allowed(state, actions)
    total = sum(p for p, ok in zip(probs, allowed) if ok)
    if total <= 0.0:
      return
    depth = len(state.history())
    for action, p, ok in zip(actions, probs, allowed):
      if not ok or p <= 0.0:
        continue
      if depth + 1 == target.length:
        sums[0] += s1 * p / total
        sums[1] += s2 * p
      else:
        walk(state.child(action), s1 * p / total, s2 * p)

  if target.length > 0:
    walk(game.new_initial_state(), 1.0, 1.0)
  if sums[1] <= 0.0:
    return 1.0
  return delta * sums[0] / sums[1] + (1.0 - delta)


class OutcomeSamplingSolver(LiveSolver):
  """Outcome-sampling MC-CFR / VR-MCCFR with incremental tree building and targeting.

  Args:
    game: a two-player zero-sum sequential pyspiel game (any size: the tables grow
      with the information sets actually sampled).
    regret_matcher: a regret_matching.RegretMatcher or a string ('rm', 'drm(1,1)').
    exploration: e in [0, 1], the updated player's uniform share of its sampling
      policy ([S] eq. 1.2).
    cumulative_strategy_exponent: cse >= 0 (0 = plain averaging).
    baseline: None / 'none' or 'expavg(alpha)' / ExpAvgBaseline (VR-MCCFR).
    targeting_probability: delta in [0, 1], the share of targeted episodes once a
      target is set with `set_target`.
    incremental: build the tree incrementally with playouts (thesis); False adds every
      sampled information set and keeps sampling below it (OpenSpiel's OS).
    seed: seed of the solver's random generator; equal seeds give equal runs.

  Attribute `iteration_weight` (default 1) multiplies the regret and strategy updates
  of the following iterations (each episode starts from sampling probability
  1 / weight); OOS sets it after a target change.
  """

  def __init__(self, game, regret_matcher="rm", exploration=0.6,
               cumulative_strategy_exponent=0.0, baseline=None,
               targeting_probability=0.0, incremental=True, seed=None):
    check_sampling_game(game)
    super().__init__(game, regret_matcher, baseline)
    self.exploration = check_probability("Exploration e", exploration)
    self.cumulative_strategy_exponent = check_cumulative_strategy_exponent(
        cumulative_strategy_exponent)
    self.targeting_probability = check_probability("Targeting probability delta",
                                                   targeting_probability)
    self.incremental = bool(incremental)
    self._rng = SplitMix64(seed)
    self._target = None
    self._targeted_episode = False
    self.iteration_weight = 1.0
    self.iterations = 0

  batch_share = None  # contracts.OnlineSolver: one iteration per call

  def warm_up(self):
    warm_up(self.regret_matcher)

  def check_targeting(self, scheme):
    if scheme == targets.PST:
      targets.public_observer(self.game)

  def average_probabilities(self, state, player):
    """The average strategy at `player`'s information set in `state` (uniform where
    the table has no data), over state.legal_actions(player)."""
    legal = state.legal_actions(player)
    probabilities = self.average_policy().probabilities(
        state.information_state_string(player), legal)
    return [probabilities[a] for a in legal]

  def set_target(self, state, player, scheme=targets.IST, deadline=None):
    """Targets the histories consistent with `player`'s view of `state` (IST) or with
    its public state (PST); later iterations target them with probability delta.
    The dead ends among them are excluded first (Target.exclude_dead_ends, up to
    MAX_TARGET_STATES histories or until time.perf_counter() passes `deadline`)."""
    self._target = targets.Target(self.game, state, player, scheme)
    self._target.exclude_dead_ends(self.game, MAX_TARGET_STATES, deadline)
    return self._target

  def target_weight(self, delta, deadline=None):
    """OOS's re-weighting factor for the current target (`target_weight` on this
    solver's table; 1 without a target)."""
    if self._target is None:
      return 1.0
    return target_weight(self.game, self._target, self._table, delta,
                         deadline=deadline)

  def clear_target(self):
    self._target = None

  @property
  def target(self):
    return self._target

  def iteration(self):
    """One episode with each player as the updated player (alternating updates)."""
    self.iterations += 1
    targeting = self._target is not None and self.targeting_probability > 0.0
    start = 1.0 / self.iteration_weight
    for player in (0, 1):
      self._targeted_episode = (
          targeting and self._rng.random() < self.targeting_probability)
      self._episode(self.game.new_initial_state(), player, 1.0, start, start,
                    targeting, targeting)

  def _targeting_step(self, untargeted, state, actions, on_target):
    """Samples an action index; returns (index, targeted distribution, whether the
    child is consistent with the target)."""
    allowed = self._target.allowed(state, actions) if on_target else None
    targeted = (targets.targeted_distribution(untargeted, allowed) if on_target
                else untargeted)
    r = self._rng.random()
    index = sample_index(targeted if self._targeted_episode else untargeted, r)
    return index, targeted, on_target and (allowed is None or allowed[index])

  def _episode(self, state, player, reach_other, s1, s2, targeting, on_target):
    """Samples below `state`; returns the (baseline-corrected) value estimate of
    `player` at `state`. reach_other is pi_-i(h) (opponent and chance); s1 and s2 the
    targeted and untargeted sampling probabilities of h; on_target whether h is
    consistent with the target."""
    self.nodes_touched += 1
    if state.is_terminal():
      return state.player_return(player)
    delta = self.targeting_probability if targeting else 0.0
    q_h = delta * s1 + (1.0 - delta) * s2
    if state.is_chance_node():
      outcomes, probs = zip(*state.chance_outcomes())
      probs = list(probs)
      index, targeted, child_on_target = self._targeting_step(probs, state, outcomes,
                                                              on_target)
      s1_child = s1 * targeted[index]
      s2_child = s2 * probs[index]
      state.apply_action(outcomes[index])
      child_value = self._episode(state, player, reach_other * probs[index], s1_child,
                                  s2_child, targeting, child_on_target)
      q_child = delta * s1_child + (1.0 - delta) * s2_child
      return probs[index] * child_value * q_h / q_child

    acting = state.current_player()
    data, is_new = self._data(state, acting)
    actions = data.actions
    strategy = data.strategy
    sampling = sampling_distribution(strategy,
                                     self.exploration if acting == player else 0.0)
    index, targeted, child_on_target = self._targeting_step(sampling, state, actions,
                                                            on_target)
    s1_child = s1 * targeted[index]
    s2_child = s2 * sampling[index]
    state.apply_action(actions[index])
    if is_new and self.incremental:
      child_value = self._playout(state, player)
    else:
      child_reach = reach_other if acting == player else reach_other * strategy[index]
      child_value = self._episode(state, player, child_reach, s1_child, s2_child,
                                  targeting, child_on_target)
    q_child = delta * s1_child + (1.0 - delta) * s2_child
    conditional = q_child / q_h

    action_values = sampled_action_values(data, player, index, child_value, conditional,
                                          self._decay)
    value = float(strategy @ action_values)
    self._update(data, acting, player, action_values, value, reach_other / q_h,
                 self.iterations, self.cumulative_strategy_exponent)
    return value
