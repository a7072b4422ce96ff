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

# --- Time estimates (wall clock on the shared 2-core machine) ----------------------

# The live path's shares of a move: tracing the next turns, building the next gadget
# (after live_path.OWN_TRACE_SHARE).
TRACE_SHARE = 0.6
BUILD_SHARE = 0.6
# About the time of one pass of a compiled kernel per tree node (shared machine).
SECONDS_PER_NODE_PASS = 5e-8
# A copying GadgetView's layout per subgame node (66-150 ns measured on Leduc{3,30}
# subgames of 1.9-2.5M nodes, benchmarks/cr_compiled_resolve.py before in-place views).
COPY_SECONDS_PER_NODE = 1.5e-7
# Setting a subgame up: once, per root (its inputs and its view), and per node walked
# and next turn found by the trace of the next turns below it (subgame_trace.
# trace_steps counts both before the trace): CPU time fitted to PAM{8}'s deepest
# subgames, solved in place (95k-543k roots; 0.28-0.54M nodes walked, 0-0.54M turns
# found); a deferred trace below a refused subgame by the last two.
SETUP_SECONDS = 4e-3
SETUP_SECONDS_PER_ROOT = 6e-8
# The sampling solvers' in-place setup per root (the sampler's prefix arrays) and per
# next turn found below (the next roots' climb and node map), fitted to PAM{8}'s
# subgames in a sampling bot's process once freed memory stopped being given back
# (bots/anytime.keep_freed_memory), wall clock, quiet machine, the trace below
# (TRACE_SECONDS_*) included: 35-37k roots with 171-177k found 19-22 ms (the old
# estimate 27, the new 22), 89-95k roots with 508-538k found 45-62 ms (66-70; 53-
# 56), 163-168k roots and none found 21-22 ms (40; 24), 490-510k roots and none
# found 50-53 ms (114; 64). The old 2.2e-7 a root and 3e-8 a turn found were
# fitted to setups that page-faulted fresh memory (they took 1.4-2.2 times the
# estimate before them) and kept the 95k-root subgame out of a 0.1 s move.
# Of a subgame's setup per root, the next roots' inputs (NextRootEstimates.inputs)
# take about this much a root; the view the rest (both cores busy, PAM{8}'s
# 95k- and 542k-root subgames: 0.18 of the per-root part; setup_stages).
INPUTS_SECONDS_PER_ROOT = 1.1e-8
# ... and an in-place view's plan (GadgetView._plan) about this much a root, before its
# solver's structures (about 0.4 of CFR+'s view at 542k roots).
PLAN_SECONDS_PER_ROOT = 2e-8
SAMPLING_SETUP_SECONDS_PER_ROOT = 1.2e-7
SAMPLING_SETUP_SECONDS_PER_FOUND = 2e-8
TRACE_SECONDS_PER_WALKED = 1.8e-8
TRACE_SECONDS_PER_FOUND = 4.5e-8
# A deferred trace's cost per root of the refused subgame besides the trace's own
# (CompiledResolver.defer): 7 ms measured below PAM{8}'s 542k-root last turn, about 30
# inferred in a slow hour of the machine (nothing is found there); estimated 0
# before, so a defer after a setup given up late overran the move.
DEFER_SECONDS_PER_ROOT = 2e-8
# In a sampling bot's process the same defer took 2-4 times as long, quiet machine:
# below PAM{8}'s 95k-root subgame (estimated 31 ms) 63-82 ms in 0.2 s moves (its
# trace 53-70 ms; 32 ms in a CFR+ bot's process) and 110-130 ms in 0.1 s moves,
# where with twice the estimate it was started with 90 ms left and overran the move
# (1.138 and 1.347 times it). At 0.1 s it is now not made there: the next subgame
# below, the 529k-root last turn, would not fit a sampling bot's setup share anyway.
SAMPLING_DEFER_SLOWDOWN = 4.0
# A CFR+ iteration's cost per next root beyond its cost per node: the estimates it
# adds there (9 ms at PAM{8}'s 542k next roots below a 95k-root subgame, whose
# iteration's passes took 23 ms; CPU time on the shared 2-core machine).
ITERATION_SECONDS_PER_NEXT_ROOT = 1.7e-8
# One pass of a view's average strategy (next-root inputs after a refusal with no
# iteration since), per node of the view: 3.9-5 ns measured (PAM{8}'s whole tree
# and its 3.3M-node last-turn view in place, latent TTT's whole tree: 10-13 and
# 23-25 ms; the first pass 1.4 times that), about 0.4 of a CFR+ iteration. The old
# estimate, a whole iteration at the resolver's decayed maximum (inflated by the
# first pre-play iterations), kept a latent TTT bot from resolving for the rest of
# a match after one refusal; half of it stays a floor (_average_pass_seconds).
AVERAGE_PASS_SECONDS_PER_NODE = 7e-9
# Writing a subgame's gadget payoffs at its terminals into the shared value array
# (subgame_cfr.SubgameCFRPlus.write_payoffs), per subgame node: 2.5-3.2 ms median,
# 5.5-5.7 max for PAM{8}'s 2.5M-node subgames (load 1-4), part of their first
# iteration unless made ahead (CompiledResolver.payoffs_ahead) in a move's last
# milliseconds: about the median, so that it fits there more often (an overrun
# of the max is 2 ms; docs/algorithms/resolving.md).
PAYOFF_SECONDS_PER_NODE = 1.5e-9
# Finding the next subgames below the bot's action (ahead_candidates: a climb from
# every next root up to the bot's infoset, and sums per group), or the costs of
# those below its infoset (next_groups_below), per next root: 2.5-3.2 and 5 ms at
# PAM{8}'s 542k next roots, quiet machine (the climb to the game's root took 28 ms,
# page faults included, before it stopped at the infoset's first history).
AHEAD_SECONDS_PER_NEXT_ROOT = 1e-8

