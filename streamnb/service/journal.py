"""Lessons that are never lost: a write lock and an append-only journal beside a model file.

Three files live side by side::

    DIR/alice.snb          the model (streamnb.persist: written atomically, checksummed)
    DIR/alice.snb.lock     the write lock (``filelock``) held around every load-change-save
    DIR/alice.snb.journal  lessons acknowledged but not yet folded into the model file

Every writer (``streamnb learn``/``unlearn``/``train``, ``streamnb serve``) takes the lock
before it reads the model file (``train``: before it reads the journal and saves) and keeps
it until its change is on disk, so two writers never both start from the same file and
lose each other's lessons.

The journal lets a server acknowledge a lesson at the cost of one appended record and one
fsync instead of a rewrite of the whole model. It starts with a header naming the SHA-256
of the model file its lessons apply to (its *base*); then come records, each with a CRC32::

    header:  b"streamnb-journal v2 base sha256:<64 hex digits> id <16 hex digits>\\n"
    record:  b"SNBJ" | action (1 byte: L learn, F forget, D folded) | label length (1 byte)
             | message length (4 bytes, big-endian) | label (UTF-8) | message | CRC32 of all before (4 bytes)

Folding (:func:`save_folded`) appends a *fold mark* (action D, the SHA-256 of the model file
about to be written as its message), writes the model (with the lessons applied)
atomically, then deletes the journal. A crash between the write and the deletion leaves a
journal whose base is no longer the model file's digest and whose last record marks it
folded into that file: its lessons are in the file, and whoever opens it next discards it.
A journal whose base *is* the file's digest holds lessons the file lacks: they are
replayed. A journal of another base without that mark lost its model file to something
else (a restore from a backup, ``rm``): its lessons were acknowledged and are in no file, so
they are applied to the file that is there now. So each acknowledged lesson is applied
exactly once, whatever the model (a ledger is not needed for that), and a record torn by a
crash in the middle of an append (never acknowledged, since the reply waits for the fsync)
is dropped. (A journal written before fold marks, ``v1``, with another base is taken as
folded, as it was then.)
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import re
import struct
import time
import zlib
from collections.abc import Iterable
from typing import Any, NamedTuple

from ..errors import StreamNBError
from ..validate import check_ledger_to_forget

__all__ = ["Lesson", "JournalError", "ModelLockedError", "LockFileError", "LOCK_SUFFIX", "JOURNAL_SUFFIX", "write_lock",
           "check_lock_file", "file_digest", "read_model", "read_journal", "follow_journal", "JournalTail", "Key",
           "ident_of", "record_keys", "salvage", "pending_lessons", "lessons_to_replay", "create_journal",
           "open_journal", "append_lessons", "remove_journal", "save_folded", "apply_lesson", "fold_pending"]

LOCK_SUFFIX = ".lock"
JOURNAL_SUFFIX = ".journal"
LEARN, FORGET = "learn", "forget"
_ACTIONS = {LEARN: b"L", FORGET: b"F"}
_ACTION_NAMES = {code: name for name, code in _ACTIONS.items()}
_FOLDED = b"D"  # a fold mark's action: the message is the SHA-256 (hex) of the file folded into
# v2's id (random, made with the journal) tells a journal from another of the same base: a
# copy put back, or one made after it was deleted (a v1 journal is told by its inode).
_HEADER = re.compile(rb"streamnb-journal v(?:1|2) base sha256:([0-9a-f]{64})(?: id ([0-9a-f]{16}))?\n")
_HEADER_MAX = len(b"streamnb-journal v2 base sha256:") + 64 + len(b" id ") + 16 + 1


def _header(data: bytes, path: str | os.PathLike) -> re.Match[bytes]:
    """The journal's header (v1, or v2 with its id).

    Raises
    ------
    JournalError
        It is not a journal's.
    """
    match = _HEADER.match(data)
    if match is None or data.startswith(b"streamnb-journal v2 ") != (match.group(2) is not None):
        raise JournalError(f"{os.fspath(path)!r} is not a streamnb journal (bad header)")
    return match


def _ident(match: re.Match[bytes], inode: int) -> str:
    """Which journal this is: its v2 id, or a v1 journal's inode."""
    return match.group(2).decode("ascii") if match.group(2) else f"inode {inode}"
