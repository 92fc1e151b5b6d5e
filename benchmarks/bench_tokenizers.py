"""Tokenizer throughput on the stream: streamnb's Tokenizer and EmailTokenizer against river and scikit-learn.

Every tokenizer sees the same messages: the text tokenizers get the raw bytes decoded once
as Latin-1 (one character per byte, nothing lost), EmailTokenizer gets the raw bytes (it
parses MIME, decodes bodies and headers, and adds header, URL and MIME features, so it
does more work). MB/s is raw message megabytes (10^6 bytes) per CPU second
(time.process_time) of tokenizing, median of the rounds with min and max; the tokenizers
take turns within each round; ratios are against river's BagOfWords, round by round.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from streamnb import EmailTokenizer, Tokenizer

from . import common

NAME = "tokenizers"
TITLE = "Tokenizers"
DEFAULT = True
RIVER = "river BagOfWords().transform_one"


def one_pass(function: Callable[[Any], Any], items: Sequence[Any]) -> float:
    """CPU seconds to apply ``function`` to every item once.

    Each result is dropped at once, as in a stream (tokenize, learn, move on). Keeping all
    6,046 bags alive instead makes the garbage collector walk an ever larger heap, which
    adds about 10% to the fastest tokenizer and 3% to river's: a cost of the harness.
    """
    def loop():
        for item in items:
            function(item)
    return common.cpu_seconds(loop)


def run(ctx: common.Context) -> dict[str, Any]:
    from river.feature_extraction import BagOfWords
    from sklearn.feature_extraction.text import CountVectorizer

    corpus = ctx.corpus()
    texts, raw = corpus.texts, corpus.raw
    megabytes = sum(map(len, raw)) / 1e6
    analyzer = CountVectorizer().build_analyzer()
    contenders: dict[str, tuple[str, Callable[[Any], Any], Sequence[Any]]] = {
        "streamnb Tokenizer()": ("streamnb", Tokenizer(), texts),
        "streamnb EmailTokenizer() [raw bytes]": ("streamnb", EmailTokenizer(), raw),
        RIVER: ("river", BagOfWords().transform_one, texts),
        "scikit-learn CountVectorizer analyzer [token list]": ("scikit-learn", analyzer, texts),
        "scikit-learn analyzer + Counter [bag of words]": ("scikit-learn", lambda text: Counter(analyzer(text)), texts),
    }
    runs = common.rounds({name: (lambda f=function, xs=items: one_pass(f, xs))
                          for name, (_, function, items) in contenders.items()}, ctx.repeats, ctx.log)
    same = sum(bag == Counter(analyzer(text)) for bag, text in zip(corpus.dicts, texts))  # dicts: Tokenizer()
    rows = {}
    for name, (library, _, _) in contenders.items():
        seconds = common.summary(runs[name], common.CPU)
        rows[name] = {"library": library, "seconds": seconds, "mb_per_s": common.rate(seconds, megabytes),
                      "vs_river": common.ratio(runs[RIVER], runs[name])}
    ctx.log(f"  Tokenizer() vs river BagOfWords: {rows['streamnb Tokenizer()']['vs_river']['median']:.2f}x")
    return {"messages": len(texts), "megabytes": megabytes, "clock": common.CPU, "rows": rows,
            "same_as_sklearn_analyzer": same}


def markdown(data: dict[str, Any]) -> list[str]:
    lines = [f"{data['messages']:,} messages, {data['megabytes']:.1f} MB of raw mail; MB per CPU second, median of "
             "the rounds (min-max). streamnb's Tokenizer gives exactly scikit-learn's analyzer counts on "
             f"{data['same_as_sklearn_analyzer']:,} of the {data['messages']:,} messages.", "",
             "| tokenizer | MB/s (min-max) | vs river |", "|---|---:|---:|"]
    for name, row in data["rows"].items():
        r = row["mb_per_s"]
        lines.append(f"| {common.cell(name)} | {r['median']:.1f} ({r['min']:.1f}-{r['max']:.1f}) | "
                     f"{row['vs_river']['median']:.2f}x |")
    return lines


def targets(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 3: the default tokenizer >= 4x river's BagOfWords; the email tokenizer >= 1x."""
    rows = data["rows"]
    return [
        {"id": "tokenizer_vs_river", "what": "Tokenizer() throughput vs river BagOfWords",
         "value": rows["streamnb Tokenizer()"]["vs_river"]["median"], "op": ">=", "threshold": 4, "unit": "x"},
        {"id": "email_tokenizer_vs_river", "what": "EmailTokenizer() throughput (raw bytes, MIME parsing included) "
         "vs river BagOfWords", "value": rows["streamnb EmailTokenizer() [raw bytes]"]["vs_river"]["median"],
         "op": ">=", "threshold": 1, "unit": "x"},
    ]


def plots(data: dict[str, Any], out_dir) -> list[str]:
    from .plotting import bar_chart

    items = [(name, row["mb_per_s"], row["library"]) for name, row in data["rows"].items()]
    path = bar_chart({"": items}, out_dir / "tokenizers.png", xlabel="MB of raw mail per CPU second",
                     title=f"Tokenizer throughput ({data['messages']:,} messages, {data['megabytes']:.1f} MB)")
    return [path.name]


if __name__ == "__main__":
    import sys

    from .suite import main

    raise SystemExit(main(["--only", NAME, *sys.argv[1:]]))
