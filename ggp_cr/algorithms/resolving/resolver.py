"""One resolver per subgame: its configuration, solver, trace and next gadget ([S] ch. 2).

`ResolverConfig` holds how each subgame is solved; `Resolver` runs the configured solver
within a budget and builds the next subgame's gadget from the collected estimates.
"""

import dataclasses
import time

import numpy as np

from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.bots import anytime
from ggp_cr.algorithms.cfr import regret_matching
from ggp_cr.algorithms.config import presets
from ggp_cr.algorithms.resolving import gadgets
from ggp_cr.algorithms.resolving import subgame_solvers
from ggp_cr.algorithms.resolving import subgames
from ggp_cr.algorithms.resolving import tracing
from ggp_cr.algorithms.sampling import outcome_sampling
from ggp_cr.algorithms.tree import compiled_tree

SOLVERS = presets.CR_SOLVERS
TERMINATE_VALUES = presets.TERMINATE_VALUES
SAMPLING_SOLVERS = presets.CR_SAMPLING_SOLVERS
# The sampling solvers' defaults: the thesis's VR-MCCFR candidate ([S] §5.1.2).
_THESIS = presets.THESIS_VR_MCCFR


# --- Configuration --------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ResolverConfig:
  """How each subgame is solved (see the module docstring for the choices)."""
  solver: str = "vr_mccfr"
  variant: str = "resolve"
  keep_solver_data: bool = False
  use_cbr: bool = False
  regret_matcher: object = _THESIS["rm"]
  exploration: float = _THESIS["e"]
  cumulative_strategy_exponent: float = _THESIS["cse"]
  baseline: object = _THESIS["bl"]
  cfrd_aware_sampling: bool = True
  depth_limit: int = 4
  playouts: int = 1
  terminate_values: str = "cfrd"

  def __post_init__(self):
    if self.solver not in SOLVERS:
      raise ValueError(f"solver must be one of {', '.join(SOLVERS)}; got "
                       f"{self.solver!r}.")
    if self.variant not in gadgets.VARIANTS:
      raise ValueError(f"variant must be one of {', '.join(gadgets.VARIANTS)}; got "
                       f"{self.variant!r}.")
    if self.terminate_values not in TERMINATE_VALUES:
      raise ValueError(f"terminate_values must be one of {', '.join(TERMINATE_VALUES)}; "
                       f"got {self.terminate_values!r}.")
    if self.terminate_values != "cfrd" and self.variant != "resolve":
      raise ValueError(f"terminate_values {self.terminate_values!r} changes the resolve "
                       f"gadget's Terminate payoffs; the {self.variant} gadget has none "
                       "(accepted with variant 'resolve' only).")
    object.__setattr__(self, "regret_matcher",
                       regret_matching.parse_regret_matcher(self.regret_matcher))
    object.__setattr__(self, "exploration", outcome_sampling.check_probability(
        "exploration", self.exploration))
    object.__setattr__(
        self, "cumulative_strategy_exponent",
        outcome_sampling.check_cumulative_strategy_exponent(
            self.cumulative_strategy_exponent))
    baseline = outcome_sampling.parse_baseline(self.baseline)
    if self.solver == "mc_cfr":
      baseline = None
    object.__setattr__(self, "baseline", baseline)
    for name in ("depth_limit", "playouts"):
      value = getattr(self, name)
      if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or \
          value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}.")

  @property
  def sampling(self):
    return self.solver in SAMPLING_SOLVERS


def terminate_scale(config, root_mass, parent_root_mass):
  """The factor the next resolve gadget's opponent values (and so its Terminate
  payoffs) are multiplied by, for a resolver whose subgame's roots have total reach
  `root_mass` (Σ w(r), chance × the bot's reach; the whole game: 1) and whose
  parent's had `parent_root_mass` (the whole game's parent: 1).

  "cfrd": 1, CFR-D's gadget ([S] §1.4.2). "cfrplayground": root_mass /
  parent_root_mass, as the thesis's own continual resolving computes them
  (CFRPlayground, ContinualResolvingPlayer and ExternalCFRResolver): it scales each
  gadget's payoffs by the norm N of its range and stores the next roots' reach with
  the gadget's chance probability R/N in it but their counterfactual values without,
  so from the second resolve on the Terminate payoffs are N_prev times CFR-D's,
  N_prev = root_mass / parent_root_mass the norm of the range of the solve that
  estimated them (1 for the whole game's solve).
  """
  if config.terminate_values == "cfrd":
    return 1.0
  return float(root_mass) / float(parent_root_mass)


def scale_values(opponent_values, factor):
  """{opponent key: CBV} times `factor` (terminate_scale)."""
  if factor == 1.0:
    return opponent_values
  return {key: value * factor for key, value in opponent_values.items()}


class CannotResolve(Exception):
  """The next subgame's gadget cannot be built from what is known (or in time)."""


BUILD_SHARE = 0.4
# About the time of one pass of a compiled kernel per tree node (shared machine).
SECONDS_PER_NODE_PASS = 5e-8
TRACE_SHARE = 0.6


# --- One resolver per subgame ---------------------------------------------------------


# Resolver.run's anytime loop: an iteration starts while this many times the recent
# longest iteration fits; that estimate decays by _RUN_DECAY a call.
_RUN_MARGIN = 2.0
_RUN_DECAY = 0.95


