"""streamnb.LogisticRegression: the core's update rule against a numpy reference, the API
shared with the naive Bayes models, persistence, bad input, the exact undo of a kept step
(a ledger), and the approximate operations (the reverse step, merge) bounded."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import streamnb
from streamnb import ByteNgrams, LogisticRegression, Tokenizer
from streamnb.errors import (
    IncompatibleModelsError,
    InvalidInputError,
    InvalidParameterError,
    InvalidTypeError,
    UnknownClassError,
)

ADAGRAD_G0 = 0.01


class Reference:
    """The update rule of src/logistic.rs written out in numpy, the slow way: every weight
    decays at every step (the core does it lazily, through one scale), classes and features
    are dict entries (the core: ids and rows)."""

    def __init__(self, learning_rate, schedule="adagrad", l2=0.0, margin=None, class_weight=None, sublinear_tf=True,
                 idf_power=2.0, normalize=True):
        self.rate, self.schedule, self.l2, self.margin, self.class_weight = (learning_rate, schedule, l2, margin,
                                                                             class_weight)
        self.sublinear_tf, self.idf_power, self.normalize = sublinear_tf, idf_power, normalize
        self.n_docs = 0.0
        self.doc_freq: dict = {}
        self.classes: list = []
        self.counts: list[float] = []
        self.weights: dict = {}  # feature -> (K-1,) weights of classes 1..K-1
        self.squares: dict = {}
        self.bias = np.zeros(0)
        self.bias_squares = np.zeros(0)

    def _widen(self):
        self.weights = {f: np.append(w, 0.0) for f, w in self.weights.items()}
        self.squares = {f: np.append(s, 0.0) for f, s in self.squares.items()}
        if len(self.classes) > 1:
            self.bias = np.append(self.bias, 0.0)
            self.bias_squares = np.append(self.bias_squares, 0.0)

    def count(self, x, w):
        self.n_docs += w
        for f in x:
            self.doc_freq[f] = self.doc_freq.get(f, 0) + w

    def idf(self, f):
        d = self.doc_freq[f]
        return (math.log1p(max(self.n_docs, d)) + 1) - math.log1p(d)  # ln((1 + N) / (1 + D)) + 1

    def transformed(self, x):
        if self.sublinear_tf:
            x = {f: math.copysign(math.log1p(abs(v)), v) for f, v in x.items()}
        if self.idf_power:  # a feature no learned document held is left out
            x = {f: v * self.idf(f) ** self.idf_power if self.doc_freq.get(f) else 0.0 for f, v in x.items()}
        if self.normalize:
            norm = math.sqrt(sum(v * v for v in x.values()))
            x = {f: v / norm for f, v in x.items()} if norm > 0 else x
        return x

    def scores(self, x):
        x = self.transformed(x)
        s = np.zeros(len(self.classes))
        for f, v in x.items():
            if f in self.weights:
                s[1:] += v * self.weights[f]
        s[1:] += self.bias
        return s

    def log_proba(self, x):
        s = self.scores(x)
        top = s.max()
        norm = top + math.log(np.exp(s - top).sum())
        return dict(zip(self.classes, (s - norm).tolist()))

    def learn(self, x, y, w=1.0, counted=False):
        if self.idf_power and not counted:
            self.count(x, w)
        if y not in self.classes:
            self.classes.append(y)
            self.counts.append(0.0)
            if len(self.classes) > 1:
                self._widen()
        c = self.classes.index(y)
        cols = len(self.classes) - 1
        for f in x:
            self.weights.setdefault(f, np.zeros(cols))
            self.squares.setdefault(f, np.zeros(cols))
        self.counts[c] += w
        if self.class_weight == "balanced":
            seen = [n for n in self.counts if n > 0]
            omega = w * sum(self.counts) / (len(seen) * self.counts[c])
        elif isinstance(self.class_weight, dict):
            omega = w * self.class_weight.get(y, 1.0)
        else:
            omega = w
        if self.l2:
            for f in self.weights:
                self.weights[f] = self.weights[f] * (1 - self.rate * self.l2)
        s = self.scores(x)
        if cols == 0:
            return
        if self.margin is not None and s[c] - max(s[k] for k in range(len(s)) if k != c) >= self.margin:
            return
        p = np.exp(s - s.max())
        p /= p.sum()
        target = np.zeros(len(s))
        target[c] = 1.0
        g = omega * (target - p)[1:]
        for f, v in self.transformed(x).items():
            step = g * v
            if self.schedule == "adagrad":
                self.squares[f] = self.squares[f] + step * step
                self.weights[f] = self.weights[f] + self.rate * step / np.sqrt(ADAGRAD_G0 + self.squares[f])
            else:
                self.weights[f] = self.weights[f] + self.rate * step
        if self.schedule == "adagrad":
            self.bias_squares = self.bias_squares + g * g
            self.bias = self.bias + self.rate * g / np.sqrt(ADAGRAD_G0 + self.bias_squares)
        else:
            self.bias = self.bias + self.rate * g


def stream(n=300, seed=0, classes=("a", "b", "c"), vocabulary=40):
    """Random sparse documents with signed real values, classes arriving one after another."""
    rng = np.random.default_rng(seed)
    docs = []
    for i in range(n):
        k = len(classes) if i > 20 else 1 + i // 8  # the second and third classes arrive later
        y = classes[int(rng.integers(min(k, len(classes))))]
        size = int(rng.integers(1, 8))
        words = rng.choice(vocabulary, size=size, replace=False)
        shift = classes.index(y) * 5
        x = {f"w{(int(t) + shift) % vocabulary}": float(rng.normal(1.0, 1.0)) for t in words}
        docs.append((x, y, float(rng.uniform(0.5, 2.0))))
    return docs


SETTINGS = [
    dict(learning_rate=0.1),
    dict(learning_rate=0.1, idf_power=0.0),
    dict(learning_rate=0.2, idf_power=1.0, sublinear_tf=False),
    dict(learning_rate=0.3, sublinear_tf=False, idf_power=0.0, normalize=False),
    dict(learning_rate=0.3, sublinear_tf=False, idf_power=1.0, normalize=False),
    dict(learning_rate=0.3, sublinear_tf=False),
    dict(learning_rate=0.05, schedule="constant"),
    dict(learning_rate=0.1, l2=0.05),
    dict(learning_rate=0.05, schedule="constant", l2=0.01, margin=0.5),
    dict(learning_rate=0.2, class_weight="balanced"),
    dict(learning_rate=0.1, class_weight={"a": 3.0, "c": 0.5}, margin=2.0),
]


@pytest.mark.parametrize("settings", SETTINGS, ids=[str(s) for s in SETTINGS])
@pytest.mark.parametrize("n_buckets", [None, 1 << 16])
def test_the_core_follows_the_reference_update_rule(settings, n_buckets):
    model = LogisticRegression(**settings, n_buckets=n_buckets)
    reference = Reference(**settings)
    worst = 0.0
    for i, (x, y, w) in enumerate(stream()):
        model.learn_one(x, y, w)
        reference.learn(x, y, w)
        if i % 10 == 0 or i > 280:
            got, want = model.predict_log_proba_one(x), reference.log_proba(x)
            assert list(got) == list(want)
            worst = max(worst, max(abs(got[c] - want[c]) for c in want))
    assert worst < 1e-12
    assert model.classes == ["a", "b", "c"]
    assert model.class_counts == pytest.approx(dict(zip(reference.classes, reference.counts)), abs=1e-12)
    # the model learned something: each class wins on its own shifted words
    assert model.predict_one({"w5": 1.0, "w6": 1.0, "w7": 1.0}) is not None


def test_binary_is_the_textbook_logistic_regression():
    """Two classes, a constant rate: w += rate * (y - sigmoid(w.x + b)) x, one weight per feature."""
    model = LogisticRegression(0.5, schedule="constant", sublinear_tf=False, idf_power=0.0, normalize=False)
    w, b = {"x": 0.0, "y": 0.0}, 0.0
    for x, label in [({"x": 1.0}, "spam"), ({"y": 2.0}, "ham"), ({"x": 1.0, "y": 1.0}, "spam")] * 5:
        model.learn_one(x, label)
        if model.classes == ["spam"]:
            continue  # one class: nothing to tell apart, no step
        target = 1.0 if label == "ham" else 0.0  # "ham" is class 1 against the reference "spam"
        z = sum(w[f] * v for f, v in x.items()) + b
        g = target - 1 / (1 + math.exp(-z))
        for f, v in x.items():
            w[f] += 0.5 * g * v
        b += 0.5 * g
    z = w["x"] + b
    assert model.predict_proba_one({"x": 1.0})["ham"] == pytest.approx(1 / (1 + math.exp(-z)), abs=1e-14)
    assert model.predict_one({"x": 1.0}) == "spam" and model.predict_one({"y": 1.0}) == "ham"


def test_before_anything_is_learned_and_with_one_class():
    model = LogisticRegression()
    assert model.predict_one({"a": 1}) is None and model.predict_proba_one({"a": 1}) == {}
    model.learn_one({"a": 1}, "x")
    assert model.predict_proba_one({"a": 1}) == {"x": 1.0}
    assert model.predict_one({"zzz": 1}) == "x"


@pytest.mark.parametrize("idf_power", [0.0, 2.0])
def test_learn_many_equals_learn_one_in_order_and_passes_repeat_the_batch(idf_power):
    """With an IDF, a document is counted once, at its first step."""
    docs = stream(120, seed=3)
    X, y, w = [d[0] for d in docs], [d[1] for d in docs], [d[2] for d in docs]
    one, many = LogisticRegression(0.1, idf_power=idf_power), LogisticRegression(0.1, idf_power=idf_power)
    for x, label, weight in docs:
        one.learn_one(x, label, weight)
    many.learn_many(X, y, w)
    probe = {"w1": 1.0, "w9": -0.5, "w30": 2.0}
    # equal up to rounding: a batch lists a document's features in another order (all new to the
    # vocabulary read at the start), so its sums run in another order
    assert many.predict_log_proba_one(probe) == pytest.approx(one.predict_log_proba_one(probe), abs=1e-12)
    twice = LogisticRegression(0.1, idf_power=idf_power, passes=2).learn_many(X, y, w)
    reference = Reference(0.1, idf_power=idf_power)
    for x, label, weight in docs:
        reference.learn(x, label, weight)
    for x, label, weight in docs:
        reference.learn(x, label, weight, counted=True)
    assert twice.predict_log_proba_one(probe) == pytest.approx(reference.log_proba(probe), abs=1e-12)
    assert twice.n_learned == 240 and twice.class_counts == pytest.approx(many.class_counts)
    for x, label, weight in docs:
        one.learn_one(x, label, weight)
    again = twice.predict_log_proba_one(probe) == pytest.approx(one.predict_log_proba_one(probe), abs=1e-12)
    assert again == (not idf_power)  # learn_one counts a document again; a second pass does not


def test_features_never_learned_are_left_out_of_a_prediction_with_an_idf():
    model = LogisticRegression(0.5)
    for x, label in [({"cheap": 1, "pills": 1}, "spam"), ({"meeting": 1, "noon": 1}, "ham")] * 3:
        model.learn_one(x, label)
    with_unseen = model.predict_log_proba_one({"cheap": 1, "zzz": 5, "qqq": 2})
    assert with_unseen == model.predict_log_proba_one({"cheap": 1})
    no_idf = LogisticRegression(0.5, idf_power=0.0)
    for x, label in [({"cheap": 1, "pills": 1}, "spam"), ({"meeting": 1, "noon": 1}, "ham")] * 3:
        no_idf.learn_one(x, label)
    # without one, they count in the document's norm (as they always did)
    assert no_idf.predict_log_proba_one({"cheap": 1, "zzz": 5}) != no_idf.predict_log_proba_one({"cheap": 1})


def test_raw_text_and_byte_ngrams_read_as_their_mappings():
    tokenizer = Tokenizer()
    texts = [("cheap pills now", "spam"), ("meeting at noon tomorrow", "ham"), ("cheap meeting", "spam")] * 4
    raw_model, dict_model = LogisticRegression(tokenizer=tokenizer), LogisticRegression()
    for text, label in texts:
        raw_model.learn_one(text, label)
        dict_model.learn_one(tokenizer(text), label)
    assert raw_model.predict_log_proba_one("pills at noon") == dict_model.predict_log_proba_one(tokenizer("pills at noon"))
    grams = ByteNgrams(4, 40, prefix="b:")
    message = b"Subject: caf\xe9 \xff\n\nbody text that runs past the forty bytes kept"
    assert set(grams(message)) == {"b:" + message[i:i + 4].decode("latin-1") for i in range(37)}
    for n_buckets in (None, 1 << 12):
        raw_model, dict_model = (LogisticRegression(tokenizer=grams, n_buckets=n_buckets),
                                 LogisticRegression(n_buckets=n_buckets))
        for i, label in enumerate(["spam", "ham"] * 3):
            raw_model.learn_one(message + bytes([i]), label)
            dict_model.learn_one(grams(message + bytes([i])), label)
        assert raw_model.predict_log_proba_one(message) == dict_model.predict_log_proba_one(grams(message))


def test_byte_ngrams_with_email_fields():
    from streamnb import EmailTokenizer

    message = b"From: a@example.com\nSubject: cheap pills\n\nbuy now"
    combined = ByteNgrams(4, 3000, prefix="b:", email=EmailTokenizer())
    features = combined(message)
    assert set(EmailTokenizer(body={"binary": True})(message)) <= set(features)
    assert "b:Subj" in features and set(features.values()) == {1}
    assert ByteNgrams(**combined.get_params()) == combined
    with pytest.raises(InvalidParameterError, match="n must be an int >= 1"):
        ByteNgrams(0)


def test_save_load_round_trips_and_keeps_learning(tmp_path):
    for n_buckets, tokenizer in [(None, Tokenizer()), (1 << 10, ByteNgrams(3, 100))]:
        model = LogisticRegression(0.1, l2=0.01, tokenizer=tokenizer, n_buckets=n_buckets)
        texts = ["cheap pills now", "meeting at noon", "noon pills", "cheap cheap"]
        texts = [t.encode() if isinstance(tokenizer, ByteNgrams) else t for t in texts]
        for i, text in enumerate(texts * 3):
            model.learn_one(text, ["spam", "ham", 3][i % 3])
        path = tmp_path / "m.snb"
        model.save(path)
        loaded = streamnb.load(path)
        assert type(loaded) is LogisticRegression and loaded.get_params()["tokenizer"] == tokenizer
        for text in texts:
            assert loaded.predict_log_proba_one(text) == model.predict_log_proba_one(text)
        for m in (model, loaded):
            m.learn_one(texts[0], "ham")
        assert loaded.predict_log_proba_one(texts[1]) == model.predict_log_proba_one(texts[1])
        assert loaded.class_counts == model.class_counts and loaded.n_learned == model.n_learned
        again = pickle.loads(pickle.dumps(model))
        assert again.predict_log_proba_one(texts[2]) == model.predict_log_proba_one(texts[2])


def test_a_file_from_before_the_idf_loads_without_one_and_scores_as_it_did(tmp_path):
    from tests.retrain_support import read_members, write_members

    model = LogisticRegression(0.3, idf_power=0.0, tokenizer=Tokenizer())
    for text, label in [("cheap pills now", "spam"), ("meeting at noon", "ham"), ("cheap noon", "spam")] * 3:
        model.learn_one(text, label)
    path = tmp_path / "old.snb"
    model.save(path)
    metadata, members = read_members(path)
    params = dict(metadata["state"]["$map"])["params"]["$map"]
    params[:] = [pair for pair in params if pair[0] != "idf_power"]  # as files were written before it
    write_members(path, metadata, members)
    loaded = streamnb.load(path)
    assert loaded.get_params()["idf_power"] == 0.0
    for text in ("cheap meeting", "noon pills zzz"):
        assert loaded.predict_log_proba_one(text) == model.predict_log_proba_one(text)


@pytest.mark.parametrize("change, words", [
    (lambda state, arrays: arrays.pop("lr_doc_freq"), "lr_doc_freq"),
    (lambda state, arrays: arrays.update(lr_doc_freq=arrays["lr_doc_freq"] * np.nan), "finite"),
    (lambda state, arrays: arrays.update(lr_doc_freq=arrays["lr_doc_freq"][:-1]), "one document frequency"),
    (lambda state, arrays: state.update(idf_docs=-1.0), "documents counted"),
    (lambda state, arrays: state.update(idf_docs="many"), "idf_docs"),
])
def test_a_saved_idf_is_checked(change, words):
    model = LogisticRegression(0.3)
    for x, label in [({"a": 1, "b": 2}, "x"), ({"b": 1, "c": 1}, "y")] * 2:
        model.learn_one(x, label)
    state, arrays = model._state()
    assert state["idf_docs"] == 4.0 and list(arrays["lr_doc_freq"]) == [2.0, 4.0, 2.0]
    arrays = dict(arrays)
    change(state, arrays)
    with pytest.raises(streamnb.errors.ModelFormatError, match=words):
        LogisticRegression._from_state(state, arrays)


def test_the_idf_counts_stay_exact_under_unlearn_and_merge():
    """The weights' unlearn and merge are approximate; the document frequencies are counts."""
    def idf_counts(model):
        state, arrays = model._state()
        tokens = model._core.tokens_of(list(np.frombuffer(arrays["lr_feature"].tobytes(), dtype="<u4")))
        return state["idf_docs"], {t: d for t, d in zip(tokens, arrays["lr_doc_freq"]) if d}

    a, b = LogisticRegression(0.3), LogisticRegression(0.3)
    for x, label in [({"a": 1, "b": 2}, "x"), ({"b": 1, "c": 1}, "y")] * 2:
        a.learn_one(x, label)
    before = idf_counts(a)
    a.learn_one({"c": 3, "d": 1}, "y")
    a.unlearn_one({"c": 3, "d": 1}, "y")
    assert idf_counts(a) == before
    b.learn_one({"d": 1, "e": 1}, "x")
    b.learn_one({"a": 1}, "y")
    a.merge(b)
    assert idf_counts(a) == (6.0, {"a": 3.0, "b": 4.0, "c": 2.0, "d": 1.0, "e": 1.0})


