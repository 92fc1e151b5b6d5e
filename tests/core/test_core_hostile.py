"""Hostile input to the core (issue 13): huge documents, invalid UTF-8, lone surrogates,
NaN/inf/negative/huge weights and values, values that are no numbers, odd keys, absurd labels.

Every call either raises a ``streamnb.errors`` error that names the problem and leaves the
model exactly as it was (a full snapshot before and after, as tests/retrain_support.py
takes it), or gives the correct result (checked against a reference computed here) —
never a crash, a hang, a Python error of the wrong kind or a ``PanicException`` (which
derives from BaseException, so ``pytest.raises(StreamNBError)`` would not swallow it).
"""

from __future__ import annotations

import math
import pickle
import sys
import time
from collections import Counter
from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer

import streamnb
from streamnb import BernoulliNB, ComplementNB, EmailTokenizer, MultinomialNB, Tokenizer
from streamnb.errors import InvalidInputError, InvalidLabelError, InvalidTypeError, StreamNBError, UnknownClassError
from streamnb.models import Forgetting, Storage
from tests.core.test_core_properties import numpy_log_proba
from tests.retrain_support import snapshot

STREAM = [({"cheap": 2, "pills": 1}, "spam"), ({"meeting": 1, "noon": 2}, "ham"), ({"cheap": 1, "offer": 3}, "spam"),
          ({"lunch": 2, "meeting": 1, "now": 1}, "ham")]
PROBES = [{"cheap": 1}, {"meeting": 2, "offer": 1}, {"unseen": 1, "now": 1}]

FACTORIES = {
    "multinomial": lambda: MultinomialNB(),
    "mu": lambda: MultinomialNB(mu=3.0),
    "bernoulli": lambda: BernoulliNB(),
    "complement-norm": lambda: ComplementNB(norm=True),
    "hashed": lambda: MultinomialNB(storage=Storage(n_buckets=64)),
    "sparse-forgetting": lambda: BernoulliNB(storage=Storage(dense_max_classes=1), forgetting=Forgetting(half_life=10.0)),
}


def trained(name: str):
    model = FACTORIES[name]()
    for x, y in STREAM:
        model.learn_one(x, y)
    return model


@pytest.fixture(params=sorted(FACTORIES))
def model(request):
    return trained(request.param)


def state(model, probes=PROBES) -> tuple:
    return snapshot(model), [model.predict_log_proba_one(p) for p in probes]


def refused(model, call, error, match, probes=PROBES):
    """call() raises error (matching) and the model is exactly as it was."""
    before = state(model, probes)
    with pytest.raises(error, match=match):
        call()
    assert state(model, probes) == before


def all_calls(model, x, label="spam", w=1.0):
    """Every entry point a document goes through (a model that forgets is told the age)."""
    one, many = ({"learned_at": 1}, {"learned_at": [1, 1]}) if model.forgetting.half_life else ({}, {})
    return [lambda: model.learn_one(x, label, w), lambda: model.unlearn_one(x, label, w, **one),
            lambda: model.learn_many([{"cheap": 1}, x], [label, label], [1.0, w]),
            lambda: model.unlearn_many([{"cheap": 1}, x], [label, label], [1.0, w], **many),
            lambda: model.predict_log_proba_one(x), lambda: model.predict_many([{"cheap": 1}, x]),
            lambda: model.contributions_one(x), lambda: model.document_counts(x)]


# -- values ----------------------------------------------------------------------------------
BAD_VALUES = [
    (math.nan, InvalidInputError, "finite, got nan"),
    (math.inf, InvalidInputError, "finite, got inf"),
    (-math.inf, InvalidInputError, "finite, got -inf"),
    (np.float64("nan"), InvalidInputError, "finite, got nan"),
    (10**400, InvalidInputError, "finite numbers, got 1000"),
    ("3", InvalidTypeError, "must be numbers, got '3'"),
    (None, InvalidTypeError, "must be numbers, got None"),
    ([1], InvalidTypeError, r"must be numbers, got \[1\]"),
    (1j, InvalidTypeError, "must be numbers, got 1j"),
    (Decimal("NaN"), InvalidTypeError, "must be numbers, got Decimal"),
    (np.array([1.0]), InvalidTypeError, "must be numbers, got array"),
]


