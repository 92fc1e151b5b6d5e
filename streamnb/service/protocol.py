"""The spamd protocol: the requests ``streamnb serve`` reads, and the errors it answers.

Protocol (SpamAssassin's spamd/PROTOCOL and spamc's libspamc.c, SPAMC/1.5). A request is
``<METHOD> SPAMC/<version>\\r\\n``, headers ``Name: value\\r\\n`` (names are case-sensitive:
``Content-length``, ``User``, ``Compress``, ``Message-class``, ``Set``, ``Remove``; others
are ignored), an empty line, then the message. The reply is ``SPAMD/1.5 <code> <text>\\r\\n``,
headers, an empty line and a body; the server closes the connection after it.

==============  ============================================================================
method          reply (after ``SPAMD/1.5 0 EX_OK``)
==============  ============================================================================
CHECK           ``Spam: True ; 9.9 / 9.0``, ``X-StreamNB-Status: spam|ham|unsure`` and
                ``X-StreamNB-Log-Odds: -7.812211`` (the log-odds the verdict was drawn from)
SYMBOLS         the same headers, a body ``STREAMNB_SPAM`` (``_HAM``, ``_UNSURE``, and
                ``STREAMNB_UNTRAINED`` while the model lacks min-per-class messages of a class,
                ``STREAMNB_UNSCORED`` when the model could not be used: below; then
                ``STREAMNB_ASK`` when the verdict asks for the message's label)
REPORT          the same headers, a body: verdict, scores, log-odds, the models that answered
                and their counts, strongest clues
REPORT_IFSPAM   as REPORT for spam; an empty body otherwise
PROCESS         the message with X-StreamNB-Status, X-StreamNB-Score, X-Spam-Status and (spam
                only) X-Spam-Flag headers; the body byte for byte
HEADERS         as PROCESS, up to the empty line ending the headers (spamc adds the body)
PING            ``SPAMD/1.5 0 PONG``
SKIP            nothing: the connection is closed
TELL            ``DidSet: local`` (learned, or moved from the other class) or ``DidRemove:
                local`` (forgotten); neither when the model already was that way
==============  ============================================================================

TELL (``spamc -L spam|ham|forget``, needs ``--allow-tell``): ``Set: local`` with
``Message-class: spam|ham`` learns the message as that class (with the model's ledger, a
message learned before under the same class is left alone, under the other class it moves);
``Remove: local`` forgets it. ``remote`` (collaborative reporting) is not offered and ignored.

Errors, as spamd sends them (then the connection is closed): ``76 Bad header line: (...)``
EX_PROTOCOL for a malformed request (unknown method, bad header line or ``Content-length``,
a body shorter than announced, too many or too long header lines, a bad zlib stream);
``65`` EX_DATAERR for a message over ``--max-size`` (spamc's default 500 KB); ``79 Timeout:
(...)`` EX_TIMEOUT when a request takes longer than ``--timeout`` seconds to arrive (slow
clients); ``69 Service Unavailable: (...)`` EX_UNAVAILABLE for TELL without
``--allow-tell``, with ``--read-only``, or on a model without a ledger; ``75`` EX_TEMPFAIL
beyond ``--max-connections`` or when a model stays locked by another writer (TELL); ``74``
EX_IOERR when a lesson cannot be made durable, or the model it is for cannot be read; ``65``
when the model refuses a lesson; ``70`` EX_SOFTWARE for an internal error. Every one is
logged with its reason. A check whose request line and headers were read is never answered
with an error (:mod:`streamnb.service.server`): CHECK, SYMBOLS and REPORT whose message
cannot be read (too big, cut short, too slow, a bad zlib stream) or scored are answered
"unsure" with the ``STREAMNB_UNSCORED`` symbol; PROCESS and HEADERS, which must return the
message, when it could be read. Any user name is served (:mod:`streamnb.service.names`). The server
listens on 127.0.0.1 unless ``--host`` says otherwise.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from ..errors import StreamNBError
from .names import file_stem, shown
from .settings import Limits

log = logging.getLogger("streamnb.serve")

PROTOCOL = "SPAMD/1.5"
# sysexits.h, as spamd answers with them
EX_OK, EX_DATAERR, EX_UNAVAILABLE, EX_SOFTWARE = 0, 65, 69, 70
EX_IOERR, EX_TEMPFAIL, EX_PROTOCOL, EX_TIMEOUT = 74, 75, 76, 79
METHODS = ("CHECK", "SYMBOLS", "REPORT", "REPORT_IFSPAM", "PROCESS", "HEADERS", "PING", "SKIP", "TELL")
DEFAULT_USER = "default"
MODEL_SUFFIX = ".snb"
# The site model's file is DIR/@site.snb: a user's file name never starts with "@" (it is
# escaped, streamnb.service.names), so no user's is it.
SITE_NAME = "@site"


class ProtocolError(Exception):
    """A request the server answers with an error code (and closes).

    Parameters
    ----------
    code
        The spamd error code (sysexits.h): ``EX_PROTOCOL`` (76), ``EX_DATAERR`` (65) ...
    text
        The reply's text after the code, e.g. ``Bad header line: (too many headers)``.
    """

    def __init__(self, code: int, text: str) -> None:
        super().__init__(text)
        self.code = code
        self.text = text

    def reply(self) -> bytes:
        """The reply line, ``SPAMD/1.5 <code> <text>\\r\\n``.

        Returns
        -------
        bytes
            The line in ASCII (any other character as ``?``).
        """
        return f"{PROTOCOL} {self.code} {self.text}\r\n".encode("ascii", "replace")


def failure(error: BaseException) -> str:
    """The reason an error gives, for the log: its message, with its type when that is no
    error of the files or of streamnb (a bug, as a ``ValueError`` from a model's save).

    Examples
    --------
    >>> failure(OSError(28, "No space left on device")), failure(ValueError("'ham' is not in list"))
    ('[Errno 28] No space left on device', "ValueError: 'ham' is not in list")
    """
    return str(error) if isinstance(error, (OSError, StreamNBError)) else f"{type(error).__name__}: {error}"


def protocol_error(reason: str) -> ProtocolError:
    """A malformed request: ``76 Bad header line: (<reason>)``, as spamd words it.

    Parameters
    ----------
    reason
        What is wrong with the request.

    Returns
    -------
    ProtocolError
        The error to raise (code ``EX_PROTOCOL``).
    """
    return ProtocolError(EX_PROTOCOL, f"Bad header line: ({reason})")


def unavailable(reason: str) -> ProtocolError:
    """A request the service will not do: ``69 Service Unavailable: (<reason>)``.

    Parameters
    ----------
    reason
        Why (TELL not allowed, a model without a ledger ...).

    Returns
    -------
    ProtocolError
        The error to raise (code ``EX_UNAVAILABLE``).
    """
    return ProtocolError(EX_UNAVAILABLE, f"Service Unavailable: ({reason})")



# -- requests -----------------------------------------------------------------------------------

@dataclass
class Request:
    """One request: its method, protocol version, headers, user and message.

    Parameters
    ----------
    method
        One of :data:`METHODS`.
    version
        The client's protocol version (``1.5`` for ``SPAMC/1.5``).
    headers
        The request's headers by name (names as sent: they are case-sensitive).
    user
        The checked ``User`` header, :data:`DEFAULT_USER` without one.
    body
        The message, once :func:`read_body` has read it.
    """

    method: str
    version: float
    headers: dict[str, str]
    user: str = DEFAULT_USER
    body: bytes = b""


def _printable(data: bytes, limit: int = 60) -> str:
    text = data.decode("latin-1")
    text = "".join(c if 32 <= ord(c) < 127 else "?" for c in text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


async def _line(reader: asyncio.StreamReader) -> bytes:
    try:
        line = await reader.readline()
    except ValueError:  # StreamReader's limit: a line longer than Limits.max_line
        raise protocol_error("line too long") from None
    if not line.endswith(b"\n"):
        raise protocol_error("EOF during headers" if line else "closed before headers")
    return line.rstrip(b"\r\n")


async def read_head(reader: asyncio.StreamReader, limits: Limits) -> Request:
    """The request line and headers, checked; the body is read by :func:`read_body`.

    Parameters
    ----------
    reader
        The connection.
    limits
        The limits of one request: the number of headers, the message size.

    Returns
    -------
    Request
        The request, without its body.

    Raises
    ------
    ProtocolError
        A malformed request (76: unknown method, bad header, conflicting headers, too many,
        a line too long, a bad ``Content-length`` or ``Compress``).
    """
    first = await _line(reader)
    match = re.fullmatch(rb"([A-Z_]{1,20}) SPAMC/(\d{1,3}(?:\.\d{1,3})?)", first)
    if match is None or match.group(1).decode() not in METHODS:
        raise protocol_error(f"unknown request {_printable(first)!r}")
    request = Request(match.group(1).decode(), float(match.group(2)), {})
    if request.method in ("PING", "SKIP") and request.version < 1.5:
        return request  # before 1.5 these came without headers (spamd's doskip_or_ping)
    for _ in range(limits.max_headers + 1):
        line = await _line(reader)
        if not line:
            break
        name, colon, value = line.partition(b":")
        if not colon or not name or not re.fullmatch(rb"[A-Za-z0-9-]+", name):
            raise protocol_error("header not in 'Name: value' format")
        key = name.decode("ascii")
        # The user's name as sent (UTF-8 from spamc; another byte kept, as a surrogate escape,
        # for its file name: streamnb.service.names); the other headers are ASCII words.
        text = value.strip().decode("utf-8" if key == "User" else "latin-1", "surrogateescape")
        if key in request.headers and request.headers[key] != text:
            raise protocol_error(f"conflicting {key} headers")
        request.headers[key] = text
    else:
        raise protocol_error("too many headers")
    length = request.headers.get("Content-length")
    if length is not None and not re.fullmatch(r"\d{1,18}", length):
        raise protocol_error(f"Content-length {length[:30]!r} is not a number of bytes")
    compress = request.headers.get("Compress")
    if compress is not None and compress != "zlib":
        raise protocol_error(f"Compress {compress[:20]!r} is not supported (only zlib)")
    if "User" in request.headers:
        request.user = check_user(request.headers["User"])
    return request


async def read_body(reader: asyncio.StreamReader, request: Request, limits: Limits) -> bytes:
    """The message: Content-length bytes (or up to EOF without one), decompressed if zlib.

    Parameters
    ----------
    reader
        The connection, after the request's headers.
    request
        The request :func:`read_head` read (its ``Content-length`` and ``Compress``).
    limits
        The limits of one request: the message size, before and after decompression.

    Returns
    -------
    bytes
        The message.

    Raises
    ------
    ProtocolError
        A body shorter than announced, a bad zlib stream (76), or a message over
        ``limits.max_size`` (65: a ``Content-length`` over it is refused before anything is read).
    """
    length = request.headers.get("Content-length")
    if length is not None and int(length) > limits.max_size:
        raise ProtocolError(EX_DATAERR, f"Message too big: ({int(length)} bytes; the limit is {limits.max_size})")
    if length is not None:
        try:
            body = await reader.readexactly(int(length))
        except asyncio.IncompleteReadError as short:
            raise protocol_error(f"Content-Length mismatch: Expected {length} bytes, got {len(short.partial)} bytes") \
                from None
    else:
        parts, size = [], 0
        while True:
            part = await reader.read(65536)
            if not part:
                break
            size += len(part)
            if size > limits.max_size:
                raise ProtocolError(EX_DATAERR, f"Message too big: (more than the limit of {limits.max_size} bytes)")
            parts.append(part)
        body = b"".join(parts)
    if request.headers.get("Compress") == "zlib":
        inflate = zlib.decompressobj()
        try:
            plain = inflate.decompress(body, limits.max_size + 1)  # bounded: no zip bomb
        except zlib.error as error:
            raise protocol_error(f"zlib: {error}") from None
        if len(plain) > limits.max_size:
            raise ProtocolError(EX_DATAERR, f"Message too big: (more than {limits.max_size} bytes decompressed)")
        if not inflate.eof:
            raise protocol_error("zlib: truncated stream")
        body = plain
    return body


def check_user(name: str) -> str:
    """The user a ``User`` header names: any name is served (:mod:`streamnb.service.names`).

    Parameters
    ----------
    name
        The ``User`` header, decoded as :func:`read_head` does.

    Returns
    -------
    str
        The name unchanged; :data:`DEFAULT_USER` for an empty one (as for a request without
        the header).
    """
    return name if name else DEFAULT_USER


def model_path(models: Path, user: str) -> Path:
    """DIR/<the user's file name>.snb (:func:`streamnb.service.names.file_stem`); refuses a file
    that is a symbolic link or resolves outside DIR.

    Parameters
    ----------
    models
        The models folder, resolved (``Settings.models``).
    user
        The user's name.

    Returns
    -------
    Path
        The user's model file (which may not exist yet).

    Raises
    ------
    ProtocolError
        The user's file is a symbolic link or resolves outside ``models`` (76).
    """
    path = models / f"{file_stem(check_user(user))}{MODEL_SUFFIX}"
    if not inside_models(models, path):
        raise protocol_error(f"the model file of user {shown(user)[:70]!r} is a symbolic link or resolves outside "
                             "the models folder")
    return path


def site_model_path(models: Path) -> Path:
    """DIR/@site.snb, the site model's file (:mod:`streamnb.service.site`); no user name maps to it.

    The server refuses to start when it is a symbolic link or resolves outside DIR
    (:func:`inside_models`).

    Parameters
    ----------
    models
        The models folder, resolved (``Settings.models``).

    Returns
    -------
    Path
        The site model's file (which may not exist yet).
    """
    return models / f"{SITE_NAME}{MODEL_SUFFIX}"


def inside_models(models: Path, path: Path) -> bool:
    """Whether path is a file of the models folder itself: not a symbolic link, resolving inside it.

    Parameters
    ----------
    models
        The models folder, resolved.
    path
        A model file's path in it.

    Returns
    -------
    bool
        False for a path elsewhere, a symbolic link, or one that resolves outside ``models``.
    """
    return path.parent == models and not path.is_symlink() and Path(os.path.realpath(path)).parent == models
