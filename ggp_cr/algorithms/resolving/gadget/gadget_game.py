"""Resolving gadgets as game transforms ([S] §1.4.2, §2, §6; [H] §E.5, §G–I).

A `Subgame` (p, roots R, w, o's unnormalised CBV per root key) and `GadgetGame`: the
resolve, max-margin and unsafe gadgets as pyspiel games whose states wrap the
original's (the reference the compiled views equal); their numbers come from
gadget.prefix. Conventions and constructions: docs/algorithms/resolving.md
("Conventions", "Module notes").
"""

import hashlib
import math
import pickle

import numpy as np
from open_spiel.python.observation import make_observation
import pyspiel

from ggp_cr.algorithms.config import presets
from ggp_cr.algorithms.resolving.gadget import prefix as gadget_prefix
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.games import common

VARIANTS = presets.GADGET_VARIANTS
GADGET_PREFIX = "gadget:"

_CHANCE = int(pyspiel.PlayerId.CHANCE)
_TERMINAL = int(pyspiel.PlayerId.TERMINAL)

# Phases of a gadget state.
_START = 0       # resolve/unsafe: chance over roots; max_margin: o chooses I
_GATE = 1        # resolve: o chooses Follow/Terminate; max_margin: chance deals h ∈ I
_INSIDE = 2      # in the original subgame
_TERMINATED = 3  # resolve: o terminated


def _check_game(game):
  if isinstance(game, str):
    game = pyspiel.load_game(game)
  if not isinstance(game, pyspiel.Game):
    raise ValueError(f"game must be a pyspiel game or game string, got "
                     f"{type(game).__name__}.")
  compiled_tree.check_game(game)
  return game


def _root_state(game, root, index):
  """A fresh pyspiel state for `root` (a state of `game`, a stand-in that clones
  to one, or an action sequence)."""
  if isinstance(root, pyspiel.State) or callable(getattr(type(root), "clone", None)):
    if str(root.get_game()) != str(game):
      raise ValueError(
          f"roots[{index}] is a state of {root.get_game()}, not of {game}.")
    state = root.clone()
  else:
    state = game.new_initial_state()
    for action in root:
      action = int(action)
      checked_legal(state, action, f"roots[{index}] = {list(root)}")
      state.apply_action(action)
  if state.is_terminal():
    raise ValueError(f"roots[{index}] = {state.history()} is terminal; subgame roots "
                     "must be non-terminal histories.")
  return state


def checked_legal(state, action, label):
  """The legal actions (outcomes at a chance node) of `state`; a ValueError naming
  `label` (the history being replayed) if `action` is not one of them."""
  if state.is_terminal():
    raise ValueError(f"{label} runs past a terminal history.")
  legal = ([a for a, _ in state.chance_outcomes()] if state.is_chance_node()
           else state.legal_actions())
  if action not in legal:
    raise ValueError(f"{label}: action {action} is not legal in history "
                     f"{state.history()} (legal: {legal}).")
  return legal


def _weights(values, name, size):
  array = np.asarray(values, dtype=np.float64)
  if array.shape != (size,):
    raise ValueError(f"{name} must have one entry per root ({size}), got shape "
                     f"{array.shape}.")
  if not np.all(np.isfinite(array)) or np.any(array < 0):
    raise ValueError(f"{name} must be finite and >= 0, got {array.tolist()}.")
  return array


