"""The growable count store: vocabulary, classes and the (feature, class) count tables.

Everything a naive Bayes model knows is a count, and every model in streamnb reads its
counts from one ``CountStore``. Learning, unlearning, merging, decay and pruning all change
the store through ``CountStore.update`` (or, for whole features, ``drop_features``), so the
models have one math path whatever produced the counts.

What is stored, for features f and classes c (counts may be fractional: sample weights):

- ``N_c``   documents of class c (sum of their weights)            -> ``class_docs``
- ``T_c``   tokens of class c, T_c = sum_f T_cf                    -> ``class_tokens``
- ``T_cf``  token count of f in class c                            -> cell ``tokens``
- ``D_cf``  documents of class c that contain f                    -> cell ``docs``

Counts are kept divided by one global ``scale`` (true count = stored * scale). Exponential
forgetting multiplies every count by gamma with one scalar multiplication instead of an
O(|V|) pass; with no forgetting the scale stays 1.0.

The vocabulary V is the set of features with a nonzero count: a feature whose counts all
return to zero (unlearn, pruning) leaves V and its id is reused, so |V| and every smoothing
denominator are as if it had never been seen.

Two cell layouts share one interface: ``DenseCells`` (|V| x K arrays, fastest, used while
the number of classes is small) and ``HashCells`` (an open-addressing hash table keyed by
(feature, class), memory proportional to the nonzero cells, used once there are many
classes). The store switches from dense to hashed automatically when K passes
``dense_max_classes``.
"""

from __future__ import annotations

import json
import math
from itertools import repeat
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, NamedTuple, Union

import numpy as np

from . import _core
from .errors import (InvalidInputError, InvalidLabelError, InvalidParameterError, InvalidTypeError, ModelFormatError,
                     describe)

Label = Union[str, int, bool]

# Below this global scale the stored counts (true / scale) are folded back (``rescale``):
# 1e-200 leaves ~1e100 of headroom before stored counts could overflow a float64.
MIN_SCALE = 1e-200
# Class totals may not grow past this (stored units): every cell is at most its class total
# (T_cf <= T_c, D_cf <= N_c), so no count can reach float64 overflow (1.8e308).
MAX_STORED = 1e300

# Residues smaller than this fraction of the amount subtracted are rounding noise from
# fractional weights (0.1 + 0.2 - 0.2 != 0.1); they are snapped to an exact zero so that
# unlearning what was learned empties the cell and lets the feature leave V.
ROUNDING_TOLERANCE = 1e-9


def check_label(y: object) -> Label:
    """Return y as a plain str/int/bool label, or raise InvalidLabelError.

    numpy scalars are converted to their Python equivalents so that ``np.int64(1)`` and
    ``1`` are the same class (and the label survives JSON persistence).
    """
    if isinstance(y, (bool, np.bool_)):
        return bool(y)
    if isinstance(y, (int, np.integer)):
        return int(y)
    if isinstance(y, (str, np.str_)):
        return str(y)
    raise InvalidLabelError(f"class label must be a str, int or bool, got {describe(y)}")


class Vocabulary:
    """Token -> integer id, growing on the fly; ids of removed tokens are reused.

    The table lives in the compiled core (``streamnb._core.Vocabulary``: one byte arena,
    a seeded hash). With ``n_buckets`` set, tokens are hashed (CRC-32, stable across
    processes) into that many ids instead; nothing is stored per token and ``token(i)``
    names the bucket.
    """

    def __init__(self, n_buckets: int | None = None) -> None:
        if n_buckets is not None and (not isinstance(n_buckets, int) or isinstance(n_buckets, bool)
                                      or not 1 <= n_buckets < 2**32):
            raise InvalidParameterError(f"n_buckets must be an int in [1, 2**32) or None, got {describe(n_buckets)}")
        self.n_buckets = n_buckets
        self._core = _core.Vocabulary(n_buckets)

    @property
    def epoch(self) -> int:
        """Bumped whenever a token gains or loses its id, so cached lookups can be trusted."""
        return self._core.epoch

    @property
    def capacity(self) -> int:
        """One more than the largest id handed out so far (the row count the cells need)."""
        return self._core.capacity

    def find(self, tokens: Sequence[Hashable]) -> np.ndarray:
        """Ids of the tokens, -1 for tokens not in the vocabulary (nothing is added)."""
        return np.frombuffer(self._core.find(tokens), dtype=np.int64)

    def find_or_add(self, tokens: Sequence[Hashable], ids: np.ndarray | None = None,
                    epoch: int | None = None) -> np.ndarray:
        """Ids of the tokens, giving new tokens new (or recycled) ids.

        ``ids``/``epoch`` (an earlier ``find``) are accepted for the callers' convenience;
        the core looks the tokens up again, which costs less than checking them.
        """
        return np.frombuffer(self._core.find_or_add(tokens), dtype=np.int64)

    def remove(self, ids: Iterable[int]) -> None:
        """Forget the tokens of these ids; the ids become free for reuse."""
        self._core.remove([int(i) for i in ids])

    def restore(self, ids: np.ndarray, tokens: list[Hashable], free: np.ndarray) -> None:
        """Take the layout of a saved vocabulary: ``tokens`` at ``ids``, ``free`` ids for reuse.

        ModelFormatError unless ids (increasing) and free ids together are 0, 1, ... without
        gaps or repeats, and the tokens are distinct, one per id.
        """
        for name, array in (("feature ids", ids), ("free ids", free)):
            _require(isinstance(array, np.ndarray) and array.dtype == np.int64 and array.ndim == 1,
                     f"{name} must be a 1-d int64 array")
            _require(not len(array) or (array.min() >= 0 and array.max() < 2**32 - 1), f"{name} out of range")
        _require(bool((np.diff(ids) > 0).all()), "feature ids must be increasing")
        _require(isinstance(tokens, list) and len(tokens) == len(ids), f"the vocabulary must list {len(ids)} tokens")
        self._core.restore(ids.tolist(), tokens, free.tolist())

    def ids(self) -> np.ndarray:
        """Ids of the tokens in the vocabulary, ascending (int64)."""
        return np.array(self._core.ids(), dtype=np.int64)

    def free_ids(self) -> list[int]:
        """Ids free for reuse (the last one is reused first)."""
        return self._core.free_ids()

    def mapping(self) -> dict[Hashable, int]:
        """Every token with its id (a copy)."""
        ids = self._core.ids()
        return dict(zip(self._core.tokens(ids), ids))

    def token(self, feature_id: int) -> Hashable:
        """The token of an id (for hashing: the bucket's name, e.g. ``'#417'``)."""
        return self._core.token(int(feature_id))

    def tokens(self, ids: Iterable[int]) -> list[Hashable]:
        return self._core.tokens([int(i) for i in ids])

    def nbytes(self) -> int:
        return self._core.nbytes()

    def __len__(self) -> int:
        return len(self._core)

    def __getstate__(self) -> dict:
        ids = self._core.ids()
        return {"n_buckets": self.n_buckets, "ids": ids, "tokens": self._core.tokens(ids),
                "free": self._core.free_ids()}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["n_buckets"])
        if state["n_buckets"] is None:
            self._core.restore(state["ids"], state["tokens"], state["free"])


