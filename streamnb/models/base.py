"""The shared base of the discrete naive Bayes models (multinomial, Bernoulli, complement).

A model is a compiled core (``streamnb._core.Core``: vocabulary, count store and the
formulas of docs/design.md section 2, see src/nb/) plus the Python that only validates,
looks up, updates and predicts: parameters are checked here (``streamnb.validate``),
documents are read and checked by the core, and every count changes inside the core, all
or nothing. Around the counts sit three layers of their own: the forgetting clocks
(``streamnb.clock``), the ledger of learned messages (``streamnb.ledger``) and the pruning
policies (``prune``).
"""

from __future__ import annotations

import abc
import copy
import math
import os
import struct
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol, Union, cast

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import scipy.sparse as sp

    from ..store import Arrays
else:
    from .._lazy import numpy as np
    from .._lazy import scipy_sparse as sp

from .. import _core, persist
from ..clock import Clock, check_stamp
from ..errors import IncompatibleModelsError, InvalidInputError, InvalidParameterError, InvalidTypeError, describe
from ..ledger import Ledger
from ..pruning import mutual_information
from ..store import STORE_ARRAYS, CountStore, _raw_array, _require
from ..features.email import EmailTokenizer
from ..features.text import Tokenizer as WordTokenizer
from ..features.weighting import EmailWeights
from ..validate import (Label, check_alpha, check_choice, check_class_allowed, check_class_prior, check_grid,
                        check_label, check_positive, check_weight)

Document = Union[Mapping[Hashable, float], str, bytes]  # text needs a tokenizer
# What a tokenizer returns: feature -> count or weight. The keys are typed Any because Mapping's
# key type is invariant: Mapping[Hashable, float] would refuse the dict[str, int] (Tokenizer,
# EmailTokenizer) and dict[str, float] (EmailWeights) the tokenizers return.
FeatureValues = Mapping[Any, float]
TextTokenizer = Callable[[str], FeatureValues]
if TYPE_CHECKING:
    Floats = npt.NDArray[np.float64]

UNSEEN_CHOICES = ("ignore", "score")
#: alpha="auto": the candidates when no ``alpha_grid`` is given, 10^-3.5 to 1 in half decades
#: (eight, the count the cost was measured with). The best fixed alphas measured lie inside
#: it: MultinomialNB 0.01 to 0.1, ComplementNB 0.3 to 1 (20 Newsgroups), 0.01 to 0.03
#: (SpamAssassin, trec07p-dev), BernoulliNB 3e-4 (benchmarks/bench_smoothing.py).
DEFAULT_ALPHA_GRID = tuple(10.0 ** (k / 2) for k in range(-7, 1))
EMPTY_CHOICES = ("raise", "learn")
#: The arrays a model file keeps the evidence of a smoothing chosen online in: per candidate
#: and temperature (float64, J x T), and the documents scored (int64, one value).
EVIDENCE_ARRAYS = ("smoothing_evidence", "smoothing_scored")
# Parameters that only choose a storage layout: models differing in them still merge.
STORAGE_PARAMS = ("dense_max_classes",)


class LogLinear(NamedTuple):
    """A model as the linear model it is: score_c(x) = bias[c] + x . weights[:, c]."""

    classes: list[Label]
    features: list[Hashable | None]
    bias: Floats  # (K,)
    weights: Floats  # (|V|, K)

    def top(self, k: int) -> dict[Label, list[tuple[Hashable, float]]]:
        """The k features with the largest weight per class (ties: the first listed)."""
        top = {}
        for c, label in enumerate(self.classes):
            order = np.argsort(-self.weights[:, c], kind="stable")[:k]
            top[label] = [(self.features[i], float(self.weights[i, c])) for i in order]
        return top


class Contributions:
    """One document's joint log-likelihood split by feature: jll_c = rest[c] + sum_i terms[i, c].

    ``rest`` holds everything no single feature of the document owns: the class prior, and
    for Bernoulli the sum over absent words; unseen words (when scored) go there too.
    ``terms`` is an (n, K) numpy array; ``rows()`` gives the same numbers as n lists of K
    floats, without numpy (what ``streamnb classify``'s evidence reads).
    """

    __slots__ = ("classes", "features", "rest", "_terms")

    def __init__(self, classes: list[Label], features: list[Hashable], terms: bytes | bytearray,
                 rest: list[float]) -> None:
        self.classes, self.features, self.rest = classes, features, rest
        self._terms = terms  # n * K float64, row by row, as the core returns them

    @property
    def terms(self) -> Floats:
        """(n, K)"""
        return np.frombuffer(self._terms, dtype=np.float64).reshape(len(self.features), len(self.classes))

    def rows(self) -> list[list[float]]:
        k, flat = len(self.classes), cast("list[float]", memoryview(self._terms).cast("d").tolist())
        return [flat[i * k:(i + 1) * k] for i in range(len(self.features))]


class SmoothingReport(NamedTuple):
    """What a model choosing its smoothing online (``alpha="auto"``, ``mu="auto"``) chose and why.

    ``evidence[j]`` is candidate j's tempered log-likelihood of the true classes of the
    documents learned so far (nats, <= 0; see src/smoothing.rs): each document scored before
    it was learned, its joint log-likelihoods divided by ``temperatures[j]``, the temperature
    that fits that candidate best. ``chosen`` is the candidate with the largest evidence
    (ties: the larger value, the smoother model), what predictions use now. ``documents``
    counts the documents scored (those learned into a class that, with another, already had
    documents).
    """

    parameter: str
    chosen: float
    candidates: tuple[float, ...]
    evidence: tuple[float, ...]
    temperatures: tuple[float, ...]
    documents: int

    def __str__(self) -> str:
        lines = [f"{self.parameter} chosen online: {self.chosen:g} ({len(self.candidates)} candidates, "
                 f"evidence of {self.documents} documents)"]
        best = max(self.evidence) if self.evidence else 0.0
        for value, evidence, temperature in zip(self.candidates, self.evidence, self.temperatures):
            mark = "  <- chosen" if value == self.chosen else ""
            lines.append(f"  {self.parameter} {value:<10.4g} evidence {evidence:14.2f} nats "
                         f"({evidence - best:+.2f}; temperature {temperature:g}){mark}")
        return "\n".join(lines)


