"""MultinomialNB.generate: bags of words drawn from a class's P(w|c)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from streamnb import MultinomialNB
from streamnb.errors import InvalidParameterError, UnknownClassError


@pytest.fixture
def model():
    m = MultinomialNB(alpha=0.5)
    m.learn_one({"cheap": 5, "pills": 3, "now": 2}, "spam")
    m.learn_one({"cheap": 1, "offer": 4}, "spam")
    m.learn_one({"meeting": 3, "agenda": 2, "now": 1}, "ham")
    return m


def test_seeded_bags_are_reproducible_and_have_n_words(model):
    first = model.generate("spam", 50, seed=7)
    assert first == model.generate("spam", 50, seed=7)
    assert sum(first.values()) == 50
    assert all(count > 0 for count in first.values())
    assert set(first) <= {"cheap", "pills", "now", "offer", "meeting", "agenda"}
    assert model.generate("spam", 50, seed=np.random.default_rng(7)) == first
    assert any(model.generate("spam", 50, seed=s) != first for s in range(8, 12))
    assert model.generate("ham", 0, seed=1) == {}


def test_empirical_frequencies_approach_p_w_given_c(model):
    """Sum of 2,000 bags of 50 words vs P(w|c): chi-square goodness of fit, and a 1% tolerance."""
    features, log_prob = model.feature_log_prob()
    p = np.exp(log_prob[:, model.classes.index("spam")])
    # P(w|spam) by hand: T_spam = 15, |V| = 6, alpha = 0.5 -> denominator 18
    by_hand = {"cheap": 6.5 / 18, "pills": 3.5 / 18, "now": 2.5 / 18, "offer": 4.5 / 18,
               "meeting": 0.5 / 18, "agenda": 0.5 / 18}
    assert dict(zip(features, p)) == pytest.approx(by_hand, rel=1e-12)
    rng = np.random.default_rng(2024)
    totals = dict.fromkeys(features, 0)
    for _ in range(2000):
        for word, count in model.generate("spam", 50, seed=rng).items():
            totals[word] += count
    observed = np.array([totals[f] for f in features])
    assert observed.sum() == 100_000
    assert np.abs(observed / 100_000 - p).max() < 0.01
    _, p_value = stats.chisquare(observed, 100_000 * p)
    assert p_value > 1e-3


def test_generate_rejects_bad_arguments(model):
    with pytest.raises(UnknownClassError, match="'news'"):
        model.generate("news", 10)
    with pytest.raises(InvalidParameterError, match="n_words"):
        model.generate("spam", -1)
    with pytest.raises(InvalidParameterError, match="n_words"):
        model.generate("spam", 2.5)
    with pytest.raises(InvalidParameterError, match="seed"):
        model.generate("spam", 3, seed="x")
