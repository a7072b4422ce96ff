"""A tournament's plan and the rows that belong to it (issue 43): counts checked
before anything is allocated, plans generated lazily, rows outside the plan or the
game's payoff range set aside, kernels compiled before the clock starts; solve rows
out of range set aside and CRLF files read."""

import collections
import itertools
import tracemalloc
import warnings

import pytest

import fuzz_support
import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms import progress_bars
from ggp_cr.algorithms import worker_processes
from ggp_cr.algorithms.config import number_ranges
from ggp_cr.algorithms.evaluation import kernel_warm_up
from ggp_cr.algorithms.evaluation import results_csv
from ggp_cr.algorithms.evaluation import solver_runs
from ggp_cr.algorithms.evaluation import tournament
from ggp_cr.algorithms.evaluation import tournament_summary


class _Stop(Exception):
  pass


def _stop_at_first_row(self, row):
  """AppendOnlyCsv.append patched in: writes the row, then stops the run."""
  _APPEND(self, row)
  raise _Stop(row)


_APPEND = results_csv.AppendOnlyCsv.append


def test_counts_are_checked_and_plans_are_lazy(tmp_path, monkeypatch):
  tally = collections.Counter()
  for bad in (10**13, 10**20, 0, -1, 1.5, True):
    with pytest.raises(ValueError, match="matches must be"):
      with fuzz_support.deadline(5):
        fuzz_support.rps_tournament(bad)
    tally["--matches refused"] += 1
  with pytest.raises(ValueError, match="workers must be"):
    tournament.run_tournament(fuzz_support.rps_tournament(1), tmp_path / "w.csv", workers=10**13)
  tally["--workers refused"] += 1
  # The plan of the largest count is generated, not stored.
  config = fuzz_support.rps_tournament(number_ranges.MAX_COUNT)
  tracemalloc.start()
  try:
    planned = tournament.plan(config)
    assert len(planned) == 2 * number_ranges.MAX_COUNT
    assert planned[-1].key == (0, 1, number_ranges.MAX_COUNT - 1)
    assert [p.key for p in itertools.islice(planned, 3)] == [(0, 0, 0), (0, 1, 0),
                                                              (0, 0, 1)]
    assert tracemalloc.get_traced_memory()[1] < 10**6
    # A tournament of 2 * 10^12 matches starts at once, in process or in workers.
    monkeypatch.setattr(results_csv.AppendOnlyCsv, "append", _stop_at_first_row)
    for workers in (1, 2):
      with pytest.raises(_Stop):
        tournament.run_tournament(config, tmp_path / f"big{workers}.csv",
                                  workers=workers, progress=None)
      tally[f"2e12 matches started, {workers} worker(s)"] += 1
    assert tracemalloc.get_traced_memory()[1] < 50 * 10**6
  finally:
    tracemalloc.stop()
  # The pool takes its items lazily and stops when closed.
  stream = worker_processes.run_pool(abs, ((-i,) for i in itertools.count()), 2)
  assert sorted(itertools.islice(stream, 6))[:2] == [0, 1]
  stream.close()
  tally["endless items, pool closed"] += 1
  fuzz_support.report("counts", tally)


def _tournament_csv(tmp_path, config):
  path = tmp_path / "rows.csv"
  tournament.run_tournament(config, path, progress=None)
  header, *rows = path.read_text().splitlines()
  return path, header, rows


def _edited(line, **values):
  fields = line.split(",")
  for name, value in values.items():
    fields[list(tournament.RESULT_COLUMNS).index(name)] = str(value)
  return ",".join(fields)


