"""Online players that re-solve the whole game as they play ([S] §1.4.1, §3.4.2).

`OnlineSolvingBot` (the thesis's solving player, IST or PST targeting) and `OOSBot`
(Lisý, Lanctot, Bowling 2015, with re-weighting after a target change), on the
compiled tree or on live states (`compiled='auto'`). Details: docs/algorithms/bots.md.
"""

import time

import numpy as np
import pyspiel

from ggp_cr.algorithms import contracts
from ggp_cr.algorithms.bots import anytime
from ggp_cr.algorithms.bots import players
from ggp_cr.algorithms.config import builtin
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.config import presets
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.sampling import compiled_outcome_sampling
from ggp_cr.algorithms.sampling import outcome_sampling
from ggp_cr.algorithms.sampling import targets
from ggp_cr.algorithms.tree import compiled_tree

DEFAULT_SOLVER = presets.DEFAULT_ONLINE_SOLVER
COMPILED_CHOICES = presets.COMPILED_CHOICES
target_weight = outcome_sampling.target_weight


def check_compiled(compiled):
  """'auto', 'true' or 'false' from one of those strings (any case) or a bool."""
  if isinstance(compiled, bool):
    return "true" if compiled else "false"
  if isinstance(compiled, str) and compiled.lower() in COMPILED_CHOICES:
    return compiled.lower()
  raise ValueError(f"compiled must be one of {', '.join(COMPILED_CHOICES)} (or a "
                   f"bool); got {compiled!r}.")


def choose_tree(game, compiled, targeting, nodes_limit=compiled_tree.COMPILED_NODES_LIMIT,
                cache_dir=None, tree=None, seconds=None):
  """(tree, reason): the compiled tree the solver runs on, or None (live) and why
  (module docstring); `compiled` as check_compiled accepts; `tree` the game's
  CompiledTree when the caller holds it (used as it is); `seconds` what "auto" may
  spend extracting it (None: no limit; compiled_tree.available_tree)."""
  compiled = check_compiled(compiled)
  compiled_tree.check_nodes_limit(nodes_limit)
  if compiled == "false":
    return None, "live solver requested"
  if targeting == targets.PST:
    tree, reason = None, "public-subgame targeting needs live states"
  elif tree is not None:
    compiled_tree.check_tree_of(tree, game)
    reason = "tree given by the caller"
  else:
    tree, reason = compiled_tree.available_tree(
        game, nodes_limit, cache_dir, seconds=None if compiled == "true" else seconds)
  if tree is None and compiled == "true":
    raise ValueError(f"The compiled solver is not available: {reason}; use "
                     "compiled=auto or compiled=false.")
  return tree, reason


_WARM = []
# anytime.spend's margin for a live solver (protocol.AnytimeRun's for continual
# resolving's).
_LIVE_MARGIN = 2.0


def warm_up_process():
  """The registry's warm-up of the oos and online_solving players (registry.
  PlayerType.warm_up): the native extractors on small games, and one Kuhn poker deal
  of each on the compiled and the live solver, once per process, before any clock
  (issue 44)."""
  if _WARM:
    return
  compiled_tree.compile_warm_up_games()  # the native extractors
  for compiled in ("true", "false"):
    for bot_class in (OOSBot, OnlineSolvingBot):
      players.warm_up_on_kuhn(lambda game, bot_class=bot_class, compiled=compiled: (
          bot_class(game, 0, preplay="1it", move="1it", compiled=compiled)))
  _WARM.append(True)


