"""Continual resolving for two-player zero-sum games ([S] ch. 2, §3.4.1, §6, App. A.5).

DeepStack's continual resolving (Moravčík et al. 2017) generalised to any two-player
zero-sum sequential perfect-recall game, as in [S] ch. 2 and MCCR (Šustr et al. 2019).
`ContinualResolvingBot` is a pyspiel.Bot; its parts follow the thesis's player:

* Subgames ([S] ch. 2). A history ha is a subgame root if P(h) and P(ha) are the two
  players (a chance node in between makes no root); the game's root is one too. The
  bot's first decision of a match (after pre-play) solves the whole game. A resolver
  (one per visited subgame) traces, before solving, every pair (r, s) of a next turn s
  of the bot in a different subgame and the root r closest above s, and maps the bot's
  information state at s and the opponent's at s to sets of roots, merging sets that
  intersect (union-find). At its next turn the bot looks its information state up in
  this map: found, it resolves the new subgame; absent, it is still in the same
  subgame and the same resolver keeps improving ([S] §3.4.1).
* Gadget inputs ([S] ch. 2, DeepStack), collected while solving: for every next root r,
  w(r) = π_{-o}(r) (chance × the bot's reach) and the opponent's value v_o(r), both in
  the original game's units. Counterfactual values CBV(I) = Σ_{h∈I} w(h) v_o(h) per
  opponent root information set I are gadgets.py's unnormalised convention; with
  k_I = Σ_{h∈I} w(h), CBV(I) = k_I · CBV_norm(I), where CBV_norm(I) is the self-play
  mean over iterations Σ_t Σ_{h∈I} w_t(h) v_t(h) / Σ_t Σ_{h∈I} w_t(h) and k_I uses the
  mean reach (1/T) Σ_t w_t. Full-width solvers add the exact quantities of each
  iteration's current strategy. Sampling solvers estimate CBV_norm(I) with the sampled
  (baseline-corrected) values weighted by w(h)/q(h) (q the sampling probability; a
  self-normalised estimate: the opponent's own reach, equal on I, cancels) and take the
  mean reach through the average strategy: for plain averaging Σ_t π_i^{σ^t}(h) =
  T π_i^{σ̄}(h) (sequence-form identity), which has none of the importance-sampling
  noise and never gives zero reach to a history the bot's average strategy plays.
  Opponent information sets the solver never sampled get CBV_norm = the game's minimum
  utility (the opponent always follows there: resolving is unsafe for them, as nothing
  is known). With `use_cbr=True` (offline study, small games) the inputs are exact:
  the bot's strategy is kept on the compiled tree (trunk, then each resolved subgame
  combined in, [S] §6) and the opponent's counterfactual best response gives v_o.
* Gadgets: gadgets.make_gadget with variant resolve (CFR-D, [S] §1.4.2), max_margin
  or unsafe; a gadget is a pyspiel game solved by the configured solver:
  - "vr_mccfr" (default) / "mc_cfr": outcome-sampling VR-MCCFR / MC-CFR on live states
    ([S] §3.3.3, the thesis's candidates: DRM(1,1), cse 0.3, e 0.7, ExpAvg(0.3)) with
    incremental tree building. CFR-D-aware sampling ([S] §3.3.3): at the resolve
    gadget's follow/terminate node both actions are evaluated, terminate exactly.
    Playouts start only at or below the bot's next turn in another subgame, so that
    every next root a sample passes is valued (as [S] App. A.5 for depth limits).
  - "cfr+": CFR+ on the gadget's compiled tree;
  - "dl_cfr+": depth-limited CFR+ with RandomPlayout(n) ([S] §3.3.2, §5.2.3); only
    histories at or below the bot's next turn in another subgame may be cut ([S] A.5),
    so next roots are always expanded. The self-play values collected per iteration
    are exact for the current strategy, uniform where it was never updated (the
    random playout's expectation).
  Solver data are reset for each subgame, or kept (`keep_solver_data`, MCCR/gtlib2):
  tables of the same information states carry over.
* The bot acts from the average strategy at its information set.
* Fallbacks, so that no legal history makes it fail: if its information state is not
  in the map it stays in the current subgame; if the next gadget cannot be built (the
  estimated reach of its information state is zero, or the gadget refuses its inputs)
  it keeps the current resolver (reuses the trunk); an unsafe gadget with zero joint
  reach at the bot's histories (an opponent move the trunk gave probability 0) becomes
  a resolve gadget. Each decision's record in `decisions` says what happened.

Budgets: a pre-play limit spent at the first decision of a match before that move's
own limit, and a per-move limit; each is seconds (wall clock, checked after every
iteration, stopping early when the next iteration would overrun; the trace and gadget
construction count) or iterations (deterministic for a seed). An iteration is one
episode per player (sampling) or one CFR+ iteration (full width). With seconds, a
subgame whose roots cannot be built, or whose next turns cannot be traced, within
BUILD_SHARE / TRACE_SHARE of the decision's budget is not resolved (the bot keeps or
stays in its current subgame); the full-width solvers' compilation of each gadget
cannot be interrupted, so their time budgets hold for small games only.
"""

import copy
import dataclasses
import time

import numba
import numpy as np
import pyspiel

from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.resolving import gadgets
from ggp_cr.algorithms.sampling import outcome_sampling
from ggp_cr.algorithms.bots import players
from ggp_cr.algorithms.cfr import regret_matching
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.config import presets
from ggp_cr.algorithms.cfr import utility_estimators

SOLVERS = presets.CR_SOLVERS
SAMPLING_SOLVERS = presets.CR_SAMPLING_SOLVERS
# The sampling solvers' defaults: the thesis's VR-MCCFR candidate ([S] §5.1.2).
_THESIS = presets.THESIS_VR_MCCFR

