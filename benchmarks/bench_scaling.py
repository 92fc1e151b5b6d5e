"""Scaling: cost of predict_one and learn_one, and memory, against |V| and against K (synthetic Zipf streams).

Each point is a model that learned, one document at a time: "cover" documents holding every
word of the vocabulary once (so |V| is exact) and 2,000 documents of 200 tokens drawn from a
Zipf law over the vocabulary, labels spread over the K classes. The same query documents
(200 tokens, Zipf over the 1,000 most frequent words, so known at every size) are then
predicted and learned; a figure is CPU microseconds per call (time.process_time), median
of the rounds with min and max, models taking turns within a round.

- |V| = 10^3 .. 10^6 with K = 2;  K = 2 .. 1,000 with |V| = 10^4.
- streamnb MNB, BNB, CNB, CNB norm; river MultinomialNB, BernoulliNB, ComplementNB.
  river's BernoulliNB and ComplementNB walk the vocabulary (times the classes) on every
  prediction: they get fewer queries, and a river series stops at the first point where
  one predict_one takes more than 0.1 s (the point where it stopped is recorded).
- Memory: bytes allocated by the model while it learned and still held (tracemalloc). The
  documents exist before, so the feature-name strings, shared with the caller, are counted
  for no library: this is the cost of each library's own structures.
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

VOCAB_SIZES, QUICK_VOCAB_SIZES = [10**3, 10**4, 10**5, 10**6], [10**3, 10**4]
CLASS_COUNTS, QUICK_CLASS_COUNTS = [2, 10, 100, 1000], [2, 10]
K_SWEEP_VOCAB = 10**4
ZIPF_DOCS, QUICK_ZIPF_DOCS = 2000, 200
DOC_TOKENS = 200
QUERY_RANKS = 1000
QUERIES, QUICK_QUERIES = 200, 20
SLOW_QUERIES, QUICK_SLOW_QUERIES = 5, 2
SLOW_LIMIT = 0.1  # seconds per predict_one beyond which a river series stops

# name -> (library, factory, walks the vocabulary on every prediction)
SERIES: dict[str, tuple[str, Callable[[], Any], bool]] = {
    "streamnb MNB": ("streamnb", lambda: streamnb_model("MNB"), False),
    "streamnb BNB": ("streamnb", lambda: streamnb_model("BNB"), False),
    "streamnb CNB": ("streamnb", lambda: streamnb_model("CNB"), False),
    "streamnb CNB norm": ("streamnb", lambda: streamnb_model("CNB norm"), False),
    "river MNB": ("river", lambda: river_model("MNB"), False),
    "river BNB": ("river", lambda: river_model("BNB"), True),
    "river CNB": ("river", lambda: river_model("CNB"), True),
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


def measure_point(names: list[str], stream, queries, slow_queries, repeats: int) -> dict[str, dict[str, Any]]:
    """Build every named model on the stream (memory traced), then time predict_one and learn_one."""
    models, memory = {}, {}
    for name in names:
        memory[name], models[name] = common.traced_bytes(lambda: learn_all(SERIES[name][1](), stream))
    labels = [y for _, y in stream[: len(queries)]]

    def per_call(name, action):
        model = models[name]
        xs = slow_queries if SERIES[name][2] else queries  # learning is cheap for every model
        if action == "predict":
            return lambda: common.cpu_seconds(lambda: [model.predict_one(x) for x in xs]) / len(xs)
        return lambda: common.cpu_seconds(lambda: [model.learn_one(x, y) for x, y in zip(queries, labels)]) / len(queries)

    for name in names:  # warm-up: first calls may derive cached sums (CNB norm) or fill caches
        models[name].predict_one(queries[0])
    contenders = {(name, action): per_call(name, action) for name in names for action in ("predict", "learn")}
    runs = common.rounds(contenders, repeats)
    out = {}
    for name in names:
        model = models[name]
        n_features = model.n_features if hasattr(model, "n_features") else len(model.feature_counts)
        out[name] = {"n_features": int(n_features), "bytes": int(memory[name]),
                     "predict_queries": len(slow_queries if SERIES[name][2] else queries), "learn_queries": len(queries),
                     "predict_us": common.summary([s * 1e6 for s in runs[(name, "predict")]], common.CPU),
                     "learn_us": common.summary([s * 1e6 for s in runs[(name, "learn")]], common.CPU)}
    return out


def sweep(axis: str, sizes: list[int], ctx: common.Context) -> dict[str, Any]:
    """One sweep over |V| (axis "vocabulary", K = 2) or over K (axis "classes", |V| = 10^4)."""
    rng = np.random.default_rng(1)
    queries = zipf_documents(QUERY_RANKS, ctx.pick(QUERIES, QUICK_QUERIES), DOC_TOKENS, rng)
    slow_queries = queries[: ctx.pick(SLOW_QUERIES, QUICK_SLOW_QUERIES)]
    series: dict[str, dict[str, Any]] = {name: {"library": library, "points": [], "stopped": None}
                                         for name, (library, _, _) in SERIES.items()}
    for size in sizes:
        n_vocab, n_classes = (size, 2) if axis == "vocabulary" else (K_SWEEP_VOCAB, size)
        names = [name for name in SERIES if series[name]["stopped"] is None]
        stream = training_stream(n_vocab, n_classes, ctx.pick(ZIPF_DOCS, QUICK_ZIPF_DOCS), seed=size)
        point = measure_point(names, stream, queries, slow_queries, ctx.repeats)
        for name, figures in point.items():
            series[name]["points"].append({"n_vocab": n_vocab, "n_classes": n_classes, **figures})
            cost = figures["predict_us"]["median"] / 1e6
            if SERIES[name][2] and cost > SLOW_LIMIT and size != sizes[-1]:
                series[name]["stopped"] = (f"stopped after {axis_label(axis)} = {size:,}: one predict_one took "
                                           f"{cost:.2f} s (> {SLOW_LIMIT} s)")
        ctx.log(f"  {axis_label(axis)} = {size:>9,}: " + ", ".join(
            f"{name} {f['predict_us']['median']:,.0f}/{f['learn_us']['median']:,.0f} us" for name, f in point.items()))
    return {"sizes": sizes, "fixed": {"n_classes": 2} if axis == "vocabulary" else {"n_vocab": K_SWEEP_VOCAB},
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
            ratios[name] = {action: cost_ratio(vocabulary, name, action, 10**6, 10**4) for action in ("predict", "learn")}
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
            cells.append("-" if p is None else f"{p['predict_us']['median']:,.1f} / {p['learn_us']['median']:,.1f} / "
                         f"{p['bytes'] / 2**20:,.1f}")
        lines.append(f"| {name} | {' | '.join(cells)} |")
    notes = [f"{name}: {s['stopped']}" for name, s in sweep_data["series"].items() if s["stopped"]]
    return lines + ([""] + [f"- {note}" for note in notes] if notes else [])


def markdown(data: dict[str, Any]) -> list[str]:
    lines = ["Each cell: predict_one us / learn_one us (CPU, median of the rounds) / MiB held by the model "
             "(tracemalloc, feature-name strings excluded). See the module docstring for the streams.", "",
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
            {"title": f"predict_one ({fixed})", "xlabel": label, "ylabel": "CPU us per call",
             "series": series(sweep_data, axis, "predict_us"), "note": stopped},
            {"title": f"learn_one ({fixed})", "xlabel": label, "ylabel": "CPU us per call",
             "series": series(sweep_data, axis, "learn_us")},
            {"title": f"memory held by the model ({fixed})", "xlabel": label, "ylabel": "MiB (tracemalloc)",
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
