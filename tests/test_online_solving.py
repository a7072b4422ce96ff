"""Tests of the online solving player and Online Outcome Sampling (OOS) bots."""

import gc

import numpy as np
from open_spiel.python.bots import uniform_random
import pyspiel
import pytest

import ggp_cr.games  # pylint: disable=unused-import
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.bots import anytime
from ggp_cr.algorithms.bots import online_solving
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.evaluation import evaluators
from ggp_cr.algorithms.resolving import continual_resolving
from ggp_cr.algorithms.sampling import compiled_outcome_sampling
from ggp_cr.algorithms.sampling import outcome_sampling
from ggp_cr.algorithms.sampling import targets
from ggp_cr.algorithms.tree import compiled_tree

BOTS = {
    "online_ist": lambda game, p, seed: online_solving.OnlineSolvingBot(
        game, p, preplay="100it", move="40it", seed=seed),
    "online_pst": lambda game, p, seed: online_solving.OnlineSolvingBot(
        game, p, solver="mc_cfr(delta=0.5)", preplay="100it", move="40it",
        targeting="pst", seed=seed),
    "online_compiled": lambda game, p, seed: online_solving.OnlineSolvingBot(
        game, p, solver="vr_mccfr(delta=0.5,compiled=true)", preplay="100it",
        move="40it", seed=seed),
    "oos": lambda game, p, seed: online_solving.OOSBot(
        game, p, preplay="100it", move="40it", seed=seed),
    "oos_pst": lambda game, p, seed: online_solving.OOSBot(
        game, p, preplay="100it", move="40it", targeting="pst", seed=seed),
}
GAMES = ["kuhn_poker", "leduc_poker", "python_rps", "python_ii_goofspiel(num_cards=3)",
         "python_princess_monster(max_turns=2)",
         "python_leduc(max_raises=1,cards_per_suit=2)"]


def _supports(name, game):
  if "compiled" in name:
    return True
  if "pst" in name:
    try:
      targets.public_observer(game)
    except ValueError:
      return False
  return True


def _play_match(game, bots, seed):
  """Plays one match, checking every reported policy; returns the returns."""
  rng = np.random.default_rng(seed)
  state = game.new_initial_state()
  for bot in bots:
    bot.restart()
  while not state.is_terminal():
    if state.is_chance_node():
      outcomes, probs = zip(*state.chance_outcomes())
      action = outcomes[rng.choice(len(outcomes), p=probs)]
    else:
      player = state.current_player()
      bot = bots[player]
      if bot.provides_policy():
        policy, action = bot.step_with_policy(state)
        actions = [a for a, _ in policy]
        probs = np.array([p for _, p in policy])
        assert sorted(actions) == sorted(state.legal_actions(player))
        assert np.all(probs >= 0) and probs.sum() == pytest.approx(1.0)
        assert dict(policy)[action] > 0
      else:
        action = bot.step(state)
      for other, other_bot in enumerate(bots):
        if other != player:
          other_bot.inform_action(state, player, action)
    state.apply_action(action)
  return state.returns()


@pytest.mark.parametrize("game_string", GAMES)
@pytest.mark.parametrize("name", sorted(BOTS))
def test_bots_play_whole_games_with_valid_policies(game_string, name):
  game = pyspiel.load_game(game_string)
  if not _supports(name, game):
    pytest.skip(f"{game_string} has no public observer")
  for seat in (0, 1):
    bots = [uniform_random.UniformRandomBot(p, np.random.RandomState(p))
            for p in (0, 1)]
    bots[seat] = BOTS[name](game, seat, seed=seat)
    returns = _play_match(game, bots, seed=seat)
    assert sum(returns) == pytest.approx(0.0)


def test_bots_run_under_openspiel_evaluate_bots():
  game = pyspiel.load_game("leduc_poker")
  bots = [BOTS["oos"](game, 0, 1), BOTS["online_ist"](game, 1, 2)]
  returns = pyspiel.evaluate_bots(game.new_initial_state(), bots, 3)
  assert sum(returns) == pytest.approx(0.0)


def test_iteration_budgets_are_deterministic_per_seed():
  game = pyspiel.load_game("python_ii_goofspiel(num_cards=3)")

  def policies(seed):
    bots = [BOTS["oos"](game, 0, seed), BOTS["online_ist"](game, 1, seed + 1)]
    state = game.new_initial_state()
    seen = []
    while not state.is_terminal():
      policy, action = bots[state.current_player()].step_with_policy(state)
      seen.append((tuple(policy), action))
      state.apply_action(action)
    return seen

  assert policies(5) == policies(5)
  assert policies(5) != policies(6)


