"""Player evaluators: the strategy an online player plays, and its exploitability ([S] §3.5).

An online player computes its strategy move by move, so its strategy for the whole game
has to be assembled from many decisions:

* `traversing_evaluation` (exact, small games; [S] TraversingEvaluator): for every
  information set I of either player, a fresh bot (same seed, same pre-play) replays one
  history of I as the player would have seen it in a match: it is told the chance and
  opponent moves (`inform_action`), chooses at each of its earlier decision points with
  its per-move budget and is then held to the history's action (`force_action`, when
  the bot provides it; bots without it must read their own past moves from the state),
  and finally reports its policy at I (`step_with_policy`). Using one seed per player
  makes every replay the same player instance up to the point where the histories part,
  like the thesis's copying of the player object. Clonable bots are copied after each
  decision instead; a bot with `decision_key` (continual resolving with iteration
  budgets) decides once for all information sets whose keys say the copies would end
  equal (one resolve per subgame: Leduc{100,100,3,30} in minutes).
* `game_playing_evaluation` (Lisý et al. 2015's aggregate method, [S] GamePlayingEvaluator):
  play matches against a random opponent (seats alternate; the opponent avoids moves
  that end the match when it can, as in the thesis's implementation, so matches reach
  deeper information sets) and aggregate the strategies computed along the way. At each
  of the player's decisions at an information set I, `scope` says what is added:
  - "successors" (Lisý et al.): the average-strategy sums the player's solver holds for
    I and for every information set of the player below I (its sequence tree), so that
    information sets never reached directly still get an estimate;
  - "thesis" ([S] §3.5): with targeting, I and the player's information sets directly
    under I; without, all of the player's information sets with as many own previous
    moves as I (they had the same solving time);
  - "current": only the policy at I.
  The sums are read from a bot exposing `computed_strategy()` (contracts.
  ComputedStrategyBot: {information state string: {action: weight}}, already scoped
  by the bot) or from the outcome-sampling solver behind an online solving / OOS
  bot's decision or a continual-resolving bot's current subgame (contracts.SolvingBot,
  so limited to that subgame as [S] §3.5 says); other bots contribute the policy at
  I only. weighting="visits" adds the sums as they are, so information sets
  the search visited more weigh more (Lisý et al.); "uniform" normalises each
  contribution first (CFRPlayground's StrategyAggregatorListener). Information sets
  never given a strategy play uniformly.

Both return an `Evaluation` holding an OpenSpiel TabularPolicy of the whole game and its
exact NashConv (what [S] calls exploitability) and OpenSpiel exploitability (NashConv/2),
from `best_response` on the compiled tree.
"""

import contextlib
import dataclasses
import gc
import time

import numpy as np

import pyspiel

from ggp_cr.algorithms import contracts
from ggp_cr.algorithms import progress_bars
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.evaluation import first_action
from ggp_cr.algorithms.evaluation import matches
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import flat_tree

WEIGHTINGS = ("visits", "uniform")
SCOPES = ("successors", "thesis", "current")


@dataclasses.dataclass
class Evaluation:
  """The assembled strategy of a player and how exploitable it is."""
  evaluator: str
  # The assembled strategy in slot form on `tree` (the game's CompiledTree); `policy`
  # gives it as an OpenSpiel TabularPolicy, built on first use (from a rebuilt state
  # of every information set).
  slots: object = dataclasses.field(default=None, repr=False, compare=False)
  tree: object = dataclasses.field(default=None, repr=False, compare=False)
  _policy: object = dataclasses.field(default=None, init=False, repr=False,
                                      compare=False)
  nash_conv: float = float("nan")
  exploitability: float = float("nan")
  # The strategy's expected payoff against the uniform random strategy, the mean of
  # its two seats (value_against_uniform).
  value_vs_uniform: float = float("nan")
  decisions: int = 0
  shared_decisions: int = 0
  mean_init_seconds: float = 0.0
  mean_move_seconds: float = 0.0
  infosets_defined: int = 0
  infosets_total: int = 0
  matches: int = 0
  seconds: float = 0.0

  @property
  def policy(self):
    """The assembled strategy as an OpenSpiel TabularPolicy (None before `slots`)."""
    if self.slots is None:
      return None
    if self._policy is None:
      self._policy = self.tree.slots_to_tabular_policy(self.slots)
    return self._policy


