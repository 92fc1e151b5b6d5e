"""Distributed training (Dask) against single-process learn_many; not run by default (``--only distributed``).

Every figure is end to end from raw text in this process to a trained model in this
process, tokenization included (streamnb's Tokenizer everywhere), on the whole stream:

1. single process: ``MultinomialNB(tokenizer=Tokenizer()).learn_many(texts, labels)``;
2. Dask's threaded scheduler (``distributed.train``, ``scheduler="threads"``, 8 partitions);
3. a LocalCluster of 2 worker processes, one thread each: scatter the partitions to the
   workers, train, bring the model back. Cluster start-up is reported apart.

For the cluster, the task stream splits the wall time: partition tasks (tokenize + learn),
merge tasks, transfers between workers; the rest is scheduling, the scatter and the final
model's trip back. Wall times depend on the machine's load, so CPU seconds are reported as
well: ``time.process_time`` of this process, of the scheduler and of each worker process,
before and after a run. Their sum against the single process's CPU seconds is the overhead
of going distributed whatever the load. Medians of the rounds after one warm-up run
(fresh workers import numpy/scipy/streamnb on their first task).
"""

from __future__ import annotations

import logging
import os
import pickle
import time
import warnings
from typing import Any

from streamnb import MultinomialNB, Tokenizer

from . import common

NAME = "distributed"
TITLE = "Distributed training (Dask)"
DEFAULT = False
WORKERS = 2
PARTITIONS, QUICK_PARTITIONS = (2, 8, 32), (2,)


def wall_and_cpu(function) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of this process, result) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = function()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def single_process(texts, labels, repeats: int) -> dict[str, Any]:
    tokenizer = Tokenizer()
    walls, cpus, tokenize, learn, model = [], [], [], [], None
    for _ in range(repeats):
        wall, _, features = wall_and_cpu(lambda: [tokenizer(t) for t in texts])
        tokenize.append(wall)
        wall, _, model = wall_and_cpu(lambda: MultinomialNB().learn_many(features, labels))
        learn.append(wall)
        wall, cpu, _ = wall_and_cpu(lambda: MultinomialNB(tokenizer=tokenizer).learn_many(texts, labels))
        walls.append(wall)
        cpus.append(cpu)
    return {"tokenize": common.summary(tokenize, common.WALL), "learn_many": common.summary(learn, common.WALL),
            "total": common.summary(walls, common.WALL), "cpu": common.summary(cpus, common.CPU), "model": model}


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


def cluster_runs(records, client, partitions: int, repeats: int) -> dict[str, Any]:
    import dask.bag as db
    from distributed import get_task_stream

    from streamnb.integrations import distributed

    size = -(-len(records) // partitions)
    parts = [records[i:i + size] for i in range(0, len(records), size)]
    walls, scatters, breakdowns, cpus, model = [], [], [], [], None
    for run in range(repeats + 1):
        cpu_before = cluster_cpu(client)
        start = time.perf_counter()
        futures = client.scatter(parts, hash=False)  # fresh keys: the last run's may still be releasing
        scattered = time.perf_counter()
        with get_task_stream(client) as stream:
            model = distributed.train(MultinomialNB(tokenizer=Tokenizer()), db.from_delayed(futures), split_every=4,
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
    tasks = {k: common.summary([b.get(k, 0.0) for b in breakdowns], common.WALL)["median"] for k in keys}
    cpu = {k: common.summary([c[k] for c in cpus], common.CPU)["median"] for k in cpus[0]}
    return {"wall": common.summary(walls, common.WALL), "scatter": common.summary(scatters, common.WALL)["median"],
            "tasks": tasks, "cpu": cpu, "model": model}


def run(ctx: common.Context) -> dict[str, Any]:
    import dask.bag as db
    from distributed import Client, LocalCluster

    from streamnb.integrations import distributed

    warnings.filterwarnings("ignore", message="Sending large graph")
    corpus = ctx.corpus()
    texts, labels = corpus.texts, corpus.labels
    records = list(zip(texts, labels))
    single = single_process(texts, labels, ctx.repeats)
    reference = single.pop("model")
    pickled = len(pickle.dumps(reference))
    ctx.log(f"  single process: {single['total']['median']:.2f} s wall, CPU {single['cpu']['median']:.2f} s")

    threaded = []
    for _ in range(ctx.repeats):
        wall, _, model = wall_and_cpu(lambda: distributed.train(
            MultinomialNB(tokenizer=Tokenizer()), db.from_sequence(records, npartitions=8), scheduler="threads"))
        threaded.append(wall)
        assert model.class_counts == reference.class_counts and model.n_features == reference.n_features
    start = time.perf_counter()
    cluster = LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=True, dashboard_address=None,
                           silence_logs=logging.ERROR)
    client = Client(cluster, set_as_default=False)
    startup = time.perf_counter() - start
    runs = {}
    try:
        for partitions in ctx.pick(PARTITIONS, QUICK_PARTITIONS):
            result = cluster_runs(records, client, partitions, ctx.repeats)
            model = result.pop("model")
            assert model.class_counts == reference.class_counts and model.n_features == reference.n_features
            runs[str(partitions)] = result
            ctx.log(f"  cluster, {partitions} partitions: {result['wall']['median']:.2f} s wall")
    finally:
        client.close()
        cluster.close()
    return {"messages": len(texts), "workers": WORKERS, "n_features": reference.n_features, "pickled_bytes": pickled,
            "single_process": single, "threaded_8_partitions": common.summary(threaded, common.WALL),
            "cluster_startup_s": startup, "cluster": runs}


def markdown(data: dict[str, Any]) -> list[str]:
    single = data["single_process"]
    total = single["total"]["median"]
    lines = [f"{data['messages']:,} messages from raw text to a trained model in this process (wall seconds, "
             f"median of the rounds; CPU seconds summed over the processes). Final model |V| = "
             f"{data['n_features']:,}, pickled {data['pickled_bytes'] / 1e6:.1f} MB.", "",
             "| run | wall s | vs single process | CPU s (all processes) |", "|---|---:|---:|---:|",
             f"| single process (tokenize {single['tokenize']['median']:.2f} s + learn_many "
             f"{single['learn_many']['median']:.2f} s) | {total:.2f} | 1 | {single['cpu']['median']:.2f} |",
             f"| Dask threads, 8 partitions | {data['threaded_8_partitions']['median']:.2f} | "
             f"{total / data['threaded_8_partitions']['median']:.2f}x | - |"]
    for partitions, run in data["cluster"].items():
        wall = run["wall"]["median"]
        lines.append(f"| LocalCluster {data['workers']} workers, {partitions} partitions | {wall:.2f} | "
                     f"{total / wall:.2f}x | {sum(run['cpu'].values()):.2f} |")
    lines += ["", f"Cluster start-up (not counted above): {data['cluster_startup_s']:.2f} s. On 2 cores a cluster "
              "does not beat one process: the corpus is shipped, and partition models are pickled and merged."]
    return lines


if __name__ == "__main__":
    import sys

    from .suite import main

    raise SystemExit(main(["--only", NAME, *sys.argv[1:]]))
