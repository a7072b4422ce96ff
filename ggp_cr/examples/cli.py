"""How every example ends: user errors as one line, SIGINT as exit status 130.

`run(main)` is absl's app.run(main), except that an app.UsageError raised by `main`
prints `error: <message>` (one line, no usage text, no traceback) and exits 1, and a
KeyboardInterrupt (SIGINT) that `main` did not handle exits 130, the shell convention.
A `main` that saves its work on SIGINT re-raises KeyboardInterrupt afterwards. A tree
too large to compile (tree_limits.TreeTooLarge) is a one-line error too; every example
takes --tree_memory_share, the share of available memory a compiled tree may take.
"""

import sys

from absl import app
from absl import flags

from ggp_cr.algorithms import progress_bars
from ggp_cr.algorithms.tree import tree_limits

EXIT_INTERRUPTED = 130
_TREE_MEMORY_SHARE = flags.DEFINE_float(
    "tree_memory_share", None, "Share of available memory a compiled game tree may "
    f"take, in (0, 1] (default: ${tree_limits.MEMORY_SHARE_VARIABLE}, else "
    f"{tree_limits.MEMORY_SHARE}); larger trees are refused before extraction.")

_PROGRESS = flags.DEFINE_bool(
    "progress", True, "Progress bars with rate and ETA on stderr when it is a terminal "
    "(--noprogress: none).")


def run(main):
  """absl app.run(main) with one-line user errors and exit 130 on SIGINT."""
  def wrapped(argv):
    progress_bars.show_bars(_PROGRESS.value)
    try:
      try:
        tree_limits.set_memory_share(_TREE_MEMORY_SHARE.value)
        tree_limits.memory_share()  # a bad environment variable is a usage error too
      except ValueError as error:
        raise app.UsageError(f"--tree_memory_share: {error}") from None
      return main(argv)
    except (app.UsageError, tree_limits.TreeTooLarge) as error:
      print(f"error: {error}", file=sys.stderr)
      return 1
    except KeyboardInterrupt:
      print("interrupted", file=sys.stderr)
      return EXIT_INTERRUPTED
  app.run(wrapped)
