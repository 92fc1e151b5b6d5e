"""Data of the benchmark suite: the SpamAssassin stream (or a synthetic stand-in) and Zipf streams.

The corpus is the SpamAssassin public corpus in Date order (``load_spamassassin``), found
through ``--corpus`` or ``$STREAMNB_SPAMASSASSIN``. Without either, or with ``--corpus
synthetic``, a small generated corpus of email-like messages takes its place so the suite
(and its smoke test) runs anywhere; results.json then says ``"name": "synthetic"`` and the
figures say nothing about real mail.

Every library sees the same messages in the same order: raw bytes (for EmailTokenizer),
text decoded as Latin-1 (one character per byte, nothing lost; for the text tokenizers),
and, for the "pre-tokenized" measurements, the bags of words of streamnb's default
Tokenizer (lowercased runs of 2+ word characters, scikit-learn's default token pattern),
computed once.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Any

import numpy as np

from streamnb import Tokenizer
from streamnb.filter.datasets import SPAMASSASSIN_ENV, Message, load_spamassassin

SYNTHETIC = "synthetic"
SYNTHETIC_MESSAGES = 2000
QUICK_MESSAGES = 300


@dataclass
class Corpus:
    """A labelled message stream in arrival (Date) order."""

    name: str  # "spamassassin" or "synthetic"
    source: str
    messages: list[Message] = field(repr=False)
    _texts: list[str] | None = field(default=None, repr=False)
    _dicts: list[dict[str, int]] | None = field(default=None, repr=False)

    @property
    def raw(self) -> list[bytes]:
        return [m.raw for m in self.messages]

    @property
    def labels(self) -> list[str]:
        return [m.label for m in self.messages]

    @property
    def texts(self) -> list[str]:
        """The messages decoded as Latin-1 (computed once)."""
        if self._texts is None:
            self._texts = [m.raw.decode("latin-1") for m in self.messages]
        return self._texts

    @property
    def dicts(self) -> list[dict[str, int]]:
        """Bags of words by streamnb's default Tokenizer (computed once, shared by every library)."""
        if self._dicts is None:
            tokenizer = Tokenizer()
            self._dicts = [dict(tokenizer(text)) for text in self.texts]
        return self._dicts

    def __len__(self) -> int:
        return len(self.messages)

    def describe(self) -> dict[str, Any]:
        labels = self.labels
        return {"name": self.name, "source": self.source, "order": "date", "messages": len(labels),
                "spam": labels.count("spam"), "ham": labels.count("ham"),
                "megabytes": round(sum(len(m.raw) for m in self.messages) / 1e6, 3)}

    def split(self, train_fraction: float = 0.8) -> int:
        """Index of the first test message: train on the first 80% in Date order, test on the rest."""
        return int(round(len(self.messages) * train_fraction))


def corpus_name(path: str | None = None) -> str:
    """Which corpus :func:`load_corpus` would read for ``path``: "spamassassin" or "synthetic"."""
    location = path or os.environ.get(SPAMASSASSIN_ENV)
    return SYNTHETIC if not location or location == SYNTHETIC else "spamassassin"


def load_corpus(path: str | None = None, limit: int | None = None) -> Corpus:
    """The SpamAssassin stream from ``path`` or $STREAMNB_SPAMASSASSIN, else the synthetic one.

    ``limit`` keeps the first messages in Date order (the --quick slice).
    """
    location = path or os.environ.get(SPAMASSASSIN_ENV)
    if corpus_name(path) == SYNTHETIC:
        return Corpus(SYNTHETIC, "generated (benchmarks.data.synthetic_messages, seed 0)",
                      synthetic_messages(limit or SYNTHETIC_MESSAGES))
    messages = load_spamassassin(location, order="date")
    if limit is not None:
        messages = messages[:limit]
    return Corpus("spamassassin", os.path.basename(str(location)), messages)


# -- a synthetic email corpus ---------------------------------------------------------------

_SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "pe", "da", "gu", "ba", "zo", "fi",
              "he", "ja", "qu", "xe", "wy", "co", "mar", "ten", "ship", "ver", "lin", "dor")


def _pseudo_words(n: int, rng: random.Random) -> list[str]:
    """n distinct pronounceable words of 2 to 4 syllables."""
    words: dict[str, None] = {}
    while len(words) < n:
        words["".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))] = None
    return list(words)


