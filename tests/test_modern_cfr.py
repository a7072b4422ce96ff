"""PCFR+, DCFR+, PDCFR+, HS-DCFR and HS-PCFR+ (cfr/cfr.py) against a plain reference.

The reference below is written from the papers' update rules over OpenSpiel states
(recursive CFR with tables keyed by information-state strings), independently of the
compiled tree and its kernels; both must agree iteration by iteration to 1e-9, on the
current and the average strategy.
"""

import math
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pyspiel
import pytest

import ggp_cr  # pylint: disable=unused-import  (registers the python_* games)
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.cfr import cfr
from ggp_cr.algorithms.cfr import schedules
from ggp_cr.algorithms.cfr import solver_choice
from ggp_cr.algorithms.config import components
from ggp_cr.algorithms.config import registry


def _d(exponent, t):
  """t^e / (t^e + 1), with d(0) = 0 (nothing is cumulated before iteration 1)."""
  if t <= 0:
    return 0.0
  if exponent == math.inf:
    return 1.0
  power = float(t) ** exponent
  return power / (power + 1.0)


def _hs(t, gamma0=30.0, horizon=1000):
  s = min(t, horizon) / horizon
  return 1.0 + 3.0 * s, -1.0 - 2.0 * s, gamma0 - 5.0 * s


def _dot(sigma, values):
  # Summed left to right, as a recursive CFR does (a sum of exactly 0 stays 0).
  total = 0.0
  for p, v in zip(sigma, values):
    total += p * v
  return total


def _matched(regrets):
  positive = np.maximum(regrets, 0.0)
  total = positive.sum()
  return positive / total if total > 0 else np.full(len(regrets), 1.0 / len(regrets))


# Each variant: (regrets R_t from R_{t-1}, r_t and t; strategy sigma_{t+1} from R_t,
# r_t and t; averaging exponent gamma of iteration t).
def _plus(alpha):  # DCFR+ (alpha = inf: PCFR+'s RM+)
  return lambda regrets, instant, t: np.maximum(regrets * _d(alpha, t - 1) + instant, 0.0)


def _hs_dcfr_regrets(regrets, instant, t):
  # The HS paper's Eq. 2: R_t = R_{t-1} d_{t-1}(sign R_{t-1}) + r_t.
  alpha, beta, _ = _hs(t - 1)
  discount = np.where(regrets > 0, _d(alpha, t - 1), _d(beta, t - 1))
  return regrets * discount + instant


VARIANTS = {
    "pcfr+": (_plus(math.inf), lambda r, inst, t: _matched(r + inst), lambda t: 2.0),
    "dcfr+": (_plus(1.5), lambda r, inst, t: _matched(r), lambda t: 4.0),
    "pdcfr+": (_plus(2.3), lambda r, inst, t: _matched(r * _d(2.3, t) + inst),
               lambda t: 5.0),
    "hs-dcfr": (_hs_dcfr_regrets, lambda r, inst, t: _matched(r), lambda t: _hs(t)[2]),
    "hs-pcfr+": (_plus(math.inf), lambda r, inst, t: _matched(r + inst),
                 lambda t: _hs(t)[2]),
}


