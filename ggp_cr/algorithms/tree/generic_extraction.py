"""The generic extraction of any pyspiel game's compiled tree (flat_tree.py).

Spec README.md, architecture principle 2: a depth-first walk of the live game records
each history once (`walk`), then the histories and information sets are renumbered
breadth-first (`renumber_breadth_first`). compile_game (compiled_tree.py) runs it
serially; parallel_extraction.py walks subtrees in worker processes and merges them
through the same renumbering, so both give the same arrays bit for bit.
"""

import array

import numpy as np
import pyspiel

from ggp_cr.algorithms import progress_bars
from ggp_cr.algorithms.tree import flat_tree
from ggp_cr.algorithms.tree import tree_limits

_PROGRESS_STEP = 65_536  # histories between progress-bar updates

_TERMINAL = int(pyspiel.PlayerId.TERMINAL)
_CHANCE = int(pyspiel.PlayerId.CHANCE)


TreeTooLarge = tree_limits.TreeTooLarge


def game_utility_sum(game):
  """The constant sum of both players' utilities (0 in zero-sum games)."""
  return game.utility_sum() if (
      game.get_type().utility == pyspiel.GameType.Utility.CONSTANT_SUM) else 0.0


def extract(game, game_string, progress, max_nodes=None):
  """Depth-first walk recording each history once, then breadth-first renumbering;
  TreeTooLarge past `max_nodes` histories (see walk)."""
  utility_sum = game_utility_sum(game)
  walked = walk(game, game_string, utility_sum,
                 [(game.new_initial_state(), -1, -1, 1.0, 0, -1, -1)], progress,
                 max_nodes=max_nodes)
  return renumber_breadth_first(game, game_string, utility_sum, *walked)