def _bot_factory(player, game, budget):
  """(player_id, seed) -> Bot, from a player string/PlayerSpec or a factory callable."""
  if callable(player) and not isinstance(player, (str, registry.PlayerSpec)):
    return lambda player_id, seed: player(game, player_id, seed, budget)
  spec = registry.parse_player(player)
  if spec.interactive:
    raise ValueError(f"Player {spec} is interactive and cannot be evaluated.")
  return lambda player_id, seed: registry.make_bot(spec, game, player_id, seed, budget)


def _player_seeds(seed):
  return [int(s) for s in np.random.SeedSequence(seed, spawn_key=(2,)).generate_state(2)]


def _policy_of(bot, state, player):
  """The bot's (policy as {action: probability}, chosen action) at `state`, checked."""
  try:
    pairs, chosen = bot.step_with_policy(state)
  except (pyspiel.SpielError, RuntimeError, NotImplementedError) as error:
    raise ValueError(f"The player does not report its policy (step_with_policy): "
                     f"{error}") from None
  return _checked(pairs, state, player), int(chosen)


def _checked(pairs, state, player):
  """[(action, probability)] at `state` as {legal action: probability}, normalised."""
  legal = set(state.legal_actions(player))
  probabilities = {}
  for action, probability in pairs:
    if probability > 0 and action not in legal:
      raise ValueError(f"The player gives probability {probability} to illegal action "
                       f"{action} at {state.information_state_string(player)!r}.")
    probabilities[int(action)] = probabilities.get(int(action), 0.0) + float(probability)
  total = sum(probabilities.values())
  if not total > 0:
    raise ValueError("The player reported a policy with no positive probability at "
                     f"{state.information_state_string(player)!r}.")
  return {a: p / total for a, p in probabilities.items() if a in legal}


def _fill(tree, slots, infoset, probabilities):
  offset = int(tree.infoset_action_offset[infoset])
  count = int(tree.infoset_num_actions[infoset])
  actions = tree.infoset_actions[offset:offset + count].tolist()
  row = np.array([probabilities.get(a, 0.0) for a in actions])
  slots[offset:offset + count] = row / row.sum()


def value_against_uniform(tree, slots):
  """The mean over both seats of the expected payoff of the profile `slots` (slot
  form) playing that seat against the uniform random strategy: exact, the [S]
  Table 5.7 RND column's expectation for a fixed strategy."""
  uniform = tree.uniform_slots()
  values = []
  for seat in (0, 1):
    mixed = uniform.copy()
    own = tree.infoset_player[tree.slot_infoset] == seat
    mixed[own] = slots[own]
    values.append(float(exact_br.on_policy_values(tree, mixed)[seat]))
  return sum(values) / 2


def _finish(evaluation, tree, slots, start):
  result = exact_br.nash_conv_slots(tree, slots)
  evaluation.tree, evaluation.slots = tree, slots
  evaluation.nash_conv = result.nash_conv
  evaluation.exploitability = result.nash_conv / 2
  evaluation.value_vs_uniform = value_against_uniform(tree, slots)
  evaluation.infosets_total = tree.num_infosets
  evaluation.seconds = time.perf_counter() - start
  return evaluation


def _check_sequential(game):
  if game.get_type().dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
    raise ValueError(f"Evaluators need a sequential game; load {game} with "
                     "pyspiel.load_game_as_turn_based.")


