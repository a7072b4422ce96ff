"""The depth-limited subgame: the solved game's compiled tree down to the bot's next
turns, for games too large to compile ([S] §3.3.2, App. A.5).

`depth_limited_tree` lays the whole game or a gadget out as a flat_tree.CompiledTree
whose histories at the bot's `turns`-th next turn in another subgame are leaves
valued by random playouts, so the compiled solvers and the trace run on it unchanged.
In the games with a native state encoding the playouts run natively
(tree/native_playouts), in one call after the walk.
"""

import time

import numpy as np

from ggp_cr.algorithms.resolving import recall
from ggp_cr.algorithms.resolving.gadget import prefix as gadget_prefix
from ggp_cr.algorithms.resolving.live import live_trace
from ggp_cr.algorithms.tree import generic_extraction
from ggp_cr.algorithms.tree import native_playouts


def playout_returns(state, playouts, rng):
  """Both players' mean returns of `playouts` uniform random playouts from `state`
  (chance by its probabilities; [S] §3.3.2's RandomPlayout), on copies."""
  total = np.zeros(2)
  for _ in range(playouts):
    play = state.clone()
    while not play.is_terminal():
      if play.is_chance_node():
        outcomes, probabilities = zip(*play.chance_outcomes())
        play.apply_action(outcomes[rng.choice(len(outcomes), p=probabilities)])
      else:
        legal = play.legal_actions()
        play.apply_action(legal[rng.integers(len(legal))])
    total += play.returns()[:2]
  return total / playouts


def playout_value(problem, state, playouts, rng):
  """Player 0's value of a history of the solved game by random playouts: in a
  gadget, played out on the original game's state (the wrapper costs several
  times more a move) and mapped by the gadget's payoff, affine in o's utility."""
  if problem.gadget is None:
    return float(playout_returns(state, playouts, rng)[0])
  gadget = problem.gadget
  opponent_value = gadget.opponent_utility(
      state.root_infoset(),
      playout_returns(state.inner.state, playouts, rng)[problem.opponent])
  return float(opponent_value if problem.opponent == 0 else -opponent_value)


def native_playout_values(problem, histories, roots, playouts, seed):
  """`playout_value` of many histories of the solved game at once, played out
  natively (native_playouts.mean_returns) from their original game's `histories`
  below roots `roots` (problem.root_index)."""
  returns = native_playouts.mean_returns(problem.original, histories, playouts, seed)
  if problem.gadget is None:
    return returns
  opponent_returns = returns if problem.opponent == 0 else -returns
  scale, shift = (np.asarray(payoffs)[roots]
                  for payoffs in problem.gadget.root_payoffs())
  opponent_value = gadget_prefix.opponent_payoff(opponent_returns, scale, shift)
  return opponent_value if problem.opponent == 0 else -opponent_value


def depth_limited_tree(problem, turns=1, playouts=1, seed=0, deadline=None,
                       max_nodes=None, native=None, leaf_states=None):
  """The compiled tree of `problem.game` (live_problem.Problem: the whole game or a
  gadget) cut at the bot's `turns`-th next turn in another subgame (None: not cut,
  the game's own compiled tree), each cut history a leaf worth the mean of
  `playouts` random playouts (seeded by `seed`). Only histories at or below a next
  turn are cut, so every next root a trace finds is in the tree ([S] App. A.5).

  The playouts run natively (`native_playout_values`) if `native`, by default where
  native_playouts supports the original game; else on pyspiel states
  (`playout_value`). A dict `leaf_states`, if given, receives {node: state} of
  the cut histories (the states the walk made: a trace takes them, live_trace.Trace).
  Raises live_trace.OutOfTime once time.perf_counter() passes `deadline`, and
  generic_extraction.TreeTooLarge past `max_nodes` histories.
  """
  if turns is not None and turns < 1:
    raise ValueError(f"turns must be a positive number of next turns or None, got "
                     f"{turns!r}.")
  if playouts < 1:
    raise ValueError(f"playouts must be at least 1, got {playouts!r}.")
  game = problem.game
  player = problem.player
  if native is None:
    native = native_playouts.supports(problem.original)
  rng = np.random.default_rng(seed)
  # Per history in preorder: tracking state, acting player, next turns passed.
  tracks, players, passed = [], [], []
  # Natively: per cut history, its preorder node, original history and root.
  cut_nodes, cut_histories, cut_roots = [], [], []
  made = {}  # {preorder node: state} of the cut histories, for `leaf_states`

  def leaf(state, parent):
    if deadline is not None and time.perf_counter() > deadline:
      raise live_trace.OutOfTime()
    acting = state.current_player()
    if parent < 0:
      track, count = problem.initial_track(), 0
    else:
      track, _ = recall.advance(tracks[parent], players[parent], acting, player)
      count = passed[parent]
    value = None
    if track == recall.END and not state.is_terminal():
      count += 1
      if turns is not None and count >= turns and leaf_states is not None:
        made[len(tracks)] = state
      if turns is not None and count >= turns and native:
        cut_nodes.append(len(tracks))
        cut_histories.append(problem.original_state(state).history())
        cut_roots.append(problem.root_index(state))
        value = 0.0  # (valued after the walk)
      elif turns is not None and count >= turns:
        value = playout_value(problem, state, playouts, rng)
      else:
        track = recall.CURRENT  # the next turn starts a subgame of its own
    tracks.append(track)
    players.append(acting)
    passed.append(count)
    return value

  game_string = str(game)
  utility_sum = generic_extraction.game_utility_sum(game)
  walked = generic_extraction.walk(
      game, game_string, utility_sum,
      [(game.new_initial_state(), -1, -1, 1.0, 0, -1, -1)], False,
      max_nodes=max_nodes, estimate=False, leaf=leaf)
  for column in (tracks, players, passed):  # freed before the renumbering
    column.clear()
  if cut_nodes:
    utilities = walked[6]
    for node, value in zip(cut_nodes, native_playout_values(
        problem, cut_histories, cut_roots, playouts, seed).tolist()):
      utilities[node] = value
  numbering = None
  if made:
    numbering = generic_extraction.breadth_first_order(walked[7])
    leaf_states.update((int(numbering[1][node]), state)
                       for node, state in made.items())
  return generic_extraction.renumber_breadth_first(game, game_string, utility_sum,
                                                   *walked, numbering=numbering)
