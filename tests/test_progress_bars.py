"""Progress bars (ggp_cr.algorithms.progress_bars): rate and ETA on a terminal, silent
under --noprogress and when stderr is not a terminal; a tournament prints no log noise."""

import io
import pathlib
import subprocess
import sys

import pytest

from ggp_cr.algorithms import progress_bars

ROOT = pathlib.Path(__file__).resolve().parent.parent


class _Terminal(io.StringIO):

  def isatty(self):
    return True


@pytest.fixture(name="terminal")
def _terminal(monkeypatch):
  """A terminal standing in for stderr (set in the test's own phase: pytest's capture
  swaps sys.stderr between setup and call)."""
  stream = _Terminal()
  yield lambda: monkeypatch.setattr(sys, "stderr", stream) or stream
  progress_bars.show_bars(True)


def test_a_bar_on_a_terminal_shows_count_rate_and_eta(terminal):
  terminal = terminal()
  with progress_bars.bar(10, "match", "matches", initial=2, interval=0) as meter:
    for _ in range(8):
      meter.update()
  text = terminal.getvalue()
  assert "matches" in text and "10/10" in text and "match/s" in text
  assert "<" in text  # elapsed<remaining, tqdm's ETA


def test_noprogress_silences_every_bar(terminal):
  terminal = terminal()
  progress_bars.show_bars(False)
  assert not progress_bars.bars_visible()
  with progress_bars.bar(5, interval=0) as meter:
    meter.update(5)
  assert terminal.getvalue() == ""


def test_a_bar_is_silent_when_stderr_is_not_a_terminal(monkeypatch):
  stream = io.StringIO()
  monkeypatch.setattr(sys, "stderr", stream)
  assert not progress_bars.bars_visible()
  with progress_bars.bar(5, interval=0) as meter:
    meter.update(5)
  assert stream.getvalue() == ""


def test_a_caller_can_silence_its_bar(terminal):
  terminal = terminal()
  with progress_bars.bar(5, interval=0, shown=False) as meter:
    meter.update(5)
  assert terminal.getvalue() == ""


def test_a_tournament_prints_no_log_noise(tmp_path):
  """The main job's script prints the plan, the table and the files: no absl or
  matplotlib INFO lines, no bar (stderr is a pipe here); --noprogress is accepted."""
  result = subprocess.run(
      [sys.executable, "-m", "ggp_cr.examples.tournament", "--game=python_rps",
       "--player=random", "--player=solver(name=cfr,iterations=2)", "--matches=2",
       "--noprogress", f"--output={tmp_path / 'rps.csv'}"],
      capture_output=True, text=True, timeout=300, cwd=ROOT)
  assert result.returncode == 0, result.stderr
  assert result.stderr == ""
  lines = result.stdout.splitlines()
  assert lines[0].startswith("4 matches planned")
  assert not [line for line in lines if line.startswith(("I0", "I1", "INFO", "WARN"))]
