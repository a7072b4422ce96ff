"""Regression tests of issue 12's ten findings: bad files, numbers and paths.

Each test reproduces one finding (crafted cache, malformed CSV row, colliding result
names, half-written lines, invalid policies, overflow, hangs, late path errors,
untrusted checkpoints, state API) and asserts the clean refusal that replaced it.
"""

import os
import subprocess
import sys
import warnings

import numpy as np
from open_spiel.python import policy as policy_lib
import pyspiel
import pytest

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.tree import compiled_tree

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(module, *flags, timeout=60):
  """Runs `python -m ggp_cr.examples.<module> flags`; returns the CompletedProcess."""
  env = dict(os.environ, PYTHONPATH=REPO)
  return subprocess.run([sys.executable, "-m", f"ggp_cr.examples.{module}", *flags],
                        capture_output=True, text=True, timeout=timeout, cwd=REPO,
                        env=env, check=False)


def _run_all(commands, timeout=90):
  """Runs several example commands at once; returns their CompletedProcess-likes."""
  env = dict(os.environ, PYTHONPATH=REPO)
  processes = [subprocess.Popen([sys.executable, "-m", f"ggp_cr.examples.{module}",
                                 *flags], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=REPO, env=env)
               for module, *flags in commands]
  results = []
  for process in processes:
    try:
      stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
      process.kill()
      stdout, stderr = process.communicate()
      stderr += "\nTIMEOUT"
    results.append(subprocess.CompletedProcess(process.args, process.returncode,
                                               stdout, stderr))
  return results


# Finding 1: a crafted tree cache segfaulted the CFR kernel or gave wrong answers.

def _craft_cache(path, edit, recompute_checksum):
  with np.load(path, allow_pickle=False) as data:
    contents = {name: data[name].copy() for name in data.files}
  edit(contents)
  if recompute_checksum:
    from ggp_cr.algorithms.tree import cache_validation  # pylint: disable=import-outside-toplevel
    contents["checksum"] = np.array(cache_validation.arrays_checksum(
        str(contents["game_string"]), contents["utility_sum"],
        contents["num_distinct_actions"], contents["infoset_keys"], contents))
  np.savez(path, **contents)


def _set(name, index, value):
  def edit(contents):
    contents[name][index] = value
  return edit


def _negate_utilities(contents):
  contents["node_utility"] *= -1


def _relabel_as_kuhn(contents):
  contents["game_string"] = np.array("kuhn_poker()")


def _infoset_node_not_first(contents):
  """Points an infoset's first history at a later history of it (still its own)."""
  nodes = np.flatnonzero(contents["node_infoset"] == 0)
  assert len(nodes) > 1
  contents["infoset_node"][0] = nodes[-1]


CACHE_EDITS = {
    "first_child": ("kuhn_poker", _set("node_first_child", 0, 10**8)),
    "num_children": ("kuhn_poker", _set("node_num_children", 1, 3000)),
    "action_offset": ("kuhn_poker", _set("infoset_action_offset", 3, 10**6)),
    "negated_utilities": ("kuhn_poker", _negate_utilities),
    "chance_probability": ("kuhn_poker", _set("node_chance_prob", 1, 0.5)),
    "infoset_node_not_first": ("kuhn_poker", _infoset_node_not_first),
}


@pytest.mark.parametrize("recompute_checksum", [False, True])
@pytest.mark.parametrize("edit", sorted(CACHE_EDITS))
def test_crafted_cache_is_refused_and_rebuilt(tmp_path, edit, recompute_checksum):
  game_string, change = CACHE_EDITS[edit]
  fresh = compiled_tree.compile_game(game_string, cache_dir=str(tmp_path))
  (path,) = tmp_path.glob("*.npz")
  _craft_cache(str(path), change, recompute_checksum)
  with pytest.warns(UserWarning, match="Refusing the cached tree"):
    tree = compiled_tree.compile_game(game_string, cache_dir=str(tmp_path))
  np.testing.assert_array_equal(tree.node_utility, fresh.node_utility)
  np.testing.assert_array_equal(tree.node_first_child, fresh.node_first_child)
  # The rebuilt cache is written back and then accepted silently.
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    compiled_tree.compile_game(game_string, cache_dir=str(tmp_path))


