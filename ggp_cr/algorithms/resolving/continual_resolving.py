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
  Opponent information sets the solver never sampled get, when the original game's
  tree is in this process (and the bot's strategy so far is on it: at the whole game,
  or with a trunk), CBV_norm = the opponent's exact counterfactual best-response
  value against that strategy, the value safe resolving must keep; otherwise the
  game's minimum utility (the opponent always follows there: resolving is unsafe for
  them, as nothing is known); tests/test_unsampled_values.py: fewer unsafe subgames
  than the minimum-utility rule. With `use_cbr=True` (offline study, small games)
  the inputs are exact: the bot's strategy is kept on the compiled tree (trunk, then
  each resolved subgame combined in, [S] §6) and the opponent's counterfactual best
  response gives v_o.
* Gadgets: gadgets.make_gadget with variant resolve (CFR-D, [S] §1.4.2), max_margin
  or unsafe; a gadget is a pyspiel game (on the compiled path a view of the whole
  game's tree, the same gadget node for node) solved by the configured solver:
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
  With `terminate_values="cfrplayground"` the resolve gadget's opponent values are
  scaled as the thesis's own code scales them (resolver.terminate_scale).
  Solver data are reset for each subgame, or kept (`keep_solver_data`, MCCR/gtlib2):
  tables of the same information states carry over (the gadget's own start fresh),
  and the iteration count continues (CFR+'s linear averaging weights, the sampling
  solvers' averaging).
* The bot acts from the average strategy at its information set.
* Fallbacks, so that no legal history makes it fail: if its information state is not
  in the map it stays in the current subgame; if the next gadget cannot be built (the
  estimated reach of its information state is zero, or the gadget refuses its inputs)
  it keeps the current resolver (reuses the trunk; on the compiled path also when the
  subgame's first CFR+ iteration, at the seconds per node measured so far in the
  match, or for the sampling solvers the subgame's setup (its trace, a small
  subgame's copy), would not fit the move: the
  bot then plays the current solve's strategy below
  its turn, a valid continuation of its strategy so far, never a new gadget's range
  it could not solve, and the record's `strategy` says so; on the compiled path the
  next turns below the refused subgame are then traced and the current solve's
  further iterations estimate their inputs, so the next subgame the bot enters is
  resolved again, compiled_resolving.CompiledResolver.defer, unless that trace would
  not fit what is left of the move); an unsafe gadget with
  zero joint reach at the bot's histories (an opponent move the trunk gave
  probability 0) becomes a resolve gadget. Each decision's record in `decisions` says what happened.

Two paths ([S] ch. 2 either way): with CFR+, dl_cfr+, VR-MCCFR or MC-CFR the bot runs
on the whole game's compiled tree (compiled_resolving: integer trace, gadget views,
estimates as scatter-adds; CFR+ equal to the live path to 1e-9; dl_cfr+ on copied
gadget views, which are the live gadgets' compiled trees node for node, so the same
histories are cut and the same random playouts drawn: equal to 1e-9; the sampling
solvers, with
view_sampling's CFR-D-aware gate, bounded playouts and w/q-weighted estimates, drawing
the same random stream and holding the same tables to rounding) when the tree is in
this process, in `cache_dir`, or extractable within `compiled_nodes_limit` histories
(keep_solver_data as well: warm_start.py carries the tables over by whole-tree
infoset id, as the live path does by information state string); otherwise on live
pyspiel gadgets. Every
decision record has `path` and `path_reason`.

Budgets: a pre-play limit spent at the first decision of a match before that move's
own limit (setup that overruns it is charged to it: the move's clock starts when
the pre-play's would have ended; on the compiled path the whole game's view, trace
and solver are built when the match starts, restart(), and that time counts as spent
pre-play), and a per-move limit; each is seconds (wall clock, checked after every
iteration, stopping early when the next iteration would overrun; the trace and gadget
construction count) or iterations (deterministic for a seed). An iteration is one
episode per player (sampling) or one CFR+ iteration (full width). With seconds, a
subgame whose setup (inputs, view, solver, trace of its next turns; estimated per root and
per node the trace walks, subgame_budget.SETUP_SECONDS_PER_ROOT and following)
and first iteration would not fit the move (compiled path; a setup running far over
its estimate is also given up between its stages, subgame_budget.SetupClock, rather
than finished and then refused), or whose roots cannot be built, or next turns traced,
within BUILD_SHARE / TRACE_SHARE of the decision's budget (live path), is not
resolved (the bot keeps or stays in its current subgame); the live full-width
solvers' compilation of each gadget cannot be interrupted, so their time budgets
hold for small games only. On the compiled path with the CFR+ family (resolve and
max-margin gadgets), what a timed move leaves after its iterations and the action
builds ahead the next subgames the bot may enter below that action, likeliest
first, each with its first iteration if that fits too (`build_ahead`; else the
decision that enters it runs it): no iteration runs before the
next decision, so their inputs are the ones that decision would use (equal to 1e-12,
tests), and a subgame too large to set up and solve once within one move (Leduc{3,30}'s
2.5M-node subgames after the pre-play) is entered resolved. The record of the
decision that built them lists them (`built_ahead`); the one that enters one says
so (`iterations_ahead`, `built_ahead_seconds`). When a next subgame below the bot's
infoset could not be set up and solved once within a move of its own, the move's
iterations stop early enough to set it up ahead (`ahead_reserve_seconds`,
subgame_budget.SubgameBudget.plan_ahead). A record's `setup_seconds` is the time up
to the move's iterations (the first decision's pre-play included),
`iterate_seconds` that of the move's iterations, `seconds` the whole decision's,
`visited_states` the histories its solver touched in the decision ([S] §5.1's
measure; a subgame's first iteration run ahead counts in the decision entering it).
"""

import time

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
from ggp_cr.algorithms.resolving import compiled_resolving
from ggp_cr.algorithms.resolving import compiled_subgames
from ggp_cr.algorithms.resolving import recall
from ggp_cr.algorithms.resolving import resolver
from ggp_cr.algorithms.resolving import subgame_budget
from ggp_cr.algorithms.resolving import subgame_views
from ggp_cr.algorithms.resolving import tracing
from ggp_cr.algorithms.resolving import view_solvers
from ggp_cr.algorithms.sampling import outcome_sampling
from ggp_cr.algorithms.tree import compiled_tree

# The sampling solvers' defaults: the thesis's VR-MCCFR candidate ([S] §5.1.2).
_THESIS = presets.THESIS_VR_MCCFR
# Solvers whose compiled decisions with iteration budgets are shared by equal
# decision keys (tests/test_continual_resolving.py: the same strategy to 1e-9).
_SHARED_SOLVERS = ("cfr+", "vr_mccfr", "mc_cfr")
# The heap a compiled-path bot faults in before its first decision (anytime.
# prefault_heap): this many times its tree's arrays (PAM{8}: 85 MiB of arrays; a
# sampling bot's process grew 130-330 MiB over its first three matches), at most
# PREFAULT_MAX_BYTES.
PREFAULT_TREE_MULTIPLE = 4
PREFAULT_MAX_BYTES = 1 << 30


# --- The bot --------------------------------------------------------------------------


_WARM = []


def _warm_up_full_width():
  """Loads (or compiles) the numba kernels of the full-width and the compiled path
  once per process, on Kuhn poker, so that a timed budget does not pay for it."""
  if _WARM:
    return
  tree = compiled_tree.cached_tree(pyspiel.load_game("kuhn_poker"))
  keys = compiled_resolving.state_keys(tree)
  for config in (resolver.ResolverConfig(solver="cfr+"),
                 resolver.ResolverConfig(solver="vr_mccfr")):
    whole = compiled_resolving.CompiledResolver.whole_game(tree, keys, 0,
                                                           config=config, seed=0)
    whole.iterate(1)
    if not config.sampling:
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
    in_place = compiled_resolving.CompiledResolver(
        subgame_views.SubgameView(
            tree, keys, 0, view.root_nodes, view.w,
            dict(zip(view.infoset_keys.tolist(), view.cbv.tolist())), "resolve",
            solver=(view_solvers.sampler(config, 0) if config.sampling else
                    None)), config=config)
    in_place.iterate(1)
    in_place.probabilities(int(tree.node_infoset[view.root_nodes[0]]))
    if len(in_place.trace.own_infosets):
      in_place.next_subgame(int(in_place.trace.own_infosets[0]), "resolve", seed=0)
  compiled_subgames.trace_step_sums(tree, 0, [0])  # later subgames' setup budgets
  slots = tree.uniform_slots()
  recall.tracks(tree.node_player, tree.node_parent, 0, recall.FIRST)
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
      game; anything else is refused with the reason (see `recall.check_game`).
    player_id: the seat, 0 or 1.
    preplay: pre-play budget, e.g. '10s', '1000it', '0' or a limits.Limit; spent at
      the first decision of a match, before that move's budget.
    move: per-move budget, likewise.
    solver: 'vr_mccfr' (default), 'mc_cfr', 'cfr+' or 'dl_cfr+'.
    variant: gadget variant, 'resolve' (default), 'max_margin' or 'unsafe'.
    terminate_values: the resolve gadget's Terminate payoffs, 'cfrd' (default) or
      'cfrplayground' (the thesis's code's, resolver.terminate_scale).
    keep_solver_data: carry the solver's tables over to the next subgame.
    use_cbr: exact gadget inputs (counterfactual best response) on the compiled tree.
    regret_matcher, exploration, cumulative_strategy_exponent, baseline: the sampling
      solvers' settings (thesis candidate by default; 'mc_cfr' has no baseline).
    cfrd_aware_sampling: evaluate both gadget actions at the follow/terminate node.
    depth_limit, playouts: 'dl_cfr+''s depth limit (gadget depth, [S] §5.2.3) and
      RandomPlayout's number of playouts.
    path: 'auto' (default; module docstring), 'compiled' or 'live'.
    compiled_nodes_limit: the largest tree 'auto' extracts for the compiled path.
    cache_dir: where compiled trees and their state keys are read and written.
    seed: seeds the solvers and the action sampling; equal seeds and iteration
      budgets give equal play.
    build_ahead: with time budgets on the compiled path (CFR+ family; resolve and
      max-margin gadgets), what a move leaves after its iterations builds the next
      subgames the bot may enter (subgame_budget.SubgameBudget.build_ahead).
  """

  def __init__(self, game, player_id, preplay="0", move=limits.DEFAULT_MOVE,
               solver="vr_mccfr", variant="resolve", keep_solver_data=False,
               use_cbr=False, regret_matcher=_THESIS["rm"], exploration=_THESIS["e"],
               cumulative_strategy_exponent=_THESIS["cse"], baseline=_THESIS["bl"],
               cfrd_aware_sampling=True, depth_limit=4, playouts=1, seed=0,
               path="auto",
               compiled_nodes_limit=compiled_resolving.COMPILED_NODES_LIMIT,
               cache_dir=None, build_ahead=True, terminate_values="cfrd"):
    pyspiel.Bot.__init__(self)
    recall.check_game(game)
    if player_id not in (0, 1):
      raise ValueError(f"player_id must be 0 or 1, got {player_id!r}.")
    self._game = game
    self._player_id = player_id
    self._preplay, self._move = limits.solving_budget(preplay, move)
    self.config = resolver.ResolverConfig(
        solver=solver, variant=variant, keep_solver_data=bool(keep_solver_data),
        use_cbr=bool(use_cbr), regret_matcher=regret_matcher, exploration=exploration,
        cumulative_strategy_exponent=cumulative_strategy_exponent, baseline=baseline,
        cfrd_aware_sampling=bool(cfrd_aware_sampling), depth_limit=depth_limit,
        playouts=playouts, terminate_values=terminate_values)
    self.path, self.path_reason, self._tree, self._keys = compiled_resolving.choose_path(
        game, self.config, path, compiled_nodes_limit, cache_dir)
    outcome_sampling.warm_up(self.config.regret_matcher)
    if use_cbr or not self.config.sampling or self.path == "compiled":
      compiled_tree.cached_tree(game)
      _warm_up_full_width()
    if self.path == "compiled":
      # A subgame's setup makes arrays of its roots' size at every decision: they
      # reuse freed memory (prefault_heap applies keep_freed_memory), faulted in
      # before the first decision.
      anytime.prefault_heap(min(PREFAULT_TREE_MULTIPLE * self._tree.nbytes(),
                                PREFAULT_MAX_BYTES))
    self._seed = outcome_sampling.new_seed(seed)
    self._build_ahead_enabled = bool(build_ahead)
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
    if self._tree is not None:
      shared += [self._tree, self._keys]
    elif self.resolver is not None:
      shared += [item for item in (self.resolver.problem.gadget,
                                   self.resolver.problem.compiled) if item is not None]
    return players.copy_bot(self, shared)

  def decision_key(self, state):
    """For the traversing evaluator (evaluators.traversing_evaluation): a key such
    that copies of this bot deciding at states with equal keys end equal (same
    resolver, tables and random stream) and play `current_policy` there; None when
    that is not known: time budgets (the iterations vary), the live path, dl_cfr+,
    exact CBR inputs, inputs estimated after a refusal
    (compiled_resolving.CompiledResolver.entry_key). The sampling solvers share too:
    each solve's random stream is seeded from the bot's seed, the match and the
    number of the resolve (`_solver_seed`), never from a running generator, so copies
    that entered the same subgames draw the same stream. The bot ignores the moves
    it is told (inform_action)."""
    if (self._tree is None or self.config.solver not in _SHARED_SOLVERS or
        self._move.seconds or self._preplay.seconds):
      return None
    if self.resolver is None:
      return ("first", self._preplay_pending)
    return self.resolver.entry_key(self._tree.infoset_index(
        self._player_id, state.information_state_string(self._player_id)))

  def current_policy(self, state):
    """[(action, probability)] of the current solve's average strategy at the bot's
    information state in `state`, without solving further."""
    legal = state.legal_actions(self._player_id)
    key = state.information_state_string(self._player_id)
    if self._tree is not None:
      probabilities = list(self.resolver.probabilities(
          self._tree.infoset_index(self._player_id, key)))
    else:
      probabilities = self.resolver.probabilities(key, legal)
    return list(zip(legal, probabilities))

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
    self._budget = subgame_budget.SubgameBudget(self.config.sampling)
    if self._tree is not None:
      self._prepare()

  def _prepare(self):
    """Builds the whole game's compiled resolver: its view, trace and solver do not
    depend on the match, so a match starts with them; their time is charged to the
    pre-play (module docstring)."""
    start = time.perf_counter()
    self._prepared = compiled_resolving.CompiledResolver.whole_game(
        self._tree, self._keys, self._player_id, self.config.use_cbr, self.config,
        self._solver_seed())
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

  def _first_resolver(self, record, start, seconds):
    """The whole game's resolver (first decision of a match)."""
    if self._tree is None:
      self._new_resolver(tracing.Problem(self._game, self._player_id), record, start,
                         seconds)
      return
    if self._prepared is None:
      self._prepare()
    self.resolver, self._prepared = self._prepared, None
    record["prepared_seconds"] = self._prepared_seconds
    record["new_subgame"] = True

  def _lookup(self, key):
    """The resolver's id of the bot's information state `key` (tree infoset on the
    compiled path) and whether it starts a new subgame."""
    if self._tree is None:
      return key, key in self.resolver.trace.subgame_map
    infoset = self._tree.infoset_index(self._player_id, key)
    return infoset, infoset in self.resolver.trace

  def _new_resolver(self, problem, record, start, seconds, warm=None, trunk=None,
                    parent_root_mass=1.0):
    deadline = start + resolver.TRACE_SHARE * seconds if seconds else None
    self.resolver = resolver.Resolver(
        problem, self.config, self._solver_seed(), warm=warm, trunk=trunk,
        deadline=deadline, parent_root_mass=parent_root_mass)
    record["new_subgame"] = True
    if not self.resolver.trace.complete:
      record["fallback"] = ("the next turns were not traced within the time budget; "
                            "the bot stays in this subgame")

  def _new_subgame(self, key, record, start, seconds):
    """Switches to the subgame of information state `key`; keeps the current
    resolver (and notes why) if its gadget cannot be built, or (compiled path) if
    its first iteration would not fit the move."""
    current = self.resolver
    built = None
    seed = self._solver_seed() if self._tree is not None else None
    try:
      if self._tree is not None:
        # A sampling iteration costs microseconds: only the setup is bounded (it
        # may use SAMPLING_SETUP_SHARE of the move; larger subgames are sampled in
        # place, without a copy). A CFR+ subgame's setup may use the
        # move up to its first iteration's estimated time.
        sampling = self.config.sampling
        share = (subgame_budget.SAMPLING_SETUP_SHARE if sampling else
                 subgame_budget.RESOLVE_SHARE)
        # A setup running late is given up if it would not end within the move.
        built, info = current.next_subgame(
            key, self.config.variant, *self._budget.limits(
                subgame_budget.RESOLVE_SHARE * seconds if seconds else None,
                start + share * seconds if seconds else None), seed=seed,
            late_deadline=(start + subgame_budget.RESOLVE_SHARE * seconds
                           if seconds else None))
        if not sampling and not info.get("iterations_ahead"):
          self._budget.first_iteration(built, info["subgame_nodes"], record,
                                       start + seconds if seconds else None)
      else:
        gadget, profile, info = current.next_subgame(
            key, self.config.variant,
            start + resolver.BUILD_SHARE * seconds if seconds else None)
    except resolver.CannotResolve as error:
      record["fallback"] = f"kept the current subgame: {error}"
      record["strategy"] = "the current subgame's solve (its strategy below this turn)"
      if self._tree is not None:
        # A refused subgame draws no seed, as on the live path (the next resolver's
        # random stream is the same on both paths).
        self._resolves -= 1
        # The next subgame below this one can still be resolved (compiled_resolving)
        # if the trace below it fits what is left of the move.
        left = start + subgame_budget.RESOLVE_SHARE * seconds - time.perf_counter()
        traced = current.defer(key, refused=built,
                               max_seconds=max(left, 0.0) if seconds else None)
        record["fallback"] += ("; the next turns below it are traced" if traced else
                               "; too many roots to trace below it within the move")
        # No iteration of the current solve would estimate the next inputs in the
        # rest of the move: its average strategy gives them now, if that fits.
        if (traced and seconds and not current.will_iterate(self._move, start) and
            current.average_pass_ahead(start + subgame_budget.RESOLVE_SHARE *
                                       seconds)):
          record["fallback"] += ("; the next inputs are estimated from its average "
                                 "strategy")
      return
    record.update(info)
    if info["variant"] != self.config.variant:
      record["fallback"] = ("unsafe gadget has zero joint reach at the bot's "
                            "histories; resolve gadget used")
    if self._tree is not None:
      self.resolver = built
      record["new_subgame"] = True
      return
    warm = current if self.config.keep_solver_data else None
    self._new_resolver(tracing.Problem(self._game, self._player_id, gadget), record, start,
                       seconds, warm=warm, trunk=profile,
                       parent_root_mass=current.root_mass)

  def _builds_ahead(self):
    """Whether the bot builds next subgames ahead (compiled path, CFR+ family; the
    unsafe gadget depends on the infoset, not only on the subgame)."""
    return (self._build_ahead_enabled and self._tree is not None and
            not self.config.sampling and self.config.variant != "unsafe")

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
    previous = self.resolver
    visited_before = previous.visited_states if previous is not None else 0
    if self.resolver is None:
      preplay = self._preplay if self._preplay_pending else limits.Limit()
      self._preplay_pending = False
      self._first_resolver(record, start, seconds + (preplay.seconds or 0.0))
      # Setup (before the match, and at this decision) overrunning the pre-play is
      # charged to it (module docstring).
      preplay_start = start - record.get("prepared_seconds", 0.0)
      samples = self.resolver.timing["samples"] = []
      done = self.resolver.run(preplay, preplay_start)
      del self.resolver.timing["samples"]
      record["iterations"] += done
      if self._tree is not None:
        self._budget.from_trunk(samples, self.resolver.timing.get("per_iteration"),
                                self._tree.num_nodes)
      move_start = (min(time.perf_counter(), preplay_start + preplay.seconds)
                    if preplay.seconds else start)
      record["budget_seconds"] = seconds + (preplay.seconds or 0.0)
    else:
      lookup, enters = self._lookup(key)
      record["enters_new_subgame"] = enters
      if enters:
        self._new_subgame(lookup, record, start, seconds)
      move_start = start
      record["budget_seconds"] = seconds
    record.setdefault("strategy", "this subgame's solve" if record["new_subgame"]
                      else "the current subgame's solve (same subgame)")
    record["setup_seconds"] = time.perf_counter() - start
    move = self._move
    ahead = self._builds_ahead() and bool(record["budget_seconds"])
    if ahead:
      infoset = self._tree.infoset_index(self._player_id, key)
      ahead_deadline = start + subgame_budget.RESOLVE_SHARE * record["budget_seconds"]
      # The iterations stop early enough to build a costly next subgame ahead.
      reserve, skipped = self._budget.plan_ahead(self.resolver, infoset, seconds,
                                                 ahead_deadline)
      if reserve:
        record["ahead_reserve_seconds"] = reserve
        move = limits.Limit(seconds=max(
            min(seconds, ahead_deadline - reserve - move_start), 0.0))
    iterating = time.perf_counter()
    record["iterations"] += self.resolver.run(move, move_start)
    record["iterate_seconds"] = time.perf_counter() - iterating
    policy = self.current_policy(state)
    index = outcome_sampling.sample_index([p for _, p in policy], self._rng.random())
    action = policy[index][0]
    if ahead:
      built = self._budget.build_ahead(
          self.resolver, infoset, index, self.config.variant,
          self._resolve_seed(self._resolves + 1), ahead_deadline,  # (seed not drawn)
          skipped)
      if built:
        record["built_ahead"] = built
    record["seconds"] = time.perf_counter() - start
    record["visited_states"] = self.resolver.visited_states - (
        visited_before if self.resolver is previous else 0)
    self.decisions.append(record)
    return policy, action

  def step(self, state):
    return self.step_with_policy(state)[1]


# Build function of the registry's cr player (config/builtin.py).

def build_cr(game, player_id, seed, budget, solver, variant, keep, cbr, rm, e, cse, bl,
             cfrd_aware, dl, playouts, terminate):
  return ContinualResolvingBot(
      game, player_id, preplay=budget.preplay, move=budget.online_move(), solver=solver,
      variant=variant, keep_solver_data=keep, use_cbr=cbr, regret_matcher=rm,
      exploration=e, cumulative_strategy_exponent=cse, baseline=bl,
      cfrd_aware_sampling=cfrd_aware, depth_limit=dl, playouts=playouts, seed=seed,
      terminate_values=terminate)
