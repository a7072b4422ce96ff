"""Tests of continual resolving (ggp_cr/algorithms/continual_resolving.py).

Exploitability is OpenSpiel's (NashConv / 2). All budgets are iterations, so every run
is deterministic for its seed.
"""
# pylint: disable=protected-access

import subprocess
import sys

import numpy as np
import pytest

import pyspiel
from open_spiel.python.algorithms import exploitability as openspiel_exploitability
from open_spiel.python.bots import uniform_random

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.config import components
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.evaluation import evaluators
from ggp_cr.algorithms.evaluation import matches
from ggp_cr.algorithms.resolving import continual_resolving as cr
from ggp_cr.algorithms.resolving.compiled import compiled_resolver
from ggp_cr.algorithms.tree import compiled_tree

SMALL_LEDUC = "python_leduc(max_raises=1,cards_per_suit=3)"


def _play(game, bots, seed):
  return matches.play(game, bots, seed)


def _versus_random(game, seat, seed=0, **kwargs):
  kwargs.setdefault("preplay", "20it")
  kwargs.setdefault("move", "10it")
  bots = [uniform_random.UniformRandomBot(p, np.random.RandomState(seed + p))
          for p in (0, 1)]
  bots[seat] = cr.ContinualResolvingBot(game, seat, seed=seed, **kwargs)
  return _play(game, bots, seed), bots[seat]


# --- Games it plays and games it refuses ----------------------------------------------


@pytest.mark.parametrize("game_string", [
    "python_rps", "python_princess_monster(max_turns=3)", SMALL_LEDUC,
    "python_ii_goofspiel(num_cards=3)", "python_latent_ttt", "kuhn_poker",
    "leduc_poker"])
def test_plays_whole_matches_in_both_seats(game_string):
  game = pyspiel.load_game(game_string)
  for seat in (0, 1):
    result, bot = _versus_random(game, seat, seed=seat)
    assert sum(result.returns) == pytest.approx(0.0)
    assert bot.decisions and bot.decisions[0]["new_subgame"]
    assert all(d["iterations"] > 0 for d in bot.decisions)


def test_plays_turn_based_goofspiel():
  game = pyspiel.load_game_as_turn_based("goofspiel(num_cards=4,imp_info=True)")
  for seat in (0, 1):
    _, bot = _versus_random(game, seat)
    assert any(d.get("roots") for d in bot.decisions)


@pytest.mark.parametrize("options", [
    dict(solver="vr_mccfr", variant="max_margin"),
    dict(solver="vr_mccfr", variant="unsafe"),
    dict(solver="mc_cfr", cfrd_aware_sampling=False),
    dict(solver="vr_mccfr", keep_solver_data=True),
    dict(solver="vr_mccfr", use_cbr=True),
    dict(solver="cfr+"),
    dict(solver="cfr+", variant="max_margin", keep_solver_data=True),
    dict(solver="dl_cfr+", depth_limit=4, playouts=2),
])
def test_solvers_and_gadget_variants_resolve(options):
  game = pyspiel.load_game(SMALL_LEDUC)
  resolved = 0
  for seed in range(4):
    _, bot = _versus_random(game, seed % 2, seed=seed, **options)
    resolved += sum("roots" in d for d in bot.decisions)
    for record in bot.decisions:
      if "variant" in record and "fallback" not in record:
        assert record["variant"] == options.get("variant", "resolve")
  assert resolved > 0


