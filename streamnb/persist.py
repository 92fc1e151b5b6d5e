"""Saving and loading models: a versioned, checksummed file that never holds a pickle.

A model file may come from elsewhere, so reading one must never run code: the file holds
only numbers (``.npy`` arrays of float64, int64, uint32 or uint8, read here from their header and
raw little-endian payload, without numpy) and JSON, and every value is checked before a
model is built from it.

Format, version 4
-----------------
A zip archive, every member stored uncompressed:

- ``metadata.json`` (UTF-8, ASCII-escaped JSON object)::

      {"format": "streamnb-model", "version": 4, "streamnb": "<library version>",
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
- the archive comment: ``streamnb-model v4 sha256:<64 hex digits>``, the SHA-256 of every
  byte of the file before the digits. Any flipped bit, truncation or edit is detected
  and reported as such (whatever else reading the file found), and a file claiming another
  version is refused by name.

What a DiscreteNB model stores (its ``_state`` / ``_from_state`` hooks): the constructor
params, the class labels, the global ``scale`` and the clocks, and the arrays
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
it.

Reading takes the members out of the file's bytes in place (zipfile reads the central
directory; the local headers are followed here): the SHA-256 covers every byte, so
zipfile's CRC-32 pass and its copy of each member would be the same work again. The
SHA-256 is computed in a thread while the model is read (see ``loads``).

Tokenizers are saved by type name and ``get_params()``: classes of ``streamnb.text``, ``streamnb.weighting`` and
``streamnb.mail`` are known, others can be added with ``register_tokenizer``. Anything
else (a lambda, a function) cannot be saved and ``save`` says so before writing.

Writes are atomic: the file is written to a temporary file in the same folder, flushed and
fsync'ed, renamed over the target with ``os.replace`` and the folder is fsync'ed, so after
a crash the path holds the old file or the new one, never a mix. (A crash may leave a
``.<name>.*.tmp`` file behind.)
"""

from __future__ import annotations

import ast
import base64
import hashlib
import importlib
import io
import json
import math
import os
import re
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast, overload

from .errors import InvalidParameterError, InvalidTypeError, ModelFormatError, StreamNBError, describe

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from .store import Arrays, RawArray
else:
    from ._lazy import numpy as np


class Saveable(Protocol):
    """What a model type gives to be saved (see "Adding a model type" above)."""

    def _state(self) -> tuple[dict[str, Any], Arrays]: ...

    @classmethod
    def _from_state(cls, state: dict[str, Any], arrays: Arrays) -> Saveable: ...


_ModelType = TypeVar("_ModelType", bound="type[Saveable]")

FORMAT = "streamnb-model"
VERSION = 4
READABLE = (1, 2, 3, 4)  # format versions this streamnb loads
METADATA = "metadata.json"
ARRAY_DTYPES = ("<f8", "<i8", "<u4", "|u1")
_TRAILER = re.compile(rb"streamnb-model v(\d{1,9}) sha256:([0-9a-f]{64})\Z")
_TRAILER_MAX = 96  # bytes at the end of the file that may hold the trailer

MODEL_TYPES: dict[str, type[Saveable]] = {}
_TOKENIZER_TYPES: dict[str, type] = {}
# The modules of the built-in tokenizers, and the module name a file saves their type under:
# "streamnb.mail.EmailTokenizer" since format version 1, wherever the class lives now (a type
# name is part of the file format, so streamnb/features/ moved no saved name).
_TOKENIZER_MODULES = {
    "streamnb.features.text": "streamnb.text", "streamnb.features.email": "streamnb.mail",
    "streamnb.features.weighting": "streamnb.weighting", "streamnb.features.ngrams": "streamnb.ngrams",
}


@overload
def register_model(cls: _ModelType, *, name: str | None = None) -> _ModelType: ...
@overload
def register_model(cls: None = None, *, name: str | None = None) -> Callable[[_ModelType], _ModelType]: ...


