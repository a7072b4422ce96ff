"""Timing helpers of the benchmarks and examples: medians of repeated runs, and how much
of its time budget each decision of an online player takes ([S] §3.4)."""

import statistics
import time

import numpy as np

from ggp_cr.algorithms.evaluation import matches


def median_seconds(function, runs):
  """(median wall-clock seconds of `runs` calls of `function()`, the last result)."""
  times = []
  result = None
  for _ in range(runs):
    start = time.perf_counter()
    result = function()
    times.append(time.perf_counter() - start)
  return statistics.median(times), result


def timed_decisions(decide, preplay, move, ratios):
  """`decide(state) -> action` (a bot's step) for matches.play_against_random, each
  call's seconds / its budget appended to `ratios`: `move` seconds, plus `preplay` at
  the first call (the seat's first decision)."""
  def timed(state):
    budget = move + (0.0 if ratios else preplay)
    start = time.perf_counter()
    action = decide(state)
    ratios.append((time.perf_counter() - start) / budget)
    return action
  return timed


def budget_ratios(game, bots, seed, preplay, move, on_decision=None):
  """Decision time / budget of every decision of one match between `bots` (one per
  seat) with time budgets `preplay` and `move` in seconds (pre-play counts at a
  seat's first decision). Chance samples from numpy's generator seeded `seed`;
  `on_decision(player)` is called after each decision. As `matches.play`, the
  garbage of earlier matches is collected first (collect_between_matches): without
  it, continual resolving's dropped subgame tables piled up from match to match,
  each setup's arrays landed in fresh, page-faulting memory, and PAM{8}'s sampling
  traces took 4-10 times as long in a benchmark's later matches."""
  matches.collect_between_matches()
  rng = np.random.default_rng(seed)
  state = game.new_initial_state()
  first = [True, True]
  ratios = []
  while not state.is_terminal():
    if state.is_chance_node():
      outcomes, probs = zip(*state.chance_outcomes())
      state.apply_action(outcomes[rng.choice(len(outcomes), p=probs)])
      continue
    player = state.current_player()
    start = time.perf_counter()
    action = bots[player].step(state)
    elapsed = time.perf_counter() - start
    budget = move + (preplay if first[player] else 0.0)
    first[player] = False
    ratios.append(elapsed / budget)
    if on_decision is not None:
      on_decision(player)
    state.apply_action(action)
  return ratios
