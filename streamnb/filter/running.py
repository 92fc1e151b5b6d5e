"""Metrics of a stream, updated one message at a time, and the learning curve they draw.

:mod:`streamnb.filter.evaluate` re-exports every name.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from streamnb.validate import check_curve, check_positive_int

from .metrics import EPS, BinaryCounts, Label, _ratio

__all__ = ["CurvePoint", "RunningMetrics"]



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

    Parameters
    ----------
    positive : label
        The positive class.
    curve : "log", int or None
        When a learning-curve point is recorded.
    points_per_decade : int
        Points per factor of ten with ``curve="log"`` (>= 1).

    Raises
    ------
    InvalidParameterError
        For a ``curve`` or ``points_per_decade`` out of its range.
    """

    def __init__(
        self,
        positive: Label = "spam",
        curve: Literal["log"] | int | None = "log",
        points_per_decade: int = 10,
    ) -> None:
        check_curve(curve)
        check_positive_int("points_per_decade", points_per_decade)
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
        """Add one prediction; ``score`` is the predicted probability of the positive label, if any.

        Parameters
        ----------
        y_true : label
            The message's class.
        y_pred : label or None
            The prediction (None while the model knows nothing).
        score : float or None
            The predicted P(positive), if any.
        """
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