_CHANCE = int(pyspiel.PlayerId.CHANCE)

# Tracking states along a history of the solved game ([S] ch. 2; CFRPlayground's
# CFRDTracker): before the bot's first turn in the current subgame, after it, after a
# next subgame root where the opponent acts, and at or below the bot's next turn in a
# different subgame.
FIRST, CURRENT, AFTER_ROOT, END = 0, 1, 2, 3

# Histories walked exhaustively by the perfect-recall check before it samples.
RECALL_CHECK_HISTORIES = 5_000
RECALL_CHECK_PLAYOUTS = 100
# Game strings that passed check_game with the default effort in this process.
_CHECKED_GAMES = set()


def advance(track, parent_player, child_player, player):
  """The tracking state of a child history and whether the child is a subgame root.

  A child is a root if both it and its parent are decision nodes of different
  players ([S] ch. 2).
  """
  is_root = (parent_player >= 0 and child_player >= 0 and
             parent_player != child_player)
  if track == FIRST:
    if child_player == player:
      track = CURRENT
  elif track == CURRENT:
    if is_root:
      track = END if child_player == player else AFTER_ROOT
  elif track == AFTER_ROOT:
    if child_player == player:
      track = END
  return track, is_root


@numba.njit(cache=True)
def _tracks(node_player, node_parent, player, initial):
  """`advance` over a compiled tree: the tracking state of every node."""
  num_nodes = len(node_player)
  tracks = np.empty(num_nodes, dtype=np.int8)
  tracks[0] = initial
  for node in range(1, num_nodes):
    parent_player = node_player[node_parent[node]]
    child_player = node_player[node]
    track = tracks[node_parent[node]]
    is_root = (parent_player >= 0 and child_player >= 0 and
               parent_player != child_player)
    if track == FIRST:
      if child_player == player:
        track = CURRENT
    elif track == CURRENT:
      if is_root:
        track = END if child_player == player else AFTER_ROOT
    elif track == AFTER_ROOT:
      if child_player == player:
        track = END
    tracks[node] = track
  return tracks


def _utility_sum(game):
  if game.get_type().utility == pyspiel.GameType.Utility.CONSTANT_SUM:
    return float(game.utility_sum())
  return 0.0


# --- Which games ----------------------------------------------------------------------


def check_game(game, histories=RECALL_CHECK_HISTORIES, playouts=RECALL_CHECK_PLAYOUTS,
               seed=0):
  """Raises ValueError, saying why, unless continual resolving can play `game`.

  The game must have two players, be zero-sum (or constant-sum), sequential, have
  explicit chance and information state strings, and perfect recall. Perfect recall
  (every history of an information state has the same previous own information state
  and action, and the same legal actions, compiled_tree's criterion) is checked on
  the first `histories` histories in depth-first order and on `playouts` random
  playouts beyond them: exhaustively for small games, by sampling for large ones. A
  game that passed with the default effort is not checked again in this process.
  """
  if not isinstance(game, pyspiel.Game):
    raise ValueError(f"game must be a pyspiel game, got {type(game).__name__}.")
  default = (histories, playouts, seed) == (RECALL_CHECK_HISTORIES,
                                            RECALL_CHECK_PLAYOUTS, 0)
  if default and str(game) in _CHECKED_GAMES:
    return
  game_type = game.get_type()
  why = None
  if game.num_players() != 2:
    why = f"it has {game.num_players()} players; continual resolving needs two"
  elif game_type.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
    why = ("it has simultaneous moves; convert it with "
           "pyspiel.load_game_as_turn_based")
  elif game_type.utility not in (pyspiel.GameType.Utility.ZERO_SUM,
                                 pyspiel.GameType.Utility.CONSTANT_SUM):
    why = f"it is not zero-sum or constant-sum ({game_type.utility})"
  elif game_type.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
    why = "it has sampled chance; explicit chance outcomes are needed"
  elif not game_type.provides_information_state_string:
    why = "it provides no information state strings"
  else:
    why = _recall_violation(game, histories, playouts, seed)
  if why is not None:
    raise ValueError(f"Continual resolving cannot play {game}: {why}.")
  if default:
    _CHECKED_GAMES.add(str(game))


def _recall_violation(game, histories, playouts, seed):
  """A sentence describing a perfect-recall violation found, or None."""
  seen = {}

  def visit(state, last):
    """Checks `state`; returns the (player, key, action) record for its children."""
    player = state.current_player()
    key = state.information_state_string(player)
    record = (last[player], tuple(state.legal_actions()))
    known = seen.setdefault((player, key), record)
    if known != record:
      what = ("legal actions differ" if known[1] != record[1] else
              "the player's previous information state or action differs")
      return (f"it does not have perfect recall: two histories of player {player}'s "
              f"information state {key!r} disagree ({what})")
    return None

  budget = [histories]
  stack = [(game.new_initial_state(), (None, None))]
  frontier = []
  while stack:
    state, last = stack.pop()
    if state.is_terminal():
      continue
    if budget[0] <= 0:
      frontier.append((state, last))
      continue
    budget[0] -= 1
    if state.is_chance_node():
      for action, probability in state.chance_outcomes():
        if probability > 0:
          stack.append((state.child(action), last))
      continue
    why = visit(state, last)
    if why is not None:
      return why
    player = state.current_player()
    key = state.information_state_string(player)
    for action in state.legal_actions():
      child_last = list(last)
      child_last[player] = (key, action)
      stack.append((state.child(action), tuple(child_last)))
  rng = np.random.default_rng(seed)
  for index in range(playouts if frontier else 0):
    state, last = frontier[index % len(frontier)]
    state = state.clone()
    while not state.is_terminal():
      if state.is_chance_node():
        outcomes, probabilities = zip(*state.chance_outcomes())
        state.apply_action(outcomes[rng.choice(len(outcomes), p=probabilities)])
        continue
      why = visit(state, last)
      if why is not None:
        return why
      player = state.current_player()
      action = int(rng.choice(state.legal_actions()))
      child_last = list(last)
      child_last[player] = (state.information_state_string(player), action)
      last = tuple(child_last)
      state.apply_action(action)
  return None


