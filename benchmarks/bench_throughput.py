"""Throughput: prequential (predict, then learn, each message in Date order), in messages per CPU second.

Two inputs: raw text (tokenizing timed: each library's own tokenizer) and pre-tokenized
bags of words (streamnb's Tokenizer output, the same dicts for every library; NB cost only).

- streamnb: MNB, BNB, CNB, CNB norm, from text with Tokenizer and with EmailTokenizer (which
  reads the raw bytes: MIME decoding, headers, URLs), and from the dicts;
- river: ``BagOfWords() | MultinomialNB()`` on the whole stream, plus the same tokenizing
  each message once (a fairer use of river); river's BernoulliNB and ComplementNB walk the
  whole vocabulary on every prediction, so they run on a prefix of the stream only, and
  streamnb runs on the same prefix for their ratios (river's cost per message still grows
  along the prefix: the second half of the prefix is reported apart, and a prefix flatters
  river; the fullstream section has them on the whole stream);
- scikit-learn: HashingVectorizer + MultinomialNB.partial_fit per message (classes given up
  front) on the same prefix (its cost per message does not depend on the position: each
  partial_fit recomputes all 2**20 hashed columns).

Last, predict_one alone once every model has learned the whole stream ("full vocabulary"):
what river's BernoulliNB and ComplementNB cost per message at the end of the stream.
Clock: CPU time (time.process_time); each figure is the median of the rounds, with min and
max; ratios are taken round by round.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Sequence
from typing import Any

from . import common
from .contenders import (
    MODELS,
    TOKENIZERS,
    RiverTokenizeOnce,
    SklearnHashingNB,
    river_model,
    river_pipeline,
    streamnb_inputs,
    streamnb_model,
)

NAME = "throughput"
TITLE = "Throughput: prequential predict + learn"
DEFAULT = True
PREFIX, QUICK_PREFIX = 300, 40
FULL_VOCABULARY_QUERIES, QUICK_FULL_VOCABULARY_QUERIES = 5, 2


def prequential(model, xs: Sequence, ys: Sequence) -> tuple[float, float]:
    """(CPU seconds of predict_one + learn_one over the stream, CPU seconds of its second half)."""
    half = len(xs) // 2
    gc.collect()
    start = middle = time.process_time()
    for i, (x, y) in enumerate(zip(xs, ys)):
        if i == half:
            middle = time.process_time()
        model.predict_one(x)
        model.learn_one(x, y)
    end = time.process_time()
    return end - start, end - middle


def _rows(corpus, prefix: int) -> list[dict[str, Any]]:
    """Every measured configuration: name, library, input, span, factory and stream."""
    texts, dicts = corpus.texts, corpus.dicts
    rows: list[dict[str, Any]] = []

    def add(name, library, model, input_, span, make, xs, tokenizer=None):
        xs = xs if span == "full" else xs[:prefix]
        rows.append({"name": name, "library": library, "model": model, "tokenizer": tokenizer, "input": input_,
                     "span": span, "make": make, "xs": xs})

    for tokenizer in TOKENIZERS:
        for model in MODELS:
            add(f"streamnb {model} + {tokenizer}", "streamnb", model, "text", "full",
                lambda m=model, t=tokenizer: streamnb_model(m, t), streamnb_inputs(corpus, tokenizer), tokenizer)
    add("river BagOfWords | MNB", "river", "MNB", "text", "full", lambda: river_pipeline("MNB"), texts, "BagOfWords")
    add("river BagOfWords once + MNB", "river", "MNB", "text", "full",
        lambda: RiverTokenizeOnce(river_model("MNB")), texts, "BagOfWords")
    for model in ("MNB", "BNB", "CNB"):
        add(f"streamnb {model} + Tokenizer", "streamnb", model, "text", "prefix",
            lambda m=model: streamnb_model(m, "Tokenizer"), texts, "Tokenizer")
    for model in ("BNB", "CNB"):
        add(f"river BagOfWords | {model}", "river", model, "text", "prefix", lambda m=model: river_pipeline(m),
            texts, "BagOfWords")
    add("scikit-learn HashingVectorizer + MNB.partial_fit", "scikit-learn", "MNB", "text", "prefix",
        SklearnHashingNB, texts, "HashingVectorizer")
    for model in MODELS:
        add(f"streamnb {model}", "streamnb", model, "dicts", "full", lambda m=model: streamnb_model(m), dicts)
    add("river MNB", "river", "MNB", "dicts", "full", lambda: river_model("MNB"), dicts)
    for model in ("BNB", "CNB"):
        add(f"streamnb {model}", "streamnb", model, "dicts", "prefix", lambda m=model: streamnb_model(m), dicts)
        add(f"river {model}", "river", model, "dicts", "prefix", lambda m=model: river_model(m), dicts)
    return rows


def key(input_: str, span: str, name: str) -> str:
    """The id of a row in results.json: input/span/name."""
    return f"{input_}/{span}/{name}"


# (ratio id, numerator row, denominator row, what it says)
RATIOS = [
    ("mnb_text_vs_river", key("text", "full", "streamnb MNB + Tokenizer"),
     key("text", "full", "river BagOfWords | MNB"),
     "MNB from raw text, whole stream: streamnb (Tokenizer) / river pipeline"),
    ("mnb_text_vs_river_tokenize_once", key("text", "full", "streamnb MNB + Tokenizer"),
     key("text", "full", "river BagOfWords once + MNB"),
     "MNB from raw text, whole stream: streamnb / river tokenizing each message once"),
    ("mnb_email_vs_river", key("text", "full", "streamnb MNB + EmailTokenizer"),
     key("text", "full", "river BagOfWords | MNB"), "MNB, streamnb with EmailTokenizer / river pipeline"),
    ("mnb_dicts_vs_river", key("dicts", "full", "streamnb MNB"), key("dicts", "full", "river MNB"),
     "MNB on pre-tokenized dicts, whole stream"),
    ("bnb_text_vs_river", key("text", "prefix", "streamnb BNB + Tokenizer"),
     key("text", "prefix", "river BagOfWords | BNB"), "BNB from raw text, prefix"),
    ("cnb_text_vs_river", key("text", "prefix", "streamnb CNB + Tokenizer"),
     key("text", "prefix", "river BagOfWords | CNB"), "CNB from raw text, prefix"),
    ("bnb_dicts_vs_river", key("dicts", "prefix", "streamnb BNB"), key("dicts", "prefix", "river BNB"),
     "BNB on pre-tokenized dicts, prefix"),
    ("cnb_dicts_vs_river", key("dicts", "prefix", "streamnb CNB"), key("dicts", "prefix", "river CNB"),
     "CNB on pre-tokenized dicts, prefix"),
    ("mnb_text_vs_sklearn", key("text", "prefix", "streamnb MNB + Tokenizer"),
     key("text", "prefix", "scikit-learn HashingVectorizer + MNB.partial_fit"),
     "MNB per message from raw text, prefix: streamnb / scikit-learn hashing + partial_fit"),
]


def full_vocabulary_predict(corpus, repeats: int, n_queries: int, log: Callable[[str], None]) -> dict[str, Any]:
    """predict_one CPU cost once BNB and CNB (streamnb and river) have learned the whole stream (dicts)."""
    dicts, labels = corpus.dicts, corpus.labels
    models = {}
    for model in ("BNB", "CNB"):
        for library, make in (("streamnb", streamnb_model), ("river", river_model)):
            learner = make(model)
            for x, y in zip(dicts, labels):
                learner.learn_one(x, y)
            models[f"{library} {model}"] = learner
    step = max(1, len(dicts) // n_queries)
    queries = dicts[::step][:n_queries]

    def timer(learner):
        return lambda: common.cpu_seconds(lambda: [learner.predict_one(x) for x in queries]) / len(queries)

    log(f"  predict_one after the whole stream: {len(queries)} queries")
    runs = common.rounds({name: timer(learner) for name, learner in models.items()}, repeats)
    vocabulary = models["streamnb BNB"].n_features
    out: dict[str, Any] = {"queries": len(queries), "n_features_streamnb": vocabulary,
                           "seconds_per_predict": {name: common.summary(v, common.CPU) for name, v in runs.items()}}
    out["ratios"] = {model: common.ratio(runs[f"river {model}"], runs[f"streamnb {model}"])
                     for model in ("BNB", "CNB")}
    return out


def run(ctx: common.Context) -> dict[str, Any]:
    corpus = ctx.corpus()
    labels = corpus.labels
    prefix = min(ctx.pick(PREFIX, QUICK_PREFIX), len(corpus))
    _ = corpus.dicts  # tokenize once, untimed, before any round
    rows = _rows(corpus, prefix)
    contenders = {key(r["input"], r["span"], r["name"]): (lambda r=r: prequential(r["make"](), r["xs"], labels))
                  for r in rows}
    ctx.log(f"  {len(rows)} configurations x {ctx.repeats} rounds; {len(corpus)} messages, prefix {prefix}")
    runs = common.rounds(contenders, ctx.repeats, ctx.log)
    out_rows = {}
    for r in rows:
        k = key(r["input"], r["span"], r["name"])
        totals = [total for total, _ in runs[k]]
        halves = [half for _, half in runs[k]]
        n = len(r["xs"])
        seconds = common.summary(totals, common.CPU)
        out_rows[k] = {"name": r["name"], "library": r["library"], "model": r["model"], "tokenizer": r["tokenizer"],
                       "input": r["input"], "span": r["span"], "messages": n, "seconds": seconds,
                       "msg_per_s": common.rate(seconds, n),
                       "second_half_msg_per_s": common.rate(common.summary(halves, common.CPU), n - n // 2)}
    ratios = {}
    for ratio_id, fast, slow, description in RATIOS:
        # messages per second: fast / slow = slow seconds / fast seconds, round by round
        value = common.ratio([t for t, _ in runs[slow]], [t for t, _ in runs[fast]])
        late = common.ratio([h for _, h in runs[slow]], [h for _, h in runs[fast]])
        ratios[ratio_id] = {"description": description, "numerator": fast, "denominator": slow, "value": value,
                            "second_half": late, "span": out_rows[fast]["span"]}
    full = full_vocabulary_predict(corpus, ctx.repeats,
                                   ctx.pick(FULL_VOCABULARY_QUERIES, QUICK_FULL_VOCABULARY_QUERIES), ctx.log)
    for ratio_id, row in sorted(ratios.items()):
        ctx.log(f"  {ratio_id:34s} {row['value']['median']:9.1f}x  (min {row['value']['min']:.1f}, "
                f"max {row['value']['max']:.1f})")
    return {"messages": len(corpus), "prefix": prefix, "clock": common.CPU, "rows": out_rows, "ratios": ratios,
            "full_vocabulary_predict": full}


# -- report --------------------------------------------------------------------------------

def _fmt_rate(stat: dict) -> str:
    return f"{stat['median']:,.0f} ({stat['min']:,.0f}-{stat['max']:,.0f})"


def markdown(data: dict[str, Any]) -> list[str]:
    """The section of RESULTS.md."""
    rows, ratios = data["rows"], data["ratios"]
    lines = [
        f"{data['messages']:,} messages in Date order; river's BernoulliNB / ComplementNB and scikit-learn "
        f"per-message partial_fit on the first {data['prefix']:,} messages only (a prefix flatters river, whose "
        "cost per message grows with the vocabulary), with streamnb on the same prefix for their ratios. "
        "The whole stream for them is in the fullstream section. Messages per CPU second (process_time), median of "
        "the rounds (min-max); ratios are taken round by round.",
        "",
        "| configuration | input | messages | msg/s (min-max) | msg/s, second half |",
        "|---|---|---:|---:|---:|",
    ]
    for r in rows.values():
        source = "raw text" if r["input"] == "text" else "token dicts"
        lines.append(f"| {common.cell(r['name'])} | {source} | {r['messages']:,} | {_fmt_rate(r['msg_per_s'])} | "
                     f"{r['second_half_msg_per_s']['median']:,.0f} |")
    lines += ["", "| ratio (streamnb / other) | span | median | min | max | second half of the span |",
              "|---|---|---:|---:|---:|---:|"]
    for r in ratios.values():
        v = r["value"]
        lines.append(f"| {common.cell(r['description'])} | {r['span']} | {v['median']:,.1f}x | {v['min']:,.1f}x | "
                     f"{v['max']:,.1f}x | {r['second_half']['median']:,.1f}x |")
    full = data["full_vocabulary_predict"]
    cost = full["seconds_per_predict"]
    lines += ["", f"predict_one alone after learning the whole stream (|V| = {full['n_features_streamnb']:,}, "
              f"{full['queries']} messages, CPU): "
              + "; ".join(f"{name} {stat['median'] * 1e6:,.0f} us" for name, stat in cost.items())
              + "; river / streamnb: "
              + ", ".join(f"{model} {r['median']:,.0f}x" for model, r in full["ratios"].items()) + "."]
    return lines


def targets(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Throughput targets: MNB from raw text >= 30x river, on token dicts >= 20x (issue 13); MNB with EmailTokenizer
    from raw bytes >= 15x river from text (issue 14); >= 100x scikit-learn's per-message partial_fit. BernoulliNB's
    and ComplementNB's are over the whole stream: see bench_fullstream."""
    ratios = data["ratios"]
    prefix = data["prefix"]
    return [
        {"id": "mnb_vs_river", "what": "prequential MNB from raw text vs river BagOfWords | MultinomialNB",
         "value": ratios["mnb_text_vs_river"]["value"]["median"], "op": ">=", "threshold": 30, "unit": "x"},
        {"id": "mnb_email_vs_river", "what": "prequential MNB(tokenizer=EmailTokenizer()) from raw bytes vs river "
         "BagOfWords | MultinomialNB from text", "value": ratios["mnb_email_vs_river"]["value"]["median"],
         "op": ">=", "threshold": 15, "unit": "x"},
        {"id": "mnb_dicts_vs_river", "what": "prequential MNB on token dicts (naive Bayes only) vs river MultinomialNB",
         "value": ratios["mnb_dicts_vs_river"]["value"]["median"], "op": ">=", "threshold": 20, "unit": "x"},
        {"id": "mnb_vs_sklearn", "what": f"per-message MNB learning from raw text vs scikit-learn HashingVectorizer "
         f"+ partial_fit (prequential, first {prefix} messages)",
         "value": ratios["mnb_text_vs_sklearn"]["value"]["median"], "op": ">=", "threshold": 100, "unit": "x"},
    ]


def plots(data: dict[str, Any], out_dir) -> list[str]:
    """throughput.png: msg/s per configuration, raw text and token dicts, log scale."""
    from .plotting import bar_chart

    groups = {}
    for input_, title in (("text", "from raw text"), ("dicts", "from token dicts (NB only)")):
        items = [(f"{r['name']}{' [prefix]' if r['span'] == 'prefix' else ''}", r["msg_per_s"], r["library"])
                 for r in data["rows"].values() if r["input"] == input_]
        groups[title] = items
    path = bar_chart(groups, out_dir / "throughput.png", xlabel="messages per CPU second (log scale)",
                     title=f"Prequential throughput ({data['messages']:,} messages; prefix = first {data['prefix']})",
                     log=True)
    return [path.name]


if __name__ == "__main__":
    import sys

    from .suite import main

    raise SystemExit(main(["--only", NAME, *sys.argv[1:]]))
