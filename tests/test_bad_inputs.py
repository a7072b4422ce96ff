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
from ggp_cr.algorithms import compiled_tree
from ggp_cr.algorithms import cfr

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(module, *flags, timeout=60):
  """Runs `python -m ggp_cr.examples.<module> flags`; returns the CompletedProcess."""
  env = dict(os.environ, PYTHONPATH=REPO)
  return subprocess.run([sys.executable, "-m", f"ggp_cr.examples.{module}", *flags],
                        capture_output=True, text=True, timeout=timeout, cwd=REPO,
                        env=env, check=False)


# Finding 1: a crafted tree cache segfaulted the CFR kernel or gave wrong answers.

def _craft_cache(path, edit, recompute_checksum):
  with np.load(path, allow_pickle=False) as data:
    contents = {name: data[name].copy() for name in data.files}
  edit(contents)
  if recompute_checksum:
    from ggp_cr.algorithms import cache_validation  # pylint: disable=import-outside-toplevel
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


CACHE_EDITS = {
    "first_child": ("kuhn_poker", _set("node_first_child", 0, 10**8)),
    "num_children": ("kuhn_poker", _set("node_num_children", 1, 3000)),
    "action_offset": ("kuhn_poker", _set("infoset_action_offset", 3, 10**6)),
    "negated_utilities": ("kuhn_poker", _negate_utilities),
    "chance_probability": ("kuhn_poker", _set("node_chance_prob", 1, 0.5)),
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
