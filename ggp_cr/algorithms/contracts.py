"""The contracts between the packages, as typing Protocols (spec README.md, principle 5).

Solvers (cfr/, sampling/) are run by the registry's users (players, examples, solver
runs, online bots) through `Solver`; those on a compiled tree are read in slot form
through `TreeSolver`, and checkpointed through `Resumable`. Evaluators read online
bots through `SolvingBot` / `ComputedStrategyBot` and their solvers through
`SumsSolver`. OpenSpiel's own solvers
(the registry's ``openspiel_*``) keep their API: `step_function` and
`python_average_policy` serve both kinds. `iteration_count` and `check_turn` are the
checks every `Solver.iterate` and every bot's `step` make of their argument.
"""

from typing import Protocol, runtime_checkable

from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import external_sampling_mccfr
from open_spiel.python.algorithms import outcome_sampling_mccfr

from ggp_cr.algorithms.config import number_ranges

_OPENSPIEL_SAMPLING = (outcome_sampling_mccfr.OutcomeSamplingSolver,
                       external_sampling_mccfr.ExternalSamplingSolver)


@runtime_checkable
class Solver(Protocol):
  """A ggp_cr solver: `iterate(n)` runs n iterations (one episode per player each
  for the sampling solvers, one CFR iteration for the full-width ones); `iterations`
  and `visited_states` count iterations and histories touched so far."""

  @property
  def iterations(self) -> int: ...

  @property
  def visited_states(self) -> int: ...

  def iterate(self, num_iterations=1) -> None: ...

  def average_policy(self): ...


def iteration_count(num_iterations):
  """The count `Solver.iterate` runs: an int in [0, 10^12], or a ValueError saying so
  (a float, string or bool is refused rather than truncated or run as 1)."""
  return number_ranges.integer(num_iterations, "iterate's num_iterations")


@runtime_checkable
class TreeSolver(Solver, Protocol):
  """A Solver on a compiled tree, read in slot form without walking the game."""

  @property
  def tree(self): ...

  def average_strategy_slots(self): ...


@runtime_checkable
class Resumable(Protocol):
  """A solver whose run can be checkpointed and resumed."""

  def state_dict(self) -> dict: ...

  def load_state_dict(self, state) -> None: ...


@runtime_checkable
class SumsSolver(Protocol):
  """A sampling solver whose average-strategy sums evaluators read ([S] §3.5)."""
  targeting_probability: float

  def runs_on(self, tree) -> bool:
    """Whether `average_sums` can read information sets of `tree`'s game."""

  def average_sums(self, tree, infoset) -> dict:
    """{action: average-strategy sum} at information set `infoset` of `tree`."""


@runtime_checkable
class OnlineSolver(Solver, Protocol):
  """An outcome-sampling solver an online bot re-solves with ([S] §3.4.2): live
  (outcome_sampling) or compiled (compiled_outcome_sampling)."""
  # Share of a seconds budget per `iterate` call (None: one iteration per call; a
  # share: `iterate(n)` runs n iterations in one kernel call, so callers batch).
  batch_share: float | None

  def warm_up(self) -> None:
    """Loads the numba kernels it calls, so that a timed budget does not pay for it."""

  def check_targeting(self, scheme) -> None:
    """A ValueError unless the solver can target with `scheme` ('ist' or 'pst')."""

  def set_target(self, state, player, scheme, deadline=None): ...

  def target_weight(self, delta, deadline=None) -> float:
    """OOS's re-weighting factor for the current target (bots/online_solving.py)."""

  def average_probabilities(self, state, player) -> list:
    """The average strategy at `player`'s information set in `state`, over
    state.legal_actions(player) (uniform where it has no data)."""


@runtime_checkable
class RandomEstimator(Protocol):
  """A depth-limit utility estimator drawing from a random stream ([S] §3.3.2):
  `estimate(tree, nodes, out)` writes the nodes' values and returns the histories
  visited; `rng_state` (a uint64 array, updated in place) is the stream's state, which
  a Resumable solver checkpoints so that a resumed run continues exactly."""
  rng_state: object

  def estimate(self, tree, nodes, out) -> int: ...


@runtime_checkable
class SolvingBot(Protocol):
  """An online bot whose decisions leave a solver's sums behind (online solving, OOS,
  continual resolving)."""

  def decision_solver(self):
    """The solver behind the latest decision (a SumsSolver or other), or None."""


@runtime_checkable
class ComputedStrategyBot(Protocol):
  """A bot that reports the strategy its decisions computed: {information state
  string: {action: weight}}, already scoped by the bot."""

  def computed_strategy(self): ...


def check_turn(state, player_id):
  """ValueError unless `state` is a decision of seat `player_id` (its turn, or a
  simultaneous node where it has legal actions): the states a bot's `step` accepts.
  Terminal states and chance nodes are named as such."""
  if state.is_terminal():
    raise ValueError(f"A bot steps only where its player ({player_id}) is to move; this "
                     f"state is terminal (returns {state.returns()}).")
  if state.is_chance_node():
    raise ValueError(f"A bot steps only where its player ({player_id}) is to move; this "
                     "state is a chance node (sample its outcome instead).")
  if state.is_simultaneous_node():
    if state.legal_actions(player_id):
      return
    raise ValueError(f"Player {player_id} has no legal action at this simultaneous node.")
  if state.current_player() != player_id:
    raise ValueError(f"It is player {state.current_player()}'s turn, not player "
                     f"{player_id}'s.")


def step_function(solver):
  """The function running one iteration of any registered solver."""
  if isinstance(solver, Solver):
    return solver.iterate
  if isinstance(solver, _OPENSPIEL_SAMPLING):
    return solver.iteration
  return solver.evaluate_and_update_policy  # OpenSpiel's full-width solvers


def visited_states(solver):
  """Histories the solver touched so far, or None (OpenSpiel's solvers do not say)."""
  return solver.visited_states if isinstance(solver, Solver) else None


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
