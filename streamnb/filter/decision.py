"""Spam decisions on top of a naive Bayes model: cutoffs, an unsure band, evidence.

A model gives P(spam|x); a filter must say "ham", "spam" or, when the evidence is weak or
mixed, "unsure" (a message for a person to look at). This module holds:

- **decision rules**, each a score and two cutoffs: a message is ham when
  score < ham_cutoff, spam when score >= spam_cutoff, unsure in between (equal cutoffs
  give a plain threshold, never unsure):

  - :class:`ArgmaxRule`: the model's own decision (spam when P(spam|x) > 1/2);
  - :class:`PosteriorRule`: cutoffs on P(spam|x), calibrated when the filter has a calibrator;
  - :class:`ChiSquareRule`: Gary Robinson's chi-square combining of per-word spam
    probabilities, as SpamBayes uses it (see the class for the formulas);
  - :class:`LogOddsRule` (the default): cutoffs on the model's log-odds, demanding more
    evidence while the model has learned few messages of the class it would rule out.

- :func:`evidence`: the words that pushed the model's log-odds most, with their signed
  contributions (:func:`log_odds_terms` gives them all, plus the bias they add up with).

- :class:`SpamFilter`: a model + a rule + an optional calibrator (:mod:`streamnb.calibrate`)
  + a minimum number of learned messages per class before any verdict other than
  "unsure". ``classify(x) -> Verdict`` and ``learn(x, label)``, one tokenization per message.

- :func:`progressive_filter`: classify-then-learn over a stream, with a :class:`FilterReport`.

Chi-square combining references: G. Robinson, "A statistical approach to the spam problem",
Linux Journal 107 (2003); R. A. Fisher, Statistical Methods for Research Workers (1925),
section 21.1 (combining independent tests); the SpamBayes project's defaults (strength
0.45, background 0.5, minimum distance 0.1 from 0.5, 150 discriminators, cutoffs 0.20/0.90).
"""

from __future__ import annotations

import math
import numbers
from array import array
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, NamedTuple, Protocol, overload

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from .calibrate import Calibrator
    from ..models.base import Document, FeatureValues
    from ..validate import Label

    Floats = npt.NDArray[np.float64]
    Bools = npt.NDArray[np.bool_]
    Objects = npt.NDArray[np.object_]  # labels, verdicts: Python objects
else:
    from .._lazy import numpy as np

from ..errors import InvalidInputError, InvalidParameterError, InvalidTypeError, UnknownClassError, describe
from .evaluate import (CurvePoint, RunningMetrics, _objects, accuracy, expected_calibration_error,
                       false_negative_rate, false_positive_rate, log_loss, one_minus_auc_percent, prequential)

__all__ = [
    "HAM", "UNSURE", "SPAM", "Evidence", "LogOddsTerms", "log_odds_terms", "evidence",
    "chi2_sf_even", "fisher_combine", "robinson_probabilities", "ChiSquareResult", "chi_square_indicator",
    "FilterModel", "DecisionRule", "ArgmaxRule", "PosteriorRule", "ChiSquareRule", "LogOddsRule", "Verdict",
    "SpamFilter", "FilterReport", "progressive_filter", "model_posterior",
]

HAM: Final = "ham"
UNSURE: Final = "unsure"
SPAM: Final = "spam"
Verdicts = Literal["ham", "unsure", "spam"]


@overload
def expit(z: float) -> float: ...


@overload
def expit(z: Floats) -> Floats: ...


def expit(z: float | Floats) -> float | Floats:
    """The logistic function 1 / (1 + exp(-z)) of a number (float) or an array, overflow-free.

    Written here rather than imported from scipy.special, whose import costs more than a
    whole `streamnb classify` of one message should.
    """
    if not isinstance(z, numbers.Real):  # an array (numbers.Real keeps numpy out of a scalar's way)
        with np.errstate(over="ignore"):
            return 1.0 / (1.0 + np.exp(-z))  # exp overflows to inf for z < -709: the result is 0, as it should be
    z = float(z)
    if z < -700.0:  # math.exp would raise OverflowError; exp(z) is the answer to double precision
        return math.exp(z)
    return 1.0 / (1.0 + math.exp(-z))