def synthetic_messages(n: int, seed: int = 0) -> list[Message]:
    """n email-like raw messages (about 1 in 3 spam) in Date order; deterministic for a seed.

    Headers (From, To, Subject, Date, Message-ID, Content-Type) and a plain-text body. Both
    classes draw most words from a shared Zipf-weighted vocabulary and the rest from their
    own topic words, with some cross-over, so the classes overlap as real mail does. Spam
    comes from its own domains and often carries a link.
    """
    rng = random.Random(seed)
    vocabulary = _pseudo_words(3000, rng)
    common, ham_words, spam_words = vocabulary[:1500], vocabulary[1500:2250], vocabulary[2250:]
    zipf = [1.0 / (rank + 1) for rank in range(1500)]
    topical = [1.0 / (rank + 1) ** 0.8 for rank in range(750)]
    ham_domains = ["example.org", "lists.example.net", "univ.example.edu", "work.example.com"]
    spam_domains = ["deals.example.biz", "cheap.example.info", "offers.example.cc", "win.example.ws"]
    when = 1009843200.0  # 2002-01-01 00:00 UTC
    messages = []
    for i in range(n):
        spam = rng.random() < 1 / 3
        own, other = (spam_words, ham_words) if spam else (ham_words, spam_words)
        length = rng.randint(30, 250)
        n_own = int(length * rng.uniform(0.15, 0.4))
        n_other = int(length * rng.uniform(0.0, 0.08))
        body = (rng.choices(common, zipf, k=length - n_own - n_other) + rng.choices(own, topical, k=n_own)
                + rng.choices(other, topical, k=n_other))
        rng.shuffle(body)
        lines = [" ".join(body[j:j + 12]) for j in range(0, len(body), 12)]
        domain = rng.choice(spam_domains if spam else ham_domains)
        if spam and rng.random() < 0.7:
            lines.append(f"http://www.{domain}/{rng.choice(own)}")
        when += rng.uniform(60, 7200)
        sender = rng.choice(own)
        head = [
            f"From: {sender.title()} <{sender}@{domain}>",
            "To: reader@example.org",
            "Subject: " + " ".join(rng.choices(own + common[:50], k=rng.randint(2, 7))),
            f"Date: {formatdate(when)}",
            f"Message-ID: <{i}.{seed}@{domain}>",
            "MIME-Version: 1.0",
            'Content-Type: text/plain; charset="us-ascii"',
        ]
        raw = ("\n".join(head) + "\n\n" + "\n".join(lines) + "\n").encode("ascii")
        label = "spam" if spam else "ham"
        messages.append(Message(raw=raw, label=label, group=f"synthetic_{label}", name=f"{i:05d}", date=when))
    return messages


# -- synthetic Zipf streams (size sweeps) ------------------------------------------------------

def word_names(n_vocab: int) -> list[str]:
    """The words of a synthetic vocabulary: w0, w1, ... (rank order)."""
    return [f"w{i}" for i in range(n_vocab)]


def zipf_documents(n_vocab: int, n_docs: int, n_tokens: int, rng: np.random.Generator) -> list[dict[str, int]]:
    """n_docs bags of n_tokens words drawn from a Zipf law (P(rank r) ~ 1/r) over n_vocab words."""
    p = 1.0 / np.arange(1, n_vocab + 1)
    p /= p.sum()
    draws = rng.choice(n_vocab, size=(n_docs, n_tokens), p=p)
    return [dict(Counter(f"w{w}" for w in row.tolist())) for row in draws]


def cover_documents(names: list[str], per_document: int = 1000) -> list[dict[str, int]]:
    """Documents that hold every word of the vocabulary once (so |V| is exactly len(names))."""
    return [dict.fromkeys(names[start:start + per_document], 1) for start in range(0, len(names), per_document)]


# -- 20 Newsgroups ------------------------------------------------------------------------------

NEWSGROUPS_ENV = "STREAMNB_20NEWS"


def load_20news(path: str | None = None) -> tuple[list[tuple[str, str]], list[tuple[str, str]]] | None:
    """20 Newsgroups, bydate split, from ``path`` or $STREAMNB_20NEWS (a ``.jsonl.gz`` of
    objects with split, label, id and text): (train, test) lists of (text, label), in the
    file's order; None when it is not given."""
    import gzip
    import json

    location = path or os.environ.get(NEWSGROUPS_ENV)
    if not location:
        return None
    train, test = [], []
    with gzip.open(location, "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            (train if record["split"] == "train" else test).append((record["text"], record["label"]))
    return train, test
