"""Categorical naive Bayes: each field takes one of a set of categories that grows as they appear."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInputError, InvalidTypeError, ModelFormatError, describe
from ..persist import register_model
from ..store import Vocabulary, settle
from ..validate import Label, check_alpha, check_choice, check_count
from .record import Record, RecordNB, grow_columns, grow_rows, table

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ..store import Arrays
    from .values import Floats
else:
    from .._lazy import numpy as np

Category = str | int | bool | float
UNSEEN_CATEGORY_CHOICES = ("ignore", "score", "error")


@register_model
class CategoricalNB(RecordNB):
    """Categorical naive Bayes over fields whose categories are discovered as they arrive.

    P(x_i = v | c) = (N_civ + alpha) / (N_ci + alpha * n_i), with N_civ the (weighted) records
    of class c whose field i is v, N_ci = sum_v N_civ the records of class c that have field
    i, and n_i = max(categories of field i seen so far, min_categories). n_i is the same for
    every class, so a new category changes every class's denominator at once; a category
    whose counts all return to zero (unlearning) is forgotten and n_i shrinks again. This
    equals scikit-learn's CategoricalNB fitted on the same records with the categories
    encoded 0 .. n_i - 1 (scikit-learn takes n_i from the largest code seen).

    Missing data: a field absent from a record is neither learned nor scored. Categories
    are str, int, bool or finite float values (use GaussianNB for measurements).

    A category never seen for a known field, at prediction time (``unseen``):

    - ``"ignore"`` (the default): the field is left out, as unseen words are;
    - ``"score"``: scored as a zero-count category, one more than those seen:
      log alpha - log(N_ci + alpha * max(seen + 1, min_categories));
    - ``"error"``: InvalidInputError naming the field and the value.

    A field never seen at all is ignored whatever ``unseen`` says. Categories are dict keys,
    so ``True`` and ``1`` are the same category.

    Parameters
    ----------
    alpha
        Additive smoothing (a finite number > 0; default 1).
    min_categories
        The least n_i: an int >= 0 for every field, a mapping field -> int >= 0 (fields it
        does not name: none), or None (the default: the categories seen).
    unseen
        ``"ignore"``, ``"score"`` or ``"error"`` (above).
    class_prior
        ``"mle"`` (the default), ``"laplace"``, ``"uniform"``, or a mapping label -> prior
        probability, as the discrete models' (``DiscreteNB``).

    Raises
    ------
    InvalidParameterError
        For a parameter out of its range or choices.

    >>> model = CategoricalNB()
    >>> _ = model.learn_one({"domain": "x.biz", "hour": 3}, "spam").learn_one({"domain": "work.org"}, "ham")
    >>> model.n_categories("domain"), model.predict_one({"domain": "x.biz"})
    (2, 'spam')
    """

    def __init__(self, alpha: float = 1.0, *, min_categories: int | Mapping[Hashable, int] | None = None,
                 unseen: str = "ignore", class_prior: str | Mapping[Label, float] = "mle") -> None:
        super().__init__(class_prior=class_prior)
        self.alpha = check_alpha(alpha, allow_zero=False)
        self.min_categories = _check_min_categories(min_categories)
        self.unseen = check_choice("unseen", unseen, UNSEEN_CATEGORY_CHOICES)
        self.features = Vocabulary()
        self._index: list[dict[Category, int] | None] = []  # per feature id: category -> column
        self._categories: list[list[Category]] = []  # per feature id: column -> category
        self._counts: list[Floats] = []  # per feature id: (classes, columns) N_civ
        self._totals: Floats = np.zeros((0, 0))  # (classes, feature ids) N_ci

    def get_params(self) -> dict[str, Any]:
        return {**super().get_params(), "alpha": self.alpha, "min_categories": self.min_categories,
                "unseen": self.unseen}

    # -- records ----------------------------------------------------------------------
    def _read(self, x: Record) -> list[tuple[Hashable, Category]]:
        return [(name, _check_category(name, value)) for name, value in self._record(x).items()]

    def _encode(self, x: Record) -> list[tuple[int, int]]:
        """(feature id, column) of the record's known fields; column -1 for an unseen category."""
        encoded = []
        for name, value in self._read(x):
            i = int(self.features.find([name])[0])
            if i < 0:
                continue
            column = self._index_of(i).get(value, -1)
            if column < 0:
                if self.unseen == "ignore":
                    continue
                if self.unseen == "error":
                    raise InvalidInputError(
                        f"category {value!r} of feature {name!r} was never learned "
                        f"(known: {self._categories[i][:10]!r}{' ...' if len(self._categories[i]) > 10 else ''})")
            encoded.append((i, column))
        return encoded

    # -- learning ---------------------------------------------------------------------
    def _grow_classes(self, n_classes: int) -> None:
        self._totals = grow_rows(self._totals, n_classes)
        self._counts = [grow_rows(counts, n_classes) for counts in self._counts]

    def _feature_id(self, name: Hashable) -> int:
        i = int(self.features.find_or_add([name])[0])
        while len(self._index) <= i:
            self._index.append(None)
            self._categories.append([])
            self._counts.append(np.zeros((self._totals.shape[0], 0)))
        if self._index[i] is None:
            self._index[i] = {}
        self._totals = grow_columns(self._totals, i + 1)
        return i

    def _index_of(self, i: int) -> dict[Category, int]:
        """category -> column of a feature in the vocabulary."""
        index = self._index[i]
        assert index is not None  # only ids out of the vocabulary have no index
        return index

    def _column(self, i: int, value: Category) -> int:
        column = self._index_of(i).get(value)
        if column is None:
            column = len(self._categories[i])
            self._index_of(i)[value] = column
            self._categories[i].append(value)
            self._counts[i] = grow_columns(self._counts[i], column + 1)
        return column

    def _check_removable(self, read: list[tuple[Hashable, Category]], c: int, weight: float) -> None:
        for name, value in read:
            i = int(self.features.find([name])[0])
            column = self._index_of(i).get(value, -1) if i >= 0 else -1
            if column < 0:
                raise InvalidInputError(f"cannot unlearn category {value!r} of feature {name!r}: never learned")
            if settle(self._counts[i][c, column], -weight) < 0:
                raise InvalidInputError(
                    f"category {value!r} of feature {name!r} has weight {self._counts[i][c, column]:g} in class "
                    f"{self.labels[c]!r}; cannot remove {weight:g}")

    def _add(self, read: list[tuple[Hashable, Category]], label: Label, c: int, weight: float) -> None:
        for name, value in read:
            i = self._feature_id(name) if weight > 0 else int(self.features.find([name])[0])
            column = self._column(i, value)
            self._counts[i][c, column] = settle(self._counts[i][c, column], weight)
            self._totals[c, i] = settle(self._totals[c, i], weight)
            if weight < 0 and not self._counts[i][:, column].any():
                self._forget(i, column)

    def _forget(self, i: int, column: int) -> None:
        """Drop a category whose counts are all zero (the last column moves into its place)."""
        categories, counts = self._categories[i], self._counts[i]
        last = len(categories) - 1
        del self._index_of(i)[categories[column]]
        if column != last:
            categories[column] = categories[last]
            self._index_of(i)[categories[column]] = column
            counts[:, column] = counts[:, last]
        counts[:, last] = 0.0
        categories.pop()
        if not categories:
            self._totals[:, i] = 0.0
            self._index[i] = None
            self.features.remove([i])

    def _merge_counts(self, other: CategoricalNB, class_map: npt.NDArray[np.int64]) -> None:
        for j, categories in enumerate(other._categories):
            if not categories:
                continue
            i = self._feature_id(other.features.token(j))
            columns = np.array([self._column(i, value) for value in categories], dtype=np.int64)
            rows = len(class_map)
            self._counts[i][np.ix_(class_map, columns)] += other._counts[j][:rows, : len(categories)]
            self._totals[class_map, i] += other._totals[:rows, j]

    # -- persistence ------------------------------------------------------------------
    _TABLE_ARRAYS = frozenset({"feature_id", "free_id", "counts", "totals"})

    def _table_state(self) -> tuple[dict[str, list[Any]], Arrays]:
        """The features (ids kept), their categories in column order, N_civ side by side, N_ci."""
        ids = self.features.ids()
        k = len(self.labels)
        categories = [list(self._categories[i]) for i in ids]
        blocks = [self._counts[i][:k, : len(c)] for i, c in zip(ids.tolist(), categories)]
        arrays = {"feature_id": ids, "free_id": np.array(self.features.free_ids(), dtype=np.int64),
                  "counts": np.concatenate(blocks, axis=1) if blocks else np.zeros((k, 0)),
                  "totals": self._totals[:k, ids].astype(np.float64)}
        return {"features": self.features.tokens(ids), "categories": categories}, arrays

    def _restore_tables(self, tables: object, arrays: Arrays) -> None:
        if not (isinstance(tables, dict) and set(tables) == {"features", "categories"}):
            raise ModelFormatError("CategoricalNB tables must hold the features and their categories")
        ids, categories = arrays.get("feature_id"), tables["categories"]
        self.features.restore(ids, tables["features"], arrays.get("free_id"))
        assert ids is not None  # restore refused a missing array
        if not (isinstance(categories, list) and len(categories) == len(ids) and all(
                isinstance(c, list) and c and all(_is_category(v) for v in c) and len(set(c)) == len(c)
                for c in categories)):
            raise ModelFormatError("each feature needs a list of distinct str/int/bool/finite float categories")
        k, capacity = len(self.labels), self.features.capacity
        counts = table(arrays, "counts", (k, sum(len(c) for c in categories)))
        self._totals = grow_columns(self._totals, capacity)
        self._totals[:k, ids] = table(arrays, "totals", (k, len(ids)))
        rows = self._totals.shape[0]
        self._index = [None] * capacity
        self._categories = [[] for _ in range(capacity)]
        self._counts = [np.zeros((rows, 0)) for _ in range(capacity)]
        start = 0
        for i, values in zip(ids.tolist(), categories):
            self._index[i] = {value: j for j, value in enumerate(values)}
            self._categories[i] = list(values)
            self._counts[i] = np.zeros((rows, len(values)))
            self._counts[i][:k] = counts[:, start:start + len(values)]
            start += len(values)

    # -- prediction -------------------------------------------------------------------
    def n_categories(self, feature: Hashable) -> int:
        """n_i = max(categories seen for the feature, min_categories); 0 for an unknown feature."""
        i = int(self.features.find([feature])[0])
        return 0 if i < 0 else self._n_categories(i)

    def _n_categories(self, i: int, extra: int = 0) -> int:
        minimum = self.min_categories
        if isinstance(minimum, Mapping):
            minimum = minimum.get(self.features.token(i), 0)
        return max(len(self._categories[i]) + extra, minimum or 0)

    def _log_likelihood(self, encoded: list[tuple[int, int]]) -> Floats:
        """sum over the record's known fields of log P(x_i | c)."""
        n_classes = len(self.labels)
        total = np.zeros(n_classes)
        alpha = self.alpha
        for i, column in encoded:
            if column >= 0:
                total += (np.log(self._counts[i][:n_classes, column] + alpha)
                          - np.log(self._totals[:n_classes, i] + alpha * self._n_categories(i)))
            else:  # unseen == "score"
                total += math.log(alpha) - np.log(self._totals[:n_classes, i] + alpha * self._n_categories(i, extra=1))
        return total

    # -- introspection ----------------------------------------------------------------
    @property
    def n_features(self) -> int:
        """Fields with at least one learned category."""
        return len(self.features)

    def categories(self, feature: Hashable) -> list[Category]:
        """The categories of a field seen so far (in no particular order); [] for an unknown field."""
        i = int(self.features.find([feature])[0])
        return [] if i < 0 else list(self._categories[i])

    def category_counts(self, feature: Hashable, label: Label) -> dict[Category, float]:
        """N_civ for one field and class: category -> weight (zero counts left out).

        Parameters
        ----------
        feature
            A field ({} when it was never learned).
        label
            A class the model has learned.

        Returns
        -------
        dict
            Category -> N_civ.

        Raises
        ------
        UnknownClassError
            For a class never learned.
        """
        c = self._learned_class(label)
        i = int(self.features.find([feature])[0])
        if i < 0:
            return {}
        return {value: float(self._counts[i][c, j]) for j, value in enumerate(self._categories[i])
                if self._counts[i][c, j] != 0}

    def __repr__(self) -> str:
        return f"CategoricalNB(alpha={self.alpha!r}, classes={len(self.classes)}, features={self.n_features})"


def _is_category(value: object) -> bool:
    """Is a loaded value a category as _check_category makes them (str, int, bool, finite float)?"""
    return isinstance(value, (str, int, bool)) or (isinstance(value, float) and math.isfinite(value))


def _check_category(name: Hashable, value: object) -> Category:
    """A category as a plain str/int/bool/float (numpy scalars converted), or an error.

    A finite float is a category like any other (a rating of 0.5, a coded 1.0); 1.0 and
    1 are the same category, as they are the same dict key. NaN and inf are rejected: NaN
    is not even equal to itself.
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (str, np.str_)):
        return str(value)
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value):
            raise InvalidInputError(f"category of feature {name!r} must be finite, got {describe(value)}")
        return float(value)
    raise InvalidTypeError(
        f"category of feature {name!r} must be a str, int, bool or float, got {describe(value)}")


def _check_min_categories(value: object) -> int | dict[Hashable, int] | None:
    if value is None:
        return None
    if isinstance(value, Mapping):
        return {name: check_count(f"min_categories[{name!r}]", v) for name, v in value.items()}
    return check_count("min_categories", value)
