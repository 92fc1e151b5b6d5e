"""Tests of EmailTokenizer.field, EmailTfidf (per-field TF-IDF) and EmailPipeline."""

from __future__ import annotations

import json
import math
import pickle

import pytest

from benchmarks.email_pipeline import EmailPipeline, EmailTfidf
from streamnb import MultinomialNB
from streamnb.errors import InvalidInputError, InvalidParameterError, InvalidTypeError
from streamnb.features.email import EmailTokenizer
from streamnb.features.text import OnlineTfidf

SPAM = b"""\
From: Deals <deals@offers.example.biz>
To: someone@example.org
Subject: FREE offer, act now
Content-Type: text/html

<p>Click <a href="http://offers.example.biz/buy">here</a> for a free offer, free shipping</p>
"""

HAM = b"""\
From: Alice <alice@example.org>
To: bob@example.org
Subject: Re: meeting notes
X-Mailer: Mutt

The notes from the meeting are attached below; see you on Monday.
"""

HAM_2 = b"""\
From: Carol <carol@example.org>
To: bob@example.org
Subject: lunch on Monday
User-Agent: Mutt

Lunch on Monday after the meeting?
"""


# --------------------------------------------------------------------------------------------
# EmailTokenizer.field
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "feature, field",
    [
        ("free", "body"),
        ("free offer", "body"),  # a word pair is a body feature
        ("subject:free", "subject"),
        ("url:example.biz", "url"),
        ("from:example.biz", "address"),
        ("reply-to:com", "address"),
        ("header:x-mailer", "header"),
        ("content-type:text/html", "mime"),
        ("charset:utf-8", "mime"),
        ("encoding:base64", "mime"),
        ("attachment:application/pdf", "mime"),
        ("mime:startboundarynotfounddefect", "mime"),
        ("x-mailer:mutt", "other"),
        ("precedence:bulk", "other"),
    ],
)
def test_field_of_each_feature_kind(feature, field):
    assert EmailTokenizer().field(feature) == field


def test_field_follows_the_address_headers_setting():
    tokenizer = EmailTokenizer(address_headers=["from", "x-original-sender"])
    assert tokenizer.field("x-original-sender:example.com") == "address"
    assert tokenizer.field("to:example.com") == "other"


def test_every_feature_of_a_message_has_a_known_field():
    tokenizer = EmailTokenizer()
    fields = {tokenizer.field(f) for raw in (SPAM, HAM) for f in tokenizer(raw)}
    assert fields == {"body", "subject", "url", "address", "header", "mime", "other"}


# --------------------------------------------------------------------------------------------
# EmailTfidf
# --------------------------------------------------------------------------------------------


def test_masses_per_field():
    weights = EmailTfidf(body_mass=30.0, field_mass=3.0)
    tokenizer = weights.tokenizer
    for raw in (SPAM, HAM, HAM_2):
        features = tokenizer(raw)
        weights.learn_one(features)
    out = weights.transform_one(tokenizer(SPAM))
    totals: dict[str, float] = {}
    for feature, value in out.items():
        totals[tokenizer.field(feature)] = totals.get(tokenizer.field(feature), 0.0) + value
    assert totals == pytest.approx(
        {"body": 30.0, "subject": 3.0, "url": 3.0, "address": 3.0, "header": 3.0, "mime": 3.0}
    )


def test_weights_by_hand():
    weights = EmailTfidf(body_mass=10.0, field_mass=2.0)
    weights.learn_one({"free": 1, "subject:free": 1})
    weights.learn_one({"hello": 1})
    x = {"free": 3, "offer": 1, "subject:free": 1, "subject:now": 2}
    # idf = ln((1 + N) / (1 + df)) + 1 with N = 2
    idf_free, idf_new = math.log(3 / 2) + 1, math.log(3) + 1
    body = {"free": math.log(4) * idf_free, "offer": math.log(2) * idf_new}
    subject = {"subject:free": math.log(2) * idf_free, "subject:now": math.log(3) * idf_new}
    expected = {k: 10.0 * v / sum(body.values()) for k, v in body.items()}
    expected.update({k: 2.0 * v / sum(subject.values()) for k, v in subject.items()})
    assert weights.transform_one(x) == pytest.approx(expected)


def test_transform_changes_nothing_and_learn_unlearn_round_trip():
    weights = EmailTfidf()
    features = weights.tokenizer(SPAM)
    weights.learn_one(weights.tokenizer(HAM))
    before = weights.transform_one(features)
    assert weights.transform_one(features) == before and weights.n_docs == 1
    weights.learn_one(features)
    assert weights.transform_one(features) != before
    weights.unlearn_one(features)
    assert weights.transform_one(features) == before and weights.n_docs == 1


def test_empty_and_zero_features():
    weights = EmailTfidf()
    assert weights.transform_one({}) == {}
    assert weights.transform_one({"word": 0}) == {}


def test_params_json_round_trip_and_pickle():
    weights = EmailTfidf(EmailTokenizer(body={"ngram_range": [1, 2]}), body_mass=20, field_mass=2)
    weights.learn_one(weights.tokenizer(HAM))
    params = weights.get_params()
    twin = EmailTfidf(**json.loads(json.dumps(params)))
    assert twin.get_params() == params and twin.n_docs == 0
    clone = pickle.loads(pickle.dumps(weights))
    features = weights.tokenizer(SPAM)
    assert clone.transform_one(features) == weights.transform_one(features)
    assert "n_docs=1" in repr(weights)