_RECORD = struct.Struct(">4scBI")
_MAGIC = b"SNBJ"
_CRC = struct.Struct(">I")
MAX_RECORD_MESSAGE = 1 << 28  # a length beyond this is damage, not a message (spamc's own cap is 256 MB)

log = logging.getLogger("streamnb.journal")


class JournalError(StreamNBError, ValueError):
    """A journal cannot be used: not a journal, damaged header, or unwritable."""


class ModelLockedError(StreamNBError, TimeoutError):
    """Another writer held the model's lock for longer than we were willing to wait."""


class LockFileError(StreamNBError, OSError):
    """The model's lock file cannot be made (a missing or read-only folder, /proc ...)."""


class Lesson(NamedTuple):
    """One acknowledged lesson: learn ``message`` as ``label``, or forget it (label None)."""

    action: str
    label: str | None
    message: bytes


def lock_path(model_path: str | os.PathLike) -> str:
    """The lock file of a model file: ``<model>.lock``."""
    return os.fspath(model_path) + LOCK_SUFFIX


def journal_path(model_path: str | os.PathLike) -> str:
    """The journal of a model file: ``<model>.journal``."""
    return os.fspath(model_path) + JOURNAL_SUFFIX


def write_lock(model_path: str | os.PathLike, timeout: float = 120.0) -> Any:
    """The write lock of a model file, as a context manager (``with write_lock(path): ...``).

    Raises ModelLockedError after ``timeout`` seconds (< 0: wait forever). The lock is an
    flock on ``<model>.lock``: the kernel releases it when its holder dies, so a killed
    writer never leaves it stuck.

    Parameters
    ----------
    model_path
        The model file (which need not exist).
    timeout
        Seconds to wait for another writer (< 0: forever).

    Raises
    ------
    LockFileError
        The lock file cannot be made (:func:`check_lock_file`), at once.
    ModelLockedError
        On entering, when another writer held the lock for ``timeout`` seconds.
    """
    from filelock import FileLock, Timeout  # imported here: `streamnb classify` never locks

    check_lock_file(model_path)
    lock = FileLock(lock_path(model_path), timeout=timeout)

    class _Held:
        def __enter__(self) -> None:
            try:
                lock.acquire()
            except Timeout:
                raise ModelLockedError(f"{os.fspath(model_path)!r} is locked by another writer "
                                       f"(waited {timeout:g} s; a running 'streamnb serve' or "
                                       "'streamnb learn'?)") from None

        def __exit__(self, *exc_info: object) -> None:
            lock.release()

    return _Held()


def check_lock_file(model_path: str | os.PathLike) -> None:
    """Make sure the lock file of a model can be opened for writing (made if need be);
    LockFileError, naming the path and the reason, otherwise.

    filelock would take a failure to open it (a read-only file system, a missing folder,
    /proc) for a lock held by someone else and retry until its timeout, and it creates
    missing folders: a typo in a path would make folders, or wait for ten minutes.

    Parameters
    ----------
    model_path
        The model file (which need not exist).

    Raises
    ------
    LockFileError
        The model file's folder does not exist, or the lock file cannot be opened.
    """
    path = lock_path(model_path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise LockFileError(f"{os.fspath(model_path)!r}: the folder {folder!r} does not exist")
    try:
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o644))
    except OSError as error:
        raise LockFileError(f"cannot make the lock file {path!r} ({error.strerror or error})") from None


