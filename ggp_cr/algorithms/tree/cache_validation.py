"""Checks a tree cache file's arrays before any numba kernel reads them.

A cache (spec README.md, architecture principle 2) is a file anybody can edit: an
index out of range would make a kernel read or write outside an array (a segfault),
and edited utilities or chance probabilities would give wrong answers silently. So a
cache carries a SHA-256 checksum of its arrays, and `check_tree_arrays` verifies it and,
independently, every index range and invariant the kernels rely on. Each failure is a
ValueError saying what is wrong; `compile_game` then warns and rebuilds the tree.
"""

import hashlib

import numpy as np

# dtype each array must have (module docstring of flat_tree).
ARRAY_DTYPES = {
    "node_player": np.int8, "node_infoset": np.int32, "node_parent": np.int32,
    "node_first_child": np.int32, "node_num_children": np.int16,
    "node_action_index": np.int16, "node_chance_prob": np.float64,
    "node_utility": np.float64, "node_depth": np.int16, "level_offsets": np.int64,
    "infoset_player": np.int8, "infoset_num_actions": np.int16,
    "infoset_action_offset": np.int32, "infoset_actions": np.int32,
    "infoset_parent_slot": np.int32, "infoset_node": np.int32,
    "slot_infoset": np.int32,
}
_TERMINAL, _CHANCE = -4, -1
# Largest accepted |sum of a chance node's outcome probabilities - 1|.
CHANCE_SUM_TOLERANCE = 1e-7


def arrays_checksum(game_string, utility_sum, num_distinct_actions, keys_blob, arrays):
  """SHA-256 (hex) of everything a cache stores, in a fixed order."""
  digest = hashlib.sha256()
  digest.update(str(game_string).encode("utf-8") + b"\x00")
  digest.update(np.float64(utility_sum).tobytes())
  digest.update(np.int64(num_distinct_actions).tobytes())
  digest.update(np.ascontiguousarray(keys_blob).tobytes())
  for name in sorted(ARRAY_DTYPES):
    array = np.ascontiguousarray(arrays[name])
    digest.update(f"{name}:{array.dtype.str}:{array.shape}".encode("utf-8"))
    digest.update(array.tobytes())
  return digest.hexdigest()


def _fail(path, message):
  raise ValueError(f"Cache file {path} is invalid: {message}.")


def check_tree_arrays(path, arrays, num_distinct_actions):
  """Raises ValueError unless `arrays` form a tree the kernels can traverse safely.

  Checks dtypes and shapes, every index (children, parents, infosets, slots, action
  ids) against its array's length, that children are contiguous and point back to
  their parent, chance probabilities in [0, 1] summing to 1 at each chance node,
  finite utilities, and the breadth-first level and slot layout.
  """
  for name, dtype in ARRAY_DTYPES.items():
    array = arrays[name]
    if array.dtype != dtype or array.ndim != 1:
      _fail(path, f"{name} has dtype {array.dtype} and {array.ndim} dimensions, "
            f"expected a 1-d {np.dtype(dtype)} array")
  node_fields = [n for n in ARRAY_DTYPES if n.startswith("node_")]
  num_nodes = len(arrays["node_player"])
  if num_nodes == 0 or any(len(arrays[n]) != num_nodes for n in node_fields):
    _fail(path, "the per-node arrays are empty or differ in length")
  num_infosets = len(arrays["infoset_player"])
  infoset_fields = [n for n in ARRAY_DTYPES if n.startswith("infoset_") and
                    n != "infoset_actions"]
  if any(len(arrays[n]) != num_infosets for n in infoset_fields):
    _fail(path, "the per-infoset arrays differ in length")
  num_slots = len(arrays["infoset_actions"])
  if len(arrays["slot_infoset"]) != num_slots:
    _fail(path, "slot_infoset and infoset_actions differ in length")

  player = arrays["node_player"].astype(np.int64)
  first = arrays["node_first_child"].astype(np.int64)
  count = arrays["node_num_children"].astype(np.int64)
  parent = arrays["node_parent"].astype(np.int64)
  action_index = arrays["node_action_index"].astype(np.int64)
  infoset = arrays["node_infoset"].astype(np.int64)
  if not np.all(np.isin(player, (0, 1, _CHANCE, _TERMINAL))):
    _fail(path, "node_player holds values other than 0, 1, -1, -4")
  terminal = player == _TERMINAL
  if np.any(count[terminal] != 0) or np.any(count[~terminal] < 1):
    _fail(path, "node_num_children is not 0 exactly at terminals")
  inner = np.flatnonzero(~terminal)
  if np.any(first[inner] < 1) or np.any(first[inner] + count[inner] > num_nodes):
    _fail(path, "node_first_child / node_num_children point outside the tree")
  if count.sum() != num_nodes - 1:
    _fail(path, "the nodes do not form a tree (children counts do not add up)")
  # Every non-root node must be exactly the child its parent's range says it is.
  if parent[0] != -1 or action_index[0] != -1:
    _fail(path, "the root has a parent")
  rest = np.arange(1, num_nodes)
  if np.any(parent[rest] < 0) or np.any(parent[rest] >= num_nodes):
    _fail(path, "node_parent is out of range")
  if np.any(first[parent[rest]] + action_index[rest] != rest) or \
      np.any(action_index[rest] < 0) or np.any(action_index[rest] >= count[parent[rest]]):
    _fail(path, "node_parent / node_action_index disagree with the children ranges")

  utility = arrays["node_utility"]
  if not np.all(np.isfinite(utility)) or np.any(utility[~terminal] != 0):
    _fail(path, "node_utility is not finite, or nonzero off the terminals")
  probability = arrays["node_chance_prob"]
  under_chance = np.zeros(num_nodes, dtype=bool)
  under_chance[rest] = player[parent[rest]] == _CHANCE
  if np.any(probability[~under_chance] != 1.0) or \
      not np.all((probability >= 0) & (probability <= 1)):
    _fail(path, "node_chance_prob is not 1 off chance children or not in [0, 1]")
  chance = np.flatnonzero(player == _CHANCE)
  if len(chance):
    cumulative = np.concatenate(([0.0], np.cumsum(probability)))
    sums = cumulative[first[chance] + count[chance]] - cumulative[first[chance]]
    if np.any(np.abs(sums - 1.0) > CHANCE_SUM_TOLERANCE):
      _fail(path, "the outcome probabilities of a chance node do not sum to 1")

  depth = arrays["node_depth"].astype(np.int64)
  levels = arrays["level_offsets"]
  if depth[0] != 0 or np.any(depth[rest] != depth[parent[rest]] + 1) or \
      len(levels) != depth.max() + 2 or levels[0] != 0 or levels[-1] != num_nodes or \
      np.any(np.diff(levels) < 0) or \
      np.any(np.diff(depth) < 0):
    _fail(path, "node_depth / level_offsets are not a breadth-first layout")

  decision = player >= 0
  if np.any(infoset[~decision] != -1) or np.any(infoset[decision] < 0) or \
      np.any(infoset[decision] >= num_infosets):
    _fail(path, "node_infoset is out of range")
  iplayer = arrays["infoset_player"].astype(np.int64)
  num_actions = arrays["infoset_num_actions"].astype(np.int64)
  offset = arrays["infoset_action_offset"].astype(np.int64)
  if np.any(iplayer[infoset[decision]] != player[decision]) or \
      np.any(num_actions[infoset[decision]] != count[decision]):
    _fail(path, "a node's player or child count differs from its infoset's")
  expected_offset = np.concatenate(([0], np.cumsum(num_actions)[:-1]))
  if np.any(num_actions < 1) or np.any(offset != expected_offset) or \
      num_actions.sum() != num_slots:
    _fail(path, "infoset_action_offset / infoset_num_actions do not tile the slots")
  if np.any(arrays["slot_infoset"] != np.repeat(np.arange(num_infosets), num_actions)):
    _fail(path, "slot_infoset does not match the infoset slot ranges")
  actions = arrays["infoset_actions"]
  if np.any(actions < 0) or np.any(actions >= num_distinct_actions):
    _fail(path, "infoset_actions holds ids outside [0, num_distinct_actions)")
  parent_slot = arrays["infoset_parent_slot"]
  if np.any(parent_slot < -1) or np.any(parent_slot >= num_slots):
    _fail(path, "infoset_parent_slot is out of range")
  first_node = arrays["infoset_node"].astype(np.int64)
  if np.any(first_node < 0) or np.any(first_node >= num_nodes) or \
      np.any(infoset[first_node] != np.arange(num_infosets)):
    _fail(path, "infoset_node does not point to a node of its infoset")
  # ... and to its first (smallest) node: climbs stop there (flat_tree.actions_below).
  decision = np.flatnonzero(infoset >= 0)
  if np.any(first_node[infoset[decision]] > decision):
    _fail(path, "infoset_node is not the first node of its infoset")


