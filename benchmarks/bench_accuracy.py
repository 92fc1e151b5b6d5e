"""Accuracy: prequential on the stream, and a Date-ordered 80/20 split for batch learners.

Prequential (``streamnb.evaluate.progressive_evaluate``: predict each message with the
model as it stands, then learn it, in Date order): every streamnb model with Tokenizer and
with EmailTokenizer, TWCNB (online TF-IDF + ComplementNB(norm=True)), river's
``BagOfWords`` + MultinomialNB, and the discriminative baseline: river's
LogisticRegression (its defaults: SGD, learning rate 0.01) on the same BagOfWords counts,
learning online too. river's BernoulliNB and ComplementNB walk the vocabulary on every
prediction, so they are scored on the throughput prefix, next to streamnb on that prefix.

80/20 split: train on the first 80% of the stream in Date order, test on the last 20%
(the same split for everyone): scikit-learn CountVectorizer + MultinomialNB /
BernoulliNB / ComplementNB / LogisticRegression (liblinear), streamnb learn_many, river
MultinomialNB and LogisticRegression learning the training part one message at a time.
river's BernoulliNB / ComplementNB are left out of the split: 1,200 predictions over the
full training vocabulary would take minutes.

Metrics (positive class: spam): accuracy, FPR = ham called spam / ham, FNR, and
(1-AUC)% from the predicted spam probability. Deterministic: one run each.
"""

from __future__ import annotations

import math
from typing import Any

from streamnb.errors import InvalidInputError
from streamnb.filter.evaluate import (
    accuracy,
    false_negative_rate,
    false_positive_rate,
    one_minus_auc_percent,
    progressive_evaluate,
)

from . import common
from .bench_throughput import PREFIX, QUICK_PREFIX
from .contenders import (
    MODELS,
    TOKENIZERS,
    RiverTokenizeOnce,
    TfidfModel,
    river_logistic,
    river_model,
    streamnb_inputs,
    streamnb_model,
)

NAME = "accuracy"
TITLE = "Accuracy"
DEFAULT = True
REPEATED = False  # deterministic: measured once whatever --repeats says
POSITIVE = "spam"


def _finite(value: float) -> float | None:
    """The value, or None for NaN (no AUC when the test part holds one class): JSON has no NaN."""
    return None if value is None or math.isnan(value) else float(value)


def metrics(y_true, y_pred, scores) -> dict[str, float | None]:
    try:
        auc = one_minus_auc_percent(y_true, scores, POSITIVE)
    except InvalidInputError:  # a single class in y_true
        auc = None
    return {"messages": len(y_true), "accuracy": accuracy(y_true, y_pred),
            "fpr": false_positive_rate(y_true, y_pred, POSITIVE), "fnr": false_negative_rate(y_true, y_pred, POSITIVE),
            "one_minus_auc_percent": _finite(auc)}


def prequential(learner, xs, ys) -> dict[str, float | None]:
    report = progressive_evaluate(learner, list(zip(xs, ys)), positive=POSITIVE, curve=None)
    return {"messages": report.n, "accuracy": report.accuracy, "fpr": report.false_positive_rate,
            "fnr": report.false_negative_rate, "one_minus_auc_percent": _finite(report.one_minus_auc_percent)}


def _row(library: str, model: str, tokenizer: str | None, figures: dict[str, float]) -> dict[str, Any]:
    return {"library": library, "model": model, "tokenizer": tokenizer, **figures}


def prequential_rows(corpus, prefix: int, log) -> tuple[dict, dict]:
    texts, labels = corpus.texts, corpus.labels
    full: dict[str, dict[str, Any]] = {}
    for tokenizer in TOKENIZERS:
        for model in MODELS:
            learner = streamnb_model(model, tokenizer)
            full[f"streamnb {model} + {tokenizer}"] = _row(
                "streamnb", model, tokenizer, prequential(learner, streamnb_inputs(corpus, tokenizer), labels))
    for alpha in (1.0, 0.01):
        learner = TfidfModel(streamnb_model("CNB norm", alpha=alpha))
        full[f"streamnb TWCNB (alpha={alpha:g}) + Tokenizer"] = _row(
            "streamnb", "TWCNB", "Tokenizer", prequential(learner, texts, labels))
    full["river BagOfWords + MNB"] = _row("river", "MNB", "BagOfWords",
                                          prequential(RiverTokenizeOnce(river_model("MNB")), texts, labels))
    full["river BagOfWords + LogisticRegression"] = _row("baseline", "LogisticRegression", "BagOfWords",
                                                         prequential(river_logistic(), texts, labels))
    log(f"  prequential, whole stream: {len(full)} models")
    head: dict[str, dict[str, Any]] = {}
    for model in ("MNB", "BNB", "CNB"):
        head[f"streamnb {model} + Tokenizer"] = _row("streamnb", model, "Tokenizer", prequential(
            streamnb_model(model, "Tokenizer"), texts[:prefix], labels[:prefix]))
        head[f"river BagOfWords + {model}"] = _row("river", model, "BagOfWords", prequential(
            RiverTokenizeOnce(river_model(model)), texts[:prefix], labels[:prefix]))
    log(f"  prequential, first {prefix} messages: {len(head)} models")
    return full, head


def _scores(probabilities: list[dict]) -> tuple[list, list[float]]:
    """(argmax labels, spam probabilities) of predict_proba outputs."""
    predicted = [max(p, key=p.__getitem__) if p else None for p in probabilities]
    return predicted, [float(p.get(POSITIVE, 0.0)) for p in probabilities]


