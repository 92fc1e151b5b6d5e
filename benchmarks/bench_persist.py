"""Persistence and retraining benchmark (issue 5): save/load, forgetting cost, capped memory.

Run:  python -m benchmarks.bench_persist [--quick] [--corpus PATH] [--part save|forgetting|memory]
(the corpus path defaults to $STREAMNB_SPAMASSASSIN; see streamnb.datasets).

1. save/load time and file size of a MultinomialNB trained on the whole SpamAssassin
   corpus (messages pre-tokenized once: lowercase words of 2+ word characters, the regex
   ``\\b\\w\\w+\\b``), next to pickling river's MultinomialNB trained on the same dicts (and
   pickling our model). Median of repeats.
2. learn_one cost with forgetting on (half_life=1000 documents; and half_life_seconds with
   a timestamp per message) vs off, on the same stream: median of repeats, the ratio
   (target <= 1.2).
3. Memory of a model with max_features over a long synthetic stream whose vocabulary never
   stops growing (a new word every few documents): tracemalloc at checkpoints stays flat,
   while the same stream without a cap grows.
"""

from __future__ import annotations

import argparse
import gc
import os
import pickle
import re
import statistics
import tempfile
import time
import tracemalloc
from collections import Counter

import numpy as np

import streamnb
from streamnb import MultinomialNB
from streamnb.filter.datasets import load_spamassassin
from streamnb.models import Forgetting, Pruning

WORD = re.compile(r"\b\w\w+\b")


def pretokenize(messages) -> list[tuple[dict[str, int], str]]:
    return [(dict(Counter(WORD.findall(m.raw.decode("latin-1").lower()))), m.label) for m in messages]


def timed(action, repeats):
    """(median wall seconds, median CPU seconds of this process) of repeated calls.

    CPU time is reported too because benchmark machines are often shared: wall time then
    swings with the load, CPU time much less (it leaves out waiting for the disk, though).
    """
    wall, cpu = [], []
    for _ in range(repeats):
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        action()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def bench_save_load(stream, repeats):
    from river import naive_bayes

    print(f"\n## Save / load of a MultinomialNB trained on {len(stream)} messages, median of {repeats}")
    ours = MultinomialNB()
    for x, y in stream:
        ours.learn_one(x, y)
    theirs = naive_bayes.MultinomialNB()
    for x, y in stream:
        theirs.learn_one(x, y)
    print(f"|V| = {ours.n_features:,}, nonzero cells = {len(ours.store.nonzero()[0]):,}")
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.snb")
        save = timed(lambda: ours.save(path), repeats)
        load = timed(lambda: streamnb.load(path), repeats)
        size = os.path.getsize(path)
        loaded = streamnb.load(path)
        probe = stream[-1][0]
        assert loaded.predict_log_proba_one(probe) == ours.predict_log_proba_one(probe)
    results["streamnb save/load"] = (save, load, size)
    for name, model in (("river pickle", theirs), ("streamnb pickle", ours)):
        data = pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
        dump = timed(lambda: pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL), repeats)
        undump = timed(lambda: pickle.loads(data), repeats)
        results[name] = (dump, undump, len(data))
    print("(save = file written atomically with fsync; pickle = bytes in memory; times: wall / CPU)")
    for name, (write, read, size) in results.items():
        print(f"{name:20s} write {write[0] * 1e3:7.1f} / {write[1] * 1e3:7.1f} ms   "
              f"read {read[0] * 1e3:7.1f} / {read[1] * 1e3:7.1f} ms   size {size / 2**20:6.2f} MiB")
    (save, load, _), (dump, undump, _) = results["streamnb save/load"], results["river pickle"]
    print(f"ratio streamnb save / river pickle.dumps: {save[0] / dump[0]:.2f} wall, {save[1] / dump[1]:.2f} CPU; "
          f"load / pickle.loads: {load[0] / undump[0]:.2f} wall, {load[1] / undump[1]:.2f} CPU")
    return results


def learn_all(factory, stream, timestamps=None):
    model = factory()
    if timestamps is None:
        for x, y in stream:
            model.learn_one(x, y)
    else:
        for (x, y), t in zip(stream, timestamps):
            model.learn_one(x, y, t=t)
    return model


