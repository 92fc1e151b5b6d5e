"""Helpers of the retraining and persistence tests: state snapshots and batch references."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import scipy.sparse as sp
from sklearn.naive_bayes import BernoulliNB as SkBernoulli
from sklearn.naive_bayes import MultinomialNB as SkMultinomial

from streamnb import BernoulliNB, MultinomialNB, persist

PROBES = [{"w0": 1}, {"w1": 2, "w3": 1}, {"w2": 1, "w5": 3, "w7": 1}, {"w4": 1, "w9": 1, "w11": 2},
          {"zz-unseen": 1}, {"w6": 1, "w8": 1, "w10": 1, "w12": 1}]


def snapshot(model) -> dict:
    """Everything a model holds, as plain comparable values (capacity padding excluded)."""
    state, arrays = model._state()
    store = model.store
    vocabulary = store.vocabulary
    return {
        "state": json.dumps(persist.encode_value({k: v for k, v in state.items() if k != "params"}), sort_keys=True),
        "params": repr(sorted((k, repr(v)) for k, v in model.get_params().items())),
        "arrays": {name: (a.dtype.str, a.shape, a.tobytes()) for name, a in arrays.items()},
        "index": sorted((repr(k), v) for k, v in vocabulary.mapping().items()),
        "free": sorted(vocabulary.free_ids()),
        "histogram": model._core._histograms(),
        "n_features": store.n_features,
        "alive": store.feature_ids().tolist(),
        "ledger": None if model._learner.ledger is None else list(model._learner.ledger.entries.items()),
        "clocks": (model.last_t, store.pruned_at, model._learner.pass_at, store.n_learned, store.scale),
    }


def counts(model) -> dict:
    """The true counts as {(feature, label): (T, D)} plus {label: N_c}: what predictions depend on."""
    store = model.store
    rows, cols, tokens, docs = store.nonzero()
    cells = {(store.vocabulary.token(int(r)), store.labels[int(c)]): (float(t), float(d))
             for r, c, t, d in zip(rows, cols, tokens, docs)}
    return {"cells": cells, "classes": model.class_counts, "n_features": model.n_features}


def assert_counts_close(a, b, rel=1e-9):
    ca, cb = counts(a), counts(b)
    assert ca["n_features"] == cb["n_features"]
    assert set(ca["classes"]) == set(cb["classes"])
    for label in ca["classes"]:
        assert abs(ca["classes"][label] - cb["classes"][label]) <= rel * max(1.0, abs(cb["classes"][label]))
    assert set(ca["cells"]) == set(cb["cells"])
    for key, (t, d) in ca["cells"].items():
        t2, d2 = cb["cells"][key]
        assert abs(t - t2) <= rel * max(1.0, abs(t2)) and abs(d - d2) <= rel * max(1.0, abs(d2)), key


def log_probas(model, probes=PROBES) -> list[dict]:
    return [model.predict_log_proba_one(x) for x in probes]


def assert_predictions_close(a, b, tol=1e-9, probes=PROBES):
    for pa, pb in zip(log_probas(a, probes), log_probas(b, probes)):
        assert pa.keys() == pb.keys()
        for label in pa:
            assert abs(pa[label] - pb[label]) <= tol, (label, pa[label], pb[label])


def sklearn_log_proba(model_type, documents, labels, weights, vocabulary, alpha, probes):
    """scikit-learn's log P(c|x) for a batch fit on the documents over ``vocabulary``."""
    column = {f: j for j, f in enumerate(vocabulary)}

    def matrix(docs):
        data, rows, cols = [], [], []
        for i, doc in enumerate(docs):
            for f, v in doc.items():
                if f in column:
                    rows.append(i), cols.append(column[f]), data.append(float(v))
        return sp.csr_matrix((data, (rows, cols)), shape=(len(docs), len(vocabulary)))

    reference = (SkMultinomial if model_type is MultinomialNB else SkBernoulli)(alpha=alpha, force_alpha=True)
    reference.fit(matrix(documents), np.array(labels, dtype=object), sample_weight=np.asarray(weights, dtype=float))
    result = reference.predict_log_proba(matrix(probes))
    return [dict(zip(reference.classes_.tolist(), row.tolist())) for row in result]


def assert_matches_sklearn(model, documents, labels, weights, probes=PROBES, vocabulary=None, tol=1e-9):
    """model's log-probabilities == scikit-learn's on the same weighted documents and vocabulary."""
    if vocabulary is None:
        vocabulary = [model.store.vocabulary.token(int(i)) for i in model.store.feature_ids()]
    kept = [w > 0 for w in weights]
    expected = sklearn_log_proba(type(model), [d for d, k in zip(documents, kept) if k],
                                 [y for y, k in zip(labels, kept) if k], [w for w in weights if w > 0],
                                 vocabulary, model.alpha, probes)
    for x, want in zip(probes, expected):
        got = model.predict_log_proba_one(x)
        assert set(got) == set(want)
        for label in want:
            assert abs(got[label] - want[label]) <= tol, (x, label, got[label], want[label])


def read_members(path) -> tuple[dict, dict[str, bytes]]:
    """(metadata, {member name: bytes}) of a saved model."""
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    return json.loads(members.pop(persist.METADATA)), members


def write_members(path, metadata: dict, members: dict[str, bytes]) -> None:
    """Rewrite a model file from edited parts, with a valid checksum (a careful tamperer)."""
    text = json.dumps(metadata, sort_keys=True, separators=(",", ":")).encode("ascii")
    with open(path, "wb") as handle:
        handle.write(persist._pack(text, members))


def npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=array.dtype == object)
    return buffer.getvalue()


MODEL_TYPES = [MultinomialNB, BernoulliNB]
