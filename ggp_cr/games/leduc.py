"""Parametrized Leduc poker, the thesis's LeducPoker{M1,M2,B,C} ([S] §3.2).

Rules, the thesis's defaults and the options that make it OpenSpiel's leduc_poker:
docs/games.md.
"""

import pyspiel

from ggp_cr.games import common

FOLD = 0
CALL = 1
RAISE = 2

_ACTION_NAMES = ("Fold", "Call", "Raise")
_ACTION_BYTES = (b"\x00", b"\x01", b"\x02")
_BET_LETTERS = bytes.maketrans(b"\x00\x01\x02", b"fcr")
_SUIT_LETTERS = "sh"
_BET_SIZES = (2, 4)
_ANTE = 1
_CHANCE = int(pyspiel.PlayerId.CHANCE)
_TERMINAL = int(pyspiel.PlayerId.TERMINAL)
_NO_CARD = -1

# Documented parameter limits: beyond them states and tensors grow without use.
MAX_STACK = 10**6
MAX_RAISES = 100
MAX_CARDS_PER_SUIT = 100
_DEFAULT_PARAMS = {
    "stack1": 100,
    "stack2": 100,
    "max_raises": 2,
    "cards_per_suit": 3,
    "fold_only_facing_bet": False,
    "deal_from_deck": False,
}

_GAME_TYPE = common.game_type(
    short_name="python_leduc",
    long_name="Python parametrized Leduc poker",
    parameter_specification=_DEFAULT_PARAMS,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC)


def _bool_parameter(params, name):
  value = params[name]
  if not isinstance(value, bool):
    raise ValueError(f"Parameter '{name}' must be true or false, got {value!r}.")
  return value


class LeducGame(common.Game):
  """python_leduc(stack1, stack2, max_raises, cards_per_suit, ...): see module doc."""

  def __init__(self, params=None):
    params = {**_DEFAULT_PARAMS, **(params or {})}
    unknown = sorted(set(params) - set(_DEFAULT_PARAMS))
    if unknown:
      raise ValueError(
          f"Unknown parameter(s) {unknown} for python_leduc; "
          f"known: {sorted(_DEFAULT_PARAMS)}.")
    # The ante is 1, so a stack must hold at least that.
    self.stacks = (common.int_parameter(params, "stack1", _ANTE, MAX_STACK),
                   common.int_parameter(params, "stack2", _ANTE, MAX_STACK))
    self.max_raises = common.int_parameter(params, "max_raises", 0, MAX_RAISES)
    if params["cards_per_suit"] == 1 and not isinstance(params["cards_per_suit"], bool):
      raise ValueError(
          "Parameter 'cards_per_suit' must be >= 2, got 1: with one rank both players "
          "hold it and no public card is left to deal (the thesis deal excludes the "
          "shared rank; a 2-card deck is empty after the private cards).")
    self.cards_per_suit = common.int_parameter(params, "cards_per_suit", 2,
                                               MAX_CARDS_PER_SUIT)
    self.fold_only_facing_bet = _bool_parameter(params, "fold_only_facing_bet")
    self.deal_from_deck = _bool_parameter(params, "deal_from_deck")
    self.num_cards = (2 * self.cards_per_suit if self.deal_from_deck
                      else self.cards_per_suit)
    # A round has at most: an opening check, max_raises raises, a closing call or fold.
    self.max_round_length = self.max_raises + 2
    # The winner gets the loser's chips, never more than the poorer player's stack.
    max_win = min(min(self.stacks),
                  _ANTE + self.max_raises * (_BET_SIZES[0] + _BET_SIZES[1]))
    super().__init__(
        _GAME_TYPE,
        pyspiel.GameInfo(
            num_distinct_actions=3,
            max_chance_outcomes=self.num_cards,
            num_players=2,
            min_utility=-float(max_win),
            max_utility=float(max_win),
            utility_sum=0.0,
            max_game_length=2 * self.max_round_length),
        params)

  def new_initial_state(self):
    return LeducState(self)

  def max_chance_nodes_in_history(self):
    return 3

  def make_py_observer(self, iig_obs_type=None, params=None):
    return LeducObserver(self, iig_obs_type, params)

  def rank(self, card):
    """The rank of a dealt chance outcome (a rank already, or a deck card id)."""
    return card // 2 if self.deal_from_deck else card

  def card_name(self, card):
    if card == _NO_CARD:
      return "?"
    if self.deal_from_deck:
      return f"{card // 2}{_SUIT_LETTERS[card % 2]}"
    return str(card)


