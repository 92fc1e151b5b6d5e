"""Evidence: the model's log-odds, word by word.

:func:`evidence` gives the words that pushed the model's log-odds most, with their signed
contributions; :func:`log_odds_terms` gives them all, plus the bias they add up with.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ..models.values import FeatureValues
    from ..validate import Label

    Floats = npt.NDArray[np.float64]
else:
    from .._lazy import numpy as np

from ..errors import UnknownClassError
from ..validate import check_int
from .base import HAM, SPAM, FilterModel

__all__ = ["Evidence", "LogOddsTerms", "log_odds_terms", "evidence"]


class Evidence(NamedTuple):
    """One feature's push on a decision: weight > 0 toward spam, < 0 toward ham."""

    feature: Hashable
    weight: float


class LogOddsTerms(NamedTuple):
    """A document's log-odds log P(pos|x) - log P(neg|x) = bias + sum(weights), one weight per feature."""

    features: list[Hashable]
    weights: Floats
    bias: float

    @property
    def log_odds(self) -> float:
        return float(self.bias + self.weights.sum())


def _class_column(classes: Sequence[Hashable], label: Hashable) -> int:
    if label not in classes:
        raise UnknownClassError(f"class {label!r} has not been learned (classes: {classes}); "
                                "log-odds need both classes")
    return classes.index(label)


def log_odds_terms(model: FilterModel, x: Any, positive: Label = SPAM, negative: Label = HAM) -> LogOddsTerms:
    """Split the model's log-odds of x into one term per known feature plus a bias.

    With the model's ``contributions_one(x)`` (jll_c = rest_c + sum_i terms_ic; multinomial:
    terms = x_w log P(w|c); Bernoulli: present words' log p_cw - log(1 - p_cw)):
    weight_i = terms_i,pos - terms_i,neg and bias = rest_pos - rest_neg (class prior, and
    for Bernoulli the absent words). Since log P(c|x) = jll_c - logsumexp(jll), the
    normaliser cancels and bias + sum(weights) is log P(pos|x) - log P(neg|x) exactly
    (up to rounding).

    A model without ``contributions_one`` falls back to its ``log_linear()`` view: weight_i =
    x_i (W_i,pos - W_i,neg) over the document's known features, and the bias is whatever
    remains of the model's log-odds (so the sum is exact by construction).

    Parameters
    ----------
    model : FilterModel
        The model.
    x : mapping, bytes or str
        A document as the model reads it.
    positive, negative : label
        The two classes.

    Returns
    -------
    LogOddsTerms
        The features, their weights and the bias.
    """
    contributions = getattr(model, "contributions_one", None)
    if callable(contributions):
        split_features, split_weights, bias = _split_log_odds(contributions(x), positive, negative)
        return LogOddsTerms(split_features, np.array(split_weights, dtype=np.float64), bias)
    # The generic view: log_linear() (and tokenizer, for raw text) are optional members of a
    # FilterModel, which no check above establishes; a model without them fails below with
    # AttributeError (TypeError for raw text and a tokenizer None), as it always has.
    generic: _LogLinearModel = model  # type: ignore[assignment]
    view = generic.log_linear()
    pos, neg = _class_column(view.classes, positive), _class_column(view.classes, negative)
    row = {feature: i for i, feature in enumerate(view.features)}
    document = generic.tokenizer(x) if isinstance(x, (str, bytes)) else x
    features = [feature for feature in document if feature in row]
    values = np.array([float(document[feature]) for feature in features])
    rows = np.array([row[feature] for feature in features], dtype=np.int64)
    weights = values * (view.weights[rows, pos] - view.weights[rows, neg]) if len(rows) else np.zeros(0)
    log_proba = model.predict_log_proba_one(x)
    return LogOddsTerms(features, weights, float(log_proba[positive] - log_proba[negative] - weights.sum()))


def _split_log_odds(split: _LogOddsSplit, positive: Hashable,
                    negative: Hashable) -> tuple[list[Hashable], list[float], float]:
    """(features, weights, bias) of a model's ``contributions_one``, as lists (no numpy)."""
    pos, neg = _class_column(split.classes, positive), _class_column(split.classes, negative)
    return (list(split.features), [row[pos] - row[neg] for row in split.rows()],
            float(split.rest[pos] - split.rest[neg]))


def evidence(model: FilterModel, x: Any, k: int = 10, positive: Label = SPAM,
             negative: Label = HAM) -> list[Evidence]:
    """The k features of x with the largest |contribution| to the log-odds, largest first.

    Weights are those of :func:`log_odds_terms` (in nats; > 0 toward ``positive``);
    features contributing exactly 0 are left out; ties keep the document's order.

    Parameters
    ----------
    model, x, positive, negative
        As for :func:`log_odds_terms`.
    k : int
        How many features (>= 0).

    Returns
    -------
    list of Evidence
        The features and their weights in nats, strongest first.

    Raises
    ------
    InvalidParameterError
        For a ``k`` that is not an int >= 0.
    """
    check_int("k", k, 0)
    strongest = getattr(model, "strongest_one", None)
    if callable(strongest):  # chosen in the core: no list of every feature's weight made here
        classes = list(model.class_counts)  # the classes with documents: those a score is split over
        _class_column(classes, positive), _class_column(classes, negative)
        return [Evidence(feature, float(weight)) for feature, weight in strongest(x, k, positive, negative)]
    contributions = getattr(model, "contributions_one", None)
    if callable(contributions):  # the weights of log_odds_terms, kept as lists: `streamnb classify` needs no numpy
        features, weights, _ = _split_log_odds(contributions(x), positive, negative)
    else:
        terms = log_odds_terms(model, x, positive, negative)
        features, weights = terms.features, terms.weights.tolist()
    order = sorted(range(len(weights)), key=lambda i: -abs(weights[i]))  # stable: ties keep the document's order
    return [Evidence(features[i], float(weights[i])) for i in order[:k] if weights[i] != 0]



class _LogOddsSplit(Protocol):
    """What ``contributions_one`` returns (:class:`streamnb.models.base.Contributions`)."""

    @property
    def classes(self) -> Sequence[Hashable]: ...

    @property
    def features(self) -> Sequence[Hashable]: ...

    @property
    def rest(self) -> Sequence[float]: ...

    def rows(self) -> Sequence[Sequence[float]]: ...


class _LogLinearView(Protocol):
    """What ``log_linear()`` returns (:class:`streamnb.models.base.LogLinear`)."""

    @property
    def classes(self) -> Sequence[Hashable]: ...

    @property
    def features(self) -> Sequence[Hashable | None]: ...

    @property
    def weights(self) -> Floats: ...


class _LogLinearModel(FilterModel, Protocol):
    """A model read through its log-linear view (evidence without ``contributions_one``)."""

    def log_linear(self) -> _LogLinearView: ...

    @property
    def tokenizer(self) -> Callable[[Any], FeatureValues]: ...
