"""Resolving gadgets as game transforms ([S] §1.4.2, §2, §6; [H] §E.5, §G–I).

A gadget turns a subgame of a game into a game of its own that any solver can solve:
every gadget here is a pyspiel game whose states wrap the original game's states.
Player p (the resolving player) re-solves its strategy in the subgame; the opponent o
keeps its trunk strategy.

The subgame is described by a `Subgame`: the original game, p, the root histories R,
w(h) = π_{-o}(h) (chance × p's reach) per root, and the opponent's counterfactual
values per opponent root information set I, keyed by o's `information_state_string`
at the root histories (whether or not o acts there).

Value convention (one for the whole module): values are UNNORMALISED counterfactual
values, as in Burch et al. 2014, [S] §1.4.2 (v2R) and [H] Lemma 7 / eq. I.3:

    CBV(I) = Σ_{h∈I} w(h) · v_o(h),   k_I = Σ_{h∈I} w(h),   CBV_norm(I) = CBV(I) / k_I,

where v_o(h) is o's expected utility below h (under p's strategy and o's
counterfactual best response for exact values). The subgame margin ([H] Def. 5) is
SM = min_{I: k_I>0} (CBV_before(I) − CBV_after(I)) in the same unnormalised units,
which is what the max-margin gadget maximises.

Gadgets (K = Σ_R w):
- resolve (CFR-D, Burch et al. 2014; [S] §1.4.2; [H] §H.2): chance picks h ∈ R with
  probability w(h)/K; o, at an information set keyed by its root key I(h), chooses
  Follow (play on from h) or Terminate (o gets CBV_norm(I)); every payoff is
  multiplied by K, so the gadget's values are on the scale of the counterfactual values.
- max_margin (Moravčík et al. 2016; [H] §I.4–I.5): o first chooses I among the root
  information sets with k_I > 0, then chance deals h ∈ I with probability w(h)/k_I; o's
  terminal utility is k_I·(u_o(z) − CBV_norm(I)) = k_I·u_o(z) − CBV(I). p does not see
  the choice. o's value of choosing I is then CBV_after(I) − CBV(I) ([H] Lemma 7).
- unsafe ([H] §G.2): chance picks h ∈ R with the joint reach π(h) = w(h)·π_o(h),
  normalised; payoffs multiplied by Σ_R π(h); no alternative for o.
Roots with zero chance probability are left out (they cannot be reached in the gadget).

Every gadget is zero-sum: p's payoff is minus o's, so in a constant-sum original game
p's gadget payoffs are its own utilities shifted by the constant. Inside the subgame
both players' information state strings are the original game's strings, so a gadget
strategy maps back onto p's original information sets (`resolved_strategy`,
`combine`). The gadget's own decision nodes have strings starting with `gadget:`.
Gadgets are not registered with pyspiel (not loadable by name, not serializable).

Subgame inputs from a trunk strategy, exactly, on the original game's compiled tree:
`subgame_root_nodes` (closure under augmented information sets, or by public state),
`subgame_from_trunk` (w, o's reach, and exact CBR or trunk counterfactual values),
`opponent_root_values`, `subgame_margin` and `combine`.
"""

import hashlib
import math

import numba
import numpy as np
from open_spiel.python.observation import make_observation
import pyspiel

