"""LogisticRegression on text: 20 Newsgroups, parameter mixing on Dask, and speed on raw mail.

- **20 Newsgroups** (bydate; ``$STREAMNB_20NEWS``): ``LogisticRegression(tokenizer=Tokenizer())``
  with its defaults, one ``learn_many`` on the train split shuffled with ``random.Random(0)``,
  accuracy on the test split; the same with ``passes=5``; one ``learn_one`` at a time
  (single pass). Beside them, on the same documents (the same Tokenizer's counts):
  scikit-learn's LinearSVC and LogisticRegression on sublinear TF-IDF (batch solvers, their
  defaults), and streamnb's MultinomialNB (alpha 0.01) and ComplementNB (alpha 0.3).
  The default learning rate was chosen on a random fifth of the train split held out (see
  ``streamnb.models.logistic.DEFAULT_LEARNING_RATE``): the test split was not used.
- **Parameter mixing**: ``distributed.train`` (Dask threads, 8 partitions) against one
  process on the same shuffled train split, test accuracy of both.
- **Speed on raw mail**: LogisticRegression on ``ByteNgrams(4, 3000)`` (the spam filter's
  part) against the numpy baseline of the TREC track (``contenders.NumpyByteGramLR``), CPU
  time of predict-then-learn over the corpus stream (SpamAssassin, or the synthetic one).
"""

from __future__ import annotations

import random
import sys
import time
from typing import Any

import numpy as np

from . import common
from .contenders import NumpyByteGramLR
from .data import NEWSGROUPS_ENV, load_20news

NAME = "logistic"
TITLE = "LogisticRegression: 20 Newsgroups, parameter mixing, speed on raw mail"
DEFAULT = False
REPEATED = False


def accuracy(model: Any, test: list[tuple[Any, str]]) -> float:
    predictions = model.predict_many([x for x, _ in test])
    return float(np.mean([p == y for p, (_, y) in zip(predictions, test)]))


def newsgroups(ctx: common.Context) -> dict[str, Any]:
    from streamnb import ComplementNB, LogisticRegression, MultinomialNB, Tokenizer
    from streamnb.integrations import distributed

    data = load_20news()
    if data is None:
        return {"skipped": f"{NEWSGROUPS_ENV} is not set (20news-bydate.jsonl.gz)"}
    train, test = data
    if ctx.quick:
        train, test = train[:2000], test[:1000]
    train = random.Random(0).sample(train, len(train))
    tokenizer = Tokenizer()
    X, y = [tokenizer(text) for text, _ in train], [label for _, label in train]
    held_out = [(tokenizer(text), label) for text, label in test]
    rows: dict[str, Any] = {}

    def timed(name: str, build) -> None:
        cpu = time.process_time()
        model = build()
        rows[name] = {"accuracy": accuracy(model, held_out), "cpu_seconds": time.process_time() - cpu}
        ctx.log(f"  {name}: test accuracy {rows[name]['accuracy']:.4f}")

    timed("LogisticRegression (defaults), one learn_many", lambda: LogisticRegression().learn_many(X, y))
    timed("LogisticRegression, learn_many with passes=5", lambda: LogisticRegression(passes=5).learn_many(X, y))
    timed("LogisticRegression without the IDF (idf_power=0), one learn_many",
          lambda: LogisticRegression(idf_power=0.0).learn_many(X, y))

    def single_pass():
        model = LogisticRegression()
        for x, label in zip(X, y):
            model.learn_one(x, label)
        return model

    timed("LogisticRegression (defaults), learn_one one at a time", single_pass)
    timed("MultinomialNB (alpha 0.01)", lambda: MultinomialNB(0.01).learn_many(X, y))
    timed("ComplementNB (alpha 0.3)", lambda: ComplementNB(0.3).learn_many(X, y))
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.feature_extraction.text import TfidfTransformer
    from sklearn.linear_model import LogisticRegression as SklearnLR
    from sklearn.svm import LinearSVC

    vectorizer = DictVectorizer()
    counts = vectorizer.fit_transform(X)
    tfidf = TfidfTransformer(sublinear_tf=True).fit(counts)
    train_matrix = tfidf.transform(counts)
    test_matrix = tfidf.transform(vectorizer.transform([x for x, _ in held_out]))
    truth = [label for _, label in held_out]
    for name, estimator in (("scikit-learn LinearSVC, sublinear TF-IDF", LinearSVC()),
                            ("scikit-learn LogisticRegression, sublinear TF-IDF", SklearnLR(max_iter=1000))):
        cpu = time.process_time()
        predicted = estimator.fit(train_matrix, y).predict(test_matrix)
        rows[name] = {"accuracy": float(np.mean(predicted == np.array(truth))), "cpu_seconds": time.process_time() - cpu}
        ctx.log(f"  {name}: test accuracy {rows[name]['accuracy']:.4f}")
    cpu = time.process_time()
    mixed = distributed.train(LogisticRegression(), list_bag(list(zip(X, y)), 8), scheduler="threads")
    rows["LogisticRegression, distributed.train (8 partitions, mixed)"] = {
        "accuracy": accuracy(mixed, held_out), "cpu_seconds": time.process_time() - cpu}
    return {"train": len(train), "test": len(test), "rows": rows}


