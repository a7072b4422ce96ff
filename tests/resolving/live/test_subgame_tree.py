"""The depth-limited subgame (subgame_tree.depth_limited_tree): not cut, it is the
solved game's own compiled tree bit for bit, so every solver gives the same solution
and the same next-subgame inputs as the existing live path; cut at the next turns, it
keeps exactly the histories above them and values them by random playouts; a build
past its deadline falls back to live VR-MCCFR, recorded (issue 44). In the games
with a native state encoding the playouts run natively: the same tree, and playout
means of the uniform strategy's value."""

import time

import numpy as np
import pyspiel
import pytest

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.resolving import recall
from ggp_cr.algorithms.resolving import settings
from ggp_cr.algorithms.resolving.live import live_resolver
from ggp_cr.algorithms.resolving.live import live_problem
from ggp_cr.algorithms.resolving.live import subgame_tree
from ggp_cr.algorithms.tree import native_playouts

GAMES = ["python_ii_goofspiel(num_cards=4)", "python_leduc(max_raises=1,cards_per_suit=3)"]
_ARRAYS = ("node_parent", "node_action_index", "node_player", "node_num_children",
           "node_chance_prob", "node_utility", "node_infoset", "node_first_child",
           "infoset_player", "infoset_num_actions", "infoset_actions",
           "infoset_parent_slot")


def _problems(game, player):
  """The whole game and two of its next subgames' resolve gadgets."""
  config = settings.ResolverConfig(solver="cfr+")
  whole = live_resolver.Resolver(live_problem.Problem(game, player), config, seed=0)
  whole.run(limits.Limit(iterations=20), 0.0)
  yield live_problem.Problem(game, player)
  for key in sorted(whole.trace.subgame_map.own_keys())[:2]:
    gadget, _, _ = whole.next_subgame(key, "resolve")
    yield live_problem.Problem(game, player, gadget)


@pytest.mark.parametrize("game_string", GAMES)
def test_not_cut_it_is_the_games_own_tree(game_string):
  game = pyspiel.load_game(game_string)
  for player in (0, 1):
    for problem in _problems(game, player):
      mine = subgame_tree.depth_limited_tree(problem, turns=None)
      theirs = problem.tree()
      assert mine.infoset_keys == theirs.infoset_keys
      for name in _ARRAYS:
        np.testing.assert_array_equal(getattr(mine, name), getattr(theirs, name),
                                      err_msg=name)


@pytest.mark.parametrize("game_string", GAMES)
def test_not_cut_the_resolver_gives_the_live_paths_solution_and_inputs(game_string):
  """CFR+ on it and the next subgames' inputs equal the live path's (the gadget's
  compiled tree) to 1e-12."""
  game = pyspiel.load_game(game_string)
  config = settings.ResolverConfig(solver="cfr+")
  for player in (0, 1):
    for problem in list(_problems(game, player))[1:]:
      theirs = live_resolver.Resolver(problem, config, seed=0)
      mine = live_resolver.Resolver(
          live_problem.Problem(game, player, problem.gadget), config, seed=0,
          deadline=time.perf_counter() + 600.0, turns=None)
      assert mine.tree_fallback is None and mine.trace.complete
      for resolver in (theirs, mine):
        resolver.run(limits.Limit(iterations=30), 0.0)
      np.testing.assert_allclose(mine.solver.average_slots(),
                                 theirs.solver.average_slots(), atol=1e-12)
      keys = sorted(theirs.trace.subgame_map.own_keys())
      assert keys == sorted(mine.trace.subgame_map.own_keys())
      for key in keys[:3]:
        try:
          expected = theirs.next_subgame(key, "resolve")[0]
        except Exception as error:  # pylint: disable=broad-except
          with pytest.raises(type(error)):
            mine.next_subgame(key, "resolve")
          continue
        got = mine.next_subgame(key, "resolve")[0]
        assert got.subgame.root_histories == expected.subgame.root_histories
        np.testing.assert_allclose(got.subgame.reach, expected.subgame.reach,
                                   atol=1e-12)
        np.testing.assert_allclose(got.terminate_utility, expected.terminate_utility,
                                   atol=1e-12)


