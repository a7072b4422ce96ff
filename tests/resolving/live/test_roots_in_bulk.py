"""The live path's per-root work done in bulk (issue 44): OwnTrace's histories of
`target` registered without the generic branch step, its one-key map, the native
walk's groups by ranked keys, the estimates' steps valued once each and the gadget's
roots taken with their known histories give what the per-root Python gave."""

import time

import numpy as np
import pyspiel
import pytest

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.evaluation import matches
from ggp_cr.algorithms.resolving import settings
from ggp_cr.algorithms.resolving.gadget import gadget_game
from ggp_cr.algorithms.resolving.live import live_problem
from ggp_cr.algorithms.resolving.live import live_resolver
from ggp_cr.algorithms.resolving.live import live_trace
from ggp_cr.algorithms.resolving.live import own_trace

GAMES = ["python_ii_goofspiel(num_cards=4)", "python_ii_goofspiel(num_cards=5)",
         "python_leduc(cards_per_suit=3)"]


def test_group_rows_are_numpys_unique_rows():
  rng = np.random.default_rng(3)
  for _ in range(200):
    size = int(rng.integers(1, 400))
    columns = [rng.integers(0, rng.integers(1, 40), size),
               rng.integers(-1, 6, size),
               rng.integers(0, 10 ** int(rng.integers(1, 15)), size)]
    _, first, inverse = np.unique(np.stack(columns, axis=1), axis=0,
                                  return_index=True, return_inverse=True)
    mine_first, mine_inverse = own_trace._group_rows(*columns)  # pylint: disable=protected-access
    np.testing.assert_array_equal(mine_first, first)
    np.testing.assert_array_equal(mine_inverse, inverse.reshape(-1))


def test_target_map_answers_as_the_union_find_map():
  rng = np.random.default_rng(5)
  for _ in range(50):
    full, one = live_trace.SubgameMap(), own_trace.TargetMap()
    assert "t" not in one and one.own_keys() == []
    for _ in range(int(rng.integers(1, 60))):
      root_id, opponent = int(rng.integers(0, 30)), f"o{rng.integers(0, 8)}"
      full.add(root_id, "t", opponent)
      one.add(root_id, "t", opponent)
    assert "t" in one and "u" not in one and one.own_keys() == full.own_keys()
    assert one.roots("t") == full.roots("t")
    assert one.own_roots("t") == full.own_roots("t")
  with pytest.raises(KeyError):
    one.roots("u")
  with pytest.raises(ValueError, match="maps 't' only"):
    one.add(0, "u", "o0")


def _reference_estimates(solver, root_ids, trace):
  """SamplingSolver.estimates as the per-root loop computed them before (each step's
  probability looked up again, the sums by each root's history)."""
  problem = solver.problem

  def probability(key, index, count):
    data = solver.table.get(key)
    return 1.0 / count if data is None else float(data.average()[index])

  reach, opponent_reach = np.zeros(trace.num_roots), np.zeros(trace.num_roots)
  for root_id in root_ids:
    j = trace.root_of[root_id]
    own = problem.root_weight[j] * trace.chance[root_id]
    other = problem.opponent_root_reach[j]
    for acting, key, index, count in trace.steps[root_id]:
      if acting == problem.player:
        own *= probability(key, index, count)
      else:
        other *= probability(key, index, count)
    reach[root_id], opponent_reach[root_id] = own, other
  if solver.sums_by_history is None:
    return reach, opponent_reach, np.array(solver.value_sum), np.array(solver.weight_sum)
  value_sum, weight_sum = np.zeros(trace.num_roots), np.zeros(trace.num_roots)
  for root_id in root_ids:
    history = (tuple(problem.root_histories[trace.root_of[root_id]]) +
               trace.actions[root_id])
    value_sum[root_id], weight_sum[root_id] = solver.sums_by_history.get(
        history, (0.0, 0.0))
  return reach, opponent_reach, value_sum, weight_sum


def _random_action(state, rng):
  if state.is_chance_node():
    return matches.sample_chance(state, rng)
  return state.legal_actions()[rng.integers(len(state.legal_actions()))]


