"""CategoricalNB: parity with scikit-learn, growing categories, unseen categories, unlearn, merge, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.naive_bayes import CategoricalNB as SkCategoricalNB

from streamnb import CategoricalNB
from streamnb.errors import IncompatibleModelsError, InvalidInputError, InvalidParameterError, InvalidTypeError
from tests.state import learn_records, learn_then_unlearn, record_streams

FIELDS = ["colour", "domain", "hour"]
POOLS = {"colour": ["red", "green", "blue", "black", "white"], "domain": ["x.com", "y.org", "z.net"],
         "hour": [0, 1, 2, 3, 4, 5, 6, 7]}

records = st.fixed_dictionaries({f: st.sampled_from(POOLS[f]) for f in FIELDS})
streams = st.lists(st.tuples(records, st.sampled_from(["ham", "spam", "news"]), st.sampled_from([1.0, 1.0, 0.5, 3.0])),
                   min_size=1, max_size=20)


def encode(prefix, rows):
    """Rows as scikit-learn's integer codes: categories numbered in order of first appearance."""
    codes = {f: {} for f in FIELDS}
    for record, _, _ in prefix:
        for f in FIELDS:
            codes[f].setdefault(record[f], len(codes[f]))
    return np.array([[codes[f][row[f]] for f in FIELDS] for row in rows]), codes


@pytest.mark.parametrize("min_categories", [None, 4])
@settings(max_examples=40, deadline=None)
@given(stream=streams, picks=st.lists(st.tuples(st.integers(0, 99), st.integers(0, 99), st.integers(0, 99)),
                                      min_size=1, max_size=3))
def test_streaming_equals_sklearn_batch_at_every_prefix(min_categories, stream, picks):
    """Categories and classes appear mid-stream: log-probabilities within 1e-9 of scikit-learn's fit."""
    model = CategoricalNB(alpha=0.6, min_categories=min_categories)
    for n, (record, label, weight) in enumerate(stream, start=1):
        model.learn_one(record, label, weight)
        prefix = stream[:n]
        X, codes = encode(prefix, [r for r, _, _ in prefix])
        reference = SkCategoricalNB(alpha=0.6, min_categories=min_categories).fit(
            X, [lab for _, lab, _ in prefix], sample_weight=[w for _, _, w in prefix])
        seen = {f: list(codes[f]) for f in FIELDS}
        queries = [{f: seen[f][p % len(seen[f])] for f, p in zip(FIELDS, pick)} for pick in picks]
        Xq, _ = encode(prefix, queries)
        expected = reference.predict_log_proba(Xq)
        got = np.array([[model.predict_log_proba_one(q)[c] for c in reference.classes_] for q in queries])
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)
        assert [model.n_categories(f) for f in FIELDS] == list(reference.n_categories_)


def test_learn_many_and_merge_equal_sklearn():
    rng = np.random.default_rng(4)
    X = rng.integers(0, [3, 6, 2], size=(150, 3))
    y = rng.choice(["a", "b", "c"], 150).tolist()
    reference = SkCategoricalNB().fit(X, y)
    expected = reference.predict_log_proba(X[:20])
    batch = CategoricalNB().learn_many(X, y, feature_names=FIELDS)
    first, second = CategoricalNB().learn_many(X[:70], y[:70], feature_names=FIELDS), CategoricalNB()
    second.learn_many(X[70:], y[70:], feature_names=FIELDS)
    merged = first.merge(second)
    for model in (batch, merged):
        got = np.array([[model.predict_log_proba_one(dict(zip(FIELDS, row.tolist())))[c] for c in reference.classes_]
                        for row in X[:20]])
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)


