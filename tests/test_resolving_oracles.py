"""Oracles of continual resolving with CFR+ ([S] ch. 2, §1.4.2; Burch et al. 2014).

* The opponent values a resolver hands to the next gadget equal an independent
  computation on the compiled tree: with self-play values, the means over the solve's
  iterations of w_t(h) and w_t(h) v_t(h) (module docstring of continual_resolving:
  CBV_norm(I) = sum_t sum_{h in I} w_t v_t / sum_t sum_{h in I} w_t, k_I the mean
  reach, CBV = k_I CBV_norm); with use_cbr, CBV(I) = sum_{h in I} w(h) v_o(h) with
  v_o OpenSpiel's best-response value of the opponent against the trunk average.
* The bot's whole strategy is no more exploitable than CFR-D's re-solving theorem
  allows, under its premise (exact counterfactual best-response inputs, use_cbr):
  NashConv <= the trunks' one-sided exploitabilities + the sum over resolves of
  the opponent's counterfactual-value increases at the subgame roots
  (test_whole_strategy_within_the_cfrd_bound says why, and what max_margin and
  self-play inputs get).
"""
# pylint: disable=protected-access

import numpy as np
from open_spiel.python.algorithms import best_response as openspiel_best_response
import pyspiel
import pytest

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.evaluation import evaluators
from ggp_cr.algorithms.resolving import continual_resolving as cr
from ggp_cr.algorithms.resolving import protocol
from ggp_cr.algorithms.resolving import settings
from ggp_cr.algorithms.resolving.compiled import compiled_resolver
from ggp_cr.algorithms.resolving.compiled import next_root_estimates
from ggp_cr.algorithms.resolving.exact import trunk_inputs
from ggp_cr.algorithms.resolving.gadget import gadget_game
from ggp_cr.algorithms.resolving.live import live_resolver
from ggp_cr.algorithms.resolving.live import live_problem
from ggp_cr.algorithms.tree import compiled_tree

KUHN = "kuhn_poker"
SMALL_LEDUC = "python_leduc(cards_per_suit=2,max_raises=1)"


def _next_gadgets(resolver, variant):
  """Every next subgame's gadget of `resolver` (one per bot information state)."""
  result = []
  for own_key in resolver.trace.subgame_map.own_keys():
    try:
      gadget, _, _ = resolver.next_subgame(own_key, variant)
    except protocol.CannotResolve:
      continue
    result.append(gadget)
  assert result
  return result


def _by_opponent_key(subgame, per_root):
  totals = {}
  for key, value in zip(subgame.opponent_keys, per_root):
    totals[key] = totals.get(key, 0.0) + value
  return totals


@pytest.mark.parametrize("variant", gadget_game.VARIANTS)
# Player 1 acts once per Kuhn history: it has no next subgame there.
@pytest.mark.parametrize("game_string,player", [(KUHN, 0), (SMALL_LEDUC, 0),
                                                (SMALL_LEDUC, 1)])
def test_self_play_opponent_values_are_k_scaled_means_over_iterations(
    game_string, player, variant):
  game = pyspiel.load_game(game_string)
  tree = compiled_tree.cached_tree(game)
  resolver = live_resolver.Resolver(live_problem.Problem(game, player),
                                   settings.ResolverConfig(solver="cfr+"), seed=0)
  # The resolver's whole-game solve is CFR+; the same iterations, recorded.
  reference = cfr.CFRPlusSolver(tree)
  iterations = 9
  strategies = []
  for _ in range(iterations):
    strategies.append(reference.current_strategy_slots())
    reference.evaluate_and_update_policy()
    resolver.solver.iteration()
  reaches = [tree.node_reaches(slots) for slots in strategies]
  values = [tree.node_values(slots) for slots in strategies]
  if player == 0:  # The opponent's values.
    values = [tree.utility_sum - v for v in values]
  for gadget in _next_gadgets(resolver, variant):
    subgame = gadget.subgame
    nodes = [trunk_inputs.history_node(tree, h) for h in subgame.root_histories]
    w = np.array([[r[player, n] * r[2, n] for n in nodes] for r in reaches])
    wv = np.array([[r[player, n] * r[2, n] * v[n] for n in nodes]
                   for r, v in zip(reaches, values)])
    k = _by_opponent_key(subgame, w.mean(axis=0))
    weighted = _by_opponent_key(subgame, wv.sum(axis=0))
    total = _by_opponent_key(subgame, w.sum(axis=0))
    normalised = subgame.normalised_values()
    assert normalised
    for key, value in normalised.items():
      assert value == pytest.approx(weighted[key] / total[key], abs=1e-9), key
      assert subgame.opponent_values[key] == pytest.approx(
          k[key] * weighted[key] / total[key], abs=1e-9), key
      assert subgame.infoset_reach[key] == pytest.approx(k[key], abs=1e-12), key


