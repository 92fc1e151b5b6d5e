"""The steps a message's learning took, kept so that unlearning it takes exactly those back.

Naive Bayes unlearns exactly by subtracting counts. A logistic regression's step depends on
its weights as they stood: g = omega ([y = c] - P(c | x)), and AdaGrad's rate on the sums of
squared gradients. A step taken backwards later, from the gradient as it is then, is not
the step that was taken (right after a learn the lesson's loss is already small, so the
reverse step is smaller than the step it should undo). So the few numbers a step used are
kept per message: the logistic regression's gradient g (one number per class but the
reference) and the decay factor its weights took (``LogisticStep``), and for a fusion its
stacker's two inputs and gradient (``StackerStep``). The features come from the message
itself when it is unlearned. The formula that undoes a step, and why it is exact right
after the learn, is in the core (src/logistic.rs, ``Logistic::undo``).

``StepRecords`` keeps a ``MessageSteps`` per message for the last ``max_entries`` messages
learned, by the fingerprint the naive Bayes ledger uses (:mod:`streamnb.ledger`), the
oldest forgotten first. A message whose steps are no longer kept (evicted, or learned
before a model file kept steps) is unlearned with the reverse step. Each record keeps the
lesson's label and sample weight, so a lesson of any weight is undone as it was learned.

In a model file the records are the arrays ``<prefix>fingerprint`` (uint8, 16 bytes per
record), ``<prefix>class`` (int64, the label's index), ``<prefix>weight`` (float64),
``<prefix>g`` (float64, one row per record and one column per class but the reference,
zeros where a class came later or the step did not move), ``<prefix>decay`` (float64) and,
for a fusion, ``<prefix>stacker`` (float64, per record its two inputs and g; zeros for no
step) and ``<prefix>seen_at`` (int64, ``MessageSteps.seen_at``), oldest first. A file
without them holds no records.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, NamedTuple

from .errors import ModelFormatError
from .ledger import FINGERPRINT_BYTES, MessageLedger
from .store import _raw_array
from .validate import Label

if TYPE_CHECKING:
    from .store import Arrays


class LogisticStep(NamedTuple):
    """What one step of a logistic regression used (src/logistic.rs, ``Step``)."""

    g: tuple[float, ...]  # g_c for the classes but the reference; empty: the weights did not move
    decay: float  # the factor the weights decayed by (1 - rate * l2; 1 without L2)


class StackerStep(NamedTuple):
    """What one step of a fusion's stacker used: its two inputs and its gradient g."""

    input_nb: float
    input_lr: float
    g: float


class MessageSteps(NamedTuple):
    """What learning one message did to the parts that learn by steps."""

    label: Label
    weight: float
    lr: LogisticStep
    stacker: StackerStep | None = None  # a fusion's stacker, when it stepped
    # A fusion's message seen without a label (``Fusion.observe_one``): its stamp on the
    # fusion's clock of messages seen (> 0; 0 for a lesson with its label). Its ``lr`` is
    # then the provisional step (empty g: none), taken at the core's provisional rate, and
    # ``label``, ``weight`` those of the provisional lesson (or the class it was delivered
    # as, and 1, when it took none).
    seen_at: int = 0

    @property
    def provisional(self) -> bool:
        """Was the message seen without a label (and is it waiting for one)?"""
        return self.seen_at > 0


SUFFIXES = ("fingerprint", "class", "weight", "g", "decay")
#: A fusion's records also keep each message's stamp (``MessageSteps.seen_at``)
FUSION_SUFFIXES = (*SUFFIXES, "stacker", "seen_at")


