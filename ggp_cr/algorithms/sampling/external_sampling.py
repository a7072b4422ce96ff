"""External sampling and Meyer's mixed ES/OS sampling MCCFR ([M] ch. 4–5).

One sampler for external sampling (Lanctot et al. 2009), Meyer's mixed ES/OS M(f)
([M] §5.2) and locus sampling ([M] §5.3): they differ in which of the updated
player's nodes sample one action (OS) instead of walking all (ES). Meyer's
exploration lambda is the updated player's OS exploration e. Details and estimates:
docs/algorithms/sampling.md.
"""

import math

import numpy as np

from ggp_cr.algorithms.cfr import regret_matching
from ggp_cr.algorithms.config import number_ranges
from ggp_cr.algorithms.sampling import outcome_sampling

SCHEDULES = ("es", "os", "linear", "exponential")
LOCUS_CRITERIA = ("iteration", "exponential", "visits")


def _check_positive(name, value):
  try:
    value = float(value)
  except (TypeError, ValueError):
    raise ValueError(f"{name} must be a positive number, got {value!r}.") from None
  if not (math.isfinite(value) and value > 0):
    raise ValueError(f"{name} must be a positive number, got {value}.")
  return value


def _check_iterations(num_iterations, why):
  if num_iterations is None:
    raise ValueError(f"num_iterations (the total I) is required {why}.")
  return number_ranges.integer(num_iterations, "num_iterations", minimum=1)


def make_schedule(schedule, num_iterations=None, half_life=None):
  """f(i) for i = 1, 2, ...: the probability that iteration i (or a node) uses ES.

  `schedule` is 'es', 'os', 'linear' (needs num_iterations I), 'exponential' (needs
  half_life H) or a callable; a callable's values are checked when used.
  """
  if callable(schedule):
    return schedule
  if schedule == "es":
    return lambda i: 1.0
  if schedule == "os":
    return lambda i: 0.0
  if schedule == "linear":
    total = _check_iterations(num_iterations, "by the linear schedule")
    return lambda i: max(0.0, 1.0 - i / total)
  if schedule == "exponential":
    half_life = _check_positive("half_life (H) of the exponential schedule", half_life)
    return lambda i: 2.0 ** (-i / half_life)
  raise ValueError(f"Schedule must be one of {', '.join(SCHEDULES)} or a callable "
                   f"f(i) -> [0, 1]; got {schedule!r}.")


class _SamplingSolver(outcome_sampling.LiveSolver):
  """The shared ES/OS sampler; subclasses decide which decision nodes are OS nodes."""

  def __init__(self, game, regret_matcher, exploration, seed):
    outcome_sampling.check_sampling_game(game)
    super().__init__(game, regret_matcher)
    self.exploration = outcome_sampling.check_probability("Exploration e", exploration)
    if seed is not None:
      seed = outcome_sampling.new_seed(seed)
    self._rng = np.random.default_rng(seed)
    self.iterations = 0
    self.outcome_nodes = 0
    self.external_nodes = 0

  def iteration(self):
    """One episode with each player as the updated player (alternating updates)."""
    self.iterations += 1
    self._start_iteration(self.iterations)
    for player in (0, 1):
      self._traverse(self.game.new_initial_state(), player, 1.0, 1.0)

  def _start_iteration(self, i):
    """Per-iteration draws of the subclass."""

  def _outcome_node(self, data):
    """Whether this visit to `data`'s information set samples OS-style."""
    raise NotImplementedError

  def _traverse(self, state, player, reach_other, q):
    """Returns the value estimate of `player` at `state`; reach_other is pi_-i(h)
    (opponent and chance), q the probability that sampling reaches h."""
    self.nodes_touched += 1
    if state.is_terminal():
      return state.player_return(player)
    if state.is_chance_node():
      outcomes, probs = zip(*state.chance_outcomes())
      index = outcome_sampling.sample_index(probs, self._rng.random())
      state.apply_action(outcomes[index])
      return self._traverse(state, player, reach_other * probs[index],
                            q * probs[index])

    acting = state.current_player()
    data, _ = self._data(state, acting)
    strategy = data.strategy.copy()
    n = len(data.actions)
    weight = reach_other / q
    outcome_mode = self._outcome_node(data)
    if outcome_mode:
      self.outcome_nodes += 1
    else:
      self.external_nodes += 1

    if acting != player:
      index = outcome_sampling.sample_index(strategy.tolist(), self._rng.random())
      data.cumulative += weight * strategy
      state.apply_action(data.actions[index])
      return self._traverse(state, player, reach_other * strategy[index],
                            q * strategy[index])

    if outcome_mode:
      sampling = outcome_sampling.sampling_distribution(strategy, self.exploration)
      index = outcome_sampling.sample_index(sampling, self._rng.random())
      prob = sampling[index]
      state.apply_action(data.actions[index])
      action_values = np.zeros(n)
      action_values[index] = self._traverse(state, player, reach_other, q * prob) / prob
    else:
      action_values = np.array([
          self._traverse(state.child(a), player, reach_other, q) for a in data.actions])
    value = float(strategy @ action_values)
    data.regret_updates += 1
    regret_matching.accumulate_regrets(data.regrets, 0, n,
                                       weight * (action_values - value), self._params,
                                       float(data.regret_updates))
    return value