def bench_forgetting_cost(stream, repeats):
    print(f"\n## learn_one cost with forgetting on vs off ({len(stream)} messages, median of {repeats})")
    timestamps = [1_000_000.0 + 60.0 * i for i in range(len(stream))]
    cases = [
        ("off", lambda: learn_all(MultinomialNB, stream)),
        ("half_life=1000 docs", lambda: learn_all(lambda: MultinomialNB(forgetting=Forgetting(half_life=1000)), stream)),
        ("half_life_seconds=86400 + t",
         lambda: learn_all(lambda: MultinomialNB(forgetting=Forgetting(half_life_seconds=86400.0)), stream, timestamps)),
        ("half_life=5 docs (rescale /3300)",
         lambda: learn_all(lambda: MultinomialNB(forgetting=Forgetting(half_life=5)), stream)),
    ]
    # Interleave the cases so that machine noise hits them alike.
    runs = {name: [] for name, _ in cases}
    for _ in range(repeats):
        for name, action in cases:
            runs[name].append(timed(action, 1)[1])  # CPU time: steadier on a shared machine
    base, fastest = statistics.median(runs["off"]), min(runs["off"])
    results = {}
    for name, _ in cases:
        median = statistics.median(runs[name])
        results[name] = (median / len(stream) * 1e6, median / base, min(runs[name]) / fastest)
        print(f"{name:30s} {results[name][0]:7.2f} us/learn_one (CPU)   ratio to off: median "
              f"{results[name][1]:.3f}, best-of {results[name][2]:.3f}")
    print("target: ratio <= 1.2 (each run learns the stream from an empty model)")
    return results


def growing_stream(n_docs, rng):
    """Documents of 30 tokens: 25 from a 5000-word Zipf core and 5 words never seen before."""
    ranks = np.arange(1, 5001)
    p = 1 / ranks
    p /= p.sum()
    for start in range(0, n_docs, 1000):  # in chunks: the stream itself must not fill the memory
        core = rng.choice(5000, size=(min(1000, n_docs - start), 25), p=p)
        for i, row in enumerate(core, start):
            doc = Counter(f"w{w}" for w in row)
            for j in range(5):
                doc[f"new{i}_{j}"] = 1
            yield dict(doc), "spam" if i % 3 else "ham"


def bench_capped_memory(n_docs, cap, checkpoints):
    print(f"\n## Memory over a growing stream of {n_docs:,} documents (5 new words each), tracemalloc")
    results = {}
    for name, factory in ((f"max_features={cap:,}", lambda: MultinomialNB(pruning=Pruning(max_features=cap))),
                          ("no cap", MultinomialNB)):
        limit = n_docs if name != "no cap" else n_docs // 4  # uncapped memory grows: a shorter run shows it
        rng = np.random.default_rng(0)
        gc.collect()
        tracemalloc.start()
        model = factory()
        points = []
        for i, (x, y) in enumerate(growing_stream(limit, rng), 1):
            model.learn_one(x, y)
            if i % (limit // checkpoints) == 0:
                current, _ = tracemalloc.get_traced_memory()
                points.append((i, current, model.n_features))
        tracemalloc.stop()
        for i, current, n_features in points:
            print(f"{name:22s} after {i:>9,d} docs: {current / 2**20:7.1f} MiB   |V| = {n_features:,}")
        results[name] = points
        del model
    capped = [current for _, current, _ in results[f"max_features={cap:,}"]]
    half = len(capped) // 2
    print(f"capped: last/middle checkpoint memory ratio {capped[-1] / capped[half]:.2f} (flat: ~1)")
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="SpamAssassin corpus (default: $STREAMNB_SPAMASSASSIN)")
    parser.add_argument("--quick", action="store_true", help="small sizes, one run: a smoke test")
    parser.add_argument("--part", choices=["all", "save", "forgetting", "memory"], default="all")
    args = parser.parse_args(argv)
    repeats = 1 if args.quick else 5
    results = {}
    if args.part in ("all", "save", "forgetting"):
        messages = load_spamassassin(args.corpus)
        if args.quick:
            messages = messages[:500]
        stream = pretokenize(messages)
        if args.part in ("all", "save"):
            results["save_load"] = bench_save_load(stream, repeats)
        if args.part in ("all", "forgetting"):
            results["forgetting"] = bench_forgetting_cost(stream, repeats)
    if args.part in ("all", "memory"):
        results["memory"] = bench_capped_memory(20_000 if args.quick else 400_000, 2_000 if args.quick else 20_000,
                                                checkpoints=4 if args.quick else 8)
    return results


if __name__ == "__main__":
    main()
