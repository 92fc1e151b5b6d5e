"""Ceilings: what share of each message's time is the Python call itself, timed against river.

With the hot path in the compiled core, a prequential step from Python is two calls into it
(predict_one, then learn_one). What no implementation behind such calls can save is the
calls themselves; this section times that floor and the layers above it, over the whole
stream, in the same rounds as river:

- **two no-op calls**: per message, two calls of a ``_core`` method that does nothing of
  note (``Core.class_id(label)``: one dictionary lookup in Rust), with the message's label
  as argument: the Python loop and the crossing of the boundary, nothing else;
- **empty document**: ``predict_one`` then ``learn_one`` of the public API on an empty
  document (``""`` or ``{}``; the model is built with ``empty_documents="learn"``), so
  the Python layer (argument checks, clocks) and the core's fixed cost per call (class
  lookup, posterior over the classes, the returned label) are all there, and no token;
- **core calls**: the real documents straight into ``_core`` (``Core.predict_one(x, alpha)``,
  ``Core.learn_one(x, y, 1.0, 1.0)``), which is what the public API does once its Python
  layer has checked the arguments (no forgetting, no pruning: weight and age factor 1);
- **public API**: ``MultinomialNB.predict_one`` + ``learn_one``, as the throughput section.

Each from raw text (``tokenizer=Tokenizer()``) and on token dicts. The share of the call is
(two no-op calls) / (public API); river's time over the no-op calls is the ceiling: the
best ratio to river that any library making two Python calls per message could reach.
Clock: CPU time (process_time); median of the rounds, ratios taken round by round.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Sequence
from typing import Any

from . import common
from .bench_throughput import prequential
from .contenders import river_model, river_pipeline, streamnb_model

NAME = "ceilings"
TITLE = "Ceilings: the Python call itself, timed against river"
DEFAULT = True
INPUTS = ("text", "dicts")
RIVER = {"text": "river BagOfWords | MNB", "dicts": "river MNB"}
NOOP = "two no-op calls"
LAYERS = ("empty document", "core calls", "public API")


def noop_calls(xs: Sequence, ys: Sequence) -> float:
    """CPU seconds of two no-op calls into the core per message (the label as argument)."""
    core = streamnb_model("MNB")._core
    class_id = core.class_id
    gc.collect()
    start = time.process_time()
    for _x, y in zip(xs, ys):
        class_id(y)
        class_id(y)
    return time.process_time() - start


def empty_documents(input_: str, ys: Sequence) -> float:
    """CPU seconds of predict_one + learn_one (public API) on an empty document, once per message."""
    model = streamnb_model("MNB", "Tokenizer" if input_ == "text" else None, empty_documents="learn")
    empty = "" if input_ == "text" else {}
    return prequential(model, [empty] * len(ys), ys)[0]


def core_calls(xs: Sequence, ys: Sequence, input_: str) -> float:
    """CPU seconds of the core's predict_one + learn_one on every message, without the Python layer."""
    model = streamnb_model("MNB", "Tokenizer" if input_ == "text" else None)
    core, alpha = model._core, model.alpha
    predict, learn = core.predict_one, core.learn_one
    gc.collect()
    start = time.process_time()
    for x, y in zip(xs, ys):
        predict(x, alpha)
        learn(x, y, 1.0, 1.0)
    return time.process_time() - start


def public_api(xs: Sequence, ys: Sequence, input_: str) -> float:
    """CPU seconds of the public predict_one + learn_one on every message."""
    return prequential(streamnb_model("MNB", "Tokenizer" if input_ == "text" else None), xs, ys)[0]


