"""A bounded memory of the messages a model has learned, by fingerprint.

Spam filters see the same message more than once (a user files it twice, or moves it
from spam to ham). With a ledger, learning a message the model already holds under the
same label is a no-op, and learning it under another label first unlearns the old one.
Each entry keeps what unlearning needs: the label, the weight, and when the message was
learned (its document stamp on the model's ``n_learned`` clock and its timestamp), so a
model that forgets (half-lives) can subtract exactly the decayed weight the message still
has.

A fingerprint is a 16-byte BLAKE2b digest of the raw text when the message is given as
text (str or bytes), or of its sorted (feature, value) pairs when given as a mapping. The ledger holds at
most ``max_entries`` messages; the oldest learned is forgotten first (FIFO), after which
the message is treated as unknown (learning it again counts it again).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Hashable, Iterator, Sequence
from typing import NamedTuple

import numpy as np

from .store import Label

FINGERPRINT_BYTES = 16


class Entry(NamedTuple):
    """What the model remembers about one learned message."""

    label: Label
    weight: float
    learned_at: int  # the model's n_learned right after learning it
    t: float | None  # its timestamp (models that forget in time), else None


def text_fingerprint(text: str | bytes) -> bytes:
    """Fingerprint of a raw message (text, or the bytes of a raw email)."""
    data = b"bytes\0" + text if isinstance(text, bytes) else b"text\0" + text.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=FINGERPRINT_BYTES).digest()


def features_fingerprint(tokens: Sequence[Hashable], values: np.ndarray) -> bytes:
    """Fingerprint of a message given as features: order-independent, 1 and 1.0 alike.

    Pairs are written as repr(token) and repr(float(value)) and sorted; repr never
    contains the raw separator characters, so distinct documents give distinct texts.
    """
    pairs = sorted(f"{token!r}\x1f{float(value)!r}" for token, value in zip(tokens, values.tolist()))
    return hashlib.blake2b(b"features\0" + "\x1e".join(pairs).encode("utf-8", "surrogatepass"),
                           digest_size=FINGERPRINT_BYTES).digest()


class MessageLedger:
    """Fingerprint -> Entry for the last ``max_entries`` messages learned (FIFO)."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[bytes, Entry] = OrderedDict()

    def get(self, fingerprint: bytes) -> Entry | None:
        return self._entries.get(fingerprint)

    def record(self, fingerprint: bytes, entry: Entry) -> None:
        """Remember a message (as the newest), forgetting the oldest beyond the bound."""
        self._entries.pop(fingerprint, None)
        self._entries[fingerprint] = entry
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def forget(self, fingerprint: bytes) -> None:
        self._entries.pop(fingerprint, None)

    def items(self) -> Iterator[tuple[bytes, Entry]]:
        return iter(self._entries.items())

    def __contains__(self, fingerprint: object) -> bool:
        return fingerprint in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, MessageLedger) and self.max_entries == other.max_entries
                and list(self._entries.items()) == list(other._entries.items()))
