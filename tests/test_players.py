"""Players by name, budgets, and the seeded match runner."""

import time

import numpy as np
import pytest

import pyspiel

from ggp_cr.algorithms import contracts
from ggp_cr.algorithms.bots import players
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.evaluation import matches
from ggp_cr.algorithms.evaluation import timing
from ggp_cr.algorithms.tree import compiled_tree


def test_parse_player_fills_defaults_and_positional_arguments():
  spec = registry.parse_player("ISMCTS( 20 , uct_c=1.5)")
  assert spec.name == "ismcts"
  assert spec.parameters == {"simulations": 20, "uct_c": 1.5, "rollouts": 1,
                             "final_policy": "max_visits"}
  assert str(spec) == "ismcts(20,uct_c=1.5)"
  assert registry.parse_player("random").parameters == {}


@pytest.mark.parametrize("text, message", [
    ("nobody", "Unknown player 'nobody'"),
    ("ismcts(simulations=", "Malformed player"),
    ("ismcts(simulations=many)", "'simulations' must be an integer"),
    ("ismcts(simulations=0)", "'simulations' must be >= 1"),
    ("ismcts(depth=3)", "unknown parameter 'depth' for ismcts; accepted: simulations"),
    ("ismcts(1,2,3,visits,5)", "at most 4 positional"),
    ("ismcts(10,simulations=20)", "'simulations' given twice"),
    ("ismcts(final_policy=best)", "must be one of visits, max_visits, max_value"),
    ("random(3)", "at most 0 positional"),
])
def test_bad_player_strings_say_what_is_accepted(text, message):
  with pytest.raises(ValueError, match=message) as error:
    registry.parse_player(text)
  if "Unknown player" in message or "Malformed" in message:
    for name in ("random", "ismcts", "mcts", "human"):
      assert name in str(error.value)


def test_limits_and_budgets_parse_units():
  assert limits.parse_limit("2s") == limits.Limit(seconds=2.0)
  assert limits.parse_limit("250ms") == limits.Limit(seconds=0.25)
  assert limits.parse_limit("1000it") == limits.Limit(iterations=1000)
  assert limits.parse_limit("0").is_zero
  budget = limits.Budget.parse("1s", "100it")
  assert str(budget) == "preplay=1s,move=100it"
  for bad in ("2", "fast", "1.5it", "-1s"):
    with pytest.raises(ValueError, match="budget"):
      limits.Budget.parse(bad, "0")


def test_unknown_or_bad_game_is_a_clear_error():
  with pytest.raises(ValueError, match="unknown game name 'no_such_game'.*python_rps"):
    registry.load_game("no_such_game")
  with pytest.raises(ValueError, match="Cannot load game 'python_rps\\(n=2\\)'.*odd"):
    registry.load_game("python_rps(n=2)")


def test_same_seeds_give_the_same_match_and_chance_is_shared_across_seatings():
  game = registry.load_game("kuhn_poker")
  first = matches.match_seeds(7, "random", "ismcts(20)", 0, 3)
  assert first == matches.match_seeds(7, "random", "ismcts(20)", 0, 3)
  other_seating = matches.match_seeds(7, "random", "ismcts(20)", 1, 3)
  assert other_seating.chance == first.chance and other_seating.bots != first.bots
  one = matches.run_match(game, ["random", "ismcts(20)"], first)
  two = matches.run_match(game, ["random", "ismcts(20)"], first)
  assert one.history == two.history and one.returns == two.returns
  histories = {tuple(matches.run_match(game, ["random", "random"],
                                       matches.match_seeds(7, "a", "b", 0, i)).history)
               for i in range(20)}
  assert len(histories) > 5


def test_match_log_timing_and_payoffs():
  game = registry.load_game("python_leduc")
  logged = []
  result = matches.run_match(game, ["random", "random"],
                             matches.match_seeds(0, "random", "random", 0, 0),
                             on_move=lambda move, state: logged.append(move))
  assert logged == result.moves
  assert result.moves[0].player == pyspiel.PlayerId.CHANCE
  assert sum(result.returns) == 0
  assert result.decisions[0] == sum(m.player == 0 for m in result.moves)
  state = game.new_initial_state()
  for action in result.history:
    state.apply_action(action)
  assert state.is_terminal() and state.returns() == result.returns


def test_chance_sampling_follows_the_distribution():
  state = pyspiel.load_game("kuhn_poker").new_initial_state()
  rng = np.random.default_rng(0)
  counts = np.bincount([matches.sample_chance(state, rng) for _ in range(3000)],
                       minlength=3)
  assert np.all(np.abs(counts / 3000 - 1 / 3) < 0.04)


