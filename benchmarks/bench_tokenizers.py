"""Tokenizer throughput on the SpamAssassin public corpus, against river and scikit-learn.

Usage:
    python benchmarks/bench_tokenizers.py [CORPUS] [--quick] [--repeat 3] [--decode latin-1]

CORPUS is the corpus archive (.tgz/.tar.*, e.g. spamassassin-public-corpus.tgz) or a folder of
raw messages; without it the environment variable STREAMNB_SPAMASSASSIN is used.

Every tokenizer runs in the same process on the same messages: the text tokenizers get the
raw bytes decoded once up front (Latin-1 by default: one character per byte, nothing lost;
``--decode utf-8`` decodes with errors="replace"), EmailTokenizer gets the raw bytes. MB/s is
raw message megabytes (10^6 bytes) per CPU second of tokenizing, from the median time of
``--repeat`` rounds (each round runs every tokenizer once, interleaved);
ratios are against river's BagOfWords. ``--quick`` uses the first 300 messages (smoke run).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tarfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

# Run from a checkout without installing: make `import streamnb` find the sibling package.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from streamnb.mail import EmailTokenizer  # noqa: E402
from streamnb.text import Tokenizer  # noqa: E402

QUICK_MESSAGES = 300


def read_corpus(path: Path) -> list[bytes]:
    """Raw messages of the corpus, sorted by member name (deterministic order)."""
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.name != "cmds" and not p.name.startswith("."))
        txt = [p for p in files if p.suffix == ".txt"]
        return [p.read_bytes() for p in (txt or files)]
    messages: list[tuple[str, bytes]] = []
    with tarfile.open(path) as archive:
        for member in archive:
            if member.isfile() and member.name.endswith(".txt") and "/data/" in f"/{member.name}":
                handle = archive.extractfile(member)
                if handle is not None:
                    messages.append((member.name, handle.read()))
    messages.sort()
    return [data for _, data in messages]


def one_pass(function: Callable[[object], object], items: Sequence[object]) -> float:
    """CPU seconds of this process to apply ``function`` to every item once.

    CPU time rather than wall time: on a shared machine other processes' load then does not
    count against whichever tokenizer happened to be running.
    """
    start = time.process_time()
    for item in items:
        function(item)
    return time.process_time() - start


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="?", help="corpus archive or folder (default: $STREAMNB_SPAMASSASSIN)")
    parser.add_argument("--quick", action="store_true", help=f"only the first {QUICK_MESSAGES} messages")
    parser.add_argument("--repeat", type=int, default=3, help="runs per tokenizer; the median is reported")
    parser.add_argument("--decode", choices=("latin-1", "utf-8"), default="latin-1", help="bytes -> text for text tokenizers")
    args = parser.parse_args(argv)

    location = args.corpus or os.environ.get("STREAMNB_SPAMASSASSIN")
    if not location:
        parser.error("give the corpus path as an argument or set STREAMNB_SPAMASSASSIN")
    path = Path(location)
    if not path.exists():
        parser.error(f"corpus not found: {path}")

    raw = read_corpus(path)
    if args.quick:
        raw = raw[:QUICK_MESSAGES]
    if not raw:
        parser.error(f"no messages found in {path}")
    texts = [data.decode(args.decode, "replace") for data in raw]
    megabytes = sum(map(len, raw)) / 1e6

    contenders: list[tuple[str, Callable[[object], object], Sequence[object]]] = [
        ("streamnb Tokenizer()", Tokenizer(), texts),
        ("streamnb EmailTokenizer() [raw bytes]", EmailTokenizer(), raw),
    ]
    river_name = "river BagOfWords().transform_one"
    try:
        from river.feature_extraction import BagOfWords

        contenders.append((river_name, BagOfWords().transform_one, texts))
    except ImportError:
        print("river not installed: no river row and no ratios", file=sys.stderr)
    try:
        from sklearn.feature_extraction.text import CountVectorizer

        analyzer = CountVectorizer().build_analyzer()
        contenders.append(("sklearn CountVectorizer analyzer [list]", analyzer, texts))
        contenders.append(("sklearn analyzer + Counter [bag]", lambda text: Counter(analyzer(text)), texts))
    except ImportError:
        analyzer = None
        print("scikit-learn not installed: no scikit-learn rows", file=sys.stderr)

    print(f"corpus: {path}")
    print(f"{len(raw)} messages, {megabytes:.2f} MB raw, text decoded as {args.decode}; median of {args.repeat} runs")
    if analyzer is not None:
        tokenizer = Tokenizer()
        same = sum(tokenizer(text) == Counter(analyzer(text)) for text in texts)
        print(f"streamnb Tokenizer() == sklearn analyzer counts on {same}/{len(texts)} messages")

    # Rounds interleave the contenders, so load changes on the machine hit all of them alike.
    seconds: dict[str, list[float]] = {name: [] for name, _, _ in contenders}
    for _ in range(args.repeat):
        for name, function, items in contenders:
            seconds[name].append(one_pass(function, items))
    rates = {name: megabytes / statistics.median(times) for name, times in seconds.items()}
    river_rate = rates.get(river_name)
    print(f"{'tokenizer':40s} {'MB/s':>8s} {'vs river':>9s}")
    for name, rate in rates.items():
        ratio = f"{rate / river_rate:8.2f}x" if river_rate else "        -"
        print(f"{name:40s} {rate:8.1f} {ratio}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