def spot_check_against_game(path, tree, game, samples=64, seed=0):
  """Replays `samples` random nodes (seeded; the root and every terminal kind
  included) in `game` and compares player, children, chance probabilities, infoset
  key, legal actions and utility with the cached tree. Catches a structurally valid
  cache of another game or with edited values even when its checksum was recomputed.
  """
  rng = np.random.default_rng(seed)
  nodes = np.unique(np.concatenate((
      [0], rng.integers(0, tree.num_nodes, samples),
      rng.choice(np.flatnonzero(tree.node_player == _TERMINAL),
                 min(samples, int(np.sum(tree.node_player == _TERMINAL))),
                 replace=False))))
  for node in nodes.tolist():
    path_indices = []
    walk = node
    while walk > 0:
      path_indices.append(int(tree.node_action_index[walk]))
      walk = int(tree.node_parent[walk])
    state = game.new_initial_state()
    walk = 0
    for index in reversed(path_indices):
      if state.is_chance_node():
        outcomes = state.chance_outcomes()
        action, probability = outcomes[index]
        if abs(probability - tree.node_chance_prob[tree.node_first_child[walk] + index]) \
            > CHANCE_SUM_TOLERANCE:
          _fail(path, f"chance probabilities differ from {game}'s at node {walk}")
      else:
        action = state.legal_actions()[index]
      state.apply_action(action)
      walk = int(tree.node_first_child[walk]) + index
    player = int(tree.node_player[node])
    if state.is_terminal():
      if player != _TERMINAL or abs(state.returns()[0] - tree.node_utility[node]) > 1e-9:
        _fail(path, f"node {node} differs from {game}'s terminal (utility or kind)")
      continue
    legal = ([a for a, _ in state.chance_outcomes()] if state.is_chance_node()
             else state.legal_actions())
    if player != int(state.current_player()) or \
        len(legal) != int(tree.node_num_children[node]):
      _fail(path, f"node {node} differs from {game}'s (player or children)")
    if player >= 0:
      infoset = int(tree.node_infoset[node])
      offset = int(tree.infoset_action_offset[infoset])
      if tree.infoset_keys[infoset] != state.information_state_string(player) or \
          tree.infoset_actions[offset:offset + len(legal)].tolist() != legal:
        _fail(path, f"infoset {infoset} differs from {game}'s (key or actions)")
