"""The core driven by random operation sequences, checked against batch references (issue 13).

A hypothesis state machine builds one model (MultinomialNB with and without ``mu``,
BernoulliNB, ComplementNB with and without ``norm``; dense or sparse rows; an exact or a
hashed vocabulary; with or without ``half_life`` forgetting and pruning policies; mappings
or raw text through the core's tokenizer) and applies random operations to it: learn_one,
learn_many, unlearn_one, unlearn_many, merge with a model trained on another part of the
stream (or with itself), prune, select_features, a save/load round trip and pickling.

Beside the model the machine keeps the documents it currently holds: each one's features
(minus those a pruning pass dropped since), label, weight and stamp. After every step every
probe's log P(c|x) must equal a scikit-learn batch fit on those documents, weighted by
w * 2 ** (-age / half_life), over the model's vocabulary, to 1e-9; where scikit-learn cannot
express the model (Dirichlet ``mu``, an empty vocabulary) a numpy reference computed here
from the documents stands in (itself checked against scikit-learn below). The vocabulary,
the class counts and the clock are compared as well.

``STREAMNB_FUZZ_EXAMPLES=N`` runs N sequences instead of the CI's few.
"""

from __future__ import annotations

import atexit
import copy
import math
import os
import pickle
import sys
import tempfile
import zlib
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from scipy.special import logsumexp
from sklearn.naive_bayes import BernoulliNB as SkBernoulliNB
from sklearn.naive_bayes import ComplementNB as SkComplementNB
from sklearn.naive_bayes import MultinomialNB as SkMultinomialNB

import streamnb
from streamnb import BernoulliNB, ComplementNB, MultinomialNB, Tokenizer
from streamnb.errors import InvalidInputError, UnknownClassError
from streamnb.models import Forgetting, Pruning, Storage
from tests.retrain_support import snapshot

FUZZ_EXAMPLES = int(os.environ.get("STREAMNB_FUZZ_EXAMPLES", "0"))
TALLY: Counter = Counter()  # rules run and reference checks made, printed after a long run


@atexit.register
def _report() -> None:
    if FUZZ_EXAMPLES and TALLY:
        print(f"\nstate machine: {dict(sorted(TALLY.items()))}", file=sys.stderr)
TOL = 1e-9

# Mapping features: plain words, non-ASCII, a lone surrogate, and non-str keys.
MAP_TOKENS = [f"w{i}" for i in range(9)] + ["na\u00efve", "\u65e5\u672c", "x\ud800", 7, ("t", 1)]
# Text features: what the core's word tokenizer gives back (lowercase runs of 2+ word characters).
TEXT_TOKENS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "na\u00efve", "\u65e5\u672c\u8a9e"]
LABELS = ["spam", "ham", "eggs", 3, "x5"]  # five classes: past dense_max_classes=4 mid-stream
WEIGHTS = [0.25, 0.5, 1.0, 2.0, 0.3, 1.7]
VALUES = [1, 2, 3, 0.5, 1.25]

KINDS = {
    "multinomial": (MultinomialNB, {}),
    "mu": (MultinomialNB, {"mu": 4.0}),
    "bernoulli": (BernoulliNB, {}),
    "complement": (ComplementNB, {}),
    "complement-norm": (ComplementNB, {"norm": True}),
}

configs = st.fixed_dictionaries({
    "kind": st.sampled_from(sorted(KINDS)),
    "alpha": st.sampled_from([1.0, 0.5, 0.03]),
    "dense_max_classes": st.sampled_from([4, 1]),
    "n_buckets": st.sampled_from([None, None, 8, 64]),
    "half_life": st.sampled_from([None, None, 3.0, 20.0]),
    "pruning": st.sampled_from([Pruning(), Pruning(), Pruning(max_features=5), Pruning(min_count=1.5),
                                Pruning(expire_after=6)]),
    "text": st.booleans(),
})
map_docs = st.dictionaries(st.sampled_from(MAP_TOKENS), st.sampled_from(VALUES), min_size=1, max_size=5)
text_docs = st.dictionaries(st.sampled_from(TEXT_TOKENS), st.integers(1, 3), min_size=1, max_size=5)
labels = st.sampled_from(LABELS)
weights = st.sampled_from(WEIGHTS)


