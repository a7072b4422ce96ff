"""Seeded fuzzing of bad inputs (issue 12): game parameters, solver and player strings,
numbers, state API calls, crafted files, CSV rows and CLI flags; issue 43's blocks at
the end: killed workers, counts, worker caps, out-of-plan rows, API edges, and every
example's integer flags and every worker pool.

Every input must end in a result or a clear error (ValueError / pyspiel.SpielError,
or for a CLI a non-zero exit with a one-line message): no crash, no hang (each call
has a deadline; CLIs a subprocess timeout), no silent acceptance of an input that is
invalid by construction, and no lost or duplicated results row. Each test prints its
tally (run with -s to see it).
"""

import collections
import contextlib
import os
import pickle
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pyspiel
import pytest

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.config import number_ranges
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.evaluation import results_csv
from ggp_cr.algorithms import progress_bars
from ggp_cr.algorithms.evaluation import solver_runs
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import strategy_files

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLEAR_ERRORS = (ValueError, pyspiel.SpielError)


class _Hang(Exception):
  pass


@contextlib.contextmanager
def _deadline(seconds):
  """Raises _Hang if the body runs longer than `seconds` (SIGALRM, main thread)."""
  def expire(*unused):
    raise _Hang()
  previous = signal.signal(signal.SIGALRM, expire)
  signal.setitimer(signal.ITIMER_REAL, seconds)
  try:
    yield
  finally:
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def _outcome(call, seconds=5.0):
  """'ok', 'clear error', or fails the test for a hang or another exception."""
  try:
    with _deadline(seconds):
      call()
    return "ok"
  except CLEAR_ERRORS:
    return "clear error"
  except _Hang:
    pytest.fail(f"hang (> {seconds} s) in {call}")


def _report(name, tally):
  print(f"\n{name}: {sum(tally.values())} inputs: {dict(tally)}")


# Game parameters ----------------------------------------------------------------

GAME_PARAMETERS = {
    "python_leduc": ["max_raises", "cards_per_suit", "stack1", "stack2"],
    "python_ii_goofspiel": ["num_cards"],
    "python_princess_monster": ["max_turns", "rows", "cols"],
    "python_rps": ["n"],
}
INVALID_VALUES = ["-1", "1000000000", "1.5", "x", "-1000000", "99999999999999999999"]


def test_fuzz_game_parameters():
  rng = np.random.default_rng(12)
  tally = collections.Counter()
  for _ in range(48):
    game = str(rng.choice(list(GAME_PARAMETERS)))
    name = str(rng.choice(GAME_PARAMETERS[game]))
    value = str(rng.choice(INVALID_VALUES))
    text = f"{game}({name}={value})"
    outcome = _outcome(lambda text=text: pyspiel.load_game(text), seconds=2.0)
    assert outcome == "clear error", f"{text} was accepted"
    tally[outcome] += 1
  for text in ["python_leduc(nope=1)", "python_ii_goofspiel(points_order=sideways)",
               "python_leduc(max_raises=0)", "python_rps(n=1)",
               "python_princess_monster(rows=1,cols=1)"]:
    tally[_outcome(lambda text=text: pyspiel.load_game(text).new_initial_state(),
                   seconds=2.0)] += 1
  _report("game parameters", tally)


# Solver and player strings ---------------------------------------------------------

BAD_NUMBERS = ["nan", "1e400", "-1e400", "inf", "-inf", "1e308", "-5"]
NUMERIC_SLOTS = ["cfr(cse={})", "cfr+(cse={})", "dcfr({},0,2)", "dcfr(1.5,0,{})",
                 "mc_cfr(cse={})", "solver(seconds={})", "ismcts(simulations=5,uct_c={})",
                 "solver(iterations={})", "cr(cse={})"]
MUTATION_BASES = ["cfr(rm=drm(1,1),updates=alternating,cse=1)", "dcfr(1.5,0,2)",
                  "ismcts(simulations=20,uct_c=2)", "solver(name=cfr+,iterations=10)",
                  "mc_cfr", "cr"]


def _parse_any(text):
  try:
    return registry.parse_solver(text)
  except ValueError:
    return registry.parse_player(text)


def test_fuzz_solver_and_player_strings():
  rng = np.random.default_rng(13)
  tally = collections.Counter()
  for template in NUMERIC_SLOTS:
    for number in BAD_NUMBERS:
      if number == "-5" and "dcfr(1.5,0," in template:
        continue
      text = template.format(number)
      outcome = _outcome(lambda text=text: _parse_any(text))
      assert outcome == "clear error", f"{text} was accepted"
      tally[outcome] += 1
  alphabet = list("()=,.-+e0123456789 xyz") + ["inf", "nan", "((", "))"]
  for _ in range(60):
    text = list(str(rng.choice(MUTATION_BASES)))
    for _ in range(int(rng.integers(1, 4))):
      position = int(rng.integers(0, len(text) + 1))
      if rng.random() < 0.5 and text:
        del text[min(position, len(text) - 1)]
      else:
        text.insert(position, str(rng.choice(alphabet)))
    text = "".join(text)
    tally[_outcome(lambda text=text: _parse_any(text))] += 1
  _report("solver/player strings", tally)