def _kept_and_cut(problem):
  """The nodes of the solved game's own tree with no next turn strictly above them
  (breadth-first order) and, among those, the non-terminal ones at a next turn."""
  full = problem.tree()
  tracks = recall.tracks(full.node_player, full.node_parent, problem.player,
                         problem.initial_track())
  kept = np.ones(full.num_nodes, dtype=bool)
  kept[1:] = tracks[full.node_parent[1:]] != recall.END
  order = np.flatnonzero(kept)
  return order, (tracks[order] == recall.END) & (full.node_player[order] >= -1)


def test_cut_at_the_next_turns_it_keeps_the_histories_above_them():
  """Turns=1: exactly the histories with no next turn strictly above them, in the
  same order; the leaves at the next turns hold the mean of the random playouts
  (on pyspiel states, the reference),
  near the uniform strategy's value there (400 playouts, seeded: 3 standard
  deviations are about 0.15 of the payoffs' range)."""
  game = pyspiel.load_game(GAMES[0])
  for player in (0, 1):
    for problem in _problems(game, player):
      full = problem.tree()
      order, leaves = _kept_and_cut(problem)
      cut = subgame_tree.depth_limited_tree(problem, turns=1, playouts=400, seed=3,
                                            native=False)
      assert cut.num_nodes == len(order) < full.num_nodes
      np.testing.assert_array_equal(cut.node_depth, full.node_depth[order])
      np.testing.assert_array_equal(cut.node_action_index,
                                    full.node_action_index[order])
      assert leaves.any()
      assert (cut.node_num_children[leaves] == 0).all()
      uniform = full.node_values(full.uniform_slots())[order[leaves]]
      scale = np.abs(full.node_utility).max()  # (a gadget's payoffs are scaled)
      np.testing.assert_allclose(cut.node_utility[leaves], uniform, atol=0.2 * scale)
      assert not np.allclose(cut.node_utility[leaves], uniform, atol=1e-9)
      others = ~leaves & (cut.node_num_children == 0)
      np.testing.assert_array_equal(cut.node_utility[others],
                                    full.node_utility[order[others]])


def test_cut_at_the_second_turns_it_is_deeper():
  game = pyspiel.load_game(GAMES[0])
  problem = live_problem.Problem(game, 0)
  sizes = [subgame_tree.depth_limited_tree(problem, turns).num_nodes
           for turns in (1, 2, None)]
  assert sizes[0] < sizes[1] < sizes[2]


def test_a_cut_resolver_resolves_and_a_late_one_falls_back_to_vr_mccfr():
  game = pyspiel.load_game(GAMES[0])
  config = settings.ResolverConfig(solver="cfr+")
  problem = list(_problems(game, 0))[1]
  cut = live_resolver.Resolver(live_problem.Problem(game, 0, problem.gadget), config,
                               seed=0, deadline=time.perf_counter() + 600.0, turns=1)
  assert cut.tree_fallback is None and not cut.config.sampling
  assert cut.problem.compiled.num_nodes < problem.tree().num_nodes
  cut.run(limits.Limit(iterations=20), 0.0)
  key = sorted(cut.trace.subgame_map.own_keys())[0]
  gadget, _, info = cut.next_subgame(key, "resolve")
  assert info["roots"] == len(gadget.subgame.root_states) > 0
  late = live_resolver.Resolver(live_problem.Problem(game, 0, problem.gadget), config,
                                seed=0, deadline=time.perf_counter() - 1.0, turns=1)
  assert late.config.solver == "vr_mccfr" and "VR-MCCFR" in late.tree_fallback
  with pytest.raises(ValueError, match="turns"):
    subgame_tree.depth_limited_tree(problem, turns=0)


