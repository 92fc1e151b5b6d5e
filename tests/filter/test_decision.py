"""Tests of streamnb.decision: chi-square combining, cutoffs, min_per_class, evidence, the filter."""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from streamnb import BernoulliNB, MultinomialNB
from streamnb.errors import InvalidInputError, InvalidParameterError, InvalidTypeError, UnknownClassError
from streamnb.filter.calibrate import IsotonicCalibrator
from streamnb.filter.decision import (
    ArgmaxRule,
    ChiSquareRule,
    Evidence,
    PosteriorRule,
    SpamFilter,
    chi2_sf_even,
    chi_square_indicator,
    evidence,
    fisher_combine,
    log_odds_terms,
    progressive_filter,
    robinson_probabilities,
)
from streamnb.filter.evaluate import progressive_evaluate
from streamnb.models import Pruning, Smoothing
from tests.state import spam_ham_stream


def bag(text: str) -> dict[str, int]:
    return dict(Counter(text.split()))


SPAM_TEXTS = ["cheap pills buy now", "buy cheap watches now", "win money now", "cheap money offer",
              "free money win", "buy pills online"]
HAM_TEXTS = ["meeting notes attached", "lunch meeting tomorrow", "project notes review", "review the draft now",
             "draft attached for review", "lunch tomorrow"]


def trained(model_class=MultinomialNB, **kwargs):
    model = model_class(**kwargs)
    for spam, ham in zip(SPAM_TEXTS, HAM_TEXTS):
        model.learn_one(bag(spam), "spam")
        model.learn_one(bag(ham), "ham")
    return model


# --- the chi-square distribution and Fisher's method -------------------------------------------


@pytest.mark.parametrize("statistic", [0.0, 0.3, 2.0, 10.5, 37.0, 150.0, 700.0, 2000.0])
@pytest.mark.parametrize("dof", [2, 4, 12, 60, 300])
def test_chi2_sf_even_equals_scipy(statistic, dof):
    expected = stats.chi2.sf(statistic, dof)
    got = chi2_sf_even(statistic, dof)
    assert got == pytest.approx(expected, rel=1e-10, abs=1e-300)


def test_chi2_sf_even_closed_forms():
    # dof 2: exp(-x/2); dof 4: exp(-x/2) (1 + x/2).
    assert chi2_sf_even(3.0, 2) == pytest.approx(math.exp(-1.5), rel=1e-14)
    assert chi2_sf_even(3.0, 4) == pytest.approx(math.exp(-1.5) * 2.5, rel=1e-14)


def test_chi2_sf_even_rejects_odd_dof_and_negative_statistic():
    with pytest.raises(InvalidParameterError, match="even"):
        chi2_sf_even(1.0, 3)
    with pytest.raises(InvalidInputError, match=">= 0"):
        chi2_sf_even(-1.0, 4)


@pytest.mark.parametrize("probabilities, robinson", [
    # The three examples printed with Robinson's chiCombined (Linux Journal 107, 2003).
    ([0.9, 0.2, 0.21, 0.89, 0.2, 0.78], 0.572203878688),
    ([0.2, 0.2, 0.01, 0.79, 0.2, 0.58], 0.0594128323345),
    ([0.7, 0.89, 0.71, 0.79, 0.972, 0.68], 0.996012078132),
])
def test_fisher_combine_matches_robinson_and_scipy(probabilities, robinson):
    got = fisher_combine(probabilities)
    assert got == pytest.approx(robinson, abs=1e-11)
    assert got == pytest.approx(stats.combine_pvalues(probabilities, method="fisher").pvalue, rel=1e-12)


def test_fisher_combine_of_nothing_is_one_and_rejects_zero():
    assert fisher_combine([]) == 1.0
    with pytest.raises(InvalidInputError):
        fisher_combine([0.5, 0.0])


def test_chi_square_indicator_hand_computed():
    # Two words, f = 0.9 and 0.8. For 2n = 4 degrees of freedom and a product P of the
    # p-values, Fisher's p-value is P (1 - ln P).
    ham_product, spam_product = 0.9 * 0.8, 0.1 * 0.2
    h = ham_product * (1 - math.log(ham_product))
    s = spam_product * (1 - math.log(spam_product))
    indicator, got_h, got_s = chi_square_indicator([0.9, 0.8])
    assert got_h == pytest.approx(h, rel=1e-13)
    assert got_s == pytest.approx(s, rel=1e-13)
    assert indicator == pytest.approx((1 + h - s) / 2, rel=1e-13)
    assert indicator == pytest.approx(0.9291412, abs=1e-7)  # (1 + 0.9565229 - 0.0982405) / 2


