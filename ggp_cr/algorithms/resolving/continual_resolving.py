"""Continual resolving's bot: `ContinualResolvingBot` ([S] ch. 2, §3.4.1, §6, App. A.5).

The bot decides and records each move: it solves the whole game at its first
decision, enters the next subgame when its information state starts one, and plays
the average strategy; docs/algorithms/resolving.md describes the method, its two
paths, budgets and fallbacks.
"""

import time
import weakref

import numpy as np
import pyspiel

from ggp_cr.algorithms import contracts
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.bots import anytime
from ggp_cr.algorithms.bots import players
from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.cfr import utility_estimators
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.config import presets
from ggp_cr.algorithms.resolving import move_budget
from ggp_cr.algorithms.resolving import protocol
from ggp_cr.algorithms.resolving import recall
from ggp_cr.algorithms.resolving import settings
from ggp_cr.algorithms.resolving.compiled import compiled_path
from ggp_cr.algorithms.resolving.compiled import compiled_resolver
from ggp_cr.algorithms.resolving.compiled import in_place_view
from ggp_cr.algorithms.resolving.compiled import view_solvers
from ggp_cr.algorithms.resolving.live import live_path
from ggp_cr.algorithms.resolving.subgames import subgame_trace
from ggp_cr.algorithms.sampling import outcome_sampling
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import native_next_decisions
from ggp_cr.algorithms.tree import native_playouts

# The sampling solvers' defaults: the thesis's VR-MCCFR candidate ([S] §5.1.2).
_THESIS = presets.THESIS_VR_MCCFR


# --- The bot --------------------------------------------------------------------------


_WARM = []


def _warm_up_full_width():
  """Loads (or compiles) the numba kernels of the full-width and the compiled path
  once per process, on Kuhn poker, so that a timed budget does not pay for it."""
  if "full_width" in _WARM:
    return
  tree = compiled_tree.cached_tree(pyspiel.load_game("kuhn_poker"))
  keys = compiled_resolver.state_keys(tree)
  for config in (settings.ResolverConfig(solver="cfr+"),
                 settings.ResolverConfig(solver="vr_mccfr")):
    whole = compiled_resolver.CompiledResolver.whole_game(tree, keys, 0,
                                                           config=config, seed=0)
    whole.iterate(1)
    if not config.sampling:
      # The average strategy's pass in blocks, as after a refusal in a timed move
      # (its kernels' entry points from Python compiled in a PAM{8} decision: 1.9 s).
      whole.estimates.fresh().add(whole.view.average_slots(), deadline=float("inf"))
      # A timed CFR+ move's build-ahead planning and candidates, from player 0's
      # first infoset (their kernels were compiled inside a Leduc{3,30} first
      # decision, 1.53 s of 1.1 s, after a code change).
      first = int(np.flatnonzero(tree.infoset_player == 0)[0])
      whole.next_groups_below(first)
      whole.ahead_candidates(first, 0)
    copied, _ = whole.next_subgame(int(whole.trace.own_infosets[0]), "resolve",
                                   seed=0)
    # The same subgame in place (larger subgames' view), one iteration and its
    # next subgame's inputs.
    view = copied.view
    in_place = compiled_resolver.CompiledResolver(
        in_place_view.SubgameView(
            tree, keys, 0, view.root_nodes, view.w,
            dict(zip(view.infoset_keys.tolist(), view.cbv.tolist())), "resolve",
            solver=(view_solvers.sampler(config, 0) if config.sampling else
                    None)), config=config)
    in_place.iterate(1)
    in_place.probabilities(int(tree.node_infoset[view.root_nodes[0]]))
    if len(in_place.trace.own_infosets):
      in_place.next_subgame(int(in_place.trace.own_infosets[0]), "resolve", seed=0)
  subgame_trace.trace_step_sums(tree, 0, [0])  # later subgames' setup budgets
  slots = tree.uniform_slots()
  recall.tracks(tree.node_player, tree.node_parent, 0, recall.FIRST)
  tree.node_reaches(slots)
  tree.node_values(slots)
  exact_br.best_response_slots(tree, slots, 1)
  cfr.CFRPlusSolver(tree).evaluate_and_update_policy()
  cfr.GeneralCFRSolver(tree, "rm+", depth_limit=1,
                       utility_estimator=utility_estimators.RandomPlayout(1)
                       ).evaluate_and_update_policy()
  _WARM.append("full_width")