# Numbers ----------------------------------------------------------------------------

def test_fuzz_numbers():
  rng = np.random.default_rng(14)
  specials = [np.nan, np.inf, -np.inf, 1e308, -1e308, 1e-320, -0.0, 2**63, -1]
  values = specials + list(rng.normal(0, 1e6, 20)) + list(rng.integers(-10, 10, 10))
  tally = collections.Counter()
  for value in values:
    for check, low, high in ((number_ranges.seconds, 0, number_ranges.MAX_SECONDS),
                             (lambda v, w: number_ranges.exponent(v, w), 0,
                              number_ranges.MAX_EXPONENT)):
      outcome = _outcome(lambda v=value, c=check: c(v, "x"))
      valid = np.isfinite(value) and low <= value <= high
      assert (outcome == "ok") == bool(valid), value
      tally[outcome] += 1
  for text in ["1e400s", "infs", "nans", "-1s", "1e9s", "5", "1.5it", "1e13it", "0.5ms",
               "10it", "2s", "s", "", "1e-400s"]:
    tally[_outcome(lambda text=text: limits.Budget.parse("0", text))] += 1
  for text in ["log", "0", "-3", "1e400s", "nans", "infs", "10", "0.5s", "x"]:
    tally[_outcome(lambda text=text: solver_runs.parse_eval_every(text))] += 1
  _report("numbers", tally)


# State API -----------------------------------------------------------------------

STATE_GAMES = ["python_leduc(max_raises=1,cards_per_suit=2)",
               "python_ii_goofspiel(num_cards=3,points_order=random)",
               "python_ii_goofspiel(num_cards=3)", "python_rps",
               "python_princess_monster(max_turns=2)", "python_latent_ttt"]


def _state_calls(state, rng):
  junk = int(rng.choice([-5, -4, -1, 2, 3, 99, 10**9]))
  return [
      ("chance_outcomes", state.chance_outcomes),
      ("apply junk action", lambda: state.clone().apply_action(junk)),
      ("legal_actions(junk)", lambda: state.legal_actions(junk)),
      ("information_state_string(junk)",
       lambda: state.information_state_string(junk)),
      ("observation_string(junk)", lambda: state.observation_string(junk)),
      ("information_state_tensor(junk)",
       lambda: state.information_state_tensor(junk)),
      ("returns", state.returns),
      ("deserialize junk", lambda: state.get_game().deserialize_state(
          state.serialize().replace(" ", " 77 "))),
  ]


def test_fuzz_state_api():
  rng = np.random.default_rng(15)
  tally = collections.Counter()
  for game_string in STATE_GAMES:
    game = pyspiel.load_game(game_string)
    for _ in range(4):
      state = game.new_initial_state()
      while True:
        for name, call in _state_calls(state, rng):
          try:
            tally[_outcome(call)] += 1
          except Exception as error:  # pylint: disable=broad-except
            pytest.fail(f"{game_string} {name} at {state.history()}: "
                        f"{type(error).__name__}: {error}")
        if state.is_terminal():
          break
        state.apply_action(int(rng.choice(state.legal_actions())))
      with pytest.raises(CLEAR_ERRORS):
        state.apply_action(0)
      with pytest.raises(CLEAR_ERRORS):
        state.chance_outcomes()
      assert str(pickle.loads(pickle.dumps(state))) == str(state)
  _report("state API", tally)


# Crafted files ------------------------------------------------------------------------

def _damaged(blob, rng):
  kind = int(rng.integers(0, 3))
  data = bytearray(blob)
  if kind == 0:
    return bytes(data[:int(rng.integers(0, len(data)))])
  if kind == 1:
    for _ in range(int(rng.integers(1, 8))):
      data[int(rng.integers(0, len(data)))] ^= 1 << int(rng.integers(0, 8))
    return bytes(data)
  return bytes(rng.integers(0, 256, int(rng.integers(0, 200)), dtype=np.uint8))


def _edit_array(path, rng, tree):
  """Rewrites one array element of a cache with a plausible wrong value."""
  with np.load(path) as data:
    contents = {name: data[name].copy() for name in data.files}
  name = str(rng.choice(["node_first_child", "node_num_children",
                         "infoset_action_offset", "node_utility", "node_chance_prob",
                         "node_parent", "infoset_parent_slot", "slot_infoset",
                         "node_infoset", "level_offsets"]))
  array = contents[name]
  index = int(rng.integers(0, len(array)))
  value = rng.choice([-1, 10**6, 2, 0.5, -array[index] if array[index] else 7])
  array[index] = np.asarray(value).astype(array.dtype)
  np.savez(path, **contents)
  return name


