"""Append-only CSV results files: one row per finished unit of work, never rewritten.

Long runs ([S] App. A's experiments) append a row as each unit finishes, with a single
write, so that a killed run loses at most the unit in progress and a rerun can skip
what is already there.
"""

import csv
import io
import os
import pathlib


class AppendOnlyCsv:
  """A CSV file opened for appending rows with fixed `columns`.

  Creates the file (and its folder) with a header, or checks that an existing file has
  the same header. Raises ValueError, before anything is written, if the path is not
  writable or holds other columns.
  """

  def __init__(self, path, columns):
    self.path = pathlib.Path(path)
    self.columns = list(columns)
    header = (",".join(self.columns) + "\n").encode()
    try:
      self.path.parent.mkdir(parents=True, exist_ok=True)
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
