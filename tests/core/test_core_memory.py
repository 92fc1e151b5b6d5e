"""model.nbytes (the core's own accounting) against the process's resident memory (issue 13).

Each case trains a model on a synthetic stream of 2*10^5 distinct tokens in a fresh Python
process and compares the growth of its resident set (/proc/self/statm, around training
only: the stream is built first) with ``model.nbytes``: they must agree within 20%.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

SCRIPT = r"""
import gc, json, os, sys
import numpy, scipy.sparse  # the models import them on first use (learn_many does): not the model's memory
from streamnb import BernoulliNB, ComplementNB, MultinomialNB, Tokenizer

case = json.loads(sys.argv[1])
PAGE = os.sysconf("SC_PAGE_SIZE")

def rss():
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * PAGE

n, per, pad = case["tokens"], case["per_doc"], case["pad"]
labels = [f"c{i}" for i in range(case["classes"])]
docs = [{f"{'x' * pad}t{i * per + j}": 1 + j % 3 for j in range(per)} for i in range(n // per)]
ys = [labels[i % len(labels)] for i in range(len(docs))]
if case["text"]:
    docs = [" ".join(" ".join([word] * count) for word, count in doc.items()) for doc in docs]
model_type = {"multinomial": MultinomialNB, "bernoulli": BernoulliNB, "complement": ComplementNB}[case["kind"]]
model = model_type(**case["params"], **({"tokenizer": Tokenizer()} if case["text"] else {}))
model.learn_one("warm up" if case["text"] else {"warm": 1}, labels[0])  # first-call allocations
gc.collect()
before = rss()
if case["batch"]:
    for start in range(0, len(docs), case["batch"]):
        model.learn_many(docs[start:start + case["batch"]], ys[start:start + case["batch"]])
else:
    for doc, y in zip(docs, ys):
        model.learn_one(doc, y)
gc.collect()
print(json.dumps({"rss": rss() - before, "nbytes": model.nbytes, "features": model.n_features}))
"""

BASE = {"kind": "multinomial", "params": {}, "tokens": 200_000, "per_doc": 10, "pad": 0, "classes": 2,
        "text": False, "batch": 0}
CASES = {
    "multinomial-learn_one": {},
    "multinomial-learn_many": {"batch": 1000},
    "multinomial-raw-text": {"text": True},
    "bernoulli-sparse-8-classes": {"kind": "bernoulli", "params": {"dense_max_classes": 1}, "classes": 8},
    "complement-norm-hashed": {"kind": "complement", "params": {"norm": True, "n_buckets": 2**20}},
    # 36-byte tokens, 1.4*10^5 of them: the vocabulary's byte arena has just doubled its capacity
    # (8 MiB for 5 MiB of tokens); counting that capacity put nbytes at 1.5x RSS.
    "long-tokens-after-growth": {"tokens": 140_000, "pad": 30},
}


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="resident memory is read from /proc/self/statm")
@pytest.mark.parametrize("name", sorted(CASES))
def test_nbytes_matches_resident_memory_within_20_percent(name):
    case = {**BASE, **CASES[name]}
    result = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(case)], capture_output=True, text=True,
                            timeout=300, check=True)
    measured = json.loads(result.stdout.strip().splitlines()[-1])
    assert measured["features"] >= min(case["tokens"], case["params"].get("n_buckets", case["tokens"])) * 0.8
    rss, nbytes = measured["rss"], measured["nbytes"]
    assert rss > 4_000_000, measured  # the model really grew (a few MB at least)
    assert abs(nbytes - rss) <= 0.2 * rss, f"{name}: nbytes {nbytes} vs RSS growth {rss} ({nbytes / rss:.3f}x)"


def test_reading_a_text_leaves_no_copy_on_it():
    """CPython keeps a str's UTF-8, once asked for it, on the str for as long as it lives (its
    size shows it): reading a non-ASCII text through the core must not ask for it, or a corpus
    the caller holds grows by the size of its non-ASCII texts (the memory benchmark's texts did)."""
    from streamnb import MultinomialNB, Tokenizer

    texts = [" ".join(["naïve", "text", "ünïcode", f"w{i}"] * 40) for i in range(20)]
    texts += [" ".join(["ΟΔΟΣ", "Σίσυφος", f"σ{i}"] * 40) for i in range(20)]  # capital sigma: Python lowercases
    sizes = [sys.getsizeof(text) for text in texts]
    labels = ["a", "b"] * 20
    model = MultinomialNB(tokenizer=Tokenizer())
    for text, label in zip(texts, labels):
        model.learn_one(text, label)
        model.predict_proba_one(text)
    model.learn_many(texts, labels)  # a batch is read on several threads
    model.predict_proba_many(texts)
    tokenizer = Tokenizer()
    for text in texts:
        tokenizer(text)
        tokenizer.words(text)
    assert model.n_features > 40 and model.predict_one(texts[0]) == "a"
    assert [sys.getsizeof(text) for text in texts] == sizes


def test_a_str_subclass_is_read_as_its_text_whatever_its_isascii_does():
    from streamnb import MultinomialNB, Tokenizer

    class Loud(str):
        def isascii(self):
            raise RuntimeError("isascii called")

    plain, loud = MultinomialNB(tokenizer=Tokenizer()), MultinomialNB(tokenizer=Tokenizer())
    for text in ("plain ascii words", "naïve ünïcode words"):
        plain.learn_one(text, "a")
        loud.learn_one(Loud(text), "a")
    assert loud.n_features == plain.n_features == 5
    assert loud.predict_proba_one(Loud("naïve words")) == plain.predict_proba_one("naïve words")