class Subgame:
  """The inputs of a resolving gadget ([S] §1.4.2, §2; [H] §H.2, §I.4).

  Args:
    game: the original pyspiel game (or game string).
    player: the resolving player p (0 or 1).
    roots: the root histories R, as states of `game` or action sequences from its root.
    reach: w(h) = π_{-o}(h), chance × p's reach probability, per root.
    opponent_values: {o's information_state_string at a root: CBV(I)}, unnormalised
      counterfactual values (module docstring); needed for every I with k_I > 0.
    opponent_reach: π_o(h) per root; only the unsafe gadget needs it.
    opponent_keys: o's information_state_string at each root, if known: then the
      roots are states of `game` (or stand-ins with its `history`, `clone` and
      information state strings, such as live_trace.DeferredChild), taken as they
      are (not copied or checked; the gadget clones a root where it enters it).
    root_histories: with opponent_keys, each root's history (a tuple of actions
      from the game's root), if known: not asked of the roots.
  Raises ValueError on an empty or repeated root set, a bad player, weights of the
  wrong size or sign, zero total reach, values for information sets that are not o's
  root information sets, or missing values.
  """

  def __init__(self, game, player, roots, reach, opponent_values, opponent_reach=None,
               opponent_keys=None, root_histories=None):
    self.game = _check_game(game)
    if player not in (0, 1):
      raise ValueError(f"player must be 0 or 1, got {player!r}.")
    self.player = int(player)
    self.opponent = 1 - self.player
    roots = list(roots)
    if not roots:
      raise ValueError("roots must be a non-empty set of histories.")
    if opponent_keys is None:
      self.root_states = [_root_state(self.game, root, i)
                          for i, root in enumerate(roots)]
    else:
      self.root_states = roots
      if len(opponent_keys) != len(roots):
        raise ValueError(f"opponent_keys must have one key per root ({len(roots)}), "
                         f"got {len(opponent_keys)}.")
    if root_histories is None or opponent_keys is None:
      root_histories = (tuple(s.history()) for s in self.root_states)
    elif len(root_histories) != len(roots):
      raise ValueError(f"root_histories must have one history per root ({len(roots)}), "
                       f"got {len(root_histories)}.")
    self.root_histories = tuple(map(tuple, root_histories))
    if len(set(self.root_histories)) != len(self.root_histories):
      raise ValueError("roots contains the same history twice.")
    self.reach = _weights(reach, "reach", len(roots))
    self.total_reach = float(self.reach.sum())
    if self.total_reach <= 0:
      raise ValueError("The resolving player and chance never reach the subgame "
                       "(reach sums to 0); there is nothing to resolve.")
    self.opponent_reach = (None if opponent_reach is None else
                           _weights(opponent_reach, "opponent_reach", len(roots)))
    self.opponent_keys = (list(opponent_keys) if opponent_keys is not None else
                          [s.information_state_string(self.opponent)
                           for s in self.root_states])
    self.infosets = list(dict.fromkeys(self.opponent_keys))
    self.infoset_reach = dict.fromkeys(self.infosets, 0.0)
    for key, w in zip(self.opponent_keys, self.reach.tolist()):
      self.infoset_reach[key] += w
    values = {str(k): float(v) for k, v in dict(opponent_values).items()}
    unknown = sorted(set(values) - set(self.infosets))
    if unknown:
      raise ValueError(
          f"opponent_values has keys that are not player {self.opponent}'s information "
          f"states at the roots: {unknown[:5]}{' ...' if len(unknown) > 5 else ''}.")
    missing = [k for k in self.infosets
               if self.infoset_reach[k] > 0 and k not in values]
    if missing:
      raise ValueError(f"opponent_values lacks values for reachable root information "
                       f"states of player {self.opponent}: {missing[:5]}.")
    bad = {k: v for k, v in values.items() if not math.isfinite(v)}
    if bad:
      raise ValueError(f"opponent_values must be finite, got {bad}.")
    self.opponent_values = values

  def normalised_values(self):
    """{I: CBV_norm(I) = CBV(I) / k_I} for the root information sets with k_I > 0."""
    return {k: self.opponent_values[k] / self.infoset_reach[k]
            for k in self.infosets if self.infoset_reach[k] > 0}

  def with_values(self, opponent_values):
    """The same subgame with other opponent values."""
    return Subgame(self.game, self.player, self.root_states, self.reach,
                   opponent_values, self.opponent_reach, self.opponent_keys,
                   self.root_histories)

  def with_noise(self, sigma, rng):
    """Each value multiplied by an independent N(1, sigma) factor ([S] §6)."""
    if not sigma >= 0:
      raise ValueError(f"sigma must be >= 0, got {sigma}.")
    return self.with_values({k: v * rng.normal(1.0, sigma)
                             for k, v in self.opponent_values.items()})

  def fingerprint(self):
    """A short hash of everything that defines the subgame."""
    digest = hashlib.sha1()
    # (the per-root parts as bytes: their repr took 3 µs a root of IIGS{13})
    for part in (repr((str(self.game), self.player)).encode("utf-8"),
                 pickle.dumps(self.root_histories, protocol=4), self.reach.tobytes(),
                 pickle.dumps(sorted(self.opponent_values.items()), protocol=4),
                 b"" if self.opponent_reach is None else
                 b"reach" + self.opponent_reach.tobytes()):
      digest.update(len(part).to_bytes(8, "little") + part)
    return digest.hexdigest()[:16]

  def __repr__(self):
    return (f"Subgame({self.game}, player={self.player}, "
            f"{len(self.root_states)} roots, {len(self.infosets)} opponent root "
            f"infosets, K={self.total_reach:.6g})")


