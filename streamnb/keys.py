"""Feature names as vocabulary keys: the bytes the core's vocabulary stores for each name.

A str is its UTF-8; any other name (int, float, bool, None, bytes, tuples of those) is 0xFF
and a tagged JSON encoding. The core calls ``_token_key`` and ``_token_from_key`` through
:mod:`streamnb.store`, which re-exports them (src/python/keys.rs).
"""

from __future__ import annotations

import json
import math
from collections.abc import Hashable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
else:
    from ._lazy import numpy as np

from .errors import InvalidTypeError, describe

__all__ = ["_token_key", "_token_from_key"]  # what the core calls (through streamnb.store)


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
    return value


def _token_key(token: object) -> bytes:
    """Vocabulary key of a feature name that is not a str (called by the core)."""
    if isinstance(token, float) and not math.isfinite(token):
        return _OTHER_KEY + repr(token).encode()
    try:
        return _OTHER_KEY + json.dumps(_plain_token(token), separators=(",", ":")).encode()
    except RecursionError:
        raise InvalidTypeError(f"feature names must be str, int, float, bool, None, bytes or tuples of those, "
                               f"nested less deeply than the recursion limit, got {describe(token)}") from None


def _token_from_key(key: bytes) -> Hashable:
    """The feature name of a key made by ``_token_key`` (called by the core)."""
    text = key[1:].decode()
    if text in ("nan", "inf", "-inf"):
        return float(text)
    return _from_plain(json.loads(text))