def walk(game, game_string, utility_sum, roots, progress, cut_depth=2**15,
          frontier=None, max_nodes=None, estimate=True, leaf=None):
  """Records every history below `roots` once, in depth-first preorder.

  `roots` yields (state, parent, action index, chance probability, depth, own last
  slot of player 0, of player 1); the walk consumes the states. Only the
  root-to-node stack holds states; the last child of a node reuses its parent's
  state. Children at depth `cut_depth` are not entered: (action history, parent,
  action index, chance probability, last slot of player 0, of player 1) is appended
  to `frontier` for each instead. Imperfect recall is detected when two histories of
  one infoset disagree on the player's previous (infoset, action) or on the legal
  actions. Raises TreeTooLarge once more than `max_nodes` histories are recorded, or
  at tree_limits.CHECK_AFTER histories if `estimate` and the game's estimated size
  is far larger. `leaf`, if given, is called once per history, in preorder, with
  (state, parent node); a number returned records a non-terminal history as a
  terminal of that utility for player 0 (a depth limit's leaf).
  Returns the preorder arrays and the per-infoset lists.
  """
  parents = array.array("i")
  action_indices = array.array("h")
  players = array.array("b")
  infosets = array.array("i")
  num_children = array.array("h")
  chance_probs = array.array("d")
  utilities = array.array("d")
  depths = array.array("h")
  lookup = ({}, {})
  keys = []
  infoset_player = []
  infoset_offset = []
  infoset_parent_slot = []
  infoset_actions = []        # one tuple per infoset, interned
  interned_actions = {}
  num_slots = 0
  meter = progress_bars.bar(None, "history", "extracting", shown=bool(progress))
  check_at = None if max_nodes is None else min(max_nodes + 1, tree_limits.CHECK_AFTER)

  # Frame: [state, actions, probs or None, next child, node, depth, slot base or -1,
  #         player, own last slot of player 0, of player 1].
  stack = []
  node = 0
  for state, parent, action_index, prob, depth, last0, last1 in roots:
    while True:
      # Record `state` as history `node`.
      parents.append(parent)
      action_indices.append(action_index)
      chance_probs.append(prob)
      depths.append(depth)
      value = None if leaf is None else leaf(state, parent)
      if value is not None and not state.is_terminal():
        players.append(_TERMINAL)
        infosets.append(-1)
        num_children.append(0)
        utilities.append(value)
      elif state.is_terminal():
        returns = state.returns()
        if abs(returns[0] + returns[1] - utility_sum) > 1e-9 * (1 + abs(returns[0])):
          raise ValueError(
              f"{game_string} is not zero-sum: terminal returns {returns} sum to "
              f"{returns[0] + returns[1]}, not {utility_sum}.")
        players.append(_TERMINAL)
        infosets.append(-1)
        num_children.append(0)
        utilities.append(returns[0])
      elif state.is_chance_node():
        outcomes = state.chance_outcomes()
        players.append(_CHANCE)
        infosets.append(-1)
        num_children.append(len(outcomes))
        utilities.append(0.0)
        stack.append([state, [a for a, _ in outcomes], [p for _, p in outcomes], 0,
                      node, depth, -1, -1, last0, last1])
      else:
        player = state.current_player()
        key = state.information_state_string(player)
        legal = tuple(state.legal_actions())
        last = last1 if player else last0
        infoset = lookup[player].get(key)
        if infoset is None:
          infoset = len(keys)
          lookup[player][key] = infoset
          keys.append(key)
          infoset_player.append(player)
          infoset_offset.append(num_slots)
          infoset_parent_slot.append(last)
          infoset_actions.append(interned_actions.setdefault(legal, legal))
          num_slots += len(legal)
        elif infoset_parent_slot[infoset] != last or infoset_actions[infoset] != legal:
          raise ValueError(recall_message(game_string, player, key, infoset_actions,
                                           infoset_parent_slot, infoset, legal, last))
        players.append(player)
        infosets.append(infoset)
        num_children.append(len(legal))
        utilities.append(0.0)
        stack.append([state, legal, None, 0, node, depth, infoset_offset[infoset],
                      player, last0, last1])
      node += 1
      if check_at is not None and node >= check_at:
        if node > max_nodes:
          raise tree_limits.too_large(game_string, node, max_nodes)
        if node == tree_limits.CHECK_AFTER and estimate:
          tree_limits.refuse_if_far_larger(game, max_nodes)
      if node % _PROGRESS_STEP == 0:
        meter.update(_PROGRESS_STEP)
      # Next history in depth-first order.
      while stack:
        frame = stack[-1]
        actions = frame[1]
        action_index = frame[3]
        if action_index == len(actions):
          stack.pop()
          continue
        frame[3] = action_index + 1
        parent, depth = frame[4], frame[5] + 1
        last0, last1 = frame[8], frame[9]
        if frame[2] is not None:
          prob = frame[2][action_index]
        else:
          prob = 1.0
          if frame[7]:
            last1 = frame[6] + action_index
          else:
            last0 = frame[6] + action_index
        if depth == cut_depth:
          frontier.append((frame[0].history() + [actions[action_index]], parent,
                           action_index, prob, last0, last1))
          continue
        state = frame[0]
        if action_index + 1 == len(actions):
          stack.pop()
          state.apply_action(actions[action_index])
        else:
          state = state.child(actions[action_index])
        break
      else:
        break
  del lookup, interned_actions
  if max(num_children, default=0) >= 2**15:
    raise ValueError(f"{game_string} has a node with more than 32767 children.")
  meter.close()
  return (parents, action_indices, players, infosets, num_children, chance_probs,
          utilities, depths, keys, infoset_player, infoset_offset, infoset_parent_slot,
          infoset_actions)


def recall_message(game_string, player, key, infoset_actions, infoset_parent_slot,
                    infoset, legal, last):
  if infoset_actions[infoset] != legal:
    what = (f"legal actions {list(infoset_actions[infoset])} and {list(legal)} differ")
  else:
    what = (f"the player's own previous decision differs (slots "
            f"{infoset_parent_slot[infoset]} and {last})")
  return (f"{game_string} does not have perfect recall: two histories of player "
          f"{player}'s information state {key!r} disagree: {what}.")


def breadth_first_order(depths):
  """The preorder nodes in breadth-first order and each one's breadth-first number,
  from the preorder depths (a stable sort by depth)."""
  order = np.argsort(np.frombuffer(depths, dtype=np.int16), kind="stable").astype(
      np.int32)
  new_index = np.empty(len(order), dtype=np.int32)
  new_index[order] = np.arange(len(order), dtype=np.int32)
  return order, new_index