def test_chi_square_indicator_is_symmetric_and_half_without_words():
    f = [0.97, 0.6, 0.15, 0.88]
    assert chi_square_indicator([1 - p for p in f])[0] == pytest.approx(1 - chi_square_indicator(f)[0], abs=1e-14)
    assert chi_square_indicator([])[0] == 0.5
    # Strong words on both sides: near 1/2 (unsure), not at either end.
    assert 0.3 < chi_square_indicator([0.99, 0.99, 0.01, 0.01])[0] < 0.7


def test_robinson_probabilities_hand_computed():
    # A word in 3 of 10 spams and 1 of 20 hams: b = 3/10, g = 1/20, p = b / (b + g) = 6/7,
    # n = 4, f = (0.45 * 0.5 + 4 * 6/7) / (0.45 + 4).
    f = robinson_probabilities(np.array([3.0, 0.0, 0.0]), np.array([1.0, 5.0, 0.0]), 10.0, 20.0)
    s, x = Fraction(45, 100), Fraction(1, 2)
    expected = [(s * x + 4 * Fraction(6, 7)) / (s + 4), (s * x + 5 * 0) / (s + 5), x]
    assert f.tolist() == pytest.approx([float(e) for e in expected], rel=1e-15)


def test_robinson_probabilities_without_a_class_are_the_background():
    assert robinson_probabilities(np.array([2.0]), np.array([0.0]), 5.0, 0.0, background=0.4).tolist() == [0.4]


# --- the chi-square rule on a model -------------------------------------------------------------


def expected_clues(model, words, strength=0.45, background=0.5, min_strength=0.1, max_discriminators=150):
    """Robinson's f(w) recomputed from the model's public document counts, selected and ordered."""
    n = model.class_counts
    rows = []
    for position, word in enumerate(words):
        counts = model.feature_doc_counts(word)
        if not counts:
            continue
        spam, ham = counts.get("spam", 0.0), counts.get("ham", 0.0)
        b, g = spam / n["spam"], ham / n["ham"]
        f = (strength * background + (spam + ham) * (b / (b + g))) / (strength + spam + ham)
        if abs(f - 0.5) >= min_strength:
            rows.append((-abs(f - 0.5), position, word, f))
    rows.sort()
    return [(word, f) for _, _, word, f in rows[:max_discriminators]]


def test_chi_square_rule_matches_independent_computation():
    model = trained()
    message = bag("cheap money now meeting unknownword review review")
    rule = ChiSquareRule()
    result = rule.combine(model, message)
    clues = expected_clues(model, list(message))
    assert [w for w, _ in result.clues] == [w for w, _ in clues]
    assert [f for _, f in result.clues] == pytest.approx([f for _, f in clues], rel=1e-14)
    f = [p for _, p in clues]
    h = stats.combine_pvalues(f, method="fisher").pvalue
    s = stats.combine_pvalues([1 - p for p in f], method="fisher").pvalue
    assert result.ham_p == pytest.approx(h, rel=1e-12)
    assert result.spam_p == pytest.approx(s, rel=1e-12)
    assert result.indicator == pytest.approx((1 + h - s) / 2, rel=1e-12)
    assert "unknownword" not in [w for w, _ in result.clues]


def test_chi_square_rule_drops_weak_words_and_keeps_the_most_extreme():
    model = trained()
    # "now": 3 spams and 1 ham of 6 each: f = (0.225 + 4 * 0.75) / 4.45 = 0.7247, distance 0.2247.
    message = bag("now cheap meeting")
    everything = ChiSquareRule(min_strength=0.0).combine(model, message)
    assert len(everything.clues) == 3
    strict = ChiSquareRule(min_strength=0.23).combine(model, message)
    assert "now" not in [w for w, _ in strict.clues]
    assert len(strict.clues) == 2
    top = ChiSquareRule(max_discriminators=1).combine(model, message)
    distances = {w: abs(f - 0.5) for w, f in everything.clues}
    assert [w for w, _ in top.clues] == [max(distances, key=distances.get)]
    assert top.indicator == pytest.approx(chi_square_indicator([top.clues[0][1]])[0], rel=1e-14)