class LeducState(common.State):
  """Flat state: dealt cards, each round's bets, chips put in, player to move.

  `card0`, `card1`, `public_card` are chance outcomes (ranks, or deck card ids with
  `deal_from_deck`), -1 until dealt; `bets1`, `bets2` the betting action ids of each
  round as bytes (immutable small ints that OpenSpiel's clone, a deepcopy of every
  attribute, copies as cheaply as an int); `chips0`, `chips1` what each player has put
  in, ante included; `player` the player to move as a pyspiel player id.
  """

  # The initial values live on the class: a new state's __dict__ is empty and a clone
  # copies only the attributes that have changed.
  card0 = _NO_CARD
  card1 = _NO_CARD
  public_card = _NO_CARD
  bets1 = b""
  bets2 = b""
  chips0 = _ANTE
  chips1 = _ANTE
  player = _CHANCE

  def current_player(self):
    return self.player

  def is_terminal(self):
    return self.player == _TERMINAL

  def round_bets(self):
    """The betting action ids of the current (or last played) round."""
    return self.bets1 if self.public_card == _NO_CARD else self.bets2

  def raises_this_round(self):
    return self.round_bets().count(RAISE)

  def _raise_cost(self, game, raises):
    """What a raise costs the player to move, or 0 if raising is illegal."""
    if raises >= game.max_raises:
      return 0
    cost = _BET_SIZES[self.public_card != _NO_CARD] * (2 if raises else 1)
    chips = self.chips0 if self.player == 0 else self.chips1
    return cost if game.stacks[self.player] - chips >= cost else 0

  def _legal_actions(self, player):
    game = self.get_game()
    raises = self.round_bets().count(RAISE)
    actions = [CALL] if game.fold_only_facing_bet and not raises else [FOLD, CALL]
    if self._raise_cost(game, raises):
      actions.append(RAISE)
    return actions

  def _undealt(self, game):
    """The chance outcomes the next deal can produce."""
    if game.deal_from_deck:
      return [c for c in range(game.num_cards) if c != self.card0 and c != self.card1]
    if self.card1 != _NO_CARD and self.card0 == self.card1:
      return [r for r in range(game.num_cards) if r != self.card0]
    return range(game.num_cards)

  def _chance_outcomes(self):
    cards = self._undealt(self.get_game())
    p = 1.0 / len(cards)
    return [(c, p) for c in cards]

  def _apply_action(self, action):
    if self.player == _CHANCE:
      self._deal(action)
    elif self.player >= 0:
      self._bet(action)
    else:
      raise ValueError(f"Action {action} applied to a terminal state:\n{self}")

  def _deal(self, card):
    if card not in self._undealt(self.get_game()):
      raise ValueError(f"Illegal chance outcome {card} in state:\n{self}")
    if self.card0 == _NO_CARD:
      self.card0 = card
    elif self.card1 == _NO_CARD:
      self.card1 = card
      self.player = 0
    else:
      self.public_card = card
      self.player = 0

  def _bet(self, action):
    game = self.get_game()
    player = self.player
    round_bets = self.round_bets()
    raises = round_bets.count(RAISE)
    if action == RAISE:
      cost = self._raise_cost(game, raises)
      if not cost:
        raise ValueError(f"Illegal action Raise in state:\n{self}")
      # The opponent owes one bet now; what it cannot cover goes back to the raiser.
      size = _BET_SIZES[self.public_card != _NO_CARD]
      if player == 0:
        self.chips0 += cost - max(0, size - (game.stacks[1] - self.chips1))
      else:
        self.chips1 += cost - max(0, size - (game.stacks[0] - self.chips0))
      self.player = 1 - player
    elif action == CALL:
      # After a raise the caller matches; an all-in excess was already returned.
      if player == 0:
        self.chips0 = self.chips1
      else:
        self.chips1 = self.chips0
      if player == 1 or raises:
        self.player = _CHANCE if self.public_card == _NO_CARD else _TERMINAL
      else:
        self.player = 1
    elif action == FOLD:
      if game.fold_only_facing_bet and not raises:
        raise ValueError(f"Illegal action Fold (no raise to face) in state:\n{self}")
      self.player = _TERMINAL
    else:
      raise ValueError(
          f"Illegal action {action}: actions are 0 (Fold), 1 (Call), 2 (Raise).")
    if self.public_card == _NO_CARD:
      self.bets1 = round_bets + _ACTION_BYTES[action]
    else:
      self.bets2 = round_bets + _ACTION_BYTES[action]

  def _action_to_string(self, player, action):
    if player == _CHANCE:
      return f"Deal({self.get_game().card_name(action)})"
    if 0 <= action < 3:
      return _ACTION_NAMES[action]
    return f"Action({action})"

  def folder(self):
    """The player who folded, or -1."""
    round_bets = self.round_bets()
    if round_bets and round_bets[-1] == FOLD:
      return (len(round_bets) - 1) % 2  # Player 0 opens each round, then they alternate.
    return -1

  def returns(self):
    if self.player != _TERMINAL:
      return [0.0, 0.0]
    folder = self.folder()
    if folder == 0:
      return [-float(self.chips0), float(self.chips0)]
    if folder == 1:
      return [float(self.chips1), -float(self.chips1)]
    game = self.get_game()
    public = game.rank(self.public_card)
    rank0 = game.rank(self.card0)
    rank1 = game.rank(self.card1)
    if rank0 == rank1:
      return [0.0, 0.0]
    if rank0 == public or (rank1 != public and rank0 > rank1):
      return [float(self.chips1), -float(self.chips1)]
    return [-float(self.chips0), float(self.chips0)]

  def betting_string(self):
    """Both rounds' betting, e.g. `R1:crc public:1 R2:r`, as far as played."""
    text = "R1:" + self.bets1.translate(_BET_LETTERS).decode()
    if self.public_card != _NO_CARD:
      text += (f" public:{self.get_game().card_name(self.public_card)} R2:"
               + self.bets2.translate(_BET_LETTERS).decode())
    return text

  def __str__(self):
    game = self.get_game()
    return (f"cards:{game.card_name(self.card0)},{game.card_name(self.card1)} "
            f"{self.betting_string()} chips:{self.chips0},{self.chips1} "
            f"player:{self.player}")


