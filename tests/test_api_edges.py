"""API edges and newcomer traps (issue 43, findings 5 and 7): bad iteration counts,
seats and states given to solvers and bots in code; CLI flags whose errors blamed the
wrong flag or came after OpenSpiel's own stderr lines; one per-move default for
every online player."""

import collections
import concurrent.futures
import os
import subprocess
import sys

import numpy as np
import pyspiel
import pytest

import fuzz_support
import ggp_cr  # pylint: disable=unused-import
from ggp_cr.algorithms.bots import players
from ggp_cr.algorithms.config import limits
from ggp_cr.algorithms.config import openspiel_errors
from ggp_cr.algorithms.config import registry
from ggp_cr.algorithms.resolving import continual_resolving


BAD_COUNTS = [-5, -1, 2.5, 2.0, True, False, "3", None, np.float64(1), 10**13]
ONLINE_PLAYERS = ["cr", "oos", "online_solving", "ismcts"]


def _our_solvers():
  """One instance of every solver class with an `iterate`: the registry's (ours),
  the online players' (live and compiled) and continual resolving's subgame solvers."""
  game = pyspiel.load_game("kuhn_poker")
  solvers = [registry.make_solver(name, game, 0) for name in registry.solver_names()
             if not name.startswith("openspiel_")]
  for spec in ("oos(compiled=true)", "oos(compiled=false)"):
    solvers.append(registry.make_bot(spec, game, 0, 0, limits.Budget.parse("0", "2it"))
                   .solver)
  for path in ("compiled", "live"):
    for solver in ("cfr+", "vr_mccfr"):
      bot = continual_resolving.ContinualResolvingBot(game, 0, move="2it",
                                                      solver=solver, path=path)
      state = game.new_initial_state()
      state.apply_action(0)
      state.apply_action(1)
      bot.step(state)
      solvers.append(bot.resolver.solver)
  return solvers


def test_fuzz_iterate_counts():
  tally = collections.Counter()
  kinds = set()
  for solver in _our_solvers():
    kinds.add(type(solver).__name__)
    for count in BAD_COUNTS:
      before = solver.iterations
      with pytest.raises(ValueError, match=r"num_iterations must be an integer in \[0"):
        solver.iterate(count)
      assert solver.iterations == before, (type(solver).__name__, count)
      tally["refused"] += 1
    before = solver.iterations
    solver.iterate(0)
    solver.iterate(np.int64(1))
    assert solver.iterations == before + 1, type(solver).__name__
    tally["ok"] += 2
  assert {"GeneralCFRSolver", "OutcomeSamplingSolver", "CompiledOutcomeSamplingSolver",
          "FullWidthSolver", "SamplingSolver", "CompiledResolver"} <= kinds, kinds
  fuzz_support.report("iterate counts", tally)


BOT_NAMES = ["random", "solver(iterations=5)", "ismcts(simulations=5)", "oos",
             "online_solving", "cr(solver=cfr+)"]
BUDGET = limits.Budget.parse("0", "5it")


def test_fuzz_bot_seats():
  game = pyspiel.load_game("kuhn_poker")
  tally = collections.Counter()
  for name in BOT_NAMES:
    for seat in (True, False, -1, 2, 0.0, "0", None):
      with pytest.raises(ValueError, match="player_id must be a seat"):
        registry.make_bot(name, game, seat, 0, BUDGET)
      tally["refused"] += 1
    registry.make_bot(name, game, np.int64(1), 0, BUDGET)
    tally["ok"] += 1
  fuzz_support.report("bot seats", tally)


def test_fuzz_bot_states():
  game = pyspiel.load_game("kuhn_poker")
  tally = collections.Counter()
  for name in BOT_NAMES:
    bot = registry.make_bot(name, game, 0, 0, BUDGET)
    chance = game.new_initial_state()
    terminal = game.new_initial_state()
    for action in (0, 1, 0, 0):  # deal, deal, pass, pass
      terminal.apply_action(action)
    for state, word in ((chance, "chance node"), (terminal, "terminal")):
      with pytest.raises(ValueError, match=word):
        bot.step(state)
      tally[f"{word} refused"] += 1
  tic_tac_toe = pyspiel.load_game("tic_tac_toe")
  bot = registry.make_bot("mcts(simulations=5)", tic_tac_toe, 1, 0)
  with pytest.raises(ValueError, match="player 0's turn, not player 1's"):
    bot.step(tic_tac_toe.new_initial_state())
  human = players.HumanBot(game, 0, read=lambda prompt: pytest.fail(prompt),
                           write=lambda text: None)
  with pytest.raises(ValueError, match="terminal"):
    human.step(terminal)
  fuzz_support.report("bot states", tally)