def list_bag(records: list, partitions: int) -> Any:
    import dask.bag as db

    return db.from_sequence(records, npartitions=partitions)


def raw_mail_speed(ctx: common.Context) -> dict[str, Any]:
    from streamnb.models.fusion import default_lr

    corpus = ctx.corpus()
    raws, labels = corpus.raw, corpus.labels

    def streamnb_run() -> None:
        model = default_lr()
        for raw, label in zip(raws, labels):
            model.predict_log_proba_one(raw)
            model.learn_one(raw, label)

    def numpy_run() -> None:
        baseline = NumpyByteGramLR()
        for raw, label in zip(raws, labels):
            ids = baseline.features(raw)
            baseline.learn(ids, baseline.log_odds(ids), label == "spam")

    times = {"streamnb": [], "numpy": []}
    for _ in range(ctx.repeats):
        for name, run_once in (("streamnb", streamnb_run), ("numpy", numpy_run)):
            times[name].append(common.cpu_seconds(run_once))
    median = {name: float(np.median(values)) for name, values in times.items()}
    return {"messages": len(raws), "corpus": corpus.name,
            "us_per_message": {name: 1e6 * seconds / len(raws) for name, seconds in median.items()},
            "speedup": median["numpy"] / median["streamnb"]}


def run(ctx: common.Context) -> dict[str, Any]:
    return {"newsgroups": newsgroups(ctx), "raw_mail": raw_mail_speed(ctx)}


def markdown(data: dict[str, Any]) -> list[str]:
    lines = []
    news = data["newsgroups"]
    if "skipped" in news:
        lines.append(f"20 Newsgroups: skipped ({news['skipped']}).")
    else:
        lines += [f"20 Newsgroups, bydate: {news['train']:,} train documents (shuffled, seed 0), {news['test']:,} test.",
                  "", "| model | test accuracy | CPU seconds |", "|---|---|---|"]
        lines += [f"| {name} | {row['accuracy']:.4f} | {row['cpu_seconds']:.1f} |" for name, row in news["rows"].items()]
    raw = data["raw_mail"]
    lines += ["", f"Raw mail ({raw['messages']:,} messages of the {raw['corpus']} stream), predict then learn, CPU per "
              f"message: LogisticRegression on byte 4-grams {raw['us_per_message']['streamnb']:.0f} us, the numpy "
              f"baseline {raw['us_per_message']['numpy']:.0f} us: {raw['speedup']:.2f}x."]
    return lines


def targets(data: dict[str, Any]) -> list[dict[str, Any]]:
    out = [{"id": "lr_speed_raw_mail", "what": "LogisticRegression on byte 4-grams over the numpy baseline (CPU)",
            "value": data["raw_mail"]["speedup"], "op": ">=", "threshold": 3.0, "unit": "x"}]
    news = data["newsgroups"]
    if "rows" in news:
        out.append({"id": "lr_20news", "what": "LogisticRegression (defaults, Tokenizer()) test accuracy on 20 "
                    "Newsgroups after one learn_many", "value": news["rows"]["LogisticRegression (defaults), one "
                                                                            "learn_many"]["accuracy"],
                    "op": ">=", "threshold": 0.87, "unit": ""})
    return out


if __name__ == "__main__":
    from .suite import main

    raise SystemExit(main(["--only", NAME, *sys.argv[1:]]))