def test_fuzz_crafted_files(tmp_path):
  rng = np.random.default_rng(16)
  tally = collections.Counter()
  tree = compiled_tree.compile_game("kuhn_poker")
  reference = tree.node_utility.copy()
  cache = tmp_path / "cache"
  compiled_tree.compile_game("kuhn_poker", cache_dir=str(cache))
  (cache_file,) = cache.glob("*.npz")
  original = cache_file.read_bytes()
  for trial in range(24):
    if trial % 2:
      cache_file.write_bytes(_damaged(original, rng))
    else:
      cache_file.write_bytes(original)
      _edit_array(cache_file, rng, tree)
    with warnings.catch_warnings(record=True) as caught:
      warnings.simplefilter("always")
      with _deadline(10):
        loaded = compiled_tree.compile_game("kuhn_poker", cache_dir=str(cache))
    assert any("Refusing the cached tree" in str(w.message) for w in caught), trial
    np.testing.assert_array_equal(loaded.node_utility, reference)
    tally["refused and rebuilt"] += 1
  strategy = tmp_path / "s.npz"
  strategy_files.save_strategy(strategy, tree, tree.uniform_slots())
  blob = strategy.read_bytes()
  checkpoint = tmp_path / "c.checkpoint.npz"
  solver = registry.make_solver(registry.parse_solver("cfr+"), tree)
  solver.evaluate_and_update_policy()
  solver_runs.save_checkpoint(checkpoint, "kuhn_poker()", "cfr+", 1, 0.1,
                              solver.state_dict())
  checkpoint_blob = checkpoint.read_bytes()
  for _ in range(24):
    strategy.write_bytes(_damaged(blob, rng))
    outcome = _outcome(lambda: strategy_files.load_strategy(strategy, tree))
    tally[f"strategy file: {outcome}"] += 1
    checkpoint.write_bytes(_damaged(checkpoint_blob, rng))
    fresh = registry.make_solver(registry.parse_solver("cfr+"), tree)

    def resume(fresh=fresh):
      _, _, state = solver_runs.load_checkpoint(checkpoint, "kuhn_poker()", "cfr+")
      fresh.load_state_dict(state)
      fresh.evaluate_and_update_policy()
      assert np.all(np.isfinite(fresh.average_strategy_slots()))
    tally[f"checkpoint: {_outcome(resume)}"] += 1
  _report("files", tally)


# CSV rows -------------------------------------------------------------------------

def test_fuzz_csv_rows_are_never_lost_duplicated_or_replayed(tmp_path):
  rng = np.random.default_rng(17)
  columns = ["key", "value"]
  path = tmp_path / "rows.csv"
  expected = {}
  # Each is invalid: wrong field count, unbalanced quote, non-finite or non-numeric
  # value, or a duplicate of the first row's key.
  garbage = ["garbage,row", '"unbalanced,1', "1,2,3", "x", "", "5,nan", "6,inf",
             "7,1e400", "ünïcode,x", "100,5"]
  tally = collections.Counter()
  for round_index in range(12):
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")
      output = results_csv.AppendOnlyCsv(path, columns, numeric=["value"], key=["key"])
    assert {row["key"]: row["value"] for row in output.rows} == expected
    key = str(round_index + 100)
    output.append({"key": key, "value": round_index})
    expected[key] = str(round_index)
    output.close()
    bad = str(rng.choice(garbage))
    half = bool(rng.random() < 0.5)
    with open(path, "a") as file:
      file.write(bad if half else bad + "\n")
    tally["half-written" if half else "malformed"] += 1
  rejected = results_csv.rejected_path(path).read_text()
  assert rejected.count("\n") >= 1
  _report("CSV rows", tally)


# CLI flags ----------------------------------------------------------------------------

CLI_CASES = [
    ("solve", "--game=kuhn_poker", "--solver=cfr+(cse=1e308)", "--iterations=2"),
    ("solve", "--game=kuhn_poker", "--solver=cfr", "--iterations=2", "--time_limit=inf"),
    ("solve", "--game=python_leduc(max_raises=-1)", "--iterations=2"),
    ("solve", "--game=kuhn_poker", "--eval_every=1e400s", "--iterations=2"),
    ("play", "--game=python_rps", "--player0=solver(seconds=inf)"),
    ("play", "--game=python_rps", "--move=1e400s"),
    ("play", "--game=python_rps", "--player0=ismcts(simulations=5,uct_c=inf)"),
    ("evaluate", "--game=kuhn_poker", "--player=random", "--seed=-1", "--move=1it"),
    ("tournament", "--game=python_rps", "--player=random", "--self_play",
     "--output=/dev/null", "--matches=1"),
    ("best_response", "--game=kuhn_poker", "--player=2"),
]


