"""The plan of a tournament and the rows that belong to it (issue 43, [S] §5.3).

`Plan` lists a tournament's matches lazily (a plan of 10^12 matches a pair and seating
costs no memory); `row_problems` is the results-file check that sets aside a row
outside the plan (pair, seating, match or players) or with a payoff outside the
game's [min_utility, max_utility], so that it is neither summarised nor kept.
"""

import dataclasses

from ggp_cr.algorithms.config import registry

# Result columns that cannot be negative.
_NONNEGATIVE = ("init_seconds0", "init_seconds1", "move_seconds0", "move_seconds1",
                "decisions0", "decisions1", "chance_seed", "seed0", "seed1")


@dataclasses.dataclass(frozen=True)
class PlannedMatch:
  """One match of the plan: which pair, seating and index."""
  pair: int
  seating: int
  index: int
  row: str
  col: str

  @property
  def key(self):
    return (self.pair, self.seating, self.index)

  @property
  def seats(self):
    return (self.row, self.col) if self.seating == 0 else (self.col, self.row)


class Plan:
  """All matches of a tournament, interleaved so that partial results cover every
  pair: match index by match index, pair by pair, both seatings. Generated lazily
  (iteration and indexing), so its size costs no memory."""

  def __init__(self, config):
    self.pairs = config.pairs()
    self.matches = config.matches

  def __len__(self):
    return self.matches * len(self.pairs) * 2

  def __getitem__(self, position):
    if isinstance(position, slice):
      return [self[i] for i in range(len(self))[position]]
    position = range(len(self))[position]  # IndexError outside
    index, rest = divmod(position, 2 * len(self.pairs))
    pair, seating = divmod(rest, 2)
    return PlannedMatch(pair, seating, index, *self.pairs[pair])

  def __iter__(self):
    for index in range(self.matches):
      for pair, (row, col) in enumerate(self.pairs):
        for seating in (0, 1):
          yield PlannedMatch(pair, seating, index, row, col)


def plan(config):
  """The Plan of `config`'s tournament."""
  return Plan(config)


def _whole(text, low, high):
  """int(text) if it is a whole number in [low, high), else None."""
  value = float(text)
  return int(value) if value.is_integer() and low <= value < high else None


def row_problems(config):
  """A results_csv check for rows of `config`'s tournament: the row's problem (text),
  or None for a row of the plan (pair, seating and match within it, players those of
  its pair and seating, row payoff its seat's) whose payoffs lie in the game's
  [min_utility, max_utility] and whose times, decisions and seeds are not negative."""
  pairs = config.pairs()
  game = registry.load_game(config.game)
  low, high = game.min_utility(), game.max_utility()
  slack = 1e-9 * max(1.0, high - low)
  def problem(row):
    pair = _whole(row["pair"], 0, len(pairs))
    seating = _whole(row["seating"], 0, 2)
    index = _whole(row["match"], 0, config.matches)
    for name, value, size in (("pair", pair, len(pairs)), ("seating", seating, 2),
                              ("match", index, config.matches)):
      if value is None:
        return (f"{name} {row[name]} is outside the plan (a whole number in [0, "
                f"{size - 1}])")
    planned = PlannedMatch(pair, seating, index, *pairs[pair])
    expected = {"row_player": planned.row, "col_player": planned.col,
                "player0": planned.seats[0], "player1": planned.seats[1]}
    for name, value in expected.items():
      if row[name] != value:
        return f"{name} is {row[name]!r}; the plan has {value!r} for pair {pair}"
    for name in ("payoff0", "payoff1", "row_payoff", "col_payoff"):
      if not low - slack <= float(row[name]) <= high + slack:
        return (f"{name} {row[name]} is outside the game's payoff range "
                f"[{low:g}, {high:g}]")
    if (float(row["row_payoff"]), float(row["col_payoff"])) != (
        float(row[f"payoff{seating}"]), float(row[f"payoff{1 - seating}"])):
      return f"row_payoff and col_payoff are not payoff{seating} and payoff{1 - seating}"
    for name in _NONNEGATIVE:
      if float(row[name]) < 0:
        return f"{name} {row[name]} is negative"
    return None
  return problem