def file_digest(path: str | os.PathLike) -> str:
    """SHA-256 (hex) of a file's bytes: the identity a journal's base refers to."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_model(path: str | os.PathLike) -> tuple[Any, str, tuple[int, int, int]]:
    """A model file read once: (model, SHA-256 of its bytes, its stamp as :func:`stamp` gives it).

    One read gives the three together even while another writer replaces the file.

    Parameters
    ----------
    path
        The model file.

    Returns
    -------
    tuple
        The model, the SHA-256 of the file's bytes (hex), and (inode, size, mtime in ns).

    Raises
    ------
    OSError
        The file cannot be read (FileNotFoundError when there is none).
    ModelFormatError
        The file is not a model file, or is damaged; the message names the path.
    """
    from ..errors import ModelFormatError
    from ..persist import loads_with_digest

    with open(path, "rb") as handle:
        data = handle.read()
        status = os.fstat(handle.fileno())
    try:
        model, digest = loads_with_digest(data)
    except ModelFormatError as error:
        raise ModelFormatError(f"{os.fspath(path)}: {error}") from None
    return model, digest, (status.st_ino, status.st_size, status.st_mtime_ns)


def _fsync_folder(path: str) -> None:
    folder = os.open(os.path.dirname(os.path.abspath(path)) or ".", os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def encode_lesson(lesson: Lesson) -> bytes:
    """One journal record (see the module docstring).

    Raises
    ------
    JournalError
        An unknown action, a label over 255 bytes, or a message over 256 MiB.
    """
    if lesson.action not in _ACTIONS:
        raise JournalError(f"unknown lesson action {lesson.action!r} (expected 'learn' or 'forget')")
    label = b"" if lesson.label is None else lesson.label.encode("utf-8")
    if len(label) > 255:
        raise JournalError(f"label {lesson.label!r} is longer than 255 bytes")
    if len(lesson.message) > MAX_RECORD_MESSAGE:
        raise JournalError(f"message of {len(lesson.message)} bytes is too long for a journal record")
    body = _RECORD.pack(_MAGIC, _ACTIONS[lesson.action], len(label), len(lesson.message)) + label + lesson.message
    return body + _CRC.pack(zlib.crc32(body))


class JournalContents(NamedTuple):
    """What a journal file holds: its base digest, the intact lessons, and where they end."""

    base: str
    lessons: list[Lesson]
    end: int  # offset just past the last intact record
    size: int  # the file's size; > end when a torn or damaged tail follows
    version: int  # 1: written before fold marks
    folded_into: str | None  # the digest its last record marks it folded into, if it ends with a fold mark
    stamp: tuple[int, int, int]  # (inode, size, mtime in ns) of the file read
    ident: str  # which journal it is (:func:`_ident`)
    keys: frozenset[Key]  # its intact records' keys (fold marks too)

    def folded(self, digest: str) -> bool:
        """Are these lessons in the model file of this digest already? (Another base: folded
        into it, or lost with a file replaced or deleted: see the module docstring.)"""
        return self.base != digest and (self.version == 1 or self.folded_into == digest)


def _fold_mark(digest: str) -> bytes:
    body = _RECORD.pack(_MAGIC, _FOLDED, 0, len(digest)) + digest.encode("ascii")
    return body + _CRC.pack(zlib.crc32(body))


_FOLD_MARK_SIZE = len(_fold_mark("0" * 64))


def _folded_into(data: bytes) -> str | None:
    """The digest of the fold mark the journal's bytes end with (found after a torn record
    too), or None."""
    tail = data[-_FOLD_MARK_SIZE:]
    if len(tail) < _FOLD_MARK_SIZE:
        return None
    magic, action, label_size, message_size = _RECORD.unpack_from(tail, 0)
    body = tail[:-_CRC.size]
    if (magic, action, label_size, message_size) != (_MAGIC, _FOLDED, 0, 64) \
            or _CRC.unpack_from(tail, len(body))[0] != zlib.crc32(body):
        return None
    return body[_RECORD.size:].decode("ascii", "replace")


def _read_whole(path: str | os.PathLike) -> tuple[os.stat_result, bytes] | None:
    """A journal's status and its bytes up to its size then (None: there is none)."""
    try:
        with open(path, "rb") as handle:
            status = os.fstat(handle.fileno())
            return status, handle.read(status.st_size)
    except FileNotFoundError:
        return None


