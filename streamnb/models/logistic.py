"""Online logistic regression: the discriminative member of the log-linear family.

Naive Bayes and logistic regression score a document with the same form, a bias per class
plus a weight per (feature, class) times the feature's value (``log_linear`` of the NB
models shows theirs). Naive Bayes reads its weights off counts, so it learns well from few
documents and exactly (learn, unlearn, merge); logistic regression fits them to the labels
by following the gradient of the log-likelihood, so it keeps improving with many documents
where naive Bayes' independence assumption costs it (Ng & Jordan 2002; benchmarks/RESULTS.md
compares the two on spam streams). The spam filter uses both (:class:`streamnb.models.Fusion`).

The formulas (softmax over K classes with the first class learned as the reference, the
AdaGrad step, lazy weight decay, train on error, the exact undo of a step) are in the core,
src/logistic.rs, with their derivation; this module checks parameters, keeps the steps of
a model with a ledger (:mod:`streamnb.steps`), and converts.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import scipy.sparse as sp

    from ..store import Arrays

    Floats = npt.NDArray[np.float64]
else:
    from .._lazy import numpy as np

from .. import _core, persist
from ..errors import IncompatibleModelsError, InvalidInputError, InvalidParameterError, ModelFormatError, describe
from ..features.email import EmailTokenizer
from ..features.ngrams import ByteNgrams
from ..features.text import Tokenizer as WordTokenizer
from ..features.weighting import EmailWeights
from ..ledger import message_fingerprint
from ..persist import register_model
from ..steps import SUFFIXES as STEP_SUFFIXES
from ..steps import StepRecords
from ..steps import restore as restore_records
from ..store import _raw_array
from ..validate import (
    Label,
    check_bool,
    check_choice,
    check_class_weight,
    check_count,
    check_finite_positive,
    check_label,
    check_ledger_passes,
    check_n_buckets,
    check_nonnegative,
    check_passes,
    check_positive,
    check_tokenizer,
    check_weight,
)
from .base import Document, LogLinear, TextTokenizer
from .learning import _batch_documents, _tokenizer_signature
from .values import Contributions

SCHEDULES = ("adagrad", "constant")
#: AdaGrad's rate on sublinear, L2-normalised documents (chosen on 20 Newsgroups: CHANGELOG.md,
#: "Defaults and the measurements that chose them").
DEFAULT_LEARNING_RATE = 1.0
#: Values are multiplied by idf^p, this p (chosen on 20 Newsgroups: CHANGELOG.md, "Defaults
#: and the measurements that chose them").
DEFAULT_IDF_POWER = 2.0
#: A ledger keeps the documents of the newest 1,000 steps, so that unlearning one of those
#: messages replays the steps after it (exact; an older one has its own step undone). The
#: spam filter's lessons unlearned 100 lessons later need a window of 100 at least; 1,000
#: leaves room for the provisional lessons of mail seen without labels (its memory and time:
#: benchmarks/bench_corrections.py, and CHANGELOG.md).
DEFAULT_WINDOW = 1000
#: A ledger's arrays in a model file (streamnb.steps)
LEDGER_PREFIX = "ledger_"
_ARRAYS = ("lr_feature", "lr_weight", "lr_square", "lr_bias", "lr_bias_square", "lr_doc_freq", "feature_key",
           "feature_key_end", *(LEDGER_PREFIX + suffix for suffix in STEP_SUFFIXES))


@register_model
class LogisticRegression:
    """Online logistic regression (binary, or softmax over many classes) on a growable
    sparse feature space, in the compiled core.

    Features join on the fly; a feature never learned weighs 0. Values may be any finite
    number (a mapping's values are used as they are). Cost: O(|x| K) per call, whatever
    the vocabulary size.

    With a ``ledger``, the model keeps what each message's step used (its gradient and
    decay), and for the newest ``window`` steps the document as it read it
    (:mod:`streamnb.steps`). ``unlearn_one`` of a message among those replays: the steps
    after it undone, its own, and the later ones taken again, so every score is that of the
    model that never learned it, to rounding (1e-9), whatever came after. An older message
    has its own step undone exactly: right after the learn that is exact too, but with
    other lessons in between, the steps after it were taken on weights that held it and
    keep what they did because of it. A message whose step was not kept (no ledger, or past
    its size) is unlearned by the reverse step: the step learning it would take now,
    backwards, which right after a learn restores the scores to within O(rate^2) only (the
    lesson's loss is already small then, so its step is too). ``merge`` is parameter
    mixing: the weights averaged, each model weighing by the documents it learned
    (approximate: a model trained on both streams in turn would differ;
    benchmarks/bench_distributed.py measures the gap); the kept steps of both stay, and the
    window empties (a replay cannot cross the mixing).

    Parameters
    ----------
    learning_rate
        The step size (> 0). With ``schedule="adagrad"`` (the default) each weight's step is
        learning_rate / sqrt(0.01 + the sum of its squared gradients so far) (Duchi et al.
        2011): rare features keep learning fast, frequent ones settle.
        ``schedule="constant"``: every step is learning_rate times the gradient.
    l2
        L2 regularisation as weight decay: every weight shrinks by (1 - learning_rate * l2)
        before each step (applied lazily: the cost stays O(|x| K)). Default 0.
    margin
        Train on error: a document whose true class already beats every other class by at
        least this margin in score is not learned (TREC filters' "thick threshold"). None
        (the default) learns every document.
    sublinear_tf, idf_power, normalize
        How a document's values are read: each x becomes sign(x) ln(1 + |x|) (a word said
        ten times is not ten times the evidence), is multiplied by idf^idf_power with
        idf = ln((1 + N) / (1 + D_f)) + 1 (N documents learned, D_f of them holding the
        feature, both counted by sample weight: a word in every document says little), and
        the document is divided by its L2 norm (long and short documents step alike). With
        ``idf_power=1`` this is scikit-learn's TfidfTransformer(norm="l2") but for the
        sublinear tf (1 + ln x there) and the IDF (fitted on a whole corpus there, counted
        online here); the default 2 weighs rare features more still (chosen on held-out 20
        Newsgroups documents). N and D_f are counted as documents are learned, each right
        before its first step (so ``learn_many`` learns as ``learn_one`` in order, to
        rounding); a feature no learned document held is left out of a prediction. 0 turns the IDF off (and keeps no
        counts). All on by default (word counts); binary features of one length (byte
        n-grams) may do without.
    class_weight
        None (every class weighs 1), ``"balanced"`` (N / (K N_c) over the documents learned
        so far, this one included), or a mapping label -> weight (labels it does not name: 1).
        Multiplies each document's gradient, with its sample weight.
    passes
        How many times ``learn_many`` goes over a batch (in order). ``learn_one`` is always
        one online step. 1 with a ledger.
    ledger
        Remember the steps of the last ``ledger`` messages learned, by fingerprint (as the
        naive Bayes models' ledger, :mod:`streamnb.ledger`): learning a message again under
        the same label is a no-op, under another label moves it (its step undone, then the
        new one taken), and unlearning it undoes its step exactly. None (the default): no
        ledger.
    window
        With a ledger: how many of the newest steps keep their documents, so that unlearning
        one of their messages replays the steps after it (default 1,000; 0: none, each
        unlearn undoes the message's own step). At most ``ledger``.
    tokenizer
        A callable text -> mapping feature -> value, so documents may be raw text: a
        :class:`~streamnb.Tokenizer`, :class:`~streamnb.EmailTokenizer` or
        :class:`~streamnb.ByteNgrams` runs inside the core.
    n_buckets
        Hash features into this many ids instead of keeping a vocabulary (memory bounded
        by n_buckets x (K-1) weights; names are lost).
    """

    def __init__(self, learning_rate: float = DEFAULT_LEARNING_RATE, *, schedule: str = "adagrad", l2: float = 0.0,
                 margin: float | None = None, sublinear_tf: bool = True, idf_power: float = DEFAULT_IDF_POWER,
                 normalize: bool = True,
                 class_weight: str | Mapping[Label, float] | None = None, passes: int = 1,
                 tokenizer: TextTokenizer | None = None, n_buckets: int | None = None,
                 ledger: int | None = None, window: int = DEFAULT_WINDOW) -> None:
        self.learning_rate = check_finite_positive("learning_rate", learning_rate)
        self.schedule = check_choice("schedule", schedule, SCHEDULES)
        self.l2 = check_nonnegative("l2", l2)
        self.margin = None if margin is None else check_nonnegative("margin", margin)
        self.sublinear_tf = check_bool("sublinear_tf", sublinear_tf, InvalidParameterError)
        self.idf_power = check_nonnegative("idf_power", idf_power)
        self.normalize = check_bool("normalize", normalize, InvalidParameterError)
        self.class_weight = check_class_weight(class_weight)
        self.passes = check_passes(passes)
        self.ledger = check_positive("ledger", ledger, integer=True)
        self.window = check_count("window", window)
        check_ledger_passes(self.ledger, self.passes)
        check_tokenizer(tokenizer)
        self.n_buckets = check_n_buckets(n_buckets)
        weights = dict(self.class_weight) if isinstance(self.class_weight, Mapping) else self.class_weight
        self._core: _core.LogisticCore[Label] = _core.LogisticCore(
            rate=self.learning_rate, schedule=self.schedule, l2=self.l2, margin=self.margin,
            sublinear=self.sublinear_tf, idf_power=self.idf_power, normalize=self.normalize,
            n_buckets=self.n_buckets, class_weight=weights,
            tokenizer=None, in_core=None, binary=False)
        self.tokenizer = tokenizer
        self._steps: StepRecords | None = None
        if self.ledger is not None:
            self._core.keep_records(self.ledger, self.window)
            self._steps = StepRecords(self._core)

    # -- parameters -----------------------------------------------------------------------
    @property
    def tokenizer(self) -> TextTokenizer | None:
        return self._tokenizer

    @tokenizer.setter
    def tokenizer(self, tokenizer: TextTokenizer | None) -> None:
        self._tokenizer = tokenizer
        in_core, binary = _in_core(tokenizer)
        self._core.set_featurizer(tokenizer, in_core, binary)

    def get_params(self) -> dict[str, Any]:
        """Constructor arguments (the tokenizer object itself, not a description of it)."""
        return {"learning_rate": self.learning_rate, "schedule": self.schedule, "l2": self.l2,
                "margin": self.margin, "sublinear_tf": self.sublinear_tf, "idf_power": self.idf_power,
                "normalize": self.normalize, "class_weight": self.class_weight, "passes": self.passes,
                "tokenizer": self.tokenizer, "n_buckets": self.n_buckets, "ledger": self.ledger,
                "window": self.window}

    def __repr__(self) -> str:
        return (f"LogisticRegression(learning_rate={self.learning_rate!r}, schedule={self.schedule!r}, "
                f"classes={len(self.classes)}, features={self.n_features})")

    def __reduce__(self) -> tuple[Callable[[bytes, TextTokenizer | None], LogisticRegression],
                                  tuple[bytes, TextTokenizer | None]]:
        """Pickling goes through the model file's bytes, the tokenizer object beside them."""
        return persist.unpickle, (persist.dumps(self, tokenizer_apart=True), self.tokenizer)

    # -- learning -------------------------------------------------------------------------
    def learn_one(self, x: Document, y: Label, w: float = 1.0) -> "LogisticRegression":
        """One online step on document x of class y with sample weight w.

        With a ledger, a message it holds under y is skipped, and one it holds under
        another label is moved: its step undone exactly, then the step as y taken.
        """
        label, weight = check_label(y), check_weight(w)
        if self._steps is None:
            self._core.learn_one(x, label, weight)
            return self
        fingerprint = message_fingerprint(self, x)  # reads x: a document it refuses changes nothing
        held = self._steps.get(fingerprint)
        if held is not None:
            if held.label == label:
                return self
            self._core.unlearn_kept(x, fingerprint)  # a move: out by replay, then in as the newest
        self._core.learn_one(x, label, weight, fingerprint)
        return self

    def learn_many(self, X: Sequence[Document] | sp.spmatrix, y: Sequence[Label], w: Sequence[float] | None = None,
                   *, feature_names: Sequence[Hashable] | None = None) -> "LogisticRegression":
        """Learn a batch in order, ``passes`` times over: a list of documents, or a
        scipy.sparse matrix + feature_names. Every document is read and checked before any
        is learned; the steps run in the core with the GIL released (with a ledger, through
        ``learn_one`` one at a time, so repeats and moves behave as there)."""
        documents = _batch_documents(X, feature_names)
        labels = [check_label(label) for label in y]
        weights = [1.0] * len(labels) if w is None else [check_weight(v) for v in w]
        if self._steps is None:
            self._core.learn_many(documents, labels, weights, self.passes)
            return self
        if not len(documents) == len(labels) == len(weights):
            raise InvalidInputError(f"X has {len(documents)} documents, y {len(labels)} labels and w {len(weights)} "
                                    "weights")
        for document in documents:  # every row is read and checked before any is learned
            self._core.present_features(document)
        for document, label, weight in zip(documents, labels, weights):
            self.learn_one(document, label, weight)
        return self

    def unlearn_one(self, x: Document, y: Label, w: float = 1.0) -> "LogisticRegression":
        """Take x, learned as y with sample weight w, back out (see the class docstring).

        A message the ledger holds is unlearned with the weight it was learned with: by
        replay when it is among the newest ``window`` steps, else its own step undone; any
        other takes the reverse step.

        Raises
        ------
        InvalidInputError
            For a message the ledger holds under another label, or more weight than its
            class learned; nothing changes.
        UnknownClassError
            For a class never learned.
        """
        label, weight = check_label(y), check_weight(w)
        if self._steps is not None:
            fingerprint = message_fingerprint(self, x)
            held = self._steps.get(fingerprint)
            if held is not None:
                if held.label != label:
                    raise InvalidInputError(f"this message was learned as {held.label!r}, not as {label!r}")
                self._core.unlearn_kept(x, fingerprint)
                return self
        self._core.unlearn_one(x, label, weight)
        return self

    def merge(self, other: "LogisticRegression") -> "LogisticRegression":
        """Parameter mixing: the weights averaged, each model weighing by the documents it learned.

        With ledgers, this one takes other's records (refused, changing nothing, when both
        hold a message), and its window empties: a step kept before the merge is undone as it
        was taken, which the mixing has scaled since (approximate, as the reverse step), and
        none replays across the mixing.
        """
        self._check_mergeable(other)
        _core.LogisticCore.mix(self._core, other._core)
        return self

    def _check_mergeable(self, other: "LogisticRegression") -> None:
        """Raise IncompatibleModelsError unless other is a model of the same settings (passes aside)."""
        if type(other) is not type(self):
            raise IncompatibleModelsError(f"cannot merge a {type(other).__name__} into a {type(self).__name__}")
        mine, theirs = self.get_params(), other.get_params()
        for name in mine:
            a, b = mine[name], theirs[name]
            if name == "tokenizer":
                a, b = _tokenizer_signature(a), _tokenizer_signature(b)
            if name != "passes" and a != b:
                raise IncompatibleModelsError(f"cannot merge models whose {name} differ: {a!r} vs {b!r}")
        # with ledgers of their own (a fusion's part keeps its fusion's records: its naive Bayes decides)
        ledgers = self._steps is not None and other._steps is not None and other is not self
        shared = self._core.records_overlap(other._core) if ledgers else None
        if shared is not None:
            raise IncompatibleModelsError(f"both models learned the same message (fingerprint {shared.hex()}): "
                                          "merging would count it twice")

    # -- prediction -----------------------------------------------------------------------
    @property
    def classes(self) -> list[Label]:
        """Classes learned, in the order they first appeared (the first is the reference)."""
        return self._core.labels

    def predict_one(self, x: Document) -> Label | None:
        """The most probable class (first learned wins ties); None before anything is learned."""
        return self._core.predict(x, 0)

    def predict_proba_one(self, x: Document) -> dict[Label, float]:
        """P(c | x) for every class learned; an empty dict before anything is learned."""
        return self._core.predict(x, 1)

    def predict_log_proba_one(self, x: Document) -> dict[Label, float]:
        """log P(c | x) for every class learned."""
        return self._core.predict(x, 2)

    def predict_many(self, X: Iterable[Document]) -> list[Label | None]:
        return self._core.predict_many(X, 0)

    def predict_proba_many(self, X: Iterable[Document]) -> list[dict[Label, float]]:
        return self._core.predict_many(X, 1)

    def predict_log_proba_many(self, X: Iterable[Document]) -> list[dict[Label, float]]:
        return self._core.predict_many(X, 2)

    # -- the weights ----------------------------------------------------------------------
    def contributions_one(self, x: Document) -> Contributions:
        """The scores of x split by feature (what ``evidence`` and a verdict's clues read):
        each feature's x_i w_ic over every class, and the biases as the rest; rest +
        terms.sum(axis=0) is the score ``predict_log_proba_one`` normalises (the reference
        class's 0).

        Parameters
        ----------
        x
            A document (a mapping, or raw text with a tokenizer).

        Returns
        -------
        Contributions
            Every class learned, x's features with a weight, their (n, K) terms and the rest.
        """
        features, terms, rest, classes = self._core.contributions(x)
        return Contributions(classes, features, terms, list(rest))

    def strongest_one(self, x: Document, k: int, positive: Label, negative: Label) -> list[tuple[Hashable, float]]:
        """The k features of x that push its log-odds of ``positive`` against ``negative``
        most, strongest first: (feature, weight), from the terms of :meth:`contributions_one`
        (chosen in the core: what ``evidence`` reads)."""
        return self._core.strongest(x, positive, negative, k)

    def log_linear(self) -> LogLinear:
        """Bias and weights per class, centred over the classes (the softmax is unchanged by a
        common shift): score_c(x) = bias[c] + x . weights[:, c] up to a term shared by all classes."""
        ids = self._core.feature_ids()
        data, bias = self._core.weights(ids)
        k = len(self.classes)
        cols = max(k - 1, 0)
        table = np.zeros((len(ids), k))
        if cols:
            table[:, 1:] = np.frombuffer(data, dtype=np.float64).reshape(len(ids), cols)
        biases = np.concatenate([[0.0], bias]) if k else np.zeros(0)
        if k:
            table -= table.mean(axis=1, keepdims=True)
            biases = biases - biases.mean()
        return LogLinear(self.classes, self._core.tokens_of(ids), biases, table)

    def top_features(self, k: int = 10) -> dict[Label, list[tuple[Hashable, float]]]:
        """The k features with the largest (centred) weight per class."""
        return self.log_linear().top(k)

    # -- introspection ----------------------------------------------------------------------
    @property
    def class_counts(self) -> dict[Label, float]:
        """N_c: documents (sum of sample weights) learned per class."""
        return {label: n for label, n in zip(self._core.labels, self._core.class_docs()) if n > 0}

    @property
    def n_learned(self) -> int:
        """Learning steps taken (every pass of ``learn_many`` counts)."""
        return self._core.n_steps

    @property
    def n_features(self) -> int:
        """Features known: |V| of the vocabulary, or buckets with a weight when hashing."""
        return self._core.n_features()

    @property
    def nbytes(self) -> int:
        """Bytes the model holds in the compiled core (weights, AdaGrad sums, vocabulary)."""
        return self._core.nbytes()

    # -- persistence ------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model to ``path`` atomically; read it with ``streamnb.load``."""
        persist.save(self, path)

    def _state(self) -> tuple[dict[str, Any], Arrays]:
        ids, weights, squares, (bias, bias_squares), scale, steps, keys, doc_freqs = self._core.state()
        cols = max(len(self.classes) - 1, 0)
        n = len(ids) // 4
        arrays: dict[str, Any] = {
            "lr_feature": np.frombuffer(ids, dtype="<u4"),
            "lr_weight": np.frombuffer(weights, dtype=np.float64).reshape(n, cols),
            "lr_square": np.frombuffer(squares, dtype=np.float64).reshape(-1, cols) if cols else np.zeros((0, 0)),
            "lr_bias": np.array(bias, dtype=np.float64),
            "lr_bias_square": np.array(bias_squares, dtype=np.float64),
        }
        if keys is not None:
            arrays["feature_key"] = np.frombuffer(keys[0], dtype=np.uint8)
            arrays["feature_key_end"] = np.frombuffer(keys[1], dtype="<u4")
        state = {"params": self.get_params(), "labels": list(self.classes),
                 "class_docs": self._core.class_docs(), "scale": scale, "steps": steps}
        if doc_freqs is not None:
            state["idf_docs"] = doc_freqs[0]
            arrays["lr_doc_freq"] = np.frombuffer(doc_freqs[1], dtype=np.float64)
        if self._steps is not None:
            arrays.update(self._steps.arrays(LEDGER_PREFIX, self.classes.index, cols, stacker=False))
        return state, arrays

    @classmethod
    def _from_state(cls, state: dict[str, Any], arrays: Arrays) -> "LogisticRegression":
        if not {"params", "labels", "class_docs", "scale", "steps"} <= set(state) <= {
                "params", "labels", "class_docs", "scale", "steps", "idf_docs"}:
            raise ModelFormatError(f"state keys {sorted(state)} are not a LogisticRegression's")
        unknown = sorted(set(arrays) - set(_ARRAYS))
        if unknown:
            raise ModelFormatError(f"arrays {unknown[:5]!r} are not arrays of a LogisticRegression")
        if not isinstance(state["params"], dict):
            raise ModelFormatError(f"params must be a dict, got {describe(state['params'])}")
        # files written before the IDF existed read their documents without one
        model = cls(**{"idf_power": 0.0, **state["params"]})
        doc_freqs = None
        if "idf_docs" in state or "lr_doc_freq" in arrays:
            docs = state.get("idf_docs")
            if isinstance(docs, bool) or not isinstance(docs, (int, float)) or "lr_doc_freq" not in arrays:
                raise ModelFormatError("a saved IDF needs idf_docs (a number) and the array lr_doc_freq")
            doc_freqs = (float(docs), _bytes(arrays, "lr_doc_freq", "<f8"))
        labels, class_docs, scale, steps = state["labels"], state["class_docs"], state["scale"], state["steps"]
        if not isinstance(labels, list) or not isinstance(class_docs, list):
            raise ModelFormatError("labels and class_docs must be lists")
        if not (isinstance(steps, int) and not isinstance(steps, bool) and steps >= 0):
            raise ModelFormatError(f"steps must be an int >= 0, got {describe(steps)}")
        if isinstance(scale, bool) or not isinstance(scale, (int, float)):
            raise ModelFormatError(f"scale must be a number, got {describe(scale)}")
        for name in ("lr_feature", "lr_weight", "lr_square", "lr_bias", "lr_bias_square"):
            if name not in arrays:
                raise ModelFormatError(f"array {name!r} is missing")
        keys = None
        if "feature_key" in arrays or "feature_key_end" in arrays:
            keys = (_bytes(arrays, "feature_key", "|u1"), _bytes(arrays, "feature_key_end", "<u4"))
        bias = (memoryview(_bytes(arrays, "lr_bias", "<f8")).cast("d").tolist(),
                memoryview(_bytes(arrays, "lr_bias_square", "<f8")).cast("d").tolist())
        model._core.load([check_label(label) for label in labels], [float(n) for n in class_docs],
                         _bytes(arrays, "lr_feature", "<u4"), _bytes(arrays, "lr_weight", "<f8"),
                         _bytes(arrays, "lr_square", "<f8"), bias, float(scale), steps, keys, doc_freqs)
        if model.ledger is not None:
            restore_records(model._core, arrays, LEDGER_PREFIX, model.classes, model.ledger, model.window,
                          stacker=False)
        elif any(name.startswith(LEDGER_PREFIX) for name in arrays):
            raise ModelFormatError("ledger arrays in a model without a ledger")
        return model


def _in_core(tokenizer: object) -> tuple[Any, bool]:
    """The tokenizer's core object when the core can run it itself, and its binary flag."""
    if isinstance(tokenizer, WordTokenizer) and tokenizer._default and tokenizer._stem is None:
        return tokenizer._core, tokenizer.binary
    if isinstance(tokenizer, EmailTokenizer) and tokenizer._in_core:
        return tokenizer._core, False
    if isinstance(tokenizer, EmailWeights) and tokenizer._reads_in_core:
        return tokenizer._core, False
    if isinstance(tokenizer, ByteNgrams):
        return tokenizer._core, False
    return None, False


def _bytes(arrays: Arrays, name: str, dtype: str) -> bytes:
    """A saved array's little-endian bytes (no numpy); ModelFormatError for another dtype."""
    kind, _, buffer, start, end = _raw_array(arrays, name)
    if kind != dtype:
        raise ModelFormatError(f"array {name!r} is {kind}, not {dtype}")
    return bytes(memoryview(buffer)[start:end])
