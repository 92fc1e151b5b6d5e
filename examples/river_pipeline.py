"""A river pipeline on the SpamAssassin stream: streamnb's adapter next to river's own naive Bayes.

Every pipeline is ``river.feature_extraction.BagOfWords() | classifier`` and is scored by
progressive validation (``river.evaluate.progressive_val_score``: each message is predicted,
then learned) with ``river.metrics.Accuracy``. The classifiers:

- ``river.naive_bayes.MultinomialNB()``, river's own;
- ``streamnb.river.MultinomialNB(unseen="score")``, the drop-in replacement: unseen words
  are scored as river scores them, so its accuracy equals river's;
- ``streamnb.river.MultinomialNB()``, streamnb's default (unseen words ignored).

It prints the accuracy and the throughput (messages per second, tokenization included:
both sides use the same BagOfWords) of each.

Usage::

    STREAMNB_SPAMASSASSIN=/path/to/spamassassin-public-corpus.tgz python examples/river_pipeline.py
    python examples/river_pipeline.py --corpus /path/to/corpus.tgz --limit 500   # a quick run
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tarfile
import time

from river import evaluate, feature_extraction, metrics, naive_bayes

from streamnb import river as streamnb_river

# Groups of the packaged corpus (package/data/<group>/<id>.<md5>.txt) and their labels.
GROUP_LABELS = {"easy-ham-1": "ham", "easy-ham-2": "ham", "hard-ham-1": "ham", "spam-1": "spam", "spam-2": "spam"}


def read_spamassassin_tgz(path: str, seed: int = 0) -> list[tuple[str, str]]:
    """(raw message text, "ham"/"spam") for every message of the packaged .tgz, in a seeded shuffle.

    A small stand-in until streamnb.datasets lands (its loader reads every layout of the
    corpus). The archive lists groups one after the other, so the messages are shuffled with
    a fixed seed: the stream then mixes ham and spam and is the same on every run.
    """
    messages = []
    with tarfile.open(path) as archive:
        for member in archive:
            parts = member.name.split("/")
            if (member.isfile() and len(parts) == 4 and parts[:2] == ["package", "data"]
                    and parts[2] in GROUP_LABELS and parts[3].endswith(".txt")):
                raw = archive.extractfile(member).read()
                # latin-1 maps every byte, so no message is dropped or altered for decoding.
                messages.append((member.name, raw.decode("latin-1"), GROUP_LABELS[parts[2]]))
    if not messages:
        raise SystemExit(f"{path}: no message found under package/data/<group>/ (is it the SpamAssassin .tgz?)")
    messages.sort()  # archive order is not guaranteed: start the shuffle from a fixed order
    random.Random(seed).shuffle(messages)
    return [(text, label) for _, text, label in messages]


def evaluate_pipeline(classifier, stream: list[tuple[str, str]]) -> tuple[float, float]:
    """(accuracy, messages per second) of BagOfWords() | classifier under progressive validation."""
    model = feature_extraction.BagOfWords() | classifier
    start = time.perf_counter()
    accuracy = evaluate.progressive_val_score(stream, model, metrics.Accuracy())
    elapsed = time.perf_counter() - start
    return accuracy.get(), len(stream) / elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=os.environ.get("STREAMNB_SPAMASSASSIN"),
                        help="the SpamAssassin .tgz (default: $STREAMNB_SPAMASSASSIN)")
    parser.add_argument("--limit", type=int, default=None, help="use only the first N messages of the stream")
    args = parser.parse_args(argv)
    if not args.corpus:
        parser.error("no corpus: set STREAMNB_SPAMASSASSIN or pass --corpus")

    stream = read_spamassassin_tgz(args.corpus)[: args.limit]
    n_spam = sum(label == "spam" for _, label in stream)
    print(f"SpamAssassin stream: {len(stream)} messages ({len(stream) - n_spam} ham, {n_spam} spam), "
          "BagOfWords() | classifier, progressive validation")
    print(f"{'classifier':<48} {'accuracy':>8} {'msg/s':>8}")
    candidates = [
        ("river.naive_bayes.MultinomialNB()", naive_bayes.MultinomialNB()),
        ("streamnb.river.MultinomialNB(unseen='score')", streamnb_river.MultinomialNB(unseen="score")),
        ("streamnb.river.MultinomialNB()", streamnb_river.MultinomialNB()),
    ]
    for name, classifier in candidates:
        accuracy, throughput = evaluate_pipeline(classifier, stream)
        print(f"{name:<48} {accuracy:>8.4f} {throughput:>8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
