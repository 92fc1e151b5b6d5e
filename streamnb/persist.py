"""Saving and loading models: a versioned, checksummed file that never holds a pickle.

A model file may come from elsewhere, so reading one must never run code: the file holds
only numbers (``.npy`` arrays of float64, int64, uint32 or uint8, read here from their header and
raw little-endian payload, without numpy) and JSON, and every value is checked before a
model is built from it.

Format, version 7
-----------------
A zip archive, every member stored uncompressed:

- ``metadata.json`` (UTF-8, ASCII-escaped JSON object)::

      {"format": "streamnb-model", "version": 7, "streamnb": "<library version>",
       "model": "<model type, e.g. MultinomialNB>",
       "tokenizer": null | {"type": "<module.Class>", "params": <its get_params()>},
       "arrays": {"<name>": {"dtype": "<f8" | "<i8" | "<u4" | "|u1", "shape": [n, ...]}, ...},
       "state": <the model's state: params, class labels, clocks ...>}

  Values that JSON cannot tell apart are tagged: a tuple is ``{"$tuple": [...]}``, a
  mapping is ``{"$map": [[key, value], ...]}`` (keys keep their types), so class labels
  stay str, int or bool exactly and n-gram tokens stay tuples; bytes, NaN/infinities and a
  str holding a surrogate pair are ``{"$bytes": ...}``, ``{"$float": ...}``, ``{"$str": ...}``
  (see ``encode_value``).
- ``arrays/<name>.npy`` for each array named in the metadata (counts, stamps, ledger).
- the archive comment: ``streamnb-model v7 sha256:<64 hex digits>``, the SHA-256 of every
  byte of the file before the digits. Any flipped bit, truncation or edit is detected
  and reported as such (whatever else reading the file found), and a file claiming another
  version is refused by name.

What a DiscreteNB model stores (its ``_state`` / ``_from_state`` hooks): the constructor
params (the settings objects' fields flat among them, ``half_life``, ``max_features`` ...,
as files have always kept them: ``DiscreteNB._saved_params``), the class labels, the global
``scale`` and the clocks, and the arrays
``class_docs``, ``class_tokens`` (per class, stored units: true count = stored * scale),
``cell_feature``, ``cell_class``, ``cell_tokens``, ``cell_docs`` (the nonzero cells),
``feature_id`` (the id of each token; hash buckets for hashed models), ``feature_key``
(uint8: the key bytes of each token in ``feature_id``'s order, back to back: a str's UTF-8,
any other token 0xFF and its tagged encoding, see ``store._token_key``) and
``feature_key_end`` (where each token's key ends), ``free_id`` (ids free for reuse),
``feature_born``, ``feature_last_seen`` (document stamps): the store's integer arrays are
uint32 (ids, stamps and key ends are below 2^32 by construction), its cells sorted by
feature then class; a model that merged one which had pruned also has ``merged_first``,
``merged_last``, ``merged_exception_end``, ``merged_exception_feature`` and
``merged_exception_from`` (which features the merged documents no longer hold: src/store/mod.rs
``MergedPruning``) and, past its budget, ``merged_forgotten_first`` / ``_last`` (the
stamps of merged documents it can no longer unlearn); and the
``ledger_fingerprint`` (16 bytes per entry), ``ledger_class``, ``ledger_weight``,
``ledger_learned_at``, ``ledger_t`` arrays; a model choosing its smoothing online
(``alpha="auto"``, ``mu="auto"``) also has ``smoothing_evidence`` (float64, candidates x
temperatures: src/smoothing.rs, ``TEMPERATURES``) and ``smoothing_scored`` (int64, one value:
the documents scored), so a loaded model keeps its choice, bit for bit. Ids are kept, so a
loaded model is the same model down to the ids its next new words get.

A LogisticRegression stores its params, labels, ``class_docs``, ``scale`` and ``steps`` (and
with an IDF ``idf_docs``) and the arrays ``lr_feature``, ``lr_weight``, ``lr_square``,
``lr_bias``, ``lr_bias_square`` (``lr_doc_freq`` with an IDF; ``feature_key`` and
``feature_key_end`` for an exact vocabulary); with a ledger, the steps it kept and the
documents of its window, as the ``ledger_fingerprint``, ``ledger_class``, ``ledger_weight``,
``ledger_g``, ``ledger_decay``, ``ledger_seen_at``, ``ledger_doc_length`` and ``ledger_doc``
arrays (:mod:`streamnb.steps`). A Fusion stores its parts (their arrays under ``nb_`` and
``lr_``), the stacker's weights and steps, and with ``records`` the steps its logistic
regression and stacker kept, as the ``records_*`` arrays (those eight and
``records_stacker``).

Adding a model type: decorate the class with ``@register_model`` (a subclass, e.g. an
adapter, must be registered itself, under a name of its own) and give it
``_state(self) -> (state, arrays)`` (``state`` JSON-able after tagging, with its
constructor kwargs in ``state["params"]``, the tokenizer object included (it is written as
the top-level ``tokenizer`` description, leaving a null placeholder); ``arrays`` named
float64/int64/uint32/uint8 numpy arrays) and ``_from_state(cls, state, arrays)`` that checks
what it reads and raises ModelFormatError. ``arrays`` is a ``SavedArrays`` mapping: a lookup
gives a numpy array, ``arrays.raw(name)`` the (dtype, shape, buffer, start, end) of the
file's bytes without importing numpy (the discrete models hand those to the core, so ``streamnb classify`` never
imports numpy). DiscreteNB subclasses (MultinomialNB, BernoulliNB,
ComplementNB) inherit both; the record models (GaussianNB, CategoricalNB, MixedNB) inherit
them from RecordNB, which saves the class bookkeeping and asks the model for its tables
(``_table_state`` / ``_restore_tables``). MixedNB saves each part with the part's own hooks,
its arrays prefixed by the part's kind (``text_``, ``numeric_``, ``categorical_``).

Version 1 (streamnb before 2026-11-24) listed a DiscreteNB's vocabulary tokens in the state
(``"features"``, JSON) instead of the two key arrays (a million tokens took 0.1 s of JSON
and a Python string each to load), and its store's integer arrays were int64. Version-1
files still load (``READABLE``). Version 2 (until 2026-11-24) had no ``merged_*`` arrays:
its readers ignored arrays they did not know, so a version-2 reader would have loaded a
model with merged prunings and unlearned its merged documents wrongly; version 3 marks the
files they must refuse (and a reader now refuses any array it does not know). Version 4
(since 2026-11-27) adds the ``smoothing_*`` arrays of a smoothing chosen online; a version-3
reader would refuse their ``alpha="auto"`` parameter without saying why, so the version says
it. Version 5 (since 2026-11-27) adds a LogisticRegression's IDF (the ``idf_power``
parameter, ``idf_docs`` in the state, the ``lr_doc_freq`` array), which a version-4 reader
would refuse the same way; a version-4 LogisticRegression reads with ``idf_power=0``.
Version 6 (since 2026-12-06) adds the steps a LogisticRegression's ledger and a Fusion's
records keep (the ``ledger``/``records`` parameters, the ``ledger_*``/``records_*`` arrays);
a version-5 file loads with none kept (a Fusion with its default ``records``, empty), so the
messages it learned before unlearn by the reverse step. Version 7 (since 2026-12-06) adds the
documents of the newest kept steps (the ``window`` parameter, the ``*_doc_length`` and
``*_doc`` arrays, a LogisticRegression's ``ledger_seen_at``), so that unlearning one of those
messages replays the steps after it; a version-6 file loads with its steps kept and an empty
window (its messages unlearn by their own steps), which fills as the model learns.

Reading takes the members out of the file's bytes in place (zipfile reads the central
directory; the local headers are followed here): the SHA-256 covers every byte, so
zipfile's CRC-32 pass and its copy of each member would be the same work again. The
SHA-256 is computed in a thread while the model is read (see ``loads``).

Tokenizers are saved by type name and ``get_params()``: classes of ``streamnb.features.text``,
``streamnb.features.weighting`` and ``streamnb.features.email`` are known, others can be added
with ``register_tokenizer``. Anything else (a lambda, a function) cannot be saved and ``save``
says so before writing.

The container itself (the tagged JSON values, the zip archive, its ``.npy`` members read
without numpy, ``SavedArrays``) is written and read by :mod:`streamnb.archive`, the model and
tokenizer types a file may name are registered in :mod:`streamnb.registry`; the names of both
stay importable from here.

Writes are atomic: the file is written to a temporary file in the same folder, flushed and
fsync'ed, renamed over the target with ``os.replace`` and the folder is fsync'ed, so after
a crash the path holds the old file or the new one, never a mix. (A crash may leave a
``.<name>.*.tmp`` file behind.)
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tempfile
import threading
from typing import TYPE_CHECKING, Any, cast

from .archive import (
    ARRAY_DTYPES,
    FORMAT,
    READABLE,
    VERSION,
    SavedArrays,
    _pack,
    _read_archive,
    decode_value,
    encode_value,
)
from .archive import METADATA as METADATA  # re-exported: the names of the format stay readable here
from .errors import InvalidTypeError, ModelFormatError, StreamNBError, describe
from .registry import MODEL_TYPES as MODEL_TYPES  # re-exported, as the names below: their home was here
from .registry import Saveable as Saveable
from .registry import build_tokenizer as build_tokenizer
from .registry import describe_tokenizer as describe_tokenizer
from .registry import model_type as model_type
from .registry import register_model as register_model
from .registry import register_tokenizer as register_tokenizer
from .registry import tokenizer_types as tokenizer_types

if TYPE_CHECKING:
    import numpy as np

    from .store import Arrays
else:
    from ._lazy import numpy as np

_TRAILER = re.compile(rb"streamnb-model v(\d{1,9}) sha256:([0-9a-f]{64})\Z")
_TRAILER_MAX = 96  # bytes at the end of the file that may hold the trailer


# -- parts ----------------------------------------------------------------------------
def part_state(part: object, prefix: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A model held by another (MixedNB's parts, Fusion's models) as the holder saves it:
    ``{"model": its registered name, "state": its state}`` (the tokenizer described) and its
    arrays under ``prefix``.

    Parameters
    ----------
    part : object
        A model of a registered type.
    prefix : str
        Put before the names of its arrays.

    Returns
    -------
    tuple of dict
        (its description, its arrays).

    Raises
    ------
    InvalidTypeError
        For a part whose type is not registered.
    """
    name = type(part).__dict__.get("_persist_name")
    if name is None:
        raise InvalidTypeError(f"cannot save the part {type(part).__name__}: not a registered model type")
    state, arrays = cast(Saveable, part)._state()
    params = dict(state["params"])
    if "tokenizer" in params:
        params["tokenizer"] = describe_tokenizer(params["tokenizer"])
    return {"model": name, "state": {**state, "params": params}}, {prefix + key: value for key, value in arrays.items()}


