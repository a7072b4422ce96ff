"""Each gadget pinned to its definition ([S] §1.4.2; [H] §G.2, §H.2, §I.4), in the
pyspiel gadget and in the compiled view, on two Kuhn subgames of a hand-written trunk.

Expected numbers come from the definitions (gadget_game.py's docstring) evaluated on the
base game only: w(h), π_o(h) by replaying h with the trunk, o's counterfactual
best-response values from OpenSpiel's BestResponse on Kuhn, u_o(z) from Kuhn's
states. Kuhn actions: 0 pass/fold, 1 bet/call; cards 0 (J), 1 (Q), 2 (K).
"""

import itertools

import numpy as np
import pytest

from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import best_response as openspiel_br
from open_spiel.python.algorithms import expected_game_score
import pyspiel

from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.resolving.compiled import copied_view
from ggp_cr.algorithms.resolving.compiled import in_place_view
from ggp_cr.algorithms.resolving.gadget import gadget_game
from ggp_cr.algorithms.resolving.subgames import subgame_trace
from ggp_cr.algorithms.tree import compiled_tree

# The trunk: probability of action 1 (bet/call) per information state.
BET_FIRST = {"0": 0.2, "1": 0.5, "2": 0.9}           # player 0 opens
BET_AFTER_PASS = {"0p": 0.3, "1p": 0.4, "2p": 0.8}   # player 1 after a pass
CALL = {"0b": 0.1, "1b": 0.6, "2b": 0.95,             # player 1 facing a bet
        "0pb": 0.2, "1pb": 0.7, "2pb": 0.95}          # player 0 facing a bet
TRUNK = {**BET_FIRST, **BET_AFTER_PASS, **CALL}
DEALS = list(itertools.permutations(range(3), 2))
# (suffix after the deal, resolving player p): p = 1 facing a bet; p = 0 facing a
# bet after its pass.
SUBGAMES = [((1,), 1), ((0, 1), 0)]


@pytest.fixture(scope="module")
def kuhn():
  game = pyspiel.load_game("kuhn_poker")
  trunk = policy_lib.TabularPolicy(game)
  for key, bet in TRUNK.items():
    trunk.policy_for_key(key)[:] = [1.0 - bet, bet]
  tree = compiled_tree.cached_tree(game)
  return game, trunk, tree, subgame_trace.StateKeys.build(tree)


def _replay(game, history):
  """(state after `history`, [π_0, π_1, π_chance] of it under TRUNK)."""
  state, reach = game.new_initial_state(), [1.0, 1.0, 1.0]
  for action in history:
    if state.is_chance_node():
      reach[2] *= dict(state.chance_outcomes())[action]
    else:
      bet = TRUNK[state.information_state_string()]
      reach[state.current_player()] *= bet if action == 1 else 1.0 - bet
    state.apply_action(action)
  return state, reach


def _definition(kuhn, suffix, player):
  """The subgame's inputs by definition: roots, w, π_o, o's root keys and
  CBV(I) = Σ_{h∈I} w(h)·v_o^BR(h)."""
  game, trunk, _, _ = kuhn
  opponent = 1 - player
  roots = [list(deal) + list(suffix) for deal in DEALS]
  br = openspiel_br.BestResponsePolicy(game, opponent, trunk)
  w, opponent_reach, keys, cbv = [], [], [], {}
  for history in roots:
    state, reach = _replay(game, history)
    w.append(reach[player] * reach[2])
    opponent_reach.append(reach[opponent])
    keys.append(state.information_state_string(opponent))
    cbv[keys[-1]] = cbv.get(keys[-1], 0.0) + w[-1] * br.value(state)
  k = {key: sum(wh for wh, kh in zip(w, keys) if kh == key) for key in cbv}
  return roots, np.array(w), np.array(opponent_reach), keys, cbv, k


def _given_values(cbv, k):
  """CBV'(I) = CBV(I) ± 0.1·k_I (alternating): the values the gadget is given, so that
  Terminate and Follow differ at every gate."""
  return {key: value + (0.1 if i % 2 == 0 else -0.1) * k[key]
          for i, (key, value) in enumerate(sorted(cbv.items()))}


