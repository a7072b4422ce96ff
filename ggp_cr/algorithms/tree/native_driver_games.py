"""The native extractors and state keys of the games counted by native_driver.py
(python_leduc, python_ii_goofspiel: their rules and keys run through the driver;
python_latent_ttt: its count, then its own fill and keys).

Spec README.md, architecture principle 2; see native_extraction.py. Imports run one way:
the games' modules (their numba `children` and `seen`) <- native_driver.py (which
dispatches to them by number) <- this module, which native_extraction.py loads for all
three.
"""

import numpy as np

from ggp_cr.algorithms.tree import native_driver
from ggp_cr.algorithms.tree import native_extraction
from ggp_cr.algorithms.tree import native_ii_goofspiel
from ggp_cr.algorithms.tree import native_latent_ttt
from ggp_cr.algorithms.tree import native_leduc
from ggp_cr.algorithms.tree import tree_limits


@native_extraction.register("python_leduc", native_leduc.supports)
def extract_leduc(game, max_nodes=None):
  """The CompiledTree of python_leduc, all six parameters (within `supports`);
  TreeTooLarge past `max_nodes` histories, before the tree is allocated."""
  params, root_state, root_player, max_children = native_leduc.driver_setup(game)
  max_depth = 3 + 2 * game.max_round_length
  num_nodes = tree_limits.checked_count(
      game, lambda cap: native_driver.count(native_driver.LEDUC, root_state, root_player,
                                            params, max_children, max_depth, cap),
      max_nodes)
  arrays, chance_prob, inf_seen = native_driver.fill(
      native_driver.LEDUC, num_nodes, root_state, root_player, params, max_children, True)
  keys, length = native_leduc.write_keys(game, arrays[8], arrays[12], inf_seen,
                                         arrays[10], arrays[11])
  return native_extraction.tree_from_filled(game, arrays + (keys, length), chance_prob)


@native_extraction.register_state_keys("python_leduc")
def leduc_state_keys(tree):
  """The non-acting player's keys and extra strings (native_extraction.state_keys):
  its string is written like an information set's key from its previous own slot and
  what it saw since ("P1 card:2 R1:" where player 0 opens, "P0 card:1 R1:r" after
  player 0's raise)."""
  params, root_state, _, max_children = native_leduc.driver_setup(tree.game)
  other, inf_seen, extra = native_driver.tree_identities(
      native_driver.LEDUC, tree, root_state, params, max_children)
  players = np.concatenate([tree.infoset_player, extra[0]])
  keys, length = native_leduc.write_keys(
      tree.game, players, np.concatenate([tree.infoset_parent_slot, extra[1]]),
      np.concatenate([inf_seen, extra[2]]), tree.infoset_action_offset,
      tree.infoset_actions)
  return other, native_extraction.decode_tail(keys, length, tree.num_infosets)


@native_extraction.register("python_ii_goofspiel", native_ii_goofspiel.supports)
def extract_ii_goofspiel(game, max_nodes=None):
  """The CompiledTree of python_ii_goofspiel, any points_order and returns_type;
  TreeTooLarge past `max_nodes` histories, before the tree is allocated."""
  params, root_state, root_player, n = native_ii_goofspiel.driver_setup(game)
  num_nodes = tree_limits.checked_count(
      game, lambda cap: native_driver.count(native_driver.II_GOOFSPIEL, root_state,
                                            root_player, params, n, 3 * n + 1, cap),
      max_nodes)
  arrays, chance_prob, inf_seen = native_driver.fill(
      native_driver.II_GOOFSPIEL, num_nodes, root_state, root_player, params, n, False)
  keys = native_ii_goofspiel.key_list(arrays[8], arrays[12], inf_seen, arrays[10],
                                      arrays[11], 0)
  return native_extraction.tree_from_arrays(game, arrays, keys, chance_prob)


@native_extraction.register_state_keys("python_ii_goofspiel")
def ii_goofspiel_state_keys(tree):
  """The non-acting player's keys and extra strings (native_extraction.state_keys).
  Player 1 where player 0 bids is in the information set it bids from next (if it
  has one); player 0 where player 1 bids has its previous key + " Bet(b)"."""
  params, root_state, _, max_children = native_ii_goofspiel.driver_setup(tree.game)
  other, inf_seen, extra = native_driver.tree_identities(
      native_driver.II_GOOFSPIEL, tree, root_state, params, max_children)
  return other, native_ii_goofspiel.key_list(
      np.concatenate([tree.infoset_player, extra[0]]),
      np.concatenate([tree.infoset_parent_slot, extra[1]]),
      np.concatenate([inf_seen, extra[2]]), tree.infoset_action_offset,
      tree.infoset_actions, tree.num_infosets)


@native_extraction.register("python_latent_ttt")
def extract_latent_ttt(game, max_nodes=None):
  """The CompiledTree of python_latent_ttt (no parameters); TreeTooLarge past
  `max_nodes` histories, before the tree is allocated."""
  params, root_state, root_player, max_children = native_latent_ttt.driver_setup(game)
  num_nodes = tree_limits.checked_count(
      game, lambda cap: native_driver.count(native_driver.LATENT_TTT, root_state,
                                            root_player, params, max_children,
                                            game.max_game_length(), cap),
      max_nodes)
  return native_extraction.tree_from_filled(game, native_latent_ttt.fill(num_nodes))


native_extraction.register_state_keys("python_latent_ttt")(native_latent_ttt.state_keys)