def test_unlearning_a_document_never_learned_leaves_a_model_that_predicts_saves_and_loads(tmp_path):
    model = LogisticRegression(0.3, idf_power=1.5)
    model.learn_one({"a": 1, "b": 1}, "s")
    for _ in range(9):
        model.learn_one({"a": 1}, "h")
    for _ in range(8):  # accepted (class h holds the weight), though never learned: D_a stays above N
        model.unlearn_one({"b": 1}, "h")
    assert all(math.isfinite(p) for p in model.predict_proba_one({"a": 1, "b": 1}).values())
    model.learn_one({"a": 1, "b": 1}, "h")
    model.save(tmp_path / "m.snb")
    loaded = streamnb.load(tmp_path / "m.snb")
    assert loaded.predict_log_proba_one({"a": 1}) == model.predict_log_proba_one({"a": 1})


def test_the_idf_counts_by_sample_weight_and_unlearning_part_of_a_weight_takes_out_that_part():
    model = LogisticRegression(0.3)
    model.learn_one({"a": 1, "b": 1}, "s", 2.0)
    model.learn_one({"a": 1}, "h")
    state, arrays = model._state()
    assert state["idf_docs"] == 3.0 and list(arrays["lr_doc_freq"]) == [3.0, 2.0]
    model.unlearn_one({"a": 1, "b": 1}, "s", 0.5)
    model.unlearn_one({"a": 1, "b": 1}, "s", 0.5)
    state, arrays = model._state()
    assert state["idf_docs"] == 2.0 and list(arrays["lr_doc_freq"]) == [2.0, 1.0]


