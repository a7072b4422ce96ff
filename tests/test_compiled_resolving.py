"""Continual resolving's subgames on the compiled tree play as the live CFR+ path."""
# pylint: disable=protected-access

import time
import types

import numpy as np
import pytest

import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.bots import anytime
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.resolving import continual_resolving
from ggp_cr.algorithms.resolving import move_budget
from ggp_cr.algorithms.resolving import protocol
from ggp_cr.algorithms.resolving import settings
from ggp_cr.algorithms.resolving.compiled import compiled_resolver
from ggp_cr.algorithms.resolving.compiled import warm_start
from ggp_cr.algorithms.resolving.gadget import gadget_game
from ggp_cr.algorithms.resolving.live import live_resolver
from ggp_cr.algorithms.resolving.live import live_trace
from ggp_cr.algorithms.resolving.subgames import subgame_trace
from ggp_cr.algorithms.tree import compiled_tree


def _random_match(game, player, rng):
  """A random match (chance and both players at random): its states at `player`'s
  turns, played on after the caller is done with each."""
  state = game.new_initial_state()
  while not state.is_terminal():
    if state.is_chance_node():
      actions, probabilities = zip(*state.chance_outcomes())
      state.apply_action(actions[rng.choice(len(actions), p=probabilities)])
      continue
    if state.current_player() == player:
      yield state
    state.apply_action(int(rng.choice(state.legal_actions())))


GAMES = ["kuhn_poker", "python_leduc(max_raises=1,cards_per_suit=3)",
         "python_ii_goofspiel(num_cards=4)", "python_princess_monster(max_turns=4)"]


def _resolve_along_random_matches(game_string, config, matches=8, iterations=(4, 3)):
  """Along random histories, the compiled resolver with `config` enters the same
  subgames as the live resolver.Resolver and its average strategy at each of the
  bot's turns is the same to 1e-9 (`iterations`: at the whole game, at each later
  subgame; with keep_solver_data each live resolver warm-starts from the last, as
  the bot's); returns the number of subgames resolved."""
  game = pyspiel.load_game(game_string)
  tree = compiled_tree.cached_tree(game)
  keys = subgame_trace.StateKeys.build(tree)
  variant = config.variant
  rng = np.random.default_rng(1)
  resolved = 0
  for match in range(matches):
    player = match % 2
    live = live_resolver.Resolver(live_trace.Problem(game, player), config, seed=match)
    ours = compiled_resolver.CompiledResolver.whole_game(tree, keys, player,
                                                          config.use_cbr, config,
                                                          seed=match)
    for _ in range(iterations[0]):
      live.solver.iteration()
      ours.iteration()
    for state in _random_match(game, player, rng):
      key = state.information_state_string(player)
      infoset = tree.infoset_index(player, key)
      assert (key in live.trace.subgame_map) == (infoset in ours.trace)
      if key in live.trace.subgame_map:
        seed = 100 * match + resolved
        try:
          gadget, profile, info = live.next_subgame(key, variant)
        except protocol.CannotResolve:
          with pytest.raises(protocol.CannotResolve):
            ours.next_subgame(infoset, variant, seed=seed)
        else:
          ours, our_info = ours.next_subgame(infoset, variant, seed=seed)
          assert our_info["variant"] == info["variant"]
          live = live_resolver.Resolver(live_trace.Problem(game, player, gadget), config, seed=seed,
                             trunk=profile,
                             warm=live if config.keep_solver_data else None)
          for _ in range(iterations[1]):
            live.solver.iteration()
            ours.iteration()
          resolved += 1
      legal = state.legal_actions()
      np.testing.assert_allclose(ours.probabilities(infoset),
                                 live.probabilities(key, legal), rtol=0, atol=1e-9)
  return resolved


@pytest.mark.parametrize("use_cbr", [False, True])
@pytest.mark.parametrize("variant", gadget_game.VARIANTS)
@pytest.mark.parametrize("game_string", GAMES)
def test_random_matches_resolve_as_the_live_path(game_string, variant, use_cbr,
                                                 subgame_view):
  """CFR+: the compiled resolver plays as the live one (_resolve_along_random_matches),
  with later subgames copied or solved in place."""
  config = settings.ResolverConfig(solver="cfr+", variant=variant, use_cbr=use_cbr)
  copied = []
  original = compiled_resolver.subgame_view

  def spy(*args, **kwargs):
    view, how = original(*args, **kwargs)
    copied.append("small" in how)
    return view, how

  compiled_resolver.subgame_view = spy
  try:
    assert _resolve_along_random_matches(game_string, config) > 0
  finally:
    compiled_resolver.subgame_view = original
  assert set(copied) == {subgame_view == "copied"}