class Resolver:
  """Solves one subgame (or the whole game) and prepares the next subgames."""

  def __init__(self, problem, config, seed, warm=None, trunk=None, deadline=None,
               parent_root_mass=1.0):
    self.problem = problem
    self.config = config
    self.trunk = trunk
    # Σ w(r) over this subgame's roots (the whole game: 1) and its parent's.
    self.root_mass = (1.0 if problem.gadget is None else
                      problem.gadget.subgame.total_reach)
    self.parent_root_mass = parent_root_mass
    self.timing = {}
    tree = None if config.sampling else problem.tree()
    self.trace = tracing.Trace(problem, tree, deadline)
    if warm is not None and warm.config.sampling != config.sampling:
      warm = None
    solver_type = (subgame_solvers.SamplingSolver if config.sampling
                   else subgame_solvers.FullWidthSolver)
    self.solver = solver_type(problem, self.trace, config, seed,
                              warm.solver if warm is not None else None)

  # anytime.spend's batches: one iteration per call here (live solvers).
  batch_share = None

  @property
  def visited_states(self):
    """Histories the solver has touched so far ([S] §5.1's visited states)."""
    return self.solver.nodes_touched

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
    return subgames.combine(tree, self.trunk, problem.gadget, self.solver.average_slots())

  def next_subgame(self, own_key, variant, deadline=None):
    """The gadget of the bot's information state `own_key` (in the map), with use_cbr
    the combined profile, and a record of the inputs; raises CannotResolve (also
    when time.perf_counter() passes `deadline` while the roots are rebuilt)."""
    problem = self.problem
    trace = self.trace
    # The roots in the original game's breadth-first order (depth, then actions: the
    # compiled tree's node order, in which the compiled path's gadget views order
    # theirs), not the trace's depth-first discovery order: both paths' gadgets then
    # order their roots and gates, and draw their random outcomes, alike (they differ
    # where a root lies below another, tests/test_nested_next_roots.py).
    group = sorted(trace.subgame_map.roots(own_key), key=lambda root_id: (
        len(problem.root_histories[trace.root_of[root_id]]) +
        len(trace.actions[root_id]),
        tuple(problem.root_histories[trace.root_of[root_id]]) +
        trace.actions[root_id]))
    own = trace.subgame_map.own_roots(own_key)
    profile = None
    if self.config.use_cbr:
      tree = compiled_tree.cached_tree(problem.original)
      profile = self.combined_profile(tree)
      reach, opponent_reach, values = self._exact_inputs(tree, profile, group)
    else:
      reach, opponent_reach, value_sum, weight_sum = self.solver.estimates(group)
    if not sum(reach[r] for r in own) > 0:
      raise CannotResolve("the estimated reach of the bot's own information state is "
                          "zero")
    by_key = {}
    for root_id in group:
      totals = by_key.setdefault(trace.opponent_keys[root_id], [0.0, 0.0, 0.0])
      totals[0] += reach[root_id]
      if self.config.use_cbr:
        totals[1] += reach[root_id] * values[root_id]
      else:
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
                                       deadline)
    scale = terminate_scale(self.config, self.root_mass, self.parent_root_mass)
    opponent_values = scale_values(opponent_values, scale)
    if variant == "unsafe" and not sum(reach[r] * opponent_reach[r] for r in own) > 0:
      variant = "resolve"
    states = []
    for root_id in group:
      if deadline is not None and time.perf_counter() > deadline:
        raise CannotResolve(f"its {len(group)} roots could not be built within the "
                            "time budget")
      states.append(trace.root_state(root_id))
    try:
      subgame = gadgets.Subgame(
          problem.original, problem.player, states,
          [reach[r] for r in group], opponent_values,
          opponent_reach=[opponent_reach[r] for r in group])
      gadget = gadgets.make_gadget(subgame, variant)
    except ValueError as error:
      raise CannotResolve(str(error)) from None
    info = {"roots": len(group), "opponent_infosets": len(opponent_values),
            "unsampled_opponent_infosets": len(unsampled),
            "unsampled_from_tree": from_tree, "variant": variant}
    if self.config.terminate_values != "cfrd":
      info["terminate_scale"] = scale
    return gadget, profile, info

  def _unsampled_values(self, group, by_key, unsampled, opponent_values, deadline):
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
      if deadline is not None and (time.perf_counter() + SECONDS_PER_NODE_PASS * 3 *
                                   tree.num_nodes > deadline):
        tree = None
    else:
      tree = None
    if tree is not None:
      reach, _, values = self._exact_inputs(tree, self.combined_profile(tree), group)
      for root_id in group:
        totals = exact.setdefault(self.trace.opponent_keys[root_id], [0.0, 0.0])
        totals[0] += reach[root_id]
        totals[1] += reach[root_id] * values[root_id]
    from_tree = 0
    for key in unsampled:
      weight, total = exact.get(key, (0.0, 0.0))
      value = total / weight if weight > 0 else minimum
      from_tree += weight > 0
      opponent_values[key] = by_key[key][0] * value
    return from_tree

  def _exact_inputs(self, tree, profile, group):
    """Exact w, opponent reach and CBR values v_o per next root (use_cbr)."""
    problem = self.problem
    num_roots = self.trace.num_roots
    reach = np.zeros(num_roots)
    opponent_reach = np.zeros(num_roots)
    values = np.zeros(num_roots)
    _, response = exact_br.best_response_slots(tree, profile, problem.opponent)
    node_values = tree.node_values(response)
    if problem.opponent == 1:
      node_values = tree.utility_sum - node_values
    node_reach = tree.node_reaches(profile)
    for root_id in group:
      history = tuple(problem.root_histories[self.trace.root_of[root_id]]) + \
          self.trace.actions[root_id]
      node = subgames.history_node(tree, history)
      reach[root_id] = node_reach[problem.player, node] * node_reach[2, node]
      opponent_reach[root_id] = node_reach[problem.opponent, node]
      values[root_id] = node_values[node]
    return reach, opponent_reach, values
