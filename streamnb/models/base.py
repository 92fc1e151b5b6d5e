"""The shared base of the discrete naive Bayes models (multinomial, Bernoulli, complement).

A model is a ``CountStore`` plus a formula. The base turns documents into (feature ids,
values), validates everything before any count changes (bad input changes nothing), feeds
the store through its single ``update`` path, and turns a model's joint log-likelihood
into probabilities with log-sum-exp. Each subclass supplies the formula:
``_joint_log_likelihood`` and which features a document contributes.
"""

from __future__ import annotations

import abc

import copy
import math
import numbers
import os
import time
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, Union

import numpy as np
import scipy.sparse as sp

from .. import persist
from ..errors import (IncompatibleModelsError, InvalidInputError, InvalidParameterError, InvalidTypeError,
                      UnknownClassError, describe)
from ..ledger import FINGERPRINT_BYTES, Entry, MessageLedger, features_fingerprint, text_fingerprint
from ..pruning import lowest_first, mutual_information
from ..store import CountStore, Label, _require, check_label

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
    epoch: int  # the vocabulary's epoch when ids were found (see Vocabulary.find_or_add)


class Removal(NamedTuple):
    """The counts one unlearned document takes out of class c (true units, negative)."""

    c: int
    ids: np.ndarray
    token_delta: np.ndarray
    doc_delta: np.ndarray
    docs_delta: float


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


class ManyPredictions:
    """The *_many prediction methods of every model: the *_one method on each item, in order."""

    def predict_many(self, X: Iterable[Any]) -> list[Label | None]:
        return [self.predict_one(x) for x in X]

    def predict_proba_many(self, X: Iterable[Any]) -> list[dict[Label, float]]:
        return [self.predict_proba_one(x) for x in X]

    def predict_log_proba_many(self, X: Iterable[Any]) -> list[dict[Label, float]]:
        return [self.predict_log_proba_one(x) for x in X]