@pytest.mark.parametrize("depth_limit,playouts", [(2, 1), (3, 2)])
@pytest.mark.parametrize("variant", gadget_game.VARIANTS)
@pytest.mark.parametrize("game_string", GAMES)
def test_depth_limited_cfr_plus_resolves_as_the_live_path(game_string, variant,
                                                          depth_limit, playouts):
  """dl_cfr+ ([S] §3.3.2, §5.2.3, App. A.5): the compiled resolver (depth-limited
  CFR+ on copied gadget views) draws the same random playouts as the live path and
  plays the same strategies to 1e-9, with the same next-subgame inputs."""
  config = settings.ResolverConfig(solver="dl_cfr+", variant=variant,
                             depth_limit=depth_limit, playouts=playouts)
  assert _resolve_along_random_matches(game_string, config) > 0

def test_run_keeps_iteration_and_time_budgets():
  tree = compiled_tree.cached_tree(pyspiel.load_game(GAMES[1]))
  keys = subgame_trace.StateKeys.build(tree)
  resolver = compiled_resolver.CompiledResolver.whole_game(tree, keys, 0)
  assert resolver.run(limits.Limit(iterations=3), time.perf_counter()) == 3
  assert resolver.iterations == 3 and resolver.estimates.iterations == 3
  start = time.perf_counter()
  done = resolver.run(limits.Limit(seconds=0.05), start)
  assert done > 0 and resolver.iterations == 3 + done
  assert resolver.run(limits.Limit(seconds=0.0), start) == 0


@pytest.mark.parametrize("solver", ["cfr+", "dl_cfr+"])
@pytest.mark.parametrize("variant", ["resolve", "max_margin"])
@pytest.mark.parametrize("game_string", GAMES)
def test_kept_solver_data_resolves_as_the_live_path(game_string, variant, solver,
                                                    subgame_view):
  """keep_solver_data (MCCR/gtlib2, [S] ch. 2): each later subgame's CFR+ / dl_cfr+
  starts from the last subgame's tables and iteration count
  (warm_start.carry_over) and plays as the live path's warm-started solver to 1e-9,
  later subgames copied or (CFR+) solved in place."""
  config = settings.ResolverConfig(solver=solver, variant=variant, keep_solver_data=True,
                             depth_limit=2)
  assert _resolve_along_random_matches(game_string, config, iterations=(5, 3)) > 0


def test_solver_data_carry_over_between_solvers_of_one_kind_only():
  tree = compiled_tree.cached_tree(pyspiel.load_game("kuhn_poker"))
  keys = subgame_trace.StateKeys.build(tree)
  full_width, sampling = (
      compiled_resolver.CompiledResolver.whole_game(
          tree, keys, 0, config=settings.ResolverConfig(solver=solver), seed=0)
      for solver in ("cfr+", "vr_mccfr"))
  with pytest.raises(ValueError, match="one kind only"):
    warm_start.carry_over(full_width.view, sampling.view)


def _bots_play_the_same(game_string, matches, **kwargs):
  """ContinualResolvingBot (`kwargs`) on the compiled path and on the live path:
  equal strategies to 1e-9 at every decision of random matches, equal records; each
  record names its path. Returns the later decisions that resolved a new subgame."""
  game = pyspiel.load_game(game_string)
  rng = np.random.default_rng(3)
  resolved = 0
  for match in range(matches):
    player = match % 2
    bots = [continual_resolving.ContinualResolvingBot(
        game, player, preplay="5it", move="3it", path=path, seed=match, **kwargs)
            for path in ("compiled", "live")]
    for state in _random_match(game, player, rng):
      ours, live = (dict(bot.step_with_policy(state)[0]) for bot in bots)
      assert sorted(ours) == sorted(live)
      np.testing.assert_allclose([ours[a] for a in live], list(live.values()),
                                 rtol=0, atol=1e-9)
      records = [bot.decisions[-1] for bot in bots]
      assert [r["path"] for r in records] == ["compiled", "live"]
      for name in ("new_subgame", "iterations", "enters_new_subgame"):
        assert records[0].get(name) == records[1].get(name)
      assert ("fallback" in records[0]) == ("fallback" in records[1])
      resolved += records[0]["new_subgame"] and len(bots[0].decisions) > 1
  return resolved


@pytest.mark.parametrize("variant", ["resolve", "unsafe"])
@pytest.mark.parametrize("game_string", GAMES[:2])
def test_bot_plays_the_same_on_both_paths(game_string, variant, subgame_view):
  """CFR+: the bot plays the same on both paths (_bots_play_the_same)."""
  del subgame_view
  assert _bots_play_the_same(game_string, 6, solver="cfr+", variant=variant) > 0