def restore_part(info: object, arrays: Arrays, prefix: str, expected: type, what: str) -> Any:
    """The part ``part_state`` saved: its type must be a subclass of ``expected``, its arrays
    are those under ``prefix``; ModelFormatError, naming ``what``, for anything else.

    Parameters
    ----------
    info : object
        The description ``part_state`` gave, read from a file.
    arrays : mapping
        The holder's arrays.
    prefix : str
        The part's arrays are those whose names start with this.
    expected : type
        The class the part's type must be, or derive from.
    what : str
        The part's name, for the message.

    Returns
    -------
    object
        The part.

    Raises
    ------
    ModelFormatError
        For a description that is not a saved part of the expected type.
    """
    if not isinstance(info, dict):
        raise ModelFormatError(f"{what}: {describe(info)} is not a saved model")
    cls = model_type(info.get("model"))
    if cls is None or not issubclass(cls, expected) or not isinstance(info.get("state"), dict):
        raise ModelFormatError(f"{what}: {info.get('model')!r} is not a known {expected.__name__} type")
    state = info["state"]
    params = state.get("params")
    if isinstance(params, dict) and "tokenizer" in params:
        state = {**state, "params": {**params, "tokenizer": build_tokenizer(params["tokenizer"])}}
    if isinstance(arrays, SavedArrays):  # read in place (no numpy: `streamnb classify` loads this way)
        return cls._from_state(state, arrays.under(prefix))
    return cls._from_state(state, {key[len(prefix):]: value for key, value in arrays.items()
                                   if key.startswith(prefix)})


