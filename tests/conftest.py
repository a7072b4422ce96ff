"""Test-session setup shared by every test file."""

import importlib.abc
import sys

import pytest


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


@pytest.fixture(params=["copied", "in_place"])
def subgame_view(request, monkeypatch):
  """Continual resolving's later subgames on the compiled path as copies (the test
  games' subgames are all small) or solved in place (COPY_NODES_LIMIT 0)."""
  if request.param == "in_place":
    # pylint: disable-next=import-outside-toplevel
    from ggp_cr.algorithms.resolving.compiled import compiled_resolver
    monkeypatch.setattr(compiled_resolver, "COPY_NODES_LIMIT", 0)
  return request.param
