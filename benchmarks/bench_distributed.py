"""Distributed training benchmark (issue 9): Dask cluster vs single-process learn_many.

Run:  python -m benchmarks.bench_distributed [--corpus PATH] [--workers 2] [--repeats 3]
                                               [--partitions 2,8,32]
(the corpus path defaults to $STREAMNB_SPAMASSASSIN; see streamnb.datasets).

Every figure is end to end from raw text in this process to a trained model in this
process, tokenization included (lowercased words of 2+ word characters, the same function
everywhere), on the whole SpamAssassin corpus:

1. single process: tokenize every message, then one learn_many;
2. Dask's threaded scheduler (distributed.train, scheduler="threads");
3. a LocalCluster of ``--workers`` processes, one thread each: scatter the partitions to
   the workers, train, bring the model back. Cluster start-up is reported apart.

For the cluster, the task stream splits the wall time: partition tasks (tokenize + learn),
merge tasks, transfers between workers; the rest is scheduling, the scatter and the final
model's trip back. Wall times depend on what else runs on the machine (its load average is
printed), so CPU seconds are reported as well: ``time.process_time`` of this process, of
the scheduler and of each worker process, before and after a run. Their sum against the
single process's CPU seconds is the overhead of going distributed whatever the load, and
the busiest worker's CPU seconds bound the wall time on idle cores. Medians of
``--repeats`` runs after one warm-up run (fresh workers import numpy/scipy/streamnb on
their first task).
"""

from __future__ import annotations

import argparse
import logging
import os
import pickle
import re
import statistics
import time
import warnings
from collections import Counter

from streamnb import MultinomialNB
from streamnb.datasets import load_spamassassin

WORD = re.compile(r"\b\w\w+\b")


def words(text: str) -> dict[str, int]:
    """Lowercased words of 2+ word characters."""
    return dict(Counter(WORD.findall(text.lower())))


