"""The resolve gadget's Terminate values as the thesis's code computes them
(gadget.prefix.terminate_scale: `terminate_values="cfrplayground"`, `cr(terminate=...)`)."""

import numpy as np
import pytest

import pyspiel

import ggp_cr  # pylint: disable=unused-import  (registers the games)
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.resolving import continual_resolving as cr
from ggp_cr.algorithms.resolving import settings
from ggp_cr.algorithms.resolving.gadget import prefix as gadget_prefix

GAME = "python_ii_goofspiel(num_cards=4)"


def _root_mass(bot):
  """Σ w(r) over the roots of the bot's current subgame (the whole game: 1)."""
  if bot.path == "compiled":
    return bot.resolver.view.total_reach
  return bot.resolver.root_mass


def _opponent_values(bot):
  """The current gadget's opponent values, in the path's own order."""
  if bot.path == "compiled":
    return np.asarray(bot.resolver.view.cbv)
  values = bot.resolver.problem.gadget.subgame.opponent_values
  return np.array([values[key] for key in sorted(values)])


@pytest.mark.parametrize("solver", ["cfr+", "vr_mccfr"])
@pytest.mark.parametrize("path", ["compiled", "live"])
def test_second_resolve_scales_the_values_by_the_first_resolves_mass(solver, path):
  """Two bots, CFR-D's and the thesis code's values, the same seed and history: the
  whole game's solve and the first resolve are the same (scale 1, equal values and
  policies); the second resolve's inputs come from equal solves, and its opponent
  values (so its Terminate payoffs) are the CFR-D ones times the first resolve's
  root mass Σ w(r), which is not 1 here."""
  game = pyspiel.load_game(GAME)
  bots = [cr.ContinualResolvingBot(game, 0, preplay="30it", move="20it", solver=solver,
                                   path=path, seed=5, terminate_values=values)
          for values in ("cfrd", "cfrplayground")]
  assert [bot.path for bot in bots] == [path, path]
  state = game.new_initial_state()
  decisions = 0
  masses = []
  while decisions < 3:
    if state.current_player() == 0:
      policies = [dict(bot.step_with_policy(state)[0]) for bot in bots]
      decisions += 1
      records = [bot.decisions[-1] for bot in bots]
      assert records[0]["new_subgame"] and records[1]["new_subgame"]
      assert "fallback" not in records[0] and "fallback" not in records[1]
      assert "terminate_scale" not in records[0]
      if decisions < 3:
        assert policies[0] == pytest.approx(policies[1], abs=1e-12)
      if decisions == 2:
        assert records[1]["terminate_scale"] == 1.0
        np.testing.assert_array_equal(*(_opponent_values(bot) for bot in bots))
      if decisions == 3:
        first_resolve_mass = masses[-1][1]  # the solve of decision 2's subgame
        assert masses[-1][0] == pytest.approx(first_resolve_mass, rel=1e-12)
        assert abs(first_resolve_mass - 1.0) > 0.1
        assert records[1]["terminate_scale"] == pytest.approx(first_resolve_mass,
                                                              rel=1e-12)
        cfrd, scaled = (_opponent_values(bot) for bot in bots)
        assert np.abs(cfrd).max() > 0
        np.testing.assert_allclose(scaled, first_resolve_mass * cfrd, rtol=1e-12,
                                   atol=1e-15)
      masses.append([_root_mass(bot) for bot in bots])
      # The action both bots' policies give the most (ties: the lowest).
      state.apply_action(max(sorted(policies[1]), key=policies[1].get))
    else:
      state.apply_action(state.legal_actions()[-1])


def test_terminate_scale_is_the_ratio_of_root_masses():
  """gadget_prefix.terminate_scale: 1 for CFR-D's values; the solve's root mass over its
  parent's for the thesis code's (the whole game's solve, mass 1 over 1: 1)."""
  cfrd = settings.ResolverConfig()
  ours = settings.ResolverConfig(terminate_values="cfrplayground")
  assert gadget_prefix.terminate_scale(cfrd, 2.5, 0.5) == 1.0
  assert gadget_prefix.terminate_scale(ours, 1.0, 1.0) == 1.0
  assert gadget_prefix.terminate_scale(ours, 2.5, 0.5) == 5.0
  values = {"a": 1.0, "b": -0.5}
  assert gadget_prefix.scale_values(values, 1.0) is values
  assert gadget_prefix.scale_values(values, 2.0) == {"a": 2.0, "b": -1.0}


@pytest.mark.parametrize("options, message", [
    (dict(terminate_values="java"), "terminate_values must be one of cfrd, cfrplayground"),
    (dict(terminate_values="cfrplayground", variant="max_margin"),
     "accepted with variant 'resolve' only"),
    (dict(terminate_values="cfrplayground", variant="unsafe"),
     "accepted with variant 'resolve' only"),
])
def test_refuses_terminate_values_it_cannot_apply(options, message):
  with pytest.raises(ValueError, match=message):
    cr.ContinualResolvingBot(pyspiel.load_game("kuhn_poker"), 0, **options)


def test_registry_string_sets_the_terminate_values():
  game = pyspiel.load_game("kuhn_poker")
  budget = limits.Budget.parse("5it", "5it")
  bot = registry.make_bot(registry.parse_player("cr(terminate=cfrplayground)"), game, 0,
                          0, budget)
  assert bot.config.terminate_values == "cfrplayground"
  assert registry.make_bot(registry.parse_player("cr"), game, 0, 0,
                           budget).config.terminate_values == "cfrd"
  with pytest.raises(ValueError, match="terminate"):
    registry.parse_player("cr(terminate=exact)")
