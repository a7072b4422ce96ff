"""Tests of external sampling, Meyer's mixed ES/OS sampling and the sampling registry."""

import numpy as np
from open_spiel.python.algorithms import external_sampling_mccfr
import pyspiel
import pytest

import ggp_cr.games  # pylint: disable=unused-import
from ggp_cr.algorithms import contracts
from ggp_cr.algorithms.best_response import exact_br
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.sampling import external_sampling
from ggp_cr.algorithms.tree import compiled_tree


def _exploitability(game, solver):
  tree = compiled_tree.cached_tree(game)
  return exact_br.exploitability_slots(tree,
                                            solver.average_policy().to_slots(tree))


def _run(solver, iterations):
  for _ in range(iterations):
    solver.iteration()
  return solver


SOLVERS = {
    "es": lambda game, n: external_sampling.ExternalSamplingSolver(game, seed=1),
    "linear": lambda game, n: external_sampling.MixedSamplingSolver(
        game, "linear", num_iterations=n, seed=1),
    "linear_per_node": lambda game, n: external_sampling.MixedSamplingSolver(
        game, "linear", num_iterations=n, per_node=True, exploration=0.5, seed=1),
    "exponential": lambda game, n: external_sampling.MixedSamplingSolver(
        game, "exponential", half_life=n / 4, seed=1),
    "custom": lambda game, n: external_sampling.MixedSamplingSolver(
        game, lambda i: 0.8, seed=1),
    "locus_iteration": lambda game, n: external_sampling.LocusSamplingSolver(
        game, "iteration", num_iterations=n, seed=1),
    "locus_exponential": lambda game, n: external_sampling.LocusSamplingSolver(
        game, "exponential", half_life=n / 4, seed=1),
    "locus_visits": lambda game, n: external_sampling.LocusSamplingSolver(
        game, "visits", visit_threshold=20, seed=1),
}


@pytest.mark.parametrize("game_string,iterations", [
    ("kuhn_poker", 400),
    ("python_ii_goofspiel(num_cards=3)", 200),
    ("python_princess_monster(max_turns=2)", 800),
])
@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_exploitability_falls_well_below_uniform(game_string, iterations, name):
  game = pyspiel.load_game(game_string)
  tree = compiled_tree.cached_tree(game)
  uniform = exact_br.exploitability_slots(tree, tree.uniform_slots())
  solver = _run(SOLVERS[name](game, iterations), iterations)
  assert _exploitability(game, solver) < 0.5 * uniform


def test_rps_stays_near_its_uniform_equilibrium():
  game = pyspiel.load_game("python_rps")
  for name in ("es", "linear"):
    solver = _run(SOLVERS[name](game, 500), 500)
    assert _exploitability(game, solver) < 0.1


def test_es_same_order_of_magnitude_as_openspiel_on_leduc():
  game = pyspiel.load_game("leduc_poker")
  iterations = 150
  ours, theirs = [], []
  for seed in range(3):
    ours.append(_exploitability(game, _run(
        external_sampling.ExternalSamplingSolver(game, seed=seed), iterations)))
    np.random.seed(seed)
    reference = _run(external_sampling_mccfr.ExternalSamplingSolver(game), iterations)
    theirs.append(exact_br.exploitability(game, reference.average_policy()))
  ratio = np.median(ours) / np.median(theirs)
  assert 1 / 3 < ratio < 3, (ours, theirs)


def test_schedules_decide_the_share_of_outcome_sampled_nodes():
  game = pyspiel.load_game("kuhn_poker")
  es = _run(external_sampling.MixedSamplingSolver(game, "es", seed=0), 100)
  assert es.outcome_nodes == 0 and es.external_nodes > 0
  pure_os = _run(external_sampling.MixedSamplingSolver(game, "os", seed=0), 100)
  assert pure_os.external_nodes == 0 and pure_os.outcome_nodes > 0
  # Per iteration, ES iterations touch more histories than OS ones.
  assert es.nodes_touched > 1.2 * pure_os.nodes_touched
  linear = _run(external_sampling.MixedSamplingSolver(
      game, "linear", num_iterations=400, per_node=True, seed=0), 400)
  share = linear.outcome_nodes / (linear.outcome_nodes + linear.external_nodes)
  assert 0.35 < share < 0.65  # f(i) = 1 - i/I averages 1/2 over the run


def test_linear_and_exponential_schedules():
  linear = external_sampling.make_schedule("linear", num_iterations=100)
  assert linear(1) == pytest.approx(0.99) and linear(50) == 0.5 and linear(100) == 0
  exponential = external_sampling.make_schedule("exponential", half_life=10)
  assert exponential(10) == pytest.approx(0.5)
  assert exponential(30) == pytest.approx(0.125)


