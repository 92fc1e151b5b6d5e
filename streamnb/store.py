"""The count store of the discrete models, as Python sees it: a thin face of the core.

The vocabulary, the (feature, class) count tables, the class totals, the global scale that
carries forgetting, the feature stamps and Bernoulli's per-class histograms live in the
compiled core (``streamnb._core.Core``, src/store/ and src/nb/, which say what is stored
and how it changes). This module gives the Python side what it reads: counts as numpy
arrays, feature names, the file-format export and import (checked value by value), and the
standalone ``Vocabulary`` the record models (Gaussian, categorical) keep their field names in.

What is stored, for features f and classes c (counts may be fractional: sample weights):
N_c documents of class c, T_c = sum_f T_cf tokens of class c, T_cf the token count of f in
c, D_cf the documents of class c containing f; all divided by one global ``scale``
(true = stored * scale).
"""

from __future__ import annotations

import abc
import math
import struct
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    from ._lazy import numpy as np

from . import _core
from .errors import ModelFormatError, StreamNBError, describe
from .keys import _token_from_key as _token_from_key  # the core calls both by their name here
from .keys import _token_key as _token_key
from .validate import Label, check_bucket_count, check_label

__all__ = ["CountStore", "Vocabulary", "Label", "check_label", "MIN_SCALE", "MAX_STORED"]

#: Below this global scale the stored counts are folded back (see src/store/forget.rs).
MIN_SCALE: float = _core.MIN_SCALE
#: Class totals may not grow past this (stored units), so no count can overflow.
MAX_STORED: float = _core.MAX_STORED


class _TokenIds(abc.ABC):
    """What ``Vocabulary`` and ``StoreVocabulary`` read the same way from their core."""

    _core: _core.Vocabulary | _core.Core[Label]

    @property
    def epoch(self) -> int:
        """Bumped whenever a token gains or loses its id, so cached lookups can be trusted."""
        return self._core.epoch

    @property
    def capacity(self) -> int:
        """One more than the largest id handed out so far: the row count the cells need
        (hashed: the number of buckets)."""
        return self._core.capacity

    def free_ids(self) -> list[int]:
        """Ids free for reuse (the last one is reused first)."""
        return self._core.free_ids()

    @abc.abstractmethod
    def tokens(self, ids: Iterable[int]) -> list[Hashable | None]:
        """The token of each id (None for a free one)."""

    @abc.abstractmethod
    def _id_list(self) -> list[int]:
        """The ids of the tokens, ascending."""

    def mapping(self) -> dict[Hashable, int]:
        """Every token with its id (a copy)."""
        ids = self._id_list()
        return dict(zip(self.tokens(ids), ids))