def test_features_only_counted_are_not_listed_as_weighted():
    for n_buckets, known in ((None, 2), (64, 0)):  # |V|, or buckets with a weight
        model = LogisticRegression(0.3, n_buckets=n_buckets)
        model.learn_one({"a": 1, "b": 1}, "only class")  # one class: counted, no weight yet
        assert model.top_features() == {"only class": []} and model.n_features == known


def test_bad_input_changes_nothing():
    model = LogisticRegression(0.1)
    for x, y in [({"a": 1.0}, "x"), ({"b": 1.0}, "y")]:
        model.learn_one(x, y)
    before = (model.predict_log_proba_one({"a": 1.0, "b": 1.0}), model.class_counts, model.n_learned)
    bad = [
        (lambda: model.learn_one({"a": float("nan")}, "x"), InvalidInputError, "finite"),
        (lambda: model.learn_one({"a": "1"}, "x"), InvalidTypeError, "numbers"),
        (lambda: model.learn_one("text", "x"), InvalidTypeError, "no tokenizer"),
        (lambda: model.learn_one({"a": 1.0}, "x", 0.0), InvalidInputError, "sample weight"),
        (lambda: model.learn_one({"a": 1.0}, None), Exception, "label"),
        (lambda: model.learn_many([{"a": 1.0}, {"a": float("inf")}], ["x", "new"]), InvalidInputError, "finite"),
        (lambda: model.learn_many([{"a": 1.0}], ["x", "y"]), InvalidInputError, "labels"),
        (lambda: model.unlearn_one({"a": 1.0}, "never"), UnknownClassError, "never learned"),
    ]
    for call, error, words in bad:
        with pytest.raises(error, match=words):
            call()
        assert (model.predict_log_proba_one({"a": 1.0, "b": 1.0}), model.class_counts, model.n_learned) == before
    assert model.classes == ["x", "y"]


