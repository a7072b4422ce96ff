"""Continual resolving's decisions on fixed seeds, recorded to be replayed ([S] ch. 2).

Plays ContinualResolvingBot against a seeded uniform-random opponent with iteration
budgets (deterministic) on small Leduc, IIGoofspiel(4) and PAM(4), each solver and
path, and records every decision's key, policy and action. `python
tests/resolving/record_behaviour.py` rewrites data/behaviour.json (only when a change
of behaviour is meant); test_behaviour_unchanged.py replays it.
"""

import json
import os
import sys

import numpy as np
import pyspiel
from open_spiel.python.bots import uniform_random

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
# pylint: disable=wrong-import-position
import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.evaluation import matches
from ggp_cr.algorithms.resolving import continual_resolving as cr
from ggp_cr.algorithms.resolving.compiled import compiled_resolver

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                       "behaviour.json")
GAMES = ("python_leduc(max_raises=1,cards_per_suit=2)",
         "python_ii_goofspiel(num_cards=4)", "python_princess_monster(max_turns=4)")
# (solver, pre-play, move, extra options)
SOLVERS = (("cfr+", "20it", "10it", {}), ("vr_mccfr", "200it", "100it", {}),
           ("dl_cfr+", "20it", "10it", {}))
# Compiled subgames as copies, in place (COPY_NODES_LIMIT 0), and live states.
PATHS = ("compiled", "in_place", "live")
# The gadget variants and Terminate values, on one game and solver.
VARIANTS = (("cfr+", {"variant": "max_margin"}), ("cfr+", {"variant": "unsafe"}),
            ("cfr+", {"terminate_values": "cfrplayground"}),
            ("vr_mccfr", {"terminate_values": "cfrplayground"}))
SEEDS = (0, 1)


def cases():
  """Every recorded case: (name, game string, seat, seed, path, bot options)."""
  out = []
  for game in GAMES:
    for solver, preplay, move, extra in SOLVERS:
      for path in PATHS:
        for seed in SEEDS:
          options = dict(solver=solver, preplay=preplay, move=move, **extra)
          out.append((game, seed % 2, seed, path, options))
  for solver, extra in VARIANTS:
    budgets = [s for s in SOLVERS if s[0] == solver][0]
    for path in PATHS:
      options = dict(solver=solver, preplay=budgets[1], move=budgets[2], **extra)
      out.append((GAMES[0], 0, 2, path, options))
  return [(f"{g}|seat{s}|seed{e}|{p}|" + ",".join(
      f"{k}={v}" for k, v in sorted(o.items())), g, s, e, p, o)
          for g, s, e, p, o in out]


def play(game_string, seat, seed, path, options):
  """The bot's decisions in one match: [{key, policy, action, new_subgame}]."""
  game = pyspiel.load_game(game_string)
  limit = compiled_resolver.COPY_NODES_LIMIT
  if path == "in_place":
    compiled_resolver.COPY_NODES_LIMIT = 0
  try:
    bot = cr.ContinualResolvingBot(
        game, seat, seed=seed, path="live" if path == "live" else "compiled",
        **options)
    bots = [uniform_random.UniformRandomBot(p, np.random.RandomState(seed + p))
            for p in (0, 1)]
    bots[seat] = bot
    policies = []
    original = bot.step_with_policy

    def recording(state):
      policy, action = original(state)
      policies.append(([int(a) for a, _ in policy], [float(p) for _, p in policy],
                       int(action)))
      return policy, action

    bot.step_with_policy = recording
    matches.play(game, bots, seed)
  finally:
    compiled_resolver.COPY_NODES_LIMIT = limit
  return [{"key": d["key"], "actions": actions, "policy": probabilities,
           "action": action, "new_subgame": bool(d["new_subgame"]),
           "iterations": int(d["iterations"])}
          for d, (actions, probabilities, action) in zip(bot.decisions, policies)]


def main():
  records = {name: play(g, s, e, p, o) for name, g, s, e, p, o in cases()}
  with open(FIXTURE, "w", encoding="utf-8") as f:
    json.dump(records, f, indent=0, sort_keys=True)
  print(f"{len(records)} cases, "
        f"{sum(len(v) for v in records.values())} decisions recorded")


if __name__ == "__main__":
  main()
