"""Gadget views on the compiled tree equal the pyspiel gadgets solved by our CFR+
([S] §1.4.2; [H] §G-I)."""

import copy

import numpy as np
import pytest

import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.resolving import protocol
from ggp_cr.algorithms.resolving import settings
from ggp_cr.algorithms.resolving.compiled import copied_view
from ggp_cr.algorithms.resolving.compiled import next_root_estimates
from ggp_cr.algorithms.resolving.exact import trunk_inputs
from ggp_cr.algorithms.resolving.gadget import gadget_game
from ggp_cr.algorithms.resolving.live import live_resolver
from ggp_cr.algorithms.resolving.live import live_problem
from ggp_cr.algorithms.resolving.subgames import subgame_trace
from ggp_cr.algorithms.sampling import compiled_outcome_sampling
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import flat_tree

GAMES = ["kuhn_poker", "python_leduc(max_raises=1,cards_per_suit=3)",
         "python_ii_goofspiel(num_cards=4)", "python_princess_monster(max_turns=4)"]
ITERATIONS = 25


def _subgames(game_string, per_player=2):
  """(tree, keys, player, root nodes, trunk) for a few next subgames of a CFR+ trunk."""
  tree = compiled_tree.cached_tree(pyspiel.load_game(game_string))
  keys = subgame_trace.StateKeys.build(tree)
  trunk_solver = cfr.CFRPlusSolver(tree)
  for _ in range(10):
    trunk_solver.evaluate_and_update_policy()
  trunk = trunk_solver.average_strategy_slots()
  for player in (0, 1):
    trace = subgame_trace.trace_subgames(tree, keys, player, [0])
    seen = set()
    for infoset in trace.own_infosets.tolist():
      group = tuple(trace.group_roots(infoset).tolist())
      if group in seen:
        continue
      seen.add(group)
      yield tree, keys, player, trace.next_roots[list(group)], trunk
      if len(seen) == per_player:
        break


def _inputs(tree, keys, player, roots, trunk, rng):
  """w, o's reach and noisy CBR values per root key, both as keys and strings."""
  reach = tree.node_reaches(trunk)
  w = reach[player, roots] * reach[2, roots]
  _, response = exact_br.best_response_slots(tree, trunk, 1 - player)
  values = tree.node_values(response)[roots]
  if player == 0:
    values = tree.utility_sum - values
  root_keys = keys.keys[1 - player, roots]
  cbv = {}
  for key, value in zip(root_keys.tolist(), (w * values).tolist()):
    cbv[key] = cbv.get(key, 0.0) + value
  cbv = {k: v * rng.normal(1.0, 0.2) for k, v in cbv.items()}
  return w, reach[1 - player, roots], cbv


def _gadget_arguments(game_string, variant, rng):
  """The view arguments (tree, keys, player, roots, w, cbv, variant, o's reach) of
  a few next subgames of `game_string` with `_inputs`' noisy inputs (unsafe: those
  with a positive joint reach)."""
  for tree, keys, player, roots, trunk in _subgames(game_string):
    w, opponent_reach, cbv = _inputs(tree, keys, player, roots, trunk, rng)
    if variant == "unsafe" and not np.any(w * opponent_reach > 0):
      continue
    yield tree, keys, player, roots, w, cbv, variant, opponent_reach


@pytest.mark.parametrize("variant", gadget_game.VARIANTS)
@pytest.mark.parametrize("game_string", GAMES)
def test_view_equals_the_pyspiel_gadget(game_string, variant):
  rng = np.random.default_rng(0)
  compared = 0
  for tree, keys, player, roots, trunk in _subgames(game_string):
    w, opponent_reach, cbv = _inputs(tree, keys, player, roots, trunk, rng)
    if variant == "unsafe" and not np.any(w * opponent_reach > 0):
      continue
    states = trunk_inputs.node_states(tree, roots)
    subgame = gadget_game.Subgame(tree.game, player, [states[n] for n in roots.tolist()], w,
                              {keys.key_string(k): v for k, v in cbv.items()},
                              opponent_reach=opponent_reach)
    gadget = gadget_game.make_gadget(subgame, variant)
    reference = cfr.CFRPlusSolver(gadget.tree())
    view = copied_view.GadgetView(tree, keys, player, roots, w, cbv, variant,
                                   opponent_reach)
    # The same layout: node for node, infoset for infoset.
    assert view.tree.num_nodes == gadget.tree().num_nodes
    assert list(view.tree.infoset_keys) == gadget.tree().infoset_keys
    for name in ("node_player", "node_parent", "node_utility", "node_chance_prob",
                 "infoset_actions", "infoset_parent_slot"):
      assert np.array_equal(getattr(view.tree, name),
                            getattr(gadget.tree(), name)), name
    for _ in range(ITERATIONS):
      reference.evaluate_and_update_policy()
    view.run(ITERATIONS)
    average = reference.average_strategy_slots()
    np.testing.assert_allclose(view.average_slots(), average, rtol=0, atol=1e-9)
    gadget_value = gadget.tree().node_values(average)[0]
    if player == 0:
      gadget_value = -gadget_value
    assert view.gadget_value() == pytest.approx(gadget_value, abs=1e-9)
    combined = trunk_inputs.combine(tree, trunk, gadget, average)
    np.testing.assert_allclose(view.combine(trunk), combined, rtol=0, atol=1e-9)
    before = {keys.key_string(k): v for k, v in cbv.items()}
    if variant == "unsafe":  # the gadget's roots only
      inside = w * opponent_reach > 0
      inside_states = [states[n] for n in roots[inside].tolist()]
      subgame = gadget_game.Subgame(
          tree.game, player, inside_states, w[inside],
          {s.information_state_string(1 - player): 0.0 for s in inside_states},
          opponent_reach=opponent_reach[inside])
    margin = trunk_inputs.subgame_margin(tree, subgame, combined, before=before)
    assert view.subgame_margin() == pytest.approx(margin, abs=1e-9)
    compared += 1
  assert compared > 0