class _StateHandle:
  """Holds a wrapped pyspiel state; OpenSpiel's clone (a deep copy of the gadget
  state's attributes) clones it natively instead of pickling it."""

  __slots__ = ("state",)

  def __init__(self, state):
    self.state = state

  def __deepcopy__(self, memo):
    return _StateHandle(self.state.clone())


def _gadget_type(variant, original):
  return common.game_type(
      "ggp_cr_gadget", f"ggp_cr {variant} gadget",
      {"variant": variant, "player": 0, "fingerprint": ""},
      pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
      provides_information_state_tensor=False,
      provides_observation_string=original.get_type().provides_observation_string,
      provides_observation_tensor=False)


class GadgetGame(pyspiel.Game):
  """A resolving gadget over `subgame`: variant "resolve", "max_margin" or "unsafe".

  Action ids: the original game's actions inside the subgame; the gadget's own
  decisions use ids after them (`follow_action`, `terminate_action`,
  `choose_action(j)` for the j-th root information set). Chance outcomes of the
  gadget's own chance nodes are root indices into `subgame.root_states`.
  """

  def __init__(self, subgame, variant="resolve"):
    if not isinstance(subgame, Subgame):
      raise ValueError(f"subgame must be a Subgame, got {type(subgame).__name__}.")
    if variant not in VARIANTS:
      raise ValueError(
          f"variant must be one of {', '.join(VARIANTS)}; got {variant!r}.")
    self.subgame = subgame
    self.variant = variant
    self.original = subgame.game
    self.player = subgame.player
    self.opponent = subgame.opponent
    self.num_original_actions = self.original.num_distinct_actions()
    self.follow_action = self.num_original_actions
    self.terminate_action = self.num_original_actions + 1
    key_index = {k: i for i, k in enumerate(subgame.infosets)}
    self.root_infoset = [key_index[k] for k in subgame.opponent_keys]
    if variant == "unsafe" and subgame.opponent_reach is None:
      raise ValueError("The unsafe gadget needs the subgame's opponent_reach.")
    k = [subgame.infoset_reach[key] for key in subgame.infosets]
    cbv = [subgame.opponent_values.get(key, 0.0) for key in subgame.infosets]
    prefix = gadget_prefix.plan(variant, subgame.reach, self.root_infoset, k, cbv,
                                np.arange(len(k)), subgame.opponent_reach)
    # o's payoff scale and shift per root information set (opponent_utility).
    self._infoset_payoffs = gadget_prefix.infoset_payoffs(variant, k, cbv, prefix.total)
    num_extra_actions = 0
    if variant == "max_margin":
      self.choices = prefix.gate_infoset.tolist()
      ends = np.cumsum(prefix.choice_counts).tolist()
      outcomes = list(zip(prefix.active.tolist(), prefix.root_chance.tolist()))
      self.choice_outcomes = [outcomes[end - count:end] for end, count in
                              zip(ends, prefix.choice_counts.tolist())]
      num_extra_actions = len(self.choices)
    else:
      self.scale = prefix.total
      self.root_outcomes = list(zip(prefix.active.tolist(),
                                    prefix.root_chance.tolist()))
    if variant == "resolve":
      # o's Terminate payoff per root information set (0 where k_I = 0).
      terminate = np.zeros(len(k))
      terminate[prefix.gate_infoset] = prefix.terminate_value
      self.terminate_utility = terminate.tolist()
      num_extra_actions = 2
    self._observers = {}
    self._tree = None
    lo, hi = self._utility_bounds()
    max_chance = max(self.original.max_chance_outcomes(), len(subgame.root_states))
    super().__init__(
        _gadget_type(variant, self.original),
        pyspiel.GameInfo(
            num_distinct_actions=self.num_original_actions + num_extra_actions,
            max_chance_outcomes=max_chance,
            num_players=2,
            min_utility=lo,
            max_utility=hi,
            utility_sum=0.0,
            max_game_length=self.original.max_game_length() + 2),
        {"variant": variant, "player": self.player,
         "fingerprint": subgame.fingerprint()})

  def _utility_bounds(self):
    lo, hi = self.original.min_utility(), self.original.max_utility()
    if self.variant == "max_margin":
      candidates = []
      for infoset in self.choices:
        key = self.subgame.infosets[infoset]
        k_i = self.subgame.infoset_reach[key]
        shift = self.subgame.opponent_values[key]
        candidates += [k_i * lo - shift, k_i * hi - shift]
    else:
      candidates = [self.scale * lo, self.scale * hi]
      if self.variant == "resolve":
        candidates += self.terminate_utility
    low, high = min(candidates), max(candidates)
    bound = max(abs(low), abs(high))
    return -bound, bound

  def opponent_utility(self, root_infoset, original_utility):
    """o's gadget utility at a subgame terminal below root info set `root_infoset`."""
    scale, shift = self._infoset_payoffs
    return gadget_prefix.opponent_payoff(original_utility, float(scale[root_infoset]),
                                         float(shift[root_infoset]))

  def root_payoffs(self):
    """o's payoff scale and shift per root (gadget_prefix.opponent_payoff)."""
    scale, shift = self._infoset_payoffs
    return scale[self.root_infoset].tolist(), shift[self.root_infoset].tolist()

  def choose_action(self, choice):
    """Action id of o choosing the `choice`-th reachable root info set (max_margin)."""
    return self.num_original_actions + choice

  def new_initial_state(self):
    return GadgetState(self)

  def make_py_observer(self, iig_obs_type=None, params=None):
    if params:
      raise ValueError(f"Observation parameters are not supported; got {params}.")
    kind = common.observation_kind(iig_obs_type)
    if kind not in self._observers:
      self._observers[kind] = GadgetObserver(self, kind, iig_obs_type)
    return self._observers[kind]

  def tree(self):
    """The gadget's CompiledTree (compiled on first use, then kept)."""
    if self._tree is None:
      self._tree = compiled_tree.compile_game(self)
    return self._tree

  def gadget_infoset_key(self, phase, root_infoset=None):
    """The string of a gadget-only node: the start, or o's gate at root info set I."""
    if phase == _START:
      return f"{GADGET_PREFIX}{self.variant} start"
    key = self.subgame.infosets[root_infoset]
    if self.variant == "resolve":
      return f"{GADGET_PREFIX}follow or terminate at {key}"
    return f"{GADGET_PREFIX}chose {key}"