class _Traversal:
  """Asks one player's bots at each of its information sets (traversing evaluator)."""

  def __init__(self, game, tree, make, evaluation):
    self.game, self.tree, self.make, self.evaluation = game, tree, make, evaluation
    self.init_seconds = self.move_seconds = 0.0
    self.bots = 0

  def new_bot(self, acting, seed):
    clock = time.perf_counter()
    bot = self.make(acting, seed)
    self.init_seconds += time.perf_counter() - clock
    self.bots += 1
    return bot

  def decide(self, bot, state, acting):
    clock = time.perf_counter()
    result = _policy_of(bot, state, acting)
    self.move_seconds += time.perf_counter() - clock
    self.evaluation.decisions += 1
    return result

  def decide_groups(self, parent, following, acting, share_decisions=True):
    """Yields (bot, [(infoset, state, {action: probability})]) for the pairs
    `following` of an information set and the state where the bot `parent` decided
    before it (None: `parent` is fresh), one group at a time: each group's bot is a
    copy of `parent` (the last group's is `parent` itself, which the caller no longer
    uses: one copy fewer alive), held to the action leading on (bots with
    force_action), that decided at the group's first information set; the others in
    the group are those where `parent.decision_key` (bots that have it, with `share_decisions`)
    gives the same key, which the bot's `current_policy` answers without deciding
    again. Each information set's representative state (CompiledTree.
    infoset_states) is rebuilt here, for these pairs only: holding one per
    information set took IIGoofspiel{6}'s evaluation past 8 GB (docs/reproductions.md)."""
    representatives = dict(self.tree.infoset_states([i for i, _ in following]))
    forcing = parent.provides_force_action()
    keyed = share_decisions and callable(getattr(parent, "decision_key", None))
    groups = {}
    for infoset, parent_state in following:
      target = representatives[infoset]
      action = (int(self.tree.infoset_actions[self.tree.infoset_parent_slot[infoset]])
                if parent_state is not None else None)
      key = parent.decision_key(target) if keyed else None
      key = ("alone", infoset) if key is None else (action if forcing else None, key)
      groups.setdefault(key, []).append((infoset, target, parent_state, action))
    groups = list(groups.values())
    for index, members in enumerate(groups):
      bot = parent if index == len(groups) - 1 else parent.clone()
      (infoset, target, parent_state, action), rest = members[0], members[1:]
      if parent_state is not None and forcing:
        bot.force_action(parent_state, action)
      state = self.feed(bot, target, acting, _last_own_move(target, acting))
      decided = [(infoset, state, self.decide(bot, state, acting)[0])]
      for infoset, target, _, _ in rest:
        decided.append((infoset, target, _checked(bot.current_policy(target), target,
                                                  acting)))
        self.evaluation.decisions += 1
        self.evaluation.shared_decisions += 1
      yield bot, decided

  def feed(self, bot, target, acting, start=0):
    """Replays `target`'s history from move `start`: tells the bot the other moves and
    has it choose (then holds it to the history's action) at its own decisions."""
    state = self.game.new_initial_state()
    for index, action in enumerate(target.history()):
      if index >= start:
        if state.current_player() == acting:
          self.decide(bot, state, acting)
          if bot.provides_force_action():
            bot.force_action(state, action)
        else:
          bot.inform_action(state, state.current_player(), action)
      state.apply_action(action)
    return state


def _last_own_move(state, acting):
  """Index in state.history() just after `acting`'s last move (0 if none)."""
  last = 0
  for index, step in enumerate(state.full_history()):
    if step.player == acting:
      last = index + 1
  return last