@pytest.mark.parametrize("kwargs, words", [
    (dict(learning_rate=0), "learning_rate must be a finite number > 0"),
    (dict(learning_rate=float("inf")), "learning_rate"),
    (dict(schedule="adam"), "schedule must be one of"),
    (dict(l2=-1), "l2 must be a finite number >= 0"),
    (dict(learning_rate=1.0, l2=1.0), "learning_rate \\* l2 < 1"),
    (dict(margin=-0.5), "margin"),
    (dict(class_weight="heavy"), "class_weight"),
    (dict(class_weight={"a": 0}), "class_weight\\['a'\\]"),
    (dict(passes=0), "passes"),
    (dict(n_buckets=2**32), "n_buckets"),
    (dict(tokenizer=3), "tokenizer must be callable"),
])
def test_bad_parameters_are_named(kwargs, words):
    with pytest.raises((InvalidParameterError, InvalidTypeError), match=words):
        LogisticRegression(**kwargs)


def test_unlearning_right_after_learning_restores_the_scores_closely():
    """The reverse step is not an exact inverse; right after the learn, the scores of the
    document come back to within the square of how far the learn moved them."""
    model = LogisticRegression(0.05)
    for x, y, w in stream(200, seed=5):
        model.learn_one(x, y, w)
    x = {"w3": 1.0, "w8": 0.5, "w17": -1.0}
    before = model.predict_log_proba_one(x)
    model.learn_one(x, "b")
    moved = max(abs(model.predict_log_proba_one(x)[c] - before[c]) for c in before)
    model.unlearn_one(x, "b")
    left = max(abs(model.predict_log_proba_one(x)[c] - before[c]) for c in before)
    assert moved > 1e-3
    assert left <= moved**2, (left, moved)