@pytest.mark.parametrize("value, error, match", BAD_VALUES, ids=lambda v: repr(v)[:20])
def test_bad_values_are_refused_everywhere_naming_them(model, value, error, match):
    for call in all_calls(model, {"cheap": 1, "evil": value}):
        refused(model, call, error, match)


@pytest.mark.parametrize("name", ["multinomial", "mu", "complement-norm", "hashed"])
def test_negative_counts_are_refused_but_bernoulli_reads_them_as_absent(name):
    model = trained(name)
    for call in all_calls(model, {"cheap": 1, "evil": -2.5})[:4]:
        refused(model, call, InvalidInputError, r"feature counts must be >= 0, got -2\.5")
    bernoulli = trained("bernoulli")
    bernoulli.learn_one({"cheap": 1, "negative": -2.5}, "spam")  # -2.5 <= binarize: absent
    assert bernoulli.feature_doc_counts("negative") == {} and bernoulli.class_counts["spam"] == 3.0
    assert bernoulli.feature_doc_counts("cheap") == {"spam": 3.0, "ham": 0.0}


def test_numbers_of_every_kind_count_as_their_float_value():
    reference = MultinomialNB().learn_one({"a": 1.0, "b": 3.0, "c": 0.25, "d": 1.0, "e": 7.0, "f": 1e299}, "x")
    model = MultinomialNB().learn_one({"a": True, "b": np.int64(3), "c": Fraction(1, 4), "d": np.float32(1.0),
                                       "e": 7, "f": 1e299}, "x")
    assert snapshot(model) == snapshot(reference)


@pytest.mark.parametrize("value", [1e300, 9.1e299])
def test_counts_that_would_overflow_are_refused(value):
    model = MultinomialNB().learn_one({"a": 1e299}, "x")
    refused(model, lambda: model.learn_one({"a": value}, "x"), InvalidInputError, "would overflow")
    refused(model, lambda: model.learn_many([{"a": value / 2}] * 2, ["x", "x"]), InvalidInputError, "would overflow")
    refused(model, lambda: model.learn_one({"a": 1.0}, "y", 1e300), InvalidInputError, "would overflow")
    other = MultinomialNB().learn_one({"b": 9.5e299}, "x")
    refused(model, lambda: model.merge(other), InvalidInputError, "would overflow")


def test_learning_then_unlearning_a_huge_document_restores_its_class():
    """T_c cannot hold counts 2^53 apart: learning 1e17 into T_c = 2 rounds it to 1e17. Taking
    1e17 away must not leave T_c = 0 beside the class's cells (P(w|c) > 1): it is re-summed."""
    model = MultinomialNB()
    model.learn_one({"cheap": 1, "b": 1}, "spam")
    model.learn_one({"meeting": 1}, "ham")
    before = model.predict_log_proba_one({"cheap": 1})
    model.learn_one({"huge": 1e17}, "spam")
    model.unlearn_one({"huge": 1e17}, "spam")
    assert model._core.class_tokens() == [2.0, 1.0]
    assert model.predict_log_proba_one({"cheap": 1}) == pytest.approx(before, abs=1e-9)