def traversing_evaluation(game, player, budget=limits.Budget(), seed=0, progress=None,
                          progress_seconds=0.5, share_prefixes=True,
                          share_decisions=True):
  """Asks the player at every information set of the game; exact ([S] §3.5).

  With `share_prefixes`, a clonable bot (`is_clonable()`) is asked once per
  information set: each information set's bot is a copy of the bot
  that decided at the player's previous information set, held to the action leading
  on (CFRPlayground's copying). Otherwise (or for bots that cannot be cloned) a
  fresh bot replays each information set's whole history: the same policy, at the
  cost of re-deciding every earlier decision. With `share_decisions` too, a bot
  offering `decision_key(state)` and `current_policy(state)` (continual resolving
  with iteration budgets) decides once for all information sets after the same
  decision whose keys are equal (the copies would end equal); the others read its
  policy (`Evaluation.shared_decisions` counts them): the same strategy, with one
  resolve per subgame instead of one per information set.

  Args:
    game: a small two-player zero-sum sequential perfect-recall pyspiel game.
    player: a player string / PlayerSpec, or a callable
      (game, player_id, seed, budget) -> pyspiel.Bot.
    budget: pre-play and per-move limits given to every bot.
    seed: base seed; each seat's bot gets one seed used for all its replays.
    progress: optional callable taking the closing line; with it, a progress bar.
  """
  _check_sequential(game)
  start = time.perf_counter()
  tree = compiled_tree.cached_tree(game)
  make = _bot_factory(player, game, budget)
  seeds = _player_seeds(seed)
  slots = tree.uniform_slots()
  evaluation = Evaluation("traversing")
  traversal = _Traversal(game, tree, make, evaluation)
  sequences = _SequenceTrees(tree)
  meter = progress_bars.bar(tree.num_infosets, "infoset", "traversing",
                            interval=progress_seconds, shown=progress is not None)
  report = meter.update
  with _long_lived_frozen():
    _traverse_seats(tree, traversal, sequences, seeds, slots, report, share_prefixes,
                    share_decisions)
  meter.close()
  if progress is not None:
    progress(f"traversing: {tree.num_infosets} information sets, "
             f"{time.perf_counter() - start:.1f} s")
  evaluation.mean_init_seconds = traversal.init_seconds / max(traversal.bots, 1)
  evaluation.mean_move_seconds = traversal.move_seconds / max(evaluation.decisions, 1)
  evaluation.infosets_defined = tree.num_infosets
  # The bots' tables of the tree (whole-tree walk, in-place subgames' arrays, trace
  # counts: 112 B a history) go before the best response too; what is expensive to
  # rebuild stays for the next evaluation (docs/reproductions.md, IIGoofspiel{7}).
  flat_tree.forget(tree)
  return _finish(evaluation, tree, slots, start)


@contextlib.contextmanager
def _long_lived_frozen():
  """The objects that exist when the block starts (the game's and the evaluation's:
  millions of Python lists on a large game) are frozen (gc.freeze) until it ends, so
  that the collector's full passes, which free the bots' reference cycles (a view
  and its keys, a solver and its view), run as often as the bots' objects ask, not
  after a quarter of those millions: IIGoofspiel{7}'s uncollected views grew 4 GB
  in a few thousand decisions (docs/reproductions.md). Nothing is done if the
  caller froze objects or the collector is off."""
  if not gc.isenabled() or gc.get_freeze_count():
    yield
    return
  gc.freeze()
  gc.collect()
  try:
    yield
  finally:
    gc.collect()  # (the last bots' cycles, before the best response)
    gc.unfreeze()


def _traverse_seats(tree, traversal, sequences, seeds, slots, report, share_prefixes,
                    share_decisions):
  """traversing_evaluation's walk over both seats' information sets."""
  for acting in (0, 1):
    first = traversal.new_bot(acting, seeds[acting])
    roots = [i for i in np.flatnonzero(tree.infoset_player == acting).tolist()
             if sequences.parent[i] < 0]
    if share_prefixes and first.is_clonable():
      # Depth first: one group's copy at each level is alive at a time.
      stack = [traversal.decide_groups(first, [(i, None) for i in roots], acting,
                                       share_decisions)]
      first = None
      while stack:
        step = next(stack[-1], None)
        if step is None:
          stack.pop()
          continue
        bot, group = step
        following = []
        for infoset, state, probabilities in group:
          _fill(tree, slots, infoset, probabilities)
          report()
          following += [(child, state) for child in sequences.children[infoset]]
        if following:
          stack.append(traversal.decide_groups(bot, following, acting,
                                               share_decisions))
        bot = step = None  # (held by the stack's generator only, which hands it on)
    else:
      own = np.flatnonzero(tree.infoset_player == acting).tolist()
      for infoset, target in tree.infoset_states(own):
        bot = first if first is not None else traversal.new_bot(acting, seeds[acting])
        first = None
        state = traversal.feed(bot, target, acting)
        _fill(tree, slots, infoset, traversal.decide(bot, state, acting)[0])
        report()
    # This seat's bots are freed before the next seat's is built and before the best
    # response: the peak is the larger of the phases, not their sum.
    first = bot = step = None
    gc.collect()