def test_a_timed_live_full_width_bot_never_compiles_the_whole_game(monkeypatch):
  """With seconds, the live path's cfr+ lays out its own trees: the whole game's
  compiled tree (what did not fit) is never asked for. The process starts with no
  tree in memory: a tree earlier tests left there may serve the live path's
  unsampled values (live_resolver._unsampled_values), which is not a compile."""
  from ggp_cr.algorithms.resolving import continual_resolving  # pylint: disable=import-outside-toplevel
  from ggp_cr.algorithms.tree import compiled_tree  # pylint: disable=import-outside-toplevel
  game = pyspiel.load_game(GAMES[0])
  monkeypatch.setattr(compiled_tree, "PROCESS_TREES", compiled_tree._ProcessTrees())  # pylint: disable=protected-access
  cached = compiled_tree.cached_tree

  def refuse(asked, *args, **kwargs):
    assert str(asked) != str(game), "the whole game's tree was asked for"
    return cached(asked, *args, **kwargs)

  monkeypatch.setattr(compiled_tree, "cached_tree", refuse)
  bot = continual_resolving.ContinualResolvingBot(
      game, 0, preplay="0.5s", move="0.2s", solver="cfr+", path="live", seed=0)
  state = game.new_initial_state()
  rng = np.random.default_rng(0)
  while not state.is_terminal():
    if state.current_player() == 0:
      state.apply_action(bot.step(state))
    else:
      state.apply_action(int(rng.choice(state.legal_actions())))
  assert len(bot.decisions) == 4


# Small instances of the games with native playouts (native_playouts.supports).
NATIVE_GAMES = GAMES + ["python_princess_monster(max_turns=3,rows=3,cols=3)"]


def _fake_mean(history):
  """A deterministic stand-in for player 0's mean playout return below `history`."""
  return ((7 * sum(history) + 3 * len(history)) % 11 - 5) / 4.0


@pytest.mark.parametrize("game_string", NATIVE_GAMES)
def test_native_route_lays_out_the_generic_routes_tree(game_string, monkeypatch):
  """With a deterministic playout mean, the tree whose leaves are valued natively
  (after the walk, mapped by the gadget's payoff) equals the generic route's array
  for array, bit for bit."""
  game = pyspiel.load_game(game_string)
  assert native_playouts.supports(game)
  monkeypatch.setattr(subgame_tree, "playout_returns", lambda state, playouts, rng: (
      np.array([_fake_mean(state.history()), -_fake_mean(state.history())])))
  monkeypatch.setattr(native_playouts, "mean_returns", lambda game, histories,
                      playouts, seed: np.array([_fake_mean(h) for h in histories]))
  cut = 0
  for player in (0, 1):
    for problem in _problems(game, player):
      generic = subgame_tree.depth_limited_tree(problem, turns=1, native=False)
      native = subgame_tree.depth_limited_tree(problem, turns=1, native=True)
      cut += generic.num_nodes < problem.tree().num_nodes
      assert native.infoset_keys == generic.infoset_keys
      for name in _ARRAYS + ("node_depth", "level_offsets", "infoset_node",
                             "infoset_action_offset", "slot_infoset"):
        np.testing.assert_array_equal(getattr(native, name), getattr(generic, name),
                                      err_msg=name)
  assert cut >= 2


def _uniform_moments(state):
  """The first two moments of player 0's return under uniform play (chance by its
  probabilities) below `state`, by recursion."""
  if state.is_terminal():
    value = state.returns()[0]
    return value, value * value
  if state.is_chance_node():
    branches = state.chance_outcomes()
  else:
    legal = state.legal_actions()
    branches = [(action, 1.0 / len(legal)) for action in legal]
  first = second = 0.0
  for action, probability in branches:
    mean, square = _uniform_moments(state.child(action))
    first += probability * mean
    second += probability * square
  return first, second


@pytest.mark.parametrize("game_string", NATIVE_GAMES + [
    "python_ii_goofspiel(num_cards=4,points_order=random)", "python_latent_ttt"])
