"""Local worker processes that die with their parent, fed lazily (issue 43).

`run_pool` runs a function over an iterable of argument tuples in a process pool,
keeping at most two items per worker in flight (the iterable may be a plan of 10^12
matches: nothing in proportion to it is held). Each worker is tied to its parent
(`tie_to_parent`): on Linux the kernel kills it when the parent dies (prctl
PR_SET_PDEATHSIG), elsewhere, and for a parent that died before that call, a watchdog
thread exits when the parent's pid changes; it also closes the file descriptors the
parent names (a forked worker would otherwise share the results file and its lock).
The pool's processes are terminated when the generator fails or is closed, and
`sigterm_as_interrupt` turns SIGTERM into KeyboardInterrupt in the parent, so that a
killed run is torn down as on Ctrl-C. Every worker process of the package is tied this
way: the tournament's pool, the parallel extraction's and the best-response memory
probe (a top-level module: tree and evaluation both use it).
"""

import concurrent.futures
import contextlib
import ctypes
import itertools
import multiprocessing
import os
import signal
import sys
import threading
import time

_PR_SET_PDEATHSIG = 1
_WATCHDOG_SECONDS = 0.5
_IN_FLIGHT_PER_WORKER = 2


def _die_with_parent_on_linux():
  """Asks the kernel to SIGKILL this process when its parent thread dies."""
  if not sys.platform.startswith("linux"):
    return
  try:
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL),
                                            0, 0, 0)
  except (OSError, AttributeError):
    pass  # the watchdog still ends the worker


def _watch_parent(parent):
  while os.getppid() == parent:
    time.sleep(_WATCHDOG_SECONDS)
  os._exit(1)  # pylint: disable=protected-access


def tie_to_parent(parent, close_fds=()):
  """A pool initializer: this worker ends when process `parent` does (see module
  docstring), does not inherit the parent's SIGTERM handler, leaves Ctrl-C to the
  parent (which terminates it; no traceback per worker), and closes `close_fds`."""
  _die_with_parent_on_linux()
  signal.signal(signal.SIGTERM, signal.SIG_DFL)
  signal.signal(signal.SIGINT, signal.SIG_IGN)
  for fd in close_fds:
    try:
      os.close(fd)
    except OSError:
      pass
  if os.getppid() != parent:  # the parent died before the prctl took effect
    os._exit(1)  # pylint: disable=protected-access
  threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _terminate(pool):
  """Stops the pool at once: queued items cancelled, running ones killed."""
  processes = list((getattr(pool, "_processes", None) or {}).values())
  pool.shutdown(wait=False, cancel_futures=True)
  for process in processes:
    process.terminate()
  for process in processes:
    process.join()


def run_pool(function, items, workers, close_fds=()):
  """Yields `function(*item)` for each tuple of `items`, in order of completion, from
  `workers` processes tied to this one (forked, or spawned where fork is missing),
  consuming `items` lazily. The processes are terminated if the generator fails or
  is closed before the end (e.g. KeyboardInterrupt)."""
  forked = "fork" in multiprocessing.get_all_start_methods()
  context = multiprocessing.get_context("fork" if forked else "spawn")
  # Only a forked worker has the parent's descriptors (a spawned one's numbers differ).
  pool = concurrent.futures.ProcessPoolExecutor(
      workers, mp_context=context, initializer=tie_to_parent,
      initargs=(os.getpid(), tuple(close_fds) if forked else ()))
  items = iter(items)
  pending = set()
  finished = False
  try:
    while True:
      room = _IN_FLIGHT_PER_WORKER * workers - len(pending)
      pending.update(pool.submit(function, *item)
                     for item in itertools.islice(items, room))
      if not pending:
        break
      done, pending = concurrent.futures.wait(
          pending, return_when=concurrent.futures.FIRST_COMPLETED)
      for future in done:
        yield future.result()
    finished = True
  finally:
    if finished:
      pool.shutdown(wait=True)
    else:
      _terminate(pool)


@contextlib.contextmanager
def sigterm_as_interrupt():
  """Within it (main thread only; elsewhere nothing changes), SIGTERM raises
  KeyboardInterrupt, so that `finally` blocks stop the workers and close the files
  as on Ctrl-C. The previous handler is restored on exit."""
  if threading.current_thread() is not threading.main_thread():
    yield
    return
  def handler(unused_signum, unused_frame):
    raise KeyboardInterrupt
  previous = signal.signal(signal.SIGTERM, handler)
  try:
    yield
  finally:
    signal.signal(signal.SIGTERM, previous)
