"""Gaussian naive Bayes for numeric fields, with running (Welford) moments per class and feature."""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInputError, InvalidTypeError, ModelFormatError, describe
from ..persist import register_model
from ..store import Vocabulary, settle
from ..validate import Label, check_nonnegative
from .record import Record, RecordNB, grow_columns, grow_rows, table

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ..store import Arrays
    from .values import Floats
else:
    from .._lazy import numpy as np

_LOG_2PI = math.log(2 * math.pi)
_RESIDUE_ULPS = 64.0  # M2 below this many ulps of sum w x^2, after a removal, is rounding (see combine)


def combine(n_a: Floats, mean_a: Floats, m2_a: Floats, n_b: float | Floats, mean_b: float | Floats,
            m2_b: float | Floats) -> tuple[Floats, Floats, Floats]:
    """Moments of the union of two weighted samples (Chan, Golub and LeVeque).

    n = n_a + n_b, mean = mean_a + d n_b / n, M2 = M2_a + M2_b + d^2 n_a n_b / n with
    d = mean_b - mean_a; M2 = sum of w (x - mean)^2, so the variance is M2 / n.
    With (n_b, mean_b, M2_b) = (w, x, 0) this is Welford's update for one value of
    weight w, and with n_b = -w it removes that value again (the exact algebraic inverse).
    Where n comes to zero (up to rounding) the moments are exactly zero, and an M2 left
    below the rounding noise of a removal is zero too (so that removing all but identical
    values gives a variance of exactly 0, as learning only those would).
    """
    n = settle(n_a, n_b)
    empty = n <= 0
    safe_n = np.where(empty, 1.0, n)
    delta = mean_b - mean_a
    mean = np.where(empty, 0.0, mean_a + delta * (n_b / safe_n))
    m2 = np.where(empty, 0.0, np.maximum(settle(m2_a + m2_b, delta * delta * (n_a * n_b / safe_n)), 0.0))
    # A removal's M2 also carries the rounding of every earlier update: ~eps of the raw second
    # moment sum w x^2 = n mean^2 + M2. A far value removed before a close one leaves ~1e-16 of
    # its large term behind, which the close one's small term cannot tell from a spread; below
    # a few ulps of the raw moment, M2 is such a residue.
    raw_moment = n_a * mean_a * mean_a + m2_a
    m2 = np.where((np.asarray(n_b) < 0) & (m2 <= _RESIDUE_ULPS * sys.float_info.epsilon * raw_moment), 0.0, m2)
    return n, mean, m2


