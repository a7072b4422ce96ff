"""Output paths checked before any work starts.

A run that fails to write its results only after hours of computation loses them; so
every example checks its output files and folders first: a file path must not be a
folder or a device (`/dev/null` would get sidecars such as `/dev/null.config.json`), a
folder path must not be a file, and the folder must accept a new file (tried with a
temporary file, removed at once). Each failure is a ValueError naming the flag.
"""

import os
import pathlib
import stat
import tempfile


def _try_create(directory, what):
  try:
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=directory, prefix=".write-test-"):
      pass
  except FileExistsError:
    raise ValueError(f"{what}: {directory} is not a folder (a file is in the way).") \
        from None
  except OSError as error:
    raise ValueError(f"{what}: cannot write in {directory}: {error.strerror}.") from None


def check_directory(path, what):
  """Creates folder `path` if needed; ValueError unless a file can be written in it."""
  directory = pathlib.Path(path)
  if directory.exists() and not directory.is_dir():
    raise ValueError(f"{what}: {directory} is a file, not a folder.")
  _try_create(directory, what)
  return directory


def file_path(path, what):
  """`path` as a pathlib.Path, or ValueError unless it names a file (not empty, '.' or
  '..'); nothing is touched on disk."""
  file = pathlib.Path(path)
  if str(path) == "" or file.name in ("", ".", ".."):
    raise ValueError(f"{what} must be a file path such as results/run.csv, got "
                     f"{str(path)!r}.")
  return file


def check_file(path, what):
  """ValueError unless `path` is (or can become) a regular file in a writable folder."""
  file = file_path(path, what)
  if file.exists():
    mode = file.stat().st_mode
    if stat.S_ISDIR(mode):
      raise ValueError(f"{what}: {file} is a folder; give a file path.")
    if not stat.S_ISREG(mode):
      raise ValueError(f"{what}: {file} is not a regular file (a device or pipe).")
    if not os.access(file, os.W_OK):
      raise ValueError(f"{what}: {file} is not writable.")
  _try_create(file.parent, what)
  return file
