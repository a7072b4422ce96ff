"""The compiled path's side of the bot: a match on the whole game's compiled tree.

`choose_path` picks the bot's path; `CompiledPath` (protocol.Path) starts a match
with the whole game's CompiledResolver, looks the bot's information states up by tree
infoset, enters the next subgame within a move_budget.MoveBudget and, when it
cannot, defers ([S] ch. 2, §3.4.1).
"""

from ggp_cr.algorithms.bots import anytime
from ggp_cr.algorithms.resolving import move_budget
from ggp_cr.algorithms.resolving import protocol
from ggp_cr.algorithms.resolving.compiled import compiled_resolver
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import native_extraction

# Solvers whose compiled decisions with iteration budgets are shared by equal
# decision keys (tests/resolving/test_continual_resolving.py: the same strategy to
# 1e-9).
_SHARED_SOLVERS = ("cfr+", "vr_mccfr", "mc_cfr")
# The heap a compiled-path bot faults in before its first decision (anytime.
# prefault_heap): this many times its tree's arrays (PAM{8}: 85 MiB of arrays; a
# sampling bot's process grew 130-330 MiB over its first three matches), at most
# PREFAULT_MAX_BYTES.
PREFAULT_TREE_MULTIPLE = 4
PREFAULT_MAX_BYTES = 1 << 30
# The bot's `path` argument, and the largest tree "auto" extracts.
PATHS = ("auto", "compiled", "live")
COMPILED_NODES_LIMIT = compiled_tree.COMPILED_NODES_LIMIT
# Seconds a history's state keys (subgame_trace.StateKeys.build) cost after the tree's
# extraction, natively or by the pyspiel walk of a Python or a C++ game
# (docs/benchmarks.md, bar 8: IIGS{6} 1.28 vs 45.8 s for 2.0 M histories, PAM{8}
# 0.13 vs 19.0 s for 2.6 M; leduc_poker and liars_dice 6 us under load 6), rounded up.
NATIVE_KEYS_SECONDS_PER_HISTORY = 0.7e-6
GENERIC_KEYS_SECONDS_PER_HISTORY = 25e-6
CPP_KEYS_SECONDS_PER_HISTORY = 6e-6


def keys_seconds_per_history(game):
  """Seconds one history's state keys cost for `game` (native or walked)."""
  if native_extraction.state_keys(game) is not None:
    return NATIVE_KEYS_SECONDS_PER_HISTORY
  return (CPP_KEYS_SECONDS_PER_HISTORY if compiled_tree.is_cpp_game(game) else
          GENERIC_KEYS_SECONDS_PER_HISTORY)


def choose_path(game, config, path="auto", nodes_limit=COMPILED_NODES_LIMIT,
                cache_dir=None, tree=None, seconds=None):
  """(path, reason, tree, state_keys) of continual resolving's bot: "compiled" (this
  module's CompiledPath, with the whole game's tree and its StateKeys) or "live"
  (live.live_path, live_resolver.Resolver on pyspiel gadgets; tree and keys None).

  "auto" takes the compiled path, for every solver of `config` (a
  settings.ResolverConfig: CFR+, dl_cfr+ with `view_solvers.depth_limited`, the
  sampling solvers vr_mccfr, mc_cfr of view_sampling.py; keep_solver_data with
  warm_start.py), when the tree is in this process, in `cache_dir`, or extractable
  within `nodes_limit` histories, or when the caller gives `tree` (the game's
  CompiledTree, then used as it is). "compiled" insists (ValueError if it cannot).
  `seconds` (None: no limit): what "auto" may spend extracting the tree and building
  its state keys (compiled_tree.available_tree's `seconds`); a tree that does not fit
  is not extracted and the bot takes the live path, saying why.
  """
  if path not in PATHS:
    raise ValueError(f"path must be one of {', '.join(PATHS)}; got {path!r}.")
  compiled_tree.check_nodes_limit(nodes_limit)
  if path == "live":
    return "live", "live path requested", None, None
  del config  # every solver and option of settings.ResolverConfig runs on both paths
  if tree is not None:
    compiled_tree.check_tree_of(tree, game)
    reason = "tree given by the caller"
  else:
    tree, reason = compiled_tree.available_tree(
        game, nodes_limit, cache_dir,
        seconds=None if path == "compiled" else seconds,
        extra_per_history=keys_seconds_per_history(game))
  if tree is not None:
    keys = compiled_resolver.state_keys(tree, cache_dir)
    keys.subtree_nodes  # pylint: disable=pointless-statement  (computed before play)
    return "compiled", reason, tree, keys
  if path == "compiled":
    raise ValueError(f"The compiled path is not available: {reason}.")
  return "live", reason, None, None