@pytest.mark.parametrize("norm", [False, True])
@pytest.mark.parametrize("weight", [2.0**53, 1e20])
def test_complement_weights_stay_finite_when_one_class_holds_a_huge_count(norm, weight):
    """F_notc,w = T_w - T_cw is taken before alpha is added: (T_w + alpha) - T_cw rounded alpha
    away once T_w >= 2^53, giving log 0 and NaN probabilities (found by tests/core/test_core_fuzz.py)."""
    model = ComplementNB(norm=norm)
    model.learn_one({"cheap": 1}, "spam")
    model.learn_one({"a": 1}, "ham", weight)
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    kind = "complement-norm" if norm else "complement"
    for probe in ({"a": 1}, {"cheap": 1}, {"a": 2, "cheap": 1}):
        got = model.predict_log_proba_one(probe)
        Xq = np.array([[probe.get("cheap", 0), probe.get("a", 0)]], dtype=float)
        classes, table = numpy_log_proba(kind, 1.0, None, X, np.array(["spam", "ham"], dtype=object),
                                         np.array([1.0, weight]), Xq)
        assert all(math.isfinite(v) for v in got.values()), got
        assert got == pytest.approx(dict(zip(classes, table[0].tolist())), abs=1e-9)


def test_unlearning_other_documents_than_were_learned_cannot_leave_a_feature_in_more_documents_than_its_class():
    """Bernoulli needs D_cf <= N_c: unlearning {a} twice from a class that learned {a, c} three
    times would leave N_c = 1 beside D_c,c = 3, P(c|class) > 1 and NaN (found by test_core_fuzz.py)."""
    model = BernoulliNB()
    model.learn_one({"a": 1, "b": 1}, "spam")
    model.learn_one({"a": 1, "c": 1}, "ham", 3.0)
    before = snapshot(model)
    with pytest.raises(InvalidInputError, match="would have 1 documents but a feature in 3 of them"):
        model.unlearn_one({"a": 1}, "ham", 2.0)
    assert snapshot(model) == before
    model.unlearn_one({"a": 1, "c": 1}, "ham", 2.0)  # what was learned: allowed
    assert all(math.isfinite(v) for v in model.predict_log_proba_one({"a": 1}).values())


# -- weights and clocks --------------------------------------------------------------------------
BAD_WEIGHTS = [math.nan, math.inf, -1.0, 0.0, -0.0, 10**400, "1", None, Decimal("2"), [1.0], True]


@pytest.mark.parametrize("w", BAD_WEIGHTS, ids=lambda v: repr(v)[:20])
def test_bad_weights_are_refused_naming_them(model, w):
    match = "sample weight must be a finite number > 0, got"
    refused(model, lambda: model.learn_one({"cheap": 1}, "spam", w), InvalidInputError, match)
    refused(model, lambda: model.unlearn_one({"cheap": 1}, "spam", w), InvalidInputError, match)
    refused(model, lambda: model.learn_many([{"cheap": 1}, {"noon": 1}], ["spam", "ham"], [1.0, w]),
            InvalidInputError, match)
    refused(model, lambda: model.unlearn_many([{"cheap": 1}, {"noon": 1}], ["spam", "ham"], [1.0, w]),
            InvalidInputError, match)


def test_tiny_and_huge_weights_that_fit_are_exact():
    model = MultinomialNB()
    model.learn_one({"a": 1}, "x", 5e-324)  # the smallest float above zero
    model.learn_one({"b": 2}, "y", 1e299)
    assert model.class_counts == {"x": 5e-324, "y": 1e299}
    assert model.feature_counts("a") == {"x": 5e-324, "y": 0.0} and model.feature_counts("b") == {"x": 0.0, "y": 2e299}
    model.unlearn_one({"b": 2}, "y", 1e299)
    assert model.class_counts == {"x": 5e-324} and model.n_features == 1


@pytest.mark.parametrize("learned_at", [-1, 0, 2**70, True, 1.5, "1", math.nan])
def test_bad_stamps_are_refused(learned_at):
    model = trained("sparse-forgetting")
    refused(model, lambda: model.unlearn_one({"cheap": 2, "pills": 1}, "spam", learned_at=learned_at),
            InvalidInputError, "learned_at must be a document stamp in")