def test_locus_confidence_criteria():
  game = pyspiel.load_game("kuhn_poker")
  before = _run(external_sampling.LocusSamplingSolver(
      game, "iteration", num_iterations=1000, seed=0), 300)
  assert before.outcome_nodes == 0  # not yet at I/2
  never = _run(external_sampling.LocusSamplingSolver(
      game, "visits", visit_threshold=10**9, seed=0), 300)
  assert never.outcome_nodes == 0
  visits = _run(external_sampling.LocusSamplingSolver(
      game, "visits", visit_threshold=10, seed=0), 3000)
  assert visits.outcome_nodes > 0


def test_uniform_exploration_keeps_outcome_sampling_unbiased():
  """Pure OS with exploration (Meyer's lambda) 1 samples the updated player's actions
  uniformly; with the actual sampling probability in the weights it still converges."""
  game = pyspiel.load_game("kuhn_poker")
  solver = _run(external_sampling.MixedSamplingSolver(
      game, "os", exploration=1.0, seed=2), 3000)
  assert _exploitability(game, solver) < 0.1


def test_deterministic_per_seed():
  game = pyspiel.load_game("kuhn_poker")

  def run(seed):
    solver = _run(external_sampling.MixedSamplingSolver(
        game, "linear", num_iterations=200, per_node=True, exploration=0.3,
        seed=seed), 200)
    return {k: d.cumulative.tolist() for k, d in solver.table.items()}

  assert run(3) == run(3)
  assert run(3) != run(4)


@pytest.mark.parametrize("make,match", [
    (lambda g: external_sampling.MixedSamplingSolver(g, "linear"), "num_iterations"),
    (lambda g: external_sampling.MixedSamplingSolver(g, "exponential"), "half_life"),
    (lambda g: external_sampling.MixedSamplingSolver(g, "cubic"), "Schedule"),
    (lambda g: external_sampling.MixedSamplingSolver(g, "os", exploration=-1),
     "Exploration e must be in"),
    (lambda g: external_sampling.LocusSamplingSolver(g, "sometimes"), "criterion"),
    (lambda g: external_sampling.LocusSamplingSolver(g, "visits", visit_threshold=-1),
     "visit_threshold"),
    (lambda g: external_sampling.LocusSamplingSolver(g, "visits", cutoff_beta=(0, 1)),
     "cutoff_beta"),
    (lambda g: _run(external_sampling.MixedSamplingSolver(g, lambda i: 2.0), 1),
     r"f\(i\) must be a probability"),
])
def test_bad_input_is_rejected(make, match):
  with pytest.raises(ValueError, match=match):
    make(pyspiel.load_game("kuhn_poker"))


@pytest.mark.parametrize("spec", [
    "os_mccfr", "os_mccfr(compiled=true,bl=expavg(0.5))", "mc_cfr",
    "vr_mccfr(e=0.7,bl=expavg(0.3),rm=drm(1,1),cse=0.3)", "es_mccfr(rm=rm+)",
    "mixed(schedule=linear,e=0)", "mixed(schedule=exponential,h=4,pernode=true)",
    "locus(criterion=visits,visits=5)", "openspiel_os_mccfr", "openspiel_es_mccfr",
])
def test_registered_sampling_solvers_run(spec):
  game = pyspiel.load_game("kuhn_poker")
  solver = _run(registry.make_solver(spec, game, seed=0), 300)
  policy = contracts.python_average_policy(solver, game)
  assert exact_br.exploitability(game, policy) < 0.3


@pytest.mark.parametrize("spec,match", [
    ("vr_mccfr(e=1.5)", r"'e' must be in \[0, 1\]"),
    ("os_mccfr(delta=-0.1)", r"'delta' must be in \[0, 1\]"),
    ("mixed(e=2)", r"'e' must be in \[0, 1\]"),
    ("mixed(lambda=0.5)", "unknown parameter 'lambda'"),
    ("mixed(schedule=cubic)", "must be one of es, os, linear, exponential"),
    ("locus(fraction=1.5)", r"'fraction' must be in \[0, 1\]"),
    ("os_mccfr(gamma=1)", "unknown parameter 'gamma'.*accepted: rm, e, cse"),
    ("os_mccf", "Unknown solver"),
    ("vr_mccfr(bl=mean)", "Accepted baselines"),
])
def test_registry_rejects_bad_specs(spec, match):
  with pytest.raises(ValueError, match=match):
    registry.parse_solver(spec)
