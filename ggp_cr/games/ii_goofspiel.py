"""Incomplete-information Goofspiel, II-Goofspiel of [S] §3.2.2.

Each player holds cards 1..N and the prize deck holds 1..N. A turn: the prize is shown
(ascending: 1, 2, ..., N; descending: N, ..., 1; random: a chance node reveals one of the
prizes left), player 0 bids a card, then player 1 bids a card without seeing player 0's.
The higher bid wins the prize, equal bids win nothing, and both bid cards are discarded.
Each player then learns only whether the turn was a win, a loss or a draw for them. The
last, forced turn is played explicitly. `win_loss` pays +1 / -1 / 0 by comparing the sums
of prizes won, `point_difference` pays the difference of the sums.

Action k of a player bids card k + 1; chance action k reveals prize k + 1.
"""


import pyspiel

from ggp_cr.games import common

MAX_CARDS = 100
_DEFAULT_PARAMS = {
    "num_cards": 5,
    "points_order": "ascending",
    "returns_type": "win_loss",
}
POINTS_ORDERS = ("ascending", "descending", "random")
RETURNS_TYPES = ("win_loss", "point_difference")

_GAME_TYPE = common.game_type(
    short_name="python_ii_goofspiel",
    long_name="Python incomplete-information Goofspiel",
    parameter_specification=_DEFAULT_PARAMS,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC)

_CHANCE = int(pyspiel.PlayerId.CHANCE)
_TERMINAL = int(pyspiel.PlayerId.TERMINAL)

# Result of a turn for the player who bid `own` against `other`.
WON, DRAW, LOST = "won", "draw", "lost"
RESULTS = (WON, DRAW, LOST)


