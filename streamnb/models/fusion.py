"""Naive Bayes and logistic regression together: NB's fast start, the discriminative asymptote.

Naive Bayes reads its weights off counts: a few dozen messages make a usable filter, and
every count stays exact (unlearn, merge, forget). Logistic regression fits its weights to
the labels: it starts slowly but keeps improving long after naive Bayes has levelled off
(Ng & Jordan 2002). :class:`Fusion` runs both on every message and weighs their log-odds
with a third, tiny logistic regression that learns online which of the two to trust (the
formula, and why naive Bayes' log-odds are scaled and clipped first: src/fusion.rs):

    z = a * clip(z_nb / nb_scale, -nb_clip, nb_clip) + b * z_lr + c

``Fusion()`` is the spam filter's default model: :class:`~streamnb.models.EmailNB`
(field-weighted email features) and :class:`~streamnb.LogisticRegression` on
:class:`~streamnb.ByteNgrams` of the first 3,000 bytes, hashed into 2^18 buckets.

A Fusion is a binary model: the first class learned is class 0, the second class 1, and z
is log P(class 1 | x) - log P(class 0 | x); a third class is refused.

What each operation does to each part:

- ``learn_one``: the stacker takes one step on the two log-odds the parts gave the message
  before learning it, then both parts learn it.
- ``unlearn_one``: naive Bayes unlearns exactly (its counts are those of a model that never
  saw the message); logistic regression and the stacker take back the steps they took on
  it, kept per message (``records``, :mod:`streamnb.steps`). For a message among the newest
  ``window`` steps, by replay (src/replay.rs): the steps after it undone, its own, and the
  later ones taken again, so logistic regression is the model that never saw it, to
  rounding, and the stacker nearly so (its later inputs from naive Bayes are kept as they
  were). An older
  message has its own steps undone: exact right after the learn, but the steps after it
  keep what they did because of it. A message whose steps are no longer kept takes the
  reverse steps (approximate: see :class:`~streamnb.LogisticRegression`).
- ``merge``: naive Bayes' counts add up exactly; logistic regression and the stacker mix
  their parameters, each side weighing by the messages it learned; the kept steps of both
  stay, and the window empties (no replay crosses the mixing).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .. import _core, persist
from ..errors import IncompatibleModelsError, InvalidInputError, ModelFormatError, describe
from ..ledger import message_fingerprint
from ..persist import register_model
from ..steps import FUSION_SUFFIXES, MessageSteps, StepRecords
from ..steps import restore as restore_records
from ..validate import (
    Label,
    check_count,
    check_finite_nonnegative,
    check_finite_pair,
    check_finite_positive,
    check_instance,
    check_label,
    check_no_ledger,
    check_positive,
    check_weight,
)
from .base import DiscreteNB
from .logistic import DEFAULT_WINDOW, LogisticRegression
from .values import Contributions, Document, DocumentCounts, LogLinear

if TYPE_CHECKING:
    from ..store import Arrays

#: The fusion's defaults (src/fusion.rs): naive Bayes' log-odds over 10, clipped at +-5 (50
#: nats); the stacker starts at a = 1, b = 0.5 and steps at 0.001 (chosen on the Date-ordered
#: SpamAssassin stream and the first 40,000 messages of trec07p-dev: CHANGELOG.md).
DEFAULT_NB_SCALE = 10.0
DEFAULT_NB_CLIP = 5.0
DEFAULT_LEARNING_RATE = 0.001
DEFAULT_INITIAL_WEIGHTS = (1.0, 0.5)
#: The default logistic regression: AdaGrad at 0.008 on byte 4-grams of the first 3,000
#: bytes, hashed into 2^18 buckets (4 MiB of weights and AdaGrad sums). Smaller rates
#: generalise better once labels stop, larger ones learn a small stream faster: 0.008 is the
#: smallest that keeps the SpamAssassin stream's verdict goals with every label (the figures
#: of each rate: CHANGELOG.md).
DEFAULT_LR_RATE = 0.008
DEFAULT_LR_BUCKETS = 2**18
#: The default naive Bayes keeps at most this many features (memory: about 80 bytes each in
#: the core, 60 in the model file); the cap costs no ranking on the SpamAssassin stream or
#: trec07p-dev, which reach about 0.6 and 3 million uncapped.
DEFAULT_NB_MAX_FEATURES = 500_000
#: The default fusion keeps the steps of the last 10,000 messages learned (about 230 bytes
#: each in memory, 100 in the model file), so that each of
#: them can be unlearned by its own steps, and the documents of the newest 1,000 (the
#: window, ``logistic.DEFAULT_WINDOW``), so that those are unlearned by replay. The command
#: and the service give a model with a ledger as many records as its ledger holds messages
#: (service/cli_common.py), and the default window: about 2.6 MB per user model.
DEFAULT_RECORDS = 10_000
#: The records' arrays in a model file (streamnb.steps)
RECORDS_PREFIX = "records_"
#: The weight of a provisional lesson before its class balance (src/feedback.rs), chosen on
#: trec07p-dev's delay and partial tasks.
DEFAULT_PROVISIONAL_WEIGHT = 0.3


def default_nb() -> DiscreteNB:
    """The spam filter's naive Bayes part: EmailNB with its defaults, capped at 500,000 features."""
    from .email import EmailNB
    from .settings import Pruning

    return EmailNB(pruning=Pruning(max_features=DEFAULT_NB_MAX_FEATURES))


