"""Summaries of tournament results ([S] Table 5.7): the row player's mean payoff per
pair with a 95% confidence interval, as a table and as a heat-map of every pair.

The rows are those of tournament.run_tournament / read_results / merge_results (one per
match, columns in tournament.RESULT_COLUMNS).
"""

import textwrap

import numpy as np
import pandas as pd

from ggp_cr.algorithms.evaluation import figures


def matches_per_seating(rows):
  """The fewest and the most matches a pair played in one seating in `rows` (merged
  files can hold different counts); (0, 0) for no rows."""
  counts = rows.groupby(["pair", "seating"]).size()
  return (int(counts.min()), int(counts.max())) if len(counts) else (0, 0)


def _ci95(values):
  """Half-width of the 95% confidence interval of the mean of `values`: 1.96 standard
  errors (normal approximation, as in [S] Table 5.7); NaN for fewer than two values."""
  if len(values) < 2:
    return float("nan")
  return 1.96 * values.std(ddof=1) / np.sqrt(len(values))


def summarize(rows):
  """Mean payoff of the row player per pair, with a 95% confidence interval.

  The interval is `_ci95`'s. Also gives the means by seating, and the number of matches.
  """
  frame = rows.drop_duplicates(["pair", "seating", "match"])
  records = []
  for (pair, row, col), group in frame.groupby(["pair", "row_player", "col_player"],
                                               sort=True):
    payoffs = group["row_payoff"].to_numpy(dtype=float)
    records.append({
        "pair": pair, "row_player": row, "col_player": col, "matches": len(payoffs),
        "mean": payoffs.mean(), "ci95": _ci95(payoffs),
        "mean_as_player0": group.loc[group["seating"] == 0, "row_payoff"].mean(),
        "mean_as_player1": group.loc[group["seating"] == 1, "row_payoff"].mean(),
    })
  return pd.DataFrame.from_records(
      records, columns=["pair", "row_player", "col_player", "matches", "mean", "ci95",
                        "mean_as_player0", "mean_as_player1"])


def format_summary(summary):
  """The summary as a text table with 'mean ± ci' cells."""
  table = summary.copy()
  table["row payoff"] = [f"{m:+.3f} ± {c:.3f}" for m, c in zip(table["mean"],
                                                                table["ci95"])]
  return table[["row_player", "col_player", "matches", "row payoff", "mean_as_player0",
                "mean_as_player1"]].to_string(index=False, float_format="{:+.3f}".format)


def payoff_matrix(rows, player_order):
  """Mean payoff (and 95% CI) of player a against player b for every pair (a, b) played."""
  frame = rows.drop_duplicates(["pair", "seating", "match"])
  samples = {}
  for _, match in frame.iterrows():
    row, col = match["row_player"], match["col_player"]
    samples.setdefault((row, col), []).append(float(match["row_payoff"]))
    if row != col:
      samples.setdefault((col, row), []).append(float(match["col_payoff"]))
  means = pd.DataFrame(np.nan, index=list(player_order), columns=list(player_order))
  cis = means.copy()
  for (a, b), values in samples.items():
    values = np.asarray(values)
    means.loc[a, b] = values.mean()
    cis.loc[a, b] = _ci95(values)
  return means, cis


def _label(name, width=24):
  """A player string folded after its commas (then at `width`) to fit an axis."""
  name = str(name)
  if len(name) <= width:
    return name
  pieces = name.replace(",", ",\n").split("\n")
  return "\n".join(line for piece in pieces for line in textwrap.wrap(piece, width))


def plot_heatmap(means, cis, path, title):
  """Saves a heat-map of mean payoffs, row player vs column player, values in cells."""
  plt = figures.pyplot()
  labels = [_label(name) for name in means.index]
  size = max(4.5, 1.3 * len(labels) + 2.5)
  figure, axes = plt.subplots(figsize=(size + 1.5, size))
  values = means.to_numpy(dtype=float)
  limit = np.nanmax(np.abs(values)) if np.isfinite(values).any() else 1.0
  limit = limit if limit > 0 else 1.0
  image = axes.imshow(np.ma.masked_invalid(values), cmap="RdBu", vmin=-limit, vmax=limit)
  axes.set_xticks(range(len(labels)), labels, rotation=30, ha="right")
  axes.set_yticks(range(len(labels)), labels)
  axes.set_xlabel("column player (opponent)")
  axes.set_ylabel("row player")
  axes.set_title("\n".join(textwrap.wrap(title, 60)))
  for i in range(values.shape[0]):
    for j in range(values.shape[1]):
      if np.isfinite(values[i, j]):
        ci = cis.iat[i, j]
        text = f"{values[i, j]:+.3f}" + (f"\n±{ci:.3f}" if np.isfinite(ci) else "")
        dark = abs(values[i, j]) > 0.6 * limit
        axes.text(j, i, text, ha="center", va="center", fontsize=9,
                  color="white" if dark else "black")
  colorbar = figure.colorbar(image, ax=axes)
  colorbar.set_label("mean payoff of the row player")
  figures.save(figure, path)