def test_play_against_random_asks_only_at_the_seats_turns_and_repeats_with_the_seed():
  game = pyspiel.load_game("leduc_poker")
  for seat in (0, 1):
    finals = []
    for _ in range(2):
      asked = []

      def decide(state, asked=asked):
        assert not state.is_chance_node() and state.current_player() == seat
        asked.append(state.history_str())
        return state.legal_actions()[-1]

      final = matches.play_against_random(game, seat, decide, np.random.default_rng(7))
      assert final.is_terminal() and asked
      finals.append((final.history(), asked))
    assert finals[0] == finals[1]


def test_mcts_refuses_imperfect_information_and_plays_perfect_information():
  with pytest.raises(ValueError, match="hidden information.*use ismcts"):
    registry.make_bot("mcts", registry.load_game("python_rps"), 0, 1)
  game = registry.load_game("tic_tac_toe")
  result = matches.run_match(game, ["mcts(simulations=20)", "random"],
                             matches.match_seeds(0, "m", "r", 0, 0))
  assert sorted(result.returns) == sorted([-x for x in result.returns])


@pytest.mark.parametrize("game_string", ["python_rps", "python_leduc", "kuhn_poker"])
def test_ismcts_plays_legal_moves_on_python_and_cpp_games(game_string):
  game = registry.load_game(game_string)
  for index in range(3):
    result = matches.run_match(game, ["ismcts(simulations=20)", "random"],
                               matches.match_seeds(1, "i", "r", 0, index))
    assert sum(result.returns) == pytest.approx(0.0)
    assert game.min_utility() <= result.returns[0] <= game.max_utility()


def test_infostate_resampler_samples_only_the_players_information_set():
  game = registry.load_game("python_leduc")
  state = game.new_initial_state()
  state.apply_action(state.chance_outcomes()[0][0])
  state.apply_action(state.chance_outcomes()[-1][0])
  state.apply_action(1)  # player 0 calls
  state.apply_action(2)  # player 1 raises
  player = state.current_player()
  resampler = players.InfostateResampler(game, np.random.RandomState(0))
  key = state.information_state_string(player)
  sampled = [resampler(state, player) for _ in range(30)]
  assert all(s.information_state_string(player) == key for s in sampled)
  assert len({tuple(s.history()) for s in sampled}) > 1


def test_human_bot_reads_names_or_ids_and_rejects_illegal_moves():
  game = registry.load_game("python_rps")
  state = game.new_initial_state()
  answers = iter(["", "Pick(9)", "7", "pick(2)"])
  shown = []
  bot = players.HumanBot(game, 0, read=lambda prompt: next(answers), write=shown.append)
  assert bot.step(state) == 1
  assert any("not a legal action" in line for line in shown)
  answers = iter(["2"])
  assert bot.step(state) == 2
  answers = iter([])

  def ended(prompt):
    raise EOFError

  bot = players.HumanBot(game, 0, read=ended, write=shown.append)
  with pytest.raises(ValueError, match="input ended"):
    bot.step(state)


def test_a_bot_choosing_an_illegal_action_is_reported():

  class Cheater(pyspiel.Bot):

    def step(self, state):
      return 99

    def restart_at(self, state):
      pass

  game = registry.load_game("python_rps")
  with pytest.raises(ValueError, match="chose action 99, which is not legal"):
    matches.play(game, [Cheater(), Cheater()], 0, ["cheater", "cheater"])


def test_search_players_take_simulations_from_an_iteration_budget():
  game = registry.load_game("kuhn_poker")
  bot = registry.make_bot("ismcts", game, 0, 1, limits.Budget.parse("0", "37it"))
  assert bot._max_simulations == 37  # pylint: disable=protected-access
  bot = registry.make_bot("ismcts(5)", game, 0, 1, limits.Budget.parse("0", "37it"))
  assert bot._max_simulations == 5  # pylint: disable=protected-access
  with pytest.raises(ValueError, match="not seconds.*'500it'"):
    registry.make_bot("mcts", registry.load_game("tic_tac_toe"), 0, 1,
                      limits.Budget.parse("0", "2s"))


def test_timed_ismcts_stops_at_its_move_and_its_enumeration_at_the_deadline(
    monkeypatch):
  game = registry.load_game("python_ii_goofspiel(num_cards=13)")
  bot = registry.make_bot("ismcts", game, 0, 1, limits.Budget.parse("0", "0.05s"))
  state = game.new_initial_state()
  for _ in range(12):  # six rounds: the enumeration of histories is far too long
    state.apply_action(state.legal_actions()[0])
  start = time.perf_counter()
  bot.step(state)
  # Untimed, the resampler's enumeration of 12!-sized sets runs for minutes.
  assert time.perf_counter() - start < 1.0
  assert bot.fallbacks and "uniform play" in bot.fallbacks[0]
  # A small game: simulations until the move ends, then the search's policy.
  game = registry.load_game("python_leduc")
  bot = registry.make_bot("ismcts", game, 0, 1, limits.Budget.parse("0", "0.05s"))
  state = game.new_initial_state()
  state.apply_action(state.legal_actions()[0])
  state.apply_action(state.legal_actions()[1])
  bot.step(state)
  assert bot.iterations_per_move[0] > 1 and not bot.fallbacks


