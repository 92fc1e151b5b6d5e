"""Plots of a filter on a stream, written to PNG files: learning curve, ROC, reliability.

matplotlib is an optional dependency (``pip install streamnb[plots]``), imported only when
a plot is drawn. Figures are drawn on matplotlib's ``Figure`` object directly, never
through pyplot, so nothing here needs a display or changes the caller's backend.

Each function takes one series or a mapping name -> series (to compare runs), writes the
PNG and returns its path.
"""

from __future__ import annotations

import math
import os
from collections.abc import Hashable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InvalidInputError
from ..validate import check_one_array, check_png_path
from .evaluate import CurvePoint, expected_calibration_error, reliability_table, roc_auc

__all__ = ["roc_points", "plot_learning_curve", "plot_roc", "plot_reliability"]

INSTALL_HINT = "pip install streamnb[plots]"


def _figure(width: float, height: float) -> Any:
    """A new matplotlib Figure (no pyplot, no display); ImportError naming the extra if matplotlib is missing."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(f"streamnb.filter.plots needs matplotlib, which is not installed: {INSTALL_HINT}") from exc
    return Figure(figsize=(width, height), layout="constrained")


def _save(figure: Any, path: str | os.PathLike[str], dpi: int) -> Path:
    target = Path(path)
    check_png_path(path)
    figure.savefig(target, dpi=dpi, format="png")
    return target


def _named(series: Any, default: str) -> dict[str, Any]:
    """One series or a mapping name -> series, as a dict."""
    if isinstance(series, Mapping):
        if not series:
            raise InvalidInputError("got an empty mapping; expected at least one series to plot")
        return {str(name): value for name, value in series.items()}
    return {default: series}


def roc_points(y_true: Iterable[Hashable], scores: Iterable[float],
               positive: Hashable = "spam") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ROC curve as (false positive rates, true positive rates, thresholds), from (0, 0) up.

    Point i is the classifier "positive iff score >= thresholds[i]" over the distinct
    scores in decreasing order; the first point (threshold +inf) flags nothing.

    Parameters
    ----------
    y_true, scores, positive
        As for :func:`~streamnb.filter.scores.roc_auc`.

    Returns
    -------
    tuple of numpy.ndarray
        (false positive rates, true positive rates, thresholds).
    """
    truth = np.array([y == positive for y in y_true], dtype=bool)
    values = np.asarray(list(scores), dtype=float)
    if len(values) != len(truth):
        raise InvalidInputError(f"y_true has {len(truth)} items but scores has {len(values)}")
    n_pos, n_neg = int(truth.sum()), int((~truth).sum())
    if not n_pos or not n_neg:
        raise InvalidInputError(f"a ROC curve needs both classes; got {n_pos} positive and {n_neg} negative")
    if np.isnan(values).any():
        raise InvalidInputError("scores hold NaN; expected numbers (+-inf allowed)")
    order = np.argsort(-values, kind="stable")
    ordered, hits = values[order], truth[order]
    # The last index of each run of equal scores: the classifier flags the whole run at once.
    last = np.flatnonzero(np.append(ordered[1:] != ordered[:-1], True))
    tp = np.cumsum(hits)[last]
    fp = (last + 1) - tp
    fpr = np.concatenate(([0.0], fp / n_neg))
    tpr = np.concatenate(([0.0], tp / n_pos))
    return fpr, tpr, np.concatenate(([np.inf], ordered[last]))


def _curve_of(item: Any) -> list[CurvePoint]:
    curve = getattr(item, "curve", item)
    points = list(curve)
    if not points:
        raise InvalidInputError("the learning curve is empty; expected CurvePoints (e.g. EvaluationReport.curve)")
    return points


