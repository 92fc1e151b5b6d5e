"""How a discrete model's counts change: the ``Learner`` a ``DiscreteNB`` holds.

The learner holds the compiled core and, in front of it, the forgetting clocks
(``streamnb.clock``), the ledger of learned messages (``streamnb.ledger``) and the pruning
passes (``Pruning``): every count changes inside the core, all or nothing. The model
(``base.py``) checks what the user gave and hands it here; what each operation means is
said in its docstring there.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import scipy.sparse as sp
else:
    from .._lazy import numpy as np
    from .._lazy import scipy_sparse as sp

from .. import _core
from ..clock import Clock
from ..errors import IncompatibleModelsError, InvalidInputError, InvalidTypeError, describe
from ..ledger import Ledger
from ..validate import Label, check_class_allowed
from .settings import Forgetting, Pruning
from .values import Document


class Learner:
    """The counts of a discrete model and what changes them: the core, the clocks, the ledger, pruning.

    Parameters
    ----------
    core
        The model's compiled core (vocabulary, count store, formulas).
    class_prior
        The model's class prior: a fixed one refuses classes it does not name.
    forgetting, pruning
        The model's settings.
    ledger
        How many learned messages to remember (None: no ledger).
    """

    def __init__(self, core: _core.Core[Label], class_prior: str | Mapping[Label, float], forgetting: Forgetting,
                 pruning: Pruning, ledger: int | None) -> None:
        self.core = core
        self.class_prior = class_prior
        self.pruning = pruning
        self.clock = Clock(forgetting.half_life, forgetting.half_life_seconds)
        self.ledger = Ledger(ledger) if ledger is not None else None
        self.pass_at = 0  # n_learned at the last pruning pass

    @property
    def n_learned(self) -> int:
        return self.core.n_learned

    # -- one document ----------------------------------------------------------------------
    def learn(self, x: Document, label: Label, weight: float, when: float | None) -> None:
        """Learn one checked document (through the ledger when there is one), then prune if due."""
        if self.ledger is not None:
            self.ledger.learn(self, x, label, weight, when)
        else:
            self.learn_counts(x, label, weight, when)
        self.maybe_prune()

    def learn_counts(self, x: Document, label: Label, weight: float, when: float | None) -> None:
        """One document into the counts (the clocks move on by one document)."""
        check_class_allowed(self.class_prior, label)
        factor, last_t = self.clock.after(1, when)
        self.core.learn_one(x, label, self.clock.aged(weight, when, last_t), factor)
        self.clock.last_t = last_t

    def check_learn(self, x: Document, label: Label, weight: float, when: float | None) -> None:
        """Raise what ``learn_counts`` would raise; change nothing."""
        check_class_allowed(self.class_prior, label)
        factor, last_t = self.clock.after(1, when)
        self.core.learn_one(x, label, self.clock.aged(weight, when, last_t), factor, check_only=True)

    def learned_as(self, x: Document) -> Label | None:
        """The label the ledger holds message x under; None without a ledger or for a message it does not hold."""
        if self.ledger is None:
            return None
        entry = self.ledger.get(self.ledger.fingerprint(self, x))
        return None if entry is None else entry.label

    def unlearn(self, x: Document, label: Label, weight: float, learned_at: int | None, when: float | None) -> None:
        """Take one checked document out (its ledger entry's weight and age when it has one)."""
        if self.ledger is not None:
            self.ledger.unlearn(self, x, label, weight, learned_at, when)
        else:
            self.unlearn_counts(x, label, weight, learned_at, when)

    def unlearn_counts(self, x: Document, label: Label, weight: float, learned_at: int | None,
                       when: float | None) -> None:
        """Take one document out of the counts with the weight it still has."""
        if self.core.class_id(label) is None:
            self.core.unlearn_one(x, label, weight)  # reads x, then refuses the unknown class
        factor = self.clock.age_factor(learned_at, when, self.n_learned)
        self.core.unlearn_one(x, label, weight * factor, learned_at)

    # -- batches ----------------------------------------------------------------------------
    def learn_many(self, documents: list[Document], labels: list[Label], weights: Any,
                   times: Any, row_by_row_evidence: bool) -> None:
        """Learn checked rows (weights and times as numpy arrays, times None without
        timestamps): one update per class, or row by row through ``learn`` when a ledger
        decides each row or a smoothing chosen online must see each row's counts as a
        forgetting model ages them (``row_by_row_evidence``)."""
        for label in dict.fromkeys(labels):
            check_class_allowed(self.class_prior, label)
        n = len(labels)
        factor, last_t = self.clock.after(n, None if times is None else float(times.max()))
        ages = (n - 1 - np.arange(n)).astype(float)
        # (last_t is set whenever times are: it is the latest of them)
        aged = np.asarray(weights * self.clock.forgetting(ages, 0.0 if times is None or last_t is None
                                                          else last_t - times), dtype=float).tolist()
        if self.ledger is not None or (row_by_row_evidence and self.clock.forgets):
            # A ledger decides row by row; a smoothing chosen online scores a row against the
            # counts of the rows before it (the evidence of a batch is that of its rows in turn):
            # the core does so in a batch (Core.learn_many) but for a model that forgets, whose
            # rows in turn see the counts aged row by row.
            if self.ledger is None:  # all or nothing: what the whole batch passes, each row in turn passes
                self.core.learn_many(documents, labels, aged, factor, check_only=True)
            for document in documents:  # every row is read and checked before any is learned
                self.core.present_features(document)
            for row, (document, label) in enumerate(zip(documents, labels)):
                self.learn(document, label, float(weights[row]),
                           self.clock.check_time(None if times is None else float(times[row]), default_now=True))
            return
        self.core.learn_many(documents, labels, aged, factor)
        self.clock.last_t = last_t
        self.maybe_prune()

    def unlearn_many(self, documents: list[Document], labels: list[Label], weights: list[float],
                     stamps: list[int | None], times: list[float | None]) -> None:
        """Take checked rows out, all or nothing (their ledger entries' weights and ages when held)."""
        if self.ledger is not None:
            self.ledger.unlearn_many(self, documents, labels, weights, stamps, times)
        else:
            self.unlearn_many_counts(documents, labels, weights, stamps, times)

    def unlearn_many_counts(self, documents: list[Document], labels: list[Label], weights: list[float],
                            stamps: list[int | None], times: list[float | None]) -> None:
        n_learned = self.n_learned
        aged = [weight * self.clock.age_factor(stamp, when, n_learned)
                for weight, stamp, when in zip(weights, stamps, times)]
        self.core.unlearn_many(documents, labels, aged, stamps)

    # -- a model driving this one as its part (MixedNB's text part) ---------------------------
    def part_check(self, x: Document, label: Label, weight: float) -> None:
        """Raise what ``part_apply`` would raise (weight > 0 learns, < 0 unlearns); change nothing."""
        if weight > 0:
            factor, _ = self.clock.after(1, None)
            self.core.learn_one(x, label, weight, factor, allow_empty=True, check_only=True)
        elif self.core.class_id(label) is not None:
            self.core.unlearn_one(x, label, -weight, allow_empty=True, check_only=True)

    def part_apply(self, x: Document, label: Label, weight: float) -> None:
        """Learn (weight > 0) or unlearn (weight < 0) one part of a record: no ledger, no pruning."""
        if weight > 0:
            factor, last_t = self.clock.after(1, None)
            self.core.learn_one(x, label, weight, factor, allow_empty=True)
            self.clock.last_t = last_t
        else:
            self.core.unlearn_one(x, label, -weight, allow_empty=True)

    # -- merging and pruning ------------------------------------------------------------------
    def merge(self, other: Learner, timed: bool) -> None:
        """Add other's counts (checked mergeable): self's first age by other's documents, both
        move to the later clock (``timed``: the model forgets in time); other's ledger entries
        follow self's; a pruning pass may follow."""
        other_t = other.clock.last_t
        entries = list(other.ledger.entries.items()) if other.ledger is not None else []  # other may be self
        n0 = self.n_learned
        own_factor, last_t = self.clock.after(other.n_learned, other_t if timed else None)
        their_factor = float(self.clock.forgetting(0, 0.0 if other_t is None or last_t is None else last_t - other_t))
        _core.Core.merge(self.core, other.core, own_factor, their_factor)
        self.clock.last_t = last_t
        if self.ledger is not None:
            self.ledger.merge(entries, n0)
        self.maybe_prune()

    def prune(self) -> int:
        """A pruning pass now (``Pruning``'s policies, in the core); the number of features dropped."""
        self.pass_at = self.n_learned
        pruning = self.pruning
        return self.core.prune(pruning.expire_after, pruning.min_count, pruning.max_features)

    def maybe_prune(self) -> None:
        """Run a pruning pass when the cap is exceeded or the expiry pass is due."""
        cap, expire_after = self.pruning.max_features, self.pruning.expire_after
        if cap is not None and self.core.n_features > cap:
            self.prune()
        elif expire_after is not None and self.n_learned - self.pass_at >= max(1, expire_after // 10):
            self.prune()


def check_same_model(model: Any, other: Any, comparable: Callable[[str, Any], Any] = lambda name, value: value) -> None:
    """IncompatibleModelsError, naming the first difference, unless ``other`` is a model of
    ``model``'s type with the same parameters (``get_params``): tokenizers compared by
    ``tokenizer_signature``, any other parameter as ``comparable(name, value)`` gives it (the
    value itself by default; a part of it, or None for a parameter that does not matter)."""
    if type(other) is not type(model):
        raise IncompatibleModelsError(f"cannot merge a {type(other).__name__} into a {type(model).__name__}")
    mine, theirs = model.get_params(), other.get_params()
    for name, a in mine.items():
        b = theirs.get(name)
        same = (tokenizer_signature(a) == tokenizer_signature(b) if name == "tokenizer"
                else comparable(name, a) == comparable(name, b))
        if not same:
            raise IncompatibleModelsError(f"cannot merge models whose {name} differ: {a!r} vs {b!r}")


def tokenizer_signature(tokenizer: object) -> object:
    """What makes two tokenizers the same: type and get_params() when it has them, else identity."""
    get_params = getattr(tokenizer, "get_params", None)
    if tokenizer is None or not callable(get_params):
        return tokenizer
    return (f"{type(tokenizer).__module__}.{type(tokenizer).__qualname__}", get_params())


def batch_documents(X: Any, feature_names: Sequence[Hashable] | None) -> list[Document]:
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
