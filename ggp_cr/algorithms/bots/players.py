"""The players of the registry as pyspiel.Bots ([S] §3.4, §3.6, App. A.4).

The build functions `build_<name>(game, player_id, seed, budget, **parameters)` of the
built-in players random, solver, strategy, human, mcts and ismcts (registered with their
parameters in config/builtin.py; online solving, OOS and continual resolving live in
their own modules), and the bots they return.
"""

import copy
import os
import sys
import time

import numpy as np

import pyspiel
from open_spiel.python.algorithms import ismcts
from open_spiel.python.algorithms import mcts
from open_spiel.python.bots import uniform_random

from ggp_cr.algorithms import contracts
from ggp_cr.algorithms.bots import anytime
from ggp_cr.algorithms.config import openspiel_errors
from ggp_cr.algorithms.config import registry


def copy_bot(bot, shared=()):
  """An independent copy of a Python bot: a deep copy of its attributes that shares
  the objects in `shared` (games, compiled trees) instead of copying them. For bots
  whose behaviour depends only on their attributes and the states they are given,
  as `clone()` of a clonable bot."""
  other = type(bot).__new__(type(bot))
  pyspiel.Bot.__init__(other)
  memo = {id(item): item for item in shared}
  for key, value in bot.__dict__.items():
    other.__dict__[key] = copy.deepcopy(value, memo)
  return other


def warm_up_on_kuhn(make_bot):
  """Plays seat 0's decisions of one Kuhn poker deal (cards 0 and 1; seat 1 bets
  whenever it acts) with the bot `make_bot(game)` builds: what an online player's
  process warm-up runs (registry.PlayerType.warm_up) so that its kernels and imports
  are loaded before any clock."""
  game = pyspiel.load_game("kuhn_poker")
  bot = make_bot(game)
  state = game.new_initial_state()
  state.apply_action(0)
  state.apply_action(1)
  while not state.is_terminal():
    state.apply_action(bot.step(state) if state.current_player() == 0 else 1)


def _rng(seed):
  return np.random.RandomState(seed % 2**32)


# random

class _TurnChecked:
  """Makes a stock OpenSpiel bot's `step` refuse a state that is not its seat's
  decision (contracts.check_turn) instead of failing inside OpenSpiel."""
  seat = None

  def step(self, state):
    contracts.check_turn(state, self.seat)
    return super().step(state)

  def step_with_policy(self, state):
    contracts.check_turn(state, self.seat)
    return super().step_with_policy(state)


def _seated(bot, player_id):
  bot.seat = player_id
  return bot


class _RandomBot(_TurnChecked, uniform_random.UniformRandomBot):
  """OpenSpiel's uniform random bot, refusing states that are not its turn."""


def build_random(game, player_id, seed, budget):
  del game, budget
  return _seated(_RandomBot(player_id, _rng(seed)), player_id)


# Fixed strategies.

class StrategyBot(pyspiel.Bot):
  """Plays a fixed policy.Policy: samples each move from its action probabilities."""

  def __init__(self, player_id, policy, seed):
    pyspiel.Bot.__init__(self)
    self._player_id = player_id
    self._policy = policy
    self._rng = _rng(seed)

  def player_id(self):
    return self._player_id

  def restart_at(self, state):
    pass

  def provides_policy(self):
    return True

  def step_with_policy(self, state):
    contracts.check_turn(state, self._player_id)
    probabilities = self._policy.action_probabilities(state, self._player_id)
    legal = state.legal_actions(self._player_id)
    weights = np.array([max(probabilities.get(a, 0.0), 0.0) for a in legal])
    if not weights.sum() > 0:
      weights = np.ones(len(legal))
    weights /= weights.sum()
    action = legal[self._rng.choice(len(legal), p=weights)]
    return list(zip(legal, weights.tolist())), action

  def step(self, state):
    return self.step_with_policy(state)[1]


# The last strategy a solver or strategy player was built from in this process
# ({what made it: its TabularPolicy}; algorithms.process_state lists it): a tournament
# makes a new bot every match.
_STRATEGY = {}


def _remembered(key, make):
  """make(), or what it gave for `key` when it was the last asked."""
  if key not in _STRATEGY:
    policy = make()
    _STRATEGY.clear()
    _STRATEGY[key] = policy
  return _STRATEGY[key]


