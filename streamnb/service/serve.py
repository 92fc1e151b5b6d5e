"""``streamnb serve``: the spam filter as a service that speaks SpamAssassin's spamd protocol.

Debian's ``spamc`` (and any other spamd client) works unchanged: a mail server pipes each
message through ``spamc``, which sends it here over TCP and prints what comes back. One
Python process serves every message, so a verdict costs a few milliseconds instead of the
interpreter start, imports and model load that ``streamnb classify`` pays per message.

Protocol (SpamAssassin's spamd/PROTOCOL and spamc's libspamc.c, SPAMC/1.5). A request is
``<METHOD> SPAMC/<version>\\r\\n``, headers ``Name: value\\r\\n`` (names are case-sensitive:
``Content-length``, ``User``, ``Compress``, ``Message-class``, ``Set``, ``Remove``; others
are ignored), an empty line, then the message. The reply is ``SPAMD/1.5 <code> <text>\\r\\n``,
headers, an empty line and a body; the server closes the connection after it.

==============  ============================================================================
method          reply (after ``SPAMD/1.5 0 EX_OK``)
==============  ============================================================================
CHECK           ``Spam: True ; 9.9 / 9.0`` and ``X-StreamNB-Status: spam|ham|unsure``
SYMBOLS         the same headers, a body ``STREAMNB_SPAM`` (``_HAM``, ``_UNSURE``, and
                ``STREAMNB_UNTRAINED`` while the model lacks min-per-class messages of a class,
                ``STREAMNB_UNSCORED`` when the model could not be used: below)
REPORT          the same headers, a body: verdict, scores, model counts, strongest clues
REPORT_IFSPAM   as REPORT for spam; an empty body otherwise
PROCESS         the message with X-StreamNB-Status, X-StreamNB-Score, X-Spam-Status and (spam
                only) X-Spam-Flag headers; the body byte for byte
HEADERS         as PROCESS, up to the empty line ending the headers (spamc adds the body)
PING            ``SPAMD/1.5 0 PONG``
SKIP            nothing: the connection is closed
TELL            ``DidSet: local`` (learned, or moved from the other class) or ``DidRemove:
                local`` (forgotten); neither when the model already was that way
==============  ============================================================================

Scores: the decision rule's score in [0, 1] (the command's default, LogOddsRule, maps the
log-odds onto it: spam from 0.9; with ``--rule chi2``, the chi-square indicator I) times 10,
cut (not rounded) to one decimal, over the spam cutoff times 10: ``9.9 / 9.0``. ``Spam:
True`` exactly when the verdict is spam, so spamc's exit code says spam (1) or not (0);
"unsure" (the score between the cutoffs, or a model not yet trained on ``--min-per-class``
messages of each class) cannot travel in that exit code and is carried by the
``X-StreamNB-Status`` header and the ``STREAMNB_UNSURE`` symbol.

TELL (``spamc -L spam|ham|forget``, needs ``--allow-tell``): ``Set: local`` with
``Message-class: spam|ham`` learns the message as that class (with the model's ledger, a
message learned before under the same class is left alone, under the other class it moves);
``Remove: local`` forgets it. ``remote`` (collaborative reporting) is not offered and ignored.

Users: the ``User`` header picks ``DIR/<user>.snb`` (``default`` without one). A user name is
1-64 characters of letters, digits and ``_ . @ + = -``, not starting with ``.`` or ``-``; no
other name is accepted, so no path ever leaves DIR (symbolic links are refused too). A
user's model file is made at the first TELL, with the default filter of ``streamnb train``
plus a ledger; before that, messages are checked against an empty model ("unsure") and
nothing is written. At most ``--max-models`` models stay loaded (least recently used out).

A check never passes a message as clean because something failed: spamc, given an error
reply, passes the message on unmarked and exits 0 as for ham. When the user's model cannot
be used (unreadable, damaged, a file system gone bad), the reply is EX_OK with the verdict
"unsure" (score halfway between the cutoffs, ``X-StreamNB-Status: unsure``, the
``STREAMNB_UNSURE`` and ``STREAMNB_UNSCORED`` symbols) and the cause goes to the log. A
check never waits for another writer's lock: while one holds it, the files are read without
it (safe: they are replaced whole, and a journal names the file it follows); when they
cannot be read, the model last read is used.

Durability (see :mod:`streamnb.journal`): one writer per model (the model file's lock, shared
with ``streamnb learn``); each TELL is appended to ``DIR/<user>.snb.journal`` and fsynced
before the reply (TELLs arriving together share one fsync), and only then acknowledged; a
lesson that cannot be made durable (a full disk, an fsync that fails) is answered 74 and not
applied, and the model is saved before anything more is appended to that journal. The journal
is folded into the model file by an atomic save every ``--snapshot-every`` lessons or
``--snapshot-seconds``, once it holds 64 MiB, when a model leaves the cache, and on
SIGTERM/SIGINT (then the server exits; with exit code 3 if a fold failed, the lessons staying
in their journals). At start every journal left by a crash is folded. After a clean stop
``DIR/<user>.snb`` loads with ``streamnb.load`` and holds every acknowledged lesson. A file
changed by another writer (``streamnb learn`` on it) is noticed and reloaded; a model file
deleted, replaced or damaged by anything else while lessons wait in the journal is made good
(:class:`UserModel`): nothing acknowledged is dropped, and a damaged file is set aside, never
read or deleted.

The models folder must exist (it is never made) and be writable: the server makes, fsyncs
and removes a file in it at start, and refuses to start if it cannot. ``--read-only`` serves
a folder as it is instead, writing nothing (the journals left in it are applied in memory)
and refusing TELL with 69.

Errors, as spamd sends them (then the connection is closed): ``76 Bad header line: (...)``
EX_PROTOCOL for a malformed request (unknown method, bad header line or ``Content-length``,
a body shorter than announced, an invalid user name, too many or too long header lines, a
bad zlib stream); ``65`` EX_DATAERR for a message over ``--max-size`` (spamc's default
500 KB); ``79 Timeout: (...)`` EX_TIMEOUT when a request takes longer than ``--timeout``
seconds to arrive (slow clients); ``69 Service Unavailable: (...)`` EX_UNAVAILABLE for TELL
without ``--allow-tell``, with ``--read-only``, or on a model without a ledger; ``75``
EX_TEMPFAIL beyond ``--max-connections`` or when a model stays locked by another writer (TELL);
``74`` EX_IOERR when a lesson cannot be made durable, or the model it is for cannot be read;
``65`` when the model refuses a lesson; ``70`` EX_SOFTWARE for an internal error (logged).
A check whose request was read is never answered with an error (see above). The server
listens on 127.0.0.1 unless ``--host`` says otherwise.
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import logging
import math
import os
import re
import signal
import socket
import tempfile
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import journal
from ..filter.decision import SPAM, SpamFilter, Verdict
from ..errors import ModelFormatError, StreamNBError
from ..filter.headers import rewrite_headers
from .journal import FORGET, LEARN, Lesson, ModelLockedError
from .settings import Limits, Settings

log = logging.getLogger("streamnb.serve")

PROTOCOL = "SPAMD/1.5"
# sysexits.h, as spamd answers with them
EX_OK, EX_DATAERR, EX_UNAVAILABLE, EX_SOFTWARE = 0, 65, 69, 70
EX_IOERR, EX_TEMPFAIL, EX_PROTOCOL, EX_TIMEOUT = 74, 75, 76, 79
METHODS = ("CHECK", "SYMBOLS", "REPORT", "REPORT_IFSPAM", "PROCESS", "HEADERS", "PING", "SKIP", "TELL")
DEFAULT_USER = "default"
MODEL_SUFFIX = ".snb"
USER_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@+=-]{0,63}")
# A journal holds whole messages: fold it once it is this big, whatever --snapshot-every says,
# so that a burst of large messages neither fills the disk nor makes the replay at start slow.
JOURNAL_FOLD_BYTES = 64 << 20


class ServiceError(StreamNBError):
    """The service cannot start as asked (the models folder, the address to listen on)."""


class ProtocolError(Exception):
    """A request the server answers with an error code (and closes)."""

    def __init__(self, code: int, text: str) -> None:
        super().__init__(text)
        self.code = code
        self.text = text

    def reply(self) -> bytes:
        return f"{PROTOCOL} {self.code} {self.text}\r\n".encode("ascii", "replace")


def protocol_error(reason: str) -> ProtocolError:
    return ProtocolError(EX_PROTOCOL, f"Bad header line: ({reason})")


def unavailable(reason: str) -> ProtocolError:
    return ProtocolError(EX_UNAVAILABLE, f"Service Unavailable: ({reason})")


class _Evicted(Exception):
    """The user's model left the cache while a TELL waited: look it up again."""


