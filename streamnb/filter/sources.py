"""Where messages come from: Maildir folders, mbox files, folders of files, single files, JSONL and CSV.

``read_mail(path)`` yields every raw message under a path, whatever the layout:

- a Maildir (a folder with ``cur/`` or ``new/``): the files of ``new/`` then ``cur/``;
- an mbox file (its first line starts with ``From ``): each message, without the
  ``From `` separator line, in file order (named ``path#N``, or ``path`` alone when the file
  holds one message);
- a pipe (a FIFO, ``<(command)``): read once, then as an mbox or one message;
- a folder of files: every file below it (sorted, hidden files skipped), each one message;
- any other file: one message.

``read_labelled(path)`` yields (text, label) pairs from a JSONL file (one JSON object a
line) or a CSV file with a header row; the column names are parameters.

``split_mail(raw, origin)`` does the same for bytes already read (standard input): the
messages of an mbox, or the one message. Whether bytes are a mail message at all is decided
by :func:`mail_problem`, for the ``streamnb`` command and ``streamnb serve`` alike.

Errors (a missing path, an empty mailbox, a file that is not mail, a missing column) raise
:class:`SourceError` with a message naming the path and the problem.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from ..errors import InvalidInputError

# A header field: a name of printable ASCII without ':' and spaces, then ':' (RFC 5322 2.2).
_FIELD = re.compile(rb"^[!-9;-~]+:")
_LABELLED_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv"}


class SourceError(InvalidInputError):
    """A message source cannot be read: missing, empty, not mail, or a missing column."""


class RawMessage(NamedTuple):
    """One message as bytes, with where it came from (a path, or path#number in an mbox)."""

    origin: str
    raw: bytes


def looks_like_mail(raw: bytes) -> bool:
    """Does the text start like an RFC 822 message (an mbox line, then a header field)?

    Parameters
    ----------
    raw : bytes
        The start of a file.

    Returns
    -------
    bool
        Whether it reads as a message.
    """
    lines = raw.lstrip(b"\r\n").split(b"\n", 2)
    first = lines[0]
    if first.startswith(b"From ") and len(lines) > 1:
        first = lines[1]
    return bool(_FIELD.match(first))


def mail_problem(raw: bytes) -> str | None:
    """Why bytes are not a mail message, or None when they are one: the one check of what is
    mail, shared by the ``streamnb`` command (its sources, standard input) and the service
    (a TELL), so both accept and refuse the same input.

    Parameters
    ----------
    raw : bytes
        The message.

    Returns
    -------
    str or None
        ``"is empty, not a mail message"``, ``"is not a mail message (it does not start with
        a header line)"`` (to follow what was read: "standard input is empty ..."), or None.
    """
    if not raw.strip():
        return "is empty, not a mail message"
    if not looks_like_mail(raw):
        return "is not a mail message (it does not start with a header line)"
    return None


def split_mail(raw: bytes, origin: str, where: str | None = None) -> list[RawMessage]:
    """The messages of bytes read from a stream: each message of an mbox (``origin#N``, or
    ``origin`` alone for one), or the one message.

    Parameters
    ----------
    raw : bytes
        What the stream held.
    origin : str
        Where it came from, as the messages are named.
    where : str, optional
        The same, as the errors name it (default: ``origin``).

    Returns
    -------
    list of RawMessage
        The messages, in order.

    Raises
    ------
    SourceError
        The bytes are not mail (:func:`mail_problem`), or an mbox without a message.
    """
    if not raw.startswith(b"From "):
        problem = mail_problem(raw)
        if problem is not None:
            raise SourceError(f"{where or origin} {problem}")
        return [RawMessage(origin, raw)]
    if b"\nFrom " not in raw:
        # One message: the lines after its From_ line, the last dropped when empty (the
        # separator), as mailbox reads it below (tests/filter/test_sources.py holds the two
        # equal), without mailbox's import and a temporary file: `streamnb classify` of a
        # message saved from a mailbox.
        end_of_line = raw.find(b"\n")
        message = raw[end_of_line + 1:] if end_of_line >= 0 else b""
        return [RawMessage(origin, message[:-1] if message == b"\n" or message.endswith(b"\n\n") else message)]
    import tempfile

    # mailbox reads an mbox from a file only: the bytes go through one, so that a stream is
    # split exactly as the same mbox on disk is
    with tempfile.TemporaryDirectory(prefix="streamnb-") as folder:
        path = Path(folder) / "stream.mbox"
        path.write_bytes(raw)
        return [RawMessage(origin + m.origin[len(str(path)):], m.raw) for m in _read_mbox(path)]


def read_mail(path: str | Path) -> Iterator[RawMessage]:
    """Every raw message under path (see the module docstring for the layouts).

    Parameters
    ----------
    path : str or Path
        A message file, an mbox file, a Maildir or a folder of messages.

    Returns
    -------
    iterator of RawMessage
        The messages with their origins.

    Raises
    ------
    SourceError
        For a path that does not exist, or holds no message.
    """
    source = Path(path).expanduser()
    if not source.exists():
        raise SourceError(f"{str(source)!r}: no such file or folder")
    if source.is_char_device() or source.is_block_device():  # /dev/zero would be read forever
        raise SourceError(f"{str(source)!r}: a device, not mail")
    found = 0
    if source.is_dir():
        if (source / "cur").is_dir() or (source / "new").is_dir():
            files = [f for sub in ("new", "cur") if (source / sub).is_dir() for f in _files(source / sub)]
        else:
            files = _files(source)
        for file in files:
            raw = _read_bytes(file)
            if looks_like_mail(raw):
                found += 1
                yield RawMessage(str(file), raw)
        if not found:
            raise SourceError(f"{str(source)!r}: no mail message found in this folder")
        return
    if not source.is_file():  # a pipe can be read once only: its bytes, split as a file's would be
        yield from split_mail(_read_bytes(source), str(source), repr(str(source)))
        return
    if _read_bytes(source, 5) == b"From ":  # an mbox: read message by message below
        yield from _read_mbox(source)
        return
    raw = _read_bytes(source)
    problem = mail_problem(raw)
    if problem is not None:
        raise SourceError(f"{str(source)!r} {problem}")
    yield RawMessage(str(source), raw)


def _read_mbox(source: Path) -> Iterator[RawMessage]:
    """The messages of an mbox file, ``path#N`` (``path`` alone for one)."""
    import mailbox  # here: `streamnb classify` of a message on stdin does not need it

    box = mailbox.mbox(str(source), create=False)
    try:
        keys = box.keys()
        for number, key in enumerate(keys):
            # path#N names the N-th message of a mailbox; a file of one message is just its path
            yield RawMessage(f"{source}#{number}" if len(keys) > 1 else str(source), box.get_bytes(key))
    finally:
        box.close()
    if not keys:
        raise SourceError(f"{str(source)!r}: the mailbox holds no message")


def read_labelled(path: str | Path, text_column: str = "text",
                  label_column: str = "label") -> Iterator[tuple[str, str]]:
    """(text, label) pairs from a JSONL or CSV file with the given columns.

    Parameters
    ----------
    path : str or Path
        A ``.jsonl`` or ``.csv`` file.
    text_column, label_column : str
        The columns of the text and of its label.

    Returns
    -------
    iterator of (str, str)
        (text, label) of each row.

    Raises
    ------
    SourceError
        For a file that cannot be read as such, or a row without the columns.
    """
    source = Path(path).expanduser()
    if source.is_dir():
        raise SourceError(f"{str(source)!r} is a folder, not a .jsonl or .csv file")
    if not source.is_file():
        raise SourceError(f"{str(source)!r}: no such file")
    kind = _LABELLED_SUFFIXES.get(source.suffix.lower())
    if kind is None:
        raise SourceError(f"{str(source)!r}: expected a .jsonl or .csv file")
    rows = _jsonl_rows(source) if kind == "jsonl" else _csv_rows(source)
    found = 0
    for number, row in rows:
        missing = [c for c in (text_column, label_column) if c not in row]
        if missing:
            raise SourceError(f"{str(source)!r} row {number}: no column {missing[0]!r} "
                              f"(columns: {sorted(row)})")
        text, label = row[text_column], row[label_column]
        if not isinstance(text, str):
            raise SourceError(f"{str(source)!r} row {number}: column {text_column!r} is not text: {text!r:.40}")
        found += 1
        yield text, label
    if not found:
        raise SourceError(f"{str(source)!r}: no rows")


def _jsonl_rows(source: Path) -> Iterator[tuple[int, dict]]:
    with source.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise SourceError(f"{str(source)!r} line {number}: not JSON ({error.msg})") from None
            if not isinstance(row, dict):
                raise SourceError(f"{str(source)!r} line {number}: expected a JSON object, got {type(row).__name__}")
            yield number, row


def _csv_rows(source: Path) -> Iterator[tuple[int, dict]]:
    with source.open(encoding="utf-8", newline="") as handle:
        for number, row in enumerate(csv.DictReader(handle), start=2):
            yield number, row


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))


def _read_bytes(path: Path, size: int = -1) -> bytes:
    """The file's bytes (the first ``size`` only, when given)."""
    try:
        with path.open("rb") as file:
            return file.read(size)
    except OSError as error:
        raise SourceError(f"{str(path)!r}: cannot read ({error.strerror})") from None
