"""OpenSpiel's own error lines kept off the terminal where we report the error ourselves.

pyspiel's C++ error handler writes each SpielError to stderr ("OpenSpiel exception:
Missing closing bracket ')'.") before Python sees the exception, so a call whose error
we turn into our own one-line message would print it twice, the first time as noise.
`quiet()` sends the process's stderr (file descriptor 2) to a temporary file for the
length of a block: what the block wrote is dropped if it raised, written back if not.
"""

import contextlib
import os
import sys
import tempfile


@contextlib.contextmanager
def quiet():
  """Runs the block with file descriptor 2 captured (module docstring). Not for
  blocks that print progress: their lines appear only when the block ends."""
  sys.stderr.flush()
  try:
    saved = os.dup(2)
  except OSError:  # No stderr to capture.
    yield
    return
  with tempfile.TemporaryFile() as captured:
    os.dup2(captured.fileno(), 2)
    raised = True
    try:
      yield
      raised = False
    finally:
      sys.stderr.flush()
      os.dup2(saved, 2)
      os.close(saved)
      if not raised:
        captured.seek(0)
        written = captured.read()
        while written:
          written = written[os.write(2, written):]
