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

``MessageLedger`` is that bounded memory, whatever a model keeps per message: the naive
Bayes ``Ledger`` keeps an ``Entry``; a logistic regression and a fusion keep the steps a
message's learning took (:mod:`streamnb.steps`), under the same fingerprints.
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, Protocol, TypeVar

from .errors import IncompatibleModelsError, InvalidInputError, describe
from .store import _raw_array, _raw_bytes, _raw_values, _require
from .validate import Label

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from . import _core
    from .store import Arrays
else:
    from ._lazy import numpy as np

FINGERPRINT_BYTES = 16

#: A message as the model reads it (a mapping feature -> value, or raw text).
Document = Any


class CountingModel(Protocol):
    """What the ledger asks of the counting it stands in front of (a ``DiscreteNB``'s
    ``Learner``): the ledger sits below the models and knows them only by this."""

    core: _core.Core[Any]

    @property
    def n_learned(self) -> int: ...

    def check_learn(self, x: Document, label: Label, weight: float, when: float | None) -> None: ...

    def learn_counts(self, x: Document, label: Label, weight: float, when: float | None) -> None: ...

    def unlearn_counts(self, x: Document, label: Label, weight: float, learned_at: int | None,
                       when: float | None) -> None: ...

    def unlearn_many_counts(self, documents: list[Document], labels: list[Label], weights: list[float],
                             stamps: list[int | None], times: list[float | None]) -> None: ...


class Entry(NamedTuple):
    """What the model remembers about one learned message."""

    label: Label
    weight: float
    learned_at: int  # the model's n_learned right after learning it
    t: float | None  # its timestamp (models that forget in time), else None


# The message fingerprinted last, and its digest. One message is looked up several times in
# a row (a fusion observing it: naive Bayes' ledger, then its records; the service deciding
# whether to keep it), each of which hashed it again. Matched by identity: a str or bytes
# object never changes, and this reference keeps it alive, so its id is not reused meanwhile.
_last_fingerprinted: tuple[str | bytes, bytes] | None = None


def text_fingerprint(text: str | bytes) -> bytes:
    """Fingerprint of a raw message (text, or the bytes of a raw email).

    Parameters
    ----------
    text : str or bytes
        The message.

    Returns
    -------
    bytes
        Its BLAKE2b digest (``FINGERPRINT_BYTES`` bytes).
    """
    global _last_fingerprinted
    last = _last_fingerprinted
    if last is not None and last[0] is text:
        return last[1]
    if isinstance(text, bytes):
        hashing = hashlib.blake2b(b"bytes\0", digest_size=FINGERPRINT_BYTES)
        hashing.update(text)  # not prefixed by concatenation: a message is not copied to be hashed
        digest = hashing.digest()
    else:
        digest = hashlib.blake2b(b"text\0" + text.encode("utf-8", "surrogatepass"),
                                 digest_size=FINGERPRINT_BYTES).digest()
    if type(text) in (bytes, str):  # (a subclass might not be immutable)
        _last_fingerprinted = (text, digest)
    return digest


def features_fingerprint(tokens: Sequence[Hashable], values: npt.NDArray[np.float64]) -> bytes:
    """Fingerprint of a message given as features: order-independent, 1 and 1.0 alike.

    Pairs are written as repr(token) and repr(float(value)) and sorted; repr never
    contains the raw separator characters, so distinct documents give distinct texts.

    Parameters
    ----------
    tokens : sequence of hashable
        The message's features.
    values : numpy.ndarray
        Their values, in the same order.

    Returns
    -------
    bytes
        Its BLAKE2b digest (``FINGERPRINT_BYTES`` bytes).
    """
    pairs = sorted(f"{token!r}\x1f{float(value)!r}" for token, value in zip(tokens, values.tolist()))
    return hashlib.blake2b(b"features\0" + "\x1e".join(pairs).encode("utf-8", "surrogatepass"),
                           digest_size=FINGERPRINT_BYTES).digest()


#: What a ledger keeps per message.
E = TypeVar("E")


class ReadsFeatures(Protocol):
    """A model's core, which tells the features it reads from a message."""

    def present_features(self, x: Any) -> Any: ...


def message_fingerprint(core: ReadsFeatures, x: Document) -> bytes:
    """The fingerprint of a message: its text's, or that of the features a model's core reads from it.

    Parameters
    ----------
    core
        The core of the model that reads x (its ``present_features``, for a mapping).
    x : mapping, str or bytes
        The message.

    Returns
    -------
    bytes
        ``text_fingerprint(x)`` for text, else ``features_fingerprint`` of its features.
    """
    if isinstance(x, (str, bytes)):
        return text_fingerprint(x)
    tokens, values = core.present_features(x)
    return features_fingerprint(tokens, np.asarray(values, dtype=float))


