"""Progress bars of long runs: count, rate and ETA from tqdm on stderr, or nothing.

The one progress display of solve, tournaments, the evaluators (evaluate,
cr_exploitability) and tree extraction. A bar shows only while bars are on for the
process (the examples' `--noprogress` turns them off) and stderr is a terminal, so logs,
pipes and tests get no bar. Lines printed during a bar go through `write`.
"""

import sys

import tqdm

_SHOWN = [True]
_SECONDS_FORMAT = ("{desc}: {percentage:3.0f}%|{bar}| {n:.1f}/{total:.1f} s "
                   "[{elapsed}<{remaining}{postfix}]")


def show_bars(shown):
  """Turns this process's progress bars on or off (the examples' --[no]progress)."""
  _SHOWN[0] = bool(shown)


def bars_visible():
  """Whether a bar would show now: bars on and stderr a terminal."""
  return _SHOWN[0] and sys.stderr.isatty()


def bar(total=None, unit="it", description=None, initial=0, interval=0.5, shown=True):
  """A tqdm bar on stderr: a context manager with update(n) and set_postfix_str(text).

  Args:
    total: the count at completion (None: unknown, no ETA).
    unit: what is counted ("it", "match", ...; "s": seconds of a time budget).
    description: the bar's label.
    initial: the count already done (a resumed run).
    interval: minimum seconds between redraws.
    shown: False for a silent bar (the caller's own off switch).
  """
  # A time budget reads better as seconds done of seconds, without a rate.
  seconds = unit == "s" and total is not None
  return tqdm.tqdm(total=total, initial=initial, unit=unit, desc=description,
                   mininterval=interval, file=sys.stderr, dynamic_ncols=True,
                   bar_format=_SECONDS_FORMAT if seconds else None,
                   disable=not (shown and bars_visible()))


def write(line):
  """Prints `line` to stdout without breaking a bar being drawn on the terminal."""
  tqdm.tqdm.write(line, file=sys.stdout)
  sys.stdout.flush()