class _Reference:
  """Tabular CFR over OpenSpiel states with one of VARIANTS' update rules."""

  def __init__(self, game, variant, alternating=True):
    self.game = game
    self.update_regrets, self.next_strategy, self.gamma = VARIANTS[variant]
    self.alternating = alternating
    self.regrets, self.instant, self.sums, self.sigma = {}, {}, {}, {}
    self.t = 0

  def _table(self, key, count):
    if key not in self.sigma:
      self.regrets[key] = np.zeros(count)
      self.instant[key] = np.zeros(count)
      self.sums[key] = np.zeros(count)
      self.sigma[key] = np.full(count, 1.0 / count)

  def _walk(self, state, player, own, others):
    """Player `player`'s value; adds its instantaneous regrets and reach-weighted
    strategies (own: its reach; others: the opponent's times chance's)."""
    if state.is_terminal():
      return state.returns()[player]
    if state.is_chance_node():
      return sum(p * self._walk(state.child(a), player, own, others * p)
                 for a, p in state.chance_outcomes())
    mover = state.current_player()
    key = state.information_state_string(mover)
    actions = state.legal_actions()
    self._table(key, len(actions))
    sigma = self.sigma[key]
    if mover == player:
      values = np.array([self._walk(state.child(a), player, own * p, others)
                         for a, p in zip(actions, sigma)])
      value = _dot(sigma, values)
      self.instant[key] += others * (values - value)
      self.sums[key] += own * sigma
      return value
    values = np.array([self._walk(state.child(a), player, own, others * p)
                       for a, p in zip(actions, sigma)])
    return _dot(sigma, values)

  def iterate(self):
    self.t += 1
    t = self.t
    decay = ((t - 1) / t) ** self.gamma(t)  # S_t = S_{t-1} ((t-1)/t)^gamma + ...
    groups = [[0], [1]] if self.alternating else [[0, 1]]
    for players in groups:
      for key in self.sums:
        if self._player_of(key) in players:
          self.sums[key] *= decay
      for p in players:
        self._walk(self.game.new_initial_state(), p, 1.0, 1.0)
      for key in list(self.sigma):
        if self._player_of(key) in players:
          instant = self.instant[key]
          self.regrets[key] = self.update_regrets(self.regrets[key], instant, t)
          self.sigma[key] = self.next_strategy(self.regrets[key], instant, t)
          self.instant[key] = np.zeros(len(instant))

  def _player_of(self, key):
    return self._owners[key]

  def prepare(self):
    """Records every information set's owner (tables appear on the first walk; the
    sums of information sets first met in a later group start at 0 either way)."""
    self._owners = {}
    stack = [self.game.new_initial_state()]
    while stack:
      state = stack.pop()
      if state.is_terminal():
        continue
      if not state.is_chance_node():
        mover = state.current_player()
        key = state.information_state_string(mover)
        self._owners[key] = mover
        self._table(key, len(state.legal_actions()))
      stack.extend(state.child(a) for a in state.legal_actions())
    return self


def _rows(tabular, table, normalise):
  """(ours, reference) probabilities of every information set, stacked."""
  ours, theirs = [], []
  for key, row in tabular.state_lookup.items():
    legal = np.flatnonzero(tabular.legal_actions_mask[row])
    ours.append(tabular.action_probability_array[row][legal])
    theirs.append(_normalised(table[key]) if normalise else table[key])
  return np.concatenate(ours), np.concatenate(theirs)


def _normalised(sums):
  total = sums.sum()
  return sums / total if total > 0 else np.full(len(sums), 1.0 / len(sums))


SOLVERS = {
    "pcfr+": cfr.PCFRPlusSolver,
    "dcfr+": cfr.DCFRPlusSolver,
    "pdcfr+": cfr.PDCFRPlusSolver,
    "hs-dcfr": cfr.HSDCFRSolver,
    "hs-pcfr+": cfr.HSPCFRPlusSolver,
}

GAMES = ["kuhn_poker", "python_leduc(cards_per_suit=2,max_raises=1)",
         "python_ii_goofspiel(num_cards=3)"]


def _assert_equal_runs(game_string, ours, reference, iterations):
  for _ in range(iterations):
    ours.evaluate_and_update_policy()
    reference.iterate()
    mine, theirs = _rows(ours.current_policy(), reference.sigma, False)
    np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-9,
                               err_msg=f"{game_string} current, t={reference.t}")
    mine, theirs = _rows(ours.average_policy(), reference.sums, True)
    np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-9,
                               err_msg=f"{game_string} average, t={reference.t}")


@pytest.mark.parametrize("game_string", GAMES)
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_equals_plain_reference_iteration_by_iteration(variant, game_string):
  game = pyspiel.load_game(game_string)
  _assert_equal_runs(game_string, SOLVERS[variant](game),
                     _Reference(game, variant).prepare(), 25)


@pytest.mark.parametrize("variant", ["pcfr+", "pdcfr+"])
def test_simultaneous_updates_equal_plain_reference(variant):
  game = pyspiel.load_game("kuhn_poker")
  _assert_equal_runs("kuhn_poker", SOLVERS[variant](game, alternating_updates=False),
                     _Reference(game, variant, alternating=False).prepare(), 25)