class ExternalSamplingSolver(_SamplingSolver):
  """External-sampling MCCFR (all of i's actions, opponent and chance sampled)."""

  def __init__(self, game, regret_matcher="rm", seed=None):
    super().__init__(game, regret_matcher, exploration=0.6, seed=seed)

  def _outcome_node(self, data):
    return False


class MixedSamplingSolver(_SamplingSolver):
  """Meyer's M(f): ES with probability f(i) per iteration (or per node), else OS.

  Args:
    game: a two-player zero-sum sequential pyspiel game.
    schedule: 'linear' (needs num_iterations), 'exponential' (needs half_life), 'es',
      'os', or a callable f(i) -> [0, 1] for i = 1, 2, ...
    num_iterations: the planned total I (linear schedule).
    half_life: H of the exponential schedule, in iterations.
    per_node: draw ES/OS at every decision node instead of once per iteration.
    exploration: e in [0, 1], the updated player's uniform share at OS nodes
      (Meyer's lambda; 0.6 is OpenSpiel's).
    regret_matcher: as regret_matching.parse_regret_matcher.
    seed: random seed.
  """

  def __init__(self, game, schedule="linear", num_iterations=None, half_life=None,
               per_node=False, exploration=0.6, regret_matcher="rm", seed=None):
    super().__init__(game, regret_matcher, exploration, seed)
    self.schedule = schedule
    self._f = make_schedule(schedule, num_iterations, half_life)
    self.per_node = bool(per_node)
    self._es_probability = 1.0
    self._es_iteration = True

  def _start_iteration(self, i):
    probability = self._f(i)
    try:
      probability = float(probability)
    except (TypeError, ValueError):
      probability = float("nan")
    if not 0.0 <= probability <= 1.0:
      raise ValueError(f"The schedule returned {probability!r} for iteration {i}; "
                       "f(i) must be a probability in [0, 1].")
    self._es_probability = probability
    if not self.per_node:
      self._es_iteration = self._rng.random() < probability

  def _outcome_node(self, data):
    if self.per_node:
      return not self._rng.random() < self._es_probability
    return not self._es_iteration


class LocusSamplingSolver(_SamplingSolver):
  """Meyer's locus-based mixing ([M] §5.3): OS where the average strategy is confident.

  Args:
    game: a two-player zero-sum sequential pyspiel game.
    criterion: 'iteration' (confident from iteration fraction * I on), 'exponential'
      (confident in an iteration unless x < 2^(-i/H)), or 'visits' (confident at an
      information set visited more than visit_threshold times).
    num_iterations: the planned total I ('iteration').
    half_life: H ('exponential').
    visit_threshold: visits needed ('visits'; [M] used 100).
    iteration_fraction: the fraction of I ('iteration'; [M] used 1/2).
    cutoff_beta: (a, b) of the Beta distribution of the cutoff, drawn at every node.
    exploration, regret_matcher, seed: as MixedSamplingSolver.
  """

  def __init__(self, game, criterion="iteration", num_iterations=None, half_life=None,
               visit_threshold=100, iteration_fraction=0.5, cutoff_beta=(60.0, 10.0),
               exploration=0.6, regret_matcher="rm", seed=None):
    super().__init__(game, regret_matcher, exploration, seed)
    if criterion not in LOCUS_CRITERIA:
      raise ValueError(f"Locus criterion must be one of {', '.join(LOCUS_CRITERIA)}; "
                       f"got {criterion!r}.")
    self.criterion = criterion
    if criterion == "iteration":
      total = _check_iterations(num_iterations, "by the 'iteration' criterion")
      fraction = outcome_sampling.check_probability("iteration_fraction",
                                                    iteration_fraction)
      self._confident_from = fraction * total
    elif criterion == "exponential":
      self._half_life = _check_positive("half_life (H)", half_life)
    else:
      if isinstance(visit_threshold, bool) or not isinstance(
          visit_threshold, (int, np.integer)) or visit_threshold < 0:
        raise ValueError(
            f"visit_threshold must be an integer >= 0, got {visit_threshold!r}.")
      self._visit_threshold = int(visit_threshold)
    try:
      a, b = (float(x) for x in cutoff_beta)
    except (TypeError, ValueError):
      raise ValueError(f"cutoff_beta must be a pair (a, b) of positive numbers, got "
                       f"{cutoff_beta!r}.") from None
    self.cutoff_beta = (_check_positive("cutoff_beta a", a),
                        _check_positive("cutoff_beta b", b))
    self._confident_iteration = False

  def _start_iteration(self, i):
    if self.criterion == "iteration":
      self._confident_iteration = i >= self._confident_from
    elif self.criterion == "exponential":
      self._confident_iteration = not self._rng.random() < 2.0 ** (-i / self._half_life)

  def _outcome_node(self, data):
    if self.criterion == "visits":
      confident = data.visits > self._visit_threshold
    else:
      confident = self._confident_iteration
    if not confident:
      return False
    return data.average().max() > self._rng.beta(*self.cutoff_beta)