def bucket_name(token, n_buckets: int) -> str:
    """The feature a hashed model makes of a token: CRC-32 of str(token) modulo the buckets."""
    return f"#{zlib.crc32(str(token).encode('utf-8', 'surrogatepass')) % n_buckets}"


class Entry:
    """A document the model holds: the features it still contributes, and how it was learned."""

    def __init__(self, raw, features: dict, label, weight: float, stamp: int) -> None:
        self.raw, self.features, self.label, self.weight, self.stamp = raw, features, label, weight, stamp


class Tracked:
    """A model and the documents it holds (the reference's data)."""

    def __init__(self, config: dict, dense_max_classes: int | None = None) -> None:
        self.config = config
        model_type, extra = KINDS[config["kind"]]
        storage = Storage(n_buckets=config["n_buckets"],
                          dense_max_classes=dense_max_classes or config["dense_max_classes"])
        params = dict(alpha=config["alpha"], storage=storage, forgetting=Forgetting(half_life=config["half_life"]),
                      pruning=config["pruning"], **extra)
        if config["text"]:
            params["tokenizer"] = Tokenizer()
        self.model = model_type(**params)
        self.entries: list[Entry] = []
        self.n = 0  # the document clock as the reference counts it

    # -- documents --------------------------------------------------------------------------
    def raw(self, doc: dict):
        """What is given to the model: the mapping, or text the tokenizer turns into it."""
        if self.config["text"]:
            return " ".join(" ".join([token.upper() if i % 2 else token] * count)
                            for i, (token, count) in enumerate(doc.items()))
        return dict(doc)

    def features(self, doc: dict) -> dict:
        """The features and values the model makes of a document (hashed: buckets, summed)."""
        n_buckets = self.config["n_buckets"]
        if n_buckets is None:
            return dict(doc)
        out: Counter = Counter()
        for token, value in doc.items():
            out[bucket_name(token, n_buckets)] += value
        return dict(out)

    def vocabulary(self) -> set:
        """The model's features (hashed models: bucket names '#k')."""
        store = self.model.store
        return set(store.vocabulary.tokens(store.feature_ids()))

    def expected_vocabulary(self) -> set:
        return {f for e in self.entries for f in e.features}

    def weight_now(self, entry: Entry) -> float:
        half_life = self.config["half_life"]
        if half_life is None:
            return entry.weight
        return entry.weight * 2.0 ** (-(self.n - entry.stamp) / half_life)

    # -- operations (each updates the reference, then records what pruning dropped) ----------
    def apply(self, operation, new_entries: list[Entry], extra_features: set = frozenset()) -> None:
        before = self.vocabulary() | set(extra_features) | {f for e in new_entries for f in e.features}
        operation()
        self.entries.extend(new_entries)
        dropped = before - self.vocabulary()
        if dropped:
            for entry in self.entries:
                for f in dropped & entry.features.keys():
                    del entry.features[f]

    def learn_one(self, doc: dict, label, weight: float, predict_first: bool = False) -> None:
        x = self.raw(doc)
        if predict_first:  # predict-then-learn tokenizes the text once (the core's cache)
            self.model.predict_log_proba_one(x)
        entry = Entry(x, self.features(doc), label, weight, self.n + 1)
        self.apply(lambda: self.model.learn_one(x, label, weight), [entry])
        self.n += 1

    def learn_many(self, rows: list) -> None:
        xs = [self.raw(doc) for doc, _, _ in rows]
        entries = [Entry(x, self.features(doc), label, weight, self.n + 1 + i)
                   for i, (x, (doc, label, weight)) in enumerate(zip(xs, rows))]
        self.apply(lambda: self.model.learn_many(xs, [y for _, y, _ in rows], [w for _, _, w in rows]), entries)
        self.n += len(rows)

    def doc_of(self, entry: Entry) -> dict:
        return Counter(Tokenizer()(entry.raw)) if isinstance(entry.raw, str) else entry.raw

    def has_dropped_features(self) -> bool:
        """The model has pruned, or merged a model that had: unlearning needs stamps."""
        return self.model.store.pruned_at > 0 or bool(self.model._core.merged_arrays())

    def unstamped_is_refused(self, unlearn) -> None:
        """Without stamps, a model that has dropped features refuses, changing nothing."""
        TALLY["unstamped_unlearning_refused"] += 1
        before = snapshot(self.model)
        with pytest.raises(InvalidInputError, match="dropped features.*learned_at="):
            unlearn()
        assert snapshot(self.model) == before

    def unlearn_one(self, index: int, with_stamp: bool) -> None:
        entry = self.entries.pop(index)
        if not (with_stamp or self.config["half_life"] is not None) and self.has_dropped_features():
            self.unstamped_is_refused(lambda: self.model.unlearn_one(entry.raw, entry.label, entry.weight))
            with_stamp = True
        stamp = {"learned_at": entry.stamp} if with_stamp or self.config["half_life"] is not None else {}
        self.model.unlearn_one(entry.raw, entry.label, entry.weight, **stamp)

    def unlearn_many(self, indices: list, with_stamp: bool) -> None:
        chosen = [self.entries[i] for i in indices]
        docs, labels, weights = [e.raw for e in chosen], [e.label for e in chosen], [e.weight for e in chosen]
        if not (with_stamp or self.config["half_life"] is not None) and self.has_dropped_features():
            self.unstamped_is_refused(lambda: self.model.unlearn_many(docs, labels, weights))
            with_stamp = True
        stamps = [e.stamp for e in chosen] if with_stamp or self.config["half_life"] is not None else None
        self.model.unlearn_many(docs, labels, weights, learned_at=stamps)
        self.entries = [e for i, e in enumerate(self.entries) if i not in set(indices)]

    def merge(self, other: "Tracked") -> None:
        n0 = self.n
        moved = [Entry(e.raw, dict(e.features), e.label, e.weight, e.stamp + n0) for e in other.entries]
        theirs = other.vocabulary()
        self.apply(lambda: self.model.merge(other.model), moved, theirs)
        self.n += other.n


