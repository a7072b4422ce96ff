"""Figures of the examples and tournaments: matplotlib without a display.

matplotlib is imported when a figure is made, so importing the library stays light.
"""


def pyplot():
  """matplotlib.pyplot on the non-interactive Agg backend (no display needed)."""
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  return plt


def save(figure, path):
  """Lays `figure` out, writes it to `path` (120 dpi) and closes it."""
  figure.tight_layout()
  figure.savefig(path, dpi=120)
  pyplot().close(figure)