def _expected_chance(variant, roots, w, opponent_reach, keys, k):
  """{root: the gadget's chance probability of it} ([H] §H.2, §I.4, §G.2)."""
  if variant == "resolve":
    return {tuple(h): wh / w.sum() for h, wh in zip(roots, w)}
  if variant == "max_margin":  # given o's choice of I = I(h)
    return {tuple(h): wh / k[key] for h, wh, key in zip(roots, w, keys)}
  joint = w * opponent_reach
  return {tuple(h): p / joint.sum() for h, p in zip(roots, joint)}


def _expected_payoff(variant, w, opponent_reach, given, k, key, u_o):
  """o's gadget payoff at a subgame terminal of o's utility u_o below a root of key."""
  if variant == "resolve":
    return w.sum() * u_o
  if variant == "max_margin":
    return k[key] * u_o - given[key]
  return (w * opponent_reach).sum() * u_o


def _subgame(kuhn, suffix, player, variant):
  game, _, _, _ = kuhn
  roots, w, opponent_reach, keys, cbv, k = _definition(kuhn, suffix, player)
  given = _given_values(cbv, k)
  subgame = gadget_game.Subgame(game, player, roots, w, given, opponent_reach)
  return gadget_game.make_gadget(subgame, variant), (roots, w, opponent_reach, keys, cbv, k,
                                                  given)


def _pyspiel_roots(gadget):
  """{root history: (its chance probability given o's choices, the gadget state just
  after the gadget's chance picked it)}, by walking the gadget's own prefix."""
  found = {}

  def walk(state):
    if state.is_chance_node():
      for root, probability in state.chance_outcomes():
        found[gadget.subgame.root_histories[root]] = (probability, state.child(root))
    else:  # max_margin: o's choice of I
      for action in state.legal_actions():
        walk(state.child(action))

  walk(gadget.new_initial_state())
  return found


def _terminals(gadget_state, base_state):
  """(gadget state, base state) pairs at the terminals below, walked in step."""
  if base_state.is_terminal():
    yield gadget_state, base_state
    return
  actions = ([a for a, _ in base_state.chance_outcomes()] if base_state.is_chance_node()
             else base_state.legal_actions())
  for action in actions:
    yield from _terminals(gadget_state.child(action), base_state.child(action))


@pytest.mark.parametrize("variant", gadget_game.VARIANTS)
@pytest.mark.parametrize("suffix, player", SUBGAMES)
def test_pyspiel_gadget_is_its_definition(kuhn, suffix, player, variant):
  """Root chance, Terminate value K·CBV'_norm(I) and every terminal payoff."""
  game = kuhn[0]
  opponent = 1 - player
  gadget, (roots, w, opponent_reach, keys, _, k, given) = _subgame(
      kuhn, suffix, player, variant)
  expected = _expected_chance(variant, roots, w, opponent_reach, keys, k)
  found = _pyspiel_roots(gadget)
  assert sorted(found) == sorted(expected)
  for history, key in zip(map(tuple, roots), keys):
    probability, state = found[history]
    assert probability == pytest.approx(expected[history], abs=1e-12)
    if variant == "resolve":
      terminated = state.child(gadget.terminate_action)
      assert terminated.returns()[opponent] == pytest.approx(
          w.sum() * given[key] / k[key], abs=1e-12)
      state = state.child(gadget.follow_action)
    count = 0
    for inside, base in _terminals(state, _replay(game, history)[0]):
      u_o = base.returns()[opponent]
      assert inside.returns()[opponent] == pytest.approx(
          _expected_payoff(variant, w, opponent_reach, given, k, key, u_o), abs=1e-12)
      assert inside.returns()[player] == -inside.returns()[opponent]
      count += 1
    assert count == 2  # fold or call


def test_unsafe_root_chances_by_hand(kuhn):
  """After a bet (p = 1), w(h) = 1/6 and π_0(h) = BET_FIRST[card of player 0]: the
  unsafe gadget deals root (a, b) with probability BET_FIRST[a] / (2·(0.2+0.5+0.9))."""
  gadget, _ = _subgame(kuhn, (1,), 1, "unsafe")
  found = _pyspiel_roots(gadget)
  by_hand = {(0, 1, 1): 0.2 / 3.2, (0, 2, 1): 0.2 / 3.2, (1, 0, 1): 0.5 / 3.2,
             (1, 2, 1): 0.5 / 3.2, (2, 0, 1): 0.9 / 3.2, (2, 1, 1): 0.9 / 3.2}
  assert {h: p for h, (p, _) in found.items()} == pytest.approx(by_hand, abs=1e-12)