def reference_log_proba(tracked: Tracked, probes: list[dict]) -> list[dict]:
    """log P(c|x) of a batch fit on the documents the model holds, over its vocabulary."""
    entries = [e for e in tracked.entries if tracked.weight_now(e) > 0]
    if not entries:
        return [{} for _ in probes]
    vocabulary = sorted(tracked.vocabulary(), key=repr)
    column = {f: j for j, f in enumerate(vocabulary)}

    def matrix(rows: list[dict]) -> np.ndarray:
        out = np.zeros((len(rows), len(vocabulary)))
        for i, row in enumerate(rows):
            for f, v in row.items():
                if f in column:
                    out[i, column[f]] += v
        return out

    X = matrix([e.features for e in entries])
    Xq = matrix([tracked.features(p) for p in probes])
    names = {repr(e.label): e.label for e in entries}
    y = np.array([repr(e.label) for e in entries], dtype=object)
    sample_weight = np.array([tracked.weight_now(e) for e in entries])
    kind, alpha = tracked.config["kind"], tracked.config["alpha"]
    sklearn_type = {"multinomial": SkMultinomialNB, "bernoulli": SkBernoulliNB, "complement": SkComplementNB,
                    "complement-norm": SkComplementNB}.get(kind)
    if sklearn_type is None or not vocabulary or (kind == "complement-norm" and len(vocabulary) == 1):
        classes, table = numpy_log_proba(kind, alpha, KINDS[kind][1].get("mu"), X, y, sample_weight, Xq)
    else:
        extra = {"norm": True} if kind == "complement-norm" else {}
        reference = sklearn_type(alpha=alpha, force_alpha=True, **extra).fit(X, y, sample_weight=sample_weight)
        classes, table = reference.classes_.tolist(), reference.predict_log_proba(Xq)
    return [{names[c]: float(v) for c, v in zip(classes, row)} for row in table]


