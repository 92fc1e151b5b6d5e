"""GaussianNB: parity with scikit-learn, running moments, merge, unlearn, missing data, bad input."""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.naive_bayes import GaussianNB as SkGaussianNB

from streamnb import GaussianNB
from streamnb.errors import InvalidInputError, InvalidParameterError, InvalidTypeError, UnknownClassError
from tests.state import learn_records, learn_then_unlearn, record_streams

FEATURES = ["size", "links", "ratio"]

values = st.integers(-2000, 2000).map(lambda v: v / 16)  # exact binary fractions, varied scales
rows = st.tuples(values, values, values)
streams = st.lists(st.tuples(rows, st.sampled_from(["ham", "spam", "news"]),
                             st.sampled_from([1.0, 1.0, 0.5, 2.0, 3.25])), min_size=1, max_size=20)


def as_record(row):
    return dict(zip(FEATURES, row))


def log_proba_table(model, records, classes):
    table = [model.predict_log_proba_one(r) for r in records]
    return np.array([[row[c] for c in classes] for row in table])


@settings(max_examples=60, deadline=None)
@given(stream=streams, queries=st.lists(rows, min_size=1, max_size=3))
def test_streaming_equals_sklearn_batch_at_every_prefix(stream, queries):
    """Classes appear mid-stream, sample weights vary: log-probabilities as scikit-learn's fit."""
    model = GaussianNB()
    for n, (row, label, weight) in enumerate(stream, start=1):
        model.learn_one(as_record(row), label, weight)
        X = np.array([r for r, _, _ in stream[:n]])
        y = [lab for _, lab, _ in stream[:n]]
        weights = np.array([w for _, _, w in stream[:n]])
        reference = SkGaussianNB().fit(X, y, sample_weight=weights)
        assert model.epsilon == pytest.approx(reference.epsilon_, rel=1e-12, abs=0)
        got = log_proba_table(model, [as_record(q) for q in queries], list(reference.classes_))
        if reference.epsilon_ == 0:
            # every value so far is the same: scikit-learn divides by a zero variance; we keep the prior
            prior = np.log(reference.class_prior_)
            np.testing.assert_allclose(got, np.tile(prior - np.log(np.exp(prior).sum()), (len(queries), 1)), atol=1e-12)
            continue
        expected = reference.predict_log_proba(np.array(queries, dtype=float))
        # Within 1e-9, relative to the size of the joint log-likelihoods the posterior is formed
        # from (a class with one record has variance eps, so they can reach 1e9 and more).
        scale = 1 + np.abs(reference.predict_joint_log_proba(np.array(queries, dtype=float))).max()
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9 * scale)


def test_learn_many_and_merge_equal_sklearn_fit():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3)) * [1.0, 30.0, 0.01] + [5.0, -100.0, 0.2]
    y = rng.choice(["a", "b", "c"], 200).tolist()
    weights = rng.uniform(0.2, 3.0, 200)
    reference = SkGaussianNB().fit(X, y, sample_weight=weights)
    expected = reference.predict_log_proba(X[:20])
    batch = GaussianNB().learn_many(X, y, weights, feature_names=FEATURES)
    first, second = GaussianNB(), GaussianNB()
    first.learn_many(X[:120], y[:120], weights[:120], feature_names=FEATURES)
    second.learn_many(X[120:], y[120:], weights[120:], feature_names=FEATURES)
    merged = first.merge(second)
    stream = GaussianNB()
    for row, label, weight in zip(X, y, weights):
        stream.learn_one(as_record(row), label, weight)
    for model in (batch, merged, stream):
        got = log_proba_table(model, [as_record(r) for r in X[:20]], list(reference.classes_))
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)
        for c, label in enumerate(reference.classes_):
            stats = model.class_statistics(label)
            np.testing.assert_allclose([stats[f][1] for f in FEATURES], reference.theta_[c], rtol=1e-12)
            np.testing.assert_allclose([stats[f][2] + model.epsilon for f in FEATURES], reference.var_[c], rtol=1e-12)
            assert sum(weights[np.array(y) == label]) == pytest.approx(stats["size"][0], rel=1e-12)