def register_model(cls: _ModelType | None = None, *,
                   name: str | None = None) -> _ModelType | Callable[[_ModelType], _ModelType]:
    """Class decorator: make a model type saveable and loadable under ``name`` (default:
    the class name). ``@register_model`` or ``@register_model(name="river.MultinomialNB")``;
    a name already taken by another class raises InvalidParameterError."""

    def register(model_type: _ModelType) -> _ModelType:
        key = name or model_type.__name__
        taken = MODEL_TYPES.get(key)
        if taken is not None and taken is not model_type:
            raise InvalidParameterError(f"model type name {key!r} is already registered for {taken!r}")
        MODEL_TYPES[key] = model_type
        setattr(model_type, "_persist_name", key)  # noqa: B010 (a class attribute the protocol does not declare)
        return model_type

    return register if cls is None else register(cls)


def model_type(name: object) -> type[Saveable] | None:
    """The registered model type of this name; a built-in one is imported on first use
    (``streamnb.models`` imports each model's module when it is asked for)."""
    if not isinstance(name, str):
        return None
    if name not in MODEL_TYPES:
        models = importlib.import_module("streamnb.models")
        # importing a model's module registers it; an unknown name imports them all (for the error's list)
        for builtin in [name] if name in models.__all__ else models.__all__:
            getattr(models, builtin)
    return MODEL_TYPES.get(name)


def register_tokenizer(cls: type) -> type:
    """Class decorator: make a tokenizer type (with ``get_params()``) saveable."""
    _TOKENIZER_TYPES[_type_name(cls)] = cls
    return cls


def _type_name(cls: type) -> str:
    return f"{_TOKENIZER_MODULES.get(cls.__module__, cls.__module__)}.{cls.__qualname__}"


def tokenizer_types() -> dict[str, type]:
    """Known tokenizer types by name: the registered ones and those of streamnb.text/mail."""
    known = dict(_TOKENIZER_TYPES)
    for module_name in _TOKENIZER_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for value in vars(module).values():
            if (isinstance(value, type) and value.__module__ == module_name and _defines_call(value)
                    and callable(getattr(value, "get_params", None))):
                known.setdefault(_type_name(value), value)
    return known


def _defines_call(cls: type) -> bool:
    """Are instances callable (text -> features), as a tokenizer must be?"""
    return any("__call__" in vars(base) for base in cls.__mro__[:-1])


