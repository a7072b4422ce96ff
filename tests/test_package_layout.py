"""The package layout's promises (spec README.md, principle 5): light imports, one-way
imports between modules and packages, one concept per module stated first, every
public name still exported."""

import ast
import pathlib
import subprocess
import sys

import pytest

import ggp_cr
import ggp_cr.algorithms

_ROOT = pathlib.Path(ggp_cr.__file__).parent
# A module holds one concept: its docstring opens with it, in at most _CONCEPT_LINES
# lines before the first blank line, and no two modules (commands aside) open alike.
# In the packages whose derivations live on their docs page (_NOTES_ON_THE_PAGE:
# docs/algorithms/<package>.md, "Module notes") the whole docstring is the concept
# and one short paragraph (_DOCSTRING_LINES). _SANITY_LINES only catches a runaway
# file: a module is split by concept, never to fit a line count.
_CONCEPT_LINES = 3
_DOCSTRING_LINES = 10
_NOTES_ON_THE_PAGE = ("ggp_cr.algorithms.resolving",)
_SANITY_LINES = 1_500


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


def _package_edges(graph):
  """{parent package: {(child package, child package)}}: for each import a -> b, the
  packages under a and b's deepest common package (both folders, not modules)."""
  packages = {name for name, path in _modules() if path.name == "__init__.py"}
  edges = {}
  for name, imported in graph.items():
    for other in imported:
      a, b = name.split("."), other.split(".")
      common = 0
      while common < min(len(a), len(b)) and a[common] == b[common]:
        common += 1
      if common >= min(len(a), len(b)):
        continue  # a package and its own module
      child_a = ".".join(a[:common + 1])
      child_b = ".".join(b[:common + 1])
      if child_a in packages and child_b in packages:
        edges.setdefault(".".join(a[:common]), set()).add((child_a, child_b))
  return edges


def test_no_import_cycle_between_packages():
  """Sibling packages import one way (e.g. resolving imports sampling, never back;
  resolving.live imports resolving.compiled, never back); a package's own top-level
  modules may import its subpackages."""
  graph = {name: _imports(name, path) for name, path in _modules()}
  for parent, edges in _package_edges(graph).items():
    below = {}
    for a, b in edges:
      below.setdefault(a, set()).add(b)
    for a, b in edges:
      # b reaches a: a cycle through a -> b.
      seen, todo = set(), [b]
      while todo:
        node = todo.pop()
        if node == a:
          pytest.fail(f"packages in {parent} import each other: {a} -> {b} -> ... -> "
                      f"{a}")
        if node not in seen:
          seen.add(node)
          todo.extend(below.get(node, ()))


def _concept(path):
  """(the docstring's opening paragraph as one line, that paragraph's lines, the
  docstring's lines), or (None, 0, 0)."""
  doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False)
  if not doc:
    return None, 0, 0
  lines = doc.strip("\n").split("\n")
  blank = next((i for i, line in enumerate(lines) if not line.strip()), len(lines))
  return " ".join(line.strip() for line in lines[:blank]), blank, len(lines)


def test_each_module_states_its_one_concept_first():
  opened = {}
  for name, path in _modules():
    concept, opening, lines = _concept(path)
    assert concept, f"{name} has no docstring stating its concept"
    assert opening <= _CONCEPT_LINES, (
        f"{name} opens with {opening} lines; state its one concept in at most "
        f"{_CONCEPT_LINES}, details after a blank line")
    if name.startswith(_NOTES_ON_THE_PAGE):
      assert lines <= _DOCSTRING_LINES, (
          f"{name}'s docstring has {lines} lines; keep the concept and a short "
          "paragraph, and move derivations to its docs page's Module notes")
    if not name.startswith("ggp_cr.examples."):  # a command opens as what it runs
      assert concept not in opened, f"{name} and {opened.get(concept)} open alike"
      opened[concept] = name
    length = len(path.read_text(encoding="utf-8").splitlines())
    assert length <= _SANITY_LINES, f"{name}: {length} lines, more than one concept?"


def test_the_concept_rule_catches_what_it_should(tmp_path):
  """_concept reads the opening paragraph and the docstring's length."""
  module = tmp_path / "m.py"
  module.write_text('"""One thing.\nSaid in two lines.\n\nDetails.\n"""\nX = 1\n')
  assert _concept(module) == ("One thing. Said in two lines.", 2, 4)
  module.write_text("X = 1\n")
  assert _concept(module) == (None, 0, 0)


def test_algorithms_exports_every_public_name():
  for name in ggp_cr.algorithms.__all__:
    assert getattr(ggp_cr.algorithms, name) is not None
  with pytest.raises(AttributeError, match="no attribute 'nope'"):
    getattr(ggp_cr.algorithms, "nope")
