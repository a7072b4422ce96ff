"""The `solver` arguments of gadget views ([S] ch. 2): what solves a compiled subgame.

A GadgetView (copied) or SubgameView (in place) is solved by CFR+ unless given a
`solver` factory, called with the view: depth-limited CFR+ on a copy's tree
(`depth_limited`), or a sampling solver (`sampler`); `view_solver` picks one for a
settings.ResolverConfig.
"""

from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.cfr import utility_estimators
from ggp_cr.algorithms.resolving import recall
from ggp_cr.algorithms.resolving.compiled import in_place_view
from ggp_cr.algorithms.resolving.compiled import view_sampling


def depth_limited_cfr_plus(tree, player, initial_track, config, seed):
  """Depth-limited CFR+ ([S] §3.3.2, §5.2.3) on a solved game's `tree` (a gadget's
  or the whole game's): RM+, alternating updates, linear averaging, histories deeper
  than config.depth_limit valued by RandomPlayout(config.playouts, seed); only
  histories at or below `player`'s next turn in another subgame may be cut ([S]
  App. A.5: every next root is expanded), tracked from `initial_track` at the root
  (recall.FIRST, or recall.CURRENT when the whole game starts at the player's turn).
  Both paths of continual resolving build it here."""
  estimable = recall.tracks(tree.node_player, tree.node_parent, player,
                            initial_track) == recall.END
  return cfr.GeneralCFRSolver(
      tree, regret_matcher="rm+", alternating_updates=True,
      cumulative_strategy_exponent=1.0, depth_limit=config.depth_limit,
      utility_estimator=utility_estimators.RandomPlayout(config.playouts, seed),
      estimable=estimable)


def depth_limited(config, seed):
  """A GadgetView `solver` argument: depth-limited CFR+ of `config` (a
  settings.ResolverConfig with dl_cfr+; `depth_limited_cfr_plus`, the
  live path's solver too) with RandomPlayout's `seed` on a copying view's tree, which is
  the live gadget's compiled tree node for node (same depths, so the same cuts and
  the same playouts drawn in the same order). A view solved in place has no tree of
  its own: refused (ValueError)."""

  def make(view):
    if isinstance(view, in_place_view.SubgameView):
      raise ValueError("dl_cfr+ solves copied subgames only (GadgetView), not "
                       "SubgameView.")
    tree = view.tree
    initial = (recall.CURRENT if view.variant is None and
               int(tree.node_player[0]) == view.player else recall.FIRST)
    return depth_limited_cfr_plus(tree, view.player, initial, config, seed)

  return make


def view_solver(config, seed):
  """The GadgetView `solver` argument for `config`'s solver (None: CFR+, the view's
  own; `depth_limited`; `sampler`), or None without a config."""
  if config is None or config.solver == "cfr+":
    return None
  return (depth_limited if config.solver == "dl_cfr+" else sampler)(config, seed)


def sampler(config, seed):
  """A GadgetView `solver` argument: the sampling solver of `config` (a
  settings.ResolverConfig with vr_mccfr or mc_cfr) with `seed`, collecting the
  estimates of the view's next turns (view_sampling.InPlaceSampler on a
  SubgameView, ViewSampler on a copy; `trace`: the view's, if already made)."""

  def make(view, trace=None):
    kind = (view_sampling.InPlaceSampler
            if isinstance(view, in_place_view.SubgameView) else
            view_sampling.ViewSampler)
    return kind(view, view.trace() if trace is None else trace, config, seed)

  return make