def test_solver_player_plays_the_solvers_average_strategy():
  game = registry.load_game("kuhn_poker")
  spec = registry.parse_player("solver(cfr+, iterations=25)")
  assert spec.parameters["name"] == "cfr+" and spec.parameters["iterations"] == 25
  solver = registry.make_solver("cfr+", game)
  for _ in range(25):
    solver.evaluate_and_update_policy()
  expected = contracts.python_average_policy(solver, game)
  bot = registry.make_bot(spec, game, 0, 5)
  state = game.new_initial_state()
  state.apply_action(0)
  state.apply_action(2)
  policy, action = bot.step_with_policy(state)
  assert dict(policy) == pytest.approx(expected.action_probabilities(state))
  assert action in state.legal_actions()
  with pytest.raises(ValueError, match="(?s)Unknown solver 'nosuch'.*cfr\\+"):
    registry.parse_player("solver(name=nosuch)")


def test_strategy_player_needs_an_existing_file_for_its_game(tmp_path):
  with pytest.raises(ValueError, match="parameter 'path' is required"):
    registry.parse_player("strategy")
  with pytest.raises(ValueError, match="no strategy file"):
    registry.parse_player(f"strategy(path={tmp_path / 'missing.npz'})")
  from ggp_cr.algorithms.tree import compiled_tree  # pylint: disable=g-import-not-at-top
  from ggp_cr.algorithms.tree import strategy_files  # pylint: disable=g-import-not-at-top
  tree = compiled_tree.cached_tree(registry.load_game("python_rps"))
  path = tmp_path / "rps.npz"
  strategy_files.save_strategy(path, tree, tree.uniform_slots())
  bot = registry.make_bot(f"strategy({path})", registry.load_game("python_rps"), 1, 0)
  assert bot.step(registry.load_game("python_rps").new_initial_state().child(0)) in (
      0, 1, 2)
  with pytest.raises(ValueError, match="is for python_rps\\(n=3\\), not kuhn_poker"):
    registry.make_bot(f"strategy({path})", registry.load_game("kuhn_poker"), 0, 0)


def _match_by_play(game, names, budget):
  matches.run_match(game, names, matches.match_seeds(0, *names, 0, 1), budget)


def _match_by_budget_ratios(game, names, budget):
  """The timed benchmarks' match (cr_time_budget, online_time_budget)."""
  bots = [registry.make_bot(name, game, seat, seat, budget)
          for seat, name in enumerate(names)]
  timing.budget_ratios(game, bots, 0, 1.0, 1.0)


@pytest.mark.parametrize("harness", [_match_by_play, _match_by_budget_ratios])
@pytest.mark.parametrize("interval", [0.0, float("inf")])
def test_a_match_first_frees_the_garbage_of_earlier_matches(monkeypatch, interval,
                                                            harness):
  """Continual resolving's views and solvers point at each other, so a finished
  match's tables wait for a full collection; `play`, and the benchmarks' timed
  matches (timing.budget_ratios), run one before the next match (at most every
  COLLECTION_INTERVAL_SECONDS). With an infinite interval (no collection) the first
  match's cycles are still there, the check of the test."""
  import gc  # pylint: disable=import-outside-toplevel
  game = registry.load_game("python_leduc(max_raises=1,cards_per_suit=3)")
  monkeypatch.setattr(matches, "COLLECTION_INTERVAL_SECONDS", interval)
  budget = limits.Budget.parse("30it", "30it")
  enabled = gc.isenabled()
  gc.disable()
  try:
    gc.collect()
    harness(game, ["cr", "random"], budget)
    harness(game, ["random", "random"], budget)
    left = gc.collect()
  finally:
    if enabled:
      gc.enable()
  if interval == 0.0:
    assert left == 0
  else:
    assert left > 0


def test_make_bot_hands_the_callers_tree_to_players_that_take_one():
  """registry.make_bot's `tree`: cr, online_solving and oos run on the tree the
  caller holds (not one they look for); other players ignore it; a tree of another
  game is refused, naming the game."""
  game = pyspiel.load_game("kuhn_poker")
  tree = compiled_tree.compile_game(game)
  for spec in ("cr(solver=cfr+)", "online_solving", "oos"):
    bot = registry.make_bot(spec, game, 0, 1, limits.Budget.parse("10it", "10it"), tree=tree)
    assert bot.path == "compiled" and bot.path_reason == "tree given by the caller"
  assert registry.make_bot("random", game, 1, 1, tree=tree) is not None
  other = compiled_tree.compile_game(pyspiel.load_game("leduc_poker"))
  with pytest.raises(ValueError, match="not of kuhn_poker"):
    registry.make_bot("cr(solver=cfr+)", game, 0, 1, tree=other)
