"""Input checks shared by the best-response functions (spec algorithms.md "Best responses").

A best response needs only the opponent's part of the fixed policy, so only the
opponent's information sets are converted and checked: a missing information state, a
negative probability, positive probability on an illegal action, or probabilities that
do not sum to one each raise a ValueError naming the information state.
"""

import numpy as np
from open_spiel.python import policy as policy_lib

# Largest accepted |sum of an information set's probabilities - 1|.
SUM_TOLERANCE = 1e-6


def check_player(player):
  """Raises ValueError unless `player` is 0 or 1 (the responder of a 2-player game)."""
  if isinstance(player, (bool, np.bool_)) or not isinstance(player, (int, np.integer)):
    raise ValueError(f"player must be the integer 0 or 1, got {player!r}.")
  if player not in (0, 1):
    raise ValueError(f"player must be 0 or 1 (a two-player game), got {player}.")
  return int(player)


def opponent_slots(tree, policy, player):
  """The fixed policy of `player`'s opponent in slot form, checked.

  `policy` is an open_spiel policy.Policy (a TabularPolicy is read by key) or a
  strategy in slot form (a float vector of length `tree.num_infoset_actions`). The
  returned vector holds the opponent's probabilities at the opponent's information
  sets and the uniform strategy at `player`'s (which no best response reads).
  """
  player = check_player(player)
  opponent = 1 - player
  infosets = np.flatnonzero(tree.infoset_player == opponent)
  slots = tree.uniform_slots()
  if isinstance(policy, np.ndarray):
    policy = tree.check_slots(policy, "A policy in slot form")
    own = tree.infoset_player[tree.slot_infoset] == opponent
    slots[own] = policy[own]
  elif (isinstance(policy, policy_lib.TabularPolicy) and
        type(policy).action_probabilities is
        policy_lib.TabularPolicy.action_probabilities):
    _read_tabular(tree, policy, infosets, slots)
  elif isinstance(policy, policy_lib.Policy):
    for infoset, state in tree.infoset_states(infosets):
      try:
        probabilities = policy.action_probabilities(state, opponent)
      except (KeyError, IndexError) as error:
        raise ValueError(f"The policy has no action probabilities for player "
                         f"{opponent}'s information state "
                         f"{tree.infoset_keys[infoset]!r}: {error!r}") from None
      _fill(tree, infoset, probabilities, slots)
  else:
    raise ValueError(f"policy must be an open_spiel policy.Policy or a slot vector, "
                     f"got {type(policy).__name__}.")
  _check_distributions(tree, infosets, slots)
  return slots


def _read_tabular(tree, policy, infosets, slots):
  """Reads the opponent's rows of a TabularPolicy, refusing mass on illegal actions."""
  table = policy.action_probability_array
  lookup = policy.state_lookup
  keys = tree.infoset_keys
  rows = np.array([lookup.get(keys[i], -1) for i in infosets.tolist()], dtype=np.int64)
  if np.any(rows < 0):
    infoset = int(infosets[np.flatnonzero(rows < 0)[0]])
    raise ValueError(f"The policy has no entry for player "
                     f"{tree.infoset_player[infoset]}'s information state "
                     f"{keys[infoset]!r}.")
  if len(infosets) and table.shape[1] <= tree.infoset_actions.max():
    raise ValueError(f"The policy's table has {table.shape[1]} actions; "
                     f"{tree.game_string} has {tree.num_distinct_actions}.")
  row_of_infoset = np.full(tree.num_infosets, -1, dtype=np.int64)
  row_of_infoset[infosets] = np.arange(len(infosets))
  mine = np.flatnonzero(row_of_infoset[tree.slot_infoset] >= 0)
  opponent_table = table[rows]
  slots[mine] = opponent_table[row_of_infoset[tree.slot_infoset[mine]],
                               tree.infoset_actions[mine]]
  illegal_mass = opponent_table.copy()
  illegal_mass[row_of_infoset[tree.slot_infoset[mine]], tree.infoset_actions[mine]] = 0
  if np.any(illegal_mass > 0):
    row, action = np.argwhere(illegal_mass > 0)[0]
    raise ValueError(f"The policy gives probability {opponent_table[row, action]} to "
                     f"illegal action {action} in information state "
                     f"{keys[infosets[row]]!r}.")


def _fill(tree, infoset, probabilities, slots):
  offset = int(tree.infoset_action_offset[infoset])
  actions = tree.infoset_actions[
      offset:offset + int(tree.infoset_num_actions[infoset])].tolist()
  slots[offset:offset + len(actions)] = 0.0
  for action, probability in probabilities.items():
    if action in actions:
      slots[offset + actions.index(action)] = probability
    elif probability > 0:
      raise ValueError(f"The policy gives probability {probability} to illegal action "
                       f"{action} in information state {tree.infoset_keys[infoset]!r}.")


def _check_distributions(tree, infosets, slots):
  """Each of `infosets` must hold finite, non-negative probabilities summing to one."""
  if len(infosets) == 0:
    return
  mine = np.isin(tree.slot_infoset, infosets)
  bad = mine & ~(np.isfinite(slots) & (slots >= 0))
  if bad.any():
    slot = int(np.flatnonzero(bad)[0])
    infoset = int(tree.slot_infoset[slot])
    raise ValueError(f"The policy gives probability {slots[slot]} to action "
                     f"{tree.infoset_actions[slot]} in information state "
                     f"{tree.infoset_keys[infoset]!r}; probabilities must be in [0, 1].")
  sums = np.add.reduceat(slots, tree.infoset_action_offset)[infosets]
  wrong = np.abs(sums - 1.0) > SUM_TOLERANCE
  if wrong.any():
    index = int(np.flatnonzero(wrong)[0])
    raise ValueError(f"The policy's probabilities in information state "
                     f"{tree.infoset_keys[infosets[index]]!r} sum to {sums[index]!r}, "
                     f"not 1 (tolerance {SUM_TOLERANCE}).")
