"""ggp_cr's algorithms: they take any pyspiel game and return OpenSpiel policies and bots."""

from ggp_cr.algorithms.game_size import game_size
from ggp_cr.algorithms.best_response import exploitability, nash_conv
from ggp_cr.algorithms.pruned_br import pruned_best_response
from ggp_cr.algorithms.ismcts_br import ismcts_best_response
from ggp_cr.algorithms.online_solving import OnlineSolvingBot, OOSBot
from ggp_cr.algorithms.continual_resolving import ContinualResolvingBot
from ggp_cr.algorithms.cfr import (CFRPlusSolver, CFRSolver, DCFRSolver, GeneralCFRSolver,
                                  LCFRSolver)
from ggp_cr.algorithms.players import Budget, make_bot, parse_player
from ggp_cr.algorithms.evaluators import game_playing_evaluation, traversing_evaluation
