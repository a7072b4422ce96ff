"""Numba kernels compiled before a tournament's clock starts (issue 43, finding 6).

On a first run (empty numba cache) the players' kernels compile inside the first
matches, which took 80 s and made the progress line's rate and ETA meaningless.
`warm_up` plays one short match (one iteration per move) of each player against
itself in this process before the clock starts and before local workers are forked
(they inherit the compiled kernels; spawned or Ray workers read numba's disk cache),
and says "compiling kernels (first run only)" when numba starts compiling.
"""

import contextlib
import importlib.util

from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.evaluation import matches

MESSAGE = "compiling kernels (first run only) ..."
_BUDGET = limits.Budget.parse("1it", "1it")


@contextlib.contextmanager
def saying_when_compiling(say):
  """Within it, the first numba compilation calls `say(MESSAGE)` (say: a callable
  taking a line, or None for silence)."""
  if say is None or importlib.util.find_spec("numba") is None:
    yield
    return
  from numba.core import event  # pylint: disable=g-import-not-at-top

  class _Listener(event.Listener):
    said = False

    def on_start(self, unused_event):
      if not self.said:
        self.said = True
        say(MESSAGE)

    def on_end(self, unused_event):
      pass

  with event.install_listener("numba:compile", _Listener()):
    yield


def warm_up(config, game, tree=None, say=print):
  """Plays one match of each player of the TournamentConfig `config` against itself
  on `game` with one iteration a move (or, when `config`'s moves are timed, with its
  own budget: the bots then take the path the matches take, not extract a tree the
  clock would refuse), results discarded, handing the bots `tree` (the game's
  CompiledTree or None) as each worker does."""
  budget = config.budget if config.budget.move.seconds else _BUDGET
  with saying_when_compiling(say):
    for player in config.players:
      seeds = matches.match_seeds(config.seed, player, player, 0, 0)
      matches.run_match(game, (player, player), seeds, budget, tree=tree)
