"""ComplementNB: parity with scikit-learn and river, Rennie's normalisation, the incremental normaliser."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.naive_bayes import ComplementNB as SkComplementNB

from streamnb import ComplementNB, _core
from streamnb.errors import InvalidInputError, InvalidParameterError, UnknownClassError
from streamnb.models import Smoothing, Storage

WORDS = [f"w{i}" for i in range(25)]

documents = st.dictionaries(st.sampled_from(WORDS), st.integers(1, 5), min_size=1, max_size=6)
float_documents = st.dictionaries(st.sampled_from(WORDS), st.floats(0.05, 4.0), min_size=1, max_size=6)
streams = st.lists(st.tuples(st.one_of(documents, float_documents), st.sampled_from(["ham", "spam", "news"])),
                   min_size=1, max_size=18)


def sklearn_reference(stream, norm, alpha=1.0):
    """A batch scikit-learn ComplementNB on the stream, vocabulary = the words seen."""
    vocabulary = sorted({w for doc, _ in stream for w in doc})
    X = np.array([[doc.get(w, 0.0) for w in vocabulary] for doc, _ in stream], dtype=float)
    model = SkComplementNB(alpha=alpha, norm=norm).fit(X, [label for _, label in stream])
    return model, vocabulary


def as_matrix(docs, vocabulary):
    return np.array([[doc.get(w, 0.0) for w in vocabulary] for doc in docs], dtype=float)


def log_proba_table(model, docs, classes):
    table = [model.predict_log_proba_one(doc) for doc in docs]
    return np.array([[row[c] for c in classes] for row in table])


@pytest.mark.parametrize("norm", [False, True])
@settings(max_examples=40, deadline=None)
@given(stream=streams, queries=st.lists(documents, min_size=1, max_size=4))
def test_streaming_equals_sklearn_batch_at_every_prefix(norm, stream, queries):
    """Growing vocabulary, classes appearing mid-stream: log-probabilities within 1e-9."""
    model = ComplementNB(alpha=0.7, norm=norm)
    for n, (doc, label) in enumerate(stream, start=1):
        model.learn_one(doc, label)
        reference, vocabulary = sklearn_reference(stream[:n], norm, alpha=0.7)
        got = log_proba_table(model, queries, list(reference.classes_))
        if norm and len(vocabulary) == 1:
            # theta = log 1 = 0 for the one word: scikit-learn divides 0 by 0 (NaN); we say uniform.
            np.testing.assert_allclose(got, -np.log(len(reference.classes_)), rtol=0, atol=1e-12)
            continue
        expected = reference.predict_log_proba(as_matrix(queries, vocabulary))
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)
    if norm and len(vocabulary) == 1:
        return
    features, weights = model.feature_log_prob()
    order = [features.index(w) for w in vocabulary]
    columns = [model.classes.index(c) for c in reference.classes_]
    np.testing.assert_allclose(weights[np.ix_(order, columns)], reference.feature_log_prob_.T, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("norm", [False, True])
def test_learn_many_and_merge_equal_sklearn(norm):
    rng = np.random.default_rng(3)
    docs = [{w: int(rng.integers(1, 4)) for w in rng.choice(WORDS, 5, replace=False)} for _ in range(60)]
    labels = rng.choice(["a", "b", "c"], 60).tolist()
    reference, vocabulary = sklearn_reference(list(zip(docs, labels)), norm)
    expected = reference.predict_log_proba(as_matrix(docs[:15], vocabulary))

    batch = ComplementNB(norm=norm).learn_many(docs, labels)
    first, second = ComplementNB(norm=norm), ComplementNB(norm=norm)
    first.predict_one(docs[0])
    for doc, label in zip(docs[:30], labels[:30]):
        first.learn_one(doc, label)
    first.predict_one(docs[0])  # the normaliser exists before the merge and must follow it
    for doc, label in zip(docs[30:], labels[30:]):
        second.learn_one(doc, label)
    merged = first.merge(second)
    for model in (batch, merged):
        got = log_proba_table(model, docs[:15], list(reference.classes_))
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)


def test_rennie_weight_normalisation_by_hand():
    """Three classes, three words, alpha = 1: weights and scores computed with plain arithmetic."""
    model = ComplementNB(alpha=1.0, norm=True)
    model.learn_one({"x": 2, "y": 1}, "a")
    model.learn_one({"y": 1, "z": 3}, "b")
    model.learn_one({"x": 1, "z": 1}, "c")
    # totals: x 3, y 2, z 4 (9 tokens); |V| = 3, T_a = 3, T_b = 4, T_c = 2.
    # class a: complement counts x 3-2=1, y 2-1=1, z 4-0=4, F_nota = 6, denominator 6 + 3 = 9
    theta_a = [math.log(2 / 9), math.log(2 / 9), math.log(5 / 9)]
    # class b: x 3-0=3, y 2-1=1, z 4-3=1, F_notb = 5, denominator 8
    theta_b = [math.log(4 / 8), math.log(2 / 8), math.log(2 / 8)]
    # class c: x 3-1=2, y 2-0=2, z 4-1=3, F_notc = 7, denominator 10
    theta_c = [math.log(3 / 10), math.log(3 / 10), math.log(4 / 10)]
    expected_weights = {label: [t / sum(theta) for t in theta]
                        for label, theta in (("a", theta_a), ("b", theta_b), ("c", theta_c))}
    features, weights = model.feature_log_prob()
    for column, label in enumerate(model.classes):
        got = {f: weights[i, column] for i, f in enumerate(features)}
        assert [got["x"], got["y"], got["z"]] == pytest.approx(expected_weights[label], rel=1e-12)

    # test document t = {x: 1, z: 2}: Rennie labels it argmin_c sum_i t_i * (theta_ci / sum_k |theta_ck|)
    scores = {label: 1 * w[0] + 2 * w[2] for label, w in expected_weights.items()}
    rennie = {label: sum(t * th for t, th in zip((1, 0, 2), theta)) / sum(abs(th) for th in theta)
              for label, theta in (("a", theta_a), ("b", theta_b), ("c", theta_c))}
    assert min(rennie, key=rennie.get) == max(scores, key=scores.get) == model.predict_one({"x": 1, "z": 2})
    top = max(scores.values())
    log_total = top + math.log(sum(math.exp(s - top) for s in scores.values()))
    got = model.predict_log_proba_one({"x": 1, "z": 2})
    for label in "abc":
        assert got[label] == pytest.approx(scores[label] - log_total, abs=1e-12)


def test_binary_complement_is_the_other_class():
    model = ComplementNB(alpha=0.5)
    model.learn_one({"cheap": 3, "pills": 2}, "spam")
    model.learn_one({"meeting": 2, "cheap": 1}, "ham")
    # |V| = 3; complement of spam = ham: T_ham = 3, ham counts cheap 1, meeting 2, pills 0
    expected_spam = {"cheap": -math.log(1.5 / 4.5), "meeting": -math.log(2.5 / 4.5), "pills": -math.log(0.5 / 4.5)}
    features, weights = model.feature_log_prob()
    spam = model.classes.index("spam")
    assert {f: weights[i, spam] for i, f in enumerate(features)} == pytest.approx(expected_spam, rel=1e-12)
    assert model.predict_one({"cheap": 1, "pills": 1}) == "spam"
    assert model.predict_one({"meeting": 1}) == "ham"


def test_single_class_uses_the_prior_only_then():
    model = ComplementNB()
    model.learn_one({"a": 1}, "x")
    assert model.predict_proba_one({"a": 2}) == {"x": 1.0}
    view = model.log_linear()
    assert view.bias.tolist() == [0.0]  # log P(x) = log 1
    model.learn_one({"b": 1}, "y")
    assert model.log_linear().bias.tolist() == [0.0, 0.0]
    # with two classes no prior enters: a 3-to-1 class imbalance does not move the score
    skewed = ComplementNB()
    for _ in range(3):
        skewed.learn_one({"a": 1}, "x")
    skewed.learn_one({"b": 1}, "y")
    balanced = ComplementNB()
    balanced.learn_one({"a": 3}, "x")
    balanced.learn_one({"b": 1}, "y")
    x = {"a": 1, "b": 1}
    assert skewed.predict_log_proba_one(x) == pytest.approx(balanced.predict_log_proba_one(x))


def test_unseen_score_matches_river():
    river_nb = pytest.importorskip("river.naive_bayes")
    rng = np.random.default_rng(5)
    ours = ComplementNB(smoothing=Smoothing(unseen="score"))
    ignore = ComplementNB()  # the default ignores the unseen word
    theirs = river_nb.ComplementNB(alpha=1.0)
    for _ in range(30):
        doc = {w: int(rng.integers(1, 4)) for w in rng.choice(WORDS[:15], 4, replace=False)}
        label = str(rng.choice(["a", "b"]))
        ours.learn_one(doc, label)
        ignore.learn_one(doc, label)
        theirs.learn_one(doc, label)
    query = {"w1": 2, "w3": 1, "never-seen": 2}
    expected = theirs.predict_proba_one(query)
    got = ours.predict_proba_one(query)
    assert got == pytest.approx(expected, abs=1e-12)
    assert ignore.predict_proba_one(query) != pytest.approx(got, abs=1e-6)
    assert ignore.predict_proba_one(query) == pytest.approx(ours.predict_proba_one({"w1": 2, "w3": 1}), abs=1e-15)


# -- the incremental normaliser ----------------------------------------------------

class Normaliser:
    """The core's normaliser L_c for the model's alpha (None when out of step with the counts)."""

    def __init__(self, model, alpha=None):
        state = model._core._normaliser(model.alpha if alpha is None else alpha)
        self.in_step = state is not None
        self.sums, self.updates, self.derivations = (np.array(state[0]), state[1], state[2]) if state else (None, 0, 0)


def normaliser(model, alpha=None):
    """The normaliser after a prediction has brought it in step (derived if it was not)."""
    model.predict_one({})
    return Normaliser(model, alpha)


def exact_sums(model):
    """L_c from scratch, written out without the model's helpers."""
    store = model.store
    ids = store.feature_ids()
    tokens, _ = store.gather(ids)
    total = tokens.sum(axis=1)
    return np.array([sum(math.log(total[i] - tokens[i, c] + model.alpha) for i in range(len(ids)))
                     for c in range(store.n_classes)])


