"""Core benchmark (issue 2): NB-only prequential speed, predict cost vs |V|, memory vs river.

Run:  python -m benchmarks.bench_core [--quick] [--corpus PATH]
(the corpus path defaults to $STREAMNB_SPAMASSASSIN; see streamnb.datasets).

1. Prequential (predict, then learn, each message) on the SpamAssassin stream in Date
   order, messages pre-tokenized once into dicts (lowercased words of 2+ word characters),
   the same dicts for every library: msg/s and ratios. river's BernoulliNB walks the whole
   vocabulary on every prediction, so it runs on a prefix only (stated in the output).
2. predict_one cost of MultinomialNB/BernoulliNB at |V| = 10^4, 10^5, 10^6 (synthetic Zipf
   vocabulary, 2 classes, 200-word documents): microseconds per call and the 10^6/10^4 ratio.
3. Memory of the trained state (tracemalloc: bytes allocated while learning, tokens
   included for both) after the full corpus, and with K = 200 classes on a synthetic stream.
"""

from __future__ import annotations

import argparse
import gc
import re
import statistics
import time
import tracemalloc
from collections import Counter

import numpy as np

from streamnb import BernoulliNB, MultinomialNB
from streamnb.datasets import load_spamassassin

WORD = re.compile(r"\b\w\w+\b")


def pretokenize(messages) -> list[tuple[dict[str, int], str]]:
    return [(dict(Counter(WORD.findall(m.raw.decode("latin-1").lower()))), m.label) for m in messages]


def prequential(model, stream) -> tuple[float, float]:
    """(msg/s, accuracy) of predict-then-learn over the stream."""
    correct = 0
    start = time.perf_counter()
    for x, y in stream:
        correct += model.predict_one(x) == y
        model.learn_one(x, y)
    elapsed = time.perf_counter() - start
    return len(stream) / elapsed, correct / len(stream)


def median_run(factory, stream, repeats):
    runs = [prequential(factory(), stream) for _ in range(repeats)]
    speeds = [s for s, _ in runs]
    return statistics.median(speeds), min(speeds), max(speeds), runs[0][1]


def bench_prequential(stream, repeats, river_bernoulli_prefix):
    from river import naive_bayes

    print(f"\n## Prequential, NB only: {len(stream)} messages (pre-tokenized dicts), median of {repeats}")
    results = {}
    for name, factory, data in [
        ("streamnb MultinomialNB", lambda: MultinomialNB(), stream),
        ("river MultinomialNB", lambda: naive_bayes.MultinomialNB(), stream),
        ("streamnb BernoulliNB", lambda: BernoulliNB(), stream),
        (f"streamnb BernoulliNB (first {river_bernoulli_prefix})", lambda: BernoulliNB(), stream[:river_bernoulli_prefix]),
        (f"river BernoulliNB (first {river_bernoulli_prefix})", lambda: naive_bayes.BernoulliNB(),
         stream[:river_bernoulli_prefix]),
    ]:
        median, low, high, accuracy = median_run(factory, data, repeats)
        results[name] = median
        print(f"{name:45s} {median:10.0f} msg/s  (min {low:.0f}, max {high:.0f})  accuracy {accuracy:.4f}")
    mnb = results["streamnb MultinomialNB"] / results["river MultinomialNB"]
    prefix = f"(first {river_bernoulli_prefix})"
    bnb = results[f"streamnb BernoulliNB {prefix}"] / results[f"river BernoulliNB {prefix}"]
    print(f"ratio MultinomialNB streamnb/river: {mnb:.1f}x (target >= 20x)")
    print(f"ratio BernoulliNB   streamnb/river on the same prefix: {bnb:.0f}x (target >= 300x)")
    return {"multinomial_ratio": mnb, "bernoulli_ratio": bnb, "msg_per_s": results}


def zipf_documents(n_vocab, n_docs, doc_len, rng):
    ranks = np.arange(1, n_vocab + 1)
    p = 1 / ranks
    p /= p.sum()
    words = rng.choice(n_vocab, size=(n_docs, doc_len), p=p)
    return [dict(Counter(f"w{w}" for w in row)) for row in words]


