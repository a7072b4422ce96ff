"""A compiled subgame fits a timed move or is not entered: the fitted costs, the first
iteration's estimate and the setup clock (move_budget; [S] §3.4.1)."""
# pylint: disable=protected-access


import time
import types

import numpy as np
import pytest

import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.bots import anytime
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.resolving import continual_resolving
from ggp_cr.algorithms.resolving import move_budget
from ggp_cr.algorithms.resolving import protocol
from ggp_cr.algorithms.resolving import settings
from ggp_cr.algorithms.resolving.compiled import compiled_resolver
from ggp_cr.algorithms.resolving.compiled import subgame_cfr
from ggp_cr.algorithms.resolving.subgames import subgame_trace
from ggp_cr.algorithms.tree import compiled_tree
from test_build_ahead import _first_subgame
from test_paths_agree import GAMES


def _within(seconds):
  """Setup limits of a move ending `seconds` from now."""
  return move_budget.SetupLimits(deadline=time.perf_counter() + seconds)


def _second_decision(game, iteration_seconds_per_node):
  """The record of player 0's second decision (chance's first outcomes, both players
  check/call) of a cfr+ bot with 0.3 s moves (room for the setup on a loaded machine)
  whose per-node iteration estimate is set to the given one (nothing built ahead: the
  second decision builds)."""
  bot = continual_resolving.ContinualResolvingBot(game, 0, preplay="5it", move="0.3s",
                                                  solver="cfr+", build_ahead=False)
  bot._budget.seconds_per_node = iteration_seconds_per_node  # pylint: disable=protected-access
  bot._budget.from_trunk = lambda *args: None  # keep it  # pylint: disable=protected-access
  state = game.new_initial_state()
  while len(bot.decisions) < 2:
    if state.is_chance_node():
      state.apply_action(state.chance_outcomes()[0][0])
      continue
    if state.current_player() == 0:
      bot.step(state)
    state.apply_action(1)
  return bot.decisions[-1]


