"""Test-session setup shared by every test file."""

import importlib.abc
import sys


class _NoExampleImports(importlib.abc.MetaPathFinder):
  """Refuses to import `ggp_cr.examples.*` into the test process.

  Each example defines absl flags when imported; two examples in one process clash
  (DuplicateFlagError). Tests run examples as subprocesses (`python -m ...`), and
  logic worth testing directly belongs in `ggp_cr.algorithms`.
  """

  def find_spec(self, fullname, path=None, target=None):
    del path, target
    if fullname.startswith("ggp_cr.examples."):
      raise ImportError(
          f"Tests must not import {fullname}: run it with `python -m {fullname}` in a "
          f"subprocess, and move logic tested directly into ggp_cr.algorithms.")
    return None


sys.meta_path.insert(0, _NoExampleImports())