# --- evidence: the model's log-odds, word by word ------------------------------------------


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
    """
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 0:
        raise InvalidParameterError(f"k must be an int >= 0, got {describe(k)}")
    contributions = getattr(model, "contributions_one", None)
    if callable(contributions):  # the weights of log_odds_terms, kept as lists: `streamnb classify` needs no numpy
        features, weights, _ = _split_log_odds(contributions(x), positive, negative)
    else:
        terms = log_odds_terms(model, x, positive, negative)
        features, weights = terms.features, terms.weights.tolist()
    order = sorted(range(len(weights)), key=lambda i: -abs(weights[i]))  # stable: ties keep the document's order
    return [Evidence(features[i], float(weights[i])) for i in order[:k] if weights[i] != 0]


# --- chi-square combining --------------------------------------------------------------------


def chi2_sf_even(statistic: float, dof: int) -> float:
    """P(X >= statistic) for X ~ chi-square with an even number of degrees of freedom dof = 2n.

    Exact closed form for even dof: with m = statistic / 2,
    P = exp(-m) * sum_{i=0}^{n-1} m^i / i!  (the probability of at most n-1 events of a
    Poisson(m) variable). Summed in log space, so it neither overflows nor underflows
    early for the hundreds of terms a long message can give.

    >>> round(chi2_sf_even(4.0, 4), 9)  # exp(-2) * (1 + 2)
    0.40600585
    """
    if isinstance(dof, bool) or not isinstance(dof, numbers.Integral) or dof < 2 or dof % 2:
        raise InvalidParameterError(f"dof must be an even int >= 2, got {describe(dof)}")
    if not statistic >= 0:
        raise InvalidInputError(f"a chi-square statistic must be >= 0, got {describe(statistic)}")
    m = statistic / 2.0
    if m == 0.0:
        return 1.0
    log_m = math.log(m)
    log_terms = [i * log_m - m - math.lgamma(i + 1.0) for i in range(dof // 2)]  # lgamma(i + 1) = log(i!)
    top = max(log_terms)
    return min(1.0, math.exp(top) * math.fsum(math.exp(t - top) for t in log_terms))


def fisher_combine(p_values: Iterable[float]) -> float:
    """Fisher's combined p-value: P(chi2 with 2n dof >= -2 sum ln p_i); 1.0 for no p-values.

    If the p_i were independent and uniform on (0, 1), -2 sum ln p_i would follow a
    chi-square distribution with 2n degrees of freedom; a small result says they are
    jointly too small to be chance.

    >>> round(fisher_combine([0.9, 0.2, 0.21, 0.89, 0.2, 0.78]), 9)  # Robinson's first example
    0.572203879
    """
    p = [float(v) for v in p_values]
    if not p:
        return 1.0
    bad = [v for v in p if not 0.0 < v <= 1.0]
    if bad:
        raise InvalidInputError(f"p-values must be in (0, 1], got {bad[0]!r}")
    return chi2_sf_even(max(0.0, -2.0 * math.fsum(map(math.log, p))), 2 * len(p))


def robinson_probabilities(spam_docs: Iterable[float], ham_docs: Iterable[float], n_spam: float, n_ham: float,
                           strength: float = 0.45, background: float = 0.5) -> array[float]:
    """Robinson's degree of belief f(w) that a message containing word w is spam, per word.

    With D_spam,w and D_ham,w the spam and ham messages containing w, and N_spam, N_ham
    the messages of each class: b(w) = D_spam,w / N_spam, g(w) = D_ham,w / N_ham,
    p(w) = b(w) / (b(w) + g(w)) (the class sizes cancel out), and, with n = D_spam,w + D_ham,w,

        f(w) = (s * x + n * p(w)) / (s + n),

    a background belief x (0.5: no opinion) worth s messages, which the word's own data
    outweighs as n grows. A word never seen (n = 0) gets x; so does every word while a
    class has no messages (no comparison possible). Returns an ``array.array`` of floats
    (``np.asarray`` reads it without a copy).
    """
    pairs = list(zip(map(float, spam_docs), map(float, ham_docs), strict=True))
    if n_spam <= 0 or n_ham <= 0:
        return array("d", [float(background)] * len(pairs))
    f = array("d")
    for spam, ham in pairs:
        b, g = spam / n_spam, ham / n_ham
        p = b / (b + g) if b + g > 0 else float(background)
        n = spam + ham
        f.append((strength * background + n * p) / (strength + n))
    return f


class ChiSquareResult(NamedTuple):
    """Chi-square combining of one message: indicator I = (1 + H - S) / 2, its parts, the clues used."""

    indicator: float
    ham_p: float  # H: Fisher's combined p-value of the f(w) (near 0: many hammy words)
    spam_p: float  # S: Fisher's combined p-value of the 1 - f(w) (near 0: many spammy words)
    clues: list[tuple[Hashable, float]]  # [(feature, f(w))] of the words used, most extreme first


def chi_square_indicator(probabilities: Iterable[float]) -> tuple[float, float, float]:
    """(I, H, S) of Robinson's chi-square combining for the given word probabilities f(w).

    H = C^-1(-2 ln prod f(w), 2n) and S = C^-1(-2 ln prod (1 - f(w)), 2n), C^-1 the
    chi-square survival function (Fisher's method on the f(w), and on the 1 - f(w));
    I = (1 + H - S) / 2 is near 1 for spam, near 0 for ham, near 1/2 when the evidence is
    weak or points both ways. No words: I = 1/2. (SpamBayes writes the same with
    H' = 1 - S and S' = 1 - H: I = (S' - H' + 1) / 2.)
    """
    f = [float(p) for p in probabilities]
    h = fisher_combine(f)
    s = fisher_combine([1.0 - p for p in f])
    return (1.0 + h - s) / 2.0, h, s


# --- decision rules ----------------------------------------------------------------------------


def _check_cutoffs(ham_cutoff: float, spam_cutoff: float) -> tuple[float, float]:
    for name, value in (("ham_cutoff", ham_cutoff), ("spam_cutoff", spam_cutoff)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= value <= 1.0:
            raise InvalidParameterError(f"{name} must be a number in [0, 1], got {describe(value)}")
    if ham_cutoff > spam_cutoff:
        raise InvalidParameterError(f"ham_cutoff ({ham_cutoff!r}) must not exceed spam_cutoff ({spam_cutoff!r})")
    return float(ham_cutoff), float(spam_cutoff)


class FilterModel(Protocol):
    """What a SpamFilter and its rules ask of a model: every streamnb discrete model has it.

    Used when the model has them: ``contributions_one`` (exact evidence, else ``log_linear``),
    ``document_counts`` (chi-square combining), ``unlearn_one`` (corrections),
    ``log_odds_against_uniform_one`` (ranking while one class is learned) and ``tokenizer``
    (raw messages).
    """

    @property
    def class_counts(self) -> Mapping[Label, float]: ...

    def predict_one(self, x: Any) -> Hashable | None: ...

    def predict_log_proba_one(self, x: Any) -> Mapping[Label, float]: ...

    def learn_one(self, x: Any, y: Label) -> object: ...


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


class _DocumentCountsView(Protocol):
    """What ``document_counts(x)`` returns (:class:`streamnb.models.base.DocumentCounts`)."""

    @property
    def classes(self) -> Sequence[Hashable]: ...

    @property
    def features(self) -> Sequence[Hashable]: ...

    def rows(self) -> Sequence[Sequence[float]]: ...

    def totals(self) -> Sequence[float]: ...


class _CountsDocuments(Protocol):
    """A model chi-square combining can read: per-class document counts of a message's features."""

    def document_counts(self, x: Any) -> _DocumentCountsView: ...


class DecisionRule(Protocol):
    """What a SpamFilter needs from a rule: a score, a verdict for a score, an explanation."""

    def score(self, model: Any, features: Document, log_odds: float, probability: float,
              positive: Label, negative: Label) -> float: ...

    def decide(self, score: float) -> Verdicts: ...

    def explain(self, model: Any, features: Document, k: int, positive: Label,
                negative: Label) -> list[Evidence]: ...


class _Band:
    """The unsure band: ham below ham_cutoff, spam at or above spam_cutoff, unsure between."""

    ham_cutoff: float
    spam_cutoff: float

    def decide(self, score: float) -> Verdicts:
        """'ham' if score < ham_cutoff, 'spam' if score >= spam_cutoff, else 'unsure'."""
        if score >= self.spam_cutoff:
            return SPAM
        if score < self.ham_cutoff:
            return HAM
        return UNSURE

    def explain(self, model: Any, features: Document, k: int, positive: Label,
                negative: Label) -> list[Evidence]:
        """The model's strongest log-odds contributions (:func:`evidence`)."""
        return evidence(model, features, k, positive, negative)


def model_posterior(model: Any, log_odds: float, positive: Label, negative: Label) -> float:
    """The model's P(positive|x) from a filter's log-odds: sigmoid(log-odds), or 1 (0) while
    the model has learned only the positive (negative) class.

    With one class learned, a filter's log-odds rank messages against a class that learned
    nothing (``SpamFilter.log_odds``) and may have either sign, but the model's posterior of
    its only class is 1.
    """
    counts = model.class_counts
    has_pos, has_neg = counts.get(positive, 0.0) > 0, counts.get(negative, 0.0) > 0
    if has_pos != has_neg:
        return 1.0 if has_pos else 0.0
    return float(expit(log_odds))


class ArgmaxRule(_Band):
    """The model's own choice: spam when P(spam|x) > 1/2, else ham (a tie counts as ham).

    The score is the model's posterior P(spam|x) (:func:`model_posterior`), never the
    calibrated one (calibration is monotone but need not keep 1/2 in place).
    """

    ham_cutoff = 0.5
    spam_cutoff = 0.5

    def score(self, model: Any, features: Document, log_odds: float, probability: float,
              positive: Label, negative: Label) -> float:
        return model_posterior(model, log_odds, positive, negative)

    def decide(self, score: float) -> Verdicts:
        return SPAM if score > 0.5 else HAM

    def __repr__(self) -> str:
        return "ArgmaxRule()"


class PosteriorRule(_Band):
    """Cutoffs on P(spam|x): the filter's probability (calibrated when it has a calibrator).

    Uncalibrated naive Bayes posteriors are nearly always 0 or 1, so the unsure band
    catches few messages; calibrated ones spread out and the band becomes meaningful.
    ``PosteriorRule(t, t)`` is the plain threshold "spam iff P(spam|x) >= t".
    """

    def __init__(self, ham_cutoff: float = 0.20, spam_cutoff: float = 0.90) -> None:
        self.ham_cutoff, self.spam_cutoff = _check_cutoffs(ham_cutoff, spam_cutoff)

    def score(self, model: Any, features: Document, log_odds: float, probability: float,
              positive: Label, negative: Label) -> float:
        return probability

    def __repr__(self) -> str:
        return f"PosteriorRule(ham_cutoff={self.ham_cutoff!r}, spam_cutoff={self.spam_cutoff!r})"


class ChiSquareRule(_Band):
    """Robinson's chi-square combining (as in SpamBayes) with an unsure band on the indicator I.

    For each distinct word of the message known to the model (value > 0), f(w) from the
    per-class document frequencies (:func:`robinson_probabilities` with ``strength`` s and
    ``background`` x). Words with |f(w) - 1/2| < ``min_strength`` are dropped as
    uninformative; of the rest, the ``max_discriminators`` most extreme are combined into
    I = (1 + H - S) / 2 (:func:`chi_square_indicator`). Unlike the naive Bayes product, I
    does not saturate: a message with strong ham and strong spam words lands near 1/2,
    in the unsure band. Explanations are the words used, weight ln(f / (1 - f)).
    """

    strength: float
    background: float
    min_strength: float
    max_discriminators: int

    def __init__(self, ham_cutoff: float = 0.20, spam_cutoff: float = 0.90, *, strength: float = 0.45,
                 background: float = 0.5, min_strength: float = 0.1, max_discriminators: int = 150) -> None:
        self.ham_cutoff, self.spam_cutoff = _check_cutoffs(ham_cutoff, spam_cutoff)
        if isinstance(strength, bool) or not isinstance(strength, numbers.Real) or not 0 < strength < math.inf:
            raise InvalidParameterError(f"strength must be a finite number > 0, got {describe(strength)}")
        if isinstance(background, bool) or not isinstance(background, numbers.Real) or not 0 < background < 1:
            raise InvalidParameterError(f"background must be in (0, 1), got {describe(background)}")
        if isinstance(min_strength, bool) or not isinstance(min_strength, numbers.Real) or not 0 <= min_strength < 0.5:
            raise InvalidParameterError(f"min_strength must be in [0, 0.5), got {describe(min_strength)}")
        if isinstance(max_discriminators, bool) or not isinstance(max_discriminators, numbers.Integral) \
                or max_discriminators < 1:
            raise InvalidParameterError(f"max_discriminators must be an int >= 1, got {describe(max_discriminators)}")
        self.strength = float(strength)
        self.background = float(background)
        self.min_strength = float(min_strength)
        self.max_discriminators = int(max_discriminators)

    def combine(self, model: _CountsDocuments, features: Document, positive: Hashable = SPAM,
                negative: Hashable = HAM) -> ChiSquareResult:
        """Chi-square combining of one message against the model's document counts."""
        counts = model.document_counts(features)
        if positive not in counts.classes or negative not in counts.classes or not len(counts.features):
            return ChiSquareResult(0.5, 1.0, 1.0, [])
        pos, neg = counts.classes.index(positive), counts.classes.index(negative)
        rows, totals = counts.rows(), counts.totals()
        f = robinson_probabilities([row[pos] for row in rows], [row[neg] for row in rows],
                                   totals[pos], totals[neg], self.strength, self.background)
        distance = [abs(p - 0.5) for p in f]
        order = sorted(range(len(f)), key=lambda i: -distance[i])  # stable: ties keep the document's order
        order = [i for i in order if distance[i] >= self.min_strength][: self.max_discriminators]
        chosen = [f[i] for i in order]
        indicator, h, s = chi_square_indicator(chosen)
        names = [counts.features[i] for i in order]
        return ChiSquareResult(indicator, h, s, list(zip(names, chosen)))

    def score(self, model: Any, features: Document, log_odds: float, probability: float,
              positive: Label, negative: Label) -> float:
        return self.combine(model, features, positive, negative).indicator

    def explain(self, model: Any, features: Document, k: int, positive: Label,
                negative: Label) -> list[Evidence]:
        """The k most extreme words used, weight ln(f / (1 - f)) (> 0: spammy)."""
        clues = self.combine(model, features, positive, negative).clues[:k]
        return [Evidence(name, math.log(f / (1.0 - f))) for name, f in clues]

    def __repr__(self) -> str:
        return (f"ChiSquareRule(ham_cutoff={self.ham_cutoff!r}, spam_cutoff={self.spam_cutoff!r}, "
                f"strength={self.strength!r}, background={self.background!r}, "
                f"min_strength={self.min_strength!r}, max_discriminators={self.max_discriminators!r})")


def _check_finite(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise InvalidParameterError(f"{name} must be a finite number, got {describe(value)}")
    return float(value)


class LogOddsRule(_Band):
    """Cutoffs on the model's log-odds z = log P(spam|x) - log P(ham|x), cautious while a class is little known.

    With N_spam and N_ham the messages of each class the model has learned (its class
    counts, decayed when it forgets) and c = ``caution``:

        spam    when z >= t = spam_log_odds + c * 100 / N_ham
        ham     when z <  h = ham_log_odds  - c * 100 / N_spam
        unsure  otherwise.

    A spam verdict says the message is unlike the ham the model knows; with 50 hams learned
    that means little, so the cutoff stands 2c higher than it does after 10,000. The same
    holds for a ham verdict and the spam learned. The cutoffs are a fixed function of the
    model's counts: they are fixed in advance (nothing is fitted to the stream being
    scored), and a model that unlearns a message gives the verdicts of the model that never
    saw it. While the model lacks a class every verdict is "unsure" (z then compares the
    learned class with one that learned nothing: see ``SpamFilter.log_odds``); the filter
    also waits for ``min_per_class`` messages of each class.

    Defaults chosen on the Date-ordered SpamAssassin stream with :class:`~streamnb.models.EmailNB`
    (benchmarks/accuracy_variants.py), whose log-odds are bounded by its fixed mass per
    message: they are in-sample figures there, and the benchmark reports them on other
    orders of the stream with these values frozen.

    The score (what ``Verdict.score`` holds, and what ``streamnb serve`` shows) maps z onto
    [0, 1] so that the verdict is a fixed cut of it, as for the other rules: below
    ``ham_cutoff`` (0.2) for ham, from ``spam_cutoff`` (0.9) for spam, linear in z between
    h and t, and approaching 0 or 1 exponentially beyond (one e-fold every 10 nats).
    """

    SCALE = 10.0  # nats per e-fold of the score beyond the cutoffs

    def __init__(self, ham_log_odds: float = -5.0, spam_log_odds: float = 16.0, caution: float = 8.0, *,
                 ham_cutoff: float = 0.20, spam_cutoff: float = 0.90) -> None:
        self.ham_log_odds = _check_finite("ham_log_odds", ham_log_odds)
        self.spam_log_odds = _check_finite("spam_log_odds", spam_log_odds)
        if self.ham_log_odds > self.spam_log_odds:
            raise InvalidParameterError(f"ham_log_odds ({ham_log_odds!r}) must not exceed spam_log_odds "
                                        f"({spam_log_odds!r})")
        self.caution = _check_finite("caution", caution)
        if self.caution < 0:
            raise InvalidParameterError(f"caution must be >= 0, got {describe(caution)}")
        self.ham_cutoff, self.spam_cutoff = _check_cutoffs(ham_cutoff, spam_cutoff)
        if not 0 < self.ham_cutoff < self.spam_cutoff < 1:
            raise InvalidParameterError(f"the score cutoffs must satisfy 0 < ham_cutoff < spam_cutoff < 1, got "
                                        f"{ham_cutoff!r}, {spam_cutoff!r}")

    @classmethod
    def for_model(cls, model: object, **overrides: float | None) -> "LogOddsRule":
        """The rule with a model's own default cutoffs (its class's ``log_odds_cutoffs``:
        :class:`~streamnb.models.Fusion` declares those of its fused log-odds; any other model
        gets this class's defaults, chosen for EmailNB), and any override that is not None.
        ``model`` may be the model or its class."""
        names = ("ham_log_odds", "spam_log_odds", "caution")
        model_type = model if isinstance(model, type) else type(model)
        defaults = dict(zip(names, getattr(model_type, "log_odds_cutoffs", (-5.0, 16.0, 8.0))))
        given = {name: value for name, value in overrides.items() if value is not None}
        return cls(**{**defaults, **given})

    def cutoffs(self, model: Any, positive: Label = SPAM, negative: Label = HAM) -> tuple[float, float]:
        """(h, t): ham below h, spam from t, in log-odds, for the model as it stands."""
        counts = model.class_counts
        n_pos, n_neg = counts.get(positive, 0.0), counts.get(negative, 0.0)
        t = self.spam_log_odds + (self.caution * 100.0 / n_neg if n_neg > 0 else math.inf)
        h = self.ham_log_odds - (self.caution * 100.0 / n_pos if n_pos > 0 else math.inf)
        return h, t

    def score(self, model: Any, features: Document, log_odds: float, probability: float,
              positive: Label, negative: Label) -> float:
        h, t = self.cutoffs(model, positive, negative)
        if not math.isfinite(t - h):  # a class unknown: no comparison, the middle of the band
            return 0.5 * (self.ham_cutoff + self.spam_cutoff)
        return self.scaled(log_odds, h, t)

    def scaled(self, z: float, h: float, t: float) -> float:
        """The score of log-odds z between finite cutoffs h <= t (see the class docstring)."""
        low, high = self.ham_cutoff, self.spam_cutoff
        if math.isnan(z):
            return 0.5 * (low + high)
        if z >= t:
            return 1.0 if math.isinf(z) else high + (1.0 - high) * -math.expm1(-(z - t) / self.SCALE)
        if z < h:
            return 0.0 if math.isinf(z) else low * math.exp((z - h) / self.SCALE)
        return min(low + (high - low) * (z - h) / (t - h), math.nextafter(high, 0.0))

    def __repr__(self) -> str:
        return (f"LogOddsRule(ham_log_odds={self.ham_log_odds!r}, spam_log_odds={self.spam_log_odds!r}, "
                f"caution={self.caution!r}, ham_cutoff={self.ham_cutoff!r}, spam_cutoff={self.spam_cutoff!r})")


# --- the filter ----------------------------------------------------------------------------------


class Verdict(NamedTuple):
    """A filter's answer for one message.

    label: "ham", "unsure" or "spam". score: what the rule compared with its cutoffs (the
    chi-square indicator I, or P(spam|x)). probability: P(spam|x), calibrated when the
    filter has a calibrator. evidence: the strongest reasons (see the rule's ``explain``).
    log_odds: the model's log P(spam|x) - log P(ham|x); while the model knows a single
    class, that class against one that learned nothing (``SpamFilter.log_odds``); 0 while
    it knows none.
    """

    label: Verdicts
    score: float
    probability: float
    evidence: list[Evidence]
    log_odds: float


class SpamFilter:
    """A model, a decision rule and an optional calibrator, as one spam filter.

    ``SpamFilter()`` is the recommended filter: :class:`~streamnb.models.Fusion` (naive Bayes
    on field-weighted email features and logistic regression on byte 4-grams, fused online;
    raw messages in) with :class:`LogOddsRule` verdicts at the fusion's cutoffs. Without a
    rule, the rule is ``LogOddsRule.for_model(model)``: an EmailNB keeps the cutoffs it had.

    ``classify(x)`` tokenizes x once (a mapping is used as is; a raw message goes as it is
    to a streamnb model with a tokenizer, which reads it itself, in the core for EmailNB;
    otherwise ``tokenizer``, or the model's own tokenizer, makes the mapping), asks the
    model for log P(spam|x) - log P(ham|x), turns it into a probability (the calibrator's,
    else the model's posterior) and lets the rule decide. Until the model has learned
    ``min_per_class`` messages of each class (default 1: a comparison needs both;
    :class:`LogOddsRule` is cautious on its own while a class is little known, other rules
    may want 10) the verdict is "unsure".

    ``learn(x, label)`` is prequential: the calibrator is updated with the log-odds the
    model gave x *before* learning it (reused from ``classify`` when x is the message just
    classified, so a message is tokenized and scored once), then the model learns x.
    The calibrator neither answers nor learns until the model has learned both classes
    (before that the log-odds compare nothing (0) or a learned class with one that learned
    nothing: no comparison of the two classes to calibrate).
    """

    model: FilterModel
    rule: DecisionRule
    calibrator: Calibrator | None
    min_per_class: float
    tokenizer: Callable[[Any], FeatureValues] | None
    positive: Label
    negative: Label
    evidence_k: int
    # the last message classified: (x, a copy of x when it is a mapping, its features, its
    # log-odds, the model's class counts then)
    _last: tuple[object, dict[Any, Any] | None, Document, float, Mapping[Label, float]] | None

    def __init__(self, model: FilterModel | None = None, rule: DecisionRule | None = None,
                 calibrator: Calibrator | None = None, *, min_per_class: float = 1,
                 tokenizer: Callable[[Any], FeatureValues] | None = None, positive: Label = SPAM,
                 negative: Label = HAM, evidence_k: int = 10) -> None:
        if model is None:
            from ..models import Fusion  # here: decision rules need no mail reader

            model = Fusion()
        for name in ("learn_one", "predict_log_proba_one"):
            if not callable(getattr(model, name, None)):
                raise InvalidParameterError(f"model {describe(model)} has no {name} method")
        if not hasattr(model, "class_counts"):
            raise InvalidParameterError(f"model {describe(model)} has no class_counts (documents per class)")
        if calibrator is not None and not (callable(getattr(calibrator, "update", None))
                                           and callable(getattr(calibrator, "transform", None))):
            raise InvalidParameterError(
                f"calibrator {describe(calibrator)} needs update(score, outcome) and transform(score)")
        if isinstance(min_per_class, bool) or not isinstance(min_per_class, numbers.Real) \
                or not 0 <= min_per_class < math.inf:
            raise InvalidParameterError(f"min_per_class must be a finite number >= 0, got {describe(min_per_class)}")
        if tokenizer is not None and not callable(tokenizer):
            raise InvalidParameterError(f"tokenizer must be callable (message -> mapping), got {describe(tokenizer)}")
        if isinstance(evidence_k, bool) or not isinstance(evidence_k, numbers.Integral) or evidence_k < 0:
            raise InvalidParameterError(f"evidence_k must be an int >= 0, got {describe(evidence_k)}")
        if positive == negative:
            raise InvalidParameterError(f"positive and negative must differ, both are {positive!r}")
        self.model = model
        self.rule = LogOddsRule.for_model(model) if rule is None else rule
        self.calibrator = calibrator
        self.min_per_class = float(min_per_class)
        self.tokenizer = tokenizer
        self.positive = positive
        self.negative = negative
        self.evidence_k = int(evidence_k)
        self._last = None
        self._reads_text: tuple[object, object, bool] | None = None  # (model, its tokenizer, whether it reads text)

    # -- pieces ---------------------------------------------------------------------------------
    def features(self, x: Any) -> Document:
        """x as the model reads it: a mapping as is; a raw message as is when the model
        tokenizes it itself (a streamnb naive Bayes model with a tokenizer, and no filter
        tokenizer: the core reads it once, and keeps it for the learning that follows);
        otherwise the tokenizer's mapping feature -> count."""
        if isinstance(x, Mapping):
            return x
        if self.tokenizer is None and isinstance(x, (str, bytes)) and self._model_reads_text():
            return x
        tokenizer = self.tokenizer if self.tokenizer is not None else getattr(self.model, "tokenizer", None)
        if tokenizer is None:
            raise InvalidTypeError(f"got {describe(x)} but neither the filter nor the model has a tokenizer; "
                                   "pass tokenizer=... or give a mapping feature -> count")
        features = tokenizer(x)
        if not isinstance(features, Mapping):
            raise InvalidTypeError(f"the tokenizer must return a mapping feature -> count, got {describe(features)}")
        return features

    def _model_reads_text(self) -> bool:
        model = self.model
        tokenizer = getattr(model, "tokenizer", None)
        known = self._reads_text
        if known is not None and known[0] is model and known[1] is tokenizer:
            return known[2]
        from ..models.base import DiscreteNB  # here: decision rules need no model module
        from ..models.fusion import Fusion

        # a fusion's parts read the raw message each its own way
        reads = isinstance(model, Fusion) or (isinstance(model, DiscreteNB) and tokenizer is not None)
        self._reads_text = (model, tokenizer, reads)
        return reads

    def log_odds(self, features: Document) -> float:
        """log P(pos|x) - log P(neg|x) under the model; 0 before it has learned anything.

        While the model has learned only one of the two classes, its posterior of that class
        is 1 for every message (infinite log-odds), which tells the messages nothing apart.
        A model with ``log_odds_against_uniform_one`` (the multinomial ones) then compares
        the learned class with a class that has learned nothing: the first ham after a run of
        spam scores low when it is unlike that spam. Other models give +-inf.
        """
        log_proba = self.model.predict_log_proba_one(features)
        has_pos, has_neg = self.positive in log_proba, self.negative in log_proba
        if has_pos and has_neg:
            return float(log_proba[self.positive] - log_proba[self.negative])
        if not has_pos and not has_neg:
            return 0.0
        sign, learned = (1.0, self.positive) if has_pos else (-1.0, self.negative)
        against_uniform = getattr(self.model, "log_odds_against_uniform_one", None)
        if against_uniform is None:
            return sign * math.inf
        return sign * float(against_uniform(features, learned))

    def _calibrating(self, log_odds: float) -> Calibrator | None:
        """The calibrator when it takes part (the filter has one, and the model compared both classes), else None."""
        if self.calibrator is not None and math.isfinite(log_odds) and self._knows_both():
            return self.calibrator
        return None

    def probability(self, log_odds: float) -> float:
        """P(spam|x) from the model's log-odds: the calibrator's, else sigmoid(log-odds).

        The calibrator is used only for log-odds that compare both classes (the model has
        learned both, the value is finite); otherwise the model's own posterior is returned.
        """
        calibrator = self._calibrating(log_odds)
        if calibrator is not None:
            return float(calibrator.transform(log_odds))
        return self.model_probability(log_odds)

    def model_probability(self, log_odds: float) -> float:
        """The model's P(spam|x) for the filter's log-odds (see :func:`model_posterior`)."""
        return model_posterior(self.model, log_odds, self.positive, self.negative)

    @property
    def ready(self) -> bool:
        """True once the model holds at least min_per_class (and some) messages of both classes."""
        counts = self.model.class_counts
        return all(0 < counts.get(label, 0.0) and counts.get(label, 0.0) >= self.min_per_class
                   for label in (self.positive, self.negative))

    def _knows_both(self) -> bool:
        counts = self.model.class_counts
        return counts.get(self.positive, 0.0) > 0 and counts.get(self.negative, 0.0) > 0

    def _scored(self, x: Any) -> tuple[Document, float]:
        """(features, log-odds) of x, reusing the last classify when x is that message.

        The reuse needs the same object x (unchanged, when it is a mapping) and a model
        whose class counts have not moved since (nothing learned behind the filter's back).
        """
        last = self._last
        if (last is not None and last[0] is x and (last[1] is None or last[1] == x)
                and last[4] == self.model.class_counts):
            return last[2], last[3]
        features = self.features(x)
        return features, self.log_odds(features)

    # -- the filter's API -----------------------------------------------------------------------
    def classify(self, x: Any, *, explain: bool = True) -> Verdict:
        """The verdict for one message, from the model as it stands (nothing is learned).

        ``explain=False`` leaves the evidence out (a stream evaluation has no use for it).
        """
        features = self.features(x)
        z = self.log_odds(features)
        self._last = (x, dict(x) if isinstance(x, Mapping) else None, features, z, self.model.class_counts)
        probability = self.probability(z)
        score = self.rule.score(self.model, features, z, probability, self.positive, self.negative)
        label: Verdicts = self.rule.decide(score) if self.ready else UNSURE
        explained: list[Evidence] = []
        if explain and self.evidence_k and self._knows_both():
            explained = self.rule.explain(self.model, features, self.evidence_k, self.positive, self.negative)
        return Verdict(label, float(score), probability, explained, z)

    def learn(self, x: Any, label: Label) -> "SpamFilter":
        """Learn one message of class label (positive or negative); see the class docstring."""
        if label != self.positive and label != self.negative:
            raise InvalidInputError(f"label must be {self.positive!r} or {self.negative!r}, got {describe(label)}")
        features, z = self._scored(x)
        calibrator = self._calibrating(z)  # decided on the model that scored x
        self.model.learn_one(features, label)
        if calibrator is not None:
            calibrator.update(z, label == self.positive)
        self._last = None
        return self

    def unlearn(self, x: Any, label: Label) -> "SpamFilter":
        """Remove a message learned earlier from the model (e.g. a mislabelled one).

        The calibrator keeps what it saw: it holds no per-message record to take back.
        """
        if label != self.positive and label != self.negative:
            raise InvalidInputError(f"label must be {self.positive!r} or {self.negative!r}, got {describe(label)}")
        # unlearn_one is an optional member of FilterModel, which mypy cannot see: a model
        # without it raises AttributeError here, as documented
        self.model.unlearn_one(self.features(x), label)  # type: ignore[attr-defined]
        self._last = None
        return self

    def __repr__(self) -> str:
        return (f"SpamFilter({self.model!r}, rule={self.rule!r}, calibrator={self.calibrator!r}, "
                f"min_per_class={self.min_per_class:g})")


# --- a filter on a stream --------------------------------------------------------------------------


def _share(hits: Bools, among: Bools) -> float:
    """The share of ``among`` (a mask) that are hits; nan when among is empty."""
    return float(np.mean(hits[among])) if among.any() else math.nan


def _finite_order(values: Floats) -> Floats:
    """Log-odds with +-inf replaced by finite values beyond the others (same order, for AUC)."""
    finite = values[np.isfinite(values)]
    reach = (np.abs(finite).max() if len(finite) else 0.0) + 1.0
    return np.clip(values, -reach, reach)


@dataclass
class FilterReport:
    """Classify-then-learn results of a SpamFilter over a stream, message by message.

    Per message: ``y_true``; ``verdicts`` ("ham"/"unsure"/"spam", the filter's); ``scores``
    (the rule's); ``log_odds``, ``model_predictions`` (the model's argmax, as
    ``predict_one``: None while untrained, the first-learned class on an exact tie) and
    ``model_probability`` = P(spam|x) of the model; ``probability`` (calibrated when the
    filter has a calibrator, else equal to model_probability). ``curve`` holds the running
    metrics of the model's argmax (for :func:`streamnb.plots.learning_curve`).
    """

    positive: Label
    negative: Label
    y_true: Objects = field(repr=False)
    verdicts: Objects = field(repr=False)
    scores: Floats = field(repr=False)
    log_odds: Floats = field(repr=False)
    model_predictions: Objects = field(repr=False)
    model_probability: Floats = field(repr=False)
    probability: Floats = field(repr=False)
    curve: list[CurvePoint] = field(repr=False)
    seconds: float = 0.0

    @property
    def n(self) -> int:
        return len(self.y_true)

    def _is_positive(self) -> Bools:
        return np.array([y == self.positive for y in self.y_true], dtype=bool)

    # -- the model's own (argmax) decisions -----------------------------------------------------
    @property
    def model_accuracy(self) -> float:
        return accuracy(list(self.y_true), list(self.model_predictions))

    @property
    def model_false_positive_rate(self) -> float:
        """Negatives the model's argmax calls positive, over all negatives."""
        return false_positive_rate(list(self.y_true), list(self.model_predictions), self.positive)

    @property
    def model_false_negative_rate(self) -> float:
        """Positives the model's argmax does not call positive, over all positives."""
        return false_negative_rate(list(self.y_true), list(self.model_predictions), self.positive)

    @property
    def one_minus_auc_percent(self) -> float:
        """(1 - ROC AUC) in percent, messages ranked by the model's log-odds.

        Ranking by P(spam|x) instead (as ``progressive_evaluate`` does) ties every message
        whose posterior has rounded to exactly 0 or 1, and loses part of the order.
        """
        return one_minus_auc_percent(list(self.y_true), _finite_order(self.log_odds), self.positive)

    @property
    def ece_model(self) -> float:
        """Expected calibration error (10 bins) of the model's P(spam|x)."""
        return expected_calibration_error(list(self.y_true), self.model_probability, self.positive)

    @property
    def ece_calibrated(self) -> float:
        """Expected calibration error (10 bins) of the filter's probability."""
        return expected_calibration_error(list(self.y_true), self.probability, self.positive)

    @property
    def log_loss_model(self) -> float:
        return log_loss(list(self.y_true), self.model_probability, self.positive)

    @property
    def log_loss_calibrated(self) -> float:
        return log_loss(list(self.y_true), self.probability, self.positive)

    # -- the filter's verdicts --------------------------------------------------------------------
    @property
    def unsure_rate(self) -> float:
        """Share of messages with verdict "unsure"."""
        return float(np.mean(self.verdicts == UNSURE))

    @property
    def decided_accuracy(self) -> float:
        """Among messages with verdict ham or spam, the share whose verdict is right."""
        decided = self.verdicts != UNSURE
        if not decided.any():
            return math.nan
        right = (self.verdicts == SPAM) == self._is_positive()
        return float(np.mean(right[decided]))

    @property
    def verdict_false_positive_rate(self) -> float:
        """Negatives with verdict spam, over all negatives (unsure is not a false positive)."""
        return _share(self.verdicts == SPAM, ~self._is_positive())

    @property
    def verdict_false_negative_rate(self) -> float:
        """Positives with verdict ham, over all positives (unsure is not a false negative)."""
        return _share(self.verdicts == HAM, self._is_positive())

    def unsure_rate_of(self, label: Hashable) -> float:
        """Share of the messages of one true class with verdict unsure."""
        return _share(self.verdicts == UNSURE, np.array([y == label for y in self.y_true], dtype=bool))

    def summary(self) -> str:
        """A few lines for people: the model's argmax, calibration, the filter's verdicts."""
        return "\n".join([
            f"{self.n} messages, {self.seconds:.1f} s",
            f"model argmax: accuracy {self.model_accuracy:.4%}  FPR {self.model_false_positive_rate:.4%}  "
            f"FNR {self.model_false_negative_rate:.4%}  (1-AUC)% {self.one_minus_auc_percent:.4f} (ranked by log-odds)",
            f"calibration: ECE {self.ece_model:.4f} -> {self.ece_calibrated:.4f}  "
            f"log loss {self.log_loss_model:.4f} -> {self.log_loss_calibrated:.4f}",
            f"verdicts: unsure {self.unsure_rate:.2%} (ham {self.unsure_rate_of(self.negative):.2%}, "
            f"spam {self.unsure_rate_of(self.positive):.2%})  accuracy among decided {self.decided_accuracy:.4%}  "
            f"FPR {self.verdict_false_positive_rate:.4%}  FNR {self.verdict_false_negative_rate:.4%}",
        ])


def progressive_filter(spam_filter: SpamFilter, stream: Iterable[tuple[Any, Label]], *,
                       progress: bool = False, total: int | None = None,
                       curve: Literal["log"] | int | None = "log") -> FilterReport:
    """Classify each (x, label) of the stream with the filter as it stands, then learn it.

    Every message is learned (train-on-everything). Each message is tokenized once and
    scored once: classify and learn share the features and the log-odds. The filter is
    changed in place.
    """
    running = RunningMetrics(spam_filter.positive, curve)
    y_true: list[Label] = []
    verdicts: list[str] = []
    scores: list[float] = []
    log_odds: list[float] = []
    predictions: list[Hashable | None] = []
    probability: list[float] = []
    model_probability: list[float] = []

    def step(x: Any, y: Label) -> None:
        features = spam_filter.features(x)
        verdict = spam_filter.classify(features, explain=False)
        z = verdict.log_odds
        p_model = spam_filter.model_probability(z)  # 1 or 0 while one class is learned, whatever z's sign
        if p_model == 0.5:  # untrained, or a tie (to rounding): the model's own rule decides
            predicted = spam_filter.model.predict_one(features)
        else:
            predicted = spam_filter.positive if p_model > 0.5 else spam_filter.negative
        spam_filter.learn(features, y)
        running.update(y, predicted, p_model)
        model_probability.append(p_model)
        predictions.append(predicted)
        y_true.append(y)
        verdicts.append(verdict.label)
        scores.append(verdict.score)
        log_odds.append(z)
        probability.append(verdict.probability)

    seconds = prequential(stream, step, progress=progress, total=total, label="filter")
    running.checkpoint()
    labels = _objects(y_true)
    z_array = np.asarray(log_odds, dtype=float)
    return FilterReport(
        positive=spam_filter.positive, negative=spam_filter.negative, y_true=labels,
        verdicts=np.asarray(verdicts, dtype=object), scores=np.asarray(scores, dtype=float),
        log_odds=z_array, model_predictions=_objects(predictions),
        model_probability=np.asarray(model_probability, dtype=float),
        probability=np.asarray(probability, dtype=float),
        curve=list(running.curve), seconds=seconds)
