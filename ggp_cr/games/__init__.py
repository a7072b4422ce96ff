"""ggp_cr's games; importing this package registers each of them with pyspiel."""

from ggp_cr.games import rps
from ggp_cr.games import princess_monster
from ggp_cr.games import leduc
from ggp_cr.games import ii_goofspiel
from ggp_cr.games import latent_ttt