# Feature names that are not str are stored as 0xFF + this tagged JSON (0xFF never occurs
# in UTF-8). Numbers follow Python's dict semantics, where True == 1 == 1.0 are one key.
_OTHER_KEY = b"\xff"


def _plain_token(token: object) -> object:
    if isinstance(token, (bool, np.bool_)):
        return int(token)
    if isinstance(token, (int, np.integer)):
        return int(token)
    if isinstance(token, (float, np.floating)):
        value = float(token)
        return int(value) if value.is_integer() else value
    if token is None or isinstance(token, str):
        return token
    if isinstance(token, bytes):
        return {"$bytes": token.hex()}
    if isinstance(token, tuple):
        return {"$tuple": [_plain_token(t) for t in token]}
    raise InvalidTypeError(f"feature names must be str, int, float, bool, None, bytes or tuples of those, "
                           f"got {describe(token)}")


def _from_plain(value: object) -> Hashable:
    if isinstance(value, dict):
        if "$tuple" in value:
            return tuple(_from_plain(v) for v in value["$tuple"])
        return bytes.fromhex(value["$bytes"])
    return value  # type: ignore[return-value]


def _token_key(token: object) -> bytes:
    """Vocabulary key of a feature name that is not a str (called by the core)."""
    if isinstance(token, float) and not math.isfinite(token):
        return _OTHER_KEY + repr(token).encode()
    return _OTHER_KEY + json.dumps(_plain_token(token), separators=(",", ":")).encode()


def _token_from_key(key: bytes) -> Hashable:
    """The feature name of a key made by ``_token_key`` (called by the core)."""
    text = key[1:].decode()
    if text in ("nan", "inf", "-inf"):
        return float(text)
    return _from_plain(json.loads(text))


