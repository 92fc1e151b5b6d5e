"""The spam filter: a model, a decision rule and an optional calibrator, and its verdicts.

:class:`SpamFilter` is a model + a rule (:mod:`streamnb.filter.rules`) + an optional calibrator
(:mod:`streamnb.filter.calibrate`) + a minimum number of learned messages per class before any
verdict other than "unsure". ``classify(x) -> Verdict`` and ``learn(x, label)``, one
tokenization per message.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from ..models.values import Document, FeatureValues
    from ..validate import Label
    from .calibrate import Calibrator

from ..errors import InvalidInputError, InvalidTypeError, describe
from ..validate import (
    check_calibrator,
    check_distinct_labels,
    check_filter_model,
    check_filter_tokenizer,
    check_int,
    check_nonnegative,
)
from .asking import LabelRequests, check_budget, disagree
from .base import HAM, SPAM, UNSURE, FilterModel, Verdicts
from .evidence import Evidence
from .rules import MIN_PER_CLASS, DecisionRule, LogOddsRule, model_posterior

__all__ = ["Verdict", "SpamFilter"]


class Verdict(NamedTuple):
    """A filter's answer for one message.

    label: "ham", "unsure" or "spam". score: the rule's score from 0 to 1, for display (what
    ChiSquareRule and PosteriorRule compare with their cutoffs: the chi-square indicator I,
    P(spam|x); LogOddsRule decides on the log-odds and shows them on this scale).
    probability: P(spam|x), calibrated when the filter has a calibrator. evidence: the
    strongest reasons (see the rule's ``explain``). log_odds: the model's log P(spam|x) -
    log P(ham|x); while the model knows a single class, that class against one that learned
    nothing (``SpamFilter.log_odds``); 0 while it knows none. ask: the filter wants this
    message's label (``classify``'s ``budget``: :mod:`streamnb.filter.asking`).
    """

    label: Verdicts
    score: float
    probability: float
    evidence: list[Evidence]
    log_odds: float
    ask: bool = False


class SpamFilter:
    """A model, a decision rule and an optional calibrator, as one spam filter.

    ``SpamFilter()`` is the recommended filter: :class:`~streamnb.models.Fusion` (naive Bayes
    on field-weighted email features and logistic regression on byte 4-grams, fused online;
    raw messages in) with :class:`~streamnb.filter.rules.LogOddsRule` verdicts at the fusion's
    cutoffs. Without a rule, the rule is ``LogOddsRule.for_model(model)``: an EmailNB keeps the
    cutoffs it had.

    ``classify(x)`` tokenizes x once (a mapping is used as is; a raw message goes as it is
    to a streamnb model with a tokenizer, which reads it itself, in the core for EmailNB;
    otherwise ``tokenizer``, or the model's own tokenizer, makes the mapping), asks the
    model for log P(spam|x) - log P(ham|x), turns it into a probability (the calibrator's,
    else the model's posterior) and lets the rule decide. Until the model has learned
    ``min_per_class`` messages of each class (default the LogOddsRule's
    :data:`~streamnb.filter.rules.MIN_PER_CLASS`, 1: a comparison needs both, and the rule is
    cautious on its own while a class is little known; other rules may want 10) the verdict
    is "unsure".

    ``learn(x, label)`` is prequential: the calibrator is updated with the log-odds the
    model gave x *before* learning it (reused from ``classify`` when x is the message just
    classified, so a message is tokenized and scored once), then the model learns x.
    The calibrator neither answers nor learns until the model has learned both classes
    (before that the log-odds compare nothing (0) or a learned class with one that learned
    nothing: no comparison of the two classes to calibrate).

    Parameters
    ----------
    model : FilterModel or None
        The model: anything with ``learn_one``, ``predict_log_proba_one`` and ``class_counts``
        (``unlearn_one`` too, for :meth:`unlearn`); None for a new :class:`~streamnb.models.Fusion`.
    rule : DecisionRule or None
        How a score becomes a verdict; None for ``LogOddsRule.for_model(model)``.
    calibrator : Calibrator or None
        Maps log-odds to P(spam) (``update(score, outcome)`` and ``transform(score)``).
    min_per_class : float
        Messages of each class the model learns before a verdict is other than "unsure" (>= 0).
    tokenizer : callable or None
        Message -> mapping feature -> value, for a model that does not read raw messages.
    positive, negative : label
        The two classes (different).
    evidence_k : int
        How many features a verdict's evidence names (>= 0; 0 for none).

    Raises
    ------
    InvalidParameterError
        For a model or calibrator without what the filter calls, or a value out of its range.
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
                 calibrator: Calibrator | None = None, *, min_per_class: float = MIN_PER_CLASS["logodds"],
                 tokenizer: Callable[[Any], FeatureValues] | None = None, positive: Label = SPAM,
                 negative: Label = HAM, evidence_k: int = 10) -> None:
        if model is None:
            from ..models import Fusion  # here: decision rules need no mail reader

            model = Fusion()
        check_filter_model(model)
        check_calibrator(calibrator)
        min_per_class = check_nonnegative("min_per_class", min_per_class)
        check_filter_tokenizer(tokenizer)
        evidence_k = check_int("evidence_k", evidence_k, 0)
        check_distinct_labels(positive, negative)
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
        self._requests = LabelRequests()

    # -- pieces ---------------------------------------------------------------------------------
    def features(self, x: Any) -> Document:
        """x as the model reads it: a mapping as is; a raw message as is when the model
        tokenizes it itself (a streamnb naive Bayes model with a tokenizer, and no filter
        tokenizer: the core reads it once, and keeps it for the learning that follows);
        otherwise the tokenizer's mapping feature -> count.

        Parameters
        ----------
        x : mapping, bytes or str
            A message: a mapping feature -> value, or a raw message.

        Returns
        -------
        mapping, bytes or str
            What the model reads.

        Raises
        ------
        InvalidTypeError
            For a raw message when neither the filter nor the model has a tokenizer.
        """
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

        Parameters
        ----------
        features : mapping, bytes or str
            A message as the model reads it (:meth:`features`).

        Returns
        -------
        float
            log P(positive|x) - log P(negative|x).
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

        Parameters
        ----------
        log_odds : float
            The model's log-odds of a message.

        Returns
        -------
        float
            P(positive|x), calibrated when the calibrator answers.
        """
        calibrator = self._calibrating(log_odds)
        if calibrator is not None:
            return float(calibrator.transform(log_odds))
        return self.model_probability(log_odds)

    def model_probability(self, log_odds: float) -> float:
        """The model's P(spam|x) for the filter's log-odds (see
        :func:`~streamnb.filter.rules.model_posterior`).

        Parameters
        ----------
        log_odds
            As for :meth:`probability`.
        """
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
    def classify(self, x: Any, *, explain: bool = True, budget: tuple[int, int] | None = None) -> Verdict:
        """The verdict for one message, from the model as it stands (nothing is learned; with
        a budget, the message's |log-odds| joins the recent ones the label requests are drawn
        from, which the filter keeps in memory only).

        ``explain=False`` leaves the evidence out (a stream evaluation has no use for it).
        ``budget=(labels_left, messages_left)``: the labels the user will still give and the
        messages still to come, this one included (TREC's active task); the verdict's
        ``ask`` says whether this message's label is worth one of them
        (:class:`~streamnb.filter.asking.LabelRequests`: the quota spent at the pace of the
        stream on the messages the filter is least sure of, or whose two parts disagree).
        Without a budget, ``ask`` says whether the message is worth a label at all: its
        verdict is "unsure", or the two parts of a fusion disagree while its logistic
        regression is sure.

        Parameters
        ----------
        x : mapping, bytes or str
            A message: a mapping feature -> value, or a raw message.
        explain : bool
            Give the verdict's evidence (the ``evidence_k`` strongest features).
        budget : (int, int) or None
            (labels_left, messages_left): labels_left >= 0, messages_left >= 1.

        Returns
        -------
        Verdict
            The label ("spam", "ham" or "unsure"), the rule's score, the probability, the
            evidence, the log-odds and whether the filter asks for the label.

        Raises
        ------
        InvalidInputError
            For a budget that is not two such ints (nothing is classified).
        """
        if budget is not None:
            budget = check_budget(budget)
        features = self.features(x)
        z = self.log_odds(features)
        self._last = (x, dict(x) if isinstance(x, Mapping) else None, features, z, self.model.class_counts)
        probability = self.probability(z)
        label, score = self.rule.judge(self.model, features, z, probability, self.positive, self.negative)
        if not self.ready:
            label = UNSURE
        explained: list[Evidence] = []
        if explain and self.evidence_k and self._knows_both():
            explained = self.rule.explain(self.model, features, self.evidence_k, self.positive, self.negative)
        part_log_odds = getattr(self.model, "part_log_odds", None)
        parts = part_log_odds(features) if part_log_odds is not None and self._knows_both() else None
        if budget is None:
            ask = label == UNSURE or disagree(parts)
        else:
            ask = self._requests.ask(z, budget, parts)
        return Verdict(label, float(score), probability, explained, z, ask)

    def learn(self, x: Any, label: Label) -> "SpamFilter":
        """Learn one message of class label (positive or negative); see the class docstring.

        Parameters
        ----------
        x : mapping, bytes or str
            A message.
        label : label
            Its class: ``positive`` or ``negative``.

        Returns
        -------
        SpamFilter
            The filter itself.

        Raises
        ------
        InvalidInputError
            For a label that is neither class.
        """
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

        Right after ``learn(x, label)``, every score is back to what it was, to rounding:
        naive Bayes subtracts its counts, and the default model's logistic regression and
        stacker undo the steps they kept for the message (:class:`~streamnb.models.Fusion`,
        ``records``). With other messages learned in between, naive Bayes is still exact,
        and for a message among the model's newest ``window`` logistic regression replays
        the lessons after it (exact; the stacker nearly so); an older one takes back its own
        steps, approximately (docs/design.md, section 3). To move a message to the other
        class, learn it as that class: a model with a ledger moves it in one call.
        The calibrator keeps what it saw: it holds no per-message record to take back.

        Parameters
        ----------
        x : mapping, bytes or str
            A message learned earlier.
        label : label
            The class it was learned as: ``positive`` or ``negative``.

        Returns
        -------
        SpamFilter
            The filter itself, its model without the message.

        Raises
        ------
        AttributeError
            For a model without ``unlearn_one``.
        InvalidInputError
            For a label that is neither class.
        """
        if label != self.positive and label != self.negative:
            raise InvalidInputError(f"label must be {self.positive!r} or {self.negative!r}, got {describe(label)}")
        # unlearn_one is an optional member of FilterModel, which mypy cannot see: a model
        # without it raises AttributeError here, as documented
        self.model.unlearn_one(self.features(x), label)  # type: ignore[attr-defined]
        self._last = None
        return self

    def observe(self, x: Any, verdict: Verdict | None = None) -> "SpamFilter":
        """The message x was delivered with ``verdict`` and no label has come (yet).

        What the filter makes of it is its model's ``observe_one`` (a model without one
        learns nothing from it). The default :class:`~streamnb.models.Fusion` counts it in
        the share of mail that comes labelled, leans on its logistic regression as that
        share falls (when that part has been the more often right of the two), and lets its
        logistic regression learn x provisionally as the class its own log-odds give it,
        guarded and class-balanced (src/feedback.rs); the label, when it comes
        (:meth:`learn`), replaces that lesson exactly. Observing a message learned or
        observed already changes nothing; the calibrator learns nothing from it.

        Parameters
        ----------
        x : mapping, bytes or str
            The message.
        verdict : Verdict or None
            The verdict it was delivered with (what :meth:`classify` gave it); kept with the
            message as the class it was delivered as.

        Returns
        -------
        SpamFilter
            This filter (calls chain).

        Raises
        ------
        InvalidTypeError
            For a verdict that is not a :class:`Verdict`.
        """
        if verdict is not None and not isinstance(verdict, Verdict):
            raise InvalidTypeError(f"verdict must be a Verdict (what classify returns), got {describe(verdict)}")
        observe_one = getattr(self.model, "observe_one", None)
        if observe_one is None:
            return self
        last = self._last
        features = last[2] if last is not None and last[0] is x and (last[1] is None or last[1] == x) \
            else self.features(x)
        delivered = {SPAM: self.positive, HAM: self.negative}.get(verdict.label) if verdict is not None else None
        observe_one(features, delivered)
        self._last = None
        return self

    def __repr__(self) -> str:
        return (f"SpamFilter({self.model!r}, rule={self.rule!r}, calibrator={self.calibrator!r}, "
                f"min_per_class={self.min_per_class:g})")