def test_smoothing_over_the_categories_seen_so_far_by_hand():
    model = CategoricalNB(alpha=1.0)
    model.learn_one({"colour": "red", "domain": "x.com"}, "spam")
    model.learn_one({"colour": "red"}, "spam")  # domain missing: N_ci(domain) = 1, N_c = 2
    model.learn_one({"colour": "blue", "domain": "y.org"}, "ham")
    # colour: categories {red, blue}; spam: red 2 of 2 -> (2+1)/(2+2); ham: red 0 of 1 -> (0+1)/(1+2)
    # domain: categories {x.com, y.org}; spam: x.com 1 of 1 -> 2/3; ham: 0 of 1 -> 1/3
    spam = math.log(2 / 3) + math.log(3 / 4) + math.log(2 / 3)
    ham = math.log(1 / 3) + math.log(1 / 3) + math.log(1 / 3)
    got = model.predict_log_proba_one({"colour": "red", "domain": "x.com"})
    assert got["spam"] == pytest.approx(spam - math.log(math.exp(spam) + math.exp(ham)), rel=1e-12)
    # a third colour changes every class's colour denominator at once
    model.learn_one({"colour": "green"}, "ham")
    assert model.n_categories("colour") == 3
    spam = math.log(2 / 4) + math.log(3 / 5) + math.log(2 / 3)
    ham = math.log(2 / 4) + math.log(1 / 5) + math.log(1 / 3)
    got = model.predict_log_proba_one({"colour": "red", "domain": "x.com"})
    assert got["spam"] == pytest.approx(spam - math.log(math.exp(spam) + math.exp(ham)), rel=1e-12)
    assert model.category_counts("colour", "ham") == {"blue": 1.0, "green": 1.0}


def test_unseen_categories():
    data = [({"colour": "red", "hour": 3}, "spam"), ({"colour": "blue", "hour": 3}, "ham"),
            ({"colour": "red", "hour": 4}, "ham")]
    models = {mode: CategoricalNB(unseen=mode) for mode in ("ignore", "score", "error")}
    for model in models.values():
        for record, label in data:
            model.learn_one(record, label)
    query = {"colour": "purple", "hour": 3}
    # ignore: as if the field were missing
    assert models["ignore"].predict_log_proba_one(query) == models["ignore"].predict_log_proba_one({"hour": 3})
    # score: a zero-count third colour; spam: alpha / (1 + 3 alpha), ham: alpha / (2 + 3 alpha)
    spam = math.log(1 / 3) + math.log(1 / 4) + math.log(2 / 3)
    ham = math.log(2 / 3) + math.log(1 / 5) + math.log(2 / 4)
    got = models["score"].predict_log_proba_one(query)
    assert got["spam"] == pytest.approx(spam - math.log(math.exp(spam) + math.exp(ham)), rel=1e-12)
    # error: names the field and the value, changes nothing
    before = snapshot(models["error"])
    with pytest.raises(InvalidInputError, match="'purple'.*'colour'"):
        models["error"].predict_proba_one(query)
    assert snapshot(models["error"]) == before
    # a field never learned is ignored in every mode
    for model in models.values():
        assert model.predict_log_proba_one({"hour": 3, "new-field": "x"}) == model.predict_log_proba_one({"hour": 3})


def snapshot(model):
    tables = {}
    for name in model.features.mapping():
        for label in model.classes:
            tables[(name, label)] = model.category_counts(name, label)
        tables[name] = sorted(map(str, model.categories(name)))
    return model.class_counts, tables, model.predict_log_proba_one({"colour": "red", "hour": 3})


operations = record_streams(st.dictionaries(st.sampled_from(FIELDS), st.sampled_from(["p", "q", "r", 1, 2])),
                            [1.0, 0.3, 2.0])


@settings(max_examples=60, deadline=None)
@given(base=operations, extra=operations)
def test_learn_then_unlearn_restores_the_state(base, extra):
    model = CategoricalNB()
    learn_records(model, base)
    before = flat(model)
    learn_then_unlearn(model, extra)
    after = flat(model)
    # the same classes, fields, categories and n_categories; counts equal up to the rounding
    # of fractional weights (1 + 0.3 - 0.3 is not exactly 1)
    assert after.keys() == before.keys()
    assert after == pytest.approx(before, rel=1e-12, abs=1e-12)


def flat(model):
    """The snapshot as one flat dict of numbers (keys carry the structure)."""
    counts, tables, prediction = snapshot(model)
    result = {("N", label): v for label, v in counts.items()}
    result.update({("P", label): v for label, v in prediction.items()})
    for key, table in tables.items():
        if isinstance(table, list):
            result[("categories", key, tuple(table))] = len(table)
        else:
            result.update({("count", key, str(category)): v for category, v in table.items()})
    result.update({("n_categories", f): model.n_categories(f) for f in FIELDS})
    return result


