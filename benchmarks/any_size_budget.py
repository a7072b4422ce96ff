"""Benchmark (issue 44): do the online players keep their clocks, and resolve, in games
of any size, past the compiled tree's limit?

As a new user would (registry.make_bot, the players' defaults, no tree given or
cached; the players' process warm-up first, as matches.run_match runs it, before the
clock), each of --players plays --matches matches in each seat against a uniform
random player on each of --games, with --preplay seconds of pre-play and --move
seconds a move. A fresh bot is built for every match and its construction is timed
(the path choice, any tree extraction, warm-ups): it counts against the pre-play, so
a match's first decision's ratio is (construction + decision) / (pre-play + move),
a later one's decision / move. Per game and player it prints the path taken and why,
the median construction (extraction) time, the median time a new subgame's setup
took (cr), the median iterations a move, the share of new subgames resolved (cr:
decisions whose own trace saw a new subgame that built it and ran at least one
iteration on it, in the decision or built ahead; after a live trace cut short, every
later decision counts as an entry unless an OwnTrace found it in the current
subgame, so the share is a lower bound there; oos and online_solving re-solve
the whole game at every move: decisions with at least one iteration), with the
recorded reasons of cr's entries not resolved (and how many were resolved on a
sample of the roots, an approximation, live_path.SAMPLED_KIND), and the largest
time / budget. The third-to-last line is the smallest share resolved with sampled
roots counted, the second-to-last `max time/budget: <float>` (bar < 1.05), the last
`resolved: <float>`, the smallest share over games and players resolved exactly, on
all the roots (bar >= 0.95: a subgame over sampled roots is a documented fallback,
not a resolve).
Wall clock: quote the machine's load (the slowest decision's CPU seconds show
preemption). dark_hex(board_size=3) is refused by all three (imperfect recall).

  python benchmarks/any_size_budget.py [--games="g1;g2"] [--players=cr,oos]
      [--move=0.2] [--preplay=1] [--matches=3]
"""

import collections
import gc
import statistics
import time

from absl import app
from absl import flags
import numpy as np

import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.config import presets
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.evaluation import matches
from ggp_cr.algorithms.resolving.live import live_path

_GAMES = flags.DEFINE_string("games", ";".join(presets.ANY_SIZE_GAMES),
                             "Games, separated by ';'.")
_PLAYERS = flags.DEFINE_list("players", ["cr", "oos", "online_solving"],
                             "Players (registry strings without commas).")
_PREPLAY = flags.DEFINE_float("preplay", 1.0, "Pre-play budget in seconds.")
_MOVE = flags.DEFINE_float("move", 0.2, "Per-move budget in seconds (e.g. 1).")
_MATCHES = flags.DEFINE_integer("matches", 3, "Matches per seat, game and player.")
_SEED = flags.DEFINE_integer("seed", 0, "Seed of chance, the random player and bots.")


class _Collections:
  """Seconds the garbage collector ran since `reset` (gc.callbacks)."""

  def __init__(self):
    self.seconds = 0.0
    self._start = None
    gc.callbacks.append(self)

  def __call__(self, phase, info):
    del info
    if phase == "start":
      self._start = time.perf_counter()
    elif self._start is not None:
      self.seconds += time.perf_counter() - self._start

  def reset(self):
    self.seconds = 0.0


_GC = []


def _match(game, spec, seat, seed, budget):
  """One match of `spec` in `seat` against uniform random: (time / budget of each
  decision, the bot, its construction seconds, whether each decision resolved)."""
  matches.collect_between_matches()
  start = time.perf_counter()
  bot = registry.make_bot(spec, game, seat, seed, budget)
  built = time.perf_counter() - start
  ratios, details = [], []

  def decide(state):
    _GC[0].reset()
    cpu = time.process_time()
    start = time.perf_counter()
    action = bot.step(state)
    seconds = time.perf_counter() - start
    details.append(_details(bot, seconds, time.process_time() - cpu))
    if ratios:
      ratios.append(seconds / _MOVE.value)
    else:
      ratios.append((built + seconds) / (_PREPLAY.value + _MOVE.value))
    return action

  matches.play_against_random(game, seat, decide,
                              np.random.default_rng([_SEED.value, seed]))
  return ratios, bot, built, details


def _details(bot, seconds, cpu):
  """What the decision that took `seconds` (`cpu` seconds of this process's CPU: far
  less when other processes held the cores) spent its time on: the garbage
  collector, and (cr) its setup and iterations."""
  text = f"{seconds:.3f} s (cpu {cpu:.3f} s), gc {_GC[0].seconds:.3f} s"
  records = getattr(bot, "decisions", None)
  if isinstance(records, list) and records:
    record = records[-1]
    text += (f", setup {record['setup_seconds']:.3f} s, iterating "
             f"{record['iterate_seconds']:.3f} s")
    if "fallback" in record:
      text += f", fallback: {record['fallback'][:80]}"
  return text