# -- requests -----------------------------------------------------------------------------------

@dataclass
class Request:
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
    """The request line and headers, checked; the body is read by :func:`read_body`."""
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
        key, text = name.decode("ascii"), value.strip().decode("latin-1")
        if key in request.headers and request.headers[key] != text:
            raise protocol_error(f"conflicting {key} headers")
        request.headers[key] = text
    else:
        raise protocol_error("too many headers")
    length = request.headers.get("Content-length")
    if length is not None and not re.fullmatch(r"\d{1,18}", length):
        raise protocol_error(f"Content-length {length[:30]!r} is not a number of bytes")
    if length is not None and int(length) > limits.max_size:
        raise ProtocolError(EX_DATAERR, f"Message too big: ({int(length)} bytes; the limit is {limits.max_size})")
    compress = request.headers.get("Compress")
    if compress is not None and compress != "zlib":
        raise protocol_error(f"Compress {compress[:20]!r} is not supported (only zlib)")
    if "User" in request.headers:
        request.user = check_user(request.headers["User"])
    return request


async def read_body(reader: asyncio.StreamReader, request: Request, limits: Limits) -> bytes:
    """The message: Content-length bytes (or up to EOF without one), decompressed if zlib."""
    length = request.headers.get("Content-length")
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
    """A user name that maps to a file in DIR and nowhere else; ProtocolError otherwise."""
    if not USER_NAME.fullmatch(name):
        raise protocol_error(f"User {name[:70]!r} is not a valid user name: 1-64 letters, digits or _.@+=- "
                             "not starting with . or -")
    return name


def model_path(models: Path, user: str) -> Path:
    """DIR/<user>.snb for a checked user name; refuses anything that would resolve outside DIR."""
    path = models / f"{check_user(user)}{MODEL_SUFFIX}"
    if path.parent != models or path.is_symlink() or Path(os.path.realpath(path)).parent != models:
        raise protocol_error(f"User {user!r} does not name a model file inside the models folder")
    return path


# -- replies --------------------------------------------------------------------------------------

def score_fields(verdict: Verdict, spam_cutoff: float) -> tuple[str, str, str]:
    """("True"/"False", score, threshold) as spamd writes them: the rule's score and the spam cutoff, times 10."""
    # Cut, not rounded: a score shown as 9.0 is never below a 9.0 threshold.
    score = math.floor(verdict.score * 100.0) / 10.0 if math.isfinite(verdict.score) else 0.0
    return ("True" if verdict.label == SPAM else "False"), f"{score:.1f}", f"{10.0 * spam_cutoff:.1f}"


