"""The spam filter's weighting runs in the core (src/weighting.rs): checked here against a
reference written from the formulas, in Python (as the other models are checked against
scikit-learn), on the SpamAssassin corpus when it is present and on made-up mail otherwise.

- learning weights: w_f = q(m_F * log(1 + x_f) / sum_{g in F} log(1 + x_g)), q the rounding to
  a multiple of 2**-16 (ties to even, at least one step): bit for bit, in the same order;
- the field of a feature (EmailTokenizer.field): by the prefix before the first ':';
- EmailNB's scoring weights s_f = m_F * w_f * idf_f / sum_{g in F} w_g * idf_g with
  idf_f = ln((1 + N) / (1 + D_f)) + idf_offset recomputed with numpy from ``document_counts``, and the
  model's log-probabilities equal to a plain MultinomialNB scoring those weights (1e-12).
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamnb import EmailNB, EmailTokenizer, EmailWeights, MultinomialNB
from streamnb.filter.decision import HAM, SPAM
from streamnb.models import Storage
from tests.models.test_email_model import mail, stream

CORPUS = os.environ.get("STREAMNB_SPAMASSASSIN")
MIME = {"content-type", "charset", "encoding", "attachment", "mime"}


# -- the reference, from the formulas --------------------------------------------------------------

def reference_field(tokenizer: EmailTokenizer, feature: str) -> str:
    prefix, colon, _ = feature.partition(":")
    if not colon:
        return "body"
    if prefix in ("subject", "url", "header"):
        return prefix
    if prefix in tokenizer.address_headers:
        return "address"
    if prefix in MIME:
        return "mime"
    if prefix == "from-address" and tokenizer.sender_address:
        return "sender"
    return "other"


def reference_reweigh(weights: EmailWeights, values: dict, factors: dict | None = None) -> dict:
    """values times factors, each field scaled to its mass (sums in the order of the dict)."""
    scaled, totals = {}, {}
    for feature, value in values.items():
        value = value * (factors.get(feature, 1.0) if factors is not None else 1.0)
        if value > 0:
            scaled[feature] = value
            name = reference_field(weights.tokenizer, feature)
            totals[name] = totals.get(name, 0.0) + value
    return {f: v * (weights.mass_of(reference_field(weights.tokenizer, f))
                    / totals[reference_field(weights.tokenizer, f)]) for f, v in scaled.items()}


def reference_weigh(weights: EmailWeights, counts: dict) -> dict:
    scaled = reference_reweigh(weights, {f: math.log1p(c) for f, c in counts.items() if c > 0})
    return {f: max(1.0, round(v * 2.0**16)) / 2.0**16 for f, v in scaled.items()}


def reference_scoring(model: EmailNB, weights: dict) -> dict:
    counts = model.document_counts(weights)
    n = float(counts.class_docs.sum())
    docs = dict(zip(counts.features, np.asarray(counts.docs).sum(axis=1).tolist())) if len(counts.features) else {}
    factors = {f: math.log((1 + n) / (1 + docs.get(f, 0.0))) + model.idf_offset for f in weights}
    return reference_reweigh(model.tokenizer, weights, factors)


def check_weights(weights: EmailWeights, raw: bytes) -> None:
    counts = weights.tokenizer(raw)
    got = weights(raw)
    want = reference_weigh(weights, counts)
    assert list(got) == list(want)  # same features, same order
    assert all(got[f] == want[f] for f in want), raw[:200]  # to the bit
    for feature in counts:
        assert weights.field(feature) == reference_field(weights.tokenizer, feature)


def plain_twin(model: EmailNB) -> MultinomialNB:
    """A plain MultinomialNB that learns the same weights and scores what it is given."""
    return MultinomialNB(alpha=model.alpha, mu=model.mu, class_prior="uniform", empty_documents="learn")


def check_scoring(model: EmailNB, plain: MultinomialNB, raw: bytes) -> None:
    weights = model.tokenizer(raw)
    expected = reference_scoring(model, weights)
    got = model.score_weights(raw)
    assert got.keys() == expected.keys()
    assert all(got[f] == pytest.approx(expected[f], rel=1e-12, abs=0) for f in expected)
    log_proba = model.predict_log_proba_one(raw)
    want = plain.predict_log_proba_one(expected)
    assert log_proba.keys() == want.keys()
    for label in want:
        assert log_proba[label] == pytest.approx(want[label], rel=1e-12, abs=1e-12)


# -- made-up mail ---------------------------------------------------------------------------------

@pytest.mark.parametrize("params", [{}, {"tokenizer": EmailTokenizer(), "body_mass": 7.0, "field_mass": 0.5},
                                    {"masses": {"sender": 12.0, "url": 1.0}}])
def test_weights_match_the_reference_on_made_up_mail(params):
    weights = EmailWeights(**params)
    for raw, _ in stream(30):
        check_weights(weights, raw)
    check_weights(weights, b"")
    check_weights(weights, "Subject: caf\u00e9 \udcff\n\nna\u00efve na\u00efve".encode("utf-8", "surrogateescape"))


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=2000))
def test_any_bytes_give_weights_that_carry_the_field_masses(raw):
    weights = EmailWeights()
    check_weights(weights, raw)
    model = EmailNB()
    model.learn_one(raw, SPAM)
    model.learn_one(mail(1, HAM), HAM)
    assert set(model.predict_proba_one(raw)) == {SPAM, HAM}
    model.unlearn_one(raw, SPAM)  # bit-exact weights: unlearning leaves no residue


def test_scoring_matches_the_numpy_reference_on_made_up_mail():
    model = EmailNB()
    plain = plain_twin(model)
    for raw, label in stream(40):
        model.learn_one(raw, label)
        plain.learn_one(model.tokenizer(raw), label)
    for i in range(6):
        check_scoring(model, plain, mail(200 + i, SPAM if i % 2 else HAM))
    check_scoring(model, plain, b"Subject: never seen\n\nqqq zzz")
    assert model.score_weights({"cheap": 0.5, "subject:x": 1.0}) == pytest.approx(
        reference_scoring(model, {"cheap": 0.5, "subject:x": 1.0}), rel=1e-12)


def test_hashed_models_cannot_score_with_the_idf():
    with pytest.raises(ValueError):
        EmailNB(storage=Storage(n_buckets=1024))
    hashed = EmailNB(storage=Storage(n_buckets=1024), idf=False)
    assert hashed.predict_one(mail(1, SPAM)) is None
    with pytest.raises(ValueError, match="n_buckets"):
        hashed.idf = True
    assert hashed.idf is False  # the refusal changed nothing


# -- the SpamAssassin corpus ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def corpus():
    if not CORPUS:
        pytest.skip("STREAMNB_SPAMASSASSIN is not set (point it at the SpamAssassin corpus to run)")
    from streamnb.filter.datasets import load_spamassassin

    return load_spamassassin(CORPUS)


def test_weights_match_the_reference_on_the_corpus(corpus):
    weights = EmailWeights()
    for message in corpus:
        check_weights(weights, message.raw)
    other = EmailWeights(EmailTokenizer(), body_mass=20.0, masses={"sender": 12.0})
    for message in corpus[::10]:
        check_weights(other, message.raw)


def test_scoring_matches_the_numpy_reference_on_the_corpus(corpus):
    model = EmailNB()
    plain = plain_twin(model)
    for i, message in enumerate(corpus[:1500]):
        if i % 50 == 0:
            check_scoring(model, plain, message.raw)
        model.learn_one(message.raw, message.label)
        plain.learn_one(model.tokenizer(message.raw), message.label)
