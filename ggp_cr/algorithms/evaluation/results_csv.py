"""Append-only CSV results files: one row per finished unit of work, never rewritten.

Long runs ([S] App. A's experiments) append a row as each unit finishes, with a single
write, so that a killed run loses at most the unit in progress and a rerun can skip
what is already there.

Every file read back is checked first (`set_aside_bad_rows`): a malformed row (wrong
number of fields, an unbalanced quote, a number column that is not a finite number, a
duplicate key), a row the file's own `check` refuses (a match outside the plan, a
payoff outside the game's range, a negative exploitability) or a half-written last
line is moved to `<file>.rejected` with a warning, so it is never replayed, never
summarised and never glued to by the next row. A file saved with CRLF line endings
(e.g. by a Windows editor) is read as if it had LF ones, and rewritten with LF ones
when opened for appending.
"""

import csv
import fcntl
import io
import math
import os
import pathlib
import stat
import tempfile
import warnings

from ggp_cr.algorithms.files import output_paths


def rejected_path(path):
  """Where `set_aside_bad_rows` moves the rows it refuses."""
  return pathlib.Path(str(path) + ".rejected")


def _row_problem(fields, columns, numeric, nullable, key, seen, check):
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
  problem = None if check is None else check(row)
  if problem is not None:
    return problem
  if key:
    identity = tuple(row[name] for name in key)
    if identity in seen:
      return f"duplicate of the row with key {identity}"
    seen.add(identity)
  return None


def _replace(path, text):
  """Replaces the file at `path` by `text` atomically (a temporary file, then rename),
  keeping the file's permissions (mkstemp's own are owner-only)."""
  mode = stat.S_IMODE(os.stat(path).st_mode)
  handle, temporary = tempfile.mkstemp(dir=pathlib.Path(path).parent, suffix=".tmp")
  with os.fdopen(handle, "w", encoding="utf-8", newline="") as file:
    file.write(text)
  os.chmod(temporary, mode)
  os.replace(temporary, path)


def _header(columns):
  return ",".join(columns) + "\n"


def _line(columns, row):
  buffer = io.StringIO()
  csv.writer(buffer, lineterminator="\n").writerow([row[c] for c in columns])
  return buffer.getvalue()


def _checked_lines(path, columns, numeric, nullable, key, check):
  """The file's content split into (good lines, their rows as dicts, (line, problem)
  for every bad one, whether it had CRLF line endings); None for a missing or empty
  file. Reads only."""
  path = pathlib.Path(path)
  try:
    content = path.read_bytes()
  except FileNotFoundError:
    return None
  except OSError as error:
    raise ValueError(f"Cannot read {path}: {error.strerror}.") from None
  if not content:
    return None
  header = _header(columns)
  text = content.decode("utf-8", errors="replace")
  crlf = "\r\n" in text
  text = text.replace("\r\n", "\n")
  if not text.startswith(header):
    raise ValueError(f"{path} does not start with the header {header.strip()!r}; it "
                     "holds other columns or was not written by this tool.")
  lines = text[len(header):].split("\n")
  partial = lines.pop()  # "" when the file ends with a newline
  kept, rejected, rows, seen = [], [], [], set()
  for line in lines:
    try:
      (fields,) = list(csv.reader([line], strict=True)) or [[]]
      problem = _row_problem(fields, columns, numeric, nullable, key, seen, check)
    except (csv.Error, ValueError) as error:
      problem = f"unparsable ({error})"
    if problem is None:
      kept.append(line)
      rows.append(dict(zip(columns, fields)))
    else:
      rejected.append((line, problem))
  if partial:
    rejected.append((partial, "half-written (no final newline)"))
  return kept, rows, rejected, crlf


def _warning_kinds(check):
  return ("malformed, half-written or out-of-range" if check is not None else
          "malformed or half-written")


def set_aside_bad_rows(path, columns, numeric=(), nullable=(), key=(), check=None):
  """Checks the rows of an existing CSV of `columns`; returns the good ones as dicts.

  A line that does not parse as one row of len(columns) fields, whose `numeric`
  columns are not finite numbers (empty allowed in `nullable` columns), whose `key`
  columns repeat an earlier row's, that `check(row)` (row: a dict of text) refuses
  by returning a problem (text), or that lacks its final newline (half-written) is
  appended to `<path>.rejected`, a warning names the count and the first problem, and
  `path` is rewritten atomically without it (and with LF line endings if it had CRLF
  ones). Raises ValueError if the header differs from `columns`. A missing or empty
  file gives [].
  """
  checked = _checked_lines(path, columns, numeric, nullable, key, check)
  if checked is None:
    return []
  kept, rows, rejected, crlf = checked
  if rejected:
    with open(rejected_path(path), "a", encoding="utf-8") as file:
      file.writelines(line + "\n" for line, _ in rejected)
      file.flush()
      os.fsync(file.fileno())
  if rejected or crlf:
    _replace(path, _header(columns) + "".join(line + "\n" for line in kept))
  if rejected:
    warnings.warn(f"{path}: set aside {len(rejected)} {_warning_kinds(check)} row(s) "
                  f"in {rejected_path(path)} (first: {rejected[0][1]}).")
  return rows


