"""MixedNB: text + numeric + categorical fields under one class prior."""

from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np
import pytest

from streamnb import BernoulliNB, CategoricalNB, ComplementNB, GaussianNB, MixedNB, MultinomialNB
from streamnb.errors import InvalidInputError, InvalidParameterError, InvalidTypeError
from streamnb.models import Forgetting, Pruning

SCHEMA = {"text": "text", "size": "numeric", "n_links": "numeric", "sender_domain": "categorical"}
SPAM_WORDS = ["cheap", "pills", "offer", "winner", "click", "now"]
HAM_WORDS = ["meeting", "agenda", "notes", "lunch", "report", "now"]


def words(text: str) -> Counter:
    return Counter(re.findall(r"\b\w\w+\b", text.lower()))


def make_records(n, seed):
    rng = np.random.default_rng(seed)
    records, labels = [], []
    for _ in range(n):
        label = str(rng.choice(["spam", "ham", "news"], p=[0.4, 0.4, 0.2]))
        vocabulary = SPAM_WORDS if label == "spam" else HAM_WORDS
        text = " ".join(rng.choice(vocabulary + ["the", "and", "today"], 6))
        records.append({
            "text": text,
            "size": float(rng.normal(900 if label == "spam" else 4000, 300)),
            "n_links": int(rng.poisson(6 if label == "spam" else 1)),
            "sender_domain": str(rng.choice(["x.biz", "y.biz"] if label == "spam" else ["work.org", "mail.com"])),
        })
        labels.append(label)
    return records, labels


def split(record):
    return (words(record["text"]), {k: record[k] for k in ("size", "n_links")},
            {"sender_domain": record["sender_domain"]})


@pytest.mark.parametrize("text_model", [MultinomialNB, BernoulliNB, lambda **kw: ComplementNB(norm=True, **kw)])
def test_the_mixed_score_is_the_sum_of_the_parts(text_model):
    records, labels = make_records(120, seed=1)
    mixed = MixedNB(SCHEMA, text=text_model(tokenizer=words))
    text, numeric, categorical = text_model(), GaussianNB(), CategoricalNB()
    for record, label in zip(records, labels):
        mixed.learn_one(record, label)
        t, n, c = split(record)
        text.learn_one(t, label)
        numeric.learn_one(n, label)
        categorical.learn_one(c, label)
    counts = Counter(labels)
    classes = mixed.classes
    log_prior = np.array([math.log(counts[c] / len(labels)) for c in classes])
    for record in make_records(15, seed=2)[0]:
        t, n, c = split(record)
        total = log_prior.copy()
        for part, x in ((text, t), (numeric, n), (categorical, c)):
            log_proba = part.predict_log_proba_one(x)
            part_scores = np.array([log_proba[label] for label in classes])
            # each part's log-likelihood up to a constant: its log posterior minus its own prior
            # (ComplementNB's score carries no prior, so nothing to take out)
            total += part_scores if isinstance(part, ComplementNB) else part_scores - log_prior
        expected = total - np.logaddexp.reduce(total)
        got = mixed.predict_log_proba_one(record)
        np.testing.assert_allclose([got[label] for label in classes], expected, rtol=0, atol=1e-9)
        # and the parts the model reports add up to its own posterior
        parts = mixed.part_log_likelihoods(record)
        jll = log_prior + sum(np.array([parts[name][label] for label in classes]) for name in parts)
        np.testing.assert_allclose([got[label] for label in classes], jll - np.logaddexp.reduce(jll), atol=1e-9)
    assert mixed.predict_one({"text": "cheap pills click now", "size": 850.0, "n_links": 7,
                              "sender_domain": "x.biz"}) == "spam"


def test_one_prior_is_shared():
    records, labels = make_records(60, seed=3)
    mixed = MixedNB(SCHEMA, text=MultinomialNB(tokenizer=words), class_prior="uniform")
    mixed.learn_many(records, labels)
    only_prior = mixed.predict_proba_one({})  # no field: only the prior (uniform here) is left
    assert only_prior == pytest.approx({c: 1 / 3 for c in mixed.classes})
    assert mixed.class_counts == dict(Counter(labels))
    assert mixed.numeric.class_counts == mixed.class_counts == mixed.categorical.class_counts
    assert mixed.text.class_counts == mixed.class_counts


def test_missing_fields_and_empty_text():
    model = MixedNB({"body": "text", "size": "numeric", "domain": "categorical"}, text=BernoulliNB(tokenizer=words))
    model.learn_one({"body": "cheap pills", "size": 1.0, "domain": "x"}, "spam")
    model.learn_one({"size": 3.0}, "spam")  # no text: an empty document, which Bernoulli counts
    model.learn_one({"body": "", "domain": "y"}, "ham")
    model.learn_one({"body": "meeting notes"}, "ham")
    assert model.text.class_counts == {"spam": 2.0, "ham": 2.0}
    assert model.text.feature_doc_counts("cheap") == {"spam": 1.0, "ham": 0.0}
    assert model.numeric.class_statistics("spam") == {"size": (2.0, 2.0, 1.0)}
    assert model.numeric.class_counts == {"spam": 2.0, "ham": 2.0}
    assert model.categorical.category_counts("domain", "ham") == {"y": 1.0}
    # p(cheap | spam) = (1 + 1) / (2 + 2) by hand; the record has only text
    bernoulli = model.text.predict_log_proba_one("cheap")
    assert model.predict_log_proba_one({"body": "cheap"}) == pytest.approx(bernoulli, rel=1e-12)