def numpy_log_proba(kind: str, alpha: float, mu: float | None, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray,
                    Xq: np.ndarray) -> tuple[list, np.ndarray]:
    """The formulas of docs/design.md section 2 on the weighted documents, in numpy (no model involved)."""
    with np.errstate(divide="ignore"):  # an empty vocabulary: log 0 in tables with no column
        return _numpy_log_proba(kind, alpha, mu, X, y, sample_weight, Xq)


def _numpy_log_proba(kind, alpha, mu, X, y, sample_weight, Xq):
    classes = sorted(set(y.tolist()))
    onehot = np.array([[label == c for c in classes] for label in y], dtype=float) * sample_weight[:, None]
    N = onehot.sum(axis=0)  # N_c
    T = onehot.T @ X  # T_cw
    D = onehot.T @ (X > 0)  # D_cw
    V = X.shape[1]
    log_prior = np.log(N) - np.log(N.sum())
    if kind in ("multinomial", "mu"):
        if mu is None:
            log_p = np.log(T + alpha) - np.log(T.sum(axis=1) + alpha * V)[:, None]
        else:
            pooled = (T.sum(axis=0) + alpha) / (T.sum() + alpha * V)
            log_p = np.log(T + mu * pooled) - np.log(T.sum(axis=1) + mu)[:, None]
        jll = log_prior + Xq @ log_p.T
    elif kind == "bernoulli":
        p = (D + alpha) / (N[:, None] + 2 * alpha)
        present = (Xq > 0).astype(float)
        jll = log_prior + present @ np.log(p).T + (1 - present) @ np.log(1 - p).T
    else:
        F = T.sum(axis=0) - T  # F_notc,w
        theta = np.log(F + alpha) - np.log(F.sum(axis=1) + alpha * V)[:, None]
        if kind == "complement":
            weights = -theta
        elif V <= 1:
            weights = np.zeros_like(theta)  # one word tells the classes nothing (scikit-learn: 0/0)
        else:
            weights = theta / theta.sum(axis=1, keepdims=True)
        jll = Xq @ weights.T + (log_prior if len(classes) == 1 else 0.0)
    return classes, jll - logsumexp(jll, axis=1, keepdims=True)