def test_budgets_spent_as_asked():
  game = pyspiel.load_game("kuhn_poker")
  bot = online_solving.OnlineSolvingBot(game, 0, preplay="70it", move="30it")
  bot.step(game.new_initial_state().child(0).child(1))
  assert bot.iterations_per_move == [100]
  assert bot.solver.iterations == 100
  bot.restart()  # a new match: fresh tables, pre-play again
  assert bot.solver.iterations == 0
  bot.step(game.new_initial_state().child(1).child(0))
  assert bot.iterations_per_move == [100]


@pytest.mark.parametrize("name", ["online_ist", "oos"])
def test_online_players_are_far_less_exploitable_than_random(name):
  """The traversing evaluator ([S] §3.5) asks the player at every information set."""
  game = pyspiel.load_game("kuhn_poker")
  tree = compiled_tree.cached_tree(game)
  uniform = exact_br.exploitability_slots(tree, tree.uniform_slots())

  def make(game, player_id, seed, budget):
    del budget
    return BOTS[name](game, player_id, seed)

  evaluation = evaluators.traversing_evaluation(game, make, seed=0)
  assert evaluation.exploitability < 0.5 * uniform


def test_oos_reweights_after_a_target_change():
  game = pyspiel.load_game("leduc_poker")
  state = game.new_initial_state()
  for action in (0, 3, 1, 2):
    state.apply_action(action)
  bot = online_solving.OOSBot(game, 0, preplay="500it", move="50it", seed=0)
  bot.step(state)
  assert bot.solver.iteration_weight > 1.0
  assert bot.solver.target_weight(0.0) == 1.0
  no_reweight = online_solving.OOSBot(game, 0, preplay="500it", move="50it",
                                      reweight=False, seed=0)
  no_reweight.step(state)
  assert no_reweight.solver.iteration_weight == 1.0


def test_target_weight_by_hand_on_rps():
  """Player 1's only information set in RPS: the target histories are player 0's
  three picks, all consistent, so S1 = S2 = 1 and the weight is 1 for any delta; a
  solver with no table reaches no history (weight 1 too)."""
  game = pyspiel.load_game("python_rps")
  state = game.new_initial_state().child(0)
  solver = outcome_sampling.OutcomeSamplingSolver(game, seed=0)
  target = solver.set_target(state, 1)
  assert online_solving.target_weight(game, target, solver.table, 0.9) == 1.0
  for _ in range(50):
    solver.iteration()
  assert online_solving.target_weight(game, target, solver.table, 0.9) == \
      pytest.approx(1.0)


def test_players_by_name():
  game = pyspiel.load_game("kuhn_poker")
  budget = limits.Budget.parse("50it", "20it")
  for spec in ("online_solving", "online_solving(solver=mc_cfr(delta=0.3),targeting=pst)",
               "oos(delta=0.5,gamma=0.05)", "oos(reweight=false)"):
    bot = registry.make_bot(spec, game, 0, 0, budget)
    assert bot.step(game.new_initial_state().child(0).child(1)) in (0, 1)


@pytest.mark.parametrize("spec,match", [
    ("oos(delta=1.5)", r"'delta' must be in \[0, 1\]"),
    ("oos(e=-0.5)", r"'e' must be in \[0, 1\]"),
    ("oos(gamma=2)", r"'gamma' must be in \[0, 1\]"),
    ("online_solving(solver=cfr+)", "outcome-sampling solver"),
    ("online_solving(solver=vr_mccfr(e=3))", r"'e' must be in \[0, 1\]"),
    ("online_solving(targeting=all)", "must be one of ist, pst"),
])
def test_bad_player_specs_are_rejected(spec, match):
  with pytest.raises(ValueError, match=match):
    registry.parse_player(spec)


def test_bad_construction_is_rejected():
  game = pyspiel.load_game("kuhn_poker")
  with pytest.raises(ValueError, match="player_id"):
    online_solving.OnlineSolvingBot(game, 2)
  with pytest.raises(ValueError, match="budget"):
    online_solving.OnlineSolvingBot(game, 0, move="10 parsecs")
  with pytest.raises(ValueError, match="zero"):
    online_solving.OnlineSolvingBot(game, 0, preplay="0", move="0")
  with pytest.raises(ValueError, match="targeting"):
    online_solving.OnlineSolvingBot(game, 0, targeting="everything")
  with pytest.raises(ValueError, match="information-set targeting only"):
    online_solving.OnlineSolvingBot(game, 0, solver="os_mccfr(compiled=true)",
                                    targeting="pst")
  turn_based = pyspiel.load_game_as_turn_based("goofspiel(imp_info=True,num_cards=3)")
  with pytest.raises(ValueError, match="public observations"):
    online_solving.OOSBot(turn_based, 0, targeting="pst")
  with pytest.raises(ValueError, match="sequential"):
    online_solving.OOSBot(pyspiel.load_game("goofspiel(num_cards=3)"), 0)
  bot = online_solving.OnlineSolvingBot(game, 0)
  with pytest.raises(ValueError, match="turn"):
    bot.step(game.new_initial_state().child(0).child(1).child(0))