@pytest.mark.parametrize("t", [math.nan, math.inf, -math.inf, "now", 10**400], ids=lambda v: repr(v)[:20])
def test_bad_timestamps_are_refused(t):
    model = MultinomialNB(forgetting=Forgetting(half_life_seconds=60.0))
    model.learn_one({"a": 1}, "x", t=0.0)
    refused(model, lambda: model.learn_one({"a": 1}, "x", t=t), InvalidInputError, "timestamp t must be a finite number",
            probes=[{"a": 1}])


# -- labels ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("label", [None, math.nan, 1.5, [1], b"spam", ("a",), object(), {"a": 1}, 1j],
                         ids=lambda v: type(v).__name__)
def test_absurd_labels_are_refused_naming_them(model, label):
    for call in all_calls(model, {"cheap": 1}, label=label)[:4]:
        refused(model, call, InvalidLabelError, "class label must be a str, int or bool, got")


def test_unknown_classes_are_refused_naming_them():
    model = trained("multinomial")
    refused(model, lambda: model.unlearn_one({"cheap": 1}, "never-seen"), UnknownClassError, "never-seen")
    refused(model, lambda: model.unlearn_many([{"cheap": 1}], ["never-seen"]), UnknownClassError, "never-seen")


def test_odd_labels_that_are_valid_keep_their_identity_through_files_and_pickles(tmp_path):
    odd = [10**100, -(2**63), "", "\ud800lone", "s" * 1_000_000, "\x00", True, "spam"]
    model = MultinomialNB(storage=Storage(dense_max_classes=2))
    for i, label in enumerate(odd):
        model.learn_one({f"w{i}": 1, "shared": 1}, label)
    model.learn_one({"shared": 1}, np.int64(10**18))
    model.learn_one({"shared": 2}, np.bool_(True))  # True is the class True already holds
    assert model.classes == odd + [10**18] and model.class_counts[True] == 2.0
    model.save(tmp_path / "odd.snb")
    for clone in (streamnb.load(tmp_path / "odd.snb"), pickle.loads(pickle.dumps(model))):
        assert clone.classes == model.classes and [type(c) for c in clone.classes] == [type(c) for c in model.classes]
        assert snapshot(clone) == snapshot(model)
        assert clone.predict_log_proba_one({"w3": 1}) == model.predict_log_proba_one({"w3": 1})


def test_many_classes_switch_to_sparse_rows_and_stay_exact():
    k = 3000
    model = MultinomialNB()
    for c in range(k):
        model.learn_one({f"own{c}": 1, "shared": 1}, c)
    assert not model._core.dense and len(model.classes) == k
    log_proba = model.predict_log_proba_one({"own7": 1, "shared": 1})
    # by hand: T_c = 2, |V| = k + 1; P(own7|7) = 2 / (2 + (k+1)), P(own7|c) = 1 / (2 + (k+1)) for c != 7
    jll = np.full(k, np.log(1 / (3 + k)) + np.log(2 / (3 + k)))
    jll[7] = np.log(2 / (3 + k)) + np.log(2 / (3 + k))
    expected = jll - np.logaddexp.reduce(jll)
    assert np.allclose([log_proba[c] for c in range(k)], expected, rtol=0, atol=1e-9)


# -- keys ------------------------------------------------------------------------------------------
class BadStr:
    def __str__(self):
        raise RuntimeError("this object has no str")

    def __hash__(self):
        return 1


def deep_tuple(depth: int) -> tuple:
    value: tuple = ("leaf",)
    for _ in range(depth):
        value = (value,)
    return value


@pytest.mark.parametrize("key", [frozenset({1}), object(), BadStr(), deep_tuple(100_000), ("ok", frozenset())],
                         ids=["frozenset", "object", "bad-str", "deep-tuple", "tuple-of-frozenset"])
def test_unusable_feature_names_are_refused_naming_them(key):
    model = trained("multinomial")
    for call in all_calls(model, {"cheap": 1, key: 1}):
        refused(model, call, InvalidTypeError, "feature names must be")


