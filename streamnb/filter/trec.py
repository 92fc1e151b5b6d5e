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

TREC 2007 measured filters under four feedback tasks (Cormack 2007); :func:`load_trec_task`
reads the labels each gives. ``full``: every message's label, right after it is
classified. ``delay``: labels for the first 10,000 messages only (``delay/index``).
``partial``: labels only for the mail of one recipient (``partial/index``). ``active``: the
filter may ask for at most a quota of labels, of the messages of its choice (the labels of
``full/index``). A feedback index lists the messages of ``full/index`` in its order; a
capitalised label (``Spam``, ``Ham``) marks a message the filter is scored on but gets no
label for. The feedback indexes may come in the corpus (its folder or archive) or apart, in
a folder or archive named by ``feedback`` or ``$STREAMNB_TREC07P_FEEDBACK``. Every message
is classified and scored in every task; :func:`streamnb.filter.tasks.run_task` runs a
filter under one.
"""

from __future__ import annotations

import os
import random
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from ..errors import CorpusNotFoundError
from ..validate import check_one_of, check_positive
from .datasets import Message, parse_date
from .evaluate import Progress
from .tasks import TASKS, TaskFilter, TaskReport, run_task

TREC_ENV = "STREAMNB_TREC07P"
FEEDBACK_ENV = "STREAMNB_TREC07P_FEEDBACK"
#: The index that gives each of TREC 2007's feedback tasks (TASKS) its labels.
INDEX_OF_TASK = {"full": "full", "delay": "delay", "partial": "partial", "active": "full"}
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
    ``limit``: only the first messages of the index. Each :class:`~streamnb.filter.datasets.Message`
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
    messages = _messages(source, _read_corpus(source, limit, ("full",)))
    if order == "shuffle":
        random.Random(seed).shuffle(messages)
    return messages


@dataclass(frozen=True)
class TrecTask:
    """A TREC feedback task's stream: the messages in delivery order (each with its true
    label, on which the filter is scored) and whether the task gives the filter that label.

    ``labelled[i]``: the task's index gives message i's label (a lower-case label); in the
    full task every label is given; in the active task every label may be asked for.
    ``index``: where the labels given came from: ``"full/index"``, ``"delay/index"`` ... in
    the corpus, or ``"PATH: delay/index"`` in the folder or archive PATH.
    """

    task: str
    messages: list[Message] = field(repr=False)
    labelled: list[bool] = field(repr=False)
    index: str

    @property
    def labels_given(self) -> int:
        """How many messages' labels the task's index gives (the full and active tasks: all of them)."""
        return sum(self.labelled)

    def run(self, spam_filter: TaskFilter, *, quota: int | None = None, progress: Progress = False) -> TaskReport:
        """Run a filter over the messages under this task (:func:`~streamnb.filter.tasks.run_task`).

        Parameters
        ----------
        spam_filter : SpamFilter
            The filter (changed in place), or anything with its ``classify``, ``learn`` and
            ``observe``.
        quota : int or None
            The active task's quota of labels (>= 0; None for 1,000); None in the others.
        progress : bool or callable
            A bar on stderr (True), none (False), or a callable(done, total).

        Returns
        -------
        TaskReport
            Every message's verdict and log-odds, which labels the filter got and asked for.
        """
        return run_task(spam_filter, [(m.raw, m.label) for m in self.messages], self.task,
                        labelled=self.labelled if self.task in ("delay", "partial") else None, quota=quota,
                        progress=progress)


def load_trec_task(path: str | os.PathLike[str] | None = None, task: str = "full", *,
                   feedback: str | os.PathLike[str] | None = None, limit: int | None = None) -> TrecTask:
    """The corpus in delivery order, with the labels one of TREC 2007's feedback tasks gives.

    ``full`` and ``active`` read ``full/index``; ``delay`` and ``partial`` read
    ``delay/index`` or ``partial/index``: the same lines in the same order, a capitalised
    label (``Spam``, ``Ham``) marking a message the filter is scored on but gets no label
    for. That index is looked for in ``feedback`` (a folder or archive holding
    ``delay/index`` ...), then in the corpus itself, then in ``$STREAMNB_TREC07P_FEEDBACK``.

    Parameters
    ----------
    path : str, os.PathLike or None
        A corpus folder or archive; None for ``$STREAMNB_TREC07P``.
    task : {"full", "delay", "partial", "active"}
        The feedback task.
    feedback : str, os.PathLike or None
        A folder or archive holding the feedback indexes, looked in before the corpus;
        None: the corpus's own, else ``$STREAMNB_TREC07P_FEEDBACK``'s.
    limit : int or None
        Only the first messages of the index (>= 1); None for all.

    Returns
    -------
    TrecTask
        The messages, which labels the task gives, and where they came from.

    Raises
    ------
    InvalidParameterError
        For an unknown task or a limit below 1.
    CorpusNotFoundError
        When the corpus or the task's index is not found, or the index does not list the
        messages of ``full/index`` in the same order with the same labels.
    """
    return load_trec_tasks(path, (task,), feedback=feedback, limit=limit)[task]


def load_trec_tasks(path: str | os.PathLike[str] | None = None, tasks: Sequence[str] = TASKS, *,
                    feedback: str | os.PathLike[str] | None = None,
                    limit: int | None = None) -> dict[str, TrecTask]:
    """Several tasks of :func:`load_trec_task` from one reading of the corpus (their messages
    are the same objects).

    Parameters
    ----------
    path, feedback, limit
        As for :func:`load_trec_task`.
    tasks : sequence of str
        The feedback tasks (each of ``"full"``, ``"delay"``, ``"partial"``, ``"active"``).

    Returns
    -------
    dict
        Task -> its :class:`TrecTask`, in the order asked for.

    Raises
    ------
    InvalidParameterError, CorpusNotFoundError
        As :func:`load_trec_task`.
    """
    for task in tasks:
        check_one_of("task", task, TASKS, "'full', 'delay', 'partial' or 'active'")
    check_positive("limit", limit, integer=True)
    source = locate_trec(path)
    kinds = list(dict.fromkeys(INDEX_OF_TASK[task] for task in tasks if INDEX_OF_TASK[task] != "full"))
    # an index named on purpose comes first, then the corpus's own, then the environment's
    corpus = _read_corpus(source, limit, ("full",) if feedback is not None else ("full", *kinds))
    given = {"full": ([entry.labelled for entry in corpus.indexes["full"]], "full/index")}
    elsewhere = feedback if feedback is not None else os.environ.get(FEEDBACK_ENV) or None
    for kind in kinds:
        task = next(task for task in tasks if INDEX_OF_TASK[task] == kind)
        entries, index = corpus.indexes.get(kind), f"{kind}/index"
        if entries is None and elsewhere is not None:
            location = Path(elsewhere).expanduser()
            if not location.exists():
                raise CorpusNotFoundError(f"{str(location)!r}: no such folder or archive (the TREC feedback indexes)")
            entries = _read_corpus(location, limit, (kind,), data=False).indexes.get(kind)
            if entries is None:
                raise CorpusNotFoundError(f"{str(location)!r} has no {kind}/index, which the {task} task needs")
            index = f"{location}: {kind}/index"
        if entries is None:
            raise CorpusNotFoundError(f"{str(source)!r} has no {kind}/index, which the {task} task needs "
                                      f"(set {FEEDBACK_ENV} to the folder or archive that holds it)")
        _check_same_messages(corpus.indexes["full"], entries, index)
        given[kind] = ([entry.labelled for entry in entries], index)
    messages = _messages(source, corpus)
    return {task: TrecTask(task, messages, *given[INDEX_OF_TASK[task]]) for task in tasks}


class _Entry(NamedTuple):
    """One line of an index: the true label, the file's name, and whether the task gives the label."""

    label: str
    name: str
    labelled: bool


