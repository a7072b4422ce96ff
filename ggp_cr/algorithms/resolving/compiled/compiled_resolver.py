"""One subgame of continual resolving on the compiled tree ([S] ch. 2, §3.4.1, §6).

`CompiledResolver` is the compiled path's protocol.Resolver: a view of the subgame
(copied when small, COPY_NODES_LIMIT, else in place), its solver (view_solvers), the
trace of the bot's next turns below it and the next roots' estimates; `next_subgame`
builds the next one within a move_budget.SetupLimits, and `defer` keeps solving when
it cannot. Solvers, views and fallbacks: docs/algorithms/resolving.md, "Module notes".
"""

import time

import numpy as np

from ggp_cr.algorithms import contracts
from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.resolving import move_budget
from ggp_cr.algorithms.resolving import protocol
from ggp_cr.algorithms.resolving.compiled import copied_view
from ggp_cr.algorithms.resolving.compiled import in_place_view
from ggp_cr.algorithms.resolving.compiled import next_root_estimates
from ggp_cr.algorithms.resolving.compiled import subgame_layout
from ggp_cr.algorithms.resolving.compiled import view_sampling
from ggp_cr.algorithms.resolving.compiled import view_solvers
from ggp_cr.algorithms.resolving.compiled import warm_start
from ggp_cr.algorithms.resolving.gadget import prefix as gadget_prefix
from ggp_cr.algorithms.resolving.subgames import subgame_trace
from ggp_cr.algorithms.tree import flat_tree

CannotResolve = protocol.CannotResolve


# Subgames of at most this many nodes are copied (a GadgetView, about 1-7 ms): their
# CFR+ iterations run 4-7 times faster on contiguous arrays than in place on the
# whole tree, whose nodes they visit scattered (Leduc{3,30}'s 10-13k-node subgames:
# 0.1 vs 0.5-0.7 ms, benchmarks/cr_compiled_resolve.py), so the copy pays for itself
# within a few iterations; larger ones are solved in place.
COPY_NODES_LIMIT = 50_000


def state_keys(tree, cache_dir=None):
  """StateKeys of `tree`, memoised in this process for the last 4 trees (lasting:
  flat_tree.forget keeps them)."""
  return flat_tree.per_tree(
      "state_keys", tree, lambda t: subgame_trace.StateKeys.build(t, cache_dir),
      keep=4, lasting=True)


def subgame_view(tree, keys, player, root_nodes, w, cbv, variant, opponent_reach,
                 size, deadline=None, reserve=0.0, copy_nodes_limit=None, solver=None,
                 copy_reason=None):
  """(view, how) of a later subgame of `size` nodes: a copying GadgetView if it is
  small (`copy_nodes_limit`, default COPY_NODES_LIMIT), its roots are nested or
  `copy_reason` (why the solver needs a copy) is given, else
  a SubgameView solved in place (by CFR+, or by the sampling `solver`, a GadgetView
  solver argument such as `view_solvers.sampler`, which samples either kind); `how`
  says why a copy was made ("" in place). Raises
  CannotResolve if a needed copy would not end `reserve` seconds before
  time.perf_counter() `deadline`, or if the gadget refuses its inputs."""
  arguments = (tree, keys, player, root_nodes, w, cbv, variant, opponent_reach)
  limit = COPY_NODES_LIMIT if copy_nodes_limit is None else copy_nodes_limit

  def copy_fits():
    return deadline is None or (time.perf_counter() +
                                move_budget.COPY_SECONDS_PER_NODE * size +
                                reserve <= deadline)

  def copy(why):
    if not copy_fits():
      raise CannotResolve(f"{why}, so the subgame must be copied, and a copy of "
                          f"{size:,} nodes would not fit the move")
    return copied_view.GadgetView(*arguments, solver=solver), f"copied ({why})"

  try:
    if copy_reason is not None:
      return copy(copy_reason)
    if size <= limit and copy_fits():
      return copy(f"a small subgame: {size:,} <= {limit:,} nodes iterate faster "
                  "contiguously")
    try:
      return in_place_view.SubgameView(*arguments, solver=solver), ""
    except subgame_layout.NestedRoots:
      return copy("a root lies below another root")
  except ValueError as error:
    raise CannotResolve(str(error)) from None


