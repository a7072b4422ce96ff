"""How continual resolving fits a compiled subgame into a timed move ([S] §3.4.1).

One table of fitted costs (setup, trace, defer, iteration, average pass); `MoveBudget`,
one decision's time, which the bot hands down to the solver, and `SetupLimits`, the
stage of it that sets a subgame up (CompiledResolver.next_subgame); `SubgameBudget`,
a match's measured iteration estimate, which makes those limits, runs the first
iteration and builds the next subgames ahead; `SetupClock`, a setup's pace.
"""

import dataclasses
import time

import numpy as np

from ggp_cr.algorithms.bots import anytime
from ggp_cr.algorithms.resolving import protocol

# --- Time estimates and shares of a move (wall clock, shared 2-core machine) -------
# What each is fitted to: docs/algorithms/resolving.md, "`move_budget`: the fitted
# costs and shares".

# The live path's shares of a move: tracing the next turns, building the next gadget.
TRACE_SHARE = 0.6
BUILD_SHARE = 0.6
# One pass of a compiled kernel, per tree node.
SECONDS_PER_NODE_PASS = 5e-8
# A copying GadgetView's layout, per subgame node.
COPY_SECONDS_PER_NODE = 1.5e-7
# Setting a subgame up: once, per root, per node the trace walks and per next turn
# it finds (subgame_trace.trace_steps counts the last two before the trace).
SETUP_SECONDS = 4e-3
SETUP_SECONDS_PER_ROOT = 6e-8
# Of the per-root setup: the next roots' inputs (NextRootEstimates.inputs) ...
INPUTS_SECONDS_PER_ROOT = 1.1e-8
# ... and an in-place view's plan (GadgetView._plan).
PLAN_SECONDS_PER_ROOT = 2e-8
# A sampling solver's in-place setup, per root and per next turn found below.
SAMPLING_SETUP_SECONDS_PER_ROOT = 1.2e-7
SAMPLING_SETUP_SECONDS_PER_FOUND = 2e-8
TRACE_SECONDS_PER_WALKED = 1.8e-8
TRACE_SECONDS_PER_FOUND = 4.5e-8
# A deferred trace's cost per root of the refused subgame besides the trace's own
# (CompiledResolver.defer) ...
DEFER_SECONDS_PER_ROOT = 2e-8
# ... times this in a sampling bot's process.
SAMPLING_DEFER_SLOWDOWN = 4.0
# A CFR+ iteration's cost per next root beyond its cost per node (the estimates it
# adds there).
ITERATION_SECONDS_PER_NEXT_ROOT = 1.7e-8
# One pass of a view's average strategy, per node of the view (half of it a floor:
# _average_pass_seconds).
AVERAGE_PASS_SECONDS_PER_NODE = 7e-9
# Writing a subgame's gadget payoffs at its terminals, per subgame node
# (subgame_cfr.SubgameCFRPlus.write_payoffs; CompiledResolver.payoffs_ahead).
PAYOFF_SECONDS_PER_NODE = 1.5e-9
# Finding the next subgames below the bot's action (ahead_candidates) or the costs
# of those below its infoset (next_groups_below), per next root.
AHEAD_SECONDS_PER_NEXT_ROOT = 1e-8
# A first guess of a CFR+ iteration's seconds per subgame node, replaced after
# pre-play by the whole game's iterations times VIEW_SLOWDOWN (an in-place view
# streams slower than the contiguous tree) and re-measured at every subgame's first
# iteration.
ITERATION_SECONDS_PER_NODE = 3e-8
VIEW_SLOWDOWN = 1.6
# CFR+ solved in place with pruned passes: the anytime loop's per-iteration
# estimate (the recent longest iteration) decays this much an iteration
# (protocol.AnytimeRun's 0.95 otherwise) ...
PRUNED_RUN_DECAY = 0.5
# ... and from its third iteration on an iteration starts while this many times
# that estimate fits before RESOLVE_SHARE (CompiledResolver.run_margin;
# protocol.AnytimeRun's 2 otherwise).
PRUNED_RUN_MARGIN = 1.0
# A subgame is built only if its first iteration, counted FIRST_ITERATION_MARGIN
# times, fits this share of the move; the iteration then runs only if it still fits.
RESOLVE_SHARE = 0.95
FIRST_ITERATION_MARGIN = 1.25
# The share of the move a sampling solver's subgame setup may use.
SAMPLING_SETUP_SHARE = 0.8
# Subgames smaller than this do not re-measure the estimate.
MEASURED_NODES = 200_000
# The estimate is the median of the last MEASURED_WINDOW per-node measurements;
# after a subgame refused for the estimate alone the pre-play's QUIET_QUANTILE rate
# counts as one (SubgameBudget.refused_for_time).
MEASURED_WINDOW = 3
QUIET_QUANTILE = 25
# What is left of a CFR+ move builds at most this many next subgames ahead.
AHEAD_MAX = 8
# A move keeps time free for building a next subgame ahead (plan_ahead) when that
# subgame's setup and first iteration would take more than this share of a move ...
AHEAD_RESERVE_SHARE = 0.8
# ... and builds ahead a subgame that is not late only if its setup is estimated at
# most this share of a move.
AHEAD_COSTLY_SHARE = 0.25
# A first decision holds this share of its pre-play back for building ahead the
# next subgames below its action (build_ahead), each large one (MEASURED_NODES) with
# up to AHEAD_ITERATIONS iterations.
AHEAD_PREPLAY_SHARE = 0.25
AHEAD_ITERATIONS = 3


