r"""Prints the size of any pyspiel game, as in [S] Tables 5.1 and 5.4.

  python -m ggp_cr.examples.game_info --game="python_leduc(max_raises=4)"

Prints |H| (all histories: root, chance, decision and terminal nodes), |I| per player
(information sets where that player acts), Δu (max - min utility of player 0), max |A|,
the maximum depth and how long the count took. Works for stock OpenSpiel games too;
simultaneous-move games are counted in their turn-based version with --turn_based.
A game past --max_histories (default: the generic extraction's memory limit,
tree_limits) is refused, far larger ones at a million histories.
"""

from absl import app
from absl import flags

import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.tree import tree_limits
from ggp_cr.algorithms.tree.game_size import game_size
from ggp_cr.examples import cli

_GAME = flags.DEFINE_string("game", "python_ii_goofspiel(num_cards=4)",
                            "Game string, e.g. python_leduc(max_raises=4).")
_TURN_BASED = flags.DEFINE_bool(
    "turn_based", False,
    "Count a simultaneous-move game's turn-based version "
    "(pyspiel.convert_to_turn_based); a sequential game is counted as it is.")
_PROGRESS_EVERY = cli.integer_flag(
    "progress_every", 1_000_000, "Print progress every this many histories (0: never).")
_MAX_HISTORIES = cli.integer_flag(
    "max_histories", None, "Refuse games with more histories (default: the generic "
    "extraction's limit, a share of available memory).", minimum=1)


def load(game_string, turn_based):
  """Loads a game (converted to turn-based if asked), as a one-line error if it cannot
  be counted: a simultaneous-move game needs --turn_based."""
  try:
    game = registry.load_game(game_string)
  except ValueError as error:
    raise app.UsageError(str(error)) from None
  if game.get_type().dynamics != pyspiel.GameType.Dynamics.SIMULTANEOUS:
    return game
  if turn_based:
    return pyspiel.convert_to_turn_based(game)
  raise app.UsageError(f"{game} is a simultaneous-move game; add --turn_based to count "
                       "its turn-based version.")


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Unexpected arguments: {argv[1:]}")
  game = load(_GAME.value, _TURN_BASED.value)
  try:
    limit = (tree_limits.nodes_limit(native=False) if _MAX_HISTORIES.value is None
             else _MAX_HISTORIES.value)
    size = game_size(game, progress_every=_PROGRESS_EVERY.value, max_histories=limit)
  except ValueError as error:
    raise app.UsageError(str(error)) from error
  print(f"game:      {game}")
  print(f"|H|:       {size.histories:,}")
  for player, count in enumerate(size.infosets):
    print(f"|I| p{player}:    {count:,}")
  print(f"|I| total: {sum(size.infosets):,}")
  print(f"Δu:        {size.utility_range:g}")
  print(f"max |A|:   {size.max_actions}")
  print(f"max depth: {size.max_depth}")
  print(f"time:      {size.seconds:.2f} s")


if __name__ == "__main__":
  cli.run(main)
