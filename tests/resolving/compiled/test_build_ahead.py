"""Timed CFR+ moves on the compiled path build the next subgames ahead: candidates,
plans, and the subgame the bot then enters ([S] ch. 2, §3.4.1)."""
# pylint: disable=protected-access


import time
import types

import numpy as np
import pytest

import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.resolving import continual_resolving
from ggp_cr.algorithms.resolving import move_budget
from ggp_cr.algorithms.resolving import protocol
from ggp_cr.algorithms.resolving import settings
from ggp_cr.algorithms.resolving.compiled import compiled_resolver
from ggp_cr.algorithms.resolving.subgames import subgame_trace
from ggp_cr.algorithms.tree import compiled_tree
from test_paths_agree import GAMES


def _first_subgame(player):
  """A CFR+ resolver of PAM(4)'s first next subgame of `player`, after 5 iterations
  of the whole game and 5 of its own."""
  game = pyspiel.load_game(GAMES[3])
  tree = compiled_tree.cached_tree(game)
  keys = subgame_trace.StateKeys.build(tree)
  whole = compiled_resolver.CompiledResolver.whole_game(tree, keys, player)
  whole.iterate(5)
  current, _ = whole.next_subgame(int(whole.trace.own_infosets[0]), "resolve")
  current.iterate(5)
  return current


def _deferred(player):
  """_first_subgame's resolver whose own first next subgame was refused (defer),
  with no iteration since."""
  current = _first_subgame(player)
  assert current.defer(int(current.trace.own_infosets[0]))
  return current