def test_chi_square_rule_scores_spam_high_and_ham_low():
    model = trained()
    rule = ChiSquareRule()
    assert rule.score(model, bag("cheap pills win money"), 0.0, 0.5, "spam", "ham") > 0.9
    assert rule.score(model, bag("meeting notes review draft"), 0.0, 0.5, "spam", "ham") < 0.2
    assert rule.score(model, bag("nothing known here"), 0.0, 0.5, "spam", "ham") == 0.5


def test_chi_square_explanations_are_the_clues_as_logits():
    model = trained()
    message = bag("cheap money meeting")
    rule = ChiSquareRule()
    clues = rule.combine(model, message).clues
    explained = rule.explain(model, message, 2, "spam", "ham")
    assert [e.feature for e in explained] == [w for w, _ in clues[:2]]
    assert [e.weight for e in explained] == pytest.approx([math.log(f / (1 - f)) for _, f in clues[:2]])


# --- cutoffs -------------------------------------------------------------------------------------


def test_cutoff_band():
    rule = PosteriorRule(ham_cutoff=0.2, spam_cutoff=0.9)
    assert [rule.decide(s) for s in (0.0, 0.1999, 0.2, 0.5, 0.8999, 0.9, 1.0)] == \
        ["ham", "ham", "unsure", "unsure", "unsure", "spam", "spam"]
    threshold = PosteriorRule(0.7, 0.7)
    assert [threshold.decide(s) for s in (0.69, 0.7, 0.71)] == ["ham", "spam", "spam"]
    assert ChiSquareRule(0.3, 0.6).decide(0.45) == "unsure"
    assert ArgmaxRule().decide(0.5) == "ham" and ArgmaxRule().decide(0.5000001) == "spam"


@pytest.mark.parametrize("ham, spam", [(0.9, 0.2), (-0.1, 0.5), (0.2, 1.5), (True, 0.9), ("0.2", 0.9)])
def test_bad_cutoffs_are_rejected(ham, spam):
    with pytest.raises(InvalidParameterError):
        PosteriorRule(ham, spam)
    with pytest.raises(InvalidParameterError):
        ChiSquareRule(ham, spam)


@pytest.mark.parametrize("kwargs", [{"strength": 0}, {"background": 1.0}, {"min_strength": 0.5},
                                    {"max_discriminators": 0}])
def test_bad_chi_square_parameters_are_rejected(kwargs):
    with pytest.raises(InvalidParameterError):
        ChiSquareRule(**kwargs)


# --- evidence -------------------------------------------------------------------------------------


def log_odds(model, x):
    log_proba = model.predict_log_proba_one(x)
    return log_proba["spam"] - log_proba["ham"]


@pytest.mark.parametrize("model_class", [MultinomialNB, BernoulliNB])
@pytest.mark.parametrize("unseen", ["ignore", "score"])
def test_evidence_terms_sum_to_the_log_odds(model_class, unseen):
    model = trained(model_class, smoothing=Smoothing(unseen=unseen))
    x = {"cheap": 2, "meeting": 1, "now": 3, "zebra": 2, "review": 0}
    terms = log_odds_terms(model, x)
    assert terms.bias + terms.weights.sum() == pytest.approx(log_odds(model, x), abs=1e-9)
    assert terms.log_odds == pytest.approx(log_odds(model, x), abs=1e-9)


def test_bernoulli_evidence_respects_binarize():
    model = BernoulliNB(binarize=1.5)
    model.learn_one({"cheap": 2, "now": 3}, "spam")
    model.learn_one({"meeting": 2, "now": 1}, "ham")
    x = {"cheap": 2, "now": 1, "meeting": 3}  # "now" = 1 is below the threshold: absent
    terms = log_odds_terms(model, x)
    assert terms.features == ["cheap", "meeting"]
    assert terms.log_odds == pytest.approx(log_odds(model, x), abs=1e-9)


def test_multinomial_evidence_by_hand():
    model = trained(MultinomialNB, alpha=1.0)
    x = {"cheap": 2, "meeting": 1}
    v = model.n_features
    t_spam = sum(sum(bag(s).values()) for s in SPAM_TEXTS)
    t_ham = sum(sum(bag(h).values()) for h in HAM_TEXTS)
    cheap = 2 * (math.log((3 + 1) / (t_spam + v)) - math.log((0 + 1) / (t_ham + v)))
    meeting = 1 * (math.log((0 + 1) / (t_spam + v)) - math.log((2 + 1) / (t_ham + v)))
    got = evidence(model, x, k=5)
    assert got == [Evidence("cheap", pytest.approx(cheap, rel=1e-12)), Evidence("meeting", pytest.approx(meeting, rel=1e-12))]
    assert got[0].weight > 0 > got[1].weight
    assert log_odds_terms(model, x).bias == pytest.approx(0.0, abs=1e-15)  # 6 spams and 6 hams: equal priors