def median_time(function, repeats: int) -> tuple[float, object]:
    """(median wall seconds, last result) of ``repeats`` calls."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def single_process(records, repeats: int) -> dict:
    texts, labels = [t for t, _ in records], [y for _, y in records]
    tokenize, features = median_time(lambda: [words(t) for t in texts], repeats)
    learn, model = median_time(lambda: MultinomialNB().learn_many(features, labels), repeats)
    walls, cpus = [], []
    for _ in range(repeats):  # end to end, as the cluster runs are measured
        wall, cpu = time.perf_counter(), time.process_time()
        MultinomialNB(tokenizer=words).learn_many(texts, labels)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return {"tokenize": tokenize, "learn": learn, "total": statistics.median(walls),
            "cpu": statistics.median(cpus), "model": model}


def cluster_cpu(client) -> dict[str, float]:
    """process_time of this process, the scheduler (when it runs elsewhere) and every worker process.

    A LocalCluster runs its scheduler inside this process: then "client" covers both.
    """
    times = {"client": time.process_time()}
    if client.run_on_scheduler(os.getpid) != os.getpid():
        times["scheduler"] = client.run_on_scheduler(time.process_time)
    times.update(client.run(time.process_time))
    return times


def task_times(stream) -> dict[str, float]:
    """Seconds spent per (function, action) in a task stream, summed over tasks."""
    spent: dict[str, float] = {}
    for task in stream:
        name = str(task["key"]).split("-")[0].strip("('\"")
        for part in task["startstops"]:
            key = f"{name}:{part['action']}"
            spent[key] = spent.get(key, 0.0) + part["stop"] - part["start"]
    return spent


def cluster_runs(records, client, partitions: int, repeats: int) -> dict:
    import dask.bag as db
    from distributed import get_task_stream

    from streamnb import distributed

    size = -(-len(records) // partitions)
    parts = [records[i:i + size] for i in range(0, len(records), size)]
    walls, scatters, breakdowns, cpus, model = [], [], [], [], None
    for run in range(repeats + 1):
        cpu_before = cluster_cpu(client)
        start = time.perf_counter()
        futures = client.scatter(parts)
        scattered = time.perf_counter()
        with get_task_stream(client) as stream:
            model = distributed.train(MultinomialNB(tokenizer=words), db.from_delayed(futures), split_every=4,
                                      scheduler=client)
        end = time.perf_counter()
        del futures
        cpu_after = cluster_cpu(client)
        if run:  # run 0 warms the workers up
            cpus.append({k: cpu_after[k] - cpu_before[k] for k in cpu_before})
            walls.append(end - start)
            scatters.append(scattered - start)
            breakdowns.append(task_times(stream.data))
    keys = sorted({k for b in breakdowns for k in b})
    return {"wall": statistics.median(walls), "scatter": statistics.median(scatters),
            "tasks": {k: statistics.median(b.get(k, 0.0) for b in breakdowns) for k in keys},
            "cpu": {k: statistics.median(c[k] for c in cpus) for k in cpus[0]}, "model": model}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="corpus folder or archive (default: $STREAMNB_SPAMASSASSIN)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--partitions", default="2,8,32", help="comma-separated partition counts")
    args = parser.parse_args(argv)
    import dask.bag as db
    from distributed import Client, LocalCluster

    from streamnb import distributed

    warnings.filterwarnings("ignore", message="Sending large graph")
    records = [(m.raw.decode("latin-1"), m.label) for m in load_spamassassin(args.corpus)]
    n = len(records)
    megabytes = sum(len(t) for t, _ in records) / 1e6
    print(f"corpus: {n} messages, {megabytes:.1f} MB of text; cores: {os.cpu_count()}; "
          f"load average at start: {os.getloadavg()[0]:.2f}")

    single = single_process(records, args.repeats)
    reference = single["model"]
    size = len(pickle.dumps(reference))
    pickle_time, _ = median_time(lambda: pickle.loads(pickle.dumps(reference)), args.repeats)
    print(f"\nsingle process: {single['total']:.2f} s = {n / single['total']:,.0f} msg/s "
          f"(tokenize {single['tokenize']:.2f} s, learn_many {single['learn']:.2f} s); "
          f"CPU {single['cpu']:.2f} s")
    print(f"final model: |V| = {reference.n_features:,}, pickled {size / 1e6:.1f} MB, "
          f"pickle round trip {pickle_time * 1000:.0f} ms")

    threaded, model = median_time(
        lambda: distributed.train(MultinomialNB(tokenizer=words), db.from_sequence(records, npartitions=8),
                                  scheduler="threads"), args.repeats)
    assert model.class_counts == reference.class_counts and model.n_features == reference.n_features
    print(f"threaded scheduler, 8 partitions: {threaded:.2f} s = {n / threaded:,.0f} msg/s "
          f"({single['total'] / threaded:.2f}x single process; tokenizing holds the GIL)")

    start = time.perf_counter()
    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=logging.ERROR)
    client = Client(cluster, set_as_default=False)
    print(f"\nLocalCluster, {args.workers} worker processes x 1 thread: start-up {time.perf_counter() - start:.2f} s "
          "(not counted below)")
    try:
        for partitions in [int(p) for p in args.partitions.split(",")]:
            run = cluster_runs(records, client, partitions, args.repeats)
            model = run["model"]
            assert model.class_counts == reference.class_counts and model.n_features == reference.n_features
            tasks = run["tasks"]
            learn = tasks.get("_learn_partition:compute", 0.0)
            merge = tasks.get("_merge_models:compute", 0.0)
            transfer = sum(v for k, v in tasks.items() if k.endswith(":transfer"))
            busy = (learn + merge + transfer) / args.workers
            print(f"  {partitions:3d} partitions: {run['wall']:.2f} s = {n / run['wall']:,.0f} msg/s "
                  f"({single['total'] / run['wall']:.2f}x single process)")
            print(f"       task seconds: partitions {learn:.2f}, merges {merge:.2f}, transfers {transfer:.2f}; "
                  f"scatter {run['scatter']:.2f} s; wall not covered by worker tasks "
                  f"{max(run['wall'] - busy, 0.0):.2f} s")
            cpu = run["cpu"]
            workers = sorted((v for k, v in cpu.items() if k not in ("client", "scheduler")), reverse=True)
            total = sum(cpu.values())
            scheduler = f"scheduler {cpu['scheduler']:.2f}" if "scheduler" in cpu else "scheduler in the client"
            print(f"       CPU seconds: client {cpu['client']:.2f}, {scheduler}, "
                  f"workers {' + '.join(f'{w:.2f}' for w in workers)} = {total:.2f} in all "
                  f"({total / single['cpu']:.2f}x the single process's {single['cpu']:.2f}); "
                  f"on idle cores: >= {cpu['client'] + workers[0]:.2f} s wall")
    finally:
        client.close()
        cluster.close()
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
