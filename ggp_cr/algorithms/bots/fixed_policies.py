"""Fixed policies named by a string, for best-response studies and evaluations.

  uniform                          every action equally likely
  random(seed=N)                   random mixed probabilities per information set
  strategy(path=FILE)              a strategy saved by `python -m ggp_cr.examples.solve`
  solver(name=SPEC,iterations=N)   the average policy of a registered solver after N
                                   iterations (see config/registry.py)
"""

import numpy as np

from ggp_cr.algorithms.bots import players
from ggp_cr.algorithms.config import components
from ggp_cr.algorithms.tree import strategy_files

ACCEPTED = components.FIXED_POLICIES_ACCEPTED


def fixed_policy_slots(text, game, tree):
  """The fixed policy named by `text` (parsed by config.components), as a profile in
  slot form on `tree`."""
  spec = components.parse_fixed_policy(text)
  if spec.kind == "uniform":
    return tree.uniform_slots()
  if spec.kind == "random":
    return tree.random_slots(np.random.default_rng(spec.seed))
  if spec.kind == "strategy":
    return strategy_files.load_strategy(spec.path, tree)
  policy = players.solved_policy(game, spec.solver, iterations=spec.iterations)
  return tree.policy_to_slots(policy)
