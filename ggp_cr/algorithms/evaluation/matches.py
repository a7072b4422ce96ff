"""One match between two players: seeded, timed, with a move log ([S] §4 `run`, App. A.4).

Chance is sampled from a seeded numpy generator, so a match is fully determined by its
players, game and seeds (given iteration budgets; time budgets make search-based players
depend on machine speed). `match_seeds` derives the seeds of match `index` of a pair in a
seating from a base seed: chance depends only on (base seed, match index), so both seatings
and every pair see the same chance stream (common random numbers), while each bot gets its
own seed from (base seed, pair, seating, match index, seat).
"""

import dataclasses
import gc
import hashlib
import time

import numpy as np

import pyspiel
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.config import registry


# Seconds between the full garbage collections `play` runs before a match.
COLLECTION_INTERVAL_SECONDS = 1.0
_last_collection = [float("-inf")]


def collect_between_matches():
  """A full garbage collection before a match, if COLLECTION_INTERVAL_SECONDS have
  passed since the last one.

  Continual resolving's views and their solvers point at each other, so a finished
  match's subgame tables (tens to hundreds of MB at thesis sizes) are freed only by a
  full collection, and timed decisions freeze the objects that exist
  (bots/anytime.gc_frozen), after which the collector's own thresholds rarely start
  one: a tournament worker playing continual resolving on Leduc{100,100,3,30} grew
  by about 125 MB a match until it ran out of memory. Collecting here runs outside
  every bot's budget, at most once a second of play (a collection over a few hundred
  thousand objects takes tens of ms, so short matches are not slowed down).
  """
  if time.perf_counter() - _last_collection[0] < COLLECTION_INTERVAL_SECONDS:
    return
  gc.collect()
  _last_collection[0] = time.perf_counter()


@dataclasses.dataclass(frozen=True)
class Move:
  """One step of a match: who moved (-1 for chance) and what."""
  player: int
  action: int
  action_string: str

  def __str__(self):
    who = "chance" if self.player == pyspiel.PlayerId.CHANCE else f"player {self.player}"
    return f"{who}: {self.action_string} ({self.action})"


@dataclasses.dataclass
class MatchResult:
  """Payoffs, move log and per-seat timing of one match."""
  returns: list
  moves: list
  init_seconds: list
  move_seconds: list
  decisions: list

  @property
  def history(self):
    return [move.action for move in self.moves]


@dataclasses.dataclass(frozen=True)
class MatchSeeds:
  chance: int
  bots: tuple


def _text_key(text):
  return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")


def match_seeds(base_seed, row, col, seating, index):
  """Seeds of match `index` between players `row` and `col` in `seating` (0 or 1)."""
  if base_seed < 0 or index < 0 or seating not in (0, 1):
    raise ValueError(f"Invalid match: base seed {base_seed} and index {index} must be "
                     f">= 0 and seating {seating} 0 or 1.")
  chance = np.random.SeedSequence(base_seed, spawn_key=(0, index))
  bots = np.random.SeedSequence(
      base_seed, spawn_key=(1, _text_key(str(row)), _text_key(str(col)), seating, index))
  return MatchSeeds(int(chance.generate_state(1)[0]),
                    tuple(int(seed) for seed in bots.generate_state(2)))


def sample_chance(state, rng):
  """Samples a chance outcome of `state` with one uniform draw from `rng`."""
  outcomes = state.chance_outcomes()
  cumulative = np.cumsum([probability for _, probability in outcomes])
  position = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
  return outcomes[min(position, len(outcomes) - 1)][0]


def play_against_random(game, seat, decide, rng):
  """Plays `decide(state) -> action` in `seat` of a sequential game against a uniform
  random player, chance (sample_chance) and the random player drawing from the numpy
  Generator `rng`; returns the terminal state. The benchmarks' timed matches (the
  caller times `decide`)."""
  state = game.new_initial_state()
  while not state.is_terminal():
    if state.is_chance_node():
      state.apply_action(sample_chance(state, rng))
    elif state.current_player() == seat:
      state.apply_action(decide(state))
    else:
      state.apply_action(int(rng.choice(state.legal_actions())))
  return state


def _checked_step(bot, state, player, names):
  action = bot.step(state)
  if action not in state.legal_actions(player):
    raise ValueError(f"Player {player} ({names[player]}) chose action {action}, which is "
                     f"not legal in state:\n{state}")
  return action


def play(game, bots, chance_seed, names=None, on_move=None):
  """Plays one match between created bots (one per seat) and returns a MatchResult.

  `on_move(move, state)` is called after each move, with the state before it was applied.
  Bots learn of the other players' moves through `inform_action`, as in OpenSpiel's
  `evaluate_bots`. Earlier matches' garbage is collected first
  (collect_between_matches).
  """
  collect_between_matches()
  names = names or [f"player {i}" for i in range(len(bots))]
  rng = np.random.default_rng(chance_seed)
  state = game.new_initial_state()
  moves, move_seconds, decisions = [], [0.0] * len(bots), [0] * len(bots)
  while not state.is_terminal():
    if state.is_chance_node():
      acted = [(pyspiel.PlayerId.CHANCE, sample_chance(state, rng))]
    elif state.is_simultaneous_node():
      acted = []
      for player, bot in enumerate(bots):
        if state.legal_actions(player):
          start = time.perf_counter()
          acted.append((player, _checked_step(bot, state, player, names)))
          move_seconds[player] += time.perf_counter() - start
          decisions[player] += 1
    else:
      player = state.current_player()
      start = time.perf_counter()
      acted = [(player, _checked_step(bots[player], state, player, names))]
      move_seconds[player] += time.perf_counter() - start
      decisions[player] += 1
    for player, action in acted:
      move = Move(player, int(action), state.action_to_string(player, action))
      moves.append(move)
      if on_move is not None:
        on_move(move, state)
    if state.is_simultaneous_node():
      joint = dict(acted)
      state.apply_actions([joint.get(p, pyspiel.INVALID_ACTION) for p in range(len(bots))])
    else:
      player, action = acted[0]
      for other, bot in enumerate(bots):
        if other != player:
          bot.inform_action(state, player, action)
      state.apply_action(action)
  return MatchResult(list(state.returns()), moves, [0.0] * len(bots), move_seconds,
                     decisions)


def run_match(game, specs, seeds, budget=limits.Budget(), on_move=None, tree=None):
  """Creates the seats' bots from player specs (timing pre-play, after the players'
  process warm-up: registry.warm_up_player) and plays one match.

  Args:
    game: a pyspiel game.
    specs: one player string or PlayerSpec per seat.
    seeds: a MatchSeeds (see match_seeds).
    budget: pre-play and per-move limits passed to each bot.
    on_move: optional callback(move, state) for a live move log.
    tree: the game's CompiledTree when the caller holds it (registry.make_bot).
  """
  specs = [registry.parse_player(spec) for spec in specs]
  if len(specs) != game.num_players():
    raise ValueError(f"{game} needs {game.num_players()} players, got {len(specs)}.")
  for spec in specs:  # once per process, before the clock
    registry.warm_up_player(spec)
  bots, init_seconds = [], []
  for seat, spec in enumerate(specs):
    start = time.perf_counter()
    bots.append(registry.make_bot(spec, game, seat, seeds.bots[seat], budget,
                                  tree=tree))
    init_seconds.append(time.perf_counter() - start)
  result = play(game, bots, seeds.chance, [str(spec) for spec in specs], on_move)
  result.init_seconds = init_seconds
  return result
