"""Compiled VR-MCCFR / MC-CFR on gadget views equals the live sampling solver of
continual resolving ([S] §3.3.3, ch. 2): the same random stream gives the same tables
and the same next gadgets' inputs to 1e-9, two levels deep, for every variant."""

import copy as copy_module

import numpy as np
import pytest

import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.evaluation import matches
from ggp_cr.algorithms.resolving import continual_resolving
from ggp_cr.algorithms.resolving import protocol
from ggp_cr.algorithms.resolving import settings
from ggp_cr.algorithms.resolving.compiled import compiled_resolver
from ggp_cr.algorithms.resolving.compiled import in_place_view
from ggp_cr.algorithms.resolving.compiled import subgame_layout
from ggp_cr.algorithms.resolving.compiled import view_sampling
from ggp_cr.algorithms.resolving.compiled import view_solvers
from ggp_cr.algorithms.resolving.exact import trunk_inputs
from ggp_cr.algorithms.resolving.gadget import gadget_game
from ggp_cr.algorithms.resolving.live import live_resolver
from ggp_cr.algorithms.resolving.live import live_problem
from ggp_cr.algorithms.resolving.subgames import subgame_trace
from ggp_cr.algorithms.tree import compiled_tree

GAMES = ["kuhn_poker", "python_leduc(max_raises=1,cards_per_suit=3)",
         "python_ii_goofspiel(num_cards=4)"]
ITERATIONS = 150


def _assert_same_tables(live, view):
  """The live solver's regrets and cumulative strategy per information state string
  equal the compiled solver's at the view's infosets (absent = never sampled)."""
  solver = view.solver.solver
  tree = view.tree
  compared = 0
  for infoset, key in enumerate(tree.infoset_keys):
    offset = tree.infoset_action_offset[infoset]
    slots = slice(offset, offset + tree.infoset_num_actions[infoset])
    data = live.solver.table.get(key)
    if data is None:
      assert not solver.cumulative[slots].any() and not solver.regrets[slots].any()
      continue
    for name in ("regrets", "cumulative"):
      np.testing.assert_allclose(getattr(solver, name)[slots], getattr(data, name),
                                 rtol=1e-9, atol=1e-9, err_msg=f"{name} at {key}")
    compared += 1
  assert compared > 0
  assert live.solver.nodes_touched == solver.nodes_touched


def _inputs(resolver, own_key, variant):
  """{root node: (w, o's reach)} and {o's key string: CBV} of a next subgame."""
  if isinstance(resolver, live_resolver.Resolver):
    gadget, _, _ = resolver.next_subgame(own_key, variant)
    subgame = gadget.subgame
    tree = compiled_tree.cached_tree(subgame.game)
    nodes = [trunk_inputs.history_node(tree, h) for h in subgame.root_histories]
    return (dict(zip(nodes, zip(subgame.reach.tolist(),
                                subgame.opponent_reach.tolist()))),
            subgame.opponent_values, gadget)
  view = resolver.view
  built, info = resolver.next_subgame(view.whole.infoset_index(view.player, own_key),
                                      variant, seed=11)
  w = built.view.w
  nodes = built.view.root_nodes.tolist()
  cbv = dict(zip(built.view.infoset_keys.tolist(), built.view.cbv.tolist()))
  keys = view.state_keys
  return (dict(zip(nodes, zip(w.tolist(), built.view.opponent_reach.tolist()))),
          {keys.key_string(k): v for k, v in cbv.items()
           if built.view.k[built.view.infoset_keys.tolist().index(k)] > 0},
          built, info)


def _assert_inputs_equal(ours, live):
  assert ours[0].keys() == live[0].keys()
  for node, pair in live[0].items():
    np.testing.assert_allclose(ours[0][node], pair, rtol=1e-9, atol=1e-9)
  assert ours[1].keys() == live[1].keys()
  for key, value in live[1].items():
    assert ours[1][key] == pytest.approx(value, rel=1e-9, abs=1e-9)


def _both(game_string, player, config):
  """(game, live resolver, compiled resolver) of the whole game, same seed."""
  game = pyspiel.load_game(game_string)
  tree = compiled_tree.cached_tree(game)
  keys = subgame_trace.StateKeys.build(tree)
  live = live_resolver.Resolver(live_problem.Problem(game, player), config, seed=5)
  ours = compiled_resolver.CompiledResolver.whole_game(tree, keys, player,
                                                        config=config, seed=5)
  return game, live, ours