def test_openspiel_error_lines_are_not_printed_before_ours(capfd):
  for text in ["kuhn_poker(", "kuhn_poker(players=x)", "leduc_poker(nope=1)"]:
    with pytest.raises(ValueError, match="Cannot load game"):
      registry.load_game(text)
  # liars_dice's states do not implement ResampleFromInfostate: ismcts finds out.
  registry.make_bot("ismcts(simulations=2)", pyspiel.load_game("liars_dice"), 0, 0)
  assert capfd.readouterr().err == ""
  # What a block writes to stderr is kept when it does not raise.
  with openspiel_errors.quiet():
    os.write(2, b"kept\n")
  assert capfd.readouterr().err == "kept\n"


def test_online_players_share_one_default_budget():
  game = pyspiel.load_game("kuhn_poker")
  state = game.new_initial_state()
  state.apply_action(0)
  state.apply_action(1)
  for budget in (limits.Budget(), limits.Budget.parse("0", "0")):
    for name in ONLINE_PLAYERS:
      bot = registry.make_bot(name, game, 0, 0, budget)
      if name == "ismcts":
        simulations = bot._max_simulations  # pylint: disable=protected-access
        assert simulations == 1000
        continue
      bot.step(state)
      done = (bot.decisions[-1]["iterations"] if name == "cr" else
              bot.iterations_per_move[-1])
      assert done == 1000, name
  assert str(limits.DEFAULT_MOVE) == "1000it"  # the default play's --help documents


EDGE_CLI_CASES = [
    # (module, flags, exit code, text the error must hold, text it must not hold)
    ("tournament", ["--game=kuhn_poker", "--player=random", "--self_play", "--output="],
     1, "--output must be a file path", "PosixPath"),
    ("tournament", ["--game=kuhn_poker", "--player=random", "--self_play",
                    "--output={blocked}"], 1,
     "--output", "--plot"),
    ("evaluate", ["--game=kuhn_poker", "--player=random", "--output="], 1,
     "--output must be a file path", "PosixPath"),
    ("cr_exploitability", ["--game=kuhn_poker", "--output="], 1,
     "--output must be a file path", "PosixPath"),
    ("play", ["--game=kuhn_poker("], 1, "Missing closing bracket", "OpenSpiel exception"),
    ("best_response", ["--game=kuhn_poker("], 1, "Missing closing bracket",
     "OpenSpiel exception"),
    ("game_info", ["--game=goofspiel"], 1, "--turn_based", "load_game_as_turn_based"),
    ("play", ["--game=kuhn_poker", "--player0=oos", "--player1=online_solving"], 0, "",
     "zero"),
    ("tournament", ["--game=kuhn_poker", "--player=oos", "--player=random",
                    "--matches=1", "--workers=1", "--preplay=0", "--move=0",
                    "--output={tmp}/t.csv"], 0, "", "zero"),
]


def test_fuzz_cli_edges(tmp_path):
  env = dict(os.environ, PYTHONPATH=fuzz_support.REPO)
  (tmp_path / "file").write_text("a file where a folder should be")
  blocked = tmp_path / "file" / "t.csv"

  def run(index):
    module, flags, *_ = EDGE_CLI_CASES[index]
    flags = [f.format(blocked=blocked, tmp=tmp_path) for f in flags]
    if module == "best_response":
      flags.append(f"--output_dir={tmp_path / str(index)}")
    try:
      return subprocess.run(
          [sys.executable, "-m", f"ggp_cr.examples.{module}", *flags],
          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
          env=env, timeout=120)
    except subprocess.TimeoutExpired:
      return None

  with concurrent.futures.ThreadPoolExecutor(3) as pool:
    results = list(pool.map(run, range(len(EDGE_CLI_CASES))))
  wrong = []
  for (module, flags, expected_code, holds, lacks), result in zip(EDGE_CLI_CASES,
                                                                   results):
    if result is None:
      wrong.append(((module, *flags), "hang"))
      continue
    stderr = result.stderr
    one_line = len(stderr.strip().splitlines()) == 1
    if (result.returncode != expected_code or holds not in stderr or lacks in stderr or
        (expected_code and not one_line)):
      wrong.append(((module, *flags), result.returncode, stderr[-800:]))
  assert not wrong, "\n".join(map(str, wrong))
  fuzz_support.report("CLI edges", collections.Counter(
      "refused in one line" if result.returncode else "played" for result in results))