@pytest.mark.parametrize("player", ["online_solving(solver=mc_cfr)", "oos"])
def test_copies_continue_histories_as_replays_do(player):
  """The traversing evaluator's copies of a bot after each decision give the policy
  of replaying every information set's history with a fresh bot."""
  game = pyspiel.load_game("kuhn_poker")
  budget = limits.Budget.parse("20it", "20it")
  shared = evaluators.traversing_evaluation(game, player, budget, seed=1)
  replayed = evaluators.traversing_evaluation(game, player, budget, seed=1,
                                              share_prefixes=False)
  assert replayed.decisions > shared.decisions
  tree = compiled_tree.cached_tree(game)
  np.testing.assert_array_equal(tree.policy_to_slots(shared.policy),
                                tree.policy_to_slots(replayed.policy))


@pytest.mark.parametrize("make", [
    lambda game, move: online_solving.OnlineSolvingBot(game, 0, move=move, seed=0),
    lambda game, move: continual_resolving.ContinualResolvingBot(
        game, 0, move=move, solver="cfr+", seed=0)])
def test_timed_decisions_run_without_the_collector(make, monkeypatch):
  """A timed decision runs with the objects that existed before it frozen and the
  garbage collector off (a collection can take longer than a move's margin), and
  unfreezes them and turns it on after, also when the decision fails; decisions with
  iteration budgets leave the collector alone."""
  game = pyspiel.load_game("kuhn_poker")
  seen = []
  original = anytime.spend

  def spend(*args, **kwargs):
    seen.append(gc.get_freeze_count() == 0 and gc.isenabled())
    return original(*args, **kwargs)

  monkeypatch.setattr(anytime, "spend", spend)
  state = game.new_initial_state()
  state.apply_action(0)
  state.apply_action(1)
  assert gc.isenabled() and gc.get_freeze_count() == 0
  make(game, "0.01s").step(state)
  assert seen and not any(seen) and gc.get_freeze_count() == 0 and gc.isenabled()
  seen.clear()
  make(game, "2it").step(state)
  assert seen and all(seen) and gc.get_freeze_count() == 0

  def failing(*args, **kwargs):
    assert gc.get_freeze_count() > 0 and not gc.isenabled()
    raise RuntimeError("solver failed")

  monkeypatch.setattr(anytime, "spend", failing)
  with pytest.raises(RuntimeError):
    make(game, "0.01s").step(state)
  assert gc.get_freeze_count() == 0 and gc.isenabled()


# Compiled vs live OOS ([S] Algorithm 2 on both paths): the games of the comparison.
EQUALITY_GAMES = ["kuhn_poker", "python_leduc(max_raises=1,cards_per_suit=3)",
                  "python_ii_goofspiel(num_cards=4)",
                  "python_princess_monster(max_turns=4)"]
_OOS_SETTINGS = dict(regret_matcher="erm(rm,0.01)", exploration=0.6,
                     targeting_probability=0.9, incremental=True)


def _decision_states(game, seed, count):
  """`count` decision states of random play (each of a new random history)."""
  rng = np.random.default_rng(seed)
  found = []
  while len(found) < count:
    state = game.new_initial_state()
    stop = rng.integers(1, 12)
    while not state.is_terminal():
      if not state.is_chance_node():
        if stop == 0:
          found.append(state.clone())
          break
        stop -= 1
      actions = ([a for a, _ in state.chance_outcomes()] if state.is_chance_node()
                 else state.legal_actions())
      state.apply_action(actions[rng.integers(len(actions))])
  return found


