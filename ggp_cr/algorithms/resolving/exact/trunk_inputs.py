"""A subgame on the original game's compiled tree ([S] §1.4.2, §6; [H] §E.5, §G–I).

Its inputs from a trunk strategy: the roots (by augmented information sets, [H] Def. 3,
or public observation) below a history, the opponent's root values (counterfactual best
response or on-policy) and the `gadget_game.Subgame` a gadget is built from; and the way
back: a gadget's resolved strategy mapped onto the original game, combined with the
trunk, and its subgame margin ([H] Def. 5).
"""

import numba
import numpy as np
from open_spiel.python.observation import make_observation
import pyspiel

from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.resolving.gadget import gadget_game

# --- Mapping a gadget strategy back onto the original game ---------------------------


def _gadget_slots(gadget, gadget_policy):
  return gadget.tree().as_slots(gadget_policy, "Gadget slots")


def resolved_strategy(gadget, gadget_policy):
  """The resolving player's strategy in the subgame, keyed by original info states.

  `gadget_policy` is any policy.Policy over the gadget (e.g. a solver's average
  policy) or a strategy in slot form on `gadget.tree()`. Returns
  {information_state_string: {action: probability}} for every information set of p
  the gadget reaches; the keys are the original game's information state strings.
  """
  tree = gadget.tree()
  slots = _gadget_slots(gadget, gadget_policy)
  strategy = {}
  for infoset in np.flatnonzero(tree.infoset_player == gadget.player).tolist():
    offset = int(tree.infoset_action_offset[infoset])
    end = offset + int(tree.infoset_num_actions[infoset])
    strategy[tree.infoset_keys[infoset]] = dict(
        zip(tree.infoset_actions[offset:end].tolist(), slots[offset:end].tolist()))
  return strategy


def gadget_slots_from_original(gadget, tree, profile):
  """A gadget strategy in slot form (on `gadget.tree()`) playing `profile`.

  Inside the subgame both players play `profile` (a profile of the original game on
  its CompiledTree `tree`, slot form or any policy.Policy); at the gadget's own
  decisions o follows (resolve) or chooses uniformly (max_margin). With p's part this
  is the trunk's subgame strategy, a feasible solution of the resolve gadget
  ([H] §H.3) and margin 0 in the max-margin gadget; also a warm start.
  """
  check_tree(tree, gadget.original)
  original = tree.as_slots(profile, "profile")
  gadget_tree = gadget.tree()
  slots = np.zeros(gadget_tree.num_infoset_actions)
  for infoset, key in enumerate(gadget_tree.infoset_keys):
    offset = int(gadget_tree.infoset_action_offset[infoset])
    actions = gadget_tree.infoset_actions[
        offset:offset + int(gadget_tree.infoset_num_actions[infoset])].tolist()
    if actions[0] >= gadget.num_original_actions:
      if gadget.variant == "resolve":
        slots[offset + actions.index(gadget.follow_action)] = 1.0
      else:
        slots[offset:offset + len(actions)] = 1.0 / len(actions)
      continue
    source = tree.infoset_index(int(gadget_tree.infoset_player[infoset]), key)
    source_offset = int(tree.infoset_action_offset[source])
    source_actions = tree.infoset_actions[
        source_offset:source_offset + int(tree.infoset_num_actions[source])].tolist()
    for i, action in enumerate(actions):
      slots[offset + i] = original[source_offset + source_actions.index(action)]
  return slots


def check_tree(tree, game):
  if tree.game_string != str(game):
    raise ValueError(
        f"The compiled tree is of {tree.game_string}, the subgame of {game}.")


def combine(tree, trunk, gadget, gadget_policy):
  """The trunk strategy with p's subgame information sets replaced by the gadget's.

  `tree` is the original game's CompiledTree, `trunk` a profile (slot form or any
  policy.Policy); o's strategy and p's strategy outside the subgame stay as in the
  trunk ([S] §6). Returns the combined profile in slot form (see
  `tree.slots_to_tabular_policy` for a TabularPolicy).
  """
  check_tree(tree, gadget.original)
  combined = tree.as_slots(trunk, "trunk").copy()
  for key, probabilities in resolved_strategy(gadget, gadget_policy).items():
    infoset = tree.infoset_index(gadget.player, key)
    offset = int(tree.infoset_action_offset[infoset])
    end = offset + int(tree.infoset_num_actions[infoset])
    actions = tree.infoset_actions[offset:end]
    if sorted(actions.tolist()) != sorted(probabilities):
      raise ValueError(f"Information state {key!r} has actions {actions.tolist()} in "
                       f"{tree.game_string} but {sorted(probabilities)} in the gadget.")
    combined[offset:end] = [probabilities[a] for a in actions.tolist()]
  return combined


# --- Subgame inputs from a trunk strategy --------------------------------------------