def read_good_rows(path, columns, numeric=(), nullable=(), key=(), check=None):
  """The good rows of a CSV of `columns` as dicts, checked as `set_aside_bad_rows`
  checks them but without changing anything: for a file another run may be writing
  (its last line can be half-written). Bad rows are skipped with a warning naming
  their count. Raises ValueError if the file is missing, empty or has another header.
  """
  checked = _checked_lines(path, columns, numeric, nullable, key, check)
  if checked is None:
    raise ValueError(f"{path} is missing or empty: there are no rows to read.")
  _, rows, rejected, _ = checked
  if rejected:
    warnings.warn(f"{path}: skipped {len(rejected)} {_warning_kinds(check)} row(s) "
                  f"(first: {rejected[0][1]}); the file is left as it is.")
  return rows


class AppendOnlyCsv:
  """A CSV file opened for appending rows with fixed `columns`; the one results writer.

  Creates the file (and its folder) with a header, or checks that an existing file has
  the same header and sets its bad rows aside (`set_aside_bad_rows`; the good ones are
  `self.rows`). Raises ValueError, before anything is written, if the path is not
  writable or holds other columns. `replace` starts the file afresh (an existing one
  is emptied, whatever its columns); `lock` takes an exclusive lock so that a second
  run on the same file fails ("being written by another run"); `kind` names the file
  in the header error; `check_existing()` is called, before anything is changed, when
  the file already holds rows (e.g. to compare a configuration sidecar); `check` is
  set_aside_bad_rows'. Each
  `append` is one write call, so a killed run leaves at most one half-written row,
  which the next opening sets aside.
  """

  def __init__(self, path, columns, numeric=(), nullable=(), key=(), *, replace=False,
               lock=False, kind="", check_existing=None, check=None):
    self.path = pathlib.Path(path)
    self.columns = list(columns)
    self._lock = lock
    self._fd = None
    self._header = _header(self.columns).encode()
    output_paths.check_file(self.path, "output")
    self._open()
    try:
      size = os.fstat(self._fd).st_size
      if replace and size:
        os.ftruncate(self._fd, 0)
        size = 0
      start = os.pread(self._fd, len(self._header) + 1, 0)
      if size and not (start.startswith(self._header) or
                       start == self._header[:-1] + b"\r\n"):
        raise ValueError(
            f"{self.path} does not start with the {kind + ' ' if kind else ''}header "
            f"{self._header.decode().strip()!r}; it holds other columns or was not "
            "written by this tool (or by another version). Choose another path.")
      if size > len(self._header) and check_existing is not None:
        check_existing()
      if not size:
        os.write(self._fd, self._header)
      self.rows = set_aside_bad_rows(self.path, self.columns, numeric, nullable, key,
                                     check)
      self._follow_rename()
    except (ValueError, OSError) as error:
      self.close()
      if isinstance(error, OSError):
        raise ValueError(f"Cannot write {self.path}: {error.strerror}.") from None
      raise

  def _open(self):
    try:
      self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    except OSError as error:
      raise ValueError(f"Cannot write {self.path}: {error.strerror}.") from None
    if self._lock:
      try:
        fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
      except OSError:
        self.close()
        raise ValueError(f"{self.path} is being written by another run.") from None

  def _follow_rename(self):
    """After the file was replaced (rows set aside or kept), appends to the new one."""
    if os.stat(self.path).st_ino != os.fstat(self._fd).st_ino:
      os.close(self._fd)
      self._open()

  def keep(self, predicate):
    """Keeps only the rows (dicts of text) for which `predicate` holds, atomically."""
    self.rows = [row for row in self.rows if predicate(row)]
    _replace(self.path, self._header.decode()
             + "".join(_line(self.columns, row) for row in self.rows))
    self._follow_rename()

  def append(self, row):
    """Writes `row` (a dict with every column) with one write call; `self.rows` gets
    it as it will read back (text)."""
    os.write(self._fd, _line(self.columns, row).encode())
    self.rows.append({c: "" if row[c] is None else str(row[c]) for c in self.columns})

  def fileno(self):
    """The descriptor rows are appended through (holding the lock): worker processes
    forked while it is open close it (worker_processes.tie_to_parent)."""
    return self._fd

  def close(self):
    if self._fd is not None:
      os.close(self._fd)
      self._fd = None

  def __enter__(self):
    return self

  def __exit__(self, *unused):
    self.close()