@pytest.mark.parametrize("recompute_checksum", [False, True])
def test_cache_of_another_game_is_refused(tmp_path, recompute_checksum):
  rps_dir, kuhn_dir = tmp_path / "rps", tmp_path / "kuhn"
  compiled_tree.compile_game("python_rps", cache_dir=str(rps_dir))
  compiled_tree.compile_game("kuhn_poker", cache_dir=str(kuhn_dir))
  (rps_path,) = rps_dir.glob("*.npz")
  (kuhn_path,) = kuhn_dir.glob("*.npz")
  _craft_cache(str(rps_path), _relabel_as_kuhn, recompute_checksum)
  os.replace(rps_path, kuhn_path)
  with pytest.warns(UserWarning, match="Refusing the cached tree"):
    tree = compiled_tree.compile_game("kuhn_poker", cache_dir=str(kuhn_dir))
  assert tree.num_infosets == 12


def test_crafted_cache_does_not_crash_solve(tmp_path):
  cache = str(tmp_path / "cache")
  flags = ["--game=kuhn_poker", "--solver=cfr", "--iterations=3",
           f"--cache_dir={cache}", f"--output_dir={tmp_path / 'out'}"]
  assert _run("solve", *flags).returncode == 0
  (path,) = (tmp_path / "cache").glob("*.npz")
  _craft_cache(str(path), _set("node_first_child", 0, 10**8), False)
  result = _run("solve", *flags, "--overwrite")
  assert result.returncode == 0, result.stderr[-2000:]
  assert "Refusing the cached tree" in result.stderr


# Finding 2: one malformed tournament CSV row replayed every match.

@pytest.mark.parametrize("bad_line", ["garbage,row\n", '"unbalanced,quote\n',
                                      "0,0,0" + ",x" * 18 + "\n"])
def test_malformed_tournament_row_is_set_aside_not_replayed(tmp_path, bad_line):
  from ggp_cr.algorithms.evaluation import tournament  # pylint: disable=import-outside-toplevel
  from ggp_cr.algorithms.evaluation import tournament_summary  # pylint: disable=import-outside-toplevel
  config = tournament.TournamentConfig.create("python_rps", ["random", "solver(name=cfr,iterations=2)"], 3)
  output = tmp_path / "x.csv"
  first = tournament.run_tournament(config, output, progress=None)
  with open(output, "a") as file:
    file.write(bad_line)
  played = []
  with pytest.warns(UserWarning, match="set aside 1 malformed"):
    again = tournament.run_tournament(config, output, progress=played.append)
  assert "0 to play" in played[0]
  assert len(again) == len(first) == 6
  assert not again.duplicated(["pair", "seating", "match"]).any()
  tournament_summary.summarize(again)
  assert (tmp_path / "x.csv.rejected").read_text() == bad_line
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    assert len(tournament.run_tournament(config, output, progress=None)) == 6


def test_append_only_csv_replaces_locks_and_keeps_rows(tmp_path):
  from ggp_cr.algorithms.evaluation import results_csv  # pylint: disable=import-outside-toplevel
  path = tmp_path / "r.csv"
  path.write_text("x,y\n1,2\n")
  with pytest.raises(ValueError, match="does not start with the header"):
    results_csv.AppendOnlyCsv(path, ["a", "b"])
  with results_csv.AppendOnlyCsv(path, ["a", "b"], replace=True, lock=True) as output:
    with pytest.raises(ValueError, match="being written by another run"):
      results_csv.AppendOnlyCsv(path, ["a", "b"], lock=True)
    for a in range(3):
      output.append({"a": a, "b": 0.5 * a})
    output.keep(lambda row: row["a"] != "1")
    output.append({"a": 3, "b": None})
  assert path.read_text() == "a,b\n0,0.0\n2,1.0\n3,\n"
  path.chmod(0o640)
  with results_csv.AppendOnlyCsv(path, ["a", "b"]) as again:
    again.keep(lambda row: row["a"] != "0")  # rewritten by a rename
  assert path.stat().st_mode & 0o777 == 0o640  # not the temporary file's 0o600
  assert path.read_text() == "a,b\n2,1.0\n3,\n"
  with results_csv.AppendOnlyCsv(path, ["a", "b"]) as again:
    assert again.rows == output.rows[1:]


# Finding 4: cr_exploitability glued a new row onto a half-written last line.

