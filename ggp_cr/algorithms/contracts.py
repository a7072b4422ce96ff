"""The contracts between the packages, as typing Protocols (spec README.md, principle 5).

Solvers (cfr/, sampling/, and OpenSpiel's own) are run by the registry's users
(players, examples, solver runs) and read by evaluators through `Solver`; the parts of
an online bot that evaluators read are `SolverBot`.
"""

from open_spiel.python import policy as policy_lib


def python_average_policy(solver, game):
  """The solver's average policy as an open_spiel Python policy.

  OpenSpiel's C++ solvers return a pyspiel policy; it is converted via their tabular
  average policy.
  """
  average = solver.average_policy()
  if isinstance(average, policy_lib.Policy):
    return average
  return policy_lib.pyspiel_policy_to_python_policy(game,
                                                    solver.tabular_average_policy())