def test_forgotten_categories_leave_the_denominator():
    model = CategoricalNB()
    model.learn_one({"colour": "red"}, "a")
    model.learn_one({"colour": "blue"}, "b")
    reference = model.predict_log_proba_one({"colour": "red"})
    model.learn_one({"colour": "green"}, "a")
    model.learn_one({"colour": "green", "hour": 2}, "b")
    assert model.n_categories("colour") == 3
    model.unlearn_one({"colour": "green"}, "a")
    model.unlearn_one({"colour": "green", "hour": 2}, "b")
    assert model.n_categories("colour") == 2 and model.n_features == 1 and model.categories("hour") == []
    assert model.predict_log_proba_one({"colour": "red"}) == reference


# -- bad input ----------------------------------------------------------------------

@pytest.fixture
def trained():
    model = CategoricalNB()
    model.learn_one({"colour": "red", "hour": 3}, "spam")
    model.learn_one({"colour": "blue", "hour": 4}, "ham")
    return model


@pytest.mark.parametrize("record, error, message", [
    ({"colour": float("nan")}, InvalidInputError, "'colour'.*finite"),
    ({"colour": float("inf")}, InvalidInputError, "'colour'.*finite"),
    ({"colour": None}, InvalidTypeError, "'colour'"),
    ({"colour": ["red"]}, InvalidTypeError, "'colour'"),
    ("red", InvalidTypeError, "mapping"),
])
def test_bad_records_change_nothing(trained, record, error, message):
    before = snapshot(trained)
    for call in (lambda: trained.learn_one(record, "spam"), lambda: trained.predict_one(record),
                 lambda: trained.learn_many([{"colour": "red"}, record], ["spam", "ham"])):
        with pytest.raises(error, match=message):
            call()
    assert snapshot(trained) == before


def test_bad_unlearning_changes_nothing(trained):
    before = snapshot(trained)
    with pytest.raises(InvalidInputError, match="'green'"):
        trained.unlearn_one({"colour": "green"}, "spam")
    with pytest.raises(InvalidInputError, match="'blue'"):
        trained.unlearn_one({"colour": "blue"}, "spam")  # blue was learned as ham
    with pytest.raises(InvalidInputError, match="cannot remove"):
        trained.unlearn_one({"colour": "red"}, "spam", 2.0)
    with pytest.raises(InvalidInputError):
        trained.unlearn_many([{"colour": "red"}, {"colour": "nope"}], ["spam", "ham"])
    assert snapshot(trained) == before


def test_parameters_are_checked():
    with pytest.raises(InvalidParameterError, match="alpha"):
        CategoricalNB(alpha=0)
    with pytest.raises(InvalidParameterError, match="min_categories"):
        CategoricalNB(min_categories=-1)
    with pytest.raises(InvalidParameterError, match="min_categories\\['hour'\\]"):
        CategoricalNB(min_categories={"hour": 2.5})
    with pytest.raises(InvalidParameterError, match="unseen"):
        CategoricalNB(unseen="drop")
    with pytest.raises(IncompatibleModelsError, match="alpha"):
        CategoricalNB(alpha=1).merge(CategoricalNB(alpha=2))


def test_min_categories_per_field():
    model = CategoricalNB(min_categories={"hour": 24})
    model.learn_one({"hour": 3, "colour": "red"}, "a")
    assert model.n_categories("hour") == 24 and model.n_categories("colour") == 1
    # P(hour = 3 | a) = (1 + 1) / (1 + 24)
    model.learn_one({"hour": 5, "colour": "red"}, "b")
    jll = model._log_likelihood(model._encode({"hour": 3}))
    assert jll.tolist() == pytest.approx([math.log(2 / 25), math.log(1 / 25)], rel=1e-12)


def test_float_categories_are_categories():
    model = CategoricalNB(alpha=1.0)
    model.learn_one({"rating": 0.5}, "a")
    model.learn_one({"rating": 1.0}, "b")
    model.learn_one({"rating": 1}, "b")  # the same category as 1.0
    assert model.n_categories("rating") == 2
    assert model.category_counts("rating", "b") == {1.0: 2.0}
    assert model.predict_one({"rating": 0.5}) == "a"
