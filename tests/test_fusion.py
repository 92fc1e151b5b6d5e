"""streamnb.models.Fusion: naive Bayes and logistic regression fused online. The stacker's
step against a reference, what learn / unlearn / merge do to each part, persistence, and
the spam filter on raw messages."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import streamnb
from streamnb import LogisticRegression, MultinomialNB, Tokenizer
from streamnb.filter.decision import SpamFilter
from streamnb.errors import IncompatibleModelsError, InvalidInputError, InvalidParameterError
from streamnb.models import Fusion

TEXTS = [
    ("cheap pills now buy cheap", "spam"), ("meeting at noon about the report", "ham"),
    ("buy now limited offer pills", "spam"), ("the report is due at noon", "ham"),
    ("cheap offer on the report", "spam"), ("lunch meeting moved to noon", "ham"),
] * 4


def small(**kwargs) -> Fusion:
    return Fusion(MultinomialNB(0.5, tokenizer=Tokenizer()), LogisticRegression(0.2, tokenizer=Tokenizer()), **kwargs)


def odds(log_proba, pair):
    return log_proba[pair[1]] - log_proba[pair[0]]


def test_the_stacker_steps_on_the_parts_log_odds_before_they_learn():
    model = small(nb_scale=10.0, nb_clip=2.0, learning_rate=0.05, initial_weights=(1.0, 0.5))
    a, b, c = 1.0, 0.5, 0.0
    for text, label in TEXTS:
        pair = model.classes[:2]
        if len(pair) == 2:
            z_nb = odds(model.nb.predict_log_proba_one(text), pair)
            z_lr = odds(model.lr.predict_log_proba_one(text), pair)
            inputs = (max(-2.0, min(2.0, z_nb / 10.0)), z_lr)
            z = a * inputs[0] + b * inputs[1] + c
            assert model.log_odds_one(text) == pytest.approx(z, abs=1e-12)
            assert model.predict_log_proba_one(text)[pair[1]] == pytest.approx(-math.log1p(math.exp(-z)), abs=1e-12)
            g = (1.0 if label == pair[1] else 0.0) - 1 / (1 + math.exp(-z))
            a, b, c = a + 0.05 * g * inputs[0], b + 0.05 * g * inputs[1], c + 0.05 * g
        model.learn_one(text, label)
        assert model.weights == pytest.approx((a, b, c), abs=1e-12)
    assert model.classes == ["spam", "ham"]
    assert model.predict_one("cheap pills") == "spam" and model.predict_one("noon meeting") == "ham"


def test_before_both_classes_it_is_naive_bayes():
    model = small()
    assert model.predict_log_proba_one("anything") == {}
    model.learn_one("cheap pills", "spam")
    assert model.predict_log_proba_one("cheap") == model.nb.predict_log_proba_one("cheap")
    assert model.weights == (1.0, 0.5, 0.0)  # nothing to fuse yet: the stacker has not moved


def test_a_third_class_is_refused_and_changes_nothing():
    model = small()
    for text, label in TEXTS[:4]:
        model.learn_one(text, label)
    before = (model.predict_log_proba_one("cheap report"), model.weights, model.class_counts)
    with pytest.raises(InvalidInputError, match="two classes"):
        model.learn_one("hello", "newsletter")
    assert (model.predict_log_proba_one("cheap report"), model.weights, model.class_counts) == before


def test_unlearn_is_exact_for_naive_bayes_and_a_reverse_step_for_the_rest():
    model, without = small(), small()
    for text, label in TEXTS:
        model.learn_one(text, label)
        without.learn_one(text, label)
    extra = ("cheap noon pills", "spam")
    model.learn_one(*extra)
    model.unlearn_one(*extra)
    # naive Bayes' counts are those of the model that never saw the message
    assert model.nb.predict_log_proba_one("cheap noon") == pytest.approx(without.nb.predict_log_proba_one("cheap noon"),
                                                                         abs=1e-12)
    # the others come back close, within what one step moves them
    assert model.log_odds_one("cheap noon pills") == pytest.approx(without.log_odds_one("cheap noon pills"), abs=0.05)
    assert model.class_counts == without.class_counts


def test_merge_adds_the_counts_and_mixes_the_rest():
    left, right, both = small(), small(), small()
    for i, (text, label) in enumerate(TEXTS):
        (left if i % 3 else right).learn_one(text, label)
        both.learn_one(text, label)
    n_left, n_right = sum(left.class_counts.values()), sum(right.class_counts.values())
    # left learned a ham first, right a spam: their class 1 differ, so right's log-odds (in
    # and out) have the other sign, and in left's terms only its bias flips
    assert left.classes == ["ham", "spam"] and right.classes == ["spam", "ham"]
    a, b, c = right.weights
    stacker = (np.array(left.weights) * n_left + np.array([a, b, -c]) * n_right) / (n_left + n_right)
    left.merge(right)
    assert left.class_counts == both.class_counts
    assert left.nb.predict_log_proba_one("cheap report") == pytest.approx(both.nb.predict_log_proba_one("cheap report"),
                                                                          abs=1e-12)
    assert left.weights == pytest.approx(tuple(stacker), abs=1e-12)
    with pytest.raises(IncompatibleModelsError, match="other settings"):
        left.merge(small(nb_scale=5.0))


def test_a_ledger_in_naive_bayes_keeps_all_three_parts_in_step():
    model = Fusion(MultinomialNB(tokenizer=Tokenizer(), ledger=100), LogisticRegression(tokenizer=Tokenizer()))
    for text, label in TEXTS[:6]:
        model.learn_one(text, label)
    before = (model.predict_log_proba_one("cheap report"), model.weights, model.lr.n_learned)
    model.learn_one(TEXTS[0][0], "spam")  # known under the same label: nothing moves
    assert (model.predict_log_proba_one("cheap report"), model.weights, model.lr.n_learned) == before
    model.learn_one(TEXTS[0][0], "ham")  # moved: unlearned as spam, learned as ham, by every part
    assert model.class_counts == {"spam": 2.0, "ham": 4.0}
    assert model.lr.class_counts == {"spam": 2.0, "ham": 4.0}


def test_save_load_and_pickle_round_trip(tmp_path):
    model = small()
    for text, label in TEXTS:
        model.learn_one(text, label)
    path = tmp_path / "fusion.snb"
    model.save(path)
    loaded = streamnb.load(path)
    assert type(loaded) is Fusion and loaded.weights == model.weights
    for text, _ in TEXTS[:6]:
        assert loaded.predict_log_proba_one(text) == model.predict_log_proba_one(text)
    loaded.learn_one("cheap cheap", "spam")
    model.learn_one("cheap cheap", "spam")
    assert loaded.predict_log_proba_one("noon") == model.predict_log_proba_one("noon")
    again = pickle.loads(pickle.dumps(model))
    assert again.predict_log_proba_one("offer") == model.predict_log_proba_one("offer")


@pytest.mark.parametrize("kwargs, words", [
    (dict(nb=LogisticRegression()), "nb must be a naive Bayes model"),
    (dict(lr=MultinomialNB()), "lr must be a LogisticRegression"),
    (dict(nb_scale=0), "nb_scale must be a finite number > 0"),
    (dict(nb_clip=float("nan")), "nb_clip"),
    (dict(learning_rate=-1), "learning_rate"),
    (dict(initial_weights=(1.0,)), "initial_weights must be a pair"),
])
def test_bad_parameters_are_named(kwargs, words):
    with pytest.raises(InvalidParameterError, match=words):
        Fusion(**kwargs)


MESSAGES = [
    (b"From: deals@cheap.example\nSubject: cheap pills\n\nBuy cheap pills now, limited offer!", "spam"),
    (b"From: alice@work.example\nSubject: report\n\nThe quarterly report is attached; see you at noon.", "ham"),
    (b"From: offers@cheap.example\nSubject: limited offer\n\nCheap watches, buy now.", "spam"),
    (b"From: bob@work.example\nSubject: lunch\n\nLunch at noon to go over the report?", "ham"),
] * 5


def test_the_spam_filter_default_reads_raw_messages_with_both_parts():
    spam = SpamFilter(Fusion())
    for raw, label in MESSAGES:
        verdict = spam.classify(raw)
        assert math.isfinite(verdict.log_odds)
        spam.learn(raw, label)
    # the logistic regression read byte grams of the raw message, not the email weights
    assert spam.model.lr.n_features > 100 and spam.model.lr.class_counts == {"spam": 10.0, "ham": 10.0}
    assert spam.classify(b"Subject: cheap offer\n\nbuy cheap pills").log_odds > 0
    assert spam.classify(b"Subject: report\n\nthe report at noon").log_odds < 0
