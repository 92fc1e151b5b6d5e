"""The steps a message's learning took, as Python reads them and a model file keeps them.

Naive Bayes unlearns exactly by subtracting counts. A logistic regression's step depends on
its weights as they stood: g = omega ([y = c] - P(c | x)), and AdaGrad's rate on the sums of
squared gradients. So a ``LogisticRegression`` with a ledger and a ``Fusion`` (its
``records``) keep per message what its step used, and for the newest steps (the
``window``) the document as logistic regression read it: unlearning a message among them
undoes the steps after it, its own, and takes the later ones again (a replay: the model is
then the one that never saw the message, to rounding); an older one has its own step undone
(the steps after it keep what they did because of it). The structure, the replay and its
checks are in the core (src/records.rs, src/replay.rs), owned by logistic regression's core
(``LogisticCore``: its ``record``, ``unlearn_kept`` ...); this module reads it
(``StepRecords``, a view) and converts it to and from a model file's arrays.

In a model file the records are, oldest first, the arrays ``<prefix>fingerprint`` (uint8,
16 bytes per record), ``<prefix>class`` (int64, the label's index in the model's classes;
-1 for a message observed without a label that took no lesson, of a class logistic
regression does not know), ``<prefix>weight`` (float64), ``<prefix>g`` (float64, one row per
record and one column per class but the reference, zeros where a class came later or the
step did not move), ``<prefix>decay`` (float64), ``<prefix>seen_at`` (int64: > 0, the stamp
of a message observed without a label, whose step is provisional; 0 for a lesson),
``<prefix>known`` (int64: the classes logistic regression knew when it stepped),
``<prefix>doc_length`` (int64, the bytes of its kept document, 0 for none) and
``<prefix>doc`` (uint8, the kept documents back to back, encoded as src/records.rs says),
and for a fusion ``<prefix>stacker`` (float64, per record its stacker's two inputs and g;
zeros for no step). A file without them holds no records; one without ``known`` and the
two ``doc`` arrays (format 6) holds no documents: its window starts empty.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from .errors import ModelFormatError
from .ledger import FINGERPRINT_BYTES
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

    label: Label | None  # None: observed without a label, no lesson, of a class the model does not know
    weight: float
    lr: LogisticStep
    stacker: StackerStep | None = None  # a fusion's stacker, when it stepped
    # A fusion's message seen without a label (``Fusion.observe_one``): its stamp on the
    # fusion's clock of messages seen (> 0; 0 for a lesson with its label). Its ``lr`` is
    # then the provisional step (empty g: none), taken at the core's provisional rate, and
    # ``label``, ``weight`` those of the provisional lesson (or the class it was delivered
    # as, and 1, when it took none).
    seen_at: int = 0
    document: bool = False  # is its document kept (an unlearn of it replays)?

    @property
    def provisional(self) -> bool:
        """Was the message seen without a label (and is it waiting for one)?"""
        return self.seen_at > 0


#: The arrays of a model's records: every model with records writes these
SUFFIXES = ("fingerprint", "class", "weight", "g", "decay", "seen_at", "known", "doc_length", "doc")
#: A fusion's records also keep its stacker's steps
FUSION_SUFFIXES = (*SUFFIXES, "stacker")


class StepRecords:
    """The records a logistic regression's core keeps, read from Python (a view: they change
    only through the model).

    Parameters
    ----------
    core : streamnb._core.LogisticCore
        The core that keeps them (``keep_records`` called).
    """

    def __init__(self, core: Any) -> None:
        self._core = core

    @property
    def max_entries(self) -> int:
        """How many messages' steps it keeps at most."""
        return int(self._core.records_info()[1])

    @property
    def window(self) -> int:
        """How many of the newest keep their documents (an unlearn among them replays)."""
        return int(self._core.records_info()[2])

    @property
    def documents(self) -> int:
        """Records holding their document now."""
        return int(self._core.records_info()[3])

    def _steps(self, view: tuple[Any, ...], labels: list[Label]) -> MessageSteps:
        c, weight, g, decay, stacker, seen_at, document = view
        return MessageSteps(None if c is None else labels[c], weight, LogisticStep(tuple(g), decay),
                            None if stacker is None else StackerStep(*stacker), seen_at, document)

    def get(self, fingerprint: bytes) -> MessageSteps | None:
        """The steps of a message, or None."""
        view = self._core.record(fingerprint)
        return None if view is None else self._steps(view, self._core.labels)

    def items(self) -> Iterator[tuple[bytes, MessageSteps]]:
        """(fingerprint, steps) pairs, the oldest learned first."""
        labels = self._core.labels
        return iter([(fingerprint, self._steps(view, labels)) for fingerprint, view in self._core.record_items()])

    def newest_first(self, fingerprints: list[bytes]) -> list[int]:
        """The positions of ``fingerprints``, those of the messages learned last first (those
        whose steps are not kept after, in the order given): the order in which taking them
        back undoes each step with the steps after it undone already."""
        return list(self._core.newest_first(fingerprints))

    def __len__(self) -> int:
        return int(self._core.records_info()[0])

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, StepRecords) and self._core.records_info() == other._core.records_info()
                and list(self.items()) == list(other.items())
                and self._core.records_state()[-2:] == other._core.records_state()[-2:])

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

        (fingerprints, classes, weights, g, decays, stamps, known, stacked, lengths,
         documents) = self._core.records_state()
        labels = self._core.labels
        ids = [-1 if c < 0 else class_id(labels[c]) for c in np.frombuffer(classes, dtype="<i8").tolist()]
        m = len(ids)
        arrays = {
            prefix + "fingerprint": np.frombuffer(fingerprints, dtype=np.uint8).copy(),
            prefix + "class": np.array(ids, dtype=np.int64),
            prefix + "weight": np.frombuffer(weights, dtype=np.float64).copy(),
            prefix + "g": np.frombuffer(g, dtype=np.float64).reshape(m, columns).copy(),
            prefix + "decay": np.frombuffer(decays, dtype=np.float64).copy(),
            prefix + "seen_at": np.frombuffer(stamps, dtype=np.int64).copy(),
            prefix + "known": np.frombuffer(known, dtype=np.int64).copy(),
            prefix + "doc_length": np.frombuffer(lengths, dtype=np.int64).copy(),
            prefix + "doc": np.frombuffer(documents, dtype=np.uint8).copy(),
        }
        if stacker:
            arrays[prefix + "stacker"] = np.frombuffer(stacked, dtype=np.float64).reshape(m, 3).copy()
        return arrays


