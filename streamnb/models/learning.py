"""How a discrete model's counts change: learning, unlearning, merging and pruning.

``LearningParts`` is the part of ``DiscreteNB`` (``base.py``) that changes the counts,
through the forgetting clocks (``streamnb.clock``) and the ledger (``streamnb.ledger``) in
front of the compiled core; every count changes inside the core, all or nothing.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:
    import numpy as np
    import scipy.sparse as sp

    from .base import DiscreteNB
    from .values import Floats
else:
    from .._lazy import numpy as np
    from .._lazy import scipy_sparse as sp

from .. import _core
from ..clock import check_stamp
from ..errors import IncompatibleModelsError, InvalidInputError, InvalidTypeError, describe
from ..pruning import mutual_information
from ..validate import Label, check_class_allowed, check_count, check_label, check_weight
from .parts import ModelParts
from .values import Document

# Parameters that only choose a storage layout: models differing in them still merge.
STORAGE_PARAMS = ("dense_max_classes",)

_Model = TypeVar("_Model", bound="LearningParts")


class LearningParts(ModelParts):
    """Learning, unlearning, merging and pruning (a part of ``DiscreteNB``)."""

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

    def learn_one(self: _Model, x: Document, y: Label, w: float = 1.0, *, t: float | None = None) -> _Model:
        """Add one document of class y with weight w to the counts.

        ``t`` is the document's timestamp in seconds, used with ``half_life_seconds``
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
            Its timestamp in seconds (models with ``half_life_seconds``).

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
        label = check_label(y)
        weight = check_weight(w)
        when = self._clock.check_time(t, default_now=True)
        if self._ledger is not None:
            self._ledger.learn(cast("DiscreteNB", self), x, label, weight, when)
        else:
            self._learn_counts(x, label, weight, when)
        self._maybe_prune()
        return self

    def learned_as(self, x: Document) -> Label | None:
        """The label the ledger holds message x under; None without a ledger, or for a message it does not hold."""
        if self._ledger is None:
            return None
        entry = self._ledger.get(self._ledger.fingerprint(cast("DiscreteNB", self), x))
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

    def unlearn_one(self: _Model, x: Document, y: Label, w: float = 1.0, *, learned_at: int | None = None,
                    t: float | None = None) -> _Model:
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

        Parameters
        ----------
        x, y, w
            The document, its class and the weight it was learned with (as ``learn_one``).
        learned_at
            The document's stamp: ``n_learned`` right after it was learned.
        t
            The timestamp it was learned with (models with ``half_life_seconds``).

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
        when = self._clock.check_time(t, default_now=False)
        if self._ledger is not None:
            self._ledger.unlearn(cast("DiscreteNB", self), x, label, weight, stamp, when)
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
        ``sample_evidence`` each row the schedule scores, against the counts of the rows before
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
        if self._ledger is not None or (self._call_alpha is None and self._clock.forgets):
            # A ledger decides row by row; a smoothing chosen online scores a row against the
            # counts of the rows before it (the evidence of a batch is that of its rows in turn):
            # the core does so in a batch (Core.learn_many) but for a model that forgets, whose
            # rows in turn see the counts aged row by row.
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
            times = [self._clock.check_time(v, default_now=False) for v in t]
        if not n == len(labels) == len(weights) == len(stamps) == len(times):
            raise InvalidInputError(f"X, y, w, learned_at and t differ in length: {n}, {len(labels)}, "
                                    f"{len(weights)}, {len(stamps)}, {len(times)}")
        if self._ledger is not None:
            self._ledger.unlearn_many(cast("DiscreteNB", self), documents, labels, weights, stamps, times)
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
    def merge(self: _Model, other: "DiscreteNB") -> _Model:
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

        Parameters
        ----------
        other
            A model of the same type and parameters (``dense_max_classes`` may differ).

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
        other_t = other.last_t
        entries = list(other._ledger.entries.items()) if other._ledger is not None else []  # other may be self
        n0 = self.n_learned
        timed = self.forgetting.half_life_seconds is not None
        own_factor, last_t = self._clock.after(other.n_learned, other_t if timed else None)
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

        Returns
        -------
        int
            The number of features dropped.
        """
        self._pass_at = self.n_learned
        pruning = self.pruning
        return self._core.prune(pruning.expire_after, pruning.min_count, pruning.max_features)

    def _maybe_prune(self) -> None:
        """Run a pruning pass when the cap is exceeded or the expiry pass is due."""
        cap, expire_after = self.pruning.max_features, self.pruning.expire_after
        if cap is not None and self._core.n_features > cap:
            self.prune()
        elif expire_after is not None and self.n_learned - self._pass_at >= max(1, expire_after // 10):
            self.prune()

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
