"""Tokenizer throughput on the stream: streamnb's Tokenizer and EmailTokenizer against river and scikit-learn.

Every tokenizer sees the same messages: the text tokenizers get the raw bytes decoded once
as Latin-1 (one character per byte, nothing lost), EmailTokenizer gets the raw bytes (it
parses MIME, decodes bodies and headers, and adds header, URL and MIME features, so it
does more work). Python's own ``email.message_from_bytes`` (its default compat32 policy,
the parse alone: no decoding, no tokens) is the yardstick of the email tokenizer (issue 14:
>= 20x); "[core, no dict]" is the same tokenizer without building the Python dict, i.e.
what a model pays that goes from bytes to vocabulary ids in the core. "[floor of a dict
result]" builds a plain dict of each message's features from key strings that already
exist, with no parsing at all (``dict(zip(keys, counts))``): no call that returns the
features as a Python mapping can be faster, so its ratio to the parse bounds the target row.
MB/s is raw message megabytes (10^6 bytes) per CPU second (time.process_time) of
tokenizing, median of the rounds with min and max; the tokenizers take turns within each
round; ratios are against river's BagOfWords, round by round.
"""

from __future__ import annotations

import email
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from streamnb import EmailTokenizer, Tokenizer

from . import common

NAME = "tokenizers"
TITLE = "Tokenizers"
DEFAULT = True
RIVER = "river BagOfWords().transform_one"
EMAIL = "streamnb EmailTokenizer() [raw bytes]"
EMAIL_CORE = "streamnb EmailTokenizer() [core, no dict]"
PARSE = "Python email.message_from_bytes [parse only]"
DICT_FLOOR = "CPython dict(zip(keys, counts)) of the same features [floor of a dict result]"


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
    email_bags = [EmailTokenizer()(message) for message in raw]
    keys_and_counts = [(list(bag), list(bag.values())) for bag in email_bags]
    contenders: dict[str, tuple[str, Callable[[Any], Any], Sequence[Any]]] = {
        "streamnb Tokenizer()": ("streamnb", Tokenizer(), texts),
        EMAIL: ("streamnb", EmailTokenizer(), raw),
        EMAIL_CORE: ("streamnb", EmailTokenizer()._core.feature_count, raw),
        PARSE: ("python", email.message_from_bytes, raw),
        DICT_FLOOR: ("python", lambda pair: dict(zip(*pair)), keys_and_counts),
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
        rows[name]["us_per_message"] = common.summary([s / len(raw) * 1e6 for s in runs[name]], common.CPU)
    for name in (EMAIL, EMAIL_CORE, DICT_FLOOR):
        rows[name]["vs_email_parse"] = common.ratio(runs[PARSE], runs[name])
    ctx.log(f"  Tokenizer() vs river BagOfWords: {rows['streamnb Tokenizer()']['vs_river']['median']:.2f}x")
    ctx.log(f"  EmailTokenizer() vs email.message_from_bytes: {rows[EMAIL]['vs_email_parse']['median']:.2f}x "
            f"({rows[EMAIL]['us_per_message']['median']:.1f} us a message; core alone "
            f"{rows[EMAIL_CORE]['vs_email_parse']['median']:.2f}x, {rows[EMAIL_CORE]['us_per_message']['median']:.1f} us; "
            f"a dict of the features alone {rows[DICT_FLOOR]['vs_email_parse']['median']:.2f}x, "
            f"{rows[DICT_FLOOR]['us_per_message']['median']:.1f} us)")
    return {"messages": len(texts), "megabytes": megabytes, "clock": common.CPU, "rows": rows,
            "same_as_sklearn_analyzer": same,
            "email_features_per_message": sum(map(len, email_bags)) / len(email_bags)}


def markdown(data: dict[str, Any]) -> list[str]:
    lines = [f"{data['messages']:,} messages, {data['megabytes']:.1f} MB of raw mail; MB per CPU second, median of "
             "the rounds (min-max). streamnb's Tokenizer gives exactly scikit-learn's analyzer counts on "
             f"{data['same_as_sklearn_analyzer']:,} of the {data['messages']:,} messages."
             + (f" EmailTokenizer() gives {data['email_features_per_message']:.1f} distinct features a message."
                if "email_features_per_message" in data else ""), "",
             "| tokenizer | MB/s (min-max) | µs a message | vs river | vs email parse |",
             "|---|---:|---:|---:|---:|"]
    for name, row in data["rows"].items():
        r = row["mb_per_s"]
        per = row.get("us_per_message", {}).get("median")
        vs_parse = row.get("vs_email_parse", {}).get("median")
        lines.append(f"| {common.cell(name)} | {r['median']:.1f} ({r['min']:.1f}-{r['max']:.1f}) | "
                     f"{'' if per is None else f'{per:.1f}'} | {row['vs_river']['median']:.2f}x | "
                     f"{'' if vs_parse is None else f'{vs_parse:.2f}x'} |")
    return lines


def targets(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 3: the default tokenizer >= 4x river's BagOfWords; the email tokenizer >= 1x.
    Issue 14: the email tokenizer >= 20x Python's email parse of the same bytes."""
    rows = data["rows"]
    return [
        {"id": "tokenizer_vs_river", "what": "Tokenizer() throughput vs river BagOfWords",
         "value": rows["streamnb Tokenizer()"]["vs_river"]["median"], "op": ">=", "threshold": 4, "unit": "x"},
        {"id": "email_tokenizer_vs_river", "what": "EmailTokenizer() throughput (raw bytes, MIME parsing included) "
         "vs river BagOfWords", "value": rows[EMAIL]["vs_river"]["median"],
         "op": ">=", "threshold": 1, "unit": "x"},
        {"id": "email_tokenizer_vs_email_parse", "what": "EmailTokenizer() throughput (raw bytes to a feature "
         "Counter) vs Python's email.message_from_bytes (parse only)",
         "value": rows[EMAIL]["vs_email_parse"]["median"], "op": ">=", "threshold": 20, "unit": "x"},
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
