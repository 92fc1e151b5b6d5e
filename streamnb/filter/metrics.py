"""The metrics of spam filtering, on whole sequences of labels and scores.

Metric functions take plain sequences (lists or numpy arrays) of labels and scores; labels
may be any hashable values compared with ``==``. Binary metrics reduce the problem to
"positive" (default ``"spam"``) against everything else. All are computed with numpy;
scikit-learn is used only by the tests, which check equality with its functions.
:mod:`streamnb.filter.evaluate` re-exports every name.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Floats = npt.NDArray[np.float64]
    Bools = npt.NDArray[np.bool_]
    Ints = npt.NDArray[np.int64]
else:
    from .._lazy import numpy as np

from streamnb.errors import InvalidInputError, describe
from streamnb.validate import check_interval, check_positive_int

__all__ = [
    "EPS",
    "accuracy",
    "confusion_matrix",
    "BinaryCounts",
    "binary_counts",
    "ClassScores",
    "precision_recall_f1",
    "false_positive_rate",
    "false_negative_rate",
    "roc_auc",
    "one_minus_auc_percent",
    "log_loss",
    "brier_score",
    "ReliabilityBin",
    "reliability_table",
    "expected_calibration_error",
]

Label = Hashable

# Probability clipping for log loss: machine epsilon of float64, the clip scikit-learn
# (>= 1.5) applies, so a confident mistake costs -log(2.2e-16) ~ 36 nats, not infinity.
EPS = sys.float_info.epsilon  # np.finfo(np.float64).eps, without importing numpy


# --- input checks ------------------------------------------------------------------------


def _labels(values: Iterable[Any], name: str) -> list[Any]:
    if isinstance(values, (str, bytes)):
        raise InvalidInputError(f"{name} must be a sequence of labels, got {describe(values)}")
    items = list(values)
    if not items:
        raise InvalidInputError(f"{name} is empty; expected at least one label")
    return items


def _pair(y_true: Iterable[Any], y_other: Iterable[Any], other_name: str) -> tuple[list[Any], list[Any]]:
    truth = _labels(y_true, "y_true")
    other = list(y_other)
    if len(other) != len(truth):
        raise InvalidInputError(
            f"y_true has {len(truth)} items but {other_name} has {len(other)}; expected the same length"
        )
    return truth, other


def _is_positive(labels: Sequence[Any], positive: Label) -> Bools:
    return np.fromiter((y == positive for y in labels), dtype=bool, count=len(labels))


def _scores(values: Sequence[Any], name: str, probabilities: bool) -> Floats:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{name} must be numbers, got {describe(values)}") from exc
    if array.ndim != 1:
        raise InvalidInputError(f"{name} must be one-dimensional, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        bad = array[~np.isfinite(array)][0]
        raise InvalidInputError(f"{name} holds a non-finite value {bad!r}; expected finite numbers")
    if probabilities and (array.min() < 0.0 or array.max() > 1.0):
        bad = array[(array < 0.0) | (array > 1.0)][0]
        raise InvalidInputError(f"{name} holds {bad!r}; expected probabilities in [0, 1]")
    return array


def _binary_inputs(
    y_true: Iterable[Any], p: Iterable[Any], positive: Label, probabilities: bool = True
) -> tuple[Bools, Floats]:
    truth, scores = _pair(y_true, p, "the scores")
    return _is_positive(truth, positive), _scores(scores, "scores", probabilities)


def _sorted_labels(values: Iterable[Any]) -> list[Any]:
    """Sorted distinct labels (first-appearance order when they cannot be compared)."""
    distinct = list(dict.fromkeys(values))
    try:
        return sorted(distinct)
    except TypeError:
        return distinct


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else math.nan


# --- label metrics -----------------------------------------------------------------------


def accuracy(y_true: Iterable[Label], y_pred: Iterable[Label]) -> float:
    """Fraction of predictions equal to the true label."""
    truth, pred = _pair(y_true, y_pred, "y_pred")
    return float(sum(t == p for t, p in zip(truth, pred)) / len(truth))


def confusion_matrix(
    y_true: Iterable[Label], y_pred: Iterable[Label], labels: Sequence[Label] | None = None
) -> Ints:
    """Counts C[i, j] of messages of true class labels[i] predicted as labels[j].

    ``labels`` defaults to the sorted union of both sequences (as scikit-learn does);
    pairs involving a label outside ``labels`` are not counted.
    """
    truth, pred = _pair(y_true, y_pred, "y_pred")
    order = _sorted_labels(truth + pred) if labels is None else list(labels)
    index = {label: i for i, label in enumerate(order)}
    matrix = np.zeros((len(order), len(order)), dtype=np.int64)
    for t, p in zip(truth, pred):
        if t in index and p in index:
            matrix[index[t], index[p]] += 1
    return matrix


@dataclass(frozen=True)
class BinaryCounts:
    """Confusion counts for one positive label (spam): tp, fp, tn, fn.

    A false positive is a negative (ham) predicted positive (spam).
    """

    tp: int
    fp: int
    tn: int
    fn: int

    @property
    def false_positive_rate(self) -> float:
        """FP / (FP + TN): share of ham flagged as spam; nan without ham."""
        return _ratio(self.fp, self.fp + self.tn)

    @property
    def false_negative_rate(self) -> float:
        """FN / (FN + TP): share of spam let through; nan without spam."""
        return _ratio(self.fn, self.fn + self.tp)


def binary_counts(y_true: Iterable[Label], y_pred: Iterable[Label], positive: Label = "spam") -> BinaryCounts:
    """tp, fp, tn, fn with ``positive`` against every other label (any non-positive prediction is negative)."""
    truth, pred = _pair(y_true, y_pred, "y_pred")
    is_true = _is_positive(truth, positive)
    is_pred = _is_positive(pred, positive)
    return BinaryCounts(
        tp=int(np.sum(is_true & is_pred)),
        fp=int(np.sum(~is_true & is_pred)),
        tn=int(np.sum(~is_true & ~is_pred)),
        fn=int(np.sum(is_true & ~is_pred)),
    )


def false_positive_rate(y_true: Iterable[Label], y_pred: Iterable[Label], positive: Label = "spam") -> float:
    """FP / (FP + TN): ham predicted spam over all ham; nan when there is no ham."""
    return binary_counts(y_true, y_pred, positive).false_positive_rate


def false_negative_rate(y_true: Iterable[Label], y_pred: Iterable[Label], positive: Label = "spam") -> float:
    """FN / (FN + TP): spam predicted ham over all spam; nan when there is no spam."""
    return binary_counts(y_true, y_pred, positive).false_negative_rate


@dataclass(frozen=True)
class ClassScores:
    """Precision, recall, F1 and support (number of true messages) of one class."""

    precision: float
    recall: float
    f1: float
    support: int


def precision_recall_f1(
    y_true: Iterable[Label], y_pred: Iterable[Label], labels: Sequence[Label] | None = None
) -> dict[Label, ClassScores]:
    """Per-class precision tp/(tp+fp), recall tp/(tp+fn) and F1 = 2tp/(2tp+fp+fn).

    An undefined ratio (0/0) is reported as 0.0, as scikit-learn does by default.
    ``labels`` defaults to the sorted union of both sequences.
    """
    truth, pred = _pair(y_true, y_pred, "y_pred")
    order = _sorted_labels(truth + pred) if labels is None else list(labels)
    result = {}
    for label in order:
        is_true = _is_positive(truth, label)
        is_pred = _is_positive(pred, label)
        tp = int(np.sum(is_true & is_pred))
        fp = int(np.sum(~is_true & is_pred))
        fn = int(np.sum(is_true & ~is_pred))
        result[label] = ClassScores(
            precision=tp / (tp + fp) if tp + fp else 0.0,
            recall=tp / (tp + fn) if tp + fn else 0.0,
            f1=2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0,
            support=int(np.sum(is_true)),
        )
    return result


# --- score metrics -------------------------------------------------------------------------


def roc_auc(y_true: Iterable[Label], scores: Iterable[float], positive: Label = "spam") -> float:
    """Area under the ROC curve: P(score of a random positive > a random negative), ties count 1/2.

    Computed as the Mann-Whitney statistic with mid-ranks for tied scores,
    (R_pos - n_pos (n_pos + 1) / 2) / (n_pos n_neg), R_pos the rank sum of the positives;
    this equals the trapezoidal area scikit-learn computes. Scores may be any real numbers
    (only their order matters). Raises InvalidInputError when only one class is present.

    >>> roc_auc(["ham", "ham", "spam", "spam"], [0.1, 0.4, 0.4, 0.8])  # one tied pair of 4
    0.875
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
    """(1 - ROC AUC) in percent, the figure spam-filter evaluations (TREC) report."""
    return 100.0 * (1.0 - roc_auc(y_true, scores, positive))


def log_loss(
    y_true: Iterable[Label], p_positive: Iterable[float], positive: Label = "spam", eps: float = EPS
) -> float:
    """Mean negative log-likelihood of the true labels, in nats.

    loss = -mean(log q_i), q_i = p_i for a positive message and 1 - p_i otherwise,
    with q_i clipped to [eps, 1 - eps] so a certain mistake costs -log(eps), not infinity.
    With the default eps this equals ``sklearn.metrics.log_loss`` on the same data.
    """
    check_interval("eps", eps, 0.0, 0.5)
    is_pos, p = _binary_inputs(y_true, p_positive, positive)
    q = np.where(is_pos, p, 1.0 - p)
    return float(-np.mean(np.log(np.clip(q, eps, 1.0 - eps))))


def brier_score(y_true: Iterable[Label], p_positive: Iterable[float], positive: Label = "spam") -> float:
    """Mean squared error of the positive-class probability: mean((p_i - y_i)^2), y_i in {0, 1}."""
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
    """
    table = reliability_table(y_true, p_positive, positive, n_bins)
    total = sum(b.count for b in table)
    return float(
        sum(b.count / total * abs(b.mean_predicted - b.observed_frequency) for b in table if b.count)
    )
