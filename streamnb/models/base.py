"""The shared base of the discrete naive Bayes models (multinomial, Bernoulli, complement).

A model is a compiled core (``streamnb._core.Core``: vocabulary, count store and the
formulas of docs/design.md section 2, see src/nb/) plus the Python that only validates,
looks up, updates and predicts: parameters are checked here and in their settings objects
(``settings.py``), documents are read and checked by the core, and every count changes
inside the core, all or nothing. ``DiscreteNB`` is the model's face: its parameters,
predictions, inspection and the learning methods, which check what they are given and hand
it to the model's ``Learner`` (``learning.py``: the core with the forgetting clocks, the
ledger and the pruning passes in front of it); ``state.py`` writes and reads its state for
the model file, ``values.py`` holds the values the models take and give.
"""

from __future__ import annotations

import abc
import copy
import inspect
import os
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar, cast

if TYPE_CHECKING:
    import numpy as np
    import scipy.sparse as sp

    from ..store import Arrays
    from .values import Floats
else:
    from .._lazy import numpy as np

from .. import _core, persist
from ..clock import check_stamp
from ..errors import InvalidInputError
from ..features.email import EmailTokenizer
from ..features.text import Tokenizer as WordTokenizer
from ..features.weighting import EmailWeights
from ..pruning import mutual_information
from ..store import CountStore
from ..validate import (
    Label,
    check_alpha,
    check_auto_grid,
    check_choice,
    check_class_prior,
    check_count,
    check_evidence_half_life,
    check_label,
    check_positive,
    check_tokenizer,
    check_weight,
)
from . import state
from .learning import Learner, batch_documents, check_same_model
from .settings import SETTINGS, Forgetting, Pruning, Smoothing, Storage, flatten, regroup, resolved
from .values import Contributions, Document, DocumentCounts, LogLinear, SmoothingReport, TextTokenizer

#: alpha="auto": the candidates when no ``Smoothing(grid=...)`` is given, 10^-3.5 to 1 in half
#: decades (eight); the best fixed alphas measured lie inside it (benchmarks/bench_smoothing.py;
#: CHANGELOG.md, "Defaults and the measurements that chose them").
DEFAULT_ALPHA_GRID = tuple(10.0 ** (k / 2) for k in range(-7, 1))
EMPTY_CHOICES = ("raise", "learn")

