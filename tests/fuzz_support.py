"""What the fuzz-style tests share: the repository root, the errors that count as
clear, a per-call deadline, the tally each test prints (run with -s to see it) and a
small tournament."""

import contextlib
import os
import signal

import pyspiel
import pytest

from ggp_cr.algorithms.evaluation import tournament

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLEAR_ERRORS = (ValueError, pyspiel.SpielError)


class Hang(Exception):
  pass


@contextlib.contextmanager
def deadline(seconds):
  """Raises Hang if the body runs longer than `seconds` (SIGALRM, main thread)."""
  def expire(*unused):
    raise Hang()
  previous = signal.signal(signal.SIGALRM, expire)
  signal.setitimer(signal.ITIMER_REAL, seconds)
  try:
    yield
  finally:
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def outcome(call, seconds=5.0):
  """'ok', 'clear error', or fails the test for a hang or another exception."""
  try:
    with deadline(seconds):
      call()
    return "ok"
  except CLEAR_ERRORS:
    return "clear error"
  except Hang:
    pytest.fail(f"hang (> {seconds} s) in {call}")


def report(name, tally):
  print(f"\n{name}: {sum(tally.values())} inputs: {dict(tally)}")


def rps_tournament(matches):
  """A two-player tournament configuration on python_rps with `matches` a pair and
  seating, one iteration a move."""
  return tournament.TournamentConfig.create("python_rps", ["random", "ismcts(10)"],
                                            matches, "0", "1it")
