"""The perfect-recall check for games walked live (not compiled).

compile_game refuses imperfect recall while it extracts the whole tree; solvers that
walk live pyspiel states (sampling solvers, continual resolving) run this bounded check
instead ([S] ch. 2 assumes perfect recall; so do CFR's and MCCFR's guarantees).
"""

import numpy as np

# Histories walked exhaustively before the check samples playouts.
CHECK_HISTORIES = 5_000
CHECK_PLAYOUTS = 100
# Game strings that passed check_perfect_recall with the default effort in this process.
_CHECKED_GAMES = set()


def check_perfect_recall(game, who):
  """Raises ValueError ("`who` cannot run on `game`: ...") if the bounded check finds
  a perfect-recall violation; a game that passed is not checked again."""
  if str(game) in _CHECKED_GAMES:
    return
  why = recall_violation(game)
  if why is not None:
    raise ValueError(f"{who} cannot run on {game}: {why}.")
  _CHECKED_GAMES.add(str(game))


def recall_violation(game, histories=CHECK_HISTORIES, playouts=CHECK_PLAYOUTS, seed=0):
  """A sentence describing a perfect-recall violation found, or None.

  Perfect recall (every history of an information state has the same previous own
  information state and action, and the same legal actions: compiled_tree's
  criterion) is checked on the first `histories` histories in depth-first order and
  on `playouts` random playouts beyond them: exhaustively for small games, by
  sampling for large ones.
  """
  seen = {}

  def visit(state, last):
    """Checks `state`; returns the (player, key, action) record for its children."""
    player = state.current_player()
    key = state.information_state_string(player)
    record = (last[player], tuple(state.legal_actions()))
    known = seen.setdefault((player, key), record)
    if known != record:
      what = ("legal actions differ" if known[1] != record[1] else
              "the player's previous information state or action differs")
      return (f"it does not have perfect recall: two histories of player {player}'s "
              f"information state {key!r} disagree ({what})")
    return None

  budget = [histories]
  stack = [(game.new_initial_state(), (None, None))]
  frontier = []
  while stack:
    state, last = stack.pop()
    if state.is_terminal():
      continue
    if budget[0] <= 0:
      frontier.append((state, last))
      continue
    budget[0] -= 1
    if state.is_chance_node():
      for action, probability in state.chance_outcomes():
        if probability > 0:
          stack.append((state.child(action), last))
      continue
    why = visit(state, last)
    if why is not None:
      return why
    player = state.current_player()
    key = state.information_state_string(player)
    for action in state.legal_actions():
      child_last = list(last)
      child_last[player] = (key, action)
      stack.append((state.child(action), tuple(child_last)))
  rng = np.random.default_rng(seed)
  for index in range(playouts if frontier else 0):
    state, last = frontier[index % len(frontier)]
    state = state.clone()
    while not state.is_terminal():
      if state.is_chance_node():
        outcomes, probabilities = zip(*state.chance_outcomes())
        state.apply_action(outcomes[rng.choice(len(outcomes), p=probabilities)])
        continue
      why = visit(state, last)
      if why is not None:
        return why
      player = state.current_player()
      action = int(rng.choice(state.legal_actions()))
      child_last = list(last)
      child_last[player] = (state.information_state_string(player), action)
      last = tuple(child_last)
      state.apply_action(action)
  return None