def _gadget_values(variant, w, opponent_reach, roots, cbv, given, kuhn, player):
  """o's gadget value when p plays the trunk, by definition: resolve (o best-responds):
  Σ_I max(CBV(I), CBV'(I)) (chance reaches I's gate with k_I/K, where Follow is worth
  K·CBV(I)/k_I and Terminate K·CBV'(I)/k_I); max_margin: max_I (CBV(I) − CBV'(I)) ([H] Lemma 7); unsafe (o plays the
  trunk too): Σ_h w(h)·π_o(h)·v_o^trunk(h), the trunk's reach-weighted subgame value."""
  if variant == "resolve":
    return sum(max(cbv[key], given[key]) for key in cbv)
  if variant == "max_margin":
    return max(cbv[key] - given[key] for key in cbv)
  game, trunk = kuhn[0], kuhn[1]
  values = [expected_game_score.policy_value(_replay(game, h)[0], [trunk, trunk])
            [1 - player] for h in roots]
  return float(np.sum(w * opponent_reach * np.array(values)))


@pytest.mark.parametrize("variant", gadget_game.VARIANTS)
@pytest.mark.parametrize("suffix, player", SUBGAMES)
def test_gadget_value_at_the_trunk(kuhn, suffix, player, variant):
  """The pyspiel gadget's value (OpenSpiel's best response or policy value on it) and
  the compiled view's (exact_br, gadget_value) at the trunk equal the closed forms."""
  _, trunk, tree, state_keys = kuhn
  opponent = 1 - player
  gadget, (roots, w, opponent_reach, keys, cbv, _, given) = _subgame(
      kuhn, suffix, player, variant)
  expected = _gadget_values(variant, w, opponent_reach, roots, cbv, given, kuhn, player)
  # Inside the subgame p's information state strings are Kuhn's: the trunk applies.
  if variant == "unsafe":
    value = expected_game_score.policy_value(gadget.new_initial_state(),
                                             [trunk, trunk])[opponent]
  else:
    value = openspiel_br.BestResponsePolicy(gadget, opponent, trunk).value(
        gadget.new_initial_state())
  assert value == pytest.approx(expected, abs=1e-12)

  view, slots = _view(tree, state_keys, trunk, player, roots, w, opponent_reach, keys,
                      given, variant)
  if variant == "unsafe":
    assert view.gadget_value(slots) == pytest.approx(expected, abs=1e-12)
  else:
    assert exact_br.best_response_values(view.tree, slots)[opponent] == pytest.approx(
        expected, abs=1e-12)


def _root_node(tree, history):
  game, node = tree.game, 0
  state = game.new_initial_state()
  for action in history:
    legal = ([a for a, _ in state.chance_outcomes()] if state.is_chance_node()
             else state.legal_actions())
    node = int(tree.node_first_child[node]) + legal.index(action)
    state.apply_action(action)
  return node


def _view(tree, state_keys, trunk, player, roots, w, opponent_reach, keys, given,
          variant):
  """The compiled view of the same subgame, and the trunk in its slot form (uniform
  at the gadget's own decisions)."""
  nodes = np.array([_root_node(tree, h) for h in roots])
  int_keys = state_keys.keys[1 - player, nodes].tolist()
  assert [state_keys.key_string(i) for i in int_keys] == keys
  view = copied_view.GadgetView(tree, state_keys, player, nodes, w,
                                 {i: given[s] for i, s in zip(int_keys, keys)}, variant,
                                 opponent_reach)
  whole = tree.as_slots(trunk)
  slots = np.where(view.slot_source >= 0, whole[np.maximum(view.slot_source, 0)], 0.0)
  for infoset in np.flatnonzero(view.infoset_source < 0):
    start = view.tree.infoset_action_offset[infoset]
    count = view.tree.infoset_num_actions[infoset]
    slots[start:start + count] = 1.0 / count
  return view, slots