def test_online_moments_equal_numpy_batch():
    rng = np.random.default_rng(7)
    X = rng.normal(loc=[1e3, -2.0, 0.0], scale=[5.0, 0.1, 1e-3], size=(500, 3))
    y = rng.choice(["a", "b"], 500)
    weights = rng.uniform(0.1, 4.0, 500)
    model = GaussianNB()
    for row, label, w in zip(X, y, weights):
        model.learn_one(as_record(row), label, w)
    for label in ("a", "b"):
        mine = y == label
        mean = np.average(X[mine], axis=0, weights=weights[mine])
        variance = np.average((X[mine] - mean) ** 2, axis=0, weights=weights[mine])
        stats = model.class_statistics(label)
        np.testing.assert_allclose([stats[f][1] for f in FEATURES], mean, rtol=1e-12)
        np.testing.assert_allclose([stats[f][2] for f in FEATURES], variance, rtol=1e-12)
        assert [stats[f][0] for f in FEATURES] == pytest.approx([weights[mine].sum()] * 3, rel=1e-12)
    # eps from the unweighted variance of all records, as scikit-learn's np.var(X, axis=0).max()
    assert model.epsilon == pytest.approx(1e-9 * np.var(X, axis=0).max(), rel=1e-12)


def state(model):
    """Everything the model knows, by class label and feature name (inactive classes must be empty)."""
    names = sorted(model.features.mapping(), key=str)
    ids = model.features.find(names)
    result = {"weights": model.class_counts, "features": names,
              "pooled": np.vstack([model._pooled_n[ids], model._pooled_mean[ids], model._pooled_m2[ids]])}
    for c, label in enumerate(model.labels):
        table = np.vstack([model._n[c, ids], model._mean[c, ids], model._m2[c, ids]])
        if model.class_weights[c] > 0:
            result[label] = table
        else:
            assert not table.any()
    return result


def assert_same_state(a, b, rtol=1e-12):
    assert a.keys() == b.keys()
    assert a["features"] == b["features"]
    assert a["weights"] == b["weights"]
    for key in a.keys() - {"features", "weights"}:
        np.testing.assert_allclose(a[key], b[key], rtol=rtol, atol=1e-12 * (1 + np.abs(b[key]).max(initial=0)))


operations = record_streams(st.dictionaries(st.sampled_from(FEATURES + ["extra"]), values, max_size=4), [1.0, 2.5])


@settings(max_examples=60, deadline=None)
@given(base=operations, extra=operations)
def test_learn_then_unlearn_restores_the_state(base, extra):
    model = GaussianNB()
    learn_records(model, base)
    before = state(model)
    probe = {"size": 1.0, "links": -3.0, "ratio": 0.5, "extra": 2.0}
    predicted = model.predict_log_proba_one(probe)
    learn_then_unlearn(model, extra)
    after = state(model)
    assert_same_state(after, before)
    got = model.predict_log_proba_one(probe)
    assert got.keys() == predicted.keys()
    # Up to the rounding of the restored moments, relative to the joint log-likelihoods (a
    # variance of eps ~ 1e-12 turns a 1e-17 residue in a mean into 1e-5 of log-likelihood).
    scale = 1 + np.abs(model._log_likelihood(model._encode(probe))).max(initial=0)
    for label in got:
        assert got[label] == pytest.approx(predicted[label], rel=1e-9, abs=1e-9 * scale)


def test_unlearning_after_a_far_value_restores_a_lone_value_exactly():
    model = GaussianNB()
    model.learn_one({"size": 0.0, "links": 0.0, "ratio": 0.0}, "b")
    model.learn_one({"size": 0.0, "links": 0.0, "ratio": 124.875}, "a")
    probe = {"size": 1.0, "links": -3.0, "ratio": 0.5, "extra": 2.0}
    before = model.predict_log_proba_one(probe)
    extra = [({"ratio": 124.9375}, "a", 1.0), ({"size": 0.0, "links": 0.0, "ratio": 0.0}, "a", 2.5)]
    learn_then_unlearn(model, extra)
    assert model.predict_log_proba_one(probe) == pytest.approx(before, rel=1e-9)


