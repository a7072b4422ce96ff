"""Ranges of the numbers users type: checked when parsed, before any work starts.

A number outside these ranges would overflow mid-run (an exponent t^gamma after a
thousand iterations), hang (an infinite time budget) or allocate gigabytes; each is
refused at parse time with a one-line ValueError saying what is accepted.
"""

import math
import numbers

# Exponents of iteration weights t^x (cumulative strategy, DCFR): 1e4^100 = 1e400
# would overflow a float, so weights are rescaled in log space; beyond 100 an
# iteration's weight dwarfs every earlier one by more than a float can hold.
MAX_EXPONENT = 100.0
# Time budgets (seconds): one week.
MAX_SECONDS = 7 * 24 * 3600.0
# Iteration budgets and similar counts.
MAX_COUNT = 10**12
# Exploration constants (UCT c).
MAX_CONSTANT = 1e6
# Seeds: numpy's legacy seeding (np.random.seed, RandomState) takes 32 bits.
MAX_SEED = 2**32 - 1
# Repetitions whose every result is held in memory at once (timed runs of which the
# median is taken, seeds of a plot, random opponents, evaluations per decade).
MAX_KEPT = 100_000


def check(value, what, minimum=None, maximum=None, allowed=()):
  """`value` as a float, or ValueError unless it is a number in [minimum, maximum]
  (inclusive bounds when given; non-finite values only if listed in `allowed`)."""
  try:
    number = float(value)
  except (TypeError, ValueError, OverflowError):
    raise ValueError(f"{what} must be a number, got {value!r}.") from None
  if number in allowed:
    return number
  if not math.isfinite(number):
    accepted = "" if not allowed else " or " + " or ".join(str(a) for a in allowed)
    raise ValueError(f"{what} must be a finite number{accepted}, got {value!r}.")
  if (minimum is not None and number < minimum) or \
      (maximum is not None and number > maximum):
    low = "-inf" if minimum is None else f"{minimum:g}"
    high = "inf" if maximum is None else f"{maximum:g}"
    raise ValueError(f"{what} must be in [{low}, {high}], got {value!r}.")
  return number


def exponent(value, what, minimum=0.0, allowed=()):
  """An iteration-weight exponent in [minimum, MAX_EXPONENT] (or an `allowed` inf)."""
  return check(value, what, minimum, MAX_EXPONENT, allowed)


def seconds(value, what):
  """A time budget in [0, MAX_SECONDS]."""
  return check(value, what, 0.0, MAX_SECONDS)


def count(value, what, minimum=0):
  """An integer count in [minimum, MAX_COUNT] (bool refused)."""
  if isinstance(value, bool):
    raise ValueError(f"{what} must be an integer, got {value!r}.")
  number = check(value, what, minimum, MAX_COUNT)
  if number != int(number):
    raise ValueError(f"{what} must be a whole number, got {value!r}.")
  return int(number)


def integer(value, what, minimum=0, maximum=MAX_COUNT):
  """An int (or numpy integer) in [minimum, maximum]: floats, strings and bools are
  refused, unlike `count`'s typed numbers (for counts given in code or as integer
  flags, not as text)."""
  if isinstance(value, bool) or not isinstance(value, numbers.Integral):
    raise ValueError(f"{what} must be an integer in [{minimum:,}, {maximum:,}], got "
                     f"{value!r} ({type(value).__name__}).")
  if not minimum <= value <= maximum:
    raise ValueError(f"{what} must be an integer in [{minimum:,}, {maximum:,}], got "
                     f"{value!r}.")
  return int(value)
