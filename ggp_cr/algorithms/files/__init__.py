"""Output files: paths checked before any work, result-file names (stdlib only).

The bottom layer next to config: the compiled tree's cache, the evaluation's results
files and the examples all import it, and it imports nothing of ours.
"""