def read_journal(path: str | os.PathLike) -> JournalContents | None:
    """Parse a journal; None if there is none.

    Returns
    -------
    JournalContents or None
        The base, the intact lessons (a torn or damaged tail is left out), where they end.

    Raises
    ------
    JournalError
        The file's header is not a journal's.
    """
    read = _read_whole(path)
    if read is None:
        return None
    status, data = read
    match = _header(data, path)
    entries, end = _entries(data, match.end())
    return JournalContents(match.group(1).decode("ascii"), [lesson for _, lesson in entries if lesson is not None],
                           end, len(data), 2 if match.group(2) else 1, _folded_into(data),
                           (status.st_ino, len(data), status.st_mtime_ns), _ident(match, status.st_ino),
                           frozenset(key for key, _ in entries))


def salvage(model_path: str | os.PathLike, base: str, inode: int | None, offset: int,
            seen: set[Key]) -> tuple[list[Lesson], bool]:
    """What the journal holds that a process has not read, when it changed otherwise than by
    appends: the records of a journal of base ``base`` it has not applied (``seen``: the
    keys of those it has), whatever the file (a copy put back, perhaps appended to since; one
    another process made after the one it read was deleted or set aside); with the header
    damaged in place, those after ``offset`` in the same file (``inode``); nothing when there
    is none, or it is another file's.

    Parameters
    ----------
    model_path
        The model file.
    base
        The SHA-256 of the model file the process's model was read from.
    inode, offset
        The journal file the process read, and where it stopped.
    seen
        The keys of the records it applied (:data:`Key`).

    Returns
    -------
    tuple
        The lessons (intact records only, fold marks left out), and whether the journal's
        header is damaged (set it aside before saving: it is kept for a person to look at).
    """
    read = _read_whole(journal_path(model_path))
    if read is None:
        return [], False
    status, data = read
    try:
        match = _header(data, model_path)
    except JournalError:
        start, damaged = (offset if status.st_ino == inode and offset > 0 else len(data)), True
    else:
        if match.group(1).decode("ascii") != base:
            return [], False
        start, damaged = match.end(), False
    entries, _ = _entries(data, start)
    return [lesson for key, lesson in entries if lesson is not None and key not in seen], damaged


class JournalTail(NamedTuple):
    """The records a journal gained after an offset (:func:`follow_journal`)."""

    lessons: list[Lesson]
    end: int  # offset just past the last intact record
    stamp: tuple[int, int, int]  # the journal's (inode, size, mtime in ns) when it was read
    torn: bool  # bytes follow ``end``: a record being written, or one whose append failed
    version: int  # 1: written before fold marks
    ident: str  # which journal it is (:func:`_ident`)
    keys: list[Key]  # the new records' keys (fold marks too)


def follow_journal(model_path: str | os.PathLike, base: str, ident: str | None, offset: int,
                   last: int | None = None) -> JournalTail | None:
    """The lessons appended to a model's journal after ``offset``: what another process
    serving the same model file told it since this one last read the journal.

    Safe without the write lock: records are only appended, each with its CRC, so a record
    being written is left for the next read (``torn``).

    Parameters
    ----------
    model_path
        The model file.
    base
        The SHA-256 of the model file the caller's model was read from.
    ident
        The journal the caller has read up to ``offset`` (:attr:`JournalTail.ident`), or
        None: it has read none, and every record of a journal of base ``base`` is new.
    offset
        Where the caller stopped reading (ignored when ``ident`` is None).
    last
        The CRC of the last record it read (the one ending at ``offset``), or None: none.

    Returns
    -------
    JournalTail or None
        The new lessons; None when the journal is not that one: there is none, its base is
        another file's, it is another journal, or it no longer holds that record at
        ``offset`` (cut short, or a copy put back and appended to since).

    Raises
    ------
    JournalError
        The file's header is not a journal's.
    """
    path = journal_path(model_path)
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        return None
    with handle:
        status = os.fstat(handle.fileno())
        match = _header(handle.read(_HEADER_MAX), path)
        found = _ident(match, status.st_ino)
        start = match.end() if ident is None else offset
        if match.group(1).decode("ascii") != base or (ident is not None and found != ident) \
                or not match.end() <= start <= status.st_size:
            return None
        if ident is not None and last is not None:
            handle.seek(start - _CRC.size)
            if handle.read(_CRC.size) != _CRC.pack(last):
                return None
        handle.seek(start)
        data = handle.read(status.st_size - start)
    entries, end = _entries(data, 0, start)
    return JournalTail([lesson for _, lesson in entries if lesson is not None], start + end,
                       (status.st_ino, status.st_size, status.st_mtime_ns), start + end < status.st_size,
                       2 if match.group(2) else 1, found, [key for key, _ in entries])