def test_append_only_csv_never_glues_onto_a_half_written_line(tmp_path):
  from ggp_cr.algorithms.evaluation import results_csv  # pylint: disable=import-outside-toplevel
  path = tmp_path / "r.csv"
  output = results_csv.AppendOnlyCsv(path, ["a", "b"])
  output.append({"a": 1, "b": 2.5})
  output.close()
  with open(path, "a") as file:
    file.write("3,4.")  # killed mid-write
  with pytest.warns(UserWarning, match="half-written"):
    output = results_csv.AppendOnlyCsv(path, ["a", "b"], numeric=["a", "b"])
  assert output.rows == [{"a": "1", "b": "2.5"}]
  output.append({"a": 5, "b": 6})
  output.close()
  assert path.read_text() == "a,b\n1,2.5\n5,6\n"
  assert (tmp_path / "r.csv.rejected").read_text() == "3,4.\n"


def test_read_good_rows_skips_bad_rows_and_changes_nothing(tmp_path):
  """The read-only reader (summaries of a file another run is writing) checks rows as
  the writer does, skips the bad ones with a warning and leaves the file alone."""
  from ggp_cr.algorithms.evaluation import results_csv  # pylint: disable=import-outside-toplevel
  path = tmp_path / "r.csv"
  content = "a,b\n1,2.5\n1,3\nx,4\n5,6\n7,8."  # a duplicate key, a bad number, a
  path.write_text(content)                      # half-written last line
  with pytest.warns(UserWarning, match="skipped 3 malformed or half-written"):
    rows = results_csv.read_good_rows(path, ["a", "b"], numeric=["a", "b"], key=["a"])
  assert rows == [{"a": "1", "b": "2.5"}, {"a": "5", "b": "6"}]
  assert path.read_text() == content and not results_csv.rejected_path(path).exists()
  with pytest.raises(ValueError, match="missing or empty"):
    results_csv.read_good_rows(tmp_path / "none.csv", ["a", "b"])
  with pytest.raises(ValueError, match="does not start with the header"):
    results_csv.read_good_rows(path, ["a", "c"])


def test_cr_exploitability_resumes_past_a_half_written_line(tmp_path):
  output = tmp_path / "cr.csv"
  flags = ["--game=python_rps", "--player=random", "--budget=1", f"--output={output}"]
  assert _run("cr_exploitability", *flags).returncode == 0
  with open(output, "a") as file:
    file.write("python_rps(),random(),1,1,0,0.")
  flags[2:3] = ["--budget=1", "--budget=2"]
  result = _run("cr_exploitability", *flags)
  assert result.returncode == 0, result.stderr[-2000:]
  import pandas as pd  # pylint: disable=import-outside-toplevel
  rows = pd.read_csv(output)
  assert sorted(rows.move_iterations) == [1, 2]


# Finding 3: solve truncated file names at 100 characters, so two games shared a CSV
# and --overwrite deleted the other game's results.

def test_long_game_strings_get_their_own_results_and_overwrite_only_their_own(tmp_path):
  games = [f"python_leduc(max_raises=1,cards_per_suit=2,stack2={stack})"
           for stack in (50, 77)]
  flags = ["--solver=cfr", "--iterations=2", f"--output_dir={tmp_path}"]
  for result in _run_all([("solve", f"--game={game}", *flags) for game in games]):
    assert result.returncode == 0, result.stderr[-2000:]
  before = {path.name: path.read_text() for path in tmp_path.glob("*.csv")}
  assert len(before) == 2
  assert len(list(tmp_path.glob("*.checkpoint.npz"))) == 2
  result = _run("solve", f"--game={games[1]}", *flags, "--overwrite")
  assert result.returncode == 0, result.stderr[-2000:]
  after = {path.name: path.read_text() for path in tmp_path.glob("*.csv")}
  assert after.keys() == before.keys()
  (other,) = [name for name, text in before.items() if "stack2=50" in text]
  assert after[other] == before[other]


# Finding 5: exploitability / nash_conv accepted invalid policies (0.0 for all-zero).

class _ConstantPolicy(policy_lib.Policy):
  def __init__(self, game, probabilities):
    super().__init__(game, [0, 1])
    self._probabilities = probabilities

  def action_probabilities(self, state, player_id=None):
    return dict(self._probabilities(state))


def _tabular(game, value):
  policy = policy_lib.TabularPolicy(game)
  policy.action_probability_array[:] = value
  return policy


