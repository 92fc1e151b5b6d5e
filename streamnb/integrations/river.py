"""River adapters: streamnb models as river classifiers, streamnb text callables as river transformers.

Every adapter is a thin river estimator around one streamnb object, so that streamnb plugs
into river pipelines (``BagOfWords() | MultinomialNB()``), ``river.evaluate`` and river's
metrics, and so that river can clone and pickle it. River rebuilds estimators from their
``__init__`` signature (``_get_params``/``clone``), so each adapter class takes exactly the
parameters of the streamnb class it wraps, stores them under their own names, and builds the
wrapped object from them. The signature is read from the wrapped class, which is why a new
model needs one line here::

    class ComplementNB(NaiveBayesClassifier):
        model_class = models.ComplementNB

Mini-batches (``learn_many``, ``predict_many``, ``predict_proba_many``) take pandas
DataFrames as river's mini-batch estimators do. A row becomes the dict a ``*_one`` call
would get: its non-missing cells, where missing means NaN in a dense column and not stored
in a sparse column (whose fill value is 0 or NaN). So a batch gives exactly what the
``*_one`` methods give on those dicts, row by row, in the order of the frame.

river (and pandas, which river requires) is imported here only: ``import streamnb`` works
without them, and importing this module without them says which extra to install.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Protocol

import numpy as np
import scipy.sparse as sp

try:
    import pandas as pd
    from river import base as river_base
except ImportError as error:  # pragma: no cover - exercised by a test that hides river
    raise ImportError(
        f"streamnb.integrations.river needs the optional dependency {error.name!r} (river and pandas); "
        "install it with: pip install streamnb[river]") from error

from .. import models
from ..errors import InvalidInputError, InvalidTypeError, describe
from ..features import email as mail
from ..features import text as text_features
from ..models.base import DiscreteNB
from ..models.record import RecordNB
from ..validate import Label

__all__ = ["NaiveBayesClassifier", "MultinomialNB", "BernoulliNB", "ComplementNB", "GaussianNB", "CategoricalNB",
           "LogisticRegression", "TextTransformer", "Tokenizer", "EmailTokenizer", "OnlineTfidf"]


# -- signatures ------------------------------------------------------------------------

def _constructor_parameters(cls: type) -> list[inspect.Parameter]:
    """The parameters of ``cls(...)``: every streamnb class names all of its own,
    keyword-only after the first (no ``**kwargs`` handed up to a base)."""
    return list(inspect.signature(cls).parameters.values())


class _Adapter(Protocol):
    def _setup(self, params: dict[str, Any]) -> None: ...


def _init_with_signature(owner: str, parameters: list[inspect.Parameter]) -> Callable[..., None]:
    """An ``__init__`` taking exactly ``parameters`` (visible to ``inspect.signature``).

    River reads an estimator's parameters from ``inspect.signature(type(self).__init__)``;
    a plain ``**kwargs`` would hide them, so every adapter class gets its own ``__init__``
    whose ``__signature__`` names them. It binds the arguments (applying the defaults) and
    hands them to ``_setup``.
    """
    signature = inspect.Signature(parameters)

    def __init__(self: _Adapter, *args: Any, **kwargs: Any) -> None:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        self._setup(dict(bound.arguments))

    self_parameter = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    __init__.__signature__ = inspect.Signature([self_parameter, *parameters])  # type: ignore[attr-defined]
    __init__.__qualname__ = f"{owner}.__init__"
    return __init__


# -- pandas mini-batches ----------------------------------------------------------------

def _frame_rows(X: Any) -> list[Any]:
    """The rows of a mini-batch as the documents a ``*_one`` call would get, in order.

    A DataFrame row becomes a dict of its non-missing cells (NaN in a dense column, or not
    stored in a sparse column with fill value 0 or NaN, is missing: that feature is absent
    from the row, as it is from the dict river's BagOfWords gives for that text). A Series
    holds one document per row (raw text, for a model built with a tokenizer).
    """
    if isinstance(X, pd.Series):
        texts: list[Any] = X.tolist()
        return texts
    if not isinstance(X, pd.DataFrame):
        raise InvalidTypeError(f"a mini-batch must be a pandas DataFrame (or Series of texts), got {describe(X)}")
    n_rows = len(X)
    if len(X.columns) and all(isinstance(dtype, pd.SparseDtype) and dtype.fill_value == 0 for dtype in X.dtypes):
        # The shape BagOfWords/TFIDF.transform_many give: read all columns at once.
        matrix = X.sparse.to_coo().tocsr()
        matrix.sort_indices()
        names = list(X.columns)
        data = matrix.data.tolist()
        indices = matrix.indices.tolist()
        return [{names[j]: v for j, v in zip(indices[start:end], data[start:end]) if v == v}
                for start, end in zip(matrix.indptr[:-1].tolist(), matrix.indptr[1:].tolist())]
    rows: list[dict[Hashable, Any]] = [{} for _ in range(n_rows)]
    for position, name in enumerate(X.columns):
        column = X.iloc[:, position]
        dtype = column.dtype
        if isinstance(dtype, pd.SparseDtype) and (pd.isna(dtype.fill_value) or dtype.fill_value == 0):
            array = column.array
            where = array.sp_index.to_int_index().indices
            values = np.asarray(array.sp_values)
        else:
            where = np.arange(n_rows)
            values = column.to_numpy()
        keep = ~pd.isna(values)
        for i, value in zip(where[keep].tolist(), values[keep].tolist()):
            rows[i][name] = value
    return rows


def _aligned(values: Any, X: Any, what: str) -> list[Any]:
    """``values`` (labels or weights) as a list in the row order of X.

    A Series with another index than X is aligned on X's index (pandas' rule), so a shuffled
    y still matches its rows; one whose index holds other labels is refused.
    """
    if isinstance(values, pd.Series) and not values.index.equals(X.index):
        if not (values.index.is_unique and len(values) == len(X)
                and values.index.sort_values().equals(X.index.sort_values())):
            raise InvalidInputError(f"{what} and X have different indexes: cannot match {what} to the rows of X")
        values = values.loc[X.index]
    listed = values.tolist() if isinstance(values, (pd.Series, np.ndarray)) else list(values)
    if len(listed) != len(X):
        raise InvalidInputError(f"X has {len(X)} rows but {what} has {len(listed)} values")
    return listed


# -- classifiers ------------------------------------------------------------------------

class NaiveBayesClassifier(river_base.MiniBatchClassifier):
    """A river classifier around one streamnb model (the base of the classifier adapters).

    A subclass sets ``model_class`` (a streamnb model) and takes that model's parameters;
    the wrapped model is ``self.model``. ``positive_input`` says the model only accepts
    values >= 0 (river then keeps signed data out of its checks). ``parameter_defaults``
    changes defaults for river use: ``empty_documents="learn"``, because a river stream
    (and river's checks) can hold documents with no nonzero value and must not stop there.
    """

    model_class: ClassVar[type[DiscreteNB | RecordNB | models.LogisticRegression]]
    model: DiscreteNB | RecordNB | models.LogisticRegression
    positive_input: ClassVar[bool] = False
    parameter_defaults: ClassVar[Mapping[str, Any]] = {}
    _parameters: ClassVar[list[inspect.Parameter]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "model_class" in cls.__dict__:
            # A default the model does not have (e.g. empty_documents for GaussianNB) is unused.
            defaults = cls.parameter_defaults
            cls._parameters = [p.replace(default=defaults[p.name]) if p.name in defaults else p
                               for p in _constructor_parameters(cls.model_class)]
            cls.__init__ = _init_with_signature(cls.__qualname__, cls._parameters)  # type: ignore[method-assign]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(f"{type(self).__name__} is abstract: use an adapter such as "
                        "streamnb.integrations.river.MultinomialNB")

    def _setup(self, params: dict[str, Any]) -> None:
        for name, value in params.items():
            setattr(self, name, value)
        self.model = self.model_class(**params)

    # -- river's protocol ---------------------------------------------------------------
    @property
    def _multiclass(self) -> bool:
        return True

    def _more_tags(self) -> set[str]:
        return {river_base.tags.POSITIVE_INPUT} if self.positive_input else set()

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        """The defaults, then non-default smoothing, prior and unseen-word scoring (and
        Dirichlet smoothing for a model with ``mu``).

        ``Storage(dense_max_classes=1)`` also runs the checks on the sparse count table.
        Parameters the model does not have are left out, so every model can use this list.
        """
        names = {p.name for p in cls._parameters}
        yield {}
        others: dict[str, Any] = {"alpha": 0.5, "class_prior": "laplace"}
        scored: dict[str, Any] = {}
        if issubclass(cls.model_class, DiscreteNB):
            scored = {"smoothing": models.Smoothing(unseen="score")}
            others.update(scored, storage=models.Storage(dense_max_classes=1))
        yield {name: value for name, value in others.items() if name in names}
        if "mu" in names:  # MultinomialNB's Dirichlet smoothing
            yield {"mu": 50.0, **scored}

    # -- one document -------------------------------------------------------------------
    def learn_one(self, x: Any, y: Label, w: float = 1.0) -> None:
        """Learn one document x (a mapping feature -> value, or text) of class y with weight w.

        Parameters
        ----------
        x : mapping or str
            The document.
        y : label
            Its class.
        w : float
            Its sample weight (> 0).
        """
        self.model.learn_one(x, y, w)

    def unlearn_one(self, x: Any, y: Label, w: float = 1.0) -> None:
        """Remove a document learned earlier: the exact inverse of learn_one.

        Parameters
        ----------
        x, y, w
            As for :meth:`learn_one`.
        """
        self.model.unlearn_one(x, y, w)

    def predict_proba_one(self, x: Any, **kwargs: Any) -> dict[Label, float]:
        """P(c | x) for every class seen; an empty dict before anything is learned."""
        return self.model.predict_proba_one(x)

    def predict_log_proba_one(self, x: Any) -> dict[Label, float]:
        """log P(c | x) for every class seen (exact in log space: no underflow to 0)."""
        return self.model.predict_log_proba_one(x)

    def predict_one(self, x: Any, **kwargs: Any) -> Label | None:
        """The most probable class (the first learned wins ties); None before any learning."""
        return self.model.predict_one(x)

    # -- mini-batches -------------------------------------------------------------------
    def learn_many(self, X: pd.DataFrame, y: pd.Series | Sequence[Hashable],
                   w: pd.Series | Sequence[float] | None = None) -> None:
        """Learn the rows of X with labels y (and weights w): equal to learn_one row by row.

        Labels keep their type (an int stays an int). All or nothing: a bad row raises before
        any count changes.

        Parameters
        ----------
        X : pandas.DataFrame
            One document a row, one feature a column.
        y : pandas.Series or sequence
            The classes of the rows, aligned with X.
        w : pandas.Series, sequence or None
            The sample weights of the rows; None for 1.
        """
        rows = _frame_rows(X)
        labels = _aligned(y, X, "y")
        weights = None if w is None else _aligned(w, X, "w")
        self.model.learn_many(rows, labels, weights)

    def predict_proba_many(self, X: pd.DataFrame) -> pd.DataFrame:
        """P(c | row) for every row of X: one column per class (in the order the classes were
        first learned), X's index, no columns before anything is learned."""
        rows = _frame_rows(X)
        classes = self.model.classes
        table = np.empty((len(rows), len(classes)))
        for i, row in enumerate(rows):
            proba = self.model.predict_proba_one(row)
            table[i] = [proba[c] for c in classes]
        return pd.DataFrame(table, index=X.index, columns=pd.Index(classes, dtype=object, tupleize_cols=False))

    def predict_many(self, X: pd.DataFrame) -> pd.Series:
        """The predicted class of every row of X (a Series on X's index; labels keep their type)."""
        return pd.Series([self.model.predict_one(row) for row in _frame_rows(X)], index=X.index)

    # -- streamnb extras ----------------------------------------------------------------
    @property
    def classes(self) -> list[Label]:
        """Classes learned so far, in the order they first appeared."""
        return self.model.classes

    def merge(self, other: NaiveBayesClassifier) -> None:
        """Add another adapter's counts to this one (same class and parameters)."""
        if type(other) is not type(self):
            raise InvalidTypeError(f"cannot merge a {type(other).__name__} into a {type(self).__name__}")
        self.model.merge(other.model)  # type: ignore[arg-type]  # the same adapter: the same model class


_RIVER_DEFAULTS = {"empty_documents": "learn"}


class MultinomialNB(NaiveBayesClassifier):
    """streamnb's multinomial naive Bayes as a river classifier.

    Parameters are those of ``streamnb.MultinomialNB`` (alpha, mu, class_prior, tokenizer,
    smoothing, ...), except that ``empty_documents`` defaults to ``"learn"``. With
    ``smoothing=Smoothing(unseen="score")`` it reproduces ``river.naive_bayes.MultinomialNB``
    on BagOfWords input.

    >>> from river import feature_extraction
    >>> from streamnb.integrations.river import MultinomialNB
    >>> model = feature_extraction.BagOfWords() | MultinomialNB(alpha=1.0)
    >>> for text, label in [("cheap pills now", "spam"), ("meeting at noon", "ham")]:
    ...     model.learn_one(text, label)
    >>> model.predict_one("cheap pills")
    'spam'
    """

    model_class = models.MultinomialNB
    positive_input = True
    parameter_defaults = _RIVER_DEFAULTS


class BernoulliNB(NaiveBayesClassifier):
    """streamnb's Bernoulli naive Bayes as a river classifier.

    Parameters are those of ``streamnb.BernoulliNB`` (alpha, binarize, class_prior, ...),
    except that ``empty_documents`` defaults to ``"learn"`` (an empty document is evidence
    here: every word is absent). Any value is accepted; it only meets the threshold.
    """

    model_class = models.BernoulliNB
    parameter_defaults = _RIVER_DEFAULTS

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield from super()._unit_test_params()
        yield {"binarize": 0.5, "alpha": 2.0}


class ComplementNB(NaiveBayesClassifier):
    """streamnb's complement naive Bayes (Rennie et al. 2003) as a river classifier.

    Parameters are those of ``streamnb.ComplementNB`` (alpha, norm, ...), except that
    ``empty_documents`` defaults to ``"learn"``. With ``smoothing=Smoothing(unseen="score")``
    it scores unseen words as river's ComplementNB does.
    """

    model_class = models.ComplementNB
    positive_input = True
    parameter_defaults = _RIVER_DEFAULTS


class GaussianNB(NaiveBayesClassifier):
    """streamnb's Gaussian naive Bayes (numeric features; missing features skipped) as a river classifier."""

    model_class = models.GaussianNB


class CategoricalNB(NaiveBayesClassifier):
    """streamnb's categorical naive Bayes (categories discovered as they arrive) as a river classifier."""

    model_class = models.CategoricalNB


class LogisticRegression(NaiveBayesClassifier):
    """streamnb's online logistic regression (binary or softmax) as a river classifier.

    Parameters are those of ``streamnb.LogisticRegression`` (learning_rate, schedule, l2,
    margin, idf_power, class_weight, tokenizer, n_buckets ...). ``learn_one`` is one online step;
    ``unlearn_one`` the reverse step (approximate); ``merge`` parameter mixing.
    """

    model_class = models.LogisticRegression

    @classmethod
    def _unit_test_params(cls) -> Iterator[dict[str, Any]]:
        yield {}
        yield {"schedule": "constant", "learning_rate": 0.1, "l2": 0.01, "idf_power": 0.0}
        yield {"margin": 1.0, "class_weight": "balanced", "n_buckets": 1024}


# -- transformers -----------------------------------------------------------------------

class TextTransformer(river_base.MiniBatchTransformer):
    """A river transformer around a streamnb text object (the base of the transformer adapters).

    A subclass sets ``transformer_class`` and takes its parameters plus ``on``: the field of
    a dict input that holds the text (``None``: the input is the text itself, as for river's
    BagOfWords). The wrapped object, ``self.transformer``, is either a tokenizer (a callable
    text -> mapping feature -> count; nothing to learn) or a vectorizer that learns (it has
    ``learn_one(x)`` and ``transform_one(x)``, like an online TF-IDF). A dict without the
    ``on`` field holds no text: it gives no features. A subclass whose input is a mapping
    of token counts rather than text sets ``text_input = False``.
    """

    transformer_class: ClassVar[type]
    on: Hashable | None  # set by _setup, with the transformer's own parameters
    text_input: ClassVar[bool] = True  # False for a vectorizer fed token counts, not text
    _parameters: ClassVar[list[inspect.Parameter]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "transformer_class" in cls.__dict__:
            own = _constructor_parameters(cls.transformer_class)
            if any(p.name == "on" for p in own):
                raise TypeError(f"{cls.transformer_class.__name__} already has a parameter named 'on'")
            on = inspect.Parameter("on", inspect.Parameter.KEYWORD_ONLY, default=None)
            cls._parameters = [*own, on]
            cls.__init__ = _init_with_signature(cls.__qualname__, cls._parameters)  # type: ignore[method-assign]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(f"{type(self).__name__} is abstract: subclass it with a transformer_class")

    def _setup(self, params: dict[str, Any]) -> None:
        for name, value in params.items():
            setattr(self, name, value)
        params.pop("on")
        self.transformer = self.transformer_class(**params)

    @property
    def _learns(self) -> bool:
        return hasattr(self.transformer, "learn_one")

    def _more_tags(self) -> set[str]:
        return {river_base.tags.TEXT_INPUT} if self.on is None and self.text_input else set()

    def _text(self, x: Any) -> Any:
        if self.on is None:
            return x
        if not isinstance(x, Mapping):
            raise InvalidTypeError(
                f"with on={self.on!r} the input must be a mapping holding the text, got {describe(x)}")
        return x.get(self.on, "")

    def learn_one(self, x: Any) -> None:
        """Update the wrapped vectorizer with one text (a tokenizer has nothing to learn)."""
        if self._learns:
            self.transformer.learn_one(self._text(x))

    def transform_one(self, x: Any) -> dict[Hashable, float]:
        """The features of one text, as a new dict."""
        text = self._text(x)
        features = self.transformer.transform_one(text) if self._learns else self.transformer(text)
        return dict(features)

    def _texts(self, X: Any) -> list[Any]:
        """The inputs of a mini-batch: texts of a Series, the ``on`` column, or rows as dicts."""
        if self.on is None:
            if not isinstance(X, (pd.Series, pd.DataFrame)):
                raise InvalidTypeError(
                    f"a mini-batch must be a pandas Series of texts (or a DataFrame), got {describe(X)}")
            return _frame_rows(X)
        if not isinstance(X, pd.DataFrame):
            raise InvalidTypeError(f"with on={self.on!r} a mini-batch must be a pandas DataFrame, got {describe(X)}")
        if self.on not in X.columns:
            return [""] * len(X)
        texts: list[Any] = X[self.on].tolist()
        return texts

    def learn_many(self, X: Any) -> None:
        """Learn every text of the batch in row order (equal to learn_one row by row)."""
        if self._learns:
            for text in self._texts(X):
                self.transformer.learn_one(text)

    def transform_many(self, X: Any) -> pd.DataFrame:
        """A sparse DataFrame (fill value 0, X's index), one column per feature seen in the batch.

        Row i holds exactly the features of transform_one on text i, so the classifier
        adapters read it back as those dicts.
        """
        columns: dict[Hashable, int] = {}
        indices: list[int] = []
        data: list[float] = []
        indptr = [0]
        for text in self._texts(X):
            features = self.transformer.transform_one(text) if self._learns else self.transformer(text)
            for feature, value in features.items():
                indices.append(columns.setdefault(feature, len(columns)))
                data.append(value)
            indptr.append(len(indices))
        matrix = sp.csr_matrix((np.asarray(data, dtype=float), np.asarray(indices, dtype=np.int64), indptr),
                               shape=(len(indptr) - 1, len(columns)))
        names = pd.Index(list(columns), dtype=object, tupleize_cols=False)
        return pd.DataFrame.sparse.from_spmatrix(matrix, index=X.index, columns=names)


class Tokenizer(TextTransformer):
    """streamnb's fast word tokenizer as a river transformer: text -> {word: count}."""

    transformer_class = text_features.Tokenizer


class EmailTokenizer(TextTransformer):
    """streamnb's email-aware tokenizer as a river transformer: raw message -> {token: count}."""

    transformer_class = mail.EmailTokenizer


class OnlineTfidf(TextTransformer):
    """streamnb's online TF-IDF as a river transformer: {word: count} -> {word: weight}."""

    transformer_class = text_features.OnlineTfidf
    text_input = False
