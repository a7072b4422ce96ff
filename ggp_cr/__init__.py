"""ggp_cr: an OpenSpiel plugin for general game playing in two-player zero-sum games.

Importing the package registers its games with pyspiel:

  import ggp_cr
  game = pyspiel.load_game("python_princess_monster(max_turns=6)")

It also points numba's on-disk cache at a directory named by a hash of the package's
numba sources (`numba_cache_dir`), unless NUMBA_CACHE_DIR is set: numba validates a
cached kernel by its own file only, so a kernel inlining a function of another module
that changed (an upgrade, an edit) would otherwise load stale machine code.
"""

import hashlib
import os
import pathlib
import sys


def numba_cache_dir():
  """<user cache>/ggp_cr/numba-<hash of every ggp_cr source file that mentions
  numba> (editing other modules keeps the compiled kernels)."""
  digest = hashlib.sha256()
  package = pathlib.Path(__file__).resolve().parent
  for path in sorted(package.rglob("*.py")):
    text = path.read_bytes()
    if b"numba" in text:
      digest.update(path.relative_to(package).as_posix().encode())
      digest.update(text)
  base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
      os.path.expanduser("~"), ".cache")
  return os.path.join(base, "ggp_cr", f"numba-{digest.hexdigest()[:16]}")


def _use_numba_cache_dir():
  if os.environ.get("NUMBA_CACHE_DIR"):
    return
  try:
    directory = numba_cache_dir()
    os.makedirs(directory, exist_ok=True)
  except OSError:
    return  # numba's default (next to the sources) stays
  if not os.access(directory, os.W_OK):
    return
  os.environ["NUMBA_CACHE_DIR"] = directory
  if "numba" in sys.modules:  # imported before us: numba read its config already
    sys.modules["numba"].config.CACHE_DIR = directory


_use_numba_cache_dir()

from ggp_cr import games  # pylint: disable=wrong-import-position
