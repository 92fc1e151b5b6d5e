"""A filter on a stream: classify-then-learn, message by message, and the report of the run.

:func:`progressive_filter` classifies each message of a stream with a
:class:`~streamnb.filter.spam_filter.SpamFilter` as it stands, then learns it; the
:class:`FilterReport` it returns holds every message's verdict, score and log-odds, with the
rates of the model's argmax and of the filter's verdicts.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ..validate import Label
    from .spam_filter import SpamFilter

    Floats = npt.NDArray[np.float64]
    Bools = npt.NDArray[np.bool_]
    Objects = npt.NDArray[np.object_]  # labels, verdicts: Python objects
else:
    from .._lazy import numpy as np

from .base import HAM, SPAM, UNSURE
from .evaluate import (
    CurvePoint,
    RunningMetrics,
    _objects,
    accuracy,
    expected_calibration_error,
    false_negative_rate,
    false_positive_rate,
    log_loss,
    one_minus_auc_percent,
    prequential,
)

__all__ = ["VerdictRates", "FilterReport", "progressive_filter"]


def _share(hits: Bools, among: Bools) -> float:
    """The share of ``among`` (a mask) that are hits; nan when among is empty."""
    return float(np.mean(hits[among])) if among.any() else math.nan


def _finite_order(values: Floats) -> Floats:
    """Log-odds with +-inf replaced by finite values beyond the others (same order, for AUC)."""
    finite = values[np.isfinite(values)]
    reach = (np.abs(finite).max() if len(finite) else 0.0) + 1.0
    return np.clip(values, -reach, reach)


class VerdictRates:
    """The rates of a run's verdicts and its ranking, from what every report of a stream holds:
    ``positive``, ``negative``, and per message ``y_true``, ``verdicts`` and ``log_odds``."""

    positive: Label
    negative: Label
    y_true: Objects
    verdicts: Objects
    log_odds: Floats

    @property
    def n(self) -> int:
        return len(self.y_true)

    def _is_positive(self) -> Bools:
        return np.array([y == self.positive for y in self.y_true], dtype=bool)

    @property
    def one_minus_auc_percent(self) -> float:
        """(1 - ROC AUC) in percent, messages ranked by the model's log-odds.

        Ranking by P(spam|x) instead (as ``progressive_evaluate`` does) ties every message
        whose posterior has rounded to exactly 0 or 1, and loses part of the order.
        """
        return one_minus_auc_percent(list(self.y_true), _finite_order(self.log_odds), self.positive)

    def one_minus_auc_percent_of(self, part: slice) -> float | None:
        """(1-AUC)% of a part of the stream (ranked by the log-odds, as the whole's), or None
        when the part holds one class only.

        Parameters
        ----------
        part : slice
            The messages, by position in the stream.

        Returns
        -------
        float or None
            The part's (1 - ROC AUC) in percent.
        """
        y = self.y_true[part]
        if len(set(y)) < 2:
            return None
        return one_minus_auc_percent(list(y), _finite_order(self.log_odds[part]), self.positive)

    @property
    def unsure_rate(self) -> float:
        """Share of messages with verdict "unsure"."""
        return float(np.mean(self.verdicts == UNSURE))

    @property
    def decided_accuracy(self) -> float:
        """Among messages with verdict ham or spam, the share whose verdict is right."""
        decided = self.verdicts != UNSURE
        if not decided.any():
            return math.nan
        right = (self.verdicts == SPAM) == self._is_positive()
        return float(np.mean(right[decided]))

    @property
    def verdict_false_positive_rate(self) -> float:
        """Negatives with verdict spam, over all negatives (unsure is not a false positive)."""
        return _share(self.verdicts == SPAM, ~self._is_positive())

    @property
    def verdict_false_negative_rate(self) -> float:
        """Positives with verdict ham, over all positives (unsure is not a false negative)."""
        return _share(self.verdicts == HAM, self._is_positive())

    def unsure_rate_of(self, label: Hashable) -> float:
        """Share of the messages of one true class with verdict unsure.

        Parameters
        ----------
        label : label
            A true class.

        Returns
        -------
        float
            The share (nan without messages of the class).
        """
        return _share(self.verdicts == UNSURE, np.array([y == label for y in self.y_true], dtype=bool))

    def verdict_counts(self) -> dict[str, int]:
        """How many hams were called spam, spam called ham, and messages unsure; the hams and spams."""
        positive = self._is_positive()
        return {"ham_as_spam": int(((self.verdicts == SPAM) & ~positive).sum()),
                "spam_as_ham": int(((self.verdicts == HAM) & positive).sum()),
                "unsure": int((self.verdicts == UNSURE).sum()),
                "ham": int((~positive).sum()), "spam": int(positive.sum())}


@dataclass
class FilterReport(VerdictRates):
    """Classify-then-learn results of a SpamFilter over a stream, message by message.

    Per message: ``y_true``; ``verdicts`` ("ham"/"unsure"/"spam", the filter's); ``scores``
    (the rule's); ``log_odds``, ``model_predictions`` (the model's argmax, as
    ``predict_one``: None while untrained, the first-learned class on an exact tie) and
    ``model_probability`` = P(spam|x) of the model; ``probability`` (calibrated when the
    filter has a calibrator, else equal to model_probability). ``curve`` holds the running
    metrics of the model's argmax (for :func:`streamnb.filter.plots.learning_curve`). The verdicts'
    rates and the ranking: :class:`VerdictRates`.
    """

    positive: Label
    negative: Label
    y_true: Objects = field(repr=False)
    verdicts: Objects = field(repr=False)
    scores: Floats = field(repr=False)
    log_odds: Floats = field(repr=False)
    model_predictions: Objects = field(repr=False)
    model_probability: Floats = field(repr=False)
    probability: Floats = field(repr=False)
    curve: list[CurvePoint] = field(repr=False)
    seconds: float = 0.0

    # -- the model's own (argmax) decisions -----------------------------------------------------
    @property
    def model_accuracy(self) -> float:
        return accuracy(list(self.y_true), list(self.model_predictions))

    @property
    def model_false_positive_rate(self) -> float:
        """Negatives the model's argmax calls positive, over all negatives."""
        return false_positive_rate(list(self.y_true), list(self.model_predictions), self.positive)

    @property
    def model_false_negative_rate(self) -> float:
        """Positives the model's argmax does not call positive, over all positives."""
        return false_negative_rate(list(self.y_true), list(self.model_predictions), self.positive)

    @property
    def ece_model(self) -> float:
        """Expected calibration error (10 bins) of the model's P(spam|x)."""
        return expected_calibration_error(list(self.y_true), self.model_probability, self.positive)

    @property
    def ece_calibrated(self) -> float:
        """Expected calibration error (10 bins) of the filter's probability."""
        return expected_calibration_error(list(self.y_true), self.probability, self.positive)

    @property
    def log_loss_model(self) -> float:
        return log_loss(list(self.y_true), self.model_probability, self.positive)

    @property
    def log_loss_calibrated(self) -> float:
        return log_loss(list(self.y_true), self.probability, self.positive)

    def summary(self) -> str:
        """A few lines for people: the model's argmax, calibration, the filter's verdicts."""
        return "\n".join([
            f"{self.n} messages, {self.seconds:.1f} s",
            f"model argmax: accuracy {self.model_accuracy:.4%}  FPR {self.model_false_positive_rate:.4%}  "
            f"FNR {self.model_false_negative_rate:.4%}  (1-AUC)% {self.one_minus_auc_percent:.4f} (ranked by log-odds)",
            f"calibration: ECE {self.ece_model:.4f} -> {self.ece_calibrated:.4f}  "
            f"log loss {self.log_loss_model:.4f} -> {self.log_loss_calibrated:.4f}",
            f"verdicts: unsure {self.unsure_rate:.2%} (ham {self.unsure_rate_of(self.negative):.2%}, "
            f"spam {self.unsure_rate_of(self.positive):.2%})  accuracy among decided {self.decided_accuracy:.4%}  "
            f"FPR {self.verdict_false_positive_rate:.4%}  FNR {self.verdict_false_negative_rate:.4%}",
        ])


def progressive_filter(spam_filter: SpamFilter, stream: Iterable[tuple[Any, Label]], *,
                       progress: bool = False, total: int | None = None,
                       curve: Literal["log"] | int | None = "log") -> FilterReport:
    """Classify each (x, label) of the stream with the filter as it stands, then learn it.

    Every message is learned (train-on-everything). Each message is tokenized once and
    scored once: classify and learn share the features and the log-odds. The filter is
    changed in place.

    Parameters
    ----------
    spam_filter : SpamFilter
        The filter (changed in place).
    stream : iterable of (message, label)
        The messages in order, each with its class.
    progress : bool
        Draw a progress bar on stderr (on a terminal only).
    total : int or None
        The stream's length for the bar; None for ``len(stream)`` when it has one.
    curve : "log", int or None
        When a learning-curve point is recorded (see
        :class:`~streamnb.filter.running.RunningMetrics`).

    Returns
    -------
    FilterReport
        The verdicts, scores, metrics and learning curve of the stream.

    Raises
    ------
    InvalidInputError
        For an item that is not a (message, label) pair, or an empty stream.
    """
    running = RunningMetrics(spam_filter.positive, curve)
    y_true: list[Label] = []
    verdicts: list[str] = []
    scores: list[float] = []
    log_odds: list[float] = []
    predictions: list[Hashable | None] = []
    probability: list[float] = []
    model_probability: list[float] = []

    def step(x: Any, y: Label) -> None:
        features = spam_filter.features(x)
        verdict = spam_filter.classify(features, explain=False)
        z = verdict.log_odds
        p_model = spam_filter.model_probability(z)  # 1 or 0 while one class is learned, whatever z's sign
        if p_model == 0.5:  # untrained, or a tie (to rounding): the model's own rule decides
            predicted = spam_filter.model.predict_one(features)
        else:
            predicted = spam_filter.positive if p_model > 0.5 else spam_filter.negative
        spam_filter.learn(features, y)
        running.update(y, predicted, p_model)
        model_probability.append(p_model)
        predictions.append(predicted)
        y_true.append(y)
        verdicts.append(verdict.label)
        scores.append(verdict.score)
        log_odds.append(z)
        probability.append(verdict.probability)

    seconds = prequential(stream, step, progress=progress, total=total, label="filter")
    running.checkpoint()
    labels = _objects(y_true)
    z_array = np.asarray(log_odds, dtype=float)
    return FilterReport(
        positive=spam_filter.positive, negative=spam_filter.negative, y_true=labels,
        verdicts=np.asarray(verdicts, dtype=object), scores=np.asarray(scores, dtype=float),
        log_odds=z_array, model_predictions=_objects(predictions),
        model_probability=np.asarray(model_probability, dtype=float),
        probability=np.asarray(probability, dtype=float),
        curve=list(running.curve), seconds=seconds)
