"""Computation limits and budgets: seconds or iterations, pre-play and per move ([S] §3.4).

Players, matches and evaluators take a `Budget` of two `Limit`s parsed from strings such
as '2s', '250ms', '1000it' or '0'. The anytime loop that spends a budget is
bots/anytime.py.
"""

import dataclasses
import re

from ggp_cr.algorithms.config import number_ranges


@dataclasses.dataclass(frozen=True)
class Limit:
  """A computation limit: wall-clock seconds or a number of iterations (or none)."""
  seconds: float | None = None
  iterations: int | None = None

  def __post_init__(self):
    if self.seconds is not None and self.iterations is not None:
      raise ValueError("A limit is either seconds or iterations, not both.")

  @property
  def is_zero(self):
    return not self.seconds and not self.iterations

  def __str__(self):
    if self.iterations is not None:
      return f"{self.iterations}it"
    if self.seconds is not None:
      return f"{self.seconds:g}s"
    return "0"


_LIMIT_PATTERN = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*(s|ms|it)?\s*$",
                            re.IGNORECASE)


def parse_limit(text, what="limit"):
  """Parses '2s', '250ms', '1000it' or '0' into a Limit; raises ValueError naming `what`."""
  if isinstance(text, Limit):
    return text
  match = _LIMIT_PATTERN.match(str(text))
  if not match:
    raise ValueError(
        f"{what} must be seconds ('2s', '250ms'), iterations ('1000it') or 0, "
        f"got {text!r}.")
  number, unit = match.group(1), (match.group(2) or "").lower()
  value = float(number)
  if unit == "it":
    number_ranges.count(value, f"{what} iterations")
  elif unit:
    number_ranges.seconds(value / 1000 if unit == "ms" else value, f"{what} seconds")
  if not unit:
    if value != 0:
      raise ValueError(
          f"{what} {text!r} needs a unit: 's', 'ms' or 'it' (e.g. '{number}s').")
    return Limit()
  if unit == "it":
    if value != int(value):
      raise ValueError(f"{what} iterations must be a whole number, got {text!r}.")
    return Limit(iterations=int(value))
  return Limit(seconds=value / 1000 if unit == "ms" else value)


# The per-move limit of every online player (cr, oos, online_solving, mcts, ismcts)
# when its budget's per-move limit is zero: one default for all of them.
DEFAULT_MOVE = Limit(iterations=1000)


@dataclasses.dataclass(frozen=True)
class Budget:
  """Pre-play (before the first move of a match) and per-move computation limits."""
  preplay: Limit = Limit()
  move: Limit = Limit()

  @classmethod
  def parse(cls, preplay="0", move="0"):
    return cls(parse_limit(preplay, "pre-play budget"), parse_limit(move, "per-move budget"))

  def online_move(self):
    """The per-move limit an online player runs: `move`, or DEFAULT_MOVE if it is zero."""
    return DEFAULT_MOVE if self.move.is_zero else self.move

  def __str__(self):
    return f"preplay={self.preplay},move={self.move}"


def nonnegative_limit(value, what):
  """`parse_limit`, refusing negative seconds."""
  limit = parse_limit(value, what)
  if limit.seconds is not None and limit.seconds < 0:
    raise ValueError(f"{what} must not be negative, got {value!r}.")
  return limit


def solving_budget(preplay, move):
  """The (pre-play, per-move) limits of an online solving bot: non-negative, and not
  both zero (the bot would never solve anything)."""
  preplay = nonnegative_limit(preplay, "pre-play budget")
  move = nonnegative_limit(move, "per-move budget")
  if move.is_zero and preplay.is_zero:
    raise ValueError("Both budgets are zero: the bot would never solve anything.")
  return preplay, move
