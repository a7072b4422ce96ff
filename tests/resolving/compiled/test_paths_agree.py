"""The compiled path resolves and plays as the live path: random matches, the bot's
play on both paths, and its choice of path ([S] ch. 2; CFR+ to 1e-9)."""
# pylint: disable=protected-access


import time

import numpy as np
import pytest

import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.resolving import continual_resolving
from ggp_cr.algorithms.resolving import protocol
from ggp_cr.algorithms.resolving import settings
from ggp_cr.algorithms.resolving.compiled import compiled_resolver
from ggp_cr.algorithms.resolving.compiled import warm_start
from ggp_cr.algorithms.resolving.gadget import gadget_game
from ggp_cr.algorithms.resolving.live import live_resolver
from ggp_cr.algorithms.resolving.live import live_problem
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
    live = live_resolver.Resolver(live_problem.Problem(game, player), config, seed=match)
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
          live = live_resolver.Resolver(live_problem.Problem(game, player, gadget), config, seed=seed,
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
  """CFR+ with the thesis code's Terminate values (gadget_prefix.terminate_scale): the
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