@register_model
class GaussianNB(RecordNB):
    """Gaussian naive Bayes over numeric fields, learned one record at a time.

    Per class c and feature i: the weighted count n_ci, mean mu_ci and M2_ci (Welford; Chan's
    formula to merge; exact reversal to unlearn), and
    log P(x_i | c) = -1/2 [log(2 pi s2_ci) + (x_i - mu_ci)^2 / s2_ci], s2_ci = M2_ci / n_ci + eps.

    The variance floor follows scikit-learn's ``var_smoothing``: eps = var_smoothing x the
    largest variance of any feature over ALL records (unweighted, whatever the classes and
    sample weights, as scikit-learn's ``np.var(X, axis=0).max()``). For that the model also
    keeps per-feature running moments over all records, counting each record once.

    Missing data: a feature absent from a record is skipped (it does not update that
    feature's statistics and is not scored), so n_ci may differ from the class count N_c.
    A feature present at prediction but never observed in class c is scored for c with the
    pooled (all-records) mean and variance, which tells c apart from the others by nothing
    but its other features. Features never learned are ignored. A feature whose variance is
    zero in some class even after the floor (var_smoothing = 0, or every value learned so
    far the same, where scikit-learn divides by zero) is left out of the score.

    Sample weights: a record of weight w counts as w records in n_ci, mu_ci, M2_ci and N_c
    (scikit-learn's ``sample_weight``). unlearn_one must be given the weight the record was
    learned with.

    Cost: learn_one and predict_one are O(fields of the record x classes); eps is a maximum
    over the features, recomputed at most once per update.

    Parameters
    ----------
    var_smoothing
        The variance floor's factor (a finite number >= 0; default 1e-9, scikit-learn's).
    class_prior
        The class prior, as the discrete models' (``DiscreteNB``); ``"mle"`` by default.

    Raises
    ------
    InvalidParameterError
        For ``var_smoothing`` not a finite number >= 0, or a ``class_prior`` out of its choices.

    >>> model = GaussianNB()
    >>> _ = model.learn_one({"size": 900.0}, "spam").learn_one({"size": 1100.0}, "spam")
    >>> _ = model.learn_one({"size": 5000.0}, "ham").learn_one({"size": 7000.0}, "ham")
    >>> model.predict_one({"size": 1000.0}), model.class_statistics("spam")
    ('spam', {'size': (2.0, 1000.0, 10000.0)})
    """

    def __init__(self, var_smoothing: float = 1e-9, *, class_prior: str | Mapping[Label, float] = "mle") -> None:
        var_smoothing = check_nonnegative("var_smoothing", var_smoothing)
        super().__init__(class_prior=class_prior)
        self.var_smoothing: float = var_smoothing
        self.features: Vocabulary = Vocabulary()
        # per class and feature: weighted count, mean, M2 (rows: classes, columns: feature ids)
        self._n: Floats = np.zeros((0, 0))
        self._mean: Floats = np.zeros((0, 0))
        self._m2: Floats = np.zeros((0, 0))
        # per feature over all records, each counted once: for eps and the pooled fallback
        self._pooled_n: Floats = np.zeros(0)
        self._pooled_mean: Floats = np.zeros(0)
        self._pooled_m2: Floats = np.zeros(0)
        self._version: int = 0
        self._epsilon_cache: tuple[int, float] = (-1, 0.0)

    def get_params(self) -> dict[str, Any]:
        return {**super().get_params(), "var_smoothing": self.var_smoothing}

    # -- records ----------------------------------------------------------------------
    def _values(self, x: Record) -> tuple[list[Hashable], Floats]:
        """(feature names, finite float values) of a record."""
        record = self._record(x)
        names = list(record)
        values = np.empty(len(names))
        for i, (name, value) in enumerate(record.items()):
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
                raise InvalidTypeError(f"value of feature {name!r} must be a real number, got {describe(value)}")
            values[i] = value
            if not math.isfinite(values[i]):
                raise InvalidInputError(f"value of feature {name!r} must be finite, got {value!r}")
        return names, values

    _read = _values

    def _encode(self, x: Record) -> tuple[npt.NDArray[np.int64], Floats]:
        names, values = self._values(x)
        ids = self.features.find(names)
        known = ids >= 0
        return ids[known], values[known]

    # -- learning ---------------------------------------------------------------------
    def _grow_classes(self, n_classes: int) -> None:
        self._n, self._mean, self._m2 = (grow_rows(a, n_classes) for a in (self._n, self._mean, self._m2))

    def _reserve_features(self) -> None:
        capacity = self.features.capacity
        self._n, self._mean, self._m2 = (grow_columns(a, capacity) for a in (self._n, self._mean, self._m2))
        self._pooled_n, self._pooled_mean, self._pooled_m2 = (
            grow_rows(a, capacity) for a in (self._pooled_n, self._pooled_mean, self._pooled_m2))

    def _check_removable(self, read: tuple[list[Hashable], Floats], c: int, weight: float) -> None:
        names, _ = read
        ids = self.features.find(names)
        if (ids < 0).any():
            raise InvalidInputError(f"cannot unlearn feature(s) {[n for n, i in zip(names, ids) if i < 0][:3]!r}: "
                                    "never learned")
        left = settle(self._n[c, ids], -weight)
        if (left < 0).any():
            bad = names[int(np.flatnonzero(left < 0)[0])]
            raise InvalidInputError(f"feature {bad!r} has weight {self._n[c, ids][left < 0][0]:g} in class "
                                    f"{self.labels[c]!r}; cannot remove {weight:g}")
        # A feature leaves V when its record count and every class count reach zero together;
        # removing a record with another weight than it was learned with would split them.
        pooled_left = self._pooled_n[ids] - 1
        others = self._n[: len(self.labels), ids].sum(axis=0) - self._n[c, ids]
        if ((pooled_left == 0) != ((left == 0) & (others == 0))).any():
            raise InvalidInputError(
                f"unlearning this record with weight {weight:g} does not undo how it was learned: "
                "unlearn records with the weight they were learned with")

    def _add(self, read: tuple[list[Hashable], Floats], label: Label, c: int, weight: float) -> None:
        names, values = read
        if not names:
            return
        ids = self.features.find_or_add(names) if weight > 0 else self.features.find(names)
        self._reserve_features()
        self._n[c, ids], self._mean[c, ids], self._m2[c, ids] = combine(
            self._n[c, ids], self._mean[c, ids], self._m2[c, ids], weight, values, 0.0)
        self._pooled_n[ids], self._pooled_mean[ids], self._pooled_m2[ids] = combine(
            self._pooled_n[ids], self._pooled_mean[ids], self._pooled_m2[ids], math.copysign(1.0, weight), values, 0.0)
        self._version += 1
        if weight < 0:
            self.features.remove(ids[self._pooled_n[ids] == 0].tolist())

    def _merge_counts(self, other: GaussianNB, class_map: npt.NDArray[np.int64]) -> None:
        other_ids = np.flatnonzero(other._pooled_n[: other.features.capacity] > 0)
        if not len(other_ids):
            return
        ids = self.features.find_or_add(other.features.tokens(other_ids))
        self._reserve_features()
        rows = np.ix_(class_map, ids)
        theirs = np.ix_(np.arange(len(class_map)), other_ids)
        self._n[rows], self._mean[rows], self._m2[rows] = combine(
            self._n[rows], self._mean[rows], self._m2[rows],
            other._n[theirs], other._mean[theirs], other._m2[theirs])
        self._pooled_n[ids], self._pooled_mean[ids], self._pooled_m2[ids] = combine(
            self._pooled_n[ids], self._pooled_mean[ids], self._pooled_m2[ids],
            other._pooled_n[other_ids], other._pooled_mean[other_ids], other._pooled_m2[other_ids])
        self._version += 1

    # -- persistence ------------------------------------------------------------------
    _TABLE_ARRAYS = frozenset({"feature_id", "free_id", "n", "mean", "m2", "pooled_n", "pooled_mean", "pooled_m2"})

    def _table_state(self) -> tuple[dict[str, list[Hashable | None]], Arrays]:
        """The features (ids kept) and the per-class and pooled moments of the learned ones."""
        ids = self.features.ids()
        k = len(self.labels)
        arrays = {"feature_id": ids, "free_id": np.array(self.features.free_ids(), dtype=np.int64),
                  "n": self._n[:k, ids], "mean": self._mean[:k, ids], "m2": self._m2[:k, ids],
                  "pooled_n": self._pooled_n[ids], "pooled_mean": self._pooled_mean[ids],
                  "pooled_m2": self._pooled_m2[ids]}
        return {"features": self.features.tokens(ids)}, {name: a.astype(np.float64) if a.dtype.kind == "f" else a
                                                         for name, a in arrays.items()}

    def _restore_tables(self, tables: object, arrays: Arrays) -> None:
        if not (isinstance(tables, dict) and set(tables) == {"features"}):
            raise ModelFormatError("GaussianNB tables must hold the features")
        ids = arrays.get("feature_id")
        self.features.restore(ids, tables["features"], arrays.get("free_id"))
        assert ids is not None  # restore refused a missing array
        self._reserve_features()
        k, f = len(self.labels), len(ids)
        n = table(arrays, "n", (k, f))
        if not (table(arrays, "pooled_n", (f,)) > 0).all():
            raise ModelFormatError("a saved feature has no learned value")
        self._n[:k, ids], self._m2[:k, ids] = n, table(arrays, "m2", (k, f))
        self._mean[:k, ids] = table(arrays, "mean", (k, f), minimum=-math.inf)
        self._pooled_n[ids], self._pooled_m2[ids] = arrays["pooled_n"], table(arrays, "pooled_m2", (f,))
        self._pooled_mean[ids] = table(arrays, "pooled_mean", (f,), minimum=-math.inf)

    # -- prediction -------------------------------------------------------------------
    @property
    def epsilon(self) -> float:
        """The variance floor: var_smoothing x max over features of the all-records variance."""
        version, value = self._epsilon_cache
        if version != self._version:
            count = self._pooled_n[: self.features.capacity]
            learned = count > 0
            variances = self._pooled_m2[: self.features.capacity][learned] / count[learned]
            value = self.var_smoothing * float(variances.max()) if len(variances) else 0.0
            self._epsilon_cache = (self._version, value)
        return value

    def _log_likelihood(self, encoded: tuple[npt.NDArray[np.int64], Floats]) -> Floats:
        """sum over the record's known features of log N(x_i; mu_ci, s2_ci)."""
        ids, values = encoded
        n_classes = len(self.labels)
        if not len(ids):
            return np.zeros(n_classes)
        n = self._n[:n_classes, ids]
        seen = n > 0
        mean = np.where(seen, self._mean[:n_classes, ids], self._pooled_mean[ids])
        variance = np.where(seen, self._m2[:n_classes, ids] / np.where(seen, n, 1.0),
                            self._pooled_m2[ids] / self._pooled_n[ids]) + self.epsilon
        # A zero variance (eps = 0: var_smoothing = 0, or every value so far the same) makes
        # the density a spike; such a feature is left out for every class.
        usable = (variance > 0).all(axis=0)
        if not usable.all():
            mean, variance, values = mean[:, usable], variance[:, usable], values[usable]
        log_likelihood: Floats = -0.5 * (np.log(variance) + _LOG_2PI + (values - mean) ** 2 / variance).sum(axis=1)
        return log_likelihood

    # -- introspection ----------------------------------------------------------------
    @property
    def n_features(self) -> int:
        """Features with at least one learned value."""
        return len(self.features)

    def class_statistics(self, label: Label) -> dict[Hashable, tuple[float, float, float]]:
        """feature -> (weight n_ci, mean mu_ci, variance M2_ci / n_ci without the floor) for one class.

        Parameters
        ----------
        label
            A class the model has learned.

        Returns
        -------
        dict
            Feature -> (n_ci, mu_ci, variance), for the features the class has values of.

        Raises
        ------
        UnknownClassError
            For a class never learned.
        """
        c = self._learned_class(label)
        ids = np.flatnonzero(self._n[c, : self.features.capacity] > 0)
        return {self.features.token(int(i)): (float(self._n[c, i]), float(self._mean[c, i]),
                                              float(self._m2[c, i] / self._n[c, i])) for i in ids}

    def __repr__(self) -> str:
        return (f"GaussianNB(var_smoothing={self.var_smoothing!r}, classes={len(self.classes)}, "
                f"features={self.n_features})")