_Model = TypeVar("_Model", bound="DiscreteNB")


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

    The public models (``MultinomialNB``, ``BernoulliNB``, ``ComplementNB``, ``EmailNB``)
    take their statistical parameters first (``alpha``, then their own: ``mu``,
    ``binarize``, ``norm`` ...), then these, keyword-only. Retraining in place: see
    ``learn_one``, ``unlearn_one``, ``merge``, ``prune``.

    Parameters
    ----------
    alpha
        Additive (Lidstone) smoothing, > 0 (0 with ``Smoothing(allow_zero_alpha=True)``).
        ``alpha="auto"`` chooses it online among ``Smoothing.grid`` (see ``smoothing_``):
        before a document is learned, every candidate scores it (each document, or with
        ``Smoothing(sample_evidence=True)`` a schedule's sample of those learned without a
        prediction), and predictions use the candidate whose scores gave the true classes
        the highest (tempered) likelihood so far. A prediction then costs more (every
        candidate scores the document, reading its counts once; learning the same document
        next reuses those scores); ``learn_many`` records what its rows learned in turn
        would. Unlearning leaves the evidence as it is (a record of the stream: what a
        document taught the choice depended on the counts of its time); merging adds the two
        records.
    class_prior
        ``"mle"`` (N_c / N, the default), ``"laplace"`` ((N_c + 1) / (N + K)),
        ``"uniform"``, or a mapping label -> prior probability (fixed; every class learned
        must be in it; the values are renormalised over the classes seen).
    tokenizer
        A callable text -> mapping feature -> count. With it, documents may be raw text.
        A ``streamnb.Tokenizer`` with the default pattern tokenizes inside the core.
    smoothing
        How unseen words are scored, whether alpha may be 0, and how a smoothing chosen
        online is chosen (``Smoothing``; None: its defaults).
    forgetting
        How old documents fade (``Forgetting``; None: nothing fades). With
        ``half_life_seconds``, ``learn_one(..., t=...)`` gives timestamps.
    pruning
        Which features the automatic pruning passes drop (``Pruning``; None: none).
    storage
        How the counts are stored: hashed into buckets, dense or sparse rows (``Storage``;
        None: its defaults).
    ledger
        Remember the fingerprints of the last ``ledger`` learned messages (see
        ``streamnb.ledger``): learning a message again is a no-op, learning it under
        another label moves it, and unlearning it needs no ``learned_at``/``t``.
    empty_documents
        A learned document with no present feature: ``"raise"`` (the default; usually a
        tokenizer or input bug) or ``"learn"`` (it counts in N_c and adds no word counts, as
        scikit-learn and river do; a stream should not stop on an empty message).

    The keywords of the settings' fields, flat (``half_life=...``, ``max_features=...``, as
    before they were grouped), are still taken, with a DeprecationWarning naming the new
    spelling.

    Raises
    ------
    InvalidParameterError
        For a parameter out of its range or of the wrong kind.
    """

    #: The core's model kind: "multinomial", "bernoulli" or "complement".
    _kind: ClassVar[str]

    def __init__(self, alpha: float | str, *, class_prior: str | Mapping[Label, float],
                 tokenizer: TextTokenizer | None, smoothing: Smoothing | None, forgetting: Forgetting | None,
                 pruning: Pruning | None, storage: Storage | None, ledger: int | None, empty_documents: str) -> None:
        smoothing = resolved(smoothing, Smoothing)
        self.alpha: float | str = "auto" if alpha == "auto" else check_alpha(alpha, smoothing.allow_zero_alpha)
        auto = self._chosen_online()
        grid = check_auto_grid(smoothing.grid, auto, self._default_grid())
        check_evidence_half_life(smoothing.evidence_half_life, online=auto is not None)
        self._smoothing = replace(smoothing, grid=grid)  # a model keeps its candidates, whatever the defaults become
        self._forgetting: Forgetting = resolved(forgetting, Forgetting)
        self._pruning: Pruning = resolved(pruning, Pruning)
        self._storage: Storage = resolved(storage, Storage)
        self.class_prior = check_class_prior(class_prior)
        self.empty_documents = check_choice("empty_documents", empty_documents, EMPTY_CHOICES)
        check_tokenizer(tokenizer)
        self.ledger = check_positive("ledger", ledger, integer=True)
        fixed = self.class_prior if isinstance(self.class_prior, dict) else None
        self._core: _core.Core[Label] = _core.Core(
            kind=self._kind, alpha_free_params=self._kind_params(),
            class_prior=self.class_prior if isinstance(self.class_prior, str) else "fixed", fixed_prior=fixed,
            unseen=self.smoothing.unseen, empty_documents=self.empty_documents,
            n_buckets=self.storage.n_buckets, dense_max_classes=self.storage.dense_max_classes,
            tokenizer=None, in_core=None, binary=False)
        self._core.unseen_score = self.smoothing.unseen == "score"
        self.store = CountStore(self._core, self.storage.n_buckets)
        candidates = self._candidates()
        if candidates is not None:
            half_life = self.smoothing.evidence_half_life
            decay = 1.0 if half_life is None else 2.0 ** (-1.0 / half_life)
            self._core.set_auto_smoothing(candidates, decay, self.smoothing.sample_evidence)
        # the alpha the core is called with: None for the smoothing it chooses online
        self._call_alpha: float | None = None if candidates is not None else cast(float, self.alpha)
        self.tokenizer = tokenizer
        self._learner = Learner(self._core, self.class_prior, self.forgetting, self.pruning, self.ledger)

    @abc.abstractmethod
    def _kind_params(self) -> tuple[float | None, float, bool]:
        """(mu, binarize, norm): the model's own parameters the core needs."""

    def _chosen_online(self) -> str | None:
        """The parameter the model chooses online ("alpha"), or None for a fixed smoothing."""
        return "alpha" if self.alpha == "auto" else None

    def _default_grid(self) -> tuple[float, ...]:
        """The candidates of the parameter chosen online when ``Smoothing.grid`` is None."""
        return DEFAULT_ALPHA_GRID

    def _candidates(self) -> list[tuple[float, float | None]] | None:
        """The (alpha, mu) candidates of a smoothing chosen online, least smoothing first; None when fixed."""
        if self.smoothing.grid is None:
            return None
        mu = self._kind_params()[0]
        return [(alpha, mu) for alpha in self.smoothing.grid]

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

    # The settings are fixed at construction: the core, the clocks and the pruning passes run from them.
    @property
    def smoothing(self) -> Smoothing:
        return self._smoothing

    @property
    def forgetting(self) -> Forgetting:
        return self._forgetting

    @property
    def pruning(self) -> Pruning:
        return self._pruning

    @property
    def storage(self) -> Storage:
        return self._storage

    @property
    def last_t(self) -> float | None:
        """The latest timestamp learned (models that forget in time)."""
        return self._learner.clock.last_t

    def get_params(self) -> dict[str, Any]:
        """The constructor's arguments, by name (scikit-learn's convention: each parameter is
        the attribute of its name; the tokenizer object itself, the settings objects as they
        are used: ``Smoothing.grid`` filled in when the smoothing is chosen online)."""
        return {name: getattr(self, name) for name in inspect.signature(type(self)).parameters}

    def _saved_params(self) -> dict[str, Any]:
        """The parameters as a model file keeps them: the settings' fields flat (``state.py``)."""
        params = self.get_params()
        settings = {name: params.pop(name) for name in SETTINGS}
        return {**params, **flatten(settings, self._chosen_online() or "alpha")}

    @classmethod
    def _from_saved_params(cls: type[_Model], params: Mapping[str, Any]) -> _Model:
        """A model built from a model file's parameters (``_saved_params``)."""
        return cls(**regroup(params))

    def with_alpha(self: _Model, alpha: float) -> _Model:
        """A read-only view of this model with another alpha, sharing the counts.

        Counts do not depend on alpha, so a sweep over alphas costs one pass over the data.
        On a model choosing mu online, the view keeps the mu chosen at each prediction.

        Parameters
        ----------
        alpha
            The view's additive smoothing (> 0; 0 with ``Smoothing(allow_zero_alpha=True)``).

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
        view.alpha = view._call_alpha = check_alpha(alpha, self.smoothing.allow_zero_alpha)
        return view

    def __copy__(self: _Model) -> _Model:
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

    def _log_likelihood(self, x: Document) -> Floats:
        """log P(x | c) without the class prior, every class (NaN for inactive ones)."""
        return np.array(self._core.log_likelihood(x, self._call_alpha))

    # -- learning ---------------------------------------------------------------------------
    @property
    def n_learned(self) -> int:
        """Documents learned so far (merged ones included): the clock of ``Forgetting.half_life``.

        A document's stamp is the value of n_learned right after it was learned; unlearning
        from a model that forgets, or that has dropped features (pruning), needs it
        (``learned_at=``) unless a ledger remembers it.
        Unlearning does not turn the clock back: ages count every document learned since.
        """
        return self._core.n_learned

    def learn_one(self: _Model, x: Document, y: Label, w: float = 1.0, *, t: float | None = None) -> _Model:
        """Add one document of class y with weight w to the counts.

        ``t`` is the document's timestamp in seconds, used with ``Forgetting.half_life_seconds``
        (default: now; an older timestamp than the latest learned makes it weigh less).
        With a ledger, a message already learned as y is skipped, and one learned under
        another label is unlearned from that label first.

        Parameters
        ----------
        x
            A mapping feature -> value, or raw text (or a raw message) with a tokenizer.
        y
            Its class: a str, int or bool.
        w
            Its sample weight, a finite number > 0.
        t
            Its timestamp in seconds (models with ``Forgetting.half_life_seconds``).

        Returns
        -------
        DiscreteNB
            The model itself, so that calls chain.

        Raises
        ------
        InvalidInputError, InvalidLabelError, UnknownClassError
            For a document, label or weight the model cannot learn (a class missing from a
            fixed class_prior); the model is left as it was.
        """
        self._learner.learn(x, check_label(y), check_weight(w), self._learner.clock.check_time(t, default_now=True))
        return self

    def learned_as(self, x: Document) -> Label | None:
        """The label the ledger holds message x under; None without a ledger, or for a message it does not hold."""
        return self._learner.learned_as(x)

    def unlearn_one(self: _Model, x: Document, y: Label, w: float = 1.0, *, learned_at: int | None = None,
                    t: float | None = None) -> _Model:
        """Remove one document learned earlier as class y: the exact inverse of learn_one.

        Raises UnknownClassError / InvalidInputError (changing nothing) when the document
        was not learned: unknown class, unknown words, or counts that would go negative.
        A model that forgets must know the document's age: ``learned_at`` (its stamp, see
        ``n_learned``) with ``Forgetting.half_life``, ``t`` (its timestamp) with ``Forgetting.half_life_seconds``;
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

        Parameters
        ----------
        x, y, w
            The document, its class and the weight it was learned with (as ``learn_one``).
        learned_at
            The document's stamp: ``n_learned`` right after it was learned.
        t
            The timestamp it was learned with (models with ``Forgetting.half_life_seconds``).

        Returns
        -------
        DiscreteNB
            The model, the document taken out.

        Raises
        ------
        UnknownClassError, InvalidInputError
            When the document was not learned as y, or its age is needed and not given;
            nothing changes.
        """
        label = check_label(y)
        weight = check_weight(w)
        stamp = check_stamp(learned_at, self.n_learned)
        self._learner.unlearn(x, label, weight, stamp, self._learner.clock.check_time(t, default_now=False))
        return self

    def learn_many(self: _Model, X: Sequence[Document] | sp.spmatrix, y: Sequence[Label],
                   w: Sequence[float] | None = None, *, feature_names: Sequence[Hashable] | None = None,
                   t: float | Sequence[float] | None = None) -> _Model:
        """Learn many documents: a list of documents, or a scipy.sparse matrix + feature_names.

        The result equals learn_one on each row in turn (counts add up), but documents of
        the same class are summed first and enter the store in one update per class.
        Everything is validated before anything is learned. With forgetting, row i is
        n-1-i documents older than the last row; ``t`` is one timestamp for the batch or
        one per row. With a ledger, rows go through learn_one one at a time (after the
        whole batch has been validated), so repeats and relabels behave as in learn_one. A
        smoothing chosen online records what the rows learned in turn would (every row, or with
        ``Smoothing.sample_evidence`` each row the schedule scores, against the counts of the rows before
        it: src/smoothing.rs); the
        rows between two scored ones enter in one update per class, but for a model that
        forgets, which learns them a row at a time.

        Parameters
        ----------
        X
            A sequence of documents, or a scipy.sparse matrix (one row a document).
        y
            One class per document.
        w
            One sample weight per document (default: 1 each).
        feature_names
            With a matrix: the feature of each column (distinct).
        t
            One timestamp for the whole batch, or one per row.

        Returns
        -------
        DiscreteNB
            The model, every row learned.

        Raises
        ------
        InvalidInputError, InvalidTypeError
            For lengths that differ, a matrix without feature names, or any document, label
            or weight ``learn_one`` would refuse; nothing is learned then.
        """
        documents = batch_documents(X, feature_names)
        labels = [check_label(label) for label in y]
        if len(documents) != len(labels):
            raise InvalidInputError(f"X has {len(documents)} documents but y has {len(labels)} labels")
        weights = np.ones(len(labels)) if w is None else np.array([check_weight(v) for v in w], dtype=float)
        if len(weights) != len(labels):
            raise InvalidInputError(f"w has {len(weights)} weights but y has {len(labels)} labels")
        times = self._learner.clock.check_times(t, len(labels))
        self._learner.learn_many(documents, labels, weights, times, row_by_row_evidence=self._call_alpha is None)
        return self

    def unlearn_many(self: _Model, X: Sequence[Document], y: Sequence[Label],
                     w: Sequence[float] | None = None, *, learned_at: Sequence[int] | None = None,
                     t: Sequence[float] | None = None) -> _Model:
        """Unlearn many documents, all or nothing: everything is checked before any count changes.

        The documents' counts are summed per class and each class is checked against the
        store before the first one is applied. Since unlearning only subtracts, the batch
        fails exactly when some document in turn would. ``learned_at`` and ``t`` give each
        document's age, as in unlearn_one.

        Parameters
        ----------
        X, y, w
            The documents, their classes and the weights they were learned with.
        learned_at, t
            Per document, its stamp and its timestamp (as ``unlearn_one``).

        Returns
        -------
        DiscreteNB
            The model, every row taken out.

        Raises
        ------
        InvalidInputError, UnknownClassError
            For lengths that differ, or a document ``unlearn_one`` would refuse; nothing
            changes then.
        """
        documents, labels = list(X), [check_label(label) for label in y]
        n = len(documents)
        weights = [1.0] * n if w is None else [check_weight(v) for v in w]
        stamps: list[int | None] = [None] * n
        if learned_at is not None:
            stamps = [check_stamp(s, self.n_learned) for s in learned_at]
        times: list[float | None] = [None] * n
        if t is not None:
            times = [self._learner.clock.check_time(v, default_now=False) for v in t]
        if not n == len(labels) == len(weights) == len(stamps) == len(times):
            raise InvalidInputError(f"X, y, w, learned_at and t differ in length: {n}, {len(labels)}, "
                                    f"{len(weights)}, {len(stamps)}, {len(times)}")
        self._learner.unlearn_many(documents, labels, weights, stamps, times)
        return self

    def merge(self: _Model, other: DiscreteNB) -> _Model:
        """Add other's counts to this model: the model trained on self's data then other's.

        With ``Forgetting.half_life`` self's counts first age by other's n_learned documents; with
        ``Forgetting.half_life_seconds`` both sides move to the later of the two clocks. Other's
        feature stamps and ledger entries follow self's. Raises IncompatibleModelsError
        (changing nothing) for another model type, other parameters or tokenizer settings,
        or a message both ledgers hold. A pruning pass may follow (``Pruning.max_features`` ...).

        With a smoothing chosen online (same candidates on both sides), the evidence of the
        merged model is self's record followed by other's: self's aged by other's documents
        scored (``Smoothing.evidence_half_life``), plus other's. Each document was scored by the model
        that learned it, so this is not the evidence one model trained on both streams in turn
        would hold (the counts are exactly that model's).

        Parameters
        ----------
        other
            A model of the same type and parameters (``Storage.dense_max_classes`` may differ).

        Returns
        -------
        DiscreteNB
            This model, holding both.

        Raises
        ------
        IncompatibleModelsError
            For another model type, other parameters or tokenizer settings, or a message
            both ledgers hold.
        """
        self._check_mergeable(other)
        self._learner.merge(other._learner, timed=self.forgetting.half_life_seconds is not None)
        return self

    def _check_mergeable(self, other: DiscreteNB) -> None:
        def comparable(name: str, value: Any) -> Any:  # a layout alone does not keep two models apart
            if name != "storage":
                return value
            return [getattr(value, item.name) for item in fields(value) if item.name not in Storage.LAYOUT_ONLY]

        check_same_model(self, other, comparable)
        if self._learner.ledger is not None and other._learner.ledger is not None:
            self._learner.ledger.check_mergeable(other._learner.ledger)

    # -- bounded memory ---------------------------------------------------------------------
    def prune(self) -> int:
        """Apply the pruning policies now; returns the number of features dropped.

        In order: features not seen in the last ``Pruning.expire_after`` documents, features whose
        total count sum_c T_cw is below ``Pruning.min_count``, then, if |V| is still above
        ``Pruning.max_features``, the lowest totals (ties: least recently seen first, then the lowest
        id) down to 90% of the cap (src/pruning.rs). O(|V|) in the core; the automatic
        passes run rarely enough that the cost per learned document stays amortised O(1)
        (see ``Pruning.max_features``, ``Pruning.expire_after``).

        Returns
        -------
        int
            The number of features dropped.
        """
        return self._learner.prune()

    def mutual_information(self) -> dict[Hashable, float]:
        """I(presence of w; class) in nats for every feature in V (see ``pruning.mutual_information``)."""
        store = self.store
        ids = store.feature_ids()
        scores = mutual_information(store.gather_docs(ids), store.true_class_docs())
        return dict(zip(store.vocabulary.tokens(ids), scores.tolist()))

    def select_features(self: _Model, k: int) -> _Model:
        """Keep the k features with the highest mutual information with the class; drop the rest.

        Ties go to the lower id. The result equals a batch model trained on the same
        documents over the reduced vocabulary.

        Parameters
        ----------
        k
            How many features to keep (an int >= 0).

        Returns
        -------
        DiscreteNB
            The model, holding the k features only.

        Raises
        ------
        InvalidParameterError
            For k not an int >= 0.
        """
        k = check_count("k", k)
        store = self.store
        ids = store.feature_ids()
        if len(ids) > k:
            scores = mutual_information(store.gather_docs(ids), store.true_class_docs())
            order = np.lexsort((ids, -scores))
            store.drop_features(ids[order[k:]])
        return self

    # -- inspection -------------------------------------------------------------------------
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

    def joint_log_likelihood_one(self, x: Document) -> dict[Label, float]:
        """The unnormalised score log P(c) + log P(x | c) of every active class."""
        return self._core.joint_log_likelihood(x, self._call_alpha)

    def contributions_one(self, x: Document) -> Contributions:
        """The score of x split by feature, over the active classes (what ``evidence`` reads).

        rest + terms.sum(axis=0) is the joint log-likelihood ``predict_log_proba_one``
        normalises; each model's docstring says what its terms are.

        Parameters
        ----------
        x
            A document (a mapping, or raw text with a tokenizer).

        Returns
        -------
        Contributions
            The active classes, x's features scored, their (n, K) terms and the rest.
        """
        features, terms, rest, classes = self._core.contributions(x, self._call_alpha)
        return Contributions(classes, features, terms, list(rest))

    def strongest_one(self, x: Document, k: int, positive: Label, negative: Label) -> list[tuple[Hashable, float]]:
        """The k features of x that push its log-odds of ``positive`` against ``negative``
        most, strongest first: (feature, weight), weight the difference of the two classes'
        terms of :meth:`contributions_one` (chosen in the core: what ``evidence`` reads).
        """
        return self._core.strongest(x, self._call_alpha, positive, negative, k)

    def document_counts(self, x: Document) -> DocumentCounts:
        """x's known features with a value > 0 and their document counts (chi-square combining).

        Parameters
        ----------
        x
            The document whose features are looked up.

        Returns
        -------
        DocumentCounts
            Every class of the model, those features, D_cf per class and N_c.
        """
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
        return self._core.class_counts()

    def feature_counts(self, feature: Hashable) -> dict[Label, float]:
        """Token counts T_cf of one feature per class (empty when not in V).

        Parameters
        ----------
        feature
            A feature (a token, or a key of the documents' mappings).

        Returns
        -------
        dict
            Active class -> T_cf.
        """
        return self._feature_table(feature, 0)

    def feature_doc_counts(self, feature: Hashable) -> dict[Label, float]:
        """Document counts D_cf of one feature per class (empty when not in V): as
        ``feature_counts``, counting documents."""
        return self._feature_table(feature, 1)

    def _feature_table(self, feature: Hashable, which: int) -> dict[Label, float]:
        ids = self.store.vocabulary.find([feature])
        if ids[0] < 0 or not self.store.known(ids)[0]:
            return {}
        row = self.store.gather(ids)[which][0]
        docs = self._core.class_docs()
        return {label: float(row[c]) for c, label in enumerate(self._core.labels) if docs[c] > 0}

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

    # -- persistence ------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model to ``path`` atomically (format: ``streamnb.persist``); read it with ``streamnb.load``."""
        persist.save(self, path)

    def _state(self) -> tuple[dict[str, Any], Arrays]:
        """The persistence hook: the model as plain values (params, labels ...) and named arrays."""
        return state.model_state(self)

    @classmethod
    def _from_state(cls: type[_Model], saved: dict[str, Any], arrays: Arrays) -> _Model:
        """Rebuild a model from ``_state``'s output; ModelFormatError for anything inconsistent."""
        return state.restore_model(cls, saved, arrays)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(alpha={self.alpha!r}, classes={len(self.classes)}, features={self.n_features})"