def test_native_playouts_average_the_uniform_value(game_string):
  """Means of 4,000 native playouts below the root and random histories are within
  4.5 standard errors of the exact expected return under uniform play; the
  histories' means differ by seed."""
  game = pyspiel.load_game(game_string)
  rng = np.random.default_rng(1)
  histories = [[]] if game_string != "python_latent_ttt" else []
  while len(histories) < 6:
    state = game.new_initial_state()
    depth = rng.integers(1, 12 if game_string == "python_latent_ttt" else 6)
    while len(state.history()) < depth and not state.is_terminal():
      state.apply_action(int(rng.choice(
          [a for a, p in state.chance_outcomes() if p > 0] if state.is_chance_node()
          else state.legal_actions())))
    if not state.is_terminal() and len(state.history()) >= (
        7 if game_string == "python_latent_ttt" else 0):
      histories.append(state.history())
  playouts = 4000
  means = native_playouts.mean_returns(game, histories, playouts, seed=5)
  for history, mean in zip(histories, means):
    state = game.new_initial_state()
    for action in history:
      state.apply_action(action)
    exact, square = _uniform_moments(state)
    error = np.sqrt(max(square - exact * exact, 0.0) / playouts)
    assert abs(mean - exact) <= 4.5 * error + 1e-12, (history, mean, exact, error)
  again = native_playouts.mean_returns(game, histories, playouts, seed=5)
  np.testing.assert_array_equal(again, means)
  other = native_playouts.mean_returns(game, histories, playouts, seed=6)
  assert not np.array_equal(other, means)


@pytest.mark.parametrize("game_string", NATIVE_GAMES)
def test_native_leaves_are_the_gadgets_uniform_values(game_string):
  """The natively valued leaves (2,000 playouts) are within 5 bounds of a standard
  error of the uniform strategy's value of the same histories in the solved game's
  own tree (the gadget's payoff units): the payoff map and the leaves' order hold."""
  game = pyspiel.load_game(game_string)
  playouts = 2000
  valued = 0
  for player in (0, 1):
    for problem in _problems(game, player):
      full = problem.tree()
      order, leaves = _kept_and_cut(problem)
      cut = subgame_tree.depth_limited_tree(problem, turns=1, playouts=playouts,
                                            seed=3, native=True)
      uniform = full.node_values(full.uniform_slots())[order[leaves]]
      scale = np.abs(full.node_utility).max()
      np.testing.assert_allclose(cut.node_utility[leaves], uniform,
                                 atol=5 * scale / np.sqrt(playouts))
      assert not leaves.any() or not np.allclose(cut.node_utility[leaves], uniform,
                                                 atol=1e-9)
      valued += leaves.sum()
  assert valued > 10


@pytest.mark.parametrize("game_string", NATIVE_GAMES)
def test_a_trace_given_the_cut_histories_states_finds_the_same_next_turns(
    game_string):
  """live_trace.Trace on a depth-limited tree, given the states its walk made at the
  cut histories (leaf_states), takes them and records the same next roots, paths,
  decisions, chance, nodes, keys, found histories and map as when it makes them."""
  from ggp_cr.algorithms.resolving.live import live_trace  # pylint: disable=import-outside-toplevel
  game = pyspiel.load_game(game_string)
  taken = 0
  for player in (0, 1):
    for problem in _problems(game, player):
      made = {}
      problem.compiled = subgame_tree.depth_limited_tree(problem, turns=1,
                                                         leaf_states=made)
      tree = problem.compiled
      assert all(tree.node_player[node] == -4 and tree.node_num_children[node] == 0
                 for node in made)
      given = [problem.original_state(state) for state in made.values()]
      theirs = live_trace.Trace(problem, tree)
      mine = live_trace.Trace(problem, tree, made=made)
      assert mine.complete and theirs.complete
      for name in ("root_of", "actions", "steps", "chance", "nodes", "opponent_keys",
                   "histories"):
        assert getattr(mine, name) == getattr(theirs, name), name
      assert [s.history() for s in mine.states] == [s.history() for s in theirs.states]
      assert sorted(mine.found) == sorted(theirs.found)
      for key, entries in theirs.found.items():
        assert ([(s.history(), *rest) for s, *rest in mine.found[key]] ==
                [(s.history(), *rest) for s, *rest in entries])
        assert mine.subgame_map.roots(key) == theirs.subgame_map.roots(key)
      taken += sum(any(s is g for g in given) for s in mine.states)
  assert taken > 0
