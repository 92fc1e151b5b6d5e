"""The shared base of the discrete naive Bayes models (multinomial, Bernoulli, complement).

A model is a compiled core (``streamnb._core.Core``: vocabulary, count store and the
formulas of docs/design.md section 2, see src/nb/) plus the Python that only validates,
looks up, updates and predicts: parameters are checked here (``streamnb.validate``),
documents are read and checked by the core, and every count changes inside the core, all
or nothing. Around the counts sit three layers of their own: the forgetting clocks
(``streamnb.clock``), the ledger of learned messages (``streamnb.ledger``) and the pruning
policies (``prune``).

``DiscreteNB`` is assembled from one part per concern: ``learning.py`` (learn, unlearn,
merge, prune), ``state.py`` (save and load), ``inspection.py`` (counts, contributions, the
smoothing report); ``settings.py`` holds the ``Forgetting`` and ``Pruning`` settings and
``values.py`` the values the models take and give. Every name importable from this module
before the split still is.
"""

from __future__ import annotations

import abc
import copy
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, cast

if TYPE_CHECKING:
    import numpy as np

    from .values import Floats as Floats
else:
    from .._lazy import numpy as np

from .. import _core, persist
from ..clock import Clock
from ..errors import InvalidParameterError
from ..features.email import EmailTokenizer
from ..features.text import Tokenizer as WordTokenizer
from ..features.weighting import EmailWeights
from ..ledger import Ledger
from ..store import CountStore
from ..validate import (
    Label,
    check_alpha,
    check_auto_grid,
    check_bool,
    check_choice,
    check_class_prior,
    check_evidence_half_life,
    check_n_buckets,
    check_positive,
    check_positive_int,
    check_tokenizer,
)
from .inspection import InspectionParts
from .learning import STORAGE_PARAMS as STORAGE_PARAMS
from .learning import LearningParts
from .learning import _batch_documents as _batch_documents
from .learning import _tokenizer_signature as _tokenizer_signature
from .settings import Forgetting as Forgetting
from .settings import Pruning as Pruning
from .state import EVIDENCE_ARRAYS as EVIDENCE_ARRAYS
from .state import StateParts
from .values import Contributions as Contributions
from .values import Document as Document
from .values import DocumentCounts as DocumentCounts
from .values import FeatureValues as FeatureValues
from .values import LogLinear as LogLinear
from .values import SmoothingReport as SmoothingReport
from .values import TextTokenizer as TextTokenizer

UNSEEN_CHOICES = ("ignore", "score")
#: alpha="auto": the candidates when no ``alpha_grid`` is given, 10^-3.5 to 1 in half decades
#: (eight); the best fixed alphas measured lie inside it (benchmarks/bench_smoothing.py;
#: CHANGELOG.md, "Defaults and the measurements that chose them").
DEFAULT_ALPHA_GRID = tuple(10.0 ** (k / 2) for k in range(-7, 1))
EMPTY_CHOICES = ("raise", "learn")


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


#: The keywords a public discrete model hands to ``DiscreteNB`` as it took them.
_PASSED_ON = ("class_prior", "unseen", "tokenizer", "allow_zero_alpha", "n_buckets", "dense_max_classes",
              "empty_documents", "ledger", "alpha_grid", "evidence_half_life", "sample_evidence")


def discrete_args(params: Mapping[str, Any]) -> dict[str, Any]:
    """``DiscreteNB``'s arguments from a public model's constructor arguments (its ``locals()``).

    ``alpha`` and the keywords of ``_PASSED_ON`` as they are; ``Forgetting`` built from
    ``half_life``, ``half_life_seconds`` and ``Pruning`` from ``max_features``,
    ``min_count``, ``expire_after``.
    """
    return {"alpha": params["alpha"], **{name: params[name] for name in _PASSED_ON},
            "forgetting": Forgetting(params["half_life"], params["half_life_seconds"]),
            "pruning": Pruning(params["max_features"], params["min_count"], params["expire_after"])}


