"""The Reproductions page's tournament commands on the committed results files: each
one, as written, reads its file (--noplay, on copies), so a reader can resume or
summarize it.

A command whose settings differ from its file's sidecar (say, fewer matches than the
file holds, after the file was extended) is refused by the tournament; this test finds
such a command before a reader does.
"""

import pathlib
import re
import shlex
import shutil
import subprocess
import sys

import pandas as pd
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = "data/table_5_7/"


def _committed_tournament_commands():
  """The page's tournament commands (code blocks) whose --output is a committed file."""
  text = (ROOT / "docs" / "reproductions.md").read_text(encoding="utf-8")
  commands = re.findall(r"(python -m ggp_cr\.examples\.tournament [^`\n]*)", text)
  return sorted({c.strip() for c in commands if f"--output={DATA}" in c})


COMMANDS = _committed_tournament_commands()


def test_the_page_names_the_committed_results():
  outputs = {re.search(r"--output=(\S+)", c).group(1) for c in COMMANDS}
  committed = {f"{DATA}{p.name}" for p in (ROOT / DATA).glob("*.csv")
               if not p.name.endswith(".summary.csv")}
  assert outputs == committed


@pytest.mark.parametrize("command", COMMANDS,
                         ids=[re.search(r"--output=\S+/(\S+)\.csv", c).group(1)
                              for c in COMMANDS])
def test_a_page_command_reads_its_committed_file(command, tmp_path):
  """Run read only (--noplay) on copies of the data, the command succeeds and its
  summary counts exactly the complete rows of the file and its merged files."""
  copies = tmp_path / "data"
  shutil.copytree(ROOT / DATA, copies)
  args = [arg.replace(DATA, f"{copies}/") for arg in shlex.split(command)[3:]]
  args = [arg for arg in args if not arg.startswith(("--cache_dir", "--plot"))]
  result = subprocess.run(
      [sys.executable, "-m", "ggp_cr.examples.tournament", *args, "--noplay",
       f"--plot={tmp_path / 'heatmap.png'}"],
      capture_output=True, text=True, timeout=300, cwd=ROOT)
  assert result.returncode == 0, result.stderr
  read = [arg.split("=", 1)[1] for arg in args
          if arg.startswith(("--output=", "--merge_with="))]
  # Complete rows (a file being written may end with a half-written one).
  rows = sum(pathlib.Path(path).read_text().count("\n") - 1 for path in read)
  output = pathlib.Path(read[0])
  summary = pd.read_csv(output.with_name(output.stem + ".summary.csv"))
  assert summary["matches"].sum() == rows
