"""Scaling: cost of predict_one and learn_one, and memory, against |V| and against K (synthetic Zipf streams).

Each point is a model that learned, one document at a time: "cover" documents holding every
word of the vocabulary once (so |V| is exact) and 2,000 documents of 200 tokens drawn from a
Zipf law over the vocabulary, labels spread over the K classes. The same query documents
(200 tokens, Zipf over the 1,000 most frequent words, so known at every size; 100 with
--quick) are then predicted and learned (each model as many of the 200 queries as fit in 0.3 CPU seconds,
at least 3); a figure is CPU microseconds per call (time.process_time), median of the
rounds with min and max, models taking turns within a round.

- |V| = 10^3 .. 10^6 with K = 2;  K = 2 .. 1,000 with |V| = 10^4 (--quick: 10^2, 10^3; 2, 10).
- streamnb MNB, BNB, CNB, CNB norm; river MultinomialNB, BernoulliNB, ComplementNB.
  river's BernoulliNB and ComplementNB walk the vocabulary (times the classes) on every
  prediction: a series stops at the first point where one predict_one takes more than
  0.1 s (the point where it stopped is recorded); only those two get there.
- Memory (MultinomialNB of each library): what the model holds once it has learned. For
  river, the bytes allocated while it learned and still held (tracemalloc; the documents
  exist before, so the feature-name strings, shared with the caller, are not counted); for
  streamnb, whose counts and vocabulary live in the compiled core where tracemalloc sees
  nothing, the core's own account (``model.nbytes``; its copies of the feature names
  included). The memory section has both libraries' RSS growth on the real stream.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import common
from .contenders import river_model, streamnb_model
from .data import cover_documents, word_names, zipf_documents

NAME = "scaling"
TITLE = "Scaling with |V| and K"
DEFAULT = True

VOCAB_SIZES, QUICK_VOCAB_SIZES = [10**3, 10**4, 10**5, 10**6], [10**2, 10**3]
CLASS_COUNTS, QUICK_CLASS_COUNTS = [2, 10, 100, 1000], [2, 10]
K_SWEEP_VOCAB, QUICK_K_SWEEP_VOCAB = 10**4, 10**3
ZIPF_DOCS, QUICK_ZIPF_DOCS = 2000, 200
DOC_TOKENS = 200
QUERY_RANKS, QUICK_QUERY_RANKS = 1000, 100  # query words among the most frequent: known at every size
QUERIES, QUICK_QUERIES = 200, 20
MIN_CALLS = 3
CALL_BUDGET = 0.3  # CPU seconds per model, action and round: sets how many queries a model answers
SLOW_LIMIT = 0.1  # seconds per predict_one beyond which a series stops (only river's BNB and CNB get there)

# Memory is reported for the multinomial models only: river's by tracemalloc, which slows
# learning several times, streamnb's by model.nbytes (tracemalloc cannot see the core);
# BNB/CNB keep the same cells (streamnb) or one more dict per feature (river).
TRACED = {"river MNB"}
NBYTES = {"streamnb MNB"}

# name -> (library, factory)
SERIES: dict[str, tuple[str, Callable[[], Any]]] = {
    "streamnb MNB": ("streamnb", lambda: streamnb_model("MNB")),
    "streamnb BNB": ("streamnb", lambda: streamnb_model("BNB")),
    "streamnb CNB": ("streamnb", lambda: streamnb_model("CNB")),
    "streamnb CNB norm": ("streamnb", lambda: streamnb_model("CNB norm")),
    "river MNB": ("river", lambda: river_model("MNB")),
    "river BNB": ("river", lambda: river_model("BNB")),
    "river CNB": ("river", lambda: river_model("CNB")),
}


def training_stream(n_vocab: int, n_classes: int, n_docs: int, seed: int) -> list[tuple[dict, str]]:
    """Cover documents (every word once) then Zipf documents, labels cycling over the classes."""
    rng = np.random.default_rng(seed)
    docs = cover_documents(word_names(n_vocab)) + zipf_documents(n_vocab, n_docs, DOC_TOKENS, rng)
    return [(x, f"c{i % n_classes}") for i, x in enumerate(docs)]


def learn_all(model, stream):
    for x, y in stream:
        model.learn_one(x, y)
    return model


def calls_within(budget: float, call, most: int) -> int:
    """How many calls fit in ``budget`` CPU seconds, judging by one timed call (at least MIN_CALLS)."""
    cost = common.cpu_seconds(call)
    return max(MIN_CALLS, min(most, int(budget / max(cost, 1e-9))))


def measure_point(names: list[str], stream, queries, repeats: int) -> dict[str, dict[str, Any]]:
    """Build every named model on the stream (memory for TRACED and NBYTES), then time predict_one and learn_one.

    Each model gets as many of the queries as fit in CALL_BUDGET CPU seconds per round (so a
    river model that walks the vocabulary answers a few, streamnb all of them); the count
    is recorded with the figure.
    """
    models, memory = {}, {}
    for name in names:
        make = SERIES[name][1]
        make()  # imports the library's modules outside the traced build
        if name in TRACED:
            memory[name], models[name] = common.traced_bytes(lambda: learn_all(make(), stream))
        else:
            models[name] = learn_all(make(), stream)
            memory[name] = models[name].nbytes if name in NBYTES else None
    labels = [y for _, y in stream[: len(queries)]]
    counts = {}
    for name in names:
        model = models[name]
        model.predict_one(queries[0])  # the first call may derive cached sums (CNB norm): not timed
        counts[name, "predict"] = calls_within(CALL_BUDGET, lambda: model.predict_one(queries[1]), len(queries))
        counts[name, "learn"] = calls_within(CALL_BUDGET, lambda: model.learn_one(queries[1], labels[1]), len(queries))

    def per_call(name, action):
        model, n = models[name], counts[name, action]
        if action == "predict":
            return lambda: common.cpu_seconds(lambda: [model.predict_one(x) for x in queries[:n]]) / n
        return lambda: common.cpu_seconds(lambda: [model.learn_one(x, y) for x, y in zip(queries[:n], labels)]) / n

    contenders = {(name, action): per_call(name, action) for name in names for action in ("predict", "learn")}
    runs = common.rounds(contenders, repeats)
    out = {}
    for name in names:
        model = models[name]
        n_features = model.n_features if hasattr(model, "n_features") else len(model.feature_counts)
        out[name] = {"n_features": int(n_features), "bytes": memory[name],
                     "predict_calls": counts[name, "predict"], "learn_calls": counts[name, "learn"],
                     "predict_us": common.summary([s * 1e6 for s in runs[(name, "predict")]], common.CPU),
                     "learn_us": common.summary([s * 1e6 for s in runs[(name, "learn")]], common.CPU)}
    return out


def sweep(axis: str, sizes: list[int], ctx: common.Context) -> dict[str, Any]:
    """One sweep over |V| (axis "vocabulary", K = 2) or over K (axis "classes", |V| = 10^4)."""
    rng = np.random.default_rng(1)
    queries = zipf_documents(ctx.pick(QUERY_RANKS, QUICK_QUERY_RANKS), ctx.pick(QUERIES, QUICK_QUERIES), DOC_TOKENS,
                             rng)
    series: dict[str, dict[str, Any]] = {name: {"library": library, "points": [], "stopped": None}
                                         for name, (library, _) in SERIES.items()}
    for size in sizes:
        if axis == "vocabulary":
            n_vocab, n_classes = size, 2
        else:
            n_vocab, n_classes = ctx.pick(K_SWEEP_VOCAB, QUICK_K_SWEEP_VOCAB), size
        names = [name for name in SERIES if series[name]["stopped"] is None]
        stream = training_stream(n_vocab, n_classes, ctx.pick(ZIPF_DOCS, QUICK_ZIPF_DOCS), seed=size)
        point = measure_point(names, stream, queries, ctx.repeats)
        for name, figures in point.items():
            series[name]["points"].append({"n_vocab": n_vocab, "n_classes": n_classes, **figures})
            cost = figures["predict_us"]["median"] / 1e6
            if cost > SLOW_LIMIT and size != sizes[-1]:
                series[name]["stopped"] = (f"stopped after {axis_label(axis)} = {size:,}: one predict_one took "
                                           f"{cost:.2f} s (> {SLOW_LIMIT} s)")
        ctx.log(f"  {axis_label(axis)} = {size:>9,}: " + ", ".join(
            f"{name} {f['predict_us']['median']:,.0f}/{f['learn_us']['median']:,.0f} us" for name, f in point.items()))
    fixed = {"n_classes": 2} if axis == "vocabulary" else {"n_vocab": ctx.pick(K_SWEEP_VOCAB, QUICK_K_SWEEP_VOCAB)}
    return {"sizes": sizes, "fixed": fixed,
            "series": series}


def axis_label(axis: str, markdown: bool = False) -> str:
    """|V| or K; in a markdown table the bars of |V| are escaped."""
    if axis == "classes":
        return "K"
    return r"\|V\|" if markdown else "|V|"


def cost_ratio(sweep_data: dict[str, Any], name: str, action: str, high: int, low: int) -> float | None:
    """cost(|V| = high) / cost(|V| = low) of one series, or None when a size was not measured."""
    costs = {p["n_vocab"]: p[f"{action}_us"]["median"] for p in sweep_data["series"][name]["points"]}
    if high not in costs or low not in costs:
        return None
    return costs[high] / costs[low]


def run(ctx: common.Context) -> dict[str, Any]:
    vocabulary = sweep("vocabulary", ctx.pick(VOCAB_SIZES, QUICK_VOCAB_SIZES), ctx)
    classes = sweep("classes", ctx.pick(CLASS_COUNTS, QUICK_CLASS_COUNTS), ctx)
    ratios = {}
    for name in SERIES:
        if SERIES[name][0] == "streamnb" or name == "river MNB":
            ratios[name] = {action: cost_ratio(vocabulary, name, action, 10**6, 10**4)
                            for action in ("predict", "learn")}
    return {"clock": common.CPU, "doc_tokens": DOC_TOKENS, "zipf_docs": ctx.pick(ZIPF_DOCS, QUICK_ZIPF_DOCS),
            "slow_limit_s": SLOW_LIMIT, "vocabulary": vocabulary, "classes": classes,
            "ratio_1e6_vs_1e4": ratios}


# -- report --------------------------------------------------------------------------------

def _table(sweep_data: dict[str, Any], axis: str) -> list[str]:
    sizes = sweep_data["sizes"]
    header = " | ".join(f"{axis_label(axis, markdown=True)} = {size:,}" for size in sizes)
    lines = [f"| series | {header} |",
             "|---|" + "---:|" * len(sizes)]
    for name, s in sweep_data["series"].items():
        by_size = {p["n_vocab" if axis == "vocabulary" else "n_classes"]: p for p in s["points"]}
        cells = []
        for size in sizes:
            p = by_size.get(size)
            memory = "" if p is None or p["bytes"] is None else f" / {p['bytes'] / 2**20:,.1f}"
            cells.append("-" if p is None else f"{p['predict_us']['median']:,.1f} / {p['learn_us']['median']:,.1f}"
                         + memory)
        lines.append(f"| {name} | {' | '.join(cells)} |")
    notes = [f"{name}: {s['stopped']}" for name, s in sweep_data["series"].items() if s["stopped"]]
    return lines + ([""] + [f"- {note}" for note in notes] if notes else [])


def markdown(data: dict[str, Any]) -> list[str]:
    lines = ["Each cell: predict_one us / learn_one us (CPU, median of the rounds) / for the MNB models, MiB held "
             "by the model (river: tracemalloc, feature-name strings excluded; streamnb: model.nbytes, its copies "
             "of the feature names included). See the module docstring for the streams.",
             "",
             "Against |V| (K = 2):", ""]
    lines += _table(data["vocabulary"], "vocabulary")
    lines += ["", f"Against K (|V| = {data['classes']['fixed']['n_vocab']:,}):", ""]
    lines += _table(data["classes"], "classes")
    rows = [(name, r) for name, r in data["ratio_1e6_vs_1e4"].items() if r["predict"] is not None]
    if rows:
        lines += ["", "Cost at |V| = 10^6 / cost at |V| = 10^4: " + "; ".join(
            f"{name} predict {r['predict']:.2f}, learn {r['learn']:.2f}" for name, r in rows) + "."]
    return lines


def targets(data: dict[str, Any]) -> list[dict[str, Any]]:
    """predict_one cost at |V| = 10^6 over |V| = 10^4 <= 1.3, for the worst streamnb model."""
    ratios = {name: r["predict"] for name, r in data["ratio_1e6_vs_1e4"].items()
              if name.startswith("streamnb") and r["predict"] is not None}
    if not ratios:
        return [{"id": "predict_cost_vs_vocabulary", "what": "predict_one cost |V|=10^6 / |V|=10^4 (not measured: "
                 "--quick stops at 10^4)", "value": None, "op": "<=", "threshold": 1.3, "unit": ""}]
    worst = max(ratios, key=ratios.__getitem__)
    return [{"id": "predict_cost_vs_vocabulary",
             "what": f"predict_one cost |V|=10^6 / |V|=10^4, worst streamnb model ({worst}; "
             + ", ".join(f"{name.removeprefix('streamnb ')} {r:.2f}" for name, r in ratios.items()) + ")",
             "value": ratios[worst], "op": "<=", "threshold": 1.3, "unit": ""}]


def plots(data: dict[str, Any], out_dir) -> list[str]:
    from .plotting import loglog_panels

    def series(sweep_data, axis, field, scale=1.0):
        out = []
        for name, s in sweep_data["series"].items():
            points = s["points"]
            if not points:
                continue
            x = [p["n_vocab" if axis == "vocabulary" else "n_classes"] for p in points]
            if field == "bytes":
                if points[0]["bytes"] is None:
                    continue
                out.append({"label": name, "library": s["library"], "x": x, "y": [p["bytes"] / 2**20 for p in points]})
            else:
                out.append({"label": name, "library": s["library"], "x": x,
                            "y": [p[field]["median"] * scale for p in points],
                            "low": [p[field]["min"] * scale for p in points],
                            "high": [p[field]["max"] * scale for p in points]})
        return out

    written = []
    for axis, sweep_data, fixed in (("vocabulary", data["vocabulary"], "K = 2"),
                                    ("classes", data["classes"], f"|V| = {data['classes']['fixed']['n_vocab']:,}")):
        label = "|V| (vocabulary size)" if axis == "vocabulary" else "K (classes)"
        stopped = "; ".join(f"{n}: {s['stopped'].split(':')[0]}" for n, s in sweep_data["series"].items()
                            if s["stopped"])
        panels = [
            {"title": f"predict_one ({fixed})", "xlabel": label + (f"\n{stopped}" if stopped else ""),
             "ylabel": "CPU us per call", "series": series(sweep_data, axis, "predict_us")},
            {"title": f"learn_one ({fixed})", "xlabel": label, "ylabel": "CPU us per call",
             "series": series(sweep_data, axis, "learn_us")},
            {"title": f"memory held by MultinomialNB ({fixed})", "xlabel": label,
             "ylabel": "MiB (river: tracemalloc; streamnb: nbytes)",
             "series": series(sweep_data, axis, "bytes")},
        ]
        path = loglog_panels(panels, out_dir / f"scaling_{axis}.png", columns=3,
                             title=f"Cost and memory against {label} (synthetic Zipf stream; log-log)")
        written.append(path.name)
    return written


if __name__ == "__main__":
    import sys

    from .suite import main

    raise SystemExit(main(["--only", NAME, *sys.argv[1:]]))