def test_learn_unlearn_and_merge():
    records, labels = make_records(80, seed=5)
    whole = MixedNB(SCHEMA, text=ComplementNB(norm=True, tokenizer=words))
    first = MixedNB(SCHEMA, text=ComplementNB(norm=True, tokenizer=words))
    second = MixedNB(SCHEMA, text=ComplementNB(norm=True, tokenizer=words))
    whole.learn_many(records, labels)
    first.learn_many(records[:50], labels[:50])
    second.learn_many(records[50:], labels[50:])
    merged = first.merge(second)
    probes = make_records(10, seed=6)[0]
    for probe in probes:
        assert merged.predict_proba_one(probe) == pytest.approx(whole.predict_proba_one(probe), rel=1e-9)
    before = [whole.predict_log_proba_one(p) for p in probes]
    extra, extra_labels = make_records(20, seed=7)
    whole.learn_many(extra, extra_labels)
    whole.unlearn_many(extra, extra_labels)
    for probe, expected in zip(probes, before):
        assert whole.predict_log_proba_one(probe) == pytest.approx(expected, rel=1e-9, abs=1e-9)


def snapshot(model):
    probe = {"text": "cheap meeting", "size": 1000.0, "n_links": 2, "sender_domain": "x.biz"}
    return (model.class_counts, model.text.class_counts, model.numeric.class_counts,
            model.categorical.class_counts, model.text.n_features, model.predict_log_proba_one(probe))


def test_bad_records_change_nothing():
    records, labels = make_records(30, seed=8)
    model = MixedNB(SCHEMA, text=MultinomialNB(tokenizer=words)).learn_many(records, labels)
    before = snapshot(model)
    bad = [
        ({"text": "fine words", "size": float("nan")}, InvalidInputError, "'size'"),
        ({"text": "fine words", "sender_domain": ["x.com"]}, InvalidTypeError, "'sender_domain'"),
        ({"text": "fine words", "subject": "hello"}, InvalidInputError, "'subject'.*schema"),
        ({"text": 42}, InvalidTypeError, "mapping"),
        (["text"], InvalidTypeError, "mapping"),
    ]
    for record, error, message in bad:
        with pytest.raises(error, match=message):
            model.learn_one(record, "spam")
        with pytest.raises(error, match=message):
            model.predict_one(record)
    assert snapshot(model) == before
    # unlearning: a word never learned fails in the text part before anything else changes
    with pytest.raises(InvalidInputError, match="never learned"):
        model.unlearn_one({"text": "zzzunknown", "size": records[0]["size"], "sender_domain": "x.biz"}, labels[0])
    # a category this class never had fails before the text part is touched
    with pytest.raises(InvalidInputError, match="'nowhere.net'"):
        model.unlearn_one({"text": records[0]["text"], "sender_domain": "nowhere.net"}, labels[0])
    assert snapshot(model) == before


def test_schema_and_parts_are_checked():
    with pytest.raises(InvalidParameterError, match="kind of field 'size'"):
        MixedNB({"size": "number"})
    with pytest.raises(InvalidParameterError, match="at most one text field"):
        MixedNB({"subject": "text", "body": "text"})
    with pytest.raises(InvalidParameterError, match="schema"):
        MixedNB({})
    trained = GaussianNB().learn_one({"size": 1.0}, "a")
    with pytest.raises(InvalidParameterError, match="untrained"):
        MixedNB({"size": "numeric"}, numeric=trained)
    with pytest.raises(InvalidTypeError, match="numeric part"):
        MixedNB({"size": "numeric"}, numeric=CategoricalNB())
    with pytest.raises(InvalidParameterError, match="fixed class_prior"):
        MixedNB({"t": "text"}, text=MultinomialNB(class_prior={"a": 0.5, "b": 0.5}))
    # MixedNB gives its parts no clock, pruning pass or ledger: a text part set to use one
    # is refused (it would unlearn inexactly, or keep max_features without pruning)
    for setting in ({"forgetting": Forgetting(half_life=10)}, {"forgetting": Forgetting(half_life_seconds=60.0)},
                    {"pruning": Pruning(max_features=5)}, {"pruning": Pruning(min_count=2)},
                    {"pruning": Pruning(expire_after=100)}, {"ledger": 1000}):
        with pytest.raises(InvalidParameterError, match=f"must not forget, prune or keep a ledger.*{next(iter(setting))}"):
            MixedNB({"t": "text"}, text=MultinomialNB(**setting))
    # without a text field there is no text part
    model = MixedNB({"size": "numeric"}).learn_one({"size": 2.0}, "a").learn_one({"size": 5.0}, "b")
    assert model.text is None and model.categorical is None
    x = {"size": 2.5}
    assert model.predict_log_proba_one(x) == pytest.approx(model.numeric.predict_log_proba_one(x))


def test_a_text_part_that_would_overflow_changes_nothing():
    # As DiscreteNB.learn_one does, the mixed model refuses counts that would reach inf
    # before anything changes: no new class, no counts, in learn_one and learn_many.
    records, labels = make_records(10, seed=3)
    model = MixedNB(SCHEMA, text=MultinomialNB(tokenizer=words)).learn_many(records, labels)
    before = snapshot(model)
    huge = {**records[0], "text": "fine words"}
    with pytest.raises(InvalidInputError, match="overflow"):
        model.learn_one(huge, "brand-new", w=1e308)
    with pytest.raises(InvalidInputError, match="overflow"):
        model.learn_many([records[1], huge], [labels[1], "brand-new"], w=[1.0, 1e308])
    assert snapshot(model) == before
    assert "brand-new" not in model.labels
