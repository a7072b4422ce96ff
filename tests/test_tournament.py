"""Tournaments: resumable CSV, executors with equal results, summaries, clear errors."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.evaluation import tournament
from ggp_cr.algorithms.evaluation import tournament_summary
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import strategy_files


def _config(players=("random", "ismcts(simulations=20)"), matches=3, **kwargs):
  return tournament.TournamentConfig.create("python_rps", list(players), matches,
                                            **kwargs)


def _sorted(rows):
  return (rows[tournament.DETERMINISTIC_COLUMNS]
          .sort_values(["pair", "seating", "match"]).reset_index(drop=True))


def test_random_vs_random_on_rps_has_mean_near_zero(tmp_path):
  config = _config(["random"], matches=200, self_play=True)
  rows = tournament.run_tournament(config, tmp_path / "r.csv", progress=None)
  summary = tournament_summary.summarize(rows)
  assert len(summary) == 1 and summary["matches"][0] == 400
  assert abs(summary["mean"][0]) < 0.15
  assert 0.05 < summary["ci95"][0] < 0.12  # 1.96 * sqrt(2/3) / 20 = 0.080


def test_pure_strategies_on_rps_score_the_game_payoffs_exactly(tmp_path):
  """Three saved pure strategies (always Pick(1), Pick(2), Pick(3)) play every pair in
  both seatings: each match is decided, so each pair's mean is the game's payoff of the
  two picks (from pyspiel, seat 0's return) in every match, with zero spread."""
  game = registry.load_game("python_rps")
  tree = compiled_tree.cached_tree(game)
  names = []
  for pick in range(3):
    slots = np.zeros(tree.num_infoset_actions)
    slots[tree.infoset_action_offset + pick] = 1.0
    path = tmp_path / f"pick{pick}.npz"
    strategy_files.save_strategy(path, tree, slots)
    names.append(f"strategy(path={path})")
  config = tournament.TournamentConfig.create("python_rps", names, 2)
  rows = tournament.run_tournament(config, tmp_path / "pure.csv", progress=None)
  assert (rows["row_payoff"] + rows["col_payoff"] == 0).all()
  summary = tournament_summary.summarize(rows)
  assert len(summary) == 3 and (summary["matches"] == 4).all()
  for record in summary.itertuples():
    state = game.new_initial_state()
    state.apply_action(names.index(record.row_player))
    state.apply_action(names.index(record.col_player))
    expected = state.returns()[0]
    assert expected != 0
    assert record.mean == record.mean_as_player0 == record.mean_as_player1 == expected
    assert record.ci95 == 0


def test_plan_covers_both_seatings_of_every_pair():
  config = _config(["random", "ismcts(10)", "ismcts(20)"], matches=2)
  planned = tournament.plan(config)
  assert len(planned) == 3 * 2 * 2
  assert len({p.key for p in planned}) == len(planned)
  assert {p.seats for p in planned if p.pair == 0} == {
      ("random", "ismcts(10)"), ("ismcts(10)", "random")}


def test_rerun_after_truncation_plays_only_missing_matches(tmp_path, monkeypatch):
  output = tmp_path / "t.csv"
  config = _config(matches=4)
  full = tournament.run_tournament(config, output, progress=None)
  lines = output.read_bytes().splitlines(keepends=True)
  # Keep the header and 5 rows, then half of the next row, as a crash mid-write would.
  output.write_bytes(b"".join(lines[:6]) + lines[6][:10])
  played = []
  original = tournament.play_planned
  monkeypatch.setattr(tournament, "play_planned",
                      lambda c, p, t: played.append(p.key) or original(c, p, t))
  resumed = tournament.run_tournament(config, output, progress=None)
  assert len(played) == len(full) - 5
  assert len(resumed) == len(full) == 8
  assert not resumed.duplicated(["pair", "seating", "match"]).any()
  pd.testing.assert_frame_equal(_sorted(resumed), _sorted(full))
  # The rows returned (kept at opening plus appended) are exactly the file's, every
  # column, as a reader of the file gets them.
  pd.testing.assert_frame_equal(resumed, tournament.read_results(config, output))
  played.clear()
  tournament.run_tournament(config, output, progress=None)
  assert not played


def test_more_matches_extend_a_finished_tournament(tmp_path, monkeypatch):
  """A rerun with more matches a pair and seating plays only the new ones (with the
  seeds a run of that many from scratch gives them), keeps the rows played, and
  records the new count; the result equals that run's."""
  output = tmp_path / "x.csv"
  first = tournament.run_tournament(_config(matches=2), output, progress=None)
  before = output.read_bytes()
  played = []
  original = tournament.play_planned
  monkeypatch.setattr(tournament, "play_planned",
                      lambda c, p, t: played.append(p.key) or original(c, p, t))
  extended = tournament.run_tournament(_config(matches=3), output, progress=None)
  assert sorted(played) == [(0, seating, 2) for seating in (0, 1)]  # the one pair
  assert output.read_bytes().startswith(before) and len(first) == 4
  monkeypatch.undo()
  scratch = tournament.run_tournament(_config(matches=3), tmp_path / "s.csv",
                                      progress=None)
  pd.testing.assert_frame_equal(_sorted(extended), _sorted(scratch))
  assert json.loads(tournament.sidecar_path(output).read_text())["matches"] == 3


def test_killed_tournament_resumes_with_exactly_the_planned_matches(tmp_path):
  output = tmp_path / "killed.csv"
  players = ["random", "ismcts(simulations=200)"]
  command = [sys.executable, "-m", "ggp_cr.examples.tournament", "--game=python_rps",
             f"--player={players[0]}", f"--player={players[1]}", "--matches=25",
             "--workers=1", "--preplay=0", "--move=0", f"--output={output}",
             "--progress_seconds=100"]
  process = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
  try:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
      if output.exists() and output.read_bytes().count(b"\n") >= 5:
        break
      time.sleep(0.02)
    os.killpg(process.pid, signal.SIGKILL)
  finally:
    process.wait()
  assert process.returncode == -signal.SIGKILL, "the run ended before it was killed"
  rows_at_kill = output.read_bytes().count(b"\n") - 1
  assert 4 <= rows_at_kill < 50
  config = tournament.TournamentConfig.create("python_rps", players, 25)
  rows = tournament.run_tournament(config, output, progress=None)
  keys = list(zip(rows["pair"], rows["seating"], rows["match"]))
  assert sorted(keys) == sorted(p.key for p in tournament.plan(config))
  for planned in tournament.plan(config)[:3] + tournament.plan(config)[-2:]:
    expected = tournament.play_planned(config.to_json(), planned)
    got = rows[(rows["seating"] == planned.seating) & (rows["match"] == planned.index)]
    assert len(got) == 1
    for column in tournament.DETERMINISTIC_COLUMNS:
      assert got.iloc[0][column] == expected[column], column


def test_process_pool_and_ray_give_the_in_process_results(tmp_path):
  config = _config(matches=3)
  in_process = tournament.run_tournament(config, tmp_path / "one.csv", progress=None)
  pool = tournament.run_tournament(config, tmp_path / "pool.csv", workers=2,
                                   progress=None)
  pd.testing.assert_frame_equal(_sorted(pool), _sorted(in_process))
  pytest.importorskip("ray", reason="ray is not installed (pip install -e '.[ray]')")
  on_ray = tournament.run_tournament(config, tmp_path / "ray.csv", workers=2,
                                     executor="ray", progress=None)
  pd.testing.assert_frame_equal(_sorted(on_ray), _sorted(in_process))


def test_mismatched_results_file_is_refused_and_left_intact(tmp_path):
  output = tmp_path / "m.csv"
  tournament.run_tournament(_config(matches=2), output, progress=None)
  before = output.read_bytes()
  with pytest.raises(ValueError, match="different tournament configuration.*matches: "
                     "file has 2, this run has 1"):
    tournament.run_tournament(_config(matches=1), output, progress=None)
  with pytest.raises(ValueError, match="seed: file has 0, this run has 5"):
    # More matches extend only an otherwise equal configuration.
    tournament.run_tournament(_config(matches=3, seed=5), output, progress=None)
  with pytest.raises(ValueError, match="seed: file has 0, this run has 5"):
    tournament.run_tournament(_config(matches=2, seed=5), output, progress=None)
  assert output.read_bytes() == before
  tournament.sidecar_path(output).unlink()
  with pytest.raises(ValueError, match="configuration file m.config.json is missing"):
    tournament.run_tournament(_config(matches=2), output, progress=None)
  foreign = tmp_path / "foreign.csv"
  foreign.write_text("a,b\n1,2\n")
  with pytest.raises(ValueError, match="does not start with the tournament CSV header"):
    tournament.run_tournament(_config(), foreign, progress=None)
  assert foreign.read_text() == "a,b\n1,2\n"


def test_unwritable_output_fails_before_any_match(tmp_path, monkeypatch):
  monkeypatch.setattr(tournament, "play_planned",
                      lambda *args: pytest.fail("a match was played"))
  blocker = tmp_path / "plain_file"
  blocker.write_text("")
  with pytest.raises(ValueError, match="--output: .* is not a folder"):
    tournament.run_tournament(_config(), blocker / "r.csv", progress=None)
  with pytest.raises(ValueError, match="is a folder"):
    tournament.run_tournament(_config(), tmp_path, progress=None)


@pytest.mark.parametrize("kwargs, message", [
    (dict(players=["random", "random"]), "listed twice"),
    (dict(players=["random"]), "at least two players"),
    (dict(players=["random", "human"]), "interactive"),
    (dict(players=["random", "alphago"]), "Unknown player 'alphago'"),
    (dict(matches=0), r"matches must be in \[1, 1e\+12\]"),
    (dict(matches=10**13), r"matches must be in \[1, 1e\+12\]"),
    (dict(preplay="5"), "needs a unit"),
    (dict(game="no_such_game"), "unknown game name"),
    (dict(game="kuhn_poker(players=3)"), "two-player game"),
])
def test_bad_configuration_is_a_clear_error(kwargs, message):
  arguments = dict(game="python_rps", players=["random", "ismcts(10)"], matches=1)
  arguments.update(kwargs)
  with pytest.raises(ValueError, match=message):
    tournament.TournamentConfig.create(arguments.pop("game"), arguments.pop("players"),
                                       arguments.pop("matches"), **arguments)


def test_bad_executor_and_missing_ray_are_explained(tmp_path, monkeypatch):
  with pytest.raises(ValueError, match="executor must be one of local, ray"):
    tournament.run_tournament(_config(), tmp_path / "x.csv", executor="slurm")
  monkeypatch.setitem(sys.modules, "ray", None)
  with pytest.raises(ValueError, match='pip install -e ".\\[ray\\]"'):
    tournament.run_tournament(_config(), tmp_path / "x.csv", executor="ray")


def test_summary_matrix_and_heatmap(tmp_path):
  rows = pd.DataFrame({
      "pair": [0, 0, 0, 0], "seating": [0, 1, 0, 1], "match": [0, 0, 1, 1],
      "row_player": ["a"] * 4, "col_player": ["b"] * 4,
      "row_payoff": [1.0, 0.0, 1.0, 2.0], "col_payoff": [-1.0, 0.0, -1.0, -2.0]})
  summary = tournament_summary.summarize(rows)
  assert summary["mean"][0] == pytest.approx(1.0)
  assert summary["ci95"][0] == pytest.approx(1.96 * (2 / 3) ** 0.5 / 2)
  assert summary["mean_as_player1"][0] == pytest.approx(1.0)
  assert "+1.000 ± 0.800" in tournament_summary.format_summary(summary)
  means, cis = tournament_summary.payoff_matrix(rows, ["a", "b"])
  assert means.loc["a", "b"] == 1.0 and means.loc["b", "a"] == -1.0
  assert pd.isna(means.loc["a", "a"]) and cis.loc["b", "a"] == cis.loc["a", "b"]
  path = tmp_path / "h.png"
  tournament_summary.plot_heatmap(means, cis, path, "test")
  assert path.stat().st_size > 1000


def test_example_writes_summary_and_heatmap(tmp_path):
  output = tmp_path / "ex.csv"
  result = subprocess.run(
      [sys.executable, "-m", "ggp_cr.examples.tournament", "--game=python_rps",
       "--player=random", "--player=ismcts(10)", "--matches=2", "--workers=1",
       f"--output={output}"], capture_output=True, text=True, timeout=120)
  assert result.returncode == 0, result.stderr
  assert "random" in result.stdout and "±" in result.stdout
  assert (tmp_path / "ex.summary.csv").exists() and (tmp_path / "ex.heatmap.png").exists()
  # The summary written is that of the rows written (zero-sum payoffs).
  rows = pd.read_csv(output)
  assert len(rows) == 4 and (rows["row_payoff"] + rows["col_payoff"] == 0).all()
  (written,) = pd.read_csv(tmp_path / "ex.summary.csv").itertuples()
  assert written.matches == 4
  assert written.mean == pytest.approx(rows["row_payoff"].mean(), abs=1e-12)
  assert written.mean_as_player1 == pytest.approx(
      rows.loc[rows["seating"] == 1, "row_payoff"].mean(), abs=1e-12)
  config = json.loads(tournament.sidecar_path(output).read_text())
  assert config["players"] == ["random", "ismcts(10)"] and config["matches"] == 2
  bad = subprocess.run(
      [sys.executable, "-m", "ggp_cr.examples.tournament", "--player=random",
       "--player=ismcts(10)", "--matches=1", f"--output={output}"],
      capture_output=True, text=True, timeout=120)
  assert bad.returncode == 1 and "different tournament configuration" in bad.stderr


def test_noplay_summarizes_a_file_while_another_run_writes_it(tmp_path):
  """--noplay reads the matches played so far (no lock, nothing rewritten, a
  half-written last row skipped) and summarizes and plots exactly those; the title
  and the output say how many of the planned were played."""
  output = tmp_path / "t.csv"
  config = _config(players=("random", "ismcts(10)"), matches=6)
  tournament.run_tournament(config, output, progress=None)
  played = pd.read_csv(output).iloc[:7]  # 7 of the 12 planned, as if stopped
  text = output.read_text().splitlines(keepends=True)
  output.write_text("".join(text[:8]) + text[8][:20])  # and the 8th half-written
  before = output.read_bytes()
  command = [sys.executable, "-m", "ggp_cr.examples.tournament", "--game=python_rps",
             "--player=random", "--player=ismcts(10)", "--matches=6",
             "--preplay=0", "--move=0", "--noplay", f"--output={output}",
             f"--plot={tmp_path / 'figures' / 'partial.png'}"]
  with open(output, "rb") as held:
    import fcntl  # pylint: disable=import-outside-toplevel
    fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a running tournament's lock
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
  assert result.returncode == 0, result.stderr
  assert "7 of the 12 planned matches" in result.stdout
  assert output.read_bytes() == before  # read only
  assert (tmp_path / "figures" / "partial.png").stat().st_size > 1000
  (written,) = pd.read_csv(tmp_path / "t.summary.csv").itertuples()
  assert written.matches == 7
  assert written.mean == pytest.approx(played["row_payoff"].mean(), abs=1e-12)
  wrong = [arg.replace("--matches=6", "--matches=2") for arg in command]
  result = subprocess.run(wrong, capture_output=True, text=True, timeout=120)
  assert result.returncode == 1 and "different tournament configuration" in result.stderr
  missing = command[:-2] + [f"--output={tmp_path / 'missing.csv'}"]
  result = subprocess.run(missing, capture_output=True, text=True, timeout=120)
  assert result.returncode == 1 and "not a tournament results file" in result.stderr


def test_workers_hand_the_compiled_tree_they_load_to_the_bots(tmp_path, monkeypatch):
  """With a TreeLoading every worker loads the game's tree before its first match,
  saving it to the cache directory, and hands it to every bot it makes
  (registry.make_bot's `tree`), leaving no tree behind in a module global; without it
  no tree is loaded nor handed."""
  config = tournament.TournamentConfig.create("kuhn_poker", ["random", "ismcts(5)"], 1)
  game = registry.load_game("kuhn_poker")
  monkeypatch.setattr(compiled_tree, "PROCESS_TREES", compiled_tree._ProcessTrees())  # pylint: disable=protected-access
  monkeypatch.setattr(tournament, "_WORKER_CACHE", {})
  handed = []
  make_bot = registry.make_bot

  def recording_make_bot(*args, tree=None, **kwargs):
    handed.append(tree)
    return make_bot(*args, tree=tree, **kwargs)

  monkeypatch.setattr(registry, "make_bot", recording_make_bot)
  tournament.run_tournament(config, tmp_path / "plain.csv", progress=None)
  assert handed and all(tree is None for tree in handed)
  del handed[:]
  cache = tmp_path / "trees"
  cache.mkdir()
  tournament.run_tournament(config, tmp_path / "loaded.csv", progress=None,
                            tree=tournament.TreeLoading(str(cache)))
  assert handed and all(tree.game_string == str(game) for tree in handed)
  assert compiled_tree.tree_source(game) is None  # nothing left in the process cache
  assert compiled_tree.tree_source(game, str(cache)) == "disk"


def test_pairs_with_adds_a_player_in_a_second_file(tmp_path):
  """--pairs_with plays only the pairs where the named players sit, with the same
  seeds as the full tournament's matches of those pairs (so two files make one)."""
  players = ["random", "ismcts(10)", "ismcts(20)"]
  full = tournament.run_tournament(
      tournament.TournamentConfig.create("python_rps", players, 2), tmp_path / "all.csv",
      progress=None)
  added = tournament.TournamentConfig.create("python_rps", players, 2,
                                             pairs_with=["ismcts(simulations=20)"])
  assert added.pairs() == [("random", "ismcts(20)"), ("ismcts(10)", "ismcts(20)")]
  rows = tournament.run_tournament(added, tmp_path / "added.csv", progress=None)
  assert set(rows["col_player"]) == {"ismcts(20)"} and len(rows) == 8
  same = full[full["col_player"] == "ismcts(20)"]
  key = ["row_player", "col_player", "seating", "match"]
  merged = rows.merge(same, on=key, suffixes=("", "_full"))
  assert len(merged) == 8
  assert (merged["history"] == merged["history_full"]).all()
  with pytest.raises(ValueError, match="pairs_with names oos, not among the players"):
    tournament.TournamentConfig.create("python_rps", players, 2, pairs_with=["oos"])
  result = subprocess.run(
      [sys.executable, "-m", "ggp_cr.examples.tournament", "--game=python_rps",
       "--player=random", "--player=ismcts(10)", "--player=ismcts(20)",
       "--pairs_with=ismcts(20)", "--matches=1", "--workers=1",
       f"--output={tmp_path / 'ex.csv'}"], capture_output=True, text=True, timeout=120)
  assert result.returncode == 0, result.stderr
  assert (tmp_path / "ex.heatmap.png").exists()


def test_merge_with_joins_a_pairs_with_file_in_one_summary(tmp_path):
  """A first tournament and a --pairs_with file merge into the summary and matrix of
  all their pairs (each row counted once, pair numbers kept apart); files of another
  setting, without their configuration, or repeating a pair are refused by name."""
  players = ["random", "ismcts(10)"]
  first = tournament.TournamentConfig.create("python_rps", players, 2)
  rows = tournament.run_tournament(first, tmp_path / "a.csv", progress=None)
  grown = players + ["ismcts(20)"]
  added = tournament.TournamentConfig.create("python_rps", grown, 3,
                                             pairs_with=["ismcts(20)"])
  added_rows = tournament.run_tournament(added, tmp_path / "b.csv", progress=None)
  merged, order = tournament.merge_results(added, added_rows, [tmp_path / "a.csv"])
  assert order == ["random", "ismcts(10)", "ismcts(20)"]
  assert len(merged) == len(rows) + len(added_rows) == 4 + 12
  assert tournament_summary.matches_per_seating(merged) == (2, 3)  # the heat-map title's
  assert tournament_summary.matches_per_seating(rows) == (2, 2)
  assert tournament_summary.matches_per_seating(rows.iloc[:0]) == (0, 0)
  summary = tournament_summary.summarize(merged).set_index(["row_player", "col_player"])
  assert summary.loc[("random", "ismcts(10)"), "matches"] == 4
  assert summary.loc[("random", "ismcts(20)"), "matches"] == 6
  np.testing.assert_allclose(summary.loc[("random", "ismcts(10)"), "mean"],
                             rows["row_payoff"].mean())
  means, _ = tournament_summary.payoff_matrix(merged, order)
  assert np.isfinite(means.loc["random", "ismcts(10)"])
  assert np.isfinite(means.loc["ismcts(10)", "ismcts(20)"])
  # The same file twice repeats its pairs.
  with pytest.raises(ValueError, match="repeats pairs already merged: ismcts"):
    tournament.merge_results(added, added_rows, [tmp_path / "a.csv", tmp_path / "a.csv"])
  other = tournament.TournamentConfig.create("python_rps", players, 2, move="5it")
  tournament.run_tournament(other, tmp_path / "c.csv", progress=None)
  with pytest.raises(ValueError, match="move: .*c.csv has '5it'"):
    tournament.merge_results(added, added_rows, [tmp_path / "c.csv"])
  (tmp_path / "d.csv").write_text((tmp_path / "a.csv").read_text())
  with pytest.raises(ValueError, match="d.csv is not a tournament results file"):
    tournament.merge_results(added, added_rows, [tmp_path / "d.csv"])
  with pytest.raises(ValueError, match="missing.csv is not a tournament results file"):
    tournament.merge_results(added, added_rows, [tmp_path / "missing.csv"])
  result = subprocess.run(
      [sys.executable, "-m", "ggp_cr.examples.tournament", "--game=python_rps",
       "--player=random", "--player=ismcts(10)", "--player=ismcts(20)",
       "--pairs_with=ismcts(20)", "--matches=3", "--workers=1", "--preplay=0",
       "--move=0", f"--output={tmp_path / 'b.csv'}",
       f"--merge_with={tmp_path / 'a.csv'}"],
      capture_output=True, text=True, timeout=120)
  assert result.returncode == 0, result.stderr
  written = pd.read_csv(tmp_path / "b.summary.csv")
  assert len(written) == 3 and "ismcts(10)" in set(written["col_player"])
  assert len(pd.read_csv(tmp_path / "b.csv")) == 12  # --output's rows unchanged
  # A file that cannot be merged is refused before any match is played.
  result = subprocess.run(
      [sys.executable, "-m", "ggp_cr.examples.tournament", "--game=python_rps",
       "--player=random", "--player=ismcts(10)", "--matches=1", "--workers=1",
       "--preplay=0", "--move=0", f"--output={tmp_path / 'e.csv'}",
       f"--merge_with={tmp_path / 'c.csv'}"], capture_output=True, text=True,
      timeout=120)
  assert result.returncode == 1 and "another setting" in result.stderr
  assert not (tmp_path / "e.csv").exists()