@pytest.mark.parametrize("game_string", GAMES)
def test_bulk_roots_equal_the_per_root_python(game_string, monkeypatch):
  """Along random matches, from the starts the live path keeps: OwnTrace's roots
  (with their histories) are registered in bulk where the game answers
  `information_states_after`, the estimates equal the per-root loop's to 1e-12, and
  the gadget built over the known histories equals one that asks each root."""
  game = pyspiel.load_game(game_string)
  config = settings.ResolverConfig(solver="vr_mccfr")
  bulk = [0]
  target_child = own_trace.OwnTrace._target_child  # pylint: disable=protected-access

  def counted(self, *args):
    bulk[0] += 1
    return target_child(self, *args)

  monkeypatch.setattr(own_trace.OwnTrace, "_target_child", counted)
  compared = gadgets = 0
  for seed in range(8):
    rng = np.random.default_rng(seed)
    player = seed % 2
    cut = live_resolver.Resolver(live_problem.Problem(game, player), config,
                                 seed=seed, deadline=time.perf_counter() - 1.0)
    assert cut.solver_collects_by_history
    cut.run(limits.Limit(iterations=150), 0.0)
    state = game.new_initial_state()
    own_moves, starts = {}, None
    while not state.is_terminal():
      if state.current_player() == player:
        key = state.information_state_string(player)
        own = own_trace.OwnTrace(cut.problem, own_moves, key, starts=starts)
        if own.num_roots and not own.in_current:
          assert own.histories == [
              tuple(cut.problem.root_histories[own.root_of[r]]) + own.actions[r]
              for r in range(own.num_roots)]
          group = own.subgame_map.roots(key)
          mine = cut.solver.estimates(group, own)
          reference = _reference_estimates(cut.solver, group, own)
          for got, expected in zip(mine, reference):
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
          compared += 1
          try:
            gadget, _, _ = cut.next_subgame(key, "resolve", trace=own)
          except Exception:  # pylint: disable=broad-except  (e.g. zero reach)
            gadget = None
          if gadget is not None:
            subgame = gadget.subgame
            asked = gadget_game.Subgame(
                game, player, subgame.root_states, subgame.reach,
                subgame.opponent_values, subgame.opponent_reach,
                subgame.opponent_keys)
            assert asked.root_histories == subgame.root_histories
            assert asked.fingerprint() == subgame.fingerprint()
            gadgets += 1
        if own.complete:
          starts = (own.current_starts if own.in_current else
                    own.starts_below(key)) or starts
      action = _random_action(state, rng)
      if state.current_player() == player:
        own_moves = {**own_moves, key: {action}}
      state.apply_action(action)
  assert compared >= 5 and gadgets >= 4, (compared, gadgets)
  if "goofspiel" in game_string:
    assert bulk[0] > 0  # (python_leduc has no information_states_after)


def _states(game, paths):
  """The states of `game` after each of `paths` (action sequences)."""
  states = [game.new_initial_state() for _ in paths]
  for state, path in zip(states, paths):
    for action in path:
      state.apply_action(action)
  return states


def test_subgame_takes_the_roots_known_histories():
  game = pyspiel.load_game(GAMES[0])
  roots = [[0, 1], [0, 2], [0, 3]]
  states = _states(game, roots)
  keys = [s.information_state_string(1) for s in states]
  values = {key: 0.0 for key in keys}
  asked = gadget_game.Subgame(game, 0, states, [1.0] * 3, values, opponent_keys=keys)
  given = gadget_game.Subgame(game, 0, states, [1.0] * 3, values, opponent_keys=keys,
                              root_histories=[tuple(p) for p in roots])
  assert given.root_histories == asked.root_histories == tuple(map(tuple, roots))
  assert given.fingerprint() == asked.fingerprint()
  assert given.with_values(values).root_histories == given.root_histories
  with pytest.raises(ValueError, match="one history per root"):
    gadget_game.Subgame(game, 0, states, [1.0] * 3, values, opponent_keys=keys,
                        root_histories=[(0, 1)])


def test_a_subgames_fingerprint_names_every_input():
  """The fingerprint (its per-root parts hashed as bytes) is equal for equal subgames
  and changes with the roots, the reach, the values or the opponent reach."""
  game = pyspiel.load_game(GAMES[0])

  def subgame(paths=((0, 1), (0, 2)), reach=(1.0, 1.0), value=0.0,
              opponent_reach=None):
    states = _states(game, paths)
    keys = [s.information_state_string(1) for s in states]
    return gadget_game.Subgame(game, 0, states, reach, dict.fromkeys(keys, value),
                               opponent_reach=opponent_reach, opponent_keys=keys)

  base = subgame().fingerprint()
  assert subgame().fingerprint() == base and len(base) == 16
  others = [subgame(paths=((0, 1), (0, 3))), subgame(reach=(1.0, 0.5)),
            subgame(value=0.25), subgame(opponent_reach=(1.0, 1.0))]
  assert len({base, *(other.fingerprint() for other in others)}) == 5