@pytest.mark.parametrize("key", [BadStr(), deep_tuple(100_000)], ids=["bad-str", "deep-tuple"])
def test_hashed_models_refuse_names_without_a_str(key):
    model = trained("hashed")
    for call in all_calls(model, {"cheap": 1, key: 1}):
        refused(model, call, InvalidTypeError, "feature name")


def test_odd_feature_names_that_are_valid_round_trip(tmp_path):
    odd = [1e300, "", "\x00", "\udfff", "\udc80\ud800", "k" * 10_000_000, None, 10**400, -0.0, 2.5,
           ("t", ("u", 1), None), "caf\u00e9", "\u03a3"]
    model = MultinomialNB()
    model.learn_one({key: i + 1 for i, key in enumerate(odd)}, "x")
    model.learn_one({"other": 1}, "y")
    assert model.n_features == len(odd) + 1
    for i, key in enumerate(odd):
        assert model.feature_counts(key) == {"x": i + 1.0, "y": 0.0}, repr(key)[:40]
    # Python dict semantics: True == 1 == 1.0 and 0.0 == -0.0 are one feature each.
    model.learn_one({1: 1, 0.0: 1}, "y")
    model.learn_one({True: 2, -0.0: 3}, "y")
    assert model.feature_counts(1.0) == {"x": 0.0, "y": 3.0} and model.feature_counts(0) == {"x": odd.index(-0.0) + 1.0, "y": 4.0}
    model.save(tmp_path / "keys.snb")
    for clone in (streamnb.load(tmp_path / "keys.snb"), pickle.loads(pickle.dumps(model))):
        assert snapshot(clone) == snapshot(model)
        assert clone.feature_counts("k" * 10_000_000) == {"x": 6.0, "y": 0.0}
    model.unlearn_one({key: i + 1 for i, key in enumerate(odd)}, "x")
    assert model.classes == ["y"] and model.n_features == 3


@pytest.mark.parametrize("key", [math.nan, math.inf, ("t", -math.inf), b"\xff\xfe", ("t", b"")], ids=repr)
def test_a_model_with_a_bytes_or_non_finite_feature_name_saves_and_pickles(tmp_path, key):
    model = MultinomialNB().learn_one({key: 1, "a": 1}, "x")
    assert model.n_features == 2
    model.save(tmp_path / "nan.snb")
    assert snapshot(streamnb.load(tmp_path / "nan.snb")) == snapshot(model)
    assert snapshot(pickle.loads(pickle.dumps(model))) == snapshot(model)


@pytest.mark.parametrize("how", ["file", "pickle"])
def test_a_pair_of_lone_surrogates_survives_a_round_trip(tmp_path, how):
    odd = "\ud800\udc00"
    model = MultinomialNB().learn_one({odd: 1, "a": 1}, odd).learn_one({"a": 1}, "y")
    if how == "file":
        model.save(tmp_path / "pair.snb")
        clone = streamnb.load(tmp_path / "pair.snb")
    else:
        clone = pickle.loads(pickle.dumps(model))
    assert clone.classes == [odd, "y"] and clone.feature_counts(odd) == {odd: 1.0, "y": 0.0}


class PairsMapping(Mapping):
    """A Mapping whose items() is whatever it was given (a broken or hostile mapping)."""

    def __init__(self, items):
        self._items = items

    def __getitem__(self, key):
        raise KeyError(key)

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 1

    def items(self):
        if isinstance(self._items, Exception):
            raise self._items
        return self._items