class DocumentCounts:
    """A document's known features (value > 0) with their document counts D_cf per class.

    ``docs`` (n, K) and ``class_docs`` (K, N_c) are numpy arrays; ``rows()`` and ``totals()``
    give the same numbers as lists, without numpy (what ``streamnb classify`` reads).
    """

    __slots__ = ("classes", "features", "_docs", "_class_docs")

    def __init__(self, classes: list[Label], features: list[Hashable], docs: bytes | bytearray,
                 class_docs: list[float]) -> None:
        self.classes, self.features = classes, features  # classes: every class of the model, in index order
        self._docs, self._class_docs = docs, class_docs  # docs: n * K float64, row by row, as the core returns them

    @property
    def docs(self) -> Floats:
        """(n, K)"""
        return np.frombuffer(self._docs, dtype=np.float64).reshape(len(self.features), len(self.classes))

    @property
    def class_docs(self) -> Floats:
        """(K,) N_c"""
        return np.array(self._class_docs, dtype=np.float64)

    def rows(self) -> list[list[float]]:
        k, flat = len(self.classes), cast("list[float]", memoryview(self._docs).cast("d").tolist())
        return [flat[i * k:(i + 1) * k] for i in range(len(self.features))]

    def totals(self) -> list[float]:
        return list(self._class_docs)


def class_log_prior(counts: Floats, labels: Sequence[Label],
                    class_prior: str | Mapping[Label, float]) -> Floats:
    """log P(c) from the class counts N_c, -inf for classes with N_c = 0 (the core's formula,
    ``nb::class_log_prior``; for the record models, whose likelihoods are numpy's)."""
    if isinstance(class_prior, Mapping):
        weights = [float(class_prior.get(label, 0.0)) for label in labels]
        return np.array(_core.class_log_prior([float(n) for n in counts], "fixed", weights))
    return np.array(_core.class_log_prior([float(n) for n in counts], class_prior))


def log_posterior(jll: Floats, log_prior: Callable[[], Floats], normalise: bool = True) -> Floats:
    """log P(c | x) from the joint log-likelihood of the active classes (``nb::log_posterior``)."""
    values = jll.tolist()
    prior = log_prior().tolist() if not (jll > -np.inf).any() else values
    return np.array(_core.log_posterior(values, prior, normalise))


class _PredictsOne(Protocol):
    def predict_one(self, x: Any) -> Label | None: ...

    def predict_proba_one(self, x: Any) -> dict[Label, float]: ...

    def predict_log_proba_one(self, x: Any) -> dict[Label, float]: ...


class ManyPredictions:
    """The *_many prediction methods: the *_one method on each item, in order (a mixin of
    models with the *_one methods)."""

    def predict_many(self: _PredictsOne, X: Iterable[Any]) -> list[Label | None]:
        return [self.predict_one(x) for x in X]

    def predict_proba_many(self: _PredictsOne, X: Iterable[Any]) -> list[dict[Label, float]]:
        return [self.predict_proba_one(x) for x in X]

    def predict_log_proba_many(self: _PredictsOne, X: Iterable[Any]) -> list[dict[Label, float]]:
        return [self.predict_log_proba_one(x) for x in X]


