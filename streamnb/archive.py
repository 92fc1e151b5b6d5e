"""The bytes of a model file: tagged JSON values, the zip archive and its ``.npy`` members.

:mod:`streamnb.persist` describes the format and its versions, and saves and loads models;
this module writes and reads the container: ``encode_value`` / ``decode_value`` (the
tagged JSON of the metadata), ``_pack`` (the archive and its checksum trailer) and
``_read_archive`` (its members read in place, every value checked, without numpy).
"""

from __future__ import annotations

import ast
import base64
import hashlib
import io
import json
import math
import re
import zipfile
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .errors import InvalidTypeError, ModelFormatError, describe

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from .store import RawArray
else:
    from ._lazy import numpy as np

__all__ = ["FORMAT", "VERSION", "READABLE", "METADATA", "ARRAY_DTYPES", "encode_value", "decode_value", "SavedArrays"]

FORMAT = "streamnb-model"
VERSION = 7
READABLE = (1, 2, 3, 4, 5, 6, 7)  # format versions this streamnb loads
METADATA = "metadata.json"
ARRAY_DTYPES = ("<f8", "<i8", "<u4", "|u1")


# -- tagged JSON values ---------------------------------------------------------------
def encode_value(value: Any) -> Any:
    """A Python value as JSON, tagging what JSON cannot hold as itself; InvalidTypeError for others.

    Tags: {"$tuple": [...]}, {"$map": [[k, v], ...]}, {"$bytes": base64}, {"$float": "nan" |
    "inf" | "-inf"} (feature names can be any hashable, NaN included), and {"$str": [code
    points]} for a str holding a high then a low surrogate, which json.loads would join into
    one character.

    Parameters
    ----------
    value : object
        None, a bool, int, float, str, bytes, or a list, tuple or mapping of these.

    Returns
    -------
    object
        Its JSON form.

    Raises
    ------
    InvalidTypeError
        For a value of any other type.
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
    """Inverse of encode_value; ModelFormatError for a malformed tag.

    Parameters
    ----------
    value : object
        A value read from the metadata's JSON.

    Returns
    -------
    object
        The Python value it encodes.

    Raises
    ------
    ModelFormatError
        For a malformed tag.
    """
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



# -- the archive ------------------------------------------------------------------------
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

    Parameters
    ----------
    arrays : dict
        Name -> (dtype, shape, buffer, start, end) of each array of the file.
    """

    def __init__(self, arrays: dict[str, RawArray]) -> None:
        self._raw = arrays
        self._converted: dict[str, npt.NDArray[Any]] = {}

    def raw(self, name: str) -> RawArray:
        """(dtype, shape, buffer, start, end) of an array: its little-endian bytes are
        ``buffer[start:end]`` (the file's bytes, not copied).

        Parameters
        ----------
        name : str
            An array's name.

        Returns
        -------
        tuple
            (dtype, shape, buffer, start, end).
        """
        return self._raw[name]

    def under(self, prefix: str) -> "SavedArrays":
        """The arrays named ``prefix + name``, as ``name`` (a part's arrays, still raw).

        Parameters
        ----------
        prefix : str
            The start of the names of a part's arrays.

        Returns
        -------
        SavedArrays
            Those arrays, under their names without the prefix.
        """
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