def test_rows_outside_the_plan_or_the_range_are_set_aside(tmp_path):
  config = fuzz_support.rps_tournament(3)
  path, header, rows = _tournament_csv(tmp_path, config)
  before = tournament_summary.summarize(tournament.read_results(config, path))
  # Each is outside the plan or the game's range ([-1, 1]); the last replaces the
  # first row (its key is then free), so only the range check can refuse it.
  strays = [_edited(rows[1], match=999), _edited(rows[1], pair=7),
            _edited(rows[1], seating=2), _edited(rows[1], match=1.5),
            _edited(rows[1], match=4, row_player="oos"),
            _edited(rows[1], match=5, decisions0=-3)]
  payoff = _edited(rows[0], payoff0=100, payoff1=-100, row_payoff=100, col_payoff=-100)
  path.write_text("\n".join([header, payoff, *rows[1:], *strays]) + "\n")
  with pytest.warns(UserWarning, match=r"skipped 7 malformed, half-written or "
                                       r"out-of-range row\(s\) \(first: payoff0 100"):
    read = tournament.read_results(config, path)
  assert len(read) == len(rows) - 1 and read["row_payoff"].abs().max() <= 1
  with pytest.warns(UserWarning, match="set aside 7"):
    resumed = tournament.run_tournament(config, path, progress=None)
  assert sorted(zip(resumed["pair"], resumed["seating"], resumed["match"])) == sorted(
      p.key for p in tournament.plan(config))
  after = tournament_summary.summarize(resumed)
  assert after["matches"].tolist() == before["matches"].tolist() == [6]
  assert results_csv.rejected_path(path).read_text().count("\n") == 7


def test_solve_rows_out_of_range_are_set_aside_and_crlf_is_read(tmp_path):
  path = tmp_path / "solve.csv"
  def row(iterations, nash_conv, exploitability=None, seconds=0.5):
    return {"game": "kuhn_poker()", "solver": "cfr", "time": seconds,
            "iterations": iterations, "visited_states": 10 * iterations,
            "nash_conv": nash_conv,
            "exploitability": nash_conv / 2 if exploitability is None else exploitability}
  with solver_runs.open_rows(path, resume=False) as output:
    for good in (row(1, 0.5), row(2, 0.25), row(3, -1e-17)):
      output.append(good)
    for bad in (row(4, -10), row(5, 0.1, exploitability=-5), row(6, 0.1, 0.3),
                row(7, 0.1, seconds=-1), row(0, 0.1), row(2.5, 0.1)):
      output.append(bad)
  with pytest.warns(UserWarning, match=r"set aside 6 .*first: nash_conv -10"):
    with solver_runs.open_rows(path, resume=True) as output:
      assert [r["iterations"] for r in output.rows] == ["1", "2", "3"]
  # The same rows saved with CRLF line endings are read, then appended to with LF.
  path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    with solver_runs.open_rows(path, resume=True) as output:
      assert [r["iterations"] for r in output.rows] == ["1", "2", "3"]
      output.append(row(8, 0.01))
  assert b"\r" not in path.read_bytes()
  assert len(path.read_text().splitlines()) == 5


def test_kernel_compilation_is_said_and_kept_out_of_the_rate(tmp_path, monkeypatch):
  import numba  # pylint: disable=g-import-not-at-top
  said = []
  with kernel_warm_up.saying_when_compiling(said.append):
    kernel = numba.njit(lambda x: x + 1)  # a new function: compiled here
    assert kernel(1) == 2 and kernel(1.5) == 2.5
  assert said == [kernel_warm_up.MESSAGE]
  # The bar (its rate and ETA) starts only once the warm-up's compilation is over.
  events = []
  real_warm_up, real_bar = kernel_warm_up.warm_up, progress_bars.bar
  def warm_up(*args):
    real_warm_up(*args)
    events.append("warm-up done")
  def bar(*args, **kwargs):
    events.append("bar started")
    return real_bar(*args, **kwargs)
  monkeypatch.setattr(kernel_warm_up, "warm_up", warm_up)
  monkeypatch.setattr(progress_bars, "bar", bar)
  tournament.run_tournament(fuzz_support.rps_tournament(5), tmp_path / "t.csv", progress=[].append)
  assert events == ["warm-up done", "bar started"], events


def test_the_warm_up_takes_the_matches_path_when_moves_are_timed(monkeypatch):
  # Issue 44: a one-iteration budget has no clock, so on a game near the tree limit
  # the warm-up's bots extracted a tree the timed matches never build (minutes).
  budgets = []
  monkeypatch.setattr(kernel_warm_up.matches, "run_match",
                      lambda game, players, seeds, budget, tree=None:
                      budgets.append(str(budget)))
  timed = tournament.TournamentConfig.create("python_rps", ["random", "cr"], 1, "1s",
                                             "0.2s")
  kernel_warm_up.warm_up(timed, None, say=None)
  kernel_warm_up.warm_up(fuzz_support.rps_tournament(1), None, say=None)
  assert budgets == ["preplay=1s,move=0.2s"] * 2 + ["preplay=1it,move=1it"] * 2