# -- saving ---------------------------------------------------------------------------
def save(model: Saveable, path: str | os.PathLike[str]) -> None:
    """Write ``model`` to ``path`` atomically in the format described above.

    Parameters
    ----------
    model : Saveable
        A registered model type's instance.
    path : str or os.PathLike
        The file written (replaced whole, or left as it was).

    Raises
    ------
    InvalidTypeError
        For a model or a tokenizer that cannot be saved.
    """
    write_atomically(os.fspath(path), dumps(model))


def dumps(model: Saveable, *, tokenizer_apart: bool = False) -> bytes:
    """The bytes of a model file. ``tokenizer_apart`` leaves the tokenizer out (a null
    placeholder), for a caller that keeps the tokenizer object itself (pickling).

    Parameters
    ----------
    model : Saveable
        A registered model type's instance.
    tokenizer_apart : bool
        Leave the tokenizer out.

    Returns
    -------
    bytes
        The file's bytes.
    """
    name = type(model).__dict__.get("_persist_name")
    if name is None or MODEL_TYPES.get(name) is not type(model):
        raise InvalidTypeError(f"cannot save a {type(model).__name__}: not a registered model type "
                               f"(registered: {sorted(MODEL_TYPES)}; see streamnb.persist.register_model)")
    state, arrays = model._state()
    state = dict(state)
    params = dict(state["params"])
    tokenizer = None
    if "tokenizer" in params:  # saved beside the state; the param stays as a null placeholder
        described = None if tokenizer_apart else describe_tokenizer(params["tokenizer"])
        tokenizer, params["tokenizer"] = described, None
    state["params"] = params
    metadata: dict[str, Any] = {"format": FORMAT, "version": VERSION, "streamnb": _library_version(), "model": name,
                "tokenizer": tokenizer, "state": encode_value(state), "arrays": {}}
    members = {}
    for array_name in sorted(arrays):
        array = np.ascontiguousarray(arrays[array_name])
        if array.dtype.str not in ARRAY_DTYPES:
            raise InvalidTypeError(f"array {array_name!r} has dtype {array.dtype.str}; allowed: {ARRAY_DTYPES}")
        buffer = io.BytesIO()
        np.lib.format.write_array(buffer, array, allow_pickle=False)
        members[f"arrays/{array_name}.npy"] = buffer.getvalue()
        metadata["arrays"][array_name] = {"dtype": array.dtype.str, "shape": list(array.shape)}
    text = json.dumps(metadata, ensure_ascii=True, allow_nan=False, sort_keys=True, separators=(",", ":"))
    return _pack(text.encode("ascii"), members)