@dataclass
class _Corpus:
    """What was read: the indexes asked for that the corpus holds, and the data files."""

    indexes: dict[str, list[_Entry]]
    files: dict[str, bytes]


def _messages(source: Path, corpus: _Corpus) -> list[Message]:
    """The messages full/index lists, in its order; CorpusNotFoundError for a missing file."""
    messages = []
    for entry in corpus.indexes["full"]:
        raw = corpus.files.get(entry.name)
        if raw is None:
            raise CorpusNotFoundError(f"{str(source)!r}: the index lists {entry.name} but the corpus has no such file")
        messages.append(Message(raw=raw, label=entry.label, group="trec", name=entry.name, date=parse_date(raw)))
    return messages


def _check_same_messages(full: list[_Entry], feedback: list[_Entry], where: str) -> None:
    """A feedback index lists full/index's messages in its order, with its labels."""
    if len(feedback) < len(full):
        raise CorpusNotFoundError(f"{where} lists {len(feedback):,} messages, full/index {len(full):,}")
    for number, (ours, theirs) in enumerate(zip(full, feedback), 1):
        if (ours.label, ours.name) != (theirs.label, theirs.name):
            raise CorpusNotFoundError(f"{where}: line {number} is {theirs.label} {theirs.name}, "
                                      f"full/index says {ours.label} {ours.name}")


