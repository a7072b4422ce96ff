"""Every example's integer flags (issue 43): each is defined with a checked range
and a bad value is refused in one line naming the flag and the range, before any
work."""

import ast
import collections
import concurrent.futures
import os
import re
import subprocess
import sys


import fuzz_support
import ggp_cr  # pylint: disable=unused-import


EXAMPLES = os.path.join(fuzz_support.REPO, "ggp_cr", "examples")
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
  env = dict(os.environ, PYTHONPATH=fuzz_support.REPO)

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
  fuzz_support.report("example counts", collections.Counter(
      f"{name} refused in one line" for _, _, name in COUNT_CLI_CASES))