class TerminalAvoidingRandomBot(pyspiel.Bot):
  """Uniform random among the moves that do not end the match, if there are any."""

  def __init__(self, player_id, seed):
    pyspiel.Bot.__init__(self)
    self._player_id = player_id
    self._rng = np.random.RandomState(seed % 2**32)

  def restart_at(self, state):
    pass

  def step(self, state):
    contracts.check_turn(state, self._player_id)
    legal = state.legal_actions(self._player_id)
    continuing = [a for a in legal if not state.child(a).is_terminal()]
    return int(self._rng.choice(continuing or legal))


class _SequenceTrees:
  """Each player's information sets as a tree of own decisions (perfect recall)."""

  def __init__(self, tree):
    parent_slot = tree.infoset_parent_slot
    self.parent = np.where(parent_slot >= 0, tree.slot_infoset[parent_slot], -1)
    self.children = [[] for _ in range(tree.num_infosets)]
    self.own_depth = np.zeros(tree.num_infosets, dtype=np.int64)
    for infoset in np.argsort(tree.node_depth[tree.infoset_node], kind="stable"):
      parent = self.parent[infoset]
      if parent >= 0:
        self.children[parent].append(int(infoset))
        self.own_depth[infoset] = self.own_depth[parent] + 1
    self.player = tree.infoset_player
    self._descendants = {}

  def descendants(self, infoset):
    """`infoset` and every information set of its player below it."""
    if infoset not in self._descendants:
      found, stack = [], [infoset]
      while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(self.children[current])
      self._descendants[infoset] = found
    return self._descendants[infoset]

  def same_depth(self, infoset):
    return np.flatnonzero((self.player == self.player[infoset]) &
                          (self.own_depth == self.own_depth[infoset])).tolist()


def _solver_of(bot, tree):
  """The sampling solver whose sums a bot's decisions leave behind, or None."""
  solver = bot.decision_solver() if isinstance(bot, contracts.SolvingBot) else None
  if isinstance(solver, contracts.SumsSolver) and solver.runs_on(tree):
    return solver
  return None


class _RecordingBot(pyspiel.Bot):
  """Wraps the evaluated bot; every decision adds its strategies to the aggregate."""

  def __init__(self, inner, player_id, aggregate, weighting, scope, tree, sequences):
    pyspiel.Bot.__init__(self)
    self._inner = inner
    self._player_id = player_id
    self._aggregate = aggregate
    self._weighting = weighting
    self._scope = scope
    self._tree = tree
    self._sequences = sequences
    self.move_seconds = 0.0
    self.decisions = 0

  def restart_at(self, state):
    self._inner.restart_at(state)

  def inform_action(self, state, player_id, action):
    self._inner.inform_action(state, player_id, action)

  def _add(self, key, weights):
    total = sum(weights.values())
    if not total > 0:
      return
    scale = 1.0 / total if self._weighting == "uniform" else 1.0
    target = self._aggregate.setdefault((self._player_id, key), {})
    for action, weight in weights.items():
      target[action] = target.get(action, 0.0) + scale * weight

  def _scoped_infosets(self, infoset, solver):
    if self._scope == "successors":
      return self._sequences.descendants(infoset)
    if solver.targeting_probability > 0.0:
      return [infoset] + self._sequences.children[infoset]
    return self._sequences.same_depth(infoset)

  def step(self, state):
    clock = time.perf_counter()
    probabilities, action = _policy_of(self._inner, state, self._player_id)
    self.move_seconds += time.perf_counter() - clock
    self.decisions += 1
    key = state.information_state_string(self._player_id)
    computed = (self._inner.computed_strategy
                if isinstance(self._inner, contracts.ComputedStrategyBot) else None)
    solver = _solver_of(self._inner, self._tree)
    if self._scope == "current" or (computed is None and solver is None):
      self._add(key, probabilities)
    elif computed is not None:
      for other_key, weights in dict(computed()).items():
        self._add(other_key, dict(weights))
    else:
      infoset = self._tree.infoset_index(self._player_id, key)
      for other in self._scoped_infosets(infoset, solver):
        self._add(self._tree.infoset_keys[other],
                  solver.average_sums(self._tree, other))
    return action