class DiscreteNB(LearningParts, StateParts, InspectionParts, abc.ABC):
    """Shared machinery of the count-based naive Bayes models.

    The public models (``MultinomialNB``, ``BernoulliNB``, ``ComplementNB``, ``EmailNB``)
    take these parameters as keywords (keyword-only after ``alpha``), the forgetting and
    pruning ones one by one: each builds its ``Forgetting`` (``half_life``,
    ``half_life_seconds``) and ``Pruning`` (``max_features``, ``min_count``,
    ``expire_after``) and hands them here. Retraining in place: see ``learn_one``,
    ``unlearn_one``, ``merge``, ``prune``.

    Parameters
    ----------
    alpha
        Additive (Lidstone) smoothing, > 0. ``alpha=0`` needs ``allow_zero_alpha=True``:
        then a word with a zero count in a class rules that class out (log P = -inf); if
        every class is ruled out, the prediction falls back to the class prior alone.
        ``alpha="auto"`` chooses it online among ``alpha_grid`` (see ``smoothing_``): before
        a document is learned, every candidate scores it (each document, or a schedule's
        sample of those learned without a prediction: below), and predictions use the
        candidate whose scores gave the true classes the highest (tempered) likelihood so
        far. A prediction then costs more (every candidate scores the document, reading its
        counts once; learning the same document next reuses those scores). A learn that
        follows no prediction of its document scores it itself while the record counts
        fewer than 1,024 documents, then 32 documents in every 1,024, each weighing 32
        times (the others only count: src/smoothing.rs), so past the first thousand such a
        learn costs about what a fixed alpha's does, and the choice reads a sample of those
        documents; ``learn_many`` records what its rows learned in turn would. Unlearning
        leaves the evidence as it is (a record of the stream: what a document taught the
        choice depended on the counts of its time); merging adds the two records.
    class_prior
        ``"mle"`` (N_c / N, the default), ``"laplace"`` ((N_c + 1) / (N + K)),
        ``"uniform"``, or a mapping label -> prior probability (fixed; every class learned
        must be in it; the values are renormalised over the classes seen).
    unseen
        Words never seen in training, at prediction time: ``"ignore"`` (the default; equals
        a batch model whose vocabulary is the training vocabulary) or ``"score"`` (each one
        counts as a zero-count word, as river does).
    tokenizer
        A callable text -> mapping feature -> count. With it, documents may be raw text.
        A ``streamnb.Tokenizer`` with the default pattern tokenizes inside the core.
    allow_zero_alpha
        Allow ``alpha=0`` (see ``alpha``).
    n_buckets
        Hash features into this many ids instead of keeping a vocabulary (bounded memory;
        feature names are lost).
    dense_max_classes
        Beyond this many classes the count table switches from dense rows of K counts to
        sparse rows holding only the nonzero cells.
    empty_documents
        A learned document with no present feature: ``"raise"`` (the default; usually a
        tokenizer or input bug) or ``"learn"`` (it counts in N_c and adds no word counts, as
        scikit-learn and river do; a stream should not stop on an empty message).
    forgetting
        How old documents fade (``Forgetting``: ``half_life``, ``half_life_seconds``). The
        model equals a batch model trained with the documents' weights (smoothing
        included), at O(1) per document: one global scale in the store. BernoulliNB's sum
        over absent words (and ComplementNB's norm) depend on every count, so with
        forgetting their first prediction after a learn costs O(|V|): exact, but not the
        O(document) of docs/design.md's cost rule. With ``half_life_seconds``,
        ``learn_one(..., t=...)`` gives timestamps (default: the current time).
    pruning
        Which features the automatic pruning passes drop (``Pruning``: ``max_features``,
        ``min_count``, ``expire_after``; batches keep the amortised cost O(1) per
        document). Once a pruning pass (these, ``prune``, ``select_features``) has dropped
        a feature, unlearning needs each document's stamp: keep a ledger, or pass
        ``learned_at=`` (see ``unlearn_one``).
    ledger
        Remember the fingerprints of the last ``ledger`` learned messages (see
        ``streamnb.ledger``): learning a message again is a no-op, learning it under
        another label moves it, and unlearning it needs no ``learned_at``/``t``.
    alpha_grid
        The candidates of ``alpha="auto"`` (distinct numbers > 0; default
        ``DEFAULT_ALPHA_GRID``, eight from 10^-3.5 to 1).
    evidence_half_life
        With a smoothing chosen online, age the evidence: the record before each document
        scored is multiplied by 2 ** (-1 / evidence_half_life), so the choice follows drift.
        None (the default) keeps the whole stream's evidence.
    sample_evidence
        With a smoothing chosen online, score the documents learned without a prediction
        of them on a schedule (every one while the evidence counts fewer than 1,024
        documents, then runs of 32 in every 1,024, each weighing 32 times): learning
        without predicting costs about what a fixed smoothing's does (1.0 to 1.2 times
        instead of 1.5 to 4), and the choice reads a sample of those documents (on 20
        Newsgroups learned in one batch, 0.3 to 1.7 points less accurate). A document
        learned right after a prediction of it always counts. False (the default) scores
        every document learned.

    Raises
    ------
    InvalidParameterError
        For a parameter out of its range or of the wrong kind (``streamnb.validate``).
    """

    #: The core's model kind: "multinomial", "bernoulli" or "complement".
    _kind: ClassVar[str]

    def __init__(self, alpha: float | str, *, class_prior: str | Mapping[Label, float], unseen: str,
                 tokenizer: TextTokenizer | None, allow_zero_alpha: bool, n_buckets: int | None,
                 dense_max_classes: int, empty_documents: str, forgetting: Forgetting, pruning: Pruning,
                 ledger: int | None, alpha_grid: Sequence[float] | None = None,
                 evidence_half_life: float | None = None, sample_evidence: bool = False) -> None:
        self.alpha: float | str = "auto" if alpha == "auto" else check_alpha(alpha, allow_zero_alpha)
        self.alpha_grid = check_auto_grid("alpha", alpha, alpha_grid, DEFAULT_ALPHA_GRID)
        self.evidence_half_life = check_positive("evidence_half_life", evidence_half_life, integer=False)
        self.sample_evidence = check_bool("sample_evidence", sample_evidence, InvalidParameterError)
        self.allow_zero_alpha = bool(allow_zero_alpha)
        self.class_prior = check_class_prior(class_prior)
        self.empty_documents = check_choice("empty_documents", empty_documents, EMPTY_CHOICES)
        check_tokenizer(tokenizer)
        self.n_buckets = check_n_buckets(n_buckets)
        self.dense_max_classes = check_positive_int("dense_max_classes", dense_max_classes)
        self._forgetting, self.pruning = forgetting, pruning
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
        check_evidence_half_life(self.evidence_half_life, online=candidates is not None)
        if candidates is not None:
            decay = 1.0 if self.evidence_half_life is None else 2.0 ** (-1.0 / self.evidence_half_life)
            self._core.set_auto_smoothing(candidates, decay, self.sample_evidence)
        # the alpha the core is called with: None for the smoothing it chooses online
        self._call_alpha: float | None = None if candidates is not None else cast(float, self.alpha)
        self.tokenizer = tokenizer
        self.unseen = unseen
        self._clock = Clock(forgetting.half_life, forgetting.half_life_seconds)
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
    def forgetting(self) -> Forgetting:
        """The forgetting settings, fixed at construction (the clocks run from them)."""
        return self._forgetting

    @property
    def half_life(self) -> float | None:
        """Forgetting: the half-life in documents (``Forgetting``)."""
        return self.forgetting.half_life

    @property
    def half_life_seconds(self) -> float | None:
        """Forgetting: the half-life in seconds (``Forgetting``)."""
        return self.forgetting.half_life_seconds

    @property
    def max_features(self) -> int | None:
        """Pruning: the cap on |V| (``Pruning``)."""
        return self.pruning.max_features

    @property
    def min_count(self) -> float | None:
        """Pruning: the smallest total count a feature keeps (``Pruning``)."""
        return self.pruning.min_count

    @property
    def expire_after(self) -> int | None:
        """Pruning: features unseen for this many documents are dropped (``Pruning``)."""
        return self.pruning.expire_after

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
                "evidence_half_life": self.evidence_half_life, "sample_evidence": self.sample_evidence}

    def with_alpha(self, alpha: float) -> "DiscreteNB":
        """A read-only view of this model with another alpha, sharing the counts.

        Counts do not depend on alpha, so a sweep over alphas costs one pass over the data.
        On a model choosing mu online, the view keeps the mu chosen at each prediction.

        Parameters
        ----------
        alpha
            The view's additive smoothing (> 0; 0 with ``allow_zero_alpha``).

        Returns
        -------
        DiscreteNB
            A shallow copy sharing this model's core.

        Raises
        ------
        InvalidParameterError
            For an alpha out of range.
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

    def _log_prior(self) -> Floats:
        """log P(c) over the active classes."""
        classes = self.store.true_class_docs()
        prior = class_log_prior(classes, self.store.labels, self.class_prior)
        return prior[classes > 0]

    @abc.abstractmethod
    def log_linear(self) -> LogLinear:
        """The per-class bias and per-feature weights this model is equivalent to."""

    def top_features(self, k: int = 10) -> dict[Label, list[tuple[Hashable, float]]]:
        """The k features with the largest weight per class, in the log-linear view.

        Parameters
        ----------
        k
            How many features per class.

        Returns
        -------
        dict
            Label -> [(feature, weight), ...], the largest first (ties: the first listed).
        """
        return self.log_linear().top(k)
    def __repr__(self) -> str:
        return f"{type(self).__name__}(alpha={self.alpha!r}, classes={len(self.classes)}, features={self.n_features})"

