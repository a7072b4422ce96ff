"""ISMCTS-BR ([B] ch. 5; Timbers et al. 2022) on the compiled tree."""

import numpy as np
from open_spiel.python import policy as policy_lib
import pyspiel
import pytest

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.best_response.ismcts_br import ismcts_best_response
from ggp_cr.algorithms.tree import compiled_tree

from test_pruned_best_response import random_profiles


def test_value_approaches_the_best_response_on_kuhn():
  game = "kuhn_poker"
  tree = compiled_tree.cached_tree(game)
  profiles = random_profiles(tree, seed=1, count=12)
  mean_errors = []
  for simulations in (1, 10, 100, 1000):
    errors = [ismcts_best_response(game, slots, player, simulations, seed=index).error
              for index, slots in enumerate(profiles) for player in (0, 1)]
    assert min(errors) >= -1e-9
    mean_errors.append(np.mean(errors))
  assert all(later <= earlier for earlier, later in zip(mean_errors, mean_errors[1:]))
  assert mean_errors[0] > 0.1
  assert mean_errors[-1] < 1e-3


def test_value_is_the_exact_value_of_the_returned_policy():
  game = pyspiel.load_game("leduc_poker")
  tabular = policy_lib.TabularPolicy(game)
  result = ismcts_best_response(game, tabular, 1, simulations=200, seed=4)
  tree = compiled_tree.cached_tree(game)
  assert exact_br.on_policy_values(tree, tree.policy_to_slots(result.policy))[
      1] == pytest.approx(result.value, abs=1e-9)
  exact, _ = exact_br.best_response(game, tabular, 1)
  assert result.best_response_value == pytest.approx(exact, abs=1e-9)
  assert result.error == pytest.approx(exact - result.value)
  assert 0 < result.searches <= int((tree.infoset_player == 1).sum())


def test_seeded_runs_are_deterministic():
  game = "python_leduc(max_raises=1,cards_per_suit=2)"
  tree = compiled_tree.cached_tree(game)
  slots = random_profiles(tree, seed=2, count=1)[0]
  first = ismcts_best_response(game, slots, 0, simulations=50, seed=123)
  again = ismcts_best_response(game, slots, 0, simulations=50, seed=123)
  np.testing.assert_array_equal(first.response_slots, again.response_slots)
  assert first.value == again.value
  others = {tuple(ismcts_best_response(game, slots, 0, simulations=5, seed=s)
                  .response_slots) for s in range(8)}
  assert len(others) > 1


def test_python_game_converges():
  game = "python_leduc(max_raises=1,cards_per_suit=2)"
  tree = compiled_tree.cached_tree(game)
  errors = {}
  for simulations in (3, 2000):
    errors[simulations] = np.mean([
        ismcts_best_response(game, slots, player, simulations, seed=7).error
        for slots in random_profiles(tree, seed=3, count=4) for player in (0, 1)])
  assert errors[2000] < errors[3]
  assert errors[2000] < 0.05


def test_samples_the_reach_weighted_belief_not_uniformly():
  """Kuhn, player 1 holding the queen facing a bet: the opponent bets the king always
  and the jack with probability 0.01, so folding is best; a uniform belief over the
  two histories would call (0 > -1)."""
  game = pyspiel.load_game("kuhn_poker")
  tabular = policy_lib.TabularPolicy(game)
  bets = {"0": 0.01, "1": 0.5, "2": 1.0}
  for card, bet in bets.items():
    tabular.policy_for_key(card)[:] = [1 - bet, bet]
  result = ismcts_best_response(game, tabular, 1, simulations=2000, seed=0)
  assert result.policy.policy_for_key("1b").tolist() == [1.0, 0.0]  # pass = fold
  assert result.error == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("kwargs, message", [
    (dict(simulations=0), "simulations"),
    (dict(simulations=2.5), "simulations"),
    (dict(seed=-1), "seed"),
    (dict(uct_c=-1.0), "uct_c"),
    (dict(player=2), "player"),
])
def test_bad_input(kwargs, message):
  game = pyspiel.load_game("kuhn_poker")
  arguments = dict(player=0, simulations=10, seed=0)
  arguments.update(kwargs)
  with pytest.raises(ValueError, match=message):
    ismcts_best_response(game, policy_lib.TabularPolicy(game), **arguments)


def test_bad_policy_uses_the_shared_checks():
  game = pyspiel.load_game("kuhn_poker")
  tabular = policy_lib.TabularPolicy(game)
  tabular.policy_for_key("0")[:] = [0.3, 0.3]
  with pytest.raises(ValueError, match="sum to"):
    ismcts_best_response(game, tabular, 1, simulations=10, seed=0)