from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.tree import compiled_tree
from ggp_cr.algorithms.config import presets
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
  """A fresh pyspiel state for `root` (a state of `game` or an action sequence)."""
  if isinstance(root, pyspiel.State):
    if str(root.get_game()) != str(game):
      raise ValueError(
          f"roots[{index}] is a state of {root.get_game()}, not of {game}.")
    state = root.clone()
  else:
    state = game.new_initial_state()
    for action in root:
      action = int(action)
      if state.is_terminal():
        raise ValueError(f"roots[{index}] = {list(root)} runs past a terminal history.")
      legal = ([a for a, _ in state.chance_outcomes()] if state.is_chance_node()
               else state.legal_actions())
      if action not in legal:
        raise ValueError(f"roots[{index}] = {list(root)}: action {action} is not legal "
                         f"in history {state.history()} (legal: {legal}).")
      state.apply_action(action)
  if state.is_terminal():
    raise ValueError(f"roots[{index}] = {state.history()} is terminal; subgame roots "
                     "must be non-terminal histories.")
  return state


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
  Raises ValueError on an empty or repeated root set, a bad player, weights of the
  wrong size or sign, zero total reach, values for information sets that are not o's
  root information sets, or missing values.
  """

  def __init__(self, game, player, roots, reach, opponent_values, opponent_reach=None):
    self.game = _check_game(game)
    if player not in (0, 1):
      raise ValueError(f"player must be 0 or 1, got {player!r}.")
    self.player = int(player)
    self.opponent = 1 - self.player
    roots = list(roots)
    if not roots:
      raise ValueError("roots must be a non-empty set of histories.")
    self.root_states = [_root_state(self.game, root, i) for i, root in enumerate(roots)]
    self.root_histories = tuple(tuple(s.history()) for s in self.root_states)
    if len(set(self.root_histories)) != len(self.root_histories):
      raise ValueError("roots contains the same history twice.")
    self.reach = _weights(reach, "reach", len(roots))
    self.total_reach = float(self.reach.sum())
    if self.total_reach <= 0:
      raise ValueError("The resolving player and chance never reach the subgame "
                       "(reach sums to 0); there is nothing to resolve.")
    self.opponent_reach = (None if opponent_reach is None else
                           _weights(opponent_reach, "opponent_reach", len(roots)))
    self.opponent_keys = [s.information_state_string(self.opponent)
                          for s in self.root_states]
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
                   opponent_values, self.opponent_reach)

  def with_noise(self, sigma, rng):
    """Each value multiplied by an independent N(1, sigma) factor ([S] §6)."""
    if not sigma >= 0:
      raise ValueError(f"sigma must be >= 0, got {sigma}.")
    return self.with_values({k: v * rng.normal(1.0, sigma)
                             for k, v in self.opponent_values.items()})

  def fingerprint(self):
    """A short hash of everything that defines the subgame."""
    digest = hashlib.sha1()
    opponent_reach = (None if self.opponent_reach is None else
                      self.opponent_reach.tobytes())
    for part in (str(self.game), self.player, self.root_histories,
                 self.reach.tobytes(), sorted(self.opponent_values.items()),
                 opponent_reach):
      digest.update(repr(part).encode("utf-8"))
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
  original_type = original.get_type()
  return pyspiel.GameType(
      short_name="ggp_cr_gadget",
      long_name=f"ggp_cr {variant} gadget",
      dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
      chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
      information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
      utility=pyspiel.GameType.Utility.ZERO_SUM,
      reward_model=pyspiel.GameType.RewardModel.TERMINAL,
      max_num_players=2,
      min_num_players=2,
      provides_information_state_string=True,
      provides_information_state_tensor=False,
      provides_observation_string=original_type.provides_observation_string,
      provides_observation_tensor=False,
      parameter_specification={"variant": variant, "player": 0, "fingerprint": ""})


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
    reach = subgame.reach
    key_index = {k: i for i, k in enumerate(subgame.infosets)}
    self.root_infoset = [key_index[k] for k in subgame.opponent_keys]
    num_extra_actions = 0
    if variant == "resolve":
      self.scale = subgame.total_reach
      self.root_outcomes = [(i, w / self.scale) for i, w in enumerate(reach.tolist())
                            if w > 0]
      normalised = subgame.normalised_values()
      self.terminate_utility = [self.scale * normalised.get(k, 0.0)
                                for k in subgame.infosets]
      num_extra_actions = 2
    elif variant == "unsafe":
      if subgame.opponent_reach is None:
        raise ValueError("The unsafe gadget needs the subgame's opponent_reach.")
      joint = reach * subgame.opponent_reach
      self.scale = float(joint.sum())
      if self.scale <= 0:
        raise ValueError("The subgame has zero joint reach; the unsafe gadget needs "
                         "a subgame both players reach.")
      self.root_outcomes = [(i, p / self.scale) for i, p in enumerate(joint.tolist())
                            if p > 0]
    else:
      self.choices = [i for i, k in enumerate(subgame.infosets)
                      if subgame.infoset_reach[k] > 0]
      self.choice_outcomes = []
      for infoset in self.choices:
        k_i = subgame.infoset_reach[subgame.infosets[infoset]]
        self.choice_outcomes.append(
            [(r, w / k_i) for r, w in enumerate(reach.tolist())
             if w > 0 and self.root_infoset[r] == infoset])
      num_extra_actions = len(self.choices)
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
    if self.variant == "max_margin":
      key = self.subgame.infosets[root_infoset]
      return (self.subgame.infoset_reach[key] * original_utility -
              self.subgame.opponent_values[key])
    return self.scale * original_utility

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


# --- Mapping a gadget strategy back onto the original game ---------------------------


def _gadget_slots(gadget, gadget_policy):
  tree = gadget.tree()
  if isinstance(gadget_policy, np.ndarray):
    if gadget_policy.shape != (tree.num_infoset_actions,):
      raise ValueError(f"Gadget slots must have shape ({tree.num_infoset_actions},), "
                       f"got {gadget_policy.shape}.")
    return np.asarray(gadget_policy, dtype=np.float64)
  return tree.policy_to_slots(gadget_policy)


def resolved_strategy(gadget, gadget_policy):
  """The resolving player's strategy in the subgame, keyed by original info states.

  `gadget_policy` is any policy.Policy over the gadget (e.g. a solver's average
  policy) or a strategy in slot form on `gadget.tree()`. Returns
  {information_state_string: {action: probability}} for every information set of p
  the gadget reaches; the keys are the original game's information state strings.
  """
  tree = gadget.tree()
  slots = _gadget_slots(gadget, gadget_policy)
  strategy = {}
  for infoset in np.flatnonzero(tree.infoset_player == gadget.player).tolist():
    offset = int(tree.infoset_action_offset[infoset])
    end = offset + int(tree.infoset_num_actions[infoset])
    strategy[tree.infoset_keys[infoset]] = dict(
        zip(tree.infoset_actions[offset:end].tolist(), slots[offset:end].tolist()))
  return strategy


def gadget_slots_from_original(gadget, tree, profile):
  """A gadget strategy in slot form (on `gadget.tree()`) playing `profile`.

  Inside the subgame both players play `profile` (a profile of the original game on
  its CompiledTree `tree`, slot form or any policy.Policy); at the gadget's own
  decisions o follows (resolve) or chooses uniformly (max_margin). With p's part this
  is the trunk's subgame strategy, a feasible solution of the resolve gadget
  ([H] §H.3) and margin 0 in the max-margin gadget; also a warm start.
  """
  _check_tree(tree, gadget.original)
  original = _as_slots(tree, profile, "profile")
  gadget_tree = gadget.tree()
  slots = np.zeros(gadget_tree.num_infoset_actions)
  for infoset, key in enumerate(gadget_tree.infoset_keys):
    offset = int(gadget_tree.infoset_action_offset[infoset])
    actions = gadget_tree.infoset_actions[
        offset:offset + int(gadget_tree.infoset_num_actions[infoset])].tolist()
    if actions[0] >= gadget.num_original_actions:
      if gadget.variant == "resolve":
        slots[offset + actions.index(gadget.follow_action)] = 1.0
      else:
        slots[offset:offset + len(actions)] = 1.0 / len(actions)
      continue
    source = tree.infoset_index(int(gadget_tree.infoset_player[infoset]), key)
    source_offset = int(tree.infoset_action_offset[source])
    source_actions = tree.infoset_actions[
        source_offset:source_offset + int(tree.infoset_num_actions[source])].tolist()
    for i, action in enumerate(actions):
      slots[offset + i] = original[source_offset + source_actions.index(action)]
  return slots


def _as_slots(tree, profile, name):
  if isinstance(profile, np.ndarray):
    if profile.shape != (tree.num_infoset_actions,):
      raise ValueError(f"{name} must have shape ({tree.num_infoset_actions},) on "
                       f"{tree.game_string}, got {profile.shape}.")
    return np.asarray(profile, dtype=np.float64)
  return tree.policy_to_slots(profile)


def _check_tree(tree, game):
  if tree.game_string != str(game):
    raise ValueError(
        f"The compiled tree is of {tree.game_string}, the subgame of {game}.")


def combine(tree, trunk, gadget, gadget_policy):
  """The trunk strategy with p's subgame information sets replaced by the gadget's.

  `tree` is the original game's CompiledTree, `trunk` a profile (slot form or any
  policy.Policy); o's strategy and p's strategy outside the subgame stay as in the
  trunk ([S] §6). Returns the combined profile in slot form (see
  `tree.slots_to_tabular_policy` for a TabularPolicy).
  """
  _check_tree(tree, gadget.original)
  combined = _as_slots(tree, trunk, "trunk").copy()
  for key, probabilities in resolved_strategy(gadget, gadget_policy).items():
    infoset = tree.infoset_index(gadget.player, key)
    offset = int(tree.infoset_action_offset[infoset])
    end = offset + int(tree.infoset_num_actions[infoset])
    actions = tree.infoset_actions[offset:end]
    if sorted(actions.tolist()) != sorted(probabilities):
      raise ValueError(f"Information state {key!r} has actions {actions.tolist()} in "
                       f"{tree.game_string} but {sorted(probabilities)} in the gadget.")
    combined[offset:end] = [probabilities[a] for a in actions.tolist()]
  return combined


# --- Subgame inputs from a trunk strategy, on the original game's compiled tree -------


@numba.njit(cache=True)
def _augmented_keys(node_player, node_infoset, node_parent, node_action_index,
                    infoset_action_offset, num_slots):
  """Each player's augmented information set of every node ([H] Def. 3), as an int.

  Where the player acts: num_slots + 1 + its information set; elsewhere: 1 + the
  player's last (infoset, action) slot on the path (0 before its first action). With
  perfect recall the last slot determines the player's whole sequence. Terminals: -1.
  """
  num_nodes = len(node_player)
  last = np.full((2, num_nodes), -1, dtype=np.int64)
  keys = np.full((2, num_nodes), -1, dtype=np.int64)
  for node in range(num_nodes):
    parent = node_parent[node]
    if parent >= 0:
      last[0, node] = last[0, parent]
      last[1, node] = last[1, parent]
      mover = node_player[parent]
      if mover >= 0:
        last[mover, node] = (infoset_action_offset[node_infoset[parent]] +
                             node_action_index[node])
    player = node_player[node]
    if player == _TERMINAL:
      continue
    for p in range(2):
      if p == player:
        keys[p, node] = num_slots + 1 + node_infoset[node]
      else:
        keys[p, node] = last[p, node] + 1
  return keys


def history_node(tree, history):
  """The node of `tree` reached by `history` (a state or an action sequence)."""
  if isinstance(history, pyspiel.State):
    history = history.history()
  state = tree.game.new_initial_state()
  node = 0
  for action in history:
    if state.is_terminal():
      raise ValueError(f"History {list(history)} runs past a terminal history.")
    legal = ([a for a, _ in state.chance_outcomes()] if state.is_chance_node()
             else state.legal_actions())
    if action not in legal:
      raise ValueError(f"History {list(history)}: action {action} is not legal in "
                       f"{state.history()} (legal: {legal}).")
    node = int(tree.node_first_child[node]) + legal.index(action)
    state.apply_action(action)
  return node


def node_states(tree, nodes):
  """{node: pyspiel state} for the given nodes of `tree`, rebuilt from the root."""
  wanted = set(int(n) for n in nodes)
  needed = np.zeros(tree.num_nodes, dtype=bool)
  for node in wanted:
    while node >= 0 and not needed[node]:
      needed[node] = True
      node = tree.node_parent[node]
  states = {}
  stack = [(0, tree.game.new_initial_state())]
  while stack:
    node, state = stack.pop()
    if node in wanted:
      states[node] = state.clone()
    first = int(tree.node_first_child[node])
    children = [c for c in range(first, first + int(tree.node_num_children[node]))
                if needed[c]]
    if not children:
      continue
    actions = ([a for a, _ in state.chance_outcomes()] if state.is_chance_node()
               else state.legal_actions())
    for child in children:
      stack.append((child, state.child(actions[child - first])))
  return states


def _descendants_closed(tree, members):
  for depth in range(1, tree.max_depth + 1):
    lo, hi = tree.level_offsets[depth], tree.level_offsets[depth + 1]
    members[lo:hi] |= members[tree.node_parent[lo:hi]]


def _subgame_closure(tree, members):
  """Smallest node set containing `members` closed under descendants and under both
  players' augmented information sets ([H] Def. 4)."""
  keys = _augmented_keys(tree.node_player, tree.node_infoset, tree.node_parent,
                         tree.node_action_index, tree.infoset_action_offset,
                         tree.num_infoset_actions)
  members = members.copy()
  while True:
    _descendants_closed(tree, members)
    grown = members.copy()
    for player_keys in keys:
      inside = np.unique(player_keys[members & (player_keys >= 0)])
      grown |= np.isin(player_keys, inside)
    if np.array_equal(grown, members):
      return members
    members = grown


