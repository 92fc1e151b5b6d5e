"""Whole stream, Bernoulli: prequential BernoulliNB on every message, streamnb against river.

river's BernoulliNB sums over its whole vocabulary on every prediction, so its cost per
message grows with the stream; the throughput section runs it on a prefix only, which
flatters it. Here both libraries stream all messages once (pre-tokenized dicts, the same
for both: naive Bayes cost only), predict then learn, and the CPU time is read every
``CHECKPOINT`` messages, so the table shows how the cost per message grows.

Measured once (one round): river takes several minutes on the whole stream.
"""

from __future__ import annotations

import gc
import time
from typing import Any

from . import common
from .contenders import river_model, streamnb_model

NAME = "fullstream"
TITLE = "Whole stream: BernoulliNB against river"
DEFAULT = True
REPEATED = False
CHECKPOINT, QUICK_CHECKPOINT = 500, 100


def prequential_checkpoints(model, xs, ys, every: int) -> list[float]:
    """Cumulative CPU seconds of predict_one + learn_one after every ``every`` messages (and the last)."""
    gc.collect()
    marks = []
    start = time.process_time()
    for i, (x, y) in enumerate(zip(xs, ys), 1):
        model.predict_one(x)
        model.learn_one(x, y)
        if i % every == 0 or i == len(xs):
            marks.append(time.process_time() - start)
    return marks


def run(ctx: common.Context) -> dict[str, Any]:
    corpus = ctx.corpus()
    n = len(corpus)  # the whole stream (--quick: the first messages only)
    dicts, labels = corpus.dicts, corpus.labels
    every = ctx.pick(CHECKPOINT, QUICK_CHECKPOINT)
    ctx.log(f"  {n} messages, one round; river first")
    river = prequential_checkpoints(river_model("BNB"), dicts, labels, every)
    ctx.log(f"  river BNB: {river[-1]:.1f} CPU s")
    ours = prequential_checkpoints(streamnb_model("BNB"), dicts, labels, every)
    ctx.log(f"  streamnb BNB: {ours[-1]:.2f} CPU s; ratio {river[-1] / ours[-1]:.0f}x")
    ends = [min(every * (k + 1), n) for k in range(len(ours))]
    return {"messages": n, "checkpoints": ends, "clock": common.CPU,
            "river_seconds": river, "streamnb_seconds": ours, "ratio": river[-1] / ours[-1]}


def markdown(data: dict[str, Any]) -> list[str]:
    ends, river, ours = data["checkpoints"], data["river_seconds"], data["streamnb_seconds"]
    lines = [
        f"All {data['messages']:,} messages in Date order as token dicts (streamnb's Tokenizer), predict then "
        "learn each, one round; CPU seconds (process_time). Each row is one slice of the stream.",
        "",
        "| messages | river BNB ms/msg | streamnb BNB ms/msg | river / streamnb |",
        "|---|---:|---:|---:|",
    ]
    start, r0, s0 = 0, 0.0, 0.0
    for end, r, s in zip(ends, river, ours):
        count = end - start
        lines.append(f"| {start + 1:,}-{end:,} | {(r - r0) * 1e3 / count:,.2f} | {(s - s0) * 1e3 / count:,.3f} | "
                     f"{(r - r0) / (s - s0):,.0f}x |")
        start, r0, s0 = end, r, s
    lines += ["", f"Whole stream: river {river[-1]:,.1f} s, streamnb {ours[-1]:,.2f} s: "
              f"{data['ratio']:,.0f}x ({data['messages'] / ours[-1]:,.0f} vs {data['messages'] / river[-1]:,.1f} msg/s)."]
    return lines


def targets(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 2: NB-only prequential BernoulliNB >= 300x river's, on the whole stream."""
    return [{"id": "bnb_dicts_whole_stream", "what": f"prequential BNB on token dicts vs river BernoulliNB "
             f"(whole stream, {data['messages']:,} messages, one round)",
             "value": data["ratio"], "op": ">=", "threshold": 300, "unit": "x"}]


if __name__ == "__main__":
    import sys

    from .suite import main

    raise SystemExit(main(["--only", NAME, *sys.argv[1:]]))
