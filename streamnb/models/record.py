"""The shared base of the record models (Gaussian, categorical, mixed): classes, priors, prediction.

A record is a mapping field -> value, e.g. ``{"size": 1234, "sender_domain": "x.com"}``. A
field absent from a record is missing data: it is neither learned nor scored, so one
record may carry any subset of the fields. The class prior and the posterior
normalisation are the very functions the text models use (``class_log_prior`` and
``log_posterior`` in ``base.py``); what a record model adds is its per-class tables and
its log-likelihood.

A subclass defines:

- ``_read(x)``: validate a record for learning (pure: raises, changes nothing);
- ``_check_removable(read, c, weight)``: raise if unlearning it would drive a count negative;
- ``_add(read, label, c, weight)``: add (weight > 0) or remove (weight < 0) it, cannot fail;
- ``_encode(x)``: validate a record for prediction (pure);
- ``_log_likelihood(encoded)``: log P(x | c) for every class, without the prior;
- ``_grow_classes(n)``, ``_merge_counts(other, class_map)`` and ``get_params()``;
- to be saved (``streamnb.persist``): ``@register_model``, ``_table_state()`` and
  ``_restore_tables(tables, arrays)``; the class bookkeeping is saved here.
"""

from __future__ import annotations

import abc
import copy
import math
import os
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from .. import persist
from ..errors import (
    InvalidInputError,
    InvalidTypeError,
    ModelFormatError,
    UnknownClassError,
    describe,
)
from ..store import settle
from ..validate import Label, check_class_allowed, check_class_prior, check_label, check_weight
from .base import ManyPredictions, class_log_prior, log_posterior
from .learning import check_same_model

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from typing_extensions import Self

    from ..store import Arrays
    from .values import Floats
else:
    from .._lazy import numpy as np

Record = Mapping[Hashable, Any]