@pytest.mark.parametrize("variant", gadget_game.VARIANTS)
@pytest.mark.parametrize("game_string,player", [(KUHN, 0), (SMALL_LEDUC, 1)])
def test_exact_opponent_values_are_reach_weighted_best_response_values(
    game_string, player, variant):
  game = pyspiel.load_game(game_string)
  tree = compiled_tree.cached_tree(game)
  resolver = live_resolver.Resolver(
      live_problem.Problem(game, player),
      settings.ResolverConfig(solver="cfr+", use_cbr=True), seed=0)
  for _ in range(20):
    resolver.solver.iteration()
  trunk = resolver.solver.average_slots()
  reach = tree.node_reaches(trunk)
  response = openspiel_best_response.BestResponsePolicy(
      game, 1 - player, tree.slots_to_tabular_policy(trunk))
  for gadget in _next_gadgets(resolver, variant):
    subgame = gadget.subgame
    nodes = [trunk_inputs.history_node(tree, h) for h in subgame.root_histories]
    w = [reach[player, n] * reach[2, n] for n in nodes]
    cbv = _by_opponent_key(subgame, [
        weight * response.value(state)
        for weight, state in zip(w, subgame.root_states)])
    k = _by_opponent_key(subgame, w)
    for key, value in subgame.normalised_values().items():
      assert subgame.opponent_values[key] == pytest.approx(cbv[key], abs=1e-9), key
      assert value == pytest.approx(cbv[key] / k[key], abs=1e-9), key


class _Recorded(cr.ContinualResolvingBot):
  """Keeps the resolver of every decision of every bot and copy (seat, resolver), to
  read all of them after a traversal (the evaluator hands a bot on to its last
  decision group, so a bot's last resolver is not all it held)."""
  held = []

  def step_with_policy(self, state):
    result = super().step_with_policy(state)
    _Recorded.held.append((self.player_id(), self.resolver))
    return result


def _resolve_terms(game, first_level=False):
  """([S] ch. 2; Burch et al. 2014 Thm 1 as [H] §H.2 Thm 4 states it, [H] §I.2
  Cor. 3) the sum over the two seats of the trunks' one-sided exploitabilities,
  sum_p (BR_o(trunk of p) - v_o*) (no game value needed: v_0* + v_1* is the
  utility sum), and per
  distinct resolve held by the recorded bots (its gadget, seat and strategy):
  Delta(S) = sum_{I in R(S)} max(0, CBV_o^after(I) - CBV_o^before(I)) with
  CBV^before exact against the profile the resolve started from (its trunk: use_cbr
  keeps it) and CBV^after against that profile with the resolve combined in, and,
  for resolve gadgets, eps(S): the bot's one-sided exploitability in its gadget (o's
  best-response value there minus the gadget's value sum_I CBV_input(I)).
  `first_level`: resolves without a kept trunk (self-play inputs) start from their
  seat's trunk (the whole game's solve), true where every subgame is entered from
  the trunk (Kuhn)."""
  tree = compiled_tree.cached_tree(game)
  keys = compiled_resolver.state_keys(tree)
  trunks, resolves = {}, {}
  for player, resolver in _Recorded.held:
    if resolver is not None and (
        getattr(resolver, "view", None) is not None and resolver.view.variant is None
        or getattr(resolver, "problem", None) is not None and
        resolver.problem.gadget is None):
      trunks[player] = (resolver.profile() if hasattr(resolver, "view")
                                 else resolver.combined_profile(tree))
  for player, resolver in _Recorded.held:
    if resolver is None:
      continue
    opponent = 1 - player
    start = resolver.trunk
    if start is None and first_level:
      start = trunks[player]
    if isinstance(resolver, compiled_resolver.CompiledResolver):
      view = resolver.view
      if view.variant is None:
        continue
      after = view.combine(start)
      nodes = view.root_nodes[view.active_roots]
      gadget_tree, slots = view.laid_out()
      inputs = float(view.cbv[view.k > 0].sum())
    else:
      gadget = resolver.problem.gadget
      if gadget is None:
        continue
      after = trunk_inputs.combine(tree, start, gadget, resolver.solver.average_slots())
      nodes = np.array([trunk_inputs.history_node(tree, h)
                        for h in gadget.subgame.root_histories])
      gadget_tree, slots = gadget.tree(), resolver.solver.average_slots()
      inputs = float(sum(gadget.subgame.opponent_values.values()))
    key = (player, tuple(sorted(nodes.tolist())), after.tobytes())
    if key in resolves:
      continue
    root_keys = keys.keys[opponent, nodes]
    before = next_root_estimates.exact_next_root_inputs(
        tree, start, player, nodes, root_keys)[2]
    cbv_after = next_root_estimates.exact_next_root_inputs(
        tree, after, player, nodes, root_keys)[2]
    delta = sum(max(0.0, cbv_after[k] - before[k]) for k in before)
    gadget_best = exact_br.best_response_values(gadget_tree, slots)[opponent]
    if opponent == 1:
      gadget_best -= gadget_tree.utility_sum
    resolves[key] = (delta, gadget_best - inputs, sum(before.values()), inputs)
  assert sorted(trunks) == [0, 1]
  trunk_term = sum(exact_br.best_response_values(tree, trunks[p])[1 - p]
                   for p in (0, 1)) - tree.utility_sum
  return trunk_term, list(resolves.values())