def trace_seconds(walked, found):
  """The estimated seconds of a trace of next turns that walks `walked` nodes and
  finds `found` next turns (subgame_trace.trace_steps' counts; scalars or
  arrays): nothing is walked when nothing is found (trace_subgames)."""
  walked = np.where(np.asarray(found) > 0, walked, 0)
  return TRACE_SECONDS_PER_WALKED * walked + TRACE_SECONDS_PER_FOUND * found


def defer_seconds(roots, walked, found, sampling=False, pace=1.0):
  """The estimated seconds of CompiledResolver.defer below a refused subgame of
  `roots` roots whose trace walks `walked` nodes and finds `found` next turns: the
  trace, and DEFER_SECONDS_PER_ROOT a root (the roots' indices and the fresh trace
  even when nothing is found below them); SAMPLING_DEFER_SLOWDOWN times that with a
  sampling solver; times `pace`, that of the refused subgame's setup
  (SetupClock.pace: a setup given up for running slow is followed by a slow defer)."""
  seconds = trace_seconds(walked, found) + DEFER_SECONDS_PER_ROOT * roots
  return seconds * (SAMPLING_DEFER_SLOWDOWN if sampling else 1.0) * max(pace, 1.0)


def setup_stages(roots, walked, found, sampling=False):
  """The estimated seconds of the stages of setting up a subgame of `roots` roots
  whose trace of the next turns below walks `walked` nodes and finds `found`
  (scalars or arrays), as {stage: seconds} in CompiledResolver._build's order: the
  inputs (SETUP_SECONDS and INPUTS_SECONDS_PER_ROOT a root); the view's plan
  (PLAN_SECONDS_PER_ROOT a root); then with CFR+ the solver's structures (the rest
  of SETUP_SECONDS_PER_ROOT) and the trace of the next turns, with a sampling
  solver the trace (which the sampler makes first) and the sampler's structures
  (the rest of its per-root cost, and its cost per next turn found)."""
  roots = np.asarray(roots)
  inputs = SETUP_SECONDS + INPUTS_SECONDS_PER_ROOT * roots
  plan = PLAN_SECONDS_PER_ROOT * roots
  trace = trace_seconds(walked, found)
  if sampling:
    solver = (SAMPLING_SETUP_SECONDS_PER_ROOT - INPUTS_SECONDS_PER_ROOT -
              PLAN_SECONDS_PER_ROOT) * roots + SAMPLING_SETUP_SECONDS_PER_FOUND * found
    return {"inputs": inputs, "plan": plan, "trace": trace, "solver": solver}
  solver = (SETUP_SECONDS_PER_ROOT - INPUTS_SECONDS_PER_ROOT -
            PLAN_SECONDS_PER_ROOT) * roots
  return {"inputs": inputs, "plan": plan, "solver": solver, "trace": trace}


def setup_seconds(roots, walked, found, sampling=False):
  """The estimated seconds of setting up a subgame of `roots` roots whose trace of
  the next turns below walks `walked` nodes and finds `found` (scalars or arrays):
  SETUP_SECONDS, the trace, and per root (a sampling solver's prefix arrays: per
  root and per next turn found); the sum of setup_stages."""
  return sum(setup_stages(roots, walked, found, sampling).values())