def test_short_hs_horizon_holds_the_schedule_at_its_end():
  # Past the horizon the exponents stay at their t = n values (schedules.py).
  schedule = schedules.HyperparameterSchedule(30.0, 10)
  assert schedule.at(10) == schedule.at(11) == (4.0, -3.0, 25.0)
  assert schedule.at(5) == (2.5, -2.0, 27.5)


@pytest.mark.slow
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_equals_plain_reference_on_leduc_poker(variant):
  game = pyspiel.load_game("leduc_poker")
  _assert_equal_runs("leduc_poker", SOLVERS[variant](game),
                     _Reference(game, variant).prepare(), 5)


@pytest.mark.parametrize("spec, expected", [
    ("pcfr+", "PCFRPlus(rm=prm+, updates=alternating, cse=2)"),
    ("pcfr+(updates=simultaneous)", "PCFRPlus(rm=prm+, updates=simultaneous, cse=2)"),
    ("dcfr+", "DCFRPlus(rm=drm+(1.5), updates=alternating, cse=4)"),
    ("pdcfr+", "PDCFRPlus(rm=pdrm+(2.3), updates=alternating, cse=5)"),
    ("pdcfr+(alpha=2,gamma=3)", "PDCFRPlus(rm=pdrm+(2), updates=alternating, cse=3)"),
    ("hs-dcfr(gamma0=15,horizon=500)",
     "HSDCFR(rm=drm(1,-1), updates=alternating, "
     "schedule=hs(gamma0=15,horizon=500))"),
    ("hs-pcfr+", "HSPCFRPlus(rm=prm+, updates=alternating, "
                 "schedule=hs(gamma0=30,horizon=1000,gamma only))"),
    ("cfr(rm=prm+,cse=2,updates=alternating)",
     "GeneralCFR(rm=prm+, updates=alternating, cse=2)"),
])
def test_registry_builds_the_new_solvers(spec, expected):
  solver = registry.make_solver(spec, pyspiel.load_game("kuhn_poker"))
  assert repr(solver).replace("Solver(", "(") == expected


def test_registry_general_form_equals_named_solver():
  game = pyspiel.load_game("kuhn_poker")
  named = registry.make_solver("pdcfr+", game)
  general = registry.make_solver("cfr(rm=pdrm+(2.3),cse=5,updates=alternating)", game)
  named.iterate(20)
  general.iterate(20)
  np.testing.assert_array_equal(named.average_strategy_slots(),
                                general.average_strategy_slots())


@pytest.mark.parametrize("spec, fragment", [
    ("os_mccfr(rm=prm+)", "full-width"),
    ("es_mccfr(rm=drm+(1))", "full-width"),
    ("cfr(rm=pdrm+)", "one exponent"),
    ("cfr(rm=drm+(-1))", "must be in"),
    ("hs-dcfr(gamma0=5)", "> 5"),
    ("hs-pcfr+(horizon=0)", "horizon"),
])
def test_bad_specs_say_what_is_accepted(spec, fragment):
  with pytest.raises(ValueError, match=fragment):
    registry.make_solver(spec, pyspiel.load_game("kuhn_poker"))


def test_sampling_matchers_refuse_full_width_kinds():
  matcher = components.RegretMatcher(kind=components.PDRM_PLUS)
  with pytest.raises(ValueError, match="full-width"):
    components.parse_regret_matcher(matcher)
  assert components.parse_full_width_matcher("prm+") == matcher


def test_resumed_run_continues_as_uninterrupted():
  tree = cfr.as_compiled_tree("kuhn_poker")
  for make in (cfr.PDCFRPlusSolver, cfr.HSDCFRSolver, cfr.HSPCFRPlusSolver):
    straight, first = make(tree), make(tree)
    straight.iterate(30)
    first.iterate(13)
    resumed = make(tree)
    resumed.load_state_dict(first.state_dict())
    resumed.iterate(17)
    np.testing.assert_allclose(resumed.average_strategy_slots(),
                               straight.average_strategy_slots(), rtol=0, atol=1e-12)