def write_atomically(path: str, data: bytes) -> None:
    """Temp file in the same folder, fsync, os.replace, fsync the folder.

    Parameters
    ----------
    path : str
        The file written.
    data : bytes
        Its new content.
    """
    folder = os.path.dirname(os.path.abspath(path))
    descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise
    directory = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def _library_version() -> str:
    from . import __version__
    return __version__


# -- loading --------------------------------------------------------------------------
def load(path: str | os.PathLike[str]) -> Any:  # the model type the file holds
    """Read a model saved by ``save``. ModelFormatError for anything but an intact file of
    a known version: truncated, corrupted, tampered, wrong shapes, non-finite or negative
    counts, pickled objects. Nothing in the file is ever executed.

    Parameters
    ----------
    path : str or os.PathLike
        A model file.

    Returns
    -------
    model
        The model it holds, of the type it names.

    Raises
    ------
    ModelFormatError
        For a file that is not an intact model file of a known version.
    """
    path = os.fspath(path)
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        return loads(data)
    except ModelFormatError as exc:
        raise ModelFormatError(f"{path}: {exc}") from None


_FROM_FILE = object()


def unpickle(data: bytes, tokenizer: Any) -> Any:
    """A pickled model: its file bytes (``dumps(..., tokenizer_apart=True)``) and tokenizer.

    Parameters
    ----------
    data : bytes
        The model's file bytes, without its tokenizer.
    tokenizer : object
        Its tokenizer.

    Returns
    -------
    model
        The model.
    """
    return loads(data, tokenizer=tokenizer)


def loads(data: bytes, *, tokenizer: Any = _FROM_FILE) -> Any:
    """The model of file bytes (see ``load``); ``tokenizer`` replaces the file's own.

    Parameters
    ----------
    data : bytes
        A model file's bytes.
    tokenizer : object
        The tokenizer to use instead of the file's own.

    Returns
    -------
    model
        The model they hold.
    """
    return _loads(data, tokenizer)[0]


def loads_with_digest(data: bytes) -> tuple[Any, str]:
    """The model of file bytes (see ``load``) and the SHA-256 (hex) of all the bytes, the
    identity a journal names its model file by (``streamnb.service.journal``): one pass over
    the bytes gives it and the checksum.

    Parameters
    ----------
    data : bytes
        A model file's bytes.

    Returns
    -------
    tuple
        The model, and the SHA-256 of ``data`` (hex).
    """
    return _loads(data, _FROM_FILE)