_TERMINAL = int(pyspiel.PlayerId.TERMINAL)

@numba.njit(cache=True)
def _augmented_keys(node_player, node_infoset, node_parent, node_action_index,
                    infoset_action_offset, num_slots):
  """Each player's augmented information set of every node ([H] Def. 3), as an int.

  Where the player acts: num_slots + 1 + its information set; elsewhere: 1 + the
  player's last (infoset, action) slot on the path (0 before its first action). With
  perfect recall the last slot determines the player's whole sequence. Terminals: -1.
  """
  num_nodes = len(node_player)
  last = np.full((2, num_nodes), -1, dtype=np.int64)
  keys = np.full((2, num_nodes), -1, dtype=np.int64)
  for node in range(num_nodes):
    parent = node_parent[node]
    if parent >= 0:
      last[0, node] = last[0, parent]
      last[1, node] = last[1, parent]
      mover = node_player[parent]
      if mover >= 0:
        last[mover, node] = (infoset_action_offset[node_infoset[parent]] +
                             node_action_index[node])
    player = node_player[node]
    if player == _TERMINAL:
      continue
    for p in range(2):
      if p == player:
        keys[p, node] = num_slots + 1 + node_infoset[node]
      else:
        keys[p, node] = last[p, node] + 1
  return keys


def history_node(tree, history):
  """The node of `tree` reached by `history` (a state or an action sequence)."""
  if isinstance(history, pyspiel.State):
    history = history.history()
  state = tree.game.new_initial_state()
  node = 0
  for action in history:
    legal = gadget_game.checked_legal(state, action, f"History {list(history)}")
    node = int(tree.node_first_child[node]) + legal.index(action)
    state.apply_action(action)
  return node


def node_states(tree, nodes):
  """{node: pyspiel state} for the given nodes of `tree`, rebuilt from the root."""
  wanted = set(int(n) for n in nodes)
  needed = np.zeros(tree.num_nodes, dtype=bool)
  for node in wanted:
    while node >= 0 and not needed[node]:
      needed[node] = True
      node = tree.node_parent[node]
  states = {}
  stack = [(0, tree.game.new_initial_state())]
  while stack:
    node, state = stack.pop()
    if node in wanted:
      states[node] = state.clone()
    first = int(tree.node_first_child[node])
    children = [c for c in range(first, first + int(tree.node_num_children[node]))
                if needed[c]]
    if not children:
      continue
    actions = ([a for a, _ in state.chance_outcomes()] if state.is_chance_node()
               else state.legal_actions())
    for child in children:
      stack.append((child, state.child(actions[child - first])))
  return states


def _descendants_closed(tree, members):
  for depth in range(1, tree.max_depth + 1):
    lo, hi = tree.level_offsets[depth], tree.level_offsets[depth + 1]
    members[lo:hi] |= members[tree.node_parent[lo:hi]]


def _subgame_closure(tree, members):
  """Smallest node set containing `members` closed under descendants and under both
  players' augmented information sets ([H] Def. 4)."""
  keys = _augmented_keys(tree.node_player, tree.node_infoset, tree.node_parent,
                         tree.node_action_index, tree.infoset_action_offset,
                         tree.num_infoset_actions)
  members = members.copy()
  while True:
    _descendants_closed(tree, members)
    grown = members.copy()
    for player_keys in keys:
      inside = np.unique(player_keys[members & (player_keys >= 0)])
      grown |= np.isin(player_keys, inside)
    if np.array_equal(grown, members):
      return members
    members = grown


def _minimal_nodes(tree, members):
  parents = tree.node_parent
  is_root = members & np.r_[True, ~members[parents[1:]]]
  return np.flatnonzero(is_root)


def _public_observation():
  return pyspiel.IIGObservationType(public_info=True, perfect_recall=True,
                                    private_info=pyspiel.PrivateInfoType.NONE)


def _check_infosets_closed(tree, members, target):
  """Raises ValueError if an information set has histories inside and outside."""
  inside = np.unique(tree.node_infoset[members & (tree.node_infoset >= 0)])
  leaking = np.flatnonzero(~members & np.isin(tree.node_infoset, inside))
  if len(leaking):
    key = tree.infoset_keys[tree.node_infoset[leaking[0]]]
    raise ValueError(f"The histories sharing the public state {target!r} do not form a "
                     f"subgame: information state {key!r} also has histories outside.")


