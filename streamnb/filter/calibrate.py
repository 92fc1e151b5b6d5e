"""Online calibration of the spam probability, learned from the stream itself.

Naive Bayes multiplies one likelihood ratio per word as if words were independent, so its
posterior P(spam|x) sits at 0 or 1 for almost every message, mistakes included: "100%
spam" is right perhaps 97% of the time. A calibrator learns a monotone map from the
model's score to a probability that means what it says ("90% spam" is spam about 90% of
the time).

The score a calibrator reads is the model's log-odds z = log P(spam|x) - log P(ham|x), a
real number (on email it easily reaches +-1000, where the posterior itself has long
rounded to exactly 0 or 1 and lost the order of the messages).

Both calibrators are streaming: ``transform(z)`` gives the calibrated probability with
the calibrator as it stands, ``update(z, outcome)`` adds one message whose true class is
now known. Used prequentially (transform, then update, message after message; see
:func:`calibrate_prequential`) every probability is an honest forecast: it was made before
the calibrator saw that message's outcome.

- :class:`PlattCalibrator`: P = sigmoid(a z + b) (Platt 1999), (a, b) the penalised
  maximum-likelihood fit over a sliding window of the last messages, refit exactly by
  Newton's method after each update.
- :class:`IsotonicCalibrator`: any monotone map, estimated on fixed bins of z by
  pool-adjacent-violators over (optionally decayed) counts; O(bins) per update.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from scipy.special import expit

from ..errors import InvalidInputError, describe
from ..validate import check_edges, check_finite_positive, check_int, check_interval

__all__ = ["Calibrator", "PlattCalibrator", "IsotonicCalibrator", "calibrate_prequential", "default_edges"]


class Calibrator(Protocol):
    """What a spam filter needs from a calibrator."""

    def update(self, score: float, outcome: bool) -> Any: ...

    def transform(self, score: float) -> float: ...


def _check_score(score: object) -> float:
    if isinstance(score, bool) or not isinstance(score, numbers.Real) or not math.isfinite(score):
        raise InvalidInputError(f"score must be a finite number (the model's log-odds), got {describe(score)}")
    return float(score)


def _check_outcome(outcome: object) -> bool:
    if isinstance(outcome, (bool, np.bool_)):
        return bool(outcome)
    if isinstance(outcome, numbers.Integral) and outcome in (0, 1):
        return bool(outcome)
    raise InvalidInputError(f"outcome must be a bool (or 0/1): True when the message is spam, got {describe(outcome)}")


class PlattCalibrator:
    """Online Platt scaling: P(spam | z) = sigmoid(a z + b) on the model's log-odds z.

    After each update, (a, b) minimise over the last ``window`` messages (z_i, y_i)

        L(a, b) = sum_i [log(1 + exp(u_i)) - t_i u_i] + (l2 / 2) (a^2 + b^2),  u_i = a z_i + b,

    the logistic log loss against Platt's smoothed targets t_i = (N+ + 1) / (N+ + 2) for a
    spam and 1 / (N- + 2) for a ham (N+, N- the spams and hams in the window): they keep
    the fit finite while the window is separable, which is the usual case early in a
    stream. The small ridge ``l2`` only settles degenerate windows (all z equal).
    Minimisation is Newton's method with step halving, warm-started from the previous
    (a, b), stopped when the Newton decrement g'H^-1 g / 2 (the loss a further step would
    still gain) falls below ``tol`` times max(1, L); a refit usually takes one or two
    steps of O(window) each. ``refit_every``
    > 1 refits less often (the window still takes every message).

    The window is short by default (500 messages) because the score being calibrated
    moves: naive Bayes log-odds grow in scale as the model sees more of each word, so old
    (z, y) pairs describe an older, less confident model (CHANGELOG.md, "Defaults and the
    measurements that chose them", has the windows measured). A linear map of z cannot
    follow every shape of miscalibration; :class:`IsotonicCalibrator` can.

    Before the first update the map is the identity on probabilities: a = 1, b = 0, so
    transform(z) = sigmoid(z), the model's own posterior.

    >>> calibrator = PlattCalibrator()
    >>> for z, spam in [(-40.0, False), (35.0, True), (-20.0, False), (50.0, True), (30.0, False)]:
    ...     _ = calibrator.update(z, spam)
    >>> 0.5 < calibrator.transform(40.0) < 0.9  # one confident mistake in five: not "100%" any more
    True

    Parameters
    ----------
    window : int
        How many of the latest messages the fit covers (>= 1).
    l2 : float
        The ridge on (a, b) (finite, > 0).
    refit_every : int
        Refit after this many updates (>= 1).
    max_iter : int
        Newton steps at most per refit (>= 1).
    tol : float
        Stop when a Newton step changes the loss by less than this (finite, > 0).

    Raises
    ------
    InvalidParameterError
        For a value out of its range.
    """

    def __init__(self, window: int = 500, *, l2: float = 1e-3, refit_every: int = 1,
                 max_iter: int = 50, tol: float = 1e-10) -> None:
        self.window = check_int("window", window, 1)
        self.refit_every = check_int("refit_every", refit_every, 1)
        self.max_iter = check_int("max_iter", max_iter, 1)
        self.l2 = check_finite_positive("l2", l2)
        self.tol = check_finite_positive("tol", tol)
        self.a = 1.0
        self.b = 0.0
        self.n = 0  # updates seen in all (the window holds min(n, window) of them)
        self._scores = np.zeros(self.window)
        self._outcomes = np.zeros(self.window, dtype=bool)

    def transform(self, score: float) -> float:
        """Calibrated P(spam) = sigmoid(a * score + b).

        Parameters
        ----------
        score : float
            A model's log-odds.

        Returns
        -------
        float
            The calibrated P(spam).
        """
        return float(expit(self.a * _check_score(score) + self.b))

    def update(self, score: float, outcome: bool) -> "PlattCalibrator":
        """Add one message (its log-odds and whether it is spam) and refit (a, b).

        Parameters
        ----------
        score : float
            A model's log-odds of a message, before it learned the message.
        outcome : bool
            True when the message is spam.

        Returns
        -------
        PlattCalibrator
            The calibrator itself.
        """
        z = _check_score(score)
        y = _check_outcome(outcome)
        slot = self.n % self.window
        self._scores[slot] = z
        self._outcomes[slot] = y
        self.n += 1
        if self.n % self.refit_every == 0:
            self.refit()
        return self

    def _window(self) -> tuple[np.ndarray, np.ndarray]:
        size = min(self.n, self.window)
        return self._scores[:size], self._outcomes[:size]

    def targets(self) -> np.ndarray:
        """Platt's smoothed targets of the messages in the window (order of the ring buffer)."""
        _, outcomes = self._window()
        n_pos = int(outcomes.sum())
        n_neg = len(outcomes) - n_pos
        return np.where(outcomes, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))

    def loss(self, a: float, b: float) -> float:
        """L(a, b) over the current window (see the class docstring)."""
        z, _ = self._window()
        u = a * z + b
        return float(np.sum(np.logaddexp(0.0, u) - self.targets() * u) + 0.5 * self.l2 * (a * a + b * b))

    def refit(self) -> None:
        """Minimise L(a, b) over the window by Newton's method from the current (a, b)."""
        z, _ = self._window()
        if not len(z):
            return
        t = self.targets()
        theta = np.array([self.a, self.b])
        current = self.loss(*theta)
        for _ in range(self.max_iter):
            p = expit(theta[0] * z + theta[1])
            residual = p - t
            weight = p * (1.0 - p)
            # Sums of elementwise products rather than `@`: a BLAS dot may start threads,
            # which costs far more than these sums on a busy machine.
            gradient = np.array([np.sum(residual * z) + self.l2 * theta[0], residual.sum() + self.l2 * theta[1]])
            wz = np.sum(weight * z)
            hessian = np.array([[np.sum(weight * z * z) + self.l2, wz], [wz, weight.sum() + self.l2]])
            step = np.linalg.solve(hessian, gradient)
            # Newton decrement: g' H^-1 g / 2 estimates what the step would still gain.
            if gradient @ step / 2.0 <= self.tol * max(1.0, abs(current)):
                break
            # Step halving: a full Newton step can overshoot far from the optimum (the
            # log loss is convex, so some fraction of the step always decreases it).
            scale = 1.0
            while scale > 1e-10:
                candidate = theta - scale * step
                value = self.loss(*candidate)
                if value <= current:
                    break
                scale /= 2.0
            else:
                break
            theta, current = candidate, value
        self.a, self.b = float(theta[0]), float(theta[1])

    def __repr__(self) -> str:
        return f"PlattCalibrator(a={self.a:.6g}, b={self.b:.6g}, n={self.n}, window={self.window})"