# -- tagged JSON values ---------------------------------------------------------------
def encode_value(value: Any) -> Any:
    """A Python value as JSON, tagging what JSON cannot hold as itself; InvalidTypeError for others.

    Tags: {"$tuple": [...]}, {"$map": [[k, v], ...]}, {"$bytes": base64}, {"$float": "nan" |
    "inf" | "-inf"} (feature names can be any hashable, NaN included), and {"$str": [code
    points]} for a str holding a high then a low surrogate, which json.loads would join into
    one character.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return {"$str": [ord(ch) for ch in value]} if _has_surrogate_pair(value) else value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else {"$float": repr(float(value))}
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if isinstance(value, list):
        if _all_plain_str(value):
            return value  # fast path: a vocabulary of str tokens
        return [encode_value(v) for v in value]
    if isinstance(value, tuple):
        return {"$tuple": [encode_value(v) for v in value]}
    if isinstance(value, Mapping):
        return {"$map": [[encode_value(k), encode_value(v)] for k, v in value.items()]}
    raise InvalidTypeError(f"cannot save a value of type {type(value).__name__}: {describe(value)}")


def _all_str(values: list[Any]) -> bool:
    """Are all items exactly str? (set(map(type, ...)) runs in C: a 100k-token vocabulary in ~2 ms)"""
    return not values or set(map(type, values)) == {str}


def _all_plain_str(values: list[Any]) -> bool:
    """All str, none with a surrogate pair (UTF-8 encoding of the whole list, in C, finds any surrogate)."""
    if not _all_str(values):
        return False
    try:
        "".join(values).encode("utf-8")
    except UnicodeEncodeError:
        return not any(map(_has_surrogate_pair, values))
    return True


def _has_surrogate_pair(text: str) -> bool:
    if text.isascii():
        return False
    return any("\ud800" <= a <= "\udbff" and "\udc00" <= b <= "\udfff" for a, b in zip(text, text[1:]))


_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def decode_value(value: Any) -> Any:
    """Inverse of encode_value; ModelFormatError for a malformed tag."""
    if isinstance(value, list):
        if _all_str(value):
            return value
        return [decode_value(v) for v in value]
    if isinstance(value, dict):
        if set(value) == {"$str"} and isinstance(value["$str"], list):
            try:
                return "".join(map(chr, value["$str"]))
            except (TypeError, ValueError, OverflowError):
                raise ModelFormatError("a $str is not a list of code points") from None
        if set(value) == {"$bytes"} and isinstance(value["$bytes"], str):
            try:
                return base64.b64decode(value["$bytes"], validate=True)
            except ValueError:
                raise ModelFormatError("a $bytes value is not base64") from None
        if set(value) == {"$float"} and value["$float"] in _FLOATS:
            return _FLOATS[value["$float"]]
        if set(value) == {"$tuple"} and isinstance(value["$tuple"], list):
            return tuple(decode_value(v) for v in value["$tuple"])
        if set(value) == {"$map"} and isinstance(value["$map"], list):
            pairs = value["$map"]
            if not all(isinstance(p, list) and len(p) == 2 for p in pairs):
                raise ModelFormatError("a $map entry is not a [key, value] pair")
            try:
                return {decode_value(k): decode_value(v) for k, v in pairs}
            except TypeError as exc:
                raise ModelFormatError(f"a $map key is not hashable: {exc}") from None
        raise ModelFormatError(f"unknown tagged value with keys {sorted(value)[:5]!r}")
    return value


# -- tokenizers -----------------------------------------------------------------------
def part_state(part: object, prefix: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A model held by another (MixedNB's parts, Fusion's models) as the holder saves it:
    ``{"model": its registered name, "state": its state}`` (the tokenizer described) and its
    arrays under ``prefix``."""
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
    are those under ``prefix``; ModelFormatError, naming ``what``, for anything else."""
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


def describe_tokenizer(tokenizer: object) -> dict[str, Any] | None:
    """{"type", "params"} for a saveable tokenizer; InvalidTypeError, naming it, for any other."""
    if tokenizer is None:
        return None
    cls = type(tokenizer)
    name = _type_name(cls)
    known = tokenizer_types()
    get_params = getattr(tokenizer, "get_params", None)
    if known.get(name) is not cls or not callable(get_params):
        raise InvalidTypeError(
            f"cannot save tokenizer {describe(tokenizer)}: only tokenizer classes with get_params() from "
            f"{', '.join(_TOKENIZER_MODULES.values())} or registered with streamnb.persist.register_tokenizer can be "
            f"saved (known: {sorted(known) or 'none'})")
    params = encode_value(get_params())
    rebuilt = cls(**decode_value(params))
    if encode_value(getattr(rebuilt, "get_params")()) != params:  # noqa: B009 (its class has get_params: checked above)
        raise InvalidTypeError(f"cannot save tokenizer {describe(tokenizer)}: {name}(**get_params()) "
                               "does not rebuild it with the same settings")
    return {"type": name, "params": params}


def build_tokenizer(description: object) -> object:
    """The tokenizer a description stands for; ModelFormatError for an unknown type."""
    if description is None:
        return None
    if not (isinstance(description, dict) and set(description) == {"type", "params"}):
        raise ModelFormatError(f"tokenizer must be null or {{type, params}}, got {describe(description)}")
    cls = tokenizer_types().get(description["type"])
    if cls is None:
        raise ModelFormatError(f"unknown tokenizer type {description['type']!r}")
    params = decode_value(description["params"])
    if not isinstance(params, dict):
        raise ModelFormatError(f"tokenizer params must be a mapping, got {describe(params)}")
    try:
        return cls(**params)
    except (StreamNBError, TypeError, ValueError) as exc:
        raise ModelFormatError(f"tokenizer {description['type']} rejects its saved params: {exc}") from None


# -- saving ---------------------------------------------------------------------------
def save(model: Saveable, path: str | os.PathLike[str]) -> None:
    """Write ``model`` to ``path`` atomically in the format described above."""
    write_atomically(os.fspath(path), dumps(model))


def dumps(model: Saveable, *, tokenizer_apart: bool = False) -> bytes:
    """The bytes of a model file. ``tokenizer_apart`` leaves the tokenizer out (a null
    placeholder), for a caller that keeps the tokenizer object itself (pickling)."""
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


def _pack(metadata: bytes, members: dict[str, bytes]) -> bytes:
    """The file bytes: the zip archive, its comment ending in the SHA-256 of all bytes before."""
    buffer = io.BytesIO()
    prefix = f"{FORMAT} v{VERSION} sha256:".encode("ascii")
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(_member(METADATA), metadata)
        for name, data in members.items():
            archive.writestr(_member(name), data)
        archive.comment = prefix + b"0" * 64
    packed = bytearray(buffer.getvalue())
    packed[-64:] = hashlib.sha256(bytes(packed[:-64])).hexdigest().encode("ascii")
    return bytes(packed)


def _member(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))  # reproducible bytes
    info.compress_type = zipfile.ZIP_STORED
    return info


def write_atomically(path: str, data: bytes) -> None:
    """Temp file in the same folder, fsync, os.replace, fsync the folder."""
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
    counts, pickled objects. Nothing in the file is ever executed."""
    path = os.fspath(path)
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        return loads(data)
    except ModelFormatError as exc:
        raise ModelFormatError(f"{path}: {exc}") from None


