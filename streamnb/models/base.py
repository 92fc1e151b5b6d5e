"""The shared base of the discrete naive Bayes models (multinomial, Bernoulli, complement).

A model is a ``CountStore`` plus a formula. The base turns documents into (feature ids,
values), validates everything before any count changes (bad input changes nothing), feeds
the store through its single ``update`` path, and turns a model's joint log-likelihood
into probabilities with log-sum-exp. Each subclass supplies the formula:
``_joint_log_likelihood`` and which features a document contributes.
"""

from __future__ import annotations

import copy
import math
import numbers
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, Union

import numpy as np
import scipy.sparse as sp

from ..errors import (IncompatibleModelsError, InvalidInputError, InvalidParameterError, InvalidTypeError,
                      UnknownClassError, describe)
from ..store import CountStore, Label, check_label

Document = Union[Mapping[Hashable, float], str, bytes]  # text needs a tokenizer
Tokenizer = Callable[[str], Mapping[Hashable, float]]

_NOTHING = np.zeros(0)
PRIOR_CHOICES = ("mle", "laplace", "uniform")
UNSEEN_CHOICES = ("ignore", "score")
EMPTY_CHOICES = ("raise", "learn")


class Encoded(NamedTuple):
    """A validated document: known feature ids with their values, plus unseen words."""

    ids: np.ndarray
    values: np.ndarray
    unseen_values: np.ndarray  # values of the words not in V (scored when unseen="score")


class Lookup(NamedTuple):
    """A validated document with the vocabulary ids of its tokens (-1: not in V)."""

    tokens: list
    values: np.ndarray
    ids: np.ndarray


class LogLinear(NamedTuple):
    """A naive Bayes model as the linear model it is: score_c(x) = bias[c] + x . weights[:, c]."""

    classes: list
    features: list
    bias: np.ndarray  # (K,)
    weights: np.ndarray  # (|V|, K)


class Contributions(NamedTuple):
    """One document's joint log-likelihood split by feature: jll_c = rest[c] + sum_i terms[i, c].

    ``rest`` holds everything no single feature of the document owns: the class prior, and
    for Bernoulli the sum over absent words; unseen words (when scored) go there too.
    """

    classes: list
    features: list
    terms: np.ndarray  # (n, K)
    rest: np.ndarray  # (K,)


def logsumexp(values: np.ndarray) -> float:
    top = values.max()
    if not np.isfinite(top):
        return float(top)
    return float(top + np.log(np.exp(values - top).sum()))


def log_posterior(jll: np.ndarray, log_prior: Callable[[], np.ndarray], normalise: bool = True) -> np.ndarray:
    """log P(c | x) = jll_c - logsumexp(jll) over the active classes (or jll itself).

    When every class is ruled out (jll = -inf everywhere: alpha = 0 and each class has a
    zero count for some word), the prediction falls back to the class prior alone.
    """
    if not (jll > -np.inf).any():
        jll = log_prior()
    return jll - logsumexp(jll) if normalise else jll


def class_log_prior(counts: np.ndarray, labels: Sequence[Label], class_prior: str | Mapping[Label, float]) -> np.ndarray:
    """log P(c) from the class counts N_c; classes with N_c = 0 are inactive and get -inf.

    mle: log N_c - log N; laplace: log(N_c + 1) - log(N + K); uniform: -log K; a fixed
    mapping: log p_c - log(sum of p over the active classes). K = number of active classes.
    """
    active = counts > 0
    if class_prior == "uniform":
        weights = active.astype(float)
    elif isinstance(class_prior, Mapping):
        weights = np.array([class_prior.get(label, 0.0) for label in labels]) * active
    elif class_prior == "laplace":
        weights = (counts + 1.0) * active
    else:
        weights = counts
    total = weights.sum()
    if total > 0 and active.all():
        return np.log(weights) - math.log(total)
    log_prior = np.full(len(counts), -np.inf)
    if total > 0:
        log_prior[active] = np.log(weights[active]) - math.log(total)
    return log_prior


