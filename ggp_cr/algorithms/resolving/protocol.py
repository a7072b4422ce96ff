"""The seam between the bot and a subgame solver path: the `Resolver` protocol ([S] ch. 2).

A resolver solves one subgame (or the whole game) within a move's budget and gives the
next subgames' inputs; a `Path` starts, looks up and enters them for the bot. The
compiled path (compiled/) and the live path (live/) implement both.
"""

import typing

from ggp_cr.algorithms.bots import anytime

# AnytimeRun.run's loop: an iteration starts while this many times the recent
# longest iteration fits; that estimate decays by _RUN_DECAY a call.
_RUN_MARGIN = 2.0
_RUN_DECAY = 0.95


class CannotResolve(Exception):
  """The next subgame's gadget cannot be built from what is known (or in time)."""


class Resolver(typing.Protocol):
  """What ContinualResolvingBot asks of a resolver (one per visited subgame)."""

  config: object  # settings.ResolverConfig
  timing: dict  # anytime.spend's per-iteration estimates, kept between moves

  @property
  def visited_states(self):
    """Histories its solver has touched so far ([S] §5.1)."""

  def run(self, limit, start):
    """Iterates for limits.Limit `limit` from time `start`; the iterations done."""

  def will_iterate(self, limit, start):
    """Whether `run(limit, start)`, called now, would run an iteration."""

  def next_subgame(self, key, variant, *args, **kwargs):
    """The next subgame of the bot's information state `key` (raises CannotResolve)."""


class Path(typing.Protocol):
  """The bot's side of a path (compiled.compiled_path, live.live_path): how a match
  starts, how the bot's information states are looked up and subgames entered. The
  bot chooses its path once; nothing else in it depends on which."""

  name: str  # "compiled" or "live"
  shares_decisions: bool  # equal decision keys give equal decisions (iterations)
  builds_ahead: bool  # timed moves may build the next subgames ahead

  def prepare(self, seed):
    """When a match starts: what `first` needs (the whole game's resolver or not)."""

  def first(self, prepared, prepared_seconds, record, move):
    """The match's first Resolver (the whole game)."""

  def lookup(self, resolver, key):
    """(the resolver's id of information state `key`, whether it starts a subgame)."""

  def policy(self, resolver, key, legal):
    """The average strategy's probabilities of `legal` at `key`."""

  def enter(self, current, lookup, record, move, seed, budget):
    """The next subgame's Resolver within move_budget.MoveBudget `move`; raises
    CannotResolve."""

  def refused(self, current, lookup, error, record, move, limit):
    """After CannotResolve: what the current resolver does for the next turns."""

  def played(self, resolver, key, action):
    """The bot played `action` at information state `key` (the live path's
    OwnTrace walks only the bot's own moves)."""


def record_entry(record, info, variant):
  """Adds a new subgame's `info` to the decision's record; notes an unsafe gadget
  that became a resolve gadget (zero joint reach at the bot's histories)."""
  record.update(info)
  if info["variant"] != variant:
    record["fallback"] = ("unsafe gadget has zero joint reach at the bot's "
                          "histories; resolve gadget used")


class AnytimeRun:
  """The anytime loop both resolvers run: `solver.iterate(n)` within a limit."""

  # anytime.spend's batches: one iteration per call (live solvers) or a share.
  batch_share = None
  # How fast the recent longest iteration's estimate decays (a resolver whose later
  # iterations run faster than its first may decay it faster).
  run_decay = _RUN_DECAY

  @property
  def run_margin(self):
    """How many times the recent longest iteration must fit for the loop to start
    one (a resolver whose iterations run steadily may ask for less; `run` asks
    before each iteration)."""
    return _RUN_MARGIN

  def run(self, limit, start):
    """Iterates for `limit` from time `start`; returns the iterations done (stopping
    while twice the recent longest iteration, or batch, still fits; the estimate
    carries over to this resolver's later moves)."""
    return anytime.spend(limit, start, self.solver.iterate,
                         margin=lambda: self.run_margin,
                         decay=self.run_decay, batch_share=self.batch_share,
                         timing=self.timing)

  def will_iterate(self, limit, start):
    """Whether `run(limit, start)`, called now, would run an iteration."""
    return anytime.would_start(limit, start, margin=self.run_margin,
                               decay=self.run_decay, timing=self.timing)