def plot_learning_curve(curves: Any, path: str | os.PathLike[str], *, title: str | None = None,
                        dpi: int = 120) -> Path:
    """Running accuracy (top) and false positive / false negative rates (bottom) along the stream.

    ``curves``: an EvaluationReport or FilterReport (its ``curve``), a list of CurvePoint,
    or a mapping name -> any of these. The x axis (messages seen) is logarithmic: early
    learning happens in the first hundred messages, and log-spaced curve points (the
    default of ``progressive_evaluate``) are evenly spread on it. The rates are
    cumulative: point n counts the predictions on messages 1..n; a rate is not drawn
    before the stream has held a message of its class (FPR needs a ham).

    Parameters
    ----------
    curves : report, list of CurvePoint or mapping
        The curve(s) to draw.
    path, title, dpi
        As for :func:`plot_roc`.

    Returns
    -------
    Path
        The file written; InvalidParameterError for a path that does not end in .png.
    """
    named = {name: _curve_of(item) for name, item in _named(curves, "model").items()}
    figure = _figure(7.5, 6.0)
    top, bottom = figure.subplots(2, 1, sharex=True, height_ratios=[1.0, 1.0])
    for index, (name, points) in enumerate(named.items()):
        color = f"C{index}"
        n = np.array([p.n for p in points])
        label = name if len(named) > 1 else None
        top.plot(n, [p.accuracy for p in points], color=color, label=label)
        bottom.plot(n, [p.false_positive_rate for p in points], color=color, linestyle="-",
                    label=f"{name}: FPR (ham called spam)" if len(named) > 1 else "FPR (ham called spam)")
        bottom.plot(n, [p.false_negative_rate for p in points], color=color, linestyle="--",
                    label=f"{name}: FNR (spam let through)" if len(named) > 1 else "FNR (spam let through)")
    top.set_xscale("log")
    top.set_ylabel("accuracy so far")
    lowest = min(min(p.accuracy for p in pts if not math.isnan(p.accuracy)) for pts in named.values())
    top.set_ylim(max(0.0, lowest - 0.02), 1.0)
    top.grid(True, which="both", alpha=0.3)
    if len(named) > 1:
        top.legend(loc="lower right")
    bottom.set_xlabel("messages seen (log scale)")
    bottom.set_ylabel("error rate so far")
    bottom.set_ylim(0.0, None)
    bottom.grid(True, which="both", alpha=0.3)
    bottom.legend(loc="upper right")
    top.set_title(title or "Progressive (predict, then learn) learning curve")
    return _save(figure, path, dpi)


def plot_roc(y_true: Sequence[Hashable], scores: Any, path: str | os.PathLike[str], *,
             positive: Hashable = "spam", title: str | None = None, dpi: int = 120) -> Path:
    """ROC curves: linear axes (left) and a log-scaled false positive rate (right).

    ``scores``: one array of scores (higher = more ``positive``) or a mapping name -> array.
    A spam filter lives at false positive rates of 1% and below, which the linear plot
    squeezes into its left edge; the right panel spreads FPR from 1/(number of ham) to 1
    on a log axis. Legends give (1 - AUC) in percent.

    Parameters
    ----------
    y_true : sequence of labels
        The true labels.
    scores : array or mapping
        One array of scores, or name -> array.
    path : str or os.PathLike
        The PNG file written (its name ends in .png).
    positive : label
        The positive class (higher scores: more positive).
    title : str or None
        The figure's title; None for none.
    dpi : int
        The resolution, in dots per inch.

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    InvalidParameterError
        For a path that does not end in .png.
    """
    named = _named(scores, "scores")
    figure = _figure(11.0, 5.0)
    linear, logged = figure.subplots(1, 2)
    n_neg = sum(1 for y in y_true if y != positive)
    for index, (name, values) in enumerate(named.items()):
        values = np.asarray(list(values), dtype=float)
        fpr, tpr, _ = roc_points(y_true, values, positive)
        finite = np.clip(values, -np.finfo(float).max, np.finfo(float).max)
        label = f"{name}  (1-AUC) = {100 * (1 - roc_auc(list(y_true), finite, positive)):.3f}%"
        # Straight segments between points: a run of tied scores is flagged all at once,
        # and the diagonal across it is what the AUC (ties count 1/2) integrates.
        linear.plot(fpr, tpr, color=f"C{index}", label=label)
        logged.plot(fpr, tpr, color=f"C{index}", label=label)
    linear.plot([0, 1], [0, 1], color="0.6", linestyle=":", label="chance")
    linear.set_xlim(0.0, 1.0)
    linear.set_ylim(0.0, 1.01)
    linear.set_xlabel("false positive rate (ham called spam)")
    linear.set_ylabel("true positive rate (spam caught)")
    linear.grid(True, alpha=0.3)
    linear.legend(loc="lower right", fontsize="small")
    linear.set_title("ROC")
    logged.set_xscale("log")
    logged.set_xlim(0.5 / max(n_neg, 1), 1.0)
    logged.set_ylim(0.0, 1.01)
    logged.set_xlabel("false positive rate (log scale)")
    logged.set_ylabel("true positive rate (spam caught)")
    logged.grid(True, which="both", alpha=0.3)
    logged.legend(loc="lower right", fontsize="small")
    logged.set_title("ROC, low false positive rates")
    if title:
        figure.suptitle(title)
    return _save(figure, path, dpi)