def margined_setup(setup, margin):
  """A setup estimated at `setup` seconds (a scalar or an array) counted with
  `margin`: its fixed part (SETUP_SECONDS) once, the margin on the rest (the
  per-root and trace estimates' error)."""
  return setup + (margin - 1.0) * np.maximum(setup - SETUP_SECONDS, 0.0)


def too_slow(message):
  """The CannotResolve of a subgame refused because its first iteration, as
  estimated, would not fit (`iteration_estimate` True: SubgameBudget.
  refused_for_time)."""
  error = protocol.CannotResolve(message)
  error.iteration_estimate = True
  return error


class SetupClock:
  """Checks a subgame's setup against its estimate at the end of each of its stages
  (`stages`, setup_stages' {stage: seconds} in their order), so that a setup
  running far slower than estimated is given up at once rather than finished and
  then refused.

  At the end of stage k the setup's pace is the seconds it took so far over the
  estimate of the stages done (at least 1: a setup ahead of its estimate is not
  credited); the rest of the setup, at that pace, and `reserve` (the first
  iteration's) must still end before time.perf_counter() `deadline`, else
  `check` raises CannotResolve. On schedule (pace 1) this is weaker than the test
  before the setup (counted with a margin), so only a slow setup is given up. Work
  budgeted on its own
  (exact values' passes) is left out of the pace (`excluding`). `now`: the clock
  (tests).
  """

  def __init__(self, stages, deadline, reserve=0.0, now=time.perf_counter):
    self._names = list(stages)
    self._stages = [float(s) for s in stages.values()]
    self._deadline = deadline
    self._reserve = float(reserve)
    self._now = now
    self._start = now()
    # The pace at the last check (1 before any): how much slower than estimated.
    self.pace = 1.0

  def excluding(self, compute):
    """compute() without counting its time in the pace (work budgeted on its own,
    such as the passes of exact values over the whole tree)."""
    begin = self._now()
    try:
      return compute()
    finally:
      self._start += self._now() - begin

  def check(self, stage):
    """After stage `stage` (a name in `stages`): raises CannotResolve if the rest
    of the setup at the pace so far, and the reserve, would end after the deadline.
    Nothing is tested when nothing is left to do."""
    done = self._names.index(stage) + 1
    rest = sum(self._stages[done:])
    if self._deadline is None or rest + self._reserve <= 0.0:
      return
    now = self._now()
    elapsed = now - self._start
    expected = sum(self._stages[:done])
    pace = max(1.0, elapsed / expected) if expected > 0 else 1.0
    self.pace = pace
    if now + pace * rest + self._reserve > self._deadline:
      raise protocol.CannotResolve(
          f"its setup took {1000 * elapsed:.0f} ms to its {stage} (estimated "
          f"{1000 * expected:.0f} ms); the rest at that pace (about "
          f"{1000 * pace * rest:.0f} ms)"
          f"{' and the first iteration' if self._reserve else ''} would not fit the "
          f"{1000 * (self._deadline - now):.0f} ms left")


@dataclasses.dataclass(frozen=True)
class MoveBudget:
  """One decision's time: its start (time.perf_counter()) and seconds (0 with an
  iteration budget: then nothing has a deadline); `turn_seconds` the online move's
  own seconds when a match's first decision also has the pre-play's (default
  `seconds`). The bot makes one per decision and hands it down to the solver."""
  start: float
  seconds: float
  turn_seconds: float = None

  @property
  def move_seconds(self):
    """The online move's own seconds (without a first decision's pre-play)."""
    return self.seconds if self.turn_seconds is None else self.turn_seconds

  def deadline(self, share=1.0):
    """The time `share` of the move ends (None without seconds)."""
    return self.start + share * self.seconds if self.seconds else None

  def share(self, share):
    """`share` of the move's seconds (None without seconds)."""
    return share * self.seconds if self.seconds else None

  def left(self, share=1.0):
    """Seconds left until `deadline(share)`, at least 0 (None without seconds)."""
    if not self.seconds:
      return None
    return max(self.deadline(share) - time.perf_counter(), 0.0)


