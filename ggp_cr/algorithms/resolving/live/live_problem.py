"""The game a resolver solves: the whole game or a subgame's gadget, with its roots'
weights and the conversion of gadget values to the original game ([S] ch. 2, §3.3).
"""

from ggp_cr.algorithms.resolving import recall
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import generic_extraction


class Problem:
  """The whole game, or a gadget of a subgame, with what the estimates need.

  Per root j of the solved game (the game's root, or the subgame's roots): the root's
  original state, its w (`root_weight`) and opponent reach, and how an opponent gadget
  value converts to the original game: v_o = (v_gadget + shift_j) / scale_j.
  `prefix` is the depth of the roots in the solved game; `gate_depth` the depth of
  the resolve gadget's follow/terminate node (-1 if none).
  """

  def __init__(self, game, player, gadget=None):
    self.original = game
    self.player = player
    self.opponent = 1 - player
    self.gadget = gadget
    self.compiled = None
    if gadget is None:
      self.game = game
      self.prefix = 0
      self.gate_depth = -1
      self.root_states = [game.new_initial_state()]
      self.root_histories = [()]
      self.root_weight = [1.0]
      self.opponent_root_reach = [1.0]
      self.value_scale = [1.0]
      self.value_shift = [0.0]
      self.utility_sum = float(generic_extraction.game_utility_sum(game))
      return
    subgame = gadget.subgame
    self.game = gadget
    self.prefix = 1 if gadget.variant == "unsafe" else 2
    self.gate_depth = 1 if gadget.variant == "resolve" else -1
    self.root_states = subgame.root_states
    self.root_histories = list(subgame.root_histories)
    self.root_weight = subgame.reach.tolist()
    self.opponent_root_reach = (subgame.opponent_reach.tolist()
                                if subgame.opponent_reach is not None else
                                [1.0] * len(self.root_weight))
    scale, self.value_shift = gadget.root_payoffs()
    # (a root of k_I = 0 is outside the gadget: no value is collected there)
    self.value_scale = [value or 1.0 for value in scale]
    self.utility_sum = 0.0

  def initial_track(self):
    if self.prefix == 0 and self.game.new_initial_state().current_player() == \
        self.player:
      return recall.CURRENT
    return recall.FIRST

  def root_index(self, state):
    """Index of the root a history of the solved game (at or below its root) is in."""
    return 0 if self.gadget is None else state.root

  def original_state(self, state):
    """The original game's state of a history at or below a root."""
    return state if self.gadget is None else state.inner.state

  def terminate_value(self, state):
    """The opponent's gadget payoff for terminating at the resolve gadget's gate."""
    return self.gadget.terminate_utility[state.root_infoset()]

  def tree(self):
    """The solved game's compiled tree (the process cache for the whole game)."""
    if self.compiled is None:
      self.compiled = (compiled_tree.cached_tree(self.game) if self.gadget is None
                       else self.gadget.tree())
    return self.compiled