@pytest.mark.parametrize("variant", gadget_game.VARIANTS)
@pytest.mark.parametrize("suffix, player", SUBGAMES)
def test_compiled_view_is_its_definition(kuhn, suffix, player, variant):
  """The view's root chance (product of its prefix's chance probabilities, given o's
  choices), Terminate leaves K·CBV'_norm(I) at every gate and every terminal payoff."""
  _, trunk, tree, state_keys = kuhn
  opponent = 1 - player
  _, (roots, w, opponent_reach, keys, _, k, given) = _subgame(
      kuhn, suffix, player, variant)
  view, _ = _view(tree, state_keys, trunk, player, roots, w, opponent_reach, keys,
                  given, variant)
  local = view.tree
  expected = _expected_chance(variant, roots, w, opponent_reach, keys, k)
  node_of = {_root_node(tree, h): (tuple(h), key) for h, key in zip(roots, keys)}
  sign = 1.0 if opponent == 0 else -1.0  # node_utility is player 0's

  def prefix_chance(node):
    probability = 1.0
    while local.node_parent[node] >= 0:
      if local.node_player[local.node_parent[node]] == -1:  # chance
        probability *= local.node_chance_prob[node]
      node = local.node_parent[node]
    return probability

  def is_root_copy(node):
    return (int(view.source[node]) in node_of and
            view.source[local.node_parent[node]] < 0)

  seen = {}
  terminate_leaves = 0
  for node in range(local.num_nodes):
    source = int(view.source[node])
    if is_root_copy(node):
      seen[node_of[source][0]] = prefix_chance(node)
    if local.node_player[node] != -4:
      continue
    if source < 0:  # resolve: a Terminate leaf under o's gate
      gate = local.node_parent[node]
      follow = local.node_first_child[gate]
      _, key = node_of[int(view.source[follow])]
      assert sign * local.node_utility[node] == pytest.approx(
          w.sum() * given[key] / k[key], abs=1e-12)
      terminate_leaves += 1
      continue
    ancestor = node
    while not is_root_copy(ancestor):
      ancestor = local.node_parent[ancestor]
    _, key = node_of[int(view.source[ancestor])]
    u_o = tree.node_utility[source]
    u_o = u_o if opponent == 0 else tree.utility_sum - u_o
    assert sign * local.node_utility[node] == pytest.approx(
        _expected_payoff(variant, w, opponent_reach, given, k, key, u_o), abs=1e-12)
  assert seen == pytest.approx(expected, abs=1e-12)
  assert terminate_leaves == (len(roots) if variant == "resolve" else 0)


@pytest.mark.parametrize("variant", gadget_game.VARIANTS)
@pytest.mark.parametrize("suffix, player", SUBGAMES)
def test_in_place_view_solves_with_the_definitions_inputs(kuhn, suffix, player,
                                                          variant):
  """The compiled path's in-place view (no laid-out prefix) gives its CFR+ each
  active root's gadget chance and, under resolve, o's Terminate payoff K·CBV'_norm(I)
  of the root's information set, as defined."""
  _, _, tree, state_keys = kuhn
  _, (roots, w, opponent_reach, keys, _, k, given) = _subgame(
      kuhn, suffix, player, variant)
  nodes = np.array([_root_node(tree, h) for h in roots])
  int_keys = state_keys.keys[1 - player, nodes].tolist()
  view = in_place_view.SubgameView(tree, state_keys, player, nodes, w,
                                   {i: given[s] for i, s in zip(int_keys, keys)},
                                   variant, opponent_reach)
  expected = _expected_chance(variant, roots, w, opponent_reach, keys, k)
  active = view.active_roots.tolist()
  solver = view.solver
  chance = solver._root_chance  # pylint: disable=protected-access
  assert {tuple(roots[j]): p for j, p in zip(active, chance.tolist())} == (
      pytest.approx(expected, abs=1e-12))
  if variant == "resolve":
    terminate = solver._terminate()  # pylint: disable=protected-access
    for j, value in zip(active, terminate.tolist()):
      assert value == pytest.approx(w.sum() * given[keys[j]] / k[keys[j]], abs=1e-12)
