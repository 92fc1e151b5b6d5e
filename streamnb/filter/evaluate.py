"""Progressive (prequential) evaluation and the metrics of spam filtering.

Metric functions take plain sequences (lists or numpy arrays) of labels and scores; labels
may be any hashable values compared with ``==``. Binary metrics reduce the problem to
"positive" (default ``"spam"``) against everything else. All are computed with numpy;
scikit-learn is used only by the tests, which check equality with its functions.

Progressive evaluation (:func:`progressive_evaluate`) runs predict-then-learn over a stream:
each message is scored by the model as it stands, before the model learns it, which is
how a deployed filter meets its mail. Models need ``learn_one(x, y)`` and
``predict_proba_one(x)`` returning {label: probability} (empty while untrained).

The metrics themselves live in :mod:`streamnb.filter.metrics` (of labels),
:mod:`streamnb.filter.scores` (of scores) and :mod:`streamnb.filter.running` (on a stream,
message by message); this module re-exports their names.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Floats = npt.NDArray[np.float64]
    Ints = npt.NDArray[np.int64]
    Objects = npt.NDArray[np.object_]  # labels: Python objects, None included
else:
    from .._lazy import numpy as np

from streamnb.errors import InvalidInputError, describe
from streamnb.validate import check_alphas, check_int, check_methods, check_one_of, check_progress

from . import metrics, running, scores
from .metrics import *  # noqa: F403
from .metrics import BinaryCounts, ClassScores, Label, _sorted_labels, accuracy, binary_counts, precision_recall_f1
from .running import *  # noqa: F403
from .running import CurvePoint, RunningMetrics
from .scores import *  # noqa: F403
from .scores import brier_score, expected_calibration_error, log_loss, roc_auc

__all__ = ["EvaluationReport", "progressive_evaluate", "progressive_evaluate_alphas"]
__all__ += metrics.__all__  # re-exported: the metrics' names stay importable from here
__all__ += scores.__all__
__all__ += running.__all__


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
    check_progress(progress)
    return (lambda done: progress(done, total)), lambda: None


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
    ``progressive_evaluate_alphas``, :func:`streamnb.filter.decision.progressive_filter`): ``step(x, y)``
    for each (x, y) pair of the stream in order (it predicts x with the model as it stands,
    then learns it), with the progress bar. Returns the seconds the loop took;
    InvalidInputError for an item that is not a pair, or a stream with none.

    Parameters
    ----------
    stream : iterable of (x, y)
        The documents in order, each with its label.
    step : callable
        ``step(x, y)``: predict x, then learn it.
    progress : bool or callable
        A bar on stderr (True), none (False) or a callable(done, total).
    total : int or None
        The stream's length for the progress.
    label : str
        The bar's label.

    Returns
    -------
    float
        The seconds the loop took.

    Raises
    ------
    InvalidParameterError
        For a ``progress`` that is neither a bool nor a callable.
    InvalidInputError
        For an item that is not an (x, y) pair, or an empty stream.
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

    Parameters
    ----------
    model : object
        Anything with ``learn_one(x, y)`` and ``predict_proba_one(x)``; changed in place.
    stream : iterable of (x, y)
        The documents in order, each with its label.
    positive : label
        The positive class of the binary metrics.
    regime : {"all", "on_error", "until_no_error"}
        Which messages are learned.
    max_repeats : int
        Learns per message at most with ``until_no_error`` (>= 1).
    curve : "log", int or None
        When a learning-curve point is recorded (see :class:`RunningMetrics`).
    progress : bool or callable
        A bar on stderr (True), none (False) or a callable(done, total).
    total : int or None
        The stream's length for the progress; None for ``len(stream)`` when it has one.

    Returns
    -------
    EvaluationReport
        The metrics, the learning curve and the per-message arrays.

    Raises
    ------
    InvalidParameterError
        For an unknown regime or a value out of its range.
    InvalidInputError
        For an item that is not an (x, y) pair, or an empty stream.
    """
    check_one_of("regime", regime, ("all", "on_error", "until_no_error"), "'all', 'on_error' or 'until_no_error'")
    check_int("max_repeats", max_repeats, 1)
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

    Parameters
    ----------
    model : object
        A model with ``learn_one(x, y)`` and ``with_alpha(alpha)``; changed in place.
    stream : iterable of (x, y)
        The documents in order, each with its label.
    alphas : sequence of float
        The smoothing values (distinct, finite, >= 0).
    positive : label
        The positive class of the binary metrics.
    curve : "log", int or None
        When a learning-curve point is recorded.
    progress : bool or callable
        A bar on stderr (True), none (False) or a callable(done, total).
    total : int or None
        The stream's length for the progress.

    Returns
    -------
    dict
        Alpha -> its EvaluationReport.

    Raises
    ------
    InvalidParameterError
        For alphas out of range or repeated, or a model without ``with_alpha``.
    InvalidInputError
        For an item that is not an (x, y) pair, or an empty stream.
    """
    values = check_alphas(alphas)
    check_methods("model", model, ["with_alpha(alpha)"])
    recorders = {alpha: _Recorder(positive, curve) for alpha in values}

    def step(x: Any, y: Label) -> None:
        for alpha, recorder in recorders.items():
            predicted, score = _predict(model.with_alpha(alpha), x, positive)
            recorder.add(y, predicted, score, 1)
        model.learn_one(x, y)

    seconds = prequential(stream, step, progress=progress, total=total, label="alphas")
    return {alpha: recorder.report("all", seconds, alpha) for alpha, recorder in recorders.items()}