class DiscreteNB(abc.ABC):
    """Shared machinery of the count-based naive Bayes models.

    Parameters (every model takes them, keyword-only after ``alpha``):

    alpha:
        Additive (Lidstone) smoothing, > 0. ``alpha=0`` needs ``allow_zero_alpha=True``:
        then a word with a zero count in a class rules that class out (log P = -inf); if
        every class is ruled out, the prediction falls back to the class prior alone.
        ``alpha="auto"`` chooses it online among ``alpha_grid`` (see ``smoothing_``): before
        each document is learned, every candidate scores it, and predictions use the
        candidate whose scores gave the true classes the highest (tempered) likelihood so
        far. A prediction then costs more (every candidate scores the document, reading its
        counts once; learning the same document next reuses those scores), and so does a
        learn that follows no prediction of its document (it scores it itself, so the
        choice never depends on which documents were predicted); ``learn_many`` learns one
        document at a time. Unlearning leaves the evidence as it is (a record of the stream:
        what a document taught the choice depended on the counts of its time); merging adds
        the two records.
    alpha_grid:
        The candidates of ``alpha="auto"`` (distinct numbers > 0; default
        ``DEFAULT_ALPHA_GRID``, eight from 10^-3.5 to 1).
    evidence_half_life:
        With a smoothing chosen online, age the evidence: the record before each document
        scored is multiplied by 2 ** (-1 / evidence_half_life), so the choice follows drift.
        None (the default) keeps the whole stream's evidence.
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
        A ``streamnb.Tokenizer`` with the default pattern tokenizes inside the core.
    n_buckets:
        Hash features into this many ids instead of keeping a vocabulary (bounded memory;
        feature names are lost).
    empty_documents:
        A learned document with no present feature: ``"raise"`` (the default; usually a
        tokenizer or input bug) or ``"learn"`` (it counts in N_c and adds no word counts, as
        scikit-learn and river do; a stream should not stop on an empty message).
    dense_max_classes:
        Beyond this many classes the count table switches from dense rows of K counts to
        sparse rows holding only the nonzero cells.

    Retraining in place (see ``learn_one``, ``unlearn_one``, ``merge``, ``prune``):

    half_life:
        Forget old documents: a document learned ``a`` documents ago weighs
        2 ** (-a / half_life). The model equals a batch model trained with those weights
        (smoothing included). O(1) per document: one global scale in the store.
        BernoulliNB's sum over absent words (and ComplementNB's norm) depend on every count,
        so with forgetting their first prediction after a learn costs O(|V|): exact, but
        not the O(document) of docs/design.md's cost rule.
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
        Once a pruning pass (these three, ``prune``, ``select_features``) has dropped a
        feature, unlearning needs each document's stamp: keep a ledger, or pass
        ``learned_at=`` (see ``unlearn_one``).
    ledger:
        Remember the fingerprints of the last ``ledger`` learned messages (see
        ``streamnb.ledger``): learning a message again is a no-op, learning it under
        another label moves it, and unlearning it needs no ``learned_at``/``t``.
    """

    #: The core's model kind: "multinomial", "bernoulli" or "complement".
    _kind: ClassVar[str]

    def __init__(self, alpha: float | str, *, class_prior: str | Mapping[Label, float], unseen: str,
                 tokenizer: TextTokenizer | None, allow_zero_alpha: bool, n_buckets: int | None,
                 dense_max_classes: int, empty_documents: str, half_life: float | None,
                 half_life_seconds: float | None, max_features: int | None, min_count: float | None,
                 expire_after: int | None, ledger: int | None, alpha_grid: Sequence[float] | None = None,
                 evidence_half_life: float | None = None) -> None:
        self.alpha: float | str = "auto" if alpha == "auto" else check_alpha(alpha, allow_zero_alpha)
        if alpha_grid is not None and alpha != "auto":
            raise InvalidParameterError(f"alpha_grid holds the candidates of alpha='auto'; alpha is {alpha!r}")
        self.alpha_grid = (check_grid("alpha_grid", DEFAULT_ALPHA_GRID if alpha_grid is None else alpha_grid)
                           if alpha == "auto" else None)
        self.evidence_half_life = check_positive("evidence_half_life", evidence_half_life, integer=False)
        self.allow_zero_alpha = bool(allow_zero_alpha)
        self.class_prior = check_class_prior(class_prior)
        self.empty_documents = check_choice("empty_documents", empty_documents, EMPTY_CHOICES)
        if tokenizer is not None and not callable(tokenizer):
            raise InvalidParameterError(f"tokenizer must be callable (text -> mapping), got {describe(tokenizer)}")
        self.n_buckets = check_positive("n_buckets", n_buckets, integer=True)
        if self.n_buckets is not None and self.n_buckets >= 2**32:
            raise InvalidParameterError(f"n_buckets must be below 2**32, got {n_buckets!r}")
        if isinstance(dense_max_classes, bool) or not isinstance(dense_max_classes, int) or dense_max_classes < 1:
            raise InvalidParameterError(f"dense_max_classes must be a positive int, got {describe(dense_max_classes)}")
        self.dense_max_classes = dense_max_classes
        half_life = check_positive("half_life", half_life, integer=False)
        half_life_seconds = check_positive("half_life_seconds", half_life_seconds, integer=False)
        self.max_features = check_positive("max_features", max_features, integer=True)
        self.min_count = check_positive("min_count", min_count, integer=False)
        self.expire_after = check_positive("expire_after", expire_after, integer=True)
        self.ledger = check_positive("ledger", ledger, integer=True)
        fixed = self.class_prior if isinstance(self.class_prior, dict) else None
        self._core: _core.Core[Label] = _core.Core(
            kind=self._kind, alpha_free_params=self._kind_params(),
            class_prior=self.class_prior if isinstance(self.class_prior, str) else "fixed", fixed_prior=fixed,
            unseen=check_choice("unseen", unseen, UNSEEN_CHOICES), empty_documents=self.empty_documents,
            n_buckets=self.n_buckets, dense_max_classes=dense_max_classes,
            tokenizer=None, in_core=None, binary=False)
        self.store = CountStore(self._core, self.n_buckets)
        candidates = self._candidates()
        if candidates is None and self.evidence_half_life is not None:
            raise InvalidParameterError("evidence_half_life ages the evidence of a smoothing chosen online "
                                        "(alpha='auto'); this model's smoothing is fixed")
        if candidates is not None:
            decay = 1.0 if self.evidence_half_life is None else 2.0 ** (-1.0 / self.evidence_half_life)
            self._core.set_auto_smoothing(candidates, decay)
        # the alpha the core is called with: None for the smoothing it chooses online
        self._call_alpha: float | None = None if candidates is not None else cast(float, self.alpha)
        self.tokenizer = tokenizer
        self.unseen = unseen
        self._clock = Clock(half_life, half_life_seconds)
        self._ledger = Ledger(self.ledger) if self.ledger is not None else None
        self._pass_at = 0  # n_learned at the last pruning pass

    @abc.abstractmethod
    def _kind_params(self) -> tuple[float | None, float, bool]:
        """(mu, binarize, norm): the model's own parameters the core needs."""

    def _candidates(self) -> list[tuple[float, float | None]] | None:
        """The (alpha, mu) candidates of a smoothing chosen online, least smoothing first; None when fixed."""
        if self.alpha_grid is None:
            return None
        mu = self._kind_params()[0]
        return [(alpha, mu) for alpha in self.alpha_grid]

    @property
    def smoothing_(self) -> SmoothingReport | None:
        """What the smoothing chosen online is now, and the evidence of each candidate (see
        ``SmoothingReport``); None when the smoothing is fixed."""
        report = self._core.smoothing_report()
        if report is None:
            return None
        pairs, evidence, temperatures, documents, chosen = report
        parameter = "alpha" if self.alpha == "auto" else "mu"
        values = tuple(float(alpha if parameter == "alpha" else cast(float, mu)) for alpha, mu in pairs)
        return SmoothingReport(parameter, values[chosen], values, tuple(evidence), tuple(temperatures), documents)

    # -- parameters -----------------------------------------------------------------------
    @property
    def tokenizer(self) -> TextTokenizer | None:
        return self._tokenizer

    @tokenizer.setter
    def tokenizer(self, tokenizer: TextTokenizer | None) -> None:
        """A streamnb Tokenizer with the default pattern (and an EmailTokenizer whose body
        settings are those, alone or inside EmailWeights) runs inside the core; any other
        callable is called by the core, once per text."""
        self._tokenizer = tokenizer
        in_core = None
        if isinstance(tokenizer, WordTokenizer) and tokenizer._default and tokenizer._stem is None:
            in_core = tokenizer._core
        elif isinstance(tokenizer, EmailTokenizer) and tokenizer._in_core:
            in_core = tokenizer._core
        elif isinstance(tokenizer, EmailWeights) and tokenizer._reads_in_core:
            in_core = tokenizer._core
        self._core.set_featurizer(tokenizer, in_core, bool(isinstance(tokenizer, WordTokenizer) and tokenizer.binary))

    @property
    def unseen(self) -> str:
        return self._unseen

    @unseen.setter
    def unseen(self, value: str) -> None:
        self._unseen = check_choice("unseen", value, UNSEEN_CHOICES)
        self._core.unseen_score = value == "score"

    @property
    def half_life(self) -> float | None:
        return self._clock.half_life

    @property
    def half_life_seconds(self) -> float | None:
        return self._clock.half_life_seconds

    @property
    def last_t(self) -> float | None:
        """The latest timestamp learned (models that forget in time)."""
        return self._clock.last_t

    def get_params(self) -> dict[str, Any]:
        """Constructor arguments (the tokenizer object itself, not a description of it)."""
        return {"alpha": self.alpha, "class_prior": self.class_prior, "unseen": self.unseen,
                "tokenizer": self.tokenizer, "allow_zero_alpha": self.allow_zero_alpha,
                "n_buckets": self.n_buckets, "dense_max_classes": self.dense_max_classes,
                "empty_documents": self.empty_documents,
                "half_life": self.half_life, "half_life_seconds": self.half_life_seconds,
                "max_features": self.max_features, "min_count": self.min_count,
                "expire_after": self.expire_after, "ledger": self.ledger, "alpha_grid": self.alpha_grid,
                "evidence_half_life": self.evidence_half_life}

    def with_alpha(self, alpha: float) -> "DiscreteNB":
        """A read-only view of this model with another alpha, sharing the counts.

        Counts do not depend on alpha, so a sweep over alphas costs one pass over the data.
        On a model choosing mu online, the view keeps the mu chosen at each prediction.
        """
        view = copy.copy(self)
        view.alpha = view._call_alpha = check_alpha(alpha, self.allow_zero_alpha)
        return view

    def __copy__(self) -> "DiscreteNB":
        """A shallow copy shares the core (``with_alpha``); ``copy.deepcopy`` copies everything."""
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        return twin

    def __reduce__(self) -> tuple[Callable[[bytes, TextTokenizer | None], DiscreteNB],
                                  tuple[bytes, TextTokenizer | None]]:
        """Pickling goes through the model file's bytes (``persist.dumps``), the tokenizer
        object beside them (so any picklable tokenizer travels, as Dask and river need)."""
        return persist.unpickle, (persist.dumps(self, tokenizer_apart=True), self.tokenizer)

    # -- learning -------------------------------------------------------------------------
    @property
    def n_learned(self) -> int:
        """Documents learned so far (merged ones included): the clock of ``half_life``.

        A document's stamp is the value of n_learned right after it was learned; unlearning
        from a model that forgets, or that has dropped features (pruning), needs it
        (``learned_at=``) unless a ledger remembers it.
        Unlearning does not turn the clock back: ages count every document learned since.
        """
        return self._core.n_learned

    def learn_one(self, x: Document, y: Label, w: float = 1.0, *, t: float | None = None) -> "DiscreteNB":
        """Add one document of class y with weight w to the counts.

        ``t`` is the document's timestamp in seconds, used with ``half_life_seconds``
        (default: now; an older timestamp than the latest learned makes it weigh less).
        With a ledger, a message already learned as y is skipped, and one learned under
        another label is unlearned from that label first.
        """
        label = check_label(y)
        weight = check_weight(w)
        when = self._clock.check_time(t, default_now=True)
        if self._ledger is not None:
            self._ledger.learn(self, x, label, weight, when)
        else:
            self._learn_counts(x, label, weight, when)
        self._maybe_prune()
        return self

    def learned_as(self, x: Document) -> Label | None:
        """The label the ledger holds message x under; None without a ledger, or for a message it does not hold."""
        if self._ledger is None:
            return None
        entry = self._ledger.get(self._ledger.fingerprint(self, x))
        return None if entry is None else entry.label

    def _learn_counts(self, x: Document, label: Label, weight: float, when: float | None) -> None:
        """One document into the counts (the clocks move on by one document)."""
        check_class_allowed(self.class_prior, label)
        factor, last_t = self._clock.after(1, when)
        self._core.learn_one(x, label, self._clock.aged(weight, when, last_t), factor)
        self._clock.last_t = last_t

    def _check_learn(self, x: Document, label: Label, weight: float, when: float | None) -> None:
        """Raise what ``_learn_counts`` would raise; change nothing."""
        check_class_allowed(self.class_prior, label)
        factor, last_t = self._clock.after(1, when)
        self._core.learn_one(x, label, self._clock.aged(weight, when, last_t), factor, check_only=True)

    def unlearn_one(self, x: Document, y: Label, w: float = 1.0, *, learned_at: int | None = None,
                    t: float | None = None) -> "DiscreteNB":
        """Remove one document learned earlier as class y: the exact inverse of learn_one.

        Raises UnknownClassError / InvalidInputError (changing nothing) when the document
        was not learned: unknown class, unknown words, or counts that would go negative.
        A model that forgets must know the document's age: ``learned_at`` (its stamp, see
        ``n_learned``) with ``half_life``, ``t`` (its timestamp) with ``half_life_seconds``;
        a ledger that holds the message supplies both (and its weight). Features pruned
        since the document was learned hold none of its counts any more and are skipped, and
        so are those a merged-in model had pruned before merging (the model remembers which,
        up to max(2**16, 2 x |V|) of them; past that, its oldest merged documents are
        refused). This needs ``learned_at``: once the model has dropped features (or merged a
        model that had), unlearning without it is refused, since a feature pruned and
        learned again may hold later documents only; so on a model that prunes, pass
        ``learned_at`` or keep a ledger.

        With a smoothing chosen online, the evidence stays as it is: it records how each
        candidate scored the stream, and what this document added to it depended on the
        counts of its time. Learning it again adds its evidence again.
        """
        label = check_label(y)
        weight = check_weight(w)
        stamp = check_stamp(learned_at, self.n_learned)
        when = self._clock.check_time(t, default_now=False)
        if self._ledger is not None:
            self._ledger.unlearn(self, x, label, weight, stamp, when)
        else:
            self._unlearn_counts(x, label, weight, stamp, when)
        return self

    def _unlearn_counts(self, x: Document, label: Label, weight: float, learned_at: int | None,
                        when: float | None) -> None:
        """Take one document out of the counts with the weight it still has."""
        if self._core.class_id(label) is None:
            self._core.unlearn_one(x, label, weight)  # reads x, then refuses the unknown class
        factor = self._clock.age_factor(learned_at, when, self.n_learned)
        self._core.unlearn_one(x, label, weight * factor, learned_at)

    def learn_many(self, X: Sequence[Document] | sp.spmatrix, y: Sequence[Label], w: Sequence[float] | None = None,
                   *, feature_names: Sequence[Hashable] | None = None,
                   t: float | Sequence[float] | None = None) -> "DiscreteNB":
        """Learn many documents: a list of documents, or a scipy.sparse matrix + feature_names.

        The result equals learn_one on each row in turn (counts add up), but documents of
        the same class are summed first and enter the store in one update per class.
        Everything is validated before anything is learned. With forgetting, row i is
        n-1-i documents older than the last row; ``t`` is one timestamp for the batch or
        one per row. With a ledger, rows go through learn_one one at a time (after the
        whole batch has been validated), so repeats and relabels behave as in learn_one; so
        they do with a smoothing chosen online, whose evidence scores each row against the
        counts of the rows before it.
        """
        documents = _batch_documents(X, feature_names)
        labels = [check_label(label) for label in y]
        if len(documents) != len(labels):
            raise InvalidInputError(f"X has {len(documents)} documents but y has {len(labels)} labels")
        weights = np.ones(len(labels)) if w is None else np.array([check_weight(v) for v in w], dtype=float)
        if len(weights) != len(labels):
            raise InvalidInputError(f"w has {len(weights)} weights but y has {len(labels)} labels")
        times = self._clock.check_times(t, len(labels))
        for label in dict.fromkeys(labels):
            check_class_allowed(self.class_prior, label)
        n = len(labels)
        factor, last_t = self._clock.after(n, None if times is None else float(times.max()))
        ages = (n - 1 - np.arange(n)).astype(float)
        # (last_t is set whenever times are: it is the latest of them)
        aged = np.asarray(weights * self._clock.forgetting(ages, 0.0 if times is None or last_t is None
                                                           else last_t - times), dtype=float).tolist()
        if self._ledger is not None or self._call_alpha is None:
            # A ledger decides row by row; a smoothing chosen online scores each row against
            # the counts of the rows before it (the evidence of a batch is that of its rows in turn).
            if self._ledger is None:  # all or nothing: what the whole batch passes, each row in turn passes
                self._core.learn_many(documents, labels, aged, factor, check_only=True)
            for document in documents:  # every row is read and checked before any is learned
                self._core.present_features(document)
            for row, (document, label) in enumerate(zip(documents, labels)):
                self.learn_one(document, label, float(weights[row]), t=None if times is None else float(times[row]))
            return self
        self._core.learn_many(documents, labels, aged, factor)
        self._clock.last_t = last_t
        self._maybe_prune()
        return self

    def unlearn_many(self, X: Sequence[Document], y: Sequence[Label], w: Sequence[float] | None = None, *,
                     learned_at: Sequence[int] | None = None, t: Sequence[float] | None = None) -> "DiscreteNB":
        """Unlearn many documents, all or nothing: everything is checked before any count changes.

        The documents' counts are summed per class and each class is checked against the
        store before the first one is applied. Since unlearning only subtracts, the batch
        fails exactly when some document in turn would. ``learned_at`` and ``t`` give each
        document's age, as in unlearn_one.
        """
        documents, labels = list(X), [check_label(label) for label in y]
        n = len(documents)
        weights = [1.0] * n if w is None else [check_weight(v) for v in w]
        stamps: list[int | None] = [None] * n
        if learned_at is not None:
            stamps = [check_stamp(s, self.n_learned) for s in learned_at]
        times: list[float | None] = [None] * n
        if t is not None:
            times = [self._clock.check_time(v, default_now=False) for v in t]
        if not n == len(labels) == len(weights) == len(stamps) == len(times):
            raise InvalidInputError(f"X, y, w, learned_at and t differ in length: {n}, {len(labels)}, "
                                    f"{len(weights)}, {len(stamps)}, {len(times)}")
        if self._ledger is not None:
            self._ledger.unlearn_many(self, documents, labels, weights, stamps, times)
        else:
            self._unlearn_many_counts(documents, labels, weights, stamps, times)
        return self

    def _unlearn_many_counts(self, documents: list[Document], labels: list[Label], weights: list[float],
                             stamps: list[int | None], times: list[float | None]) -> None:
        n_learned = self.n_learned
        aged = [weight * self._clock.age_factor(stamp, when, n_learned)
                for weight, stamp, when in zip(weights, stamps, times)]
        self._core.unlearn_many(documents, labels, aged, stamps)

    # -- a model driving this one as its part (MixedNB's text part) ---------------------------
    def _part_check(self, x: Document, label: Label, weight: float) -> None:
        """Raise what ``_part_apply`` would raise (weight > 0 learns, < 0 unlearns); change nothing."""
        if weight > 0:
            factor, _ = self._clock.after(1, None)
            self._core.learn_one(x, label, weight, factor, allow_empty=True, check_only=True)
        elif self._core.class_id(label) is not None:
            self._core.unlearn_one(x, label, -weight, allow_empty=True, check_only=True)

    def _part_apply(self, x: Document, label: Label, weight: float) -> None:
        """Learn (weight > 0) or unlearn (weight < 0) one part of a record: no ledger, no pruning."""
        if weight > 0:
            factor, last_t = self._clock.after(1, None)
            self._core.learn_one(x, label, weight, factor, allow_empty=True)
            self._clock.last_t = last_t
        else:
            self._core.unlearn_one(x, label, -weight, allow_empty=True)

    def _log_likelihood(self, x: Document) -> Floats:
        """log P(x | c) without the class prior, every class (NaN for inactive ones)."""
        return np.array(self._core.log_likelihood(x, self._call_alpha))

    # -- merging ----------------------------------------------------------------------------
    def merge(self, other: "DiscreteNB") -> "DiscreteNB":
        """Add other's counts to this model: the model trained on self's data then other's.

        With ``half_life`` self's counts first age by other's n_learned documents; with
        ``half_life_seconds`` both sides move to the later of the two clocks. Other's
        feature stamps and ledger entries follow self's. Raises IncompatibleModelsError
        (changing nothing) for another model type, other parameters or tokenizer settings,
        or a message both ledgers hold. A pruning pass may follow (``max_features`` ...).

        With a smoothing chosen online (same candidates on both sides), the evidence of the
        merged model is self's record followed by other's: self's aged by other's documents
        scored (``evidence_half_life``), plus other's. Each document was scored by the model
        that learned it, so this is not the evidence one model trained on both streams in turn
        would hold (the counts are exactly that model's).
        """
        self._check_mergeable(other)
        other_t = other.last_t
        entries = list(other._ledger.entries.items()) if other._ledger is not None else []  # other may be self
        n0 = self.n_learned
        own_factor, last_t = self._clock.after(other.n_learned, other_t if self.half_life_seconds is not None else None)
        their_factor = float(self._clock.forgetting(0, 0.0 if other_t is None or last_t is None else last_t - other_t))
        _core.Core.merge(self._core, other._core, own_factor, their_factor)
        self._clock.last_t = last_t
        if self._ledger is not None:
            self._ledger.merge(entries, n0)
        self._maybe_prune()
        return self

    def _check_mergeable(self, other: "DiscreteNB") -> None:
        if type(other) is not type(self):
            raise IncompatibleModelsError(f"cannot merge a {type(other).__name__} into a {type(self).__name__}")
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
            self._ledger.check_mergeable(other._ledger)

    # -- bounded memory ---------------------------------------------------------------------
    def prune(self) -> int:
        """Apply the pruning policies now; returns the number of features dropped.

        In order: features not seen in the last ``expire_after`` documents, features whose
        total count sum_c T_cw is below ``min_count``, then, if |V| is still above
        ``max_features``, the lowest totals (ties: least recently seen first, then the lowest
        id) down to 90% of the cap (src/pruning.rs). O(|V|) in the core; the automatic
        passes run rarely enough that the cost per learned document stays amortised O(1)
        (see ``max_features``, ``expire_after``).
        """
        self._pass_at = self.n_learned
        return self._core.prune(self.expire_after, self.min_count, self.max_features)

    def _maybe_prune(self) -> None:
        """Run a pruning pass when the cap is exceeded or the expiry pass is due."""
        if self.max_features is not None and self._core.n_features > self.max_features:
            self.prune()
        elif self.expire_after is not None and self.n_learned - self._pass_at >= max(1, self.expire_after // 10):
            self.prune()

    def mutual_information(self) -> dict[Hashable, float]:
        """I(presence of w; class) in nats for every feature in V (see ``pruning.mutual_information``)."""
        store = self.store
        ids = store.feature_ids()
        scores = mutual_information(store.gather_docs(ids), store.true_class_docs())
        return dict(zip(store.vocabulary.tokens(ids), scores.tolist()))

    def select_features(self, k: int) -> "DiscreteNB":
        """Keep the k features with the highest mutual information with the class; drop the rest.

        Ties go to the lower id. The result equals a batch model trained on the same
        documents over the reduced vocabulary.
        """
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise InvalidParameterError(f"k must be an int >= 0, got {describe(k)}")
        store = self.store
        ids = store.feature_ids()
        if len(ids) > k:
            scores = mutual_information(store.gather_docs(ids), store.true_class_docs())
            order = np.lexsort((ids, -scores))
            store.drop_features(ids[order[k:]])
        return self

    # -- persistence ------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model to ``path`` atomically (format: ``streamnb.persist``); read it with ``streamnb.load``."""
        persist.save(self, path)

    def _state(self) -> tuple[dict[str, Any], Arrays]:
        """The persistence hook: the model as plain values (params, labels ...) and named arrays."""
        scalars, arrays = self.store.export()
        state = {"params": self.get_params(), **scalars, "last_t": self.last_t,
                 "pruned_at": self.store.pruned_at, "pass_at": self._pass_at}
        if self._ledger is not None:
            arrays.update(self._ledger.arrays(self.store.class_id))
        evidence = self._core.evidence_state()
        if evidence is not None:
            values, scored = evidence
            arrays[EVIDENCE_ARRAYS[0]] = np.array(values, dtype=np.float64).reshape(-1, _core.TEMPERATURES)
            arrays[EVIDENCE_ARRAYS[1]] = np.array([scored], dtype=np.int64)
        return state, arrays

    @classmethod
    def _from_state(cls, state: dict[str, Any], arrays: Arrays) -> "DiscreteNB":
        """Rebuild a model from ``_state``'s output; ModelFormatError for anything inconsistent."""
        keys = {"params", "labels", "scale", "n_learned", "last_t", "pruned_at", "pass_at"}
        version_1 = keys | {"features"}  # a version-1 file lists the vocabulary's tokens here
        _require(set(state) in (keys, version_1), f"state keys {sorted(state)} differ from {sorted(keys)}")
        model = cls(**state["params"])
        model.store.restore(state, arrays, state["pruned_at"], tokens=state.get("features"))
        n = model.n_learned
        last_t = state["last_t"]
        if last_t is not None:
            _require(isinstance(last_t, (int, float)) and not isinstance(last_t, bool) and np.isfinite(last_t),
                     f"last_t must be a finite number or null, got {describe(last_t)}")
            last_t = float(last_t)
        model._clock.last_t = last_t
        pass_at = state["pass_at"]
        _require(isinstance(pass_at, int) and not isinstance(pass_at, bool) and 0 <= pass_at <= n,
                 f"pass_at must be an int in [0, {n}], got {describe(pass_at)}")
        model._pass_at = pass_at
        ledger_arrays = {name for name in arrays if name.startswith("ledger_")}
        unknown = sorted(set(arrays) - set(STORE_ARRAYS) - ledger_arrays - set(EVIDENCE_ARRAYS))
        _require(not unknown, f"arrays {unknown[:5]!r} are not arrays of a {cls.__name__}")
        model._restore_evidence(arrays)
        if model._ledger is None:
            _require(not ledger_arrays, "ledger arrays in a model without a ledger")
        else:
            model._ledger.restore(arrays, model.store.labels, n, model.half_life_seconds is not None)
        return model

    def _restore_evidence(self, arrays: Arrays) -> None:
        """Load the evidence of a smoothing chosen online (read from the file's bytes: no numpy)."""
        present = [name for name in EVIDENCE_ARRAYS if name in arrays]
        if self._call_alpha is not None:
            _require(not present, f"evidence arrays {present!r} in a model whose smoothing is fixed")
            return
        _require(len(present) == 2, f"a model choosing its smoothing online keeps its evidence: "
                                    f"arrays {list(EVIDENCE_ARRAYS)!r} are missing")
        n = len(cast("tuple[Any, ...]", self._core.smoothing_report())[0])
        values = _raw_values(arrays, EVIDENCE_ARRAYS[0], "<f8", [n, _core.TEMPERATURES])
        scored = _raw_values(arrays, EVIDENCE_ARRAYS[1], "<i8", [1])[0]
        _require(0 <= scored < 2**63, f"documents scored must be >= 0, got {scored}")
        self._core.restore_evidence([float(v) for v in values], int(scored))

    # -- prediction -------------------------------------------------------------------------
    @property
    def classes(self) -> list[Label]:
        """Classes with at least one learned document, in the order they first appeared."""
        return [label for label, n in zip(self._core.labels, self._core.class_docs()) if n > 0]

    def predict_one(self, x: Document) -> Label | None:
        """The most probable class (first learned wins ties); None when untrained."""
        return self._core.predict_one(x, self._call_alpha)

    def predict_proba_one(self, x: Document) -> dict[Label, float]:
        """P(c | x) for every class, from log space; an empty dict when untrained."""
        return self._core.predict_proba_one(x, self._call_alpha)

    def predict_log_proba_one(self, x: Document) -> dict[Label, float]:
        """log P(c | x) for every class; an empty dict when nothing has been learned."""
        return self._core.predict_log_proba_one(x, self._call_alpha)

    def predict_many(self, X: Iterable[Document]) -> list[Label | None]:
        return self._core.predict_many(X, self._call_alpha, 0)

    def predict_proba_many(self, X: Iterable[Document]) -> list[dict[Label, float]]:
        return self._core.predict_many(X, self._call_alpha, 1)

    def predict_log_proba_many(self, X: Iterable[Document]) -> list[dict[Label, float]]:
        return self._core.predict_many(X, self._call_alpha, 2)

    def joint_log_likelihood_one(self, x: Document) -> dict[Label, float]:
        """The unnormalised score log P(c) + log P(x | c) of every active class."""
        return self._core.joint_log_likelihood(x, self._call_alpha)

    def contributions_one(self, x: Document) -> Contributions:
        """The score of x split by feature, over the active classes (what ``evidence`` reads).

        rest + terms.sum(axis=0) is the joint log-likelihood ``predict_log_proba_one``
        normalises; each model's docstring says what its terms are.
        """
        features, terms, rest, classes = self._core.contributions(x, self._call_alpha)
        return Contributions(classes, features, terms, list(rest))

    def document_counts(self, x: Document) -> DocumentCounts:
        """x's known features with a value > 0 and their document counts (chi-square combining)."""
        features, docs = self._core.document_counts(x)
        return DocumentCounts(self._core.labels, features, docs, self._core.class_docs())

    def _feature_weights(self) -> tuple[list[Label], list[Hashable | None], Floats, Floats | None]:
        """(active classes, features in V, first, second weight tables over the active classes)."""
        ids = self.store.feature_ids()
        first, second = self._core.feature_weights(ids.tolist(), self._call_alpha)
        k = self._core.n_classes
        active = np.flatnonzero(self.store.true_class_docs() > 0)

        def table(data: bytearray) -> Floats:
            return np.frombuffer(data, dtype=np.float64).reshape(len(ids), k)[:, active]

        return (self.classes, self.store.vocabulary.tokens(ids), table(first),
                None if second is None else table(second))

    def _log_prior(self) -> Floats:
        """log P(c) over the active classes."""
        classes = self.store.true_class_docs()
        prior = class_log_prior(classes, self.store.labels, self.class_prior)
        return prior[classes > 0]

    @abc.abstractmethod
    def log_linear(self) -> LogLinear:
        """The per-class bias and per-feature weights this model is equivalent to."""

    def top_features(self, k: int = 10) -> dict[Label, list[tuple[Hashable, float]]]:
        """The k features with the largest weight per class, in the log-linear view."""
        return self.log_linear().top(k)

    # -- introspection ------------------------------------------------------------------------
    @property
    def n_features(self) -> int:
        """|V|: features with a nonzero count."""
        return self._core.n_features

    @property
    def nbytes(self) -> int:
        """Bytes the model holds in the compiled core (vocabulary, counts, stamps, sums)."""
        return self._core.nbytes()

    @property
    def class_counts(self) -> dict[Label, float]:
        """N_c: documents (sum of weights) per class."""
        return {label: n for label, n in zip(self._core.labels, self._core.class_docs()) if n > 0}

    def feature_counts(self, feature: Hashable) -> dict[Label, float]:
        """Token counts T_cf of one feature per class (empty when not in V)."""
        return self._feature_table(feature, 0)

    def feature_doc_counts(self, feature: Hashable) -> dict[Label, float]:
        """Document counts D_cf of one feature per class (empty when not in V)."""
        return self._feature_table(feature, 1)

    def _feature_table(self, feature: Hashable, which: int) -> dict[Label, float]:
        ids = self.store.vocabulary.find([feature])
        if ids[0] < 0 or not self.store.known(ids)[0]:
            return {}
        row = self.store.gather(ids)[which][0]
        docs = self._core.class_docs()
        return {label: float(row[c]) for c, label in enumerate(self._core.labels) if docs[c] > 0}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(alpha={self.alpha!r}, classes={len(self.classes)}, features={self.n_features})"


def _raw_values(arrays: Arrays, name: str, dtype: str, shape: list[int]) -> tuple[Any, ...]:
    """The values of a small saved array as Python numbers, its dtype and shape checked."""
    saved_dtype, saved_shape, buffer, start, end = _raw_array(arrays, name)
    _require(saved_dtype == dtype and list(saved_shape) == shape,
             f"array {name!r} must be {dtype} of shape {shape}, got {saved_dtype} of shape {list(saved_shape)}")
    return struct.unpack(f"<{math.prod(shape)}{'d' if dtype == '<f8' else 'q'}", bytes(buffer[start:end]))


def _tokenizer_signature(tokenizer: object) -> object:
    """What makes two tokenizers the same: type and get_params() when it has them, else identity."""
    get_params = getattr(tokenizer, "get_params", None)
    if tokenizer is None or not callable(get_params):
        return tokenizer
    return (f"{type(tokenizer).__module__}.{type(tokenizer).__qualname__}", get_params())


def _batch_documents(X: Any, feature_names: Sequence[Hashable] | None) -> list[Document]:
    """The documents of a batch: a list of documents, or the rows of a sparse matrix as mappings."""
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
        matrix.sum_duplicates()
        return [dict(zip([names[j] for j in matrix.indices[start:end]], matrix.data[start:end].tolist()))
                for start, end in zip(matrix.indptr[:-1], matrix.indptr[1:])]
    if isinstance(X, (str, bytes, Mapping)):
        raise InvalidTypeError(f"learn_many takes a sequence of documents, got {describe(X)}")
    return list(X)
