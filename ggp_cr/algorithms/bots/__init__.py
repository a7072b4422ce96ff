"""Players as pyspiel.Bots ([S] §3.4).

Budgets, online solving / OOS, strategy, solver, search and human players.
"""
