r"""One match between two players, with its move log ([S] §4 `run`, App. A.4).

  python -m ggp_cr.examples.play --game=kuhn_poker \
      --player0=random --player1="ismcts(simulations=500)" --seed=3
  python -m ggp_cr.examples.play --game=python_leduc --player0=human --player1=random

Players are named as in the tournament (--list_players shows them all): a human types
moves at the terminal and sees only their own information state while the match runs;
the full move log (chance and hidden moves included) is printed when it ends. The match
is the one the tournament would play as match --match of the pair (player0, player1) in
seating 0 with base --seed.
"""

import sys

from absl import app
from absl import flags

from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.config import number_ranges
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.evaluation import matches
from ggp_cr.examples import cli

_GAME = flags.DEFINE_string("game", "python_rps", "Game string, e.g. python_leduc.")
_PLAYER0 = flags.DEFINE_string("player0", "random", "Player in seat 0.")
_PLAYER1 = flags.DEFINE_string("player1", "random", "Player in seat 1.")
_PREPLAY = flags.DEFINE_string("preplay", "0",
                               "Pre-play budget: '10s', '500ms', '1000it' or 0.")
_MOVE = flags.DEFINE_string(
    "move", str(limits.DEFAULT_MOVE),
    "Per-move budget: '30s', '500ms', '1000it' or 0 (every online player's default, "
    f"{limits.DEFAULT_MOVE}).")
_SEED = cli.integer_flag("seed", 0, "Base seed.", maximum=number_ranges.MAX_SEED)
_MATCH = cli.integer_flag("match", 0, "Match index (selects the seeds).")
_LIST_PLAYERS = flags.DEFINE_bool("list_players", False, "List the players and exit.")


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Unexpected arguments: {argv[1:]}")
  if _LIST_PLAYERS.value:
    print(registry.describe_players())
    return 0
  try:
    game = registry.load_game(_GAME.value)
    specs = [registry.parse_player(_PLAYER0.value), registry.parse_player(_PLAYER1.value)]
    budget = limits.Budget.parse(_PREPLAY.value, _MOVE.value)
    seeds = matches.match_seeds(_SEED.value, specs[0], specs[1], 0, _MATCH.value)
    human = any(spec.interactive for spec in specs)
    print(f"{game}: player 0 = {specs[0]}, player 1 = {specs[1]}, budget {budget}")

    def show(move, unused_state):
      print(f"  {move}")

    result = matches.run_match(game, specs, seeds, budget,
                               on_move=None if human else show)
  except ValueError as error:
    print(f"error: {error}", file=sys.stderr)
    return 1
  except KeyboardInterrupt:
    print("\nmatch abandoned", file=sys.stderr)
    return cli.EXIT_INTERRUPTED
  if human:
    print("Move log:")
    for move in result.moves:
      print(f"  {move}")
  for seat, spec in enumerate(specs):
    print(f"player {seat} ({spec}): payoff {result.returns[seat]:+g}, "
          f"{result.decisions[seat]} moves, pre-play {result.init_seconds[seat]:.3f} s, "
          f"moves {result.move_seconds[seat]:.3f} s")
  return 0


if __name__ == "__main__":
  cli.run(main)