def ident_of(model_path: str | os.PathLike) -> str | None:
    """Which journal the model's journal is (:attr:`JournalTail.ident`); None without one.

    Raises
    ------
    JournalError
        The file's header is not a journal's.
    """
    path = journal_path(model_path)
    try:
        with open(path, "rb") as handle:
            return _ident(_header(handle.read(_HEADER_MAX), path), os.fstat(handle.fileno()).st_ino)
    except FileNotFoundError:
        return None


# A record as a process that read it knows it: (the offset just past it, its CRC32).
Key = tuple[int, int]


def _entries(data: bytes, offset: int, at: int = 0) -> tuple[list[tuple[Key, Lesson | None]], int]:
    """The intact records from offset on (stopping at the first torn or damaged one), each
    with its key (``at``: where ``data`` starts in the file) and its lesson (None: a fold
    mark), and the offset just past the last record."""
    entries: list[tuple[Key, Lesson | None]] = []
    while offset + _RECORD.size <= len(data):
        magic, action, label_size, message_size = _RECORD.unpack_from(data, offset)
        if magic != _MAGIC or (action not in _ACTION_NAMES and action != _FOLDED) \
                or message_size > MAX_RECORD_MESSAGE:
            break
        stop = offset + _RECORD.size + label_size + message_size
        if stop + _CRC.size > len(data):
            break
        crc = _CRC.unpack_from(data, stop)[0]
        if crc != zlib.crc32(data[offset:stop]):
            break
        lesson = None  # a fold that did not happen (its writer died before the file): nothing to apply
        if action != _FOLDED:
            label = data[offset + _RECORD.size: offset + _RECORD.size + label_size].decode("utf-8", "replace")
            lesson = Lesson(_ACTION_NAMES[action], label or None, data[stop - message_size: stop])
        offset = stop + _CRC.size
        entries.append(((at + offset, crc), lesson))
    return entries, offset


def _records(data: bytes, offset: int) -> tuple[list[Lesson], int]:
    """The lessons of the intact records from offset on, and the offset past the last record."""
    entries, end = _entries(data, offset)
    return [lesson for _, lesson in entries if lesson is not None], end


def record_keys(lessons: Iterable[Lesson], start: int) -> list[Key]:
    """The keys of these lessons' records, appended from offset ``start`` on."""
    keys = []
    for lesson in lessons:
        record = encode_lesson(lesson)
        start += len(record)
        keys.append((start, _CRC.unpack_from(record, len(record) - _CRC.size)[0]))
    return keys


#: The digest :func:`pending_lessons` takes for no model file: a journal beside none holds
#: lessons acknowledged for a model deleted since, all pending (one written before fold
#: marks, v1, cannot tell, and is taken as folded).
NO_FILE = ""


def pending_lessons(model_path: str | os.PathLike, digest: str) -> list[Lesson]:
    """The journal's lessons not yet in the model file whose digest is ``digest``.

    A journal of another base was folded into this file already (a crash came between the
    save and the journal's removal: :meth:`JournalContents.folded`), and none is returned;
    or its model file was replaced or deleted by something else, and its lessons, in no file,
    are returned to be applied to this one.

    Parameters
    ----------
    model_path
        The model file.
    digest
        The SHA-256 (hex) of the model file as read (:func:`file_digest`), or
        :data:`NO_FILE` when there is none.

    Returns
    -------
    list of Lesson
        The lessons to replay, in order (none without a journal).

    Raises
    ------
    JournalError
        The journal's header is not a journal's.
    """
    return lessons_to_replay(read_journal(journal_path(model_path)), journal_path(model_path), digest)