def test_fuzz_cli_flags(tmp_path):
  env = dict(os.environ, PYTHONPATH=REPO)
  tally = collections.Counter()
  pending = list(enumerate(CLI_CASES))
  running = []
  results = {}
  while pending or running:
    while pending and len(running) < 3:
      index, (module, *flags) = pending.pop(0)
      flags = [f.replace("--output=evaluate", f"--output={tmp_path}/e") for f in flags]
      extra = [f"--output={tmp_path / f'e{index}.csv'}"] if module == "evaluate" else []
      extra += [f"--output_dir={tmp_path / str(index)}"] if module in (
          "solve", "best_response") else []
      running.append((index, time.monotonic(), subprocess.Popen(
          [sys.executable, "-m", f"ggp_cr.examples.{module}", *flags, *extra],
          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
          env=env)))
    time.sleep(0.05)
    for entry in list(running):
      index, start, process = entry
      if process.poll() is None and time.monotonic() - start < 60:
        continue
      if process.poll() is None:
        process.kill()
        pytest.fail(f"hang: {CLI_CASES[index]}")
      results[index] = (process.returncode, process.stderr.read())
      running.remove(entry)
  for index, (code, stderr) in sorted(results.items()):
    case = CLI_CASES[index]
    assert code == 1, (case, code, stderr[-1500:])
    assert "Traceback" not in stderr, (case, stderr[-1500:])
    assert len(stderr.strip().splitlines()) == 1, (case, stderr[-1500:])
    tally["one-line error, exit 1"] += 1
  assert not list(tmp_path.glob("e*.csv")), "a refused evaluate left a CSV behind"
  _report("CLI flags", tally)


