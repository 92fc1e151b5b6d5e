"""The TREC 2007 public spam corpus (trec07p), the standard benchmark of online spam filtering.

trec07p holds 75,419 messages delivered to one server from April to July 2007 (Cormack,
"TREC 2007 Spam Track Overview", Proc. TREC 2007). Its layout: ``full/index`` lists the
messages in delivery order, one line each (``spam ../data/inmail.1``), and
``data/inmail.N`` holds each raw message byte for byte. The protocol of the literature
classifies each message in index order, then learns it with its label (immediate feedback).

The corpus is licensed for research use only and may not be published: streamnb ships no
part of it. :func:`load_trec` reads a copy you have, from the ``path`` argument or the
environment variable ``STREAMNB_TREC07P``: the corpus folder (the one holding ``full/``
and ``data/``), or a ``.tar``, ``.tar.gz`` or ``.tar.xz`` archive of it (read in one
streaming pass; nothing is extracted to disk). A partial copy works too (e.g. the first
50,000 messages, with an index of 50,000 lines).
"""

from __future__ import annotations

import os
import random
import tarfile
from pathlib import Path, PurePosixPath

from .datasets import Message, parse_date
from ..errors import CorpusNotFoundError
from ..validate import check_one_of, check_positive

TREC_ENV = "STREAMNB_TREC07P"
_ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz")


def locate_trec(path: str | os.PathLike[str] | None = None) -> Path:
    """The corpus folder or archive: ``path``, else $STREAMNB_TREC07P; CorpusNotFoundError otherwise.

    Parameters
    ----------
    path : str, os.PathLike or None
        A corpus folder or archive; None for ``$STREAMNB_TREC07P``.

    Returns
    -------
    Path
        The folder or archive.

    Raises
    ------
    CorpusNotFoundError
        When neither names a corpus.
    """
    given = path if path is not None else os.environ.get(TREC_ENV)
    if not given:
        raise CorpusNotFoundError(f"the TREC 2007 corpus was not given: pass its folder or archive, or set {TREC_ENV} "
                                  "(it is licensed for research use and not distributed with streamnb)")
    source = Path(given).expanduser()
    if not source.exists():
        raise CorpusNotFoundError(f"{str(source)!r}: no such folder or archive (the TREC 2007 corpus)")
    return source


def is_trec(path: str | os.PathLike[str]) -> bool:
    """Does path look like a TREC corpus: a folder with ``full/index``, or an archive named like one?

    Parameters
    ----------
    path : str or os.PathLike
        A folder or a file.

    Returns
    -------
    bool
        Whether it looks like a TREC corpus.
    """
    source = Path(path).expanduser()
    if source.is_dir():
        return (source / "full" / "index").is_file()
    return source.is_file() and source.name.startswith("trec") and source.name.endswith(_ARCHIVE_SUFFIXES)


def load_trec(path: str | os.PathLike[str] | None = None, *, order: str = "delivery", seed: int = 0,
              limit: int | None = None) -> list[Message]:
    """The corpus's messages with their labels: in delivery order (the index's), or shuffled.

    ``order``: ``"delivery"`` (the protocol's) or ``"shuffle"`` (``random.Random(seed)``);
    ``limit``: only the first messages of the index. Each :class:`~streamnb.datasets.Message`
    has group ``"trec"``, the file's name (``inmail.1`` ...) and its Date header.

    Parameters
    ----------
    path : str, os.PathLike or None
        A corpus folder or archive; None for ``$STREAMNB_TREC07P``.
    order : {"delivery", "shuffle"}
        The order of the messages.
    seed : int
        The seed of the shuffle.
    limit : int or None
        Read only the first messages of the index (>= 1); None for all.

    Returns
    -------
    list of Message
        The messages with their labels.

    Raises
    ------
    InvalidParameterError
        For an unknown order or a limit below 1.
    CorpusNotFoundError
        When no corpus is found, or it lacks what its index names.
    """
    check_one_of("order", order, ("delivery", "shuffle"), "'delivery' or 'shuffle'")
    check_positive("limit", limit, integer=True)
    source = locate_trec(path)
    index, files = _read_folder(source, limit) if source.is_dir() else _read_archive(source, limit)
    messages = []
    for label, name in index:
        raw = files.get(name)
        if raw is None:
            raise CorpusNotFoundError(f"{str(source)!r}: the index lists {name} but the corpus has no such file")
        messages.append(Message(raw=raw, label=label, group="trec", name=name, date=parse_date(raw)))
    if order == "shuffle":
        random.Random(seed).shuffle(messages)
    return messages


def _parse_index(text: bytes, where: str, limit: int | None) -> list[tuple[str, str]]:
    """(label, file name) per line of ``full/index``."""
    entries = []
    for number, line in enumerate(text.decode("ascii", "replace").splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2 or parts[0] not in ("spam", "ham"):
            raise CorpusNotFoundError(f"{where}: line {number} of full/index is not 'spam|ham PATH': {line[:80]!r}")
        entries.append((parts[0], PurePosixPath(parts[1]).name))
        if limit is not None and len(entries) == limit:
            break
    if not entries:
        raise CorpusNotFoundError(f"{where}: full/index lists no message")
    return entries


def _read_folder(folder: Path, limit: int | None) -> tuple[list[tuple[str, str]], dict[str, bytes]]:
    index_file = folder / "full" / "index"
    if not index_file.is_file():
        raise CorpusNotFoundError(f"{str(folder)!r} has no full/index: not a TREC corpus folder")
    index = _parse_index(index_file.read_bytes(), str(folder), limit)
    files = {}
    for _, name in index:
        file = folder / "data" / name
        if file.is_file():
            files[name] = file.read_bytes()
    return index, files


def _read_archive(archive: Path, limit: int | None) -> tuple[list[tuple[str, str]], dict[str, bytes]]:
    """One streaming pass: the index and every data file (the index may come after them)."""
    files: dict[str, bytes] = {}
    index_text = None
    try:
        with tarfile.open(archive, "r|*") as tar:
            for member in tar:
                if not member.isfile():
                    continue
                parts = PurePosixPath(member.name).parts
                if parts[-2:] == ("full", "index"):
                    index_text = _extract(tar, member)
                elif len(parts) >= 2 and parts[-2] == "data" and parts[-1].startswith("inmail."):
                    files[parts[-1]] = _extract(tar, member)
    except (tarfile.TarError, OSError, EOFError) as error:
        raise CorpusNotFoundError(f"{str(archive)!r} is not a readable archive: {error}") from None
    if index_text is None:
        raise CorpusNotFoundError(f"{str(archive)!r} holds no full/index: not a TREC corpus archive")
    return _parse_index(index_text, str(archive), limit), files


def _extract(tar: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    handle = tar.extractfile(member)
    return b"" if handle is None else handle.read()