def test_bernoulli_evidence_by_hand_and_absent_words_in_the_bias():
    model = trained(BernoulliNB, alpha=1.0)
    x = {"cheap": 1, "lunch": 1}
    # 6 documents per class: p_cw = (D_cw + 1) / 8. cheap: D = 3 spam, 0 ham; lunch: 0 spam, 2 ham.
    def present(d_spam, d_ham):
        return (math.log((d_spam + 1) / 8) - math.log((6 - d_spam + 1) / 8)) - \
               (math.log((d_ham + 1) / 8) - math.log((6 - d_ham + 1) / 8))
    terms = log_odds_terms(model, x)
    assert dict(zip(terms.features, terms.weights.tolist())) == pytest.approx(
        {"cheap": present(3, 0), "lunch": present(0, 2)}, rel=1e-12)
    absent = sum(math.log((6 - model.feature_doc_counts(w)["spam"] + 1) / 8)
                 - math.log((6 - model.feature_doc_counts(w)["ham"] + 1) / 8)
                 for w in set(" ".join(SPAM_TEXTS + HAM_TEXTS).split()))
    assert terms.bias == pytest.approx(absent, rel=1e-12)


def test_evidence_is_sorted_by_size_limited_to_k_and_skips_zeros():
    model = trained()
    x = {"cheap": 1, "pills": 1, "meeting": 3, "now": 1, "lunch": 0}
    got = evidence(model, x, k=3)
    sizes = [abs(e.weight) for e in got]
    assert sizes == sorted(sizes, reverse=True) and len(got) == 3
    assert got[0].feature == "meeting"
    assert "lunch" not in [e.feature for e in evidence(model, x, k=10)]
    assert evidence(model, x, k=0) == []
    with pytest.raises(InvalidParameterError):
        evidence(model, x, k=-1)


class WithoutContributions(MultinomialNB):
    """A model offering only the generic log_linear() view."""

    contributions_one = None


def test_generic_log_linear_evidence_agrees_with_the_model_split():
    specific, generic = trained(MultinomialNB), trained(WithoutContributions)
    x = {"cheap": 2, "meeting": 1, "now": 1, "zebra": 5}
    a, b = log_odds_terms(specific, x), log_odds_terms(generic, x)
    assert a.features == b.features
    np.testing.assert_allclose(a.weights, b.weights, rtol=1e-12, atol=1e-12)
    assert a.bias == pytest.approx(b.bias, abs=1e-9)
    assert b.log_odds == pytest.approx(log_odds(generic, x), abs=1e-9)


def test_evidence_needs_both_classes():
    model = MultinomialNB().learn_one({"a": 1}, "spam")
    with pytest.raises(UnknownClassError, match="ham"):
        evidence(model, {"a": 1})