@pytest.mark.parametrize(
    "kwargs, error, fragment",
    [
        ({"body_mass": 0}, InvalidParameterError, "body_mass"),
        ({"field_mass": -1.0}, InvalidParameterError, "field_mass"),
        ({"field_mass": math.inf}, InvalidParameterError, "inf"),
        ({"body_mass": True}, InvalidParameterError, "True"),
        ({"tokenizer": "email"}, InvalidTypeError, "'email'"),
    ],
)
def test_bad_settings_raise(kwargs, error, fragment):
    with pytest.raises(error) as info:
        EmailTfidf(**kwargs)
    assert fragment in str(info.value)


# --------------------------------------------------------------------------------------------
# EmailPipeline
# --------------------------------------------------------------------------------------------


class CountingTokenizer(EmailTokenizer):
    """An EmailTokenizer that counts how often it tokenizes."""

    calls = 0

    def __call__(self, message):
        CountingTokenizer.calls += 1
        return super().__call__(message)


STREAM = [(SPAM, "spam"), (HAM, "ham"), (HAM_2, "ham"), (SPAM.replace(b"act now", b"today"), "spam"), (HAM, "ham")]


def test_defaults_are_the_recommended_setting():
    pipeline = EmailPipeline()
    assert pipeline.tokenizer == EmailTokenizer(body={"ngram_range": [1, 2]})
    assert pipeline.weights.tokenizer is pipeline.tokenizer
    assert (pipeline.weights.body_mass, pipeline.weights.field_mass) == (30.0, 3.0)
    assert isinstance(pipeline.model, MultinomialNB)
    assert pipeline.model.get_params() == MultinomialNB(alpha=0.03, mu=300.0, class_prior="uniform").get_params()
    assert EmailPipeline.STRICT_CUTOFF == 1 - 1e-7


def test_predict_then_learn_equals_the_parts_by_hand():
    pipeline = EmailPipeline()
    tokenizer = EmailTokenizer(body={"ngram_range": [1, 2]})
    weights = EmailTfidf(tokenizer)
    model = MultinomialNB(alpha=0.03, mu=300.0, class_prior="uniform")
    for raw, label in STREAM:
        features = tokenizer(raw)
        x = weights.transform_one(features)
        assert pipeline.predict_proba_one(raw) == model.predict_proba_one(x)
        assert pipeline.predict_log_proba_one(raw) == model.predict_log_proba_one(x)
        assert pipeline.predict_one(raw) == model.predict_one(x)
        pipeline.learn_one(raw, label)
        model.learn_one(x, label)
        weights.learn_one(features)
    assert pipeline.classes == ["spam", "ham"]
    assert pipeline.predict_proba_one(SPAM)["spam"] > 0.5
    assert pipeline.predict_one(HAM) == "ham"


def test_learn_without_predict_uses_the_weights_before_learning():
    learn_only, predict_first = EmailPipeline(), EmailPipeline()
    for raw, label in STREAM:
        learn_only.learn_one(raw, label)
        predict_first.predict_one(raw)
        predict_first.learn_one(raw, label)
    assert learn_only.predict_log_proba_one(SPAM) == predict_first.predict_log_proba_one(SPAM)


def test_a_message_is_tokenized_once_per_predict_then_learn():
    pipeline = EmailPipeline(tokenizer=CountingTokenizer())
    CountingTokenizer.calls = 0
    for raw, label in STREAM:
        pipeline.predict_proba_one(raw)
        pipeline.predict_one(raw)
        pipeline.learn_one(raw, label)
        pipeline.predict_one(raw)  # after learning: new weights, same tokens
    assert CountingTokenizer.calls == len(STREAM)


def test_weights_changed_behind_the_pipeline_are_noticed():
    pipeline = EmailPipeline()
    for raw, label in STREAM[:3]:
        pipeline.learn_one(raw, label)
    before = pipeline.predict_log_proba_one(SPAM)
    pipeline.weights.unlearn_one(pipeline.tokenizer(HAM))
    pipeline.weights.learn_one(pipeline.tokenizer(SPAM))  # as many messages, other frequencies
    fresh = pipeline.model.predict_log_proba_one(pipeline.weights.transform_one(pipeline.tokenizer(SPAM)))
    assert pipeline.predict_log_proba_one(SPAM) == fresh != before


def test_untrained_and_empty_messages():
    pipeline = EmailPipeline()
    assert pipeline.predict_proba_one(SPAM) == {} and pipeline.predict_one(SPAM) is None
    with pytest.raises(InvalidInputError, match="empty document"):
        pipeline.learn_one(b"", "ham")
    assert pipeline.weights.n_docs == 0 and pipeline.classes == []  # nothing changed
    pipeline.learn_one(HAM, "ham")
    assert pipeline.weights.n_docs == 1


def test_str_input_and_pickle():
    pipeline = EmailPipeline()
    for raw, label in STREAM:
        pipeline.learn_one(raw.decode("ascii"), label)
    clone = pickle.loads(pickle.dumps(pipeline))
    assert clone._last is None
    assert clone.predict_proba_one(SPAM) == pipeline.predict_proba_one(SPAM)
    clone.learn_one(HAM_2, "ham")
    assert clone.weights.n_docs == pipeline.weights.n_docs + 1


def test_custom_parts_and_bad_arguments():
    weights = EmailTfidf(EmailTokenizer(), field_mass=1.0)
    pipeline = EmailPipeline(MultinomialNB(alpha=0.01), weights=weights)
    assert pipeline.tokenizer is weights.tokenizer and pipeline.model.alpha == 0.01
    with pytest.raises(InvalidTypeError, match="tokenizer"):
        EmailPipeline(tokenizer=lambda raw: {})  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="weights"):
        EmailPipeline(weights=OnlineTfidf())  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="model"):
        EmailPipeline(model=object())