class CoreMachine(RuleBasedStateMachine):
    """Random operations on one model; after each, every prediction equals the batch reference."""

    @initialize(config=configs, probes=st.lists(st.one_of(map_docs, text_docs), min_size=2, max_size=4))
    def start(self, config, probes):
        self.tracked = Tracked(config)
        pool = text_docs if config["text"] else map_docs
        self.pool = pool
        # Probes: fixed ones (with words never learned), and drawn ones of the model's kind.
        unseen = {"never-learned": 1} if not config["text"] else {"neverlearned": 2}
        tokens = TEXT_TOKENS if config["text"] else MAP_TOKENS
        fixed = [{tokens[0]: 1, tokens[3]: 2}, dict(unseen, **{tokens[5]: 1}), {t: 1 for t in tokens}]
        # "naïve" is a token of both kinds: a drawn mapping with fractional counts is not text
        keep = [p for p in probes if all(t in tokens and (not config["text"] or isinstance(v, int))
                                         for t, v in p.items())]
        self.probes = fixed + keep
        self.tmp = tempfile.TemporaryDirectory()

    def teardown(self):
        if hasattr(self, "tmp"):
            self.tmp.cleanup()

    @property
    def model(self):
        return self.tracked.model

    def doc(self, data) -> dict:
        return data.draw(self.pool)

    # -- learning ----------------------------------------------------------------------------
    @rule(data=st.data(), label=labels, weight=weights, predict_first=st.booleans())
    def learn_one(self, data, label, weight, predict_first):
        TALLY["learn_one"] += 1
        self.tracked.learn_one(self.doc(data), label, weight, predict_first)

    @rule(data=st.data(), n=st.integers(1, 5))
    def learn_many(self, data, n):
        TALLY["learn_many"] += 1
        rows = [(self.doc(data), data.draw(labels), data.draw(weights)) for _ in range(n)]
        self.tracked.learn_many(rows)

    @rule(index=st.integers(0, 10**6), label=labels)
    def learn_a_probe(self, index, label):
        """A text just predicted (the last probe) is in the core's cache: learning it reuses it."""
        TALLY["learn_a_probe"] += 1
        probes = [p for p in self.probes if all(t in (TEXT_TOKENS if self.tracked.config["text"] else MAP_TOKENS)
                                                for t in p)]
        self.tracked.learn_one(probes[index % len(probes)], label, 1.0)

    # -- unlearning ----------------------------------------------------------------------------
    @precondition(lambda self: self.tracked.entries)
    @rule(index=st.integers(0, 10**6), with_stamp=st.booleans())
    def unlearn_one(self, index, with_stamp):
        TALLY["unlearn_one"] += 1
        self.tracked.unlearn_one(index % len(self.tracked.entries), with_stamp)

    @precondition(lambda self: len(self.tracked.entries) >= 2)
    @rule(data=st.data(), with_stamp=st.booleans())
    def unlearn_many(self, data, with_stamp):
        TALLY["unlearn_many"] += 1
        candidates = range(len(self.tracked.entries))
        indices = data.draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=4, unique=True))
        self.tracked.unlearn_many(indices, with_stamp)

    @precondition(lambda self: self.tracked.entries)
    @rule(index=st.integers(0, 10**6), data=st.data())
    def predict_unlearn_learn(self, index, data):
        """Predict on a document (cached when text), take another one out (tokens may leave
        the vocabulary), then learn the first: the cached document must be looked up again."""
        TALLY["predict_unlearn_learn"] += 1
        doc = self.doc(data)
        x = self.tracked.raw(doc)
        self.model.predict_log_proba_one(x)
        self.tracked.unlearn_one(index % len(self.tracked.entries), True)
        self.tracked.learn_one(doc, "spam", 1.0)

    @precondition(lambda self: self.tracked.config["n_buckets"] is None and self.tracked.entries)
    @rule(index=st.integers(0, 10**6))
    def unlearn_what_was_never_learned(self, index):
        """A document with a word never learned is refused, and nothing changes (with no
        pruning since the document: after one, features missing from V are taken as pruned)."""
        TALLY["unlearn_what_was_never_learned"] += 1
        entry = self.tracked.entries[index % len(self.tracked.entries)]
        bad = entry.raw + " neverlearned" if isinstance(entry.raw, str) else dict(entry.raw, neverlearned=1)
        before = snapshot(self.model)
        if self.model.store.pruned_at >= entry.stamp:
            with pytest.raises(UnknownClassError, match="no-such-class"):
                self.model.unlearn_one(bad, "no-such-class", entry.weight, learned_at=entry.stamp)
        else:
            with pytest.raises(InvalidInputError, match="neverlearned"):
                self.model.unlearn_one(bad, entry.label, entry.weight, learned_at=entry.stamp)
        assert snapshot(self.model) == before

    # -- merging ---------------------------------------------------------------------------------
    def pruned_model(self, data, n: int, dense_max_classes: int, batch: bool, prunes: bool) -> Tracked:
        """A model trained on n other documents; pruned (keeping half its features), then
        trained on one more, when ``prunes``."""
        other = Tracked(self.tracked.config, dense_max_classes)
        rows = [(self.doc(data), data.draw(labels), data.draw(weights)) for _ in range(n)]
        if batch and rows:
            other.learn_many(rows)
        else:
            for row in rows:
                other.learn_one(*row)
        if prunes:
            other.apply(lambda: other.model.select_features(max(1, len(other.vocabulary()) // 2)), [])
            other.learn_one(self.doc(data), data.draw(labels), data.draw(weights))
        return other

    @rule(data=st.data(), n=st.integers(0, 5), dense_max_classes=st.sampled_from([4, 1]), batch=st.booleans(),
          other_prunes=st.booleans(), nested=st.booleans())
    def merge_another(self, data, n, dense_max_classes, batch, other_prunes, nested):
        """Merge a model trained on other documents, which may have pruned (its documents
        from before hold only the features it kept) and may itself have merged a model that
        pruned (its record of that comes along)."""
        TALLY["merge_another"] += 1
        TALLY["merge_another_pruned"] += other_prunes
        other = self.pruned_model(data, n, dense_max_classes, batch, other_prunes)
        if nested:
            TALLY["merge_another_nested"] += 1
            other.merge(self.pruned_model(data, n, dense_max_classes, batch, True))
            if other_prunes:
                other.apply(lambda: other.model.select_features(max(1, len(other.vocabulary()) // 2)), [])
        self.tracked.merge(other)

    @precondition(lambda self: len(self.tracked.entries) <= 24)  # it doubles the documents
    @rule()
    def merge_with_itself(self):
        TALLY["merge_with_itself"] += 1
        self.tracked.merge(copy.copy(self.tracked))  # shares the model: model.merge(model)

    # -- pruning ---------------------------------------------------------------------------------
    @rule()
    def prune(self):
        TALLY["prune"] += 1
        self.tracked.apply(self.model.prune, [])

    @rule(k=st.integers(0, 8))
    def select_features(self, k):
        TALLY["select_features"] += 1
        self.tracked.apply(lambda: self.model.select_features(k), [])
        assert len(self.tracked.vocabulary()) <= k

    # -- persistence -----------------------------------------------------------------------------
    @rule()
    def save_and_load(self):
        TALLY["save_and_load"] += 1
        path = os.path.join(self.tmp.name, "model.snb")
        self.model.save(path)
        loaded = streamnb.load(path)
        assert snapshot(loaded) == snapshot(self.model)
        self.tracked.model = loaded

    @rule(deep=st.booleans())
    def pickle_round_trip(self, deep):
        TALLY["pickle_round_trip"] += 1
        clone = copy.deepcopy(self.model) if deep else pickle.loads(pickle.dumps(self.model))
        assert snapshot(clone) == snapshot(self.model)
        self.tracked.model = clone

    # -- what must hold after every step -------------------------------------------------------------
    @invariant()
    def equals_the_batch_reference(self):
        TALLY["equals_the_batch_reference"] += 1
        tracked = self.tracked
        assert self.model.n_learned == tracked.n
        assert tracked.vocabulary() == tracked.expected_vocabulary()
        assert self.model.n_features == len(tracked.expected_vocabulary())
        expected_counts: Counter = Counter()
        for e in tracked.entries:
            expected_counts[e.label] += tracked.weight_now(e)
        got_counts = self.model.class_counts
        assert set(got_counts) == set(expected_counts)
        for label, n in expected_counts.items():
            assert got_counts[label] == pytest.approx(n, rel=TOL, abs=1e-300)
        raws = [tracked.raw(p) for p in self.probes]
        for probe, want in zip(raws, reference_log_proba(tracked, self.probes)):
            got = self.model.predict_log_proba_one(probe)
            assert got.keys() == want.keys(), (probe, got, want)
            for label in want:
                assert abs(got[label] - want[label]) <= TOL, (probe, label, got[label], want[label])
            if len(want) >= 2:
                ranked = sorted(want.values(), reverse=True)
                if ranked[0] - ranked[1] > 1e-6:
                    assert self.model.predict_one(probe) == max(want, key=want.get)

    @invariant()
    def bernoulli_histograms_count_the_cells(self):
        histograms = self.model._core._histograms()
        if histograms is None:
            return
        rows, cols, _, docs = self.model.store._stored_cells()
        recount = [Counter() for _ in histograms]
        for c, d in zip(cols.tolist(), docs.tolist()):
            if d > 0:
                recount[c][d] += 1
        assert [sorted(Counter(dict(h)).items()) for h in histograms] == [sorted(r.items()) for r in recount]


CoreMachine.TestCase.settings = settings(
    max_examples=FUZZ_EXAMPLES or 40, stateful_step_count=25, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
test_random_operation_sequences_equal_the_batch_reference = CoreMachine.TestCase


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(["multinomial", "bernoulli", "complement", "complement-norm"]),
       alpha=st.sampled_from([1.0, 0.3]),
       rows=st.lists(st.tuples(st.lists(st.integers(0, 3), min_size=5, max_size=5), st.sampled_from("abc"),
                               st.sampled_from([0.5, 1.0, 1.5])), min_size=1, max_size=8),
       queries=st.lists(st.lists(st.integers(0, 3), min_size=5, max_size=5), min_size=1, max_size=3))
def test_the_numpy_reference_equals_sklearn(kind, alpha, rows, queries):
    """The stand-in reference (used for mu and empty vocabularies) is scikit-learn where both apply."""
    X = np.array([r for r, _, _ in rows], dtype=float)
    y = np.array([label for _, label, _ in rows], dtype=object)
    sample_weight = np.array([w for _, _, w in rows])
    Xq = np.array(queries, dtype=float)
    classes, table = numpy_log_proba(kind, alpha, None, X, y, sample_weight, Xq)
    sklearn_type = {"multinomial": SkMultinomialNB, "bernoulli": SkBernoulliNB}.get(kind, SkComplementNB)
    extra = {"norm": True} if kind == "complement-norm" else {}
    reference = sklearn_type(alpha=alpha, force_alpha=True, **extra).fit(X, y, sample_weight=sample_weight)
    assert classes == reference.classes_.tolist()
    with np.errstate(all="ignore"):
        expected = reference.predict_log_proba(Xq)
    if kind == "complement-norm" and not np.isfinite(expected).all():
        return  # scikit-learn divides 0 by 0 when every theta of a class is log 1 (the numpy one says 0)
    np.testing.assert_allclose(table, expected, rtol=0, atol=1e-9)


def test_unlearning_a_merged_document_takes_only_what_its_own_model_kept(tmp_path):
    """A model that pruned, merged in: its documents from before the pruning hold only the
    features it kept, whatever the merging model's counts held (src/store/mod.rs MergedPruning)."""
    a = MultinomialNB().learn_one({"a": 1, "b": 1}, "x")
    b = MultinomialNB().learn_one({"a": 1, "b": 1}, "x").select_features(1)  # b keeps "a", drops "b"
    assert set(b.store.vocabulary.mapping()) == {"a"}
    a.merge(b)  # a's document at stamp 1, b's at stamp 2 (holding "a" only)
    a.save(tmp_path / "merged.snb")
    for model in (a, streamnb.load(tmp_path / "merged.snb")):
        model.unlearn_one({"a": 1, "b": 1}, "x", learned_at=2)
        # what is left is a's own document, {"a": 1, "b": 1}
        assert model.feature_counts("a") == {"x": 1.0} and model.feature_counts("b") == {"x": 1.0}
        model.unlearn_one({"a": 1, "b": 1}, "x", learned_at=1)
        assert model.n_features == 0


def test_a_feature_pruned_and_learned_again_is_taken_only_from_the_later_documents():
    """b drops "b", learns it again; merged into a model holding "b" from the start, b's first
    document still holds no "b", its last one does; merging the merged model again keeps that."""
    a = MultinomialNB().learn_one({"b": 2, "c": 1}, "x")
    b = MultinomialNB().learn_one({"a": 1, "b": 1}, "y").select_features(1)  # ties: the first one, "a", stays
    assert set(b.store.vocabulary.mapping()) == {"a"}
    b.learn_one({"b": 3}, "y")  # "b" is born again, at b's stamp 2
    a.merge(b)  # a: stamp 1; b's documents: stamps 2 (holds "a") and 3 (holds "b")
    outer = MultinomialNB().learn_one({"b": 1}, "x").merge(a)  # a's stamps + 1
    for model, shift in ((a, 0), (outer, 1)):
        model.unlearn_one({"a": 1, "b": 1}, "y", learned_at=2 + shift)
        assert model.feature_counts("a") == {} and model.feature_counts("b") == {"x": 2.0 + shift, "y": 3.0}
        model.unlearn_one({"b": 3}, "y", learned_at=3 + shift)
        assert model.feature_counts("b") == {"x": 2.0 + shift}
        assert model.feature_counts("c") == {"x": 1.0}


def test_merged_prunings_past_their_budget_are_forgotten_and_their_documents_refused():
    """Each merge of a pruned model that lacks the merging model's features records them as
    exceptions; past max(2^16, 2 x |V|) of them the oldest records are forgotten, so memory
    stays bounded, and unlearning one of their documents is refused by name, not done wrong."""
    from streamnb.errors import InvalidInputError

    model = MultinomialNB().learn_one({f"w{i}": 1 for i in range(40_000)}, "x")
    batch_docs = []
    for step in range(4):
        doc = {f"b{step}": 2, f"c{step}": 1}
        batch_docs.append(doc)
        model.merge(MultinomialNB().learn_one(doc, "y").select_features(1))  # keeps b{step}
    arrays = dict(model._core.merged_arrays())
    budget = max(2**16, 2 * model.n_features)
    assert 0 < len(arrays["merged_exception_feature"]) <= budget
    assert arrays["merged_forgotten_first"] == [2] and arrays["merged_forgotten_last"][0] >= 2
    with pytest.raises(InvalidInputError, match="learned at 2 exactly: it was merged in from a model that had pruned"):
        model.unlearn_one(batch_docs[0], "y", learned_at=2)
    assert model.feature_counts("b0")["y"] == 2.0  # nothing changed
    model.unlearn_one(batch_docs[3], "y", learned_at=5)  # the last merge is remembered: exact
    assert model.feature_counts("b3") == {} and model.feature_counts("w7") == {"x": 1.0, "y": 0.0}


def test_the_mu_reference_equals_the_worked_formula():
    """The numpy reference for mu reproduces tests/models/test_dirichlet.py's hand-tallied formula."""
    from tests.models.test_dirichlet import QUERY, STREAM, reference_log_posterior

    vocabulary = sorted({w for doc, _ in STREAM for w in doc})
    X = np.array([[doc.get(w, 0) for w in vocabulary] for doc, _ in STREAM], dtype=float)
    y = np.array([label for _, label in STREAM], dtype=object)
    Xq = np.array([[QUERY.get(w, 0) for w in vocabulary]], dtype=float)
    classes, table = numpy_log_proba("mu", 0.5, 7.0, X, y, np.ones(len(STREAM)), Xq)
    expected = reference_log_posterior(STREAM, QUERY, 0.5, 7.0, "ignore")
    assert dict(zip(classes, table[0].tolist())) == pytest.approx(expected, abs=1e-12)
    assert math.isfinite(table[0][0])
