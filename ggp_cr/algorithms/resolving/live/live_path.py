"""The live path's side of the bot: a match on pyspiel states, for games too large to
compile ([S] ch. 2).

`LivePath` (protocol.Path) starts a match with the whole game's live Resolver at the
first decision, looks the bot's information states up by string and enters the next
subgame's pyspiel gadget within a move_budget.MoveBudget.
"""

import time

import numpy as np

from ggp_cr.algorithms.resolving import move_budget
from ggp_cr.algorithms.resolving import protocol
from ggp_cr.algorithms.resolving.live import live_resolver
from ggp_cr.algorithms.resolving.live import live_problem
from ggp_cr.algorithms.resolving.live import own_trace

# What each share, factor and pace was set from: docs/algorithms/resolving.md,
# "`live/live_path`, `live/own_trace`: the live path's shares and rates".
# Share of a decision's budget by which OwnTrace must have found the next subgame.
OWN_TRACE_SHARE = 0.45
# Share after which a walk from the last information set's histories gives up.
OWN_TRACE_LATE_SHARE = 0.9
# Share of the first decision's budget (pre-play and move) to find its histories.
FIRST_STARTS_SHARE = 0.3
# The bot's turns below the subgame in a full-width solver's (cfr+, dl_cfr+) tree.
NEXT_TURNS = 1
# A trace predicted at this many times the time it has is not started.
TRACE_SKIP_FACTOR = 2.0
# A sample's pace: this many times the last OwnTrace and build's seconds a root ...
PACE_MARGIN = 1.5
# ... measured over at least this many roots.
PACE_MIN_ROOTS = 100
# A record's "subgame_kind" when the roots are a sample of the information set's.
SAMPLED_KIND = "sampled roots"
# Share of a cut walk's starts the next walk, a turn deeper, starts at.
CUT_STARTS_SHARE = 1.0 / 16


