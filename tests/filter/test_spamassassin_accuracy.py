"""The spam filter on the real SpamAssassin stream (issues 3 and 15, corpus part).

Skipped unless STREAMNB_SPAMASSASSIN points at the corpus (a folder or an archive).

Issues 15 and 26: the default filter, ``SpamFilter()`` (the Fusion of EmailNB and logistic
regression on byte 4-grams, with its LogOddsRule: what the ``streamnb`` command uses),
prequential on the 6,046 messages in Date order (``streamnb evaluate --corpus PATH`` prints
the same figures). Goals: ham called spam <= 0.20%, spam called ham <= 0.60%, unsure <= 5%,
(1-AUC)% <= 0.06. Measured: 0.19% (8 of 4,150 ham), 0.16% (3 of 1,896 spam), 4.86% unsure
and (1-AUC)% 0.0536. The fusion's settings and cutoffs were chosen on this stream and on the
first 40,000 messages of trec07p-dev, so these are in-sample figures; the same settings on
the file order and three shuffles are in ``streamnb evaluate``'s table of orders (the
shuffles rank at 0.0383, 0.0411 and 0.0389). EmailNB alone, the default before, measured
0.17% / 0.47% / 4.78% / 0.0595 here (CHANGELOG.md).

Issue 3, below: EmailPipeline, the earlier recommended setting (it cannot unlearn).

One prequential run (predict each message, then learn it) of ``EmailPipeline()`` over the
6,046 messages in Date-header order: EmailTokenizer with word pairs, EmailTfidf (online
TF-IDF, length-normalised per field) and MultinomialNB(alpha=0.03, mu=300,
class_prior="uniform") (Dirichlet smoothing toward the pooled distribution). alpha, mu and
STRICT_CUTOFF were all chosen on this same stream, so the figures below are in-sample: they
say what the code does on this data, not what a filter would get on another stream.

What is asserted, and why. Issue 3 asks for accuracy >= 99.0% with a false-positive rate
(ham marked spam) <= 0.3%. No multinomial or Bernoulli setting we tried reaches both at one
operating point on this stream (benchmarks/email_pipeline.py has the table of variants;
benchmarks/accuracy_variants.py reproduces it). So each target is asserted where it is met,
with the measured figure next to it, and the combined target is an xfail(strict=True) test:
it documents the gap, and the day a change reaches the target it fails as XPASS, so that
the assertion is then made for real. Why it is out of reach (benchmarks/accuracy_errors.py):
32 of the 33 hams marked spam are the first message from their sender, and 14 of them (the
first ham, after 158 spams, and a wave of newsletters) come before 100 hams have been
learned, already more than the 12 that FPR 0.3% allows.

- model's own decision (argmax, i.e. P(spam|x) > 1/2): accuracy >= 0.991 (measured 99.21%,
  48 errors), FPR <= 0.85% (measured 0.80%, 33 of 4,150 ham), FNR <= 0.85% (measured 0.79%,
  15 of 1,896 spam). The additive model EmailPipeline had before (alpha 0.003, no mu)
  measured 99.04%, FPR 1.01% (42 ham), FNR 0.84% (16 spam);
- decision biased against false positives, spam iff P(spam|x) >= EmailPipeline.STRICT_CUTOFF
  = 1 - 1e-7 (log-odds >= 16.1): FPR <= 0.3% (measured 0.27%, 11 ham), accuracy >= 98.3%
  (measured 98.36%; the additive model gave 98.49% at its cutoff 1 - 1e-8, so Dirichlet
  smoothing gains at the default decision, not at this end). That cutoff was read off this
  same stream (see the benchmark's cutoff table), so it is a documented operating point, not
  an out-of-sample figure;
- river's BagOfWords + MultinomialNB on the same raw messages (measured 95.40%, FPR 3.23%)
  is below on accuracy and above on FPR.

The run is deterministic (fixed order, no randomness), so the margins, small as they are
(the accuracy bound is 6 messages below the measured 99.21%, the default FPR and FNR bounds
2 hams and 1 spam above the measured 33 and 15, the strict cutoff's bounds 1 ham above its
11 and 3 messages below its 98.36%), are stable for
given code and data; a change that moves them is a change in behaviour to look at. About
20 s in all.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from benchmarks.email_pipeline import EmailPipeline
from streamnb.filter.datasets import load_spamassassin
from streamnb.filter.decision import SpamFilter, progressive_filter
from streamnb.filter.evaluate import progressive_evaluate

CORPUS = os.environ.get("STREAMNB_SPAMASSASSIN")
pytestmark = pytest.mark.skipif(
    not CORPUS, reason="STREAMNB_SPAMASSASSIN is not set (point it at the SpamAssassin corpus to run)"
)

TARGET_ACCURACY = 0.990
TARGET_FPR = 0.003


class LogOdds:
    """A model wrapper recording the log-odds log P(spam|x) - log P(ham|x) of each prediction
    (P(spam|x) itself rounds to 1.0 for confident messages and cannot rank them)."""

    def __init__(self, model):
        self.model = model
        self.log_odds: list[float] = []

    def predict_proba_one(self, x):
        log_proba = self.model.predict_log_proba_one(x)
        if log_proba:
            self.log_odds.append(log_proba.get("spam", -math.inf) - log_proba.get("ham", -math.inf))
        else:
            self.log_odds.append(0.0)
        return {label: math.exp(value) for label, value in log_proba.items()}

    def learn_one(self, x, y):
        self.model.learn_one(x, y)


@pytest.fixture(scope="module")
def messages():
    loaded = load_spamassassin(CORPUS, order="date")
    assert len(loaded) == 6046
    return loaded


@pytest.fixture(scope="module")
def default_filter(messages):
    return progressive_filter(SpamFilter(), [(m.raw, m.label) for m in messages], curve=None)


def test_the_default_filter_meets_the_verdict_goals(default_filter):
    report = default_filter
    ham = int((report.y_true == "ham").sum())
    spam = report.n - ham
    assert (report.n, ham) == (6046, 4150)
    ham_as_spam = int(((report.verdicts == "spam") & (report.y_true == "ham")).sum())
    spam_as_ham = int(((report.verdicts == "ham") & (report.y_true == "spam")).sum())
    unsure = int((report.verdicts == "unsure").sum())
    assert ham_as_spam <= 0.0020 * ham, ham_as_spam  # measured 8 (0.19%); the goal allows 8.3
    assert spam_as_ham <= 0.0060 * spam, spam_as_ham  # measured 3 (0.16%); the goal allows 11.4
    assert unsure <= 0.05 * report.n, unsure  # measured 294 (4.86%); the goal allows 302.3
    assert report.verdict_false_positive_rate == ham_as_spam / ham


def test_the_default_filter_meets_the_ranking_goal(default_filter):
    """Measured 0.0536 (EmailNB alone: 0.0595)."""
    assert default_filter.one_minus_auc_percent <= 0.06, default_filter.one_minus_auc_percent


@pytest.fixture(scope="module")
def run(messages):
    recorder = LogOdds(EmailPipeline())
    report = progressive_evaluate(recorder, ((m.raw, m.label) for m in messages), curve=None)
    return report, np.array(recorder.log_odds)


def rates(is_spam: np.ndarray, flagged: np.ndarray) -> tuple[float, float]:
    """(accuracy, false-positive rate) of a spam/not-spam decision."""
    accuracy = float((flagged == is_spam).mean())
    fpr = float((flagged & ~is_spam).sum() / (~is_spam).sum())
    return accuracy, fpr


def test_default_decision_reaches_the_accuracy_target(run):
    report, _ = run
    assert report.n == 6046 and report.counts.fp + report.counts.tn == 4150
    assert report.accuracy >= 0.991, report.summary()  # the target is 0.990
    assert report.false_positive_rate <= 0.0085, report.summary()
    assert report.false_negative_rate <= 0.0085, report.summary()


def test_strict_cutoff_reaches_the_false_positive_target(run):
    report, _ = run
    is_spam = np.array([y == "spam" for y in report.y_true])
    flagged = report.scores >= EmailPipeline.STRICT_CUTOFF
    accuracy, fpr = rates(is_spam, flagged)
    assert fpr <= TARGET_FPR, (accuracy, fpr)
    assert accuracy >= 0.983, (accuracy, fpr)


def test_log_odds_agree_with_the_reported_probabilities(run):
    report, log_odds = run
    finite = np.isfinite(log_odds) & (np.abs(log_odds) < 30)
    expected = 1.0 / (1.0 + np.exp(-log_odds[finite]))
    assert np.allclose(report.scores[finite], expected, rtol=1e-9, atol=1e-12)


@pytest.mark.xfail(strict=True, reason="no cutoff gives accuracy >= 99.0% with FPR <= 0.3% on the Date-ordered "
                                       "stream (best: 98.46% at 12 ham marked spam): 14 first-of-sender hams come "
                                       "before 100 hams are learned; see benchmarks/email_pipeline.py")
def test_both_targets_at_one_operating_point(run):
    report, log_odds = run
    is_spam = np.array([y == "spam" for y in report.y_true])
    reached = [rates(is_spam, log_odds >= cutoff) for cutoff in np.unique(log_odds)]
    reached.append(rates(is_spam, log_odds > np.inf))  # nothing marked spam
    assert any(acc >= TARGET_ACCURACY and fpr <= TARGET_FPR for acc, fpr in reached)


def test_river_bag_of_words_is_below(run, messages):
    feature_extraction = pytest.importorskip("river.feature_extraction")
    naive_bayes = pytest.importorskip("river.naive_bayes")
    bow = feature_extraction.BagOfWords()
    model = naive_bayes.MultinomialNB(alpha=1.0)

    class RiverText:
        """river on the raw message decoded as Latin-1 (every byte becomes a character)."""

        def predict_proba_one(self, raw):
            return model.predict_proba_one(bow.transform_one(raw.decode("latin-1")))

        def learn_one(self, raw, y):
            model.learn_one(bow.transform_one(raw.decode("latin-1")), y)

    river = progressive_evaluate(RiverText(), ((m.raw, m.label) for m in messages), curve=None)
    ours, _ = run
    assert river.accuracy < ours.accuracy - 0.02, (river.accuracy, ours.accuracy)
    assert river.false_positive_rate > ours.false_positive_rate, (river.false_positive_rate, ours.false_positive_rate)