class MessageLedger(Generic[E]):
    """Fingerprint -> what a model keeps about a message, for the last ``max_entries``
    messages learned (FIFO).

    Parameters
    ----------
    max_entries : int
        How many messages it remembers at most.
    """

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[bytes, E] = OrderedDict()

    def get(self, fingerprint: bytes) -> E | None:
        """The entry of a message, or None."""
        return self._entries.get(fingerprint)

    def record(self, fingerprint: bytes, entry: E) -> None:
        """Remember a message (as the newest), forgetting the oldest beyond the bound."""
        self._entries.pop(fingerprint, None)
        self._entries[fingerprint] = entry
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def load(self, entries: Iterable[tuple[bytes, E]]) -> None:
        """Take (fingerprint, entry) pairs, the oldest first, into an empty ledger (a saved
        one: within the bound, each fingerprint once)."""
        self._entries = OrderedDict(entries)

    def forget(self, fingerprint: bytes) -> None:
        """Drop the entry of a message, if any."""
        self._entries.pop(fingerprint, None)

    def items(self) -> Iterator[tuple[bytes, E]]:
        """(fingerprint, entry) pairs, the oldest learned first."""
        return iter(self._entries.items())

    def __contains__(self, fingerprint: object) -> bool:
        return fingerprint in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, MessageLedger) and self.max_entries == other.max_entries
                and list(self._entries.items()) == list(other._entries.items()))


LEDGER_ARRAYS = ("ledger_fingerprint", "ledger_class", "ledger_weight", "ledger_learned_at", "ledger_t")


