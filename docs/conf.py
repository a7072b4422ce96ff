"""Sphinx configuration of ggp_cr's documentation site (MyST Markdown, built offline).

Build: `python -m sphinx -W --keep-going -n -b html docs docs/_build/html`
(warnings are errors; tests/test_docs.py runs it).
"""

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

project = "ggp_cr"
author = "ggp_cr developers"
extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
myst_heading_anchors = 4
myst_enable_extensions = ["dollarmath"]
autodoc_member_order = "bysource"
autodoc_typehints = "none"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
html_theme = "alabaster"
# pybind11 bases (pyspiel.Bot, pyspiel.Game) have no Python signatures to show.
autodoc_default_options = {"show-inheritance": False}
# References into pyspiel and numpy are not resolvable offline.
nitpicky = False
