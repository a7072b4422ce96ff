"""The anytime loop: spending a computation limit on a solver ([S] §3.4).

Online players (online solving, OOS, continual resolving) improve their strategy until
the move's limit is spent: an iteration limit runs exactly that many iterations
(deterministic for a seed); a seconds limit runs batches while the next one is
expected to end before the deadline. A timed decision runs with the objects that
existed before it frozen and the garbage collector off (`gc_frozen`); a player whose
decisions allocate arrays of a subgame's size can ask the allocator to reuse freed
memory (`keep_freed_memory`).
"""

import contextlib
import ctypes
import gc
import platform
import time

import numpy as np


@contextlib.contextmanager
def gc_frozen(active=True):
  """No garbage collection inside the block (if `active`): the objects that exist when
  it starts are frozen (gc.freeze) and the collector is off until it ends, so neither a
  full collection over a solver's tables nor the young ones over a live path's
  per-root objects (a tenth of an IIGS{13} move) land inside a timed move
  (docs/benchmarks.md, "Garbage collection"). After it they are unfrozen and the
  collector is on again. Nothing is done if the caller froze objects itself or the
  collector is off."""
  if not active or not gc.isenabled() or gc.get_freeze_count():
    yield
    return
  gc.freeze()
  gc.disable()
  try:
    yield
  finally:
    gc.unfreeze()
    gc.enable()


# glibc's mallopt parameters, the largest mmap threshold it accepts on 64 bits, and
# the trim threshold that turns trimming off.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MMAP_THRESHOLD = 32 << 20
_NEVER_TRIM = -1
# return_freed_memory's fixed mmap threshold.
_RETURNED_THRESHOLD = 1 << 20
# Whether keep_freed_memory applied (the first of it and return_freed_memory to be
# called decides, once per process).
_KEPT = []
# Blocks prefault_heap touches (under the mmap threshold, so they come from the heap),
# and the bytes it has touched so far in this process.
_PREFAULT_BLOCK_BYTES = 8 << 20
_PREFAULTED = [0]


def _mallopt(*settings):
  """Sets glibc's allocator parameters, (parameter, value) pairs in order, stopping at
  the first refused; returns whether all applied (False off glibc)."""
  if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
    return False
  try:
    libc = ctypes.CDLL("libc.so.6")
    return all(bool(libc.mallopt(parameter, value)) for parameter, value in settings)
  except (OSError, AttributeError):
    return False


def return_freed_memory():
  """The opposite of keep_freed_memory, for processes whose decisions are not timed
  (examples/cr_exploitability: iteration budgets only): asks glibc's allocator (if
  the process uses it) to map every block of 1 MiB or more on its own, given back
  when freed. glibc raises its own threshold to a freed block's size (up to 32 MiB),
  and blocks of 10-40 MB allocated and freed at every decision then grew a
  fragmented heap: IIGoofspiel{7}'s evaluation +2.5 GB within 1,200 decisions with
  7 bots alive (docs/reproductions.md). Once per process, unless keep_freed_memory
  applied first; returns whether it applied."""
  if _KEPT:
    return False
  applied = _mallopt((_M_MMAP_THRESHOLD, _RETURNED_THRESHOLD))
  _KEPT.append(False)
  return applied


def keep_freed_memory():
  """Asks glibc's allocator (if the process uses it) to keep freed memory for reuse:
  blocks up to 32 MiB come from the heap and freed heap is never given back to the
  system, so continual resolving's per-decision arrays do not page-fault in afresh after
  every match (measurements: docs/benchmarks.md, bar 6). The price: the process keeps
  its largest heap until it exits. Once per process; returns whether it applied (False
  off glibc)."""
  if _KEPT:
    return _KEPT[0]
  applied = _mallopt((_M_MMAP_THRESHOLD, _MMAP_THRESHOLD),
                     (_M_TRIM_THRESHOLD, _NEVER_TRIM))
  _KEPT.append(applied)
  return applied


def prefault_heap(nbytes):
  """Once keep_freed_memory applied: makes sure `nbytes` of heap have been touched in
  this process and freed, so that later allocations up to that much reuse mapped pages
  instead of faulting fresh ones inside a timed decision (docs/benchmarks.md, bar 6).
  Only what exceeds the largest earlier request is touched (in blocks of 8 MiB);
  returns the bytes touched now (0 off glibc)."""
  if not keep_freed_memory():
    return 0
  extra = int(nbytes) - _PREFAULTED[0]
  if extra <= 0:
    return 0
  blocks = [np.ones(_PREFAULT_BLOCK_BYTES // 8)
            for _ in range(-(-extra // _PREFAULT_BLOCK_BYTES))]
  touched = sum(block.nbytes for block in blocks)
  del blocks
  _PREFAULTED[0] = int(nbytes)
  return touched


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


def step_if_it_fits(iterate, batch, per_iteration, deadline, margin, decay):
  """One step of `spend`'s loop: runs `iterate(batch)` if now + margin * batch *
  per_iteration < `deadline` (time.perf_counter()). Returns the step's seconds (None
  if it did not run) and the estimate as the loop keeps it: the larger of decay *
  per_iteration and the step's seconds per iteration."""
  now = time.perf_counter()
  if now + margin * batch * per_iteration >= deadline:
    return None, per_iteration
  iterate(batch)
  elapsed = time.perf_counter() - now
  return elapsed, max(decay * per_iteration, elapsed / batch)


def spend(limit, start, iterate, margin=1.0, decay=0.9, batch_share=None, timing=None):
  """Calls `iterate(n)` (n iterations) for `limit` (limits.Limit) from time `start`.

  With seconds, the next batch starts only while now + margin * batch * t < deadline,
  where t is the recent longest time per iteration (the previous estimate decays by
  `decay` each batch); `margin` may be a callable giving it before each batch (a
  solver whose iterations change cost as it runs). `batch_share`: batches of about
  that share of the budget (for a compiled solver whose calls are cheap per
  iteration), else one iteration at a time.
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
    elapsed, per_iteration = step_if_it_fits(
        iterate, batch, per_iteration, deadline,
        margin() if callable(margin) else margin, decay)
    if elapsed is None:
      return done
    if timing is not None:
      timing["per_iteration"] = per_iteration
      if "samples" in timing:
        timing["samples"].append(elapsed / batch)
    done += batch
    if batch_share:
      batch = max(1, int(batch_share * limit.seconds / max(per_iteration, 1e-9)))

