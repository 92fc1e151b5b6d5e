"""Which messages a spam-filter setting gets wrong on the Date-ordered SpamAssassin stream, and when.

Usage:
    python benchmarks/accuracy_errors.py [CORPUS] [--model dirichlet|additive] [--top N]

One prequential run (predict each message, then learn it) of the EmailPipeline setting
(EmailTokenizer with word pairs, EmailTfidf weights) with its multinomial model
(``dirichlet``, the default: ``benchmarks.email_pipeline.default_model()``,
MultinomialNB(alpha=0.03, mu=300, uniform prior)) or the additive one it replaced
(``additive``: MultinomialNB(alpha=0.003, uniform prior)). For each
message wrongly classified at the model's own decision it prints the stream index, the
corpus group, the log-odds log P(spam|x) - log P(ham|x), how many hams had been learned
before it, whether it is the first message from its sender address, and From / Subject.
Then a summary of the false positives by phase of the stream, and the N hams with the
highest log-odds (those a cutoff must let through to keep the FPR at the target).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.accuracy_variants import TARGET_FPR  # noqa: E402
from benchmarks.email_pipeline import EmailPipeline  # noqa: E402
from streamnb import MultinomialNB  # noqa: E402
from streamnb.features.email import parse_message  # noqa: E402
from streamnb.filter.datasets import load_spamassassin  # noqa: E402

_ADDRESS = re.compile(r"[\w.+-]+@[\w.-]+")


def sender(raw: bytes) -> tuple[str, str, str]:
    """(sender address, From header, Subject) of a raw message, for people."""
    parsed = parse_message(raw)
    value = parsed.header("from") or ""
    found = _ADDRESS.search(value)
    return (found.group(0).lower() if found else value.lower()), value, parsed.subject


def run(messages: Sequence, model_name: str) -> tuple[np.ndarray, list[int]]:
    """Prequential log-odds of every message and the number of hams learned before each."""
    additive = MultinomialNB(alpha=0.003, class_prior="uniform")  # EmailPipeline's model before mu
    pipeline = EmailPipeline(model=None if model_name == "dirichlet" else additive)
    log_odds, hams_before, hams = [], [], 0
    for message in messages:
        log_proba = pipeline.predict_log_proba_one(message.raw)
        if len(log_proba) == 2:
            log_odds.append(log_proba["spam"] - log_proba["ham"])
        else:  # untrained (0) or one class known (+-inf)
            log_odds.append(0.0 if not log_proba else (math.inf if "spam" in log_proba else -math.inf))
        hams_before.append(hams)
        pipeline.learn_one(message.raw, message.label)
        hams += message.label == "ham"
    return np.array(log_odds), hams_before


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="?", help="corpus archive or folder (default: $STREAMNB_SPAMASSASSIN)")
    parser.add_argument("--model", choices=("dirichlet", "additive"), default="dirichlet")
    parser.add_argument("--top", type=int, help="hams with the highest log-odds to list (default: one more than "
                        "the FPR target lets through, 13 on the whole corpus)")
    args = parser.parse_args(argv)
    location = args.corpus or os.environ.get("STREAMNB_SPAMASSASSIN")
    if not location:
        parser.error("give the corpus path as an argument or set STREAMNB_SPAMASSASSIN")
    messages = load_spamassassin(location, order="date")
    log_odds, hams_before = run(messages, args.model)

    seen: set[str] = set()
    first = []
    info = []
    for message in messages:
        address, from_, subject = sender(message.raw)
        first.append(address not in seen)
        seen.add(address)
        info.append((from_, subject))

    is_spam = np.array([m.label == "spam" for m in messages])
    allowed = math.floor(TARGET_FPR * int((~is_spam).sum()))  # ham the FPR target lets through
    top = allowed + 1 if args.top is None else args.top
    flagged = log_odds > 0
    print(f"{len(messages)} messages; {args.model}: {int((flagged & ~is_spam).sum())} ham marked spam, "
          f"{int((~flagged & is_spam).sum())} spam missed (a log-odds of exactly 0 counts as ham here)")
    print(f"{'index':>5} {'group':10} {'label':5} {'log-odds':>8} {'hams':>5} {'1st':3}  from | subject")
    for i, message in enumerate(messages):
        if flagged[i] != is_spam[i]:
            from_, subject = info[i]
            print(f"{i:5d} {message.group:10} {message.label:5} {log_odds[i]:8.1f} {hams_before[i]:5d} "
                  f"{'yes' if first[i] else 'no':3}  {from_[:38]} | {subject[:50]}")

    fp = [i for i in range(len(messages)) if flagged[i] and not is_spam[i]]
    print("\nham marked spam, by hams learned before it:")
    for low, high in ((0, 1), (1, 100), (100, 1000), (1000, 10**9)):
        chosen = [i for i in fp if low <= hams_before[i] < high]
        groups = Counter(messages[i].group for i in chosen)
        print(f"  {low:>5}-{high if high < 10**9 else '':<5} {len(chosen):3d}  first from their sender: "
              f"{sum(first[i] for i in chosen):3d}  groups: {dict(groups)}")
    order = np.argsort(-np.nan_to_num(np.where(is_spam, -np.inf, log_odds), posinf=1e300))[:top]
    print(f"\nthe {top} hams with the highest log-odds (a cutoff at the FPR target must pass all but {allowed}):")
    for i in order:
        print(f"  {i:5d} {messages[i].group:10} {log_odds[i]:8.1f} hams before {hams_before[i]:5d} "
              f"{'first' if first[i] else '     '}  {info[i][0][:38]}")
    cutoff = np.sort(np.nan_to_num(log_odds[~is_spam], posinf=1e300))[::-1][allowed]
    missed = int((is_spam & ~(log_odds > cutoff)).sum())
    print(f"cutoff just above ham number {allowed + 1} (log-odds {cutoff:.1f}): {missed} spam missed, accuracy "
          f"{1 - (allowed + missed) / len(messages):.2%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