UNDO_SETTINGS = [
    dict(learning_rate=0.5),  # AdaGrad on sublinear, IDF-weighted, normalised documents
    dict(learning_rate=0.5, schedule="constant"),
    dict(learning_rate=0.3, idf_power=0.0, sublinear_tf=False, normalize=False),
    dict(learning_rate=0.3, schedule="constant", idf_power=0.0, l2=0.05),
    dict(learning_rate=0.3, l2=0.05, margin=0.5, class_weight="balanced"),
    dict(learning_rate=0.3, schedule="constant", idf_power=1.0, margin=1.0, class_weight={"b": 3.0}),
]


def max_change(model, probes, before):
    return max(abs(model.predict_log_proba_one(x)[c] - b[c]) for x, b in zip(probes, before) for c in b)


@pytest.mark.parametrize("settings", UNDO_SETTINGS)
def test_with_a_ledger_unlearning_right_after_learning_gives_every_score_back(settings):
    """The kept step is undone exactly: every probe's every log-probability back to 1e-9,
    for lessons of every class and weight (new features, margin skips and decay among them)."""
    model = LogisticRegression(**settings, ledger=1000)
    docs = stream(300, seed=11)
    for x, y, w in docs[:250]:
        model.learn_one(x, y, w)
    probes = [x for x, _, _ in docs[250:]] + [{"w1": 1.0, "never seen": 2.0}]
    before = [model.predict_log_proba_one(x) for x in probes]
    moved = []
    for x, y, w in docs[250:280]:
        model.learn_one(x, y, w)
        moved.append(max_change(model, probes, before))
        model.unlearn_one(x, y)  # the ledger holds the weight it was learned with
        assert max_change(model, probes, before) <= 1e-9
    assert max(moved) > 0.05  # the lessons did move the scores
    assert model.class_counts == pytest.approx({"a": sum(w for _, y, w in docs[:250] if y == "a"),
                                                "b": sum(w for _, y, w in docs[:250] if y == "b"),
                                                "c": sum(w for _, y, w in docs[:250] if y == "c")}, abs=1e-9)