def _iterations(bot, reasons, sampled):
  """Iterations of each of the bot's decisions, and whether each resolved; appends
  to `reasons` why each entry that did not resolve did not (cr), and to `sampled`
  the index (among the entries) of each resolved on sampled roots (cr's live path:
  an approximation, live_path.SAMPLED_KIND)."""
  records = getattr(bot, "decisions", None)
  if isinstance(records, list):  # continual resolving's records
    iterations = [r["iterations"] for r in records]
    resolved = []
    blind = bool(records) and "not traced" in records[0].get("fallback", "")
    for record in records[1:]:
      # After a trace cut short the bot's own lookups see no new subgame: its later
      # decisions count as unresolved entries (a lower bound), unless an OwnTrace
      # found the bot's information state in the current subgame (no entry).
      known = "own_trace_seconds" in record and not record["enters_new_subgame"]
      if record.get("enters_new_subgame") or (blind and not known):
        resolved.append(record["new_subgame"] and record["iterations"] +
                        record.get("iterations_ahead", 0) > 0)
        if not resolved[-1]:
          reasons.append(record.get("fallback", "no iteration"))
        elif record.get("subgame_kind") == live_path.SAMPLED_KIND:
          sampled.append(len(resolved) - 1)
      blind = blind or "not traced" in record.get("fallback", "")
    return iterations, resolved
  iterations = list(bot.iterations_per_move)  # (ISMCTS: its simulations)
  return iterations, [i > 0 for i in iterations]


def main(argv):
  del argv
  budget = limits.Budget.parse(f"{_PREPLAY.value}s", f"{_MOVE.value}s")
  _GC.append(_Collections())
  worst, smallest, smallest_exact = 0.0, 1.0, 1.0
  for game_string in [g.strip() for g in _GAMES.value.split(";") if g.strip()]:
    game = registry.load_game(game_string)
    for player in _PLAYERS.value:
      spec = registry.parse_player(player)
      start = time.perf_counter()
      registry.warm_up_player(spec)  # as matches.run_match: before the clock
      warm = time.perf_counter() - start
      if warm > 0.01:
        print(f"{player}: process warm-up {warm:.2f} s (once, before the clock)",
              flush=True)
      ratios, built, iterations, resolved, setups, paths = [], [], [], [], [], set()
      reasons = []  # why each new subgame not resolved was not (cr's records)
      on_samples = 0  # entries resolved on sampled roots (cr: approximate)
      kept_shares = []  # the share of the histories (or starts) each sample kept
      fallbacks = 0  # ISMCTS's moves played uniformly (no history sampled in time)
      slowest = (0.0, None)
      for match in range(_MATCHES.value):
        for seat in (0, 1):
          try:
            match_ratios, bot, seconds, details = _match(game, spec, seat,
                                                         2 * match + seat, budget)
          except ValueError as error:  # e.g. continual resolving's perfect recall
            if ratios:
              raise
            print(f"{game_string} {player}: refused: {error}", flush=True)
            break
          ratios += match_ratios
          built.append(seconds)
          match_sampled = []
          match_iterations, match_resolved = _iterations(bot, reasons, match_sampled)
          on_samples += len(match_sampled)
          iterations += match_iterations
          resolved += match_resolved
          records = getattr(bot, "decisions", None)
          if isinstance(records, list):
            for record in records:  # ("kept of found" where the bot sampled)
              if "roots_sampled" in record:
                kept, found = map(int, record["roots_sampled"].split(" of "))
                kept_shares.append(kept / found)
            setups += [r["setup_seconds"] for r in records[1:] if r["new_subgame"]]
          paths.add(f"{getattr(bot, 'path', 'live')} "
                    f"({getattr(bot, 'path_reason', 'live states only')})")
          fallbacks += len(getattr(bot, "fallbacks", ()))
          top = max(match_ratios, default=0.0)  # (no decision: the match ended)
          if top > slowest[0]:
            index = match_ratios.index(top)
            slowest = (top, f"match {match} seat {seat} decision {index}: " +
                       details[index] + (f", construction {seconds:.3f} s"
                                         if index == 0 else ""))
        else:
          continue
        break
      if not built:  # refused
        continue
      share = sum(resolved) / len(resolved) if resolved else 1.0
      exact = (sum(resolved) - on_samples) / len(resolved) if resolved else 1.0
      smallest_exact = min(smallest_exact, exact)
      worst = max([worst] + ratios)
      smallest = min(smallest, share)
      setup = (f"; new subgame setup median {1000 * statistics.median(setups):.1f} "
               f"ms, max {1000 * max(setups):.1f} ms" if setups else "")
      print(f"{game_string} {player}: path {' / '.join(sorted(paths))}; construction "
            f"median {statistics.median(built):.2f} s, max {max(built):.2f} s{setup}; "
            f"iterations a move median {statistics.median(iterations):g}; resolved "
            f"{sum(resolved)}/{len(resolved)} ({share:.3f}; exactly "
            f"{sum(resolved) - on_samples}, on sampled roots {on_samples}"
            + (f", {len(kept_shares)} samples keeping a median "
               f"{statistics.median(kept_shares):.2f} of the histories"
               if kept_shares else "") + "); "
            f"time/budget max "
            f"{max(ratios):.3f} ({slowest[1]}), median {statistics.median(ratios):.3f}; "
            f"{len(ratios)} decisions" + (f", {fallbacks} played uniformly (no "
                                           "history sampled in time)"
                                           if fallbacks else ""),
            flush=True)
      for reason, count in collections.Counter(reasons).most_common():
        print(f"  not resolved {count}x: {reason}", flush=True)
  print(f"resolved, sampled roots counted: {smallest:.3f}")
  print(f"max time/budget: {worst:.3f}")
  print(f"resolved: {smallest_exact:.3f}")


if __name__ == "__main__":
  app.run(main)