class OnlineSolvingBot(pyspiel.Bot):
  """The thesis's solving player ([S] §3.4.2): re-solves the whole game every move.

  Args:
    game: a two-player zero-sum sequential pyspiel game.
    player_id: the seat, 0 or 1.
    solver: a solver string of the registry building an outcome-sampling solver (e.g.
      'vr_mccfr(delta=0.1)', 'mc_cfr(delta=0.5)', 'os_mccfr(compiled=true)'), or a
      callable seed -> solver with `iteration()`, `set_target` and an average strategy.
    preplay: pre-play budget, e.g. '10s', '1000it' or a limits.Limit.
    move: per-move budget, likewise.
    targeting: 'ist' or 'pst' (the compiled solver supports 'ist' only).
    seed: seeds the solver (per match) and the bot's action sampling.
    compiled: 'auto', 'true' or 'false' (module docstring); a solver string that sets
      its own `compiled` keeps it (a contradicting 'true'/'false' here is an error).
    compiled_nodes_limit: the largest tree 'auto' extracts.
    tree: the game's CompiledTree when the caller holds it (then not looked for).
  """

  def __init__(self, game, player_id, solver=DEFAULT_SOLVER, preplay="0",
               move=limits.DEFAULT_MOVE, targeting=targets.IST, seed=0, compiled="auto",
               compiled_nodes_limit=compiled_tree.COMPILED_NODES_LIMIT, tree=None):
    built = time.perf_counter()
    pyspiel.Bot.__init__(self)
    outcome_sampling.check_sampling_game(game)
    if player_id not in (0, 1):
      raise ValueError(f"player_id must be 0 or 1, got {player_id!r}.")
    if targeting not in targets.TARGETING_SCHEMES:
      raise ValueError(f"targeting must be one of "
                       f"{', '.join(targets.TARGETING_SCHEMES)}; got "
                       f"{targeting!r}.")
    self._game = game
    self._player_id = player_id
    self._preplay, self._move = limits.solving_budget(preplay, move)
    self._targeting = targeting
    self._seed = outcome_sampling.new_seed(seed)
    self.path = self.path_reason = None
    self._tree = tree
    self._make_solver = self._solver_factory(solver, check_compiled(compiled),
                                             compiled_nodes_limit)
    self._rng = np.random.default_rng(self._seed)
    self._matches = 0
    self.solver = None
    self.restart()
    self.solver.check_targeting(targeting)
    if self.path is None:  # a solver callable: its solver says
      self.path = ("compiled" if isinstance(
          self.solver, compiled_outcome_sampling.CompiledOutcomeSamplingSolver)
                   else "live")
      self.path_reason = "the solver callable's choice"
    # The construction (path choice, extraction, warm-up) counts against the first
    # match's timed pre-play.
    self.construction_seconds = time.perf_counter() - built
    self._unpaid = self.construction_seconds if self._preplay.seconds else 0.0

  def _solver_factory(self, solver, compiled, nodes_limit):
    """seed -> solver, for `solver` as the constructor takes it; sets `path`."""
    if callable(solver):
      return solver
    spec = builtin.parse_online_solver(solver)
    if "compiled" in registry.given_parameters(spec):
      given = "true" if spec.parameters["compiled"] else "false"
      if compiled not in ("auto", given):
        raise ValueError(f"compiled={compiled} contradicts the solver's "
                         f"compiled={given} ({spec}); set it in one place.")
      self.path_reason = f"the solver string sets compiled={given}"
    else:
      tree, self.path_reason = choose_tree(
          self._game, compiled, self._targeting, nodes_limit, tree=self._tree,
          seconds=compiled_tree.extraction_seconds(self._preplay))
      spec = registry.with_parameter(spec, "compiled",
                                     "false" if tree is None else "true")
    self.path = "compiled" if spec.parameters["compiled"] else "live"
    on = (self._tree if self.path == "compiled" and self._tree is not None and
          spec.solver_type.accepts_tree else self._game)
    return lambda seed: registry.make_solver(spec, on, seed)

  def player_id(self):
    return self._player_id

  def decision_solver(self):
    """The solver behind the decisions (contracts.SolvingBot)."""
    return self.solver

  def provides_policy(self):
    return True

  def restart(self):
    """A new match: fresh solver tables; pre-play runs again at the first move."""
    self._matches += 1
    self.solver = self._make_solver((self._seed + self._matches) % 2**63)
    self.solver.warm_up()  # outside the budgets
    self._preplay_pending = not self._preplay.is_zero
    self._unpaid = 0.0
    self.iterations_per_move = []

  def restart_at(self, state):
    self.restart()

  def inform_action(self, state, player_id, action):
    pass

  def is_clonable(self):
    return True

  def clone(self):
    """An independent copy (same tables and random streams) sharing the game and a
    compiled solver's tree; the bot reads its history from the states it is given,
    so a copy can continue any history below the current one."""
    shared = [self._game] + [getattr(self.solver, name) for name in ("game", "tree")
                             if getattr(self.solver, name, None) is not None]
    return players.copy_bot(self, shared)

  def _run(self, limit, start):
    """Runs the solver for `limit` from time `start`; returns iterations done. A
    live solver's iterations (one a call) start while twice the recent longest fits:
    their lengths vary with the sampled path (PAM 4x4: 1-9 ms at 0.2 s a move)."""
    batch_share = self.solver.batch_share
    return anytime.spend(limit, start, self.solver.iterate, batch_share=batch_share,
                         margin=_LIVE_MARGIN if batch_share is None else 1.0)

  def _target(self, state, deadline):
    """Sets the solver's target to `state`; may use time until `deadline` (or None)."""
    self.solver.set_target(state, self._player_id, self._targeting, deadline)

  def step_with_policy(self, state):
    """Solves (pre-play first, if pending), then samples from the average strategy."""
    start = time.perf_counter()
    contracts.check_turn(state, self._player_id)
    with anytime.gc_frozen(bool(self._move.seconds or self._preplay.seconds)):
      return self._decide(state, start)

  def _decide(self, state, start):
    done = 0
    if self._preplay_pending:
      self._preplay_pending = False
      preplay_start = start - self._unpaid
      self._unpaid = 0.0
      done += self._run(self._preplay, preplay_start)
      start = time.perf_counter()
      if self._preplay.seconds:  # a pre-play overrun is charged to the move
        start = min(start, preplay_start + self._preplay.seconds)
    deadline = None
    if self._move.seconds:  # a fifth of the move for targeting work at most
      deadline = start + 0.2 * self._move.seconds
    self._target(state, deadline)
    done += self._run(self._move, start)
    self.iterations_per_move.append(done)
    legal = state.legal_actions(self._player_id)
    probabilities = self.solver.average_probabilities(state, self._player_id)
    action = legal[outcome_sampling.sample_index(probabilities, self._rng.random())]
    return list(zip(legal, probabilities)), action

  def step(self, state):
    return self.step_with_policy(state)[1]


