"""Configuration ([S] App. A).

The spec-string parser and the registry of named solvers, players and their parameters.
"""