def _traverse(game, iterations, variant, use_cbr, path):
  """The traversing evaluation of a CFR+ continual-resolving bot, recording every
  copy; the bound sums the solves every information set's own copy holds (copies
  of one solve count once), so no decisions are shared between copies."""
  _Recorded.held = []
  return evaluators.traversing_evaluation(
      game, lambda g, p, seed, budget: _Recorded(
          g, p, solver="cfr+", variant=variant, use_cbr=use_cbr, preplay=iterations,
          move=iterations, seed=p, path=path), share_decisions=False)


@pytest.mark.parametrize("path", ["live", "compiled"])
@pytest.mark.parametrize("variant", ["resolve", "max_margin"])
@pytest.mark.parametrize("game_string,iterations", [(KUHN, "300it"),
                                                    (SMALL_LEDUC, "200it")])
def test_whole_strategy_within_the_cfrd_bound(game_string, iterations, variant, path):
  """What CFR-D's re-solving theory guarantees, with its premise: the gadget's
  inputs are the opponent's exact counterfactual best-response values against the
  bot's strategy so far (use_cbr). Burch et al. 2014's re-solving theorem ([H]
  §H.2 Thm 4; [S] ch. 2): o's best-response value against the combined strategy exceeds
  that against the strategy before by at most Delta(S) = sum_I max(0, CBV^after(I) -
  CBV^before(I)) over o's root information sets (o reaches each at most once; Thm 4
  itself is the case Delta = 0, [H] §I.2 Cor. 3 its subgame-margin form). Chained
  over the trunk and every resolve of each seat, in NashConv (OpenSpiel's
  exploitability is NashConv / 2):
    NashConv(whole strategy) <= sum_p (BR_o(trunk_p) - v_o*) + sum_S Delta(S).
  For the resolve gadget, Delta(S) is exactly eps(S), the bot's one-sided
  exploitability in its gadget (the gadget's value is sum_I CBV^before(I): o can
  terminate everywhere, and the trunk's own strategy holds o to it), the "eps_S"
  of the theorem's approximate form; the test checks that identity and the premise
  (inputs = CBV^before). For max_margin the theorem applies through Delta(S) only
  (its own gadget measures the margin, min_I, not this sum).

  This bound is tighter than the earlier check (NashConvs of the two trunk solves
  plus every gadget's NashConv, halved): each trunk's NashConv counts both players
  (the theorem only the bot's seat), and a gadget's NashConv adds the opponent's
  side of the gadget to eps(S). Self-play inputs (use_cbr=False) violate the
  premise ([S] ch. 6, Discussion: CFR-D requires CBR values); no bound of this
  kind holds for them (test_self_play_inputs_have_no_cfrd_guarantee)."""
  game = pyspiel.load_game(game_string)
  evaluation = _traverse(game, iterations, variant, True, path)
  trunk_term, resolves = _resolve_terms(game)
  assert resolves  # at least one subgame resolved
  for delta, epsilon, before, inputs in resolves:
    assert inputs == pytest.approx(before, abs=1e-9)
    if variant == "resolve":
      assert epsilon == pytest.approx(delta, abs=1e-9)
  bound = trunk_term + sum(delta for delta, _, _, _ in resolves)
  nash_conv = 2 * evaluation.exploitability
  assert nash_conv <= bound + 1e-9, (nash_conv, trunk_term, bound)


@pytest.mark.parametrize("path", ["live", "compiled"])
@pytest.mark.parametrize("variant", ["resolve", "max_margin"])
def test_self_play_inputs_have_no_cfrd_guarantee(variant, path):
  """With self-play opponent values (the thesis's bot, [S] ch. 6, Discussion)
  CFR-D's premise fails: no bound by the solves' errors holds. Kuhn, max_margin, 300 iterations:
  exploitability 0.00092, above the sum of the NashConvs of the distinct solves
  (two trunks and one gadget: 0.00072), let alone its half. What still holds is
  the theorem's inequality with the true values (the inputs' error shows in
  Delta(S) instead of in a premise): NashConv <= sum_p (BR_o(trunk_p) - v_o*) +
  sum_S Delta(S), CBV^before exact against the seat's trunk (every Kuhn subgame is
  entered from the trunk)."""
  game = pyspiel.load_game(KUHN)
  evaluation = _traverse(game, "300it", variant, False, path)
  trunk_term, resolves = _resolve_terms(game, first_level=True)
  assert resolves
  bound = trunk_term + sum(delta for delta, _, _, _ in resolves)
  assert 2 * evaluation.exploitability <= bound + 1e-9, (evaluation.exploitability,
                                                         bound)
