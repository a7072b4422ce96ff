"""The package layout's promises (spec README.md, principle 5): light imports, one-way
imports between modules, no oversized module, every public name still exported."""

import ast
import pathlib
import subprocess
import sys

import pytest

import ggp_cr
import ggp_cr.algorithms

_ROOT = pathlib.Path(ggp_cr.__file__).parent
_MAX_MODULE_LINES = 600


def _loaded_after(code):
  """The sorted module names loaded by running `code` in a fresh interpreter."""
  out = subprocess.run(
      [sys.executable, "-c", code + "\nimport sys\nprint('\\n'.join(sorted(sys.modules)))"],
      check=True, capture_output=True, text=True).stdout
  return out.split()


def test_import_ggp_cr_registers_games_only():
  loaded = _loaded_after("import ggp_cr, pyspiel\n"
                         "assert 'python_leduc' in pyspiel.registered_names()")
  assert not [m for m in loaded if m == "numba" or m.startswith("numba.")]
  assert not [m for m in loaded if m.startswith("ggp_cr.algorithms")]


def test_config_loads_no_numba_and_no_solver():
  loaded = _loaded_after(
      "from ggp_cr.algorithms.config import registry\n"
      "registry.solver_names(); registry.describe_players()\n"
      "registry.parse_player('random')")
  assert not [m for m in loaded if m == "numba" or m.startswith("numba.")]
  ours = [m for m in loaded if m.startswith("ggp_cr.algorithms.")]
  assert ours and all(m.startswith("ggp_cr.algorithms.config") for m in ours), ours


def test_parsing_component_specs_loads_no_numba_and_no_solver():
  # Regret matchers, baselines, estimators and fixed policies are parsed in config.
  loaded = _loaded_after(
      "from ggp_cr.algorithms.config import registry\n"
      "registry.parse_solver('vr_mccfr(rm=drm(1,1),bl=expavg(0.5))')\n"
      "registry.parse_solver('os_mccfr(rm=erm(rm+,0.1),bl=none)')\n"
      "registry.parse_solver('cfr+(dl=2,ue=randomplayout(3))')\n"
      "from ggp_cr.algorithms.config import components\n"
      "components.parse_fixed_policy('solver(name=cfr+,iterations=5)')")
  assert not [m for m in loaded if m == "numba" or m.startswith("numba.")]
  ours = [m for m in loaded if m.startswith("ggp_cr.algorithms.")]
  assert all(m.startswith("ggp_cr.algorithms.config") for m in ours), ours


def _modules():
  for path in sorted(_ROOT.rglob("*.py")):
    parts = path.relative_to(_ROOT.parent).with_suffix("").parts
    if parts[-1] == "__init__":
      parts = parts[:-1]
    yield ".".join(parts), path


def _imports(name, path):
  """ggp_cr modules that module `name` imports at its top level."""
  modules = dict(_modules())
  found = set()
  for node in ast.parse(path.read_text()).body:
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
      for alias in node.names:
        submodule = f"{node.module}.{alias.name}"
        found.add(submodule if submodule in modules else node.module)
    elif isinstance(node, ast.Import):
      found.update(alias.name for alias in node.names)
  return {m for m in found if m in modules and m != name and m.startswith("ggp_cr")}


def test_no_import_cycle_and_config_depends_on_nothing_of_ours():
  graph = {name: _imports(name, path) for name, path in _modules()}
  for name, imported in graph.items():
    if name.startswith("ggp_cr.algorithms.config"):
      assert all(m.startswith("ggp_cr.algorithms.config") for m in imported), (name,
                                                                               imported)
  state = {}

  def visit(node, stack):
    state[node] = "open"
    for child in graph[node]:
      if state.get(child) == "open":
        pytest.fail("import cycle: " + " -> ".join(stack[stack.index(child):] + [child]))
      if child not in state:
        visit(child, stack + [child])
    state[node] = "done"

  for name in graph:
    if name not in state:
      visit(name, [name])


def test_no_module_over_the_line_limit():
  long = {name: len(path.read_text().splitlines()) for name, path in _modules()}
  assert {n: k for n, k in long.items() if k > _MAX_MODULE_LINES} == {}


def test_algorithms_exports_every_public_name():
  for name in ggp_cr.algorithms.__all__:
    assert getattr(ggp_cr.algorithms, name) is not None
  with pytest.raises(AttributeError, match="no attribute 'nope'"):
    getattr(ggp_cr.algorithms, "nope")