class RecordNB(ManyPredictions, abc.ABC):
    """Class bookkeeping, learning and prediction shared by the record models.

    Parameters
    ----------
    class_prior
        ``"mle"`` (N_c / N, the default), ``"laplace"``, ``"uniform"`` or a fixed mapping
        label -> prior, exactly as for the text models.
    """

    def __init__(self, *, class_prior: str | Mapping[Label, float] = "mle") -> None:
        self.class_prior = check_class_prior(class_prior)
        self.labels: list[Label] = []
        self._class_index: dict[Label, int] = {}
        self.class_weights = np.zeros(0)  # N_c: sum of the weights of the records of class c

    # -- what subclasses define -------------------------------------------------------
    @abc.abstractmethod
    def _read(self, x: Record) -> Any:
        """Defined by each model."""

    @abc.abstractmethod
    def _check_removable(self, read: Any, c: int, weight: float) -> None:
        """Defined by each model."""

    @abc.abstractmethod
    def _add(self, read: Any, label: Label, c: int, weight: float) -> None:
        """Defined by each model."""

    @abc.abstractmethod
    def _encode(self, x: Record) -> Any:
        """Defined by each model."""

    @abc.abstractmethod
    def _log_likelihood(self, encoded: Any) -> Floats:
        """Defined by each model."""

    @abc.abstractmethod
    def _grow_classes(self, n_classes: int) -> None:
        """Defined by each model."""

    @abc.abstractmethod
    def _merge_counts(self, other: Self, class_map: npt.NDArray[np.int64]) -> None:
        """Defined by each model."""

    def get_params(self) -> dict[str, Any]:
        return {"class_prior": self.class_prior}

    # -- classes ----------------------------------------------------------------------
    @property
    def classes(self) -> list[Label]:
        """Classes with at least one learned record, in the order they first appeared."""
        return [self.labels[c] for c in self._active()]

    @property
    def class_counts(self) -> dict[Label, float]:
        """N_c: records (sum of weights) per class."""
        return {self.labels[c]: float(self.class_weights[c]) for c in self._active()}

    def _active(self) -> npt.NDArray[np.intp]:
        return np.flatnonzero(self.class_weights > 0)

    def _class_id(self, label: Label) -> int | None:
        return self._class_index.get(label)

    def _learned_class(self, label: Label) -> int:
        """The id of a class with records learned; UnknownClassError for any other label."""
        label = check_label(label)
        c = self._class_id(label)
        if c is None or self.class_weights[c] <= 0:
            raise UnknownClassError(f"class {label!r} was never learned (classes: {self.classes})")
        return c

    def _add_class(self, label: Label) -> int:
        c = self._class_index.get(label)
        if c is None:
            c = len(self.labels)
            self.labels.append(label)
            self._class_index[label] = c
            self.class_weights = np.append(self.class_weights, 0.0)
            self._grow_classes(len(self.labels))
        return c

    def _log_prior(self) -> Floats:
        """log P(c) for every class (inactive classes get -inf)."""
        return class_log_prior(self.class_weights, self.labels, self.class_prior)

    @staticmethod
    def _record(x: object) -> Record:
        if not isinstance(x, Mapping):
            raise InvalidTypeError(f"a record must be a mapping field -> value, got {describe(x)}")
        return x

    # -- learning ---------------------------------------------------------------------
    def learn_one(self, x: Record, y: Label, w: float = 1.0) -> "RecordNB":
        """Add one record of class y with weight w.

        Parameters
        ----------
        x
            A record: a mapping field -> value.
        y
            Its class (a str, int or bool).
        w
            Its sample weight, a finite number > 0.

        Returns
        -------
        RecordNB
            The model itself.

        Raises
        ------
        InvalidInputError, InvalidTypeError, InvalidLabelError, UnknownClassError
            For a record, label or weight the model cannot learn; nothing changes.
        """
        label = check_label(y)
        weight = check_weight(w)
        read = self._read(x)
        check_class_allowed(self.class_prior, label)
        self._check_learn(read, label, weight)
        self._commit(read, label, weight)
        return self

    def unlearn_one(self, x: Record, y: Label, w: float = 1.0) -> "RecordNB":
        """Remove one record learned earlier as class y with weight w: the inverse of learn_one.

        Parameters
        ----------
        x, y, w
            The record, its class and the weight it was learned with.

        Returns
        -------
        RecordNB
            The model, the record taken out.

        Raises
        ------
        InvalidInputError, UnknownClassError
            When the record cannot have been learned so; nothing changes.
        """
        label = check_label(y)
        weight = check_weight(w)
        read = self._read(x)
        self._check_unlearn(read, label, weight)
        self._commit(read, label, -weight)
        return self

    def _check_learn(self, read: Any, label: Label, weight: float) -> None:
        """Raise, changing nothing, for a validated record this model cannot add (none here)."""

    def _check_unlearn(self, read: Any, label: Label, weight: float) -> None:
        c = self._class_id(label)
        if c is None or self.class_weights[c] <= 0:
            raise UnknownClassError(f"cannot unlearn from class {label!r}: it was never learned")
        if settle(self.class_weights[c], -weight) < 0:
            raise InvalidInputError(
                f"class {label!r} has {self.class_weights[c]:g} records (by weight); cannot remove {weight:g}")
        self._check_removable(read, c, weight)

    def _commit(self, read: Any, label: Label, weight: float) -> None:
        """Apply a validated record: weight > 0 learns it, weight < 0 unlearns it."""
        c = self._add_class(label) if weight > 0 else self._class_index[label]  # unlearning: _check_unlearn found it
        self._add(read, label, c, weight)
        self.class_weights[c] = settle(self.class_weights[c], weight)

    def learn_many(self, X: Iterable[Record] | npt.NDArray[Any], y: Sequence[Label], w: Sequence[float] | None = None,
                   *, feature_names: Sequence[Hashable] | None = None) -> "RecordNB":
        """Learn many records (mappings, or the rows of a 2-D array named by feature_names).

        Equals learn_one on each record in turn; everything is validated before anything is learned.
        """
        records = self._rows(X, feature_names)
        labels = [check_label(label) for label in y]
        weights = [1.0] * len(labels) if w is None else [check_weight(v) for v in w]
        if not len(records) == len(labels) == len(weights):
            raise InvalidInputError(f"X, y and w differ in length: {len(records)}, {len(labels)}, {len(weights)}")
        reads = [self._read(x) for x in records]
        for label in dict.fromkeys(labels):
            check_class_allowed(self.class_prior, label)
        for read, label, weight in zip(reads, labels, weights):
            self._check_learn(read, label, weight)
        for read, label, weight in zip(reads, labels, weights):
            self._commit(read, label, weight)
        return self

    def unlearn_many(self, X: Iterable[Record] | npt.NDArray[Any], y: Sequence[Label], w: Sequence[float] | None = None,
                     *, feature_names: Sequence[Hashable] | None = None) -> "RecordNB":
        """Unlearn many records; all or nothing (a failure restores the model)."""
        records = self._rows(X, feature_names)
        labels = list(y)
        weights = [1.0] * len(labels) if w is None else list(w)
        if not len(records) == len(labels) == len(weights):
            raise InvalidInputError(f"X, y and w differ in length: {len(records)}, {len(labels)}, {len(weights)}")
        backup = copy.deepcopy(self.__dict__)
        try:
            for record, label, weight in zip(records, labels, weights):
                self.unlearn_one(record, label, weight)
        except Exception:
            self.__dict__.clear()
            self.__dict__.update(backup)
            raise
        return self

    @staticmethod
    def _rows(X: Iterable[Record] | npt.NDArray[Any], feature_names: Sequence[Hashable] | None) -> list[Record]:
        if isinstance(X, np.ndarray):
            if X.ndim != 2:
                raise InvalidInputError(f"an array of records must be 2-D, got shape {X.shape}")
            names = list(range(X.shape[1])) if feature_names is None else list(feature_names)
            if len(names) != X.shape[1]:
                raise InvalidInputError(f"the array has {X.shape[1]} columns but {len(names)} feature_names")
            return [dict(zip(names, row.tolist())) for row in X]
        if isinstance(X, (str, Mapping)):
            raise InvalidTypeError(f"learn_many takes a sequence of records, got {describe(X)}")
        return list(X)

    # -- merging ----------------------------------------------------------------------
    def merge(self, other: "RecordNB") -> "RecordNB":
        """Add other's statistics to this model: the model trained on self's data then other's.

        Parameters
        ----------
        other
            A model of the same type and parameters.

        Returns
        -------
        RecordNB
            This model, holding both.

        Raises
        ------
        IncompatibleModelsError
            For another model type or other parameters; nothing changes.
        """
        self._check_mergeable(other)
        class_map = np.array([self._add_class(label) for label in other.labels], dtype=np.int64)
        self._merge_counts(other, class_map)
        self.class_weights[class_map] += other.class_weights
        return self

    def _check_mergeable(self, other: Self) -> None:
        check_same_model(self, other)

    # -- prediction -------------------------------------------------------------------
    def predict_log_proba_one(self, x: Record) -> dict[Label, float]:
        """log P(c | x) for every class; an empty dict when nothing has been learned."""
        encoded = self._encode(x)
        active = self._active()
        if not len(active):
            return {}
        return {self.labels[c]: float(v) for c, v in zip(active, self._log_posterior(encoded, active))}

    def _log_posterior(self, encoded: Any, active: npt.NDArray[np.intp]) -> Floats:
        prior = self._log_prior()[active]
        with np.errstate(divide="ignore", invalid="ignore"):
            jll = prior + self._log_likelihood(encoded)[active]
        return log_posterior(jll, lambda: prior)

    def predict_proba_one(self, x: Record) -> dict[Label, float]:
        """P(c | x) for every class, from log space; an empty dict when untrained."""
        return {label: math.exp(v) for label, v in self.predict_log_proba_one(x).items()}

    # -- persistence ------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model to ``path`` atomically (format: ``streamnb.persist``); read it with ``streamnb.load``."""
        persist.save(self, path)

    def _state(self) -> tuple[dict[str, Any], Arrays]:
        """The persistence hook: params, labels and N_c here, the per-class tables from the subclass."""
        tables, arrays = self._table_state()
        return ({"params": self.get_params(), "labels": list(self.labels), "tables": tables},
                {"class_weights": self.class_weights[: len(self.labels)].astype(np.float64), **arrays})

    @classmethod
    def _from_state(cls, state: dict[str, Any], arrays: Arrays) -> "RecordNB":
        """Rebuild a model from ``_state``'s output; ModelFormatError for anything inconsistent."""
        if set(state) != {"params", "labels", "tables"}:
            raise ModelFormatError(f"state keys {sorted(state)} differ from ['labels', 'params', 'tables']")
        model = cls(**state["params"])
        labels = state["labels"]
        if not (isinstance(labels, list) and all(isinstance(label, (str, int, bool)) for label in labels)
                and len(set(labels)) == len(labels)):
            raise ModelFormatError(f"labels must be distinct str, int or bool values, got {describe(labels)}")
        for label in labels:
            model._add_class(check_label(label))
        model.class_weights = table(arrays, "class_weights", (len(labels),)).copy()
        model._restore_tables(state["tables"], arrays)
        # an array this model would not write is one it did not read: refused, not ignored
        unknown = model._foreign_arrays(arrays)
        if unknown:
            raise ModelFormatError(f"arrays {unknown[:5]!r} are not arrays of a {cls.__name__}")
        return model

    @abc.abstractmethod
    def _table_state(self) -> tuple[Any, Arrays]:
        """Defined by each model."""

    #: The arrays ``_table_state`` writes (a model whose set depends on its parts overrides
    #: ``_foreign_arrays`` instead).
    _TABLE_ARRAYS: frozenset[str] = frozenset()

    def _foreign_arrays(self, arrays: Arrays) -> list[str]:
        """The arrays of a saved model that this model does not read (``_from_state`` refuses them)."""
        return sorted(set(arrays) - {"class_weights"} - self._TABLE_ARRAYS)

    @abc.abstractmethod
    def _restore_tables(self, tables: Any, arrays: Arrays) -> None:
        """Defined by each model."""

    def predict_one(self, x: Record) -> Label | None:
        """The most probable class (first learned wins ties); None when untrained."""
        encoded = self._encode(x)
        active = self._active()
        if not len(active):
            return None
        return self.labels[int(active[int(np.argmax(self._log_posterior(encoded, active)))])]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(classes={len(self.classes)})"