class Ledger:
    """Learning and unlearning through a ledger: the layer a discrete model with
    ``ledger=N`` puts in front of its counts.

    Learning a message already held under the same label is a no-op; under another label
    the message moves (unlearned from the old label with the weight it still has, then
    learned). Unlearning a held message takes its weight, stamp and timestamp from the
    ledger. The model's learner does the counting (``learn_counts``, ``unlearn_counts``).

    Parameters
    ----------
    max_entries : int
        How many messages it remembers at most (the oldest are forgotten first).
    """

    def __init__(self, max_entries: int) -> None:
        self.entries: MessageLedger[Entry] = MessageLedger(max_entries)

    def get(self, fingerprint: bytes) -> Entry | None:
        """The entry of a message, or None."""
        return self.entries.get(fingerprint)

    def items(self) -> Iterator[tuple[bytes, Entry]]:
        return self.entries.items()

    def __len__(self) -> int:
        return len(self.entries)

    def fingerprint(self, model: CountingModel, x: Document) -> bytes:
        """The text's fingerprint, or that of the features the model learns from x."""
        return message_fingerprint(model.core, x)

    def learn(self, model: CountingModel, x: Document, label: Label, weight: float, when: float | None) -> None:
        """Learn a message once: a no-op when held under ``label``, a move when held under another.

        Parameters
        ----------
        model : DiscreteNB
            The model whose counts change.
        x : mapping, str or bytes
            The message.
        label : label
            Its class.
        weight : float
            Its sample weight.
        when : float or None
            Its timestamp.
        """
        if isinstance(x, (str, bytes)):
            entry = self.entries.get(text_fingerprint(x))
            if entry is not None and entry.label == label:
                return  # known message, same label: skip even the tokenizer
        fingerprint = self.fingerprint(model, x)
        model.check_learn(x, label, weight, when)  # refuse before the message moves
        entry = self.entries.get(fingerprint)
        if entry is not None:
            if entry.label == label:
                return
            # The message moves to another class: first take out what it still weighs.
            model.unlearn_counts(x, entry.label, entry.weight, entry.learned_at, entry.t)
        model.learn_counts(x, label, weight, when)
        self.entries.record(fingerprint, Entry(label, weight, model.n_learned, when))

    def unlearn(self, model: CountingModel, x: Document, label: Label, weight: float, learned_at: int | None,
                when: float | None) -> None:
        """Unlearn a message; a held one with its entry's weight, stamp and timestamp.

        Parameters
        ----------
        model, x, label
            As for :meth:`learn`.
        weight, learned_at, when : float, int or None, float or None
            The weight, stamp and timestamp of a message the ledger does not hold.

        Raises
        ------
        InvalidInputError
            For a message held under another class.
        """
        fingerprint = self.fingerprint(model, x)
        entry = self.entries.get(fingerprint)
        if entry is not None:
            if entry.label != label:
                raise InvalidInputError(f"this message was learned as {entry.label!r}, not as {label!r}")
            weight, learned_at, when = entry.weight, entry.learned_at, entry.t
        model.unlearn_counts(x, label, weight, learned_at, when)
        if entry is not None:
            self.entries.forget(fingerprint)

    def unlearn_many(self, model: CountingModel, documents: list[Document], labels: list[Label], weights: list[float],
                     stamps: list[int | None], times: list[float | None]) -> None:
        """All or nothing: held messages take their ledger entries; a message given twice is refused."""
        forgotten: list[bytes] = []
        for row, (document, label) in enumerate(zip(documents, labels)):
            fingerprint = self.fingerprint(model, document)
            if fingerprint in forgotten:
                raise InvalidInputError(f"document {describe(document)} appears twice; a ledger learns a message once")
            entry = self.entries.get(fingerprint)
            if entry is not None:
                if entry.label != label:
                    raise InvalidInputError(f"this message was learned as {entry.label!r}, not as {label!r}")
                weights[row], stamps[row], times[row] = entry.weight, entry.learned_at, entry.t
                forgotten.append(fingerprint)
        model.unlearn_many_counts(documents, labels, weights, stamps, times)
        for fingerprint in forgotten:
            self.entries.forget(fingerprint)

    def check_mergeable(self, other: "Ledger") -> None:
        """IncompatibleModelsError when both ledgers hold a message (a merge would count it twice)."""
        for fingerprint, _ in other.entries.items():
            if fingerprint in self.entries:
                raise IncompatibleModelsError(
                    f"both models learned the same message (fingerprint {fingerprint.hex()}): "
                    "merging would count it twice")

    def merge(self, entries: list[tuple[bytes, Entry]], n0: int) -> None:
        """Take another model's entries (read before the merge), its stamps after this model's n0."""
        for fingerprint, entry in entries:
            self.entries.record(fingerprint, entry._replace(learned_at=entry.learned_at + n0))

    # -- persistence ---------------------------------------------------------------------
    def arrays(self, class_id: Callable[[Label], int | None]) -> Arrays:
        """The entries as the model file's ``ledger_*`` arrays (labels by ``class_id``)."""
        items = list(self.entries.items())
        entries = [entry for _, entry in items]
        return {
            "ledger_fingerprint": np.frombuffer(b"".join(f for f, _ in items), dtype=np.uint8).copy(),
            "ledger_class": np.array([class_id(e.label) for e in entries], dtype=np.int64),
            "ledger_weight": np.array([e.weight for e in entries], dtype=np.float64),
            "ledger_learned_at": np.array([e.learned_at for e in entries], dtype=np.int64),
            "ledger_t": np.array([0.0 if e.t is None else e.t for e in entries], dtype=np.float64),
        }

    def restore(self, arrays: Arrays, labels: list[Label], n_learned: int, timed: bool) -> None:
        """Entries from ``arrays`` (ModelFormatError for anything inconsistent).

        Parameters
        ----------
        arrays : mapping
            The model file's arrays.
        labels : list of labels
            The model's classes, by id.
        n_learned : int
            The model's documents learned (the stamps are at most this).
        timed : bool
            Whether the model forgets in time (keep the timestamps).

        Raises
        ------
        ModelFormatError
            For arrays missing or inconsistent.
        """
        present = set(LEDGER_ARRAYS) & set(arrays)
        _require(present == set(LEDGER_ARRAYS), f"ledger arrays missing: {sorted(set(LEDGER_ARRAYS) - present)}")
        # Read as Python numbers without numpy: `streamnb classify` loads a served model so.
        shape = _raw_array(arrays, "ledger_class")[1]
        _require(len(shape) == 1, f"array 'ledger_class' must have one dimension, has shape {list(shape)}")
        m = shape[0]
        _require(m <= self.entries.max_entries, f"{m} ledger entries exceed the bound {self.entries.max_entries}")
        size = FINGERPRINT_BYTES
        raw = _raw_bytes(arrays, "ledger_fingerprint", "|u1", [size * m])
        classes = _raw_values(arrays, "ledger_class", "<i8", [m])
        weights = _raw_values(arrays, "ledger_weight", "<f8", [m])
        stamps = _raw_values(arrays, "ledger_learned_at", "<i8", [m])
        times = _raw_values(arrays, "ledger_t", "<f8", [m])
        _require(all(0 <= c < len(labels) for c in classes), "ledger classes out of range")
        _require(all(math.isfinite(w) and w > 0 for w in weights), "ledger weights must be finite and > 0")
        _require(all(1 <= s <= n_learned for s in stamps), f"ledger stamps must be in [1, {n_learned}]")
        _require(all(map(math.isfinite, times)), "ledger timestamps must be finite")
        keys = [raw[start:start + size] for start in range(0, size * m, size)]
        _require(len(set(keys)) == m, "duplicate ledger fingerprints")
        self.entries.load(zip(keys, map(Entry, [labels[c] for c in classes], weights, stamps,
                                        times if timed else [None] * m)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Ledger) and self.entries == other.entries