def solved_policy(game, solver, iterations=None, seconds=None, seed=0):
  """The average policy of `solver` after the budget, computed once per process.

  Runs iterations (contracts.step_function) until `iterations` are done or `seconds`
  have passed, whichever comes first.
  """
  spec = registry.parse_solver(solver)

  def solve():
    instance = registry.make_solver(spec, game, seed)
    step = contracts.step_function(instance)
    deadline = None if seconds is None else time.perf_counter() + seconds
    done = 0
    while ((iterations is None or done < iterations) and
           (deadline is None or time.perf_counter() < deadline)):
      step()
      done += 1
    return contracts.python_average_policy(instance, game)

  return _remembered(("solved", str(game), str(spec), iterations, seconds, seed), solve)


def build_solver(game, player_id, seed, budget, name, iterations, seconds, solver_seed):
  del budget
  if iterations is None and seconds is None:
    iterations = 1000
  return StrategyBot(player_id,
                     solved_policy(game, name, iterations, seconds, solver_seed), seed)


def build_strategy(game, player_id, seed, budget, path):
  """A strategy file written by the solve example (strategy_files.py)."""
  del budget
  from ggp_cr.algorithms.tree import compiled_tree  # pylint: disable=g-import-not-at-top
  from ggp_cr.algorithms.tree import strategy_files  # pylint: disable=g-import-not-at-top

  def load():
    tree = compiled_tree.cached_tree(game)
    return tree.slots_to_tabular_policy(strategy_files.load_strategy(path, tree))

  return StrategyBot(player_id, _remembered(
      ("file", str(game), path, os.stat(path).st_mtime_ns), load), seed)


# human

class HumanBot(pyspiel.Bot):
  """Asks at the terminal: shows the player's information state and legal actions.

  A move is typed as its action string (case-insensitive) or its action id; an empty line
  lists the legal actions again.
  """

  def __init__(self, game, player_id, read=input, write=print):
    pyspiel.Bot.__init__(self)
    self._player_id = player_id
    self._read = read
    self._write = write
    game_type = game.get_type()
    self._view = ("information_state_string"
                  if game_type.provides_information_state_string else
                  "observation_string" if game_type.provides_observation_string else None)

  def player_id(self):
    return self._player_id

  def restart_at(self, state):
    pass

  def provides_policy(self):
    return False

  def _show(self, state, legal):
    if self._view is not None:
      self._write(f"You are player {self._player_id}. You see:\n"
                  f"{getattr(state, self._view)(self._player_id)}")
    self._write("Legal actions: " + ", ".join(
        f"{action}={state.action_to_string(self._player_id, action)}" for action in legal))

  def step(self, state):
    contracts.check_turn(state, self._player_id)
    legal = state.legal_actions(self._player_id)
    by_name = {state.action_to_string(self._player_id, a).strip().lower(): a for a in legal}
    self._show(state, legal)
    while True:
      try:
        answer = self._read(f"Player {self._player_id}, your move: ").strip()
      except EOFError:
        raise ValueError("The human player's input ended before the match did.") from None
      if not answer:
        self._show(state, legal)
        continue
      if answer.lower() in by_name:
        return by_name[answer.lower()]
      try:
        action = int(answer)
      except ValueError:
        action = None
      if action in legal:
        return action
      self._write(f"{answer!r} is not a legal action; type one of the names or ids above.")


def build_human(game, player_id, seed, budget):
  del seed, budget
  if not sys.stdin.isatty():
    print("Note: the human player reads moves from standard input, which is not a "
          "terminal.", file=sys.stderr)
  return HumanBot(game, player_id)


# Stock OpenSpiel search bots, always the pure-Python ones: OpenSpiel's C++ MCTSBot and
# ISMCTSBot crash the process when they step on a Python game.

def _check_sequential(game, name):
  game_type = game.get_type()
  if game_type.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
    raise ValueError(f"Player {name} needs a sequential game; load {game} with "
                     "pyspiel.load_game_as_turn_based.")
  if game_type.reward_model != pyspiel.GameType.RewardModel.TERMINAL:
    raise ValueError(f"Player {name} needs a game with terminal rewards.")