def plot_reliability(y_true: Sequence[Hashable], probabilities: Any, path: str | os.PathLike[str], *,
                     calibrated: Any = None, positive: Hashable = "spam", n_bins: int = 10,
                     title: str | None = None, dpi: int = 120) -> Path:
    """Reliability diagram: observed spam rate against mean predicted P(spam), per bin.

    ``probabilities``: P(spam) per message (or a mapping name -> array); ``calibrated``: the
    same messages' calibrated P(spam), drawn alongside as "after calibration". Points on
    the diagonal are calibrated; below it the model over-states spam, above it
    under-states it. Bins are those of :func:`streamnb.filter.evaluate.reliability_table`; the
    lower panel counts the messages per bin (log scale: most sit at the ends). Legends
    give each series' expected calibration error (ECE).

    Parameters
    ----------
    y_true : sequence of labels
        The true labels.
    probabilities : array or mapping
        P(spam) per message, or name -> array.
    calibrated : array or None
        The calibrated P(spam) of the same messages.
    n_bins : int
        The number of bins.
    path, positive, title, dpi
        As for :func:`plot_roc`.

    Returns
    -------
    Path
        The PNG written.

    Raises
    ------
    InvalidParameterError
        For a mapping as ``calibrated``, or a path as :func:`plot_roc` refuses.
    """
    named = _named(probabilities, "model")
    if calibrated is not None:
        check_one_array(calibrated)
        if len(named) == 1:
            named = {f"{next(iter(named))} (before calibration)": next(iter(named.values()))}
        named["after calibration"] = calibrated
    figure = _figure(6.5, 7.5)
    top, bottom = figure.subplots(2, 1, sharex=True, height_ratios=[3.0, 1.2])
    top.plot([0, 1], [0, 1], color="0.6", linestyle=":", label="perfectly calibrated")
    width = 1.0 / n_bins
    markers = "osD^v"
    for index, (name, values) in enumerate(named.items()):
        values = np.asarray(list(values), dtype=float)
        table = reliability_table(y_true, values, positive, n_bins)
        ece = expected_calibration_error(y_true, values, positive, n_bins)
        used = [b for b in table if b.count]
        top.plot([b.mean_predicted for b in used], [b.observed_frequency for b in used],
                 marker=markers[index % len(markers)], color=f"C{index}", label=f"{name}  (ECE {ece:.4f})")
        offset = (index - (len(named) - 1) / 2) * width / (len(named) + 1)
        bottom.bar([b.lower + width / 2 + offset for b in table], [b.count for b in table],
                   width=width / (len(named) + 1), color=f"C{index}", label=name)
    top.set_xlim(0.0, 1.0)
    top.set_ylim(0.0, 1.0)
    top.set_ylabel("observed spam rate in the bin")
    top.grid(True, alpha=0.3)
    top.legend(loc="upper left", fontsize="small")
    top.set_title(title or "Reliability of P(spam)")
    bottom.set_yscale("log")
    bottom.set_xlabel("predicted P(spam)")
    bottom.set_ylabel(f"messages per bin\n(width {width:g}, log scale)")
    bottom.grid(True, which="both", alpha=0.3)
    return _save(figure, path, dpi)