def default_edges(max_power: int = 12) -> np.ndarray:
    """Bin edges on the log-odds axis: 0 and +-2^k for k = -1 .. max_power.

    Doubling widths give fine bins where the posterior is uncertain (|z| of a few nats)
    and a handful of coarse ones across the hundreds of nats naive Bayes reaches on email.

    Parameters
    ----------
    max_power : int
        The largest k of the edges +-2^k.

    Returns
    -------
    numpy.ndarray
        The edges, increasing.
    """
    powers = 2.0 ** np.arange(-1, max_power + 1)
    return np.concatenate((-powers[::-1], [0.0], powers))


class IsotonicCalibrator:
    """Online isotonic calibration: a non-decreasing step map from log-odds bins to P(spam).

    The log-odds axis is cut at ``edges`` (bins (-inf, e_0), [e_0, e_1), ..., [e_last, inf)).
    Each bin keeps n_b (messages) and k_b (spams among them); every count is multiplied by
    ``decay`` before each update (1.0: keep everything; < 1 forgets old messages, for drift).
    The calibrated value of bin b is the pool-adjacent-violators (PAV) fit (scipy.optimize.
    isotonic_regression) of the smoothed
    rates r_b = (k_b + m/2) / (n_b + m) with weights n_b + m, m = ``smoothing``: the
    non-decreasing sequence closest to the r_b in weighted least squares. The smoothing (a
    Beta(m/2, m/2) prior: Jeffreys for m = 1) keeps every value strictly inside (0, 1) and
    gives an empty bin 1/2, which PAV then pools with its neighbours as needed.

    transform(z) is the value of z's bin; an update costs O(1) and the first transform
    after it O(bins) (the PAV refit is lazy).

    Parameters
    ----------
    edges : iterable of float or None
        The bin edges, finite and strictly increasing; None for :func:`default_edges`.
    smoothing : float
        m, the weight of the prior of each bin (finite, > 0).
    decay : float
        The factor applied to every count before each update (in (0, 1]).

    Raises
    ------
    InvalidParameterError
        For a value out of its range.
    """

    def __init__(self, edges: Iterable[float] | None = None, *, smoothing: float = 1.0, decay: float = 1.0) -> None:
        edges_array = default_edges() if edges is None else np.asarray(list(edges), dtype=float)
        check_edges(edges_array, edges)
        self.edges: npt.NDArray[np.float64] = edges_array
        self.smoothing: float = check_finite_positive("smoothing", smoothing)
        self.decay: float = check_interval("decay", decay, 0.0, 1.0, "(]")
        self.counts: npt.NDArray[np.float64] = np.zeros(len(edges_array) + 1)
        self.spams: npt.NDArray[np.float64] = np.zeros(len(edges_array) + 1)
        self.n: int = 0
        self._values: npt.NDArray[np.float64] | None = None

    def bin_of(self, score: float) -> int:
        """Index of the bin holding a log-odds value (e_{b-1} <= z < e_b).

        Parameters
        ----------
        score : float
            A log-odds value.

        Returns
        -------
        int
            The index of its bin.
        """
        return int(np.searchsorted(self.edges, score, side="right"))

    def update(self, score: float, outcome: bool) -> "IsotonicCalibrator":
        """Count one message (its log-odds and whether it is spam) in its bin.

        Parameters
        ----------
        score, outcome
            As for :meth:`PlattCalibrator.update`.

        Returns
        -------
        IsotonicCalibrator
            The calibrator itself.
        """
        b = self.bin_of(_check_score(score))
        y = _check_outcome(outcome)
        if self.decay != 1.0:
            self.counts *= self.decay
            self.spams *= self.decay
        self.counts[b] += 1.0
        self.spams[b] += y
        self.n += 1
        self._values = None
        return self

    def values(self) -> np.ndarray:
        """Calibrated P(spam) of every bin: PAV of the smoothed rates (non-decreasing)."""
        if self._values is None:
            m = self.smoothing
            from scipy.optimize import isotonic_regression  # imported when first needed: it is not small

            rates, weights = (self.spams + m / 2) / (self.counts + m), self.counts + m
            self._values = isotonic_regression(rates, weights=weights, increasing=True).x
        return self._values

    def transform(self, score: float) -> float:
        """Calibrated P(spam): the PAV value of the bin of ``score``.

        Parameters
        ----------
        score
            As for :meth:`PlattCalibrator.transform`.
        """
        return float(self.values()[self.bin_of(_check_score(score))])

    def __repr__(self) -> str:
        return f"IsotonicCalibrator(bins={len(self.counts)}, n={self.n}, decay={self.decay:g})"


def calibrate_prequential(calibrator: Calibrator, scores: Iterable[float], outcomes: Iterable[bool]) -> np.ndarray:
    """Calibrated probabilities of a stream: for each message transform(score), then update.

    The i-th probability depends only on messages before i, as in a deployed filter. The
    calibrator is updated in place.

    Parameters
    ----------
    calibrator : Calibrator
        Anything with ``transform(score)`` and ``update(score, outcome)``.
    scores : iterable of float
        The log-odds of the messages, in stream order.
    outcomes : iterable of bool
        True for each spam.

    Returns
    -------
    numpy.ndarray
        The calibrated P(spam) of each message.
    """
    score_list, outcome_list = list(scores), list(outcomes)
    if len(score_list) != len(outcome_list):
        raise InvalidInputError(f"scores has {len(score_list)} items but outcomes has {len(outcome_list)}")
    result = np.empty(len(score_list))
    for i, (score, outcome) in enumerate(zip(score_list, outcome_list)):
        result[i] = calibrator.transform(score)
        calibrator.update(score, outcome)
    return result