def lessons_to_replay(contents: JournalContents | None, where: str, digest: str) -> list[Lesson]:
    """:func:`pending_lessons` of a journal read already (``contents``, None for none), at ``where``."""
    if contents is None:
        return []
    if contents.folded(digest):
        log.info("%s: journal of %d lessons already folded into the model file; discarding it",
                 where, len(contents.lessons))
        return []
    if contents.size > contents.end:
        # Only the tail can be torn (records are appended); a lesson there was never
        # acknowledged, because replies wait for the fsync that follows each append.
        log.warning("%s: %d bytes after the last intact record dropped (a write interrupted by a crash)",
                    where, contents.size - contents.end)
    if contents.base != digest:
        log.warning("%s: journal of %d lessons for a model file that was replaced or deleted; its lessons are "
                    "applied to the file there now", where, len(contents.lessons))
    return contents.lessons


def create_journal(model_path: str | os.PathLike, digest: str) -> int:
    """A new, empty journal for the model file of digest ``digest``; returns a descriptor for appending.

    Written to a temporary file, fsynced and renamed into place, so a journal on disk always
    has its whole header. Call under the lock.

    Raises
    ------
    OSError
        The journal cannot be made (a full disk, a folder that cannot be written ...);
        nothing is left behind.
    """
    path = journal_path(model_path)
    temporary = f"{path}.{os.getpid()}.tmp"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        try:
            header = (b"streamnb-journal v2 base sha256:" + digest.encode("ascii") + b" id "
                      + os.urandom(8).hex().encode("ascii") + b"\n")
            if os.write(descriptor, header) != len(header):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), temporary)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)  # a disk too full for the header keeps no half-made journal
        except FileNotFoundError:
            pass
        raise
    _fsync_folder(path)
    return os.open(path, os.O_WRONLY | os.O_APPEND)


def open_journal(model_path: str | os.PathLike) -> int:
    """A descriptor for appending to the model's journal as it is (made by another process
    serving the model, and followed up to its end). Call under the lock.

    Raises
    ------
    OSError
        The journal cannot be opened (FileNotFoundError: it is gone).
    """
    return os.open(journal_path(model_path), os.O_WRONLY | os.O_APPEND)


def append_lessons(descriptor: int, lessons: Iterable[Lesson]) -> int:
    """Append records and fsync: when this returns, the lessons survive a crash.

    Returns
    -------
    int
        The bytes written.

    Raises
    ------
    OSError
        A write or the fsync failed: the lessons are not durable (perhaps partly written).
    """
    data = b"".join(encode_lesson(lesson) for lesson in lessons)
    view, written = memoryview(data), 0
    while written < len(data):
        written += os.write(descriptor, view[written:])
    os.fsync(descriptor)
    return written


def remove_journal(model_path: str | os.PathLike) -> None:
    """Delete the journal (its lessons are in the model file now). Call under the lock."""
    path = journal_path(model_path)
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    _fsync_folder(path)


def save_folded(model_path: str | os.PathLike, data: bytes, digest: str | None = None) -> str:
    """Replace the model file with ``data``, a model that holds the journal's lessons (or
    one that replaces them on purpose, ``streamnb train --force``): the journal is marked
    folded into these bytes first, so that a crash before its removal leaves it known as
    folded (see the module docstring). Call under the lock.

    Parameters
    ----------
    model_path
        The model file.
    data
        The new model file's bytes (``streamnb.persist.dumps``).
    digest
        Their SHA-256 (hex), if the caller has it.

    Returns
    -------
    str
        The SHA-256 of ``data``.

    Raises
    ------
    OSError
        The mark, the file or the journal's removal could not be written (the model file is
        either the old one, the journal unmarked or marked, or the new one).
    """
    from ..persist import write_atomically

    digest = digest or hashlib.sha256(data).hexdigest()
    try:
        descriptor = os.open(journal_path(model_path), os.O_WRONLY | os.O_APPEND)
    except FileNotFoundError:
        pass
    else:
        try:
            mark = _fold_mark(digest)
            if os.write(descriptor, mark) != len(mark):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), journal_path(model_path))
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
    write_atomically(os.fspath(model_path), data)
    remove_journal(model_path)
    return digest