def test_a_small_real_spread_survives_unlearning_a_close_value():
    """The residue rule (gaussian.combine) zeroes an M2 below 64 ulps of sum w x^2 only: a
    spread of 1e-6 relative to the values (M2 / sum w x^2 ~ 2.5e-13, ~1000 ulps) stays."""
    model = GaussianNB()
    model.learn_one({"x": 1000.0}, "a").learn_one({"x": 1000.001}, "a")
    before = model.class_statistics("a")["x"]
    assert before[2] == pytest.approx(2.5e-7, rel=1e-6)
    for value, weight in ((1000.0005, 1.0), (1000.0004, 2.5)):
        model.learn_one({"x": value}, "a", weight).unlearn_one({"x": value}, "a", weight)
        assert model.class_statistics("a")["x"] == pytest.approx(before, rel=1e-9)


def test_unlearning_everything_empties_the_model():
    model = GaussianNB()
    data = [({"size": 3.0, "links": 1.0}, "a", 1.0), ({"size": 5.0}, "b", 2.0), ({"links": 4.0}, "a", 0.5)]
    learn_records(model, data)
    for record, label, weight in data:
        model.unlearn_one(record, label, weight)
    assert model.classes == [] and model.n_features == 0 and model.epsilon == 0.0
    assert not model._n.any() and not model._mean.any() and not model._m2.any() and not model._pooled_n.any()
    assert model.predict_one({"size": 1.0}) is None


def test_merge_of_two_halves_equals_the_whole():
    rng = np.random.default_rng(3)
    records = [{f: float(v) for f, v in zip(FEATURES, row) if rng.random() > 0.2} for row in rng.normal(size=(80, 3))]
    labels = rng.choice(["x", "y", "z"], 80).tolist()
    whole, first, second = GaussianNB(), GaussianNB(), GaussianNB()
    for i, (record, label) in enumerate(zip(records, labels)):
        whole.learn_one(record, label)
        (first if i < 37 else second).learn_one(record, label)
    merged = first.merge(second)
    for label in whole.classes:
        mine, theirs = merged.class_statistics(label), whole.class_statistics(label)
        assert mine.keys() == theirs.keys()
        for feature in mine:
            assert mine[feature] == pytest.approx(theirs[feature], rel=1e-12)
    assert merged.epsilon == pytest.approx(whole.epsilon, rel=1e-12)
    for record in records[:10]:
        assert merged.predict_proba_one(record) == pytest.approx(whole.predict_proba_one(record), rel=1e-9)


def test_missing_features_are_not_learned_and_not_scored():
    model = GaussianNB(var_smoothing=0.0)
    model.learn_one({"size": 1.0, "links": 2.0}, "a")
    model.learn_one({"size": 3.0}, "a")
    model.learn_one({"size": 10.0, "links": 8.0}, "b")
    model.learn_one({"size": 14.0, "links": 12.0}, "b")
    assert model.class_statistics("a") == {"size": (2.0, 2.0, 1.0), "links": (1.0, 2.0, 0.0)}
    assert model.class_counts == {"a": 2.0, "b": 2.0}
    # a record with only "size" is scored on size alone: by hand, N(6; 2, 1) vs N(6; 12, 4)
    log_a = -0.5 * (math.log(2 * math.pi * 1.0) + 16 / 1.0)
    log_b = -0.5 * (math.log(2 * math.pi * 4.0) + 36 / 4.0)
    expected_a = log_a - math.log(math.exp(log_a) + math.exp(log_b))
    assert model.predict_log_proba_one({"size": 6.0})["a"] == pytest.approx(expected_a, rel=1e-12)
    # a feature never learned is ignored
    assert model.predict_log_proba_one({"size": 6.0, "never": 1.0}) == model.predict_log_proba_one({"size": 6.0})


def test_a_class_that_never_saw_a_feature_scores_it_with_the_pooled_moments():
    model = GaussianNB(var_smoothing=0.0)
    model.learn_one({"size": 1.0}, "a")
    model.learn_one({"size": 3.0}, "a")
    model.learn_one({"size": 10.0, "links": 4.0}, "b")
    model.learn_one({"size": 12.0, "links": 8.0}, "b")
    # links: never seen in a; pooled over all records: mean 6, variance 4 (same as b's here)
    x = {"links": 5.0}
    by_hand_pooled = -0.5 * (math.log(2 * math.pi * 4.0) + 1 / 4.0)
    both = model._log_likelihood(model._encode(x))
    assert both[0] == pytest.approx(by_hand_pooled, rel=1e-12)
    assert both[1] == pytest.approx(by_hand_pooled, rel=1e-12)
    assert model.predict_proba_one(x) == pytest.approx({"a": 0.5, "b": 0.5})


