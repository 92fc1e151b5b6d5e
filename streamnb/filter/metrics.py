"""The metrics of spam filtering on whole sequences of labels, and the checks of their inputs.

Metric functions take plain sequences (lists or numpy arrays) of labels and scores; labels
may be any hashable values compared with ``==``. Binary metrics reduce the problem to
"positive" (default ``"spam"``) against everything else. All are computed with numpy;
scikit-learn is used only by the tests, which check equality with its functions. The
metrics of scores are in :mod:`streamnb.filter.scores`; :mod:`streamnb.filter.evaluate`
re-exports every name of both.
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
    """Fraction of predictions equal to the true label.

    Parameters
    ----------
    y_true, y_pred : iterable of labels
        The true and the predicted labels, the same number.

    Returns
    -------
    float
        The fraction correct.

    Raises
    ------
    InvalidInputError
        For empty or unequal sequences.
    """
    truth, pred = _pair(y_true, y_pred, "y_pred")
    return float(sum(t == p for t, p in zip(truth, pred)) / len(truth))


def confusion_matrix(
    y_true: Iterable[Label], y_pred: Iterable[Label], labels: Sequence[Label] | None = None
) -> Ints:
    """Counts C[i, j] of messages of true class labels[i] predicted as labels[j].

    ``labels`` defaults to the sorted union of both sequences (as scikit-learn does);
    pairs involving a label outside ``labels`` are not counted.

    Parameters
    ----------
    y_true, y_pred : iterable of labels
        The true and the predicted labels, the same number.
    labels : sequence of labels or None
        The rows' and columns' labels, in order.

    Returns
    -------
    numpy.ndarray
        The int64 counts.

    Raises
    ------
    InvalidInputError
        For empty or unequal sequences.
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
    """tp, fp, tn, fn with ``positive`` against every other label (any non-positive prediction is negative).

    Parameters
    ----------
    y_true, y_pred : iterable of labels
        The true and the predicted labels, the same number.
    positive : label
        The positive class.

    Returns
    -------
    BinaryCounts
        tp, fp, tn, fn.

    Raises
    ------
    InvalidInputError
        For empty or unequal sequences.
    """
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
    """FP / (FP + TN): ham predicted spam over all ham; nan when there is no ham.

    Parameters
    ----------
    y_true, y_pred, positive
        As for :func:`binary_counts`.
    """
    return binary_counts(y_true, y_pred, positive).false_positive_rate


def false_negative_rate(y_true: Iterable[Label], y_pred: Iterable[Label], positive: Label = "spam") -> float:
    """FN / (FN + TP): spam predicted ham over all spam; nan when there is no spam.

    Parameters
    ----------
    y_true, y_pred, positive
        As for :func:`binary_counts`.
    """
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

    Parameters
    ----------
    y_true, y_pred : iterable of labels
        The true and the predicted labels, the same number.
    labels : sequence of labels or None
        The classes reported, in order.

    Returns
    -------
    dict
        Label -> its ClassScores.
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