# A first guess of one CFR+ iteration's seconds per node of a compiled subgame (25-30
# ms for Leduc{3,30} subgames of 1.2-1.9M nodes on a shared 2-core machine,
# benchmarks/cr_compiled_resolve.py); replaced after pre-play by the whole game's
# iterations times VIEW_SLOWDOWN (in-place views stream about 1.6 times slower than
# the contiguous tree) and re-measured at every subgame's first iteration. Building a
# view costs about 1-5 ms whatever its size; tracing its next turns is bounded by the
# move's deadline (CannotResolve).
ITERATION_SECONDS_PER_NODE = 3e-8
VIEW_SLOWDOWN = 1.6
# The anytime loop's per-iteration estimate (the recent longest iteration, decayed
# this much an iteration; protocol.AnytimeRun's 0.95 otherwise) for CFR+ solved in
# place with pruned passes: its first iteration visits the whole subgame, later ones
# skip what CFR+ stopped reaching (PAM{8}'s first subgames, load 4: 28-35 ms, then
# 10-16 ms at iterations 2-5 and 20-25 ms from the 6th); at 0.95 the first
# iteration's time held the loop back for the whole move (an iteration starts while
# twice the estimate fits).
PRUNED_RUN_DECAY = 0.5
# ... and from its third iteration on an iteration starts while this many times that
# estimate fits before RESOLVE_SHARE of the move (CompiledResolver.run_margin;
# protocol.AnytimeRun's 2 otherwise): pruned iterations grow slowly, and the rest of
# the move absorbs a longer one (measurements: docs/algorithms/resolving.md).
PRUNED_RUN_MARGIN = 1.0
# A subgame is built only if its first iteration, counted FIRST_ITERATION_MARGIN times
# over (its estimate's error), fits this share of the move; the iteration then runs
# only if it still fits what is left.
RESOLVE_SHARE = 0.95
FIRST_ITERATION_MARGIN = 1.25
# A sampling solver's subgame setup may use this share of the move (its iterations
# cost microseconds: the rest of the move samples hundreds to thousands of them).
# At 0.6, PAM{8}'s 90-95k-root subgame (45-62 ms) and 490-510k-root last turn
# (about 50 ms, estimated 64) were refused in 0.1 s moves, and the bot's next turn
# below a refused one was not traced either (7b's resolved share 0.85-0.95).
SAMPLING_SETUP_SHARE = 0.8
# Subgames smaller than this do not re-measure the estimate (fixed costs dominate).
MEASURED_NODES = 200_000
# The estimate is the median of the last MEASURED_WINDOW per-node measurements (a
# subgame's first iterations; the pre-play's at first): one iteration slowed down by
# the machine's load no longer doubles it for the rest of the match. After a
# subgame refused for the estimate alone (SubgameBudget.refused_for_time), the
# least-loaded rate of the pre-play (its QUIET_QUANTILE, times VIEW_SLOWDOWN) is
# counted as a measurement: on PAM{8} a pre-play slowed to 80-133 ms an iteration
# (45 ms before) made every later subgame of the match "more than the 1,457,070
# [nodes] its build time allows", and with no first iteration run the estimate was
# never measured again.
MEASURED_WINDOW = 3
QUIET_QUANTILE = 25
# What is left of a CFR+ move (after its iterations and the action) builds the next
# subgames ahead: at most this many a decision.
AHEAD_MAX = 8
# A move keeps time free for building a next subgame ahead (plan_ahead) when that
# subgame's setup and first iteration, estimated, would take more than this share of
# a move of their own.
AHEAD_RESERVE_SHARE = 0.8
# ... and builds ahead a subgame that is not late only if its setup is estimated at
# most this share of a move (plan_ahead).
AHEAD_COSTLY_SHARE = 0.25
# A first decision holds this share of its pre-play back from the whole game's
# pre-play iterations (they continue in the move's unless plan_ahead reserves it)
# for building ahead the next subgames below the bot's action, each large one
# (MEASURED_NODES) with up to AHEAD_ITERATIONS iterations (build_ahead), and more
# with what is left: its own decision then starts that many iterations in
# (Leduc{3,30}'s 1.25-2.5M-node subgames run 4-6 in their own 0.1 s;
# docs/algorithms/resolving.md).
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
  `margin`: its fixed part (SETUP_SECONDS; PAM{8}'s small subgames' whole setups
  take 2.4-2.9 ms) once, the margin on the rest (the per-root and trace estimates'
  error)."""
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
  before the setup (counted with a margin), so only a slow setup is given up. On
  PAM{8} the 542k-root last turn, estimated at 37 ms, once took 118 ms on this
  VM and was refused afterwards, 18% over a 0.1 s move. Work budgeted on its own
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
    kernels loaded, 70 ms against 23 ms on PAM{8}, and a cold numba cache made a mean
    refuse every subgame of a match; `per_iteration` when there are none) on its
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

    On PAM{8} (subgames of 2.5M nodes solved in place, first iterations of 38-49
    ms, a 0.1 s move) the decision before the 95k-root subgame ran a second
    iteration and left too little to set that subgame up (39 ms estimated), and
    its own decision could not fit the setup and the first iteration; the
    542k-root last turn's setup, estimated at 37 ms, took 35-60 ms (built ahead
    once the candidates' search got cheap, it overran a move by 8 ms). A reserve
    for the next subgame's first iteration as well (tried) left most PAM{8}
    subgames with one CFR+ iteration before the bot acted, whose average strategy
    is uniform. Returns (0.0, None) (nothing skipped) when there is no time to
    estimate."""
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
    to run its first.
    On Leduc{3,30}, after a pre-play that left 0.2-0.5 s, player 0's second
    decision entered 1.2-2.5M-node subgames whose setup and first iteration (25-36
    ms and about 60 ms) did not fit its 0.1 s move; PAM{8}'s 95k-root subgame's
    setup (35-45 ms) and first iteration (32-38 ms) did not either, but its setup
    fits what the decision before leaves. At most AHEAD_MAX subgames; nothing is
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