def _parse_index(text: bytes, where: str, limit: int | None, kind: str) -> list[_Entry]:
    """The lines of ``KIND/index``: ``spam|ham PATH``, or in a feedback index also
    ``Spam|Ham PATH`` (the label is not given to the filter)."""
    labels = ("spam", "ham") if kind == "full" else ("spam", "ham", "Spam", "Ham")
    entries = []
    for number, line in enumerate(text.decode("ascii", "replace").splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2 or parts[0] not in labels:
            raise CorpusNotFoundError(f"{where}: line {number} of {kind}/index is not '{'|'.join(labels)} PATH': "
                                      f"{line[:80]!r}")
        entries.append(_Entry(parts[0].lower(), PurePosixPath(parts[1]).name, parts[0].islower()))
        if limit is not None and len(entries) == limit:
            break
    if not entries:
        raise CorpusNotFoundError(f"{where}: {kind}/index lists no message")
    return entries


def _read_corpus(source: Path, limit: int | None, kinds: tuple[str, ...], *, data: bool = True) -> _Corpus:
    """The indexes of ``kinds`` that the folder or archive holds, and (``data``) the files
    full/index lists; CorpusNotFoundError when full/index is wanted and missing."""
    corpus = _read_folder(source, limit, kinds, data) if source.is_dir() else _read_archive(source, limit, kinds, data)
    if "full" in kinds and "full" not in corpus.indexes:
        what = "folder" if source.is_dir() else "archive"
        raise CorpusNotFoundError(f"{str(source)!r} has no full/index: not a TREC corpus {what}")
    return corpus


def _read_folder(folder: Path, limit: int | None, kinds: tuple[str, ...], data: bool) -> _Corpus:
    indexes = {kind: _parse_index((folder / kind / "index").read_bytes(), str(folder), limit, kind)
               for kind in kinds if (folder / kind / "index").is_file()}
    files = {}
    if data and "full" in indexes:
        for entry in indexes["full"]:
            file = folder / "data" / entry.name
            if file.is_file():
                files[entry.name] = file.read_bytes()
    return _Corpus(indexes, files)


def _read_archive(archive: Path, limit: int | None, kinds: tuple[str, ...], data: bool) -> _Corpus:
    """One streaming pass: the indexes and the data files (the index may come after them;
    when it comes first, as in the corpus's own archive, only the files it lists are kept
    and the pass ends once they are all read)."""
    texts: dict[str, bytes] = {}
    files: dict[str, bytes] = {}
    wanted: set[str] | None = None  # the files full/index lists, once it is read
    try:
        with tarfile.open(archive, "r|*") as tar:
            for member in tar:
                if not member.isfile():
                    continue
                parts = PurePosixPath(member.name).parts
                if len(parts) >= 2 and parts[-1] == "index" and parts[-2] in kinds:
                    texts[parts[-2]] = _extract(tar, member)
                    if parts[-2] == "full" and data:
                        wanted = {entry.name for entry in _parse_index(texts["full"], str(archive), limit, "full")}
                        files = {name: raw for name, raw in files.items() if name in wanted}
                elif (data and len(parts) >= 2 and parts[-2] == "data" and parts[-1].startswith("inmail.")
                      and (wanted is None or parts[-1] in wanted)):
                    files[parts[-1]] = _extract(tar, member)
                if wanted is not None and len(files) == len(wanted) and texts.keys() == set(kinds):
                    break
    except (tarfile.TarError, OSError, EOFError) as error:
        raise CorpusNotFoundError(f"{str(archive)!r} is not a readable archive: {error}") from None
    return _Corpus({kind: _parse_index(text, str(archive), limit, kind) for kind, text in texts.items()}, files)


def _extract(tar: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    handle = tar.extractfile(member)
    return b"" if handle is None else handle.read()