def renumber_breadth_first(game, game_string, utility_sum, parents, action_indices,
                            players, infosets, num_children, chance_probs, utilities,
                            depths, keys, infoset_player, infoset_offset,
                            infoset_parent_slot, infoset_actions, numbering=None):
  """Depth-first (preorder) arrays -> the breadth-first flat_tree.CompiledTree.

  A stable sort of the preorder by depth is the breadth-first order with each
  node's children contiguous and in order (`numbering`: breadth_first_order's
  result if the caller has it already).
  """
  depth = np.frombuffer(depths, dtype=np.int16)
  order, new_index = (breadth_first_order(depths) if numbering is None
                      else numbering)
  num_nodes = len(order)
  del depths

  def take(buffer, dtype):
    return np.frombuffer(buffer, dtype=dtype)[order]

  arrays = {"node_depth": depth[order]}
  old_parent = take(parents, np.int32)
  del parents
  arrays["node_parent"] = np.where(old_parent >= 0, new_index[old_parent], -1).astype(
      np.int32)
  del old_parent, new_index
  arrays["node_action_index"] = take(action_indices, np.int16)
  arrays["node_player"] = take(players, np.int8)
  arrays["node_num_children"] = take(num_children, np.int16)
  arrays["node_chance_prob"] = take(chance_probs, np.float64)
  arrays["node_utility"] = take(utilities, np.float64)
  old_infoset = take(infosets, np.int32)
  del action_indices, players, num_children, chance_probs, utilities, infosets, order

  first_child = np.zeros(num_nodes, dtype=np.int32)
  is_first = arrays["node_action_index"] == 0
  first_child[arrays["node_parent"][is_first]] = np.flatnonzero(is_first)
  arrays["node_first_child"] = first_child
  arrays["level_offsets"] = np.concatenate(
      ([0], np.cumsum(np.bincount(arrays["node_depth"])))).astype(np.int64)

  # Infosets in breadth-first order of their first history.
  num_infosets = len(keys)
  decision = np.flatnonzero(old_infoset >= 0)
  first_node = np.full(num_infosets, num_nodes, dtype=np.int64)
  np.minimum.at(first_node, old_infoset[decision], decision)
  infoset_order = np.argsort(first_node, kind="stable")
  renumber = np.empty(num_infosets, dtype=np.int32)
  renumber[infoset_order] = np.arange(num_infosets, dtype=np.int32)
  arrays["node_infoset"] = np.where(
      old_infoset >= 0, renumber[np.maximum(old_infoset, 0)], -1).astype(np.int32)
  arrays["infoset_node"] = first_node[infoset_order].astype(np.int32)
  old_num_actions = np.array([len(a) for a in infoset_actions], dtype=np.int16)
  num_actions = old_num_actions[infoset_order]
  offset = np.zeros(num_infosets, dtype=np.int32)
  np.cumsum(num_actions[:-1], out=offset[1:])
  arrays["infoset_player"] = np.array(infoset_player, dtype=np.int8)[infoset_order]
  arrays["infoset_num_actions"] = num_actions
  arrays["infoset_action_offset"] = offset
  slot_infoset = np.repeat(np.arange(num_infosets, dtype=np.int32), num_actions)
  arrays["slot_infoset"] = slot_infoset
  flat_actions = np.fromiter(
      (a for i in infoset_order.tolist() for a in infoset_actions[i]), dtype=np.int32,
      count=int(num_actions.sum()))
  arrays["infoset_actions"] = flat_actions
  # Old slot -> new slot, for the parent slots.
  old_offset = np.array(infoset_offset, dtype=np.int64)
  old_slot_infoset = np.repeat(np.arange(num_infosets), old_num_actions)
  old_slot_to_new = (offset[renumber[old_slot_infoset]] +
                     (np.arange(len(old_slot_infoset)) - old_offset[old_slot_infoset]))
  old_parent_slot = np.array(infoset_parent_slot, dtype=np.int64)[infoset_order]
  arrays["infoset_parent_slot"] = np.where(
      old_parent_slot >= 0, old_slot_to_new[np.maximum(old_parent_slot, 0)],
      -1).astype(np.int32)
  ordered_keys = [keys[i] for i in infoset_order.tolist()]
  tree = flat_tree.CompiledTree(game_string, utility_sum, game.num_distinct_actions(),
                      ordered_keys, arrays)
  tree._game = game  # pylint: disable=protected-access
  return tree