def first_action_nash_conv(game, player, budget=limits.Budget(), seed=0):
  """NashConv of the player's first action strategies ([S] §6, Figs 6.2-6.3;
  first_action.py): each seat's bot, seeded as traversing_evaluation(game, player,
  budget, seed) seeds it, decides at its first information set and the whole-game
  strategy it then holds is evaluated."""
  _check_sequential(game)
  make = _bot_factory(player, game, budget)
  return first_action.first_action_evaluation(compiled_tree.cached_tree(game), make,
                                              _player_seeds(seed))[0]


def game_playing_evaluation(game, player, budget=limits.Budget(), num_matches=100,
                            seed=0, weighting="visits", scope="successors",
                            progress=None, progress_seconds=0.5):
  """Lisý et al. (2015)'s aggregate method: matches against a random opponent ([S] §3.5).

  Args:
    game: a two-player zero-sum sequential perfect-recall pyspiel game (its tree is
      compiled to compute the exact exploitability).
    player: a player string / PlayerSpec, or a callable
      (game, player_id, seed, budget) -> pyspiel.Bot.
    budget: pre-play and per-move limits of the evaluated bot.
    num_matches: matches to play; the evaluated player alternates seats.
    seed: base seed of the matches.
    weighting: "visits" or "uniform" (see the module docstring).
    scope: "successors", "thesis" or "current" (see the module docstring).
    progress: optional callable taking the closing line; with it, a progress bar.
  """
  _check_sequential(game)
  if weighting not in WEIGHTINGS:
    raise ValueError(f"weighting must be one of {', '.join(WEIGHTINGS)}, got "
                     f"{weighting!r}.")
  if scope not in SCOPES:
    raise ValueError(f"scope must be one of {', '.join(SCOPES)}, got {scope!r}.")
  if int(num_matches) < 1:
    raise ValueError(f"num_matches must be >= 1, got {num_matches}.")
  start = time.perf_counter()
  tree = compiled_tree.cached_tree(game)
  sequences = _SequenceTrees(tree)
  make = _bot_factory(player, game, budget)
  aggregate = {}
  evaluation = Evaluation("game_playing", matches=int(num_matches))
  init_seconds = move_seconds = 0.0
  meter = progress_bars.bar(int(num_matches), "match", "game-playing",
                            interval=progress_seconds, shown=progress is not None)
  for index in range(int(num_matches)):
    seat = index % 2
    seeds = matches.match_seeds(seed, "evaluated", "random", seat, index)
    clock = time.perf_counter()
    evaluated = _RecordingBot(make(seat, seeds.bots[seat]), seat, aggregate, weighting,
                              scope, tree, sequences)
    init_seconds += time.perf_counter() - clock
    bots = [None, None]
    bots[seat] = evaluated
    bots[1 - seat] = TerminalAvoidingRandomBot(1 - seat, seeds.bots[1 - seat])
    matches.play(game, bots, seeds.chance)
    move_seconds += evaluated.move_seconds
    evaluation.decisions += evaluated.decisions
    meter.update()
  meter.close()
  if progress is not None:
    progress(f"game-playing: {num_matches} matches, {len(aggregate)}/"
             f"{tree.num_infosets} information sets defined, "
             f"{time.perf_counter() - start:.1f} s")
  slots = tree.uniform_slots()
  for (acting, key), weights in aggregate.items():
    try:
      infoset = tree.infoset_index(acting, key)
    except KeyError as error:
      raise ValueError(f"The player reported a strategy for {error}") from None
    _fill(tree, slots, infoset, weights)
  evaluation.mean_init_seconds = init_seconds / int(num_matches)
  evaluation.mean_move_seconds = move_seconds / max(evaluation.decisions, 1)
  evaluation.infosets_defined = len(aggregate)
  return _finish(evaluation, tree, slots, start)