@dataclasses.dataclass(frozen=True)
class SetupLimits:
  """The stage of a MoveBudget that sets one subgame up (CompiledResolver.next_subgame
  and build_ahead; SubgameBudget.entering makes it); the default limits nothing.

  The subgame has at most `max_nodes` nodes; its setup, estimated with
  `setup_margin` (`margined`), ends before time.perf_counter() `deadline` leaving
  `first_iteration_seconds(nodes, next_roots)` free; a setup running late
  (SetupClock) is given up if it would not end before `late_deadline` (default
  `deadline`)."""
  deadline: float = None
  max_nodes: float = None
  first_iteration_seconds: object = None
  late_deadline: float = None
  setup_margin: float = 1.0

  def margined(self, setup):
    """margined_setup(setup, self.setup_margin)."""
    return margined_setup(setup, self.setup_margin)

  @property
  def give_up(self):
    """The deadline a setup running late is held to."""
    return self.deadline if self.late_deadline is None else self.late_deadline

  def reserve(self, nodes, next_roots):
    """Seconds kept free after the setup for the first iteration (0 if none)."""
    if self.first_iteration_seconds is None:
      return 0.0
    return self.first_iteration_seconds(nodes, next_roots)


class SubgameBudget:
  """The compiled bot's per-node estimate of a CFR+ iteration on a subgame, for one
  match (a new one per match), and what it decides with it. `sampling`: the bot's
  solver samples (only setups are bounded)."""

  def __init__(self, sampling):
    self.sampling = bool(sampling)
    self.seconds_per_node = ITERATION_SECONDS_PER_NODE
    # The last per-node measurements (the estimate is their median), and the
    # pre-play's least-loaded rate (None before a pre-play).
    self._measured = []
    self._quiet = None

  def from_trunk(self, samples, per_iteration, num_nodes):
    """Sets the estimate from the whole game's pre-play iterations' seconds `samples`
    (their median: the first iterations of a process or match pay for page faults or
    kernels loaded; `per_iteration` when there are none) on its
    `num_nodes` nodes: an in-place view streams about VIEW_SLOWDOWN times slower than
    the whole tree."""
    per_iteration = float(np.median(samples)) if samples else per_iteration
    if per_iteration:
      self._measured = []
      self._measure(VIEW_SLOWDOWN * per_iteration / num_nodes)
      quiet = (float(np.percentile(samples, QUIET_QUANTILE)) if samples else
               per_iteration)
      self._quiet = VIEW_SLOWDOWN * quiet / num_nodes

  def _measure(self, seconds_per_node):
    """Adds a per-node measurement; the estimate is the median of the last
    MEASURED_WINDOW."""
    self._measured = self._measured[-(MEASURED_WINDOW - 1):] + [seconds_per_node]
    self.seconds_per_node = float(np.median(self._measured))

  def refused_for_time(self):
    """After a subgame was refused because its first iteration, as estimated, would
    not fit (protocol.CannotResolve's `iteration_estimate`): the pre-play's
    least-loaded rate counts as a measurement (MEASURED_WINDOW), so that a load
    spike's estimate does not refuse every later subgame of the match; the next
    first iteration that runs measures the machine again."""
    if self._quiet is not None and self._quiet < self.seconds_per_node:
      self._measure(self._quiet)

  def first_iteration_seconds(self, nodes, next_roots):
    """A CFR+ iteration's estimated seconds on a subgame of `nodes` nodes with
    `next_roots` next roots (per node, and per next root for the estimates it adds
    there), counted FIRST_ITERATION_MARGIN times (the estimate's error): what a
    setup must leave free, and what must fit before the first iteration runs."""
    return FIRST_ITERATION_MARGIN * (nodes * self.seconds_per_node +
                                     ITERATION_SECONDS_PER_NEXT_ROOT * next_roots)

  def entering(self, move):
    """The SetupLimits of entering a subgame within MoveBudget `move`: a CFR+
    subgame's setup and first iteration must fit RESOLVE_SHARE of it; a sampling
    solver's setup only is bounded, by SAMPLING_SETUP_SHARE (running late, by
    RESOLVE_SHARE)."""
    late = move.deadline(RESOLVE_SHARE)
    if self.sampling:
      return SetupLimits(deadline=move.deadline(SAMPLING_SETUP_SHARE),
                         late_deadline=late)
    if late is None:
      return SetupLimits()
    return SetupLimits(
        deadline=late, late_deadline=late,
        max_nodes=move.share(RESOLVE_SHARE) / (FIRST_ITERATION_MARGIN *
                                              self.seconds_per_node),
        first_iteration_seconds=self.first_iteration_seconds)

  def first_iteration(self, built, nodes, record, move, share=1.0):
    """Runs the first CFR+ iteration of the compiled resolver `built` (`nodes` nodes)
    when it ends before `share` of MoveBudget `move` (no seconds: always), as
    `first_iteration_seconds` estimates it; adds it to `record`'s iterations and
    re-measures the estimate (the median of the last measurements;
    subgames under MEASURED_NODES, whose fixed costs would inflate it, do not
    count; MEASURED_WINDOW). Raises CannotResolve (too_slow) if it would not fit: a subgame the bot switched to
    must be solved, and the anytime loop would not start an iteration it has no
    estimate for."""
    deadline = move.deadline(share)
    if deadline is None:
      return
    now = time.perf_counter()
    next_roots = ITERATION_SECONDS_PER_NEXT_ROOT * built.trace.num_next_roots
    needed = self.first_iteration_seconds(nodes, built.trace.num_next_roots)
    if now + needed > deadline:
      raise too_slow(
          f"its first iteration (about {1000 * needed / FIRST_ITERATION_MARGIN:.0f} "
          f"ms for {nodes:,} nodes) would not fit the {1000 * (deadline - now):.0f} "
          "ms left of the move")
    built.iterate(1)
    elapsed = time.perf_counter() - now
    built.timing["per_iteration"] = elapsed
    record["iterations"] += 1
    if nodes >= MEASURED_NODES:
      self._measure(max(elapsed - next_roots, 0.0) / nodes)

  def plan_ahead(self, current, infoset, move, held=0.0):
    """Before a CFR+ move (MoveBudget `move`) iterates with the compiled resolver
    `current` at the bot's infoset `infoset`: (seconds its iterations should leave
    free before RESOLVE_SHARE of the move, build_ahead's; the next subgames
    build_ahead should skip), from the setup and first-iteration estimates of the
    next subgames below the infoset, whatever the bot's action. `held`: the
    seconds of a first decision's pre-play held back (AHEAD_PREPLAY_SHARE); the
    reserve is then also up to that much for everything build_ahead makes below
    the action that needs most (_preplay_reserve).

    A next subgame is *late* if its setup and first iteration would take more
    than AHEAD_RESERVE_SHARE of a move of their own. The reserve lets build_ahead
    set up the costliest late one (the candidates' search and the setup, its part
    beyond SETUP_SECONDS counted FIRST_ITERATION_MARGIN times as build_ahead tests
    it: margined_setup), so that its decision
    only runs the first iteration; the bot's current subgame runs fewer iterations
    then. It is 0 when no subgame is late or the reserve would not fit what is
    left. A subgame that is not late but whose setup is estimated above
    AHEAD_COSTLY_SHARE of the move is skipped: its own decision absorbs an
    underestimated setup in the first iteration's reserve (a refusal at worst),
    while built ahead in a move's last milliseconds it would overrun the move.
    Returns (0.0, None) (nothing skipped) when there is no time to estimate."""
    seconds, deadline = move.move_seconds, move.deadline(RESOLVE_SHARE)
    if self.sampling or not seconds or (
        time.perf_counter() + 2 * current.ahead_candidates_seconds() + SETUP_SECONDS >
        deadline):
      return 0.0, None
    groups = current.next_groups_below(infoset)
    setup = setup_seconds(groups["roots"], groups["walked"], groups["found"])
    first = self.first_iteration_seconds(groups["nodes"], groups["found"])
    late = setup + first > AHEAD_RESERVE_SHARE * seconds
    costly = ~late & (setup > AHEAD_COSTLY_SHARE * seconds)
    skipped = set(groups["group"][costly].tolist())
    search = current.ahead_candidates_seconds()
    left = deadline - time.perf_counter()
    need = margined_setup(setup, FIRST_ITERATION_MARGIN)
    reserve = 0.0
    if late.any() and search + need[late].max() <= left:
      reserve = search + float(need[late].max())
    if held:
      reserve = max(reserve, min(search + self._preplay_reserve(current, infoset,
                                                                skipped), held, left))
    return reserve, skipped

  def _preplay_reserve(self, current, infoset, skipped):
    """The most, over the actions at `infoset`, that build_ahead would spend on the
    next subgames below one (those not `skipped`; the AHEAD_MAX costliest): each
    one's setup (margined as build_ahead tests it) and first iteration, a large
    one's (MEASURED_NODES) up to AHEAD_ITERATIONS iterations, each at
    first_iteration_seconds."""
    most = 0.0
    for action in range(current.num_actions(infoset)):
      groups = current.next_groups_below(infoset, action)
      setup = setup_seconds(groups["roots"], groups["walked"], groups["found"])
      first = self.first_iteration_seconds(groups["nodes"], groups["found"])
      iterations = np.where(groups["nodes"] >= MEASURED_NODES, AHEAD_ITERATIONS, 1)
      need = margined_setup(setup, FIRST_ITERATION_MARGIN) + iterations * first
      built = ~np.isin(groups["group"], list(skipped))
      most = max(most, float(np.sort(need[built])[-AHEAD_MAX:].sum()))
    return most

  def iterations_ahead(self, built, nodes, move):
    """build_ahead's iterations on the compiled resolver `built` (`nodes` nodes),
    set up ahead within MoveBudget `move`: its first (first_iteration, up to
    RESOLVE_SHARE of the move; raises CannotResolve if it would not fit), then on a
    large subgame (MEASURED_NODES: a small one's decision holds hundreds) more, up
    to AHEAD_ITERATIONS, while each, at FIRST_ITERATION_MARGIN times the anytime
    loop's estimate (its last iteration), ends before RESOLVE_SHARE: the same
    iterations as its decision would run first (CFR+ is deterministic), whose
    estimate they leave as the loop would."""
    self.first_iteration(built, nodes, {"iterations": 0}, move, RESOLVE_SHARE)
    for _ in range(AHEAD_ITERATIONS - 1):
      if not self.another_iteration(built, nodes, move.deadline(RESOLVE_SHARE)):
        break

  @staticmethod
  def another_iteration(built, nodes, deadline):
    """One more iteration on the compiled resolver `built` (`nodes` nodes, its
    first iteration run) set up ahead, if it is large (MEASURED_NODES) and the
    iteration, at FIRST_ITERATION_MARGIN times the anytime loop's estimate (its
    recent longest), ends before time.perf_counter() `deadline`; its time updates
    that estimate as the loop would (anytime.step_if_it_fits). Returns whether it
    ran."""
    if nodes < MEASURED_NODES:
      return False
    elapsed, built.timing["per_iteration"] = anytime.step_if_it_fits(
        built.iterate, 1, built.timing["per_iteration"], deadline,
        FIRST_ITERATION_MARGIN, built.run_decay)
    return elapsed is not None

  def build_ahead(self, current, infoset, action_index, variant, seed, move,
                  skipped=None):
    """Spends what is left of the move, up to RESOLVE_SHARE of MoveBudget `move`,
    building with the compiled resolver `current` the next subgames the bot may
    enter at its next turn below its action of index `action_index` at its infoset
    `infoset`, likeliest first, each with its first iteration if that fits too (a
    large one's up to AHEAD_ITERATIONS: iterations_ahead;
    CompiledResolver.build_ahead; `seed` the next resolve's), and what is left
    gives the large ones more (CompiledResolver.iterate_ahead): no iteration of
    `current` runs before the next decision, so that decision finds the subgame it
    enters set up with the inputs it would use, solved some iterations in or left
    to run its first. At most AHEAD_MAX subgames; nothing is
    tried unless finding them and the least setup (SETUP_SECONDS) fit; the groups
    in `skipped` (plan_ahead's) are not built; then, if it fits, the likeliest
    one's terminal payoffs are written when its first iteration did not run
    (CompiledResolver.payoffs_ahead). Returns a list of what was built (roots,
    nodes, iterations, seconds)."""
    deadline = move.deadline(RESOLVE_SHARE)
    limits = SetupLimits(deadline=deadline, setup_margin=FIRST_ITERATION_MARGIN)
    if (time.perf_counter() + current.ahead_candidates_seconds() +
        SETUP_SECONDS > deadline):
      return []
    built = []
    for candidate in current.ahead_candidates(infoset, action_index, AHEAD_MAX,
                                              skipped):
      if time.perf_counter() + SETUP_SECONDS > deadline:
        break
      try:
        info = current.build_ahead(
            candidate, variant,
            lambda view, nodes: self.iterations_ahead(view, nodes, move),
            limits, seed=seed)
      except protocol.CannotResolve:
        continue
      built.append(info)
    if built:
      current.payoffs_ahead(deadline)
      current.iterate_ahead(self.another_iteration, deadline, MEASURED_NODES)
    return [{"roots": info["roots"], "subgame_nodes": info["subgame_nodes"],
             "iterations": info["iterations_ahead"],
             "seconds": info["built_ahead_seconds"]} for info in built]
