"""How every example ends: user errors as one line, SIGINT as exit status 130.

`run(main)` is absl's app.run(main), except that an app.UsageError raised by `main`
prints `error: <message>` (one line, no usage text, no traceback) and exits 1, and a
KeyboardInterrupt (SIGINT) that `main` did not handle exits 130, the shell convention.
A `main` that saves its work on SIGINT re-raises KeyboardInterrupt afterwards.
"""

import sys

from absl import app
from absl import flags

from ggp_cr.algorithms import progress_bars

EXIT_INTERRUPTED = 130

_PROGRESS = flags.DEFINE_bool(
    "progress", True, "Progress bars with rate and ETA on stderr when it is a terminal "
    "(--noprogress: none).")


def run(main):
  """absl app.run(main) with one-line user errors and exit 130 on SIGINT."""
  def wrapped(argv):
    progress_bars.show_bars(_PROGRESS.value)
    try:
      return main(argv)
    except app.UsageError as error:
      print(f"error: {error}", file=sys.stderr)
      return 1
    except KeyboardInterrupt:
      print("interrupted", file=sys.stderr)
      return EXIT_INTERRUPTED
  app.run(wrapped)