@pytest.mark.parametrize("game_string", EQUALITY_GAMES)
def test_compiled_target_weight_equals_the_live_walk(game_string):
  """OOS's re-weighting on the compiled tree equals the live walk over histories to
  1e-9, target after target, with the tables both solvers build meanwhile."""
  game = pyspiel.load_game(game_string)
  live = outcome_sampling.OutcomeSamplingSolver(game, seed=7, **_OOS_SETTINGS)
  fast = compiled_outcome_sampling.CompiledOutcomeSamplingSolver(game, seed=7,
                                                                 **_OOS_SETTINGS)
  live.iterate(300)
  fast.iterate(300)
  weights = []
  for state in _decision_states(game, 1, 8):
    player = state.current_player()
    live.set_target(state, player)
    fast.set_target(state, player)
    weight = live.target_weight(0.9)
    assert fast.target_weight(0.9) == pytest.approx(weight, rel=1e-9, abs=1e-12)
    assert fast.target_weight(0.0) == live.target_weight(0.0) == 1.0
    weights.append(weight)
    live.iteration_weight = fast.iteration_weight = weight
    live.iterate(40)
    fast.iterate(40)
  assert max(weights) > 1.0 + 1e-6  # the targets are not all trivial


def _match_decisions(game, make, seat, seed):
  """(policy, action, iteration weight) of the bot `make(compiled)` at each of its
  decisions in one match against random play, for compiled 'true' and 'false'
  bots fed the same states (the live bot's action is played)."""
  bots = [make(game, seat, "true"), make(game, seat, "false")]
  assert [bot.path for bot in bots] == ["compiled", "live"]
  rng = np.random.default_rng(seed)
  decisions = []
  state = game.new_initial_state()
  while not state.is_terminal():
    if state.current_player() == seat:
      steps = [bot.step_with_policy(state) for bot in bots]
      decisions.append([(policy, action, getattr(bot.solver, "iteration_weight", 1.0))
                        for bot, (policy, action) in zip(bots, steps)])
      state.apply_action(steps[1][1])
    elif state.is_chance_node():
      actions, probs = zip(*state.chance_outcomes())
      state.apply_action(actions[rng.choice(len(actions), p=probs)])
    else:  # random, but not the first action (a fold in poker) when there is another
      actions = state.legal_actions()
      state.apply_action(actions[rng.integers(min(1, len(actions) - 1), len(actions))])
  return decisions


COMPILED_VS_LIVE = {
    "oos": lambda game, seat, compiled: online_solving.OOSBot(
        game, seat, preplay="150it", move="40it", seed=seat + 3, compiled=compiled),
    "online_vr_mccfr": lambda game, seat, compiled: online_solving.OnlineSolvingBot(
        game, seat, solver="vr_mccfr(delta=0.5)", preplay="150it", move="40it",
        seed=seat + 3, compiled=compiled),
}


@pytest.mark.parametrize("game_string", EQUALITY_GAMES)
@pytest.mark.parametrize("name", sorted(COMPILED_VS_LIVE))
def test_compiled_bot_decides_as_the_live_bot(game_string, name):
  """Same seed and iteration budgets: the same policy (to 1e-9), action and
  re-weighting at every decision of whole matches, in both seats."""
  game = pyspiel.load_game(game_string)
  decisions = []
  for seat in (0, 1):
    for seed in (0, 1):
      decisions += _match_decisions(game, COMPILED_VS_LIVE[name], seat, seed)
  assert len(decisions) >= 4
  for fast, live in decisions:
    assert [a for a, _ in fast[0]] == [a for a, _ in live[0]]
    np.testing.assert_allclose([p for _, p in fast[0]], [p for _, p in live[0]],
                               rtol=1e-9, atol=1e-12)
    assert fast[1] == live[1]
    assert fast[2] == pytest.approx(live[2], rel=1e-9)


def test_the_compiled_or_live_choice():
  game = pyspiel.load_game("kuhn_poker")
  assert online_solving.OOSBot(game, 0).path == "compiled"
  pst = online_solving.OOSBot(game, 0, targeting="pst")
  assert (pst.path, pst.path_reason) == ("live",
                                         "public-subgame targeting needs live states")
  large = pyspiel.load_game("liars_dice(dice_sides=3)")  # not compiled elsewhere
  small_limit = online_solving.OOSBot(large, 0, compiled_nodes_limit=100)
  assert small_limit.path == "live" and "too large" in small_limit.path_reason
  with pytest.raises(ValueError, match="compiled solver is not available.*too large"):
    online_solving.OOSBot(large, 0, compiled=True, compiled_nodes_limit=100)
  with pytest.raises(ValueError, match="public-subgame targeting needs live states"):
    online_solving.OOSBot(game, 0, targeting="pst", compiled="true")
  with pytest.raises(ValueError, match="compiled must be one of auto, true, false"):
    online_solving.OOSBot(game, 0, compiled="yes")
  assert online_solving.OnlineSolvingBot(game, 0).path == "compiled"
  explicit = online_solving.OnlineSolvingBot(game, 0, solver="mc_cfr(compiled=false)")
  assert explicit.path == "live" and "solver string" in explicit.path_reason
  with pytest.raises(ValueError, match="contradicts"):
    online_solving.OnlineSolvingBot(game, 0, solver="mc_cfr(compiled=false)",
                                    compiled="true")
  budget = limits.Budget.parse("20it", "20it")
  assert registry.make_bot("oos(compiled=false)", game, 0, 0, budget).path == "live"
  assert registry.make_bot("online_solving(compiled=true)", game, 0, 0,
                           budget).path == "compiled"
  with pytest.raises(ValueError, match="'compiled' must be one of auto, true, false"):
    registry.parse_player("oos(compiled=maybe)")