def test_without_a_ledger_the_reverse_step_is_not_exact_and_the_ledger_is():
    """What issue 34 found: the reverse step is taken where the lesson's loss is already small."""
    docs = stream(260, seed=3)
    plain, kept = LogisticRegression(0.5), LogisticRegression(0.5, ledger=10)
    for x, y, w in docs[:250]:
        plain.learn_one(x, y, w)
        kept.learn_one(x, y, w)
    probes = [x for x, _, _ in docs[250:]]
    before = [plain.predict_log_proba_one(x) for x in probes]
    lesson = docs[250]
    for model in (plain, kept):
        model.learn_one(lesson[0], "a")
        model.unlearn_one(lesson[0], "a")
    assert max_change(plain, probes, before) > 1e-3
    assert max_change(kept, probes, before) <= 1e-9


def test_a_ledger_learns_a_message_once_and_moves_it_exactly():
    docs = stream(120, seed=4)
    model, never = LogisticRegression(0.5, ledger=100), LogisticRegression(0.5, ledger=100)
    for x, y, w in docs[:100]:
        model.learn_one(x, y, w)
        never.learn_one(x, y, w)
    x = {"w2": 1.5, "w30": -0.5, "fresh": 1.0}
    model.learn_one(x, "a")
    state = model._state()
    model.learn_one(x, "a", 2.0)  # held under the same label: a no-op
    assert pickle.dumps(model._state()) == pickle.dumps(state)
    model.learn_one(x, "c")  # moved: the step as "a" undone, the step as "c" taken
    never.learn_one(x, "c")
    probes = [x for x, _, _ in docs[100:]] + [x]
    assert max_change(model, probes, [never.predict_log_proba_one(p) for p in probes]) <= 1e-9
    before = model.predict_log_proba_one(x)
    with pytest.raises(InvalidInputError, match="learned as 'c', not as 'a'"):
        model.unlearn_one(x, "a")
    assert model.predict_log_proba_one(x) == before