class DenseCells:
    """(feature, class) cells as two dense float arrays of shape (rows, classes)."""

    kind = "dense"

    def __init__(self) -> None:
        self.tokens = np.zeros((64, 2))
        self.docs = np.zeros((64, 2))

    def reserve(self, n_rows: int, n_classes: int) -> None:
        rows, cols = self.tokens.shape
        if n_rows <= rows and n_classes <= cols:
            return
        # Doubling keeps growth amortised O(1) per feature and per class.
        new_shape = (max(rows, 1) * 2 if n_rows > rows else rows, max(cols * 2, n_classes) if n_classes > cols else cols)
        while new_shape[0] < n_rows:
            new_shape = (new_shape[0] * 2, new_shape[1])
        for name in ("tokens", "docs"):
            old = getattr(self, name)
            grown = np.zeros(new_shape)
            grown[: old.shape[0], : old.shape[1]] = old
            setattr(self, name, grown)

    # ndarray.take along axis 0 is an order of magnitude faster than fancy indexing
    # (self.tokens[ids]) for a few hundred random rows: this is the hot path of predict.
    def gather(self, ids: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
        return self.tokens.take(ids, axis=0)[:, :n_classes], self.docs.take(ids, axis=0)[:, :n_classes]

    def gather_class(self, ids: np.ndarray, c: int) -> tuple[np.ndarray, np.ndarray]:
        return self.tokens.take(ids, axis=0)[:, c], self.docs.take(ids, axis=0)[:, c]

    # Indexing a column view (table[:, c][ids]) is about twice as fast as table[ids, c].
    def put_class(self, ids: np.ndarray, c: int, tokens: np.ndarray, docs: np.ndarray) -> None:
        self.tokens[:, c][ids] = tokens
        self.docs[:, c][ids] = docs

    def add_class(self, ids: np.ndarray, c: int, tokens: np.ndarray, docs: np.ndarray | float) -> None:
        column = self.tokens[:, c]
        column[ids] += tokens
        column = self.docs[:, c]
        column[ids] += docs

    def gather_tokens(self, ids: np.ndarray, n_classes: int) -> np.ndarray:
        return self.tokens.take(ids, axis=0)[:, :n_classes]

    def gather_docs(self, ids: np.ndarray, n_classes: int) -> np.ndarray:
        return self.docs.take(ids, axis=0)[:, :n_classes]

    def clear_rows(self, ids: np.ndarray) -> None:
        self.tokens[ids] = 0.0
        self.docs[ids] = 0.0

    def nonzero(self, n_rows: int, n_classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """All nonzero cells as (feature ids, class ids, token counts, doc counts)."""
        t, d = self.tokens[:n_rows, :n_classes], self.docs[:n_rows, :n_classes]
        rows, cols = np.nonzero((t != 0) | (d != 0))
        return rows, cols, t[rows, cols], d[rows, cols]

    def nbytes(self) -> int:
        return self.tokens.nbytes + self.docs.nbytes


_EMPTY, _DELETED = -1, -2
# Key of a cell: feature * _CLASS_STRIDE + class. 2**24 classes, 2**39 features.
_CLASS_STRIDE = 1 << 24
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


class HashCells:
    """(feature, class) cells in an open-addressing hash table (linear probing).

    Memory is proportional to the number of nonzero cells (24 bytes per slot, 50% to 70%
    of the slots used), not to |V| x K. Lookups are vectorised: every probe round is a few
    numpy operations over the keys still unresolved.
    """

    kind = "hash"

    def __init__(self, capacity: int = 1024) -> None:
        self._allocate(capacity)

    def _allocate(self, capacity: int) -> None:
        self.keys = np.full(capacity, _EMPTY, dtype=np.int64)
        self.tokens = np.zeros(capacity)
        self.docs = np.zeros(capacity)
        self.n_used = 0  # live cells + deleted markers: what makes probing slow
        self._shift = np.uint64(64 - (capacity.bit_length() - 1))

    def _home(self, keys: np.ndarray) -> np.ndarray:
        # Fibonacci hashing: the top bits of key * golden ratio spread consecutive keys.
        return ((keys.astype(np.uint64) * _GOLDEN) >> self._shift).astype(np.int64)

    def _find(self, keys: np.ndarray) -> np.ndarray:
        """Slot of each key, -1 where the key is absent."""
        mask = len(self.keys) - 1
        slots = self._home(keys)
        found = np.full(len(keys), -1, dtype=np.int64)
        pending = np.arange(len(keys))
        while len(pending):
            at = self.keys[slots[pending]]
            hit = at == keys[pending]
            found[pending[hit]] = slots[pending[hit]]
            pending = pending[~(hit | (at == _EMPTY))]
            slots[pending] = (slots[pending] + 1) & mask
        return found

    def _make_room(self, n_new: int) -> None:
        """Rehash now if n_new more keys would fill the table over 70% (slots move!)."""
        if 10 * (self.n_used + n_new) > 7 * len(self.keys):
            self._rehash(self.n_used + n_new)

    def _insert(self, keys: np.ndarray) -> np.ndarray:
        """Slots for keys known to be absent (and distinct); returns their slots."""
        self._make_room(len(keys))
        mask = len(self.keys) - 1
        slots = self._home(keys)
        placed = np.full(len(keys), -1, dtype=np.int64)
        pending = np.arange(len(keys))
        while len(pending):
            free = self.keys[slots[pending]] < 0
            candidates = pending[free]
            # Two new keys may probe the same free slot: the first one takes it.
            _, first = np.unique(slots[candidates], return_index=True)
            winners = candidates[first]
            self.keys[slots[winners]] = keys[winners]
            placed[winners] = slots[winners]
            pending = pending[placed[pending] < 0]
            slots[pending] = (slots[pending] + 1) & mask
        self.n_used += len(keys)
        return placed

    def _rehash(self, needed: int) -> None:
        live = self.keys >= 0
        keys, tokens, docs = self.keys[live], self.tokens[live], self.docs[live]
        # Rehashed tables start at most half full and grow again at 70%: linear probing
        # stays short and on average about 60% of the slots hold a cell.
        capacity = 1024
        while 2 * needed > capacity:
            capacity *= 2
        self._allocate(capacity)
        slots = self._insert(keys)
        self.tokens[slots], self.docs[slots] = tokens, docs

    def reserve(self, n_rows: int, n_classes: int) -> None:
        """Nothing to do: the table grows with the cells, not with rows or classes."""

    def _values(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        slots = self._find(keys)
        present = slots >= 0
        tokens = np.zeros(len(keys))
        docs = np.zeros(len(keys))
        tokens[present] = self.tokens[slots[present]]
        docs[present] = self.docs[slots[present]]
        return tokens, docs

    def gather(self, ids: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
        keys = (ids[:, None] * _CLASS_STRIDE + np.arange(n_classes)[None, :]).ravel()
        tokens, docs = self._values(keys)
        shape = (len(ids), n_classes)
        return tokens.reshape(shape), docs.reshape(shape)

    def gather_class(self, ids: np.ndarray, c: int) -> tuple[np.ndarray, np.ndarray]:
        return self._values(ids * _CLASS_STRIDE + c)

    def gather_tokens(self, ids: np.ndarray, n_classes: int) -> np.ndarray:
        return self.gather(ids, n_classes)[0]

    def gather_docs(self, ids: np.ndarray, n_classes: int) -> np.ndarray:
        return self.gather(ids, n_classes)[1]

    def add_class(self, ids: np.ndarray, c: int, tokens: np.ndarray, docs: np.ndarray | float) -> None:
        old_tokens, old_docs = self.gather_class(ids, c)
        self.put_class(ids, c, old_tokens + tokens, old_docs + docs)

    @classmethod
    def from_cells(cls, rows: np.ndarray, cols: np.ndarray, tokens: np.ndarray, docs: np.ndarray) -> "HashCells":
        """A table holding the given nonzero cells (used when a dense store outgrows K)."""
        table = cls()
        slots = table._insert(rows * _CLASS_STRIDE + cols)
        table.tokens[slots], table.docs[slots] = tokens, docs
        return table

    def put_class(self, ids: np.ndarray, c: int, tokens: np.ndarray, docs: np.ndarray) -> None:
        keys = ids * _CLASS_STRIDE + c
        self._make_room(len(keys))  # before looking up slots: a rehash would move them
        slots = self._find(keys)
        nonzero = (tokens != 0) | (docs != 0)
        new = (slots < 0) & nonzero
        if new.any():
            slots[new] = self._insert(keys[new])
        # Cells that return to zero are deleted so memory follows the nonzero cells.
        gone = (slots >= 0) & ~nonzero
        self.keys[slots[gone]] = _DELETED
        live = slots >= 0
        self.tokens[slots[live]] = np.where(nonzero[live], tokens[live], 0.0)
        self.docs[slots[live]] = np.where(nonzero[live], docs[live], 0.0)

    def clear_rows(self, ids: np.ndarray) -> None:
        if not len(ids):
            return
        live = np.flatnonzero(self.keys >= 0)
        doomed = live[np.isin(self.keys[live] // _CLASS_STRIDE, ids)]
        self.keys[doomed] = _DELETED
        self.tokens[doomed] = 0.0
        self.docs[doomed] = 0.0

    def nonzero(self, n_rows: int, n_classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        live = np.flatnonzero(self.keys >= 0)
        keys = self.keys[live]
        order = np.argsort(keys, kind="stable")
        live, keys = live[order], keys[order]
        return keys // _CLASS_STRIDE, keys % _CLASS_STRIDE, self.tokens[live], self.docs[live]

    def nbytes(self) -> int:
        return self.keys.nbytes + self.tokens.nbytes + self.docs.nbytes


class Prepared(NamedTuple):
    """A checked removal from one class's counts (stored units), ready for ``CountStore.commit``."""

    c: int
    ids: np.ndarray
    old_tokens: np.ndarray
    old_docs: np.ndarray
    new_tokens: np.ndarray
    new_docs: np.ndarray
    class_docs: float
    class_tokens: float


class CountStore:
    """Vocabulary, classes and count tables of one naive Bayes model.

    ``update`` is the only way counts change (learn, unlearn, merge all call it) and it is
    all-or-nothing: a removal is first checked and computed by ``prepare`` without
    touching anything (no count may go negative), then written by ``commit``; additions
    cannot fail once ``check_room`` has accepted them. ``drop_features`` removes whole
    features (pruning), taking their counts out of the class totals too. ``decay``
    multiplies every count by a factor in O(1).

    Per feature the store also keeps two document stamps on the ``n_learned`` clock (the
    model advances it): ``born``, when the feature last entered V, and ``last_seen``, the
    last learned document containing it. Expiry uses the second; unlearning a document
    some of whose features were pruned since uses the first.
    """

    def __init__(self, n_buckets: int | None = None, dense_max_classes: int = 4,
                 doc_histogram: bool = False) -> None:
        if not isinstance(dense_max_classes, int) or dense_max_classes < 1:
            raise InvalidParameterError(f"dense_max_classes must be a positive int, got {describe(dense_max_classes)}")
        self.vocabulary = Vocabulary(n_buckets)
        self.dense_max_classes = dense_max_classes
        self.labels: list[Label] = []
        self._class_index: dict[Label, int] = {}
        self.class_docs = np.zeros(0)
        self.class_tokens = np.zeros(0)
        self.alive = np.zeros(64, dtype=bool)
        self.born = np.zeros(64, dtype=np.int64)
        self.last_seen = np.zeros(64, dtype=np.int64)
        self.n_features = 0
        self.n_learned = 0  # documents learned so far: the clock of the feature stamps
        self.cells: DenseCells | HashCells = DenseCells()
        self.scale = 1.0
        # Per class: {stored D_cf value: number of features with that value} over the
        # features with D_cf > 0. Bernoulli's sum over absent words needs only this.
        self.doc_histogram: list[dict[float, int]] | None = [] if doc_histogram else None
        # Bumped whenever counts change (per class, and in all), so models can cache sums.
        self.class_version: list[int] = []
        self.version = 0

    # -- classes ---------------------------------------------------------------------
    @property
    def n_classes(self) -> int:
        return len(self.labels)

    def class_id(self, label: Label) -> int | None:
        """Index of a class, None when it was never seen."""
        return self._class_index.get(label)

    def add_class(self, label: Label) -> int:
        """Index of a class, adding the class (with zero counts) if it is new."""
        c = self._class_index.get(label)
        if c is not None:
            return c
        c = len(self.labels)
        self.labels.append(label)
        self._class_index[label] = c
        self.class_docs = np.append(self.class_docs, 0.0)
        self.class_tokens = np.append(self.class_tokens, 0.0)
        self.class_version.append(0)
        if self.doc_histogram is not None:
            self.doc_histogram.append({})
        self.version += 1
        if self.cells.kind == "dense" and self.n_classes > self.dense_max_classes:
            self.cells = HashCells.from_cells(*self.cells.nonzero(self.vocabulary.capacity, c))
        # So that gather() returns K columns (zeros for the new class) before its first update.
        self.cells.reserve(self.vocabulary.capacity, self.n_classes)
        return c

    def true_class_docs(self) -> np.ndarray:
        return self.class_docs * self.scale

    def true_class_tokens(self) -> np.ndarray:
        return self.class_tokens * self.scale

    # -- counts ----------------------------------------------------------------------
    def gather(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """True (token, doc) counts of the features ``ids`` in every class: two (n, K) arrays."""
        tokens, docs = self.cells.gather(ids, self.n_classes)
        if self.scale != 1.0:
            return tokens * self.scale, docs * self.scale
        return tokens, docs

    def gather_tokens(self, ids: np.ndarray) -> np.ndarray:
        """True token counts T_cf of the features ``ids``: an (n, K) array."""
        tokens = self.cells.gather_tokens(ids, self.n_classes)
        return tokens * self.scale if self.scale != 1.0 else tokens

    def gather_docs(self, ids: np.ndarray) -> np.ndarray:
        """True document counts D_cf of the features ``ids``: an (n, K) array."""
        docs = self.cells.gather_docs(ids, self.n_classes)
        return docs * self.scale if self.scale != 1.0 else docs

    def update(self, c: int, ids: np.ndarray, token_delta: np.ndarray, doc_delta: np.ndarray | float,
               docs_delta: float) -> None:
        """Add true-count deltas to class c: cells of ``ids`` (distinct), and N_c.

        All deltas of one call share the sign of ``docs_delta``: positive to learn (or
        merge), negative to unlearn. Unlearning raises InvalidInputError, changing
        nothing, when a count would become negative (it was never learned); see ``prepare``.
        Features gaining counts are stamped ``last_seen = n_learned`` (``born`` too if new).
        """
        if docs_delta < 0:
            self.commit(self.prepare(c, ids, token_delta, doc_delta, docs_delta))
            return
        # Making room is not a change of state.
        self.cells.reserve(self.vocabulary.capacity, self.n_classes)
        self._grow_rows()
        if self.scale != 1.0:
            token_delta, doc_delta, docs_delta = (token_delta / self.scale, doc_delta / self.scale,
                                                  docs_delta / self.scale)
        if self.doc_histogram is not None:
            old_docs = self.cells.gather_class(ids, c)[1]
            _move_in_histogram(self.doc_histogram[c], old_docs, old_docs + doc_delta)
        self.cells.add_class(ids, c, token_delta, doc_delta)
        self.class_docs[c] += docs_delta
        self.class_tokens[c] += token_delta.sum()
        born = ~self.alive[ids]
        n_born = int(np.count_nonzero(born))
        if n_born:
            self.alive[ids[born]] = True
            self.n_features += n_born
            self.born[ids[born]] = self.n_learned
        self.last_seen[ids] = self.n_learned
        self.class_version[c] += 1
        self.version += 1

    def prepare(self, c: int, ids: np.ndarray, token_delta: np.ndarray, doc_delta: np.ndarray | float,
                docs_delta: float) -> Prepared:
        """Check a removal (negative true-count deltas) from class c and compute the new
        counts; changes no count.

        Raises InvalidInputError when a count would become negative, or when class c would
        be left with no documents but with feature counts (the documents removed are not
        the ones that were learned as c). When no cell of c is left, T_c is exactly 0.
        """
        self.cells.reserve(self.vocabulary.capacity, self.n_classes)
        self._grow_rows()
        scale = self.scale
        old_tokens, old_docs = self.cells.gather_class(ids, c)
        new_tokens = _settle(old_tokens, token_delta / scale)
        new_docs = _settle(old_docs, np.broadcast_to(np.asarray(doc_delta, dtype=float) / scale, old_docs.shape))
        new_class_docs = _settle(self.class_docs[c], docs_delta / scale)
        new_class_tokens = _settle(self.class_tokens[c], token_delta.sum() / scale)
        label = self.labels[c]
        if (new_tokens < 0).any() or (new_docs < 0).any():
            bad = ids[(new_tokens < 0) | (new_docs < 0)][:3]
            raise InvalidInputError(
                f"counts of feature(s) {self.vocabulary.tokens(bad)!r} in class {label!r} "
                "would become negative: they were never learned with that much weight")
        if new_class_docs < 0:
            raise InvalidInputError(
                f"class {label!r} has {self.class_docs[c] * scale:g} documents; cannot remove {-docs_delta:g}")
        if new_class_docs == 0:
            # Rare (a class loses its last document), so counting its cells may cost O(cells).
            was = (old_tokens != 0) | (old_docs != 0)
            now = (new_tokens != 0) | (new_docs != 0)
            left = self._count_class_cells(c) - int(was.sum()) + int(now.sum())
            if left:
                raise InvalidInputError(
                    f"class {label!r} would have no documents left but still {left} feature count(s): "
                    f"the documents removed are not the ones that were learned as {label!r}")
            new_class_tokens = 0.0  # T_c is a sum over no cell: drop any rounding residue
        return Prepared(c, ids, old_tokens, old_docs, new_tokens, new_docs, float(new_class_docs),
                        max(float(new_class_tokens), 0.0))

    def commit(self, change: Prepared) -> None:
        """Write a removal checked by ``prepare``; features left without counts leave V."""
        c, ids = change.c, change.ids
        if self.doc_histogram is not None:
            _move_in_histogram(self.doc_histogram[c], change.old_docs, change.new_docs)
        self.cells.put_class(ids, c, change.new_tokens, change.new_docs)
        self.class_docs[c] = change.class_docs
        self.class_tokens[c] = change.class_tokens
        self.class_version[c] += 1
        self.version += 1
        self._bury(ids[self.alive[ids]])

    def _count_class_cells(self, c: int) -> int:
        return int((self.cells.nonzero(self.vocabulary.capacity, self.n_classes)[1] == c).sum())

    def check_room(self, c: int | None, token_sum: float, docs_sum: float, factor: float = 1.0) -> None:
        """Refuse, before anything changes, an addition to class c (None: a new class) that
        would overflow: its totals after ``decay(factor)`` and the addition must stay below
        MAX_STORED. O(1); since cells never exceed their class totals, none can overflow."""
        scale, kept = self.scale * factor, 1.0
        if scale < MIN_SCALE:  # decay will fold the scale into the counts first
            kept, scale = self.scale * factor, 1.0
        old_tokens = 0.0 if c is None else float(self.class_tokens[c]) * kept
        old_docs = 0.0 if c is None else float(self.class_docs[c]) * kept
        # Python floats: an overflow gives inf, silently, and is refused just below.
        tokens, docs = old_tokens + token_sum / scale, old_docs + docs_sum / scale
        if not (tokens < MAX_STORED and docs < MAX_STORED):
            label = "a new class" if c is None else f"class {self.labels[c]!r}"
            raise InvalidInputError(f"counts of {label} would overflow (weight x values too large: "
                                    f"{token_sum:g} tokens, {docs_sum:g} documents)")

    def _bury(self, ids: np.ndarray) -> None:
        """Remove from V the features among ``ids`` whose counts are all zero."""
        tokens, docs = self.cells.gather(ids, self.n_classes)
        dead = ids[~((tokens != 0) | (docs != 0)).any(axis=1)]
        if len(dead):
            self.alive[dead] = False
            self.n_features -= len(dead)
            self.vocabulary.remove(dead.tolist())

    def drop_features(self, ids: np.ndarray) -> None:
        """Remove whole features: their cells, their share of T_c, and their vocabulary ids.

        O(cells): meant for pruning passes, which are rare. A class left with no cell gets
        T_c = 0 exactly.
        """
        ids = np.unique(np.asarray(ids, dtype=np.int64))
        ids = ids[self.alive[ids]]
        if not len(ids):
            return
        tokens, docs = self.cells.gather(ids, self.n_classes)
        if self.doc_histogram is not None:
            for c in range(self.n_classes):
                _move_in_histogram(self.doc_histogram[c], docs[:, c], np.zeros(len(ids)))
        for c in np.flatnonzero(tokens.any(axis=0) | docs.any(axis=0)):
            self.class_version[c] += 1
        self.cells.clear_rows(ids)
        remaining = np.bincount(self.cells.nonzero(self.vocabulary.capacity, self.n_classes)[1],
                                minlength=self.n_classes)
        self.class_tokens = np.where(remaining == 0, 0.0, np.maximum(self.class_tokens - tokens.sum(axis=0), 0.0))
        self.version += 1
        self.alive[ids] = False
        self.n_features -= len(ids)
        self.vocabulary.remove(ids.tolist())

    def _grow_rows(self) -> None:
        """Make the per-feature arrays (alive, stamps) cover every id handed out."""
        capacity = self.vocabulary.capacity
        if capacity > len(self.alive):
            size = max(capacity, 2 * len(self.alive))
            for name in ("alive", "born", "last_seen"):
                old = getattr(self, name)
                grown = np.zeros(size, dtype=old.dtype)
                grown[: len(old)] = old
                setattr(self, name, grown)

    def nonzero(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every nonzero cell as true counts: (feature ids, class ids, tokens, docs)."""
        rows, cols, tokens, docs = self.cells.nonzero(self.vocabulary.capacity, self.n_classes)
        return rows, cols, tokens * self.scale, docs * self.scale

    def known(self, ids: np.ndarray) -> np.ndarray:
        """Mask of the ids that are features in V (ids from ``Vocabulary.find``)."""
        inside = (ids >= 0) & (ids < len(self.alive))
        return inside & self.alive[np.where(inside, ids, 0)]

    def feature_ids(self) -> np.ndarray:
        """Ids of the features in V, ascending."""
        return np.flatnonzero(self.alive[: self.vocabulary.capacity])

    # -- forgetting ------------------------------------------------------------------
    def decay(self, factor: float) -> None:
        """Multiply every count by ``factor`` (0 <= factor <= 1) in O(1).

        Only the global scale changes (true = stored * scale). When it falls below
        MIN_SCALE the scale is folded into the stored counts (``rescale``, O(cells)); with
        factor gamma per document that happens once every log(MIN_SCALE)/log(gamma)
        documents, so the amortised cost per document stays O(1).
        """
        if not 0.0 <= factor <= 1.0:
            raise InvalidParameterError(f"decay factor must be in [0, 1], got {describe(factor)}")
        self.scale *= factor
        self.version += 1
        if self.scale < MIN_SCALE:
            self.rescale()

    def rescale(self) -> None:
        """Fold the global scale into the stored counts (O(cells); keeps floats in range).

        Counts that underflow to zero are gone: a feature left with no nonzero cell leaves
        V, and a class whose N_c underflows loses its cells too.
        """
        if self.scale == 1.0:
            return
        rows, cols, tokens, docs = self.nonzero()
        scale, self.scale = self.scale, 1.0
        self.version += 1
        self.class_docs = self.class_docs * scale
        self.class_tokens = self.class_tokens * scale
        emptied = self.class_docs[cols] == 0
        tokens[emptied], docs[emptied] = 0.0, 0.0
        for c in range(self.n_classes):
            mine = cols == c
            self.cells.put_class(rows[mine], c, tokens[mine], docs[mine])
            self.class_version[c] += 1
        live = (tokens != 0) | (docs != 0)
        self.class_tokens[np.bincount(cols[live], minlength=self.n_classes) == 0] = 0.0
        if self.doc_histogram is not None:
            self.doc_histogram = [_histogram(docs[cols == c]) for c in range(self.n_classes)]
        self._bury(np.unique(rows[~live]))

    # -- persistence -----------------------------------------------------------------
    def export(self) -> tuple[dict[str, Any], list[Hashable] | None, dict[str, np.ndarray]]:
        """The whole state as (scalars, feature tokens, named arrays), for persistence.

        Feature ids are kept as they are (``feature_id``, and the ids free for reuse in
        ``free_id``), and cells hold stored values (true = stored * scale): a restored store
        is the same store, down to the ids the next new words will get. With hashing the
        tokens are None (the ids are the buckets).
        """
        ids = self.feature_ids()
        rows, cols, tokens, docs = self.cells.nonzero(self.vocabulary.capacity, self.n_classes)
        arrays = {
            "class_docs": self.class_docs.astype(np.float64),
            "class_tokens": self.class_tokens.astype(np.float64),
            "cell_feature": np.asarray(rows, dtype=np.int64),
            "cell_class": np.asarray(cols, dtype=np.int64),
            "cell_tokens": np.asarray(tokens, dtype=np.float64),
            "cell_docs": np.asarray(docs, dtype=np.float64),
            "feature_id": ids.astype(np.int64),
            "feature_born": self.born[ids].astype(np.int64),
            "feature_last_seen": self.last_seen[ids].astype(np.int64),
        }
        scalars = {"labels": list(self.labels), "scale": self.scale, "n_learned": self.n_learned}
        if self.vocabulary.n_buckets is not None:
            return scalars, None, arrays
        arrays["free_id"] = np.array(self.vocabulary.free_ids(), dtype=np.int64)
        return scalars, self.vocabulary.tokens(ids), arrays

    @classmethod
    def restore(cls, scalars: dict[str, Any], tokens: list[Hashable] | None, arrays: dict[str, np.ndarray], *,
                n_buckets: int | None, dense_max_classes: int, doc_histogram: bool) -> "CountStore":
        """A store rebuilt from ``export``'s output, every value checked first.

        Raises ModelFormatError naming the first inconsistency (wrong shape, non-finite or
        negative count, id out of range, duplicate, a feature without counts ...).
        """
        store = cls(n_buckets=n_buckets, dense_max_classes=dense_max_classes, doc_histogram=doc_histogram)
        labels, scale, n_learned = scalars["labels"], scalars["scale"], scalars["n_learned"]
        _require(isinstance(labels, list), f"labels must be a list, got {describe(labels)}")
        checked = []
        for label in labels:
            _require(isinstance(label, (str, int, bool)), f"class label {describe(label)} is not a str, int or bool")
            checked.append(check_label(label))
        _require(len(set(checked)) == len(checked), f"duplicate class labels in {checked!r}")
        _require(isinstance(scale, float) and MIN_SCALE <= scale <= 1.0,
                 f"scale must be a float in [{MIN_SCALE:g}, 1], got {describe(scale)}")
        _require(isinstance(n_learned, int) and not isinstance(n_learned, bool) and n_learned >= 0,
                 f"n_learned must be an int >= 0, got {describe(n_learned)}")
        k = len(checked)
        ids = _array(arrays, "feature_id", np.int64, None)
        n = len(ids)
        _require(bool((ids >= 0).all() and (np.diff(ids) > 0).all()), "feature ids must be >= 0 and increasing")
        if n_buckets is None:
            store.vocabulary.restore(ids, tokens, _array(arrays, "free_id", np.int64, None))
        else:
            _require(tokens is None and "free_id" not in arrays, "a hashed model has no vocabulary")
            _require(not n or ids[-1] < n_buckets, f"feature buckets must be in [0, {n_buckets})")
        class_docs = _counts(arrays, "class_docs", (k,))
        class_tokens = _counts(arrays, "class_tokens", (k,))
        feature = _array(arrays, "cell_feature", np.int64, None)
        m = len(feature)
        klass = _array(arrays, "cell_class", np.int64, (m,))
        cell_tokens = _counts(arrays, "cell_tokens", (m,))
        cell_docs = _counts(arrays, "cell_docs", (m,))
        born = _array(arrays, "feature_born", np.int64, (n,))
        last_seen = _array(arrays, "feature_last_seen", np.int64, (n,))
        position = np.searchsorted(ids, feature)
        _require(bool((position < n).all()) and np.array_equal(ids[np.minimum(position, max(n - 1, 0))], feature),
                 "cell features must be listed feature ids")
        _require(((klass >= 0) & (klass < k)).all(), f"cell classes must be in [0, {k})")
        _require(len(np.unique(position * max(k, 1) + klass)) == m, "duplicate (feature, class) cells")
        _require(((cell_tokens != 0) | (cell_docs != 0)).all(), "a stored cell has no count")
        _require((np.bincount(position, minlength=n) > 0).all(), "a vocabulary feature has no count")
        for name, stamps in (("born", born), ("last_seen", last_seen)):
            _require(((stamps >= 0) & (stamps <= n_learned)).all(), f"feature {name} stamps must be in [0, {n_learned}]")
        class_cells = np.bincount(klass, minlength=k)
        _require(not ((class_docs == 0) & (class_cells > 0)).any(), "a class with no documents has feature counts")
        _require(not ((class_cells == 0) & (class_tokens != 0)).any(), "a class with no feature counts has T_c != 0")

        for label in checked:
            store.add_class(label)
        store.cells.reserve(store.vocabulary.capacity, k)
        store._grow_rows()
        for c in range(k):
            mine = klass == c
            store.cells.put_class(feature[mine], c, cell_tokens[mine], cell_docs[mine])
        store.class_docs, store.class_tokens = class_docs.copy(), class_tokens.copy()
        store.alive[ids] = True
        store.n_features = n
        store.born[ids], store.last_seen[ids] = born, last_seen
        store.scale, store.n_learned = scale, n_learned
        if store.doc_histogram is not None:
            store.doc_histogram = [_histogram(cell_docs[klass == c]) for c in range(k)]
        return store

    def nbytes(self) -> int:
        """Bytes of the numpy arrays (the Python vocabulary dict is not counted here)."""
        return (self.cells.nbytes() + self.alive.nbytes + self.born.nbytes + self.last_seen.nbytes
                + self.class_docs.nbytes + self.class_tokens.nbytes)

def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ModelFormatError(message)


def _array(arrays: dict[str, np.ndarray], name: str, dtype: type, shape: tuple[int, ...] | None) -> np.ndarray:
    """arrays[name], checked to be 1-d of the given dtype (and shape)."""
    _require(name in arrays, f"array {name!r} is missing")
    array = arrays[name]
    _require(isinstance(array, np.ndarray) and array.dtype == dtype and array.ndim == 1,
             f"array {name!r} must be 1-d {np.dtype(dtype).name}, got {getattr(array, 'dtype', type(array))} "
             f"of shape {getattr(array, 'shape', '?')}")
    _require(shape is None or array.shape == shape, f"array {name!r} must have shape {shape}, got {array.shape}")
    return array


def _counts(arrays: dict[str, np.ndarray], name: str, shape: tuple[int, ...]) -> np.ndarray:
    """A float64 count array: finite and >= 0."""
    array = _array(arrays, name, np.float64, shape)
    _require(bool(np.isfinite(array).all()), f"array {name!r} holds non-finite counts")
    _require(bool((array >= 0).all()), f"array {name!r} holds negative counts")
    return array


def _settle(old, delta):
    """old + delta, with rounding residues of a subtraction snapped to exactly zero."""
    new = old + delta
    residue = np.abs(new) <= ROUNDING_TOLERANCE * np.abs(delta)
    if np.ndim(new) == 0:
        return 0.0 if (delta < 0 and residue) else float(new)
    return np.where((delta < 0) & residue, 0.0, new)


def _histogram(values: np.ndarray) -> dict[float, int]:
    """{value: number of cells} over the nonzero values."""
    histogram: dict[float, int] = {}
    _count_in_histogram(histogram, values, +1)
    return histogram


def _move_in_histogram(histogram: dict[float, int], old: np.ndarray, new: np.ndarray) -> None:
    """Update a value histogram for cells whose values went from ``old`` to ``new``."""
    changed = old != new  # a delta below a huge value's rounding step changes nothing
    if not changed.all():
        old, new = old[changed], new[changed]
    _count_in_histogram(histogram, old, -1)
    _count_in_histogram(histogram, new, +1)


def _count_in_histogram(histogram: dict[float, int], values: np.ndarray, sign: int) -> None:
    """Add (sign +1) or take out (-1) the nonzero ``values`` in a value histogram.

    The dict is read and written through map/update, in C: this runs on every learned
    Bernoulli document.
    """
    values = values[values != 0]
    if not len(values):
        return
    distinct, counts = np.unique(values, return_counts=True)
    keys = distinct.tolist()
    now = np.fromiter(map(histogram.get, keys, repeat(0)), np.int64, len(keys)) + sign * counts
    histogram.update(zip(keys, now.tolist()))
    if not now.all():
        for value in distinct[now == 0].tolist():
            del histogram[value]