"""Stream the SpamAssassin public corpus through a naive Bayes spam filter.

Each message is classified by the model as it stands, then learned (prequential
evaluation), in Date-header order: the way a filter meets its mail. Prints accuracy,
false-positive rate (ham marked spam) and the rest of the report.

    python examples/stream_spamassassin.py [--corpus PATH] [--limit N]

The corpus path defaults to $STREAMNB_SPAMASSASSIN (a folder or an archive; see
streamnb.datasets for the layouts it reads).
"""

from __future__ import annotations

import argparse
import re
from collections import Counter

from streamnb import MultinomialNB
from streamnb.datasets import load_spamassassin
from streamnb.evaluate import progressive_evaluate

WORD = re.compile(r"\b\w\w+\b")


def words(raw: bytes) -> dict[str, int]:
    """Lowercased words of 2+ word characters of the whole raw message."""
    return dict(Counter(WORD.findall(raw.decode("latin-1").lower())))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="corpus folder or archive (default: $STREAMNB_SPAMASSASSIN)")
    parser.add_argument("--limit", type=int, help="only the first N messages of the stream")
    args = parser.parse_args(argv)
    messages = load_spamassassin(args.corpus)[: args.limit]
    model = MultinomialNB(alpha=1.0)
    report = progressive_evaluate(model, ((words(m.raw), m.label) for m in messages),
                                  total=len(messages), progress=True)
    print(report.summary())
    print(f"vocabulary: {model.n_features} words; classes: {model.class_counts}")


if __name__ == "__main__":
    main()