def symbols(verdict: Verdict, ready: bool, scored: bool = True) -> list[str]:
    names = [f"STREAMNB_{verdict.label.upper()}"]
    if not scored:
        names.append("STREAMNB_UNSCORED")
    elif not ready:
        names.append("STREAMNB_UNTRAINED")
    return names


def unscored_verdict(rule: Any) -> Verdict:
    """What a check answers when the user's model cannot score the message: unsure, halfway
    between the rule's cutoffs, with nothing known about the message."""
    return Verdict("unsure", (rule.ham_cutoff + rule.spam_cutoff) / 2, math.nan, [], math.nan)


def report_text(verdict: Verdict, user: str, counts: dict, settings: Settings, scored: bool = True) -> str:
    rule = settings.rule
    if not scored:
        return (f"streamnb verdict for user {user}: unsure\r\n  not scored: the model of user {user} could not be "
                "used (the service's log says why)\r\n")
    lines = [f"streamnb verdict for user {user}: {verdict.label}",
             f"  score {10 * verdict.score:.2f} of 10 (rule {type(rule).__name__}: spam from "
             f"{10 * rule.spam_cutoff:.1f}, ham below {10 * rule.ham_cutoff:.1f})",
             f"  P(spam|x) = {verdict.probability:.6f} (naive Bayes posterior)",
             f"  model: {counts.get('spam', 0):g} spam and {counts.get('ham', 0):g} ham learned"
             + (f" (unsure until {settings.min_per_class:g} of each)"
                if min(counts.get("spam", 0), counts.get("ham", 0)) < settings.min_per_class else "")]
    if verdict.evidence:
        lines += ["", "Strongest clues (weight: > 0 toward spam, < 0 toward ham):"]
        lines += [f"  {clue.weight:+8.3f}  {clue.feature}" for clue in verdict.evidence]
    return "\r\n".join(lines) + "\r\n"


def rewrite_message(raw: bytes, verdict: Verdict, score: str, threshold: str, tests: list[str]) -> bytes:
    """The message with streamnb's and spamd-compatible X-Spam-* headers (earlier ones replaced)."""
    spam = verdict.label == SPAM
    headers = [("X-StreamNB-Status", verdict.label), ("X-StreamNB-Score", f"{verdict.score:.6f}"),
               ("X-Spam-Status", f"{'Yes' if spam else 'No'}, score={score} required={threshold} "
                                 f"tests={','.join(tests)}")]
    if spam:
        headers.append(("X-Spam-Flag", "YES"))
    return rewrite_headers(raw, headers, remove=("X-StreamNB-Status", "X-StreamNB-Score", "X-Spam-Status",
                                                  "X-Spam-Flag"))


def check_reply(method: str, verdict: Verdict, ready: bool, raw: bytes, user: str, counts: dict,
                settings: Settings, scored: bool = True) -> bytes:
    flag, score, threshold = score_fields(verdict, settings.spam_cutoff)
    tests = symbols(verdict, ready, scored)
    head = f"{PROTOCOL} {EX_OK} EX_OK\r\n"
    extra = f"Spam: {flag} ; {score} / {threshold}\r\nX-StreamNB-Status: {verdict.label}\r\n"
    if method == "CHECK":
        return (head + extra + "\r\n").encode("ascii")
    if method == "SYMBOLS":
        body = ",".join(tests).encode("ascii")
    elif method == "REPORT" or (method == "REPORT_IFSPAM" and verdict.label == SPAM):
        body = report_text(verdict, user, counts, settings, scored).encode("utf-8", "replace")
    elif method == "REPORT_IFSPAM":
        body = b""
    else:
        body = rewrite_message(raw, verdict, score, threshold, tests)
        if method == "HEADERS":
            body = _headers_only(body)
    return (head + f"Content-length: {len(body)}\r\n" + extra + "\r\n").encode("ascii") + body


def _headers_only(message: bytes) -> bytes:
    """The message up to and including the empty line after its headers (spamd's HEADERS)."""
    ends = [i for i in (message.find(b"\r\n\r\n"), message.find(b"\n\n")) if i >= 0]
    if not ends:
        return message
    end = min(ends)
    return message[: end + (4 if message[end:end + 4] == b"\r\n\r\n" else 2)]


# -- one user's model -----------------------------------------------------------------------------

def read_model(path: Path) -> tuple[Any, str, tuple[int, int, int]]:
    """A model file read once: (model, SHA-256 of its bytes, its stamp as ``journal.stamp`` gives it).

    One read gives the three together even while another writer replaces the file.
    """
    from ..persist import loads

    with open(path, "rb") as handle:
        data = handle.read()
        status = os.fstat(handle.fileno())
    try:
        model = loads(data)
    except ModelFormatError as error:
        raise ModelFormatError(f"{path}: {error}") from None
    return model, hashlib.sha256(data).hexdigest(), (status.st_ino, status.st_size, status.st_mtime_ns)