class LeducObserver(common.GameObserver):
  """Info state: own card, public card, all bets. Observation: own card, public card,
  chips put in and raises this round. Public: private deals so far, public card, bets.
  """

  def tensor_layout(self, kind):
    game = self.game
    betting = ("betting", (2, game.max_round_length, 3))
    if kind == common.ObservationKind.PUBLIC:
      return [("private_cards_dealt", (3,)), ("public_card", (game.num_cards,)), betting]
    layout = [("player", (2,)), ("private_card", (game.num_cards,)),
              ("public_card", (game.num_cards,))]
    if kind == common.ObservationKind.INFO_STATE:
      return layout + [betting]
    return layout + [("raises", (game.max_raises + 1,)), ("chips", (2,))]

  def fill_tensor(self, state, player):
    d = self.dict
    if state.public_card != _NO_CARD:
      d["public_card"][state.public_card] = 1
    if self.kind == common.ObservationKind.PUBLIC:
      d["private_cards_dealt"][(state.card0 != _NO_CARD) + (state.card1 != _NO_CARD)] = 1
    else:
      d["player"][player] = 1
      card = state.card0 if player == 0 else state.card1
      if card != _NO_CARD:
        d["private_card"][card] = 1
    if self.kind == common.ObservationKind.OBSERVATION:
      d["raises"][state.raises_this_round()] = 1
      d["chips"][0] = state.chips0
      d["chips"][1] = state.chips1
    else:
      betting = d["betting"]
      for round_index, bets in enumerate((state.bets1, state.bets2)):
        for i, action in enumerate(bets):
          betting[round_index, i, action] = 1

  def observation_string(self, state, player):
    game = self.game
    if self.kind == common.ObservationKind.PUBLIC:
      dealt = (state.card0 != _NO_CARD) + (state.card1 != _NO_CARD)
      return f"dealt:{dealt} {state.betting_string()}"
    card = game.card_name(state.card0 if player == 0 else state.card1)
    if self.kind == common.ObservationKind.INFO_STATE:
      return f"P{player} card:{card} {state.betting_string()}"
    return (f"P{player} card:{card} public:{game.card_name(state.public_card)} "
            f"raises:{state.raises_this_round()} chips:{state.chips0},{state.chips1}")


pyspiel.register_game(_GAME_TYPE, LeducGame)