@pytest.mark.parametrize("items, error, match", [
    ([("a", 1, 2)], InvalidTypeError, r"\(feature, value\) pairs"),
    (["ab"], InvalidTypeError, r"\(feature, value\) pairs"),
    (None, InvalidTypeError, r"\(feature, value\) pairs"),
    (7, InvalidTypeError, r"\(feature, value\) pairs"),
    ([([1], 1)], InvalidTypeError, "feature names must be"),
    ([("a", "x")], InvalidTypeError, "must be numbers"),
    (LookupError("items() broke"), LookupError, "items\\(\\) broke"),  # the mapping's own error, as raised
], ids=["triples", "strings", "none", "int", "unhashable-key", "bad-value", "raises"])
def test_broken_mappings_are_refused_and_change_nothing(items, error, match):
    model = trained("multinomial")
    for call in all_calls(model, PairsMapping(items))[:5]:
        refused(model, call, error, match)


def test_a_mapping_listing_a_key_twice_counts_both():
    model = MultinomialNB().learn_one(PairsMapping([("a", 1), ("b", 1), ("a", 2)]), "x")
    assert model.feature_counts("a") == {"x": 3.0} and model.class_counts == {"x": 1.0}


# -- text --------------------------------------------------------------------------------------------
def analyzer(**params):
    """scikit-learn's analyzer: what the core's default tokenizer must give (its docstring)."""
    return CountVectorizer(**params).build_analyzer()


def test_bytes_and_invalid_utf8_are_refused_by_the_word_tokenizer():
    model = MultinomialNB(tokenizer=Tokenizer())
    model.learn_one("hello world", "x")
    for text in (b"hello \xff\xfe world", bytearray(b"abc"), b""):
        for call in all_calls(model, text, label="x")[:5]:
            refused(model, call, InvalidTypeError, "expects a str, got|a document must be", probes=["hello"])
    plain = trained("multinomial")
    for call in all_calls(plain, b"hello \xff world")[:5]:
        refused(plain, call, InvalidTypeError, "no tokenizer")


@pytest.mark.parametrize("text", [
    "hello \ud800world w\udfffx \udc00\udc00 ok",  # lone surrogates inside and between words
    "\ud83d\ude00 emoji \U0001F600 and \ud83d alone",  # a surrogate pair written as two code points
    "\u03a3\u0399\u03a3\u03a5\u03a6\u039f\u03a3 \u039f\u0394\u039f\u03a3",  # capital sigma: Python lowers
    "caf\u00e9 na\u00efve \u0130stanbul \u212a",  # lowercase changes the length (I with dot, Kelvin)
])
def test_text_with_lone_surrogates_and_odd_cases_equals_scikit_learn(text):
    model = MultinomialNB(tokenizer=Tokenizer())
    model.learn_one(text, "x")
    expected = Counter(analyzer()(text))
    got = {f: model.feature_counts(f)["x"] for f in model.store.vocabulary.mapping()}
    assert got == expected
    assert model.predict_log_proba_one(text) == {"x": 0.0}
    model.unlearn_one(text, "x")
    assert model.n_features == 0 and model.classes == []


def test_the_email_tokenizer_takes_invalid_utf8_and_surrogates():
    model = MultinomialNB(tokenizer=EmailTokenizer())
    raw = b"Subject: caf\xe9 \xff\xfe offer\r\nFrom: a@example.com\r\n\r\nbody \xc3\x28 \xed\xa0\x80 cheap pills\r\n"
    model.learn_one(raw, "spam")
    model.learn_one("Subject: \ud800 meeting\n\nlunch \udfff at noon", "ham")
    before = model.n_features
    proba = model.predict_proba_one(raw)
    assert proba["spam"] > 0.5 and math.isclose(sum(proba.values()), 1.0)
    model.unlearn_one(raw, "spam")
    assert model.classes == ["ham"] and 0 < model.n_features < before


def test_a_tokenizer_that_misbehaves_changes_nothing():
    def returns_nan(text):
        return {"a": 1, "b": math.nan}

    def raises(text):
        raise ZeroDivisionError("tokenizer bug")

    for tokenizer, error, match in [(returns_nan, InvalidInputError, "finite, got nan"),
                                    (str.split, InvalidTypeError, "must return a mapping"),
                                    (raises, ZeroDivisionError, "tokenizer bug")]:
        model = MultinomialNB(tokenizer=tokenizer)
        model.learn_one({"a": 1}, "x")
        for call in all_calls(model, "some text", label="x")[:5]:
            refused(model, call, error, match, probes=[{"a": 1}])