def _liteefg_run(baseline, game, solver, iterations):
  """Runs LiteEFG's `baseline` graph and `solver` side by side on `game`; yields
  (LiteEFG's average TabularPolicy, ours) after each iteration. PCFR+ and CFR+ there
  average with weights t in the environment (their train() records the strategy
  after the update, a shift by one iteration; recorded before it here, as ours
  averages); DCFR keeps its t^gamma average in its graph."""
  leg = pytest.importorskip("LiteEFG")
  env = leg.OpenSpielEnv(game, traverse_type="Enumerate", regenerate=False)
  graph = baseline()
  env.set_graph(graph)
  in_graph = baseline.__module__.endswith("DCFR")
  for _ in range(iterations):
    if not in_graph:
      env.update_strategy(graph.current_strategy(), update_best=False)
    graph.update_graph(env)
    solver.evaluate_and_update_policy()
    if in_graph:
      node = graph.current_strategy("average-iterate")
      env.update_strategy(node, update_best=False)
      theirs = env.get_strategy(node, "last-iterate")[0]
    else:
      theirs = env.get_strategy(graph.current_strategy(), "linear-avg-iterate")[0]
    yield theirs, solver.average_policy()


@pytest.mark.parametrize("game_string", ["kuhn_poker", "leduc_poker"])
@pytest.mark.parametrize("name", ["PCFR", "DCFR", "CFRplus"])
def test_average_strategy_equals_liteefg(name, game_string, tmp_path, monkeypatch):
  # LiteEFG (a bench extra, skipped when absent) defines PCFR+ with linear
  # averaging (our pcfr+(gamma=1)), DCFR(1.5, 0, 2) and CFR+ as we do.
  pytest.importorskip("LiteEFG")
  baselines = pytest.importorskip(f"LiteEFG.baselines.{name}")
  monkeypatch.chdir(tmp_path)  # LiteEFG writes the game's file in the working directory
  game = pyspiel.load_game(game_string)
  solver = {"PCFR": lambda: cfr.PCFRPlusSolver(game, gamma=1.0),
            "DCFR": lambda: cfr.DCFRSolver(game),
            "CFRplus": lambda: cfr.CFRPlusSolver(game)}[name]()
  for t, (theirs, ours) in enumerate(_liteefg_run(baselines.graph, game, solver, 20), 1):
    difference = max(np.abs(theirs.policy_for_key(key) - ours.policy_for_key(key)).max()
                     for key in ours.state_lookup)
    assert difference < 1e-9, (name, game_string, t)