# --- Configuration --------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ResolverConfig:
  """How each subgame is solved (see the module docstring for the choices)."""
  solver: str = "vr_mccfr"
  variant: str = "resolve"
  keep_solver_data: bool = False
  use_cbr: bool = False
  regret_matcher: object = _THESIS["rm"]
  exploration: float = _THESIS["e"]
  cumulative_strategy_exponent: float = _THESIS["cse"]
  baseline: object = _THESIS["bl"]
  cfrd_aware_sampling: bool = True
  depth_limit: int = 4
  playouts: int = 1

  def __post_init__(self):
    if self.solver not in SOLVERS:
      raise ValueError(f"solver must be one of {', '.join(SOLVERS)}; got "
                       f"{self.solver!r}.")
    if self.variant not in gadgets.VARIANTS:
      raise ValueError(f"variant must be one of {', '.join(gadgets.VARIANTS)}; got "
                       f"{self.variant!r}.")
    object.__setattr__(self, "regret_matcher",
                       regret_matching.parse_regret_matcher(self.regret_matcher))
    object.__setattr__(self, "exploration", outcome_sampling.check_probability(
        "exploration", self.exploration))
    object.__setattr__(
        self, "cumulative_strategy_exponent",
        outcome_sampling.check_cumulative_strategy_exponent(
            self.cumulative_strategy_exponent))
    baseline = outcome_sampling.parse_baseline(self.baseline)
    if self.solver == "mc_cfr":
      baseline = None
    object.__setattr__(self, "baseline", baseline)
    for name in ("depth_limit", "playouts"):
      value = getattr(self, name)
      if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or \
          value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}.")

  @property
  def sampling(self):
    return self.solver in SAMPLING_SOLVERS


class CannotResolve(Exception):
  """The next subgame's gadget cannot be built from what is known (or in time)."""


class _OutOfTime(Exception):
  """A deadline passed during a trace."""


# Shares of a decision's time budget after which building the next gadget, and tracing
# the next turns, give up (the iterations get the rest).
BUILD_SHARE = 0.4
TRACE_SHARE = 0.6


# --- The game a resolver solves -------------------------------------------------------


class _Problem:
  """The whole game, or a gadget of a subgame, with what the estimates need.

  Per root j of the solved game (the game's root, or the subgame's roots): the root's
  original state, its w (`root_weight`) and opponent reach, and how an opponent gadget
  value converts to the original game: v_o = (v_gadget + shift_j) / scale_j.
  `prefix` is the depth of the roots in the solved game; `gate_depth` the depth of
  the resolve gadget's follow/terminate node (-1 if none).
  """

  def __init__(self, game, player, gadget=None):
    self.original = game
    self.player = player
    self.opponent = 1 - player
    self.gadget = gadget
    self.compiled = None
    if gadget is None:
      self.game = game
      self.prefix = 0
      self.gate_depth = -1
      self.root_states = [game.new_initial_state()]
      self.root_histories = [()]
      self.root_weight = [1.0]
      self.opponent_root_reach = [1.0]
      self.value_scale = [1.0]
      self.value_shift = [0.0]
      self.utility_sum = _utility_sum(game)
      return
    subgame = gadget.subgame
    self.game = gadget
    self.prefix = 1 if gadget.variant == "unsafe" else 2
    self.gate_depth = 1 if gadget.variant == "resolve" else -1
    self.root_states = subgame.root_states
    self.root_histories = list(subgame.root_histories)
    self.root_weight = subgame.reach.tolist()
    self.opponent_root_reach = (subgame.opponent_reach.tolist()
                                if subgame.opponent_reach is not None else
                                [1.0] * len(self.root_weight))
    if gadget.variant == "max_margin":
      keys = subgame.opponent_keys
      self.value_scale = [subgame.infoset_reach[k] or 1.0 for k in keys]
      self.value_shift = [subgame.opponent_values.get(k, 0.0) for k in keys]
    else:
      self.value_scale = [gadget.scale] * len(self.root_states)
      self.value_shift = [0.0] * len(self.root_states)
    self.utility_sum = 0.0

  def initial_track(self):
    if self.prefix == 0 and self.game.new_initial_state().current_player() == \
        self.player:
      return CURRENT
    return FIRST

  def root_index(self, state):
    """Index of the root a history of the solved game (at or below its root) is in."""
    return 0 if self.gadget is None else state.root

  def original_state(self, state):
    """The original game's state of a history at or below a root."""
    return state if self.gadget is None else state.inner.state

  def terminate_value(self, state):
    """The opponent's gadget payoff for terminating at the resolve gadget's gate."""
    return self.gadget.terminate_utility[state.root_infoset()]

  def tree(self):
    """The solved game's compiled tree (the process cache for the whole game)."""
    if self.compiled is None:
      self.compiled = (compiled_tree.cached_tree(self.game) if self.gadget is None
                       else self.gadget.tree())
    return self.compiled


# --- Tracing the next turns -----------------------------------------------------------


