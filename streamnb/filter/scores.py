"""The metrics of scores: ROC AUC, log loss, Brier score and calibration (reliability, ECE).

Scores are any real numbers ranking the messages (ROC AUC) or probabilities of the positive
label (the others); labels and their checks are those of :mod:`streamnb.filter.metrics`.
:mod:`streamnb.filter.evaluate` re-exports every name.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from .metrics import Floats, Ints
else:
    from .._lazy import numpy as np

from streamnb.errors import InvalidInputError
from streamnb.validate import check_interval, check_positive_int

from .metrics import EPS, Label, _binary_inputs

__all__ = [
    "roc_auc",
    "one_minus_auc_percent",
    "log_loss",
    "brier_score",
    "ReliabilityBin",
    "reliability_table",
    "expected_calibration_error",
]


def roc_auc(y_true: Iterable[Label], scores: Iterable[float], positive: Label = "spam") -> float:
    """Area under the ROC curve: P(score of a random positive > a random negative), ties count 1/2.

    Computed as the Mann-Whitney statistic with mid-ranks for tied scores,
    (R_pos - n_pos (n_pos + 1) / 2) / (n_pos n_neg), R_pos the rank sum of the positives;
    this equals the trapezoidal area scikit-learn computes. Scores may be any real numbers
    (only their order matters). Raises InvalidInputError when only one class is present.

    >>> roc_auc(["ham", "ham", "spam", "spam"], [0.1, 0.4, 0.4, 0.8])  # one tied pair of 4
    0.875

    Parameters
    ----------
    y_true : iterable of labels
        The true labels.
    scores : iterable of float
        A score per message, higher for more ``positive``.
    positive : label
        The positive class.

    Returns
    -------
    float
        The area, in [0, 1].

    Raises
    ------
    InvalidInputError
        For a single class, unequal lengths, or a score that is not a finite number.
    """
    is_pos, values = _binary_inputs(y_true, scores, positive, probabilities=False)
    n_pos = int(is_pos.sum())
    n_neg = len(is_pos) - n_pos
    if n_pos == 0 or n_neg == 0:
        raise InvalidInputError(
            f"ROC AUC needs both classes; y_true has {n_pos} positive ({positive!r}) and {n_neg} negative labels"
        )
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    # Tied scores share the mean of the 1-based ranks they span.
    starts = np.concatenate(([0], np.flatnonzero(np.diff(ordered)) + 1))
    ends = np.concatenate((starts[1:], [len(ordered)]))
    ranks = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    rank_sum = float(ranks[is_pos[order]].sum())  # half-integers: the sum is exact
    return (rank_sum - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)


def one_minus_auc_percent(y_true: Iterable[Label], scores: Iterable[float], positive: Label = "spam") -> float:
    """(1 - ROC AUC) in percent, the figure spam-filter evaluations (TREC) report.

    Parameters
    ----------
    y_true, scores, positive
        As for :func:`roc_auc`.
    """
    return 100.0 * (1.0 - roc_auc(y_true, scores, positive))


def log_loss(
    y_true: Iterable[Label], p_positive: Iterable[float], positive: Label = "spam", eps: float = EPS
) -> float:
    """Mean negative log-likelihood of the true labels, in nats.

    loss = -mean(log q_i), q_i = p_i for a positive message and 1 - p_i otherwise,
    with q_i clipped to [eps, 1 - eps] so a certain mistake costs -log(eps), not infinity.
    With the default eps this equals ``sklearn.metrics.log_loss`` on the same data.

    Parameters
    ----------
    y_true : iterable of labels
        The true labels.
    p_positive : iterable of float
        P(positive) of each message, in [0, 1].
    positive : label
        The positive class.
    eps : float
        The clipping of the probabilities (in (0, 0.5)).

    Returns
    -------
    float
        The mean loss in nats.

    Raises
    ------
    InvalidParameterError
        For an ``eps`` outside (0, 0.5).
    InvalidInputError
        For unequal lengths or a probability outside [0, 1].
    """
    check_interval("eps", eps, 0.0, 0.5)
    is_pos, p = _binary_inputs(y_true, p_positive, positive)
    q = np.where(is_pos, p, 1.0 - p)
    return float(-np.mean(np.log(np.clip(q, eps, 1.0 - eps))))


def brier_score(y_true: Iterable[Label], p_positive: Iterable[float], positive: Label = "spam") -> float:
    """Mean squared error of the positive-class probability: mean((p_i - y_i)^2), y_i in {0, 1}.

    Parameters
    ----------
    y_true, p_positive, positive
        As for :func:`log_loss`.
    """
    is_pos, p = _binary_inputs(y_true, p_positive, positive)
    return float(np.mean((p - is_pos) ** 2))


@dataclass(frozen=True)
class ReliabilityBin:
    """One bin of a reliability diagram: [lower, upper), message count, mean p, observed positive rate."""

    lower: float
    upper: float
    count: int
    mean_predicted: float
    observed_frequency: float


def _bin_index(p: Floats, n_bins: int) -> Ints:
    check_positive_int("n_bins", n_bins)
    # Bin b holds b/B <= p < (b+1)/B; p = 1 joins the last bin.
    return np.minimum((p * n_bins).astype(np.int64), n_bins - 1)


def reliability_table(
    y_true: Iterable[Label], p_positive: Iterable[float], positive: Label = "spam", n_bins: int = 10
) -> list[ReliabilityBin]:
    """Equal-width bins of the positive-class probability with count, mean p and observed frequency.

    Empty bins are listed with count 0 and nan means.

    Parameters
    ----------
    y_true, p_positive, positive
        As for :func:`log_loss`.
    n_bins : int
        The number of bins (>= 1).

    Returns
    -------
    list of ReliabilityBin
        The bins, from p = 0 up.

    Raises
    ------
    InvalidParameterError
        For an ``n_bins`` below 1.
    """
    is_pos, p = _binary_inputs(y_true, p_positive, positive)
    index = _bin_index(p, n_bins)
    counts = np.bincount(index, minlength=n_bins)
    p_sums = np.bincount(index, weights=p, minlength=n_bins)
    hits = np.bincount(index, weights=is_pos.astype(np.float64), minlength=n_bins)
    return [
        ReliabilityBin(
            lower=b / n_bins,
            upper=(b + 1) / n_bins,
            count=int(counts[b]),
            mean_predicted=float(p_sums[b] / counts[b]) if counts[b] else math.nan,
            observed_frequency=float(hits[b] / counts[b]) if counts[b] else math.nan,
        )
        for b in range(n_bins)
    ]


def expected_calibration_error(
    y_true: Iterable[Label], p_positive: Iterable[float], positive: Label = "spam", n_bins: int = 10
) -> float:
    """ECE = sum_b (n_b / N) |mean p in b - positive rate in b| over equal-width bins of p.

    This is the calibration error of the positive-class probability (P(spam)), with bins as
    in :func:`reliability_table`; it is not the "top-label confidence" ECE of Guo et al.
    (2017), which bins max(p, 1-p) instead.

    Parameters
    ----------
    y_true, p_positive, positive, n_bins
        As for :func:`reliability_table`.

    Returns
    -------
    float
        The ECE, in [0, 1].
    """
    table = reliability_table(y_true, p_positive, positive, n_bins)
    total = sum(b.count for b in table)
    return float(
        sum(b.count / total * abs(b.mean_predicted - b.observed_frequency) for b in table if b.count)
    )