def _iterations_to(spec, game_string, epsilon):
  """Iterations (on a grid growing by 5%) until `spec`'s average strategy has
  exploitability <= epsilon."""
  tree = cfr.as_compiled_tree(game_string)
  solver = registry.make_solver(spec, tree)
  while True:
    solver.iterate(max(1, solver.iterations // 20))
    slots = solver.average_strategy_slots()
    if exact_br.nash_conv_slots(tree, slots).nash_conv / 2 <= epsilon:
      return solver.iterations


@pytest.mark.parametrize("game_string, epsilon, expected", [
    ("kuhn_poker", 1e-5, "dcfr"),
    ("leduc_poker", 1e-3, "dcfr"),
    ("python_ii_goofspiel(num_cards=4)", 1e-5, "pdcfr+"),
    ("python_ii_goofspiel(num_cards=4)", 1e-7, "hs-pcfr+"),
    ("python_princess_monster(max_turns=6)", 1e-5, "pcfr+"),  # 72,531 nodes
])
def test_auto_rule(game_string, epsilon, expected):
  tree = cfr.as_compiled_tree(game_string)
  assert solver_choice.choose(tree, epsilon)[0] == expected
  auto = registry.make_solver(f"auto(eps={epsilon!r})", tree)
  assert type(auto) is type(registry.make_solver(expected, tree))


@pytest.mark.parametrize("epsilon", [1e-5, 1e-7])
def test_auto_rule_picks_pcfr_plus_on_a_large_game_without_chance(monkeypatch, epsilon):
  tree = cfr.as_compiled_tree("python_ii_goofspiel(num_cards=4)")
  monkeypatch.setattr(solver_choice, "LARGE_FROM", tree.num_nodes)
  assert solver_choice.choose(tree, epsilon)[0] == "pcfr+"
  monkeypatch.setattr(solver_choice, "LARGE_FROM", tree.num_nodes + 1)
  assert solver_choice.choose(tree, epsilon)[0] != "pcfr+"
  # A game with chance keeps dcfr at any size.
  leduc = cfr.as_compiled_tree("leduc_poker")
  monkeypatch.setattr(solver_choice, "LARGE_FROM", 1)
  assert solver_choice.choose(leduc, epsilon)[0] == "dcfr"


def test_auto_rule_choices_are_registry_strings():
  for name in solver_choice.CHOICES:
    registry.parse_solver(name)


def test_auto_rule_refuses_a_nonpositive_target():
  with pytest.raises(ValueError, match="> 0"):
    solver_choice.choose(cfr.as_compiled_tree("kuhn_poker"), 0.0)


@pytest.mark.parametrize("game_string, epsilon, others", [
    ("python_ii_goofspiel(num_cards=4)", 1e-5, ["dcfr", "cfr+", "pcfr+"]),
    pytest.param("leduc_poker", 1e-4, ["pdcfr+", "cfr+", "pcfr+"],
                 marks=pytest.mark.slow),
])
def test_auto_choice_needs_fewer_iterations_than_the_others(game_string, epsilon, others):
  # The rule's premise on one game of each kind (solver_choice.py's figures).
  chosen, _ = solver_choice.choose(cfr.as_compiled_tree(game_string), epsilon)
  mine = _iterations_to(chosen, game_string, epsilon)
  for other in others:
    assert mine < _iterations_to(other, game_string, epsilon), other


def test_solve_example_says_what_auto_chose(tmp_path):
  result = subprocess.run(
      [sys.executable, "-m", "ggp_cr.examples.solve", "--game=kuhn_poker",
       "--solver=auto(eps=1e-3)", "--iterations=8", f"--output_dir={tmp_path}"],
      capture_output=True, text=True, timeout=300, check=False)
  assert result.returncode == 0, result.stderr
  assert "auto chose GeneralCFRSolver(rm=drm(1.5,0), updates=alternating, cse=2)" in \
      result.stdout


def test_time_to_epsilon_benchmark_prints_table_csv_plot_and_ratios(tmp_path):
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  result = subprocess.run(
      [sys.executable, os.path.join(root, "benchmarks", "time_to_epsilon.py"),
       "--games=kuhn_poker", "--solvers=pdcfr+,cfr+", "--peers=openspiel_cpp_cfr_plus",
       "--targets=1e-2,1e-4", "--cap=5", "--openspiel_cap_factor=3",
       f"--output_dir={tmp_path}"],
      capture_output=True, text=True, timeout=300, check=False,
      env=dict(os.environ, PYTHONPATH=root))
  assert result.returncode == 0, result.stderr
  lines = result.stdout.strip().splitlines()
  assert lines[-1] == "ratio: nan"  # no LiteEFG peer asked for
  openspiel = float(lines[-2].removeprefix("OpenSpiel C++ ratio: "))
  assert openspiel >= 3.0  # OpenSpiel's CFR+ needs as many iterations, each slower
  frame = pd.read_csv(tmp_path / "time_to_epsilon.csv")
  assert sorted(set(frame["solver"])) == ["cfr+", "openspiel_cpp_cfr_plus", "pdcfr+"]
  assert frame[frame["solver"] == "pdcfr+"]["reached"].all()
  assert len(list(tmp_path.glob("kuhn_poker-*.png"))) == 1


def test_time_to_epsilon_derived_peer_times_use_the_twins_iterations(tmp_path):
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  result = subprocess.run(
      [sys.executable, os.path.join(root, "benchmarks", "time_to_epsilon.py"),
       "--games=kuhn_poker", "--solvers=dcfr,cfr+", "--peers=openspiel_cpp_cfr_plus",
       "--targets=1e-2,1e-3", "--cap=5", "--peer_times=derived", "--peer_sample=0.1",
       "--plot=false", f"--output_dir={tmp_path}"],
      capture_output=True, text=True, timeout=300, check=False,
      env=dict(os.environ, PYTHONPATH=root))
  assert result.returncode == 0, result.stderr
  assert "derived: cfr+'s iterations" in result.stdout
  frame = pd.read_csv(tmp_path / "time_to_epsilon.csv").set_index(["solver", "target"])
  peer, twin = frame.loc["openspiel_cpp_cfr_plus"], frame.loc["cfr+"]
  assert peer["derived"].all() and not twin["derived"].any()
  assert list(peer["iterations"]) == list(twin["iterations"])
  assert (peer["seconds"] > 0).all()
  assert not list(tmp_path.glob("*.png"))
  # --combine recomputes the ratio lines from the CSV alone.
  combined = subprocess.run(
      [sys.executable, os.path.join(root, "benchmarks", "time_to_epsilon.py"),
       f"--combine={tmp_path / 'time_to_epsilon.csv'}"],
      capture_output=True, text=True, timeout=300, check=False,
      env=dict(os.environ, PYTHONPATH=root))
  assert combined.returncode == 0, combined.stderr
  assert combined.stdout.strip().splitlines()[-2:] == \
      result.stdout.strip().splitlines()[-2:]
  assert "kuhn_poker at 0.001: OpenSpiel C++" in combined.stdout


def _time_to_epsilon(tmp_path, *flags_):
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  return subprocess.run(
      [sys.executable, os.path.join(root, "benchmarks", "time_to_epsilon.py"),
       *flags_, "--plot=false", f"--output_dir={tmp_path}"],
      capture_output=True, text=True, timeout=300, check=False,
      env=dict(os.environ, PYTHONPATH=root))


@pytest.mark.parametrize("race_below, derived", [(0, True), (1e9, False)])
def test_time_to_epsilon_auto_solver_and_auto_peer_times(tmp_path, race_below, derived):
  # --solvers=auto runs the solver choose() picks, under its own name; with
  # --peer_times=auto a peer races if its cap is within --race_below, else derived.
  result = _time_to_epsilon(
      tmp_path, "--games=kuhn_poker", "--solvers=auto,dcfr",
      "--peers=openspiel_cpp_cfr_plus", "--targets=1e-2,1e-3", "--cap=5",
      "--openspiel_cap_factor=2", "--peer_times=auto", f"--race_below={race_below}",
      "--peer_sample=0.1")
  assert result.returncode == 0, result.stderr
  chosen, _ = solver_choice.choose(cfr.as_compiled_tree("kuhn_poker"), 1e-3)
  assert f"auto chose {chosen} at 0.001" in result.stdout
  assert ("derived: ['openspiel_cpp_cfr_plus']" in result.stdout) == derived
  frame = pd.read_csv(tmp_path / "time_to_epsilon.csv")
  assert sorted(set(frame["solver"])) == sorted({chosen, "dcfr", "openspiel_cpp_cfr_plus"})
  assert list(frame[frame["solver"] == "openspiel_cpp_cfr_plus"]["derived"]) == \
      [derived] * 2


def test_time_to_epsilon_refuses_a_negative_race_below(tmp_path):
  result = _time_to_epsilon(tmp_path, "--games=kuhn_poker", "--race_below=-1")
  assert result.returncode != 0
  assert "--race_below must be >= 0, got -1.0." in result.stderr


def test_time_to_epsilon_repeats_ours_and_keeps_the_median_run(tmp_path):
  # --repeats runs each of ours that many times (a run within --repeat_below) and
  # keeps the run of median time; the derived column stays false for ours.
  result = _time_to_epsilon(
      tmp_path, "--games=kuhn_poker", "--solvers=cfr+", "--peers=none",
      "--targets=1e-2,1e-3", "--cap=5", "--repeats=3")
  assert result.returncode == 0, result.stderr
  line = next(l for l in result.stdout.splitlines() if l.strip().startswith("cfr+"))
  times = [float(t) for t in line.split("median of 3 runs: ")[1].split(" s]")[0]
           .split(", ")]
  assert len(times) == 3
  frame = pd.read_csv(tmp_path / "time_to_epsilon.csv").set_index("target")
  assert not frame["derived"].any()
  kept = frame.loc[1e-3, "seconds"]
  assert kept == pytest.approx(sorted(times)[1], rel=5e-3)  # (printed to 3 digits)
  single = _time_to_epsilon(
      tmp_path / "one", "--games=kuhn_poker", "--solvers=cfr+", "--peers=none",
      "--targets=1e-2,1e-3", "--cap=5", "--repeats=1")
  assert single.returncode == 0, single.stderr
  assert "median of" not in single.stdout
  bad = _time_to_epsilon(tmp_path / "bad", "--games=kuhn_poker", "--repeats=0")
  assert bad.returncode != 0 and "--repeats must be >= 1" in bad.stderr
