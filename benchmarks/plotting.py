"""The two kinds of plot the report draws: horizontal bars with min-max whiskers, and log-log lines.

matplotlib's ``Figure`` is used directly (Agg, no pyplot), so nothing needs a display.
Colours follow the library, so streamnb, river and scikit-learn read the same in every plot.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

COLOURS = {"streamnb": "#1f77b4", "river": "#d62728", "scikit-learn": "#ff7f0e", "baseline": "#7f7f7f"}
MARKERS = "osD^v<>px*h"


CMAPS = {"streamnb": "Blues", "river": "Reds", "scikit-learn": "Oranges"}


def _shades(libraries: list[str]) -> list:
    """A colour per series: the library's hue, a different shade for each of its series."""
    from matplotlib import colormaps

    colours = []
    for i, library in enumerate(libraries):
        same = [j for j, other in enumerate(libraries) if other == library]
        position = same.index(i)
        shade = 0.9 if len(same) == 1 else 0.95 - 0.5 * position / (len(same) - 1)
        colours.append(colormaps[CMAPS.get(library, "Greys")](shade))
    return colours


def _figure(width: float, height: float):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _plain_log_axis(ax) -> None:
    """A log x axis labelled 1, 2, 5, 10, 20, 50 ... in plain numbers (no 2 x 10^0)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.10g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def bar_chart(groups: dict[str, list[tuple[str, dict[str, Any], str]]], path: Path, *, xlabel: str, title: str,
              log: bool = False) -> Path:
    """One panel per group; each item (label, summary with median/min/max, library) is a bar."""
    heights = [max(len(items), 1) for items in groups.values()]
    figure = _figure(10, 1.2 + 0.32 * sum(heights) + 0.6 * len(groups))
    axes = figure.subplots(len(groups), 1, squeeze=False, gridspec_kw={"height_ratios": heights})[:, 0]
    for ax, (group, items) in zip(axes, groups.items()):
        labels = [label for label, _, _ in items]
        medians = [stat["median"] for _, stat, _ in items]
        low = [stat["median"] - stat.get("min", stat["median"]) for _, stat, _ in items]
        high = [stat.get("max", stat["median"]) - stat["median"] for _, stat, _ in items]
        colours = [COLOURS.get(library, COLOURS["baseline"]) for _, _, library in items]
        positions = list(range(len(items)))[::-1]
        ax.barh(positions, medians, xerr=[low, high], color=colours, capsize=2, error_kw={"elinewidth": 0.8})
        ax.set_yticks(positions, labels, fontsize=8)
        for y, value, above in zip(positions, medians, high):  # the label goes past the max whisker
            ax.annotate(f"{value:,.3g}" if value < 1000 else f"{value:,.0f}", (value + above, y), xytext=(4, 0),
                        textcoords="offset points", va="center", fontsize=7)
        if log and medians and min(medians) > 0:  # a zero (e.g. a perfect score) cannot sit on a log axis
            _plain_log_axis(ax)
        ax.set_title(group, fontsize=10, loc="left")
        ax.grid(axis="x", alpha=0.3, which="both")
        ax.margins(x=0.12)
    axes[-1].set_xlabel(xlabel)
    figure.suptitle(title, fontsize=11)
    figure.savefig(path, dpi=110, format="png")
    return path


def loglog_panels(panels: list[dict[str, Any]], path: Path, *, title: str, columns: int = 2) -> Path:
    """Panels of log-log lines. A panel: {"title", "xlabel", "ylabel", "series": [{"label", "library",
    "x": [...], "y": [...], "low": [...]?, "high": [...]?}]}."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    rows = -(-len(panels) // columns)
    figure = _figure(5.2 * columns, 3.9 * rows)
    axes = figure.subplots(rows, columns, squeeze=False).ravel()
    for ax, panel in zip(axes, panels):
        shades = _shades([series["library"] for series in panel["series"]])
        for i, (series, colour) in enumerate(zip(panel["series"], shades)):
            style = "-" if series["library"] == "streamnb" else "--"
            ax.plot(series["x"], series["y"], style, marker=MARKERS[i % len(MARKERS)], color=colour,
                    label=series["label"], markersize=5)
            if series.get("low") is not None:
                ax.fill_between(series["x"], series["low"], series["high"], color=colour, alpha=0.15)
        ax.set_xscale("log")
        ax.set_yscale("log")
        plain = FuncFormatter(lambda value, _: f"{value:,.10g}")
        ax.yaxis.set_major_formatter(plain)
        low, high = ax.get_ylim()
        # label the 2, 3 ... 9 ticks only when the axis holds less than a decade (else no label at all)
        ax.yaxis.set_minor_formatter(plain if high < 10 * low else NullFormatter())
        ax.set_title(panel["title"], fontsize=10)
        ax.set_xlabel(panel["xlabel"])
        ax.set_ylabel(panel["ylabel"])
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7, framealpha=0.6)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    figure.suptitle(title, fontsize=11)
    figure.savefig(path, dpi=110, format="png")
    return path