def split_rows(corpus, log) -> dict[str, dict[str, Any]]:
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import BernoulliNB, ComplementNB, MultinomialNB

    cut = corpus.split()
    labels = corpus.labels
    train_y, test_y = labels[:cut], labels[cut:]
    rows: dict[str, dict[str, Any]] = {}

    vectorizer = CountVectorizer()
    train_X = vectorizer.fit_transform(corpus.texts[:cut])
    test_X = vectorizer.transform(corpus.texts[cut:])
    for model, estimator in (("MNB", MultinomialNB()), ("BNB", BernoulliNB()), ("CNB", ComplementNB()),
                             ("LogisticRegression", LogisticRegression(solver="liblinear"))):
        estimator.fit(train_X, train_y)
        spam = list(estimator.classes_).index(POSITIVE)
        scores = estimator.predict_proba(test_X)[:, spam]
        library = "baseline" if model == "LogisticRegression" else "scikit-learn"
        rows[f"scikit-learn CountVectorizer + {model}"] = _row(
            library, model, "CountVectorizer", metrics(test_y, list(estimator.predict(test_X)), scores))

    for tokenizer in TOKENIZERS:
        xs = streamnb_inputs(corpus, tokenizer)
        for model in MODELS:
            learner = streamnb_model(model, tokenizer).learn_many(xs[:cut], train_y)
            predicted, scores = _scores(learner.predict_proba_many(xs[cut:]))
            rows[f"streamnb {model} + {tokenizer}"] = _row("streamnb", model, tokenizer,
                                                           metrics(test_y, predicted, scores))

    for name, library, make in (("river BagOfWords + MNB", "river", lambda: RiverTokenizeOnce(river_model("MNB"))),
                                ("river BagOfWords + LogisticRegression", "baseline", river_logistic)):
        learner = make()
        for x, y in zip(corpus.texts[:cut], train_y):
            learner.learn_one(x, y)
        predicted, scores = _scores([learner.predict_proba_one(x) for x in corpus.texts[cut:]])
        model = name.split(" + ")[1]
        rows[name] = _row(library, model, "BagOfWords", metrics(test_y, predicted, scores))
    log(f"  80/20 split: {len(rows)} models")
    return rows


def run(ctx: common.Context) -> dict[str, Any]:
    corpus = ctx.corpus()
    prefix = min(ctx.pick(PREFIX, QUICK_PREFIX), len(corpus))
    full, head = prequential_rows(corpus, prefix, ctx.log)
    split = split_rows(corpus, ctx.log)
    cut = corpus.split()
    test = corpus.labels[cut:]
    return {"messages": len(corpus), "prefix": prefix, "positive": POSITIVE,
            "split": {"train": cut, "test": len(test), "test_spam": test.count(POSITIVE)},
            "prequential": full, "prequential_prefix": head, "split_80_20": split}


# -- report --------------------------------------------------------------------------------

def _table(rows: dict[str, dict[str, Any]]) -> list[str]:
    lines = ["| model | messages | accuracy % | FPR % | FNR % | (1-AUC)% |", "|---|---:|---:|---:|---:|---:|"]
    for name, r in rows.items():
        auc = r["one_minus_auc_percent"]
        auc_text = "n/a" if auc is None else f"{auc:.3f}"
        lines.append(f"| {common.cell(name)} | {r['messages']:,} | {100 * r['accuracy']:.2f} | {100 * r['fpr']:.2f} | "
                     f"{100 * r['fnr']:.2f} | {auc_text} |")
    return lines


def markdown(data: dict[str, Any]) -> list[str]:
    split = data["split"]
    lines = [f"Positive class: spam. FPR = ham called spam / all ham. Prequential on all {data['messages']:,} "
             "messages in Date order:", ""]
    lines += _table(data["prequential"])
    lines += ["", f"Prequential on the first {data['prefix']:,} messages (river's BernoulliNB and ComplementNB "
              "cost O(|V|) per prediction):", ""]
    lines += _table(data["prequential_prefix"])
    lines += ["", f"Date-ordered 80/20 split: train on the first {split['train']:,} messages, test on the last "
              f"{split['test']:,} ({split['test_spam']:,} spam); streamnb learns the training part with learn_many, "
              "river one message at a time:", ""]
    lines += _table(data["split_80_20"])
    return lines


def plots(data: dict[str, Any], out_dir) -> list[str]:
    from .plotting import bar_chart

    def items(rows, field):
        out = []
        for name, r in rows.items():
            value = 100 * (1 - r["accuracy"]) if field == "error" else r["one_minus_auc_percent"]
            if value is not None:
                out.append((name, {"median": value}, r["library"]))
        return out

    groups = {"prequential, whole stream: error %": items(data["prequential"], "error"),
              "prequential, whole stream: (1-AUC)%": items(data["prequential"], "one_minus_auc_percent"),
              "80/20 Date split: error %": items(data["split_80_20"], "error"),
              "80/20 Date split: (1-AUC)%": items(data["split_80_20"], "one_minus_auc_percent")}
    path = bar_chart(groups, out_dir / "accuracy.png", xlabel="percent (log scale; lower is better)", log=True,
                     title=f"Error rate and (1-AUC)% on {data['messages']:,} messages (spam = positive)")
    return [path.name]


if __name__ == "__main__":
    import sys

    from .suite import main

    raise SystemExit(main(["--only", NAME, *sys.argv[1:]]))
