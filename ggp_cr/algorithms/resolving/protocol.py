"""The seam between the bot and a subgame solver path: the `Resolver` protocol ([S] ch. 2).

A resolver solves one subgame (or the whole game) within a move's budget and gives the
next subgames' inputs; the compiled path (compiled.compiled_resolver) and the live path
(live.live_resolver) implement it and share `AnytimeRun`'s loop.
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


class AnytimeRun:
  """The anytime loop both resolvers run: `solver.iterate(n)` within a limit."""

  # anytime.spend's batches: one iteration per call (live solvers) or a share.
  batch_share = None

  def run(self, limit, start):
    """Iterates for `limit` from time `start`; returns the iterations done (stopping
    while twice the recent longest iteration, or batch, still fits; the estimate
    carries over to this resolver's later moves)."""
    return anytime.spend(limit, start, self.solver.iterate, margin=_RUN_MARGIN,
                         decay=_RUN_DECAY, batch_share=self.batch_share,
                         timing=self.timing)

  def will_iterate(self, limit, start):
    """Whether `run(limit, start)`, called now, would run an iteration."""
    return anytime.would_start(limit, start, margin=_RUN_MARGIN, decay=_RUN_DECAY,
                               timing=self.timing)
