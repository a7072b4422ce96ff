"""ggp_cr: an OpenSpiel plugin for general game playing in two-player zero-sum games.

Importing the package registers its games with pyspiel:

  import ggp_cr
  game = pyspiel.load_game("python_princess_monster(max_turns=6)")
"""

from ggp_cr import games