class StepRecords:
    """The steps of the last ``max_entries`` messages learned, by fingerprint (FIFO).

    Parameters
    ----------
    max_entries : int
        How many messages' steps it keeps at most.
    """

    def __init__(self, max_entries: int) -> None:
        self.entries: MessageLedger[MessageSteps] = MessageLedger(max_entries)

    @property
    def max_entries(self) -> int:
        return self.entries.max_entries

    def get(self, fingerprint: bytes) -> MessageSteps | None:
        """The steps of a message, or None."""
        return self.entries.get(fingerprint)

    def keep(self, fingerprint: bytes, steps: MessageSteps) -> None:
        """Keep a message's steps (as the newest), forgetting the oldest beyond the bound."""
        self.entries.record(fingerprint, steps)

    def forget(self, fingerprint: bytes) -> None:
        """Drop a message's steps, if kept."""
        self.entries.forget(fingerprint)

    def items(self) -> Iterator[tuple[bytes, MessageSteps]]:
        """(fingerprint, steps) pairs, the oldest learned first."""
        return self.entries.items()

    def newest_first(self, fingerprints: list[bytes]) -> list[int]:
        """The positions of ``fingerprints``, those of the messages learned last first (those
        whose steps are not kept after, in the order given): the order in which taking them
        back undoes each step with the steps after it undone already."""
        age = {fingerprint: i for i, (fingerprint, _) in enumerate(self.items())}
        return sorted(range(len(fingerprints)), key=lambda row: -age.get(fingerprints[row], -1 - row))

    def __len__(self) -> int:
        return len(self.entries)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StepRecords) and self.entries == other.entries

    # -- persistence ---------------------------------------------------------------------
    def arrays(self, prefix: str, class_id: Callable[[Label], int], columns: int, stacker: bool) -> Arrays:
        """The records as a model file's arrays (see the module docstring).

        Parameters
        ----------
        prefix : str
            Put before the names of the arrays.
        class_id : callable
            A label's index in the model's classes.
        columns : int
            The logistic regression's classes but the reference.
        stacker : bool
            Whether the records hold a fusion's stacker steps.
        """
        import numpy as np

        items = list(self.items())
        steps = [entry for _, entry in items]
        g = np.zeros((len(steps), columns))
        for row, entry in enumerate(steps):
            g[row, :len(entry.lr.g)] = entry.lr.g
        arrays = {
            prefix + "fingerprint": np.frombuffer(b"".join(f for f, _ in items), dtype=np.uint8).copy(),
            prefix + "class": np.array([class_id(entry.label) for entry in steps], dtype=np.int64),
            prefix + "weight": np.array([entry.weight for entry in steps], dtype=np.float64),
            prefix + "g": g,
            prefix + "decay": np.array([entry.lr.decay for entry in steps], dtype=np.float64),
        }
        if stacker:
            arrays[prefix + "stacker"] = np.array(
                [entry.stacker or (0.0, 0.0, 0.0) for entry in steps], dtype=np.float64).reshape(len(steps), 3)
            arrays[prefix + "seen_at"] = np.array([entry.seen_at for entry in steps], dtype=np.int64)
        return arrays

    def restore(self, arrays: Arrays, prefix: str, labels: list[Label], columns: int, decay: float,
                stacker: bool) -> None:
        """Records from a model file's arrays (none when it has none); read without numpy.

        Parameters
        ----------
        arrays : mapping
            The model file's arrays.
        prefix : str
            The start of the names of the records' arrays.
        labels : list of labels
            The model's classes, by index.
        columns : int
            The logistic regression's classes but the reference (the width of ``g``).
        decay : float
            The factor every step of this model decays the weights by.
        stacker : bool
            Whether the records hold a fusion's stacker steps.

        Raises
        ------
        ModelFormatError
            For arrays missing, of another type or shape, or values a step could not have.
        """
        names = [prefix + suffix for suffix in (FUSION_SUFFIXES if stacker else SUFFIXES)]
        present = [name for name in names if name in arrays]
        if not present:
            return  # a file from before steps were kept: every message takes the reverse step
        _require(len(present) == len(names), f"step record arrays missing: {sorted(set(names) - set(present))}")
        fingerprints = _bytes(arrays, prefix + "fingerprint", "|u1")
        classes = _bytes(arrays, prefix + "class", "<i8").cast("q")
        m = len(classes)
        _require(len(fingerprints) == FINGERPRINT_BYTES * m,
                 f"array {prefix}fingerprint must hold {FINGERPRINT_BYTES} bytes per record ({m} records)")
        weights = _bytes(arrays, prefix + "weight", "<f8", (m,)).cast("d")
        g = _bytes(arrays, prefix + "g", "<f8", (m, columns)).cast("d")
        decays = _bytes(arrays, prefix + "decay", "<f8", (m,)).cast("d")
        inputs = _bytes(arrays, prefix + "stacker", "<f8", (m, 3)).cast("d") if stacker else memoryview(b"").cast("d")
        stamps = (_bytes(arrays, prefix + "seen_at", "<i8", (m,)) if stacker else memoryview(bytes(8 * m))).cast("q")
        _require(m <= self.max_entries, f"{m} step records exceed the bound {self.max_entries}")
        _require(all(0 <= c < len(labels) for c in classes), "step record classes out of range")
        _require(all(math.isfinite(w) and w > 0 for w in weights), "step record weights must be finite and > 0")
        _require(all(map(math.isfinite, g)) and all(map(math.isfinite, inputs)),
                 "step record gradients and inputs must be finite")
        _require(all(d == decay or (t > 0 and d == 1.0) for d, t in zip(decays, stamps)),
                 f"step record decays must be this model's, {decay!r} (1 for a provisional step)")
        _require(all(t >= 0 for t in stamps), "step record stamps must be >= 0")
        keys = [bytes(fingerprints[FINGERPRINT_BYTES * i:FINGERPRINT_BYTES * (i + 1)]) for i in range(m)]
        _require(len(set(keys)) == m, "duplicate step record fingerprints")
        for i, key in enumerate(keys):
            row = tuple(g[i * columns:(i + 1) * columns])
            while row and row[-1] == 0.0:  # classes that came after the step (g = 0 changes nothing)
                row = row[:-1]
            stacked = None
            if stacker and any(inputs[3 * i:3 * i + 3]):
                stacked = StackerStep(*inputs[3 * i:3 * i + 3])
            self.keep(key, MessageSteps(labels[classes[i]], weights[i],
                                        LogisticStep(row, decays[i]), stacked, stamps[i]))


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ModelFormatError(message)


def _bytes(arrays: Arrays, name: str, dtype: str, shape: tuple[int, ...] | None = None) -> memoryview:
    """A saved array's raw bytes; ModelFormatError for another dtype, or another shape than
    ``shape`` (when None: any length, one dimension)."""
    kind, found, buffer, start, end = _raw_array(arrays, name)
    _require(kind == dtype, f"array {name!r} is {kind}, not {dtype}")
    if shape is None:
        _require(len(found) == 1, f"array {name!r} must have one dimension, has shape {tuple(found)}")
    else:
        _require(tuple(found) == shape, f"array {name!r} has shape {tuple(found)}, not {shape}")
    return memoryview(buffer)[start:end].cast("B")