def restore(core: Any, arrays: Arrays, prefix: str, labels: list[Label], max_entries: int, window: int,
            stacker: bool, clock: int | None = None) -> None:
    """Give ``core`` (which keeps no records yet) the records of a model file's arrays; none
    when it has none. Read without numpy.

    Parameters
    ----------
    core : streamnb._core.LogisticCore
        The logistic regression whose records they are (its classes loaded).
    arrays : mapping
        The model file's arrays.
    prefix : str
        The start of the names of the records' arrays.
    labels : list of labels
        The model's classes, by the index the file names them with.
    max_entries, window : int
        The records' bound and window.
    stacker : bool
        Whether the records hold a fusion's stacker steps.
    clock : int or None
        A fusion's clock of messages seen (its observations' stamps are checked against it).

    Raises
    ------
    ModelFormatError
        For arrays missing, of another type or shape, or values a step could not have.
    """
    core.keep_records(max_entries, window)
    names = [prefix + suffix for suffix in (FUSION_SUFFIXES if stacker else SUFFIXES)]
    present = [name for name in names if name in arrays]
    if not present:
        return  # a file from before steps were kept: every message takes the reverse step
    # format 6 had no documents, nor the classes known at each step, nor a LogisticRegression's stamps
    optional = {prefix + "known", prefix + "doc_length", prefix + "doc",
                *((prefix + "seen_at",) if not stacker else ())}
    missing = sorted(set(names) - set(present) - optional)
    _require(not missing, f"step record arrays missing: {missing}")
    _require((prefix + "doc" in arrays) == (prefix + "doc_length" in arrays) == (prefix + "known" in arrays),
             f"the arrays {prefix}known, {prefix}doc and {prefix}doc_length come together")
    classes = _bytes(arrays, prefix + "class", "<i8")
    m = len(classes) // 8
    columns = max(len(core.labels) - 1, 0)
    lr_index = {label: c for c, label in enumerate(core.labels)}
    fingerprints = bytes(_bytes(arrays, prefix + "fingerprint", "|u1"))
    _require(len(fingerprints) == FINGERPRINT_BYTES * m,
             f"array {prefix}fingerprint must hold {FINGERPRINT_BYTES} bytes per record ({m} records)")
    stamps = (_bytes(arrays, prefix + "seen_at", "<i8", (m,)) if prefix + "seen_at" in arrays
              else memoryview(bytes(8 * m)))
    documents = None
    if prefix + "doc" in arrays:
        documents = (bytes(_bytes(arrays, prefix + "doc_length", "<i8", (m,))), bytes(_bytes(arrays, prefix + "doc",
                                                                                             "|u1")))
    core.load_records(max_entries, window, fingerprints, bytes(classes), [lr_index.get(label, -1) for label in labels],
                      bytes(_bytes(arrays, prefix + "weight", "<f8", (m,))),
                      bytes(_bytes(arrays, prefix + "g", "<f8", (m, columns))),
                      bytes(_bytes(arrays, prefix + "decay", "<f8", (m,))), bytes(stamps),
                      bytes(_bytes(arrays, prefix + "known", "<i8", (m,))) if prefix + "known" in arrays else None,
                      bytes(_bytes(arrays, prefix + "stacker", "<f8", (m, 3))) if stacker else None, documents,
                      clock)


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


__all__ = ["FINGERPRINT_BYTES", "FUSION_SUFFIXES", "LogisticStep", "MessageSteps", "StackerStep", "StepRecords",
           "SUFFIXES", "restore"]
