"""Evaluation ([S] §3.5, §4, App. A).

Matches, tournaments (local and Ray), evaluators, results files, solver runs.
"""
