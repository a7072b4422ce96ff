"""Best responses ([B]; spec algorithms.md "Best responses").

Exact BR and exploitability, pruned BRS, ISMCTS-BR, policy validation.
"""