# Per byte c of a mask and its value v: the actions of the bits set (8c + k for bit k).
_BYTE_ACTIONS = tuple(
    tuple(tuple(8 * c + k for k in range(8) if v >> k & 1) for v in range(256))
    for c in range((MAX_CARDS + 7) // 8))


def _actions_of(mask):
  """The sorted actions whose bits are set in `mask` (bit k: card or prize k + 1)."""
  actions = ()
  for table in _BYTE_ACTIONS:
    if not mask:
      break
    actions += table[mask & 255]
    mask >>= 8
  return actions


def result(own, other):
  """WON, DRAW or LOST for the player who bid card `own` against card `other`."""
  if own > other:
    return WON
  return DRAW if own == other else LOST


class IIGoofspielGame(common.Game):
  """python_ii_goofspiel(num_cards, points_order, returns_type); num_cards in
  [1, MAX_CARDS] (information state tensors grow as num_cards^2)."""

  def __init__(self, params=None):
    params = {**_DEFAULT_PARAMS, **(params or {})}
    self.num_cards = common.int_parameter(params, "num_cards", 1, MAX_CARDS)
    self.points_order = common.choice_parameter(params, "points_order", POINTS_ORDERS)
    self.returns_type = common.choice_parameter(params, "returns_type", RETURNS_TYPES)
    n = self.num_cards
    if self.points_order == "ascending":
      self.prize_order = tuple(range(1, n + 1))
    elif self.points_order == "descending":
      self.prize_order = tuple(range(n, 0, -1))
    else:
      self.prize_order = None
    self.is_random_order = self.prize_order is None
    self.all_cards = (1 << n) - 1
    # The players' information state strings at the start (the first prize shown).
    first = "" if self.prize_order is None else f" Prize({self.prize_order[0]})"
    self.initial_info = (f"p0:{first}", f"p1:{first}")
    self.max_points = n * (n + 1) // 2
    max_utility = 1 if self.returns_type == "win_loss" else self.max_points
    super().__init__(
        _GAME_TYPE,
        pyspiel.GameInfo(
            num_distinct_actions=n,
            max_chance_outcomes=n if self.is_random_order else 0,
            num_players=2,
            min_utility=-float(max_utility),
            max_utility=float(max_utility),
            utility_sum=0.0,
            max_game_length=2 * n),
        params)

  def new_initial_state(self):
    return IIGoofspielState(self)

  def max_chance_nodes_in_history(self):
    return self.num_cards if self.is_random_order else 0

  def make_py_observer(self, iig_obs_type=None, params=None):
    return IIGoofspielObserver(self, iig_obs_type, params)


class IIGoofspielState(common.State):
  """State as four or five ints and two strings, so that OpenSpiel's clone stays cheap.

  `_next` is the player to move (0, 1, chance or terminal), `_hand0` and `_hand1` are
  bitmasks of the cards each player still holds (bit k: card k + 1) and `_score` is
  player 0's points minus player 1's. With the random order, `_prizes_left` is the
  bitmask of the prizes not shown yet. Everything else (player 0's pending bid, the
  current prize, the bid sequences) is read back from `history()` when needed.

  `_info0` and `_info1` are the players' information state strings, extended as
  actions are applied (a string is copied as one object; rebuilding it from the
  history cost as much as a clone).

  `legal_actions`, `is_chance_node` and `information_state_string` are answered in
  Python as well, so that Python callers skip a round trip through C++; C++ callers get
  the same answers through `_legal_actions`, `current_player` and the observer.
  """

  def __init__(self, game):
    super().__init__(game)
    self._hand0 = self._hand1 = game.all_cards
    self._score = 0
    if game.is_random_order:
      self._next = _CHANCE
      self._prizes_left = game.all_cards
    else:
      self._next = 0
    self._info0, self._info1 = game.initial_info

  def current_player(self):
    return self._next

  def is_terminal(self):
    return self._next == _TERMINAL

  def is_chance_node(self):
    return self._next == _CHANCE

  def _legal_actions(self, player):
    return _actions_of(self._hand1 if player else self._hand0)

  def _prizes_left_mask(self):
    """Bitmask of the prizes not shown yet (bit k: prize k + 1)."""
    game = self.get_game()
    if game.is_random_order:
      return self._prizes_left
    mask = game.all_cards
    for prize in game.prize_order[:min(len(self.history()) // 2 + 1, game.num_cards)]:
      mask &= ~(1 << (prize - 1))
    return mask

  def _chance_outcomes(self):
    actions = _actions_of(self._prizes_left)
    probability = 1.0 / len(actions)
    return [(a, probability) for a in actions]

  def information_states_after(self, action, bid0=None):
    """Both players' information state strings after `action` (legal here), without
    a copy of the state: what a child costs most (live_trace's deferred children).
    `bid0`: player 0's pending bid where player 1 bids (read from the history if
    not given)."""
    next_player = self._next
    info0, info1 = self._info0, self._info1
    if next_player == 0:
      return info0 + f" Bet({action + 1})", info1
    game = self.get_game()
    if next_player == 1:
      if bid0 is None:
        bid0 = self.history()[-1]
      info0 += f" {result(bid0, action)}"
      info1 += f" Bet({action + 1}) {result(action, bid0)}"
      left = (self._hand1 ^ 1 << action).bit_count()
      if not left or game.is_random_order:
        return info0, info1
      shown = f", Prize({game.prize_order[game.num_cards - left]})"
      return info0 + shown, info1 + shown
    shown = f" Prize({action + 1})"
    if (self._prizes_left ^ 1 << action).bit_count() + 1 < game.num_cards:
      shown = "," + shown  # (not the first prize)
    return info0 + shown, info1 + shown

  def _apply_action(self, action):
    next_player = self._next
    if next_player == 0:
      if action < 0 or not self._hand0 >> action & 1:
        self._raise_illegal(action)
      self._info0, self._info1 = self.information_states_after(action)
      self._hand0 ^= 1 << action
      self._next = 1
    elif next_player == 1:
      hand1 = self._hand1
      if action < 0 or not hand1 >> action & 1:
        self._raise_illegal(action)
      game = self.get_game()
      history = self.history()
      bid0 = history[-1]
      if bid0 != action:
        if game.is_random_order:
          prize = history[-2] + 1
        else:
          prize = game.prize_order[game.num_cards - hand1.bit_count()]
        self._score += prize if bid0 > action else -prize
      self._info0, self._info1 = self.information_states_after(action, bid0)
      hand1 ^= 1 << action
      self._hand1 = hand1
      if not hand1:
        self._next = _TERMINAL
      elif game.is_random_order:
        self._next = _CHANCE
      else:
        self._next = 0
    elif next_player == _CHANCE:
      if action < 0 or not self._prizes_left >> action & 1:
        self._raise_illegal(action)
      self._info0, self._info1 = self.information_states_after(action)
      self._prizes_left ^= 1 << action
      self._next = 0
    else:
      raise ValueError(f"Cannot apply action {action}: the game is over.\n{self}")

  def _raise_illegal(self, action):
    raise ValueError(
        f"Illegal action {action} for player {self._next} in state:\n{self}\n"
        f"legal actions: {self.legal_actions()}")

  def _action_to_string(self, player, action):
    if player == _CHANCE:
      return f"Prize({action + 1})"
    return f"Bet({action + 1})"

  def returns(self):
    if self._next != _TERMINAL:
      return [0.0, 0.0]
    score = self._score
    if self.get_game().returns_type == "win_loss":
      score = (score > 0) - (score < 0)
    return [float(score), float(-score)]

  def turns(self):
    """(prize, card of player 0, card of player 1) of every turn whose prize is shown.

    A card not bid yet is 0; the current turn is included once its prize is known.
    """
    game = self.get_game()
    cards = [a + 1 for a in self.history()] + [0, 0]
    if game.is_random_order:
      return tuple(zip(cards[0::3], cards[1::3], cards[2::3]))
    num_shown = min(len(cards) // 2, game.num_cards)
    return tuple(zip(game.prize_order[:num_shown], cards[0::2], cards[1::2]))

  def information_state_string(self, player=None):
    """Perfect recall of `player` (default: the player to move), as pyspiel's.

    Every shown prize with the player's bid and the turn's result from their view,
    e.g. "p1: Prize(1) Bet(3) won, Prize(2) Bet(1) draw, Prize(3)". Answered in Python
    for Python callers; the info-state observer returns the same string to C++.
    """
    if player is None:
      player = self._next
    if player == 0:
      return self._info0
    if player == 1:
      return self._info1
    raise ValueError(f"No information state for player {player}.")

  def hand(self, player):
    """The cards `player` still holds, ascending."""
    return tuple(a + 1 for a in _actions_of(self._hand1 if player else self._hand0))

  def current_prize(self):
    """The prize the players are bidding on, or 0 between turns and at the end."""
    turns = self.turns()
    return turns[-1][0] if turns and not turns[-1][2] else 0

  def prizes_left(self):
    """The prizes not shown yet, ascending."""
    return tuple(a + 1 for a in _actions_of(self._prizes_left_mask()))

  def points(self):
    """The sums of prizes won by player 0 and player 1 so far."""
    won = [0, 0]
    for prize, card0, card1 in self.turns():
      if card1 and card0 != card1:
        won[0 if card0 > card1 else 1] += prize
    return won

  def __str__(self):
    parts = []
    for prize, card0, card1 in self.turns():
      bids = " ".join(f"p{p}:{c}" for p, c in enumerate((card0, card1)) if c)
      parts.append(f"Prize({prize}) {bids}".rstrip())
    return " | ".join(parts)


class IIGoofspielObserver(common.GameObserver):
  """Views of II-Goofspiel.

  Information state: the player's bid and turn result of every turn with its prize.
  Observation: the current prize, the prizes not yet shown, the player's hand and both
  players' points. Public: the current prize, the prizes not yet shown, whose bid is
  due and every turn's result (which player won it, or a draw).
  """

  def tensor_layout(self, kind):
    n = self.game.num_cards
    if kind == common.ObservationKind.INFO_STATE:
      return [("player", (2,)), ("prizes", (n, n)), ("bids", (n, n)),
              ("results", (n, 3))]
    if kind == common.ObservationKind.OBSERVATION:
      return [("player", (2,)), ("prize", (n,)), ("prizes_left", (n,)),
              ("hand", (n,)), ("points", (2, self.game.max_points + 1))]
    return [("to_bid", (2,)), ("prize", (n,)), ("prizes_left", (n,)),
            ("results", (n, 3))]

  def fill_tensor(self, state, player):
    turns = state.turns()
    if self.kind == common.ObservationKind.INFO_STATE:
      self.dict["player"][player] = 1
      for t, (prize, card0, card1) in enumerate(turns):
        self.dict["prizes"][t, prize - 1] = 1
        own, other = (card0, card1) if player == 0 else (card1, card0)
        if own:
          self.dict["bids"][t, own - 1] = 1
        if card1:
          self.dict["results"][t, RESULTS.index(result(own, other))] = 1
      return
    self._fill_prizes(state)
    if self.kind == common.ObservationKind.OBSERVATION:
      self.dict["player"][player] = 1
      for card in state.hand(player):
        self.dict["hand"][card - 1] = 1
      points = state.points()
      self.dict["points"][0, points[player]] = 1
      self.dict["points"][1, points[1 - player]] = 1
      return
    if state.current_player() in (0, 1):
      self.dict["to_bid"][state.current_player()] = 1
    for t, (_, card0, card1) in enumerate(turns):
      if card1:
        self.dict["results"][t, RESULTS.index(result(card0, card1))] = 1

  def _fill_prizes(self, state):
    """The current prize and the prizes not yet shown."""
    prize = state.current_prize()
    if prize:
      self.dict["prize"][prize - 1] = 1
    for prize in state.prizes_left():
      self.dict["prizes_left"][prize - 1] = 1

  def observation_string(self, state, player):
    if self.kind == common.ObservationKind.INFO_STATE:
      return state.information_state_string(player)
    turns = state.turns()
    prizes_left = " ".join(map(str, state.prizes_left()))
    prize = state.current_prize() or "-"
    if self.kind == common.ObservationKind.OBSERVATION:
      hand = " ".join(map(str, state.hand(player)))
      points = state.points()
      return (f"p{player} prize:{prize} prizes left:{prizes_left} hand:{hand} "
              f"points:{points[player]} vs {points[1 - player]}")
    results = []
    for _, card0, card1 in turns:
      if card1:
        outcome = result(card0, card1)
        results.append("draw" if outcome == DRAW else f"p{0 if outcome == WON else 1}")
    to_bid = state.current_player()
    due = f"p{to_bid} to bid" if to_bid in (0, 1) else "no bid due"
    return (f"prize:{prize} prizes left:{prizes_left} {due} "
            f"results:{','.join(results)}")


pyspiel.register_game(_GAME_TYPE, IIGoofspielGame)