def test_bad_inputs_are_refused():
  tree = compiled_tree.cached_tree(pyspiel.load_game("kuhn_poker"))
  keys = subgame_trace.StateKeys.build(tree)
  trace = subgame_trace.trace_subgames(tree, keys, 0, [0])
  roots = trace.next_roots[:2]
  with pytest.raises(ValueError, match="variant must be one of"):
    copied_view.GadgetView(tree, keys, 0, roots, [1, 1], {}, "safe")
  with pytest.raises(ValueError, match="lacks values"):
    copied_view.GadgetView(tree, keys, 0, roots, [1, 1], {}, "resolve")
  with pytest.raises(ValueError, match="w sums to 0"):
    copied_view.GadgetView(tree, keys, 0, roots, [0, 0], {}, "resolve")
  with pytest.raises(ValueError, match="one entry per root"):
    copied_view.GadgetView(tree, keys, 0, roots, [1], {}, "resolve")


def _live_inputs(tree, gadget):
  """{root node: (w, o's reach)} and {o's key string: CBV} of a live next gadget."""
  subgame = gadget.subgame
  nodes = [trunk_inputs.history_node(tree, h) for h in subgame.root_histories]
  reach = dict(zip(nodes, zip(subgame.reach.tolist(),
                              subgame.opponent_reach.tolist())))
  return reach, subgame.opponent_values


def _view_inputs(keys, trace, estimates, infoset):
  group = trace.group_roots(infoset)
  w, opponent_reach, cbv = estimates.inputs(group)
  nodes = trace.next_roots[group].tolist()
  return (dict(zip(nodes, zip(w.tolist(), opponent_reach.tolist()))),
          {keys.key_string(k): v for k, v in cbv.items()}, cbv)


def _assert_inputs_equal(ours, live):
  assert ours[0].keys() == live[0].keys()
  for node, pair in live[0].items():
    np.testing.assert_allclose(ours[0][node], pair, rtol=0, atol=1e-9)
  assert ours[1].keys() == live[1].keys()
  for key, value in live[1].items():
    assert ours[1][key] == pytest.approx(value, abs=1e-9)


def _solve_both(live, view, iterations):
  """`iterations` CFR+ iterations of a live resolver and of a view with estimates."""
  trace = view.trace()
  estimates = next_root_estimates.NextRootEstimates(view, trace)
  for _ in range(iterations):
    live.solver.iteration()
  next_root_estimates.solve_with_estimates(view, estimates, iterations)
  return trace, estimates