def _invalid_policies(game):
  doubled = policy_lib.TabularPolicy(game)
  doubled.action_probability_array *= 2
  shifted = policy_lib.TabularPolicy(game)
  shifted.action_probability_array[:] = [-0.5, 1.5]
  return {
      "all_zero": _tabular(game, 0.0), "nan": _tabular(game, np.nan),
      "inf": _tabular(game, np.inf), "negative": shifted, "doubled": doubled,
      "empty_dict": _ConstantPolicy(game, lambda state: {}),
      "illegal_action": _ConstantPolicy(game, lambda state: {0: 0.5, 1: 0.25, 7: 0.25}),
  }


@pytest.mark.parametrize("kind", ["all_zero", "nan", "inf", "negative", "doubled",
                                  "empty_dict", "illegal_action"])
def test_invalid_policies_raise_like_openspiel(kind):
  from ggp_cr.algorithms.best_response import exact_br  # pylint: disable=import-outside-toplevel
  game = pyspiel.load_game("kuhn_poker")
  policy = _invalid_policies(game)[kind]
  for call in (lambda: exact_br.exploitability(game, policy),
               lambda: exact_br.nash_conv(game, policy),
               lambda: exact_br.best_response(game, policy, 0)):
    with pytest.raises(pyspiel.SpielError):
      call()
    with pytest.raises(ValueError):
      call()


def test_best_response_refuses_a_boolean_player():
  from ggp_cr.algorithms.best_response import exact_br  # pylint: disable=import-outside-toplevel
  game = pyspiel.load_game("kuhn_poker")
  with pytest.raises(ValueError, match="player must be the integer 0 or 1"):
    exact_br.best_response(game, policy_lib.TabularPolicy(game), True)
  from open_spiel.python.algorithms import best_response as openspiel_br  # pylint: disable=import-outside-toplevel
  uniform = policy_lib.TabularPolicy(game)
  value, _ = exact_br.best_response(game, uniform, 1)
  expected = openspiel_br.BestResponsePolicy(game, 1, uniform).value(
      game.new_initial_state())
  assert value == pytest.approx(expected, abs=1e-12)


# Finding 6: cfr+(cse=100) died with an OverflowError after 1,024 iterations.

def test_large_strategy_exponent_runs_without_overflow():
  from ggp_cr.algorithms.config import registry  # pylint: disable=import-outside-toplevel
  tree = compiled_tree.compile_game("kuhn_poker")
  solver = registry.make_solver(registry.parse_solver("cfr+(cse=100)"),
                                       tree)
  for _ in range(2000):
    solver.evaluate_and_update_policy()
  average = solver.average_strategy_slots()
  assert np.all(np.isfinite(average))
  np.testing.assert_allclose(np.add.reduceat(average, tree.infoset_action_offset), 1.0)


@pytest.mark.parametrize("spec", ["cfr+(cse=1e308)", "cfr(cse=inf)", "dcfr(inf,0,2)",
                                  "dcfr(-5,0,2)", "dcfr(1.5,0,1e400)",
                                  "cfr(rm=drm(-5,0))", "cfr(rm=drm(1,1e9))"])
def test_exponents_out_of_range_are_refused_at_parse_time(spec):
  from ggp_cr.algorithms.config import registry  # pylint: disable=import-outside-toplevel
  with pytest.raises(ValueError, match=r"must be (in \[|a finite number)"):
    registry.parse_solver(spec)


# Finding 7: infinite budgets and huge game parameters hung or allocated gigabytes.

@pytest.mark.parametrize("text", ["solver(seconds=inf)", "solver(seconds=1e300)",
                                  "ismcts(simulations=10,uct_c=inf)",
                                  "solver(iterations=1000000000000000000000)"])
def test_unbounded_player_parameters_are_refused(text):
  from ggp_cr.algorithms.config import registry  # pylint: disable=import-outside-toplevel
  with pytest.raises(ValueError, match="must be"):
    registry.parse_player(text)


@pytest.mark.parametrize("move", ["1e400s", "1e9s", "1e400ms", "1e300it"])
def test_unbounded_budgets_are_refused(move):
  from ggp_cr.algorithms.config import limits  # pylint: disable=import-outside-toplevel
  with pytest.raises(ValueError, match="must be"):
    limits.Budget.parse("0", move)


