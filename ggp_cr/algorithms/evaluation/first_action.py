"""The first action's strategy of an online player ([S] §6, Figures 6.2 and 6.3).

Continual resolving and online solving both solve the whole game at their first
decision (pre-play, then the first move's budget). The strategy for the whole game
they hold right after it is the "first action strategy": what the player would play
if it stopped computing. [S] compares its exploitability with that of the strategy the
player actually plays (assembled by the traversing evaluator), to see whether the
later decisions improve on it.

`first_action_slots` reads it from the solver behind a bot's decision
(contracts.SolvingBot): a compiled continual-resolving resolver's whole-game profile,
or a sampling solver's average-strategy sums (contracts.SumsSolver; information sets
without sums play uniformly). `first_action_evaluation` combines both seats' first
action strategies (each seat's bot decides at its first information set) and returns
their exact NashConv.
"""

import time

import numpy as np

from ggp_cr.algorithms import contracts
from ggp_cr.algorithms.best_response import exact_br


def first_action_slots(bot, tree, player):
  """Slots of `tree` holding the strategy `bot` (seat `player`) holds for all of its
  information sets after a decision (uniform elsewhere). ValueError if its solver
  offers no whole-game strategy."""
  solver = bot.decision_solver() if isinstance(bot, contracts.SolvingBot) else None
  slots = tree.uniform_slots()
  own = np.flatnonzero(tree.infoset_player == player)
  if solver is not None and hasattr(solver, "profile"):
    profile = np.asarray(solver.profile(), dtype=np.float64)
    if profile.shape != slots.shape:
      raise ValueError("The bot's solver holds a strategy of a subgame, not of the "
                       "whole game: ask it after its first decision.")
    mask = np.isin(tree.slot_infoset, own)
    slots[mask] = profile[mask]
    return slots
  if isinstance(solver, contracts.SumsSolver) and solver.runs_on(tree):
    for infoset in own.tolist():
      sums = solver.average_sums(tree, infoset)
      offset = int(tree.infoset_action_offset[infoset])
      count = int(tree.infoset_num_actions[infoset])
      actions = tree.infoset_actions[offset:offset + count].tolist()
      row = np.array([max(sums.get(a, 0.0), 0.0) for a in actions])
      if row.sum() > 0:
        slots[offset:offset + count] = row / row.sum()
    return slots
  raise ValueError(f"{type(bot).__name__} exposes no solver with a whole-game "
                   "strategy (a compiled resolver's profile() or a sampling solver's "
                   "average sums).")


def first_action_evaluation(tree, make_bot, seeds):
  """(NashConv of both seats' first action strategies, seconds) on the compiled tree
  `tree`: seat p's bot `make_bot(p, seeds[p])` decides at p's first information set
  in the tree's order, then its whole-game strategy is read (first_action_slots)."""
  start = time.perf_counter()
  slots = tree.uniform_slots()
  for player in (0, 1):
    first = int(np.flatnonzero(tree.infoset_player == player)[0])
    _, state = next(iter(tree.infoset_states([first])))
    bot = make_bot(player, seeds[player])
    bot.restart_at(state)
    bot.step_with_policy(state)
    own = np.isin(tree.slot_infoset, np.flatnonzero(tree.infoset_player == player))
    slots[own] = first_action_slots(bot, tree, player)[own]
  return exact_br.nash_conv_slots(tree, slots).nash_conv, time.perf_counter() - start
