"""Installs ggp_cr, an OpenSpiel plugin for general game playing research."""

from setuptools import find_packages, setup

setup(
    name="ggp_cr",
    version="0.1.0",
    description=(
        "OpenSpiel plugin: general games, CFR variants, continual resolving and "
        "best responses for two-player zero-sum imperfect-information games."
    ),
    packages=find_packages(include=["ggp_cr", "ggp_cr.*"]),
    python_requires=">=3.11",
    install_requires=[
        "open_spiel>=2.0",
        "numpy",
        "numba",
        "absl-py",
        "pandas",
        "matplotlib",
        "tqdm",
    ],
    extras_require={
        # The tests build the documentation site strictly (tests/test_docs.py).
        "test": ["pytest", "sphinx>=7", "myst-parser>=2"],
        "docs": ["sphinx>=7", "myst-parser>=2"],
        "ray": ["ray"],
        # Peers of benchmarks/time_to_epsilon.py and of tests/test_modern_cfr.py
        # (skipped without it); never needed at run time.
        "bench": ["liteefg"],
    },
)