@pytest.mark.parametrize("variant", gadget_game.VARIANTS)
@pytest.mark.parametrize("game_string", GAMES)
def test_next_root_estimates_equal_the_live_full_width_path(game_string, variant):
  """Two levels of continual resolving with CFR+: the next gadgets' inputs (w, o's
  reach, CBV per o key) from the view's scatter-adds equal the live resolver's."""
  game = pyspiel.load_game(game_string)
  tree = compiled_tree.cached_tree(game)
  keys = subgame_trace.StateKeys.build(tree)
  config = settings.ResolverConfig(solver="cfr+", variant=variant)
  compared = 0
  for player in (0, 1):
    live = live_resolver.Resolver(live_problem.Problem(game, player), config, seed=0)
    view = copied_view.GadgetView(tree, keys, player, [0], [1.0], variant=None)
    trace, estimates = _solve_both(live, view, 7)
    for own_key in live.trace.subgame_map.own_keys()[:2]:
      infoset = tree.infoset_index(player, own_key)
      try:
        gadget, _, info = live.next_subgame(own_key, variant)
      except protocol.CannotResolve:
        continue
      ours = _view_inputs(keys, trace, estimates, infoset)
      _assert_inputs_equal(ours, _live_inputs(tree, gadget))
      compared += 1
      # One level down.
      deeper = live_resolver.Resolver(live_problem.Problem(game, player, gadget), config, seed=0)
      roots = sorted(ours[0])
      sub_view = copied_view.GadgetView(
          tree, keys, player, roots, [ours[0][n][0] for n in roots], ours[2],
          info["variant"], [ours[0][n][1] for n in roots])
      sub_trace, sub_estimates = _solve_both(deeper, sub_view, 5)
      for next_key in deeper.trace.subgame_map.own_keys()[:2]:
        try:
          next_gadget, _, _ = deeper.next_subgame(next_key, "resolve")
        except protocol.CannotResolve:
          continue
        _assert_inputs_equal(
            _view_inputs(keys, sub_trace, sub_estimates,
                         tree.infoset_index(player, next_key)),
            _live_inputs(tree, next_gadget))
        compared += 1
  assert compared > 0



@pytest.mark.parametrize("game_string", GAMES)
def test_exact_inputs_equal_the_live_cbr_path(game_string):
  """use_cbr: w, o's reach and o's counterfactual best-response values at the next
  roots from the combined profile ([S] §6), two levels deep, equal the live ones."""
  game = pyspiel.load_game(game_string)
  tree = compiled_tree.cached_tree(game)
  keys = subgame_trace.StateKeys.build(tree)
  config = settings.ResolverConfig(solver="cfr+", use_cbr=True)

  def ours(trace, profile, infoset):
    group = trace.group_roots(infoset)
    nodes = trace.next_roots[group]
    w, opponent_reach, cbv = next_root_estimates.exact_next_root_inputs(
        tree, profile, player, nodes, trace.next_root_key[group])
    return (dict(zip(nodes.tolist(), zip(w.tolist(), opponent_reach.tolist()))),
            {keys.key_string(k): v for k, v in cbv.items()}, cbv)

  compared = 0
  for player in (0, 1):
    live = live_resolver.Resolver(live_problem.Problem(game, player), config, seed=0)
    view = copied_view.GadgetView(tree, keys, player, [0], [1.0], variant=None)
    trace = view.trace()
    for _ in range(6):
      live.solver.iteration()
    view.run(6)
    trunk = view.average_slots()
    for own_key in live.trace.subgame_map.own_keys()[:2]:
      infoset = tree.infoset_index(player, own_key)
      gadget, _, _ = live.next_subgame(own_key, "resolve")
      first = ours(trace, trunk, infoset)
      _assert_inputs_equal(first, _live_inputs(tree, gadget))
      compared += 1
      deeper = live_resolver.Resolver(live_problem.Problem(game, player, gadget), config, seed=0,
                            trunk=trunk)
      roots = sorted(first[0])
      sub_view = copied_view.GadgetView(tree, keys, player, roots,
                                         [first[0][n][0] for n in roots], first[2])
      for _ in range(4):
        deeper.solver.iteration()
      sub_view.run(4)
      sub_trace = sub_view.trace()
      for next_key in deeper.trace.subgame_map.own_keys()[:2]:
        try:
          next_gadget, _, _ = deeper.next_subgame(next_key, "resolve")
        except protocol.CannotResolve:
          continue
        _assert_inputs_equal(ours(sub_trace, sub_view.combine(trunk),
                                  tree.infoset_index(player, next_key)),
                             _live_inputs(tree, next_gadget))
        compared += 1
  assert compared > 0


def test_estimates_from_strategies_equal_those_read_from_the_solver_pass():
  tree = compiled_tree.cached_tree(pyspiel.load_game(GAMES[1]))
  keys = subgame_trace.StateKeys.build(tree)
  views = [copied_view.GadgetView(tree, keys, 1, [0], [1.0], variant=None)
           for _ in range(2)]
  observed, added = (next_root_estimates.NextRootEstimates(v, v.trace()) for v in views)
  next_root_estimates.solve_with_estimates(views[0], observed, 5)
  for _ in range(5):
    strategy = views[1].solver.current_strategy_slots()
    views[1].solver.evaluate_and_update_policy()
    added.add(strategy)
  for name in ("reach_sum", "opponent_reach_sum", "value_sum", "weight_sum"):
    np.testing.assert_allclose(getattr(observed, name), getattr(added, name), rtol=0,
                               atol=1e-12)
  assert observed.value_sum.any()


