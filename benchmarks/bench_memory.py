"""Memory of the trained state after learning the whole stream from raw text: RSS growth in a fresh process.

streamnb's counts and vocabulary live in the compiled core, whose allocations tracemalloc
does not see; so the figure compared is what the operating system sees. Each run is a
fresh Python process per library and model (``--child``), so one library's allocations,
caches and freed-but-kept pages never show in the other's. The child:

1. loads the corpus and imports its library, then trains a throwaway model on the first
   messages and drops it (lazy imports and one-time caches happen before the baseline);
2. records its resident set size (RSS), after a garbage collection and glibc's
   ``malloc_trim(0)`` (free pages go back to the OS);
3. trains the model on the whole stream, collects and trims again, records RSS: the growth
   is the memory the trained model keeps, Rust and Python heaps alike, fragmentation and
   growth room included, as the OS counts it;
4. reports streamnb's own account of the memory its core holds (``model.nbytes``) and, in
   the first round, tracemalloc for a second, identical model: the bytes still allocated on
   Python's heaps once training is over (all of river's state; for streamnb only the Python
   side, the core's allocations being invisible to it).

streamnb learns with ``tokenizer=Tokenizer()``; river with ``BagOfWords().transform_one``
feeding ``learn_one`` (each message tokenized once). RSS growth is the median of the rounds
(one process each), with min and max.
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
WARM_UP = 20  # messages the throwaway model learns before the baseline
ROOT = Path(__file__).resolve().parent.parent


# -- the child process ------------------------------------------------------------------------

def release_free_memory() -> None:
    """Hand the C allocator's free pages back to the OS (glibc's malloc_trim; elsewhere nothing).

    Without it, pages freed earlier (loading the corpus) and then reused by the model would
    not show in the RSS growth, and garbage freed during training would.
    """
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def settled_rss() -> int | None:
    """RSS after a garbage collection and a trim of the allocator's free pages."""
    gc.collect()
    release_free_memory()
    return common.rss_bytes()


def child(library: str, model: str, corpus: str | None, limit: int | None, trace: bool) -> dict[str, Any]:
    """Train one model on the stream in this (fresh) process and measure it."""
    from .data import load_corpus

    stream = load_corpus(corpus, limit)
    texts, labels = stream.texts, stream.labels  # the stream stays alive: nothing is freed before the baseline
    if library == "streamnb":
        from .contenders import streamnb_model

        def train(n=None):
            learner = streamnb_model(model, "Tokenizer")
            for text, label in zip(texts[:n], labels[:n]):
                learner.learn_one(text, label)
            return learner
    else:
        from river.feature_extraction import BagOfWords

        from .contenders import river_model

        def train(n=None):
            bag, learner = BagOfWords(), river_model(model)
            for text, label in zip(texts[:n], labels[:n]):
                learner.learn_one(bag.transform_one(text), label)
            return learner

    train(WARM_UP)
    before = settled_rss()
    trained = train()
    after = settled_rss()
    out: dict[str, Any] = {"rss_bytes": None if before is None or after is None else after - before}
    if library == "streamnb":
        out["n_features"] = trained.n_features
        out["nbytes"] = trained.nbytes
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
    if common.rss_bytes() is None:
        raise RuntimeError("the memory section needs /proc/self/statm (Linux) to read the RSS")
    results: dict[str, list[dict[str, Any]]] = {}
    for r in range(ctx.repeats):
        for model in models:
            for library in (LIBRARIES if r % 2 == 0 else LIBRARIES[::-1]):
                results.setdefault(f"{library} {model}", []).append(run_child(library, model, ctx, trace=r == 0))
        ctx.log(f"  round {r + 1}/{ctx.repeats} done")
    rows = {}
    for name, runs in results.items():
        library, model = name.split(" ", 1)
        first = runs[0]
        rows[name] = {"library": library, "model": model, "n_features": first["n_features"],
                      "rss_bytes": common.summary([run["rss_bytes"] for run in runs]),
                      "tracemalloc_bytes": first["tracemalloc_bytes"], "nbytes": first.get("nbytes")}
    ratios = {}
    for model in models:
        ours, theirs = rows[f"streamnb {model}"], rows[f"river {model}"]
        ratios[model] = {"rss": ours["rss_bytes"]["median"] / theirs["rss_bytes"]["median"],
                         "nbytes_vs_river_tracemalloc": ours["nbytes"] / theirs["tracemalloc_bytes"],
                         "nbytes_vs_rss": ours["nbytes"] / ours["rss_bytes"]["median"]}
        ctx.log(f"  {model}: streamnb / river RSS growth {ratios[model]['rss']:.2f}; streamnb nbytes / its RSS growth "
                f"{ratios[model]['nbytes_vs_rss']:.2f}")
    return {"messages": len(corpus), "rounds": ctx.repeats, "warm_up": WARM_UP, "rows": rows, "ratios": ratios}


def markdown(data: dict[str, Any]) -> list[str]:
    mib = 2**20
    lines = [f"After learning all {data['messages']:,} messages from raw text; one fresh process per library, model "
             f"and round. RSS growth: median of {data['rounds']} processes (min-max). nbytes: streamnb's own count of "
             "the memory its core holds (model.nbytes). tracemalloc: bytes still allocated on Python's heaps by "
             "training (first round; for streamnb only its Python side).", "",
             "| model | \\|V\\| | RSS growth MiB (min-max) | nbytes MiB | tracemalloc MiB |",
             "|---|---:|---:|---:|---:|"]
    for name, row in data["rows"].items():
        rss = row["rss_bytes"]
        nbytes = "" if row.get("nbytes") is None else f"{row['nbytes'] / mib:,.1f}"
        lines.append(f"| {common.cell(name)} | {row['n_features']:,} | {rss['median'] / mib:,.1f} "
                     f"({rss['min'] / mib:,.1f}-{rss['max'] / mib:,.1f}) | {nbytes} | "
                     f"{row['tracemalloc_bytes'] / mib:,.1f} |")
    lines += ["", "streamnb / river, RSS growth: " + "; ".join(f"{model} {r['rss']:.2f}" for model, r in
                                                              data["ratios"].items())
              + ". streamnb's nbytes / its RSS growth: " + "; ".join(
                  f"{model} {r['nbytes_vs_rss']:.2f}" for model, r in data["ratios"].items())
              + " (the vocabulary, tokens included, is part of both libraries' state)."]
    return lines


def targets(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 13: the trained MNB state <= 0.3x river's, RSS growth in a fresh process; issue 35: <= 0.28x again."""
    return [{"id": "memory_vs_river", "what": "memory of the trained MNB state vs river (RSS growth in a fresh "
             "process, whole stream)", "value": data["ratios"]["MNB"]["rss"], "op": "<=", "threshold": 0.28,
             "unit": "x"}]


def plots(data: dict[str, Any], out_dir) -> list[str]:
    from .plotting import bar_chart

    mib = 2**20
    rss = [(name, {k: row["rss_bytes"][k] / mib for k in ("median", "min", "max")}, row["library"])
           for name, row in data["rows"].items()]
    held = [(f"{name} (nbytes)" if row.get("nbytes") is not None else f"{name} (tracemalloc)",
             {"median": (row["nbytes"] if row.get("nbytes") is not None else row["tracemalloc_bytes"]) / mib},
             row["library"]) for name, row in data["rows"].items()]
    path = bar_chart({"RSS growth (fresh process each)": rss,
                      "held by the model: streamnb's nbytes, river's tracemalloc": held},
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