words = st.sampled_from(["w%d" % i for i in range(12)])
documents = st.dictionaries(words, st.integers(1, 4), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(spam=st.lists(documents, min_size=1, max_size=6), ham=st.lists(documents, min_size=1, max_size=6),
       x=st.dictionaries(st.sampled_from(["w%d" % i for i in range(15)]), st.integers(0, 5), max_size=8),
       alpha=st.sampled_from([0.01, 0.5, 1.0, 3.0]), bernoulli=st.booleans(), unseen=st.sampled_from(["ignore", "score"]))
def test_evidence_sum_property(spam, ham, x, alpha, bernoulli, unseen):
    model = (BernoulliNB if bernoulli else MultinomialNB)(alpha=alpha, smoothing=Smoothing(unseen=unseen))
    for d in spam:
        model.learn_one(d, "spam")
    for d in ham:
        model.learn_one(d, "ham")
    terms = log_odds_terms(model, x)
    assert terms.bias + terms.weights.sum() == pytest.approx(log_odds(model, x), abs=1e-9)


# --- one class learned: the log-odds against a class that learned nothing ----------------------


def spam_only(model):
    for text in SPAM_TEXTS:
        model.learn_one(bag(text), "spam")
    return model


def against_uniform_by_hand(x, counts, alpha, mu=None):
    """sum_f x_f (log P(f|c) + log |V|) over x's known features, P from token counts tallied here."""
    vocabulary = set(counts)
    total = sum(counts.values())
    score = 0.0
    for feature, value in x.items():
        if feature not in vocabulary:
            continue
        if mu is None:
            p = (counts[feature] + alpha) / (total + alpha * len(vocabulary))
        else:  # one class: the pooled distribution is the class's own, additively smoothed
            pooled = (counts[feature] + alpha) / (total + alpha * len(vocabulary))
            p = (counts[feature] + mu * pooled) / (total + mu)
        score += value * (math.log(p) + math.log(len(vocabulary)))
    return score


@pytest.mark.parametrize("alpha, mu", [(1.0, None), (0.01, None), (0.03, 100.0), (0.5, 7.0)])
def test_log_odds_against_uniform_matches_the_formula(alpha, mu):
    model = spam_only(MultinomialNB(alpha, mu=mu))
    counts = Counter()
    for text in SPAM_TEXTS:
        counts.update(bag(text))
    for x in [{"cheap": 2, "now": 1}, {"meeting": 3, "cheap": 1}, {"zzz": 4}, {}]:
        expected = against_uniform_by_hand(x, counts, alpha, mu)
        assert model.log_odds_against_uniform_one(x, "spam") == pytest.approx(expected, rel=1e-12, abs=1e-12)
    # With additive smoothing, a class that learned nothing gives every feature 1/|V|: the
    # same value from the model's own P(w|c) table.
    features, log_prob = model.feature_log_prob()
    column = dict(zip(features, log_prob[:, 0]))
    x = {"cheap": 2, "pills": 1, "unseen": 5}
    by_table = sum(v * (column[f] + math.log(len(features))) for f, v in x.items() if f in column)
    if mu is None:
        assert model.log_odds_against_uniform_one(x, "spam") == pytest.approx(by_table, rel=1e-12)


def test_log_odds_against_uniform_needs_a_learned_class():
    model = spam_only(MultinomialNB())
    with pytest.raises(UnknownClassError, match="'ham' has learned nothing"):
        model.log_odds_against_uniform_one({"cheap": 1}, "ham")
    with pytest.raises(UnknownClassError):
        MultinomialNB().log_odds_against_uniform_one({"cheap": 1}, "spam")


def test_log_odds_against_uniform_with_every_feature_pruned_is_zero():
    model = spam_only(MultinomialNB(pruning=Pruning(min_count=100.0)))  # no word reaches 100 tokens
    model.prune()
    assert model.n_features == 0 and model.classes == ["spam"]
    assert model.log_odds_against_uniform_one({"cheap": 2}, "spam") == 0.0  # nothing known: no evidence, no log 0


def test_email_model_against_uniform_uses_the_scoring_weights():
    from streamnb import EmailNB

    model = EmailNB()
    raw = [b"Subject: cheap pills\nFrom: a@spam.example\n\nbuy cheap pills now now",
           b"Subject: win money\nFrom: b@spam.example\n\nwin money now, cheap"]
    for message in raw:
        model.learn_one(message, "spam")
    query = b"Subject: cheap money\nFrom: c@mail.example\n\ncheap pills and a meeting"
    split = model.contributions_one(query)
    weights = model.score_weights(query)
    mass = sum(weights[f] for f in split.features)
    expected = float(split.terms[:, 0].sum()) + mass * math.log(model.n_features)
    assert model.log_odds_against_uniform_one(query, "spam") == pytest.approx(expected, rel=1e-12)


def test_a_filter_with_one_class_ranks_against_a_class_that_learned_nothing():
    spam_filter = SpamFilter(spam_only(MultinomialNB(0.01)), min_per_class=1)
    like_spam, unlike = bag("cheap pills buy now"), bag("meeting notes attached lunch cheap")
    z_spam, z_new = spam_filter.log_odds(like_spam), spam_filter.log_odds(unlike)
    assert math.isfinite(z_spam) and math.isfinite(z_new)
    assert z_spam == spam_filter.model.log_odds_against_uniform_one(like_spam, "spam")
    assert z_spam > z_new > 0  # the spam's own words against one of them among new ones
    assert spam_filter.log_odds(bag("meeting notes")) == 0.0  # unseen words are left out, as in predictions
    verdict = spam_filter.classify(unlike)
    assert verdict.label == "unsure" and verdict.log_odds == z_new
    assert verdict.probability == 1.0 == spam_filter.model_probability(z_new)  # the model's posterior
    # Only ham learned: the sign turns, so the log-odds stay those of spam.
    ham_filter = SpamFilter(MultinomialNB(0.01), min_per_class=1)
    for text in HAM_TEXTS:
        ham_filter.model.learn_one(bag(text), "ham")
    z = ham_filter.log_odds(bag("meeting notes"))
    assert z == -ham_filter.model.log_odds_against_uniform_one(bag("meeting notes"), "ham") < 0
    assert ham_filter.model_probability(z) == 0.0
    # The rule that scores by the model's posterior scores 1 whatever the sign of z (here < 0:
    # a word seen once in 20 is rarer in the spam than uniform over its 10 words).
    argmax = SpamFilter(spam_filter.model, ArgmaxRule(), min_per_class=1)
    rare = argmax.classify(bag("online"))
    assert rare.log_odds < 0 and rare.score == 1.0 == rare.probability and rare.label == "unsure"
    # A model without log_odds_against_uniform_one keeps the posterior's infinite log-odds.
    bernoulli = SpamFilter(BernoulliNB(), min_per_class=1)
    bernoulli.model.learn_one(bag("cheap pills"), "spam")
    assert bernoulli.log_odds(bag("meeting")) == math.inf


def test_progressive_filter_model_columns_stay_the_models_while_one_class_is_learned():
    stream = [(bag(t), "spam") for t in SPAM_TEXTS] + [(bag(t), "ham") for t in HAM_TEXTS]
    report = progressive_filter(SpamFilter(MultinomialNB(0.01)), stream)
    reference = progressive_evaluate(MultinomialNB(0.01), stream)
    one_class = slice(1, len(SPAM_TEXTS) + 1)  # after the first spam, up to the first ham
    assert np.isfinite(report.log_odds[one_class]).all()
    assert list(report.model_predictions) == list(reference.y_pred)
    np.testing.assert_allclose(report.model_probability, reference.scores, atol=1e-12)
    assert report.model_accuracy == reference.accuracy
    assert report.ece_model == pytest.approx(reference.ece, abs=1e-12)


# --- the filter --------------------------------------------------------------------------------------


class CountingTokenizer:
    def __init__(self):
        self.calls = 0

    def __call__(self, text):
        self.calls += 1
        return bag(text)


class RecordingCalibrator:
    def __init__(self):
        self.updates = []

    def update(self, score, outcome):
        self.updates.append((score, outcome))

    def transform(self, score):
        return 0.25


def test_min_per_class_keeps_the_verdict_unsure_until_both_classes_have_enough():
    spam_filter = SpamFilter(MultinomialNB(), PosteriorRule(0.5, 0.5), min_per_class=3, tokenizer=bag)
    verdicts = []
    stream = [(SPAM_TEXTS[0], "spam"), (SPAM_TEXTS[1], "spam"), (SPAM_TEXTS[2], "spam"), (SPAM_TEXTS[3], "spam"),
              (HAM_TEXTS[0], "ham"), (HAM_TEXTS[1], "ham"), (HAM_TEXTS[2], "ham")]
    for text, label in stream:
        verdicts.append(spam_filter.classify(text).label)
        spam_filter.learn(text, label)
    assert verdicts == ["unsure"] * 7  # when the 3rd ham is classified, only 2 hams are known
    assert spam_filter.ready
    assert spam_filter.classify("cheap pills now").label == "spam"
    assert spam_filter.classify("meeting notes review").label == "ham"


def test_one_tokenization_per_message_and_prequential_calibrator_updates():
    tokenizer = CountingTokenizer()
    calibrator = RecordingCalibrator()
    spam_filter = SpamFilter(MultinomialNB(), ChiSquareRule(), calibrator, tokenizer=tokenizer, min_per_class=1)
    expected, probabilities = [], []
    for spam, ham in zip(SPAM_TEXTS, HAM_TEXTS):
        for text, label in ((spam, "spam"), (ham, "ham")):
            before = spam_filter.log_odds(bag(text))  # the model as it stands
            both = len(spam_filter.model.class_counts) == 2
            verdict = spam_filter.classify(text)
            assert verdict.log_odds == before
            probabilities.append(verdict.probability)
            spam_filter.learn(text, label)
            if both:
                expected.append((before, label == "spam"))
    assert tokenizer.calls == 2 * len(SPAM_TEXTS)
    assert calibrator.updates == expected
    # The first message met an untrained model (log-odds 0), the second a spam-only one
    # (log-odds +inf): no comparison, so the calibrator neither answered nor learned.
    assert len(expected) == 2 * len(SPAM_TEXTS) - 2
    assert probabilities[:2] == [0.5, 1.0] and probabilities[2:] == [0.25] * (2 * len(SPAM_TEXTS) - 2)


def test_a_model_changed_behind_the_filter_is_scored_again():
    calibrator = RecordingCalibrator()
    model = trained()
    spam_filter = SpamFilter(model, calibrator=calibrator, tokenizer=bag)
    message = "cheap meeting"
    spam_filter.classify(message)
    model.learn_one(bag("meeting cheap cheap"), "ham")  # not through the filter
    z = spam_filter.log_odds(bag(message))
    spam_filter.learn(message, "spam")
    assert calibrator.updates == [(z, True)]


def test_learn_without_classify_scores_before_learning():
    calibrator = RecordingCalibrator()
    model = trained()
    spam_filter = SpamFilter(model, calibrator=calibrator, tokenizer=bag)
    z = spam_filter.log_odds(bag("cheap meeting"))
    spam_filter.learn("cheap meeting", "spam")
    assert calibrator.updates == [(z, True)]
    assert model.class_counts["spam"] == 7


def test_verdict_fields():
    model = trained()
    spam_filter = SpamFilter(model, ChiSquareRule(), RecordingCalibrator(), tokenizer=bag, min_per_class=5,
                             evidence_k=2)
    verdict = spam_filter.classify("cheap pills win money")
    assert verdict.label == "spam"
    assert verdict.score == ChiSquareRule().combine(model, bag("cheap pills win money")).indicator
    assert verdict.probability == 0.25  # the calibrator's
    assert verdict.log_odds == pytest.approx(log_odds(model, bag("cheap pills win money")))
    assert len(verdict.evidence) == 2 and all(e.weight > 0 for e in verdict.evidence)
    uncalibrated = SpamFilter(model, PosteriorRule(), tokenizer=bag, min_per_class=5)
    verdict = uncalibrated.classify("meeting notes")
    assert verdict.probability == pytest.approx(math.exp(model.predict_log_proba_one(bag("meeting notes"))["spam"]))
    assert verdict.label == "ham" and verdict.score == verdict.probability
    assert [e.feature for e in verdict.evidence] == [e.feature for e in evidence(model, bag("meeting notes"), 10)]


def test_filter_uses_the_models_tokenizer():
    tokenizer = CountingTokenizer()
    model = MultinomialNB(tokenizer=tokenizer)
    spam_filter = SpamFilter(model, min_per_class=1)
    spam_filter.classify("cheap pills")
    spam_filter.learn("cheap pills", "spam")
    assert tokenizer.calls == 1
    assert model.feature_counts("pills") == {"spam": 1.0}
    with pytest.raises(InvalidTypeError, match="tokenizer"):
        SpamFilter(MultinomialNB()).classify("raw text")


def test_learn_rejects_unknown_labels_and_changes_nothing():
    calibrator = RecordingCalibrator()
    model = trained()
    spam_filter = SpamFilter(model, calibrator=calibrator, tokenizer=bag)
    with pytest.raises(InvalidInputError, match="'spam' or 'ham'"):
        spam_filter.learn("cheap", "eggs")
    with pytest.raises(InvalidInputError):
        spam_filter.learn("", "spam")  # an empty document: the model refuses it
    assert calibrator.updates == []
    assert model.class_counts == {"spam": 6.0, "ham": 6.0}


@pytest.mark.parametrize("kwargs", [{"min_per_class": -1}, {"evidence_k": -1}, {"calibrator": object()},
                                    {"positive": "ham"}, {"tokenizer": 3}])
def test_bad_filter_parameters(kwargs):
    with pytest.raises(InvalidParameterError):
        SpamFilter(MultinomialNB(), **kwargs)


def test_unlearn_reverses_learn():
    model = trained()
    spam_filter = SpamFilter(model, tokenizer=bag)
    before = model.predict_log_proba_one(bag("cheap meeting"))
    spam_filter.learn("cheap cheap meeting", "ham")
    spam_filter.unlearn("cheap cheap meeting", "ham")
    assert model.predict_log_proba_one(bag("cheap meeting")) == pytest.approx(before, abs=1e-12)


def synthetic_stream(n=300, seed=3):
    return spam_ham_stream(n, seed, ["s%d" % i for i in range(30)], ["h%d" % i for i in range(30)],
                           ["c%d" % i for i in range(30)], n_shared=4)


def test_progressive_filter_model_metrics_equal_progressive_evaluate():
    stream = synthetic_stream()
    report = progressive_filter(SpamFilter(MultinomialNB(), ChiSquareRule(), IsotonicCalibrator()), stream)
    reference = progressive_evaluate(MultinomialNB(), stream)
    assert report.model_accuracy == reference.accuracy
    assert report.model_false_positive_rate == reference.false_positive_rate
    assert report.model_false_negative_rate == reference.false_negative_rate
    np.testing.assert_allclose(report.model_probability, reference.scores, atol=1e-12)
    assert report.ece_model == pytest.approx(reference.ece, abs=1e-9)
    assert [p.accuracy for p in report.curve] == [p.accuracy for p in reference.curve]
    assert report.n == 300 and set(report.verdicts) <= {"ham", "unsure", "spam"}
    # Verdict metrics, recomputed from the arrays.
    truth = np.array([y == "spam" for y in report.y_true])
    decided = report.verdicts != "unsure"
    assert report.unsure_rate == pytest.approx(1 - decided.mean())
    assert report.decided_accuracy == pytest.approx(np.mean((report.verdicts[decided] == "spam") == truth[decided]))
    assert report.verdict_false_positive_rate == pytest.approx(np.mean(report.verdicts[~truth] == "spam"))
    assert "unsure" in report.summary()


def test_progressive_filter_rejects_bad_streams():
    with pytest.raises(InvalidInputError, match="no"):
        progressive_filter(SpamFilter(MultinomialNB()), [])
    with pytest.raises(InvalidInputError, match="pair"):
        progressive_filter(SpamFilter(MultinomialNB()), [{"a": 1}])


def mail(i: int, spam: bool) -> bytes:
    words = (["cheap", "pills", "offer", "winner", "casino", "loan", "free", "prize"] if spam else
             ["meeting", "agenda", "project", "report", "lunch", "review", "draft", "notes"])
    sender = "deals@offers.example.com" if spam else "alice@work.example.org"
    body = " ".join(words[(i * 3 + k) % len(words)] for k in range(10))
    return (f"From: {sender}\nSubject: {words[i % len(words)]} {i}\nMessage-ID: <{i}@x>\n\n{body}\n"
            f"word{i} is its own\n").encode()


def filter_models():
    """Every kind of model the spam filter can hold, reading raw messages."""
    from streamnb import ByteNgrams, ComplementNB, EmailNB, EmailTokenizer, LogisticRegression
    from streamnb.models import Fusion

    return {
        "default (Fusion)": lambda: None,
        "Fusion, naive Bayes with a ledger": lambda: Fusion(EmailNB(ledger=100)),
        "EmailNB": EmailNB,
        "MultinomialNB": lambda: MultinomialNB(tokenizer=EmailTokenizer()),
        "BernoulliNB": lambda: BernoulliNB(tokenizer=EmailTokenizer()),
        "ComplementNB": lambda: ComplementNB(tokenizer=EmailTokenizer()),
        "LogisticRegression with a ledger": lambda: LogisticRegression(0.05, tokenizer=ByteNgrams(4, 3000), ledger=100),
    }


@pytest.mark.parametrize("name", list(filter_models()))
def test_unlearn_right_after_learn_gives_every_verdict_score_back(name):
    """Issue 34: for every model the filter can hold, a lesson learned and unlearned leaves
    every message's log-odds and probability as they were, to 1e-9."""
    spam_filter = SpamFilter(filter_models()[name]())
    for i in range(30):
        spam_filter.learn(mail(i, i % 3 == 0), "spam" if i % 3 == 0 else "ham")
    probes = [mail(i, i % 2 == 0) for i in range(100, 110)] + [b"Subject: hello\n\nzzz cheap meeting\n"]

    def scores():
        return [v for p in probes for v in (spam_filter.classify(p).log_odds, spam_filter.classify(p).probability)]

    before = scores()
    for lesson, label in [(mail(200, True), "ham"), (mail(201, False), "ham"), (b"Subject: x\n\nnew words\n", "spam")]:
        spam_filter.learn(lesson, label)
        assert max(abs(a - b) for a, b in zip(scores(), before)) > 1e-6
        spam_filter.unlearn(lesson, label)
        assert max(abs(a - b) for a, b in zip(scores(), before)) <= 1e-9
