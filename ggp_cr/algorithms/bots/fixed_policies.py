"""Fixed policies named by a string, for best-response studies and evaluations.

  uniform                          every action equally likely
  random(seed=N)                   random mixed probabilities per information set
  strategy(path=FILE)              a strategy saved by `python -m ggp_cr.examples.solve`
  solver(name=SPEC,iterations=N)   the average policy of a registered solver after N
                                   iterations (see config/registry.py)
"""

import numpy as np

from ggp_cr.algorithms.bots import players
from ggp_cr.algorithms.config import spec_strings
from ggp_cr.algorithms.tree import strategy_files

ACCEPTED = ("uniform, random(seed=N), strategy(path=FILE) or "
            "solver(name=SPEC,iterations=N)")


def fixed_policy_slots(text, game, tree):
  """The fixed policy named by `text`, as a profile in slot form on `tree`."""
  call = spec_strings.parse_call(text)
  if call.args:
    raise ValueError(f"Policy {text!r} takes keyword arguments only; use {ACCEPTED}.")
  if call.name == "uniform" and not call.kwargs:
    return tree.uniform_slots()
  if call.name == "random" and set(call.kwargs) <= {"seed"}:
    seed = spec_strings.parse_int(call.kwargs.get("seed", "0"), "random's seed", 0)
    return tree.random_slots(np.random.default_rng(seed))
  if call.name == "strategy" and set(call.kwargs) == {"path"}:
    return strategy_files.load_strategy(call.kwargs["path"], tree)
  if call.name == "solver" and set(call.kwargs) <= {"name", "iterations"}:
    iterations = spec_strings.parse_int(call.kwargs.get("iterations", "100"),
                                        "solver's iterations", 1)
    policy = players.solved_policy(game, call.kwargs.get("name", "cfr+"),
                                   iterations=iterations)
    return tree.policy_to_slots(policy)
  raise ValueError(f"A policy must be {ACCEPTED}; got {text!r}.")