# -- huge documents ---------------------------------------------------------------------------------
def ten_megabytes() -> str:
    return " ".join(f"W{i % 50_000}x" for i in range(1_300_000)) + " tail\u00e9"


@pytest.mark.parametrize("max_chars", [None, 1_000_000])
def test_a_ten_megabyte_text(max_chars):
    text = ten_megabytes()
    assert len(text) > 10_000_000
    model = MultinomialNB(tokenizer=Tokenizer(max_chars=max_chars))
    started = time.perf_counter()
    model.learn_one(text, "x")
    model.learn_one("W1x tail\u00e9 other", "y")
    elapsed = time.perf_counter() - started
    expected = Counter(analyzer()(text if max_chars is None else text[:max_chars]))
    assert model.n_features == len(set(expected) | set(analyzer()("W1x tail\u00e9 other")))
    for feature in ("w0x", "w49999x", "w1x", "tail\u00e9"):
        assert model.feature_counts(feature).get("x", 0.0) == expected.get(feature, 0), feature
    if max_chars is None:
        assert model.feature_counts("w1x") == {"x": 26.0, "y": 1.0}
    assert elapsed < 20, elapsed  # linear: about 0.1 s here
    proba = model.predict_proba_one(text)
    assert proba["x"] > 1 - 1e-12 and proba["y"] < 1e-12
    model.unlearn_one(text, "x")
    assert model.classes == ["y"] and model.n_features == 3


@pytest.mark.parametrize("text", ["a" * 10_000_000, "\u03a3" * 3_000_000, "\ud800" * 3_000_000 + " word",
                                  " \t\n" * 3_000_000 + "end", "\u00e9" * 5_000_000],
                         ids=["one-huge-token", "capital-sigmas", "surrogates", "separators", "accents"])
def test_pathological_texts_take_linear_time_and_equal_scikit_learn(text):
    tokenizer = Tokenizer(max_chars=None)
    model = MultinomialNB(tokenizer=tokenizer)
    started = time.perf_counter()
    model.learn_one(text, "x")
    assert time.perf_counter() - started < 20
    expected = Counter(analyzer()(text))
    assert sorted((f, model.feature_counts(f)["x"]) for f in model.store.vocabulary.mapping()) == sorted(expected.items())


def char_wb(words: list, low: int, high: int) -> Counter:
    """Character n-grams inside each word padded with one space, as scikit-learn's char_wb."""
    out: Counter = Counter()
    for word in words:
        padded = f" {word} "
        for n in range(low, high + 1):
            offset = 0
            out[padded[:n]] += 1
            while offset + n < len(padded):
                offset += 1
                out[padded[offset:offset + n]] += 1
            if offset == 0:  # a word no longer than n counts once
                break
    return out


def test_character_and_word_ngrams_of_a_hostile_text():
    text = ("\ud800ab c\u00e9d \u03a3\u03a3 X " * 1000) + "a" * 10 + " \udfff" * 500
    words = analyzer()(text)
    for params, expected in [({"ngram_range": (1, 3)}, Counter(analyzer(ngram_range=(1, 3))(text))),
                             ({"char_ngram_range": (2, 4), "ngram_range": None}, char_wb(words, 2, 4))]:
        model = MultinomialNB(tokenizer=Tokenizer(**params))
        model.learn_one(text, "x")
        got = {f: model.feature_counts(f)["x"] for f in model.store.vocabulary.mapping()}
        assert got == expected, params


