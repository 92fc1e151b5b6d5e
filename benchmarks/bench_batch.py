"""Batch training from raw text: the whole stream at once, tokenizing included.

- streamnb: ``MultinomialNB(tokenizer=Tokenizer()).learn_many(texts, labels)``;
- scikit-learn: ``CountVectorizer().fit_transform(texts)`` then ``MultinomialNB().fit``
  (the same token pattern as streamnb's Tokenizer, so the same vocabulary);
- river: ``BagOfWords().transform_many(pd.Series(texts))`` (a sparse DataFrame) then
  ``MultinomialNB().learn_many``, river's mini-batch path.

Clock: CPU time (time.process_time), median of the rounds with min and max; the libraries
take turns within each round.
"""

from __future__ import annotations

from typing import Any

from . import common

NAME = "batch"
TITLE = "Batch training from raw text"
DEFAULT = True


def streamnb_batch(texts, labels):
    from streamnb import MultinomialNB, Tokenizer

    model = MultinomialNB(tokenizer=Tokenizer()).learn_many(texts, labels)
    return model.n_features


def sklearn_batch(texts, labels):
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.naive_bayes import MultinomialNB

    X = CountVectorizer().fit_transform(texts)
    MultinomialNB().fit(X, labels)
    return X.shape[1]


def river_batch(texts, labels):
    import pandas as pd
    from river.feature_extraction import BagOfWords
    from river.naive_bayes import MultinomialNB

    X = BagOfWords().transform_many(pd.Series(texts))
    model = MultinomialNB()
    model.learn_many(X, pd.Series(labels))
    return model.n_terms


CONTENDERS = {
    "streamnb MultinomialNB(tokenizer=Tokenizer()).learn_many": ("streamnb", streamnb_batch),
    "scikit-learn CountVectorizer + MultinomialNB.fit": ("scikit-learn", sklearn_batch),
    "river BagOfWords.transform_many + MultinomialNB.learn_many": ("river", river_batch),
}
STREAMNB = "streamnb MultinomialNB(tokenizer=Tokenizer()).learn_many"
SKLEARN = "scikit-learn CountVectorizer + MultinomialNB.fit"
RIVER = "river BagOfWords.transform_many + MultinomialNB.learn_many"


def run(ctx: common.Context) -> dict[str, Any]:
    corpus = ctx.corpus()
    texts, labels = corpus.texts, corpus.labels
    features: dict[str, int] = {}

    def timed(name, function):
        def one():
            result = {}
            seconds = common.cpu_seconds(lambda: result.setdefault("n", function(texts, labels)))
            features[name] = int(result["n"])
            return seconds
        return one

    runs = common.rounds({name: timed(name, function) for name, (_, function) in CONTENDERS.items()},
                         ctx.repeats, ctx.log)
    rows = {}
    for name, (library, _) in CONTENDERS.items():
        seconds = common.summary(runs[name], common.CPU)
        rows[name] = {"library": library, "seconds": seconds, "msg_per_s": common.rate(seconds, len(texts)),
                      "n_features": features[name]}
    ratios = {"vs_sklearn": common.ratio(runs[SKLEARN], runs[STREAMNB]),
              "vs_river": common.ratio(runs[RIVER], runs[STREAMNB])}
    ctx.log(f"  streamnb vs scikit-learn {ratios['vs_sklearn']['median']:.2f}x, "
            f"vs river {ratios['vs_river']['median']:.2f}x")
    return {"messages": len(texts), "clock": common.CPU, "rows": rows, "ratios": ratios}


def markdown(data: dict[str, Any]) -> list[str]:
    lines = [f"{data['messages']:,} messages, tokenizing included; CPU seconds (process_time), median of the rounds "
             "(min-max). |V| is each library's vocabulary size (river's token pattern differs).", "",
             "| training | CPU s (min-max) | msg/s | CPU time / streamnb's | \\|V\\| |", "|---|---:|---:|---:|---:|"]
    base = data["rows"][STREAMNB]["seconds"]["median"]
    for name, row in data["rows"].items():
        s = row["seconds"]
        lines.append(f"| {common.cell(name)} | {s['median']:.2f} ({s['min']:.2f}-{s['max']:.2f}) | "
                     f"{row['msg_per_s']['median']:,.0f} | {s['median'] / base:.2f} | {row['n_features']:,} |")
    r = data["ratios"]
    lines += ["", f"streamnb is {r['vs_sklearn']['median']:.2f}x as fast as scikit-learn (rounds: "
              f"{r['vs_sklearn']['min']:.2f}-{r['vs_sklearn']['max']:.2f}) and {r['vs_river']['median']:.2f}x as "
              f"fast as river ({r['vs_river']['min']:.2f}-{r['vs_river']['max']:.2f})."]
    return lines


def targets(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 13: learn_many from raw text >= 5x scikit-learn's CountVectorizer + MultinomialNB.fit."""
    return [{"id": "batch_vs_sklearn", "what": "batch training from raw text vs scikit-learn CountVectorizer + "
             "MultinomialNB.fit", "value": data["ratios"]["vs_sklearn"]["median"], "op": ">=", "threshold": 5,
             "unit": "x"}]


def plots(data: dict[str, Any], out_dir) -> list[str]:
    from .plotting import bar_chart

    items = [(name, row["seconds"], row["library"]) for name, row in data["rows"].items()]
    path = bar_chart({"": items}, out_dir / "batch.png", xlabel="CPU seconds (lower is better)",
                     title=f"Batch training from raw text ({data['messages']:,} messages)")
    return [path.name]


if __name__ == "__main__":
    import sys

    from .suite import main

    raise SystemExit(main(["--only", NAME, *sys.argv[1:]]))