def default_lr() -> LogisticRegression:
    """The spam filter's logistic regression part: byte 4-grams of the first 3,000 bytes."""
    from ..features.ngrams import ByteNgrams

    return LogisticRegression(DEFAULT_LR_RATE, sublinear_tf=False, idf_power=0.0, normalize=False,
                              tokenizer=ByteNgrams(4, 3000), n_buckets=DEFAULT_LR_BUCKETS)


@register_model
class Fusion:
    """A naive Bayes model and a logistic regression, fused online (see the module docstring).

    The verdict cutoffs of :class:`~streamnb.filter.decision.LogOddsRule` for the fused log-odds
    are ``log_odds_cutoffs`` (ham below -2, spam from 3, caution 0.5; chosen with the
    fusion's defaults on the same streams).

    Parameters
    ----------
    nb, lr
        The two parts (default: the spam filter's, ``default_nb()`` and ``default_lr()``).
        Each reads documents its own way (raw messages: each its tokenizer).
    nb_scale, nb_clip
        Naive Bayes' log-odds enter the stacker as clip(z_nb / nb_scale, -nb_clip, nb_clip).
    learning_rate
        The stacker's constant step size.
    initial_weights
        (a, b): the stacker's weights of the two log-odds before it has learned anything.
    records
        Keep the steps logistic regression and the stacker took on each of the last
        ``records`` messages learned or observed (:mod:`streamnb.steps`), so that unlearning
        one of them takes its steps back, and a label that comes for a message observed
        without one replaces its provisional lesson exactly (see the module docstring); None
        keeps none (every message takes the reverse steps, and ``observe_one`` teaches
        nothing). Give a naive Bayes part with a ledger at least as many, so that every
        message it holds is undone by its steps. ``lr`` has no ledger of its own: its core
        keeps these records.
    window
        How many of the newest records keep logistic regression's document too, so that
        unlearning (or moving) one of their messages replays the steps after it (default
        1,000; 0: none). At most ``records``.
    provisional_weight
        w, the weight of a provisional lesson before its class balance (``observe_one``;
        src/feedback.rs); 0 for none.
    """

    #: (ham_log_odds, spam_log_odds, caution) of the default LogOddsRule for this model's log-odds
    log_odds_cutoffs = (-2.0, 3.0, 0.5)

    def __init__(self, nb: DiscreteNB | None = None, lr: LogisticRegression | None = None, *,
                 nb_scale: float = DEFAULT_NB_SCALE, nb_clip: float = DEFAULT_NB_CLIP,
                 learning_rate: float = DEFAULT_LEARNING_RATE,
                 initial_weights: tuple[float, float] = DEFAULT_INITIAL_WEIGHTS,
                 records: int | None = DEFAULT_RECORDS, window: int = DEFAULT_WINDOW,
                 provisional_weight: float = DEFAULT_PROVISIONAL_WEIGHT) -> None:
        self.nb = default_nb() if nb is None else nb
        self.lr = default_lr() if lr is None else lr
        check_instance("nb", self.nb, DiscreteNB, "a naive Bayes model (MultinomialNB, EmailNB ...)")
        check_instance("lr", self.lr, LogisticRegression, "a LogisticRegression")
        check_no_ledger("lr", self.lr, "a Fusion keeps its logistic regression's steps itself (records=...)")
        self.nb_scale = check_finite_positive("nb_scale", nb_scale)
        self.nb_clip = check_finite_positive("nb_clip", nb_clip)
        self.learning_rate = check_finite_positive("learning_rate", learning_rate)
        self.initial_weights = check_finite_pair("initial_weights", initial_weights)
        self.records = check_positive("records", records, integer=True)
        self.window = check_count("window", window)
        self.provisional_weight = check_finite_nonnegative("provisional_weight", provisional_weight)
        self._records: StepRecords | None = None
        if self.records is not None:
            self.lr._core.keep_records(self.records, self.window)
            self._records = StepRecords(self.lr._core)
        self._core = _core.FusionCore(rate=self.learning_rate, scale=self.nb_scale, clip=self.nb_clip,
                                      initial=self.initial_weights)
        self._version = 0  # bumped by every change: a prediction's log-odds serve the learn that follows
        self._last: tuple[object, int, float, float] | None = None
        self._pair_at: tuple[int, tuple[Label, Label] | None] = (-1, None)

    def get_params(self) -> dict[str, Any]:
        return {"nb_scale": self.nb_scale, "nb_clip": self.nb_clip, "learning_rate": self.learning_rate,
                "initial_weights": self.initial_weights, "records": self.records, "window": self.window,
                "provisional_weight": self.provisional_weight}

    def __repr__(self) -> str:
        a, b, c = self.weights
        return f"Fusion({self.nb!r}, {self.lr!r}, weights=({a:.3g}, {b:.3g}, {c:.3g}))"

    def __reduce__(self) -> tuple[Callable[[bytes, Any], Fusion], tuple[bytes, None]]:
        return persist.unpickle, (persist.dumps(self), None)

    @property
    def ledger(self) -> int | None:
        """Naive Bayes' ledger size (the messages it remembers, so a message learned again is a no-op)."""
        return self.nb.ledger

    @property
    def tokenizer(self) -> Any:
        """Naive Bayes' tokenizer (what ``SpamFilter.features`` makes of a message)."""
        return self.nb.tokenizer

    @property
    def weights(self) -> tuple[float, float, float]:
        """(a, b, c): the stacker's weights of naive Bayes' and logistic regression's log-odds, and its bias."""
        a, b, c = self._core.weights()
        return a, b, c

    @property
    def label_coverage(self) -> float:
        """The share of the recent messages that came with a label (src/feedback.rs): 1 while
        every message seen is learned, towards 0 as messages are observed without one (half
        of it after 1,000 of them). Below one in a thousand the log-odds rule asks more of a
        spam verdict (:class:`~streamnb.filter.rules.LogOddsRule`)."""
        return float(self._core.coverage)

    # -- the two log-odds --------------------------------------------------------------
    @property
    def classes(self) -> list[Label]:
        """Classes learned, in the order they first appeared (class 0, then class 1)."""
        return self.nb.classes

    def _pair(self) -> tuple[Label, Label] | None:
        """(class 0, class 1) once both are known (read once per change of the model)."""
        if self._pair_at[0] != self._version:
            classes = self.classes
            self._pair_at = (self._version, (classes[0], classes[1]) if len(classes) == 2 else None)
        return self._pair_at[1]

    @staticmethod
    def _odds(log_proba: Mapping[Label, float], pair: tuple[Label, Label]) -> float:
        if pair[0] in log_proba and pair[1] in log_proba:
            return float(log_proba[pair[1]] - log_proba[pair[0]])
        return 0.0  # a part that has not learned both classes says nothing

    def part_log_odds(self, x: Document) -> tuple[float, float]:
        """(z_nb, z_lr): each part's log P(class 1 | x) - log P(class 0 | x)."""
        pair = self._pair()
        if pair is None:
            return 0.0, 0.0
        last = self._last
        if last is not None and last[0] is x and last[1] == self._version:
            return last[2], last[3]
        z_nb = self._odds(self.nb.predict_log_proba_one(x), pair)
        z_lr = self._odds(self.lr.predict_log_proba_one(x), pair)
        if isinstance(x, (str, bytes)):  # immutable: the same object is the same message
            self._last = (x, self._version, z_nb, z_lr)
        return z_nb, z_lr

    def log_odds_one(self, x: Document) -> float:
        """The fused log P(class 1 | x) - log P(class 0 | x) (0 before both classes are known)."""
        if self._pair() is None:
            return 0.0
        return self._core.log_odds(*self.part_log_odds(x))

    # -- prediction -----------------------------------------------------------------------
    def predict_log_proba_one(self, x: Document) -> dict[Label, float]:
        """log P(c | x): the fused one once both classes are known, else naive Bayes' ({} untrained)."""
        pair = self._pair()
        if pair is None:
            return self.nb.predict_log_proba_one(x)
        z = self.log_odds_one(x)
        return {pair[0]: -_log1pexp(z), pair[1]: -_log1pexp(-z)}

    def predict_proba_one(self, x: Document) -> dict[Label, float]:
        return {label: math.exp(v) for label, v in self.predict_log_proba_one(x).items()}

    def predict_one(self, x: Document) -> Label | None:
        log_proba = self.predict_log_proba_one(x)
        return max(log_proba, key=log_proba.__getitem__) if log_proba else None

    def predict_many(self, X: Iterable[Document]) -> list[Label | None]:
        return [self.predict_one(x) for x in X]

    def predict_proba_many(self, X: Iterable[Document]) -> list[dict[Label, float]]:
        return [self.predict_proba_one(x) for x in X]

    def predict_log_proba_many(self, X: Iterable[Document]) -> list[dict[Label, float]]:
        return [self.predict_log_proba_one(x) for x in X]

    # what SpamFilter reads of its model besides the prediction: naive Bayes' view
    def log_odds_against_uniform_one(self, x: Document, learned: Label) -> float:
        """While one class is known: naive Bayes' comparison of it with a class that learned
        nothing, through the stacker as it starts (logistic regression has nothing to say
        yet), so these first scores rank on the scale of the fused ones that follow."""
        z_nb = float(self.nb.log_odds_against_uniform_one(x, learned))  # type: ignore[attr-defined]
        return self._core.log_odds(z_nb, 0.0)

    def contributions_one(self, x: Document) -> Contributions:
        """Naive Bayes' score of x split by feature (the evidence a verdict shows: byte grams
        hashed into buckets have no readable names)."""
        return self.nb.contributions_one(x)

    def strongest_one(self, x: Document, k: int, positive: Label, negative: Label) -> list[tuple[Hashable, float]]:
        """Naive Bayes' strongest features of x (see :meth:`contributions_one`)."""
        return self.nb.strongest_one(x, k, positive, negative)

    def document_counts(self, x: Document) -> DocumentCounts:
        return self.nb.document_counts(x)

    def log_linear(self) -> LogLinear:
        """Naive Bayes' log-linear view (readable features; ``streamnb inspect`` shows it)."""
        return self.nb.log_linear()

    # -- learning -------------------------------------------------------------------------
    def _learned_classes(self) -> list[Label]:
        """Every class learned: naive Bayes' and those logistic regression still holds after
        naive Bayes hid a class whose last message it unlearned (the stacker's steps were
        taken with it)."""
        return list(dict.fromkeys([*self.classes, *self.lr.classes]))

    def _check_label(self, y: Label) -> Label:
        label = check_label(y)
        classes = self._learned_classes()
        if len(classes) == 2 and label not in classes:
            raise InvalidInputError(f"a Fusion tells two classes apart, {classes[0]!r} and {classes[1]!r}; "
                                    f"got a third, {label!r}")
        return label

    def learn_one(self, x: Document, y: Label, w: float = 1.0) -> "Fusion":
        """The stacker steps on the parts' log-odds of x, then both parts learn x; the steps
        of logistic regression and the stacker are kept (``records``).

        With a ledger in naive Bayes, a message it holds under the same label is skipped by
        all three, and one it holds under another label is moved: first unlearned by all
        three (its kept steps taken back: see ``unlearn_one``), then learned. A message
        observed without a label (``observe_one``) has its provisional lesson taken back
        first: the label replaces it (exactly when no other step came between; the later
        steps otherwise keep what they took from it, at the provisional rate).
        """
        label = self._check_label(y)
        weight = check_weight(w)
        before = self.nb.learned_as(x)
        if before == label:
            return self
        fingerprint = message_fingerprint(self.nb._core, x) if self._records is not None else None
        if before is not None:
            self._unlearn(x, before, weight, fingerprint, moving=True)
        observed = self._observed(fingerprint)
        pair = self._pair()
        if pair is not None:
            z_nb, z_lr = self.part_log_odds(x)
        self.nb.learn_one(x, label, weight)  # first: it checks x (and may refuse it, changing nothing)
        if observed is not None and fingerprint is not None:
            self._core.labelled_later(self.lr._core.take_back_provisional(x, fingerprint))
            self._version += 1
            if pair is not None:  # logistic regression's as it was before the provisional lesson
                z_lr = self._odds(self.lr.predict_log_proba_one(x), pair)
        elif before is None:
            self._core.seen(True)  # a new message, with its label
        self.lr._core.learn_one(x, label, weight, fingerprint)  # kept with its document (records)
        if pair is not None:
            self._core.learn(z_nb, z_lr, label == pair[1], weight, self.lr._core, fingerprint)
        self._version += 1
        return self

    def learned_as(self, x: Document) -> Label | None:
        """The label x was learned as (naive Bayes' ledger holds the fusion's lessons); None
        for a message not learned (observed or not), or when naive Bayes keeps no ledger."""
        return self.nb.learned_as(x)

    def observe_one(self, x: Document, delivered: Label | None = None) -> "Fusion":
        """x was seen without a label (yet): counted in the label coverage, and learned by
        logistic regression alone, provisionally, as the class its log-odds give it, when
        the guards let it (src/feedback.rs). The step is kept, so the label, when it comes
        (``learn_one``), replaces the lesson exactly; ``unlearn_one`` refuses x until then.

        A message learned already, or observed already, changes nothing; so does every
        message while the fusion keeps no records (``records=None``: a provisional lesson
        could not be replaced) or knows no class yet.

        Parameters
        ----------
        x : mapping, str or bytes
            The message.
        delivered : label or None
            The class it was delivered as, kept with it when it takes no lesson (None: the
            class its fused log-odds give it).

        Returns
        -------
        Fusion
            The fusion itself.
        """
        if self._records is None or not self.classes or self.nb.learned_as(x) is not None:
            return self
        fingerprint = message_fingerprint(self.nb._core, x)
        if self._records.get(fingerprint) is not None:
            return self
        pair = self._pair()
        lesson: tuple[Label, float] | None = None
        if pair is None:
            label = self.classes[0]
        else:
            z_nb, z_lr = self.part_log_odds(x)
            provisional = self._core.provisional(z_nb, z_lr, (self.class_counts[pair[0]],
                                                              self.class_counts[pair[1]]), self.provisional_weight)
            if provisional is not None:
                label = pair[int(provisional[0])]
                lesson = (label, provisional[1])
            elif delivered in pair:
                label = delivered
            else:
                label = pair[int(self._core.log_odds(z_nb, z_lr) > 0)]
        self.lr._core.observe(x, fingerprint, self._core.seen(False), lesson, label)
        self._version += 1
        return self

    def _observed(self, fingerprint: bytes | None) -> MessageSteps | None:
        """The record of a message observed without a label and not labelled since, or None."""
        if self._records is None or fingerprint is None:
            return None
        kept = self._records.get(fingerprint)
        return kept if kept is not None and kept.provisional else None

    def unlearn_one(self, x: Document, y: Label, w: float = 1.0) -> "Fusion":
        """Naive Bayes unlearns x exactly; logistic regression and the stacker take back the
        steps they took on it, when kept (by replay among the newest ``window``), else take
        their reverse steps; the account of unlabelled mail takes back what the lesson did
        to it (src/feedback.rs: exact right after the lesson).

        The kept steps of x are those of its learning as y with weight w, or with the weight
        naive Bayes' ledger holds it with. A message whose record says it was observed
        without a label since (a record of its lesson forgotten: ``records`` lessons ago)
        has that provisional lesson taken back too.
        """
        label = check_label(y)
        weight = check_weight(w)
        fingerprint = message_fingerprint(self.nb._core, x) if self._records is not None else None
        self._unlearn(x, label, weight, fingerprint, moving=False)
        return self

    def _unlearn(self, x: Document, label: Label, weight: float, fingerprint: bytes | None, *, moving: bool) -> None:
        """``unlearn_one`` (checked: a label and weight); ``moving``: the message is moved to
        the other class, a lesson that follows at once (the coverage keeps its decay)."""
        if self._observed(fingerprint) is not None and self.nb.learned_as(x) is None:
            # observed since its lesson, if any: only naive Bayes' ledger can say it was learned
            raise InvalidInputError("this message was observed without a label and never learned: nothing to unlearn")
        held = self.nb.learned_as(x) == label
        pair = self._steps_pair()
        if held and fingerprint is not None and self._kept_lesson(fingerprint, label, weight, held):
            # logistic regression and the stacker first: their replay checks every kept step
            # before it changes anything, so a refusal leaves all three parts as they were;
            # naive Bayes' ledger holds x, so its unlearn after cannot refuse
            self._core.unlearn_kept(self.lr._core, x, fingerprint, pair)
            self._version += 1
            self.nb.unlearn_one(x, label, weight)
        else:
            self.nb.unlearn_one(x, label, weight)  # first: refuses a message never learned, changing nothing
            self._version += 1
            self._take_back_steps(x, label, weight, fingerprint, held, pair)
        if not moving:
            self._core.unseen()
        self._version += 1

    def _steps_pair(self) -> tuple[Label, Label] | None:
        """The two classes the stacker's steps were taken under. Logistic regression holds
        both while naive Bayes hides a class whose last message it unlearned, and the kept
        steps of the lessons after it were taken with both."""
        classes = self.lr.classes
        return (classes[0], classes[1]) if len(classes) == 2 else self._pair()

    def _kept_lesson(self, fingerprint: bytes, label: Label, weight: float, held: bool) -> bool:
        """Whether the records keep the steps of x's lesson as ``label`` (``held``: naive
        Bayes' ledger holds x under it, with the weight the steps were taken with)."""
        kept = self._records.get(fingerprint) if self._records is not None else None
        return kept is not None and not kept.provisional and kept.label == label and (kept.weight == weight or held)

    def _take_back_steps(self, x: Document, label: Label, weight: float, fingerprint: bytes | None,
                         held: bool, pair: tuple[Label, Label] | None) -> None:
        """Logistic regression's and the stacker's steps on a lesson x that naive Bayes has
        unlearned: the kept ones taken back (by replay when its document is kept), else the
        reverse steps. ``held``: naive Bayes' ledger held x under ``label`` (and took out
        the weight it held it with); ``pair``: :meth:`_steps_pair` before naive Bayes
        unlearned x."""
        observed = self._observed(fingerprint)
        if observed is not None and fingerprint is not None:
            self._core.labelled_later(self.lr._core.take_back_provisional(x, fingerprint))
        if fingerprint is not None and self._kept_lesson(fingerprint, label, weight, held):
            self._core.unlearn_kept(self.lr._core, x, fingerprint, pair)
            return
        self.lr.unlearn_one(x, label, weight)
        if pair is not None:
            z_nb, z_lr = self.part_log_odds(x)
            self._core.unlearn(z_nb, z_lr, label == pair[1], weight)

    def learn_many(self, X: Iterable[Document], y: Iterable[Label], w: Iterable[float] | None = None) -> "Fusion":
        """``learn_one`` on each message in order (the stacker learns each from the parts as
        they stand just before it, as in a stream). The labels are checked first (a third
        class is refused before anything is learned); a message a part refuses stops the
        batch there, the messages before it learned."""
        documents, labels = list(X), [self._check_label(label) for label in y]
        weights = [1.0] * len(labels) if w is None else [check_weight(v) for v in w]
        if len(documents) != len(labels) or len(weights) != len(labels):
            raise InvalidInputError(f"X has {len(documents)} documents, y {len(labels)} labels and w {len(weights)} "
                                    "weights")
        if len(set(self._learned_classes()) | set(labels)) > 2:
            raise InvalidInputError(f"a Fusion tells two classes apart; this batch would make it "
                                    f"{sorted(map(repr, set(self._learned_classes()) | set(labels)))}")
        for document, label, weight in zip(documents, labels, weights):
            self.learn_one(document, label, weight)
        return self

    def unlearn_many(self, X: Iterable[Document], y: Iterable[Label], w: Iterable[float] | None = None) -> "Fusion":
        """Naive Bayes unlearns the batch at once (all or nothing: a message it refuses
        changes nothing); then logistic regression and the stacker take back each message's
        steps, those learned last first (so that each kept step is undone with the steps
        taken after it undone already), then the others in order."""
        documents, labels = list(X), [check_label(label) for label in y]
        weights = [1.0] * len(labels) if w is None else [check_weight(v) for v in w]
        if len(documents) != len(labels) or len(weights) != len(labels):
            raise InvalidInputError(f"X has {len(documents)} documents, y {len(labels)} labels and w {len(weights)} "
                                    "weights")
        fingerprints: list[bytes | None] = [None] * len(documents)
        order = list(range(len(documents)))
        if self._records is not None:
            fingerprints = [message_fingerprint(self.nb._core, x) for x in documents]
            order = self._records.newest_first([f for f in fingerprints if f is not None])
            if any(self._observed(f) is not None and self.nb.learned_as(x) is None
                   for f, x in zip(fingerprints, documents)):
                raise InvalidInputError("a message of the batch was observed without a label and never learned: "
                                        "nothing to unlearn")
        held = [self.nb.learned_as(x) == label for x, label in zip(documents, labels)]
        pair = self._steps_pair()
        self.nb.unlearn_many(documents, labels, weights)
        self._version += 1
        for row in order:
            self._take_back_steps(documents[row], labels[row], weights[row], fingerprints[row], held[row], pair)
            self._core.unseen()
        self._version += 1
        return self

    def merge(self, other: "Fusion") -> "Fusion":
        """Naive Bayes' counts add up; logistic regression and the stacker mix their parameters.

        This fusion takes other's kept steps, and its window empties: a step kept before the
        merge is undone as it was taken, which the mixing has scaled since (approximate, as
        the reverse step), and none replays across the mixing.
        """
        if type(other) is not type(self):
            raise IncompatibleModelsError(f"cannot merge a {type(other).__name__} into a {type(self).__name__}")
        if other.get_params() != self.get_params():
            raise IncompatibleModelsError(f"cannot merge fusions with other settings: {self.get_params()!r} vs "
                                          f"{other.get_params()!r}")
        classes = set(self._learned_classes()) | set(other._learned_classes())
        if len(classes) > 2:
            raise IncompatibleModelsError(f"the merged fusion would hold three classes or more: "
                                          f"{sorted(map(repr, classes))}")
        self.nb._check_mergeable(other.nb)
        self.lr._check_mergeable(other.lr)
        mine, theirs = sum(self.nb.class_counts.values()), sum(other.nb.class_counts.values())
        swapped = len(self.classes) == 2 and len(other.classes) == 2 and self.classes != other.classes
        self.nb.merge(other.nb)
        self.lr.merge(other.lr)  # its core takes other's records (the fusion's are kept there)
        self._core.mix(other._core, mine, theirs, swapped)
        self._version += 1
        return self

    # -- introspection ----------------------------------------------------------------------
    @property
    def class_counts(self) -> dict[Label, float]:
        """N_c: messages learned per class (naive Bayes' counts)."""
        return self.nb.class_counts

    @property
    def n_learned(self) -> int:
        return self.nb.n_learned

    @property
    def n_features(self) -> int:
        """Features of both parts (logistic regression's: buckets with a weight when hashing)."""
        return self.nb.n_features + self.lr.n_features

    @property
    def nbytes(self) -> int:
        """Bytes both parts hold in the compiled core."""
        return self.nb.nbytes + self.lr.nbytes

    # -- persistence ------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> None:
        persist.save(self, path)

    def _state(self) -> tuple[dict[str, Any], Arrays]:
        nb_info, arrays = persist.part_state(self.nb, "nb_")
        lr_info, lr_arrays = persist.part_state(self.lr, "lr_")
        arrays.update(lr_arrays)
        state = {"params": {**self.get_params(), "initial_weights": list(self.initial_weights)},
                 "parts": {"nb": nb_info, "lr": lr_info}, "weights": list(self.weights),
                 "steps": self._core.steps, "feedback": list(self._core.feedback())}
        if self._records is not None:
            # by logistic regression's classes: naive Bayes hides a class whose last message it
            # unlearned, while the records may still name it
            arrays.update(self._records.arrays(RECORDS_PREFIX, self.lr.classes.index,
                                               max(len(self.lr.classes) - 1, 0), stacker=True))
        return state, arrays

    @classmethod
    def _from_state(cls, state: dict[str, Any], arrays: Arrays) -> "Fusion":
        if not {"params", "parts", "weights", "steps"} <= set(state) <= {"params", "parts", "weights", "steps",
                                                                           "feedback"} \
                or not isinstance(state["parts"], dict):
            raise ModelFormatError(f"state keys {sorted(state)} are not a Fusion's")
        parts = state["parts"]
        records = {RECORDS_PREFIX + suffix for suffix in FUSION_SUFFIXES}
        unknown = sorted(name for name in arrays if not name.startswith(("nb_", "lr_")) and name not in records)
        if unknown:
            raise ModelFormatError(f"arrays {unknown[:5]!r} are not arrays of a Fusion")
        nb = persist.restore_part(parts.get("nb"), arrays, "nb_", DiscreteNB, "Fusion nb part")
        lr = persist.restore_part(parts.get("lr"), arrays, "lr_", LogisticRegression, "Fusion lr part")
        params = state["params"]
        if not isinstance(params, dict):
            raise ModelFormatError("Fusion params must be a mapping")
        model = cls(nb, lr, **{**params, "initial_weights": tuple(params.get("initial_weights", ()))})
        weights, steps = state["weights"], state["steps"]
        if not (isinstance(weights, list) and len(weights) == 3
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in weights)):
            raise ModelFormatError(f"Fusion weights must be three numbers, got {describe(weights)}")
        if not (isinstance(steps, int) and not isinstance(steps, bool) and steps >= 0):
            raise ModelFormatError(f"Fusion steps must be an int >= 0, got {describe(steps)}")
        model._core.load(tuple(float(v) for v in weights), steps)  # type: ignore[arg-type]
        feedback = state.get("feedback", [0.0, 0, 1.0, 1.0])  # a file from before: all mail labelled
        if not (isinstance(feedback, list) and len(feedback) == 4
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in feedback)
                and isinstance(feedback[1], int) and 0 <= feedback[1] < 2**63):
            raise ModelFormatError(f"Fusion feedback must be [unlabelled, clock, wins, wins], got {describe(feedback)}")
        model._core.load_feedback(float(feedback[0]), feedback[1], (float(feedback[2]), float(feedback[3])))
        if model.records is not None:
            restore_records(lr._core, arrays, RECORDS_PREFIX, lr.classes, model.records, model.window,
                          stacker=True, clock=feedback[1])
        elif any(name.startswith(RECORDS_PREFIX) for name in arrays):
            raise ModelFormatError("step record arrays in a Fusion without records")
        return model


def _log1pexp(z: float) -> float:
    """log(1 + e^z) without overflow: -log sigmoid(-z)."""
    return z + math.log1p(math.exp(-z)) if z > 0 else math.log1p(math.exp(z))

