"""Information-set targeting on the compiled tree ([S] §1.4.1; Lisý et al. 2015).

`mark_target` marks the target information set's nodes and their ancestors, the
prefixes of the target's histories, which compiled_outcome_sampling's episodes keep
to when targeted; `target_sums` walks those nodes for OOS's re-weighting, as
outcome_sampling.target_weight walks the live histories. Convention: node_target
holds OFF_TARGET, TO_TARGET (an ancestor) or IN_TARGET per node.
"""

import numba
import numpy as np

OFF_TARGET = 0
TO_TARGET = 1
IN_TARGET = 2
CHANCE = -1  # pyspiel.PlayerId.CHANCE, as the compiled tree stores it


@numba.njit(cache=True)
def mark_target(node_infoset, node_parent, infoset, node_target):
  """Marks `infoset`'s nodes IN_TARGET and their ancestors TO_TARGET in
  node_target (all OFF_TARGET before)."""
  for node in range(len(node_infoset)):
    if node_infoset[node] == infoset:
      node_target[node] = IN_TARGET
      parent = node_parent[node]
      while parent >= 0 and node_target[parent] == OFF_TARGET:
        node_target[parent] = TO_TARGET
        parent = node_parent[parent]


@numba.njit(cache=True)
def target_sums(node_player, node_first_child, node_num_children, node_chance_prob,
                node_infoset, infoset_action_offset, node_target, in_memory,
                cumulative, max_depth, max_actions):
  """(S1, S2) of OOS's re-weighting (outcome_sampling.target_weight, the same walk in
  the same order): the targeted and untargeted probabilities of reaching the target
  information set's nodes, walking the target-consistent nodes from the root with
  chance probabilities and the average strategy, only through information sets in
  memory."""
  sums1 = 0.0
  sums2 = 0.0
  size = (max_depth + 1) * max_actions + 1
  stack_node = np.empty(size, np.int64)
  stack_s1 = np.empty(size)
  stack_s2 = np.empty(size)
  probs = np.empty(max_actions)
  stack_node[0] = 0
  stack_s1[0] = 1.0
  stack_s2[0] = 1.0
  top = 1
  while top > 0:
    top -= 1
    node = stack_node[top]
    s1 = stack_s1[top]
    s2 = stack_s2[top]
    if node_target[node] == IN_TARGET:
      sums1 += s1
      sums2 += s2
      continue
    first = node_first_child[node]
    count = node_num_children[node]
    if node_player[node] == CHANCE:
      for a in range(count):
        probs[a] = node_chance_prob[first + a]
    else:
      infoset = node_infoset[node]
      if not in_memory[infoset]:
        continue
      offset = infoset_action_offset[infoset]
      cumulative_total = 0.0
      for a in range(count):
        cumulative_total += cumulative[offset + a]
      for a in range(count):
        probs[a] = (cumulative[offset + a] / cumulative_total if cumulative_total > 0.0
                    else 1.0 / count)
    total = 0.0
    for a in range(count):
      if node_target[first + a] != OFF_TARGET:
        total += probs[a]
    if total <= 0.0:
      continue
    for a in range(count - 1, -1, -1):  # popped in action order
      if node_target[first + a] != OFF_TARGET and probs[a] > 0.0:
        stack_node[top] = first + a
        stack_s1[top] = s1 * probs[a] / total
        stack_s2[top] = s2 * probs[a]
        top += 1
  return sums1, sums2