def subgame_root_nodes(tree, history, by="augmented"):
  """Root nodes R of the subgame containing `history` (state or action sequence).

  by="augmented": the smallest subgame containing the history — closed under
  descendants and both players' augmented information sets ([H] Def. 3-4; Burch et
  al. 2014) — and R its minimal histories. A history right after a chance node or
  inside a player's run of moves is no root of its own ([S] §2); the closure then
  reaches back to the proper root. by="public": R = the first histories of the
  history's public state (perfect-recall public observation), as DeepStack's public
  subgames; checked to leave no information set partly outside. Returns a sorted int
  array of node indices.
  """
  start = history_node(tree, history)
  if tree.node_player[start] == _TERMINAL:
    raise ValueError(f"History {list(history)} is terminal; it is in no subgame.")
  members = np.zeros(tree.num_nodes, dtype=bool)
  if by == "augmented":
    members[start] = True
    return _minimal_nodes(tree, _subgame_closure(tree, members))
  if by != "public":
    raise ValueError(f"by must be 'augmented' or 'public', got {by!r}.")
  observer = make_observation(tree.game, _public_observation())
  states = node_states(tree, range(tree.num_nodes))
  target = observer.string_from(states[start], 0)
  for node, state in states.items():
    if tree.node_player[node] != _TERMINAL:
      members[node] = observer.string_from(state, 0) == target
  roots = _minimal_nodes(tree, members)
  subtree = np.zeros(tree.num_nodes, dtype=bool)
  subtree[roots] = True
  _descendants_closed(tree, subtree)
  _check_infosets_closed(tree, subtree, target)
  return roots


def _opponent_node_values(tree, slots, opponent, best_responding):
  if best_responding:
    _, slots = exact_br.best_response_slots(tree, slots, opponent)
  values = tree.node_values(slots)
  return values if opponent == 0 else tree.utility_sum - values


def _root_nodes(tree, subgame):
  check_tree(tree, subgame.game)
  return np.array([history_node(tree, h) for h in subgame.root_histories])


def opponent_root_values(tree, profile, subgame, best_responding=True):
  """{I: CBV(I)}, o's unnormalised counterfactual values at the subgame's roots.

  CBV(I) = Σ_{h∈I} w(h)·v_o(h) with the subgame's w and v_o(h) o's expected utility
  below h when p plays `profile` and o its counterfactual best response
  (best_responding=True, [H] §E.1) or its own strategy in `profile`.
  """
  slots = tree.as_slots(profile, "profile")
  values = _opponent_node_values(tree, slots, subgame.opponent, best_responding)
  result = dict.fromkeys(subgame.infosets, 0.0)
  for key, w, node in zip(subgame.opponent_keys, subgame.reach.tolist(),
                          _root_nodes(tree, subgame).tolist()):
    result[key] += w * values[node]
  return result


def subgame_from_trunk(tree, trunk, history, player=None, values="cbr",
                       by="augmented"):
  """The gadget_game.Subgame containing `history`, with inputs computed exactly from a trunk.

  `tree` is the original game's CompiledTree, `trunk` a profile (slot form or any
  policy.Policy). The resolving player defaults to the player acting at `history`
  ([S] §6). w(h) and o's reach come from the trunk; values="cbr" gives o's exact
  counterfactual best-response values, values="trunk" o's counterfactual values when
  it plays its trunk strategy ([S] §6). `by` chooses how roots are found
  (`subgame_root_nodes`).
  """
  slots = tree.as_slots(trunk, "trunk")
  start = history_node(tree, history)
  if player is None:
    player = int(tree.node_player[start])
    if player not in (0, 1):
      raise ValueError(f"No player acts at history {list(history)}; pass player.")
  if player not in (0, 1):
    raise ValueError(f"player must be 0 or 1, got {player!r}.")
  if values not in ("cbr", "trunk"):
    raise ValueError(f"values must be 'cbr' or 'trunk', got {values!r}.")
  roots = subgame_root_nodes(tree, history, by)
  reach = tree.node_reaches(slots)
  w = reach[player, roots] * reach[2, roots]
  states = node_states(tree, roots)
  node_values = _opponent_node_values(tree, slots, 1 - player, values == "cbr")
  cbv = {}
  for node, weight in zip(roots.tolist(), w.tolist()):
    key = states[node].information_state_string(1 - player)
    cbv[key] = cbv.get(key, 0.0) + weight * node_values[node]
  return gadget_game.Subgame(tree.game, player, [states[n] for n in roots.tolist()], w, cbv,
                 opponent_reach=reach[1 - player, roots])


def subgame_margin(tree, subgame, profile, before=None):
  """SM = min_{I: k_I>0} (CBV_before(I) − CBV_after(I)) ([H] Def. 5), unnormalised.

  CBV_after are o's exact counterfactual best-response values against p's strategy
  in `profile` (e.g. `combine(...)`); `before` defaults to the values the subgame
  carries (pass `opponent_root_values(tree, trunk, subgame)` when those are noisy).
  """
  before = subgame.opponent_values if before is None else before
  after = opponent_root_values(tree, profile, subgame)
  margins = [before[k] - after[k] for k in subgame.infosets
             if subgame.infoset_reach[k] > 0]
  return min(margins)
