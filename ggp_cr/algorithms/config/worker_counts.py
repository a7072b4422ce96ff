"""How many worker processes help: no more than the cores and the work items (issue 43).

A process beyond the cores this process may run on only competes for them, and one
beyond the work items has nothing to do; each still costs an interpreter's start-up
(a second or more), so `useful_workers` caps a requested count at both and says so.
"""

import os

from ggp_cr.algorithms.config import number_ranges


def usable_cores():
  """The cores this process may run on (its CPU affinity where the system has one)."""
  if hasattr(os, "sched_getaffinity"):
    return max(1, len(os.sched_getaffinity(0)))
  return max(1, os.cpu_count() or 1)


def useful_workers(requested, items, what, say=None, cores=True):
  """`requested` (a count checked against number_ranges.MAX_COUNT, at least 1) capped
  at the usable cores (unless `cores` is False, e.g. for a remote cluster) and at
  `items` (the work items, at least 1; None: not known yet). When capped, `say` (a callable taking a line,
  or None) is told why in one line naming `what` (e.g. '--workers')."""
  requested = number_ranges.count(requested, what, minimum=1)
  limits = [] if items is None else [(max(1, int(items)), f"{int(items):,} work item(s)")]
  if cores:
    limits.append((usable_cores(), f"{usable_cores()} usable core(s)"))
  useful = min([requested] + [limit for limit, _ in limits])
  if useful < requested and say is not None:
    reasons = " and ".join(text for limit, text in limits if limit == useful)
    say(f"{what}={requested:,} capped at {useful}: {reasons}; more processes would "
        "only add start-up time.")
  return useful