@pytest.mark.parametrize("player", [0, 1])
def test_the_average_pass_ahead_gives_the_same_next_inputs(player):
  """average_pass_ahead (the pass of the average strategy made at the refusal's
  decision) gives every next subgame the inputs next_subgame's own pass gives; it
  is not made when it would not fit, or for a solve with iterations since the
  refusal, and an iteration drops it."""
  plain, ahead = _deferred(player), _deferred(player)
  assert not ahead.average_pass_ahead(time.perf_counter() - 1.0)
  assert ahead.average_pass_ahead(time.perf_counter() + 10.0)
  compared = 0
  for infoset in plain.trace.own_infosets.tolist():
    outcomes = []
    for current in (plain, ahead):
      try:
        built, info = current.next_subgame(infoset, "resolve")
        outcomes.append((built.view.w, built.view.cbv, info["after_refused"]))
      except protocol.CannotResolve as error:
        outcomes.append(str(error))
    if isinstance(outcomes[0], str):
      assert outcomes[0] == outcomes[1]
      continue
    np.testing.assert_allclose(outcomes[1][0], outcomes[0][0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(outcomes[1][1], outcomes[0][1], rtol=0, atol=1e-12)
    assert outcomes[0][2] == outcomes[1][2]
    assert compared or "average strategy" in outcomes[0][2]  # the first one's pass
    compared += 1
  assert compared
  dropped = _deferred(player)
  assert dropped.average_pass_ahead(time.perf_counter() + 10.0)
  dropped.iterate(1)
  assert not dropped.average_pass_ahead(time.perf_counter() + 10.0)
  _, info = dropped.next_subgame(int(dropped.trace.own_infosets[0]), "resolve")
  assert "its iterations since the last refusal" in info["after_refused"]


@pytest.mark.parametrize("variant", ["resolve", "max_margin"])
@pytest.mark.parametrize("player", [0, 1])
def test_a_subgame_built_ahead_is_the_one_next_subgame_builds(player, variant):
  """build_ahead builds, for any next-turn infoset of a group, the resolver that
  next_subgame builds at the decision (the same gadget, and after its first
  iteration and three more, the same average strategy to 1e-12); next_subgame hands
  it over at any infoset of that group, once (set up only when its first iteration
  would not fit: the decision runs it); an iteration or a refusal (defer) drops what
  was built ahead; the unsafe gadget is not built ahead."""
  def whole_game():  # small Leduc's, after 5 iterations: several next subgames
    tree = compiled_tree.cached_tree(pyspiel.load_game(GAMES[1]))
    whole = compiled_resolver.CompiledResolver.whole_game(
        tree, subgame_trace.StateKeys.build(tree), player)
    whole.iterate(5)
    return whole

  plain, ahead = whole_game(), whole_game()
  first_iteration = lambda built, nodes: built.iterate(1)
  groups = {}
  for infoset in plain.trace.own_infosets.tolist():
    groups.setdefault(int(plain.trace.group_roots(infoset)[0]), []).append(infoset)
  assert len(groups) > 1
  def no_time(built, nodes):
    raise protocol.CannotResolve("the first iteration would not fit")

  for n, (group, infosets) in enumerate(groups.items()):
    assert plain.trace.own_infosets_of_groups([group])[0] in infosets
    # Every other one is kept set up only: its first iteration would not fit.
    info = ahead.build_ahead(infosets[-1], variant,
                             first_iteration if n % 2 else no_time)
    assert info["iterations_ahead"] == n % 2 and info["built_ahead_seconds"] >= 0
  assert ahead.built_ahead == len(groups)
  with pytest.raises(KeyError, match="No next turn"):
    plain.trace.own_infosets_of_groups([-1])
  for n, (group, infosets) in enumerate(groups.items()):
    outcomes = []
    for current in (plain, ahead):
      try:
        built, info = current.next_subgame(infosets[0], variant)
      except protocol.CannotResolve as error:
        outcomes.append(str(error))
        continue
      if not info.get("iterations_ahead"):
        built.iterate(1)
      built.iterate(3)
      outcomes.append((built.view.w, built.view.cbv, built.view.average_slots(),
                       info.get("iterations_ahead")))
    if isinstance(outcomes[0], str):
      assert outcomes[0] == outcomes[1]
      continue
    for mine, theirs in zip(outcomes[1][:3], outcomes[0][:3]):
      np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-12)
    assert outcomes[0][3] is None and outcomes[1][3] == n % 2
  assert ahead.built_ahead == 0
  _, info = ahead.next_subgame(groups[next(iter(groups))][0], variant)
  assert "iterations_ahead" not in info  # handed over once
  for drop in (lambda r: r.iterate(1), lambda r: r.defer(int(r.trace.own_infosets[0]))):
    current = whole_game()
    current.build_ahead(int(current.trace.own_infosets[0]), variant, first_iteration)
    assert current.built_ahead == 1
    drop(current)
    assert current.built_ahead == 0
  current = whole_game()
  with pytest.raises(ValueError, match="resolve and max-margin"):
    current.build_ahead(int(current.trace.own_infosets[0]), "unsafe", first_iteration)


def test_a_subgame_set_up_ahead_counts_only_its_own_iterations():
  """With keep_solver_data the next resolver continues the iteration count: a
  subgame set up ahead whose first iteration did not fit reports none
  (`iterations_ahead` 0, so the decision runs it), one that ran it reports one."""
  tree = compiled_tree.cached_tree(pyspiel.load_game(GAMES[1]))
  keys = subgame_trace.StateKeys.build(tree)
  config = settings.ResolverConfig(solver="cfr+", keep_solver_data=True)
  whole = compiled_resolver.CompiledResolver.whole_game(tree, keys, 0, config=config)
  whole.iterate(5)

  def no_time(built, nodes):
    raise protocol.CannotResolve("the first iteration would not fit")

  infosets = whole.trace.own_infosets.tolist()
  groups = {int(whole.trace.group_roots(i)[0]): i for i in infosets}
  first, second = list(groups.values())[:2]
  assert whole.build_ahead(first, "resolve", no_time)["iterations_ahead"] == 0
  assert whole.build_ahead(second, "resolve",
                           lambda built, nodes: built.iterate(1))["iterations_ahead"] == 1
  built, info = whole.next_subgame(first, "resolve")
  assert info["iterations_ahead"] == 0 and built.iterations == 5  # carried over
  built, info = whole.next_subgame(second, "resolve")
  assert info["iterations_ahead"] == 1 and built.iterations == 6


def test_iterations_ahead_are_the_first_iterations_of_the_decision(monkeypatch):
  """Subgames solved in place, built ahead with their first iteration, then given
  more by iterate_ahead (the likeliest last; each switch rewrites the shared
  arrays), hold after more iterations at the decision the same tables bit for bit
  as the subgame built there and iterated as often; their info counts the
  iterations ahead; nothing runs on subgames under `min_nodes`."""
  monkeypatch.setattr(compiled_resolver, "COPY_NODES_LIMIT", 0)  # in place

  def whole_game():
    tree = compiled_tree.cached_tree(pyspiel.load_game(GAMES[1]))
    whole = compiled_resolver.CompiledResolver.whole_game(
        tree, subgame_trace.StateKeys.build(tree), 0)
    whole.iterate(5)
    return whole

  plain, ahead = whole_game(), whole_game()
  groups = {}
  for infoset in plain.trace.own_infosets.tolist():
    groups.setdefault(int(plain.trace.group_roots(infoset)[0]), infoset)
  infosets = list(groups.values())[:3]
  built = [ahead.build_ahead(i, "resolve", lambda view, nodes: view.iterate(1))
           for i in infosets]
  assert [info["iterations_ahead"] for info in built] == [1, 1, 1]
  order = []

  def another(view, nodes, until):
    if view.iterations >= 3 or time.perf_counter() > until:
      return False
    order.append(view)
    view.iterate(1)
    return True

  far = time.perf_counter() + 60.0
  assert ahead.iterate_ahead(another, far, min_nodes=10**9) == 0
  assert ahead.iterate_ahead(another, far) == 2 * len(infosets)
  resolvers = [entry[0] for entry in ahead._ahead.values()]
  assert order[-1] is resolvers[0] and order[0] is resolvers[-1]  # likeliest last
  for infoset in infosets:
    mine, info = ahead.next_subgame(infoset, "resolve")
    assert info["iterations_ahead"] == 3 and mine.iterations == 3
    theirs, _ = plain.next_subgame(infoset, "resolve")
    mine.iterate(2)
    theirs.iterate(5)
    np.testing.assert_array_equal(mine.view.average_slots(),
                                  theirs.view.average_slots())


def test_a_large_subgame_built_ahead_runs_up_to_ahead_iterations():
  """SubgameBudget.iterations_ahead: the first iteration, then on a large subgame
  (MEASURED_NODES) more up to AHEAD_ITERATIONS while each fits before the move's
  RESOLVE_SHARE (the anytime loop's estimate updated); one on a small one."""
  budget = move_budget.SubgameBudget(sampling=False)
  move = move_budget.MoveBudget(time.perf_counter(), 60.0)
  for nodes, expected in ((move_budget.MEASURED_NODES, move_budget.AHEAD_ITERATIONS),
                          (move_budget.MEASURED_NODES - 1, 1)):
    built = _first_subgame(0)
    before = built.iterations
    budget.iterations_ahead(built, nodes, move)
    assert built.iterations - before == expected
    assert built.timing["per_iteration"] > 0
  assert not budget.another_iteration(built, move_budget.MEASURED_NODES,
                                      time.perf_counter())


def test_payoffs_ahead_writes_the_likeliest_subgames_terminal_payoffs(monkeypatch):
  """payoffs_ahead writes the terminal payoffs of the first subgame built ahead
  (solved in place) into the shared value array when its first iteration did not
  run and the writing fits before the deadline (its info then says so); the solve
  after it is the same bit for bit; nothing is written late, or when the first
  iteration ran."""
  monkeypatch.setattr(compiled_resolver, "COPY_NODES_LIMIT", 0)  # in place

  def no_time(built, nodes):
    raise protocol.CannotResolve("the first iteration would not fit")

  solves = []
  for write in (False, True):
    current = _first_subgame(0)
    infoset = int(current.trace.own_infosets[0])
    info = current.build_ahead(infoset, "resolve", no_time)
    built = current._ahead[next(iter(current._ahead))][0]
    tables = built.view.solver._tables
    assert not current.payoffs_ahead(time.perf_counter() - 1.0)  # late
    assert tables.owner is not built.view.solver
    if write:
      assert current.payoffs_ahead(time.perf_counter() + 60.0)
      assert tables.owner is built.view.solver and info["payoffs_ahead"]
    entered, info = current.next_subgame(infoset, "resolve")
    assert entered is built and info.get("payoffs_ahead", False) == write
    entered.iterate(3)
    solves.append(entered.view.average_slots())
  np.testing.assert_array_equal(solves[0], solves[1])
  current = _first_subgame(0)
  current.build_ahead(int(current.trace.own_infosets[0]), "resolve",
                      lambda built, nodes: built.iterate(1))
  assert not current.payoffs_ahead(time.perf_counter() + 60.0)  # iterated ahead


@pytest.mark.parametrize("game_string", GAMES[1:])
def test_ahead_candidates_are_the_next_subgames_below_the_action(game_string):
  """ahead_candidates: one next-turn infoset per group with next roots below the
  bot's action at its infoset (as climbing from each next root finds), none built
  ahead, likeliest first (the sum of w times o's reach over those roots)."""
  tree = compiled_tree.cached_tree(pyspiel.load_game(game_string))
  keys = subgame_trace.StateKeys.build(tree)
  checked = 0
  for player in (0, 1):
    whole = compiled_resolver.CompiledResolver.whole_game(tree, keys, player)
    assert whole.ahead_candidates(0, 0) == []  # no iteration: no estimates yet
    whole.iterate(3)
    trace = whole.trace
    w, opponent_reach = whole.estimates.means()
    own = np.flatnonzero((tree.node_player == player) &
                         (tree.node_infoset >= 0))
    for infoset in np.unique(tree.node_infoset[own])[:6].tolist():
      for action in range(int(tree.infoset_num_actions[infoset])):
        mass = {}
        for i, root in enumerate(trace.next_roots.tolist()):
          child, node = root, int(tree.node_parent[root])
          while node >= 0 and tree.node_infoset[node] != infoset:
            child, node = node, int(tree.node_parent[node])
          if node >= 0 and tree.node_action_index[child] == action:
            group = int(trace.group[i])
            mass[group] = mass.get(group, 0.0) + w[i] * opponent_reach[i]
        expected = {g for g, m in mass.items() if m > 0}
        candidates = whole.ahead_candidates(infoset, action)
        assert whole.ahead_candidates(infoset, action, 1) == candidates[:1]
        groups = [int(trace.group_roots(c)[0]) for c in candidates]
        assert sorted(groups) == sorted(expected)
        masses = [mass[g] for g in groups]
        assert all(a >= b * (1 - 1e-12) for a, b in zip(masses, masses[1:]))
        if groups:
          checked += 1
          whole.build_ahead(candidates[0], "resolve", lambda built, nodes: None)
          assert int(trace.group_roots(candidates[0])[0]) not in [
              int(trace.group_roots(c)[0])
              for c in whole.ahead_candidates(infoset, action)]
          whole._ahead.clear()
  assert checked


def _actions_above(tree, trace, infoset):
  """Per next root of `trace`, the action index at `infoset` above it (-1: none),
  by climbing to the game's root."""
  actions = []
  for root in trace.next_roots.tolist():
    child, node = root, int(tree.node_parent[root])
    while node >= 0 and tree.node_infoset[node] != infoset:
      child, node = node, int(tree.node_parent[node])
    actions.append(int(tree.node_action_index[child]) if node >= 0 else -1)
  return np.array(actions)


@pytest.mark.parametrize("game_string", GAMES[1:])
def test_next_groups_below_sum_every_root_of_the_groups_below_the_infoset(game_string):
  """next_groups_below: the groups with a next root below the bot's infoset
  (whatever its action; climbs that stop at the infoset's first history find the
  same as climbs to the root), each with all of its next roots' count, trace steps
  and subtree nodes; at the whole game and in a later subgame."""
  tree = compiled_tree.cached_tree(pyspiel.load_game(game_string))
  keys = subgame_trace.StateKeys.build(tree)
  checked = 0
  for player in (0, 1):
    whole = compiled_resolver.CompiledResolver.whole_game(tree, keys, player)
    whole.iterate(2)
    resolvers = [whole]
    if len(whole.trace.own_infosets):
      later, _ = whole.next_subgame(int(whole.trace.own_infosets[-1]), "resolve")
      resolvers.append(later)
    steps = subgame_trace.trace_steps(tree, player)
    for current in resolvers:
      trace = current.trace
      met = set()  # the player's infosets above the next roots
      for root in trace.next_roots.tolist():
        node = int(tree.node_parent[root])
        while node >= 0:
          if tree.node_player[node] == player:
            met.add(int(tree.node_infoset[node]))
          node = int(tree.node_parent[node])
      infosets = sorted(met)[-8:]  # the deepest, in later subgames
      for infoset in infosets:
        above = _actions_above(tree, trace, infoset)
        touched = set(trace.group[above >= 0].tolist())
        expected = {}
        for i, root in enumerate(trace.next_roots.tolist()):
          group = int(trace.group[i])
          if group in touched:
            sums = expected.setdefault(group, [0, 0, 0, 0])
            for k, value in enumerate((1, steps[0, root], steps[1, root],
                                       keys.subtree_nodes[root])):
              sums[k] += int(value)
        got = current.next_groups_below(infoset)
        assert sorted(got["group"].tolist()) == sorted(expected)
        for k, group in enumerate(got["group"].tolist()):
          assert [int(got[name][k]) for name in ("roots", "walked", "found",
                                                  "nodes")] == expected[group]
        checked += bool(touched)
  assert checked


def _move(seconds, deadline):
  """A MoveBudget whose move has `seconds` and whose RESOLVE_SHARE ends at
  time.perf_counter() `deadline` (a first decision's pre-play counted in)."""
  return move_budget.MoveBudget(deadline - move_budget.RESOLVE_SHARE, 1.0,
                                turn_seconds=seconds)


def _planned():
  """(tree, whole game's resolver after 3 iterations, a SubgameBudget, player 0's
  first infoset with next subgames below) of PAM(4): plan_ahead's tests."""
  tree = compiled_tree.cached_tree(pyspiel.load_game(GAMES[3]))
  keys = subgame_trace.StateKeys.build(tree)
  whole = compiled_resolver.CompiledResolver.whole_game(tree, keys, 0)
  whole.iterate(3)
  infoset = next(i for i in range(tree.num_infosets) if tree.infoset_player[i] == 0
                 and len(whole.next_groups_below(i)["group"]))
  return tree, whole, move_budget.SubgameBudget(sampling=False), infoset


def test_plan_ahead_reserves_time_for_a_late_next_subgame(monkeypatch):
  """plan_ahead: nothing reserved or skipped when the next subgames fit a move of
  their own; when they are late, the candidates' search and the costliest setup
  (margined) are reserved; costly subgames that are not late are skipped, and
  ahead_candidates leaves them out; nothing when there is no time to estimate or
  the reserve would not fit."""
  tree, whole, budget, infoset = _planned()
  groups = whole.next_groups_below(infoset)
  setup = move_budget.setup_seconds(groups["roots"], groups["walked"],
                                       groups["found"])
  far = time.perf_counter() + 100.0
  assert budget.plan_ahead(whole, infoset, _move(100.0, far)) == (0.0, set())
  reserve, skipped = budget.plan_ahead(whole, infoset, _move(1e-9, far))  # all late
  assert skipped == set() and reserve == pytest.approx(
      whole.ahead_candidates_seconds() + setup.max() +
      (move_budget.FIRST_ITERATION_MARGIN - 1) *
      (setup.max() - move_budget.SETUP_SECONDS))
  assert budget.plan_ahead(whole, infoset,
                           _move(1.0, time.perf_counter() - 1.0)) == (0.0, None)
  assert budget.plan_ahead(types.SimpleNamespace(), infoset,
                           _move(0.0, far)) == (0.0, None)
  monkeypatch.setattr(move_budget, "AHEAD_RESERVE_SHARE", 1e9)  # none late
  reserve, skipped = budget.plan_ahead(whole, infoset, _move(1e-9, far))  # costly
  assert reserve == 0.0 and skipped == set(groups["group"].tolist())
  action = next(a for a in range(int(tree.infoset_num_actions[infoset]))
                if whole.ahead_candidates(infoset, a))
  assert whole.ahead_candidates(infoset, action, skipped=skipped) == []
  monkeypatch.undo()
  # Setups estimated at 10 s: time to estimate, not for the reserve.
  monkeypatch.setattr(move_budget, "setup_seconds",
                      lambda roots, *_: np.full(len(roots), 10.0))
  deadline = time.perf_counter() + 11.0
  assert budget.plan_ahead(whole, infoset, _move(1e-9, deadline)) == (0.0, set())


def test_plan_ahead_holds_a_preplay_share_for_what_build_ahead_makes():
  """plan_ahead with `held` (a first decision's pre-play share): the candidates'
  search and, over the actions at the infoset, the most that build_ahead would
  spend on the next subgames below one (margined setups and first iterations, a
  large subgame's AHEAD_ITERATIONS), at most `held`; next_groups_below per action
  splits the groups below the infoset."""
  _, whole, budget, infoset = _planned()
  most, union = 0.0, set()
  for action in range(whole.num_actions(infoset)):
    groups = whole.next_groups_below(infoset, action)
    union |= set(groups["group"].tolist())
    setup = move_budget.setup_seconds(groups["roots"], groups["walked"],
                                         groups["found"])
    first = budget.first_iteration_seconds(groups["nodes"], groups["found"])
    iterations = np.where(groups["nodes"] >= move_budget.MEASURED_NODES,
                          move_budget.AHEAD_ITERATIONS, 1)
    need = move_budget.margined_setup(setup, move_budget.FIRST_ITERATION_MARGIN)
    most = max(most, float(np.sort(need + iterations * first)[
        -move_budget.AHEAD_MAX:].sum()))
  assert union == set(whole.next_groups_below(infoset)["group"].tolist())
  far = time.perf_counter() + 100.0
  reserve, skipped = budget.plan_ahead(whole, infoset, _move(100.0, far), held=1e3)
  assert skipped == set() and reserve == pytest.approx(
      whole.ahead_candidates_seconds() + most)
  assert budget.plan_ahead(whole, infoset, _move(100.0, far), held=1e-6) == (
      1e-6, set())


def test_the_bot_enters_the_subgame_it_built_ahead(monkeypatch):
  """With time left after its iterations (here none start after the first), the
  bot's first decision builds the next subgames below its action (the record lists
  them); the next decision enters one without building it and says so; with
  build_ahead=False it builds at the decision; iteration budgets build nothing."""
  game = pyspiel.load_game("kuhn_poker")
  monkeypatch.setattr(protocol, "_RUN_MARGIN", 1e6)  # one iteration a run, then none
  # ... the first started on no estimate (the whole game's prior set to none).
  monkeypatch.setattr(move_budget, "ITERATION_SECONDS_PER_NODE", 0.0)

  def second_decision(**kwargs):
    for seed in range(40):
      bot = continual_resolving.ContinualResolvingBot(game, 0, solver="cfr+",
                                                      seed=seed, **kwargs)
      state = game.new_initial_state()
      for card in (0, 1):
        state.apply_action(card)
      if bot.step(state) == 0:  # pass; the opponent bets: a second decision
        state.apply_action(0)
        state.apply_action(1)
        bot.step(state)
        return bot.decisions
    raise AssertionError("the bot never passed")

  first, second = second_decision(preplay="0.3s", move="0.3s")
  assert len(first["built_ahead"]) == 1  # the one subgame after pass, bet
  assert first["ahead_reserve_seconds"] > 0  # (a share of the pre-play held back)
  assert second["new_subgame"] and second["iterations_ahead"] == 1
  assert second["built_ahead_seconds"] == first["built_ahead"][0]["seconds"]
  for record in (first, second):  # the parts of a decision's time
    assert 0 < record["setup_seconds"] + record["iterate_seconds"] <= record["seconds"]
  first, second = second_decision(preplay="0.3s", move="0.3s", build_ahead=False)
  assert "built_ahead" not in first
  assert second["new_subgame"] and "iterations_ahead" not in second
  assert second["iterations"] == 1
  first, second = second_decision(preplay="5it", move="5it")
  assert "built_ahead" not in first and "iterations_ahead" not in second
  # Every next subgame late: the first decision reserves time, and builds ahead.
  monkeypatch.setattr(move_budget, "AHEAD_RESERVE_SHARE", 0.0)
  first, second = second_decision(preplay="0.3s", move="0.3s")
  assert first["ahead_reserve_seconds"] > 0 and len(first["built_ahead"]) == 1
  assert second["iterations_ahead"] == 1