def test_a_ledger_learns_a_batch_row_by_row_and_refuses_several_passes():
    docs = stream(60, seed=6)
    batch, one = LogisticRegression(0.5, ledger=100), LogisticRegression(0.5, ledger=100)
    batch.learn_many([x for x, _, _ in docs] + [docs[0][0]], [y for _, y, _ in docs] + [docs[0][1]],
                     [w for _, _, w in docs] + [5.0])  # the last row repeats the first: skipped
    for x, y, w in docs:
        one.learn_one(x, y, w)
    assert batch.predict_log_proba_one(docs[1][0]) == one.predict_log_proba_one(docs[1][0])
    assert batch.class_counts == one.class_counts
    before = batch.class_counts
    with pytest.raises(InvalidInputError, match="finite"):
        batch.learn_many([{"new": 1.0}, {"a": float("nan")}], ["a", "a"])
    assert batch.class_counts == before
    with pytest.raises(InvalidParameterError, match="passes must be 1 with ledger=10"):
        LogisticRegression(ledger=10, passes=2)


def test_a_step_the_model_could_not_have_taken_is_refused_and_changes_nothing():
    model = LogisticRegression(0.5, l2=0.1)
    for x, y, w in stream(40, seed=8, classes=("a", "b")):
        model.learn_one(x, y, w)
    before = model.predict_log_proba_one({"w1": 1.0})
    decay = model._core.decay
    assert decay == 1.0 - 0.5 * 0.1
    for g, step_decay, words in [([0.1, 0.2], decay, "at most 1 finite numbers"), ([float("nan")], decay, "finite"),
                                 ([0.1], 1.0, "decay must be this model's")]:
        with pytest.raises(InvalidInputError, match=words):
            model._core.undo_one({"w1": 1.0}, "a", 1.0, g, step_decay)
        assert model.predict_log_proba_one({"w1": 1.0}) == before


def test_the_kept_steps_are_saved_and_loaded(tmp_path):
    model = LogisticRegression(0.5, l2=0.01, ledger=50, tokenizer=Tokenizer())
    texts = [("cheap pills now", "spam"), ("the meeting agenda", "ham"), ("cheap meeting", "ham"),
             ("pills pills", "spam")] * 3 + [("a third class", "other")]
    for i, (text, label) in enumerate(texts):
        model.learn_one(f"{text} {i}", label)
    model.save(tmp_path / "m.snb")
    loaded = streamnb.load(tmp_path / "m.snb")
    assert loaded._steps == model._steps and len(loaded._steps) == len(texts)
    probes = ["cheap agenda", "pills class"]
    before = [loaded.predict_log_proba_one(p) for p in probes]
    model.unlearn_one("the meeting agenda 1", "ham")  # a step kept from before the save: a class came since
    loaded.unlearn_one("the meeting agenda 1", "ham")
    assert [loaded.predict_log_proba_one(p) for p in probes] == [model.predict_log_proba_one(p) for p in probes]
    loaded.learn_one("new lesson words", "spam")
    loaded.unlearn_one("new lesson words", "spam")
    assert max_change(loaded, probes, [model.predict_log_proba_one(p) for p in probes]) <= 1e-9
    assert before != [loaded.predict_log_proba_one(p) for p in probes]


