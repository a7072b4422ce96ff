"""The anytime loop: spending a computation limit on a solver ([S] §3.4).

Online players (online solving, OOS, continual resolving) improve their strategy until
the move's limit is spent: an iteration limit runs exactly that many iterations
(deterministic for a seed); a seconds limit runs batches while the next one is
expected to end before the deadline. A timed decision runs with the objects that
existed before it frozen for the garbage collector (`gc_frozen`); a player whose
decisions allocate arrays of a subgame's size can ask the allocator to reuse freed
memory (`keep_freed_memory`).
"""

import contextlib
import ctypes
import gc
import platform
import time


@contextlib.contextmanager
def gc_frozen(active=True):
  """The garbage collector does not scan the objects that exist when the block starts
  (if `active`): they are frozen (gc.freeze) and unfrozen after it. A full collection
  over a live solver's tables took 0.15 s during an online solving match of PAM{8}
  (measured with gc.callbacks on the shared machine), more than the margin of a 0.2 s
  move; young collections still run, over the objects the decision makes. (Turning
  the collector off instead let a move's allocations pile up into a 30-45 ms young
  collection as the decision returned.) Nothing is done if the caller froze objects
  itself or the collector is off."""
  if not active or not gc.isenabled() or gc.get_freeze_count():
    yield
    return
  gc.freeze()
  try:
    yield
  finally:
    gc.unfreeze()


# glibc's mallopt parameters and the largest mmap threshold it accepts on 64 bits.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MMAP_THRESHOLD = 32 << 20
_TRIM_THRESHOLD = 512 << 20
_KEPT = []


def keep_freed_memory():
  """Asks glibc's allocator (if the process uses it) to keep freed memory for reuse:
  blocks up to 32 MiB come from the heap, and up to 512 MiB of freed heap stay in the
  process, instead of large blocks being mapped fresh from the system and unmapped
  when freed. Otherwise every numpy array of 10^5-10^6 entries that a decision makes
  is page-faulted anew (continual resolving on PAM{8}: 1-4 thousand faults, 10-25 ms
  of a 0.1 s move at a subgame of 543k roots, measured on the shared machine). Once
  per process; returns whether it applied (False off glibc)."""
  if _KEPT:
    return _KEPT[0]
  applied = False
  if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
    try:
      libc = ctypes.CDLL("libc.so.6")
      applied = bool(libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD) and
                     libc.mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))
    except (OSError, AttributeError):
      applied = False
  _KEPT.append(applied)
  return applied


def would_start(limit, start, margin=1.0, decay=0.9, timing=None):
  """Whether `spend` with these arguments, called now, would start an iteration."""
  if limit.iterations is not None:
    return limit.iterations > 0
  if not limit.seconds:
    return False
  return time.perf_counter() + margin * _carried(timing, decay) < start + limit.seconds


def _carried(timing, decay):
  """The per-iteration estimate a call starts from: `timing`'s, decayed once."""
  return 0.0 if timing is None else decay * timing.get("per_iteration", 0.0)


def spend(limit, start, iterate, margin=1.0, decay=0.9, batch_share=None, timing=None):
  """Calls `iterate(n)` (n iterations) for `limit` (limits.Limit) from time `start`.

  With seconds, the next batch starts only while now + margin * batch * t < deadline,
  where t is the recent longest time per iteration (the previous estimate decays by
  `decay` each batch). `batch_share`: batches of about that share of the budget (for a
  compiled solver whose calls are cheap per iteration), else one iteration at a time.
  `timing`: a dict carrying t (key "per_iteration", decayed once per call) from call
  to call, so that a later move's first iteration is not started blind; if it holds
  a list under "samples", each batch's seconds per iteration are appended to it.
  Returns the iterations done.
  """
  if limit.iterations is not None:
    iterate(limit.iterations)
    return limit.iterations
  if not limit.seconds:
    return 0
  deadline = start + limit.seconds
  done = 0
  batch = 1
  # A carried estimate decays per call too, so one slow iteration (a cold cache) does
  # not stop later moves for good.
  per_iteration = _carried(timing, decay)
  while True:
    now = time.perf_counter()
    if now + margin * batch * per_iteration >= deadline:
      return done
    iterate(batch)
    elapsed = time.perf_counter() - now
    per_iteration = max(decay * per_iteration, elapsed / batch)
    if timing is not None:
      timing["per_iteration"] = per_iteration
      if "samples" in timing:
        timing["samples"].append(elapsed / batch)
    done += batch
    if batch_share:
      batch = max(1, int(batch_share * limit.seconds / max(per_iteration, 1e-9)))