@pytest.mark.parametrize("solver", ["cfr+", "vr_mccfr"])
def test_records_visited_states_equal_on_both_paths(solver):
  """Each decision's `visited_states` is its solver's count ([S] §5.1): equal on the
  compiled and live paths (equal seeds and iteration budgets give equal play), and at
  the first decision CFR+ on the whole game counts as a standalone CFRPlusSolver."""
  game = pyspiel.load_game("python_ii_goofspiel(num_cards=3)")
  counts = {}
  for path in ("compiled", "live"):
    _, bot = _versus_random(game, 0, seed=1, solver=solver, path=path)
    assert bot.path == path
    counts[path] = [d["visited_states"] for d in bot.decisions]
  assert counts["compiled"] == counts["live"]
  assert all(count > 0 for count in counts["live"])
  if solver == "cfr+":
    standalone = cfr.CFRPlusSolver(compiled_tree.cached_tree(game))
    standalone.iterate(30)  # 20 pre-play + 10 move iterations
    assert counts["live"][0] == standalone.visited_states
    # A second decision at the same infoset stays in the whole game's solve and
    # counts its own 10 iterations only.
    for path in ("compiled", "live"):
      bot = cr.ContinualResolvingBot(game, 0, preplay="20it", move="10it",
                                     solver=solver, path=path, seed=1)
      state = game.new_initial_state()
      bot.step(state)
      bot.step(state)
      assert not bot.decisions[1]["new_subgame"]
      assert [d["visited_states"] for d in bot.decisions] == [
          standalone.visited_states, standalone.visited_states // 3]


class _ForgetfulState(pyspiel.State):
  """Player 0 acts, player 1 acts, player 0 acts again having forgotten its move."""

  def __init__(self, game):
    super().__init__(game)
    self.moves = ()

  def current_player(self):
    return pyspiel.PlayerId.TERMINAL if len(self.moves) == 3 else len(self.moves) % 2

  def _legal_actions(self, player):
    return [0, 1]

  def _apply_action(self, action):
    self.moves += (action,)

  def is_terminal(self):
    return len(self.moves) == 3

  def returns(self):
    if not self.is_terminal():
      return [0.0, 0.0]
    value = 1.0 if self.moves[0] == self.moves[2] else -1.0
    return [value, -value]

  def information_state_string(self, player=None):
    player = self.current_player() if player is None else player
    if player == 1:
      return f"p1 {self.moves[:1]}" if self.moves else "p1"
    return "p0 second" if len(self.moves) >= 2 else "p0 first"

  def __str__(self):
    return str(self.moves)


class _ForgetfulGame(pyspiel.Game):

  def __init__(self):
    super().__init__(
        pyspiel.GameType(
            short_name="forgetful_test_game", long_name="forgetful test game",
            dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
            chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
            information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
            utility=pyspiel.GameType.Utility.ZERO_SUM,
            reward_model=pyspiel.GameType.RewardModel.TERMINAL,
            max_num_players=2, min_num_players=2,
            provides_information_state_string=True,
            provides_information_state_tensor=False,
            provides_observation_string=False, provides_observation_tensor=False,
            parameter_specification={}),
        pyspiel.GameInfo(num_distinct_actions=2, max_chance_outcomes=0, num_players=2,
                         min_utility=-1.0, max_utility=1.0, utility_sum=0.0,
                         max_game_length=3),
        {})

  def new_initial_state(self):
    return _ForgetfulState(self)


@pytest.mark.parametrize("game, reason", [
    (pyspiel.load_game("kuhn_poker(players=3)"), "3 players"),
    (pyspiel.load_game("goofspiel(num_cards=3,imp_info=True)"),
     "load_game_as_turn_based"),
    (pyspiel.load_game("sheriff"), "not zero-sum"),
    (_ForgetfulGame(), "perfect recall"),
])
def test_refuses_games_it_cannot_play(game, reason):
  with pytest.raises(ValueError, match=reason):
    cr.ContinualResolvingBot(game, 0)


@pytest.mark.parametrize("options, message", [
    (dict(solver="cfr"), "solver must be one of"),
    (dict(variant="gadget"), "variant must be one of"),
    (dict(exploration=1.5), "exploration"),
    (dict(depth_limit=0), "depth_limit"),
    (dict(move="0", preplay="0"), "Both budgets are zero"),
    (dict(move="-1s"), "per-move budget"),
    (dict(move="ten"), "per-move budget"),
])
def test_refuses_bad_options(options, message):
  with pytest.raises(ValueError, match=message):
    cr.ContinualResolvingBot(pyspiel.load_game("kuhn_poker"), 0, **options)


def test_refuses_bad_seat_and_wrong_turn():
  game = pyspiel.load_game("kuhn_poker")
  with pytest.raises(ValueError, match="player_id"):
    cr.ContinualResolvingBot(game, 2)
  state = game.new_initial_state()
  state.apply_action(0)
  state.apply_action(1)
  with pytest.raises(ValueError, match="turn"):
    cr.ContinualResolvingBot(game, 1).step(state)


# --- Determinism, restarts, copies ----------------------------------------------------


def test_same_seed_same_play_other_seed_other_play():
  game = pyspiel.load_game(SMALL_LEDUC)
  runs = []
  for seed in (5, 5, 6):
    bots = [cr.ContinualResolvingBot(game, p, preplay="30it", move="20it", seed=seed + p,
                                     path="live")
            for p in (0, 1)]
    result = _play(game, bots, 11)
    runs.append((result.history, [[(d["key"], d["iterations"]) for d in b.decisions]
                                  for b in bots],
                 [b.resolver.probabilities(d["key"], [0, 1, 2]) for b in bots
                  for d in b.decisions[-1:]]))
  assert runs[0] == runs[1]
  assert runs[0][2] != runs[2][2]


def test_restart_plays_a_fresh_match_and_clone_is_independent():
  game = pyspiel.load_game(SMALL_LEDUC)
  bot = cr.ContinualResolvingBot(game, 0, preplay="20it", move="10it", seed=3)
  state = game.new_initial_state()
  state.apply_action(0)
  state.apply_action(1)
  first = bot.step_with_policy(state)
  copy = bot.clone()
  bot.restart()
  assert bot.resolver is None and not bot.decisions
  assert bot.step_with_policy(state)[0] != first[0]  # A new match draws new seeds.
  later = state.child(2)  # Raise, player 1's turn, then player 0 again after a call.
  later.apply_action(1)
  later.apply_action(later.chance_outcomes()[0][0])  # The public card.
  twin = copy.clone()
  assert copy.step_with_policy(later) == twin.step_with_policy(later)
  assert copy.decisions[-1]["new_subgame"] and len(twin.decisions) == 2
  restarted = cr.ContinualResolvingBot(game, 0, preplay="20it", move="10it", seed=3)
  restarted.restart_at(later)
  restarted.step(later)
  assert restarted.decisions[0]["new_subgame"]


def test_registry_builds_the_bot_with_the_match_budget():
  game = pyspiel.load_game("kuhn_poker")
  spec = registry.parse_player("cr(solver=cfr+,variant=max_margin,keep=true)")
  bot = registry.make_bot(spec, game, 1, seed=4, budget=limits.Budget.parse("5it", "7it"))
  assert isinstance(bot, cr.ContinualResolvingBot)
  assert bot.config.solver == "cfr+" and bot.config.variant == "max_margin"
  assert bot.config.keep_solver_data
  seeds = matches.match_seeds(0, "cr", "random", 0, 0)
  result = matches.run_match(game, ["random", "cr(solver=cfr+)"], seeds,
                             limits.Budget.parse("5it", "7it"))
  assert sum(result.returns) == pytest.approx(0.0)
  assert result.returns[0] in (-2.0, -1.0, 1.0, 2.0)  # Kuhn's payoffs.
  with pytest.raises(ValueError, match="variant"):
    registry.parse_player("cr(variant=safe)")


@pytest.mark.parametrize("text, solver, settings", [
    ("cr(solver=vr_mccfr(e=0.5,rm=rm+))", "vr_mccfr",
     dict(exploration=0.5, regret_matcher="rm+")),
    ("cr(solver=vr_mccfr,e=0.4)", "vr_mccfr", dict(exploration=0.4)),
    ("cr(solver=mc_cfr(cse=0.5))", "mc_cfr", dict(cumulative_strategy_exponent=0.5,
                                                  baseline=None)),
    ("cr(solver=cfr+(dl=2,ue=randomplayout(3)))", "dl_cfr+",
     dict(depth_limit=2, playouts=3)),
    ("cr(solver=dl_cfr+,dl=3)", "dl_cfr+", dict(depth_limit=3, playouts=1)),
])
def test_solver_is_a_registry_solver_string(text, solver, settings):
  """cr(solver=...) takes the registry's solver strings the resolver can run; what
  the string sets overrides cr's own parameters (issue 10: one registry)."""
  bot = registry.make_bot(text, pyspiel.load_game("kuhn_poker"), 0, seed=0)
  assert bot.config.solver == solver
  for name, value in settings.items():
    expected = (components.parse_regret_matcher(value) if name == "regret_matcher"
                else value)
    assert getattr(bot.config, name) == expected, name


@pytest.mark.parametrize("text, message", [
    ("cr(solver=cfr)", "must be one of vr_mccfr, mc_cfr, cfr\\+, dl_cfr\\+"),
    ("cr(solver=vr_mccfr(delta=0.3))", "delta cannot be set"),
    ("cr(solver=cfr+(cse=2))", "CFR\\+ is fixed"),
    ("cr(solver=vr_mccfr(e=2))", "e"),
])
def test_solver_strings_it_cannot_run_are_refused(text, message):
  with pytest.raises(ValueError, match=message):
    registry.parse_player(text)


def test_time_budgets_run():
  game = pyspiel.load_game("kuhn_poker")
  bots = [cr.ContinualResolvingBot(game, p, preplay="0.02s", move="0.01s", seed=p)
          for p in (0, 1)]
  _play(game, bots, 0)
  assert sum(d["iterations"] for b in bots for d in b.decisions) > 0


# --- Whole strategies -----------------------------------------------------------------


def test_prefix_sharing_traversal_equals_replaying_every_history():
  """Copying the bot after each decision gives the policy of replaying every
  information set's history with a fresh bot."""
  game = pyspiel.load_game("kuhn_poker")
  budget = limits.Budget.parse("10it", "10it")
  shared = evaluators.traversing_evaluation(game, "cr", budget, seed=0)
  replayed = evaluators.traversing_evaluation(game, "cr", budget, seed=0,
                                              share_prefixes=False)
  assert replayed.decisions > shared.decisions
  tree = compiled_tree.cached_tree(game)
  np.testing.assert_array_equal(tree.policy_to_slots(shared.policy),
                                tree.policy_to_slots(replayed.policy))


def test_exploitability_falls_with_the_budget_and_exact_values_help():
  game = pyspiel.load_game("kuhn_poker")

  def exploitability(**options):
    return evaluators.traversing_evaluation(
        game, lambda g, p, seed, budget: cr.ContinualResolvingBot(g, p, seed=p,
                                                                  **options)
    ).exploitability

  assert exploitability(solver="cfr+", preplay="3it", move="3it") > \
      exploitability(solver="cfr+", preplay="300it", move="300it")
  assert exploitability(solver="cfr+", use_cbr=True, preplay="300it",
                        move="300it") < 2e-3
  assert exploitability(preplay="10it", move="10it") > \
      exploitability(preplay="500it", move="500it")


@pytest.mark.parametrize("game_string,variant", [
    ("python_leduc(max_raises=2,cards_per_suit=3)", "resolve"),
    ("python_leduc(max_raises=2,cards_per_suit=3)", "max_margin"),
    ("python_leduc(max_raises=2,cards_per_suit=3)", "unsafe"),
    ("python_ii_goofspiel(num_cards=4)", "resolve"),
    ("python_leduc(max_raises=2,cards_per_suit=3)", "resolve,solver=vr_mccfr"),
    ("python_leduc(max_raises=2,cards_per_suit=3)", "max_margin,solver=mc_cfr"),
    ("python_ii_goofspiel(num_cards=4)", "resolve,solver=vr_mccfr")])
def test_traversal_sharing_equal_decisions_gives_the_plain_strategy(game_string,
                                                                     variant):
  """Compiled CR with iteration budgets: deciding once per decision key (one resolve
  per subgame) assembles the strategy the traversal asking every information set's
  own copy does, to 1e-9; with the sampling solvers too (each solve seeded from the
  bot's seed and its resolve's number)."""
  game = pyspiel.load_game(game_string)
  sampling = "solver=" in variant
  budget = limits.Budget.parse(*(("30it", "20it") if sampling else ("3it", "2it")))
  player = (f"cr(variant={variant})" if sampling else
            f"cr(solver=cfr+,variant={variant})")
  shared, plain = (evaluators.traversing_evaluation(game, player, budget, seed=1,
                                                    share_decisions=share)
                   for share in (True, False))
  np.testing.assert_allclose(shared.policy.action_probability_array,
                             plain.policy.action_probability_array, atol=1e-9, rtol=0)
  assert abs(shared.nash_conv - plain.nash_conv) < 1e-9
  assert shared.decisions == plain.decisions == plain.infosets_total
  assert plain.shared_decisions == 0 < shared.shared_decisions


@pytest.mark.parametrize("game_string,player,budget", [
    ("python_ii_goofspiel(num_cards=4)", "cr(solver=cfr+)", "1it"),
    (SMALL_LEDUC, "cr(solver=cfr+)", "3it"),
    ("python_ii_goofspiel(num_cards=4)", "online_solving", "10it")])
def test_traversal_equals_replaying_every_history_with_a_fresh_bot(game_string,
                                                                   player, budget):
  """The evaluator of the IIGoofspiel{6} figure (docs/reproductions.md: one decision
  per decision key, copies of the bot down each player's sequence tree, the
  information sets' states rebuilt per group) assembles the strategy of [S]'s
  TraversingEvaluator, a fresh bot replaying each information set's whole history,
  to 1e-9; its NashConv is OpenSpiel's of that strategy."""
  game = registry.load_game(game_string)
  limit = limits.Budget.parse(budget, budget)
  grouped = evaluators.traversing_evaluation(game, player, limit, seed=2)
  replayed = evaluators.traversing_evaluation(game, player, limit, seed=2,
                                              share_prefixes=False)
  assert grouped.decisions == grouped.infosets_total < replayed.decisions
  np.testing.assert_allclose(grouped.slots, replayed.slots, atol=1e-9, rtol=0)
  assert abs(grouped.nash_conv - replayed.nash_conv) < 1e-9
  assert grouped.nash_conv == pytest.approx(
      openspiel_exploitability.nash_conv(game, grouped.policy), abs=1e-9)


def test_decision_keys_only_for_deterministic_compiled_decisions():
  game = pyspiel.load_game(SMALL_LEDUC)
  state = game.new_initial_state()
  state.apply_action(0)
  state.apply_action(1)
  timed = cr.ContinualResolvingBot(game, 0, preplay="0", move="0.05s", solver="cfr+")
  live = cr.ContinualResolvingBot(game, 0, move="5it", solver="cfr+", path="live")
  assert timed.decision_key(state) is None and live.decision_key(state) is None
  bot = cr.ContinualResolvingBot(game, 0, preplay="3it", move="2it", solver="cfr+")
  assert bot.decision_key(state) == ("first", True)
  policy, _ = bot.step_with_policy(state)
  assert policy == bot.current_policy(state)
  later = state.child(2)
  later.apply_action(1)
  later.apply_action(later.chance_outcomes()[0][0])
  assert bot.decision_key(later)[0] == "enter"


def test_clones_share_the_subgame_views_arrays_not_the_solves(monkeypatch):
  # In place (this game's subgames are small enough to be copied otherwise).
  monkeypatch.setattr(compiled_resolver, "COPY_NODES_LIMIT", 0)
  game = pyspiel.load_game(SMALL_LEDUC)
  bot = cr.ContinualResolvingBot(game, 0, preplay="3it", move="2it", solver="cfr+")
  state = game.new_initial_state()
  state.apply_action(0)
  state.apply_action(1)
  bot.step(state)
  state.apply_action(2)
  state.apply_action(1)
  state.apply_action(state.chance_outcomes()[0][0])
  bot.step(state)
  solver = bot.resolver.view.solver
  copy = bot.clone().resolver.view.solver
  assert copy._tables is solver._tables and copy._values is solver._values
  assert copy._regrets is not solver._regrets
  np.testing.assert_array_equal(copy._cumulative, solver._cumulative)


def test_the_warm_up_compiles_what_timed_cfr_plus_decisions_run():
  """The bot's warm-up (outside the budgets) runs the CFR+ compiled path too: its
  next-root estimates and the setup budget's trace counts were compiled inside the
  first timed decisions (a 0.13 s decision at a 0.1 s budget with a cold numba
  cache) while the warm-up ran only the sampling solver."""
  from ggp_cr.algorithms.resolving.subgames import subgame_trace  # pylint: disable=g-import-not-at-top
  from ggp_cr.algorithms.resolving.compiled import next_root_estimates  # pylint: disable=g-import-not-at-top
  cr._WARM.clear()  # pylint: disable=protected-access
  cr._warm_up_full_width()  # pylint: disable=protected-access
  assert next_root_estimates._observe.signatures  # pylint: disable=protected-access
  assert subgame_trace._step_sums.signatures  # pylint: disable=protected-access


def test_the_warm_up_compiles_the_build_ahead_kernels_in_a_fresh_process():
  """In a fresh interpreter, the warm-up alone loads the kernels that a timed CFR+
  move's build-ahead planning runs (they were compiled inside a Leduc{3,30} first
  decision: 1.53 s of a 1.1 s budget)."""
  code = (
      "from ggp_cr.algorithms.resolving import continual_resolving as cr\n"
      "from ggp_cr.algorithms.resolving.subgames import subgame_trace\n"
      "from ggp_cr.algorithms.tree import flat_tree\n"
      "assert not flat_tree.actions_below.signatures\n"
      "assert not subgame_trace._touched_group_sums.signatures\n"
      "cr._warm_up_full_width()\n"
      "assert flat_tree.actions_below.signatures\n"
      "assert subgame_trace._touched_group_sums.signatures\n")
  result = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=600, check=False)
  assert result.returncode == 0, result.stderr[-2000:]