@pytest.mark.parametrize("change, words", [
    (lambda arrays: arrays.pop("ledger_g"), "step record arrays missing: \\['ledger_g'\\]"),
    (lambda arrays: arrays.update(ledger_class=arrays["ledger_class"] + 7), "classes out of range"),
    (lambda arrays: arrays.update(ledger_weight=-arrays["ledger_weight"]), "weights must be finite and > 0"),
    (lambda arrays: arrays.update(ledger_g=arrays["ledger_g"] + np.inf), "must be finite"),
    (lambda arrays: arrays.update(ledger_g=arrays["ledger_g"][:, :0]), "has shape \\(3, 0\\), not \\(3, 1\\)"),
    (lambda arrays: arrays.update(ledger_decay=arrays["ledger_decay"] * 0.5), "decays must be this model's"),
    (lambda arrays: arrays.update(ledger_class=arrays["ledger_class"].astype(np.float64)), "is <f8, not <i8"),
    (lambda arrays: arrays.update(ledger_fingerprint=arrays["ledger_fingerprint"][:-1]), "16 bytes per record"),
    (lambda arrays: arrays.update(ledger_fingerprint=np.tile(arrays["ledger_fingerprint"][:16], 3)), "duplicate"),
])
def test_bad_kept_steps_are_refused_with_one_line(change, words):
    model = LogisticRegression(0.5, ledger=5)
    for x, label in [({"a": 1, "b": 2}, "x"), ({"b": 1, "c": 1}, "y"), ({"c": 2}, "y")]:
        model.learn_one(x, label)
    state, arrays = model._state()
    arrays = dict(arrays)
    change(arrays)
    with pytest.raises(streamnb.errors.ModelFormatError, match=words) as raised:
        LogisticRegression._from_state(state, arrays)
    assert "\n" not in str(raised.value)
    state["params"] = {**state["params"], "ledger": 2}
    with pytest.raises(streamnb.errors.ModelFormatError, match="3 lessons. and 0 observations. step records exceed the bound 2 each"):
        LogisticRegression._from_state(state, dict(model._state()[1]))
    state["params"] = {**state["params"], "ledger": None}
    with pytest.raises(streamnb.errors.ModelFormatError, match="ledger arrays in a model without a ledger"):
        LogisticRegression._from_state(state, dict(model._state()[1]))


def test_a_file_from_before_kept_steps_loads_and_unlearns_by_the_reverse_step():
    """tests/data/format-v5 (written by format 5's code): it scores as it did; a message it
    learned takes the reverse step; one learned since is undone exactly."""
    import json
    import pathlib

    folder = pathlib.Path(__file__).parents[1] / "data" / "format-v5"
    model = streamnb.load(folder / "logistic.snb")
    assert model.ledger is None
    for case in json.loads((folder / "expected.json").read_text())["log_proba"]["logistic"]:
        probe = streamnb.persist.decode_value(case["probe"])
        assert model.predict_log_proba_one(probe) == streamnb.persist.decode_value(case["log_proba"])
    reverse = pickle.loads(pickle.dumps(model))
    model.unlearn_one("cheap pills now", "spam")
    reverse._core.unlearn_one("cheap pills now", "spam", 1.0)  # the reverse step itself
    assert model.class_counts == {"ham": 2.0}
    assert model.predict_log_proba_one("cheap noon") == reverse.predict_log_proba_one("cheap noon")


def test_merge_mixes_the_weights_by_documents_learned():
    docs = stream(200, seed=7, classes=("a", "b"))
    first, second = LogisticRegression(0.1, schedule="constant"), LogisticRegression(0.1, schedule="constant")
    for x, y, _ in docs[:150]:
        first.learn_one(x, y)
    for x, y, _ in docs[150:]:
        second.learn_one(x, y)
    a, b = first.log_linear(), second.log_linear()
    features = sorted(set(a.features) | set(b.features))

    def table(view):
        rows = dict(zip(view.features, view.weights[:, 1] - view.weights[:, 0]))
        return np.array([rows.get(f, 0.0) for f in features])

    expected = (150 * table(a) + 50 * table(b)) / 200
    first.merge(second)
    assert np.allclose(table(first.log_linear()), expected, atol=1e-12, rtol=0)
    assert first.class_counts == {"a": pytest.approx(sum(1 for d in docs if d[1] == "a")),
                                  "b": pytest.approx(sum(1 for d in docs if d[1] == "b"))}
    with pytest.raises(IncompatibleModelsError, match="learning_rate"):
        first.merge(LogisticRegression(0.2, schedule="constant"))


def test_top_features_and_the_log_linear_view():
    model = LogisticRegression(0.2)
    for _ in range(20):
        model.learn_one({"cheap": 1.0, "pills": 1.0}, "spam")
        model.learn_one({"meeting": 1.0, "noon": 1.0}, "ham")
    top = model.top_features(2)
    assert {f for f, _ in top["spam"]} == {"cheap", "pills"}
    assert {f for f, _ in top["ham"]} == {"meeting", "noon"}
    view = model.log_linear()
    assert np.allclose(view.weights.sum(axis=1), 0.0)  # centred over the classes
    assert model.n_features == 4 and model.nbytes > 0