def bench_predict_cost(vocab_sizes, repeats=5):
    print("\n## predict_one cost vs |V| (2 classes, 200-token Zipf documents)")
    rng = np.random.default_rng(0)
    queries = zipf_documents(10_000, 200, 200, rng)
    out = {}
    for model_class in (MultinomialNB, BernoulliNB):
        costs = {}
        for n_vocab in vocab_sizes:
            model = model_class()
            # every word of the vocabulary learned once, so |V| is exactly n_vocab
            words = [f"w{i}" for i in range(n_vocab)]
            for start in range(0, n_vocab, 1000):
                model.learn_one(dict.fromkeys(words[start:start + 1000], 1), "ab"[(start // 1000) % 2])
            for x in zipf_documents(n_vocab, 200, 200, rng):
                model.learn_one(x, "ab"[len(x) % 2])
            assert model.n_features == n_vocab
            timings = []
            for _ in range(repeats):
                start = time.perf_counter()
                for x in queries:
                    model.predict_one(x)
                timings.append((time.perf_counter() - start) / len(queries) * 1e6)
            costs[n_vocab] = statistics.median(timings)
            print(f"{model_class.__name__:14s} |V| = {n_vocab:>9,d}: {costs[n_vocab]:7.1f} us/predict "
                  f"(min {min(timings):.1f}, max {max(timings):.1f})")
        ratio = costs[max(vocab_sizes)] / costs[min(vocab_sizes)]
        print(f"{model_class.__name__:14s} ratio |V|={max(vocab_sizes):,} / |V|={min(vocab_sizes):,}: {ratio:.2f} "
              "(target <= 1.3)")
        out[model_class.__name__] = {"us_per_predict": costs, "ratio": ratio}
    return out


def traced_bytes(build):
    gc.collect()
    tracemalloc.start()
    model = build()
    gc.collect()
    current, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return current, model


def bench_memory(stream, n_classes=200):
    from river import naive_bayes

    # The documents exist before tracing starts, so the token strings both libraries keep
    # references to are counted for neither: what is counted is each model's own structure.
    print("\n## Memory of the trained state (tracemalloc, bytes held after learning)")

    def train(model, data):
        for x, y in data:
            model.learn_one(x, y)
        return model

    rows = {}
    for name, factory, data in [
        ("streamnb MultinomialNB", MultinomialNB, stream),
        ("river MultinomialNB", naive_bayes.MultinomialNB, stream),
        ("streamnb BernoulliNB", BernoulliNB, stream),
    ]:
        size, _ = traced_bytes(lambda: train(factory(), data))
        rows[name] = size
        print(f"{name:32s} corpus, K=2: {size / 2**20:8.1f} MiB")
    rng = np.random.default_rng(1)
    docs = zipf_documents(20_000, 4000, 50, rng)
    many = [(x, f"class{int(rng.integers(n_classes))}") for x in docs]
    for name, factory in [("streamnb MultinomialNB", MultinomialNB), ("river MultinomialNB", naive_bayes.MultinomialNB)]:
        size, model = traced_bytes(lambda: train(factory(), many))
        rows[f"{name} K={n_classes}"] = size
        print(f"{name:32s} synthetic, K={n_classes}: {size / 2**20:8.1f} MiB")
    ratio_2 = rows["streamnb MultinomialNB"] / rows["river MultinomialNB"]
    ratio_k = rows[f"streamnb MultinomialNB K={n_classes}"] / rows[f"river MultinomialNB K={n_classes}"]
    print(f"memory ratio streamnb/river MultinomialNB: K=2 {ratio_2:.2f}, K={n_classes} {ratio_k:.2f} (target <= 0.4)")
    return {"bytes": rows, "ratio_k2": ratio_2, f"ratio_k{n_classes}": ratio_k}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="SpamAssassin corpus (default: $STREAMNB_SPAMASSASSIN)")
    parser.add_argument("--quick", action="store_true", help="small sizes, one run: a smoke test")
    args = parser.parse_args(argv)
    messages = load_spamassassin(args.corpus)
    if args.quick:
        messages = messages[:400]
    stream = pretokenize(messages)
    repeats = 1 if args.quick else 3
    results = {"prequential": bench_prequential(stream, repeats, 100 if args.quick else 500)}
    results["predict_cost"] = bench_predict_cost([10**3, 10**4] if args.quick else [10**4, 10**5, 10**6],
                                                 repeats=1 if args.quick else 5)
    results["memory"] = bench_memory(stream, n_classes=20 if args.quick else 200)
    return results


if __name__ == "__main__":
    main()