class OOSBot(OnlineSolvingBot):
  """Online Outcome Sampling (Lisý et al. 2015) as a pyspiel.Bot.

  Args:
    game, player_id, preplay, move, seed: as OnlineSolvingBot.
    targeting: 'ist' or 'pst'.
    targeting_probability: delta in [0, 1] (0.9 by default).
    exploration: e in [0, 1] (0.6 by default).
    gamma: the explorative regret matching's uniform share, in [0, 1] (0.01).
    reweight: re-weight iterations after each target change (OOS); False gives the
      thesis's MC-CFR behaviour.
    compiled, compiled_nodes_limit, tree: as OnlineSolvingBot.
  """

  def __init__(self, game, player_id, preplay="0", move=limits.DEFAULT_MOVE,
               targeting=targets.IST, targeting_probability=0.9,
               exploration=0.6, gamma=0.01, reweight=True, seed=0, compiled="auto",
               compiled_nodes_limit=compiled_tree.COMPILED_NODES_LIMIT, tree=None):
    gamma = outcome_sampling.check_probability("ERM gamma", gamma)
    self._delta = outcome_sampling.check_probability("Targeting probability delta",
                                                     targeting_probability)
    self._settings = dict(
        regret_matcher=f"erm(rm,{gamma!r})",
        exploration=outcome_sampling.check_probability("Exploration e", exploration),
        targeting_probability=self._delta, incremental=True)
    self._reweight = bool(reweight)
    super().__init__(game, player_id, solver=None, preplay=preplay, move=move,
                     targeting=targeting, seed=seed, compiled=compiled,
                     compiled_nodes_limit=compiled_nodes_limit, tree=tree)

  def _solver_factory(self, solver, compiled, nodes_limit):
    """seed -> OOS's solver: compiled or live (module docstring); sets `path`."""
    del solver
    tree, self.path_reason = choose_tree(
        self._game, compiled, self._targeting, nodes_limit, tree=self._tree,
        seconds=compiled_tree.extraction_seconds(self._preplay))
    self.path = "live" if tree is None else "compiled"
    if tree is None:
      return lambda seed: outcome_sampling.OutcomeSamplingSolver(
          self._game, seed=seed, **self._settings)
    return lambda seed: compiled_outcome_sampling.CompiledOutcomeSamplingSolver(
        tree, seed=seed, **self._settings)

  def _target(self, state, deadline):
    super()._target(state, deadline)
    if self._reweight:
      self.solver.iteration_weight = self.solver.target_weight(self._delta, deadline)


# Build functions of the registry's online_solving and oos players (config/builtin.py).

def build_online_solving(game, player_id, seed, budget, solver, targeting, compiled,
                         tree=None):
  return OnlineSolvingBot(game, player_id, solver=solver, preplay=budget.preplay,
                          move=budget.online_move(), targeting=targeting, seed=seed,
                          compiled=compiled, tree=tree)


def build_oos(game, player_id, seed, budget, targeting, delta, e, gamma, reweight,
              compiled, tree=None):
  return OOSBot(game, player_id, preplay=budget.preplay, move=budget.online_move(),
                targeting=targeting, targeting_probability=delta, exploration=e,
                gamma=gamma, reweight=reweight, seed=seed, compiled=compiled, tree=tree)
