"""Whole stream: prequential BernoulliNB and ComplementNB on every message, streamnb against river.

river's BernoulliNB and ComplementNB walk their whole vocabulary (times the classes) on
every prediction, so their cost per message grows with the stream and a prefix flatters
them. Here every ratio is over all messages, predict then learn each, from raw text
(streamnb's ``Tokenizer`` against river's ``BagOfWords() | model``) and on token dicts (the
same dicts for both libraries: naive Bayes cost only). CPU time is read at checkpoints
(every 500 messages), so the tables show how the cost per message grows.

- streamnb: every message, timed as a whole, in each round (median of the rounds).
- river BernoulliNB on token dicts: every message, timed as a whole, one run (about 11
  minutes): the exact figure.
- river, every model and input (sampled): river learns every message, in order, exactly as
  in a full run; its predictions are timed on every ``STRIDE``-th message only (the one in
  the middle of each run of ``STRIDE``) and skipped for the others. Its predictions read
  the counts and change nothing (tests/test_benchmarks.py checks that), so the model each
  sampled prediction sees is exactly the one a full run would give it there. Each
  checkpoint slice is estimated as (its learn_one time, all measured) + (its slice size x
  the mean time of its sampled predictions): a systematic sample of a cost that grows
  smoothly with the vocabulary. The same estimate for river's BernoulliNB on token dicts,
  set against its exact run, shows the error of the method; ComplementNB, whose exact run
  would take about 25 minutes, is only ever estimated.

river runs once per series; streamnb's rounds are spread over the section (before, among
and after river's runs), so that their median sees the load river saw.
"""

from __future__ import annotations

import gc
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from . import common
from .contenders import river_model, river_pipeline, streamnb_inputs, streamnb_model

NAME = "fullstream"
TITLE = "Whole stream: BernoulliNB and ComplementNB against river"
DEFAULT = True
CHECKPOINT, QUICK_CHECKPOINT = 500, 100
STRIDE, QUICK_STRIDE = 20, 5
MODELS = ("BNB", "CNB")
INPUTS = ("text", "dicts")
EXACT = ("BNB", "dicts")  # the one river series also run in full (the check of the sampled estimate)


def prequential_checkpoints(model, xs: Sequence, ys: Sequence, every: int) -> list[float]:
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


def sampled_prequential(model, xs: Sequence, ys: Sequence, every: int, stride: int) -> dict[str, list]:
    """Learn every message; time each learn_one and predict_one on every ``stride``-th message only.

    Per checkpoint slice: CPU seconds of all its learn_one calls, of its sampled predict_one
    calls, and how many were sampled. The sampled messages are those at stride // 2,
    stride + stride // 2, ... (0-based), the middle of each run of ``stride``; the last
    message of the stream is sampled too when a slice would have none.
    """
    clock = time.process_time
    learn, predict, sampled = [], [], []
    slice_learn = slice_predict = 0.0
    slice_sampled = 0
    offset = stride // 2
    gc.collect()
    for i, (x, y) in enumerate(zip(xs, ys)):
        end_of_slice = (i + 1) % every == 0 or i + 1 == len(xs)
        if i % stride == offset or (end_of_slice and slice_sampled == 0):
            start = clock()
            model.predict_one(x)
            slice_predict += clock() - start
            slice_sampled += 1
        start = clock()
        model.learn_one(x, y)
        slice_learn += clock() - start
        if end_of_slice:
            learn.append(slice_learn)
            predict.append(slice_predict)
            sampled.append(slice_sampled)
            slice_learn = slice_predict = 0.0
            slice_sampled = 0
    return {"learn_seconds": learn, "sampled_predict_seconds": predict, "sampled": sampled}


def estimate(sampled: dict[str, list], sizes: Sequence[int]) -> list[float]:
    """Estimated CPU seconds of each slice: its learning (measured) + size x mean sampled prediction."""
    return [learn + size * predict / n for learn, predict, n, size in
            zip(sampled["learn_seconds"], sampled["sampled_predict_seconds"], sampled["sampled"], sizes)]


def cumulative(values: Sequence[float]) -> list[float]:
    total, out = 0.0, []
    for value in values:
        total += value
        out.append(total)
    return out


def slices(ends: Sequence[int]) -> list[int]:
    """Sizes of the checkpoint slices ending at ``ends``."""
    return [end - start for start, end in zip([0, *ends[:-1]], ends)]


def series_key(model: str, input_: str) -> str:
    return f"{model} {input_}"


