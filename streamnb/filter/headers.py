"""A verdict written into a message: its headers rewritten, its body byte for byte.

``streamnb classify --tag`` (``tag_message``) and the service's PROCESS and HEADERS replies
(``streamnb.service.serve``) both rewrite a message's headers with ``rewrite_headers``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .decision import Verdict


def tag_message(raw: bytes, verdict: Verdict) -> bytes:
    """The message with X-StreamNB-Status and X-StreamNB-Score headers; the body byte for byte.

    Earlier X-StreamNB-* headers are replaced, so a message can be classified again.

    Parameters
    ----------
    raw : bytes
        The message.
    verdict : Verdict
        The filter's verdict for it.

    Returns
    -------
    bytes
        The message with the verdict's headers.
    """
    return rewrite_headers(raw, [("X-StreamNB-Status", verdict.label), ("X-StreamNB-Score", f"{verdict.score:.6f}")],
                           remove=("X-StreamNB-Status", "X-StreamNB-Score"))


def rewrite_headers(raw: bytes, headers: Sequence[tuple[str, str]], remove: Sequence[str] = ()) -> bytes:
    """The message with the headers named in ``remove`` dropped and ``headers`` added after
    the others, in the message's own line ending; the body byte for byte.

    Parameters
    ----------
    raw : bytes
        The message.
    headers : sequence of (str, str)
        The headers to add, name and value.
    remove : sequence of str
        The names of the headers to drop (any case).

    Returns
    -------
    bytes
        The message rewritten.
    """
    newline = b"\r\n" if b"\r\n" in raw[:4096] else b"\n"
    end = raw.find(newline + newline)
    head, rest = (raw, b"") if end < 0 else (raw[: end + len(newline)], raw[end + len(newline):])
    dropped = tuple(name.lower().encode("ascii") + b":" for name in remove)
    kept, skipping = [], False
    for line in head.splitlines(keepends=True):
        if line[:1] in (b" ", b"\t") and skipping:
            continue  # continuation of a replaced header
        skipping = bool(dropped) and line.lower().startswith(dropped)
        if not skipping:
            kept.append(line)
    if kept and not kept[-1].endswith(b"\n"):
        kept[-1] += newline
    added = b"".join(name.encode("ascii") + b": " + value.encode("utf-8") + newline for name, value in headers)
    return b"".join(kept) + added + rest  # rest is empty for a message of headers only