def _simulations(name, simulations, budget, timed=False):
  """Explicit simulations, else the per-move budget in iterations (a zero budget:
  limits.DEFAULT_MOVE, every online player's default); a budget in seconds is
  refused unless the player is `timed` (then: no limit on simulations)."""
  if simulations is not None:
    return simulations
  if budget.move.seconds:
    if timed:
      return _UNLIMITED_SIMULATIONS
    raise ValueError(
        f"Player {name} runs a number of simulations, not seconds; give the per-move "
        f"budget in iterations ('500it') or set {name}(simulations=...).")
  return budget.online_move().iterations


_UNLIMITED_SIMULATIONS = 2**62
# A timed ISMCTS simulation starts while this many times the recent longest fits
# (anytime.spend's margin, as continual resolving's), the estimate decaying so.
_SEARCH_MARGIN = 2.0
_SEARCH_DECAY = 0.95


class _TimeUp(Exception):
  """A timed search's move ended (timed ISMCTS)."""


class _MCTSBot(_TurnChecked, mcts.MCTSBot):
  """OpenSpiel's Python UCT bot, refusing states that are not its seat's turn."""


class _ISMCTSBot(_TurnChecked, ismcts.ISMCTSBot):
  """OpenSpiel's Python ISMCTS bot, refusing states that are not its seat's turn.

  With `seconds` (a move budget in seconds), a search runs simulations, the objects
  that existed before it frozen for the garbage collector (anytime.gc_frozen), while
  twice the recent longest fits in the move (at least two, the first expanding the
  root, unless the deadline passes: the enumerating resampler stops at it, and a
  root without visits is played uniformly, noted in `fallbacks`);
  `iterations_per_move` counts each decision's simulations (issue 44, item 4)."""
  seconds = None
  resampler = None  # an InfostateResampler, given the move's deadline

  def reset(self):
    super().reset()
    self._last = self._longest = None
    self._simulations_done = 0

  def run_search(self, state):
    if not self.seconds:
      return super().run_search(state)
    self._deadline = time.perf_counter() + self.seconds
    if self.resampler is not None:
      self.resampler.deadline = self._deadline
    try:
      with anytime.gc_frozen():
        return super().run_search(state)
    except _TimeUp:
      node = self._root_node
      if self._allow_inconsistent_action_sets:
        node = self.filter_illegals(node, state.legal_actions())
      if node is not None and node.total_visits > 0:
        return self.get_final_policy(state, node)
      self.fallbacks.append("no simulation reached the root's actions within the "
                            "move (the resampler's enumeration of the information "
                            "state's histories took it); uniform play")
      legal = state.legal_actions()
      return [(action, 1.0 / len(legal)) for action in legal]
    finally:
      self.iterations_per_move.append(self._simulations_done)
      if self.resampler is not None:
        self.resampler.deadline = None

  def sample_root_state(self, state):
    if self.seconds:
      now = time.perf_counter()
      if self._last is not None:
        # The first simulation's time holds the resampler's enumeration: not
        # counted. The root has visits from the second simulation on (its first
        # expands it); until then only the deadline stops the search.
        if self._simulations_done:
          took = now - self._last
          self._longest = took if self._longest is None else max(
              _SEARCH_DECAY * self._longest, took)
        self._simulations_done += 1
        visited = self._root_node.total_visits > 0
        if now >= self._deadline or (visited and now + _SEARCH_MARGIN *
                                     self._longest >= self._deadline):
          raise _TimeUp
      self._last = now
    return super().sample_root_state(state)


def build_mcts(game, player_id, seed, budget, simulations, uct_c, rollouts):
  simulations = _simulations("mcts", simulations, budget)
  _check_sequential(game, "mcts")
  if game.get_type().information != pyspiel.GameType.Information.PERFECT_INFORMATION:
    raise ValueError(
        f"Player mcts searches the true state, which would see hidden information in "
        f"the imperfect-information game {game}; use ismcts there.")
  rng = _rng(seed)
  return _seated(_MCTSBot(game, uct_c, simulations,
                          mcts.RandomRolloutEvaluator(rollouts, rng), random_state=rng),
                 player_id)


_DEADLINE_EVERY = 8  # histories an enumeration visits between deadline checks


