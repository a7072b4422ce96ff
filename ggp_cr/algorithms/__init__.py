"""ggp_cr's algorithms: they take any pyspiel game and return OpenSpiel policies and bots."""

from ggp_cr.algorithms.game_size import game_size
from ggp_cr.algorithms.best_response import exploitability, nash_conv
# Modules (not their same-named functions, which would shadow the modules):
from ggp_cr.algorithms import pruned_best_response, ismcts_best_response
from ggp_cr.algorithms.online_solving import OnlineSolvingBot, OOSBot
