"""A river pipeline on the SpamAssassin stream: streamnb's adapter next to river's own naive Bayes.

Every pipeline is ``river.feature_extraction.BagOfWords() | classifier`` and is scored by
progressive validation (``river.evaluate.progressive_val_score``: each message is predicted,
then learned) with ``river.metrics.Accuracy``. The classifiers:

- ``river.naive_bayes.MultinomialNB()``, river's own;
- ``streamnb.integrations.river.MultinomialNB(smoothing=Smoothing(unseen="score"))``, the
  drop-in replacement: unseen words are scored as river scores them, so its accuracy equals
  river's;
- ``streamnb.integrations.river.MultinomialNB()``, streamnb's default (unseen words ignored).

It prints the accuracy and the throughput (messages per second, tokenization included:
both sides use the same BagOfWords) of each.

Usage::

    STREAMNB_SPAMASSASSIN=/path/to/spamassassin-public-corpus.tgz python examples/river_pipeline.py
    python examples/river_pipeline.py --corpus /path/to/corpus.tgz --limit 500   # a quick run

The stream is in Date-header order (streamnb.filter.datasets.load_spamassassin).
"""

from __future__ import annotations

import argparse
import sys
import time

from river import evaluate, feature_extraction, metrics, naive_bayes

from streamnb.filter.datasets import load_spamassassin
from streamnb.integrations import river as streamnb_river
from streamnb.models import Smoothing


def spamassassin_stream(corpus: str | None, limit: int | None = None) -> list[tuple[str, str]]:
    """(raw message text, "ham"/"spam") in Date-header order, the way a filter meets its mail.

    Messages are decoded as latin-1, which maps every byte: nothing is dropped or altered.
    """
    messages = load_spamassassin(corpus)[:limit]
    return [(m.raw.decode("latin-1"), m.label) for m in messages]


def evaluate_pipeline(classifier, stream: list[tuple[str, str]]) -> tuple[float, float]:
    """(accuracy, messages per second) of BagOfWords() | classifier under progressive validation."""
    model = feature_extraction.BagOfWords() | classifier
    start = time.perf_counter()
    accuracy = evaluate.progressive_val_score(stream, model, metrics.Accuracy())
    elapsed = time.perf_counter() - start
    return accuracy.get(), len(stream) / elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="the SpamAssassin corpus, folder or archive (default: $STREAMNB_SPAMASSASSIN)")
    parser.add_argument("--limit", type=int, default=None, help="use only the first N messages of the stream")
    args = parser.parse_args(argv)
    stream = spamassassin_stream(args.corpus, args.limit)
    n_spam = sum(label == "spam" for _, label in stream)
    print(f"SpamAssassin stream: {len(stream)} messages ({len(stream) - n_spam} ham, {n_spam} spam), "
          "BagOfWords() | classifier, progressive validation")
    print(f"{'classifier':<80} {'accuracy':>8} {'msg/s':>8}")
    candidates = [
        ("river.naive_bayes.MultinomialNB()", naive_bayes.MultinomialNB()),
        ("streamnb.integrations.river.MultinomialNB(smoothing=Smoothing(unseen='score'))",
         streamnb_river.MultinomialNB(smoothing=Smoothing(unseen="score"))),
        ("streamnb.integrations.river.MultinomialNB()", streamnb_river.MultinomialNB()),
    ]
    for name, classifier in candidates:
        accuracy, throughput = evaluate_pipeline(classifier, stream)
        print(f"{name:<80} {accuracy:>8.4f} {throughput:>8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
