"""Resolving ([S] ch. 2, §6; [H]).

Subgames and tracing, gadgets, the resolver and ContinualResolvingBot.
"""
