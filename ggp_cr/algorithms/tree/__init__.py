"""The compiled game tree (spec README.md, principle 2).

Flat arrays, extraction, cache, shared kernels, slots <-> policies and strategy files.
"""
