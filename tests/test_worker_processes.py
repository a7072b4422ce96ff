"""Worker processes die with their parent and are capped at what helps (issue 43):
a killed 2-worker tournament leaves no process and resumes with every row once; the
parallel extraction's workers and the best-response memory probe die with a killed
parent; workers are capped at the usable cores and the work items."""

import collections
import ctypes
import os
import signal
import subprocess
import sys
import time

import pyspiel
import pytest

import fuzz_support
import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.config import worker_counts
from ggp_cr.algorithms.evaluation import br_comparison
from ggp_cr.algorithms.evaluation import tournament
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.tree import parallel_extraction


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
  env = dict(os.environ, PYTHONPATH=fuzz_support.REPO)
  for kill in (signal.SIGTERM, signal.SIGKILL):
    before = len(_rows(output))
    process = subprocess.Popen(_tournament_command(output), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, cwd=fuzz_support.REPO, env=env)
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
                            cwd=fuzz_support.REPO, env=env, timeout=600, check=False)
  assert finished.returncode == 0, finished.stderr[-1500:]
  config = tournament.TournamentConfig.create(
      "kuhn_poker", _KILL_PLAYERS, _KILL_MATCHES, _KILL_BUDGET, _KILL_BUDGET)
  keys = [tuple(int(v) for v in line.split(",")[:3]) for line in _rows(output)]
  assert sorted(keys) == sorted(p.key for p in tournament.plan(config))


def test_workers_are_capped_at_cores_and_work_items(tmp_path, capsys):
  lines = []
  tournament.run_tournament(fuzz_support.rps_tournament(1), tmp_path / "t.csv", workers=64,
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
                             cwd=fuzz_support.REPO, env=dict(os.environ, PYTHONPATH=fuzz_support.REPO))
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
  fuzz_support.report("killed extraction", collections.Counter(
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
