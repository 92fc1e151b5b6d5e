"""Ceilings: how fast a streaming naive Bayes that maps tokens to ids with a Python dict could be, against river.

Two targets ask for ratios that such a store cannot reach whatever the model code does:
MNB on token dicts >= 20x river's MultinomialNB, and MNB from raw text >= 15x river's
``BagOfWords() | MultinomialNB()``. This section times the irreducible part of each,
in the same rounds as river, so the best ratio any such implementation could have (its
ceiling) is measured rather than argued:

- **lookup**: turning each message's tokens into vocabulary ids, the one step a count
  store keyed by token cannot skip: ``np.fromiter(map(vocab.get, tokens))`` over a dict that
  grows as the stream is learned (new tokens added with one ``dict.update``). No counting,
  no scoring.
- **split + count**: the core of streamnb's default tokenizer, two C calls per message:
  ``Counter(text.encode("latin-1").translate(table).decode("latin-1").split())``.

ceiling(dicts) = river MNB time / lookup time; ceiling(text) = river pipeline time /
(split + count + lookup time). A ratio target above its ceiling needs compiled code (a
token table and a tokenizer in C, say).
Clock: CPU time (process_time); median of the rounds, ratios taken round by round.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import compress, repeat
from typing import Any

import numpy as np

from . import common
from .bench_throughput import prequential
from .contenders import river_model, river_pipeline

NAME = "ceilings"
TITLE = "Ceilings: the irreducible steps, timed against river"
DEFAULT = True


def lookup_only(dicts) -> float:
    """CPU seconds to map every message's tokens to ids, growing the vocabulary as it goes."""
    def loop():
        vocabulary: dict[str, int] = {}
        get = vocabulary.get
        for x in dicts:
            ids = np.fromiter(map(get, x, repeat(-1)), np.int64, len(x))
            if ids.min(initial=0) < 0:
                new = list(compress(x, (ids < 0).tolist()))
                vocabulary.update(zip(new, range(len(vocabulary), len(vocabulary) + len(new))))
    return common.cpu_seconds(loop)


def split_and_count(texts) -> float:
    """CPU seconds of the default tokenizer's two C calls on every message."""
    word = re.compile(r"\w")
    # bytes.translate table: a Latin-1 word character to its lowercase, anything else to a space.
    table = bytes(ord(chr(c).lower()) if word.match(chr(c)) else 32 for c in range(256))

    def loop():
        for text in texts:
            Counter(text.encode("latin-1").translate(table).decode("latin-1").split())
    return common.cpu_seconds(loop)


def run(ctx: common.Context) -> dict[str, Any]:
    corpus = ctx.corpus()
    texts, dicts, labels = corpus.texts, corpus.dicts, corpus.labels
    contenders = {
        "river MNB (token dicts)": lambda: prequential(river_model("MNB"), dicts, labels)[0],
        "river BagOfWords | MNB (raw text)": lambda: prequential(river_pipeline("MNB"), texts, labels)[0],
        "lookup only": lambda: lookup_only(dicts),
        "split + count": lambda: split_and_count(texts),
    }
    ctx.log(f"  {len(contenders)} timings x {ctx.repeats} rounds; {len(corpus)} messages")
    runs = common.rounds(contenders, ctx.repeats, ctx.log)
    floor_text = [a + b for a, b in zip(runs["split + count"], runs["lookup only"])]
    out = {"messages": len(corpus), "clock": common.CPU,
           "seconds": {name: common.summary(values, common.CPU) for name, values in runs.items()},
           "ceiling_dicts": common.ratio(runs["river MNB (token dicts)"], runs["lookup only"]),
           "ceiling_text": common.ratio(runs["river BagOfWords | MNB (raw text)"], floor_text)}
    ctx.log(f"  ceiling on token dicts {out['ceiling_dicts']['median']:.1f}x, "
            f"from raw text {out['ceiling_text']['median']:.1f}x")
    return out


def markdown(data: dict[str, Any]) -> list[str]:
    n = data["messages"]
    lines = [f"{n:,} messages; CPU microseconds per message, median of the rounds (min-max).", "",
             "| step | us/msg (min-max) |", "|---|---:|"]
    for name, stat in data["seconds"].items():
        lines.append(f"| {common.cell(name)} | {stat['median'] * 1e6 / n:,.1f} "
                     f"({stat['min'] * 1e6 / n:,.1f}-{stat['max'] * 1e6 / n:,.1f}) |")
    dicts, text = data["ceiling_dicts"], data["ceiling_text"]
    lines += ["", f"Ceiling on token dicts (river MNB / lookup only): {dicts['median']:.1f}x "
              f"({dicts['min']:.1f}-{dicts['max']:.1f}); the target asks 20x.",
              f"Ceiling from raw text (river pipeline / (split + count + lookup)): {text['median']:.1f}x "
              f"({text['min']:.1f}-{text['max']:.1f}); the target asks 15x. Both ceilings leave no time at all "
              "for counting, scoring or validating input."]
    return lines


if __name__ == "__main__":
    import sys

    from .suite import main

    raise SystemExit(main(["--only", NAME, *sys.argv[1:]]))
