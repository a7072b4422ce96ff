"""The bot's one choice of path (protocol.Path): a tree the caller owns is used as
given ([S] ch. 2); a tree of another game is refused."""

import pyspiel
import pytest

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.resolving import continual_resolving as cr
from ggp_cr.algorithms.tree import compiled_tree

LEDUC = "python_leduc(max_raises=1,cards_per_suit=2)"


def _play(bot, game):
  state = game.new_initial_state()
  actions = []
  while not state.is_terminal():
    if state.is_chance_node():
      state.apply_action(state.chance_outcomes()[0][0])
    elif state.current_player() == bot.player_id():
      actions.append(bot.step(state))
      state.apply_action(actions[-1])
    else:
      state.apply_action(state.legal_actions()[-1])
  return actions, [d["key"] for d in bot.decisions]


def test_a_given_tree_is_used_and_plays_as_the_found_one():
  game = pyspiel.load_game(LEDUC)
  tree = compiled_tree.compile_game(game)  # the caller's own, not the process cache's
  given = cr.ContinualResolvingBot(game, 0, preplay="10it", move="5it", solver="cfr+",
                                   seed=3, tree=tree)
  assert (given.path, given.path_reason) == ("compiled", "tree given by the caller")
  found = cr.ContinualResolvingBot(game, 0, preplay="10it", move="5it", solver="cfr+",
                                   seed=3)
  assert _play(given, game) == _play(found, game)


def test_a_tree_of_another_game_is_refused():
  tree = compiled_tree.cached_tree(pyspiel.load_game("kuhn_poker"))
  with pytest.raises(ValueError, match="not of"):
    cr.ContinualResolvingBot(pyspiel.load_game(LEDUC), 0, tree=tree)
