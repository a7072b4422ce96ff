"""Reading and writing the npz archives we keep: tree caches, strategy files, checkpoints.

One convention: archives are written atomically (a temporary file in the target folder,
then renamed, so a killed run leaves the old file or the new one, never half of one)
and read without pickles, with every failure to read turned into a ValueError that
names the file and what it should have been.
"""

import os
import tempfile
import zipfile
import zlib

import numpy as np


def write_atomically(path, compressed=False, **arrays):
  """np.savez(_compressed) of `arrays` to a temporary file beside `path`, then renamed."""
  directory = os.path.dirname(os.path.abspath(path))
  os.makedirs(directory, exist_ok=True)
  handle, temporary = tempfile.mkstemp(dir=directory, suffix=".tmp")
  try:
    with os.fdopen(handle, "wb") as file:
      (np.savez_compressed if compressed else np.savez)(file, **arrays)
    os.replace(temporary, path)
  except BaseException:
    os.unlink(temporary)
    raise


def read(path, what, required=(), names=None):
  """{name: array} of the npz archive at `path` (all arrays, or those in `names`).

  Raises ValueError ("Cannot read <what> <path>: ...") if the file is missing,
  unreadable, damaged or a single array, and ("<path> is not a <what>: it lacks ...")
  if an array of `required` is absent.
  """
  try:
    data = np.load(path, allow_pickle=False)
    if not isinstance(data, np.lib.npyio.NpzFile):
      raise ValueError(f"it holds a single array, not a {what} archive")
    with data:
      contents = {name: data[name] for name in data.files
                  if names is None or name in names}
  except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as error:
    raise ValueError(f"Cannot read {what} {path}: not a readable {what} "
                     f"({error}).") from None
  missing = set(required) - set(contents)
  if missing:
    raise ValueError(f"{path} is not a {what}: it lacks {sorted(missing)}.")
  return contents