@pytest.mark.parametrize("variant", gadget_game.VARIANTS)
def test_compiled_vr_mccfr_runs_on_a_view_as_on_the_pyspiel_gadget(variant):
  """The view is the gadget's compiled tree node for node, so compiled VR-MCCFR with
  the thesis's candidate settings ([S] §3.3.3) samples and learns the same."""
  rng = np.random.default_rng(3)
  tree, keys, player, roots, trunk = next(_subgames(GAMES[1]))
  w, opponent_reach, cbv = _inputs(tree, keys, player, roots, trunk, rng)
  states = trunk_inputs.node_states(tree, roots)
  subgame = gadget_game.Subgame(tree.game, player, [states[n] for n in roots.tolist()], w,
                            {keys.key_string(k): v for k, v in cbv.items()},
                            opponent_reach=opponent_reach)
  view = copied_view.GadgetView(tree, keys, player, roots, w, cbv, variant,
                                 opponent_reach)
  solvers = [compiled_outcome_sampling.CompiledOutcomeSamplingSolver(
      t, regret_matcher="drm(1,1)", exploration=0.7, cumulative_strategy_exponent=0.3,
      baseline="expavg(0.3)", seed=5)
             for t in (view.tree, gadget_game.make_gadget(subgame, variant).tree())]
  for solver in solvers:
    solver.run(300)
  np.testing.assert_array_equal(solvers[0].average_strategy_slots(),
                                solvers[1].average_strategy_slots())
  assert solvers[0].nodes_touched == solvers[1].nodes_touched > 0


@pytest.mark.parametrize("game_string", GAMES)
def test_the_whole_game_locates_next_roots_without_a_climb(game_string):
  """The whole game's view (variant None) answers locate with the tree's own nodes,
  as the climb from each next root to its root copy gives them."""
  tree = compiled_tree.cached_tree(pyspiel.load_game(game_string))
  keys = subgame_trace.StateKeys.build(tree)
  located = 0
  for player in (0, 1):
    view = copied_view.GadgetView(tree, keys, player, [0], [1.0], variant=None)
    trace = view.trace()
    j, local, copies = view.locate(trace)
    located += len(local)
    climbed = flat_tree.nodes_in_copies(
        tree.node_parent, tree.node_action_index, trace.next_roots,
        view.root_nodes[view.active_roots][trace.next_root_of], copies,
        view.tree.node_first_child)
    assert len(local) == trace.num_next_roots
    np.testing.assert_array_equal(local, climbed)
    np.testing.assert_array_equal(j, np.zeros(len(local)))
  assert located  # a player has next turns


@pytest.mark.parametrize("variant", gadget_game.VARIANTS)
@pytest.mark.parametrize("game_string", GAMES)
def test_local_infosets_equal_a_whole_tree_map(game_string, variant):
  """local_infoset_of (a sorted lookup of the view's own infosets) gives, at every
  whole-tree infoset, what the map of the whole tree's size that a view held gave:
  the local id of each infoset in infoset_source, -1 elsewhere."""
  rng = np.random.default_rng(0)
  for arguments in _gadget_arguments(game_string, variant, rng):
    tree = arguments[0]
    view = copied_view.GadgetView(*arguments)
    source = view.infoset_source
    dense = np.full(tree.num_infosets, -1, dtype=np.int64)
    dense[source[source >= 0]] = np.flatnonzero(source >= 0)
    assert [view.local_infoset_of(i) for i in range(tree.num_infosets)] == \
        dense.tolist()
    assert len(source) == view.tree.num_infosets  # the view's size, not the tree's


@pytest.mark.parametrize("game_string", GAMES)
def test_copies_of_the_whole_game_view_share_its_maps(game_string):
  """The whole game's view holds no identity map of its own: its slot_source,
  infoset_source, source and local_root are read-only identities (zeros) of the
  tree, one per tree, which its deep copies (a bot's clone) share; a copy of its
  solver continues bit for bit as the original."""
  tree = compiled_tree.cached_tree(pyspiel.load_game(game_string))
  keys = subgame_trace.StateKeys.build(tree)
  view = copied_view.GadgetView(tree, keys, 0, [0], [1.0], variant=None)
  view.run(3)
  other = copy.deepcopy(view, {id(tree): tree, id(keys): keys})
  expected = {"slot_source": np.arange(tree.num_infoset_actions),
              "infoset_source": np.arange(tree.num_infosets),
              "source": np.arange(tree.num_nodes),
              "local_root": np.zeros(tree.num_nodes)}
  for name, identity in expected.items():
    array = getattr(view, name)
    np.testing.assert_array_equal(array, identity)
    assert not array.flags.writeable
    assert getattr(other, name) is array
  assert [view.local_infoset_of(i) for i in range(tree.num_infosets)] == list(
      range(tree.num_infosets))
  view.run(5)
  other.run(5)
  np.testing.assert_array_equal(other.average_slots(), view.average_slots())