class LivePath:
  """The bot's live path: `game` (pyspiel), `player` the bot's seat, `config` a
  settings.ResolverConfig."""

  name = "live"
  shares_decisions = False
  builds_ahead = False

  def __init__(self, game, player, config):
    self.game = game
    self.player = player
    self.config = config
    # Seconds per root of the last complete trace below a gadget, and of its
    # depth-limited tree (full-width solvers), predicting the next ones.
    self._trace_seconds_per_root = None
    self._tree_seconds_per_root = None
    # Seconds per root of the last OwnTrace and gadget build over at least
    # PACE_MIN_ROOTS roots (the pace that a sampled OwnTrace assumes).
    self._seconds_per_root = None
    # Seconds per root that the last trace below a gadget, cut at its deadline, took
    # over the roots it began (when it is the latest trace below a gadget; sampling
    # solvers).
    self._cut_seconds_per_root = None

  def warm_up(self):
    """Nothing to fault in ahead."""

  def shared(self, resolver):
    """What copies of the bot share (players.copy_bot): the current gadget game and
    its compiled tree."""
    if resolver is None:
      return []
    return [item for item in (resolver.problem.gadget, resolver.problem.compiled)
            if item is not None]

  def prepare(self, seed):
    """The match's first resolver is built at its first decision (its trace is
    bounded by that move): the seed only."""
    return seed

  def first(self, prepared, prepared_seconds, record, move):
    """The whole game's live resolver, its next turns traced within the move; with
    a sampling solver, first the histories of the bot's information set
    (record["key"]) found within FIRST_STARTS_SHARE, its next OwnTrace's starts if
    the trace does not end."""
    del prepared_seconds
    problem = live_problem.Problem(self.game, self.player)
    starts = None
    if self.config.sampling:
      # A walk pruned at every decision of the bot's (none is above the histories
      # of its first information set); they end it as in_current.
      own = own_trace.OwnTrace(problem, {}, record["key"],
                                move.deadline(FIRST_STARTS_SHARE))
      record["first_starts_seconds"] = own.seconds
      if own.complete and own.current_starts:
        starts = own.current_starts
        record["first_starts"] = len(starts)
    resolver = self._resolver(problem, record, move, prepared)
    if not resolver.trace.complete and resolver.solver_collects_by_history:
      resolver.start_own_traces_at(starts)
    return resolver

  def after_preplay(self, budget, samples, resolver):
    """The live path has no subgame budget to fit."""

  def lookup(self, resolver, key):
    """(the information state `key`, whether it starts a new subgame: in the map;
    after an incomplete trace, whether it does is found out by `enter`)."""
    if resolver.own_trace_next and resolver.solver_collects_by_history:
      return key, True
    return key, key in resolver.trace.subgame_map

  def policy(self, resolver, key, legal):
    """The average strategy's probabilities of `legal` at `key`."""
    return resolver.probabilities(key, legal)

  def played(self, resolver, key, action):
    """Notes the bot's move for own_trace.OwnTrace."""
    resolver.own_moves.setdefault(key, set()).add(action)

  def entry_key(self, resolver, key):
    """Live decisions are not shared (shares_decisions is False)."""
    del resolver, key

  def enter(self, current, key, record, move, seed, budget):
    """The next subgame's live resolver at `key`: its gadget built within
    BUILD_SHARE of the move, its next turns traced within TRACE_SHARE; raises
    protocol.CannotResolve."""
    del budget
    start = time.perf_counter()
    trace = None
    if current.own_trace_next:
      trace = self._own_trace(current, key, record, move, seed)
    used = current.trace if trace is None else trace
    try:
      gadget, profile, info = current.next_subgame(
          key, self.config.variant, move.deadline(move_budget.BUILD_SHARE), trace)
    except protocol.CannotResolve:
      # The bot stays: its next OwnTrace starts at this turn's histories.
      current.start_own_traces_at(used.starts_below(key))
      raise
    protocol.record_entry(record, info, self.config.variant)
    if trace is not None:
      record["own_trace"] = True
      if info["roots"] >= PACE_MIN_ROOTS:
        # (the native walk, over every history found before the sample is
        # drawn, is not a kept root's cost)
        self._seconds_per_root = (time.perf_counter() - start -
                                  trace.native_seconds) / info["roots"]
    # Below a subgame over sampled roots every subgame's roots are a sample too.
    sampled = current.sampled_roots or (trace is not None and
                                        trace.sampled is not None)
    if sampled:
      record["subgame_kind"] = SAMPLED_KIND
    warm = current if self.config.keep_solver_data else None
    resolver = self._resolver(live_problem.Problem(self.game, self.player, gadget),
                              record, move, seed, warm=warm, trunk=profile,
                              parent_root_mass=current.root_mass)
    resolver.sampled_roots = sampled
    # The roots above the bot's information set here (OwnTrace walks only these),
    # and its histories there (OwnTrace starts at them when given).
    resolver.start_own_traces_at(used.starts_below(key, resolver.problem))
    if resolver.own_starts is not None:
      record["own_starts"] = len(resolver.own_starts)
    histories = used.histories
    resolver.own_root_histories = frozenset(
        histories[r] for r in used.subgame_map.own_roots(key))
    return resolver

  def _own_trace(self, current, key, record, move, seed):
    """The next turns below the bot's own decisions in the current subgame, when
    its full trace did not end in time (own_trace.OwnTrace, its histories of
    `key` sampled (by `seed`) down to what the move pays for before BUILD_SHARE:
    record["roots_sampled"] says how many of how many); raises CannotResolve
    if `key` is still in the current subgame or the walk misses OWN_TRACE_SHARE
    (then a walk from starts goes on to OWN_TRACE_LATE_SHARE if predicted to end
    by then, so that the next decision's walk starts at this turn's histories;
    otherwise it starts at a seeded sample of CUT_STARTS_SHARE of this walk's
    starts, record["own_trace_recovery"])."""
    starts = current.own_starts
    cap = current.own_starts_cap
    if starts is not None and cap is not None and cap < len(starts):
      # (after a cut walk: a seeded sample of its starts, CUT_STARTS_SHARE)
      kept = np.sort(np.random.default_rng([seed, 1]).choice(
          len(starts), size=cap, replace=False))
      record["own_trace_recovery"] = (
          "the last walk was cut: this one starts at a seeded sample of %d of its "
          "%d starts" % (cap, len(starts)))
      starts = [starts[k] for k in kept.tolist()]
      current.sampled_roots = True
    sample = None
    build_end = move.deadline(move_budget.BUILD_SHARE)
    if build_end is not None:
      rate = self._seconds_per_root
      sample = (np.random.default_rng(seed), build_end,
                None if rate is None else PACE_MARGIN * rate)
    trace = own_trace.OwnTrace(current.problem, current.own_moves, key,
                                move.deadline(OWN_TRACE_SHARE),
                                current.own_root_histories, starts,
                                sample=sample)
    if trace.sampled is not None:
      record["roots_sampled"] = "%d of %d" % trace.sampled
      # (its histories here, if it stays, are a sample too: the next walk's starts)
      current.sampled_roots = True
    record["own_trace_seconds"] = trace.seconds
    record["own_trace_walked"] = trace.histories_walked
    record["own_trace_from"] = "starts" if starts is not None else "roots"
    if trace.native_paths is not None:  # (own_trace.OwnTrace's native walk)
      record["own_trace_native_paths"] = trace.native_paths
    if trace.in_current:
      record["enters_new_subgame"] = False
      if trace.complete:
        current.start_own_traces_at(trace.current_starts)
      raise protocol.CannotResolve("its information state is in the current subgame")
    if not trace.complete:
      # The bot stays; the rest of the walk, if predicted (at its pace so far over
      # the starts) to end before OWN_TRACE_LATE_SHARE, spares the next decision's
      # walk this turn (it starts at this turn's histories).
      late = False
      progress = trace.progress
      if progress:
        record["own_trace_progress"] = progress
        rest = trace.seconds * (1.0 - progress) / progress
        if time.perf_counter() + rest <= move.deadline(OWN_TRACE_LATE_SHARE):
          late = trace.resume(move.deadline(OWN_TRACE_LATE_SHARE))
          record["own_trace_late_seconds"] = (trace.seconds -
                                              record["own_trace_seconds"])
      if late:
        current.start_own_traces_at(trace.current_starts if trace.in_current else
                                    trace.starts_below(key))
      elif starts is not None:
        # The next walk (one turn deeper) starts at a sample of these starts.
        current.start_own_traces_at(
            starts, max(1, int(CUT_STARTS_SHARE * len(starts))))
        record["own_trace_next_starts"] = current.own_starts_cap
      raise protocol.CannotResolve(
          "the next turns below its own decisions were not traced within the time "
          "budget" + ("; traced later in the move (the next walk starts at this "
                      "turn's histories)" if late else
                      "; the next walk starts at a seeded sample of %d of its %d "
                      "starts" % (current.own_starts_cap, len(starts))
                      if starts is not None else ""))
    if key not in trace.subgame_map:
      raise protocol.CannotResolve("its information state was not found below its "
                                   "own decisions in the current subgame")
    return trace

  def refused(self, current, key, error, record, move, limit):
    """The bot keeps the current subgame; with a sampling solver its next new
    subgame is found by own_trace.OwnTrace (passing through this turn), since the
    trace's map ends here."""
    del key, error, record, move, limit
    current.trace_own_next()

  def _resolver(self, problem, record, move, seed, **kwargs):
    """The resolver of `problem`; its trace (and a full-width solver's tree) is not
    started when the last complete one below a gadget (seconds per root) predicts
    it would take more than TRACE_SKIP_FACTOR times what is left before
    TRACE_SHARE, or, with a sampling solver, when the last
    one was cut and at its pace it would not end in the time left."""
    deadline = move.deadline(move_budget.TRACE_SHARE)
    skipped = False
    per_root = self._trace_seconds_per_root
    if not self.config.sampling and per_root is not None and \
        self._tree_seconds_per_root is not None:
      per_root += self._tree_seconds_per_root
    if deadline is not None and problem.gadget is not None and per_root is not None:
      predicted = len(problem.root_states) * per_root
      if predicted > TRACE_SKIP_FACTOR * (deadline - time.perf_counter()):
        record["trace_skipped_predicted_seconds"] = predicted
        deadline, skipped = time.perf_counter(), True
    elif (deadline is not None and problem.gadget is not None and
          self.config.sampling and self._cut_seconds_per_root is not None):
      at_least = len(problem.root_states) * self._cut_seconds_per_root
      if at_least > deadline - time.perf_counter():
        record["trace_skipped_at_least_seconds"] = at_least
        deadline, skipped = time.perf_counter(), True
    # With seconds, the full-width solvers' tree is laid out to the next turns.
    turns = NEXT_TURNS if deadline is not None else None
    resolver = live_resolver.Resolver(problem, self.config, seed, deadline=deadline,
                                      turns=turns, **kwargs)
    if (problem.gadget is not None and self.config.sampling and not skipped and
        not resolver.trace.complete):
      self._trace_seconds_per_root = None
      # (over the roots it began: over all of them, IIGS{13}'s cut traces gave a
      # pace far below theirs, and every later trace was tried and cut again)
      self._cut_seconds_per_root = (resolver.trace.seconds /
                                    max(1, len(resolver.trace.current_root_nodes)))
    if resolver.trace.complete and problem.gadget is not None:
      self._cut_seconds_per_root = None
      self._trace_seconds_per_root = (resolver.trace.seconds /
                                      len(problem.root_states))
      if resolver.tree_seconds is not None:
        self._tree_seconds_per_root = (resolver.tree_seconds /
                                       len(problem.root_states))
    fallbacks = []
    if resolver.tree_fallback is not None:
      fallbacks.append(resolver.tree_fallback)
    if not resolver.config.sampling and turns is not None:
      record["tree_nodes"] = resolver.problem.compiled.num_nodes
    if not resolver.trace.complete:
      fallbacks.append(
          "the next turns were not traced within the time budget; "
          + ("the next subgame is traced below the bot's own decisions "
             "(own_trace.OwnTrace)" if resolver.solver_collects_by_history else
             "the bot stays in this subgame"))
    if fallbacks:
      record["fallback"] = "; ".join(fallbacks)
    return resolver