def _minimal_nodes(tree, members):
  parents = tree.node_parent
  is_root = members & np.r_[True, ~members[parents[1:]]]
  return np.flatnonzero(is_root)


def _public_observation():
  return pyspiel.IIGObservationType(public_info=True, perfect_recall=True,
                                    private_info=pyspiel.PrivateInfoType.NONE)


def _check_infosets_closed(tree, members, target):
  """Raises ValueError if an information set has histories inside and outside."""
  inside = np.unique(tree.node_infoset[members & (tree.node_infoset >= 0)])
  leaking = np.flatnonzero(~members & np.isin(tree.node_infoset, inside))
  if len(leaking):
    key = tree.infoset_keys[tree.node_infoset[leaking[0]]]
    raise ValueError(f"The histories sharing the public state {target!r} do not form a "
                     f"subgame: information state {key!r} also has histories outside.")


def subgame_root_nodes(tree, history, by="augmented"):
  """Root nodes R of the subgame containing `history` (state or action sequence).

  by="augmented": the smallest subgame containing the history — closed under
  descendants and both players' augmented information sets ([H] Def. 3-4; Burch et
  al. 2014) — and R its minimal histories. A history right after a chance node or
  inside a player's run of moves is no root of its own ([S] §2); the closure then
  reaches back to the proper root. by="public": R = the first histories of the
  history's public state (perfect-recall public observation), as DeepStack's public
  subgames; checked to leave no information set partly outside. Returns a sorted int
  array of node indices.
  """
  start = history_node(tree, history)
  if tree.node_player[start] == _TERMINAL:
    raise ValueError(f"History {list(history)} is terminal; it is in no subgame.")
  members = np.zeros(tree.num_nodes, dtype=bool)
  if by == "augmented":
    members[start] = True
    return _minimal_nodes(tree, _subgame_closure(tree, members))
  if by != "public":
    raise ValueError(f"by must be 'augmented' or 'public', got {by!r}.")
  observer = make_observation(tree.game, _public_observation())
  states = node_states(tree, range(tree.num_nodes))
  target = observer.string_from(states[start], 0)
  for node, state in states.items():
    if tree.node_player[node] != _TERMINAL:
      members[node] = observer.string_from(state, 0) == target
  roots = _minimal_nodes(tree, members)
  subtree = np.zeros(tree.num_nodes, dtype=bool)
  subtree[roots] = True
  _descendants_closed(tree, subtree)
  _check_infosets_closed(tree, subtree, target)
  return roots


