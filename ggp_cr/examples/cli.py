"""How every example ends: user errors as one line, SIGINT as exit status 130.

`run(main)` is absl's app.run(main), except that an app.UsageError raised by `main`
prints `error: <message>` (one line, no usage text, no traceback) and exits 1, and a
KeyboardInterrupt (SIGINT) that `main` did not handle exits 130, the shell convention.
A `main` that saves its work on SIGINT re-raises KeyboardInterrupt afterwards. A tree
too large to compile (tree_limits.TreeTooLarge) is a one-line error too; every example
takes --tree_memory_share, the share of available memory a compiled tree may take.
Integer flags are defined by `integer_flag`, which states their range in the help, and
checked against it by `run` before `main` starts (issue 43: nothing may allocate or
run in proportion to a count before it is checked); `useful_workers` caps --workers.
"""

import sys

from absl import app
from absl import flags

from ggp_cr.algorithms import progress_bars
from ggp_cr.algorithms.config import number_ranges
from ggp_cr.algorithms.config import worker_counts
from ggp_cr.algorithms.tree import tree_limits

EXIT_INTERRUPTED = 130
_TREE_MEMORY_SHARE = flags.DEFINE_float(
    "tree_memory_share", None, "Share of available memory a compiled game tree may "
    f"take, in (0, 1] (default: ${tree_limits.MEMORY_SHARE_VARIABLE}, else "
    f"{tree_limits.MEMORY_SHARE}); larger trees are refused before extraction.")

_PROGRESS = flags.DEFINE_bool(
    "progress", True, "Progress bars with rate and ETA on stderr when it is a terminal "
    "(--noprogress: none).")


_INTEGER_FLAGS = []  # (flag holder, minimum, maximum), checked by run()


def _script_module(frames_up):
  """The name absl gives the module `frames_up` calls above (its --help lists the
  flags that module defines): the script's path for __main__."""
  name = sys._getframe(frames_up + 1).f_globals["__name__"]  # pylint: disable=protected-access
  return sys.argv[0] if name == "__main__" else name


def integer_flag(name, default, help_text, minimum=0,
                 maximum=number_ranges.MAX_COUNT, multi=False, _frames_up=1):
  """An integer flag (repeatable if `multi`) of the calling script whose values `run`
  checks against [minimum, maximum] before `main` starts; the help states the range.
  None (no default, not given) is left to `main`."""
  define = flags.DEFINE_multi_integer if multi else flags.DEFINE_integer
  holder = define(name, default,
                  f"{help_text.rstrip('.')} (an integer in [{minimum:,}, "
                  f"{maximum:,}]).",
                  module_name=_script_module(_frames_up))
  _INTEGER_FLAGS.append((holder, minimum, maximum))
  return holder


def workers_flag(help_text):
  """The --workers flag (at least 1) of the calling script; `useful_workers` caps it."""
  return integer_flag("workers", 1, f"{help_text}; capped at the usable cores",
                      minimum=1, _frames_up=2)


def check_integer_flags():
  """app.UsageError naming the first integer flag outside its range."""
  for holder, minimum, maximum in _INTEGER_FLAGS:
    values = holder.value if isinstance(holder.value, list) else [holder.value]
    for value in values:
      if value is not None:
        try:
          number_ranges.integer(value, f"--{holder.name}", minimum, maximum)
        except ValueError as error:
          raise app.UsageError(str(error)) from None


def useful_workers(holder, items=None):
  """The value of a --workers flag capped at the usable cores (and `items`, the work
  items, if known), said in one line when capped (worker_counts)."""
  try:
    return worker_counts.useful_workers(holder.value, items, f"--{holder.name}", print)
  except ValueError as error:
    raise app.UsageError(str(error)) from None


def run(main):
  """absl app.run(main) with one-line user errors, integer flags checked before
  `main`, and exit 130 on SIGINT."""
  def wrapped(argv):
    progress_bars.show_bars(_PROGRESS.value)
    try:
      try:
        tree_limits.set_memory_share(_TREE_MEMORY_SHARE.value)
        tree_limits.memory_share()  # a bad environment variable is a usage error too
      except ValueError as error:
        raise app.UsageError(f"--tree_memory_share: {error}") from None
      check_integer_flags()
      return main(argv)
    except (app.UsageError, tree_limits.TreeTooLarge) as error:
      print(f"error: {error}", file=sys.stderr)
      return 1
    except KeyboardInterrupt:
      print("interrupted", file=sys.stderr)
      return EXIT_INTERRUPTED
  app.run(wrapped)
