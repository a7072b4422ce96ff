"""The documentation cannot rot: the site builds strictly, and what it shows still runs.

- `docs/` builds with Sphinx + MyST with warnings as errors (a broken internal link, a
  missing page or image, a docstring that fails to render all fail the build);
- every `python -m ggp_cr.examples.X ...` and `python benchmarks/X.py ...` command in
  the pages' and README's code parses with that script's absl flags (names and values;
  nothing is run);
- the API page documents every public name of `ggp_cr.algorithms`, each algorithms page
  lists every module of its package, and README's relative links exist.
"""

import json
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
COMMAND = re.compile(r"python (?:-m (ggp_cr\.examples\.\w+)|(benchmarks/\w+\.py))((?: [^`\n]*)?)")
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
INLINE = re.compile(r"`([^`\n]+)`")


def documented_commands(path):
  """The example commands in `path`'s fenced blocks and inline code, as (script, argv)."""
  text = path.read_text(encoding="utf-8")
  spans = []
  for block in FENCE.findall(text):
    spans += block.splitlines()
  spans += INLINE.findall(FENCE.sub("", text))
  commands = []
  for span in spans:
    for match in COMMAND.finditer(span.strip().removeprefix("$ ")):
      rest = match.group(3).split(" # ")[0]
      commands.append((match.group(1) or match.group(2), shlex.split(rest)))
  return commands


def all_commands():
  found = {}
  for path in [ROOT / "README.md", *PAGES]:
    for script, argv in documented_commands(path):
      found.setdefault(script, []).append(argv)
  return found


_PARSE = """
import importlib, importlib.util, json, sys
from absl import flags
if sys.argv[1].endswith(".py"):  # a benchmark script, imported without running main
  spec = importlib.util.spec_from_file_location("documented_script", sys.argv[1])
  spec.loader.exec_module(importlib.util.module_from_spec(spec))
else:
  importlib.import_module(sys.argv[1])
errors = []
for argv in json.loads(sys.stdin.read()):
  flags.FLAGS.unparse_flags()
  try:
    flags.FLAGS([sys.argv[1]] + argv)
    flags.FLAGS.validate_all_flags()
  except flags.Error as error:
    errors.append(f"{' '.join(argv)}: {error}")
print(json.dumps(errors))
"""


def test_the_site_builds_without_warnings(tmp_path):
  result = subprocess.run(
      [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
       str(DOCS), str(tmp_path / "html")],
      capture_output=True, text=True, timeout=600, cwd=ROOT)
  assert result.returncode == 0, result.stderr


def test_the_pages_hold_example_commands():
  commands = all_commands()
  assert len(commands) >= 10, sorted(commands)
  assert sum(map(len, commands.values())) >= 60


@pytest.mark.parametrize("script", sorted(all_commands()))
def test_every_documented_command_parses_with_its_flags(script):
  argvs = all_commands()[script]
  path = script if script.endswith(".py") else script.replace(".", "/") + ".py"
  assert (ROOT / path).is_file(), script
  result = subprocess.run([sys.executable, "-c", _PARSE, script], input=json.dumps(argvs),
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
  assert result.returncode == 0, result.stderr
  assert json.loads(result.stdout.strip().splitlines()[-1]) == []


def test_a_wrong_flag_is_caught():
  """The check above can fail: an unknown flag and a bad value are reported."""
  result = subprocess.run(
      [sys.executable, "-c", _PARSE, "ggp_cr.examples.solve"],
      input=json.dumps([["--no_such_flag=1"], ["--iterations=many"], ["--solver=cfr+"]]),
      capture_output=True, text=True, timeout=300, cwd=ROOT)
  errors = json.loads(result.stdout.strip().splitlines()[-1])
  assert len(errors) == 2 and "no_such_flag" in errors[0] and "many" in errors[1]


def test_the_api_page_documents_every_public_name():
  import ggp_cr.algorithms  # pylint: disable=import-outside-toplevel
  text = (DOCS / "api.md").read_text(encoding="utf-8")
  documented = set(re.findall(r"\.\. auto\w+:: ggp_cr\.algorithms\.(\w+)", text))
  assert documented == set(ggp_cr.algorithms.__all__)


@pytest.mark.parametrize("package", sorted(
    p.name for p in (ROOT / "ggp_cr" / "algorithms").iterdir()
    if (p / "__init__.py").is_file()))
def test_each_algorithms_page_lists_every_module(package):
  page = (DOCS / "algorithms" / f"{package}.md").read_text(encoding="utf-8")
  folder = ROOT / "ggp_cr" / "algorithms" / package
  modules = {p.relative_to(folder).with_suffix("").as_posix() for p in folder.rglob("*.py")
             if p.stem != "__init__"}
  missing = sorted(m for m in modules if f"`{m}`" not in page)
  assert not missing, f"docs/algorithms/{package}.md does not list {missing}"


def test_readme_links_exist():
  text = (ROOT / "README.md").read_text(encoding="utf-8")
  targets = [t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", text)
             if not t.startswith(("http://", "https://", "#"))]
  assert targets
  missing = [t for t in targets if not (ROOT / t).exists()]
  assert not missing


def test_readme_is_short():
  assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 250


@pytest.mark.slow
def test_the_tour_runs(tmp_path):
  """The Python blocks of the getting-started tour, run in order in one process."""
  text = (DOCS / "getting_started.md").read_text(encoding="utf-8")
  code = "\n".join(re.findall(r"^```python\n(.*?)^```", text, re.S | re.M))
  script = tmp_path / "tour.py"
  script.write_text(f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n{code}", encoding="utf-8")
  result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=1800, cwd=tmp_path)
  assert result.returncode == 0, result.stderr