def run(ctx: common.Context) -> dict[str, Any]:
    corpus = ctx.corpus()
    n = len(corpus)  # the whole stream (--quick: the first messages only)
    labels = corpus.labels
    _ = corpus.dicts  # tokenized once, untimed
    every, stride = ctx.pick(CHECKPOINT, QUICK_CHECKPOINT), ctx.pick(STRIDE, QUICK_STRIDE)
    ends = [min(every * (k + 1), n) for k in range((n + every - 1) // every)]
    sizes = slices(ends)
    inputs = {"text": corpus.texts, "dicts": corpus.dicts}

    # streamnb: every series in every round (cheap)
    def streamnb_series(model: str, input_: str):
        tokenizer = "Tokenizer" if input_ == "text" else None
        xs = streamnb_inputs(corpus, tokenizer)
        return lambda: prequential_checkpoints(streamnb_model(model, tokenizer), xs, labels, every)

    contenders = {series_key(m, i): streamnb_series(m, i) for m in MODELS for i in INPUTS}

    river: dict[str, dict[str, Any]] = {}
    exact: dict[str, dict[str, Any]] = {}

    def sampled_job(model: str, input_: str):
        def job():
            key = series_key(model, input_)
            make = river_pipeline if input_ == "text" else river_model
            clock = time.perf_counter()
            sample = sampled_prequential(make(model), inputs[input_], labels, every, stride)
            river[key] = {"method": "sampled", **sample, "checkpoints": cumulative(estimate(sample, sizes)),
                          "wall_seconds": time.perf_counter() - clock}
            ctx.log(f"  river {key}, predictions timed on 1 message in {stride}: "
                    f"{river[key]['checkpoints'][-1]:.1f} CPU s estimated ({river[key]['wall_seconds']:.0f} s wall)")
        return job

    def exact_job():
        key = series_key(*EXACT)
        clock = time.perf_counter()
        marks = prequential_checkpoints(river_model(EXACT[0]), inputs[EXACT[1]], labels, every)
        exact[key] = {"method": "exact", "checkpoints": marks, "wall_seconds": time.perf_counter() - clock}
        ctx.log(f"  river {key}, every prediction timed: {marks[-1]:.1f} CPU s ({exact[key]['wall_seconds']:.0f} s "
                "wall)")

    jobs = [sampled_job(m, i) for m in MODELS for i in INPUTS] + [exact_job]
    # streamnb's rounds are spread over the section (before, among and after river's runs), so
    # their median sees the load river saw
    at = Counter(round(k * len(jobs) / (ctx.repeats - 1)) if ctx.repeats > 1 else 0 for k in range(ctx.repeats))
    ctx.log(f"  {n} messages, checkpoints every {every}; river: {len(jobs)} runs, streamnb: {len(contenders)} series "
            f"x {ctx.repeats} rounds spread among them")
    runs: dict[str, list[list[float]]] = {key: [] for key in contenders}
    names, done = list(contenders), 0
    for j in range(len(jobs) + 1):
        for _ in range(at[j]):
            shift = done % len(names)  # the first of a round rotates, as in common.rounds
            for name in names[shift:] + names[:shift]:
                runs[name].append(contenders[name]())
            done += 1
        if j < len(jobs):
            jobs[j]()
    streamnb = {}
    for key, marks in runs.items():
        totals = [m[-1] for m in marks]
        median_run = marks[totals.index(sorted(totals)[(len(totals) - 1) // 2])]
        streamnb[key] = {"seconds": common.summary(totals, common.CPU), "checkpoints": median_run}
    exact_key = series_key(*EXACT)
    error = river[exact_key]["checkpoints"][-1] / exact[exact_key]["checkpoints"][-1] - 1
    ctx.log(f"  the sampled estimate of river {exact_key} is off its exact run by {100 * error:+.1f}%")

    ratios = {}
    for key in river:
        ours = streamnb[key]["seconds"]["median"]
        ratios[key] = {"river_method": "sampled", "value": river[key]["checkpoints"][-1] / ours}
    ratios[exact_key] = {"river_method": "exact",
                         "value": exact[exact_key]["checkpoints"][-1] / streamnb[exact_key]["seconds"]["median"],
                         "sampled_value": ratios[exact_key]["value"]}
    for key, r in ratios.items():
        ctx.log(f"  {key}: river / streamnb {r['value']:,.0f}x ({r['river_method']})")
    return {"messages": n, "checkpoints": ends, "stride": stride, "clock": common.CPU, "streamnb": streamnb,
            "river": river, "river_exact": exact, "estimate_error": error, "ratios": ratios}


# -- report --------------------------------------------------------------------------------

def _per_message(marks: Sequence[float], sizes: Sequence[int]) -> list[float]:
    """ms per message in each slice, from cumulative seconds."""
    return [1e3 * (b - a) / size for a, b, size in zip([0.0, *marks[:-1]], marks, sizes)]


def markdown(data: dict[str, Any]) -> list[str]:
    ends, stride = data["checkpoints"], data["stride"]
    sizes = slices(ends)
    streamnb, river, exact = data["streamnb"], data["river"], data["river_exact"]
    lines = [
        f"All {data['messages']:,} messages in Date order, predict then learn each; CPU seconds (process_time); "
        "each row of a table is one slice of the stream. streamnb: every message, median of the rounds, which are "
        "spread over the section (before, among and after river's runs) so that they see the load river saw.", "",
        f"river, sampled: river learns every message, in order, exactly as in a full run, and its predict_one is "
        f"timed on 1 message in {stride} (the middle one of each run of {stride}) and skipped for the others. Its "
        "predictions only read the counts (tests/test_benchmarks.py checks that a prediction leaves river's model "
        "unchanged), so each sampled prediction sees exactly the model a full run would give it there. A slice "
        "costs its learn_one time (every call measured) plus its size times the mean time of its sampled "
        "predictions: a systematic sample of a cost that grows smoothly with the vocabulary. The check of the "
        "method is river's BernoulliNB on token dicts, also run with every prediction timed (the ratio to "
        "streamnb uses that exact run); ComplementNB, whose full run would take about 25 minutes, is only "
        "estimated.", ""]
    for model in MODELS:
        for input_ in INPUTS:
            key = series_key(model, input_)
            source = ("from raw text (streamnb's Tokenizer; river's BagOfWords() in a pipeline)" if input_ == "text"
                      else "on token dicts (the same for both)")
            head = f"| messages | river {model} ms/msg (sampled) |"
            rule = "|---|---:|"
            columns = [_per_message(river[key]["checkpoints"], sizes)]
            if key in exact:
                head += f" river {model} ms/msg (every message) |"
                rule += "---:|"
                columns.append(_per_message(exact[key]["checkpoints"], sizes))
            head += f" streamnb {model} ms/msg | river / streamnb |"
            rule += "---:|---:|"
            ours = _per_message(streamnb[key]["checkpoints"], sizes)
            reference = columns[-1]
            lines += [f"{model} {source}:", "", head, rule]
            start = 0
            for row, end in enumerate(ends):
                cells = " | ".join(f"{column[row]:,.2f}" for column in columns)
                lines.append(f"| {start + 1:,}-{end:,} | {cells} | {ours[row]:,.3f} | "
                             f"{reference[row] / ours[row]:,.0f}x |")
                start = end
            r = data["ratios"][key]
            river_total = (exact[key] if key in exact else river[key])["checkpoints"][-1]
            lines += ["", f"Whole stream: river {river_total:,.1f} s ({r['river_method']}), streamnb "
                      f"{streamnb[key]['seconds']['median']:,.3f} s: {r['value']:,.0f}x.", ""]
    key = series_key(*EXACT)
    lines += [f"Check of the method: on {key.replace(' ', ', ')}, the sampled estimate of river's whole-stream time "
              f"({river[key]['checkpoints'][-1]:,.1f} s) is {100 * data['estimate_error']:+.1f}% off its exact run "
              f"({exact[key]['checkpoints'][-1]:,.1f} s); the sampled runs took "
              + ", ".join(f"{k} {v['wall_seconds']:,.0f} s" for k, v in river.items())
              + f" of wall time, the exact one {exact[key]['wall_seconds']:,.0f} s."]
    return lines


def targets(data: dict[str, Any]) -> list[dict[str, Any]]:
    """BernoulliNB and ComplementNB >= 300x river on the whole stream (issue 13), from raw text and on token dicts."""
    ratios = data.get("ratios", {})
    n = data["messages"]
    out = []
    for model, river_name in (("BNB", "BernoulliNB"), ("CNB", "ComplementNB")):
        for input_, target_id in (("text", f"{model.lower()}_vs_river"),
                                  ("dicts", f"{model.lower()}_dicts_whole_stream")):
            r = ratios.get(series_key(model, input_))
            how = ("" if r is None else "; every prediction timed" if r["river_method"] == "exact"
                   else f"; river's predictions timed on 1 message in {data['stride']}")
            what = (f"prequential {model} from raw text vs river BagOfWords | {river_name}" if input_ == "text" else
                    f"prequential {model} on token dicts vs river {river_name}")
            out.append({"id": target_id, "what": f"{what} (whole stream, {n:,} messages{how})",
                        "value": r["value"] if r else None, "op": ">=", "threshold": 300, "unit": "x"})
    return out


if __name__ == "__main__":
    import sys

    from .suite import main

    raise SystemExit(main(["--only", NAME, *sys.argv[1:]]))
