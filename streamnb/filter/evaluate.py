"""Progressive (prequential) evaluation and the metrics of spam filtering.

Metric functions take plain sequences (lists or numpy arrays) of labels and scores; labels
may be any hashable values compared with ``==``. Binary metrics reduce the problem to
"positive" (default ``"spam"``) against everything else. All are computed with numpy;
scikit-learn is used only by the tests, which check equality with its functions.

Progressive evaluation (:func:`progressive_evaluate`) runs predict-then-learn over a stream:
each message is scored by the model as it stands, before the model learns it, which is
how a deployed filter meets its mail. Models need ``learn_one(x, y)`` and
``predict_proba_one(x)`` returning {label: probability} (empty while untrained).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence, Sized
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Floats = npt.NDArray[np.float64]
    Bools = npt.NDArray[np.bool_]
    Ints = npt.NDArray[np.int64]
    Objects = npt.NDArray[np.object_]  # labels: Python objects, None included
else:
    from .._lazy import numpy as np

from streamnb.errors import InvalidInputError, InvalidParameterError, describe

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
    "CurvePoint",
    "RunningMetrics",
    "EvaluationReport",
    "progressive_evaluate",
    "progressive_evaluate_alphas",
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
    if not 0.0 < eps < 0.5:
        raise InvalidParameterError(f"eps must be in (0, 0.5), got {describe(eps)}")
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
    if not isinstance(n_bins, (int, np.integer)) or isinstance(n_bins, bool) or n_bins < 1:
        raise InvalidParameterError(f"n_bins must be a positive int, got {describe(n_bins)}")
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


# --- running metrics -----------------------------------------------------------------------


@dataclass(frozen=True)
class CurvePoint:
    """Cumulative metrics after the first ``n`` messages of a stream."""

    n: int
    accuracy: float
    false_positive_rate: float
    false_negative_rate: float
    log_loss: float
    brier: float


def _log_spaced(points_per_decade: int) -> Iterator[int]:
    """round(10 ** (k / points_per_decade)) for k = 0, 1, ..., without repeats.

    For 10 per decade: 1, 2, 3, 4, 5, 6, 8, 10, 13, 16, 20, 25, 32, 40, 50, 63, 79, 100 ...
    """
    last = 0
    k = 0
    while True:
        position = round(10 ** (k / points_per_decade))
        if position > last:
            last = position
            yield position
        k += 1


class RunningMetrics:
    """Cumulative accuracy, FPR, FNR, log loss and Brier of a stream, updated one message at a time.

    Each update costs O(1). ``curve`` chooses when a learning-curve point is recorded:
    ``"log"`` at log-spaced positions (``points_per_decade`` per factor of ten, so early
    learning is visible), an int n every n messages, or None never. :meth:`checkpoint`
    records a point now (e.g. at the end of the stream).
    """

    def __init__(
        self,
        positive: Label = "spam",
        curve: Literal["log"] | int | None = "log",
        points_per_decade: int = 10,
    ) -> None:
        if curve is not None and curve != "log" and (
            not isinstance(curve, int) or isinstance(curve, bool) or curve < 1
        ):
            raise InvalidParameterError(f"curve must be 'log', a positive int or None, got {describe(curve)}")
        if not isinstance(points_per_decade, int) or points_per_decade < 1:
            raise InvalidParameterError(
                f"points_per_decade must be a positive int, got {describe(points_per_decade)}"
            )
        self.positive = positive
        self.n = 0
        self.correct = 0
        self.tp = self.fp = self.tn = self.fn = 0
        self.n_scored = 0
        self._log_loss_sum = 0.0
        self._squared_error_sum = 0.0
        self.curve: list[CurvePoint] = []
        self._schedule: Iterator[int] | None
        if curve == "log":
            self._schedule = _log_spaced(points_per_decade)
        elif curve is None:
            self._schedule = None
        else:
            step = curve
            self._schedule = iter(range(step, 2**62, step))
        self._next = next(self._schedule) if self._schedule is not None else None

    def update(self, y_true: Label, y_pred: Label | None, score: float | None = None) -> None:
        """Add one prediction; ``score`` is the predicted probability of the positive label, if any."""
        self.n += 1
        self.correct += y_true == y_pred
        actual = y_true == self.positive
        flagged = y_pred == self.positive
        if actual:
            if flagged:
                self.tp += 1
            else:
                self.fn += 1
        elif flagged:
            self.fp += 1
        else:
            self.tn += 1
        if score is not None:
            q = score if actual else 1.0 - score
            self._log_loss_sum -= math.log(min(max(q, EPS), 1.0 - EPS))
            self._squared_error_sum += (score - actual) ** 2
            self.n_scored += 1
        if self._schedule is not None and self.n == self._next:  # (_next is None exactly when _schedule is)
            self.checkpoint()
            self._next = next(self._schedule)

    @property
    def accuracy(self) -> float:
        """Correct predictions so far over messages so far (nan before the first)."""
        return _ratio(self.correct, self.n)

    @property
    def counts(self) -> BinaryCounts:
        """The confusion counts so far."""
        return BinaryCounts(self.tp, self.fp, self.tn, self.fn)

    @property
    def false_positive_rate(self) -> float:
        """FP / (FP + TN) so far."""
        return self.counts.false_positive_rate

    @property
    def false_negative_rate(self) -> float:
        """FN / (FN + TP) so far."""
        return self.counts.false_negative_rate

    @property
    def log_loss(self) -> float:
        """Mean clipped log loss of the scored messages so far (see :func:`log_loss`)."""
        return _ratio(self._log_loss_sum, self.n_scored)

    @property
    def brier(self) -> float:
        """Mean squared error of the positive-class scores so far."""
        return _ratio(self._squared_error_sum, self.n_scored)

    def checkpoint(self) -> None:
        """Record the current values as a learning-curve point (once per position)."""
        if self.n and (not self.curve or self.curve[-1].n != self.n):
            self.curve.append(
                CurvePoint(self.n, self.accuracy, self.false_positive_rate, self.false_negative_rate,
                           self.log_loss, self.brier)
            )


# --- progressive evaluation --------------------------------------------------------------------


class _Scorer(Protocol):
    def predict_proba_one(self, x: Any) -> dict[Any, float]: ...


class _Learner(_Scorer, Protocol):
    def learn_one(self, x: Any, y: Any) -> Any: ...


Regime = Literal["all", "on_error", "until_no_error"]
Progress = bool | Callable[[int, "int | None"], Any]


@dataclass
class EvaluationReport:
    """Result of a progressive evaluation: final metrics, learning curve, per-message arrays.

    ``y_pred`` holds None where the model had not learned anything yet; ``scores`` is the
    predicted probability of ``positive`` (0.5 while untrained); ``learned[i]`` is how
    many times message i was learned (0 or 1, more with ``until_no_error``). ``roc_auc``
    and the metrics derived from it are nan when the stream holds a single class.
    """

    positive: Label
    regime: str
    n: int
    n_learned: int
    accuracy: float
    false_positive_rate: float
    false_negative_rate: float
    roc_auc: float
    one_minus_auc_percent: float
    log_loss: float
    brier: float
    ece: float
    counts: BinaryCounts
    per_class: dict[Label, ClassScores]
    curve: list[CurvePoint]
    y_true: Objects = field(repr=False)
    y_pred: Objects = field(repr=False)
    scores: Floats = field(repr=False)
    learned: Ints = field(repr=False)
    seconds: float = 0.0
    alpha: float | None = None

    def summary(self) -> str:
        """A few lines for people: size, accuracy, FPR/FNR, AUC, calibration."""
        head = f"{self.n} messages, regime {self.regime}, learned {self.n_learned} times"
        if self.alpha is not None:
            head += f", alpha {self.alpha:g}"
        return "\n".join(
            [
                head + f", {self.seconds:.2f} s",
                f"accuracy {self.accuracy:.4%}  FPR {self.false_positive_rate:.4%}  "
                f"FNR {self.false_negative_rate:.4%}  (positive = {self.positive!r})",
                f"ROC AUC {self.roc_auc:.6f}  (1-AUC)% {self.one_minus_auc_percent:.4f}",
                f"log loss {self.log_loss:.4f}  Brier {self.brier:.4f}  ECE {self.ece:.4f}",
            ]
        )


class _Recorder:
    """Collects per-message predictions and turns them into an EvaluationReport."""

    def __init__(self, positive: Label, curve: Literal["log"] | int | None) -> None:
        self.running = RunningMetrics(positive, curve)
        self.y_true: list[Any] = []
        self.y_pred: list[Any] = []
        self.scores: list[float] = []
        self.learned: list[int] = []

    def add(self, y: Any, predicted: Any, score: float, learned: int) -> None:
        self.running.update(y, predicted, score)
        self.y_true.append(y)
        self.y_pred.append(predicted)
        self.scores.append(score)
        self.learned.append(learned)

    def report(self, regime: str, seconds: float, alpha: float | None = None) -> EvaluationReport:
        positive = self.running.positive
        self.running.checkpoint()
        y_true, y_pred, scores = self.y_true, self.y_pred, np.asarray(self.scores, dtype=np.float64)
        counts = binary_counts(y_true, y_pred, positive)
        try:
            auc = roc_auc(y_true, scores, positive)
        except InvalidInputError:
            auc = math.nan
        labels = _sorted_labels([y for y in y_true + y_pred if y is not None])
        true_array, pred_array = _objects(y_true), _objects(y_pred)
        return EvaluationReport(
            positive=positive,
            regime=regime,
            n=len(y_true),
            n_learned=sum(self.learned),
            accuracy=accuracy(y_true, y_pred),
            false_positive_rate=counts.false_positive_rate,
            false_negative_rate=counts.false_negative_rate,
            roc_auc=auc,
            one_minus_auc_percent=100.0 * (1.0 - auc),
            log_loss=log_loss(y_true, scores, positive),
            brier=brier_score(y_true, scores, positive),
            ece=expected_calibration_error(y_true, scores, positive),
            counts=counts,
            per_class=precision_recall_f1(y_true, y_pred, labels),
            curve=list(self.running.curve),
            y_true=true_array,
            y_pred=pred_array,
            scores=scores,
            learned=np.asarray(self.learned, dtype=np.int64),
            seconds=seconds,
            alpha=alpha,
        )


def _predict(model: _Scorer, x: Any, positive: Label) -> tuple[Any, float]:
    """(argmax label or None when untrained, probability of positive; 0.5 when untrained)."""
    proba = model.predict_proba_one(x)
    if not proba:
        return None, 0.5
    # On a tie the first label in the model's dict order wins.
    return max(proba, key=proba.__getitem__), float(proba.get(positive, 0.0))


def _objects(values: Sequence[object]) -> Objects:
    """A 1-d object array of the values (labels stay Python objects, None included)."""
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


def _pairs(stream: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
    for i, item in enumerate(stream):
        try:
            x, y = item
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(
                f"stream item {i} is {describe(item)}; expected an (x, y) pair"
            ) from exc
        yield x, y


def _progress_callback(
    progress: Progress, total: int | None, label: str
) -> tuple[Callable[[int], Any] | None, Callable[[], None]]:
    """(per-message callback or None, closer) for the ``progress`` argument."""
    if progress is False or progress is None:
        return None, lambda: None
    if progress is True:
        from tqdm import tqdm

        bar = tqdm(total=total, desc=label, unit="msg", disable=None)  # disable=None: drawn only on a terminal
        return (lambda done: bar.update(done - bar.n)), bar.close
    if callable(progress):
        return (lambda done: progress(done, total)), lambda: None
    raise InvalidParameterError(f"progress must be a bool or a callable(done, total), got {describe(progress)}")


def _total(stream: Iterable[Any], total: int | None) -> int | None:
    if total is not None:
        return total
    if not isinstance(stream, Sized):
        return None
    try:
        return len(stream)
    except TypeError:
        return None


def prequential(stream: Iterable[Any], step: Callable[[Any, Any], Any], *, progress: Progress = False,
                total: int | None = None, label: str = "evaluate") -> float:
    """The predict-then-learn loop every progressive evaluation shares (``progressive_evaluate``,
    ``progressive_evaluate_alphas``, :func:`streamnb.decision.progressive_filter`): ``step(x, y)``
    for each (x, y) pair of the stream in order (it predicts x with the model as it stands,
    then learns it), with the progress bar. Returns the seconds the loop took;
    InvalidInputError for an item that is not a pair, or a stream with none.
    """
    tick, close = _progress_callback(progress, _total(stream, total), label)
    start = time.perf_counter()
    done = 0
    try:
        for x, y in _pairs(stream):
            step(x, y)
            done += 1
            if tick is not None:
                tick(done)
    finally:
        close()
    if not done:
        raise InvalidInputError("the stream yielded no (x, y) pairs; expected at least one")
    return time.perf_counter() - start


def progressive_evaluate(
    model: _Learner,
    stream: Iterable[tuple[Any, Label]],
    *,
    positive: Label = "spam",
    regime: Regime = "all",
    max_repeats: int = 10,
    curve: Literal["log"] | int | None = "log",
    progress: Progress = False,
    total: int | None = None,
) -> EvaluationReport:
    """Predict each (x, y) of the stream with the model as it stands, then (maybe) learn it.

    Regimes, as in spam-filter practice:

    - ``"all"``: learn every message (train everything);
    - ``"on_error"``: learn only misclassified messages (TOE, train on error);
    - ``"until_no_error"``: learn a misclassified message, predict it again, and repeat
      until the model gets it right, at most ``max_repeats`` learns per message (the cap
      matters: a message can be unfixable, e.g. the same x seen with both labels, and each
      repeat pushes the counts further).

    The prediction recorded is always the first one, made before learning. The predicted
    label is the argmax of ``predict_proba_one``; an untrained model (empty dict) predicts
    None (counted as wrong, and as not-spam) with score 0.5. ``progress`` is True for a
    bar on stderr (drawn only on a terminal) or a callable(done, total); ``total`` defaults
    to ``len(stream)`` when available. The model is changed in place.
    """
    if regime not in ("all", "on_error", "until_no_error"):
        raise InvalidParameterError(
            f"regime must be 'all', 'on_error' or 'until_no_error', got {describe(regime)}"
        )
    if not isinstance(max_repeats, int) or isinstance(max_repeats, bool) or max_repeats < 1:
        raise InvalidParameterError(f"max_repeats must be an int >= 1, got {describe(max_repeats)}")
    recorder = _Recorder(positive, curve)

    def step(x: Any, y: Label) -> None:
        predicted, score = _predict(model, x, positive)
        learned = 0
        if regime == "all" or predicted != y:
            model.learn_one(x, y)
            learned = 1
            if regime == "until_no_error":
                while learned < max_repeats and _predict(model, x, positive)[0] != y:
                    model.learn_one(x, y)
                    learned += 1
        recorder.add(y, predicted, score, learned)

    seconds = prequential(stream, step, progress=progress, total=total, label="evaluate")
    return recorder.report(regime, seconds)


def progressive_evaluate_alphas(
    model: Any,
    stream: Iterable[tuple[Any, Label]],
    alphas: Sequence[float],
    *,
    positive: Label = "spam",
    curve: Literal["log"] | int | None = "log",
    progress: Progress = False,
    total: int | None = None,
) -> dict[float, EvaluationReport]:
    """Progressive evaluation of several smoothing values in one pass over the stream.

    Counts do not depend on alpha, so one model learns each message once and every alpha
    scores it through ``model.with_alpha(alpha)``: a view sharing the model's counts whose
    ``predict_proba_one`` uses that alpha. The view is asked for anew for each message, so
    it may cache freely. The result for each alpha equals ``progressive_evaluate`` of a
    fresh model with that alpha under regime "all" (the only regime whose training does
    not depend on the predictions, hence on alpha). Returns {alpha: report}, in the order
    given; ``seconds`` of each report is the time of the whole pass.
    """
    values = list(alphas)
    if not values:
        raise InvalidParameterError("alphas is empty; expected at least one smoothing value")
    for alpha in values:
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not math.isfinite(alpha) or alpha < 0:
            raise InvalidParameterError(f"each alpha must be a finite number >= 0, got {describe(alpha)}")
    if len(set(values)) != len(values):
        raise InvalidParameterError(f"alphas must be distinct, got {values}")
    if not callable(getattr(model, "with_alpha", None)):
        raise InvalidParameterError(f"model {describe(model)} has no with_alpha(alpha) method")
    recorders = {alpha: _Recorder(positive, curve) for alpha in values}

    def step(x: Any, y: Label) -> None:
        for alpha, recorder in recorders.items():
            predicted, score = _predict(model.with_alpha(alpha), x, positive)
            recorder.add(y, predicted, score, 1)
        model.learn_one(x, y)

    seconds = prequential(stream, step, progress=progress, total=total, label="alphas")
    return {alpha: recorder.report("all", seconds, alpha) for alpha, recorder in recorders.items()}
