"""MultinomialNB(mu=...): Dirichlet-prior smoothing toward the pooled distribution.

    P(w|c) = (T_cw + mu * P(w)) / (T_c + mu),   P(w) = (T_w + alpha) / (T + alpha * |V|)

The reference values below are computed from that formula with plain Python/NumPy on
counts tallied by hand, never from the model's store.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

import streamnb
from streamnb import MultinomialNB
from streamnb.errors import IncompatibleModelsError, InvalidParameterError, ModelFormatError
from streamnb.models import Forgetting, Smoothing, Storage
from tests.state import snapshot, spam_ham_stream

STREAM = [
    ({"cheap": 2, "pills": 1, "now": 1}, "spam"),
    ({"meeting": 1, "noon": 1, "now": 1}, "ham"),
    ({"cheap": 1, "offer": 3}, "spam"),
    ({"lunch": 2, "meeting": 1}, "ham"),
    ({"pills": 2, "offer": 1, "now": 1}, "spam"),
]
# "pills" and "offer" are spam only, "lunch" and "noon" ham only, "zzz" never learned.
QUERY = {"cheap": 1, "lunch": 1, "now": 2, "zzz": 3}


def reference_log_prob(stream, alpha, mu, weights=None):
    """log P(w|c) for every word of the stream and for an unseen word, per class, by hand."""
    weights = weights or [1.0] * len(stream)
    counts: dict[str, Counter] = {}
    for (doc, label), weight in zip(stream, weights):
        for word, value in doc.items():
            counts.setdefault(label, Counter())[word] += weight * value
    labels = list(dict.fromkeys(label for _, label in stream))
    vocabulary = sorted({w for doc, _ in stream for w in doc})
    t_c = {c: sum(counts[c].values()) for c in labels}
    total = sum(t_c.values())
    pooled = total + alpha * len(vocabulary)
    log_prob = {}
    for c in labels:
        for w in vocabulary + ["<unseen>"]:
            t_w = sum(counts[k][w] for k in labels)
            p_w = (t_w + alpha) / pooled
            numerator = counts[c][w] + mu * p_w
            log_prob[c, w] = math.log(numerator / (t_c[c] + mu)) if numerator > 0 else -math.inf
    return labels, vocabulary, log_prob


def reference_log_posterior(stream, query, alpha, mu, unseen, weights=None, prior=None):
    labels, vocabulary, log_prob = reference_log_prob(stream, alpha, mu, weights)
    weights = weights or [1.0] * len(stream)
    if prior is None:
        docs = Counter()
        for (_, label), weight in zip(stream, weights):
            docs[label] += weight
        prior = {c: docs[c] / sum(docs.values()) for c in labels}
    jll = {}
    for c in labels:
        score = math.log(prior[c])
        for word, value in query.items():
            if word in vocabulary:
                score += value * log_prob[c, word]
            elif unseen == "score":
                score += value * log_prob[c, "<unseen>"]
        jll[c] = score
    top = max(jll.values())
    norm = top + math.log(sum(math.exp(v - top) for v in jll.values()))
    return {c: v - norm for c, v in jll.items()}


def trained(stream=STREAM, **params):
    model = MultinomialNB(**params)
    for doc, label in stream:
        model.learn_one(doc, label)
    return model


def assert_close(got: dict, expected: dict, tol: float = 1e-9) -> None:
    assert got.keys() == expected.keys()
    for key in expected:
        assert abs(got[key] - expected[key]) <= tol, (key, got[key], expected[key])


@pytest.mark.parametrize("alpha, mu", [(1.0, 10.0), (0.03, 300.0), (0.5, 0.25)])
@pytest.mark.parametrize("unseen", ["ignore", "score"])
def test_log_probabilities_equal_the_formula(alpha, mu, unseen):
    model = trained(alpha=alpha, mu=mu, smoothing=Smoothing(unseen=unseen))
    _, vocabulary, log_prob = reference_log_prob(STREAM, alpha, mu)
    features, table = model.feature_log_prob()
    assert sorted(features) == vocabulary
    for i, word in enumerate(features):
        for column, c in enumerate(model.classes):
            assert abs(table[i, column] - log_prob[c, word]) <= 1e-9, (word, c)
    expected = reference_log_posterior(STREAM, QUERY, alpha, mu, unseen)
    assert_close(model.predict_log_proba_one(QUERY), expected)
    # The one-class words really are smoothed toward the pool, not to alpha.
    # T_lunch = 2 (ham only), T = 18, |V| = 7, T_spam = 12
    assert log_prob["spam", "lunch"] == pytest.approx(math.log(mu * (2 + alpha) / (18 + 7 * alpha) / (12 + mu)),
                                                      rel=1e-12)


def test_an_unseen_word_with_unseen_score():
    alpha, mu = 0.1, 20.0
    model = trained(alpha=alpha, mu=mu, smoothing=Smoothing(unseen="score"))
    ignoring = trained(alpha=alpha, mu=mu)
    t_spam, t_ham = 4 + 4 + 4, 3 + 3  # tokens per class; |V| = 7 words
    total = t_spam + t_ham
    unseen = {c: math.log(mu * alpha / (total + alpha * 7) / (t_c + mu)) for c, t_c in (("spam", t_spam), ("ham", t_ham))}
    _, _, log_prob = reference_log_prob(STREAM, alpha, mu)
    assert unseen["spam"] == pytest.approx(log_prob["spam", "<unseen>"], rel=1e-12)
    with_unseen = model.predict_log_proba_one({"zzz": 2, "now": 1})
    without = ignoring.predict_log_proba_one({"zzz": 2, "now": 1})
    assert without == pytest.approx(ignoring.predict_log_proba_one({"now": 1}), abs=1e-12)
    jll = {c: math.log(n / 5) + log_prob[c, "now"] + 2 * unseen[c] for c, n in (("spam", 3), ("ham", 2))}
    norm = math.log(sum(math.exp(v) for v in jll.values()))
    assert_close(with_unseen, {c: v - norm for c, v in jll.items()})
    # contributions_one puts the unseen words in ``rest``; rest + terms is the joint log-likelihood.
    parts = model.contributions_one({"zzz": 2, "now": 1})
    assert parts.features == ["now"]
    for column, c in enumerate(parts.classes):
        assert parts.rest[column] == pytest.approx(math.log({"spam": 3, "ham": 2}[c] / 5) + 2 * unseen[c], rel=1e-12)
        assert parts.terms[0, column] == pytest.approx(log_prob[c, "now"], rel=1e-12)


def test_mu_none_is_exactly_the_additive_model():
    query = {"cheap": 1, "lunch": 1, "now": 2}
    for unseen in ("ignore", "score"):
        default = trained(alpha=0.5, smoothing=Smoothing(unseen=unseen))
        explicit = trained(alpha=0.5, mu=None, smoothing=Smoothing(unseen=unseen))
        assert explicit.mu is None and explicit.get_params()["mu"] is None
        assert explicit.predict_log_proba_one(QUERY) == default.predict_log_proba_one(QUERY)
        # the additive formula by hand: log(T_cw + alpha) - log(T_c + alpha |V|), |V| = 7
        t_c, counts = {"spam": 12.0, "ham": 6.0}, {"spam": {"cheap": 3, "now": 2}, "ham": {"lunch": 2, "now": 1}}
        jll = {}
        for c in ("spam", "ham"):
            jll[c] = math.log({"spam": 3, "ham": 2}[c] / 5) + sum(
                v * (math.log(counts[c].get(w, 0) + 0.5) - math.log(t_c[c] + 0.5 * 7)) for w, v in query.items())
            if unseen == "score":
                jll[c] += 3 * (math.log(0.5) - math.log(t_c[c] + 0.5 * 7))
        norm = math.log(sum(math.exp(v) for v in jll.values()))
        assert_close(explicit.predict_log_proba_one(QUERY), {c: v - norm for c, v in jll.items()}, 1e-12)
    assert repr(default) == repr(explicit) and "mu" not in repr(default)


def test_mu_changes_scores_and_a_large_mu_tends_to_the_pooled_distribution():
    additive = trained(alpha=0.5)
    dirichlet = trained(alpha=0.5, mu=5.0)
    assert dirichlet.predict_log_proba_one(QUERY) != pytest.approx(additive.predict_log_proba_one(QUERY))
    # mu -> inf: every class's P(w|c) -> P(w), so the posterior -> the class prior.
    huge = trained(alpha=0.5, mu=1e12)
    assert huge.predict_proba_one(QUERY) == pytest.approx({"spam": 0.6, "ham": 0.4}, abs=1e-9)
    # the class conditionals sum to 1 over V, as generate needs
    _, table = dirichlet.feature_log_prob()
    assert np.exp(table).sum(axis=0) == pytest.approx([1.0, 1.0], abs=1e-12)


def test_log_linear_view_and_generate_follow_the_formula():
    model = trained(alpha=0.03, mu=30.0, class_prior="uniform")
    view = model.log_linear()
    index = {w: i for i, w in enumerate(view.features)}
    query = {"cheap": 1, "lunch": 1, "now": 2}
    scores = view.bias + sum(v * view.weights[index[w]] for w, v in query.items())
    expected = scores - np.logaddexp.reduce(scores)
    assert_close(model.predict_log_proba_one(query), dict(zip(view.classes, expected)), 1e-12)
    top = model.top_features(1)
    _, vocabulary, log_prob = reference_log_prob(STREAM, 0.03, 30.0)
    assert top["ham"][0][1] == pytest.approx(max(log_prob["ham", w] for w in vocabulary), rel=1e-12)
    # mu = 30 >> T_ham = 6: ham's P(w|c) is mostly the pool, where "offer" (4 spam tokens)
    # outweighs "meeting" (2 ham tokens): (0 + 30 * 4.03/18.21) / 36 > (2 + 30 * 2.03/18.21) / 36.
    assert top["ham"][0][0] == "offer"
    bag = model.generate("ham", 20000, seed=1)
    share = bag.get("lunch", 0) / 20000
    assert share == pytest.approx(math.exp(log_prob["ham", "lunch"]), abs=0.01)
    assert bag.keys() >= {"pills", "offer"}  # spam-only words keep mass mu*P(w)/(T_ham + mu) in ham


def test_learn_then_unlearn_restores_predictions():
    model = trained(alpha=0.03, mu=30.0, smoothing=Smoothing(unseen="score"))
    before, state = model.predict_log_proba_one(QUERY), snapshot(model)
    extra = {"cheap": 1, "brand-new": 4, "lunch": 1}
    model.learn_one(extra, "ham")
    assert model.predict_log_proba_one(QUERY) != pytest.approx(before)
    model.unlearn_one(extra, "ham")
    assert snapshot(model) == state
    assert_close(model.predict_log_proba_one(QUERY), before, 1e-12)


def test_merge_equals_sequential_learning_and_needs_the_same_mu():
    stream = spam_ham_stream(120, seed=3, spam_words=["cheap", "pills", "offer", "win"],
                             ham_words=["meeting", "lunch", "notes", "report"],
                             shared=["the", "now", "today", "you"], n_shared=3)
    sequential = trained(stream, alpha=0.1, mu=40.0, smoothing=Smoothing(unseen="score"))
    params = {"alpha": 0.1, "mu": 40.0, "smoothing": Smoothing(unseen="score")}
    left, right = trained(stream[:70], **params), trained(stream[70:], **params)
    merged = left.merge(right)
    for doc, _ in stream[:10] + [(QUERY, None)]:
        assert_close(merged.predict_log_proba_one(doc), sequential.predict_log_proba_one(doc))
    other = trained(stream[70:], alpha=0.1, mu=50.0, smoothing=Smoothing(unseen="score"))
    state = snapshot(merged)
    with pytest.raises(IncompatibleModelsError, match="mu differ: 40.0 vs 50.0"):
        merged.merge(other)
    with pytest.raises(IncompatibleModelsError, match="mu differ: 40.0 vs None"):
        merged.merge(trained(stream[70:], alpha=0.1, smoothing=Smoothing(unseen="score")))
    assert snapshot(merged) == state


def test_save_and_load_round_trip(tmp_path):
    model = trained(alpha=0.03, mu=300.0, smoothing=Smoothing(unseen="score"), class_prior="uniform")
    path = tmp_path / "dirichlet.snb"
    model.save(path)
    loaded = streamnb.load(path)
    assert loaded.mu == 300.0 and loaded.get_params() == model.get_params()
    assert loaded.predict_log_proba_one(QUERY) == model.predict_log_proba_one(QUERY)
    for m in (model, loaded):
        m.learn_one({"zzz": 1, "cheap": 1}, "spam")
    assert loaded.predict_log_proba_one(QUERY) == model.predict_log_proba_one(QUERY)
    # an old file (written before mu existed) has no "mu" param and loads as the additive model
    additive = trained(alpha=0.5)
    additive.save(tmp_path / "additive.snb")
    assert streamnb.load(tmp_path / "additive.snb").mu is None


def test_a_file_with_a_bad_mu_is_refused(tmp_path, monkeypatch):
    model = trained(alpha=0.5, mu=10.0)
    monkeypatch.setattr(model, "mu", -1.0)  # as if the file had been edited
    model.save(tmp_path / "bad.snb")
    with pytest.raises(ModelFormatError, match="mu must be a finite number > 0"):
        streamnb.load(tmp_path / "bad.snb")


def test_forgetting_equals_the_formula_on_decayed_counts():
    half_life = 1.5
    model = trained(alpha=0.2, mu=8.0, smoothing=Smoothing(unseen="score"), forgetting=Forgetting(half_life=half_life))
    assert model.store.scale != 1.0  # the counts are stored divided by the global scale
    n = len(STREAM)
    weights = [2.0 ** (-(n - 1 - i) / half_life) for i in range(n)]  # the last document weighs 1
    expected = reference_log_posterior(STREAM, QUERY, 0.2, 8.0, "score", weights=weights)
    assert_close(model.predict_log_proba_one(QUERY), expected)
    _, vocabulary, log_prob = reference_log_prob(STREAM, 0.2, 8.0, weights)
    features, table = model.feature_log_prob()
    for i, word in enumerate(features):
        for column, c in enumerate(model.classes):
            assert abs(table[i, column] - log_prob[c, word]) <= 1e-9


def test_the_store_layout_does_not_matter():
    dense = trained(alpha=0.1, mu=25.0, smoothing=Smoothing(unseen="score"))
    hashed = trained(alpha=0.1, mu=25.0, smoothing=Smoothing(unseen="score"), storage=Storage(dense_max_classes=1))
    assert_close(hashed.predict_log_proba_one(QUERY), dense.predict_log_proba_one(QUERY), 1e-12)


def test_with_alpha_keeps_mu():
    model = trained(alpha=1.0, mu=30.0)
    view = model.with_alpha(0.05)
    assert view.mu == 30.0
    assert_close(view.predict_log_proba_one(QUERY), trained(alpha=0.05, mu=30.0).predict_log_proba_one(QUERY), 1e-12)
    assert_close(model.predict_log_proba_one(QUERY), trained(alpha=1.0, mu=30.0).predict_log_proba_one(QUERY), 1e-12)


def test_alpha_zero_with_mu_uses_the_maximum_likelihood_pool():
    model = trained(alpha=0, smoothing=Smoothing(allow_zero_alpha=True), mu=10.0)
    expected = reference_log_posterior(STREAM, {"cheap": 1, "lunch": 1}, 0.0, 10.0, "ignore")
    assert_close(model.predict_log_proba_one({"cheap": 1, "lunch": 1}), expected)


def test_empty_documents_only():
    model = MultinomialNB(mu=10.0, smoothing=Smoothing(unseen="score"), empty_documents="learn")
    model.learn_one({}, "a").learn_one({}, "b")
    with np.errstate(all="raise"):
        assert model.predict_log_proba_one({"zzz": 1}) == pytest.approx({"a": math.log(0.5), "b": math.log(0.5)})


@pytest.mark.parametrize("mu", [0, -1.0, float("nan"), float("inf"), "300", True, [300]])
def test_bad_mu_raises_and_changes_nothing(mu):
    with pytest.raises(InvalidParameterError, match=r"mu must be a finite number > 0 or None, got"):
        MultinomialNB(mu=mu)
    with pytest.raises(InvalidParameterError, match="mu"):
        MultinomialNB(0.5, mu=mu, class_prior="uniform", forgetting=Forgetting(half_life=10))


def test_river_adapter_passes_mu_through():
    snr = pytest.importorskip("streamnb.integrations.river")
    model = snr.MultinomialNB(alpha=0.03, mu=300.0)
    assert model.mu == 300.0 and model.model.mu == 300.0
    assert model.clone().model.mu == 300.0
    for doc, label in STREAM:
        model.learn_one(doc, label)
    assert_close(model.predict_proba_one(QUERY), trained(alpha=0.03, mu=300.0,
                                                         empty_documents="learn").predict_proba_one(QUERY), 1e-12)