class DiscreteNB:
    """Shared machinery of the count-based naive Bayes models.

    Parameters
    ----------
    alpha:
        Additive (Lidstone) smoothing, > 0. ``alpha=0`` needs ``allow_zero_alpha=True``:
        then a word with a zero count in a class rules that class out (log P = -inf); if
        every class is ruled out, the prediction falls back to the class prior alone.
    class_prior:
        ``"mle"`` (N_c / N, the default), ``"laplace"`` ((N_c + 1) / (N + K)),
        ``"uniform"``, or a mapping label -> prior probability (fixed; every class learned
        must be in it; the values are renormalised over the classes seen).
    unseen:
        Words never seen in training, at prediction time: ``"ignore"`` (the default; equals
        a batch model whose vocabulary is the training vocabulary) or ``"score"`` (each one
        counts as a zero-count word, as river does).
    tokenizer:
        A callable text -> mapping feature -> count. With it, documents may be raw text.
    n_buckets:
        Hash features into this many ids instead of keeping a vocabulary (bounded memory;
        feature names are lost).
    empty_documents:
        A learned document with no present feature: ``"raise"`` (the default; usually a
        tokenizer or input bug) or ``"learn"`` (it counts in N_c and adds no word counts, as
        scikit-learn and river do; a stream should not stop on an empty message).
    dense_max_classes:
        Beyond this many classes the count table switches from dense |V| x K arrays to a
        hash table whose size follows the nonzero cells.
    """

    def __init__(self, alpha: float = 1.0, *, class_prior: str | Mapping[Label, float] = "mle",
                 unseen: str = "ignore", tokenizer: Tokenizer | None = None, allow_zero_alpha: bool = False,
                 n_buckets: int | None = None, dense_max_classes: int = 4,
                 empty_documents: str = "raise") -> None:
        self.alpha = _check_alpha(alpha, allow_zero_alpha)
        self.allow_zero_alpha = bool(allow_zero_alpha)
        self.class_prior = _check_class_prior(class_prior)
        if unseen not in UNSEEN_CHOICES:
            raise InvalidParameterError(f"unseen must be one of {UNSEEN_CHOICES}, got {describe(unseen)}")
        self.unseen = unseen
        if empty_documents not in EMPTY_CHOICES:
            raise InvalidParameterError(
                f"empty_documents must be one of {EMPTY_CHOICES}, got {describe(empty_documents)}")
        self.empty_documents = empty_documents
        if tokenizer is not None and not callable(tokenizer):
            raise InvalidParameterError(f"tokenizer must be callable (text -> mapping), got {describe(tokenizer)}")
        self.tokenizer = tokenizer
        self.n_buckets = n_buckets
        self.dense_max_classes = dense_max_classes
        self.store = CountStore(n_buckets=n_buckets, dense_max_classes=dense_max_classes,
                                doc_histogram=self._needs_doc_histogram)
        self._last_lookup: tuple | None = None
        self._prior_cache: tuple | None = None

    _needs_doc_histogram = False

    # -- what subclasses define -------------------------------------------------------
    def _present(self, values: np.ndarray) -> np.ndarray:
        """Mask of the values that make a feature count as present in a document."""
        return values > 0

    def _learned_values(self, values: np.ndarray) -> np.ndarray:
        """Token-count increments of the present features (w = 1)."""
        return values

    def _check_values(self, values: np.ndarray) -> None:
        """Raise for values this model cannot learn from (e.g. negative counts)."""
        if (values < 0).any():
            raise InvalidInputError(f"feature counts must be >= 0, got {values[values < 0][0]!r}")

    def _joint_log_likelihood(self, doc: Encoded) -> np.ndarray:
        """log P(c) + log P(x | c) for every class (array of length K)."""
        raise NotImplementedError  # pragma: no cover - every model overrides it

    def _log_likelihood(self, doc: Encoded) -> np.ndarray:
        """The score without the class prior (what MixedNB sums over its parts); NaN for inactive classes."""
        with np.errstate(invalid="ignore"):
            return self._joint_log_likelihood(doc) - self._log_prior()

    def _update_counts(self, c: int, ids: np.ndarray, token_delta: np.ndarray, doc_delta: np.ndarray,
                       docs_delta: float) -> None:
        """The one place where learn, unlearn, learn_many and merge change counts (``CountStore.update``).

        A model that keeps sums derived from the counts (ComplementNB's normaliser) overrides it.
        """
        self.store.update(c, ids, token_delta, doc_delta, docs_delta)

    # -- parameters -------------------------------------------------------------------
    def get_params(self) -> dict[str, Any]:
        """Constructor arguments (the tokenizer object itself, not a description of it)."""
        return {"alpha": self.alpha, "class_prior": self.class_prior, "unseen": self.unseen,
                "tokenizer": self.tokenizer, "allow_zero_alpha": self.allow_zero_alpha,
                "n_buckets": self.n_buckets, "dense_max_classes": self.dense_max_classes,
                "empty_documents": self.empty_documents}

    def with_alpha(self, alpha: float) -> "DiscreteNB":
        """A read-only view of this model with another alpha, sharing the counts.

        Counts do not depend on alpha, so a sweep over alphas costs one pass over the data.
        """
        view = copy.copy(self)
        view.alpha = _check_alpha(alpha, self.allow_zero_alpha)
        return view

    # -- documents --------------------------------------------------------------------
    def _features(self, x: Document) -> Mapping[Hashable, float]:
        if isinstance(x, (str, bytes)):
            if self.tokenizer is None:
                raise InvalidTypeError(
                    f"got raw text {describe(x)} but the model has no tokenizer; pass tokenizer=... "
                    "or give a mapping feature -> count")
            return self.tokenizer(x)
        if not isinstance(x, Mapping):
            raise InvalidTypeError(
                f"a document must be a mapping feature -> value, or str/bytes text, got {describe(x)}")
        return x

    def _read(self, x: Document) -> tuple[list[Hashable], np.ndarray]:
        """Validated (features, values) of a document, zero values kept."""
        features = self._features(x)
        tokens = list(features)
        values = _numeric_array(features.values(), len(tokens))
        if not np.isfinite(values).all():
            bad = values[~np.isfinite(values)][0]
            raise InvalidInputError(f"feature values must be finite, got {bad!r}")
        self._check_values(values)
        return tokens, values

    def _lookup(self, x: Document) -> Lookup:
        """Validated tokens, values and vocabulary ids (-1: not in V) of a document.

        Predicting and then learning the same document is the streaming pattern, so the
        last lookup is remembered: raw text is tokenized once, and a mapping is validated
        and looked up once. The memory is keyed on the text (or the mapping's identity and
        contents, a C-speed dict comparison) and on the vocabulary's epoch.
        """
        epoch = self.store.vocabulary.epoch
        last = self._last_lookup
        if last is not None and last[1] == epoch and _same_document(x, last[0], last[2]):
            return last[3]
        features = self._features(x)
        tokens, values = self._read(features)
        ids = self.store.vocabulary.find(tokens)
        if self.n_buckets is not None and len(np.unique(ids)) < len(ids):
            # Words sharing a bucket are one feature: their values add up.
            ids, inverse = np.unique(ids, return_inverse=True)
            values = np.bincount(inverse, weights=values)
            tokens = self.store.vocabulary.tokens(ids)
        lookup = Lookup(tokens, values, ids)
        self._last_lookup = (x, epoch, None if isinstance(x, (str, bytes)) else dict(features), lookup)
        return lookup

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_last_lookup"] = None  # a cache, and it holds the caller's last document
        return state

    def _encode(self, x: Document) -> Encoded:
        """A document as ids of features in V (for prediction: nothing is added)."""
        tokens, values, ids = self._lookup(x)
        known = ids >= 0 if self.n_buckets is None else self.store.known(ids)
        if known.all():
            return Encoded(ids, values, _NOTHING)
        return Encoded(ids[known], values[known], values[~known])

    # -- learning ---------------------------------------------------------------------
    def learn_one(self, x: Document, y: Label, w: float = 1.0) -> "DiscreteNB":
        """Add one document of class y with weight w to the counts."""
        label = check_label(y)
        weight = _check_weight(w)
        lookup = self._present_features(x)
        self._check_class_allowed(label)
        self._apply(label, lookup, weight, sign=1.0)
        return self

    def unlearn_one(self, x: Document, y: Label, w: float = 1.0) -> "DiscreteNB":
        """Remove one document learned earlier as class y: the exact inverse of learn_one.

        Raises UnknownClassError / InvalidInputError (changing nothing) when the document
        was not learned: unknown class, unknown words, or counts that would go negative.
        """
        label = check_label(y)
        weight = _check_weight(w)
        lookup = self._present_features(x)
        if self.store.class_id(label) is None:
            raise UnknownClassError(f"cannot unlearn from class {label!r}: it was never learned")
        self._apply(label, lookup, weight, sign=-1.0)
        return self

    def _present_features(self, x: Document, allow_empty: bool = False) -> Lookup:
        """The lookup of a document to learn: present features only, learned values.

        An empty document is an error unless ``empty_documents="learn"`` or ``allow_empty``
        (MixedNB: a record whose text field is empty still teaches its other fields).
        """
        tokens, values, ids = self._lookup(x)
        present = self._present(values)
        if not present.all() or not len(values):
            if not present.any() and not allow_empty and self.empty_documents == "raise":
                raise InvalidInputError(
                    f"empty document: no feature with a value above the threshold in {describe(x)}")
            tokens = [t for t, keep in zip(tokens, present) if keep]
            values, ids = values[present], ids[present]
        return Lookup(tokens, self._learned_values(values), ids)

    def _apply(self, label: Label, lookup: Lookup, weight: float, sign: float) -> None:
        """One document's counts into (sign=+1) or out of (sign=-1) the store."""
        store = self.store
        ids = lookup.ids
        if sign > 0:
            if self.n_buckets is None and len(ids) and ids.min() < 0:
                ids = store.vocabulary.find_or_add(lookup.tokens, ids)
            c = store.add_class(label)
        else:
            missing = ids < 0 if self.n_buckets is None else ~store.known(ids)
            if missing.any():
                raise InvalidInputError(
                    f"cannot unlearn feature(s) {[t for t, m in zip(lookup.tokens, missing) if m][:3]!r}: never learned")
            c = store.class_id(label)
        delta = sign * weight
        self._update_counts(c, ids, delta * lookup.values, delta, delta)

    def learn_many(self, X: Sequence[Document] | sp.spmatrix, y: Sequence[Label], w: Sequence[float] | None = None,
                   *, feature_names: Sequence[Hashable] | None = None) -> "DiscreteNB":
        """Learn many documents: a list of documents, or a scipy.sparse matrix + feature_names.

        The result equals learn_one on each row in turn (counts add up), but documents of
        the same class are summed first and enter the store in one update per class.
        Everything is validated before anything is learned.
        """
        rows, labels, weights = self._read_batch(X, y, w, feature_names)
        for label in dict.fromkeys(labels):
            self._check_class_allowed(label)
        matrix, names = rows
        present = matrix.copy()
        present.data = self._present(present.data).astype(float)
        present.eliminate_zeros()
        empty = np.flatnonzero(np.diff(present.indptr) == 0)
        if len(empty) and self.empty_documents == "raise":
            raise InvalidInputError(f"empty document at row {int(empty[0])}: no feature above the threshold")
        learned = matrix.multiply(present).tocsr()
        learned.data = self._learned_values(learned.data)
        groups: dict[Label, list[int]] = {}
        for row, label in enumerate(labels):
            groups.setdefault(label, []).append(row)
        for label, mine in groups.items():
            row_weights = sp.diags(weights[mine])
            tokens = np.asarray((row_weights @ learned[mine]).sum(axis=0)).ravel()
            docs = np.asarray((row_weights @ present[mine]).sum(axis=0)).ravel()
            columns = np.flatnonzero(docs)
            if self.n_buckets is None:
                ids = self.store.vocabulary.find_or_add([names[j] for j in columns])
            else:
                ids = np.asarray(names, dtype=np.int64)[columns]  # bucket ids (see _read_batch)
            c = self.store.add_class(label)
            self._update_counts(c, ids, tokens[columns], docs[columns], float(weights[mine].sum()))
        return self

    def unlearn_many(self, X: Sequence[Document], y: Sequence[Label], w: Sequence[float] | None = None) -> "DiscreteNB":
        """Unlearn many documents; all or nothing (a failure restores the model)."""
        documents, labels = list(X), list(y)
        weights = [1.0] * len(documents) if w is None else list(w)
        if not len(documents) == len(labels) == len(weights):
            raise InvalidInputError(f"X, y and w differ in length: {len(documents)}, {len(labels)}, {len(weights)}")
        backup = copy.deepcopy(self.store)
        try:
            for document, label, weight in zip(documents, labels, weights):
                self.unlearn_one(document, label, weight)
        except Exception:
            self.store = backup
            raise
        return self

    def _read_batch(self, X, y, w, feature_names):
        labels = [check_label(label) for label in y]
        if sp.issparse(X):
            if feature_names is None:
                raise InvalidInputError("a sparse matrix needs feature_names (one name per column)")
            names = list(feature_names)
            matrix = sp.csr_matrix(X, dtype=float)
            if matrix.shape[1] != len(names):
                raise InvalidInputError(f"the matrix has {matrix.shape[1]} columns but {len(names)} feature_names")
            if len(set(names)) != len(names):
                raise InvalidInputError("feature_names must be distinct")
            if not np.isfinite(matrix.data).all():
                raise InvalidInputError("feature values must be finite; the matrix holds NaN or inf")
            self._check_values(matrix.data)
        else:
            if isinstance(X, (str, bytes, Mapping)):
                raise InvalidTypeError(f"learn_many takes a sequence of documents, got {describe(X)}")
            matrix, names = self._documents_to_matrix(list(X))
        if matrix.shape[0] != len(labels):
            raise InvalidInputError(f"X has {matrix.shape[0]} documents but y has {len(labels)} labels")
        weights = np.ones(len(labels)) if w is None else np.array([_check_weight(v) for v in w], dtype=float)
        if len(weights) != len(labels):
            raise InvalidInputError(f"w has {len(weights)} weights but y has {len(labels)} labels")
        matrix.sum_duplicates()
        if self.n_buckets is not None:
            # Columns whose words share a bucket are one feature: fold them together, so a
            # batch learns exactly what learn_one learns from each row.
            buckets, inverse = np.unique(self.store.vocabulary.find(names), return_inverse=True)
            fold = sp.csr_matrix((np.ones(len(names)), (np.arange(len(names)), inverse)),
                                 shape=(len(names), len(buckets)))
            matrix, names = (matrix @ fold).tocsr(), buckets.tolist()
        return (matrix, names), labels, weights

    def _documents_to_matrix(self, documents: list[Document]) -> tuple[sp.csr_matrix, list[Hashable]]:
        column: dict[Hashable, int] = {}
        indices, data, indptr = [], [], [0]
        for document in documents:
            tokens, values = self._read(document)
            indices.extend(column.setdefault(t, len(column)) for t in tokens)
            data.append(values)
            indptr.append(len(indices))
        values = np.concatenate(data) if data else np.zeros(0)
        matrix = sp.csr_matrix((values, np.array(indices, dtype=np.int64), np.array(indptr)),
                               shape=(len(documents), len(column)))
        return matrix, list(column)

    def _check_class_allowed(self, label: Label) -> None:
        if isinstance(self.class_prior, Mapping) and label not in self.class_prior:
            raise UnknownClassError(
                f"class {label!r} has no entry in the fixed class_prior (classes: {list(self.class_prior)})")

    # -- merging ----------------------------------------------------------------------
    def merge(self, other: "DiscreteNB") -> "DiscreteNB":
        """Add other's counts to this model: the model trained on self's data then other's."""
        self._check_mergeable(other)
        rows, cols, tokens, docs = other.store.nonzero()
        other_docs = other.store.true_class_docs()
        for oc, label in enumerate(other.store.labels):
            mine = cols == oc
            if self.n_buckets is None:
                ids = self.store.vocabulary.find_or_add(other.store.vocabulary.tokens(rows[mine]))
            else:
                # Same n_buckets (checked above): a bucket id means the same bucket in both
                # models, while its name ("#417") would hash to another bucket.
                ids = rows[mine]
            c = self.store.add_class(label)
            self._update_counts(c, ids, tokens[mine], docs[mine], float(other_docs[oc]))
        return self

    def _check_mergeable(self, other: "DiscreteNB") -> None:
        if type(other) is not type(self):
            raise IncompatibleModelsError(
                f"cannot merge a {type(other).__name__} into a {type(self).__name__}")
        mine, theirs = self.get_params(), other.get_params()
        for name in mine:
            if mine[name] != theirs[name]:
                raise IncompatibleModelsError(
                    f"cannot merge models whose {name} differ: {mine[name]!r} vs {theirs[name]!r}")

    # -- prediction -------------------------------------------------------------------
    @property
    def classes(self) -> list[Label]:
        """Classes with at least one learned document, in the order they first appeared."""
        store = self.store
        return [store.labels[c] for c in np.flatnonzero(store.class_docs > 0)]

    def _active(self) -> np.ndarray:
        """Indices of the classes with documents (cached until counts change)."""
        return self._class_state()[0]

    def _log_prior(self) -> np.ndarray:
        """log P(c) for every class (inactive classes get -inf); cached until counts change."""
        return self._class_state()[1]

    def _class_state(self) -> tuple[np.ndarray, np.ndarray]:
        # Predictions need these on every call; they change only when counts do.
        cache = self._prior_cache
        if cache is None or cache[0] != self.store.version or cache[1] != self.alpha:
            store = self.store
            active = np.flatnonzero(store.class_docs > 0)
            log_prior = class_log_prior(store.class_docs * store.scale, store.labels, self.class_prior)
            cache = self._prior_cache = (store.version, self.alpha, active, log_prior)
        return cache[2], cache[3]

    def predict_log_proba_one(self, x: Document) -> dict[Label, float]:
        """log P(c | x) for every class; an empty dict when nothing has been learned."""
        active = self._active()
        if not len(active):
            self._encode(x)  # still reject bad input
            return {}
        log_proba = self._log_posterior(self._encode(x), active)
        labels = self.store.labels
        return {labels[c]: float(v) for c, v in zip(active, log_proba)}

    def _log_posterior(self, doc: Encoded, active: np.ndarray, normalise: bool = True) -> np.ndarray:
        if self.alpha == 0:
            with np.errstate(divide="ignore", invalid="ignore"):
                jll = self._joint_log_likelihood(doc)[active]
        else:
            jll = self._joint_log_likelihood(doc)
            if len(active) < len(jll):
                jll = jll[active]
        return log_posterior(jll, lambda: self._log_prior()[active], normalise)

    def predict_proba_one(self, x: Document) -> dict[Label, float]:
        """P(c | x) for every class, from log space; an empty dict when untrained."""
        return {label: math.exp(v) for label, v in self.predict_log_proba_one(x).items()}

    def predict_one(self, x: Document) -> Label | None:
        """The most probable class (first learned wins ties); None when untrained."""
        active = self._active()
        if not len(active):
            self._encode(x)
            return None
        # The argmax of the joint log-likelihood is the argmax of the posterior.
        jll = self._log_posterior(self._encode(x), active, normalise=False)
        return self.store.labels[active[int(np.argmax(jll))]]

    def predict_many(self, X: Iterable[Document]) -> list[Label | None]:
        return [self.predict_one(x) for x in X]

    def predict_proba_many(self, X: Iterable[Document]) -> list[dict[Label, float]]:
        return [self.predict_proba_one(x) for x in X]

    def predict_log_proba_many(self, X: Iterable[Document]) -> list[dict[Label, float]]:
        return [self.predict_log_proba_one(x) for x in X]

    # -- introspection ----------------------------------------------------------------
    @property
    def n_features(self) -> int:
        """|V|: features with a nonzero count."""
        return self.store.n_features

    @property
    def class_counts(self) -> dict[Label, float]:
        """N_c: documents (sum of weights) per class."""
        docs = self.store.true_class_docs()
        return {self.store.labels[c]: float(docs[c]) for c in self._active()}

    def feature_counts(self, feature: Hashable) -> dict[Label, float]:
        """Token counts T_cf of one feature per class (empty when not in V)."""
        return self._feature_table(feature, 0)

    def feature_doc_counts(self, feature: Hashable) -> dict[Label, float]:
        """Document counts D_cf of one feature per class (empty when not in V)."""
        return self._feature_table(feature, 1)

    def _feature_table(self, feature: Hashable, which: int) -> dict[Label, float]:
        ids = self.store.vocabulary.find([feature])
        if ids[0] < 0 or not self.store.alive[ids[0]]:
            return {}
        row = self.store.gather(ids)[which][0]
        return {self.store.labels[c]: float(row[c]) for c in self._active()}

    def log_linear(self) -> LogLinear:
        """The per-class bias and per-feature weights this model is equivalent to."""
        raise NotImplementedError  # pragma: no cover - every model overrides it

    def top_features(self, k: int = 10) -> dict[Label, list[tuple[Hashable, float]]]:
        """The k features with the largest weight per class, in the log-linear view."""
        view = self.log_linear()
        top = {}
        for c, label in enumerate(view.classes):
            order = np.argsort(-view.weights[:, c], kind="stable")[:k]
            top[label] = [(view.features[i], float(view.weights[i, c])) for i in order]
        return top

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(alpha={self.alpha!r}, classes={len(self.classes)}, "
                f"features={self.n_features})")


