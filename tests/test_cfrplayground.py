"""Tests of CFR as the thesis's Java code runs it (GeneralCFRSolver(cfrplayground=True)).

OpenSpiel has no peer, so `_Reference` is an independent plain-Python recursion over
pyspiel states, written from the description of CFRPlayground's DepthLimitedCFRSolver
in cfr/cfr.py's module docstring; the thesis's own figures ([S] §6) are the end check.
"""

from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import exploitability
import numpy as np
import pyspiel
import pytest

from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.tree import compiled_tree


def _expand(state):
  """The game tree below `state` as nested tuples (built once, walked every pass)."""
  if state.is_terminal():
    return ("terminal", state.returns()[0])
  if state.is_chance_node():
    return ("chance", [(probability, _expand(state.child(action)))
                       for action, probability in state.chance_outcomes()])
  return ("decision", state.current_player(), state.information_state_string(),
          [_expand(state.child(action)) for action in state.legal_actions()])


class _Reference:
  """CFRPlayground's CFR, one recursive pass per iteration (see the module docstring)."""

  def __init__(self, game, plus, alternating, gamma):
    self.root = _expand(game.new_initial_state())
    self.plus, self.alternating, self.gamma = plus, alternating, gamma
    self.regrets, self.strategy, self.cumulative, self.owner = {}, {}, {}, {}
    self.iteration = 0

  def _info(self, key, player, num_actions):
    if key not in self.strategy:
      self.owner[key] = player
      self.regrets[key] = [0.0] * num_actions
      self.strategy[key] = [1.0 / num_actions] * num_actions
      self.cumulative[key] = [1.0 / num_actions] * num_actions
    return self.strategy[key]

  def _walk(self, node, reach, chance):
    if node[0] == "terminal":
      return node[1]
    if node[0] == "chance":
      return sum(p * self._walk(child, reach, chance * p) for p, child in node[1])
    _, player, key, children = node
    strategy = self._info(key, player, len(children))
    values = []
    for action, child in enumerate(children):
      child_reach = list(reach)
      child_reach[player] *= strategy[action]
      values.append(self._walk(child, child_reach, chance))
    value = sum(p * v for p, v in zip(strategy, values))
    if player in self.updated:
      sign = 1.0 if player == 0 else -1.0
      opponent = chance * reach[1 - player]
      regrets = self.regrets[key]
      for action, action_value in enumerate(values):
        regrets[action] += opponent * sign * (action_value - value)
        if self.plus:
          regrets[action] = max(regrets[action], 0.0)
      decay = (self.iteration / (self.iteration + 1.0))**self.gamma
      own = chance * reach[player]
      sums = self.cumulative[key]
      for action, probability in enumerate(strategy):
        sums[action] = decay * sums[action] + own * probability
    return value

  def iterate(self):
    self.iteration += 1
    self.updated = {0, 1}
    if self.alternating:
      self.updated = {1 if self.iteration % 2 else 0}
    self._walk(self.root, [1.0, 1.0], 1.0)
    for key, regrets in self.regrets.items():
      if self.owner[key] in self.updated:
        positive = [max(r, 0.0) for r in regrets]
        total = sum(positive)
        self.strategy[key] = ([r / total for r in positive] if total > 0 else
                              [1.0 / len(regrets)] * len(regrets))

  def average(self, key):
    total = sum(self.cumulative[key])
    return [s / total for s in self.cumulative[key]]


def _reference_slots(tree, reference, which):
  slots = np.empty(tree.num_infoset_actions)
  for infoset, key in enumerate(tree.infoset_keys):
    offset = tree.infoset_action_offset[infoset]
    values = (reference.average(key) if which == "average" else
              reference.strategy[key])
    slots[offset:offset + len(values)] = values
  return slots


# Kuhn: chance weights; SMALL_LEDUC: chance probabilities differ inside an information
# set; II-Goofspiel(4): many histories per information set, where clipping and
# discounting per history differ from once per iteration.
@pytest.mark.parametrize("game_string,plus,alternating,gamma,iterations", [
    ("kuhn_poker", True, True, 1.0, 25),
    ("kuhn_poker", False, False, 0.0, 25),
    ("python_leduc(cards_per_suit=2,max_raises=1)", True, True, 1.0, 15),
    ("python_leduc(cards_per_suit=2,max_raises=1)", True, False, 2.0, 15),
    ("python_ii_goofspiel(num_cards=4)", True, True, 1.0, 20),
])
def test_matches_independent_reference(game_string, plus, alternating, gamma,
                                       iterations):
  game = pyspiel.load_game(game_string)
  tree = compiled_tree.cached_tree(game)
  ours = cfr.GeneralCFRSolver(tree, "rm+" if plus else "rm", alternating, gamma,
                              cfrplayground=True)
  reference = _Reference(game, plus, alternating, gamma)
  for _ in range(iterations):
    ours.evaluate_and_update_policy()
    reference.iterate()
  np.testing.assert_allclose(ours.average_strategy_slots(),
                             _reference_slots(tree, reference, "average"),
                             rtol=0, atol=1e-12)
  np.testing.assert_allclose(ours.current_strategy_slots(),
                             _reference_slots(tree, reference, "current"),
                             rtol=0, atol=1e-12)
  assert ours.visited_states == iterations * tree.num_nodes