def test_compiled_online_solving_plays_as_the_live_one():
  """online_solving on the compiled tree (solver=vr_mccfr(compiled=true)) draws the
  live solver's random stream, so the traversing evaluator assembles the same
  strategy to 1e-9 (rock-paper-scissors, Kuhn poker's player 0; whole matches on more
  games: test_compiled_bot_decides_as_the_live_bot)."""
  budget = limits.Budget.parse("30it", "20it")
  for game_string, players in (("python_rps(n=5)", (0, 1)), ("kuhn_poker", (0,))):
    game = pyspiel.load_game(game_string)
    live, compiled = (evaluators.traversing_evaluation(
        game, f"online_solving(solver=vr_mccfr(delta=0.1{flag}))", budget, seed=3)
                      for flag in ("", ",compiled=true"))
    tree = compiled_tree.cached_tree(game)
    live, compiled = (tree.policy_to_slots(e.policy) for e in (live, compiled))
    compared = np.isin(tree.infoset_player[tree.slot_infoset], players)
    assert not np.allclose(compiled[compared], tree.uniform_slots()[compared])
    np.testing.assert_allclose(compiled[compared], live[compared], atol=1e-9, rtol=0)


def _run_in_fresh_process(script):
  """The stdout of `script` run by a fresh interpreter (its memory settings and heap
  are its own); skips the test if it prints that glibc's mallopt did not apply."""
  import subprocess  # pylint: disable=import-outside-toplevel
  import sys  # pylint: disable=import-outside-toplevel
  out = subprocess.run([sys.executable, "-c", script], check=True,
                       capture_output=True, text=True).stdout.strip()
  if out == "not applied":
    pytest.skip("glibc's mallopt is not available here")
  return out


_FREED_MEMORY_SCRIPT = """
import numpy as np
from ggp_cr.algorithms.bots import anytime
def resident():
  with open("/proc/self/statm") as statm:
    return int(statm.read().split()[1]) * 4096
if not anytime.keep_freed_memory():
  print("not applied")
else:
  blocks = [np.ones(1 << 20) for _ in range(80)]  # 80 blocks of 8 MiB, touched
  held = resident()
  del blocks
  print(held - resident())
"""


def test_kept_freed_memory_stays_in_the_process():
  """keep_freed_memory turns glibc's trimming off: 640 MiB of freed heap blocks (each
  under the 32 MiB mmap threshold) stay resident for the next allocations instead of
  being given back (with the earlier 512 MiB trim threshold they were). Runs in a
  fresh process, which then keeps that memory; skipped off glibc."""
  assert int(_run_in_fresh_process(_FREED_MEMORY_SCRIPT)) < 64 << 20


_PREFAULT_SCRIPT = """
import resource
import numpy as np
from ggp_cr.algorithms.bots import anytime
def faults():
  return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
touched = anytime.prefault_heap(256 << 20)
if not touched:
  print("not applied")
else:
  again = anytime.prefault_heap(128 << 20)  # below the earlier request: nothing
  before = faults()
  blocks = [np.ones(1 << 20) for _ in range(24)]  # 192 MiB, touched
  print(touched, again, faults() - before)
"""


def test_prefaulted_heap_is_reused_without_page_faults():
  """prefault_heap touches the heap once (in a fresh process): arrays allocated
  afterwards, up to that much, fault almost no page in (without it, 192 MiB of
  fresh arrays fault about 49k pages of 4 KiB). Skipped off glibc."""
  touched, again, faults = map(int, _run_in_fresh_process(_PREFAULT_SCRIPT).split())
  assert touched >= 256 << 20 and again == 0
  assert faults < 2000