class GadgetState(pyspiel.State):
  """A gadget history: the gadget's own prefix, then a wrapped original state."""

  def __init__(self, game):
    super().__init__(game)
    self.phase = _START
    self.root = -1
    self.choice = -1           # max_margin: index into game.choices
    self.inner = None          # _StateHandle once inside the subgame (or at the gate)

  def root_infoset(self):
    """Index of o's root information set on this history, -1 before the root."""
    if self.root >= 0:
      return self.get_game().root_infoset[self.root]
    if self.choice >= 0:
      return self.get_game().choices[self.choice]
    return -1

  def current_player(self):
    game = self.get_game()
    if self.phase == _START:
      return game.opponent if game.variant == "max_margin" else _CHANCE
    if self.phase == _GATE:
      return _CHANCE if game.variant == "max_margin" else game.opponent
    if self.phase == _TERMINATED or self.inner.state.is_terminal():
      return _TERMINAL
    return self.inner.state.current_player()

  def is_terminal(self):
    return self.current_player() == _TERMINAL

  def _legal_actions(self, player):
    game = self.get_game()
    if self.phase == _INSIDE:
      return self.inner.state.legal_actions(player)
    if player != self.current_player():
      return []
    if game.variant == "max_margin":
      return [game.choose_action(j) for j in range(len(game.choices))]
    return [game.follow_action, game.terminate_action]

  def chance_outcomes(self):
    game = self.get_game()
    if self.phase == _INSIDE:
      return self.inner.state.chance_outcomes()
    if self.phase == _GATE:
      return list(game.choice_outcomes[self.choice])
    return list(game.root_outcomes)

  def _enter(self, root):
    game = self.get_game()
    self.root = root
    self.inner = _StateHandle(game.subgame.root_states[root].clone())

  def _apply_action(self, action):
    game = self.get_game()
    if self.phase == _INSIDE:
      self.inner.state.apply_action(action)
    elif self.phase == _START and game.variant == "max_margin":
      self.choice = action - game.num_original_actions
      if not 0 <= self.choice < len(game.choices):
        raise ValueError(f"Illegal gadget action {action}; legal: "
                         f"{self._legal_actions(game.opponent)}.")
      self.phase = _GATE
    elif self.phase == _START or (self.phase == _GATE and game.variant == "max_margin"):
      outcomes = [a for a, _ in self.chance_outcomes()]
      if action not in outcomes:
        raise ValueError(f"Illegal gadget chance outcome {action}; legal: {outcomes}.")
      self._enter(action)
      self.phase = _GATE if game.variant == "resolve" else _INSIDE
    elif action == game.follow_action:
      self.phase = _INSIDE
    elif action == game.terminate_action:
      self.phase = _TERMINATED
    else:
      raise ValueError(f"Illegal gadget action {action}; legal: "
                       f"{[game.follow_action, game.terminate_action]}.")

  def _action_to_string(self, player, action):
    game = self.get_game()
    if self.phase == _INSIDE:
      return self.inner.state.action_to_string(player, action)
    if player == _CHANCE:
      return f"Root({action}: {list(game.subgame.root_histories[action])})"
    if game.variant == "max_margin":
      infoset = game.choices[action - game.num_original_actions]
      return f"Choose({game.subgame.infosets[infoset]})"
    return "Follow" if action == game.follow_action else "Terminate"

  def returns(self):
    if not self.is_terminal():
      return [0.0, 0.0]
    game = self.get_game()
    if self.phase == _TERMINATED:
      value = game.terminate_utility[self.root_infoset()]
    else:
      value = game.opponent_utility(self.root_infoset(),
                                    self.inner.state.returns()[game.opponent])
    result = [0.0, 0.0]
    result[game.opponent] = value
    result[game.player] = -value
    return result

  def __str__(self):
    game = self.get_game()
    if self.phase == _START:
      return f"{GADGET_PREFIX}{game.variant} start"
    parts = [f"{GADGET_PREFIX}{game.variant}"]
    if self.choice >= 0:
      parts.append(f"chose {game.subgame.infosets[game.choices[self.choice]]}")
    if self.root >= 0:
      parts.append(f"root {self.root}")
    if self.phase == _TERMINATED:
      parts.append("terminated")
    elif self.phase == _INSIDE:
      parts.append("in subgame:\n" + str(self.inner.state))
    return " ".join(parts)


