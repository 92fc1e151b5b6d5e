"""Memory of the trained state after learning the whole stream from raw text, streamnb vs river.

Each figure comes from a fresh Python process per library and model (``--child``), so one
library's allocations, caches and freed-but-kept pages never show in the other's figures.
The child loads the corpus, imports its library, then:

1. RSS delta: resident set size after training minus before, each taken after a garbage
   collection and glibc's ``malloc_trim(0)`` (free pages go back to the OS), so it counts
   the pages the trained model keeps, fragmentation included, as the OS sees them.
2. tracemalloc: trains a second, identical model with tracemalloc on and reports the bytes
   still allocated once training is over. The token strings a model keeps (its vocabulary)
   are created while it learns, so they are counted, for both libraries.

streamnb learns with ``tokenizer=Tokenizer()``; river with ``BagOfWords().transform_one``
feeding ``learn_one`` (each message tokenized once). A third row, "floor MNB", is the least
any store keyed by token strings can hold: the same vocabulary as a plain ``dict`` token ->
int id (the strings, the dict, the id ints) plus one exact |V| x K float64 count table, and
nothing else (no document counts, no stamps, no growth room). tracemalloc is deterministic: it runs
in the first round only; RSS is the median of the rounds, with min and max.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from . import common

NAME = "memory"
TITLE = "Memory of the trained state (whole stream)"
DEFAULT = True
MODELS, QUICK_MODELS = ("MNB", "BNB"), ("MNB",)  # streamnb's CNB state is MNB's; river's adds one dict
LIBRARIES = ("streamnb", "river")
ROOT = Path(__file__).resolve().parent.parent


# -- the child process ------------------------------------------------------------------------

def release_free_memory() -> None:
    """Hand the C allocator's free pages back to the OS (glibc's malloc_trim; elsewhere nothing).

    Without it, pages freed earlier (loading the corpus) and then reused by the model would
    not show in the RSS delta, and garbage freed during training would.
    """
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def child(library: str, model: str, corpus: str | None, limit: int | None, trace: bool) -> dict[str, Any]:
    """Train one model on the stream in this (fresh) process and measure it."""
    from .data import load_corpus

    stream = load_corpus(corpus, limit)
    texts, labels = stream.texts, stream.labels  # the stream stays alive: nothing is freed before the baseline
    if library == "floor":
        import numpy as np

        from streamnb import Tokenizer

        def train():
            tokenizer, vocabulary = Tokenizer(), {}
            for text in texts:
                for token in tokenizer(text):
                    vocabulary.setdefault(token, len(vocabulary))
            return vocabulary, np.zeros((len(vocabulary), 2))
    elif library == "streamnb":
        from .contenders import streamnb_model

        def train():
            learner = streamnb_model(model, "Tokenizer")
            for text, label in zip(texts, labels):
                learner.learn_one(text, label)
            return learner
    else:
        from river.feature_extraction import BagOfWords

        from .contenders import river_model

        def train():
            bag, learner = BagOfWords(), river_model(model)
            for text, label in zip(texts, labels):
                learner.learn_one(bag.transform_one(text), label)
            return learner

    gc.collect()
    release_free_memory()
    before = common.rss_bytes()
    trained = train()
    gc.collect()
    release_free_memory()
    after = common.rss_bytes()
    out: dict[str, Any] = {"rss_bytes": None if before is None else after - before}
    if library == "floor":
        out["n_features"] = len(trained[0])
        out["count_arrays_bytes"] = trained[1].nbytes
    elif library == "streamnb":
        out["n_features"] = trained.n_features
        out["count_arrays_bytes"] = trained.store.nbytes()
    else:
        out["n_features"] = len(trained.feature_counts)
    if trace:
        del trained
        out["tracemalloc_bytes"], _ = common.traced_bytes(train)
    return out


def run_child(library: str, model: str, ctx: common.Context, trace: bool) -> dict[str, Any]:
    """Run :func:`child` in a fresh interpreter and return what it measured."""
    command = [sys.executable, "-m", "benchmarks.bench_memory", "--child", library, model]
    if ctx.corpus_path:
        command += ["--corpus", ctx.corpus_path]
    if ctx.quick:
        from .data import QUICK_MESSAGES

        command += ["--limit", str(QUICK_MESSAGES)]
    if trace:
        command.append("--trace")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"memory child {library} {model} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- the section ---------------------------------------------------------------------------

def run(ctx: common.Context) -> dict[str, Any]:
    models = ctx.pick(MODELS, QUICK_MODELS)
    corpus = ctx.corpus()
    results: dict[str, list[dict[str, Any]]] = {}
    for r in range(ctx.repeats):
        for model in models:
            for library in (LIBRARIES if r % 2 == 0 else LIBRARIES[::-1]):
                results.setdefault(f"{library} {model}", []).append(run_child(library, model, ctx, trace=r == 0))
        results.setdefault("floor MNB", []).append(run_child("floor", "MNB", ctx, trace=r == 0))
        ctx.log(f"  round {r + 1}/{ctx.repeats} done")
    rows = {}
    for name, runs in results.items():
        library, model = name.split(" ", 1)
        first = runs[0]
        rows[name] = {"library": library, "model": model, "n_features": first["n_features"],
                      "tracemalloc_bytes": first["tracemalloc_bytes"],
                      "rss_bytes": common.summary([run["rss_bytes"] for run in runs]),
                      "count_arrays_bytes": first.get("count_arrays_bytes")}
    ratios = {}
    for model in models:
        ours, theirs = rows[f"streamnb {model}"], rows[f"river {model}"]
        ratios[model] = {"tracemalloc": ours["tracemalloc_bytes"] / theirs["tracemalloc_bytes"],
                         "rss": ours["rss_bytes"]["median"] / theirs["rss_bytes"]["median"]}
        ctx.log(f"  {model}: streamnb / river tracemalloc {ratios[model]['tracemalloc']:.2f}, "
                f"RSS {ratios[model]['rss']:.2f}")
    floor = rows["floor MNB"]["tracemalloc_bytes"] / rows["river MNB"]["tracemalloc_bytes"]
    ctx.log(f"  floor / river MNB tracemalloc {floor:.2f}")
    return {"messages": len(corpus), "rounds": ctx.repeats, "rows": rows, "ratios": ratios, "floor_vs_river": floor}


def markdown(data: dict[str, Any]) -> list[str]:
    mib = 2**20
    lines = [f"After learning all {data['messages']:,} messages from raw text; one fresh process per library and "
             f"model. tracemalloc: bytes still allocated by training (vocabulary strings included; deterministic, "
             f"one run). RSS delta: median of {data['rounds']} processes (min-max).", "",
             "| model | \\|V\\| | tracemalloc MiB | RSS delta MiB (min-max) | of which count arrays |",
             "|---|---:|---:|---:|---:|"]
    for name, row in data["rows"].items():
        rss = row["rss_bytes"]
        arrays = "" if row["count_arrays_bytes"] is None else f"{row['count_arrays_bytes'] / mib:,.1f} MiB"
        lines.append(f"| {common.cell(name)} | {row['n_features']:,} | {row['tracemalloc_bytes'] / mib:,.1f} | "
                     f"{rss['median'] / mib:,.1f} ({rss['min'] / mib:,.1f}-{rss['max'] / mib:,.1f}) | {arrays} |")
    lines += ["", "streamnb / river: " + "; ".join(
        f"{model} {r['tracemalloc']:.2f} (tracemalloc), {r['rss']:.2f} (RSS)" for model, r in data["ratios"].items())
        + ". The vocabulary itself (token strings and the token -> id dict) is part of both states.",
        "", f"The floor (a str -> int dict of the same vocabulary plus one exact |V| x 2 float64 table) is "
        f"{data['floor_vs_river']:.2f}x river's MNB state: no store that keys its counts by the token strings in "
        "a Python dict can go below that."]
    return lines


def targets(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"id": "memory_vs_river", "what": "memory of the trained MNB state vs river (tracemalloc, whole stream)",
             "value": data["ratios"]["MNB"]["tracemalloc"], "op": "<=", "threshold": 0.4, "unit": "x"}]


def plots(data: dict[str, Any], out_dir) -> list[str]:
    from .plotting import bar_chart

    mib = 2**20
    traced = [(name, {"median": row["tracemalloc_bytes"] / mib}, row["library"]) for name, row in data["rows"].items()]
    rss = [(name, {k: row["rss_bytes"][k] / mib for k in ("median", "min", "max")}, row["library"])
           for name, row in data["rows"].items()]
    path = bar_chart({"tracemalloc: bytes held after training": traced, "RSS delta (fresh process each)": rss},
                     out_dir / "memory.png", xlabel="MiB",
                     title=f"Trained state after {data['messages']:,} messages from raw text")
    return [path.name]


def main(argv: list[str] | None = None) -> int:
    """``--child LIBRARY MODEL [--corpus PATH] [--limit N] [--trace]``: measure one model; else run the section."""
    argv = sys.argv[1:] if argv is None else argv
    if "--child" not in argv:
        from .suite import main as suite_main

        return suite_main(["--only", NAME, *argv])
    parser = argparse.ArgumentParser(description="one memory measurement (used by the suite)")
    parser.add_argument("--child", nargs=2, metavar=("LIBRARY", "MODEL"), required=True)
    parser.add_argument("--corpus")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--trace", action="store_true")
    args = parser.parse_args(argv)
    library, model = args.child
    print(json.dumps(child(library, model, args.corpus, args.limit, args.trace)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