_FROM_FILE = object()


def unpickle(data: bytes, tokenizer: Any) -> Any:
    """A pickled model: its file bytes (``dumps(..., tokenizer_apart=True)``) and tokenizer."""
    return loads(data, tokenizer=tokenizer)


def loads(data: bytes, *, tokenizer: Any = _FROM_FILE) -> Any:
    """The model of file bytes (see ``load``); ``tokenizer`` replaces the file's own."""
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
    view = memoryview(data)[:-64]
    if len(data) < _HASH_APART:  # verified first: a thread costs more than hashing a small file
        _check_digest(_sha256(view), expected)
        return _read_model(data, version, tokenizer)
    # A big file's checksum is computed in a thread while the model is read (hashlib and the
    # core both release the GIL: on two cores the load takes the time of the slower of the
    # two). Reading bytes not yet verified is safe, every value being checked as hostile
    # input; nothing is returned before the digest matches, and a mismatch is what gets
    # reported, whatever the reading found.
    digest: list[bytes | BaseException] = []
    hashing = threading.Thread(target=lambda: digest.append(_sha256(view)))
    hashing.start()
    try:
        return _read_model(data, version, tokenizer)
    finally:
        hashing.join()
        _check_digest(digest[0], expected)


_HASH_APART = 1 << 20  # file size (bytes) from which the checksum is computed beside the reading


def _sha256(data: memoryview) -> bytes | BaseException:
    """The SHA-256 digest of ``data``, or the exception computing it raised (in a thread,
    handed to the one that waits for it)."""
    try:
        return hashlib.sha256(data).digest()
    except BaseException as exc:
        return exc


def _check_digest(digest: bytes | BaseException, expected: bytes) -> None:
    if isinstance(digest, BaseException):
        raise digest
    if digest != expected:
        raise ModelFormatError("checksum mismatch: the file is corrupted or was modified") from None


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
    except (StreamNBError, KeyError, TypeError, ValueError, IndexError) as exc:
        raise ModelFormatError(f"invalid {metadata['model']} state: {type(exc).__name__}: {exc}") from None