class Vocabulary(_TokenIds):
    """Token -> integer id, growing on the fly; ids of removed tokens are reused.

    The table lives in the compiled core (``streamnb._core.Vocabulary``: one byte arena,
    a seeded hash). With ``n_buckets`` set, tokens are hashed (CRC-32, stable across
    processes) into that many ids instead; nothing is stored per token and ``token(i)``
    names the bucket.

    Parameters
    ----------
    n_buckets : int or None
        Hash tokens into this many ids (in [1, 2**32)); None for an exact vocabulary.

    Raises
    ------
    InvalidParameterError
        For a bucket count out of range.
    """

    def __init__(self, n_buckets: int | None = None) -> None:
        self.n_buckets = check_bucket_count(n_buckets)
        self._core: _core.Vocabulary = _core.Vocabulary(n_buckets)

    def find(self, tokens: Sequence[Hashable]) -> npt.NDArray[np.int64]:
        """Ids of the tokens, -1 for tokens not in the vocabulary (nothing is added)."""
        return np.frombuffer(self._core.find(tokens), dtype=np.int64)

    def find_or_add(self, tokens: Sequence[Hashable], ids: npt.NDArray[np.int64] | None = None,
                    epoch: int | None = None) -> npt.NDArray[np.int64]:
        """Ids of the tokens, giving new tokens new (or recycled) ids.

        ``ids``/``epoch`` (an earlier ``find``) are accepted for the callers' convenience;
        the core looks the tokens up again, which costs less than checking them.
        """
        return np.frombuffer(self._core.find_or_add(tokens), dtype=np.int64)

    def remove(self, ids: Iterable[int]) -> None:
        """Forget the tokens of these ids; the ids become free for reuse."""
        self._core.remove([int(i) for i in ids])

    def restore(self, ids: npt.NDArray[np.int64] | None, tokens: list[Hashable],
                free: npt.NDArray[np.int64] | None) -> None:
        """Take the layout of a saved vocabulary: ``tokens`` at ``ids``, ``free`` ids for reuse.

        ModelFormatError unless ids (increasing) and free ids together are 0, 1, ... without
        gaps or repeats, and the tokens are distinct, one per id.
        """
        for name, array in (("feature ids", ids), ("free ids", free)):
            _require(isinstance(array, np.ndarray) and array.dtype == np.int64 and array.ndim == 1,
                     f"{name} must be a 1-d int64 array")
            assert array is not None  # _require just checked it is an array
            _require(not len(array) or (array.min() >= 0 and array.max() < 2**32 - 1), f"{name} out of range")
        assert ids is not None and free is not None  # _require just checked both
        _require(bool((np.diff(ids) > 0).all()), "feature ids must be increasing")
        _require(isinstance(tokens, list) and len(tokens) == len(ids), f"the vocabulary must list {len(ids)} tokens")
        self._core.restore(ids.tolist(), tokens, free.tolist())

    def ids(self) -> npt.NDArray[np.int64]:
        """Ids of the tokens in the vocabulary, ascending (int64)."""
        return np.array(self._core.ids(), dtype=np.int64)

    def _id_list(self) -> list[int]:
        return self._core.ids()

    def token(self, feature_id: int) -> Hashable | None:
        """The token of an id (for hashing: the bucket's name, e.g. ``'#417'``); None for a free id."""
        return self._core.token(int(feature_id))

    def tokens(self, ids: Iterable[int]) -> list[Hashable | None]:
        return self._core.tokens([int(i) for i in ids])

    def nbytes(self) -> int:
        return self._core.nbytes()

    def __len__(self) -> int:
        return len(self._core)

    def __getstate__(self) -> dict[str, Any]:
        ids = self._core.ids()
        return {"n_buckets": self.n_buckets, "ids": ids, "tokens": self._core.tokens(ids),
                "free": self._core.free_ids()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(self, state["n_buckets"])
        if state["n_buckets"] is None:
            self._core.restore(state["ids"], state["tokens"], state["free"])


class StoreVocabulary(_TokenIds):
    """The vocabulary of a discrete model (in its core): token <-> feature id."""

    def __init__(self, core: _core.Core[Label], n_buckets: int | None) -> None:
        self._core: _core.Core[Label] = core
        self.n_buckets = n_buckets

    def find(self, tokens: Sequence[Hashable]) -> npt.NDArray[np.int64]:
        """Ids of the tokens, -1 for tokens not in the vocabulary (hashed: the buckets)."""
        return np.array(self._core.find(tokens), dtype=np.int64)

    def token(self, feature_id: int) -> Hashable | None:
        """The token of an id (hashed models: the bucket's name, e.g. ``'#417'``); None for an id not in V."""
        return self._core.tokens_of([int(feature_id)])[0]

    def tokens(self, ids: Iterable[int]) -> list[Hashable | None]:
        return self._core.tokens_of([int(i) for i in ids])

    def _id_list(self) -> list[int]:
        return self._core.feature_ids()

    def __len__(self) -> int:
        return self._core.vocabulary_size()


class Cells:
    """Which cell layout the store uses ("dense" or "hash") and its size."""

    def __init__(self, core: _core.Core[Label]) -> None:
        self._core = core

    @property
    def kind(self) -> str:
        return "dense" if self._core.dense else "hash"

    def nbytes(self) -> int:
        return self._core.cells_nbytes()


if TYPE_CHECKING:
    #: Named arrays of the model file: float64 counts, int64 ids and stamps, uint8 fingerprints
    #: (the dtype depends on the name; every array read from a file is checked before use).
    #: A model file's are a ``persist.SavedArrays``, which reads them without numpy.
    Arrays = Mapping[str, npt.NDArray[Any]]
    #: An array as a file holds it: (dtype, shape, buffer, start, end), its bytes ``buffer[start:end]``.
    RawArray = tuple[str, tuple[int, ...], bytes, int, int]
    #: Cells as (feature ids, class ids, tokens, docs).
    _Cells = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.float64]]