class GadgetObserver:
  """Strings only (no tensors): the original game's strings inside the subgame, and
  `gadget:`-prefixed strings on the gadget's own nodes (there, o's private strings
  name its root information set; public strings only the phase)."""

  def __init__(self, game, kind, iig_obs_type):
    self.game = game
    self.kind = kind
    self.tensor = None
    self.dict = {}
    self._public = None
    if kind == common.ObservationKind.PUBLIC:
      self._public = make_observation(game.original, iig_obs_type)

  def set_from(self, state, player):
    del state, player

  def string_from(self, state, player):
    game = self.game
    if state.phase == _INSIDE:
      inner = state.inner.state
      if self.kind == common.ObservationKind.INFO_STATE:
        return inner.information_state_string(player)
      if self.kind == common.ObservationKind.OBSERVATION:
        return inner.observation_string(player)
      return self._public.string_from(inner, player)
    if self.kind == common.ObservationKind.PUBLIC:
      phase = "start" if state.phase == _START else "gate"
      return f"{GADGET_PREFIX}{game.variant} {phase}"
    if player == game.opponent and state.root_infoset() >= 0:
      return game.gadget_infoset_key(_GATE, state.root_infoset())
    return game.gadget_infoset_key(_START)


def make_gadget(subgame, variant="resolve"):
  """The gadget game of `subgame`: variant "resolve", "max_margin" or "unsafe"."""
  return GadgetGame(subgame, variant)