def warm_up_process():
  """The registry's warm-up of the cr player (registry.PlayerType.warm_up): loads the
  kernels of both paths, with a full-width and a sampling solver, once per process on
  Kuhn poker, and the native extractors' and state keys' on small games, before any
  clock; a fresh process's first cr bot otherwise spent 1-3 s
  of its pre-play loading them (issue 44)."""
  if "process" in _WARM:
    return
  outcome_sampling.warm_up(settings.ResolverConfig().regret_matcher)
  for tree in compiled_tree.compile_warm_up_games():  # native extractors and keys
    compiled_resolver.state_keys(tree).subtree_nodes  # pylint: disable=expression-not-assigned
    if native_next_decisions.supports(tree.game):  # the live path's native walk
      native_next_decisions.warm_up(tree.game)
      native_playouts.warm_up(tree.game)  # and its depth-limited trees' playouts
  for path in ("compiled", "live"):
    for solver in ("vr_mccfr", "cfr+"):
      players.warm_up_on_kuhn(lambda game, path=path, solver=solver: (
          ContinualResolvingBot(game, 0, preplay="1it", move="1it", solver=solver,
                                path=path)))
  _WARM.append("process")


class ContinualResolvingBot(pyspiel.Bot):
  """Continual resolving ([S] ch. 2, §3.4.1) as a pyspiel.Bot (docs/algorithms/resolving.md).

  Args:
    game: a two-player zero-sum (or constant-sum) sequential perfect-recall pyspiel
      game; anything else is refused with the reason (see `recall.check_game`).
    player_id: the seat, 0 or 1.
    preplay: pre-play budget, e.g. '10s', '1000it', '0' or a limits.Limit; spent at
      the first decision of a match, before that move's budget.
    move: per-move budget, likewise.
    solver: 'vr_mccfr' (default), 'mc_cfr', 'cfr+' or 'dl_cfr+'.
    variant: gadget variant, 'resolve' (default), 'max_margin' or 'unsafe'.
    terminate_values: the resolve gadget's Terminate payoffs, 'cfrd' (default) or
      'cfrplayground' (the thesis's code's, gadget_prefix.terminate_scale).
    keep_solver_data: carry the solver's tables over to the next subgame.
    use_cbr: exact gadget inputs (counterfactual best response) on the compiled tree.
    regret_matcher, exploration, cumulative_strategy_exponent, baseline: the sampling
      solvers' settings (thesis candidate by default; 'mc_cfr' has no baseline).
    cfrd_aware_sampling: evaluate both gadget actions at the follow/terminate node.
    depth_limit, playouts: 'dl_cfr+''s depth limit (gadget depth, [S] §5.2.3) and
      RandomPlayout's number of playouts.
    path: 'auto' (default; docs/algorithms/resolving.md), 'compiled' or 'live'.
    compiled_nodes_limit: the largest tree 'auto' extracts for the compiled path.
    tree: the game's CompiledTree, owned by the caller (the compiled path then uses
      it rather than looking for one in this process or `cache_dir`).
    cache_dir: where compiled trees and their state keys are read and written.
    seed: seeds the solvers and the action sampling; equal seeds and iteration
      budgets give equal play.
    build_ahead: with time budgets on the compiled path (CFR+ family; resolve and
      max-margin gadgets), what a move leaves after its iterations builds the next
      subgames the bot may enter (move_budget.SubgameBudget.build_ahead).
  """

  def __init__(self, game, player_id, preplay="0", move=limits.DEFAULT_MOVE,
               solver="vr_mccfr", variant="resolve", keep_solver_data=False,
               use_cbr=False, regret_matcher=_THESIS["rm"], exploration=_THESIS["e"],
               cumulative_strategy_exponent=_THESIS["cse"], baseline=_THESIS["bl"],
               cfrd_aware_sampling=True, depth_limit=4, playouts=1, seed=0,
               path="auto",
               compiled_nodes_limit=compiled_path.COMPILED_NODES_LIMIT,
               cache_dir=None, build_ahead=True, terminate_values="cfrd", tree=None):
    built = time.perf_counter()
    pyspiel.Bot.__init__(self)
    recall.check_game(game)
    if player_id not in (0, 1):
      raise ValueError(f"player_id must be 0 or 1, got {player_id!r}.")
    self._game = game
    self._player_id = player_id
    self._preplay, self._move = limits.solving_budget(preplay, move)
    self.config = settings.ResolverConfig(
        solver=solver, variant=variant, keep_solver_data=bool(keep_solver_data),
        use_cbr=bool(use_cbr), regret_matcher=regret_matcher, exploration=exploration,
        cumulative_strategy_exponent=cumulative_strategy_exponent, baseline=baseline,
        cfrd_aware_sampling=bool(cfrd_aware_sampling), depth_limit=depth_limit,
        playouts=playouts, terminate_values=terminate_values)
    self.path, self.path_reason, tree, keys = compiled_path.choose_path(
        game, self.config, path, compiled_nodes_limit, cache_dir, tree,
        seconds=compiled_tree.extraction_seconds(self._preplay))
    # The one choice of path: everything else goes through protocol.Path.
    self._path = (compiled_path.CompiledPath(tree, keys, player_id, self.config)
                  if tree is not None else
                  live_path.LivePath(game, player_id, self.config))
    outcome_sampling.warm_up(self.config.regret_matcher)
    if use_cbr or tree is not None:
      compiled_tree.cached_tree(game)
    if use_cbr or not self.config.sampling or tree is not None:
      # (the live path's full-width solvers lay out their own trees: not the
      # whole game's, which did not fit)
      _warm_up_full_width()
    self._path.warm_up()
    self._seed = outcome_sampling.new_seed(seed)
    self._build_ahead_enabled = bool(build_ahead)
    self._matches = 0
    self.restart()
    # The construction (path choice, extraction, warm-up) counts against the first
    # match's pre-play, as its prepared resolver does.
    self._construction_seconds = (time.perf_counter() - built -
                                  self._prepared_seconds)

  def player_id(self):
    return self._player_id

  def provides_policy(self):
    return True

  def is_clonable(self):
    return True

  def clone(self):
    """An independent copy (same tables, random streams and subgame); games and
    compiled trees are shared. Used to replay many histories from common prefixes."""
    return players.copy_bot(self, [self._game] + self._path.shared(self.resolver))

  def decision_key(self, state):
    """For the traversing evaluator (evaluators.traversing_evaluation): a key such
    that copies of this bot deciding at states with equal keys end equal (same
    resolver, tables and random stream) and play `current_policy` there; None when
    that is not known: time budgets (the iterations vary), the live path, dl_cfr+,
    exact CBR inputs, inputs estimated after a refusal
    (compiled_resolver.CompiledResolver.entry_key). The sampling solvers share too:
    each solve's random stream is seeded from the bot's seed, the match and the
    number of the resolve (`_solver_seed`), never from a running generator, so copies
    that entered the same subgames draw the same stream. The bot ignores the moves
    it is told (inform_action)."""
    if (not self._path.shares_decisions or self._move.seconds or
        self._preplay.seconds):
      return None
    if self.resolver is None:
      return ("first", self._preplay_pending)
    return self._path.entry_key(self.resolver,
                                state.information_state_string(self._player_id))

  def current_policy(self, state):
    """[(action, probability)] of the current solve's average strategy at the bot's
    information state in `state`, without solving further."""
    legal = state.legal_actions(self._player_id)
    key = state.information_state_string(self._player_id)
    return list(zip(legal, self._path.policy(self.resolver, key, legal)))

  def decision_solver(self):
    """The current subgame's solver (contracts.SolvingBot; on the compiled path with
    a sampling solver its view_sampling.ViewSampler), or None before the first
    decision."""
    if self.resolver is None:
      return None
    return getattr(self.resolver, "sampler", None) or self.resolver.solver

  def restart(self):
    """A new match: no subgame yet; pre-play runs again at the first decision."""
    self._matches += 1
    self.resolver = None
    self._preplay_pending = not self._preplay.is_zero
    self._resolves = 0
    self._rng = np.random.default_rng([self._seed, self._matches])
    self.decisions = []
    self._prepared = None
    self._budget = move_budget.SubgameBudget(self.config.sampling)
    self._construction_seconds = 0.0
    self._prepare()

  def _prepare(self):
    """Prepares the match's first resolver (protocol.Path.prepare: on the compiled
    path the whole game's view, trace and solver, which do not depend on the match;
    their time is charged to the pre-play, docs/algorithms/resolving.md)."""
    start = time.perf_counter()
    self._prepared = self._path.prepare(self._solver_seed())
    self._prepared_seconds = time.perf_counter() - start

  def restart_at(self, state):
    """Restarts; from a later state the next decision solves the whole game (after
    pre-play) and continues from there, as after a first decision."""
    del state
    self.restart()

  def inform_action(self, state, player_id, action):
    pass

  def _solver_seed(self):
    """The seed of the match's next solve (whole game or subgame): (the bot's seed,
    the match, the number of this resolve), so equal copies get equal solves
    (decision_key); a refused subgame uses a number too."""
    self._resolves += 1
    return self._resolve_seed(self._resolves)

  def _resolve_seed(self, resolves):
    """The seed of the match's resolve number `resolves`."""
    return int(np.random.SeedSequence(
        [self._seed, self._matches, resolves]).generate_state(2, np.uint64)[0])

  def _first_resolver(self, record, move):
    """The whole game's resolver (first decision of a match)."""
    if self._prepared is None:
      self._prepare()
    prepared, self._prepared = self._prepared, None
    self.resolver = self._path.first(prepared, self._prepared_seconds, record, move)
    record["new_subgame"] = True

  def _new_subgame(self, lookup, record, move):
    """Switches to the subgame of the bot's information state (`lookup`, the path's
    id); keeps the current resolver (and notes why) if the path cannot enter it
    within the move (protocol.Path.enter). A refused subgame draws no seed."""
    current = self.resolver
    try:
      self.resolver = self._path.enter(current, lookup, record, move,
                                       self._resolve_seed(self._resolves + 1),
                                       self._budget)
    except protocol.CannotResolve as error:
      record["fallback"] = f"kept the current subgame: {error}"
      record["strategy"] = "the current subgame's solve (its strategy below this turn)"
      self._path.refused(current, lookup, error, record, move, self._move)
      return
    self._resolves += 1
    record["new_subgame"] = True

  def _builds_ahead(self):
    """Whether the bot builds next subgames ahead (protocol.Path.builds_ahead)."""
    return self._build_ahead_enabled and self._path.builds_ahead

  def step_with_policy(self, state):
    """Resolves as needed within the budgets, then samples from the average strategy."""
    start = time.perf_counter()
    contracts.check_turn(state, self._player_id)
    with anytime.gc_frozen(bool(self._move.seconds or self._preplay.seconds)):
      return self._decide(state, start)

  def _decide(self, state, start):
    player = self._player_id
    key = state.information_state_string(player)
    record = {"key": key, "path": self.path, "path_reason": self.path_reason,
              "new_subgame": False, "iterations": 0}
    seconds = self._move.seconds or 0.0
    visited_before = self.resolver.visited_states if self.resolver is not None else 0
    held, move_end = 0.0, None
    # Only a weak reference is kept: a subgame left is freed when the bot enters the
    # next, before the iterations (its tables took 10 ms to free on
    # liars_dice(numdice=2), after the move's deadline, when it was freed on return).
    previous = weakref.ref(self.resolver) if self.resolver is not None else None
    if self.resolver is None:
      preplay = self._preplay if self._preplay_pending else limits.Limit()
      self._preplay_pending = False
      # The bot's construction (first match) counts against a timed pre-play.
      built = self._construction_seconds if preplay.seconds else 0.0
      self._construction_seconds = 0.0
      record["construction_seconds"] = built
      budget = move_budget.MoveBudget(start - built,
                                      seconds + (preplay.seconds or 0.0),
                                      turn_seconds=seconds)
      self._first_resolver(record, budget)
      # Setup (before the match, and at this decision) overrunning the pre-play is
      # charged to it (docs/algorithms/resolving.md).
      preplay_start = start - built - record.get("prepared_seconds", 0.0)
      samples = self.resolver.timing["samples"] = []
      # A share of a timed pre-play is held back for building ahead (plan_ahead).
      if self._builds_ahead() and preplay.seconds and seconds:
        held = move_budget.AHEAD_PREPLAY_SHARE * preplay.seconds
      done = self.resolver.run(
          limits.Limit(seconds=preplay.seconds - held) if held else preplay,
          preplay_start)
      del self.resolver.timing["samples"]
      record["iterations"] += done
      self._path.after_preplay(self._budget, samples, self.resolver)
      move_start = (min(time.perf_counter(), preplay_start + preplay.seconds)
                    if preplay.seconds else start)
      # The pre-play's iterations held back run in the move's (to its usual end).
      move_end = (preplay_start + (preplay.seconds or 0.0) +
                  move_budget.RESOLVE_SHARE * seconds)
    else:
      lookup, enters = self._path.lookup(self.resolver, key)
      record["enters_new_subgame"] = enters
      budget = move_budget.MoveBudget(start, seconds)
      if enters:
        self._new_subgame(lookup, record, budget)
      move_start = start
    record["budget_seconds"] = budget.seconds
    record.setdefault("strategy", "this subgame's solve" if record["new_subgame"]
                      else "the current subgame's solve (same subgame)")
    if previous is None or self.resolver is not previous():
      visited_before = 0
    record["setup_seconds"] = time.perf_counter() - start
    move = self._move
    if seconds:
      # A timed move's iterations end at RESOLVE_SHARE of it, as its setups and
      # builds ahead do: on a loaded machine a process is descheduled for several
      # ms at a time, and iterations run to the move's end overran it by 5 ms
      # (latent TTT's 40 us iterations, load 8).
      move = limits.Limit(seconds=min(move_budget.RESOLVE_SHARE, 1.0) * seconds)
      if held:
        move_start = time.perf_counter()
        move = limits.Limit(seconds=max(move_end - move_start, 0.0))
    ahead = self._builds_ahead() and bool(budget.seconds)
    if ahead:
      infoset, _ = self._path.lookup(self.resolver, key)
      ahead_deadline = budget.deadline(move_budget.RESOLVE_SHARE)
      # The iterations stop early enough to build a costly next subgame ahead.
      reserve, skipped = self._budget.plan_ahead(self.resolver, infoset, budget,
                                                 held)
      if reserve:
        record["ahead_reserve_seconds"] = reserve
        move = limits.Limit(seconds=max(
            min(move.seconds, ahead_deadline - reserve - move_start), 0.0))
    iterating = time.perf_counter()
    record["iterations"] += self.resolver.run(move, move_start)
    record["iterate_seconds"] = time.perf_counter() - iterating
    policy = self.current_policy(state)
    index = outcome_sampling.sample_index([p for _, p in policy], self._rng.random())
    action = policy[index][0]
    self._path.played(self.resolver, key, action)
    if ahead:
      built = self._budget.build_ahead(
          self.resolver, infoset, index, self.config.variant,
          self._resolve_seed(self._resolves + 1), budget,  # (seed not drawn)
          skipped)
      if built:
        record["built_ahead"] = built
    record["seconds"] = time.perf_counter() - start
    record["visited_states"] = self.resolver.visited_states - visited_before
    self.decisions.append(record)
    return policy, action

  def step(self, state):
    return self.step_with_policy(state)[1]


# Build function of the registry's cr player (config/builtin.py).

def build_cr(game, player_id, seed, budget, solver, variant, keep, cbr, rm, e, cse, bl,
             cfrd_aware, dl, playouts, terminate, tree=None):
  return ContinualResolvingBot(
      game, player_id, preplay=budget.preplay, move=budget.online_move(), solver=solver,
      variant=variant, keep_solver_data=keep, use_cbr=cbr, regret_matcher=rm,
      exploration=e, cumulative_strategy_exponent=cse, baseline=bl,
      cfrd_aware_sampling=cfrd_aware, depth_limit=dl, playouts=playouts, seed=seed,
      terminate_values=terminate, tree=tree)