@pytest.mark.parametrize("name", ["multinomial", "bernoulli", "complement-norm", "hashed"])
def test_a_million_distinct_tokens_in_one_mapping(name):
    n = 1_000_000 if name == "multinomial" else 200_000
    big = {f"t{i}": 1 + i % 3 for i in range(n)}
    model = FACTORIES[name]()
    model.learn_one(big, "a")
    model.learn_one({"t1": 1, "z": 2}, "b")
    probe = {"t0": 1, "t1": 2, "t999": 1, "z": 1, "unseen": 4}
    got = model.predict_log_proba_one(probe)
    if name == "hashed":
        assert model.n_features <= 64 and math.isclose(sum(math.exp(v) for v in got.values()), 1.0)
    else:
        # the numpy reference over the full vocabulary (dense: 2 x (n + 1))
        vocabulary = list(big) + ["z"]
        X = np.zeros((2, n + 1))
        X[0, :n] = [1 + i % 3 for i in range(n)]
        X[1, 1], X[1, n] = 1, 2
        Xq = np.zeros((1, n + 1))
        Xq[0, [0, 1, 999, n]] = [1, 2, 1, 1]
        kind = {"complement-norm": "complement-norm"}.get(name, name)
        classes, table = numpy_log_proba(kind, 1.0, None, X, np.array(["a", "b"], dtype=object), np.ones(2), Xq)
        assert model.n_features == len(vocabulary)
        for c, v in zip(classes, table[0]):
            assert abs(got[c] - v) <= 1e-9 * max(1.0, abs(v)), (c, got[c], v)
    model.unlearn_one(big, "a")
    assert model.classes == ["b"] and model.n_features == (2 if name != "hashed" else len({
        model.store.vocabulary.find(["t1"])[0], model.store.vocabulary.find(["z"])[0]}))


def test_a_batch_of_huge_documents():
    docs = [{f"t{i}_{j}": 1 for j in range(20_000)} for i in range(5)]
    model = BernoulliNB()
    model.learn_many(docs, ["a", "b", "a", "b", "a"])
    assert model.n_features == 100_000 and model.class_counts == {"a": 3.0, "b": 2.0}
    refused(model, lambda: model.unlearn_many(docs + [{"never": 1}], ["a", "b", "a", "b", "a", "a"]),
            InvalidInputError, "never learned", probes=[{"t0_1": 1}])
    model.unlearn_many(docs[:4], ["a", "b", "a", "b"])
    assert model.n_features == 20_000 and model.class_counts == {"a": 1.0}


def test_recursion_limit_is_left_as_it_was():
    limit = sys.getrecursionlimit()
    model = MultinomialNB()
    with pytest.raises(InvalidTypeError):
        model.learn_one({deep_tuple(50_000): 1}, "x")
    assert sys.getrecursionlimit() == limit and model.n_features == 0


def test_no_hostile_call_ever_raises_something_else():
    """A sweep of the hostile inputs above through every kind of model: a streamnb error or
    the mapping's/tokenizer's own error, never anything else (no PanicException)."""
    hostile_docs = [{"a": math.nan}, {"a": -1}, {"a": "x"}, {frozenset(): 1}, {BadStr(): 1}, PairsMapping(None),
                    PairsMapping([(1, 2, 3)]), b"\xff", "\ud800", 3, None, [("a", 1)], {"a": 10**400}, {}]
    hostile_labels = [None, math.nan, [1], "ok"]
    hostile_weights = [math.nan, -1.0, 10**400, 1.0]
    combinations = [(label, 1.0) for label in hostile_labels] + [("spam", w) for w in hostile_weights]
    for name in sorted(FACTORIES):
        model = trained(name)
        for x in hostile_docs:
            for label, w in combinations:
                for call in all_calls(model, x, label, w):
                    before = snapshot(model)
                    try:
                        call()
                    except StreamNBError:
                        assert snapshot(model) == before
                    except BaseException as e:  # pragma: no cover - the failure being reported
                        raise AssertionError(f"{name}: {type(e).__module__}.{type(e).__name__}: {e}") from e