operations = st.lists(st.tuples(st.sampled_from(["learn", "learn", "unlearn", "predict"]),
                                st.one_of(documents, float_documents), st.sampled_from(["a", "b", "c", "d"])),
                      min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(ops=operations)
def test_incremental_normaliser_equals_recomputation(ops):
    model = ComplementNB(alpha=0.3, norm=True)
    learned: list = []
    model.predict_one({"w0": 1})  # nothing learned yet
    for op, doc, label in ops:
        if op == "learn":
            model.learn_one(doc, label)
            learned.append((doc, label))
        elif op == "unlearn" and learned:
            old_doc, old_label = learned.pop(len(doc) % len(learned))
            model.unlearn_one(old_doc, old_label)
        model.predict_one(doc)
        state = Normaliser(model)
        if model.classes:
            assert state.in_step
            np.testing.assert_allclose(state.sums, exact_sums(model), rtol=1e-12, atol=1e-9)
    # the normaliser was kept in step, not recomputed at each prediction
    state = Normaliser(model)
    if sum(op == "learn" for op, _, _ in ops) > 1 and state.in_step:
        assert state.updates > 0
    # and the model is the batch model of the documents still learned
    reference, vocabulary = sklearn_reference(learned, norm=True, alpha=0.3) if learned else (None, [])
    if len(vocabulary) > 1:
        queries = [doc for doc, _ in learned[:3]]
        expected = reference.predict_log_proba(as_matrix(queries, vocabulary))
        np.testing.assert_allclose(log_proba_table(model, queries, list(reference.classes_)), expected, atol=1e-9)


@pytest.mark.parametrize("layout", [Storage(dense_max_classes=1), Storage(n_buckets=4096)])
def test_hashed_cells_and_hashed_features(layout):
    """The normaliser follows the store whatever its layout (hash cells; hashed feature ids)."""
    if layout.n_buckets is not None:  # no two of our words share a bucket (collisions are another matter)
        assert len(set(ComplementNB(storage=layout).store.vocabulary.find(WORDS).tolist())) == len(WORDS)
    rng = np.random.default_rng(9)
    docs = [{w: int(rng.integers(1, 4)) for w in rng.choice(WORDS, 4, replace=False)} for _ in range(40)]
    labels = rng.choice(["a", "b", "c"], 40).tolist()
    model = ComplementNB(norm=True, storage=layout)
    for doc, label in zip(docs, labels):
        model.learn_one(doc, label)
        model.predict_one(doc)
    for doc, label in zip(docs[:10], labels[:10]):
        model.unlearn_one(doc, label)
    np.testing.assert_allclose(normaliser(model).sums, exact_sums(model), rtol=1e-12)
    if layout.dense_max_classes == 1:
        assert model.store.cells.kind == "hash"
        reference, vocabulary = sklearn_reference(list(zip(docs[10:], labels[10:])), norm=True)
        expected = reference.predict_log_proba(as_matrix(docs[10:20], vocabulary))
        np.testing.assert_allclose(log_proba_table(model, docs[10:20], list(reference.classes_)), expected, atol=1e-9)


def test_prediction_does_not_rederive_between_updates():
    model = ComplementNB(norm=True)
    model.learn_one({"a": 1, "b": 2}, "x")
    model.learn_one({"c": 1}, "y")
    model.predict_one({"a": 1})
    derivations = Normaliser(model).derivations
    for i in range(50):
        model.learn_one({f"new{i}": 1, "a": 1}, "xyz"[i % 3])
        model.predict_one({"a": 1, f"new{i}": 2})
    model.unlearn_one({"new3": 1, "a": 1}, "x")
    model.predict_one({"a": 1})
    state = Normaliser(model)
    assert state.derivations == derivations
    np.testing.assert_allclose(state.sums, exact_sums(model), rtol=1e-12)
    # after REDERIVE_EVERY incremental updates the sums are derived afresh
    for _ in range(_core.REDERIVE_EVERY - state.updates):
        model.learn_one({"a": 1}, "x")
    model.predict_one({"a": 1})
    state = Normaliser(model)
    assert state.derivations == derivations + 1 and state.updates == 0
    np.testing.assert_allclose(state.sums, exact_sums(model), rtol=1e-12)


def test_changes_behind_the_hook_trigger_rederivation():
    """Pruning, a changed scale or a restored backup change counts without the hook."""
    docs = [({"a": 2, "b": 1}, "x"), ({"b": 3, "c": 1}, "y"), ({"d": 1, "a": 1}, "x"), ({"e": 2}, "z")]
    model = ComplementNB(norm=True)
    for doc, label in docs:
        model.learn_one(doc, label)
    model.predict_one({"a": 1})
    # pruning: drop feature "e" straight from the store
    model.store.drop_features(model.store.vocabulary.find(["e"]))
    pruned = ComplementNB(norm=True)
    for doc, label in docs[:3]:
        pruned.learn_one(doc, label)
    pruned.store.add_class("z")
    # the z class keeps its document but has no tokens left: compare weights directly
    np.testing.assert_allclose(theta_sums(model)[:2], theta_sums(pruned)[:2], rtol=1e-12)
    np.testing.assert_allclose(normaliser(model).sums, exact_sums(model), rtol=1e-12)
    # a failed unlearn_many restores the store from a backup
    with pytest.raises(InvalidInputError):
        model.unlearn_many([{"a": 2, "b": 1}, {"never": 1}], ["x", "x"])
    np.testing.assert_allclose(theta_sums(model), _fresh_theta_sums(model), rtol=1e-12)
    # a scale change (forgetting multiplies every count by gamma)
    model.store.scale *= 0.5
    np.testing.assert_allclose(theta_sums(model), _fresh_theta_sums(model), rtol=1e-12)


def theta_sums(model):
    """The model's sum over V of theta_ck (its maintained normaliser), per class:
    L_c - |V| log(F_notc + alpha*|V|)."""
    sums = normaliser(model).sums
    class_tokens = model.store.true_class_tokens()
    size = model.n_features
    return sums - size * np.log(class_tokens.sum() - class_tokens + model.alpha * size)


def _fresh_theta_sums(model):
    """sum over V of theta_ck, from the true counts, written out."""
    store = model.store
    tokens, _ = store.gather(store.feature_ids())
    size = len(tokens)
    complement_totals = tokens.sum() - tokens.sum(axis=0)
    return np.array([sum(math.log((tokens[i].sum() - tokens[i, c] + model.alpha)
                                  / (complement_totals[c] + model.alpha * size)) for i in range(size))
                     for c in range(store.n_classes)])


def test_with_alpha_view_does_not_disturb_the_model():
    data = [({"a": 2}, "x"), ({"b": 1, "c": 1}, "y"), ({"a": 1, "c": 2}, "y")]
    model, reference = ComplementNB(alpha=1.0, norm=True), ComplementNB(alpha=0.1, norm=True)
    for doc, label in data:
        model.learn_one(doc, label)
        reference.learn_one(doc, label)
    before = model.predict_log_proba_one({"a": 1, "c": 1})
    view = model.with_alpha(0.1)
    x = {"a": 1, "c": 1}
    assert view.predict_log_proba_one(x) == pytest.approx(reference.predict_log_proba_one(x))
    assert model.predict_log_proba_one({"a": 1, "c": 1}) == before
    assert Normaliser(model, 1.0).in_step  # the model's own normaliser was left alone


def test_single_word_vocabulary_with_norm_is_not_nan():
    model = ComplementNB(norm=True)
    model.learn_one({"a": 1}, "x")
    model.learn_one({"a": 2}, "y")
    assert model.predict_proba_one({"a": 1}) == pytest.approx({"x": 0.5, "y": 0.5})


# -- TWCNB -------------------------------------------------------------------------

def tf_idf(docs, vocabulary):
    """Rennie's transform as scikit-learn computes it: log(1 + tf) * idf, then L2-normalised rows.

    idf = ln((1 + n) / (1 + df)) + 1 (scikit-learn's smoothed idf).
    """
    n = len(docs)
    df = {w: sum(w in d for d in docs) for w in vocabulary}
    idf = {w: math.log((1 + n) / (1 + df[w])) + 1 for w in vocabulary}

    def transform(doc):
        weighted = {w: (1 + math.log(c)) * idf[w] for w, c in doc.items() if w in idf}
        length = math.sqrt(sum(v * v for v in weighted.values()))
        return {w: v / length for w, v in weighted.items()}

    return transform


def test_twcnb_recipe_equals_sklearn_tfidf_pipeline():
    """TF-IDF documents + norm=True equal scikit-learn's TfidfTransformer(sublinear_tf) + ComplementNB(norm)."""
    rng = np.random.default_rng(11)
    docs = [{w: int(rng.integers(1, 6)) for w in rng.choice(WORDS, 6, replace=False)} for _ in range(50)]
    labels = rng.choice(["ham", "spam"], 50).tolist()
    vocabulary = sorted({w for d in docs for w in d})
    transform = tf_idf(docs, vocabulary)
    model = ComplementNB(norm=True)
    for doc, label in zip(docs, labels):
        model.learn_one(transform(doc), label)

    tfidf = TfidfTransformer(sublinear_tf=True).fit(as_matrix(docs, vocabulary))
    reference = SkComplementNB(norm=True).fit(tfidf.transform(as_matrix(docs, vocabulary)), labels)
    queries = docs[:10]
    expected = reference.predict_log_proba(tfidf.transform(as_matrix(queries, vocabulary)))
    got = log_proba_table(model, [transform(q) for q in queries], list(reference.classes_))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)


