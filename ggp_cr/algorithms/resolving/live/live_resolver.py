"""The live-state resolver: one subgame solved on pyspiel states ([S] ch. 2).

`Resolver` runs the configured solver (live_solvers) on a gadget game within a budget
and builds the next subgame's pyspiel gadget from the collected estimates; used only
for games above the compiled path's size limit.
"""

import dataclasses
import time

import numpy as np

from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.resolving import move_budget
from ggp_cr.algorithms.resolving import protocol
from ggp_cr.algorithms.resolving.exact import trunk_inputs
from ggp_cr.algorithms.resolving.gadget import gadget_game
from ggp_cr.algorithms.resolving.gadget import prefix as gadget_prefix
from ggp_cr.algorithms.resolving.live import live_solvers
from ggp_cr.algorithms.resolving.live import live_trace
from ggp_cr.algorithms.resolving.live import subgame_tree
from ggp_cr.algorithms.sampling import outcome_sampling
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import tree_limits

class Resolver(protocol.AnytimeRun):
  """Solves one subgame (or the whole game) on live states (protocol.Resolver) and
  prepares the next subgames' gadgets."""

  def __init__(self, problem, config, seed, warm=None, trunk=None, deadline=None,
               parent_root_mass=1.0, turns=None):
    self.problem = problem
    self.config = config
    # Why the subgame's depth-limited tree was not used (None if it was, or none
    # was asked for).
    self.tree_fallback = None
    self.tree_seconds = None  # the depth-limited tree's build time, if built
    self._leaf_states = None  # its cut histories' states, for the trace
    if not config.sampling and turns is not None:
      config = self._depth_limited(turns, seed, deadline)
      self.config = config
    self.trunk = trunk
    # Σ w(r) over this subgame's roots (the whole game: 1) and its parent's.
    self.root_mass = (1.0 if problem.gadget is None else
                      problem.gadget.subgame.total_reach)
    self.parent_root_mass = parent_root_mass
    self.timing = {}
    # The bot's moves here, {information state: actions}, and the roots (histories)
    # above its information set where it entered (None: all), for own_trace.OwnTrace.
    self.own_moves = {}
    self.own_root_histories = None
    # The histories of the bot's information set at a decision of its here, as
    # OwnTrace starts (live_trace.Trace.starts_below; None: unknown).
    self.own_starts = None
    # After a walk from them was cut, how many of them the next walk starts at (a
    # seeded sample, live_path.CUT_STARTS_SHARE; None: all).
    self.own_starts_cap = None
    self._stayed = False
    # Whether this subgame's roots, or the histories its next OwnTrace starts at,
    # are a sample of the bot's information set's (live_path.SAMPLED_KIND; set by
    # the path): every subgame below is then built on sampled roots.
    self.sampled_roots = False
    tree = None if config.sampling else problem.tree()
    self.trace = live_trace.Trace(problem, tree, deadline, made=self._leaf_states)
    self._leaf_states = None
    if not self.trace.complete and not config.sampling and turns is not None:
      # VR-MCCFR's estimates by history give the next decision its inputs
      # (own_trace.OwnTrace); the full-width solvers' need the trace.
      self.tree_fallback = ("its next turns were not traced within the time "
                            "budget; solved by live VR-MCCFR")
      config = self.config = dataclasses.replace(config, solver="vr_mccfr")
    if warm is not None and warm.config.sampling != config.sampling:
      warm = None
    solver_type = (live_solvers.SamplingSolver if config.sampling
                   else live_solvers.FullWidthSolver)
    self.solver = solver_type(problem, self.trace, config, seed,
                              warm.solver if warm is not None else None)

  def _depth_limited(self, turns, seed, deadline):
    """Lays the full-width solvers' tree out down to the bot's `turns`-th next
    turns (subgame_tree.depth_limited_tree, leaves by config.playouts random
    playouts) before `deadline`; if it does not fit the time, or memory, the
    subgame is solved by the live sampling solver (VR-MCCFR with the config's
    sampling settings) and `tree_fallback` says why. Returns the config used."""
    config = self.config
    start = time.perf_counter()
    leaf_states = {}
    try:
      self.problem.compiled = subgame_tree.depth_limited_tree(
          self.problem, turns, config.playouts, seed, deadline,
          tree_limits.nodes_limit(False), leaf_states=leaf_states)
      self._leaf_states = leaf_states
      self.tree_seconds = time.perf_counter() - start
      return config
    except live_trace.OutOfTime:
      self.tree_fallback = ("its tree to the next turns was not laid out within the "
                            "time budget; solved by live VR-MCCFR")
    except tree_limits.TreeTooLarge as error:
      self.tree_fallback = f"{error}; solved by live VR-MCCFR"
    return dataclasses.replace(config, solver="vr_mccfr")

  def start_own_traces_at(self, starts, cap=None):
    """The histories the next OwnTrace starts at (None: unknown), and how many of
    them it takes (a seeded sample after a cut walk; None: all)."""
    self.own_starts, self.own_starts_cap = starts, cap

  @property
  def own_trace_next(self):
    """Whether the bot's next new subgame is found by own_trace.OwnTrace: the
    trace did not end in time, or the bot stayed here after a refused subgame."""
    return not self.trace.complete or self._stayed

  def trace_own_next(self):
    """After a refused subgame: a sampling solver collects its estimates by
    history from now on, and own_trace_next holds."""
    if self.config.sampling:
      self._stayed = True
      if self.solver.sums_by_history is None:
        self.solver.sums_by_history = {}

  @property
  def solver_collects_by_history(self):
    """Whether the solver collects next-root estimates by history (a sampling solver
    after an incomplete trace), so that an OwnTrace's roots can be given inputs."""
    return getattr(self.solver, "sums_by_history", None) is not None

  @property
  def visited_states(self):
    """Histories the solver has touched so far ([S] §5.1's visited states)."""
    return self.solver.nodes_touched

  def probabilities(self, key, legal):
    """The average strategy at the bot's information state (uniform if unknown)."""
    probabilities = self.solver.probabilities(key, legal)
    if probabilities is None or not sum(probabilities) > 0:
      return [1.0 / len(legal)] * len(legal)
    total = sum(probabilities)
    return [p / total for p in probabilities]

  def combined_profile(self, tree):
    """The bot's strategy so far on the original game's tree ([S] §6's combination):
    the trunk with the bot's information states here replaced by this solve's average
    strategy (the whole game: this solve's average strategy for both players)."""
    problem = self.problem
    if self.config.sampling:
      if self.trunk is None:
        return outcome_sampling.TablePolicy(problem.original,
                                            self.solver.table).to_slots(tree)
      profile = self.trunk.copy()
      for infoset, probabilities in self.solver.own_average_strategies(
          tree, problem.player).items():
        offset = int(tree.infoset_action_offset[infoset])
        count = int(tree.infoset_num_actions[infoset])
        actions = tree.infoset_actions[offset:offset + count].tolist()
        profile[offset:offset + count] = [probabilities[a] for a in actions]
      return profile
    if problem.gadget is None:
      return self.solver.average_slots()
    return trunk_inputs.combine(tree, self.trunk, problem.gadget, self.solver.average_slots())

  def next_subgame(self, own_key, variant, deadline=None, trace=None):
    """The gadget of the bot's information state `own_key` (in the map of `trace`:
    by default this resolver's, else a own_trace.OwnTrace), with use_cbr the
    combined profile, and a record of the inputs; raises CannotResolve (also when
    time.perf_counter() passes `deadline` while the roots are rebuilt)."""
    problem = self.problem
    trace = self.trace if trace is None else trace
    # The roots in the original game's breadth-first order (depth, then actions: the
    # compiled tree's node order, in which the compiled path's gadget views order
    # theirs), not the trace's depth-first discovery order: both paths' gadgets then
    # order their roots and gates, and draw their random outcomes, alike (they differ
    # where a root lies below another, tests/resolving/compiled/test_nested_next_roots.py).
    histories = trace.histories
    group = sorted(trace.subgame_map.roots(own_key), key=lambda root_id: (
        len(histories[root_id]), histories[root_id]))
    own = trace.subgame_map.own_roots(own_key)
    profile = None
    if self.config.use_cbr:
      tree = compiled_tree.cached_tree(problem.original)
      profile = self.combined_profile(tree)
      reach, opponent_reach, values = self._exact_inputs(tree, profile, group, trace)
    elif trace is self.trace:
      reach, opponent_reach, value_sum, weight_sum = self.solver.estimates(group)
    else:
      reach, opponent_reach, value_sum, weight_sum = self.solver.estimates(group, trace)
    # (as lists: a numpy scalar a root cost more than the sums; the same doubles)
    reach, opponent_reach = reach.tolist(), opponent_reach.tolist()
    if not sum(reach[r] for r in own) > 0:
      raise protocol.CannotResolve("the estimated reach of the bot's own information state is "
                          "zero")
    opponent_keys = trace.opponent_keys
    if self.config.use_cbr:
      # (the exact values weighted by reach; no sample weights)
      value_sum = [r * v for r, v in zip(reach, values.tolist())]
      weight_sum = [0.0] * len(value_sum)
    else:
      value_sum, weight_sum = value_sum.tolist(), weight_sum.tolist()
    by_key = {}
    for root_id in group:
      totals = by_key.setdefault(opponent_keys[root_id], [0.0, 0.0, 0.0])
      totals[0] += reach[root_id]
      totals[1] += value_sum[root_id]
      totals[2] += weight_sum[root_id]
    opponent_values = {}
    unsampled = []
    for key, (k, total, weight) in by_key.items():
      if not k > 0:
        continue
      if self.config.use_cbr:
        opponent_values[key] = total
      elif weight > 0:
        opponent_values[key] = k * total / weight
      else:
        unsampled.append(key)
    from_tree = self._unsampled_values(group, by_key, unsampled, opponent_values,
                                       deadline, trace)
    opponent_values, scaled = gadget_prefix.scaled_values(
        self.config, opponent_values, self.root_mass, self.parent_root_mass)
    if variant == "unsafe" and not sum(reach[r] * opponent_reach[r] for r in own) > 0:
      variant = "resolve"
    states = []
    for n, root_id in enumerate(group):
      if n % 256 == 0 and deadline is not None and time.perf_counter() > deadline:
        raise protocol.CannotResolve(f"its {len(group)} roots could not be built "
                                     "within the time budget")
      # (the trace's own: the gadget clones a root where it enters it)
      states.append(trace.root_state(root_id, copy=False))
    try:
      subgame = gadget_game.Subgame(
          problem.original, problem.player, states,
          [reach[r] for r in group], opponent_values,
          opponent_reach=[opponent_reach[r] for r in group],
          opponent_keys=[opponent_keys[r] for r in group],
          root_histories=[histories[r] for r in group])
      gadget = gadget_game.make_gadget(subgame, variant)
    except ValueError as error:
      raise protocol.CannotResolve(str(error)) from None
    info = {"roots": len(group), "opponent_infosets": len(opponent_values),
            "unsampled_opponent_infosets": len(unsampled),
            "unsampled_from_tree": from_tree, "variant": variant, **scaled}
    return gadget, profile, info

  def _unsampled_values(self, group, by_key, unsampled, opponent_values, deadline,
                        trace):
    """Fills CBV(I) of the opponent root information sets the solver never sampled:
    with the original game's tree in this process, o's exact counterfactual
    best-response value against the bot's strategy so far (the value safe resolving
    must keep, [H] Def. 5; k_I from the estimates, the value normalised over the
    exact reach); without it, or at zero exact reach, the game's minimum utility (o
    always follows: nothing is known); also when the three passes over the tree
    would not end before `deadline`. Returns how many came from the tree."""
    if not unsampled:
      return 0
    problem = self.problem
    minimum = problem.original.min_utility()
    exact = {}
    # The bot's strategy so far is on the tree at the whole game or with a trunk.
    if (compiled_tree.tree_source(problem.original) == "process" and
        (problem.gadget is None or self.trunk is not None)):
      tree = compiled_tree.cached_tree(problem.original)
      if deadline is not None and (time.perf_counter() + move_budget.SECONDS_PER_NODE_PASS * 3 *
                                   tree.num_nodes > deadline):
        tree = None
    else:
      tree = None
    if tree is not None:
      reach, _, values = self._exact_inputs(tree, self.combined_profile(tree), group,
                                            trace)
      for root_id in group:
        totals = exact.setdefault(trace.opponent_keys[root_id], [0.0, 0.0])
        totals[0] += reach[root_id]
        totals[1] += reach[root_id] * values[root_id]
    from_tree = 0
    for key in unsampled:
      weight, total = exact.get(key, (0.0, 0.0))
      value = total / weight if weight > 0 else minimum
      from_tree += weight > 0
      opponent_values[key] = by_key[key][0] * value
    return from_tree

  def _exact_inputs(self, tree, profile, group, trace):
    """Exact w, opponent reach and CBR values v_o per next root of `trace`."""
    problem = self.problem
    num_roots = trace.num_roots
    reach = np.zeros(num_roots)
    opponent_reach = np.zeros(num_roots)
    values = np.zeros(num_roots)
    _, response = exact_br.best_response_slots(tree, profile, problem.opponent)
    node_values = tree.node_values(response)
    if problem.opponent == 1:
      node_values = tree.utility_sum - node_values
    node_reach = tree.node_reaches(profile)
    for root_id in group:
      history = tuple(problem.root_histories[trace.root_of[root_id]]) + \
          trace.actions[root_id]
      node = trunk_inputs.history_node(tree, history)
      reach[root_id] = node_reach[problem.player, node] * node_reach[2, node]
      opponent_reach[root_id] = node_reach[problem.opponent, node]
      values[root_id] = node_values[node]
    return reach, opponent_reach, values
