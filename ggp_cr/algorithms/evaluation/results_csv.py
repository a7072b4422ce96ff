"""Append-only CSV results files: one row per finished unit of work, never rewritten.

Long runs ([S] App. A's experiments) append a row as each unit finishes, with a single
write, so that a killed run loses at most the unit in progress and a rerun can skip
what is already there.

Every file read back is checked first (`set_aside_bad_rows`): a malformed row (wrong
number of fields, an unbalanced quote, a number column that is not a finite number, a
duplicate key) or a half-written last line is moved to `<file>.rejected` with a
warning, so it is never replayed, never summarised and never glued to by the next row.
"""

import csv
import io
import math
import os
import pathlib
import tempfile
import warnings

from ggp_cr.algorithms.evaluation import output_paths


def rejected_path(path):
  """Where `set_aside_bad_rows` moves the rows it refuses."""
  return pathlib.Path(str(path) + ".rejected")


def _row_problem(fields, columns, numeric, nullable, key, seen):
  if len(fields) != len(columns):
    return f"{len(fields)} fields, expected {len(columns)}"
  row = dict(zip(columns, fields))
  for name in numeric:
    if row[name] == "" and name in nullable:
      continue
    try:
      if not math.isfinite(float(row[name])):
        raise ValueError
    except ValueError:
      return f"column {name} holds {row[name]!r}, not a finite number"
  if key:
    identity = tuple(row[name] for name in key)
    if identity in seen:
      return f"duplicate of the row with key {identity}"
    seen.add(identity)
  return None


def set_aside_bad_rows(path, columns, numeric=(), nullable=(), key=()):
  """Checks the rows of an existing CSV of `columns`; returns the good ones as dicts.

  A line that does not parse as one row of len(columns) fields, whose `numeric`
  columns are not finite numbers (empty allowed in `nullable` columns), whose `key`
  columns repeat an earlier row's, or that lacks its final newline (half-written) is
  appended to `<path>.rejected`, a warning names the count, and `path` is rewritten
  atomically without it. Raises ValueError if the header differs from `columns`.
  A missing or empty file gives [].
  """
  path = pathlib.Path(path)
  try:
    content = path.read_bytes()
  except FileNotFoundError:
    return []
  except OSError as error:
    raise ValueError(f"Cannot read {path}: {error.strerror}.") from None
  if not content:
    return []
  header = ",".join(columns) + "\n"
  text = content.decode("utf-8", errors="replace").replace("\r\n", "\n")
  if not text.startswith(header):
    raise ValueError(f"{path} does not start with the header {header.strip()!r}; it "
                     "holds other columns or was not written by this tool.")
  lines = text[len(header):].split("\n")
  partial = lines.pop()  # "" when the file ends with a newline
  kept, rejected, rows, seen = [], [], [], set()
  for line in lines:
    try:
      (fields,) = list(csv.reader([line], strict=True)) or [[]]
      problem = _row_problem(fields, columns, numeric, nullable, key, seen)
    except (csv.Error, ValueError) as error:
      problem = f"unparsable ({error})"
    if problem is None:
      kept.append(line)
      rows.append(dict(zip(columns, fields)))
    else:
      rejected.append((line, problem))
  if partial:
    rejected.append((partial, "half-written (no final newline)"))
  if rejected:
    with open(rejected_path(path), "a", encoding="utf-8") as file:
      file.writelines(line + "\n" for line, _ in rejected)
      file.flush()
      os.fsync(file.fileno())
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8", newline="") as file:
      file.write(header + "".join(line + "\n" for line in kept))
    os.replace(temporary, path)
    warnings.warn(f"{path}: set aside {len(rejected)} malformed or half-written row(s) "
                  f"in {rejected_path(path)} (first: {rejected[0][1]}).")
  return rows


class AppendOnlyCsv:
  """A CSV file opened for appending rows with fixed `columns`.

  Creates the file (and its folder) with a header, or checks that an existing file has
  the same header and sets its bad rows aside (`set_aside_bad_rows`; the good ones are
  `self.rows`). Raises ValueError, before anything is written, if the path is not
  writable or holds other columns.
  """

  def __init__(self, path, columns, numeric=(), nullable=(), key=()):
    self.path = pathlib.Path(path)
    self.columns = list(columns)
    header = (",".join(self.columns) + "\n").encode()
    output_paths.check_file(self.path, "output")
    try:
      self.rows = set_aside_bad_rows(self.path, self.columns, numeric, nullable, key)
      self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    except OSError as error:
      raise ValueError(f"Cannot write {self.path}: {error.strerror}.") from None
    if os.fstat(self._fd).st_size == 0:
      os.write(self._fd, header)
    elif os.pread(self._fd, len(header), 0) != header:
      os.close(self._fd)
      raise ValueError(f"{self.path} exists with other columns; choose another path.")

  def append(self, row):
    """Writes `row` (a dict with every column) with one write call."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow([row[c] for c in self.columns])
    os.write(self._fd, buffer.getvalue().encode())

  def close(self):
    os.close(self._fd)