# -- bad input ----------------------------------------------------------------------

def snapshot(model):
    prediction = model.predict_log_proba_one({"a": 1, "b": 1})  # derives the normaliser first
    rows, cols, tokens, docs = model.store.nonzero()
    return (prediction, model.n_features, model.classes, model.class_counts, rows.tolist(), cols.tolist(),
            tokens.tolist(), docs.tolist(), Normaliser(model).sums.tolist())


@pytest.mark.parametrize("bad, error", [
    ({"a": 1, "b": -2}, InvalidInputError),
    ({"a": float("nan")}, InvalidInputError),
    ({"a": float("inf")}, InvalidInputError),
    ({}, InvalidInputError),
    ({"a": "two"}, TypeError),
])
def test_bad_input_changes_nothing(bad, error):
    model = ComplementNB(norm=True)
    model.learn_one({"a": 2, "b": 1}, "x")
    model.learn_one({"b": 2, "c": 1}, "y")
    before = snapshot(model)
    with pytest.raises(error) as raised:
        model.learn_one(bad, "x")
    assert snapshot(model) == before
    if bad and error is InvalidInputError:
        assert str(list(bad.values())[-1]) in str(raised.value) or "finite" in str(raised.value)


def test_negative_count_error_names_the_value():
    model = ComplementNB()
    with pytest.raises(InvalidInputError, match="-2"):
        model.learn_one({"a": 1, "b": -2}, "x")
    assert model.classes == [] and model.n_features == 0


def test_unlearning_what_was_not_learned_changes_nothing():
    model = ComplementNB(norm=True)
    model.learn_one({"a": 2, "b": 1}, "x")
    model.learn_one({"b": 2, "c": 1}, "y")
    before = snapshot(model)
    with pytest.raises(InvalidInputError):
        model.unlearn_one({"a": 5}, "x")
    with pytest.raises(UnknownClassError):
        model.unlearn_one({"a": 1}, "nope")
    assert snapshot(model) == before


def test_parameters_are_checked():
    with pytest.raises(InvalidParameterError, match="alpha"):
        ComplementNB(alpha=0.0, smoothing=Smoothing(allow_zero_alpha=True))
    with pytest.raises(InvalidParameterError, match="norm"):
        ComplementNB(norm="yes")
    with pytest.raises(InvalidParameterError, match="alpha"):
        ComplementNB(alpha=-1)