@pytest.mark.parametrize("game_string", GAMES[:3])
def test_thesis_code_terminate_values_play_the_same_on_both_paths(game_string,
                                                                   subgame_view):
  """CFR+ with the thesis code's Terminate values (resolver.terminate_scale): the
  bot plays the same on both paths."""
  del subgame_view
  assert _bots_play_the_same(game_string, 6, solver="cfr+",
                             terminate_values="cfrplayground") > 0


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("game_string", GAMES)
def test_depth_limited_bot_plays_the_same_on_both_paths(game_string, keep):
  """dl_cfr+ ([S] §3.3.2, §5.2.3): the bot on the compiled path (copied gadget
  views) plays as on the live path, the same random playouts drawn; also with
  keep_solver_data."""
  assert _bots_play_the_same(game_string, 4, solver="dl_cfr+", depth_limit=2,
                             playouts=2, variant="max_margin",
                             keep_solver_data=keep) > 0


@pytest.mark.parametrize("game_string", GAMES)
def test_kept_solver_data_bot_plays_the_same_on_both_paths(game_string, subgame_view):
  """CFR+ with keep_solver_data: the bot takes the compiled path and plays as on the
  live path."""
  del subgame_view
  assert _bots_play_the_same(game_string, 4, solver="cfr+",
                             keep_solver_data=True) > 0


def test_bot_path_choice_and_reasons(tmp_path):
  kuhn = pyspiel.load_game("kuhn_poker")
  bot = continual_resolving.ContinualResolvingBot(kuhn, 0, solver="cfr+")
  assert bot.path == "compiled"
  assert continual_resolving.ContinualResolvingBot(kuhn, 0).path == "compiled"
  # Every solver, with and without keep_solver_data, takes the compiled path.
  for solver in ("dl_cfr+", "cfr+", "mc_cfr"):
    for keep in (False, True):
      bot = continual_resolving.ContinualResolvingBot(kuhn, 0, solver=solver,
                                                      keep_solver_data=keep)
      assert bot.path == "compiled" and "compiled" in bot.path_reason
  # Not in this process nor on disk, and above the size limit: live, with the reason.
  game = pyspiel.load_game("python_leduc(max_raises=2,cards_per_suit=3)")
  with pytest.raises(ValueError, match="not available"):
    continual_resolving.ContinualResolvingBot(game, 1, solver="cfr+", path="compiled",
                                              compiled_nodes_limit=100)
  big = continual_resolving.ContinualResolvingBot(
      game, 1, solver="cfr+", compiled_nodes_limit=100, cache_dir=str(tmp_path))
  assert big.path == "live" and "too large" in big.path_reason
  with pytest.raises(ValueError, match="path must be one of"):
    continual_resolving.ContinualResolvingBot(kuhn, 0, path="fast")
  with pytest.raises(ValueError, match="compiled_nodes_limit must be"):
    continual_resolving.ContinualResolvingBot(kuhn, 0, compiled_nodes_limit=-1)
  # Within the limit it is extracted into the cache and later bots read it from there.
  game = pyspiel.load_game("python_leduc(max_raises=1,cards_per_suit=4)")
  first = continual_resolving.ContinualResolvingBot(game, 0, solver="cfr+",
                                                    cache_dir=str(tmp_path))
  assert first.path == "compiled" and "extracted" in first.path_reason
  state = game.new_initial_state()
  while state.is_chance_node():
    state.apply_action(state.chance_outcomes()[0][0])
  first.step(state)
  assert first.decisions[0]["path"] == "compiled"


def _second_decision(game, iteration_seconds_per_node):
  """The record of player 0's second decision (chance's first outcomes, both players
  check/call) of a cfr+ bot with 0.05 s moves whose per-node iteration estimate is
  set to the given one (nothing built ahead: the second decision builds)."""
  bot = continual_resolving.ContinualResolvingBot(game, 0, preplay="5it", move="0.05s",
                                                  solver="cfr+", build_ahead=False)
  bot._budget.seconds_per_node = iteration_seconds_per_node  # pylint: disable=protected-access
  bot._budget.from_trunk = lambda *args: None  # keep it  # pylint: disable=protected-access
  state = game.new_initial_state()
  while len(bot.decisions) < 2:
    if state.is_chance_node():
      state.apply_action(state.chance_outcomes()[0][0])
      continue
    if state.current_player() == 0:
      bot.step(state)
    state.apply_action(1)
  return bot.decisions[-1]


