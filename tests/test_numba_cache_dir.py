"""numba's cache directory follows the package's sources (ggp_cr/__init__.py)."""

import os
import subprocess
import sys

import ggp_cr


def test_cache_dir_is_named_by_the_sources_and_set_on_import():
  directory = ggp_cr.numba_cache_dir()
  assert directory == ggp_cr.numba_cache_dir()
  assert os.path.basename(directory).startswith("numba-")
  env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
  code = ("import os, ggp_cr, numba; "
          "print(os.environ['NUMBA_CACHE_DIR'] == ggp_cr.numba_cache_dir() "
          "== numba.config.CACHE_DIR)")
  out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       text=True, check=True)
  assert out.stdout.strip() == "True"
  # numba imported first: its config is updated too.
  code = ("import numba, ggp_cr; "
          "print(numba.config.CACHE_DIR == ggp_cr.numba_cache_dir())")
  out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       text=True, check=True)
  assert out.stdout.strip() == "True"


def test_a_users_numba_cache_dir_is_kept(tmp_path):
  env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
  code = "import os, ggp_cr; print(os.environ['NUMBA_CACHE_DIR'])"
  out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       text=True, check=True)
  assert out.stdout.strip() == str(tmp_path)


def test_a_changed_source_changes_the_directory(tmp_path):
  """The hash covers every source file using numba: in a copy of the package, one
  more byte in such a module gives another directory, a module without numba
  does not."""
  package = tmp_path / "ggp_cr"
  package.mkdir()
  source = open(ggp_cr.__file__, encoding="utf-8").read()
  (package / "__init__.py").write_text(source)
  (package / "kernel.py").write_text("import numba\nX = 1\n")
  namespace = {"__file__": str(package / "__init__.py")}
  # The copy's functions only (its import would register the games again).
  exec(compile(source.split("_use_numba_cache_dir()\n")[0], "copy", "exec"),  # pylint: disable=exec-used
       namespace)
  first = namespace["numba_cache_dir"]()
  assert first != ggp_cr.numba_cache_dir()
  (package / "kernel.py").write_text("import numba\nX = 12\n")
  second = namespace["numba_cache_dir"]()
  assert second != first
  (package / "examples.py").write_text("print('no kernels here')\n")
  assert namespace["numba_cache_dir"]() == second
