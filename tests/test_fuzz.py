"""Seeded fuzzing of bad inputs (issue 12): game parameters, solver and player strings,
numbers, state API calls, crafted files, CSV rows and CLI flags. Issue 43's
categories are in test_worker_processes, test_tournament_plan, test_api_edges and
test_example_flags.

Every input must end in a result or a clear error (ValueError / pyspiel.SpielError,
or for a CLI a non-zero exit with a one-line message): no crash, no hang (each call
has a deadline; CLIs a subprocess timeout), no silent acceptance of an input that is
invalid by construction, and no lost or duplicated results row. Each test prints its
tally (run with -s to see it).
"""

import collections
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

import fuzz_support
import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.config import number_ranges
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.evaluation import results_csv
from ggp_cr.algorithms.evaluation import solver_runs
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import strategy_files

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
    outcome = fuzz_support.outcome(lambda text=text: pyspiel.load_game(text), seconds=2.0)
    assert outcome == "clear error", f"{text} was accepted"
    tally[outcome] += 1
  for text in ["python_leduc(nope=1)", "python_ii_goofspiel(points_order=sideways)",
               "python_leduc(max_raises=0)", "python_rps(n=1)",
               "python_princess_monster(rows=1,cols=1)"]:
    tally[fuzz_support.outcome(lambda text=text: pyspiel.load_game(text).new_initial_state(),
                   seconds=2.0)] += 1
  fuzz_support.report("game parameters", tally)


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
      outcome = fuzz_support.outcome(lambda text=text: _parse_any(text))
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
    tally[fuzz_support.outcome(lambda text=text: _parse_any(text))] += 1
  fuzz_support.report("solver/player strings", tally)


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
      outcome = fuzz_support.outcome(lambda v=value, c=check: c(v, "x"))
      valid = np.isfinite(value) and low <= value <= high
      assert (outcome == "ok") == bool(valid), value
      tally[outcome] += 1
  for text in ["1e400s", "infs", "nans", "-1s", "1e9s", "5", "1.5it", "1e13it", "0.5ms",
               "10it", "2s", "s", "", "1e-400s"]:
    tally[fuzz_support.outcome(lambda text=text: limits.Budget.parse("0", text))] += 1
  for text in ["log", "0", "-3", "1e400s", "nans", "infs", "10", "0.5s", "x"]:
    tally[fuzz_support.outcome(lambda text=text: solver_runs.parse_eval_every(text))] += 1
  fuzz_support.report("numbers", tally)


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
            tally[fuzz_support.outcome(call)] += 1
          except Exception as error:  # pylint: disable=broad-except
            pytest.fail(f"{game_string} {name} at {state.history()}: "
                        f"{type(error).__name__}: {error}")
        if state.is_terminal():
          break
        state.apply_action(int(rng.choice(state.legal_actions())))
      with pytest.raises(fuzz_support.CLEAR_ERRORS):
        state.apply_action(0)
      with pytest.raises(fuzz_support.CLEAR_ERRORS):
        state.chance_outcomes()
      assert str(pickle.loads(pickle.dumps(state))) == str(state)
  fuzz_support.report("state API", tally)


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
      with fuzz_support.deadline(10):
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
    outcome = fuzz_support.outcome(lambda: strategy_files.load_strategy(strategy, tree))
    tally[f"strategy file: {outcome}"] += 1
    checkpoint.write_bytes(_damaged(checkpoint_blob, rng))
    fresh = registry.make_solver(registry.parse_solver("cfr+"), tree)

    def resume(fresh=fresh):
      _, _, state = solver_runs.load_checkpoint(checkpoint, "kuhn_poker()", "cfr+")
      fresh.load_state_dict(state)
      fresh.evaluate_and_update_policy()
      assert np.all(np.isfinite(fresh.average_strategy_slots()))
    tally[f"checkpoint: {fuzz_support.outcome(resume)}"] += 1
  fuzz_support.report("files", tally)


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
  fuzz_support.report("CSV rows", tally)


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
  env = dict(os.environ, PYTHONPATH=fuzz_support.REPO)
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
          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=fuzz_support.REPO,
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
  fuzz_support.report("CLI flags", tally)


def test_sigint_to_solve_saves_and_exits_130(tmp_path):
  env = dict(os.environ, PYTHONPATH=fuzz_support.REPO)
  process = subprocess.Popen(
      [sys.executable, "-m", "ggp_cr.examples.solve", "--game=kuhn_poker",
       "--solver=cfr+", "--iterations=1000000000", "--eval_every=100",
       f"--output_dir={tmp_path}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
      text=True, cwd=fuzz_support.REPO, env=env)
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