class CompiledPath:
  """The bot's compiled path: `tree` (the whole game's CompiledTree) and its
  StateKeys `keys`, given by the caller; `player` the bot's seat; `config` a
  settings.ResolverConfig."""

  name = "compiled"

  def __init__(self, tree, keys, player, config):
    self.tree = tree
    self.keys = keys
    self.player = player
    self.config = config
    # Iteration-budget decisions equal for equal keys (ContinualResolvingBot.
    # decision_key); next subgames built ahead (CFR+ family; the unsafe gadget
    # depends on the infoset, not only on the subgame).
    self.shares_decisions = config.solver in _SHARED_SOLVERS
    self.builds_ahead = not config.sampling and config.variant != "unsafe"

  def warm_up(self):
    """A subgame's setup makes arrays of its roots' size at every decision: they
    reuse freed memory (prefault_heap applies keep_freed_memory), faulted in before
    the first decision."""
    anytime.prefault_heap(min(PREFAULT_TREE_MULTIPLE * self.tree.nbytes(),
                              PREFAULT_MAX_BYTES))

  def shared(self, resolver):
    """What copies of the bot share (players.copy_bot): the tree and its keys."""
    del resolver
    return [self.tree, self.keys]

  def prepare(self, seed):
    """The whole game's resolver, built when a match starts: its view, trace and
    solver do not depend on the match."""
    return compiled_resolver.CompiledResolver.whole_game(
        self.tree, self.keys, self.player, self.config.use_cbr, self.config, seed)

  def first(self, prepared, prepared_seconds, record, move):
    """The match's first resolver: the prepared one (its time counts as pre-play)."""
    del move
    record["prepared_seconds"] = prepared_seconds
    # The anytime loop's prior for an iteration before any is measured
    # (move_budget.ITERATION_SECONDS_PER_NODE a node, not VIEW_SLOWDOWN's): else a
    # pre-play spent on setup on a loaded machine left it to start the whole
    # game's first iteration blindly with 0.1 s left (latent TTT: 0.27-1.2 s).
    prepared.timing.setdefault(
        "per_iteration", move_budget.ITERATION_SECONDS_PER_NODE * self.tree.num_nodes)
    return prepared

  def after_preplay(self, budget, samples, resolver):
    """Sets the SubgameBudget's iteration estimate from the pre-play's iterations."""
    # With no iteration run, the timing holds first()'s prior, not a measurement.
    budget.from_trunk(samples, resolver.timing.get("per_iteration") if samples else
                      None, self.tree.num_nodes)

  def lookup(self, resolver, key):
    """(tree infoset of the bot's information state `key`, whether it starts a new
    subgame)."""
    infoset = self.tree.infoset_index(self.player, key)
    return infoset, infoset in resolver.trace

  def policy(self, resolver, key, legal):
    """The average strategy's probabilities of `legal` at `key`."""
    del legal
    return list(resolver.probabilities(self.tree.infoset_index(self.player, key)))

  def entry_key(self, resolver, key):
    """The decision key of `resolver` at `key` (CompiledResolver.entry_key)."""
    return resolver.entry_key(self.tree.infoset_index(self.player, key))

  def enter(self, current, infoset, record, move, seed, budget):
    """The next subgame's resolver at `infoset` within `move` (a sampling solver's
    setup may use SAMPLING_SETUP_SHARE of it, larger subgames sampled in place; a
    CFR+ subgame's setup the move up to its first iteration, run here); raises
    protocol.CannotResolve (its `built`: a subgame set up but not solved once)."""
    built = None
    try:
      # A setup running late is given up if it would not end within the move.
      built, info = current.next_subgame(infoset, self.config.variant,
                                         budget.entering(move), seed=seed)
      if not self.config.sampling and not info.get("iterations_ahead"):
        budget.first_iteration(built, info["subgame_nodes"], record, move)
    except protocol.CannotResolve as error:
      error.built = built
      if getattr(error, "iteration_estimate", False):
        budget.refused_for_time()
      raise
    protocol.record_entry(record, info, self.config.variant)
    return built

  def played(self, resolver, key, action):
    """The compiled path's trace holds every next turn: nothing to note."""

  def refused(self, current, infoset, error, record, move, limit):
    """After a refused subgame: the next turns below it are traced if that fits what
    is left of the move, and estimated from the current solve's average strategy
    when no iteration of `limit` would estimate them in the rest of the move."""
    left = move.left(move_budget.RESOLVE_SHARE)
    traced = current.defer(infoset, refused=getattr(error, "built", None),
                           max_seconds=left)
    record["fallback"] += ("; the next turns below it are traced" if traced else
                           "; too many roots to trace below it within the move")
    if (traced and move.seconds and not current.will_iterate(limit, move.start) and
        current.average_pass_ahead(move.deadline(move_budget.RESOLVE_SHARE))):
      record["fallback"] += ("; the next inputs are estimated from its average "
                             "strategy")