@pytest.mark.parametrize("game", [
    "python_princess_monster(rows=100000,cols=100000)",
    "python_princess_monster(max_turns=1000000000)",
    "python_ii_goofspiel(num_cards=100000)",
    "python_leduc(max_raises=1000000)", "python_rps(n=1000001)"])
def test_game_parameters_have_limits(game):
  with pytest.raises((ValueError, pyspiel.SpielError), match="must be in"):
    pyspiel.load_game(game)


def test_play_with_an_infinite_budget_exits_with_one_line():
  result = _run("play", "--game=python_rps", "--player0=solver(seconds=inf)",
                timeout=60)
  assert result.returncode != 0
  assert "Traceback" not in result.stderr
  assert "seconds" in result.stderr


# Finding 8: unwritable outputs failed only after the computation, with tracebacks.

def test_bad_output_paths_fail_before_any_work(tmp_path):
  blocker = tmp_path / "file"
  blocker.write_text("x")
  endless = ["--game=kuhn_poker", "--solver=cfr", "--iterations=1000000000000"]
  commands = [
      ("solve", *endless, f"--output_dir={blocker}"),
      ("solve", *endless, f"--output_dir={tmp_path / 'a'}",
       f"--save_strategy={blocker / 's.npz'}"),
      ("solve", *endless, f"--output_dir={tmp_path / 'b'}", f"--cache_dir={blocker}"),
      ("best_response", "--game=kuhn_poker", f"--output_dir={blocker / 'x'}"),
      ("cfrd_eval", "--game=kuhn_poker", "--history=0,1", f"--output={tmp_path}"),
      ("tournament", "--game=python_rps", "--player=random", "--self_play",
       "--output=/dev/null", "--matches=1"),
  ]
  for command, result in zip(commands, _run_all(commands)):
    assert result.returncode not in (0, None), (command, result.stderr[-500:])
    assert "Traceback" not in result.stderr and "TIMEOUT" not in result.stderr, \
        (command, result.stderr[-2000:])
  assert "not a regular file" in result.stderr  # the last command: /dev/null


# Finding 9: resume trusted checkpoint contents.

def _checkpoint(tmp_path, **changes):
  from ggp_cr.algorithms.evaluation import solver_runs  # pylint: disable=import-outside-toplevel
  tree = compiled_tree.compile_game("kuhn_poker")
  solver = cfr.CFRPlusSolver(tree)
  for _ in range(3):
    solver.evaluate_and_update_policy()
  state = solver.state_dict()
  iterations = changes.pop("iterations", 3)
  state.update(changes)
  path = tmp_path / "c.checkpoint.npz"
  solver_runs.save_checkpoint(path, "kuhn_poker()", "cfr+", iterations, 0.5, state)
  return path, cfr.CFRPlusSolver(tree)


def _nan_regrets():
  regrets = np.zeros(24)
  regrets[5] = np.nan
  return regrets


@pytest.mark.parametrize("changes,message", [
    (dict(regrets=_nan_regrets()), "NaN"),
    (dict(cumulative=np.full(24, np.inf)), "NaN or infinite"),
    (dict(iterations=7), "says 7 iterations but its solver state holds 3"),
    (dict(iterations=-5, iteration=-5), "must be in"),
    (dict(log_weight_scale=np.nan), "log_weight_scale"),
    (dict(strategy=np.full(24, 0.9)), "not a distribution"),
])
def test_resume_refuses_untrustworthy_checkpoints(tmp_path, changes, message):
  from ggp_cr.algorithms.evaluation import solver_runs  # pylint: disable=import-outside-toplevel
  path, solver = _checkpoint(tmp_path, **changes)
  with pytest.raises(ValueError, match=message):
    _, _, state = solver_runs.load_checkpoint(path, "kuhn_poker()", "cfr+")
    solver.load_state_dict(state)
  assert solver.iterations == 0


def test_old_weight_scale_zero_is_refused(tmp_path):
  path, solver = _checkpoint(tmp_path)
  from ggp_cr.algorithms.evaluation import solver_runs  # pylint: disable=import-outside-toplevel
  _, _, state = solver_runs.load_checkpoint(path, "kuhn_poker()", "cfr+")
  state.pop("log_weight_scale", None)
  state["weight_scale"] = 0.0
  with pytest.raises(ValueError, match="weight_scale"):
    solver.load_state_dict(state)