def _read_archive(data: bytes, version: int) -> tuple[dict[str, Any], SavedArrays]:
    """Metadata and arrays of an archive (its checksum is verified meanwhile); all checked."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
    names = [info.filename for info in infos]
    if len(set(names)) != len(names):
        raise ModelFormatError("duplicate archive members")
    if any(info.compress_type != zipfile.ZIP_STORED for info in infos):
        raise ModelFormatError("compressed archive members are not part of the format")
    if METADATA not in names:
        raise ModelFormatError(f"no {METADATA} member")
    members = {info.filename: _member_span(data, info) for info in infos}
    start, end = members[METADATA]
    metadata = json.loads(data[start:end].decode("ascii"), parse_constant=_reject_constant)
    _check_metadata(metadata, version)
    expected = {METADATA} | {f"arrays/{name}.npy" for name in metadata["arrays"]}
    if set(names) != expected:
        raise ModelFormatError(f"archive members {sorted(set(names) ^ expected)} do not match the metadata")
    arrays = {}
    for name, spec in metadata["arrays"].items():
        dtype, shape, start, end = _read_npy(name, data, *members[f"arrays/{name}.npy"])
        if dtype != spec["dtype"] or list(shape) != spec["shape"]:
            raise ModelFormatError(f"array {name!r} is {dtype} {list(shape)}, the metadata says "
                                   f"{spec['dtype']} {spec['shape']}")
        arrays[name] = (dtype, shape, data, start, end)
    return metadata, SavedArrays(arrays)


_LOCAL_HEADER = b"PK\x03\x04"


def _member_span(data: bytes, info: zipfile.ZipInfo) -> tuple[int, int]:
    """Where a stored member's bytes are in the file: past its local header (30 bytes, then
    the name and the extra field, whose lengths are at offsets 26 and 28)."""
    offset = info.header_offset
    header = data[offset:offset + 30] if offset >= 0 else b""
    if len(header) < 30 or header[:4] != _LOCAL_HEADER:
        raise ModelFormatError(f"member {info.filename!r} has no local header")
    name_length = int.from_bytes(header[26:28], "little")
    if data[offset + 30:offset + 30 + name_length] != info.filename.encode("utf-8"):
        raise ModelFormatError(f"member {info.filename!r}: its local header names another file")
    start = offset + 30 + name_length + int.from_bytes(header[28:30], "little")
    end = start + info.file_size
    if info.compress_size != info.file_size or end > len(data):
        raise ModelFormatError(f"member {info.filename!r} runs past the end of the file")
    return start, end


_NPY_MAGIC = b"\x93NUMPY"
_ITEM_SIZES = {"<f8": 8, "<i8": 8, "<u4": 4, "|u1": 1}


def _read_npy(name: str, data: bytes, start: int, end: int) -> tuple[str, tuple[int, ...], int, int]:
    """(dtype, shape, payload start, payload end) of a ``.npy`` member at ``data[start:end]``,
    read without numpy.

    The format (numpy's NEP 1): magic, version, header length (2 bytes in version 1.0, 4 in
    2.0, little-endian), a Python dict literal {'descr', 'fortran_order', 'shape'}, then the
    raw C-order payload, which must fill the rest exactly.
    """
    if data[start:start + 6] != _NPY_MAGIC or end - start < 10:
        raise ModelFormatError(f"array {name!r} is not a .npy member")
    version = (data[start + 6], data[start + 7])
    if version == (1, 0):
        header_start, length = start + 10, int.from_bytes(data[start + 8:start + 10], "little")
    elif version == (2, 0):
        header_start, length = start + 12, int.from_bytes(data[start + 8:start + 12], "little")
    else:
        raise ModelFormatError(f"unsupported .npy version {version}")
    header_end = min(header_start + length, end)
    try:
        header = ast.literal_eval(data[header_start:header_end].decode("latin-1"))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise ModelFormatError(f"array {name!r} has an unreadable .npy header") from None
    if not (isinstance(header, dict) and set(header) == {"descr", "fortran_order", "shape"}
            and header["descr"] in _ITEM_SIZES and header["fortran_order"] is False
            and isinstance(header["shape"], tuple)
            and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in header["shape"])):
        raise ModelFormatError(f"array {name!r} has a .npy header outside the format: {header!r:.200}")
    size = math.prod(header["shape"]) * _ITEM_SIZES[header["descr"]]
    if end - header_end < size:
        raise ModelFormatError(f"array {name!r} is truncated")
    if end - header_end > size:
        raise ModelFormatError(f"array {name!r} has trailing bytes")
    return header["descr"], header["shape"], header_end, end


class SavedArrays(Mapping[str, "npt.NDArray[Any]"]):
    """The arrays of a model file: numpy arrays on lookup, and ``raw(name)`` for readers
    that need no numpy (the discrete models' store hands the bytes to the core).

    Lookups convert once (a copy: a loaded model owns writable arrays).
    """

    def __init__(self, arrays: dict[str, RawArray]) -> None:
        self._raw = arrays
        self._converted: dict[str, npt.NDArray[Any]] = {}

    def raw(self, name: str) -> RawArray:
        """(dtype, shape, buffer, start, end) of an array: its little-endian bytes are
        ``buffer[start:end]`` (the file's bytes, not copied)."""
        return self._raw[name]

    def under(self, prefix: str) -> "SavedArrays":
        """The arrays named ``prefix + name``, as ``name`` (a part's arrays, still raw)."""
        return SavedArrays({name[len(prefix):]: raw for name, raw in self._raw.items() if name.startswith(prefix)})

    def __getitem__(self, name: str) -> npt.NDArray[Any]:
        if name not in self._converted:
            dtype, shape, buffer, start, end = self._raw[name]
            array = np.frombuffer(buffer, dtype=np.dtype(dtype), count=math.prod(shape), offset=start)
            self._converted[name] = array.reshape(shape).copy()
        return self._converted[name]

    def __contains__(self, name: object) -> bool:
        return name in self._raw

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


def _reject_constant(name: str) -> None:
    raise ModelFormatError(f"non-finite number {name} in the metadata")


def _check_metadata(metadata: object, version: int) -> None:
    """The metadata's shape, and its version the trailer's."""
    if not isinstance(metadata, dict):
        raise ModelFormatError("the metadata is not a JSON object")
    keys = {"format", "version", "streamnb", "model", "tokenizer", "state", "arrays"}
    if set(metadata) != keys:
        raise ModelFormatError(f"metadata keys {sorted(metadata)} differ from {sorted(keys)}")
    if metadata["format"] != FORMAT:
        raise ModelFormatError(f"format {metadata['format']!r} is not {FORMAT!r}")
    if metadata["version"] != version or isinstance(metadata["version"], bool):
        raise ModelFormatError(f"format version {metadata['version']!r} in the metadata, but the file says "
                               f"version {version}")
    if not isinstance(metadata["model"], str):
        raise ModelFormatError(f"model type must be a string, got {describe(metadata['model'])}")
    arrays = metadata["arrays"]
    if not isinstance(arrays, dict):
        raise ModelFormatError("the arrays entry must be an object")
    for name, spec in arrays.items():
        if not re.fullmatch(r"[a-z][a-z0-9_]{0,63}", name):
            raise ModelFormatError(f"bad array name {name!r}")
        if not (isinstance(spec, dict) and set(spec) == {"dtype", "shape"} and spec["dtype"] in ARRAY_DTYPES
                and isinstance(spec["shape"], list)
                and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in spec["shape"])):
            raise ModelFormatError(f"array {name!r}: bad spec {describe(spec)} (dtypes allowed: {ARRAY_DTYPES})")
