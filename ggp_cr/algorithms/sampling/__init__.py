"""Sampling MCCFR ([S] §1.3.3, §3.3.3; [M] ch. 4-5).

Outcome sampling (live and compiled), external and mixed sampling, targeting, baselines.
"""