class InfostateResampler:
  """Samples a history of the acting player's information set, weighted by chance.

  Python games do not implement `resample_from_infostate`, which ISMCTS needs. This
  enumerates the histories that agree with the player's own past actions and have the
  same information state string (perfect recall), caching them per information state.
  Opponent actions are unweighted, chance outcomes weighted by their probability, as
  the stock C++ resamplers do. Meant for small games.
  """

  def __init__(self, game, rng):
    self._game = game
    self._rng = rng
    self._cache = {}
    self.deadline = None  # time.perf_counter() at which to give up (_TimeUp)
    self._visited = 0

  def _histories(self, state, player):
    key = state.information_state_string(player)
    if key not in self._cache:
      own = [step.action for step in state.full_history() if step.player == player]
      found = []
      self._collect(self._game.new_initial_state(), player, own, key, 0, 1.0, found)
      if not found:
        raise ValueError(f"No history found for information state {key!r}.")
      weights = np.array([weight for _, weight in found])
      self._cache[key] = ([history for history, _ in found], weights / weights.sum())
    return self._cache[key]

  def _collect(self, state, player, own, key, depth, weight, found):
    self._visited += 1
    if (self.deadline is not None and not self._visited % _DEADLINE_EVERY and
        time.perf_counter() >= self.deadline):
      raise _TimeUp
    if state.is_terminal():
      return
    if state.is_chance_node():
      for action, probability in state.chance_outcomes():
        self._collect(state.child(action), player, own, key, depth, weight * probability,
                      found)
      return
    if state.current_player() == player:
      if depth == len(own):
        if state.information_state_string(player) == key:
          found.append((state.history(), weight))
        return
      if own[depth] in state.legal_actions():
        self._collect(state.child(own[depth]), player, own, key, depth + 1, weight, found)
      return
    for action in state.legal_actions():
      self._collect(state.child(action), player, own, key, depth, weight, found)

  def __call__(self, state, player):
    histories, probabilities = self._histories(state, player)
    history = histories[self._rng.choice(len(histories), p=probabilities)]
    sampled = self._game.new_initial_state()
    for action in history:
      sampled.apply_action(action)
    return sampled


def _supports_resampling(game):
  """True if the game's states implement resample_from_infostate (many C++ games do)."""
  state = game.new_initial_state()
  if type(state).__module__.split(".")[0] != "pyspiel":
    return False  # A Python game: pyspiel's base class only raises "not implemented".
  while state.is_chance_node():
    state.apply_action(state.chance_outcomes()[0][0])
  if state.is_terminal():
    return False
  try:
    with openspiel_errors.quiet():
      state.resample_from_infostate(state.current_player(),
                                    pyspiel.UniformProbabilitySampler(0., 1.))
  except (pyspiel.SpielError, RuntimeError, NotImplementedError):
    return False
  return True


_ISMCTS_FINAL_POLICY = {
    "visits": ismcts.ISMCTSFinalPolicyType.NORMALIZED_VISITED_COUNT,
    "max_visits": ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
    "max_value": ismcts.ISMCTSFinalPolicyType.MAX_VALUE,
}


def build_ismcts(game, player_id, seed, budget, simulations, uct_c, rollouts,
                  final_policy):
  simulations = _simulations("ismcts", simulations, budget, timed=True)
  _check_sequential(game, "ismcts")
  if game.get_type().information == pyspiel.GameType.Information.PERFECT_INFORMATION:
    raise ValueError(f"Player ismcts is for imperfect-information games; use mcts on "
                     f"{game}.")
  rng = _rng(seed)
  bot = _ISMCTSBot(game, mcts.RandomRolloutEvaluator(rollouts, rng), uct_c,
                   simulations, random_state=rng,
                   final_policy_type=_ISMCTS_FINAL_POLICY[final_policy])
  bot.seconds = budget.move.seconds or None
  bot.iterations_per_move, bot.fallbacks = [], []
  if _supports_resampling(game):
    # The game's own resampler, drawing from the bot's seeded generator.
    bot.set_resampler(lambda state, player: state.resample_from_infostate(
        player, rng.uniform))
  else:
    bot.resampler = InfostateResampler(game, rng)
    bot.set_resampler(bot.resampler)
  return _seated(bot, player_id)