def test_the_per_node_estimate_is_the_median_preplay_iteration(monkeypatch):
  """The bot's per-node subgame iteration estimate after pre-play: the median of the
  whole game's pre-play iterations (anytime.spend's samples) times VIEW_SLOWDOWN
  over the tree's nodes; a slow first iteration (page faults, kernels loaded) does
  not count as a mean would."""
  game = pyspiel.load_game(GAMES[1])
  clock = [0.0]
  costs = iter([0.07] + [0.023] * 40)

  def iterate(bot_iterate):
    def run(n):
      clock[0] += n * next(costs)
      return bot_iterate(n)
    return run

  monkeypatch.setattr(anytime, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
  timing = {"samples": []}
  done = anytime.spend(limits.Limit(seconds=0.2), 0.0, iterate(lambda n: None),
                       timing=timing)
  assert done == len(timing["samples"]) and timing["samples"][0] == 0.07
  assert timing["samples"][1:] == pytest.approx([0.023] * (done - 1))
  monkeypatch.undo()
  bot = continual_resolving.ContinualResolvingBot(game, 0, preplay="5it", move="0.05s",
                                                  solver="cfr+")
  state = game.new_initial_state()
  while state.is_chance_node():
    state.apply_action(state.chance_outcomes()[0][0])
  bot.step(state)
  tree = compiled_tree.cached_tree(game)
  bot._budget.from_trunk([0.07, 0.023, 0.023, 0.024], None, tree.num_nodes)  # pylint: disable=protected-access
  assert bot._budget.seconds_per_node == pytest.approx(  # pylint: disable=protected-access
      move_budget.VIEW_SLOWDOWN * 0.0235 / tree.num_nodes)


def test_a_subgame_too_large_for_the_budget_is_not_built():
  """Fallback: the bot keeps its current solve, and the record says so."""
  game = pyspiel.load_game(GAMES[1])
  tree = compiled_tree.cached_tree(game)
  keys = subgame_trace.StateKeys.build(tree)
  resolver = compiled_resolver.CompiledResolver.whole_game(tree, keys, 0)
  resolver.iterate(5)
  infoset = int(resolver.trace.own_infosets[0])
  with pytest.raises(protocol.CannotResolve, match="nodes, more than"):
    resolver.next_subgame(infoset, "resolve", move_budget.SetupLimits(max_nodes=1))
  _, info = resolver.next_subgame(infoset, "resolve",
                                  move_budget.SetupLimits(max_nodes=tree.num_nodes))
  assert 0 < info["subgame_nodes"] <= tree.num_nodes
  record = _second_decision(game, 1.0)  # every subgame is too large for the move
  assert record["enters_new_subgame"] and not record["new_subgame"]
  assert "more than" in record["fallback"]
  assert record["strategy"].startswith("the current subgame's solve")
  assert "average strategy" not in record["fallback"]  # iterations will estimate


def test_a_refusal_with_no_iteration_left_estimates_from_the_average(monkeypatch):
  """When no iteration of the current solve would run in the rest of the move, the
  refusal's decision makes the pass of the average strategy (the record says so)."""
  game = pyspiel.load_game(GAMES[1])
  monkeypatch.setattr(protocol, "_RUN_MARGIN", 1e9)  # no iteration starts in a move
  record = _second_decision(game, 1.0)
  assert record["enters_new_subgame"] and not record["new_subgame"]
  assert record["iterations"] == 0
  assert record["fallback"].endswith("the next inputs are estimated from its average "
                                     "strategy")


def test_a_subgame_whose_first_iteration_would_not_fit_is_not_switched_to(monkeypatch):
  """A subgame admitted by its size whose first CFR+ iteration no longer fits what is
  left of the move: the bot keeps its current solve; with time left it switches and
  the decision runs the first iteration."""
  game = pyspiel.load_game(GAMES[1])
  monkeypatch.setattr(move_budget, "RESOLVE_SHARE", 1e9)
  record = _second_decision(game, 1.0)
  assert record["enters_new_subgame"] and not record["new_subgame"]
  assert "would not fit" in record["fallback"]
  record = _second_decision(game, 1e-12)
  assert record["new_subgame"] and record["iterations"] >= 1



def test_the_estimate_outlives_neither_one_slow_iteration_nor_a_load_spike():
  """The per-node estimate is the median of the last MEASURED_WINDOW measurements:
  one slow first iteration does not double it; after refusals for the estimate
  alone, the pre-play's least-loaded rate (QUIET_QUANTILE) counts, so a pre-play
  slowed by the machine's load does not refuse every later subgame of the match."""
  budget = move_budget.SubgameBudget(sampling=False)
  budget.refused_for_time()  # before a pre-play: nothing known, nothing changes
  assert budget.seconds_per_node == move_budget.ITERATION_SECONDS_PER_NODE
  nodes = 1_000_000
  slow = [0.13, 0.09, 0.12, 0.085, 0.097, 0.097, 0.098, 0.08]  # seconds an iteration
  budget.from_trunk(slow, None, nodes)
  slowed = move_budget.VIEW_SLOWDOWN * float(np.median(slow)) / nodes
  quiet = move_budget.VIEW_SLOWDOWN * float(np.percentile(slow, 25)) / nodes
  assert budget.seconds_per_node == pytest.approx(slowed)
  budget.refused_for_time()
  budget.refused_for_time()
  assert budget.seconds_per_node == pytest.approx(quiet)
  budget.refused_for_time()  # not below the quiet rate
  assert budget.seconds_per_node == pytest.approx(quiet)
  first = types.SimpleNamespace(trace=types.SimpleNamespace(num_next_roots=0),
                                timing={}, iterate=lambda n: time.sleep(0.2))
  record = {"iterations": 0}
  budget.first_iteration(first, nodes, record, move_budget.MoveBudget(
      time.perf_counter(), 1e6))
  # At least 200 ns a node, slower than the quiet rate: the median holds.
  assert record["iterations"] == 1
  assert budget.seconds_per_node == pytest.approx(quiet)
  with pytest.raises(protocol.CannotResolve) as refused:
    budget.first_iteration(first, 10 ** 15, record, move_budget.MoveBudget(
        time.perf_counter(), 1.0))
  assert refused.value.iteration_estimate


def test_the_whole_game_starts_with_a_prior_iteration_estimate(monkeypatch):
  """Before any iteration is measured the anytime loop holds a prior
  (ITERATION_SECONDS_PER_NODE a node): one that would not fit is not started."""
  game = pyspiel.load_game(GAMES[1])
  monkeypatch.setattr(move_budget, "ITERATION_SECONDS_PER_NODE", 1e3)
  bot = continual_resolving.ContinualResolvingBot(game, 0, preplay="0.3s",
                                                  move="0.2s", solver="cfr+")
  state = game.new_initial_state()
  while state.is_chance_node():
    state.apply_action(state.chance_outcomes()[0][0])
  bot.step(state)
  assert bot.decisions[0]["iterations"] == 0


class _FakeClock:
  """A settable time.perf_counter for SetupClock."""

  def __init__(self):
    self.now = 100.0

  def __call__(self):
    return self.now


def test_setup_clock_gives_up_a_setup_running_over_its_estimate_only():
  """Stages estimated at 10, 20, 30 and 20 ms, the first iteration's reserve 20 ms,
  the deadline 110 ms after the start (the test before the setup passes: 100 ms)."""
  fake = _FakeClock()
  stages = {"inputs": 0.01, "plan": 0.02, "solver": 0.03, "trace": 0.02}
  clock = move_budget.SetupClock(stages, fake.now + 0.11, 0.02, now=fake)
  fake.now += 0.005  # ahead of schedule: not credited, and no test fails
  clock.check("inputs")
  fake.now += 0.06  # 65 ms to the solver (60 estimated): 20 * 65/60 + 20 fits in 45
  clock.check("solver")
  clock = move_budget.SetupClock(stages, fake.now + 0.11, 0.02, now=fake)
  fake.now += 0.02  # twice the inputs' estimate: 20 + 2 * 70 + 20 > 110 ms
  with pytest.raises(protocol.CannotResolve, match=r"took 20 ms to its inputs \(estimated "
                     r"10 ms\); the rest at that pace \(about 140 ms\)"):
    clock.check("inputs")
  # Time spent in `excluding` is left out of the pace (not out of the deadline):
  # 59 ms to the inputs, 50 of them excluded, fit 70 + 20 in the 101 ms left.
  clock = move_budget.SetupClock(stages, fake.now + 0.16, 0.02, now=fake)

  def slow_exact_values():
    fake.now += 0.05
    return "values"

  assert clock.excluding(slow_exact_values) == "values"
  fake.now += 0.009
  clock.check("inputs")
  # Nothing left to do and no reserve: nothing is tested, however late.
  stages = {"inputs": 0.01, "plan": 0.05, "solver": 0.01, "trace": 0.0}
  clock = move_budget.SetupClock(stages, fake.now + 0.001, now=fake)
  fake.now += 1.0
  clock.check("solver")
  with pytest.raises(protocol.CannotResolve):
    move_budget.SetupClock(stages, fake.now + 0.001, 0.01, now=fake).check("solver")


def test_a_setup_margin_counts_the_fixed_setup_once():
  """Builds ahead count the setup's part beyond SETUP_SECONDS with their margin, the
  fixed part once (a small subgame's 4 ms setup fits a move's last 4-5 ms)."""
  margined = move_budget.SetupLimits(
      setup_margin=move_budget.FIRST_ITERATION_MARGIN).margined
  fixed = move_budget.SETUP_SECONDS
  assert margined(fixed) == fixed
  np.testing.assert_allclose(
      margined(np.array([0.5 * fixed, fixed + 0.01])),
      [0.5 * fixed, fixed + move_budget.FIRST_ITERATION_MARGIN * 0.01])
  assert move_budget.SetupLimits().margined(3 * fixed) == 3 * fixed


def test_setup_stages_sum_to_the_setup_estimate():
  roots, walked, found = np.array([10, 95_536, 542_592]), np.array([0, 5e5, 0]), \
      np.array([0, 542_592, 0])
  for sampling in (False, True):
    stages = move_budget.setup_stages(roots, walked, found, sampling)
    np.testing.assert_allclose(sum(stages.values()), move_budget.setup_seconds(
        roots, walked, found, sampling))
    assert all((np.asarray(stage) >= 0).all() for stage in stages.values())
  for sampling in (False, True):
    stages = move_budget.setup_stages(roots, walked, found, sampling)
    np.testing.assert_allclose(stages["plan"],
                               move_budget.PLAN_SECONDS_PER_ROOT * roots)
    np.testing.assert_allclose(stages["trace"],
                               move_budget.trace_seconds(walked, found))
    # The order of _build: the sampler traces before it builds its structures.
    assert list(stages) == (["inputs", "plan", "trace", "solver"] if sampling else
                            ["inputs", "plan", "solver", "trace"])
  np.testing.assert_allclose(
      move_budget.defer_seconds(roots, walked, found, sampling=True, pace=2.0),
      2.0 * move_budget.SAMPLING_DEFER_SLOWDOWN *
      move_budget.defer_seconds(roots, walked, found, pace=0.5))  # (pace >= 1)


def test_a_setup_slower_than_estimated_is_given_up_before_its_view(monkeypatch):
  """A setup whose inputs take far over their estimate is given up at once (no view
  built), with the reason; on schedule, the same deadline builds it."""
  current = _first_subgame(0)
  infoset = int(current.trace.own_infosets[0])
  # A view estimated at 20 ms, whatever the subgame's size.
  monkeypatch.setattr(move_budget, "SETUP_SECONDS_PER_ROOT", 0.0)
  monkeypatch.setattr(move_budget, "SETUP_SECONDS", 0.004)
  monkeypatch.setattr(move_budget, "INPUTS_SECONDS_PER_ROOT", 0.0)
  views = []
  original_view = compiled_resolver.subgame_view

  def counted_view(*args, **kwargs):
    views.append(1)
    return original_view(*args, **kwargs)

  monkeypatch.setattr(compiled_resolver, "subgame_view", counted_view)
  original_stages = move_budget.setup_stages

  def stages(*args, **kwargs):
    estimates = original_stages(*args, **kwargs)
    return dict(estimates, solver=estimates["solver"] + 0.02)

  monkeypatch.setattr(move_budget, "setup_stages", stages)
  built, _ = current.next_subgame(infoset, "resolve",
                                  _within(0.5))
  assert views == [1] and built is not None
  original_inputs = compiled_resolver.next_root_estimates.NextRootEstimates.inputs

  def slow_inputs(self, *args, **kwargs):
    time.sleep(0.3)
    return original_inputs(self, *args, **kwargs)

  monkeypatch.setattr(compiled_resolver.next_root_estimates.NextRootEstimates,
                      "inputs", slow_inputs)
  with pytest.raises(protocol.CannotResolve, match="its setup took .* ms to its inputs"):
    current.next_subgame(infoset, "resolve", _within(0.5))
  assert views == [1]


def _count_instances(monkeypatch, module, name):
  """A list that gets a 1 per instance of class `module.name` made from now on."""
  made = []
  original = getattr(module, name)

  class Counted(original):

    def __init__(self, *args, **kwargs):
      made.append(1)
      super().__init__(*args, **kwargs)

  monkeypatch.setattr(module, name, Counted)
  return made


def test_a_slow_sampling_setup_is_given_up_before_its_sampler(monkeypatch):
  """A sampling solver's setup whose view's plan, or its trace, runs far over its
  estimate is given up before the sampler's structures are made (a CFR+ one after
  its plan, likewise); the deadline of a setup's share of
  the move does not give it up while it still fits `late_deadline`."""
  game = pyspiel.load_game(GAMES[3])
  tree = compiled_tree.cached_tree(game)
  keys = subgame_trace.StateKeys.build(tree)
  config = settings.ResolverConfig(solver="vr_mccfr")
  whole = compiled_resolver.CompiledResolver.whole_game(tree, keys, 0, config=config,
                                                         seed=0)
  whole.iterate(200)
  infoset = int(whole.trace.own_infosets[0])
  monkeypatch.setattr(compiled_resolver, "COPY_NODES_LIMIT", 0)  # in place
  monkeypatch.setattr(move_budget, "SETUP_SECONDS", 0.004)
  monkeypatch.setattr(move_budget, "INPUTS_SECONDS_PER_ROOT", 0.0)
  monkeypatch.setattr(move_budget, "PLAN_SECONDS_PER_ROOT", 0.0)
  original_stages = move_budget.setup_stages

  def stages(*args, **kwargs):  # the solver's stage estimated at 5 ms
    return dict(original_stages(*args, **kwargs), solver=0.005)

  monkeypatch.setattr(move_budget, "setup_stages", stages)
  samplers = _count_instances(monkeypatch, compiled_resolver.view_sampling,
                              "InPlaceSampler")
  original_plan = compiled_resolver.in_place_view.SubgameView._build
  delay = []

  def slow_plan(self, first):
    time.sleep(sum(delay))
    return original_plan(self, first)

  monkeypatch.setattr(compiled_resolver.in_place_view.SubgameView, "_build",
                      slow_plan)
  whole.next_subgame(infoset, "resolve", seed=1)  # (kernels loaded, untimed)
  del samplers[:]
  now = time.perf_counter()
  built, info = whole.next_subgame(
      infoset, "resolve", move_budget.SetupLimits(deadline=now + 0.5), seed=1)
  assert samplers == [1] and "view" not in info  # in place
  delay.append(0.3)  # the rest at about 76 times the pace: 0.38 s
  with pytest.raises(protocol.CannotResolve, match="ms to its plan"):
    whole.next_subgame(infoset, "resolve", _within(0.5), seed=1)
  assert samplers == [1]
  delay[0] = 0.03  # about 9 times: 34 + 45 ms, past 60 ms, within 500
  with pytest.raises(protocol.CannotResolve, match="ms to its plan"):
    whole.next_subgame(infoset, "resolve", _within(0.06), seed=1)
  now = time.perf_counter()
  built, _ = whole.next_subgame(
      infoset, "resolve",
      move_budget.SetupLimits(deadline=now + 0.06, late_deadline=now + 0.5), seed=1)
  assert samplers == [1, 1] and built is not None
  # The sampler's trace, slow: given up before its structures.
  delay[0] = 0.0
  original_trace = subgame_trace.trace_subgames

  def slow_trace(*args, **kwargs):
    time.sleep(0.3)
    return original_trace(*args, **kwargs)

  monkeypatch.setattr(subgame_trace, "trace_subgames", slow_trace)
  with pytest.raises(protocol.CannotResolve, match="ms to its trace"):
    whole.next_subgame(infoset, "resolve", _within(0.2), seed=1)
  assert samplers == [1, 1]
  monkeypatch.setattr(subgame_trace, "trace_subgames", original_trace)
  # CFR+ likewise: its structures (SubgameCFRPlus) follow the plan.
  whole = compiled_resolver.CompiledResolver.whole_game(tree, keys, 0)
  whole.iterate(5)
  made = _count_instances(monkeypatch, subgame_cfr,
                          "SubgameCFRPlus")
  delay[0] = 0.3
  with pytest.raises(protocol.CannotResolve, match="ms to its plan"):
    whole.next_subgame(int(whole.trace.own_infosets[0]), "resolve",
                       _within(0.5))
  assert not made
  delay[0] = 0.0
  whole.next_subgame(int(whole.trace.own_infosets[0]), "resolve",
                     _within(0.5))
  assert made == [1]
