"""Module-level mutable state of ggp_cr: every piece is listed in
algorithms.process_state, and at most MAX_CACHES of it are caches."""

import ast
import importlib
import pathlib

from ggp_cr.algorithms import process_state

ROOT = pathlib.Path(__file__).resolve().parents[1] / "ggp_cr"
_MUTABLE_CALLS = {"dict", "list", "set", "OrderedDict", "defaultdict", "deque",
                  "WeakKeyDictionary", "WeakValueDictionary", "WeakSet"}
_MUTATING_METHODS = {"append", "add", "clear", "update", "pop", "setdefault",
                     "extend", "insert", "remove", "discard", "popitem"}
_MEMO_DECORATORS = {"lru_cache", "cache"}


def _name_of(node):
  return node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)


def _module_state(tree):
  """Names of module-level mutable state in a module's AST: containers made empty
  (or filled later by its functions), names its functions declare global, and
  functools memos."""
  containers, empty = set(), set()
  for node in tree.body:
    targets = (node.targets if isinstance(node, ast.Assign) else
               [node.target] if isinstance(node, ast.AnnAssign) and node.value
               else [])
    value = getattr(node, "value", None)
    literal = isinstance(value, (ast.Dict, ast.List, ast.Set))
    call = (isinstance(value, ast.Call) and _name_of(value.func) in _MUTABLE_CALLS)
    for target in targets:
      if isinstance(target, ast.Name) and (literal or call):
        containers.add(target.id)
        if not (getattr(value, "keys", None) or getattr(value, "elts", None) or
                getattr(value, "args", None) or getattr(value, "keywords", None)):
          empty.add(target.id)
  found = set(empty)
  for node in ast.walk(tree):
    if isinstance(node, ast.Global):
      found.update(node.names)
    elif (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and
          _name_of(node.value) in containers):
      found.add(node.value.id)
    elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and
          node.func.attr in _MUTATING_METHODS and
          isinstance(node.func.value, ast.Name) and node.func.value.id in containers):
      found.add(node.func.value.id)
  for node in tree.body:
    if isinstance(node, ast.FunctionDef) and any(
        _name_of(d.func if isinstance(d, ast.Call) else d) in _MEMO_DECORATORS
        for d in node.decorator_list):
      found.add(node.name)
  return found


def _found_in_code():
  found = set()
  for path in sorted(ROOT.rglob("*.py")):
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found |= {(module, name) for name in _module_state(tree)}
  return found


def test_every_module_level_mutable_is_listed():
  listed = {(module, name) for module, name, _, _ in process_state.STATE}
  unlisted = sorted(_found_in_code() - listed)
  assert not unlisted, (
      f"module-level mutable state not listed in algorithms.process_state: {unlisted} "
      "(pass it instead, or list it there with its kind)")


def test_listed_state_exists_and_at_most_four_caches():
  kinds = {"cache", "numba", "workers", "process", "registry"}
  for module, name, kind, what in process_state.STATE:
    assert kind in kinds and what
    if module.startswith("examples."):  # scripts are not imported by tests: read them
      path = ROOT.joinpath(*module.split(".")).with_suffix(".py")
      tree = ast.parse(path.read_text(encoding="utf-8"))
      assigned = {t.id for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                  for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                  if isinstance(t, ast.Name)}
      assert name in assigned, (module, name)
    else:
      assert hasattr(importlib.import_module(f"ggp_cr.{module}"), name), (module, name)
  caches = [name for _, name, kind, _ in process_state.STATE if kind == "cache"]
  assert len(caches) <= process_state.MAX_CACHES == 4


def test_the_scan_finds_each_form():
  """The scan sees empty containers, filled ones its functions change, globals and
  memo decorators, and leaves constant tables alone."""
  source = """
import functools
A = {}
B = [0]
C = (1, 2)
D = {"x": 1}
E = collections.OrderedDict()
P = dict(x=1)
F = [1]
def f():
  global G
  B[0] = 1
  F.count(1)
@functools.lru_cache(maxsize=4)
def h(x):
  return x
"""
  assert _module_state(ast.parse(source)) == {"A", "B", "E", "G", "h"}