class _SubgameMap:
  """Union-find over next roots and the bot's and opponent's information states."""

  def __init__(self):
    self._parent = {}
    self._own_roots = {}
    self._groups = None

  def _find(self, item):
    parent = self._parent.setdefault(item, item)
    while parent != item:
      grandparent = self._parent[parent]
      self._parent[item] = grandparent
      item, parent = parent, grandparent
    return item

  def _union(self, a, b):
    a, b = self._find(a), self._find(b)
    if a != b:
      self._parent[a] = b

  def add(self, root_id, own_key, opponent_key):
    """Records a pair (root, next turn s) by the information states at s."""
    self._union(("root", root_id), ("own", own_key))
    self._union(("root", root_id), ("opponent", opponent_key))
    self._own_roots.setdefault(own_key, set()).add(root_id)
    self._groups = None

  def __contains__(self, own_key):
    return own_key in self._own_roots

  def own_keys(self):
    return list(self._own_roots)

  def roots(self, own_key):
    """The merged root set (sorted root ids) of the bot's information state."""
    if self._groups is None:
      self._groups = {}
      for item in list(self._parent):
        if item[0] == "root":
          self._groups.setdefault(self._find(item), []).append(item[1])
    return sorted(self._groups[self._find(("own", own_key))])

  def own_roots(self, own_key):
    """The roots of the pairs whose next turn is in the bot's information state."""
    return sorted(self._own_roots[own_key])


class _Trace:
  """The bot's next turns in other subgames below the solved game's roots ([S] ch. 2).

  Walks the solved game's histories (live states) from its root until each path
  reaches the bot's next turn in a different subgame (or ends). Per next root r (id):
  its root j, the actions from root j to r, the decisions on the way (player, key,
  action index, number of actions) and the chance probability, the opponent's
  information state at r, and r's node in `tree` if one is given. If `deadline`
  (time.perf_counter()) passes first, the trace is abandoned: it records no next
  roots and an empty map (`complete` is False), so the bot stays in this subgame.
  """

  def __init__(self, problem, tree=None, deadline=None):
    self.problem = problem
    self.tree = tree
    self.deadline = deadline
    self.complete = True
    self.current_root_nodes = {}
    self.histories_walked = 0
    self._clear()
    root = problem.game.new_initial_state()
    try:
      if not root.is_terminal():
        self._walk(root, 0, problem.initial_track(), None, 0, (), (), 1.0, 0)
    except _OutOfTime:
      self.complete = False
      self._clear()
    if tree is not None and problem.prefix == 0:
      self.current_root_nodes[0] = 0

  def _clear(self):
    self.root_ids = {}
    self.root_of = []
    self.actions = []
    self.steps = []
    self.chance = []
    self.nodes = []
    self.opponent_keys = []
    self.subgame_map = _SubgameMap()

  def _register(self, root):
    j, actions, steps, chance, node, state = root
    history = tuple(self.problem.root_histories[j]) + actions
    root_id = self.root_ids.get(history)
    if root_id is None:
      root_id = len(self.root_of)
      self.root_ids[history] = root_id
      self.root_of.append(j)
      self.actions.append(actions)
      self.steps.append(steps)
      self.chance.append(chance)
      self.nodes.append(node)
      self.opponent_keys.append(state.information_state_string(self.problem.opponent))
    return root_id

  def _walk(self, state, depth, track, root, j, actions, steps, chance, node):
    problem = self.problem
    player = problem.player
    self.histories_walked += 1
    if self.deadline is not None and time.perf_counter() > self.deadline:
      raise _OutOfTime()
    acting = state.current_player()
    if state.is_chance_node():
      branches = [(a, p) for a, p in state.chance_outcomes()]
      key = None
    else:
      branches = [(a, None) for a in state.legal_actions()]
      key = (state.information_state_string(acting) if depth >= problem.prefix
             else None)
    first_child = int(self.tree.node_first_child[node]) if self.tree is not None else 0
    for index, (action, probability) in enumerate(branches):
      if probability is not None and probability <= 0:
        continue
      child = state.child(action)
      if child.is_terminal():
        continue
      child_node = first_child + index if self.tree is not None else -1
      child_track, is_root = advance(track, acting, child.current_player(), player)
      child_depth = depth + 1
      child_j, child_actions, child_steps, child_chance = j, actions, steps, chance
      if child_depth == problem.prefix:
        child_j = problem.root_index(child)
        child_actions, child_steps, child_chance = (), (), 1.0
        self.current_root_nodes[child_j] = child_node
      elif child_depth > problem.prefix:
        child_actions = actions + (action,)
        if probability is None:
          child_steps = steps + ((acting, key, index, len(branches)),)
        else:
          child_chance = chance * probability
      child_root = root
      if is_root and child_depth > problem.prefix and track in (CURRENT, AFTER_ROOT):
        child_root = (child_j, child_actions, child_steps, child_chance, child_node,
                      problem.original_state(child))
      if child_track == END:
        root_id = self._register(child_root)
        original = problem.original_state(child)
        self.subgame_map.add(root_id, original.information_state_string(player),
                             original.information_state_string(problem.opponent))
        continue
      self._walk(child, child_depth, child_track, child_root, child_j, child_actions,
                 child_steps, child_chance, child_node)

  @property
  def num_roots(self):
    return len(self.root_of)

  def root_state(self, root_id):
    """The original game's state of next root `root_id`."""
    state = self.problem.root_states[self.root_of[root_id]].clone()
    for action in self.actions[root_id]:
      state.apply_action(action)
    return state


# --- Solvers with estimate collection -------------------------------------------------