def test_resume_sets_a_half_written_row_aside(tmp_path):
  from ggp_cr.algorithms.evaluation import solver_runs  # pylint: disable=import-outside-toplevel
  path = tmp_path / "run.csv"
  path.write_text(",".join(solver_runs.COLUMNS) + "\n"
                  "kuhn_poker(),cfr+,0.1,1,,0.5,0.25\n"
                  "kuhn_poker(),cfr+,0.2,2,,0.4,0.2\n"
                  "kuhn_poker(),cfr+,0.3,1")  # the row of iteration 16, cut short
  with pytest.warns(UserWarning, match="half-written"):
    solver_runs.truncate_rows(path, 2)
  assert path.read_text().splitlines()[1:] == ["kuhn_poker(),cfr+,0.1,1,,0.5,0.25",
                                               "kuhn_poker(),cfr+,0.2,2,,0.4,0.2"]


def test_solve_resume_from_a_nan_checkpoint_is_one_line(tmp_path):
  flags = ["--game=kuhn_poker", "--solver=cfr+", f"--output_dir={tmp_path}"]
  assert _run("solve", *flags, "--iterations=2").returncode == 0
  (checkpoint,) = tmp_path.glob("*.checkpoint.npz")
  with np.load(checkpoint) as data:
    contents = dict(data)
  contents["state_regrets"] = contents["state_regrets"] * np.nan
  np.savez(checkpoint, **contents)
  result = _run("solve", *flags, "--iterations=4", "--resume")
  assert result.returncode == 1
  assert result.stderr.strip().count("\n") == 0 and "NaN" in result.stderr


# Finding 10: the state API returned distributions off chance nodes, raised
# AttributeError, and deserialize_state unpickled attributes (running code).

STATE_GAMES = ["python_leduc(max_raises=1,cards_per_suit=2)",
               "python_ii_goofspiel(num_cards=3,points_order=random)",
               "python_ii_goofspiel(num_cards=3)", "python_rps",
               "python_princess_monster(max_turns=2)", "python_latent_ttt"]


def _play_out(state, choose=0):
  while not state.is_terminal():
    if state.is_chance_node():
      state.apply_action(state.chance_outcomes()[choose][0])
    else:
      state.apply_action(state.legal_actions()[choose])
  return state


@pytest.mark.parametrize("game_string", STATE_GAMES)
def test_chance_outcomes_off_chance_nodes_and_actions_on_terminals_raise(game_string):
  game = pyspiel.load_game(game_string)
  state = game.new_initial_state()
  while state.is_chance_node():
    state.apply_action(state.chance_outcomes()[0][0])
  with pytest.raises(pyspiel.SpielError, match="decision node"):
    state.chance_outcomes()
  _play_out(state)
  with pytest.raises(pyspiel.SpielError, match="terminal node"):
    state.chance_outcomes()
  with pytest.raises(pyspiel.SpielError, match="game is over"):
    state.apply_action(0)


@pytest.mark.parametrize("game_string", STATE_GAMES)
def test_states_serialize_as_history_and_refuse_other_games(game_string):
  import pickle  # pylint: disable=import-outside-toplevel
  game = pyspiel.load_game(game_string)
  state = game.new_initial_state()
  for _ in range(2):
    state.apply_action(state.legal_actions()[-1])
  text = state.serialize()
  assert "__dict__" not in text and text.split("\n")[2] == " ".join(
      map(str, state.history()))
  assert str(game.deserialize_state(text)) == str(state)
  assert str(pickle.loads(pickle.dumps(state))) == str(state)
  other = pyspiel.load_game("python_rps(n=5)" if "rps" in game_string else "python_rps")
  with pytest.raises(pyspiel.SpielError, match="not python_rps"):
    other.deserialize_state(text)


def test_deserialize_state_does_not_unpickle(tmp_path):
  import base64  # pylint: disable=import-outside-toplevel
  import pickle  # pylint: disable=import-outside-toplevel
  marker = tmp_path / "ran"

  class _Payload:
    def __reduce__(self):
      return (open, (str(marker), "w"))

  crafted = ("history=\nmove_number=0\n__dict__=" +
             base64.b64encode(pickle.dumps({"x": _Payload()})).decode())
  game = pyspiel.load_game("python_leduc")
  with pytest.raises(pyspiel.SpielError):
    game.deserialize_state(crafted)
  assert not marker.exists()