def test_the_per_node_estimate_is_the_median_preplay_iteration(monkeypatch):
  """The bot's per-node subgame iteration estimate after pre-play: the median of the
  whole game's pre-play iterations (anytime.spend's samples) times VIEW_SLOWDOWN
  over the tree's nodes; a slow first iteration (page faults, kernels loaded) does
  not count as a mean would."""
  game = pyspiel.load_game(GAMES[1])
  clock = [0.0]
  costs = iter([0.07] + [0.023] * 40)

  def iterate(bot_iterate):
    def run(n):
      clock[0] += n * next(costs)
      return bot_iterate(n)
    return run

  monkeypatch.setattr(anytime, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
  timing = {"samples": []}
  done = anytime.spend(limits.Limit(seconds=0.2), 0.0, iterate(lambda n: None),
                       timing=timing)
  assert done == len(timing["samples"]) and timing["samples"][0] == 0.07
  assert timing["samples"][1:] == pytest.approx([0.023] * (done - 1))
  monkeypatch.undo()
  bot = continual_resolving.ContinualResolvingBot(game, 0, preplay="5it", move="0.05s",
                                                  solver="cfr+")
  state = game.new_initial_state()
  while state.is_chance_node():
    state.apply_action(state.chance_outcomes()[0][0])
  bot.step(state)
  tree = compiled_tree.cached_tree(game)
  bot._budget.from_trunk([0.07, 0.023, 0.023, 0.024], None, tree.num_nodes)  # pylint: disable=protected-access
  assert bot._budget.seconds_per_node == pytest.approx(  # pylint: disable=protected-access
      move_budget.VIEW_SLOWDOWN * 0.0235 / tree.num_nodes)


def test_a_subgame_too_large_for_the_budget_is_not_built():
  """Fallback: the bot keeps its current solve, and the record says so."""
  game = pyspiel.load_game(GAMES[1])
  tree = compiled_tree.cached_tree(game)
  keys = subgame_trace.StateKeys.build(tree)
  resolver = compiled_resolver.CompiledResolver.whole_game(tree, keys, 0)
  resolver.iterate(5)
  infoset = int(resolver.trace.own_infosets[0])
  with pytest.raises(protocol.CannotResolve, match="nodes, more than"):
    resolver.next_subgame(infoset, "resolve", max_nodes=1)
  _, info = resolver.next_subgame(infoset, "resolve", max_nodes=tree.num_nodes)
  assert 0 < info["subgame_nodes"] <= tree.num_nodes
  record = _second_decision(game, 1.0)  # every subgame is too large for the move
  assert record["enters_new_subgame"] and not record["new_subgame"]
  assert "more than" in record["fallback"]
  assert record["strategy"].startswith("the current subgame's solve")
  assert "average strategy" not in record["fallback"]  # iterations will estimate


def test_a_refusal_with_no_iteration_left_estimates_from_the_average(monkeypatch):
  """When no iteration of the current solve would run in the rest of the move, the
  refusal's decision makes the pass of the average strategy (the record says so)."""
  game = pyspiel.load_game(GAMES[1])
  monkeypatch.setattr(protocol, "_RUN_MARGIN", 1e9)  # no iteration starts in a move
  record = _second_decision(game, 1.0)
  assert record["enters_new_subgame"] and not record["new_subgame"]
  assert record["iterations"] == 0
  assert record["fallback"].endswith("the next inputs are estimated from its average "
                                     "strategy")


def test_a_subgame_whose_first_iteration_would_not_fit_is_not_switched_to(monkeypatch):
  """A subgame admitted by its size whose first CFR+ iteration no longer fits what is
  left of the move: the bot keeps its current solve; with time left it switches and
  the decision runs the first iteration."""
  game = pyspiel.load_game(GAMES[1])
  monkeypatch.setattr(move_budget, "RESOLVE_SHARE", 1e9)
  record = _second_decision(game, 1.0)
  assert record["enters_new_subgame"] and not record["new_subgame"]
  assert "would not fit" in record["fallback"]
  record = _second_decision(game, 1e-12)
  assert record["new_subgame"] and record["iterations"] >= 1


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


def test_plan_ahead_reserves_time_for_a_late_next_subgame(monkeypatch):
  """plan_ahead: nothing reserved or skipped when the next subgames fit a move of
  their own; when they are late, the candidates' search and the costliest setup
  (margined) are reserved; costly subgames that are not late are skipped, and
  ahead_candidates leaves them out; nothing when there is no time to estimate or
  the reserve would not fit."""
  tree = compiled_tree.cached_tree(pyspiel.load_game(GAMES[3]))
  keys = subgame_trace.StateKeys.build(tree)
  whole = compiled_resolver.CompiledResolver.whole_game(tree, keys, 0)
  whole.iterate(3)
  budget = move_budget.SubgameBudget(sampling=False)
  infoset = next(i for i in range(tree.num_infosets) if tree.infoset_player[i] == 0
                 and len(whole.next_groups_below(i)["group"]))
  groups = whole.next_groups_below(infoset)
  setup = move_budget.setup_seconds(groups["roots"], groups["walked"],
                                       groups["found"])
  far = time.perf_counter() + 100.0
  assert budget.plan_ahead(whole, infoset, 100.0, far) == (0.0, set())
  reserve, skipped = budget.plan_ahead(whole, infoset, 1e-9, far)  # all late
  assert skipped == set() and reserve == pytest.approx(
      whole.ahead_candidates_seconds() +
      move_budget.FIRST_ITERATION_MARGIN * setup.max())
  assert budget.plan_ahead(whole, infoset, 1.0, time.perf_counter() - 1.0) == (0.0,
                                                                                None)
  assert budget.plan_ahead(types.SimpleNamespace(), infoset, None, far) == (0.0, None)
  monkeypatch.setattr(move_budget, "AHEAD_RESERVE_SHARE", 1e9)  # none late
  reserve, skipped = budget.plan_ahead(whole, infoset, 1e-9, far)  # all costly
  assert reserve == 0.0 and skipped == set(groups["group"].tolist())
  action = next(a for a in range(int(tree.infoset_num_actions[infoset]))
                if whole.ahead_candidates(infoset, a))
  assert whole.ahead_candidates(infoset, action, skipped=skipped) == []
  monkeypatch.undo()
  monkeypatch.setattr(move_budget, "SETUP_SECONDS", 10.0)
  deadline = time.perf_counter() + 11.0  # time to estimate, not for the reserve
  assert budget.plan_ahead(whole, infoset, 1e-9, deadline) == (0.0, set())


def test_the_bot_enters_the_subgame_it_built_ahead(monkeypatch):
  """With time left after its iterations (here none start after the first), the
  bot's first decision builds the next subgames below its action (the record lists
  them); the next decision enters one without building it and says so; with
  build_ahead=False it builds at the decision; iteration budgets build nothing."""
  game = pyspiel.load_game("kuhn_poker")
  monkeypatch.setattr(protocol, "_RUN_MARGIN", 1e6)  # one iteration a run, then none

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


def _slow_check(self, stage):
  """SetupClock.check of a setup found running at 3 times its estimate."""
  del stage
  self.pace = 3.0
  raise protocol.CannotResolve("forced")


@pytest.mark.parametrize("player", [0, 1])
def test_after_a_refused_subgame_the_next_one_below_it_is_resolved(player, monkeypatch):
  """defer: the next turns below a refused subgame are traced (the same as the
  refused subgame's own trace would find), located in the current view, and their
  estimates let the bot resolve the next subgame it enters."""
  current = _first_subgame(player)
  refused = int(current.trace.own_infosets[0])
  resolved, _ = current.next_subgame(refused, "resolve")  # what a build would trace
  with pytest.raises(protocol.CannotResolve, match="nodes, more than"):
    current.next_subgame(refused, "resolve", max_nodes=1)
  trace = current.trace
  assert not current.defer(refused, max_roots=0) and current.trace is trace
  # The estimate counts every root, whatever the trace below them finds.
  group = len(trace.group_roots(refused))
  monkeypatch.setattr(move_budget, "TRACE_SECONDS_PER_WALKED", 0.0)
  monkeypatch.setattr(move_budget, "TRACE_SECONDS_PER_FOUND", 0.0)
  monkeypatch.setattr(move_budget, "DEFER_SECONDS_PER_ROOT", 1.0)
  assert not current.defer(refused, max_seconds=group - 0.5) and current.trace is trace
  # ... at the pace of the refused setup, if it was given up running slow.
  monkeypatch.setattr(move_budget.SetupClock, "check", _slow_check)
  with pytest.raises(protocol.CannotResolve, match="forced"):
    current.next_subgame(refused, "resolve", deadline=time.perf_counter() + 1e6)
  assert not current.defer(refused, max_seconds=2 * group + 0.5)
  assert current.defer(refused, max_seconds=3 * group + 0.5)
  current = _first_subgame(player)
  assert current.defer(refused, max_seconds=group + 0.5)
  current = _first_subgame(player)
  assert current.defer(refused)
  assert refused not in current.trace and current.refused == 1
  assert set(resolved.trace.own_infosets.tolist()) <= set(
      current.trace.own_infosets.tolist())
  assert np.isin(resolved.trace.next_roots, current.trace.next_roots).all()
  local = current.estimates._local  # pylint: disable=protected-access
  np.testing.assert_array_equal(current.view.whole_nodes(local),
                                current.trace.next_roots)
  below = int(current.trace.own_infosets[0])
  with pytest.raises(protocol.CannotResolve, match="would not fit the move"):
    current.next_subgame(below, "resolve", deadline=time.perf_counter() - 1.0)
  with pytest.raises(protocol.CannotResolve, match="would not fit the move"):
    # The setup fits, but not with the first iteration's time kept free after it.
    current.next_subgame(below, "resolve", deadline=time.perf_counter() + 10.0,
                         first_iteration_seconds=lambda nodes, next_roots: 10.0 * nodes)
  # The pass of the average would not fit (its estimate, a second a node).
  monkeypatch.setattr(move_budget, "AVERAGE_PASS_SECONDS_PER_NODE", 1.0)
  with pytest.raises(protocol.CannotResolve, match="no iterations"):
    current.next_subgame(below, "resolve", deadline=time.perf_counter() + 10.0)
  monkeypatch.undo()
  for infoset in current.trace.own_infosets.tolist():  # one pass of the average
    try:
      _, info = current.next_subgame(infoset, "resolve")
    except protocol.CannotResolve as error:
      assert "zero" in str(error)
      continue
    assert "average strategy" in info["after_refused"]
    break
  else:
    assert False, "no subgame below the refused one was resolved"
  current.iterate(5)
  entered = 0
  for infoset in current.trace.own_infosets.tolist():
    try:
      nxt, info = current.next_subgame(infoset, "resolve")
    except protocol.CannotResolve as error:
      assert "zero" in str(error)
      continue
    entered += 1
    assert "refused" in info["after_refused"]
    assert nxt.view.total_reach > 0
  assert entered > 0


@pytest.mark.parametrize("variant", gadget_game.VARIANTS)
@pytest.mark.parametrize("game_string", GAMES[1:])
def test_defer_reuses_the_refused_resolvers_trace(game_string, variant):
  """A subgame built but refused (its first iteration would not fit) is not traced
  again: defer takes its resolver's trace, and the result equals a fresh trace
  (max_margin orders its roots by choice: the indices are mapped back)."""
  game = pyspiel.load_game(game_string)
  tree = compiled_tree.cached_tree(game)
  keys = compiled_resolver.state_keys(tree)
  compared = 0

  def second_subgame(player):
    whole = compiled_resolver.CompiledResolver.whole_game(tree, keys, player)
    whole.iterate(5)
    for infoset in whole.trace.own_infosets.tolist():
      try:
        current, _ = whole.next_subgame(infoset, "resolve")
      except protocol.CannotResolve:
        continue
      if current.trace.num_next_roots:
        current.iterate(5)
        return current
    return None

  for player in (0, 1):
    current = second_subgame(player)
    if current is None:
      continue
    for infoset in current.trace.own_infosets.tolist():
      try:
        built, _ = current.next_subgame(infoset, variant)
      except protocol.CannotResolve:
        continue
      fresh = second_subgame(player)
      assert fresh.defer(infoset)
      complete = len(built.view.active_roots) == len(
          current.trace.group_roots(infoset))
      assert current.defer(infoset, max_roots=0, refused=built) == complete
      if not complete:
        continue
      compared += 1
      for name in ("next_roots", "next_root_of", "next_root_key", "group",
                   "own_infosets"):
        np.testing.assert_array_equal(getattr(current.trace, name),
                                      getattr(fresh.trace, name))
      break
  assert compared


@pytest.mark.parametrize("solver", ["cfr+", "vr_mccfr"])
def test_the_bot_resolves_again_after_a_refused_subgame(monkeypatch, solver,
                                                        subgame_view):
  """In each match the bot's first new subgame is refused; later ones are resolved,
  and the records say which strategy was played."""
  original = compiled_resolver.CompiledResolver.next_subgame
  refused = set()
  bot = None  # The bot's warm-up on Kuhn poker is not refused.

  def refuse_first(self, infoset, *args, **kwargs):
    if bot is not None and bot._matches not in refused:  # pylint: disable=protected-access
      refused.add(bot._matches)  # pylint: disable=protected-access
      raise protocol.CannotResolve("refused by the test")
    return original(self, infoset, *args, **kwargs)

  monkeypatch.setattr(compiled_resolver.CompiledResolver, "next_subgame",
                      refuse_first)
  rng = np.random.default_rng(0)
  later = 0
  for game_string in GAMES[2:]:
    game = pyspiel.load_game(game_string)
    for player in (0, 1):
      bot = None
      bot = continual_resolving.ContinualResolvingBot(
          game, player, preplay="5it", move="5it", solver=solver, seed=0)
      refused.clear()
      for _ in range(3):
        bot.restart()
        for state in _random_match(game, player, rng):
          bot.step(state)
        entered = [r for r in bot.decisions if r.get("enters_new_subgame")]
        assert not entered[0]["new_subgame"]
        assert "refused by the test" in entered[0]["fallback"]
        assert "traced" in entered[0]["fallback"]
        assert entered[0]["strategy"].startswith("the current subgame's solve")
        for record in entered[1:]:
          assert record["new_subgame"] or "zero" in record["fallback"]
        later += sum(r["new_subgame"] for r in entered[1:])
        if len(entered) > 1 and entered[1]["new_subgame"]:
          assert "after_refused" in entered[1]
  assert later > 0


class _FakeClock:
  """A settable time.perf_counter for SetupClock."""

  def __init__(self):
    self.now = 100.0

  def __call__(self):
    return self.now


def test_setup_clock_gives_up_a_setup_running_over_its_estimate_only():
  """Stages estimated at 10, 20, 30 and 20 ms, the first iteration's reserve 20 ms,
  the deadline 110 ms after the start (the test before the setup passes: 100 ms)."""
  fake = _FakeClock()
  stages = {"inputs": 0.01, "plan": 0.02, "solver": 0.03, "trace": 0.02}
  clock = move_budget.SetupClock(stages, fake.now + 0.11, 0.02, now=fake)
  fake.now += 0.005  # ahead of schedule: not credited, and no test fails
  clock.check("inputs")
  fake.now += 0.06  # 65 ms to the solver (60 estimated): 20 * 65/60 + 20 fits in 45
  clock.check("solver")
  clock = move_budget.SetupClock(stages, fake.now + 0.11, 0.02, now=fake)
  fake.now += 0.02  # twice the inputs' estimate: 20 + 2 * 70 + 20 > 110 ms
  with pytest.raises(protocol.CannotResolve, match=r"took 20 ms to its inputs \(estimated "
                     r"10 ms\); the rest at that pace \(about 140 ms\)"):
    clock.check("inputs")
  # Time spent in `excluding` is left out of the pace (not out of the deadline):
  # 59 ms to the inputs, 50 of them excluded, fit 70 + 20 in the 101 ms left.
  clock = move_budget.SetupClock(stages, fake.now + 0.16, 0.02, now=fake)

  def slow_exact_values():
    fake.now += 0.05
    return "values"

  assert clock.excluding(slow_exact_values) == "values"
  fake.now += 0.009
  clock.check("inputs")
  # Nothing left to do and no reserve: nothing is tested, however late.
  stages = {"inputs": 0.01, "plan": 0.05, "solver": 0.01, "trace": 0.0}
  clock = move_budget.SetupClock(stages, fake.now + 0.001, now=fake)
  fake.now += 1.0
  clock.check("solver")
  with pytest.raises(protocol.CannotResolve):
    move_budget.SetupClock(stages, fake.now + 0.001, 0.01, now=fake).check("solver")


def test_setup_stages_sum_to_the_setup_estimate():
  roots, walked, found = np.array([10, 95_536, 542_592]), np.array([0, 5e5, 0]), \
      np.array([0, 542_592, 0])
  for sampling in (False, True):
    stages = move_budget.setup_stages(roots, walked, found, sampling)
    np.testing.assert_allclose(sum(stages.values()), move_budget.setup_seconds(
        roots, walked, found, sampling))
    assert all((np.asarray(stage) >= 0).all() for stage in stages.values())
  for sampling in (False, True):
    stages = move_budget.setup_stages(roots, walked, found, sampling)
    np.testing.assert_allclose(stages["plan"],
                               move_budget.PLAN_SECONDS_PER_ROOT * roots)
    np.testing.assert_allclose(stages["trace"],
                               move_budget.trace_seconds(walked, found))
    # The order of _build: the sampler traces before it builds its structures.
    assert list(stages) == (["inputs", "plan", "trace", "solver"] if sampling else
                            ["inputs", "plan", "solver", "trace"])
  np.testing.assert_allclose(
      move_budget.defer_seconds(roots, walked, found, sampling=True, pace=2.0),
      2.0 * move_budget.SAMPLING_DEFER_SLOWDOWN *
      move_budget.defer_seconds(roots, walked, found, pace=0.5))  # (pace >= 1)


def test_a_setup_slower_than_estimated_is_given_up_before_its_view(monkeypatch):
  """A setup whose inputs take far over their estimate is given up at once (no view
  built), with the reason; on schedule, the same deadline builds it."""
  current = _first_subgame(0)
  infoset = int(current.trace.own_infosets[0])
  # A view estimated at 20 ms, whatever the subgame's size.
  monkeypatch.setattr(move_budget, "SETUP_SECONDS_PER_ROOT", 0.0)
  monkeypatch.setattr(move_budget, "SETUP_SECONDS", 0.004)
  monkeypatch.setattr(move_budget, "INPUTS_SECONDS_PER_ROOT", 0.0)
  views = []
  original_view = compiled_resolver.subgame_view

  def counted_view(*args, **kwargs):
    views.append(1)
    return original_view(*args, **kwargs)

  monkeypatch.setattr(compiled_resolver, "subgame_view", counted_view)
  original_stages = move_budget.setup_stages

  def stages(*args, **kwargs):
    estimates = original_stages(*args, **kwargs)
    return dict(estimates, solver=estimates["solver"] + 0.02)

  monkeypatch.setattr(move_budget, "setup_stages", stages)
  built, _ = current.next_subgame(infoset, "resolve",
                                  deadline=time.perf_counter() + 0.5)
  assert views == [1] and built is not None
  original_inputs = compiled_resolver.next_root_estimates.NextRootEstimates.inputs

  def slow_inputs(self, *args, **kwargs):
    time.sleep(0.3)
    return original_inputs(self, *args, **kwargs)

  monkeypatch.setattr(compiled_resolver.next_root_estimates.NextRootEstimates,
                      "inputs", slow_inputs)
  with pytest.raises(protocol.CannotResolve, match="its setup took .* ms to its inputs"):
    current.next_subgame(infoset, "resolve", deadline=time.perf_counter() + 0.5)
  assert views == [1]


def _count_instances(monkeypatch, module, name):
  """A list that gets a 1 per instance of class `module.name` made from now on."""
  made = []
  original = getattr(module, name)

  class Counted(original):

    def __init__(self, *args, **kwargs):
      made.append(1)
      super().__init__(*args, **kwargs)

  monkeypatch.setattr(module, name, Counted)
  return made


def test_a_slow_sampling_setup_is_given_up_before_its_sampler(monkeypatch):
  """A sampling solver's setup whose view's plan, or its trace, runs far over its
  estimate is given up before the sampler's structures are made (a CFR+ one after
  its plan, likewise); the deadline of a setup's share of
  the move does not give it up while it still fits `late_deadline`."""
  game = pyspiel.load_game(GAMES[3])
  tree = compiled_tree.cached_tree(game)
  keys = subgame_trace.StateKeys.build(tree)
  config = settings.ResolverConfig(solver="vr_mccfr")
  whole = compiled_resolver.CompiledResolver.whole_game(tree, keys, 0, config=config,
                                                         seed=0)
  whole.iterate(200)
  infoset = int(whole.trace.own_infosets[0])
  monkeypatch.setattr(compiled_resolver, "COPY_NODES_LIMIT", 0)  # in place
  monkeypatch.setattr(move_budget, "SETUP_SECONDS", 0.004)
  monkeypatch.setattr(move_budget, "INPUTS_SECONDS_PER_ROOT", 0.0)
  monkeypatch.setattr(move_budget, "PLAN_SECONDS_PER_ROOT", 0.0)
  original_stages = move_budget.setup_stages

  def stages(*args, **kwargs):  # the solver's stage estimated at 5 ms
    return dict(original_stages(*args, **kwargs), solver=0.005)

  monkeypatch.setattr(move_budget, "setup_stages", stages)
  samplers = _count_instances(monkeypatch, compiled_resolver.view_sampling,
                              "InPlaceSampler")
  original_plan = compiled_resolver.in_place_view.SubgameView._build
  delay = []

  def slow_plan(self, first):
    time.sleep(sum(delay))
    return original_plan(self, first)

  monkeypatch.setattr(compiled_resolver.in_place_view.SubgameView, "_build",
                      slow_plan)
  whole.next_subgame(infoset, "resolve", seed=1)  # (kernels loaded, untimed)
  del samplers[:]
  now = time.perf_counter()
  built, info = whole.next_subgame(infoset, "resolve", deadline=now + 0.5, seed=1)
  assert samplers == [1] and "view" not in info  # in place
  delay.append(0.3)  # the rest at about 76 times the pace: 0.38 s
  with pytest.raises(protocol.CannotResolve, match="ms to its plan"):
    whole.next_subgame(infoset, "resolve", deadline=time.perf_counter() + 0.5, seed=1)
  assert samplers == [1]
  delay[0] = 0.03  # about 9 times: 34 + 45 ms, past 60 ms, within 500
  with pytest.raises(protocol.CannotResolve, match="ms to its plan"):
    whole.next_subgame(infoset, "resolve", deadline=time.perf_counter() + 0.06, seed=1)
  now = time.perf_counter()
  built, _ = whole.next_subgame(infoset, "resolve", deadline=now + 0.06, seed=1,
                                late_deadline=now + 0.5)
  assert samplers == [1, 1] and built is not None
  # The sampler's trace, slow: given up before its structures.
  delay[0] = 0.0
  original_trace = subgame_trace.trace_subgames

  def slow_trace(*args, **kwargs):
    time.sleep(0.3)
    return original_trace(*args, **kwargs)

  monkeypatch.setattr(subgame_trace, "trace_subgames", slow_trace)
  with pytest.raises(protocol.CannotResolve, match="ms to its trace"):
    whole.next_subgame(infoset, "resolve", deadline=time.perf_counter() + 0.2, seed=1)
  assert samplers == [1, 1]
  monkeypatch.setattr(subgame_trace, "trace_subgames", original_trace)
  # CFR+ likewise: its structures (SubgameCFRPlus) follow the plan.
  whole = compiled_resolver.CompiledResolver.whole_game(tree, keys, 0)
  whole.iterate(5)
  made = _count_instances(monkeypatch, compiled_resolver.in_place_view,
                          "SubgameCFRPlus")
  delay[0] = 0.3
  with pytest.raises(protocol.CannotResolve, match="ms to its plan"):
    whole.next_subgame(int(whole.trace.own_infosets[0]), "resolve",
                       deadline=time.perf_counter() + 0.5)
  assert not made
  delay[0] = 0.0
  whole.next_subgame(int(whole.trace.own_infosets[0]), "resolve",
                     deadline=time.perf_counter() + 0.5)
  assert made == [1]