def test_nash_conv_equals_openspiel_on_the_reference_average():
  game = pyspiel.load_game("python_ii_goofspiel(num_cards=4)")
  tree = compiled_tree.cached_tree(game)
  ours = registry.make_solver("cfrplayground-cfr+", game)
  reference = _Reference(game, True, True, 1.0)
  for _ in range(20):
    ours.evaluate_and_update_policy()
    reference.iterate()
  policy = policy_lib.TabularPolicy(game)
  for key, row in policy.state_lookup.items():
    legal = np.flatnonzero(policy.legal_actions_mask[row])
    policy.action_probability_array[row] = 0.0
    policy.action_probability_array[row, legal] = reference.average(key)
  expected = exploitability.nash_conv(game, policy)
  actual = exact_br.nash_conv_slots(tree, ours.average_strategy_slots()).nash_conv
  assert actual == pytest.approx(expected, abs=1e-9)
  # Clipping and discounting per history matter here: OpenSpiel's CFR+ after the
  # same 10 iterations per player is another strategy.
  standard = cfr.CFRPlusSolver(tree)
  standard.iterate(10)
  assert abs(exact_br.nash_conv_slots(tree, standard.average_strategy_slots()).nash_conv
             - actual) > 1e-3


def test_reproduces_the_thesis_ii_goofspiel_5_trunk():
  # [S] §6, Fig. 6.7: "CFR+ in 420 iterations (or 2.3*10^7 visited states) and its
  # exploitability is 0.0289" (CFRPlayground's exploitability is NashConv).
  game = pyspiel.load_game("python_ii_goofspiel(num_cards=5)")
  solver = registry.make_solver("cfrplayground-cfr+", game)
  solver.iterate(420)
  nash_conv = exact_br.nash_conv_slots(solver.tree,
                                       solver.average_strategy_slots()).nash_conv
  assert round(nash_conv, 4) == 0.0289
  assert solver.visited_states == 420 * 55_731 == 23_407_020


def test_alternating_iterations_update_player_1_first():
  tree = compiled_tree.cached_tree(pyspiel.load_game("kuhn_poker"))
  solver = cfr.GeneralCFRSolver(tree, "rm+", cumulative_strategy_exponent=1.0,
                                cfrplayground=True)
  uniform = solver.current_strategy_slots()
  solver.evaluate_and_update_policy()
  changed = solver.current_strategy_slots() != uniform
  players = tree.infoset_player[tree.slot_infoset[changed]]
  assert changed.any() and set(players.tolist()) == {1}


def test_state_dict_round_trip_resumes_exactly():
  tree = compiled_tree.cached_tree(pyspiel.load_game("kuhn_poker"))
  straight = registry.make_solver("cfrplayground-cfr+", tree)
  resumed = registry.make_solver("cfrplayground-cfr+", tree)
  straight.iterate(7)
  resumed.iterate(7)
  restored = registry.make_solver("cfrplayground-cfr+", tree)
  restored.load_state_dict(resumed.state_dict())
  straight.iterate(6)
  restored.iterate(6)
  np.testing.assert_array_equal(straight.average_strategy_slots(),
                                restored.average_strategy_slots())


def test_registry_preset_and_refused_matchers():
  game = pyspiel.load_game("kuhn_poker")
  assert repr(registry.make_solver("cfrplayground-cfr+", game)) == (
      "GeneralCFRSolver(rm=rm+, updates=alternating, cse=1, cfrplayground)")
  with pytest.raises(ValueError, match="accepts the regret matchers rm and rm\\+"):
    registry.make_solver("cfrplayground-cfr+(rm=drm(1,1))", game)
  with pytest.raises(ValueError, match="cfrplayground must be True or False"):
    cfr.GeneralCFRSolver(game, cfrplayground="yes")