def run(ctx: common.Context) -> dict[str, Any]:
    corpus = ctx.corpus()
    labels = corpus.labels
    inputs = {"text": corpus.texts, "dicts": corpus.dicts}
    contenders = {
        RIVER["text"]: lambda: prequential(river_pipeline("MNB"), inputs["text"], labels)[0],
        RIVER["dicts"]: lambda: prequential(river_model("MNB"), inputs["dicts"], labels)[0],
        NOOP: lambda: noop_calls(inputs["text"], labels),
    }
    for input_ in INPUTS:
        contenders[f"empty document ({input_})"] = lambda i=input_: empty_documents(i, labels)
        contenders[f"core calls ({input_})"] = lambda i=input_: core_calls(inputs[i], labels, i)
        contenders[f"public API ({input_})"] = lambda i=input_: public_api(inputs[i], labels, i)
    ctx.log(f"  {len(contenders)} timings x {ctx.repeats} rounds; {len(corpus)} messages")
    runs = common.rounds(contenders, ctx.repeats, ctx.log)
    out: dict[str, Any] = {"messages": len(corpus), "clock": common.CPU,
                           "seconds": {name: common.summary(values, common.CPU) for name, values in runs.items()},
                           "call_share": {}, "empty_share": {}, "python_layer_share": {}, "ceiling": {},
                           "ceiling_api": {}, "vs_river": {}}
    for input_ in INPUTS:
        full, river = runs[f"public API ({input_})"], runs[RIVER[input_]]
        out["call_share"][input_] = common.ratio(runs[NOOP], full)
        out["empty_share"][input_] = common.ratio(runs[f"empty document ({input_})"], full)
        out["python_layer_share"][input_] = common.summary(
            [(f - c) / f for f, c in zip(full, runs[f"core calls ({input_})"])])
        out["ceiling"][input_] = common.ratio(river, runs[NOOP])
        out["ceiling_api"][input_] = common.ratio(river, runs[f"empty document ({input_})"])
        out["vs_river"][input_] = common.ratio(river, full)
        ctx.log(f"  {input_}: the two calls are {100 * out['call_share'][input_]['median']:.1f}% of streamnb's "
                f"predict + learn; ceiling {out['ceiling'][input_]['median']:.0f}x river (streamnb "
                f"{out['vs_river'][input_]['median']:.1f}x)")
    return out


def percent(share: float) -> str:
    """A share in percent, with a decimal below 10%."""
    return f"{100 * share:.1f}%" if share < 0.1 else f"{100 * share:.0f}%"


def markdown(data: dict[str, Any]) -> list[str]:
    n = data["messages"]
    lines = [f"{n:,} messages, MultinomialNB; CPU microseconds per message (a predict_one and a learn_one), median "
             "of the rounds (min-max).", "",
             "| step | us/msg (min-max) | share of streamnb's predict + learn |", "|---|---:|---:|"]
    for name, stat in data["seconds"].items():
        input_ = "text" if "text" in name or name == RIVER["text"] else "dicts"
        share = "" if name.startswith("river") else (
            percent(stat["median"] / data["seconds"][f"public API ({input_})"]["median"])
            if name != NOOP else " / ".join(f"{percent(data['call_share'][i]['median'])} ({i})" for i in INPUTS))
        lines.append(f"| {common.cell(name)} | {stat['median'] * 1e6 / n:,.2f} "
                     f"({stat['min'] * 1e6 / n:,.2f}-{stat['max'] * 1e6 / n:,.2f}) | {share} |")
    lines.append("")
    for input_, label in (("text", "From raw text"), ("dicts", "On token dicts")):
        call, empty, layer = data["call_share"][input_], data["empty_share"][input_], data["python_layer_share"][input_]
        ceiling, api, now = data["ceiling"][input_], data["ceiling_api"][input_], data["vs_river"][input_]
        lines.append(
            f"{label}: the Python call itself (two no-op calls) is {100 * call['median']:.1f}% of streamnb's predict "
            f"+ learn ({100 * call['min']:.1f}-{100 * call['max']:.1f}%); with the public API's fixed cost (empty "
            f"document) {100 * empty['median']:.0f}%; the Python layer above the core calls "
            f"{100 * layer['median']:.0f}%. Ceiling: river / two no-op calls = {ceiling['median']:,.0f}x "
            f"({ceiling['min']:,.0f}-{ceiling['max']:,.0f}); river / empty document = {api['median']:,.0f}x; "
            f"streamnb now {now['median']:.1f}x.")
        lines.append("")
    return lines[:-1]


if __name__ == "__main__":
    import sys

    from .suite import main

    raise SystemExit(main(["--only", NAME, *sys.argv[1:]]))