class UserModel:
    """One user's model in memory: the only writer of DIR/<user>.snb in this process.

    ``lock`` (asyncio) serialises everything done with the model; blocking file work (the
    write lock shared with other processes, appends and fsyncs, saves) runs in a thread
    while the caller holds it. The model in memory is the model file (SHA-256 ``digest``)
    plus the ``pending`` lessons of the journal this process writes, whose base is that
    digest: lessons are journaled (and fsynced) first, then applied.

    Who changed the files is told by their stamps. A streamnb writer (``streamnb learn``,
    another server) folds the journal when it replaces the model file, so both change, and
    the files are read again. When only one of them changed while lessons are pending,
    something else did it (``cp``, ``rm``, a restore): the acknowledged lessons are put
    back (:meth:`_restore_sync`), never dropped.
    """

    def __init__(self, user: str, path: Path, settings: Settings) -> None:
        self.user = user
        self.path = path
        self.journal_path = journal.journal_path(path)
        self.settings = settings
        self.lock = asyncio.Lock()
        self.model: Any = None
        self._filter: SpamFilter | None = None
        self.digest: str | None = None  # SHA-256 of the model file the memory state starts from
        self.file_stamp: tuple | None = None
        self.journal_fd: int | None = None
        self.journal_stamp: tuple | None = None
        self.pending = 0  # lessons in the journal, not in the model file
        self.oldest_pending = 0.0
        self.owner = False  # the memory state was loaded under the write lock: the journal is ours to append to
        # An append or a save failed: the journal may end in a record that was never
        # acknowledged (torn, or not known to be on disk), so the model is saved before
        # another lesson is journaled; ``unconfirmed`` is the digest of a save that raised
        # and may have replaced the file all the same.
        self.must_save = False
        self.unconfirmed: str | None = None
        self.queue: list[tuple[Lesson, asyncio.Future]] = []
        self.committing = False
        self._committer: asyncio.Future | None = None
        self.closed = False

    # -- blocking parts (run in a thread, with self.lock held) ----------------------------------
    def _held(self, timeout: float | None = None) -> Any:
        return journal.write_lock(self.path, self.settings.limits.lock_timeout if timeout is None else timeout)

    def _load_sync(self, create: bool, wait: bool = True) -> bool:
        """Load the file under the write lock (making it if asked), fold any journal left
        behind. False: no model file. ``wait=False``: ModelLockedError at once if another
        writer holds the lock (a check then reads without it: :meth:`_read_sync`)."""
        with self._held(None if wait else 0.0):
            if self._outside_change():
                self._restore_sync()
                return True
            if not self.path.exists():
                if not create:
                    return False
                self.settings.new_model().save(self.path)
                log.info("user %s: new model %s", self.user, self.path)
            model, digest, stamp = read_model(self.path)
            try:
                lessons = journal.pending_lessons(self.path, digest)
            except journal.JournalError as error:  # kept for a person to look at, never deleted
                log.error("user %s: %s; set aside as %s", self.user, error, journal.set_aside(self.journal_path))
                lessons = []
            self._close_journal()
            self.model, self.digest, self.file_stamp = model, digest, stamp
            self.journal_stamp, self.pending, self.owner = None, 0, True
            self.must_save, self.unconfirmed = False, None
            if lessons:  # left by a crash or by another server: fold now, start with no journal
                journal.replay(model, lessons, f"user {self.user}")
                self._save_sync()
                log.info("user %s: folded %d journaled lessons into %s", self.user, len(lessons), self.path)
            else:
                journal.remove_journal(self.path)  # none, or one already folded
            return True

    def _read_sync(self) -> bool:
        """The model file and its journal's lessons, read without the write lock and written
        nowhere (read-only serving; a check while another writer holds the lock). False: no
        model file. Safe without the lock: files are replaced whole, a journal names the file
        it follows, and a torn last record is dropped."""
        try:
            model, digest, stamp = read_model(self.path)
        except FileNotFoundError:
            return False
        journal.replay(model, journal.pending_lessons(self.path, digest), f"user {self.user}")
        self._close_journal()
        self.model, self.digest, self.file_stamp = model, digest, stamp
        self.journal_stamp, self.pending, self.owner = journal.stamp(self.journal_path), 0, False
        return True

    def _changed_on_disk(self) -> bool:
        """Has another writer replaced the model file or written to the journal since we last did?"""
        return (journal.stamp(self.path) != self.file_stamp
                or journal.stamp(self.journal_path) != self.journal_stamp)

    def _outside_change(self) -> bool:
        """Did something other than a streamnb writer change the model file or the journal
        while acknowledged lessons wait in it? (Exactly one of the two changed; call under
        the write lock.)"""
        if not (self.owner and self.pending and self.model is not None):
            return False
        file_same = journal.stamp(self.path) == self.file_stamp
        journal_same = journal.stamp(self.journal_path) == self.journal_stamp
        return file_same != journal_same

    def _restore_sync(self) -> None:
        """Put the acknowledged lessons back on disk after an outside change (under the write lock).

        - the journal changed or vanished, the model file did not: the model in memory (the
          file plus every acknowledged lesson) is saved;
        - the model file was deleted, or cannot be read (damaged, half copied: it is set
          aside as ``<file>.damaged-<time>``, never deleted): the model in memory is saved;
        - the model file was replaced by another model (a restore): the journal's lessons
          are applied to it, and it is saved;
        - the file is the one a save of ours wrote before it raised: it is saved again.
        """
        if journal.stamp(self.journal_path) == self.journal_stamp:  # the model file changed
            try:
                model, digest, _ = read_model(self.path)
            except FileNotFoundError:
                log.warning("user %s: %s was deleted under the service; written back with its %d acknowledged "
                            "lessons", self.user, self.path, self.pending)
            except (OSError, StreamNBError) as error:
                aside = journal.set_aside(self.path)
                log.error("user %s: %s cannot be read (%s); set aside as %s and written back from memory with "
                          "its %d acknowledged lessons", self.user, self.path, error, aside, self.pending)
            else:
                if digest != self.unconfirmed:
                    # Our journal (its base is self.digest): its first `pending` records are the
                    # lessons told; a record after them was never acknowledged (an append failed).
                    lessons = journal.pending_lessons(self.path, self.digest or "")[: self.pending]
                    journal.replay(model, lessons, f"user {self.user}")
                    self.model = model
                    log.warning("user %s: %s was replaced under the service; its %d acknowledged lessons are "
                                "applied to the new file", self.user, self.path, len(lessons))
        else:
            log.warning("user %s: %s was changed or deleted under the service; the model is saved with its %d "
                        "acknowledged lessons", self.user, self.journal_path, self.pending)
        self._save_sync()

    def _save_sync(self) -> None:
        """Write the model in memory to its file, then drop the journal (under the write lock)."""
        from ..persist import dumps, write_atomically

        data = dumps(self.model)
        digest = hashlib.sha256(data).hexdigest()
        self._close_journal()
        self.must_save, self.unconfirmed = True, digest  # until the journal is gone
        write_atomically(os.fspath(self.path), data)
        self.digest, self.file_stamp = digest, journal.stamp(self.path)
        # A crash here leaves a journal whose base is the old file: it is known as folded.
        journal.remove_journal(self.path)
        self.journal_stamp, self.pending = None, 0
        self.must_save, self.unconfirmed = False, None

    def _append_sync(self, lessons: list[Lesson]) -> bool:
        """Journal the lessons durably; False (nothing written) if another writer changed the files."""
        with self._held():
            if self._outside_change():
                self._restore_sync()
            elif self._changed_on_disk():
                return False
            if self.must_save:
                self._save_sync()
            if self.journal_fd is None:
                assert self.digest is not None  # set with the model this journal follows
                self.journal_fd = journal.create_journal(self.path, self.digest)
            try:
                journal.append_lessons(self.journal_fd, lessons)
            except OSError:
                # Not acknowledged, but perhaps (partly) written: nothing more goes after it.
                self.must_save = True
                self._close_journal()
                raise
            finally:
                self.journal_stamp = journal.stamp(self.journal_path)
            return True

    def _fold_sync(self) -> bool:
        """Save the model with its lessons, then drop the journal; False if the files changed under us."""
        with self._held():
            if self._outside_change():
                self._restore_sync()
                return True
            if self._changed_on_disk():
                return False
            self._save_sync()
            return True

    def _close_journal(self) -> None:
        if self.journal_fd is not None:
            os.close(self.journal_fd)
            self.journal_fd = None

    # -- the model, in the event loop -------------------------------------------------------------
    def spam_filter(self) -> SpamFilter:
        """The filter over the model in memory (made again when the model object changes)."""
        if self._filter is None or self._filter.model is not self.model:
            self._filter = SpamFilter(self.model, self.settings.rule_of(self.model),
                                      min_per_class=self.settings.min_per_class)
        return self._filter

    async def _reload(self, create: bool) -> bool:
        if self.settings.read_only:
            return await asyncio.to_thread(self._read_sync)
        return await asyncio.to_thread(self._load_sync, create)

    async def current(self, create: bool) -> bool:
        """Make sure the model is loaded and is what the files say (call with self.lock held);
        a lesson also needs a state loaded under the write lock."""
        if self.model is None or self._changed_on_disk() or (create and not self.owner):
            return await self._reload(create)
        return True

    async def classify(self, raw: bytes, explain: bool) -> tuple[Verdict, bool, dict] | None:
        """(verdict, ready, class counts), or None when the user has no model file yet.

        A check never waits for another writer: while one holds the write lock (or none can
        be taken, on a file system gone read-only), the files are read without it. When they
        cannot be read at all, the model last read is used (logged); with none, the error is
        raised (the caller answers "unsure": :meth:`Server._unscored`).
        """
        async with self.lock:
            try:
                if self.settings.read_only or not (self.model is None or self._changed_on_disk()):
                    found = await self.current(create=False)
                else:
                    try:
                        found = await asyncio.to_thread(self._load_sync, False, False)
                    except (ModelLockedError, journal.LockFileError):
                        found = await asyncio.to_thread(self._read_sync)
            except (OSError, StreamNBError) as error:
                if self.model is None:
                    raise
                log.warning("user %s: its model files cannot be read now (%s); scoring with the model last read",
                            self.user, error)
                found = True
            if not found:
                return None
            spam_filter = self.spam_filter()
            spam_filter.evidence_k = 10 if explain else 0
            verdict = spam_filter.classify(raw, explain=explain)
            return verdict, spam_filter.ready, self.model.class_counts

    async def tell(self, lesson: Lesson) -> bool:
        """Journal the lesson (fsynced), apply it, and say whether it changed the model."""
        future = asyncio.get_running_loop().create_future()
        self.queue.append((lesson, future))
        if not self.committing:
            self.committing = True
            self._committer = asyncio.ensure_future(self._commit())  # kept: a task without a reference may vanish
        return await future

    async def _commit(self) -> None:
        """Group commit: every lesson queued meanwhile shares one lock, append and fsync."""
        try:
            while self.queue:
                batch, self.queue = self.queue, []
                try:
                    await self._commit_batch(batch)
                except BaseException as error:  # nothing of the batch is acknowledged
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(error if isinstance(error, Exception) else _Evicted())
                    if not isinstance(error, Exception):
                        raise
        finally:
            self.committing = False

    async def _commit_batch(self, batch: list[tuple[Lesson, asyncio.Future]]) -> None:
        async with self.lock:
            if self.closed:
                raise _Evicted()
            await self.current(create=True)
            if getattr(self.model, "ledger", None) is None:
                raise unavailable(f"the model of user {self.user} has no ledger, which TELL needs to learn a "
                                  "message once (train it with --ledger)")
            lessons = [lesson for lesson, _ in batch]
            while not await asyncio.to_thread(self._append_sync, lessons):
                await self._reload(create=True)  # another writer changed the files: start from them
            if not self.pending:
                self.oldest_pending = time.monotonic()
            self.pending += len(lessons)
            for lesson, future in batch:
                try:
                    changed = journal.apply_lesson(self.model, lesson)
                except (StreamNBError, ValueError, TypeError) as error:
                    future.set_exception(error)  # refused now, and again (the same way) on replay
                else:
                    future.set_result(changed)
            journal_bytes = self.journal_stamp[1] if self.journal_stamp else 0
            if self.pending >= self.settings.snapshot_every or journal_bytes >= JOURNAL_FOLD_BYTES:
                await self._fold_locked()

    async def _fold_locked(self) -> None:
        if not self.pending or self.model is None:
            return
        try:
            if not await asyncio.to_thread(self._fold_sync):
                await self._reload(create=True)  # the other writer folded our journal already
        except (OSError, ModelLockedError, StreamNBError) as error:
            log.error("user %s: could not fold %d lessons into %s (they stay in the journal): %s",
                      self.user, self.pending, self.path, error)

    async def fold(self) -> None:
        async with self.lock:
            await self._fold_locked()

    async def close(self) -> int:
        """Fold and let go (eviction, shutdown); a TELL still queued is sent to a fresh entry.
        Returns the lessons left in the journal (not folded: they are folded at the next load)."""
        async with self.lock:
            self.closed = True
            await self._fold_locked()
            self._close_journal()
            return self.pending