def _opponent_node_values(tree, slots, opponent, best_responding):
  if best_responding:
    _, slots = exact_br.best_response_slots(tree, slots, opponent)
  values = tree.node_values(slots)
  return values if opponent == 0 else tree.utility_sum - values


def _root_nodes(tree, subgame):
  _check_tree(tree, subgame.game)
  return np.array([history_node(tree, h) for h in subgame.root_histories])


def opponent_root_values(tree, profile, subgame, best_responding=True):
  """{I: CBV(I)}, o's unnormalised counterfactual values at the subgame's roots.

  CBV(I) = Σ_{h∈I} w(h)·v_o(h) with the subgame's w and v_o(h) o's expected utility
  below h when p plays `profile` and o its counterfactual best response
  (best_responding=True, [H] §E.1) or its own strategy in `profile`.
  """
  slots = _as_slots(tree, profile, "profile")
  values = _opponent_node_values(tree, slots, subgame.opponent, best_responding)
  result = dict.fromkeys(subgame.infosets, 0.0)
  for key, w, node in zip(subgame.opponent_keys, subgame.reach.tolist(),
                          _root_nodes(tree, subgame).tolist()):
    result[key] += w * values[node]
  return result


def subgame_from_trunk(tree, trunk, history, player=None, values="cbr",
                       by="augmented"):
  """The Subgame containing `history`, with inputs computed exactly from a trunk.

  `tree` is the original game's CompiledTree, `trunk` a profile (slot form or any
  policy.Policy). The resolving player defaults to the player acting at `history`
  ([S] §6). w(h) and o's reach come from the trunk; values="cbr" gives o's exact
  counterfactual best-response values, values="trunk" o's counterfactual values when
  it plays its trunk strategy ([S] §6). `by` chooses how roots are found
  (`subgame_root_nodes`).
  """
  slots = _as_slots(tree, trunk, "trunk")
  start = history_node(tree, history)
  if player is None:
    player = int(tree.node_player[start])
    if player not in (0, 1):
      raise ValueError(f"No player acts at history {list(history)}; pass player.")
  if player not in (0, 1):
    raise ValueError(f"player must be 0 or 1, got {player!r}.")
  if values not in ("cbr", "trunk"):
    raise ValueError(f"values must be 'cbr' or 'trunk', got {values!r}.")
  roots = subgame_root_nodes(tree, history, by)
  reach = tree.node_reaches(slots)
  w = reach[player, roots] * reach[2, roots]
  states = node_states(tree, roots)
  node_values = _opponent_node_values(tree, slots, 1 - player, values == "cbr")
  cbv = {}
  for node, weight in zip(roots.tolist(), w.tolist()):
    key = states[node].information_state_string(1 - player)
    cbv[key] = cbv.get(key, 0.0) + weight * node_values[node]
  return Subgame(tree.game, player, [states[n] for n in roots.tolist()], w, cbv,
                 opponent_reach=reach[1 - player, roots])


def subgame_margin(tree, subgame, profile, before=None):
  """SM = min_{I: k_I>0} (CBV_before(I) − CBV_after(I)) ([H] Def. 5), unnormalised.

  CBV_after are o's exact counterfactual best-response values against p's strategy
  in `profile` (e.g. `combine(...)`); `before` defaults to the values the subgame
  carries (pass `opponent_root_values(tree, trunk, subgame)` when those are noisy).
  """
  before = subgame.opponent_values if before is None else before
  after = opponent_root_values(tree, profile, subgame)
  margins = [before[k] - after[k] for k in subgame.infosets
             if subgame.infoset_reach[k] > 0]
  return min(margins)
