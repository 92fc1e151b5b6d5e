"""The river adapters: river's own estimator checks, mini-batches, pipelines, and parity with river.

Reference numbers come from river itself (river.naive_bayes on the same stream), from
scikit-learn, or from hand computation (exact fractions in the comments).
"""

from __future__ import annotations

import collections
import functools
import inspect
import math
import os
import pickle
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from river import checks, compose, evaluate, feature_extraction, metrics
from river import naive_bayes as river_nb

import streamnb
from streamnb.errors import InvalidInputError, InvalidTypeError
from streamnb.integrations import river as snr
from streamnb.models import Forgetting, Smoothing

ROOT = Path(__file__).resolve().parents[2]


# -- data --------------------------------------------------------------------------------

def text_stream(n: int, seed: int = 0, vocabulary: int = 3000) -> list[tuple[str, str]]:
    """A seeded stream of (text, label) with three overlapping topics.

    Each topic favours its own region of the vocabulary (a heavy-tailed draw, so new words
    keep appearing), 30% of words come from anywhere, and a few texts are empty or made of
    one-letter tokens only (BagOfWords drops those): the stream holds empty documents and,
    at prediction time, words never seen in training.
    """
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocabulary)]
    offsets = {"spam": 0, "ham": vocabulary // 3, "news": 2 * vocabulary // 3}
    stream = []
    for _ in range(n):
        label = rng.choice(["spam", "spam", "ham", "news"])
        length = rng.choice([0, 1, 3, 8, 20, 40])
        tokens = [words[(offsets[label] + int(rng.paretovariate(1.1))) % vocabulary] if rng.random() < 0.7
                  else words[rng.randrange(vocabulary)] for _ in range(length)]
        if rng.random() < 0.02:
            tokens = ["a", "b"]  # tokens too short for BagOfWords: an empty document
        stream.append((" ".join(tokens), label))
    return stream


def bag_of_words(stream):
    bow = feature_extraction.BagOfWords()
    return [(bow.transform_one(text), label) for text, label in stream]


def assert_proba_close(ours: dict, theirs: dict, tolerance: float) -> float:
    """Same classes, probabilities within tolerance; returns the largest difference."""
    assert set(ours) == set(theirs)
    worst = max((abs(ours[c] - theirs[c]) for c in ours), default=0.0)
    assert worst <= tolerance, (ours, theirs)
    return worst


def assert_pipelines_agree(ours, theirs, stream) -> None:
    """Predict-then-learn both river pipelines (ending in a MultinomialNB) along the stream:
    the same probabilities within 1e-9 once river's model has learned something."""
    for text, label in stream:
        if theirs["MultinomialNB"].class_counts:
            assert_proba_close(ours.predict_proba_one(text), theirs.predict_proba_one(text), 1e-9)
        ours.learn_one(text, label)
        theirs.learn_one(text, label)


# -- the adapters that exist, and the ones still to land ----------------------------------

ALL_CLASSIFIERS = ["MultinomialNB", "BernoulliNB", "ComplementNB", "GaussianNB", "CategoricalNB", "LogisticRegression"]


def classifier_params():
    """One pytest param per adapter and per set of river test parameters; a skip for adapters
    whose streamnb model has not landed yet (they need one line in streamnb/river.py)."""
    params = []
    for name in ALL_CLASSIFIERS:
        adapter = getattr(snr, name, None)
        if adapter is None:
            params.append(pytest.param(None, None, id=name, marks=pytest.mark.skip(
                reason=f"streamnb.river.{name} not hooked up yet: its model is being added in another branch")))
            continue
        for i, test_params in enumerate(adapter._unit_test_params()):
            params.append(pytest.param(adapter, test_params, id=f"{name}-{i}"))
    return params


@pytest.fixture
def spy_many(monkeypatch):
    """Count the successful calls of the mini-batch methods of every adapter.

    River's mini-batch checks return early (and pass) when a method raises AttributeError
    or NotImplementedError; counting completed calls proves they really ran.
    """
    calls: collections.Counter = collections.Counter()
    for name in ("learn_many", "predict_many", "predict_proba_many"):
        original = getattr(snr.NaiveBayesClassifier, name)

        def counted(self, *args, _original=original, _name=name, **kwargs):
            result = _original(self, *args, **kwargs)
            calls[_name] += 1
            return result

        monkeypatch.setattr(snr.NaiveBayesClassifier, name, functools.wraps(original)(counted))
    return calls


# -- river's estimator checks -------------------------------------------------------------

@pytest.mark.parametrize("adapter, params", classifier_params())
def test_river_check_estimator_runs_every_check(adapter, params, spy_many):
    """Every check river yields for the adapter runs and passes: none skipped, none vacuous."""
    model = adapter(**params)
    assert model._unit_test_skips() == set()
    names = []
    for check in checks.yield_checks(model):
        names.append(check.__name__)
        check(model.clone())
    # The checks river skips for its own naive Bayes run here.
    for name in ("check_predict_many_matches_predict_one", "check_learn_many_matches_learn_one",
                 "check_predict_proba_many_matches_predict_proba_one", "check_classifier_tracks_seen_labels",
                 "check_predict_proba_one", "check_pickling", "check_clone_is_independent",
                 "check_bounded_memory_growth", "check_emerging_features"):
        assert name in names, name
    # Each mini-batch check ran to the end on every data set (Phishing, its np.bool_ copy,
    # and ImageSegments when the model takes signed values).
    n_datasets = names.count("check_predict_many_matches_predict_one")
    assert n_datasets == (2 if model.positive_input else 3)
    assert spy_many["predict_many"] == n_datasets
    assert spy_many["predict_proba_many"] == n_datasets
    assert spy_many["learn_many"] == 5 * n_datasets  # five batches per data set
    # check_estimator itself (which honours _unit_test_skips) agrees.
    checks.check_estimator(model)


def test_river_checks_fail_without_empty_documents_learn():
    """The checks do feed all-zero documents: with the core default ('raise') they fail."""
    model = snr.MultinomialNB(empty_documents="raise")
    failures = set()
    for check in checks.yield_checks(model):
        try:
            check(model.clone())
        except InvalidInputError as error:
            assert "empty document" in str(error)
            failures.add(check.__name__)
    assert "check_radically_disappearing_features" in failures


# -- parameters, clone, pickle ------------------------------------------------------------

def test_adapter_signature_is_the_model_signature():
    """Each adapter takes its model's parameters by name (following BernoulliNB's **kwargs)."""
    multinomial = inspect.signature(snr.MultinomialNB).parameters
    assert list(multinomial) == ["alpha", "mu", "class_prior", "tokenizer", "smoothing", "forgetting", "pruning",
                                 "storage", "ledger", "empty_documents"]
    assert multinomial["mu"].default is None
    bernoulli = inspect.signature(snr.BernoulliNB).parameters
    assert list(bernoulli)[:2] == ["alpha", "binarize"]
    assert set(bernoulli) == set(multinomial) - {"mu"} | {"binarize"}
    assert multinomial["empty_documents"].default == "learn"  # river default; the core's is "raise"
    assert streamnb.MultinomialNB().empty_documents == "raise"
    assert multinomial["alpha"].default == 1.0 and bernoulli["binarize"].default == 0.0


def test_parameters_are_stored_as_given_and_cloned():
    model = snr.BernoulliNB(0.25, binarize=1.0, class_prior={"spam": 0.3, "ham": 0.7}, smoothing=Smoothing(unseen="score"))
    assert model.alpha == 0.25 and model.binarize == 1.0 and model.smoothing == Smoothing(unseen="score")
    assert model.class_prior == {"spam": 0.3, "ham": 0.7}
    assert model._get_params() == {
        "alpha": 0.25, "binarize": 1.0, "class_prior": {"spam": 0.3, "ham": 0.7}, "tokenizer": None,
        "smoothing": Smoothing(unseen="score"), "forgetting": None, "pruning": None, "storage": None, "ledger": None,
        "empty_documents": "learn"}
    assert model.model.forgetting == Forgetting() and model.model.smoothing.unseen == "score"
    assert model.model.get_params()["binarize"] == 1.0 and model.model.alpha == 0.25
    model.learn_one({"cheap": 2}, "spam")
    clone = model.clone({"alpha": 2.0})
    assert clone.alpha == 2.0 and clone.binarize == 1.0 and clone.classes == []
    assert clone.class_prior is not model.class_prior  # deep-copied, not shared
    with pytest.raises(TypeError):
        snr.MultinomialNB(1.0, 2.0)  # only alpha is positional, as in the core
    with pytest.raises(ValueError, match="unseen"):
        snr.MultinomialNB(smoothing=Smoothing(unseen="drop"))
    with pytest.raises(TypeError, match="abstract"):
        snr.NaiveBayesClassifier()


def test_pickle_round_trip_keeps_learning():
    data = bag_of_words(text_stream(200, seed=3))
    model = snr.MultinomialNB(smoothing=Smoothing(unseen="score"))
    for x, y in data[:150]:
        model.learn_one(x, y)
    restored = pickle.loads(pickle.dumps(model))
    assert type(restored) is snr.MultinomialNB and restored.model.smoothing.unseen == "score"
    for x, y in data[150:]:
        assert restored.predict_proba_one(x) == model.predict_proba_one(x)
        restored.learn_one(x, y)
        model.learn_one(x, y)
    assert restored.model.class_counts == model.model.class_counts


def test_merge_is_learning_both_streams():
    data = bag_of_words(text_stream(300, seed=4))
    a, b, whole = snr.MultinomialNB(), snr.MultinomialNB(), snr.MultinomialNB()
    for i, (x, y) in enumerate(data):
        (a if i < 120 else b).learn_one(x, y)
        whole.learn_one(x, y)
    a.merge(b)
    for x, _ in data[:50]:
        assert_proba_close(a.predict_proba_one(x), whole.predict_proba_one(x), 1e-12)
    with pytest.raises(InvalidTypeError):
        a.merge(snr.BernoulliNB())


def test_unlearn_one_undoes_learn_one():
    data = bag_of_words(text_stream(100, seed=5))
    model = snr.BernoulliNB()
    for x, y in data[:80]:
        model.learn_one(x, y)
    before = [model.predict_proba_one(x) for x, _ in data[80:]]
    model.learn_one(*data[80])
    model.unlearn_one(*data[80])
    assert [model.predict_proba_one(x) for x, _ in data[80:]] == before


def test_import_error_names_the_extra():
    """Without river, importing streamnb.river says what to install; streamnb itself still imports."""
    code = ("import sys; sys.modules['river'] = None\n"
            "import streamnb\n"
            "try:\n"
            "    import streamnb.integrations.river\n"
            "except ImportError as error:\n"
            "    print(error)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    assert "pip install streamnb[river]" in result.stdout
    assert "'river'" in result.stdout


# -- mini-batches: DataFrames in, the *_one results out -------------------------------------

def trained(adapter, data):
    model = adapter
    for x, y in data:
        model.learn_one(x, y)
    return model


@pytest.mark.parametrize("adapter", [snr.MultinomialNB, snr.BernoulliNB])
def test_predict_many_is_predict_one_on_dense_and_sparse_frames(adapter):
    data = bag_of_words(text_stream(400, seed=1))
    model = trained(adapter(smoothing=Smoothing(unseen="score")), data[:300])
    test = [x for x, _ in data[300:]]
    index = list(range(1000, 1000 - len(test), -1))  # a descending, non-default index
    dense = pd.DataFrame(test, index=index)  # missing words are NaN
    sparse = feature_extraction.BagOfWords().transform_many(
        pd.Series([text for text, _ in text_stream(400, seed=1)[300:]], index=index))
    assert all(isinstance(t, pd.SparseDtype) for t in sparse.dtypes)
    for X in (dense, sparse):
        proba = model.predict_proba_many(X)
        labels = model.predict_many(X)
        assert list(proba.index) == index and list(labels.index) == index
        assert list(proba.columns) == model.classes == ["spam", "ham", "news"]
        for i, x in enumerate(test):
            one = model.predict_proba_one(x)
            assert_proba_close(dict(proba.iloc[i]), one, 1e-12)
            assert labels.iloc[i] == model.predict_one(x)


def test_learn_many_is_learn_one_row_by_row():
    data = bag_of_words(text_stream(500, seed=2))
    texts = [text for text, _ in text_stream(500, seed=2)]
    scored = Smoothing(unseen="score")
    one, many_dense, many_sparse = (snr.MultinomialNB(smoothing=scored) for _ in range(3))
    for start in range(0, 400, 100):
        batch = data[start:start + 100]
        for x, y in batch:
            one.learn_one(x, y)
        y = pd.Series([label for _, label in batch])
        many_dense.learn_many(pd.DataFrame([x for x, _ in batch]), y)
        many_sparse.learn_many(feature_extraction.BagOfWords().transform_many(pd.Series(texts[start:start + 100])), y)
    for many in (many_dense, many_sparse):
        assert many.model.class_counts == one.model.class_counts
        assert many.model.n_features == one.model.n_features
        assert many.classes == one.classes
        for x, _ in data[400:]:
            assert_proba_close(many.predict_proba_one(x), one.predict_proba_one(x), 1e-12)


def test_label_types_are_kept():
    """int and bool labels stay int and bool (river's own naive Bayes turns them into str)."""
    X = pd.DataFrame({"a": [3, 0, 1, 0], "b": [0, 2, 0, 1]})
    for y in (pd.Series(np.array([7, 9, 7, 9])), pd.Series([True, False, True, False])):
        model = snr.MultinomialNB()
        model.learn_many(X, y)
        expected = y.tolist()[:2]
        assert model.classes == expected and [type(c) for c in model.classes] == [type(v) for v in expected]
        proba = model.predict_proba_many(X)
        assert list(proba.columns) == expected and type(proba.columns[0]) is type(expected[0])
        predicted = model.predict_many(X)
        assert predicted.tolist() == y.tolist()
        assert type(predicted.tolist()[0]) is type(expected[0])
    theirs = river_nb.MultinomialNB()
    theirs.learn_many(X.astype(pd.SparseDtype(int, 0)), pd.Series(np.array([7, 9, 7, 9])))
    assert sorted(theirs.classes_) == ["7", "9"]  # river: labels became strings


def test_y_is_aligned_on_the_index_of_x():
    X = pd.DataFrame({"cheap": [3, 0, 2], "meeting": [0, 2, 0]}, index=[10, 20, 30])
    shuffled = pd.Series(["spam", "spam", "ham"], index=[30, 10, 20])  # y for rows 10, 20, 30: spam, ham, spam
    model = snr.MultinomialNB()
    model.learn_many(X, shuffled)
    assert model.model.class_counts == {"spam": 2.0, "ham": 1.0}
    assert model.model.feature_counts("meeting") == {"spam": 0.0, "ham": 2.0}
    with pytest.raises(InvalidInputError, match="different indexes"):
        model.learn_many(X, pd.Series(["spam", "ham", "spam"], index=[1, 2, 3]))
    with pytest.raises(InvalidInputError, match="3 rows but y has 2"):
        model.learn_many(X, ["spam", "ham"])
    with pytest.raises(InvalidTypeError, match="DataFrame"):
        model.learn_many([{"cheap": 1}], ["spam"])


def test_learn_many_weights_and_all_or_nothing():
    X = pd.DataFrame({"cheap": [3.0, 1.0], "meeting": [np.nan, 2.0]})
    model = snr.MultinomialNB()
    model.learn_many(X, pd.Series(["spam", "ham"]), w=pd.Series([2.0, 0.5]))
    assert model.model.class_counts == {"spam": 2.0, "ham": 0.5}
    assert model.model.feature_counts("cheap") == {"spam": 6.0, "ham": 0.5}
    bad = pd.DataFrame({"cheap": [1.0, -1.0]})
    with pytest.raises(InvalidInputError):
        model.learn_many(bad, pd.Series(["spam", "ham"]))
    assert model.model.class_counts == {"spam": 2.0, "ham": 0.5}  # nothing learned


def test_untrained_mini_batch_predictions():
    X = pd.DataFrame({"cheap": [1, 2]}, index=["m1", "m2"])
    model = snr.MultinomialNB()
    proba = model.predict_proba_many(X)
    assert proba.shape == (2, 0) and list(proba.index) == ["m1", "m2"]
    assert model.predict_many(X).tolist() == [None, None]
    assert model.predict_proba_one({"cheap": 1}) == {} and model.predict_one({"cheap": 1}) is None


def test_sparse_frame_with_nan_fill_and_stored_zeros():
    """In a sparse column only stored cells are present; a stored 0 is present (as in a dict)."""
    X = pd.DataFrame({"a": [1.0, np.nan, 0.0], "b": [np.nan, 2.0, np.nan]}).astype(pd.SparseDtype(float, np.nan))
    assert snr._frame_rows(X) == [{"a": 1.0}, {"b": 2.0}, {"a": 0.0}]
    mixed = pd.DataFrame({"a": pd.arrays.SparseArray([0, 3, 0]), "b": [1.0, np.nan, 0.0]})
    assert snr._frame_rows(mixed) == [{"b": 1.0}, {"a": 3}, {"b": 0.0}]
    assert snr._frame_rows(pd.Series(["x y", "z"])) == ["x y", "z"]


# -- pipelines and evaluation ---------------------------------------------------------------

def test_bag_of_words_pipeline_one_and_many():
    stream = text_stream(300, seed=6)
    one = feature_extraction.BagOfWords() | snr.MultinomialNB()
    many = feature_extraction.BagOfWords() | snr.MultinomialNB()
    assert isinstance(one, compose.Pipeline)
    for text, label in stream[:200]:
        one.learn_one(text, label)
    for start in range(0, 200, 50):
        chunk = stream[start:start + 50]
        many.learn_many(pd.Series([t for t, _ in chunk]), pd.Series([y for _, y in chunk]))
    texts = pd.Series([t for t, _ in stream[200:]])
    proba = many.predict_proba_many(texts)
    labels = many.predict_many(texts)
    for i, text in enumerate(texts):
        assert_proba_close(dict(proba.iloc[i]), one.predict_proba_one(text), 1e-12)
        assert labels.iloc[i] == one.predict_one(text)


def test_tfidf_pipeline_matches_river_multinomial():
    """TF-IDF values are fractional counts; the adapter still follows river's MultinomialNB."""
    stream = text_stream(600, seed=7)
    ours = feature_extraction.TFIDF() | snr.MultinomialNB(smoothing=Smoothing(unseen="score"))
    theirs = feature_extraction.TFIDF() | river_nb.MultinomialNB()
    worst = 0.0
    for text, label in stream:
        if theirs["MultinomialNB"].class_counts:
            worst = max(worst, assert_proba_close(ours.predict_proba_one(text), theirs.predict_proba_one(text), 1e-9))
        ours.learn_one(text, label)
        theirs.learn_one(text, label)
    assert 0 < worst < 1e-12


def test_progressive_val_score_equals_river():
    stream = text_stream(1500, seed=8)
    scored = snr.MultinomialNB(smoothing=Smoothing(unseen="score"))
    ours = evaluate.progressive_val_score(stream, feature_extraction.BagOfWords() | scored,
                                          metrics.Accuracy() + metrics.LogLoss())
    theirs = evaluate.progressive_val_score(stream, feature_extraction.BagOfWords() | river_nb.MultinomialNB(),
                                            metrics.Accuracy() + metrics.LogLoss())
    ours_accuracy, ours_log_loss = (m.get() for m in ours)
    theirs_accuracy, theirs_log_loss = (m.get() for m in theirs)
    assert ours_accuracy == theirs_accuracy
    assert math.isclose(ours_log_loss, theirs_log_loss, rel_tol=1e-9)
    assert 0.5 < ours_accuracy < 1.0  # learnable, not trivial (majority class is 50%)
    default = evaluate.progressive_val_score(stream, feature_extraction.BagOfWords() | snr.BernoulliNB(),
                                             metrics.Accuracy())
    assert 0.5 < default.get() < 1.0


# -- parity with river: multinomial -----------------------------------------------------------

def test_multinomial_is_a_drop_in_replacement_for_river():
    """unseen='score': predict_proba_one equals river's (1e-9) before each learn_one of a stream.

    river: log P(c) = log N_c/N, P(w|c) = (T_cw + alpha) / (T_c + alpha * n_terms) with
    n_terms = len(feature_counts), and an unseen word scores alpha / (T_c + alpha * n_terms).
    streamnb: the same, with |V| for n_terms. The stream has empty documents, new words at
    every step and words never seen in training.
    """
    ours = feature_extraction.BagOfWords() | snr.MultinomialNB(smoothing=Smoothing(unseen="score"))
    theirs = feature_extraction.BagOfWords() | river_nb.MultinomialNB()
    worst, n_unseen = 0.0, 0
    for text, label in text_stream(2000, seed=9):
        if theirs["MultinomialNB"].class_counts:
            worst = max(worst, assert_proba_close(ours.predict_proba_one(text), theirs.predict_proba_one(text), 1e-9))
            assert ours.predict_one(text) == theirs.predict_one(text)
            x = feature_extraction.BagOfWords().transform_one(text)
            n_unseen += any(w not in theirs["MultinomialNB"].feature_counts for w in x)
        ours.learn_one(text, label)
        theirs.learn_one(text, label)
    assert n_unseen > 100  # unseen words were really scored
    assert ours["MultinomialNB"].model.n_features == theirs["MultinomialNB"].n_terms
    assert worst < 1e-12


@pytest.mark.skipif(not os.environ.get("STREAMNB_SPAMASSASSIN"), reason="STREAMNB_SPAMASSASSIN is not set")
def test_multinomial_drop_in_on_spamassassin():
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        from river_pipeline import spamassassin_stream
    finally:
        sys.path.remove(str(ROOT / "examples"))
    stream = spamassassin_stream(None, limit=400)
    ours = feature_extraction.BagOfWords() | snr.MultinomialNB(smoothing=Smoothing(unseen="score"))
    theirs = feature_extraction.BagOfWords() | river_nb.MultinomialNB()
    assert_pipelines_agree(ours, theirs, stream)


def teach(models, examples):
    """Every model learns the same (x, y) examples, in order."""
    for model in models:
        for x, y in examples:
            model.learn_one(x, y)


def test_multinomial_differences_from_river():
    """Where streamnb and river's MultinomialNB differ, with the numbers of each."""
    # 1. Unseen words: river scores them, streamnb's default ignores them. Trained on
    #    spam {cheap: 2}, ham {meeting: 1}: |V| = 2, T_spam = 2, T_ham = 1.
    theirs, ignore, score = river_nb.MultinomialNB(), snr.MultinomialNB(), snr.MultinomialNB(smoothing=Smoothing(unseen="score"))
    teach([theirs, ignore, score], [({"cheap": 2}, "spam"), ({"meeting": 1}, "ham")])
    x = {"cheap": 1, "lottery": 1}
    # river: spam (3/4)(1/4) = 3/16, ham (1/3)(1/3) = 1/9 -> spam 27/43
    assert theirs.predict_proba_one(x)["spam"] == pytest.approx(27 / 43, abs=1e-12)
    assert score.predict_proba_one(x)["spam"] == pytest.approx(27 / 43, abs=1e-12)
    # ignored: spam 3/4, ham 1/3 -> spam 9/13
    assert ignore.predict_proba_one(x)["spam"] == pytest.approx(9 / 13, abs=1e-12)

    # 2. A feature learned with value 0 joins river's vocabulary (n_terms counts it) but
    #    not streamnb's V (it has no count). spam {cheap: 2, lottery: 0}, ham {meeting: 1}:
    #    river n_terms = 3, streamnb |V| = 2.
    theirs, ours = river_nb.MultinomialNB(), snr.MultinomialNB(smoothing=Smoothing(unseen="score"))
    teach([theirs, ours], [({"cheap": 2, "lottery": 0}, "spam"), ({"meeting": 1}, "ham")])
    assert theirs.n_terms == 3 and ours.model.n_features == 2
    # river: spam 3/5, ham 1/4 -> 12/17; streamnb: spam 3/4, ham 1/3 -> 9/13
    assert theirs.predict_proba_one({"cheap": 1})["spam"] == pytest.approx(12 / 17, abs=1e-12)
    assert ours.predict_proba_one({"cheap": 1})["spam"] == pytest.approx(9 / 13, abs=1e-12)

    # 3. Negative counts: river adds them silently; streamnb refuses them, changing nothing.
    theirs.learn_one({"cheap": -5}, "spam")
    assert theirs.class_totals["spam"] == -3
    with pytest.raises(InvalidInputError, match=">= 0"):
        ours.learn_one({"cheap": -5}, "spam")
    assert ours.model.class_counts == {"spam": 1.0, "ham": 1.0}


# -- parity with river: Bernoulli -------------------------------------------------------------

def river_bernoulli_without_epsilon(model: river_nb.BernoulliNB, x: dict) -> dict:
    """river's Bernoulli posterior from its own counts, minus the 1e-9 it adds inside each log."""
    total = sum(model.class_counts.values())
    scores = {}
    for c, n_c in model.class_counts.items():
        score = math.log(n_c / total)
        for f in model.feature_counts:
            p = model.p_feature_given_class(f, c)
            score += math.log(p if x.get(f, 0) > model.true_threshold else 1.0 - p)
        scores[c] = score
    top = max(scores.values())
    norm = sum(math.exp(s - top) for s in scores.values())
    return {c: math.exp(s - top) / norm for c, s in scores.items()}


def test_bernoulli_agrees_with_river_up_to_its_epsilon():
    """Same p_cw = (D_cw + alpha) / (N_c + 2 alpha), same sum over the whole vocabulary, same
    threshold (x > true_threshold == binarize), unseen words ignored (river only walks its
    vocabulary): equal to 1e-9 with river's formula taken exactly. river's own output adds
    1e-9 inside each of the |V| logs; that shifts its probabilities by a few 1e-8 here.
    """
    stream = bag_of_words(text_stream(500, seed=10, vocabulary=400))
    ours, theirs = snr.BernoulliNB(), river_nb.BernoulliNB()
    epsilon_shift = 0.0
    for x, label in stream:
        if theirs.class_counts:
            assert_proba_close(ours.predict_proba_one(x), river_bernoulli_without_epsilon(theirs, x), 1e-9)
            epsilon_shift = max(epsilon_shift, assert_proba_close(ours.predict_proba_one(x),
                                                                  theirs.predict_proba_one(x), 1e-6))
            assert ours.predict_one(x) == theirs.predict_one(x)
        ours.learn_one(x, label)
        theirs.learn_one(x, label)
    assert 1e-9 < epsilon_shift < 1e-6


def test_bernoulli_differences_from_river():
    """river's 1e-9, its vocabulary of below-threshold features, and unseen='score', in numbers."""
    # 1. The epsilon alone. spam {cheap}, ham {meeting}: p = 2/3 for the class's own word.
    #    Exact: spam (1/2)(2/3)(2/3) = 2/9, ham (1/2)(1/3)(1/3) = 1/18 -> spam 4/5.
    theirs, ours = river_nb.BernoulliNB(), snr.BernoulliNB()
    teach([theirs, ours], [({"cheap": 1}, "spam"), ({"meeting": 1}, "ham")])
    assert ours.predict_proba_one({"cheap": 1})["spam"] == pytest.approx(0.8, abs=1e-15)
    # river: ((2/3 + e) / (1/3 + e))^2 = 4 (1 - 3e + ...) -> 4/5 - 12e/25 = 0.8 - 4.8e-10
    assert theirs.predict_proba_one({"cheap": 1})["spam"] == pytest.approx(0.8 - 4.8e-10, abs=1e-15)

    # 2. A feature seen only at or below the threshold is in river's vocabulary (its absent
    #    term counts for every class) but not in streamnb's. Threshold 1; spam {cheap: 2,
    #    lottery: 1}, ham {meeting: 2} twice. Without lottery: spam (1/3)(2/3)(2/3) = 4/27,
    #    ham (2/3)(1/4)(1/4) = 1/24 -> 32/41. river adds lottery absent: spam 2/3, ham 3/4 -> 256/337.
    theirs, ours = river_nb.BernoulliNB(true_threshold=1), snr.BernoulliNB(binarize=1)
    teach([theirs, ours], [({"cheap": 2, "lottery": 1}, "spam"), ({"meeting": 2}, "ham"), ({"meeting": 2}, "ham")])
    assert len(theirs.feature_counts) == 3 and ours.model.n_features == 2
    assert ours.predict_proba_one({"cheap": 2})["spam"] == pytest.approx(32 / 41, abs=1e-12)
    assert theirs.predict_proba_one({"cheap": 2})["spam"] == pytest.approx(256 / 337, abs=1e-8)

    # 3. Unseen words: river ignores them (as streamnb's default does); unseen='score' counts
    #    each as a present zero-count word, p = alpha / (N_c + 2 alpha): spam 1/3, ham 1/4.
    #    spam {cheap}, ham {meeting} twice: ignored -> 32/41; scored -> 384/465.
    theirs, ignore, score = river_nb.BernoulliNB(), snr.BernoulliNB(), snr.BernoulliNB(smoothing=Smoothing(unseen="score"))
    teach([theirs, ignore, score], [({"cheap": 1}, "spam"), ({"meeting": 1}, "ham"), ({"meeting": 1}, "ham")])
    x = {"cheap": 1, "lottery": 1}
    assert theirs.predict_proba_one(x)["spam"] == pytest.approx(32 / 41, abs=1e-8)
    assert ignore.predict_proba_one(x)["spam"] == pytest.approx(32 / 41, abs=1e-12)
    assert score.predict_proba_one(x)["spam"] == pytest.approx(384 / 465, abs=1e-12)


# -- Complement: river's formula, and the adapter once the model lands -------------------------

def test_river_complement_is_sklearn_complement_without_normalisation():
    """river's ComplementNB: score_c = -sum_w x_w log((F_notc,w + alpha) / (F_notc + alpha |V|)),
    no prior, softmax. That is scikit-learn's ComplementNB(norm=False) on the training
    vocabulary; an unseen word scores as a zero-count word: -log(alpha / (F_notc + alpha |V|)).
    This is the reference streamnb.ComplementNB(smoothing=Smoothing(unseen='score')) must meet.
    """
    from sklearn.naive_bayes import ComplementNB as SklearnComplementNB

    data = bag_of_words(text_stream(300, seed=11, vocabulary=200))
    data = [(x, y) for x, y in data if x]
    theirs = river_nb.ComplementNB(alpha=0.5)
    for x, y in data:
        theirs.learn_one(x, y)
    words = sorted(theirs.feature_counts)
    column = {w: j for j, w in enumerate(words)}

    def dense(x):
        row = np.zeros(len(words))
        for w, v in x.items():
            row[column[w]] = v
        return row

    sklearn = SklearnComplementNB(alpha=0.5, norm=False)
    sklearn.fit(np.array([dense(x) for x, _ in data]), [y for _, y in data])
    for x, _ in data[:50]:
        expected = dict(zip(sklearn.classes_, sklearn.predict_proba(dense(x)[None, :])[0]))
        assert_proba_close(theirs.predict_proba_one(x), expected, 1e-9)

    # Unseen words, by hand: spam {cheap: 2}, ham {meeting: 1}, alpha 1, |V| = 2.
    # F_not_spam = 1, F_not_ham = 2. "lottery": spam -log(1/3), ham -log(1/4);
    # "cheap": spam -log(1/3), ham -log(3/4). P(spam | cheap, lottery) = 9 / (9 + 16/3) = 27/43.
    small = river_nb.ComplementNB()
    small.learn_one({"cheap": 2}, "spam")
    small.learn_one({"meeting": 1}, "ham")
    assert small.predict_proba_one({"cheap": 1, "lottery": 1})["spam"] == pytest.approx(27 / 43, abs=1e-12)


@pytest.mark.skipif(not hasattr(snr, "ComplementNB"),
                    reason="streamnb.river.ComplementNB not hooked up yet: the model is being added in another branch")
def test_complement_is_a_drop_in_replacement_for_river():
    ours = feature_extraction.BagOfWords() | snr.ComplementNB(smoothing=Smoothing(unseen="score"))
    theirs = feature_extraction.BagOfWords() | river_nb.ComplementNB()
    for text, label in text_stream(400, seed=12, vocabulary=300):
        if theirs["ComplementNB"].class_counts and feature_extraction.BagOfWords().transform_one(text):
            assert_proba_close(ours.predict_proba_one(text), theirs.predict_proba_one(text), 1e-9)
        ours.learn_one(text, label)
        theirs.learn_one(text, label)


# -- the core option the adapters rely on ----------------------------------------------------

@pytest.mark.parametrize("model_class", [streamnb.MultinomialNB, streamnb.BernoulliNB])
def test_empty_documents_learn_counts_the_document(model_class):
    model = model_class(empty_documents="learn")
    model.learn_one({}, "ham")
    model.learn_one({"cheap": 0}, "ham")
    model.learn_one({"cheap": 2}, "spam")
    assert model.class_counts == {"ham": 2.0, "spam": 1.0}
    assert model.n_features == 1
    batch = model_class(empty_documents="learn")
    batch.learn_many([{}, {"cheap": 0}, {"cheap": 2}], ["ham", "ham", "spam"])
    assert batch.predict_proba_one({"cheap": 1}) == model.predict_proba_one({"cheap": 1})
    model.unlearn_one({}, "ham")
    assert model.class_counts == {"ham": 1.0, "spam": 1.0}
    assert model.get_params()["empty_documents"] == "learn"
    with pytest.raises(InvalidInputError, match="empty document"):
        model_class().learn_one({}, "ham")
    with pytest.raises(ValueError, match="empty_documents"):
        model_class(empty_documents="skip")


def test_bernoulli_empty_document_is_evidence():
    """In the Bernoulli model an empty document says every word is absent: it moves p_cw."""
    model = streamnb.BernoulliNB(empty_documents="learn")
    model.learn_one({"cheap": 1}, "spam")
    model.learn_one({"meeting": 1}, "ham")
    before = model.predict_proba_one({"cheap": 1})["spam"]  # 4/5
    model.learn_one({}, "spam")
    # spam: N = 2, p(cheap) = 2/4, p(meeting) = 1/4; ham: 2/3, 1/3 on its own word.
    # spam (2/3)(1/2)(3/4) = 1/4, ham (1/3)(1/3)(1/3) = 1/27 -> 27/31
    assert before == pytest.approx(0.8)
    assert model.predict_proba_one({"cheap": 1})["spam"] == pytest.approx(27 / 31, abs=1e-12)


# -- a model with the documented API but none of DiscreteNB's parameters ----------------------

class TinyCategoricalNB:
    """A stand-in for the models still to land (CategoricalNB, GaussianNB): the documented
    model API, another constructor. P(c | x) ~ N_c prod_f (n_cfv + s) / (N_c + s k_f), k_f
    the number of values seen for f; a value never seen for f is ignored."""

    def __init__(self, smoothing: float = 1.0) -> None:
        self.smoothing = smoothing
        self.class_docs: dict = {}
        self.counts: collections.Counter = collections.Counter()
        self.values: dict = collections.defaultdict(set)

    def learn_one(self, x, y, w=1.0):
        self.class_docs[y] = self.class_docs.get(y, 0.0) + w
        for f, v in x.items():
            self.counts[f, v, y] += w
            self.values[f].add(v)
        return self

    def learn_many(self, X, y, w=None):
        for x, label, weight in zip(X, y, w or [1.0] * len(y)):
            self.learn_one(x, label, weight)
        return self

    @property
    def classes(self):
        return list(self.class_docs)

    def predict_log_proba_one(self, x):
        if not self.class_docs:
            return {}
        total, s = sum(self.class_docs.values()), self.smoothing
        scores = {c: math.log(n / total) + sum(
            math.log((self.counts[f, v, c] + s) / (n + s * len(self.values[f])))
            for f, v in x.items() if v in self.values.get(f, ())) for c, n in self.class_docs.items()}
        top = max(scores.values())
        norm = top + math.log(sum(math.exp(v - top) for v in scores.values()))
        return {c: v - norm for c, v in scores.items()}

    def predict_proba_one(self, x):
        return {c: math.exp(v) for c, v in self.predict_log_proba_one(x).items()}

    def predict_one(self, x):
        proba = self.predict_log_proba_one(x)
        return max(proba, key=proba.get) if proba else None


class TinyCategorical(snr.NaiveBayesClassifier):
    """River adapter of the TinyCategoricalNB stand-in: the one line a new model needs."""

    model_class = TinyCategoricalNB


def test_adapter_plugs_in_a_model_with_another_constructor(spy_many):
    assert list(inspect.signature(TinyCategorical).parameters) == ["smoothing"]
    assert list(TinyCategorical._unit_test_params()) == [{}, {}]  # DiscreteNB's extras left out
    model = TinyCategorical(smoothing=0.5)
    assert model.smoothing == 0.5 and model.model.smoothing == 0.5 and "positive input" not in model._tags
    checks.check_estimator(model)
    assert spy_many["predict_proba_many"] == 3 and spy_many["learn_many"] == 15
    model.learn_many(pd.DataFrame({"colour": ["red", "blue", "red"]}), pd.Series([1, 2, 1]))
    # class 1: (2/3) (2 + 0.5) / (2 + 0.5 * 2) = 5/9; class 2: (1/3) (0 + 0.5) / (1 + 0.5 * 2) = 1/12 -> 20/23
    assert model.predict_proba_one({"colour": "red"})[1] == pytest.approx(20 / 23, abs=1e-12)
    assert model.predict_many(pd.DataFrame({"colour": ["blue", None]})).tolist() == [2, 1]


# -- transformer adapters -------------------------------------------------------------------

class WordCounter:
    """A stand-in with streamnb.text.Tokenizer's documented API: text -> dict word -> count."""

    def __init__(self, lowercase: bool = True, min_length: int = 2) -> None:
        self.lowercase = lowercase
        self.min_length = min_length

    def get_params(self) -> dict:
        return {"lowercase": self.lowercase, "min_length": self.min_length}

    def __call__(self, text: str) -> dict[str, int]:
        if self.lowercase:
            text = text.lower()
        return dict(collections.Counter(w for w in re.findall(r"\w+", text) if len(w) >= self.min_length))


class DocumentFrequencies:
    """A stand-in for a learning vectorizer (streamnb.text.OnlineTfidf's learn_one/transform_one)."""

    def __init__(self, smooth: float = 1.0) -> None:
        self.smooth = smooth
        self.n_documents = 0
        self.document_counts: collections.Counter = collections.Counter()

    def learn_one(self, text: str) -> None:
        self.n_documents += 1
        self.document_counts.update(set(text.split()))

    def transform_one(self, text: str) -> dict[str, float]:
        counts = collections.Counter(text.split())
        return {w: c * math.log((self.n_documents + self.smooth) / (self.document_counts[w] + self.smooth))
                for w, c in counts.items()}


class WordCounts(snr.TextTransformer):
    """River transformer adapter of the WordCounter stand-in."""

    transformer_class = WordCounter


class Tfidf(snr.TextTransformer):
    """River transformer adapter of the DocumentFrequencies stand-in."""

    transformer_class = DocumentFrequencies


def text_records(n: int, seed: int):
    return [({"body": text}, label) for text, label in text_stream(n, seed=seed, vocabulary=300)]


@pytest.mark.parametrize("adapter", [WordCounts, Tfidf, snr.Tokenizer, snr.EmailTokenizer])
def test_transformer_adapter_river_checks(adapter, monkeypatch):
    """river's checks pass; its dataset checks run on a text stream.

    river has no text data set for its checks (a text-input transformer gets none), so the
    checks are given dict records {"body": text} and the adapter reads them with on="body".
    """
    assert list(inspect.signature(adapter).parameters)[-1] == "on"
    text_model = adapter()
    assert "text input" in text_model._tags
    for check in checks.yield_checks(text_model):
        check(text_model.clone())
    monkeypatch.setattr(checks, "_yield_datasets", lambda model, scale=1: iter([text_records(60 * scale, seed=13)]))
    model = adapter(on="body")
    names = []
    for check in checks.yield_checks(model):
        names.append(check.__name__)
        check(model.clone())
    for name in ("check_transform_one", "check_transform_many_matches_transform_one",
                 "check_learn_many_matches_learn_one", "check_pickling", "check_emerging_features"):
        assert name in names


def test_transformer_adapter_pipeline_and_batches():
    stream = text_stream(300, seed=14)
    words = WordCounts(min_length=2)
    assert words.min_length == 2 and words.transformer.get_params() == {"lowercase": True, "min_length": 2}
    assert words.transform_one("Cheap cheap PILLS a") == {"cheap": 2, "pills": 1}
    texts = pd.Series([t for t, _ in stream[:40]], index=range(100, 140))
    frame = words.transform_many(texts)
    assert list(frame.index) == list(texts.index)
    assert snr._frame_rows(frame) == [words.transform_one(t) for t in texts]

    ours = WordCounts() | snr.MultinomialNB(smoothing=Smoothing(unseen="score"))
    theirs = feature_extraction.BagOfWords() | river_nb.MultinomialNB()
    # Same tokens as BagOfWords on these texts (lowercase words of 2+ characters).
    assert_pipelines_agree(ours, theirs, stream)
    clone = ours.clone()
    assert clone["WordCounts"].min_length == 2 and clone["MultinomialNB"].classes == []


def test_learning_transformer_is_updated_by_the_pipeline():
    model = Tfidf() | snr.MultinomialNB()
    model.learn_one("cheap pills", "spam")
    model.learn_one("meeting notes", "ham")
    tfidf = model["Tfidf"].transformer
    assert tfidf.n_documents == 2 and tfidf.document_counts["cheap"] == 1
    many = Tfidf()
    many.learn_many(pd.Series(["cheap pills", "meeting notes"]))
    assert many.transformer.document_counts == tfidf.document_counts
    # idf of "cheap" after 2 documents, 1 containing it: log(3/2)
    assert many.transform_one("cheap")["cheap"] == pytest.approx(math.log(3 / 2))
    records = Tfidf(on="body")
    records.learn_one({"body": "cheap"})
    records.learn_one({"subject": "no body"})  # no text: nothing but the document count
    assert records.transformer.n_documents == 2 and records.transform_one({"title": "x"}) == {}
    with pytest.raises(InvalidTypeError, match="mapping"):
        records.transform_one("cheap")


def test_twcnb_as_a_river_pipeline():
    """Tokenizer | OnlineTfidf | ComplementNB(norm=True): Rennie et al.'s TWCNB in river."""
    from streamnb import ComplementNB, OnlineTfidf, Tokenizer

    pipeline = snr.Tokenizer() | snr.OnlineTfidf() | snr.ComplementNB(norm=True, alpha=0.1)
    tokenizer, tfidf = Tokenizer(), OnlineTfidf()
    reference = ComplementNB(norm=True, alpha=0.1, empty_documents="learn")  # the adapter default
    for text, label in text_stream(200, seed=21):
        counts = tokenizer(text)
        if reference.classes:
            tfidf_view = tfidf.transform_one(counts)
            got = pipeline.predict_proba_one(text)
            assert_proba_close(got, reference.predict_proba_one(tfidf_view), 1e-12)
        pipeline.learn_one(text, label)
        tfidf.learn_one(counts)
        reference.learn_one(tfidf.transform_one(counts), label)
    assert pipeline["OnlineTfidf"].transformer.n_docs == 200


# -- the example --------------------------------------------------------------------------

@pytest.mark.skipif(not os.environ.get("STREAMNB_SPAMASSASSIN"),
                    reason="STREAMNB_SPAMASSASSIN is not set (path of the SpamAssassin corpus .tgz)")
def test_example_river_pipeline_small():
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "river_pipeline.py"), "--limit", "300"],
                            capture_output=True, text=True, cwd=ROOT, timeout=600,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    lines = result.stdout.splitlines()
    assert lines[0].startswith("SpamAssassin stream: 300 messages")
    rows = {}
    for line in lines[2:]:
        name, accuracy, throughput = line.rsplit(maxsplit=2)
        rows[name] = (float(accuracy), float(throughput))
    assert set(rows) == {"river.naive_bayes.MultinomialNB()", "streamnb.integrations.river.MultinomialNB(smoothing=Smoothing(unseen='score'))",
                         "streamnb.integrations.river.MultinomialNB()"}
    # The drop-in replacement makes the same predictions as river's model.
    assert rows["streamnb.integrations.river.MultinomialNB(smoothing=Smoothing(unseen='score'))"][0] == rows["river.naive_bayes.MultinomialNB()"][0]
    for accuracy, throughput in rows.values():
        assert 0.7 < accuracy <= 1.0 and throughput > 0