class ModelCache:
    """Loaded user models, least recently used out beyond ``max_models``."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.entries: OrderedDict[str, UserModel] = OrderedDict()
        self.closing: set[asyncio.Task] = set()

    def get(self, user: str) -> UserModel:
        entry = self.entries.get(user)
        if entry is not None:
            self.entries.move_to_end(user)
            return entry
        entry = self.entries[user] = UserModel(user, model_path(self.settings.models, user), self.settings)
        while len(self.entries) > self.settings.max_models:
            _, old = self.entries.popitem(last=False)
            task = asyncio.ensure_future(old.close())
            self.closing.add(task)
            task.add_done_callback(self.closing.discard)
        return entry

    def has_model(self, user: str) -> bool:
        return user in self.entries or model_path(self.settings.models, user).exists()

    async def close(self) -> int:
        """Fold and close every model; returns the lessons left in journals (folds that failed)."""
        if self.closing:
            await asyncio.gather(*self.closing, return_exceptions=True)  # evicted: folded again when next loaded
        entries, self.entries = list(self.entries.values()), OrderedDict()
        return sum([await entry.close() for entry in entries])


# -- the server ---------------------------------------------------------------------------------------

def check_models_folder(models: Path, read_only: bool) -> None:
    """A models folder the service can use, or ServiceError saying what is wrong with it.

    A folder that cannot be written is refused unless ``read_only``: the service would run,
    but could acknowledge no lesson and fold no journal (and every first look at a model
    takes its lock, a file in the folder). The test is a real write (a file made, fsynced
    and removed), so a read-only mount, a full disk or a missing permission are all found.
    """
    if not models.exists():
        raise ServiceError(f"the models folder {str(models)!r} does not exist (make it first)")
    if not models.is_dir():
        raise ServiceError(f"the models folder {str(models)!r} is a file, not a folder")
    try:
        if read_only:
            os.listdir(models)
            return
        descriptor, probe = tempfile.mkstemp(dir=models, prefix=".streamnb-write-test-")
        try:
            os.write(descriptor, b"x")
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
            os.unlink(probe)
    except OSError as error:
        raise ServiceError(f"the models folder {str(models)!r} cannot be {'read' if read_only else 'written'} "
                           f"({error.strerror or error})" + ("" if read_only else
                           "; make it writable, or serve its models as they are with --read-only (TELL refused)"))\
            from None


def listen_error(host: str, port: int, error: OSError) -> ServiceError:
    """What went wrong when binding host:port, in words that name them."""
    # asyncio words a failed bind at length ("error while attempting to bind on address ..."): the errno says it
    reason = os.strerror(error.errno) if error.errno and not isinstance(error, socket.gaierror) else \
        (error.strerror or str(error))
    if isinstance(error, socket.gaierror):  # its errno is getaddrinfo's, not errno's
        hint = " (not an address, nor a host name this machine knows)"
    else:
        hint = {errno.EADDRINUSE: " (another spamd or streamnb serve?)",
                errno.EACCES: " (ports below 1024 need root or CAP_NET_BIND_SERVICE)" if port < 1024 else "",
                errno.EADDRNOTAVAIL: " (not an address of this machine)"}.get(error.errno or 0, "")
    return ServiceError(f"cannot listen on --host {host} --port {port}: {reason}{hint}")


def recover(models: Path, lock_timeout: float = 60.0) -> int:
    """Fold every journal left in DIR by a crash (before serving); returns the lessons folded."""
    from ..persist import load

    folded = 0
    for name in sorted(os.listdir(models)):
        if not name.endswith(MODEL_SUFFIX + journal.JOURNAL_SUFFIX):
            continue
        path = models / name[: -len(journal.JOURNAL_SUFFIX)]
        try:
            with journal.write_lock(path, lock_timeout):
                if not path.exists():
                    log.warning("%s: a journal without its model file; left alone", models / name)
                    continue
                try:
                    lessons = journal.pending_lessons(path, journal.file_digest(path))
                except journal.JournalError as error:
                    log.error("%s; set aside as %s", error, journal.set_aside(models / name))
                    continue
                if lessons:
                    model = load(path)
                    journal.replay(model, lessons, str(models / name))
                    model.save(path)
                    folded += len(lessons)
                    log.warning("%s: folded %d lessons journaled before a crash", path, len(lessons))
                journal.remove_journal(path)
        except (ModelLockedError, OSError, StreamNBError) as error:
            log.error("%s: could not recover its journal now (it is folded when the user is next served): %s",
                      path, error)
    return folded


class Server:
    """The spamd-compatible service: ``await Server(settings).serve(host, port)``."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.cache = ModelCache(settings)
        self.active = 0
        self.tasks: set[asyncio.Task] = set()
        self._server: asyncio.base_events.Server | None = None
        self._stopping: asyncio.Event | None = None
        self._empty: SpamFilter | None = None

    def empty_filter(self) -> SpamFilter:
        """The verdicts of a user without a model file: an empty model (always unsure)."""
        if self._empty is None:
            model = self.settings.new_model()
            self._empty = SpamFilter(model, self.settings.rule_of(model), min_per_class=self.settings.min_per_class,
                                     evidence_k=0)
        return self._empty

    async def start(self, host: str, port: int) -> list[tuple]:
        """Check the models folder, fold what a crash left, listen; ServiceError if any cannot be done."""
        check_models_folder(self.settings.models, self.settings.read_only)
        if not self.settings.read_only:  # read-only: journals are read with their models, never folded
            folded = await asyncio.to_thread(recover, self.settings.models)
            if folded:
                log.warning("recovered %d journaled lessons", folded)
        self._stopping = asyncio.Event()
        try:
            self._server = await asyncio.start_server(self._connection, host, port,
                                                      limit=self.settings.limits.max_line, reuse_address=True)
        except OSError as error:
            raise listen_error(host, port, error) from None
        asyncio.ensure_future(self._snapshots())
        return [sock.getsockname() for sock in self._server.sockets]

    async def serve(self, host: str, port: int, ready: Callable[[list], None] | None = None) -> int:
        """Serve until SIGTERM or SIGINT, then fold every model; returns the lessons left in journals."""
        addresses = await self.start(host, port)
        assert self._stopping is not None  # made by start()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._stopping.set)
        if ready is not None:
            ready(addresses)
        await self._stopping.wait()
        return await self.stop()

    async def stop(self, grace: float = 10.0) -> int:
        """Stop accepting, let the requests under way finish (up to ``grace`` s), fold every model.
        Returns the lessons left in journals (a fold failed: they are folded at the next start)."""
        if self._server is not None:
            self._server.close()
        if self.tasks:
            done, pending = await asyncio.wait(set(self.tasks), timeout=grace)
            for task in pending:
                task.cancel()
        left = await self.cache.close()
        log.info("stopped; %s", "nothing written (read-only)" if self.settings.read_only else
                 f"{left} lessons stay in journals (folded at the next start)" if left else
                 "every model folded into its file")
        return left

    async def _snapshots(self) -> None:
        """Fold the journals that have waited longer than --snapshot-seconds."""
        period = max(0.2, min(5.0, self.settings.snapshot_seconds / 4))
        assert self._stopping is not None  # made by start(), which starts this task
        while not self._stopping.is_set():
            await asyncio.sleep(period)
            now = time.monotonic()
            for entry in list(self.cache.entries.values()):
                if entry.pending and now - entry.oldest_pending >= self.settings.snapshot_seconds:
                    await entry.fold()

    # -- one connection ---------------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None  # each connection runs in a task of its own
        self.tasks.add(task)
        try:
            if self.active >= self.settings.limits.max_connections:
                log.warning("refused a connection: %d under way (--max-connections)", self.active)
                await self._finish(writer, reader, ProtocolError(
                    EX_TEMPFAIL, f"Service Unavailable: (too many connections; limit "
                                 f"{self.settings.limits.max_connections})").reply(), drain=True)
                return
            self.active += 1
            try:
                reply, drain = await self._answer(reader)
                await self._finish(writer, reader, reply, drain)
            finally:
                self.active -= 1
        except Exception:  # a broken connection must never take the server down
            log.exception("connection failed")
            writer.transport.abort()
        finally:
            self.tasks.discard(task)

    async def _answer(self, reader: asyncio.StreamReader) -> tuple[bytes, bool]:
        """(reply, whether unread input may remain) for one request."""
        limits = self.settings.limits
        deadline = asyncio.get_running_loop().time() + limits.timeout
        body_read = False
        try:
            request = await asyncio.wait_for(read_head(reader, limits), limits.timeout)
            if request.method == "PING":
                return f"{PROTOCOL} {EX_OK} PONG\r\n".encode(), False
            if request.method == "SKIP":
                return b"", False
            if request.method == "TELL" and self.settings.read_only:
                raise unavailable("the models folder is served read-only (--read-only): TELL is refused")
            if request.method == "TELL" and not self.settings.allow_tell:
                raise unavailable("TELL commands are not enabled, set the --allow-tell switch.")
            model_path(self.settings.models, request.user)  # refuse a bad name before reading the body
            remaining = max(0.0, deadline - asyncio.get_running_loop().time())
            request.body = await asyncio.wait_for(read_body(reader, request, limits), remaining)
            body_read = True
            if request.method == "TELL":
                return await self._tell(request), False
            return await self._check(request), False
        except asyncio.TimeoutError:
            log.info("request timed out after %g s", limits.timeout)
            return ProtocolError(EX_TIMEOUT, f"Timeout: ({limits.timeout:g} second timeout reading input "
                                             "from client)").reply(), True
        except ProtocolError as error:
            log.info("refused a request: %s %s", error.code, error.text)
            return error.reply(), not body_read
        except ConnectionError as error:  # the client reset the connection: no one to answer
            log.info("a client went away: %s", error)
            return b"", False
        except ModelLockedError as error:
            return ProtocolError(EX_TEMPFAIL, f"Service Unavailable: ({error})").reply(), not body_read
        except (OSError, ModelFormatError, journal.JournalError) as error:  # the files, not the message
            log.error("I/O error: %s", error)
            return ProtocolError(EX_IOERR, f"I/O error: ({' '.join(str(error).split())[:200]})").reply(), \
                not body_read
        except (StreamNBError, ValueError, TypeError) as error:  # the model refused the message
            log.info("a message was refused: %s", error)
            return ProtocolError(EX_DATAERR, f"Message refused: ({' '.join(str(error).split())[:200]})").reply(), \
                not body_read
        except Exception as error:
            log.exception("internal error")
            return ProtocolError(EX_SOFTWARE, f"Internal error: ({type(error).__name__})").reply(), not body_read

    async def _check(self, request: Request) -> bytes:
        """The verdict of the user's model; when it cannot give one, an "unsure" that says so.

        An error reply would make spamc pass the message on as it came, unmarked, and exit 0
        as for ham (its default without -x): a check that cannot be made is answered
        unsure with the STREAMNB_UNSCORED symbol instead, and logged.
        """
        explain = request.method in ("REPORT", "REPORT_IFSPAM")
        try:
            result = None
            if self.cache.has_model(request.user):
                result = await self.cache.get(request.user).classify(request.body, explain)
            if result is None:  # no model file: an empty model's verdict, nothing written
                spam_filter = self.empty_filter()
                result = spam_filter.classify(request.body, explain=False), False, {}
        except Exception as error:  # whatever it was, the mail must not pass as clean
            log.error("user %s: a %s answered unsure (STREAMNB_UNSCORED): the model could not score the message: "
                      "%s: %s", request.user, request.method, type(error).__name__, " ".join(str(error).split()))
            return check_reply(request.method, unscored_verdict(self.settings.rule), False, request.body,
                               request.user, {}, self.settings, scored=False)
        verdict, ready, counts = result
        return check_reply(request.method, verdict, ready, request.body, request.user, counts, self.settings)

    async def _tell(self, request: Request) -> bytes:
        headers = request.headers
        sets = {part.strip() for part in headers.get("Set", "").split(",") if part.strip()}
        removes = {part.strip() for part in headers.get("Remove", "").split(",") if part.strip()}
        if "local" in sets and "local" in removes:
            raise protocol_error("Unable to set local and remove local in the same operation.")
        if "local" in sets:
            label = headers.get("Message-class")
            if label not in ("spam", "ham"):
                raise protocol_error(f"Message-class must be spam or ham, got {str(label)[:20]!r}")
            lesson = Lesson(LEARN, label, request.body)
        elif "local" in removes:
            lesson = Lesson(FORGET, None, request.body)
        else:
            return f"{PROTOCOL} {EX_OK} EX_OK\r\n\r\n".encode()  # nothing local asked: nothing done
        for _ in range(3):
            try:
                changed = await self.cache.get(request.user).tell(lesson)
                break
            except _Evicted:
                continue
        else:
            raise ProtocolError(EX_TEMPFAIL, "Service Unavailable: (the model is being unloaded; try again)")
        done = ""
        if changed:
            done = "DidSet: local\r\n" if lesson.action == LEARN else "DidRemove: local\r\n"
        return f"{PROTOCOL} {EX_OK} EX_OK\r\n{done}\r\n".encode()

    async def _finish(self, writer: asyncio.StreamWriter, reader: asyncio.StreamReader, reply: bytes,
                      drain: bool) -> None:
        """Send the reply and close; unread input is drained briefly first, so that closing does
        not reset the connection before the client has read the reply."""
        timeout = self.settings.limits.timeout
        try:
            if reply:
                writer.write(reply)
                await asyncio.wait_for(writer.drain(), timeout)
            if drain and writer.can_write_eof():
                writer.write_eof()
                await asyncio.wait_for(self._discard(reader), min(2.0, timeout))
        except (asyncio.TimeoutError, ConnectionError, OSError):
            pass
        finally:
            writer.close()
            try:
                await asyncio.wait_for(writer.wait_closed(), 2.0)
            except (asyncio.TimeoutError, ConnectionError, OSError):
                pass

    @staticmethod
    async def _discard(reader: asyncio.StreamReader, limit: int = 64 << 20) -> None:
        seen = 0
        while seen < limit:
            chunk = await reader.read(65536)
            if not chunk:
                return
            seen += len(chunk)


def run(settings: Settings, host: str, port: int) -> int:
    """Serve until SIGTERM/SIGINT (the ``streamnb serve`` command); prints where it listens."""
    import sys

    def ready(addresses: list) -> None:
        for address in addresses:
            print(f"streamnb serve: listening on {address[0]}:{address[1]} (models in {settings.models})",
                  file=sys.stderr, flush=True)

    left = asyncio.run(Server(settings).serve(host, port, ready))
    if left:  # durable in the journals, but the model files alone do not hold them: say so, and fail
        print(f"streamnb serve: stopped; {left} acknowledged lessons could not be folded into their model files "
              "and stay in their journals (the log says why); the next start folds them", file=sys.stderr, flush=True)
        return 3
    print("streamnb serve: stopped" + ("" if settings.read_only else "; every lesson is in its model file"),
          file=sys.stderr, flush=True)
    return 0
