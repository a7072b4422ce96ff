"""File names of results keyed by the full game and solver strings.

A name is a readable, file-system-safe prefix of the string plus a hash of the whole
string, so two configurations that differ only past the prefix (e.g.
`python_leduc(max_raises=1,stack2=50)` and `...stack2=77`, long beyond any prefix)
never share a results file, a checkpoint or an `--overwrite`.
"""

import hashlib
import re

# Characters of the readable prefix kept per string.
PREFIX_LENGTH = 60


def readable(text):
  """A file-name-safe prefix of `text` (at most PREFIX_LENGTH characters)."""
  return re.sub(r"[^A-Za-z0-9_.=,+-]+", "_", text).strip("_")[:PREFIX_LENGTH]


def key(text):
  """`readable(text)` + '-' + 12 hex digits of SHA-256 of the whole `text`."""
  digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
  return f"{readable(text)}-{digest}"