def _same_document(x: object, last: object, last_contents: dict | None) -> bool:
    """Is x the document remembered: the same text, or the same unchanged mapping?"""
    if isinstance(x, (str, bytes)):
        return type(x) is type(last) and x == last
    return x is last and x == last_contents


def _check_alpha(alpha: object, allow_zero: bool) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not math.isfinite(alpha):
        raise InvalidParameterError(f"alpha must be a finite number > 0, got {describe(alpha)}")
    if alpha < 0 or (alpha == 0 and not allow_zero):
        raise InvalidParameterError(
            f"alpha must be > 0 (alpha = 0 needs allow_zero_alpha=True), got {alpha!r}")
    return float(alpha)


def _check_weight(w: object) -> float:
    if isinstance(w, bool) or not isinstance(w, numbers.Real) or not math.isfinite(w) or w <= 0:
        raise InvalidInputError(f"sample weight must be a finite number > 0, got {describe(w)}")
    return float(w)


def _check_class_prior(prior: object) -> str | dict[Label, float]:
    if isinstance(prior, str):
        if prior not in PRIOR_CHOICES:
            raise InvalidParameterError(f"class_prior must be one of {PRIOR_CHOICES} or a mapping, got {prior!r}")
        return prior
    if isinstance(prior, Mapping):
        fixed = {}
        for label, p in prior.items():
            if isinstance(p, bool) or not isinstance(p, numbers.Real) or not (0 < p < math.inf):
                raise InvalidParameterError(f"fixed prior of class {label!r} must be a number > 0, got {describe(p)}")
            fixed[check_label(label)] = float(p)
        if not fixed:
            raise InvalidParameterError("a fixed class_prior needs at least one class")
        return fixed
    raise InvalidParameterError(f"class_prior must be one of {PRIOR_CHOICES} or a mapping, got {describe(prior)}")


def _numeric_array(values: Iterable[object], n: int) -> np.ndarray:
    """Feature values as a float array; strings, None and other non-numbers are rejected."""
    listed = list(values)
    try:
        array = np.array(listed) if n else np.zeros(0)
    except (ValueError, TypeError):  # ragged sequences among the values
        array = None
    if array is not None and array.dtype.kind in "biuf" and array.ndim == 1:
        return array.astype(float, copy=False)
    for value in listed:
        if not isinstance(value, numbers.Real):
            raise InvalidTypeError(f"feature values must be numbers, got {describe(value)}")
    return np.array(listed, dtype=float)