def test_identical_values_leave_only_the_prior():
    model = GaussianNB()
    for label in ["a", "a", "b"]:
        model.learn_one({"size": 2.0}, label)
    assert model.epsilon == 0.0
    assert model.predict_proba_one({"size": 7.0}) == pytest.approx({"a": 2 / 3, "b": 1 / 3})


def test_class_prior_options():
    model = GaussianNB(class_prior="uniform")
    for label, value in [("a", 1.0), ("a", 1.5), ("a", 2.0), ("b", 1.7)]:
        model.learn_one({"size": value}, label)
    x = {"size": 1.6}
    scores = model._log_likelihood(model._encode(x))
    expected = scores - np.log(np.exp(scores).sum())
    got = model.predict_log_proba_one(x)
    assert [got["a"], got["b"]] == pytest.approx(expected.tolist(), rel=1e-12)
    fixed = GaussianNB(class_prior={"a": 0.2, "b": 0.8})
    fixed.learn_one({"size": 1.0}, "a")
    with pytest.raises(UnknownClassError, match="'c'"):
        fixed.learn_one({"size": 1.0}, "c")


# -- bad input ----------------------------------------------------------------------

@pytest.fixture
def trained():
    model = GaussianNB()
    model.learn_one({"size": 1.0, "links": 2.0}, "a")
    model.learn_one({"size": 4.0, "links": 1.0}, "b", 2.0)
    return model


@pytest.mark.parametrize("record, error, message", [
    ({"size": float("nan")}, InvalidInputError, "'size'.*nan"),
    ({"size": 1.0, "links": float("inf")}, InvalidInputError, "'links'.*inf"),
    ({"size": -np.inf}, InvalidInputError, "'size'"),
    ({"size": "12"}, InvalidTypeError, "'size'.*'12'"),
    ({"size": True}, InvalidTypeError, "'size'"),
    ({"size": None}, InvalidTypeError, "'size'"),
    ([1.0, 2.0], InvalidTypeError, "mapping"),
])
def test_bad_records_change_nothing(trained, record, error, message):
    before, predicted = state(trained), trained.predict_log_proba_one({"size": 2.0})
    for call in (lambda: trained.learn_one(record, "a"), lambda: trained.unlearn_one(record, "a"),
                 lambda: trained.predict_one(record), lambda: trained.learn_many([{"size": 3.0}, record], ["a", "b"])):
        with pytest.raises(error, match=message):
            call()
    assert_same_state(state(trained), before, rtol=0)
    assert trained.predict_log_proba_one({"size": 2.0}) == predicted


def test_bad_unlearning_changes_nothing(trained):
    before = state(trained)
    with pytest.raises(UnknownClassError):
        trained.unlearn_one({"size": 1.0}, "zzz")
    with pytest.raises(InvalidInputError, match="'never'"):
        trained.unlearn_one({"size": 1.0, "never": 1.0}, "a")
    with pytest.raises(InvalidInputError, match="weight"):
        trained.unlearn_one({"size": 4.0, "links": 1.0}, "b", 3.0)  # learned with weight 2
    trained.learn_one({"only_b": 7.0}, "b", 2.0)
    before = state(trained)
    with pytest.raises(InvalidInputError, match="weight they were learned with"):
        trained.unlearn_one({"only_b": 7.0}, "b", 1.0)  # would leave weight 1 in b but no record
    with pytest.raises(InvalidInputError):
        trained.unlearn_many([{"size": 1.0, "links": 2.0}, {"size": 9.0, "links": 9.0, "x": 1.0}], ["a", "b"])
    assert_same_state(state(trained), before, rtol=0)


def test_parameters_are_checked():
    for bad in (-1e-9, float("nan"), "small", True):
        with pytest.raises(InvalidParameterError, match="var_smoothing"):
            GaussianNB(var_smoothing=bad)
    with pytest.raises(InvalidParameterError, match="class_prior"):
        GaussianNB(class_prior="empirical")


def test_pickling_keeps_predictions(trained):
    clone = copy.deepcopy(trained)
    restored = pickle.loads(pickle.dumps(trained))
    assert restored.predict_log_proba_one({"size": 2.0}) == trained.predict_log_proba_one({"size": 2.0})
    assert clone.learn_one({"size": 3.0}, "a").class_counts == {"a": 2.0, "b": 2.0}
