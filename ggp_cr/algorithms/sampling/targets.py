"""Targeting of online outcome sampling ([S] §1.4.1, §5.2.2; Lisý et al. 2015).

Once a target is set, a share delta of the episodes samples only histories consistent
with the bot's current situation: its information set (IST, [S]'s choice) or its
public state (PST). `Target` decides which actions keep an episode on target;
`targeted_distribution` restricts a sampling distribution to them.
"""

import time

from open_spiel.python import observation as observation_lib
import pyspiel

from ggp_cr.algorithms.config import presets

IST = presets.IST
PST = presets.PST
TARGETING_SCHEMES = presets.TARGETING_SCHEMES


def public_observer(game):
  """The game's public observer (PST): string_from(state, player) of public info."""
  iig = pyspiel.IIGObservationType(
      public_info=True, perfect_recall=False,
      private_info=pyspiel.PrivateInfoType.NONE)
  try:
    observer = observation_lib.make_observation(game, iig)
  except (pyspiel.SpielError, ValueError, RuntimeError) as error:
    observer = None
    reason = str(error)
  else:
    reason = "it returned no observer"
  if observer is None:
    raise ValueError(
        f"Public subgame targeting needs public observations, and {game} provides none "
        f"({reason}); use information-set targeting ('ist').")
  return observer


class TargetPrefix:
  """A target-consistent history strictly above the target: its actions, which of
  them keep it consistent, and what decides its action probabilities (the chance
  probabilities, or the acting player and information state)."""
  __slots__ = ("actions", "allowed", "chance_probs", "player", "key")

  def __init__(self, state, actions, allowed):
    self.actions = list(actions)
    self.allowed = allowed
    if state.is_chance_node():
      self.chance_probs = [p for _, p in state.chance_outcomes()]
      self.player = None
      self.key = None
    else:
      self.chance_probs = None
      self.player = state.current_player()
      self.key = state.information_state_string(self.player)


class Target:
  """The histories a targeted sample may follow ([S] §1.4.1; Lisý et al. 2015).

  Built from the state the player is in. IST: player `player`'s action-observation
  sequence (own actions and `observation_string` after every step, or the information
  state string in games without observation strings) must agree with the target's;
  PST: the public observation after every step must agree. Which
  actions keep a history consistent is computed once per history and remembered in
  `prefixes`. A consistent history with no consistent continuation (a dead end, e.g.
  a card the opponent turns out to hold) is found on its first visit and then
  excluded at its parent, so targeted samples come to follow exactly the prefixes of
  the target's histories, as the thesis's action-path targeting does.
  """

  def __init__(self, game, state, player, scheme=IST):
    if scheme not in TARGETING_SCHEMES:
      raise ValueError(f"Targeting scheme must be one of {', '.join(TARGETING_SCHEMES)}; "
                       f"got {scheme!r}.")
    if state.is_terminal():
      raise ValueError("Cannot target a terminal state.")
    if player not in (0, 1):
      raise ValueError(f"The targeting player must be 0 or 1, got {player!r}.")
    self.scheme = scheme
    self.player = player
    self._observer = public_observer(game) if scheme == PST else None
    self._use_observations = game.get_type().provides_observation_string
    replay = game.new_initial_state()
    self._records = []
    for action in state.history():
      actor = replay.current_player()
      replay.apply_action(action)
      self._records.append(self._record(actor, action, replay))
    self.length = len(self._records)
    self.prefixes = {}

  def _record(self, actor, action, child):
    """What the targeting observer sees of the step `action` leading to `child`."""
    if child.is_terminal():
      return None
    if self._observer is not None:
      return self._observer.string_from(child, 0)
    own_action = action if actor == self.player else None
    if self._use_observations:
      return own_action, child.observation_string(self.player)
    return own_action, child.information_state_string(self.player)

  def allowed(self, state, actions):
    """For a target-consistent `state`: a list of booleans over `actions`, or None if
    every action is allowed (the state is at or below the target)."""
    history = tuple(state.history())
    depth = len(history)
    if depth >= self.length:
      return None
    prefix = self.prefixes.get(history)
    if prefix is None:
      actor = state.current_player()
      wanted = self._records[depth]
      allowed = [self._record(actor, a, state.child(a)) == wanted for a in actions]
      prefix = TargetPrefix(state, actions, allowed)
      self.prefixes[history] = prefix
      if not any(allowed):
        self._exclude_dead_end(history)
    return prefix.allowed

  def exclude_dead_ends(self, game, max_states, deadline=None):
    """Walks the target-consistent histories above the target from the root, depth
    first, up to `max_states` histories or until time.perf_counter() passes
    `deadline`, so that the dead ends among them are excluded before any sample meets
    them: the targeted samples then follow exactly the prefixes of the target's
    histories from the first episode on (as the compiled solver's targeting does)."""
    budget = [max_states]

    def walk(state, depth):
      if budget[0] <= 0 or (deadline is not None and time.perf_counter() > deadline):
        return
      budget[0] -= 1
      actions = ([action for action, _ in state.chance_outcomes()]
                 if state.is_chance_node() else state.legal_actions())
      allowed = self.allowed(state, actions)
      if depth + 1 < self.length:
        for index, action in enumerate(actions):
          if allowed[index]:  # read at each step: a dead end below may clear it
            walk(state.child(action), depth + 1)

    if self.length > 0:
      walk(game.new_initial_state(), 0)

  def _exclude_dead_end(self, history):
    """Marks `history` inconsistent at its parent, and so on up while a parent is
    left without a consistent child."""
    while history:
      parent = self.prefixes.get(history[:-1])
      if parent is None:
        return
      parent.allowed[parent.actions.index(history[-1])] = False
      if any(parent.allowed):
        return
      history = history[:-1]


def targeted_distribution(untargeted, allowed):
  """The untargeted distribution restricted to allowed actions and renormalised; the
  untargeted one if nothing allowed has positive probability (as OpenSpiel's OOS)."""
  if allowed is None:
    return untargeted
  total = sum(p for p, ok in zip(untargeted, allowed) if ok)
  if total <= 0.0:
    return untargeted
  return [p / total if ok else 0.0 for p, ok in zip(untargeted, allowed)]
