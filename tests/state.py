"""Helpers shared by the tests: a model's counts, batch references, a synthetic spam/ham stream."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import strategies as st


def snapshot(model) -> dict:
    """Everything a discrete model knows, keyed by token and label (ids may differ)."""
    store = model.store
    rows, cols, tokens, docs = store.nonzero()
    cells = sorted(
        (repr(store.vocabulary.token(int(r))), repr(store.labels[int(c)]), float(t), float(d))
        for r, c, t, d in zip(rows, cols, tokens, docs))
    return {
        "labels": [repr(label) for label in store.labels],
        "class_docs": store.true_class_docs().tolist(),
        "class_tokens": store.true_class_tokens().tolist(),
        "n_features": store.n_features,
        "vocabulary": sorted(repr(store.vocabulary.token(int(i))) for i in store.feature_ids()),
        "cells": cells,
    }


def batch_matrix(docs, vocabulary=None):
    """Dense document-term matrix of mappings over a sorted vocabulary (words with a nonzero value)."""
    if vocabulary is None:
        vocabulary = sorted({w for d in docs for w, v in d.items() if v != 0})
    index = {w: i for i, w in enumerate(vocabulary)}
    matrix = np.zeros((len(docs), len(vocabulary)))
    for row, doc in enumerate(docs):
        for word, value in doc.items():
            if word in index:
                matrix[row, index[word]] = value
    return matrix, vocabulary


def spam_ham_stream(n: int, seed: int, spam_words: list[str], ham_words: list[str], shared: list[str],
                    n_shared: int) -> list[tuple[dict, str]]:
    """Bags of words, 40% spam: 3 words of the class, n_shared common ones, 0-2 of the other class."""
    rng = np.random.default_rng(seed)
    stream = []
    for _ in range(n):
        label = "spam" if rng.random() < 0.4 else "ham"
        own, other = (spam_words, ham_words) if label == "spam" else (ham_words, spam_words)
        words = list(rng.choice(own, 3)) + list(rng.choice(shared, n_shared)) + list(rng.choice(other, rng.integers(0, 3)))
        stream.append((dict(Counter(words)), label))
    return stream


def learn_records(model, stream) -> None:
    """Learn each (record, label, weight) of a stream."""
    for record, label, weight in stream:
        model.learn_one(record, label, weight)


def learn_then_unlearn(model, stream) -> None:
    """Learn a stream of (record, label, weight), then unlearn it in reverse order."""
    learn_records(model, stream)
    for record, label, weight in reversed(stream):
        model.unlearn_one(record, label, weight)


def record_streams(records, weights):
    """A hypothesis strategy: lists of 1 to 12 (record, label, weight), labels among a, b, c."""
    return st.lists(st.tuples(records, st.sampled_from(["a", "b", "c"]), st.sampled_from(weights)),
                    min_size=1, max_size=12)