def apply_lesson(model: Any, lesson: Lesson) -> bool:
    """Apply one lesson to a model through its public API; True if the model changed.

    learn: ``learn_one(message, label)``. With a ledger, a message already learned under
    that label is a no-op and one learned under the other label moves.

    forget: ``learn_one(message, c)`` then ``unlearn_one(message, c)`` for a class c the
    model knows. With a ledger, whatever the model held about the message (nothing, or the
    message under any label) ends up removed: learning first makes the message known under
    c, and unlearning takes it out with the weight and age the ledger recorded. A plain
    unlearn_one could not tell a message never learned from one learned, and would subtract
    counts the message never added, so forget needs a ledger: without one it is refused
    (InvalidParameterError) before anything changes. Needs a model without forgetting to
    tell "known" apart (the server's).

    Returns
    -------
    bool
        Whether the model changed; for forget, whether the message was known (the learn
        added no document).

    Raises
    ------
    InvalidParameterError
        Forget on a model without a ledger (:func:`streamnb.validate.check_ledger_to_forget`).
    StreamNBError, ValueError, TypeError
        The model refused the lesson.
    """
    if lesson.action == LEARN:
        before = model.class_counts
        model.learn_one(lesson.message, lesson.label)
        return model.class_counts != before
    classes = list(model.classes)
    if not classes:
        return False
    check_ledger_to_forget(model)
    before = sum(model.class_counts.values())
    model.learn_one(lesson.message, classes[0])
    known = sum(model.class_counts.values()) <= before + 0.5  # an unknown message adds one document
    model.unlearn_one(lesson.message, classes[0])
    return known


def replay(model: Any, lessons: Iterable[Lesson], origin: str = "journal") -> int:
    """Apply lessons in order; a lesson the model refuses is logged and skipped (as it was when first told).

    Returns
    -------
    int
        The lessons applied.
    """
    applied = 0
    for lesson in lessons:
        try:
            apply_lesson(model, lesson)
            applied += 1
        except (StreamNBError, ValueError, TypeError) as error:
            log.warning("%s: a %s lesson was refused on replay (as when it was told): %s", origin, lesson.action, error)
    return applied


def fold_pending(model_path: str | os.PathLike) -> tuple[Any, int]:
    """The model of ``model_path`` with its journal's pending lessons applied (the file read
    once: :func:`read_model`).

    Call under the lock, then save the model with :func:`save_folded`.

    Returns
    -------
    tuple
        The model, and how many lessons were pending.

    Raises
    ------
    OSError, ModelFormatError
        As :func:`read_model`.
    JournalError
        The journal's header is not a journal's.
    """
    model, digest, _ = read_model(model_path)
    lessons = pending_lessons(model_path, digest)
    replay(model, lessons, journal_path(model_path))
    return model, len(lessons)


def stamp(path: str | os.PathLike) -> tuple[int, int, int] | None:
    """(inode, size, mtime in ns) of a file, or None: tells whether someone replaced or grew it."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    return status.st_ino, status.st_size, status.st_mtime_ns


def set_aside(path: str | os.PathLike) -> str:
    """Rename a damaged file to ``<path>.damaged-<time>`` (kept for inspection, never deleted).

    Returns
    -------
    str
        The new path.
    """
    target = f"{os.fspath(path)}.damaged-{time.strftime('%Y%m%dT%H%M%S')}"
    os.replace(path, target)
    return target