@pytest.mark.parametrize("variant", gadget_game.VARIANTS)
@pytest.mark.parametrize("game_string", GAMES)
def test_sampled_views_equal_the_live_sampling_solver(game_string, variant):
  """vr_mccfr (the thesis's candidate) at the whole game and one subgame deep: the
  same tables, the same next gadgets' inputs (w, o's reach, CBV per o key,
  unsampled keys valued from the tree at the whole game)."""
  config = settings.ResolverConfig(solver="vr_mccfr", variant=variant)
  compared = 0
  for player in (0, 1):
    game, live, ours = _both(game_string, player, config)
    live.solver.iterate(ITERATIONS)
    ours.iterate(ITERATIONS)
    _assert_same_tables(live, ours.view)
    for own_key in live.trace.subgame_map.own_keys()[:2]:
      try:
        live_inputs = _inputs(live, own_key, variant)
      except protocol.CannotResolve:
        continue
      our_inputs = _inputs(ours, own_key, variant)
      _assert_inputs_equal(our_inputs, live_inputs)
      # One level down: the live gadget and the view solved with the same seed.
      deeper = live_resolver.Resolver(live_problem.Problem(game, player, live_inputs[2]), config,
                           seed=11)
      view = our_inputs[2]
      assert view.view.variant == our_inputs[3]["variant"]
      deeper.solver.iterate(ITERATIONS // 2)
      view.iterate(ITERATIONS // 2)
      _assert_same_tables(deeper, view.view)
      compared += 1 + _compare_next_inputs(
          deeper, view, deeper.trace.subgame_map.own_keys()[:2])
  assert compared > 0


def _compare_next_inputs(live, ours, own_keys):
  """Asserts equal next resolve-gadget inputs of the live and the compiled resolver
  at the bot's information states `own_keys` that the live one can resolve; returns
  how many were compared."""
  compared = 0
  for own_key in own_keys:
    try:
      next_live = _inputs(live, own_key, "resolve")
    except protocol.CannotResolve:
      continue
    _assert_inputs_equal(_inputs(ours, own_key, "resolve"), next_live)
    compared += 1
  return compared


def _first_subgame(config, our_config):
  """Small Leduc, player 1's first next subgame after ITERATIONS at the whole game:
  the live resolver (`config`) and the compiled one (`our_config` from the subgame
  on), each run for ITERATIONS more iterations there."""
  game, live, ours = _both(GAMES[1], 1, config)
  live.solver.iterate(ITERATIONS)
  ours.iterate(ITERATIONS)
  own_key = live.trace.subgame_map.own_keys()[0]
  live_inputs = _inputs(live, own_key, "resolve")
  ours.config = our_config
  our_inputs = _inputs(ours, own_key, "resolve")
  _assert_inputs_equal(our_inputs, live_inputs)
  deeper = live_resolver.Resolver(live_problem.Problem(game, 1, live_inputs[2]), config, seed=11)
  deeper.solver.iterate(ITERATIONS)
  our_inputs[2].iterate(ITERATIONS)
  return deeper, our_inputs[2]


@pytest.mark.parametrize("cfrd_aware", [True, False])
def test_mc_cfr_and_the_plain_gate_equal_the_live_solver(cfrd_aware):
  """mc_cfr (no baseline), with and without CFR-D-aware sampling at the gate."""
  config = settings.ResolverConfig(solver="mc_cfr", cfrd_aware_sampling=cfrd_aware)
  live, ours = _first_subgame(config, config)
  _assert_same_tables(live, ours.view)


def test_the_comparison_tells_a_gate_that_is_not_cfrd_aware():
  """The equality above is no tautology: a compiled gadget sampled without the
  CFR-D-aware gate differs from the live solver with it."""
  live, ours = _first_subgame(
      settings.ResolverConfig(solver="vr_mccfr"),
      settings.ResolverConfig(solver="vr_mccfr", cfrd_aware_sampling=False))
  with pytest.raises(AssertionError):
    _assert_same_tables(live, ours.view)


@pytest.mark.parametrize("solver,keep,terminate", [
    ("vr_mccfr", False, "cfrd"), ("mc_cfr", False, "cfrd"), ("vr_mccfr", True, "cfrd"),
    ("mc_cfr", True, "cfrd"), ("vr_mccfr", False, "cfrplayground")])
def test_the_bot_plays_the_same_on_both_paths(solver, keep, terminate, subgame_view):
  """ContinualResolvingBot with a sampling solver takes the compiled path (the record
  says so) and, with the same seed and iteration budgets, plays as the live one with
  the same average strategy at every decision, later subgames copied or sampled in
  place; with keep_solver_data each subgame's tables start from the last's
  (warm_start.carry_over); also with the thesis code's Terminate values."""
  game = pyspiel.load_game(GAMES[2])
  tree = compiled_tree.cached_tree(game)
  played = {}
  for path in ("compiled", "live"):
    bots = [continual_resolving.ContinualResolvingBot(
        game, p, preplay="100it", move="50it", solver=solver, path=path, seed=4,
        keep_solver_data=keep, terminate_values=terminate)
            for p in (0, 1)]
    policies = []

    def observe(move, state, bots=bots, path=path, policies=policies):
      if move.player < 0:
        return
      key = state.information_state_string(move.player)
      resolver = bots[move.player].resolver
      policies.append(
          list(resolver.probabilities(tree.infoset_index(move.player, key)))
          if path == "compiled" else
          resolver.probabilities(key, state.legal_actions(move.player)))

    history = matches.play(game, bots, 1, on_move=observe).history
    played[path] = history, policies
    records = bots[0].decisions + bots[1].decisions
    assert {d["path"] for d in records} == {path}
    assert sum(d["new_subgame"] for d in records) > 2
    if path == "compiled":
      copied = [("view" in d) for d in records if d["new_subgame"] and "roots" in d]
      assert copied and set(copied) == {subgame_view == "copied"}
  assert played["compiled"][0] == played["live"][0]
  assert len(played["compiled"][1]) == len(played["live"][1]) > 0
  for ours, live in zip(*(played[path][1] for path in ("compiled", "live"))):
    np.testing.assert_allclose(ours, live, rtol=0, atol=1e-9)


def _copy_and_in_place(game_string, player, variant, config, own=0):
  """(copying view, SubgameView) of one of `player`'s next subgames after ITERATIONS
  of the whole game, each with a sampler of `config` seeded alike (None if the
  subgame is refused or its roots are nested)."""
  game = pyspiel.load_game(game_string)
  tree = compiled_tree.cached_tree(game)
  keys = subgame_trace.StateKeys.build(tree)
  whole = compiled_resolver.CompiledResolver.whole_game(tree, keys, player,
                                                         config=config, seed=5)
  whole.iterate(ITERATIONS)
  infosets = whole.trace.own_infosets
  if own >= len(infosets):
    return None
  try:
    built, _ = whole.next_subgame(int(infosets[own]), variant, seed=11)
  except protocol.CannotResolve:
    return None
  copy = built.view
  assert isinstance(copy.solver, view_sampling.ViewSampler)
  arguments = (tree, keys, player, copy.root_nodes, copy.w,
               dict(zip(copy.infoset_keys.tolist(), copy.cbv.tolist())), copy.variant,
               copy.opponent_reach)
  try:
    in_place = in_place_view.SubgameView(
        *arguments, solver=view_solvers.sampler(config, 11))
  except subgame_layout.NestedRoots:
    return None
  assert isinstance(in_place.solver, view_sampling.InPlaceSampler)
  return copy, in_place


def _assert_same_sampling(copy, in_place):
  """Equal regrets, cumulative sums, visits and average strategies at every infoset
  of the copy (the subgame's and the gadget's gates / choice), and equal next-root
  sums and inputs."""
  ours, sampler = copy.solver.solver, in_place.solver
  theirs = sampler.solver
  local, whole = copy.tree, copy.whole
  copied_average = copy.average_slots()
  in_place_average = in_place.average_slots()
  tables = {name: sampler.view_slots(getattr(theirs, name))
            for name in ("regrets", "cumulative")}
  gadget_offset = whole.num_infoset_actions
  for infoset in range(local.num_infosets):
    source = int(copy.infoset_source[infoset])
    count = int(local.infoset_num_actions[infoset])
    at = int(local.infoset_action_offset[infoset])
    if source >= 0:
      there = int(whole.infoset_action_offset[source])
      index = sampler.table_infoset(source)
    else:  # the gadget's infosets come first in the copy, after the tree's in place
      there = gadget_offset + at
      index = len(theirs.visits) - (local.num_infosets - len(
          np.flatnonzero(copy.infoset_source >= 0))) + infoset
    for name in ("regrets", "cumulative"):
      np.testing.assert_allclose(tables[name][there:there + count],
                                 getattr(ours, name)[at:at + count], rtol=1e-9,
                                 atol=1e-9, err_msg=f"{name} at infoset {infoset}")
    np.testing.assert_allclose(in_place_average[there:there + count],
                               copied_average[at:at + count], rtol=1e-9, atol=1e-9)
    assert theirs.visits[index] == ours.visits[infoset]
  assert ours.visits.sum() == theirs.visits.sum()
  for name in ("value_sum", "weight_sum"):
    np.testing.assert_allclose(getattr(in_place.solver.estimates, name),
                               getattr(copy.solver.estimates, name), rtol=1e-9,
                               atol=1e-9)
  for ours_means, theirs_means in zip(copy.solver.estimates.means(),
                                      in_place.solver.estimates.means()):
    np.testing.assert_allclose(theirs_means, ours_means, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("variant", gadget_game.VARIANTS)
@pytest.mark.parametrize("game_string",
                         GAMES + ["python_princess_monster(max_turns=4)"])
def test_in_place_sampling_equals_the_copy(game_string, variant):
  """vr_mccfr on a SubgameView (no copy) and on the copying view, same seed: the same
  tables at every subgame and gadget infoset, the same next-root estimates and the
  same next gadgets' inputs, for both players' first two next subgames."""
  config = settings.ResolverConfig(solver="vr_mccfr", variant=variant)
  compared = 0
  for player in (0, 1):
    for own in (0, 1):
      views = _copy_and_in_place(game_string, player, variant, config, own)
      if views is None:
        continue
      copy, in_place = views
      copy.solver.run(ITERATIONS)
      in_place.solver.run(ITERATIONS)
      _assert_same_sampling(copy, in_place)
      ours = compiled_resolver.CompiledResolver(copy, config=config)
      theirs = compiled_resolver.CompiledResolver(in_place, config=config)
      for infoset in ours.trace.own_infosets[:2].tolist():
        try:
          expected = _inputs(ours, ours.view.whole.infoset_keys[infoset], "resolve")
        except protocol.CannotResolve:
          continue
        _assert_inputs_equal(
            _inputs(theirs, theirs.view.whole.infoset_keys[infoset], "resolve"),
            expected)
      compared += 1
  assert compared > 0


@pytest.mark.parametrize("wrong", ["plain_gate", "w", "terminate"])
def test_the_in_place_comparison_tells_a_wrong_gate_or_weighting(wrong):
  """The equality above is no tautology: an in-place sampler with the plain gate
  (not CFR-D-aware), doubled root weights w or other Terminate values than the
  copy's differs from it."""
  config = settings.ResolverConfig(solver="vr_mccfr", variant="resolve")
  copy, in_place = _copy_and_in_place(GAMES[2], 0, "resolve", config)
  solver = in_place.solver
  # pylint: disable=protected-access  (the prefix the sampler gives its kernel)
  if wrong == "plain_gate":
    prefix = solver._prefix(
        settings.ResolverConfig(solver="vr_mccfr", cfrd_aware_sampling=False))
  else:
    prefix = list(solver._prefix_arguments)
    if wrong == "w":
      prefix[10] = 2.0 * prefix[10]
    else:
      prefix[6] = prefix[6] + 0.5
  solver._prefix_arguments = tuple(prefix)
  copy.solver.run(ITERATIONS)
  solver.run(ITERATIONS)
  with pytest.raises(AssertionError):
    _assert_same_sampling(copy, in_place)


@pytest.mark.parametrize("cfrd_aware", [True, False])
def test_in_place_mc_cfr_and_the_plain_gate_equal_the_copy(cfrd_aware):
  """mc_cfr (no baseline) in place, with and without the CFR-D-aware gate."""
  config = settings.ResolverConfig(solver="mc_cfr", cfrd_aware_sampling=cfrd_aware)
  copy, in_place = _copy_and_in_place(GAMES[2], 1, "resolve", config)
  copy.solver.run(ITERATIONS)
  in_place.solver.run(ITERATIONS)
  _assert_same_sampling(copy, in_place)


def test_in_place_samplers_of_one_tree_take_turns():
  """Two in-place samplers on one tree share its next-root map: interleaved runs
  collect what the copies collect."""
  config = settings.ResolverConfig(solver="vr_mccfr")
  first = _copy_and_in_place(GAMES[2], 0, "resolve", config, 0)
  second = _copy_and_in_place(GAMES[2], 0, "resolve", config, 1)
  assert first[1].whole is second[1].whole
  for views in (first, second, first, second):
    for view in views:
      view.solver.run(ITERATIONS // 3)
  for views in (first, second):
    assert views[1].solver.estimates.weight_sum.any()
    _assert_same_sampling(*views)


def test_a_copied_in_place_sampler_reads_the_shared_maps():
  """A deep copy of an in-place sampler (a continual-resolving bot's clone), taken
  while another sampler of the tree holds the shared next-root and infoset maps,
  samples on those maps, not on its solver's private copies of them (which hold
  the other sampler's entries): it collects what the copying view collects."""
  config = settings.ResolverConfig(solver="vr_mccfr")
  first = _copy_and_in_place(GAMES[2], 0, "resolve", config, 0)
  second = _copy_and_in_place(GAMES[2], 0, "resolve", config, 1)
  whole = first[1].whole
  second[1].solver.run(1)  # the second sampler holds the maps when the copy is made
  shared = {id(item): item for item in (whole, first[1].state_keys)}
  copied = copy_module.deepcopy(first[1], shared)
  first[0].solver.run(ITERATIONS)
  copied.solver.run(ITERATIONS)
  assert copied.solver.estimates.weight_sum.any()
  _assert_same_sampling(first[0], copied)