class _SamplingSolver:
  """Outcome-sampling MC-CFR / VR-MCCFR on live states ([S] §3.3.3, Algorithm 2) that
  collects the next subgames' estimates and samples CFR-D-aware (module docstring).

  The updates are outcome_sampling.OutcomeSamplingSolver's (alternating episodes,
  exploration e for the updated player, stochastically weighted averaging with the
  cumulative-strategy exponent, ExpAvg baselines, playouts for new information
  states); targeting is not used (the thesis's choice t = 0 for continual resolving,
  [S] §5.2.2).
  """

  def __init__(self, problem, trace, config, seed, warm=None):
    self.problem = problem
    self.trace = trace
    self._params = config.regret_matcher.params()
    outcome_sampling.warm_up(config.regret_matcher)
    self._exploration = config.exploration
    self._cse = config.cumulative_strategy_exponent
    self._decay = config.baseline.alpha if config.baseline is not None else None
    self._cfrd_aware = config.cfrd_aware_sampling and problem.gate_depth >= 0
    self._rng = outcome_sampling.SplitMix64(seed)
    self._track = problem.initial_track()
    self.table = {}
    self.iterations = 0
    self.nodes_touched = 0
    self.value_sum = [0.0] * trace.num_roots
    self.weight_sum = [0.0] * trace.num_roots
    if warm is not None:
      self.iterations = warm.iterations
      for key, data in warm.table.items():
        if not key.startswith(gadgets.GADGET_PREFIX):
          self.table[key] = copy.deepcopy(data)

  def iteration(self):
    self.iterations += 1
    for player in (0, 1):
      self._walk(self.problem.game.new_initial_state(), player, 0, 1.0, 1.0, 1.0, 1.0,
                 self._track, 1.0, 0)

  def _playout(self, state, player):
    rng = self._rng
    while not state.is_terminal():
      self.nodes_touched += 1
      if state.is_chance_node():
        outcomes, probs = zip(*state.chance_outcomes())
        state.apply_action(outcomes[outcome_sampling.sample_index(probs, rng.random())])
      else:
        actions = state.legal_actions()
        state.apply_action(actions[int(rng.random() * len(actions))])
    self.nodes_touched += 1
    return state.player_return(player)

  def _collect(self, root_id, player, value, weight, j):
    problem = self.problem
    opponent_value = value if player == problem.opponent else problem.utility_sum - value
    original = (opponent_value + problem.value_shift[j]) / problem.value_scale[j]
    self.value_sum[root_id] += weight * original
    self.weight_sum[root_id] += weight

  def _update(self, data, acting, player, strategy, action_values, value, weight):
    if acting == player:
      data.regret_updates += 1
      regret_matching.accumulate_regrets(
          data.regrets, 0, len(data.actions), weight * (action_values - value),
          self._params, float(data.regret_updates))
    else:
      t = self.iterations
      if self._cse > 0.0 and data.last_average_iteration > 0:
        data.cumulative *= (data.last_average_iteration / t) ** self._cse
      data.cumulative += weight * strategy
      data.last_average_iteration = t

  def _data(self, state, acting):
    key = state.information_state_string(acting)
    data = self.table.get(key)
    is_new = data is None
    if is_new:
      data = outcome_sampling.InfosetData(state.legal_actions(), self._decay is not None)
      self.table[key] = data
    else:
      regret_matching.current_strategy(data.regrets, data.strategy, 0,
                                       len(data.actions), self._params)
    data.visits += 1
    return data, is_new

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
      track, _ = advance(track, _CHANCE, state.current_player(), problem.player)
      return self._walk(state, player, depth, reach0, reach1, reach_chance * probability,
                        q * probability, track, w, j)
    if depth == problem.gate_depth and self._cfrd_aware:
      return self._gate(state, player, depth, reach0, reach1, reach_chance, q, track)
    acting = state.current_player()
    data, is_new = self._data(state, acting)
    actions = data.actions
    strategy = data.strategy
    if acting == player and self._exploration > 0.0:
      sampling = (self._exploration / len(actions) +
                  (1.0 - self._exploration) * strategy).tolist()
    else:
      sampling = strategy.tolist()
    index = outcome_sampling.sample_index(sampling, self._rng.random())
    sampled = sampling[index]
    sigma = float(strategy[index])
    state.apply_action(actions[index])
    child_track, is_root = advance(track, acting, state.current_player(),
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
    if is_root and child_depth > problem.prefix and track in (CURRENT, AFTER_ROOT):
      root_id = self.trace.root_ids.get(
          tuple(problem.original_state(state).history()), -1)
    child_q = q * sampled
    if is_new and child_track == END:
      child_value = self._playout(state, player)
    else:
      child_value = self._walk(
          state, player, child_depth, reach0 * sigma if acting == 0 else reach0,
          reach1 * sigma if acting == 1 else reach1, reach_chance, child_q,
          child_track, child_w, child_j)
    if root_id >= 0:
      self._collect(root_id, player, child_value, child_w / child_q, child_j)
    if data.baselines is not None:
      baseline = data.baselines[player]
      action_values = baseline.copy()
      action_values[index] += (child_value - baseline[index]) / sampled
      baseline[index] += self._decay * (child_value - baseline[index])
    else:
      action_values = np.zeros(len(actions))
      action_values[index] = child_value / sampled
    value = float(strategy @ action_values)
    reach_other = (reach1 if player == 0 else reach0) * reach_chance
    self._update(data, acting, player, strategy, action_values, value, reach_other / q)
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
    child_track, _ = advance(track, opponent, state.current_player(), problem.player)
    j = problem.root_index(state)
    follow_value = self._walk(
        state, player, depth + 1, reach0 * sigma if opponent == 0 else reach0,
        reach1 * sigma if opponent == 1 else reach1, reach_chance, q, child_track,
        problem.root_weight[j], j)
    action_values = np.full(len(data.actions), terminate_value)
    action_values[follow] = follow_value
    value = float(strategy @ action_values)
    reach_other = (reach1 if player == 0 else reach0) * reach_chance
    self._update(data, opponent, player, strategy, action_values, value, reach_other / q)
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
      if key.startswith(gadgets.GADGET_PREFIX):
        continue
      try:
        infoset = tree.infoset_index(player, key)
      except KeyError:
        continue
      result[infoset] = dict(zip(data.actions, data.average().tolist()))
    return result

  def estimates(self, root_ids):
    """(w, opponent reach, value sums, weight sums) of the next roots `root_ids`, as
    arrays over all next roots (zero elsewhere; module docstring)."""
    trace = self.trace
    problem = self.problem
    averages = {}

    def probability(key, index, count):
      if key not in averages:
        data = self.table.get(key)
        averages[key] = data.average() if data is not None else None
      average = averages[key]
      return 1.0 / count if average is None else float(average[index])

    num_roots = trace.num_roots
    reach = np.zeros(num_roots)
    opponent_reach = np.zeros(num_roots)
    for root_id in root_ids:
      j = trace.root_of[root_id]
      own = problem.root_weight[j] * trace.chance[root_id]
      other = problem.opponent_root_reach[j]
      for acting, key, index, count in trace.steps[root_id]:
        if acting == problem.player:
          own *= probability(key, index, count)
        else:
          other *= probability(key, index, count)
      reach[root_id] = own
      opponent_reach[root_id] = other
    return reach, opponent_reach, np.array(self.value_sum), np.array(self.weight_sum)


class _FullWidthSolver:
  """CFR+ (or depth-limited CFR+ with RandomPlayout, [S] §3.3.2) on the solved game's
  compiled tree, adding each iteration's exact self-play estimates at the next roots."""

  def __init__(self, problem, trace, config, seed, warm=None):
    self.problem = problem
    self.trace = trace
    tree = problem.tree()
    self.tree = tree
    if config.solver == "cfr+":
      self.solver = cfr.CFRPlusSolver(tree)
    else:
      estimable = _tracks(tree.node_player, tree.node_parent, problem.player,
                          problem.initial_track()) == END
      self.solver = cfr.GeneralCFRSolver(
          tree, regret_matcher="rm+", alternating_updates=True,
          cumulative_strategy_exponent=1.0, depth_limit=config.depth_limit,
          utility_estimator=utility_estimators.RandomPlayout(config.playouts, seed),
          estimable=estimable)
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
      if key.startswith(gadgets.GADGET_PREFIX):
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
    state["weight_scale"] = old_state["weight_scale"]
    self.solver.load_state_dict(state)

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
    original = (values + self._shift) / self._scale
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


# --- One resolver per subgame ---------------------------------------------------------


class _Resolver:
  """Solves one subgame (or the whole game) and prepares the next subgames."""

  def __init__(self, problem, config, seed, warm=None, trunk=None, deadline=None):
    self.problem = problem
    self.config = config
    self.trunk = trunk
    tree = None if config.sampling else problem.tree()
    self.trace = _Trace(problem, tree, deadline)
    if warm is not None and warm.config.sampling != config.sampling:
      warm = None
    solver_type = _SamplingSolver if config.sampling else _FullWidthSolver
    self.solver = solver_type(problem, self.trace, config, seed,
                              warm.solver if warm is not None else None)

  def run(self, limit, start):
    """Iterates for `limit` from time `start`; returns the iterations done."""
    solver = self.solver
    if limit.iterations is not None:
      for _ in range(limit.iterations):
        solver.iteration()
      return limit.iterations
    if not limit.seconds:
      return 0
    deadline = start + limit.seconds
    done = 0
    longest = 0.0
    while True:
      now = time.perf_counter()
      if now + 2.0 * longest >= deadline:
        return done
      solver.iteration()
      longest = max(0.95 * longest, time.perf_counter() - now)
      done += 1

  def probabilities(self, key, legal):
    """The average strategy at the bot's information state (uniform if unknown)."""
    probabilities = self.solver.probabilities(key, legal)
    if probabilities is None or not sum(probabilities) > 0:
      return [1.0 / len(legal)] * len(legal)
    total = sum(probabilities)
    return [p / total for p in probabilities]

  def combined_profile(self, tree):
    """The bot's strategy so far on the original game's tree ([S] §6's combination):
    the trunk with the bot's information states here replaced by this solve's average
    strategy (the whole game: this solve's average strategy for both players)."""
    problem = self.problem
    if self.config.sampling:
      if self.trunk is None:
        return outcome_sampling.TablePolicy(problem.original,
                                            self.solver.table).to_slots(tree)
      profile = self.trunk.copy()
      for infoset, probabilities in self.solver.own_average_strategies(
          tree, problem.player).items():
        offset = int(tree.infoset_action_offset[infoset])
        count = int(tree.infoset_num_actions[infoset])
        actions = tree.infoset_actions[offset:offset + count].tolist()
        profile[offset:offset + count] = [probabilities[a] for a in actions]
      return profile
    if problem.gadget is None:
      return self.solver.average_slots()
    return gadgets.combine(tree, self.trunk, problem.gadget, self.solver.average_slots())

  def next_subgame(self, own_key, variant, deadline=None):
    """The gadget of the bot's information state `own_key` (in the map), with use_cbr
    the combined profile, and a record of the inputs; raises CannotResolve (also
    when time.perf_counter() passes `deadline` while the roots are rebuilt)."""
    problem = self.problem
    trace = self.trace
    group = trace.subgame_map.roots(own_key)
    own = trace.subgame_map.own_roots(own_key)
    profile = None
    if self.config.use_cbr:
      tree = compiled_tree.cached_tree(problem.original)
      profile = self.combined_profile(tree)
      reach, opponent_reach, values = self._exact_inputs(tree, profile, group)
    else:
      reach, opponent_reach, value_sum, weight_sum = self.solver.estimates(group)
    if not sum(reach[r] for r in own) > 0:
      raise CannotResolve("the estimated reach of the bot's own information state is "
                          "zero")
    by_key = {}
    for root_id in group:
      totals = by_key.setdefault(trace.opponent_keys[root_id], [0.0, 0.0, 0.0])
      totals[0] += reach[root_id]
      if self.config.use_cbr:
        totals[1] += reach[root_id] * values[root_id]
      else:
        totals[1] += value_sum[root_id]
        totals[2] += weight_sum[root_id]
    opponent_values = {}
    unsampled = 0
    fallback = problem.original.min_utility()
    for key, (k, total, weight) in by_key.items():
      if not k > 0:
        continue
      if self.config.use_cbr:
        opponent_values[key] = total
      elif weight > 0:
        opponent_values[key] = k * total / weight
      else:
        opponent_values[key] = k * fallback
        unsampled += 1
    if variant == "unsafe" and not sum(reach[r] * opponent_reach[r] for r in own) > 0:
      variant = "resolve"
    states = []
    for root_id in group:
      if deadline is not None and time.perf_counter() > deadline:
        raise CannotResolve(f"its {len(group)} roots could not be built within the "
                            "time budget")
      states.append(trace.root_state(root_id))
    try:
      subgame = gadgets.Subgame(
          problem.original, problem.player, states,
          [reach[r] for r in group], opponent_values,
          opponent_reach=[opponent_reach[r] for r in group])
      gadget = gadgets.make_gadget(subgame, variant)
    except ValueError as error:
      raise CannotResolve(str(error)) from None
    info = {"roots": len(group), "opponent_infosets": len(opponent_values),
            "unsampled_opponent_infosets": unsampled, "variant": variant}
    return gadget, profile, info

  def _exact_inputs(self, tree, profile, group):
    """Exact w, opponent reach and CBR values v_o per next root (use_cbr)."""
    problem = self.problem
    num_roots = self.trace.num_roots
    reach = np.zeros(num_roots)
    opponent_reach = np.zeros(num_roots)
    values = np.zeros(num_roots)
    _, response = exact_br.best_response_slots(tree, profile, problem.opponent)
    node_values = tree.node_values(response)
    if problem.opponent == 1:
      node_values = tree.utility_sum - node_values
    node_reach = tree.node_reaches(profile)
    for root_id in group:
      history = tuple(problem.root_histories[self.trace.root_of[root_id]]) + \
          self.trace.actions[root_id]
      node = gadgets.history_node(tree, history)
      reach[root_id] = node_reach[problem.player, node] * node_reach[2, node]
      opponent_reach[root_id] = node_reach[problem.opponent, node]
      values[root_id] = node_values[node]
    return reach, opponent_reach, values


# --- The bot --------------------------------------------------------------------------


_WARM = []


def _warm_up_full_width():
  """Loads (or compiles) the numba kernels of the full-width path once per process, on
  Kuhn poker, so that a timed budget does not pay for it."""
  if _WARM:
    return
  tree = compiled_tree.cached_tree(pyspiel.load_game("kuhn_poker"))
  slots = tree.uniform_slots()
  _tracks(tree.node_player, tree.node_parent, 0, FIRST)
  tree.node_reaches(slots)
  tree.node_values(slots)
  exact_br.best_response_slots(tree, slots, 1)
  cfr.CFRPlusSolver(tree).evaluate_and_update_policy()
  cfr.GeneralCFRSolver(tree, "rm+", depth_limit=1,
                       utility_estimator=utility_estimators.RandomPlayout(1)
                       ).evaluate_and_update_policy()
  _WARM.append(True)


class ContinualResolvingBot(pyspiel.Bot):
  """Continual resolving ([S] ch. 2, §3.4.1) as a pyspiel.Bot (module docstring).

  Args:
    game: a two-player zero-sum (or constant-sum) sequential perfect-recall pyspiel
      game; anything else is refused with the reason (see `check_game`).
    player_id: the seat, 0 or 1.
    preplay: pre-play budget, e.g. '10s', '1000it', '0' or a limits.Limit; spent at
      the first decision of a match, before that move's budget.
    move: per-move budget, likewise.
    solver: 'vr_mccfr' (default), 'mc_cfr', 'cfr+' or 'dl_cfr+'.
    variant: gadget variant, 'resolve' (default), 'max_margin' or 'unsafe'.
    keep_solver_data: carry the solver's tables over to the next subgame.
    use_cbr: exact gadget inputs (counterfactual best response) on the compiled tree.
    regret_matcher, exploration, cumulative_strategy_exponent, baseline: the sampling
      solvers' settings (thesis candidate by default; 'mc_cfr' has no baseline).
    cfrd_aware_sampling: evaluate both gadget actions at the follow/terminate node.
    depth_limit, playouts: 'dl_cfr+''s depth limit (gadget depth, [S] §5.2.3) and
      RandomPlayout's number of playouts.
    seed: seeds the solvers and the action sampling; equal seeds and iteration
      budgets give equal play.
  """

  def __init__(self, game, player_id, preplay="0", move="1000it", solver="vr_mccfr",
               variant="resolve", keep_solver_data=False, use_cbr=False,
               regret_matcher=_THESIS["rm"], exploration=_THESIS["e"],
               cumulative_strategy_exponent=_THESIS["cse"], baseline=_THESIS["bl"],
               cfrd_aware_sampling=True, depth_limit=4, playouts=1, seed=0):
    pyspiel.Bot.__init__(self)
    check_game(game)
    if player_id not in (0, 1):
      raise ValueError(f"player_id must be 0 or 1, got {player_id!r}.")
    self._game = game
    self._player_id = player_id
    self._preplay = limits.nonnegative_limit(preplay, "pre-play budget")
    self._move = limits.nonnegative_limit(move, "per-move budget")
    if self._move.is_zero and self._preplay.is_zero:
      raise ValueError("Both budgets are zero: the bot would never solve anything.")
    self.config = ResolverConfig(
        solver=solver, variant=variant, keep_solver_data=bool(keep_solver_data),
        use_cbr=bool(use_cbr), regret_matcher=regret_matcher, exploration=exploration,
        cumulative_strategy_exponent=cumulative_strategy_exponent, baseline=baseline,
        cfrd_aware_sampling=bool(cfrd_aware_sampling), depth_limit=depth_limit,
        playouts=playouts)
    outcome_sampling.warm_up(self.config.regret_matcher)
    if use_cbr or not self.config.sampling:
      compiled_tree.cached_tree(game)
      _warm_up_full_width()
    self._seed = outcome_sampling.new_seed(seed)
    self._matches = 0
    self.restart()

  def player_id(self):
    return self._player_id

  def provides_policy(self):
    return True

  def is_clonable(self):
    return True

  def clone(self):
    """An independent copy (same tables, random streams and subgame); games and
    compiled trees are shared. Used to replay many histories from common prefixes."""
    shared = [self._game]
    if self.resolver is not None:
      shared += [item for item in (self.resolver.problem.gadget,
                                   self.resolver.problem.compiled) if item is not None]
    return players.copy_bot(self, shared)

  def restart(self):
    """A new match: no subgame yet; pre-play runs again at the first decision."""
    self._matches += 1
    self.resolver = None
    self._preplay_pending = not self._preplay.is_zero
    self._resolves = 0
    self._rng = np.random.default_rng([self._seed, self._matches])
    self.decisions = []

  def restart_at(self, state):
    """Restarts; from a later state the next decision solves the whole game (after
    pre-play) and continues from there, as after a first decision."""
    del state
    self.restart()

  def inform_action(self, state, player_id, action):
    pass

  def _solver_seed(self):
    self._resolves += 1
    return int(np.random.SeedSequence(
        [self._seed, self._matches, self._resolves]).generate_state(2, np.uint64)[0])

  def _new_resolver(self, problem, record, start, seconds, warm=None, trunk=None):
    deadline = start + TRACE_SHARE * seconds if seconds else None
    self.resolver = _Resolver(problem, self.config, self._solver_seed(), warm=warm,
                              trunk=trunk, deadline=deadline)
    record["new_subgame"] = True
    if not self.resolver.trace.complete:
      record["fallback"] = ("the next turns were not traced within the time budget; "
                            "the bot stays in this subgame")

  def _new_subgame(self, key, record, start, seconds):
    """Switches to the subgame of information state `key`; keeps the current
    resolver (and notes why) if its gadget cannot be built."""
    current = self.resolver
    try:
      gadget, profile, info = current.next_subgame(
          key, self.config.variant, start + BUILD_SHARE * seconds if seconds else None)
    except CannotResolve as error:
      record["fallback"] = f"kept the current subgame: {error}"
      return
    record.update(info)
    if info["variant"] != self.config.variant:
      record["fallback"] = ("unsafe gadget has zero joint reach at the bot's "
                            "histories; resolve gadget used")
    warm = current if self.config.keep_solver_data else None
    self._new_resolver(_Problem(self._game, self._player_id, gadget), record, start,
                       seconds, warm=warm, trunk=profile)

  def step_with_policy(self, state):
    """Resolves as needed within the budgets, then samples from the average strategy."""
    start = time.perf_counter()
    player = self._player_id
    if state.current_player() != player:
      raise ValueError(f"It is player {state.current_player()}'s turn, not player "
                       f"{player}'s.")
    key = state.information_state_string(player)
    record = {"key": key, "new_subgame": False, "iterations": 0}
    seconds = self._move.seconds or 0.0
    if self.resolver is None:
      preplay = self._preplay if self._preplay_pending else limits.Limit()
      self._preplay_pending = False
      self._new_resolver(_Problem(self._game, player), record, start,
                         seconds + (preplay.seconds or 0.0))
      record["iterations"] += self.resolver.run(preplay, start)
      move_start = time.perf_counter() if preplay.seconds else start
    else:
      if key in self.resolver.trace.subgame_map:
        self._new_subgame(key, record, start, seconds)
      move_start = start
    record["setup_seconds"] = time.perf_counter() - start
    record["iterations"] += self.resolver.run(self._move, move_start)
    legal = state.legal_actions(player)
    probabilities = self.resolver.probabilities(key, legal)
    action = legal[outcome_sampling.sample_index(probabilities, self._rng.random())]
    record["seconds"] = time.perf_counter() - start
    self.decisions.append(record)
    return list(zip(legal, probabilities)), action

  def step(self, state):
    return self.step_with_policy(state)[1]


# Build function of the registry's cr player (config/builtin.py).

def build_cr(game, player_id, seed, budget, solver, variant, keep, cbr, rm, e, cse, bl,
             cfrd_aware, dl, playouts):
  move = "1000it" if budget.move.is_zero else budget.move
  return ContinualResolvingBot(
      game, player_id, preplay=budget.preplay, move=move, solver=solver,
      variant=variant, keep_solver_data=keep, use_cbr=cbr, regret_matcher=rm,
      exploration=e, cumulative_strategy_exponent=cse, baseline=bl,
      cfrd_aware_sampling=cfrd_aware, depth_limit=dl, playouts=playouts, seed=seed)