def _own_reach(trace, infoset, group, w, opponent_reach):
  """Whether w, and w times o's reach (per next root of `group`), are positive at the
  roots of the bot's own infoset `infoset` (next_subgame's tests)."""
  own = np.zeros(trace.num_next_roots, dtype=bool)
  own[trace.own_roots(infoset)] = True
  own = own[group]  # (np.isin sorts: tens of ms at 10^5-10^6 roots)
  return bool(w[own].sum() > 0), bool((w[own] * opponent_reach[own]).sum() > 0)


class CompiledResolver(protocol.AnytimeRun):
  """CFR+ or a sampling solver (a view made with `view_solvers.sampler`) on `view`,
  with the next subgames' estimates (module docstring).

  `use_cbr` with `trunk` (the bot's whole-tree profile so far; None at the whole
  game) makes `next_subgame` use exact counterfactual best-response inputs;
  `config` (settings.ResolverConfig) says how later subgames are solved (default
  CFR+).
  """

  def __init__(self, view, use_cbr=False, trunk=None, config=None,
               parent_root_mass=1.0):
    self.view = view
    # Σ w(r) over the parent subgame's roots (gadget_prefix.terminate_scale).
    self.parent_root_mass = parent_root_mass
    self.use_cbr = bool(use_cbr)
    self.trunk = trunk
    self.config = config
    self.timing = {}
    self.sampler = (view.solver if isinstance(view.solver, view_sampling.ViewSampler)
                    else None)
    if self.sampler is not None:
      self.estimates = self.sampler.estimates
      self.trace = self.estimates.trace
    else:
      self.trace = view.trace()
      self.estimates = next_root_estimates.NextRootEstimates(view, self.trace)
    self.refused = 0
    # The next inputs from one pass of the average strategy, computed ahead (after a
    # refusal, by average_pass_ahead) while no iteration has run since.
    self._average_estimates = None
    # Next subgames built ahead ({(group's first next root, variant): (resolver,
    # info, w, o's reach)}, build_ahead) while no iteration has run since.
    self._ahead = {}
    # (trace, infoset, actions_below's array) of the last infoset asked (_actions_below).
    self._below = None
    # (first next root of a group, its trace_steps, its SetupClock) of the last setup
    # tested against a deadline: defer after its refusal does not count the steps
    # again, and estimates its time at the setup's pace.
    self._last_setup = None

  @classmethod
  def whole_game(cls, tree, state_keys, player, use_cbr=False, config=None, seed=None):
    """The resolver of the whole game (the bot's first decision); also prepares the
    arrays its later subgames' views share. `config` with a sampling solver samples
    with `seed`."""
    subgame_layout.prepare(tree)
    subgame_trace.trace_steps(tree, player)  # the later subgames' setup budgets
    solver = view_solvers.view_solver(config, seed)
    if solver is None:  # CFR+, its passes on the in-place subgames' scratch arrays
      scratch = subgame_layout.whole_tree_scratch(tree)

      def solver(view):
        return cfr.CFRPlusSolver(view.tree, scratch=scratch)
    return cls(copied_view.GadgetView(tree, state_keys, player, [0], [1.0],
                                       variant=None, solver=solver), use_cbr,
               config=config)

  @property
  def iterations(self):
    return self.view.iterations

  @property
  def visited_states(self):
    """Histories the solver has touched so far ([S] §5.1's visited states: a sampling
    solver's episodes' nodes, or each CFR+ pass's subgame nodes)."""
    solver = self.sampler.solver if self.sampler is not None else self.view.solver
    return solver.visited_states

  def iterate(self, num_iterations=1):
    """`num_iterations` iterations, adding their estimates at the next roots."""
    num_iterations = contracts.iteration_count(num_iterations)
    self._average_estimates = None
    self._ahead = {}
    if self.sampler is not None:
      self.sampler.run(num_iterations)
      return
    next_root_estimates.solve_with_estimates(self.view, self.estimates, num_iterations)

  def iteration(self):
    """One iteration (as the live solvers' `iteration`)."""
    self.iterate(1)

  @property
  def solver(self):
    """What `run` iterates (protocol.AnytimeRun.run calls self.solver.iterate(n))."""
    return self

  @property
  def run_decay(self):
    """The anytime loop's decay of its per-iteration estimate: fast
    (move_budget.PRUNED_RUN_DECAY) when CFR+ prunes its passes in place, whose
    iterations after the first skip what CFR+ stopped reaching (2-3 times faster
    than the first on PAM{8}'s subgames), so that the first iteration's time does
    not hold back the move's later ones; else protocol.AnytimeRun's."""
    if self._prunes_in_place:
      return move_budget.PRUNED_RUN_DECAY
    return protocol.AnytimeRun.run_decay

  @property
  def run_margin(self):
    """The anytime loop's margin: move_budget.PRUNED_RUN_MARGIN when CFR+ prunes its
    passes in place (`run_decay`) and has run two iterations, else
    protocol.AnytimeRun's (the second iteration, the first pruned, may take as long
    as the first; docs/algorithms/resolving.md)."""
    if self._prunes_in_place and self.iterations >= 2:
      return move_budget.PRUNED_RUN_MARGIN
    return protocol.AnytimeRun.run_margin.fget(self)

  @property
  def _prunes_in_place(self):
    """Whether its solver is CFR+ pruning its passes in place (the samplers and the
    copying view's CFR+ have no such flag)."""
    return getattr(self.view.solver, "prunes_in_place", False)

  @property
  def batch_share(self):
    """A sampling iteration costs microseconds, less than a kernel call: batches of
    a hundredth of the budget (compiled_outcome_sampling's); CFR+: one at a time."""
    return self.sampler.solver.batch_share if self.sampler is not None else None

  def probabilities(self, infoset):
    """The average strategy at whole-tree infoset `infoset` (uniform if outside the
    view or never reached), over its actions in the tree's order."""
    return self.view.average_at(infoset)

  def profile(self):
    """The bot's whole-tree profile so far ([S] §6): the trunk with this solve's
    strategy combined in (at the whole game: this solve's average strategy)."""
    if self.trunk is None:
      return self.view.average_slots()
    return self.view.combine(self.trunk)

  def defer(self, infoset, max_roots=None, refused=None, max_seconds=None):
    """After the subgame of the bot's next turn `infoset` (in `trace`) was refused:
    `trace` becomes the next turns below that subgame (their roots lie in this view,
    below the same roots), with fresh estimates that this solve's further iterations
    collect (module docstring). `refused` is the resolver built for that subgame, if
    one was (refused because its first iteration would not fit): its trace is
    reused when its view kept every root. Otherwise returns False, changing nothing,
    if the refused subgame has more than `max_roots` roots, or its estimate
    (move_budget.defer_seconds of its roots and subgame_trace.trace_steps'
    counts, at the pace of the refused setup if it was given up running slow)
    exceeds `max_seconds` (a trace that would not fit the move)."""
    trace = self.trace
    group = trace.group_roots(infoset)
    if refused is not None and len(refused.view.active_roots) == len(group):
      below = refused.trace  # traced below the view's active roots: all of group's
      below.next_root_of = refused.view.active_roots[below.next_root_of]
    else:
      if max_roots is not None and len(group) > max_roots:
        return False
      if max_seconds is not None:
        last = self._last_setup
        if last is not None and last[0] == int(group[0]):
          steps, pace = last[1], 1.0 if last[2] is None else last[2].pace
        else:
          steps, pace = self._trace_steps(trace.next_roots[group]), 1.0
        if move_budget.defer_seconds(len(group), **steps, sampling=self.sampler
                                        is not None, pace=pace) > max_seconds:
          return False
      below = subgame_trace.trace_subgames(
          self.view.whole, self.view.state_keys, self.view.player,
          trace.next_roots[group])
    # Index of the view's root each next root lies below, as `trace`'s.
    below.next_root_of = trace.next_root_of[group][below.next_root_of]
    self.trace = below
    self._average_estimates = None
    self._ahead = {}
    if self.sampler is not None:
      self.sampler.collect(below)
      self.estimates = self.sampler.estimates
    else:
      self.estimates = next_root_estimates.NextRootEstimates(self.view, below)
    self.refused += 1
    return True

  def _average_pass_seconds(self):
    """The estimated time of one pass of the average strategy adding its estimates
    at the next roots: per node and next root, or half this resolver's recent
    longest iteration (two passes) if more. In a process's first match the passes
    page-fault fresh arrays: on latent TTT's whole tree a pass estimated at 34 ms
    made a refused decision take 0.16 s of 0.1 s."""
    return max(move_budget.AVERAGE_PASS_SECONDS_PER_NODE * self.view.num_nodes +
               move_budget.ITERATION_SECONDS_PER_NEXT_ROOT *
               self.trace.num_next_roots,
               0.5 * self.timing.get("per_iteration", 0.0))

  def average_pass_ahead(self, deadline):
    """After `defer` (a CFR+ solve, no iteration since): the pass of the average
    strategy that the next subgame's inputs would need, made now if it ends before
    time.perf_counter() `deadline`; returns whether it was. Its estimates replace
    this solve's at `next_subgame` only if no iteration runs before (the average
    strategy is then the same, so are the inputs); an iteration drops them. The
    bot calls it when no iteration would run in the rest of the move: a large
    solve's next decision would otherwise have to fit the pass, the next subgame's
    setup and its first iteration into one move. The pass itself gives up at the
    deadline (NextRootEstimates.add: on a starved process latent TTT's whole-tree
    pass, estimated at 34 ms, took 0.3-1.2 s), making nothing."""
    if (self.sampler is not None or not self.refused or self.estimates.iterations or
        time.perf_counter() + self._average_pass_seconds() > deadline):
      return False
    estimates = self.estimates.fresh()
    if not estimates.add(self.view.average_slots(), deadline):
      return False
    self._average_estimates = estimates
    return True

  def _trace_steps(self, nodes):
    """{"walked", "found": counts} of the trace of the bot's next turns below the
    whole-tree nodes `nodes` (move_budget.trace_seconds estimates its time)."""
    walked, found = subgame_trace.trace_step_sums(self.view.whole,
                                                      self.view.player, nodes)
    if not found:
      walked = 0  # No next turn below them: the trace walks nothing (trace_subgames).
    return {"walked": walked, "found": found}

  def _exact_values(self, group, deadline):
    """A callable giving o's exact CBV_norm per key at the next roots `group`
    against the whole game's solve (NextRootEstimates.inputs' `exact`), or None
    when the bot's strategy so far is not on the tree (a subgame without trunk) or
    the three passes over the tree would not end before `deadline` (next_subgame's,
    less the setup and first iteration still to come, so that the passes cannot
    push those past the move)."""
    whole = self.view.whole
    if self.view.variant is not None and self.trunk is None:
      return None
    if deadline is not None and (time.perf_counter() + move_budget.SECONDS_PER_NODE_PASS *
                                 3 * whole.num_nodes > deadline):
      return None
    trace = self.trace
    return lambda: next_root_estimates.exact_normalised_values(
        whole, self.profile(), self.view.player, trace.next_roots[group],
        trace.next_root_key[group])

  def entry_key(self, infoset):
    """What the next decision at the bot's infoset `infoset` depends on, given this
    resolver and an iteration budget: ("same",) if it is no next turn in another
    subgame, else ("enter", the next roots' group, next_subgame's two tests that
    depend on the infoset: the bot's own reach there, and the joint reach, positive);
    infosets with equal keys give the same next resolver. None when that is not known without
    changing the resolver (exact CBR inputs; inputs that a pass would first estimate
    after a refusal)."""
    trace = self.trace
    if infoset not in trace:
      return ("same",)
    if self.use_cbr or (self.refused and not self.estimates.iterations):
      return None
    group = trace.group_roots(infoset)
    w, opponent_reach = self.estimates.means()
    return ("enter", int(group[0])) + _own_reach(trace, infoset, group, w[group],
                                                 opponent_reach[group])

  def next_subgame(self, infoset, variant, limits=None, seed=None):
    """(next CompiledResolver, info) for the bot's next-turn infoset `infoset` (in
    `trace`); raises CannotResolve when its estimated reach is zero or it does not
    fit move_budget.SetupLimits `limits` (default: none): more nodes than its
    `max_nodes`, a setup (move_budget.setup_stages, and after `defer` with no
    iteration since one pass of the average strategy, _average_pass_seconds) that
    would not end the first iteration's reserve before its `deadline`, or one running
    so far over its estimate that the rest would not end before its `late_deadline`
    (move_budget.SetupClock). `seed` seeds a sampling solver's next resolver. A
    subgame `build_ahead` made for the infoset's group (no iteration since) is
    returned at once, after the same test of the bot's own reach; its info says so."""
    group = self.trace.group_roots(infoset)
    ahead = self._ahead.pop((int(group[0]), variant), None)
    if ahead is not None:
      built, info, w, opponent_reach = ahead
      if not _own_reach(self.trace, infoset, group, w, opponent_reach)[0]:
        raise CannotResolve("the estimated reach of the bot's own information state "
                            "is zero")
      return built, info
    return self._build(group, infoset, variant, limits, seed)[:2]

  def _actions_below(self, infoset):
    """Per next root, the index of the action taken above it at the bot's infoset
    `infoset` (this view's; -1: not below it), for this trace (the reserve and the
    candidates of one decision ask twice)."""
    cached = self._below
    if cached is None or cached[0] is not self.trace or cached[1] != int(infoset):
      whole = self.view.whole
      actions = flat_tree.actions_below(
          whole.node_parent, whole.node_infoset, whole.node_action_index,
          self.trace.next_roots, int(infoset), int(whole.infoset_node[infoset]))
      self._below = cached = (self.trace, int(infoset), actions)
    return cached[2]

  def ahead_candidates(self, infoset, action_index, limit=None, skipped=None):
    """The bot's next-turn infosets below its action of index `action_index` at its
    current infoset `infoset` (this view's), one per next subgame (group) not built
    ahead yet nor in `skipped` (group ids), likeliest first (at most `limit`): by
    the sum of w times o's reach (the estimates' means, chance included in w) over
    the group's next roots below that action."""
    trace = self.trace
    if not trace.num_next_roots or not self.estimates.iterations:
      return []
    below = self._actions_below(infoset) == action_index
    if not below.any():
      return []
    w, opponent_reach = self.estimates.means()
    mass = np.bincount(trace.group[below], (w * opponent_reach)[below],
                       minlength=trace.num_next_roots)
    groups = np.flatnonzero(mass > 0)
    excluded = {group for group, _ in self._ahead} | set(skipped or ())
    order = [int(g) for g in groups[np.argsort(-mass[groups], kind="stable")]
             if int(g) not in excluded][:limit]
    return trace.own_infosets_of_groups(order).tolist()

  def ahead_candidates_seconds(self):
    """The estimated time of `ahead_candidates` (or of `next_groups_below`)."""
    return move_budget.AHEAD_SECONDS_PER_NEXT_ROOT * self.trace.num_next_roots

  def num_actions(self, infoset):
    """The number of the bot's actions at its infoset `infoset`."""
    return int(self.view.whole.infoset_num_actions[infoset])

  def next_groups_below(self, infoset, action_index=None):
    """The next subgames (groups) below the bot's infoset `infoset` (this view's),
    whatever its action (or below its action of index `action_index`): a dict of
    arrays, one entry per group: "roots" (next roots, all of them, also those below
    other infosets), "walked" and "found" (the trace below them, trace_steps),
    "nodes" (their subtrees' nodes): what the setup and first-iteration estimates
    of each need without building it."""
    trace = self.trace
    if not trace.num_next_roots:
      touched = np.zeros(0, dtype=np.bool_)
    elif action_index is None:
      touched = self._actions_below(infoset) >= 0
    else:
      touched = self._actions_below(infoset) == action_index
    return trace.touched_groups(
        touched, subgame_trace.trace_steps(self.view.whole, self.view.player),
        self.view.state_keys.subtree_nodes)

  def build_ahead(self, infoset, variant, first_iteration, limits=None, seed=None):
    """Sets up now the next subgame of the bot's next-turn infoset `infoset`, as
    `next_subgame` would within move_budget.SetupLimits `limits` (no test of the infoset's
    own reach, which `next_subgame` makes when it hands it over), then calls
    `first_iteration(built, nodes)`, which runs its first iteration or raises
    CannotResolve (it would not fit): the subgame is then kept set up, and the
    decision that enters it runs the first iteration. Kept for
    `next_subgame` until an iteration or `defer` changes this solve's estimates (the
    inputs would differ). Raises CannotResolve as `next_subgame`; the resolve
    gadget and max-margin only (an unsafe gadget depends on the infoset's joint
    reach). Returns the info dict (`iterations_ahead`: 1 or 0)."""
    if variant == "unsafe":
      raise ValueError("build_ahead builds resolve and max-margin gadgets only.")
    group = self.trace.group_roots(infoset)
    start = time.perf_counter()
    built, info, w, opponent_reach = self._build(group, None, variant, limits, seed)
    carried = built.iterations  # (keep_solver_data continues the count)
    try:
      first_iteration(built, info["subgame_nodes"])
    except CannotResolve:
      pass
    info = dict(info, built_ahead_seconds=time.perf_counter() - start,
                iterations_ahead=built.iterations - carried)
    self._ahead[(int(group[0]), variant)] = (built, info, w, opponent_reach)
    return info

  def payoffs_ahead(self, deadline):
    """After build_ahead: writes the terminal payoffs of the likeliest subgame built
    ahead (the first) if its first iteration did not run
    (subgame_cfr.SubgameCFRPlus.write_payoffs) and move_budget.
    PAYOFF_SECONDS_PER_NODE a node of it ends before time.perf_counter()
    `deadline`; returns whether it did (its info, which the decision entering it
    records, then says `payoffs_ahead`). That decision's first iteration then skips
    writing them."""
    first = next(iter(self._ahead.values()), None)
    if first is None:
      return False
    built, info, _, _ = first
    write = getattr(built.view.solver, "write_payoffs", None)
    if info["iterations_ahead"] or write is None or (
        time.perf_counter() + move_budget.PAYOFF_SECONDS_PER_NODE *
        info["subgame_nodes"] > deadline):
      return False
    write()
    info["payoffs_ahead"] = True
    return True

  def iterate_ahead(self, another, deadline, min_nodes=0):
    """After build_ahead: more iterations on the subgames built ahead (of at least
    `min_nodes` nodes) whose first iteration ran, one after the other, the
    likeliest last (its decision's first pass then finds its payoffs and reach in
    the shared arrays: a switch between subgames solved in place rewrites them,
    5-10 ms at Leduc{3,30}'s 1.25-2.5M nodes), each while `another(built, nodes,
    until)` runs one ending before `until`, its share of what is left before
    time.perf_counter() `deadline` (returns whether it did); their info counts
    them (`iterations_ahead`, `built_ahead_seconds`). Returns the iterations run."""
    entries = [entry for entry in self._ahead.values() if
               entry[1]["iterations_ahead"] and entry[1]["subgame_nodes"] >= min_nodes]
    ran = 0
    for k, (built, info, _, _) in enumerate(reversed(entries)):
      now = time.perf_counter()
      until = now + (deadline - now) / (len(entries) - k)
      while True:
        start = time.perf_counter()
        if not another(built, info["subgame_nodes"], until):
          break
        info["iterations_ahead"] += 1
        info["built_ahead_seconds"] += time.perf_counter() - start
        ran += 1
    return ran

  @property
  def built_ahead(self):
    """How many next subgames build_ahead holds."""
    return len(self._ahead)

  def _build(self, group, infoset, variant, limits, seed):
    """next_subgame's build for the next roots `group` within move_budget.SetupLimits
    `limits` ((resolver, info, w, o's reach at the group's roots)); the own-reach
    tests when `infoset` is given."""
    limits = move_budget.SetupLimits() if limits is None else limits
    max_nodes, deadline = limits.max_nodes, limits.deadline
    trace = self.trace
    nodes = trace.next_roots[group]
    size = int(self.view.state_keys.subtree_nodes[nodes].sum())
    if max_nodes is not None and size > max_nodes:
      raise move_budget.too_slow(f"the subgame has {size:,} nodes, more than the "
                                 f"{int(max_nodes):,} its build time allows")
    reserve, setup, steps = 0.0, 0.0, None
    clock = None
    sampling = self.config is not None and self.config.sampling
    if deadline is not None:
      steps = self._trace_steps(nodes)
      self._last_setup = (int(group[0]), steps, None)
      walked, found = steps["walked"], steps["found"]
      # Kept free for the first iteration, after the setup (its next roots: at most
      # one per next turn found).
      reserve = limits.reserve(size, found)
      stages = move_budget.setup_stages(len(group), walked, found, sampling)
      setup = float(sum(stages.values()))
      now = time.perf_counter()
      margined = float(limits.margined(setup))
      if now + margined <= deadline < now + margined + reserve:
        raise move_budget.too_slow(
            f"setting up its {len(group):,} roots ({1000 * setup:.0f} ms estimated) "
            f"and its first iteration ({1000 * reserve:.0f} ms) would not fit the "
            f"move ({1000 * (deadline - now):.0f} ms left)")
      if now + margined + reserve > deadline:
        raise CannotResolve(f"setting up its {len(group):,} roots and tracing the next "
                            f"turns below them ({walked:,} nodes to walk, {found:,} "
                            "turns to find) would not fit the move")
      # A setup running far slower than estimated is given up between its stages.
      clock = move_budget.SetupClock(stages, limits.give_up, reserve)
      self._last_setup = (int(group[0]), steps, clock)
    profile = None
    inputs = "its iterations since the last refusal"
    # Exact values' and the average strategy's passes over a tree are budgeted on
    # their own (the clock leaves them out of the setup's pace).
    excluding = clock.excluding if clock is not None else lambda compute: compute()
    if self.use_cbr:
      profile = self.profile()
      w, opponent_reach, cbv = excluding(
          lambda: next_root_estimates.exact_next_root_inputs(
              self.view.whole, profile, self.view.player, nodes,
              trace.next_root_key[group]))
    else:
      if self.refused and not self.estimates.iterations:
        # One pass of the average strategy (unless average_pass_ahead made it).
        if self._average_estimates is not None:
          self.estimates, self._average_estimates = self._average_estimates, None
        else:
          needed = self._average_pass_seconds() + setup + reserve
          if deadline is not None and time.perf_counter() + needed > deadline:
            raise CannotResolve("no iterations estimated its inputs since an earlier "
                                "subgame was refused, and no time to estimate them")
          # The pass gives up when the setup and first iteration would no longer fit.
          if not excluding(lambda: self.estimates.add(
              self.view.average_slots(),
              None if deadline is None else deadline - setup - reserve)):
            raise CannotResolve("no iterations estimated its inputs since an earlier "
                                "subgame was refused, and the pass of the average "
                                "strategy that estimates them ran out of time")
        inputs = "its average strategy"
      exact = self._exact_values(
          group, None if deadline is None else deadline - setup - reserve)
      w, opponent_reach, cbv = self.estimates.inputs(
          group, exact=None if exact is None else lambda: excluding(exact))
    if clock is not None:
      clock.check("inputs")
    cbv, scaled = gadget_prefix.scaled_values(self.config, cbv, self.view.total_reach,
                                              self.parent_root_mass)
    reached, jointly = (True, True) if infoset is None else _own_reach(
        trace, infoset, group, w, opponent_reach)
    if not reached:
      raise CannotResolve("the estimated reach of the bot's own information state is "
                          "zero")
    info = {"roots": len(group), "opponent_infosets": len(cbv), "variant": variant,
            "subgame_nodes": size}
    if steps is not None:
      info["trace_steps"] = steps
      info["setup_estimate_seconds"] = setup
    if not self.use_cbr:
      info["unsampled_opponent_infosets"] = self.estimates.unsampled
    info.update(scaled)
    if self.refused:
      info["after_refused"] = (
          f"{self.refused} subgame(s) below this solve were refused; {inputs} gave "
          "these inputs")
    if variant == "unsafe" and not jointly:
      info["variant"] = variant = "resolve"
    depth_limited_solver = self.config is not None and self.config.solver == "dl_cfr+"
    solver = view_solvers.view_solver(self.config, seed)
    if clock is not None:
      # An in-place view's solver structures follow its plan (a copy's time is
      # budgeted on its own, by subgame_view); a sampler's, its trace.
      make_solver = solver

      def solver(view):
        in_place = isinstance(view, in_place_view.SubgameView)
        if in_place:
          clock.check("plan")
        if in_place and sampling:
          trace = view.trace()
          clock.check("trace")
          return make_solver(view, trace)
        if make_solver is not None:
          return make_solver(view)
        if not in_place:
          return view._solver()  # pylint: disable=protected-access
        # A packing is budgeted on its own (SubgameCFRPlus.packing_pays).
        return clock.excluding(
            lambda: view._solver(deadline, reserve))  # pylint: disable=protected-access

    view, how = subgame_view(self.view.whole, self.view.state_keys, self.view.player,
                             nodes, w, cbv, variant, opponent_reach, size, deadline,
                             reserve, solver=solver,
                             copy_reason="dl_cfr+ runs on a copy's tree"
                             if depth_limited_solver else None)
    if how:
      info["view"] = how
    elif getattr(view.solver, "packed", None) is not None:
      info["view"] = "in place, its walk packed (scattered in the tree)"
    elif clock is not None and not sampling:
      clock.check("solver")
    if self.config is not None and self.config.keep_solver_data:
      warm_start.carry_over(view, self.view)
    return CompiledResolver(view, self.use_cbr, profile, self.config,
                            self.view.total_reach), info, w, opponent_reach