def _floats(data: bytearray, shape: tuple[int, ...] | None = None) -> npt.NDArray[np.float64]:
    array = np.frombuffer(data, dtype=np.float64)
    return array if shape is None else array.reshape(shape)


class CountStore:
    """Read access to a discrete model's counts, and its export and import for ``persist``.

    Parameters
    ----------
    core : streamnb._core.Core
        The model's compiled core, which holds the counts.
    n_buckets : int or None
        The model's hash buckets; None for an exact vocabulary.
    """

    def __init__(self, core: _core.Core[Label], n_buckets: int | None) -> None:
        self._core = core
        self.vocabulary = StoreVocabulary(core, n_buckets)
        self.cells = Cells(core)

    # -- classes ---------------------------------------------------------------------------
    @property
    def labels(self) -> list[Label]:
        return self._core.labels

    @property
    def n_classes(self) -> int:
        return self._core.n_classes

    def class_id(self, label: Label) -> int | None:
        """Index of a class, None when it was never seen."""
        return self._core.class_id(label)

    def add_class(self, label: Label) -> int:
        """Index of a class, adding the class (with zero counts) if it is new."""
        return self._core.add_class(check_label(label))

    @property
    def class_docs(self) -> npt.NDArray[np.float64]:
        """N_c in stored units."""
        return np.array(self._core.stored_class_totals()[0])

    @property
    def class_tokens(self) -> npt.NDArray[np.float64]:
        """T_c in stored units."""
        return np.array(self._core.stored_class_totals()[1])

    def true_class_docs(self) -> npt.NDArray[np.float64]:
        return np.array(self._core.class_docs())

    def true_class_tokens(self) -> npt.NDArray[np.float64]:
        return np.array(self._core.class_tokens())

    # -- clocks ----------------------------------------------------------------------------
    @property
    def scale(self) -> float:
        """true count = stored count * scale (exponential forgetting in O(1))."""
        return self._core.scale

    @scale.setter
    def scale(self, value: float) -> None:
        self._core.scale = value

    @property
    def n_learned(self) -> int:
        return self._core.n_learned

    @property
    def n_features(self) -> int:
        return self._core.n_features

    @property
    def pruned_at(self) -> int:
        return self._core.pruned_at

    # -- features and counts ---------------------------------------------------------------
    def feature_ids(self) -> npt.NDArray[np.int64]:
        """Ids of the features in V, ascending."""
        return np.array(self._core.feature_ids(), dtype=np.int64)

    def known(self, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
        """Mask of the ids that are features in V."""
        return np.array(self._core.known([int(i) for i in ids]), dtype=bool)

    def gather(self, ids: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """True (token, doc) counts of the features ``ids`` in every class: two (n, K) arrays."""
        tokens, docs = self._core.gather([int(i) for i in ids])
        shape = (len(ids), self.n_classes)
        return _floats(tokens, shape), _floats(docs, shape)

    def gather_tokens(self, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        return self.gather(ids)[0]

    def gather_docs(self, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        return self.gather(ids)[1]

    def nonzero(self) -> _Cells:
        """Every nonzero cell as true counts: (feature ids, class ids, tokens, docs)."""
        rows, cols, tokens, docs = self._stored_cells()
        return rows, cols, tokens * self.scale, docs * self.scale

    def _stored_cells(self) -> _Cells:
        rows, cols, tokens, docs = self._core.nonzero()
        return (np.frombuffer(rows, dtype=np.int64), np.frombuffer(cols, dtype=np.int64),
                _floats(tokens), _floats(docs))

    def _stamps(self, which: int) -> npt.NDArray[np.int64]:
        ids = self.feature_ids()
        stamps = np.zeros(self.vocabulary.capacity, dtype=np.int64)
        stamps[ids] = self._core.stamps(ids.tolist())[which]
        return stamps

    @property
    def born(self) -> npt.NDArray[np.int64]:
        """Per feature id: when the feature last entered V (0 for ids not in V)."""
        return self._stamps(0)

    @property
    def last_seen(self) -> npt.NDArray[np.int64]:
        """Per feature id: the last learned document containing it (0 for ids not in V)."""
        return self._stamps(1)

    def drop_features(self, ids: Iterable[int]) -> int:
        """Remove whole features (pruning); returns how many were in V."""
        return self._core.drop_features([int(i) for i in ids])

    def decay(self, factor: float) -> None:
        """Multiply every count by ``factor`` (0 <= factor <= 1) in O(1)."""
        self._core.advance_clock(0, float(factor))

    def rescale(self) -> None:
        """Fold the global scale into the stored counts."""
        self._core.rescale()

    def nbytes(self) -> int:
        """Bytes the model holds in the core (vocabulary, counts, stamps, derived sums)."""
        return self._core.nbytes()

    # -- persistence -----------------------------------------------------------------------
    def export(self) -> tuple[dict[str, Any], dict[str, npt.NDArray[Any]]]:
        """The whole state as (scalars, named arrays), for persistence.

        Feature ids are kept as they are (``feature_id``, and the ids free for reuse in
        ``free_id``), and cells hold stored values (true = stored * scale): a restored store
        is the same store, down to the ids the next new words get. An exact model's tokens
        are their key bytes (``feature_key``, cut at ``feature_key_end``); a hashed model has
        none (the ids are the buckets).
        """
        ids = self.feature_ids()
        rows, cols, tokens, docs = self._stored_cells()
        born, last_seen = self._core.stamps(ids.tolist())
        class_docs, class_tokens = self._core.stored_class_totals()
        arrays = {
            "class_docs": np.array(class_docs, dtype=np.float64),
            "class_tokens": np.array(class_tokens, dtype=np.float64),
            "cell_feature": rows.astype(np.uint32),
            "cell_class": cols.astype(np.uint32),
            "cell_tokens": tokens.copy(),
            "cell_docs": docs.copy(),
            "feature_id": ids.astype(np.uint32),
            "feature_born": np.array(born, dtype=np.uint32),
            "feature_last_seen": np.array(last_seen, dtype=np.uint32),
        }
        scalars = {"labels": list(self.labels), "scale": self.scale, "n_learned": self.n_learned}
        if self.vocabulary.n_buckets is None:
            keys, ends = self._core.feature_keys(ids.tolist())
            arrays["feature_key"] = np.frombuffer(keys, dtype=np.uint8)
            arrays["feature_key_end"] = np.frombuffer(ends, dtype="<u4")
            arrays["free_id"] = np.array(self.vocabulary.free_ids(), dtype=np.uint32)
        # Only a model that merged one which had pruned has these (src/store/mod.rs MergedPruning,
        # forgotten_merges).
        for name, values in self._core.merged_arrays():
            arrays[name] = np.array(values, dtype=np.uint32)
        return scalars, arrays

    def restore(self, scalars: dict[str, Any], arrays: Arrays, pruned_at: int,
                tokens: list[Hashable] | None = None) -> None:
        """Load ``export``'s output into this (empty) store, every value checked first.

        ``tokens`` is the vocabulary as a version-1 file lists it (instead of the key
        arrays). Raises ModelFormatError naming the first inconsistency (wrong shape,
        non-finite or negative count, id out of range, duplicate, a feature without counts
        ...). The labels and clocks are checked here, the arrays by the core
        (src/snapshot.rs), which reads them as the file's bytes: loading a model needs no
        numpy and makes no Python object per token.

        Parameters
        ----------
        scalars : dict
            The labels, the scale and the documents learned, as ``export`` gave them.
        arrays : mapping
            The store's arrays (``STORE_ARRAYS``).
        pruned_at : int
            The document stamp of the last pruning.
        tokens : list of hashable or None
            The vocabulary of a version-1 file.

        Raises
        ------
        ModelFormatError
            For the first inconsistency found.
        """
        labels, scale, n_learned = scalars["labels"], scalars["scale"], scalars["n_learned"]
        _require(isinstance(labels, list), f"labels must be a list, got {describe(labels)}")
        checked = []
        for label in labels:
            _require(isinstance(label, (str, int, bool)), f"class label {describe(label)} is not a str, int or bool")
            checked.append(check_label(label))
        _require(len(set(checked)) == len(checked), f"duplicate class labels in {checked!r}")
        _require(isinstance(scale, float) and MIN_SCALE <= scale <= 1.0,
                 f"scale must be a float in [{MIN_SCALE:g}, 1], got {describe(scale)}")
        _require(isinstance(n_learned, int) and not isinstance(n_learned, bool) and 0 <= n_learned < 2**32 - 1,
                 f"n_learned must be an int in [0, 2**32 - 1), got {describe(n_learned)}")
        _require(isinstance(pruned_at, int) and not isinstance(pruned_at, bool) and 0 <= pruned_at <= n_learned,
                 f"pruned_at must be an int in [0, {n_learned}], got {describe(pruned_at)}")
        raw = {name: _raw_array(arrays, name) for name in STORE_ARRAYS if name in arrays}
        if tokens is not None:
            _require(isinstance(tokens, list) and self.vocabulary.n_buckets is None,
                     "the vocabulary must be a list of tokens of an exact model")
            listed = raw["feature_id"][1] if "feature_id" in raw else None
            _require(listed is None or [len(tokens)] == list(listed),
                     f"the vocabulary must list {listed[0] if listed else 0} tokens, it lists {len(tokens)}")
            _require("feature_key" not in raw, "the vocabulary is listed twice (tokens and key arrays)")
            try:
                keys, ends = _core.token_key_arrays(tokens)
            except StreamNBError as exc:
                raise ModelFormatError(f"vocabulary tokens must be usable features: {exc}") from None
            raw["feature_key"] = ("|u1", (len(keys),), keys, 0, len(keys))
            raw["feature_key_end"] = ("<u4", (len(ends) // 4,), ends, 0, len(ends))
        else:
            _require(self.vocabulary.n_buckets is not None or "feature_key" in raw,
                     "the vocabulary is missing (an exact model lists its tokens)")
        # Every array is checked by the core before anything is loaded (src/snapshot.rs).
        self._core.load(checked, raw, float(scale), int(n_learned), int(pruned_at))


STORE_ARRAYS = ("feature_id", "feature_key", "feature_key_end", "free_id", "class_docs", "class_tokens",
                "cell_feature", "cell_class", "cell_tokens", "cell_docs", "feature_born", "feature_last_seen",
                *_core.MERGED_ARRAYS, *_core.FORGOTTEN_ARRAYS)


def _raw_array(arrays: Arrays, name: str) -> RawArray:
    """(dtype, shape, buffer, start, end) of a saved array: straight from the file
    (``persist.SavedArrays``), or from a numpy array (a MixedNB's part, a caller's dict)."""
    raw: Callable[[str], RawArray] | None = getattr(arrays, "raw", None)
    if raw is not None:
        return raw(name)
    array = arrays[name]
    _require(isinstance(array, np.ndarray), f"array {name!r} must be a numpy array, got {describe(array)}")
    data = array.tobytes()
    return array.dtype.str, array.shape, data, 0, len(data)


_STRUCT_FORMATS = {"<f8": "d", "<i8": "q"}


def _raw_bytes(arrays: Arrays, name: str, dtype: str, shape: list[int]) -> bytes:
    """The little-endian bytes of a saved array (read without numpy), its dtype and shape checked."""
    saved_dtype, saved_shape, buffer, start, end = _raw_array(arrays, name)
    _require(saved_dtype == dtype and list(saved_shape) == shape,
             f"array {name!r} must be {dtype} of shape {shape}, got {saved_dtype} of shape {list(saved_shape)}")
    return bytes(buffer[start:end])


def _raw_values(arrays: Arrays, name: str, dtype: str, shape: list[int]) -> tuple[Any, ...]:
    """The values of a saved array (``<f8`` or ``<i8``) as Python numbers, its dtype and shape
    checked (:func:`_raw_bytes`)."""
    return struct.unpack(f"<{math.prod(shape)}{_STRUCT_FORMATS[dtype]}", _raw_bytes(arrays, name, dtype, shape))


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ModelFormatError(message)


@overload
def settle(old: float, delta: float) -> float: ...
@overload
def settle(old: npt.NDArray[np.float64], delta: float | npt.NDArray[np.float64]) -> npt.NDArray[np.float64]: ...
@overload
def settle(old: float | npt.NDArray[np.float64], delta: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]: ...


def settle(old: float | npt.NDArray[np.float64],
           delta: float | npt.NDArray[np.float64]) -> float | npt.NDArray[np.float64]:
    """old + delta, with rounding residues of a subtraction snapped to exactly zero: the rule
    of the core's store (src/store/mod.rs, ``settle``), for the record models' numpy tables."""
    new = old + delta
    residue = np.abs(new) <= _core.ROUNDING_TOLERANCE * np.abs(delta)
    if np.ndim(new) == 0:
        return 0.0 if (delta < 0 and residue) else float(new)
    return np.where((delta < 0) & residue, 0.0, new)