class DiscreteNB(ManyPredictions, abc.ABC):
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

    Retraining in place (see ``learn_one``, ``unlearn_one``, ``merge``, ``prune``):

    half_life:
        Forget old documents: a document learned ``a`` documents ago weighs
        gamma^a = 2 ** (-a / half_life). The model equals a batch model trained with those
        weights (smoothing included). O(1) per document: one global scale (CountStore.decay).
        BernoulliNB's sum over absent words (and ComplementNB's norm) depend on every count,
        so with forgetting their first prediction after a learn costs O(|V|): exact, but
        not the O(document) of DESIGN.md's cost rule (predictions between learns are cached).
    half_life_seconds:
        Forget in time: a document with timestamp ``t`` weighs 2 ** (-(T - t) / half_life_seconds),
        T the latest timestamp learned. ``learn_one(..., t=...)`` gives timestamps (default:
        the current time). Both half-lives may be combined (the weights multiply).
    max_features:
        Cap on |V|. When a document takes |V| past the cap, a pruning pass drops the
        features with the lowest total count down to 90% of the cap (batches keep the
        amortised cost O(1) per document).
    min_count:
        In every pruning pass, drop the features whose total (decayed) count is below this.
    expire_after:
        Drop features not seen in the last ``expire_after`` learned documents (token
        expiry); a pass runs every ``expire_after // 10`` documents.
    ledger:
        Remember the fingerprints of the last ``ledger`` learned messages (see
        ``streamnb.ledger``): learning a message again is a no-op, learning it under
        another label moves it, and unlearning it needs no ``learned_at``/``t``.
    """

    def __init__(self, alpha: float = 1.0, *, class_prior: str | Mapping[Label, float] = "mle",
                 unseen: str = "ignore", tokenizer: Tokenizer | None = None, allow_zero_alpha: bool = False,
                 n_buckets: int | None = None, dense_max_classes: int = 4,
                 empty_documents: str = "raise",
                 half_life: float | None = None, half_life_seconds: float | None = None,
                 max_features: int | None = None, min_count: float | None = None,
                 expire_after: int | None = None, ledger: int | None = None) -> None:
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
        self.half_life = _check_positive("half_life", half_life, integer=False)
        self.half_life_seconds = _check_positive("half_life_seconds", half_life_seconds, integer=False)
        self.max_features = _check_positive("max_features", max_features, integer=True)
        self.min_count = _check_positive("min_count", min_count, integer=False)
        self.expire_after = _check_positive("expire_after", expire_after, integer=True)
        self.ledger = _check_positive("ledger", ledger, integer=True)
        self.store = CountStore(n_buckets=n_buckets, dense_max_classes=dense_max_classes,
                                doc_histogram=self._needs_doc_histogram)
        self._last_lookup: tuple | None = None
        self._prior_cache: tuple | None = None
        self._init_retraining()

    _needs_doc_histogram = False

    def _init_retraining(self) -> None:
        """Clocks and bookkeeping of forgetting, pruning and the ledger (empty model)."""
        self.last_t: float | None = None  # latest timestamp learned (half_life_seconds)
        self._pruned_at = 0  # n_learned when features were last dropped
        self._pass_at = 0  # n_learned at the last pruning pass
        self._ledger = MessageLedger(self.ledger) if self.ledger is not None else None

    # -- what subclasses define -------------------------------------------------------
    def _present(self, values: np.ndarray) -> np.ndarray:
        """Mask of the values that make a feature count as present in a document."""
        return values > 0

    def _learned_values(self, values: np.ndarray) -> np.ndarray:
        """Token-count increments of the present features (w = 1)."""
        return values

    def _check_values(self, values: np.ndarray) -> None:
        """Raise for values this model cannot learn from (e.g. negative counts)."""
        if len(values) and values.min() < 0:
            raise InvalidInputError(f"feature counts must be >= 0, got {values[values < 0][0]!r}")

    @abc.abstractmethod
    def _joint_log_likelihood(self, doc: Encoded) -> np.ndarray:
        """log P(c) + log P(x | c) for every class (array of length K)."""

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

    def _drop_features(self, ids: np.ndarray) -> None:
        """The one place where pruning removes whole features (``CountStore.drop_features``)."""
        self.store.drop_features(ids)
        self._pruned_at = self.store.n_learned

    # -- parameters -------------------------------------------------------------------
    def get_params(self) -> dict[str, Any]:
        """Constructor arguments (the tokenizer object itself, not a description of it)."""
        return {"alpha": self.alpha, "class_prior": self.class_prior, "unseen": self.unseen,
                "tokenizer": self.tokenizer, "allow_zero_alpha": self.allow_zero_alpha,
                "n_buckets": self.n_buckets, "dense_max_classes": self.dense_max_classes,
                "empty_documents": self.empty_documents,
                "half_life": self.half_life, "half_life_seconds": self.half_life_seconds,
                "max_features": self.max_features, "min_count": self.min_count,
                "expire_after": self.expire_after, "ledger": self.ledger}

    def with_alpha(self, alpha: float) -> "DiscreteNB":
        """A read-only view of this model with another alpha, sharing the counts.

        Counts do not depend on alpha, so a sweep over alphas costs one pass over the data.
        """
        view = copy.copy(self)
        view.alpha = _check_alpha(alpha, self.allow_zero_alpha)
        return view

    # -- forgetting -------------------------------------------------------------------
    def _forgetting(self, docs_ago: float | np.ndarray, seconds_ago: float | np.ndarray) -> float | np.ndarray:
        """Weight left of one unit learned docs_ago documents and seconds_ago seconds ago.

        gamma^age = 2 ** -(docs_ago / half_life + seconds_ago / half_life_seconds); a
        half-life that is not set counts as infinite. The one forgetting formula: learning,
        unlearning, learn_many and merge all weigh documents with it.
        """
        exponent = 0.0
        if self.half_life is not None:
            exponent = exponent + docs_ago / self.half_life
        if self.half_life_seconds is not None:
            exponent = exponent + seconds_ago / self.half_life_seconds
        return 2.0 ** -exponent

    def _clock_after(self, n_docs: int, t: float | None) -> tuple[float, float | None]:
        """(decay factor, latest timestamp) after n_docs more documents, the last at time t; pure."""
        if t is None and self.half_life is None:
            return 1.0, self.last_t  # no forgetting (t is None unless half_life_seconds is set)
        seconds, last_t = 0.0, self.last_t
        if t is not None:
            if last_t is None:
                last_t = t
            elif t > last_t:
                seconds, last_t = t - last_t, t
        return self._forgetting(n_docs, seconds), last_t

    def _advance_clock(self, n_docs: int, factor: float, last_t: float | None) -> None:
        """Move the clocks on by n_docs documents, to time last_t, ageing every count by
        ``factor`` (both from ``_clock_after``): one multiplication of the store's global
        scale (``CountStore.decay``)."""
        self.last_t = last_t
        if factor != 1.0:
            self.store.decay(factor)
        self.store.n_learned += n_docs

    def _seconds_ago(self, t: float | None) -> float:
        return 0.0 if t is None or self.last_t is None else self.last_t - t

    def _age_factor(self, learned_at: int | None, t: float | None) -> float:
        """gamma^age of a document learned at stamp ``learned_at`` and time ``t`` (1 without forgetting)."""
        docs_ago = seconds_ago = 0.0
        if self.half_life is not None:
            if learned_at is None:
                raise InvalidInputError(
                    "this model forgets (half_life is set), so unlearning needs the document's age: pass "
                    "learned_at=<model.n_learned right after it was learned>, or build the model with ledger=...")
            docs_ago = self.store.n_learned - learned_at
        if self.half_life_seconds is not None:
            if t is None:
                raise InvalidInputError(
                    "this model forgets in time (half_life_seconds is set), so unlearning needs the timestamp "
                    "the document was learned with: pass t=..., or build the model with ledger=...")
            seconds_ago = self._seconds_ago(t)
        return self._forgetting(docs_ago, seconds_ago)

    def _check_time(self, t: object, default_now: bool) -> float | None:
        """A validated timestamp for half_life_seconds (None when the model does not forget in time)."""
        if t is not None and (isinstance(t, bool) or not isinstance(t, numbers.Real) or not math.isfinite(t)):
            raise InvalidInputError(f"timestamp t must be a finite number of seconds, got {describe(t)}")
        if self.half_life_seconds is None:
            return None
        if t is None:
            return time.time() if default_now else None
        return float(t)

    def _check_times(self, t: object, n: int) -> np.ndarray | None:
        """Timestamps of a batch: one for all rows or one per row (None without half_life_seconds)."""
        if t is None or isinstance(t, numbers.Real):
            when = self._check_time(t, default_now=True)
            return None if when is None else np.full(n, when)
        times = [self._check_time(v, default_now=True) for v in t]
        if len(times) != n:
            raise InvalidInputError(f"t has {len(times)} timestamps but there are {n} documents")
        return None if self.half_life_seconds is None else np.array(times, dtype=float)

    def _check_stamp(self, learned_at: object) -> int | None:
        if learned_at is None:
            return None
        if isinstance(learned_at, bool) or not isinstance(learned_at, numbers.Integral) \
                or not 1 <= learned_at <= self.store.n_learned:
            raise InvalidInputError(
                f"learned_at must be a document stamp in [1, {self.store.n_learned}] (model.n_learned right "
                f"after the document was learned), got {describe(learned_at)}")
        return int(learned_at)

    # -- documents --------------------------------------------------------------------
    def _features(self, x: Document) -> Mapping[Hashable, float]:
        if isinstance(x, (str, bytes)):
            if self.tokenizer is None:
                raise InvalidTypeError(
                    f"got raw text {describe(x)} but the model has no tokenizer; pass tokenizer=... "
                    "or give a mapping feature -> count")
            features = self.tokenizer(x)
            if not isinstance(features, Mapping):
                raise InvalidTypeError(f"the tokenizer must return a mapping feature -> count, got {describe(features)}")
            return features
        if not isinstance(x, Mapping):
            raise InvalidTypeError(
                f"a document must be a mapping feature -> value, or str/bytes text, got {describe(x)}")
        return x

    def _read(self, x: Document) -> tuple[list[Hashable], np.ndarray]:
        """Validated (features, values) of a document, zero values kept."""
        features = self._features(x)
        tokens = list(features)
        values = _numeric_array(features.values(), len(tokens))
        # A sum is finite only if every value is (overflow aside: then the check below looks).
        if not (math.isfinite(values.sum()) or np.isfinite(values).all()):
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
        lookup = Lookup(tokens, values, ids, epoch)
        self._last_lookup = (x, epoch, None if isinstance(x, (str, bytes)) else dict(features), lookup)
        return lookup

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_last_lookup"] = None  # a cache, and it holds the caller's last document
        return state

    def _encode(self, x: Document) -> Encoded:
        """A document as ids of features in V (for prediction: nothing is added)."""
        tokens, values, ids, _ = self._lookup(x)
        known = ids >= 0 if self.n_buckets is None else self.store.known(ids)
        if known.all():
            return Encoded(ids, values, _NOTHING)
        return Encoded(ids[known], values[known], values[~known])

    # -- learning ---------------------------------------------------------------------
    @property
    def n_learned(self) -> int:
        """Documents learned so far (merged ones included): the clock of ``half_life``.

        A document's stamp is the value of n_learned right after it was learned; unlearning
        from a model that forgets needs it (``learned_at=``) unless a ledger remembers it.
        Unlearning does not turn the clock back: ages count every document learned since.
        """
        return self.store.n_learned

    def learn_one(self, x: Document, y: Label, w: float = 1.0, *, t: float | None = None) -> "DiscreteNB":
        """Add one document of class y with weight w to the counts.

        ``t`` is the document's timestamp in seconds, used with ``half_life_seconds``
        (default: now; an older timestamp than the latest learned makes it weigh less).
        With a ledger, a message already learned as y is skipped, and one learned under
        another label is unlearned from that label first.
        """
        label = check_label(y)
        weight = _check_weight(w)
        when = self._check_time(t, default_now=True)
        fingerprint = None
        if self._ledger is not None and isinstance(x, (str, bytes)):
            fingerprint = text_fingerprint(x)
            entry = self._ledger.get(fingerprint)
            if entry is not None and entry.label == label:
                return self  # known message, same label: skip even the tokenizer
        lookup = self._present_features(x)
        tokens, values = lookup.tokens, lookup.values
        check_class_allowed(self.class_prior, label)
        factor, last_t = self._clock_after(1, when)
        aged = weight if when == last_t else weight * self._forgetting(0, last_t - when)  # an older timestamp
        self._check_room(label, values, aged, factor)
        if self._ledger is not None:
            fingerprint = fingerprint or features_fingerprint(tokens, values)
            entry = self._ledger.get(fingerprint)
            if entry is not None:
                if entry.label == label:
                    return self
                # The message moves to another class: first take out what it still weighs.
                self._remove(self._removal(lookup, entry.label, entry.weight, entry.learned_at, entry.t))
                vocabulary = self.store.vocabulary  # ids may have been freed: look them up again
                lookup = lookup._replace(ids=vocabulary.find(tokens), epoch=vocabulary.epoch)
        self._learn(label, lookup, aged, factor, last_t)
        if self._ledger is not None:
            self._ledger.record(fingerprint, Entry(label, weight, self.store.n_learned, when))
        self._maybe_prune()
        return self

    def unlearn_one(self, x: Document, y: Label, w: float = 1.0, *, learned_at: int | None = None,
                    t: float | None = None) -> "DiscreteNB":
        """Remove one document learned earlier as class y: the exact inverse of learn_one.

        Raises UnknownClassError / InvalidInputError (changing nothing) when the document
        was not learned: unknown class, unknown words, or counts that would go negative.
        A model that forgets must know the document's age: ``learned_at`` (its stamp, see
        ``n_learned``) with ``half_life``, ``t`` (its timestamp) with ``half_life_seconds``;
        a ledger that holds the message supplies both (and its weight). Features pruned
        since the document was learned hold none of its counts any more and are skipped
        (this needs ``learned_at``; without it a missing feature is an error).
        """
        label = check_label(y)
        weight = _check_weight(w)
        stamp = self._check_stamp(learned_at)
        when = self._check_time(t, default_now=False)
        fingerprint = text_fingerprint(x) if self._ledger is not None and isinstance(x, (str, bytes)) else None
        lookup = self._present_features(x)
        entry = None
        if self._ledger is not None:
            fingerprint = fingerprint or features_fingerprint(lookup.tokens, lookup.values)
            entry = self._ledger.get(fingerprint)
            if entry is not None:
                if entry.label != label:
                    raise InvalidInputError(f"this message was learned as {entry.label!r}, not as {label!r}")
                weight, stamp, when = entry.weight, entry.learned_at, entry.t
        self._remove(self._removal(lookup, label, weight, stamp, when))
        if entry is not None:
            self._ledger.forget(fingerprint)
        return self

    def _present_features(self, x: Document, allow_empty: bool = False) -> Lookup:
        """The lookup of a document to learn: present features only, learned values.

        An empty document is an error unless ``empty_documents="learn"`` or ``allow_empty``
        (MixedNB: a record whose text field is empty still teaches its other fields).
        """
        tokens, values, ids, epoch = self._lookup(x)
        present = self._present(values)
        if not present.all() or not len(values):
            if not present.any() and not allow_empty and self.empty_documents == "raise":
                raise InvalidInputError(
                    f"empty document: no feature with a value above the threshold in {describe(x)}")
            tokens = [t for t, keep in zip(tokens, present) if keep]
            values, ids = values[present], ids[present]
        return Lookup(tokens, self._learned_values(values), ids, epoch)

    def _learn(self, label: Label, lookup: Lookup, weight: float, factor: float, last_t: float | None) -> None:
        """Advance the clocks by one document (``_clock_after``: factor, last_t), then add it
        with ``weight`` (already reduced for an old timestamp). The caller has checked everything."""
        self._advance_clock(1, factor, last_t)
        if weight == 0.0:
            return  # so old that nothing of it is left
        store = self.store
        ids = lookup.ids
        if self.n_buckets is None:
            ids = store.vocabulary.find_or_add(lookup.tokens, ids, lookup.epoch)
        c = store.add_class(label)
        self._update_counts(c, ids, weight * lookup.values, weight, weight)

    def _removal(self, lookup: Lookup, label: Label, weight: float, learned_at: int | None,
                 t: float | None) -> Removal:
        """What unlearning a document takes out: its weight now (decayed by its age), from
        the features that still hold its counts. Raises for an unknown class or a feature
        never learned; changes nothing."""
        store = self.store
        c = store.class_id(label)
        if c is None:
            raise UnknownClassError(f"cannot unlearn from class {label!r}: it was never learned")
        weight *= self._age_factor(learned_at, t)
        tokens, values, ids, _ = lookup
        known = ids >= 0 if self.n_buckets is None else store.known(ids)
        if learned_at is not None and self._pruned_at >= learned_at:
            # Pruned since: a feature holds the document's counts only if it has been in V
            # without interruption since then (born no later than the document).
            keep = known.copy()
            keep[known] = store.born[ids[known]] <= learned_at
            ids, values = ids[keep], values[keep]
        elif not known.all():
            missing = [token for token, inside in zip(tokens, known) if not inside][:3]
            hint = " (or pruned since: pass learned_at= or use a ledger)" if self._pruned_at else ""
            raise InvalidInputError(f"cannot unlearn feature(s) {missing!r}: never learned{hint}")
        delta = -weight
        return Removal(c, ids, delta * values, np.full(len(ids), delta), delta)

    def _apply(self, label: Label, lookup: Lookup, weight: float, sign: float) -> None:
        """One document's counts into (sign=+1) or out of (sign=-1) the store, for a model
        that drives this one as its part (MixedNB's text part): no ledger, no pruning pass."""
        if sign > 0:
            factor, last_t = self._clock_after(1, None)
            self._learn(label, lookup, weight, factor, last_t)
        else:
            self._remove(self._removal(lookup, label, weight, None, None))

    def _check_room(self, label: Label, values: np.ndarray, weight: float, factor: float) -> None:
        """Refuse, before anything changes, a document whose counts would overflow its class
        (a sum reaching inf, which only absurd values or weights can cause)."""
        self.store.check_room(self.store.class_id(label), weight * float(values.sum()), weight, factor)

    def _remove(self, removal: Removal) -> None:
        self._update_counts(removal.c, removal.ids, removal.token_delta, removal.doc_delta, removal.docs_delta)

    def learn_many(self, X: Sequence[Document] | sp.spmatrix, y: Sequence[Label], w: Sequence[float] | None = None,
                   *, feature_names: Sequence[Hashable] | None = None,
                   t: float | Sequence[float] | None = None) -> "DiscreteNB":
        """Learn many documents: a list of documents, or a scipy.sparse matrix + feature_names.

        The result equals learn_one on each row in turn (counts add up), but documents of
        the same class are summed first and enter the store in one update per class.
        Everything is validated before anything is learned. With forgetting, row i is
        n-1-i documents older than the last row; ``t`` is one timestamp for the batch or
        one per row. With a ledger, rows go through learn_one one at a time (after the
        whole batch has been validated), so repeats and relabels behave as in learn_one.
        """
        if not sp.issparse(X) and not isinstance(X, (str, bytes, Mapping)):
            X = list(X)  # read twice with a ledger; an iterator would be spent
        rows, labels, weights = self._read_batch(X, y, w, feature_names)
        times = self._check_times(t, len(labels))
        for label in dict.fromkeys(labels):
            check_class_allowed(self.class_prior, label)
        matrix, names = rows
        present = matrix.copy()
        present.data = self._present(present.data).astype(float)
        present.eliminate_zeros()
        empty = np.flatnonzero(np.diff(present.indptr) == 0)
        if len(empty) and self.empty_documents == "raise":
            raise InvalidInputError(f"empty document at row {int(empty[0])}: no feature above the threshold")
        learned = matrix.multiply(present).tocsr()
        learned.data = self._learned_values(learned.data)
        store = self.store
        n, n0 = len(labels), store.n_learned
        factor, last_t = self._clock_after(n, None if times is None else float(times.max()))
        ages = (n - 1 - np.arange(n)).astype(float)
        aged = weights * self._forgetting(ages, 0.0 if times is None else last_t - times)
        groups: dict[Label, list[int]] = {}
        for row, label in enumerate(labels):
            groups.setdefault(label, []).append(row)
        sums = {}
        for label, mine in groups.items():
            row_weights = sp.diags(aged[mine])
            with np.errstate(over="ignore"):  # an overflow is refused by check_room
                sums[label] = (np.asarray((row_weights @ learned[mine]).sum(axis=0)).ravel(),
                               np.asarray((row_weights @ present[mine]).sum(axis=0)).ravel(), float(aged[mine].sum()))
                token_sum = float(sums[label][0].sum())
            store.check_room(store.class_id(label), token_sum, sums[label][2], factor)
        if self._ledger is not None:
            documents = X if not sp.issparse(X) else _sparse_rows(X, feature_names)
            for row, label in enumerate(labels):
                self.learn_one(documents[row], label, float(weights[row]), t=None if times is None else float(times[row]))
            return self

        self._advance_clock(n, factor, last_t)
        store.n_learned = n0 + 1  # features born in this batch get the stamp of its first row
        try:
            for label, (tokens, docs, total) in sums.items():
                if total == 0.0:
                    continue  # rows so old that nothing of them is left
                columns = np.flatnonzero(docs)
                if self.n_buckets is None:
                    ids = store.vocabulary.find_or_add([names[j] for j in columns])
                else:
                    ids = np.asarray(names, dtype=np.int64)[columns]  # bucket ids (see _read_batch)
                c = store.add_class(label)
                self._update_counts(c, ids, tokens[columns], docs[columns], total)
        finally:
            store.n_learned = n0 + n
        # last_seen: the stamp of the last row holding each feature.
        last_row = np.full(len(names), -1, dtype=np.int64)
        coo = present.tocoo()
        np.maximum.at(last_row, coo.col, coo.row)
        ids = store.vocabulary.find(names) if self.n_buckets is None else np.asarray(names, dtype=np.int64)
        alive = store.known(ids)
        store.last_seen[ids[alive]] = n0 + 1 + last_row[alive]
        self._maybe_prune()
        return self

    def unlearn_many(self, X: Sequence[Document], y: Sequence[Label], w: Sequence[float] | None = None, *,
                     learned_at: Sequence[int] | None = None, t: Sequence[float] | None = None) -> "DiscreteNB":
        """Unlearn many documents, all or nothing: everything is checked before any count changes.

        The documents' counts are summed per class and each class is checked against the
        store (``CountStore.prepare``) before the first one is applied. Since unlearning
        only subtracts, the batch fails exactly when some document in turn would.
        ``learned_at`` and ``t`` give each document's age, as in unlearn_one.
        """
        documents, labels = list(X), [check_label(label) for label in y]
        n = len(documents)
        weights = [1.0] * n if w is None else [_check_weight(v) for v in w]
        stamps = [None] * n if learned_at is None else [self._check_stamp(s) for s in learned_at]
        times = [None] * n if t is None else [self._check_time(v, default_now=False) for v in t]
        if not n == len(labels) == len(weights) == len(stamps) == len(times):
            raise InvalidInputError(f"X, y, w, learned_at and t differ in length: {n}, {len(labels)}, "
                                    f"{len(weights)}, {len(stamps)}, {len(times)}")
        removals, forgotten = [], []
        for document, label, weight, stamp, when in zip(documents, labels, weights, stamps, times):
            fingerprint = None
            if self._ledger is not None and isinstance(document, (str, bytes)):
                fingerprint = text_fingerprint(document)
            lookup = self._present_features(document)
            if self._ledger is not None:
                fingerprint = fingerprint or features_fingerprint(lookup.tokens, lookup.values)
                if fingerprint in forgotten:
                    raise InvalidInputError(f"document {describe(document)} appears twice; a ledger learns a message once")
                entry = self._ledger.get(fingerprint)
                if entry is not None:
                    if entry.label != label:
                        raise InvalidInputError(f"this message was learned as {entry.label!r}, not as {label!r}")
                    weight, stamp, when = entry.weight, entry.learned_at, entry.t
                    forgotten.append(fingerprint)
            removals.append(self._removal(lookup, label, weight, stamp, when))
        combined = _combine_per_class(removals)
        for removal in combined:
            self.store.prepare(*removal)  # check only: raises before anything changes
        for removal in combined:
            self._remove(removal)
        for fingerprint in forgotten:
            self._ledger.forget(fingerprint)
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

    # -- merging ----------------------------------------------------------------------
    def merge(self, other: "DiscreteNB") -> "DiscreteNB":
        """Add other's counts to this model: the model trained on self's data then other's.

        With ``half_life`` self's counts first age by other's n_learned documents; with
        ``half_life_seconds`` both sides move to the later of the two clocks. Other's
        feature stamps and ledger entries follow self's. Raises IncompatibleModelsError
        (changing nothing) for another model type, other parameters or tokenizer settings,
        or a message both ledgers hold. A pruning pass may follow (``max_features`` ...).
        """
        self._check_mergeable(other)
        store, theirs = self.store, other.store
        # Read everything of other first: other may be self.
        other_ids = theirs.feature_ids()
        tokens_of = None if store.vocabulary.n_buckets is not None else theirs.vocabulary.tokens(other_ids)
        rows, cols, tokens, docs = theirs.nonzero()
        other_docs = theirs.true_class_docs()
        other_labels = list(theirs.labels)
        other_born, other_seen = theirs.born[other_ids], theirs.last_seen[other_ids]
        other_n, other_t, other_pruned = theirs.n_learned, other.last_t, other._pruned_at
        other_entries = list(other._ledger.items()) if other._ledger is not None else []

        n0 = store.n_learned
        # Other's documents come after self's; in time, both sides age to the later clock.
        own_factor, last_t = self._clock_after(other_n, other_t if self.half_life_seconds is not None else None)
        their_factor = self._forgetting(0, 0.0 if other_t is None or last_t is None else last_t - other_t)
        other_tokens = theirs.true_class_tokens()
        for oc, label in enumerate(other_labels):
            store.check_room(store.class_id(label), float(their_factor * other_tokens[oc]),
                             float(their_factor * other_docs[oc]), own_factor)
        self._advance_clock(other_n, own_factor, last_t)
        if their_factor > 0.0:
            mine = other_ids.copy() if tokens_of is None else store.vocabulary.find_or_add(tokens_of)
            new = ~store.known(mine)
            seen_before = np.where(new, 0, store.last_seen[np.where(new, 0, mine)])
            to_mine = np.full(theirs.vocabulary.capacity, -1, dtype=np.int64)
            to_mine[other_ids] = mine
            for oc, label in enumerate(other_labels):
                sel = cols == oc
                c = store.add_class(label)
                self._update_counts(c, to_mine[rows[sel]], their_factor * tokens[sel], their_factor * docs[sel],
                                    float(their_factor * other_docs[oc]))
            store.born[mine[new]] = other_born[new] + n0
            store.last_seen[mine] = np.maximum(seen_before, other_seen + n0)
        if other_pruned:
            self._pruned_at = max(self._pruned_at, other_pruned + n0)
        if self._ledger is not None:
            for fingerprint, entry in other_entries:
                self._ledger.record(fingerprint, entry._replace(learned_at=entry.learned_at + n0))
        self._maybe_prune()
        return self

    def _check_mergeable(self, other: "DiscreteNB") -> None:
        if type(other) is not type(self):
            raise IncompatibleModelsError(
                f"cannot merge a {type(other).__name__} into a {type(self).__name__}")
        mine, theirs = self.get_params(), other.get_params()
        for name in mine:
            if name in STORAGE_PARAMS:
                continue
            a, b = mine[name], theirs.get(name)
            if name == "tokenizer":
                a, b = _tokenizer_signature(a), _tokenizer_signature(b)
            if a != b:
                raise IncompatibleModelsError(f"cannot merge models whose {name} differ: {a!r} vs {b!r}")
        if self._ledger is not None and other._ledger is not None:
            for fingerprint, _ in other._ledger.items():
                if fingerprint in self._ledger:
                    raise IncompatibleModelsError(
                        f"both models learned the same message (fingerprint {fingerprint.hex()}): "
                        "merging would count it twice")

    # -- bounded memory ---------------------------------------------------------------
    def prune(self) -> int:
        """Apply the pruning policies now; returns the number of features dropped.

        In order: features not seen in the last ``expire_after`` documents, features whose
        total count sum_c T_cw is below ``min_count``, then, if |V| is still above
        ``max_features``, the lowest totals (ties: least recently seen first) down to 90%
        of the cap. O(|V| log |V|); the automatic passes run rarely enough that the cost
        per learned document stays amortised O(1) (see ``max_features``, ``expire_after``).
        """
        store = self.store
        self._pass_at = store.n_learned
        ids = store.feature_ids()
        if not len(ids):
            return 0
        tokens = store.gather_tokens(ids)
        totals = tokens.sum(axis=1)
        last_seen = store.last_seen[ids]
        drop = np.zeros(len(ids), dtype=bool)
        if self.expire_after is not None:
            drop |= store.n_learned - last_seen >= self.expire_after
        if self.min_count is not None:
            drop |= totals < self.min_count
        if self.max_features is not None:
            left = np.flatnonzero(~drop)
            if len(left) > self.max_features:
                order = lowest_first(totals[left], last_seen[left], ids[left])
                drop[left[order[: len(left) - (9 * self.max_features) // 10]]] = True
        if drop.any():
            self._drop_features(ids[drop])
        return int(drop.sum())

    def _maybe_prune(self) -> None:
        """Run a pruning pass when the cap is exceeded or the expiry pass is due."""
        store = self.store
        if self.max_features is not None and store.n_features > self.max_features:
            self.prune()
        elif self.expire_after is not None and store.n_learned - self._pass_at >= max(1, self.expire_after // 10):
            self.prune()

    def mutual_information(self) -> dict[Hashable, float]:
        """I(presence of w; class) in nats for every feature in V (see ``pruning.mutual_information``)."""
        store = self.store
        ids = store.feature_ids()
        docs = store.gather_docs(ids)
        scores = mutual_information(docs, store.true_class_docs())
        return dict(zip(store.vocabulary.tokens(ids), scores.tolist()))

    def select_features(self, k: int) -> "DiscreteNB":
        """Keep the k features with the highest mutual information with the class; drop the rest.

        Ties go to the lower id. The result equals a batch model trained on the same
        documents over the reduced vocabulary.
        """
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 0:
            raise InvalidParameterError(f"k must be an int >= 0, got {describe(k)}")
        store = self.store
        ids = store.feature_ids()
        if len(ids) > k:
            docs = store.gather_docs(ids)
            scores = mutual_information(docs, store.true_class_docs())
            order = np.lexsort((ids, -scores))
            self._drop_features(ids[order[k:]])
        return self

    # -- persistence ------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> None:
        """Write the model to ``path`` atomically (format: ``streamnb.persist``); read it with ``streamnb.load``."""
        persist.save(self, path)

    def _state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """The persistence hook: the model as plain values (params, labels ...) and named arrays."""
        scalars, tokens, arrays = self.store.export()
        state = {"params": self.get_params(), **scalars, "features": tokens, "last_t": self.last_t,
                 "pruned_at": self._pruned_at, "pass_at": self._pass_at}
        if self._ledger is not None:
            items = list(self._ledger.items())
            entries = [entry for _, entry in items]
            arrays["ledger_fingerprint"] = np.frombuffer(
                b"".join(fingerprint for fingerprint, _ in items), dtype=np.uint8).copy()
            arrays["ledger_class"] = np.array([self.store.class_id(e.label) for e in entries], dtype=np.int64)
            arrays["ledger_weight"] = np.array([e.weight for e in entries], dtype=np.float64)
            arrays["ledger_learned_at"] = np.array([e.learned_at for e in entries], dtype=np.int64)
            arrays["ledger_t"] = np.array([0.0 if e.t is None else e.t for e in entries], dtype=np.float64)
        return state, arrays

    @classmethod
    def _from_state(cls, state: dict[str, Any], arrays: dict[str, np.ndarray]) -> "DiscreteNB":
        """Rebuild a model from ``_state``'s output; ModelFormatError for anything inconsistent."""
        keys = {"params", "labels", "scale", "n_learned", "features", "last_t", "pruned_at", "pass_at"}
        _require(set(state) == keys, f"state keys {sorted(state)} differ from {sorted(keys)}")
        model = cls(**state["params"])
        store = CountStore.restore(state, state["features"], arrays, n_buckets=model.n_buckets,
                                   dense_max_classes=model.dense_max_classes,
                                   doc_histogram=model._needs_doc_histogram)
        model.store = store
        n = store.n_learned
        last_t = state["last_t"]
        if last_t is not None:
            _require(isinstance(last_t, (int, float)) and not isinstance(last_t, bool) and math.isfinite(last_t),
                     f"last_t must be a finite number or null, got {describe(last_t)}")
            last_t = float(last_t)
        model.last_t = last_t
        for name in ("pruned_at", "pass_at"):
            value = state[name]
            _require(isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= n,
                     f"{name} must be an int in [0, {n}], got {describe(value)}")
        model._pruned_at, model._pass_at = state["pruned_at"], state["pass_at"]
        ledger_names = {"ledger_fingerprint", "ledger_class", "ledger_weight", "ledger_learned_at", "ledger_t"}
        present = ledger_names & set(arrays)
        if model._ledger is None:
            _require(not present, "ledger arrays in a model without a ledger")
            return model
        _require(present == ledger_names, f"ledger arrays missing: {sorted(ledger_names - present)}")
        classes = arrays["ledger_class"]
        m = len(classes)
        fingerprints = arrays["ledger_fingerprint"]
        size = FINGERPRINT_BYTES
        _require(fingerprints.dtype == np.uint8 and fingerprints.shape == (size * m,),
                 f"ledger_fingerprint must be {size * m} bytes")
        for name, dtype in (("ledger_class", np.int64), ("ledger_weight", np.float64),
                            ("ledger_learned_at", np.int64), ("ledger_t", np.float64)):
            _require(arrays[name].dtype == dtype and arrays[name].shape == (m,),
                     f"array {name!r} must be {np.dtype(dtype).name} of shape ({m},)")
        weights, stamps, times = arrays["ledger_weight"], arrays["ledger_learned_at"], arrays["ledger_t"]
        _require(m <= model.ledger, f"{m} ledger entries exceed the bound {model.ledger}")
        _require(((classes >= 0) & (classes < store.n_classes)).all(), "ledger classes out of range")
        _require(bool(np.isfinite(weights).all() and (weights > 0).all()), "ledger weights must be finite and > 0")
        _require(((stamps >= 1) & (stamps <= n)).all(), f"ledger stamps must be in [1, {n}]")
        _require(bool(np.isfinite(times).all()), "ledger timestamps must be finite")
        keys = [fingerprints[size * i:size * (i + 1)].tobytes() for i in range(m)]
        _require(len(set(keys)) == m, "duplicate ledger fingerprints")
        timed = model.half_life_seconds is not None
        for key, c, weight, stamp, when in zip(keys, classes.tolist(), weights.tolist(), stamps.tolist(), times.tolist()):
            model._ledger.record(key, Entry(store.labels[c], weight, stamp, when if timed else None))
        return model

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
        if cache is None or cache[0] != self.store.version:
            store = self.store
            active = np.flatnonzero(store.class_docs > 0)
            log_prior = class_log_prior(store.true_class_docs(), store.labels, self.class_prior)
            cache = self._prior_cache = (store.version, active, log_prior)
        return cache[1], cache[2]

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

    @abc.abstractmethod
    def log_linear(self) -> LogLinear:
        """The per-class bias and per-feature weights this model is equivalent to."""

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


# Parameters that only choose a storage layout: models differing in them still merge.
STORAGE_PARAMS = ("dense_max_classes",)


def _tokenizer_signature(tokenizer: object) -> object:
    """What makes two tokenizers the same: type and get_params() when it has them, else identity."""
    get_params = getattr(tokenizer, "get_params", None)
    if tokenizer is None or not callable(get_params):
        return tokenizer
    return (f"{type(tokenizer).__module__}.{type(tokenizer).__qualname__}", get_params())


def _combine_per_class(removals: list[Removal]) -> list[Removal]:
    """Sum the removals of many documents into one per class (ids made distinct)."""
    by_class: dict[int, list[Removal]] = {}
    for removal in removals:
        by_class.setdefault(removal.c, []).append(removal)
    combined = []
    for c, mine in by_class.items():
        ids = np.concatenate([r.ids for r in mine])
        distinct, position = np.unique(ids, return_inverse=True)
        combined.append(Removal(
            c, distinct,
            np.bincount(position, np.concatenate([r.token_delta for r in mine]), len(distinct)),
            np.bincount(position, np.concatenate([r.doc_delta for r in mine]), len(distinct)),
            float(sum(r.docs_delta for r in mine))))
    return combined


def _same_document(x: object, last: object, last_contents: dict | None) -> bool:
    """Is x the document remembered: the same text, or the same unchanged mapping?"""
    if isinstance(x, (str, bytes)):
        return type(x) is type(last) and x == last
    return x is last and x == last_contents


def _sparse_rows(X: sp.spmatrix, names: Sequence[Hashable]) -> list[dict]:
    """The rows of a sparse matrix as documents {feature name: value}."""
    matrix = sp.csr_matrix(X, dtype=float)
    return [dict(zip([names[j] for j in matrix.indices[start:end]], matrix.data[start:end].tolist()))
            for start, end in zip(matrix.indptr[:-1], matrix.indptr[1:])]


def _check_positive(name: str, value: object, integer: bool) -> float | int | None:
    """None, or a finite number > 0 (an int >= 1 when ``integer``)."""
    if value is None:
        return None
    if integer:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise InvalidParameterError(f"{name} must be an int >= 1 or None, got {describe(value)}")
        return int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
        raise InvalidParameterError(f"{name} must be a finite number > 0 or None, got {describe(value)}")
    return float(value)


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


def check_class_allowed(class_prior: str | Mapping[Label, float], label: Label) -> None:
    """A fixed class prior names every class a model may learn."""
    if isinstance(class_prior, Mapping) and label not in class_prior:
        raise UnknownClassError(
            f"class {label!r} has no entry in the fixed class_prior (classes: {list(class_prior)})")


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