_S = TypeVar("_S", bound="np.generic")  # a string: numpy is imported on first use


def grow_rows(array: npt.NDArray[_S], n_rows: int) -> npt.NDArray[_S]:
    """array with at least n_rows rows (zeros appended, capacity doubled)."""
    if n_rows <= array.shape[0]:
        return array
    grown = np.zeros((max(n_rows, 2 * array.shape[0]),) + array.shape[1:], dtype=array.dtype)
    grown[: array.shape[0]] = array
    return grown


def grow_columns(array: npt.NDArray[_S], n_columns: int) -> npt.NDArray[_S]:
    """array with at least n_columns columns (zeros appended, capacity doubled)."""
    if n_columns <= array.shape[1]:
        return array
    grown = np.zeros((array.shape[0], max(n_columns, 2 * array.shape[1])), dtype=array.dtype)
    grown[:, : array.shape[1]] = array
    return grown


def table(arrays: Arrays, name: str, shape: tuple[int, ...], minimum: float = 0.0) -> Floats:
    """A saved float64 array of the given shape, finite and >= minimum (ModelFormatError otherwise)."""
    array = arrays.get(name)
    if not isinstance(array, np.ndarray) or array.dtype != np.float64 or array.shape != shape:
        raise ModelFormatError(f"array {name!r} must be float64 of shape {shape}, got "
                               f"{getattr(array, 'dtype', None)} {getattr(array, 'shape', None)}")
    if not np.isfinite(array).all() or (array < minimum).any():
        raise ModelFormatError(f"array {name!r} holds non-finite values or values below {minimum:g}")
    return array
