"""Continual resolving's subgames on the compiled tree ([S] ch. 2).

The opponent's state keys, and the trace of the bot's next turns that groups the next
subgames' roots (`subgame_trace`).
"""