def _loads(data: bytes, tokenizer: Any) -> tuple[Any, str]:
    """The model of file bytes, its checksum checked, and the SHA-256 of all the bytes."""
    if not isinstance(data, bytes):  # a bytearray or memoryview: the core reads bytes in place
        data = bytes(data)
    match = _TRAILER.search(data[-_TRAILER_MAX:])
    if match is None:
        raise ModelFormatError("not a streamnb model file, or truncated (no checksum trailer at the end)")
    version = int(match.group(1))
    if version not in READABLE:
        raise ModelFormatError(f"format version {version} is not supported (this streamnb reads versions "
                               f"{', '.join(map(str, READABLE))})")
    expected = bytes.fromhex(match.group(2).decode("ascii"))
    if len(data) < _HASH_APART:  # verified first: a thread costs more than hashing a small file
        file_digest = _check_digest(_digests(data), expected)
        return _read_model(data, version, tokenizer), file_digest
    # A big file's checksum is computed in a thread while the model is read (hashlib and the
    # core both release the GIL: on two cores the load takes the time of the slower of the
    # two). Reading bytes not yet verified is safe, every value being checked as hostile
    # input; nothing is returned before the digest matches, and a mismatch is what gets
    # reported, whatever the reading found.
    found: list[tuple[bytes, str] | BaseException] = []
    hashing = threading.Thread(target=lambda: found.append(_digests(data)))
    hashing.start()
    try:
        model = _read_model(data, version, tokenizer)
    finally:
        hashing.join()
        file_digest = _check_digest(found[0], expected)
    return model, file_digest


_HASH_APART = 1 << 20  # file size (bytes) from which the checksum is computed beside the reading


def _digests(data: bytes) -> tuple[bytes, str] | BaseException:
    """The checksum of file bytes (the SHA-256 of all but the trailer's 64 hex digits) and the
    SHA-256 (hex) of all of them, in one pass; or the exception computing them raised (in a
    thread, handed to the one that waits for it)."""
    try:
        hashing = hashlib.sha256(memoryview(data)[:-64])
        checksum = hashing.copy().digest()
        hashing.update(memoryview(data)[-64:])
        return checksum, hashing.hexdigest()
    except BaseException as exc:
        return exc


def _check_digest(digests: tuple[bytes, str] | BaseException, expected: bytes) -> str:
    """The SHA-256 (hex) of the file's bytes, once its checksum is ``expected``."""
    if isinstance(digests, BaseException):
        raise digests
    if digests[0] != expected:
        raise ModelFormatError("checksum mismatch: the file is corrupted or was modified") from None
    return digests[1]


def _read_model(data: bytes, version: int, tokenizer: Any) -> Any:
    """The model of file bytes (``loads`` checks their checksum)."""
    try:
        metadata, arrays = _read_archive(data, version)
    except ModelFormatError:
        raise
    except Exception as exc:  # a malformed archive can fail in many ways inside zipfile/numpy
        raise ModelFormatError(f"unreadable archive: {type(exc).__name__}: {exc}") from None
    cls = model_type(metadata["model"])
    if cls is None:
        raise ModelFormatError(f"unknown model type {metadata['model']!r} (known: {sorted(MODEL_TYPES)})")
    try:
        state = decode_value(metadata["state"])
    except RecursionError:
        raise ModelFormatError("the model state is nested too deeply") from None
    if not isinstance(state, dict) or not isinstance(state.get("params"), dict):
        raise ModelFormatError("the model state must be a mapping with params")
    if "tokenizer" in state["params"]:
        built = build_tokenizer(metadata["tokenizer"]) if tokenizer is _FROM_FILE else tokenizer
        state["params"] = {**state["params"], "tokenizer": built}
    elif metadata["tokenizer"] is not None:
        raise ModelFormatError(f"a {metadata['model']} has no tokenizer, but the file describes one")
    try:
        return cls._from_state(state, arrays)
    except ModelFormatError:
        raise
    except (StreamNBError, KeyError, TypeError, ValueError, IndexError, OverflowError) as exc:
        raise ModelFormatError(f"invalid {metadata['model']} state: {type(exc).__name__}: {exc}") from None