def test_sigint_to_solve_saves_and_exits_130(tmp_path):
  env = dict(os.environ, PYTHONPATH=REPO)
  process = subprocess.Popen(
      [sys.executable, "-m", "ggp_cr.examples.solve", "--game=kuhn_poker",
       "--solver=cfr+", "--iterations=1000000000", "--eval_every=100",
       f"--output_dir={tmp_path}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
      text=True, cwd=REPO, env=env)
  for line in process.stdout:
    if " it " in line:
      break
  process.send_signal(signal.SIGINT)
  try:
    process.communicate(timeout=60)
  except subprocess.TimeoutExpired:
    process.kill()
    pytest.fail("solve did not stop on SIGINT")
  assert process.returncode == 130
  (csv_path,) = tmp_path.glob("*.csv")
  assert len(csv_path.read_text().splitlines()) >= 2
  assert list(tmp_path.glob("*.checkpoint.npz"))


# Issue 43 (workers, counts, rows): orphan workers, counts that fill memory, worker
# caps, rows outside the plan or range, kernel compilation outside the clock --------

import itertools  # pylint: disable=g-import-not-at-top,wrong-import-position,wrong-import-order
import tracemalloc  # pylint: disable=g-import-not-at-top,wrong-import-position,wrong-import-order

from ggp_cr.algorithms.config import worker_counts  # pylint: disable=g-import-not-at-top,wrong-import-position
from ggp_cr.algorithms.evaluation import kernel_warm_up  # pylint: disable=g-import-not-at-top,wrong-import-position
from ggp_cr.algorithms.evaluation import tournament  # pylint: disable=g-import-not-at-top,wrong-import-position
from ggp_cr.algorithms.evaluation import tournament_summary  # pylint: disable=g-import-not-at-top,wrong-import-position
from ggp_cr.algorithms import worker_processes  # pylint: disable=g-import-not-at-top,wrong-import-position

_KILL_PLAYERS = ("random", "cr", "oos")
_KILL_MATCHES = 12
_KILL_BUDGET = "0.02s"  # a steady pace: the run is still going when killed


def _descendants(pid):
  """The live (not zombie) processes below `pid`, from /proc."""
  parents = {}
  for entry in os.listdir("/proc"):
    if entry.isdigit():
      try:
        with open(f"/proc/{entry}/stat") as file:
          fields = file.read().rsplit(")", 1)[1].split()
      except OSError:
        continue
      if fields[0] != "Z":
        parents.setdefault(int(fields[1]), []).append(int(entry))
  found, frontier = [], [pid]
  while frontier:
    children = parents.get(frontier.pop(), [])
    found += children
    frontier += children
  return found


def _alive(pid):
  try:
    with open(f"/proc/{pid}/stat") as file:
      return file.read().rsplit(")", 1)[1].split()[0] != "Z"
  except OSError:
    return False


def _left_behind(process, kill, children):
  """Sends `kill` to `process`, then the `children` still alive 15 s after it ended
  (SIGKILLed, so that the test leaves nothing behind either)."""
  process.send_signal(kill)
  process.wait(timeout=60)
  stop = time.monotonic() + 15
  while any(_alive(pid) for pid in children) and time.monotonic() < stop:
    time.sleep(0.1)
  left = [pid for pid in children if _alive(pid)]
  for pid in left:
    os.kill(pid, signal.SIGKILL)
  return left


def _tournament_command(output):
  return [sys.executable, "-m", "ggp_cr.examples.tournament", "--game=kuhn_poker",
          *[f"--player={p}" for p in _KILL_PLAYERS], f"--preplay={_KILL_BUDGET}",
          f"--move={_KILL_BUDGET}",
          f"--matches={_KILL_MATCHES}", "--workers=2", f"--output={output}",
          "--progress_seconds=0.2"]


def _rows(output):
  return output.read_text().splitlines()[1:] if output.exists() else []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_killed_two_worker_tournament_leaves_no_process_and_resumes_exactly(tmp_path):
  output = tmp_path / "kill.csv"
  env = dict(os.environ, PYTHONPATH=REPO)
  for kill in (signal.SIGTERM, signal.SIGKILL):
    before = len(_rows(output))
    process = subprocess.Popen(_tournament_command(output), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, cwd=REPO, env=env)
    deadline = time.monotonic() + 240
    workers = []
    while len(_rows(output)) < before + 3 or len(workers) < 2:
      assert process.poll() is None, f"the tournament ended before the kill: {kill}"
      assert time.monotonic() < deadline, "no rows within 240 s"
      workers = _descendants(process.pid)
      time.sleep(0.05)
    left = _left_behind(process, kill, workers)
    assert not left, f"{kill.name}: workers {left} outlived their parent"
  finished = subprocess.run(_tournament_command(output), capture_output=True, text=True,
                            cwd=REPO, env=env, timeout=600, check=False)
  assert finished.returncode == 0, finished.stderr[-1500:]
  config = tournament.TournamentConfig.create(
      "kuhn_poker", _KILL_PLAYERS, _KILL_MATCHES, _KILL_BUDGET, _KILL_BUDGET)
  keys = [tuple(int(v) for v in line.split(",")[:3]) for line in _rows(output)]
  assert sorted(keys) == sorted(p.key for p in tournament.plan(config))


class _Stop(Exception):
  pass


def _stop_at_first_row(self, row):
  """AppendOnlyCsv.append patched in: writes the row, then stops the run."""
  _APPEND(self, row)
  raise _Stop(row)


_APPEND = results_csv.AppendOnlyCsv.append


def _rps_config(matches):
  return tournament.TournamentConfig.create("python_rps", ["random", "ismcts(10)"],
                                            matches, "0", "1it")


def test_counts_are_checked_and_plans_are_lazy(tmp_path, monkeypatch):
  tally = collections.Counter()
  for bad in (10**13, 10**20, 0, -1, 1.5, True):
    with pytest.raises(ValueError, match="matches must be"):
      with _deadline(5):
        _rps_config(bad)
    tally["--matches refused"] += 1
  with pytest.raises(ValueError, match="workers must be"):
    tournament.run_tournament(_rps_config(1), tmp_path / "w.csv", workers=10**13)
  tally["--workers refused"] += 1
  # The plan of the largest count is generated, not stored.
  config = _rps_config(number_ranges.MAX_COUNT)
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
  _report("counts", tally)


def test_workers_are_capped_at_cores_and_work_items(tmp_path, capsys):
  lines = []
  tournament.run_tournament(_rps_config(1), tmp_path / "t.csv", workers=64,
                            progress=lines.append)
  useful = min(2, worker_counts.usable_cores())
  assert lines[0].startswith(f"workers=64 capped at {useful}: "), lines[0]
  assert f"(local, {useful} worker(s))" in lines[1], lines[1]
  quiet = []
  assert worker_counts.useful_workers(1, 10, "workers", quiet.append) == 1 and not quiet
  # solve --workers on a 9,457-history tree: walked serially, no interpreter started.
  tree = compiled_tree.compile_game("leduc_poker", workers=16, progress=True)
  assert tree.num_nodes == 9457
  assert "walked serially, not by 16 workers" in capsys.readouterr().out


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
  config = _rps_config(3)
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
  tournament.run_tournament(_rps_config(5), tmp_path / "t.csv", progress=[].append)
  assert events == ["warm-up done", "bar started"], events

# Issue 43, findings 5 and 7: API edges and newcomer traps ---------------------------
# Bad iteration counts, seats and states given to solvers and bots in code; CLI flags
# whose errors blamed the wrong flag or came after OpenSpiel's own stderr lines; one
# per-move default for every online player.

# pylint: disable=g-import-not-at-top,wrong-import-position
import concurrent.futures

from ggp_cr.algorithms.bots import players
from ggp_cr.algorithms.config import openspiel_errors
from ggp_cr.algorithms.resolving import continual_resolving
# pylint: enable=g-import-not-at-top,wrong-import-position

BAD_COUNTS = [-5, -1, 2.5, 2.0, True, False, "3", None, np.float64(1), 10**13]
ONLINE_PLAYERS = ["cr", "oos", "online_solving", "ismcts"]


def _our_solvers():
  """One instance of every solver class with an `iterate`: the registry's (ours),
  the online players' (live and compiled) and continual resolving's subgame solvers."""
  game = pyspiel.load_game("kuhn_poker")
  solvers = [registry.make_solver(name, game, 0) for name in registry.solver_names()
             if not name.startswith("openspiel_")]
  for spec in ("oos(compiled=true)", "oos(compiled=false)"):
    solvers.append(registry.make_bot(spec, game, 0, 0, limits.Budget.parse("0", "2it"))
                   .solver)
  for path in ("compiled", "live"):
    for solver in ("cfr+", "vr_mccfr"):
      bot = continual_resolving.ContinualResolvingBot(game, 0, move="2it",
                                                      solver=solver, path=path)
      state = game.new_initial_state()
      state.apply_action(0)
      state.apply_action(1)
      bot.step(state)
      solvers.append(bot.resolver.solver)
  return solvers


def test_fuzz_iterate_counts():
  tally = collections.Counter()
  kinds = set()
  for solver in _our_solvers():
    kinds.add(type(solver).__name__)
    for count in BAD_COUNTS:
      before = solver.iterations
      with pytest.raises(ValueError, match=r"num_iterations must be an integer in \[0"):
        solver.iterate(count)
      assert solver.iterations == before, (type(solver).__name__, count)
      tally["refused"] += 1
    before = solver.iterations
    solver.iterate(0)
    solver.iterate(np.int64(1))
    assert solver.iterations == before + 1, type(solver).__name__
    tally["ok"] += 2
  assert {"GeneralCFRSolver", "OutcomeSamplingSolver", "CompiledOutcomeSamplingSolver",
          "FullWidthSolver", "SamplingSolver", "CompiledResolver"} <= kinds, kinds
  _report("iterate counts", tally)


BOT_NAMES = ["random", "solver(iterations=5)", "ismcts(simulations=5)", "oos",
             "online_solving", "cr(solver=cfr+)"]
BUDGET = limits.Budget.parse("0", "5it")


def test_fuzz_bot_seats():
  game = pyspiel.load_game("kuhn_poker")
  tally = collections.Counter()
  for name in BOT_NAMES:
    for seat in (True, False, -1, 2, 0.0, "0", None):
      with pytest.raises(ValueError, match="player_id must be a seat"):
        registry.make_bot(name, game, seat, 0, BUDGET)
      tally["refused"] += 1
    registry.make_bot(name, game, np.int64(1), 0, BUDGET)
    tally["ok"] += 1
  _report("bot seats", tally)


def test_fuzz_bot_states():
  game = pyspiel.load_game("kuhn_poker")
  tally = collections.Counter()
  for name in BOT_NAMES:
    bot = registry.make_bot(name, game, 0, 0, BUDGET)
    chance = game.new_initial_state()
    terminal = game.new_initial_state()
    for action in (0, 1, 0, 0):  # deal, deal, pass, pass
      terminal.apply_action(action)
    for state, word in ((chance, "chance node"), (terminal, "terminal")):
      with pytest.raises(ValueError, match=word):
        bot.step(state)
      tally[f"{word} refused"] += 1
  tic_tac_toe = pyspiel.load_game("tic_tac_toe")
  bot = registry.make_bot("mcts(simulations=5)", tic_tac_toe, 1, 0)
  with pytest.raises(ValueError, match="player 0's turn, not player 1's"):
    bot.step(tic_tac_toe.new_initial_state())
  human = players.HumanBot(game, 0, read=lambda prompt: pytest.fail(prompt),
                           write=lambda text: None)
  with pytest.raises(ValueError, match="terminal"):
    human.step(terminal)
  _report("bot states", tally)


def test_openspiel_error_lines_are_not_printed_before_ours(capfd):
  for text in ["kuhn_poker(", "kuhn_poker(players=x)", "leduc_poker(nope=1)"]:
    with pytest.raises(ValueError, match="Cannot load game"):
      registry.load_game(text)
  # liars_dice's states do not implement ResampleFromInfostate: ismcts finds out.
  registry.make_bot("ismcts(simulations=2)", pyspiel.load_game("liars_dice"), 0, 0)
  assert capfd.readouterr().err == ""
  # What a block writes to stderr is kept when it does not raise.
  with openspiel_errors.quiet():
    os.write(2, b"kept\n")
  assert capfd.readouterr().err == "kept\n"


def test_online_players_share_one_default_budget():
  game = pyspiel.load_game("kuhn_poker")
  state = game.new_initial_state()
  state.apply_action(0)
  state.apply_action(1)
  for budget in (limits.Budget(), limits.Budget.parse("0", "0")):
    for name in ONLINE_PLAYERS:
      bot = registry.make_bot(name, game, 0, 0, budget)
      if name == "ismcts":
        simulations = bot._max_simulations  # pylint: disable=protected-access
        assert simulations == 1000
        continue
      bot.step(state)
      done = (bot.decisions[-1]["iterations"] if name == "cr" else
              bot.iterations_per_move[-1])
      assert done == 1000, name
  assert str(limits.DEFAULT_MOVE) == "1000it"  # the default play's --help documents


EDGE_CLI_CASES = [
    # (module, flags, exit code, text the error must hold, text it must not hold)
    ("tournament", ["--game=kuhn_poker", "--player=random", "--self_play", "--output="],
     1, "--output must be a file path", "PosixPath"),
    ("tournament", ["--game=kuhn_poker", "--player=random", "--self_play",
                    "--output={blocked}"], 1,
     "--output", "--plot"),
    ("evaluate", ["--game=kuhn_poker", "--player=random", "--output="], 1,
     "--output must be a file path", "PosixPath"),
    ("cr_exploitability", ["--game=kuhn_poker", "--output="], 1,
     "--output must be a file path", "PosixPath"),
    ("play", ["--game=kuhn_poker("], 1, "Missing closing bracket", "OpenSpiel exception"),
    ("best_response", ["--game=kuhn_poker("], 1, "Missing closing bracket",
     "OpenSpiel exception"),
    ("game_info", ["--game=goofspiel"], 1, "--turn_based", "load_game_as_turn_based"),
    ("play", ["--game=kuhn_poker", "--player0=oos", "--player1=online_solving"], 0, "",
     "zero"),
    ("tournament", ["--game=kuhn_poker", "--player=oos", "--player=random",
                    "--matches=1", "--workers=1", "--preplay=0", "--move=0",
                    "--output={tmp}/t.csv"], 0, "", "zero"),
]


def test_fuzz_cli_edges(tmp_path):
  env = dict(os.environ, PYTHONPATH=REPO)
  (tmp_path / "file").write_text("a file where a folder should be")
  blocked = tmp_path / "file" / "t.csv"

  def run(index):
    module, flags, *_ = EDGE_CLI_CASES[index]
    flags = [f.format(blocked=blocked, tmp=tmp_path) for f in flags]
    if module == "best_response":
      flags.append(f"--output_dir={tmp_path / str(index)}")
    try:
      return subprocess.run(
          [sys.executable, "-m", f"ggp_cr.examples.{module}", *flags],
          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
          env=env, timeout=120)
    except subprocess.TimeoutExpired:
      return None

  with concurrent.futures.ThreadPoolExecutor(3) as pool:
    results = list(pool.map(run, range(len(EDGE_CLI_CASES))))
  wrong = []
  for (module, flags, expected_code, holds, lacks), result in zip(EDGE_CLI_CASES,
                                                                   results):
    if result is None:
      wrong.append(((module, *flags), "hang"))
      continue
    stderr = result.stderr
    one_line = len(stderr.strip().splitlines()) == 1
    if (result.returncode != expected_code or holds not in stderr or lacks in stderr or
        (expected_code and not one_line)):
      wrong.append(((module, *flags), result.returncode, stderr[-800:]))
  assert not wrong, "\n".join(map(str, wrong))
  _report("CLI edges", collections.Counter(
      "refused in one line" if result.returncode else "played" for result in results))


# Issue 43, follow-up: every example's integer flags, every worker pool ---------------
# Each integer flag of each example is checked against its range before any work (one
# line naming the flag and the range); every worker pool of the package (parallel
# extraction, the best-response memory probe, the tournament) dies with its parent
# and is capped at the usable cores.

# pylint: disable=g-import-not-at-top,wrong-import-position
import ast
import ctypes
import re

from ggp_cr.algorithms.evaluation import br_comparison
from ggp_cr.algorithms.tree import parallel_extraction
# pylint: enable=g-import-not-at-top,wrong-import-position

EXAMPLES = os.path.join(REPO, "ggp_cr", "examples")
_RANGE = r"must be an integer in \[[0-9,]+, [0-9,]+\], got"
COUNT_CLI_CASES = [
    # (module, bad flag, the flag named in the one-line error)
    ("mixed_sampling_exploration", "--seeds=10000000000000", "--seeds"),
    ("mixed_sampling_exploration", "--iterations=0", "--iterations"),
    ("offline_mccfr_comparison", "--points_per_decade=1000000000", "--points_per_decade"),
    ("offline_mccfr_comparison", "--workers=10000000000000", "--workers"),
    ("cfrd_eval", "--repeats=10000000000000", "--repeats"),
    ("cfrd_eval", "--player=2", "--player"),
    ("best_response", "--runs=1000000000", "--runs"),
    ("best_response", "--ismcts_seeds=0", "--ismcts_seeds"),
    ("evaluate", "--matches=10000000000000", "--matches"),
    ("cr_exploitability", "--seeds=10000000000000", "--seeds"),
    ("cr_exploitability", "--preplay=-1", "--preplay"),
    ("solve", "--seed=-1", "--seed"),
    ("play", "--match=10000000000000", "--match"),
    ("game_info", "--progress_every=-1", "--progress_every"),
    ("tournament", "--seed=100000000000", "--seed"),
]


def _integer_flag_definitions(path):
  """(line, how) of every integer flag an example defines, from its source."""
  found = []
  for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
      if node.func.attr in ("DEFINE_integer", "DEFINE_multi_integer"):
        found.append((node.lineno, node.func.attr))
  return found


def test_every_example_integer_flag_has_a_checked_range():
  """No example defines an integer flag outside cli.integer_flag (which states and
  checks its range before main)."""
  unchecked = {name: found for name in sorted(os.listdir(EXAMPLES))
               if name.endswith(".py") and name != "cli.py"
               for found in [_integer_flag_definitions(os.path.join(EXAMPLES, name))]
               if found}
  assert not unchecked, unchecked


def test_example_counts_are_refused_in_one_line_before_any_work(tmp_path):
  env = dict(os.environ, PYTHONPATH=REPO)

  def run(case):
    module, flag, _ = case
    try:
      return subprocess.run(
          [sys.executable, "-m", f"ggp_cr.examples.{module}", flag,
           f"--output_dir={tmp_path / 'out'}" if module in (
               "mixed_sampling_exploration", "offline_mccfr_comparison",
               "best_response", "solve") else "--game=kuhn_poker"],
          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
          env=env, timeout=120)
    except subprocess.TimeoutExpired:
      return None

  with concurrent.futures.ThreadPoolExecutor(3) as pool:
    results = list(pool.map(run, COUNT_CLI_CASES))
  wrong = []
  for (module, flag, name), result in zip(COUNT_CLI_CASES, results):
    if result is None:
      wrong.append((module, flag, "hang"))
      continue
    lines = result.stderr.strip().splitlines()
    if (result.returncode != 1 or len(lines) != 1 or
        not re.search(f"{name} {_RANGE}", lines[0]) or result.stdout):
      wrong.append((module, flag, result.returncode, result.stdout[-300:],
                    result.stderr[-800:]))
  assert not wrong, "\n".join(map(str, wrong))
  assert not (tmp_path / "out").exists(), "a refused run wrote its output directory"
  _report("example counts", collections.Counter(
      f"{name} refused in one line" for _, _, name in COUNT_CLI_CASES))


_EXTRACTION_SCRIPT = """
import time
import pyspiel
from ggp_cr.algorithms.tree import parallel_extraction
parallel_extraction.extract_parallel(pyspiel.load_game("kuhn_poker"), 2,
                                     frontier_size=2, keep_workers=True)
pool = parallel_extraction._pool(2)  # the pool kept for later extractions
busy = [pool.apply_async(time.sleep, (600,)) for _ in range(2)]  # a long walk each
print("extracted", flush=True)
time.sleep(600)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_killed_parent_of_a_parallel_extraction_leaves_no_process(tmp_path):
  """A worker walking a long run outlived a SIGKILLed parent until its run ended
  (idle ones stop at the closed task queue); now the kernel ends it with the parent."""
  process = subprocess.Popen([sys.executable, "-c", _EXTRACTION_SCRIPT],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             cwd=REPO, env=dict(os.environ, PYTHONPATH=REPO))
  try:
    line = process.stdout.readline()
    assert line == "extracted\n", process.stderr.read()[-1500:]
    time.sleep(1)  # the workers take their long runs
    children = _descendants(process.pid)
    assert len(children) >= 2, children  # the two workers (and a resource tracker)
    left = _left_behind(process, signal.SIGKILL, children)
    assert not left, f"processes {left} outlived their SIGKILLed parent"
  finally:
    if process.poll() is None:
      process.kill()
      process.wait()
  _report("killed extraction", collections.Counter(
      {"processes ended with their parent": len(children)}))


def test_extraction_workers_are_capped_at_the_cores(capsys):
  serial = compiled_tree.compile_game("kuhn_poker")
  useful = worker_counts.usable_cores()
  try:
    tree = parallel_extraction.extract_parallel(pyspiel.load_game("kuhn_poker"),
                                                useful + 1, frontier_size=2,
                                                progress=True)
  finally:
    parallel_extraction.shutdown_pools()
  assert compiled_tree.tree_differences(serial, tree) == []
  out = capsys.readouterr().out
  assert f"workers={useful + 1} capped at {useful}: {useful} usable core(s)" in out, out
  assert f"for {useful} workers" in out, out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl")
def test_memory_probe_of_best_response_dies_with_its_parent(tmp_path):
  """The forked process measuring a method's peak memory asks the kernel for SIGKILL
  when its parent dies (it outlived a killed best_response run before)."""
  def probe():
    signal_number = ctypes.c_int()
    ctypes.CDLL(None).prctl(2, ctypes.byref(signal_number), 0, 0, 0)  # GET_PDEATHSIG
    (tmp_path / "signal").write_text(str(signal_number.value))
  if br_comparison.peak_memory_mb(probe) is None:
    pytest.skip("no /proc/self/clear_refs")
  assert int((tmp_path / "signal").read_text()) == signal.SIGKILL
