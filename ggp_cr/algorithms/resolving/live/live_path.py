"""The live path's side of the bot: a match on pyspiel states, for games too large to
compile ([S] ch. 2).

`LivePath` (protocol.Path) starts a match with the whole game's live Resolver at the
first decision, looks the bot's information states up by string and enters the next
subgame's pyspiel gadget within a move_budget.MoveBudget.
"""

from ggp_cr.algorithms.resolving import move_budget
from ggp_cr.algorithms.resolving import protocol
from ggp_cr.algorithms.resolving.live import live_resolver
from ggp_cr.algorithms.resolving.live import live_trace


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
    """The whole game's live resolver, its next turns traced within the move."""
    del prepared_seconds
    return self._resolver(live_trace.Problem(self.game, self.player), record, move,
                          prepared)

  def after_preplay(self, budget, samples, resolver):
    """The live path has no subgame budget to fit."""

  def lookup(self, resolver, key):
    """(the information state `key`, whether it starts a new subgame)."""
    return key, key in resolver.trace.subgame_map

  def policy(self, resolver, key, legal):
    """The average strategy's probabilities of `legal` at `key`."""
    return resolver.probabilities(key, legal)

  def entry_key(self, resolver, key):
    """Live decisions are not shared (shares_decisions is False)."""
    del resolver, key

  def enter(self, current, key, record, move, seed, budget):
    """The next subgame's live resolver at `key`: its gadget built within
    BUILD_SHARE of the move, its next turns traced within TRACE_SHARE; raises
    protocol.CannotResolve."""
    del budget
    gadget, profile, info = current.next_subgame(
        key, self.config.variant, move.deadline(move_budget.BUILD_SHARE))
    protocol.record_entry(record, info, self.config.variant)
    warm = current if self.config.keep_solver_data else None
    return self._resolver(live_trace.Problem(self.game, self.player, gadget), record,
                          move, seed, warm=warm, trunk=profile,
                          parent_root_mass=current.root_mass)

  def refused(self, current, key, error, record, move, limit):
    """The bot keeps the current subgame; nothing else to do on live states."""

  def _resolver(self, problem, record, move, seed, **kwargs):
    resolver = live_resolver.Resolver(
        problem, self.config, seed, deadline=move.deadline(move_budget.TRACE_SHARE),
        **kwargs)
    if not resolver.trace.complete:
      record["fallback"] = ("the next turns were not traced within the time budget; "
                            "the bot stays in this subgame")
    return resolver
