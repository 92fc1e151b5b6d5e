"""One user's model file and journal on disk: the blocking half of a served model.

Everything here runs in a thread (``asyncio.to_thread``) while the event loop's side,
:class:`streamnb.service.users.UserModel`, holds the model's asyncio lock: the write lock
shared with other processes, reads, appends and fsyncs of the journal, atomic saves, and
the repair of files changed under the service (a model file deleted, replaced or damaged, a
journal deleted: nothing acknowledged is dropped, and a damaged file is set aside, never
read or deleted).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from ..errors import StreamNBError
from . import journal
from .journal import Lesson
from .names import shown
from .protocol import MODEL_SUFFIX, SITE_NAME, log
from .settings import Settings

# What a model keeps of the messages it observed since its last save, to observe them again
# in the files another process saved meanwhile (the oldest are let go beyond it); each kept
# message counts its bytes and KEPT_ENTRY_BYTES for its entry and verdict.
MAX_KEPT_OBSERVED_BYTES = 16 << 20
KEPT_ENTRY_BYTES = 512


class UserFiles:
    """One user's model file and journal, and the model in memory they make (the site model's
    too: it is one more user, :data:`streamnb.service.protocol.SITE_NAME`).

    The model in memory is the model file (SHA-256 ``digest``) plus the ``pending`` lessons
    of its journal, whose base is that digest, read up to ``journal_end``: lessons are
    journaled (and fsynced) first, then applied.

    Several processes may serve one model file (``streamnb serve --workers``, or two
    services on one folder). Each appends under the write lock, after reading what the
    others appended (:meth:`_follow_sync`), so its model in memory is always the file plus
    every record of the journal up to where it has read; a check reads the records appended
    since, without the lock. Whoever folds the journal replaces the model file, and the
    others read the files again.

    Who changed the files is told by their stamps. A streamnb writer (``streamnb learn``,
    another server) either appends to the journal or folds it when it replaces the model
    file, so both change. When only one of them changed otherwise while lessons are pending
    (the journal deleted or replaced, the model file replaced alone: ``cp``, ``rm``, a
    restore), the acknowledged lessons are put back (:meth:`_restore_sync`), never dropped.

    Parameters
    ----------
    user
        The user's name, as checked by :func:`streamnb.service.protocol.check_user`, or
        :data:`~streamnb.service.protocol.SITE_NAME` for the site model.
    path
        The user's model file, ``DIR/<user>.snb`` (:func:`streamnb.service.protocol.model_path`;
        :func:`~streamnb.service.protocol.site_model_path` for the site model).
    settings
        The server's settings: the model a new user starts with, the lock timeout.
    """

    def __init__(self, user: str, path: Path, settings: Settings) -> None:
        self.user = user
        # (by its file: a user may be named "@site" too, stored as %40site.snb)
        self.is_site = path.name == f"{SITE_NAME}{MODEL_SUFFIX}"
        self.who = "the site model" if self.is_site else f"user {shown(user)}"  # in the log
        self.path = path
        self.journal_path = journal.journal_path(path)
        self.settings = settings
        self.model: Any = None
        self.digest: str | None = None  # SHA-256 of the model file the memory state starts from
        self.file_stamp: tuple | None = None
        self.journal_fd: int | None = None
        self.journal_stamp: tuple | None = None
        # The journal whose records are in memory: which one (``journal.JournalTail.ident``;
        # None: none is), its inode, and the offset past the last record read. `save_first`:
        # nothing may be appended to it, the model is saved first: bytes that are no whole
        # record follow that offset, its base is a model file replaced or deleted under the
        # service (its lessons applied to this one), or it has no fold marks (v1).
        self.journal_ident: str | None = None
        self.journal_inode: int | None = None
        self.journal_end = 0
        # The keys of the journal's records applied (journal.Key), the last one's CRC.
        self.journal_seen: set[journal.Key] = set()
        self.journal_last: int | None = None
        self.save_first = False
        self.pending = 0  # lessons in the journal, not in the model file
        self.oldest_pending = 0.0
        # Messages observed (SpamFilter.observe) since the model was saved: in memory only,
        # never journaled (they are not lessons), saved with the model. Each is kept (message
        # -> the verdict it was delivered with), up to MAX_KEPT_OBSERVED_BYTES, to be observed
        # again when the files are read again before a save of ours (another process saved
        # them: --workers); a lesson about a message lets it go (its label came).
        self.observed = 0
        self.oldest_observed = 0.0
        self.kept_observed: OrderedDict[bytes, Any] = OrderedDict()
        self.kept_observed_bytes = 0
        self.owner = False  # the memory state was loaded under the write lock (not read without it)
        # An append or a save failed: the journal may end in a record that was never
        # acknowledged (torn, or not known to be on disk), so the model is saved before
        # another lesson is journaled; ``unconfirmed`` is the digest of a save that raised
        # and may have replaced the file all the same.
        self.must_save = False
        self.unconfirmed: str | None = None

    # -- blocking parts (run in a thread, with self.lock held) ----------------------------------
    def _held(self, timeout: float | None = None) -> Any:
        return journal.write_lock(self.path, self.settings.limits.lock_timeout if timeout is None else timeout)

    def _load_sync(self, create: bool, wait: bool = True) -> bool:
        """Load the file and its journal's lessons under the write lock (making the file if
        asked). The journal stays: its lessons are pending, folded with the next ones (or
        at once by :func:`streamnb.service.server.recover` when the service starts), since
        another process serving the model may be appending to it. False: no model file.
        ``wait=False``: ModelLockedError at once if another writer holds the lock (a check
        then reads without it: :meth:`_read_sync`)."""
        with self._held(None if wait else 0.0):
            if self._outside_change():
                self._restore_sync()
                return True
            if not self.path.exists():
                if not create:
                    return False
                self.settings.new_model().save(self.path)
                log.info("%s: new model %s", self.who, self.path)
            self._read_files(locked=True)
            self.owner = True
            if self.journal_ident is None:
                journal.remove_journal(self.path)  # none, or one already folded
                self.journal_stamp = None
            return True

    def _read_sync(self) -> bool:
        """The model file and its journal's lessons, read without the write lock and written
        nowhere (read-only serving; a check while another writer holds the lock). False: no
        model file. Safe without the lock: files are replaced whole, a journal names the file
        it follows, and a torn last record is dropped."""
        try:
            self._read_files(locked=False)
        except FileNotFoundError:
            return False
        self.owner = False
        return True

    def _read_files(self, locked: bool) -> None:
        """The model in memory made again from the model file and its journal: the journal's
        lessons when its base is this file, or a file replaced or deleted under the service
        (then the model is saved before anything is appended: ``save_first``); none when it
        was folded into this file already. Under the write lock (``locked``), a journal that
        cannot be read is set aside, kept for a person to look at, never deleted; without it,
        JournalError is raised."""
        model, digest, stamp = journal.read_model(self.path)
        try:
            contents = journal.read_journal(self.journal_path)
        except journal.JournalError as error:
            if not locked:
                raise  # nothing changed: the caller scores with the model last read
            log.error("%s: %s; set aside as %s", self.who, error, journal.set_aside(self.journal_path))
            contents = None
        if not locked and self.owner and self.pending and stamp == self.file_stamp \
                and (contents is None or contents.ident != self.journal_ident
                     or (self.journal_last is not None and (self.journal_end, self.journal_last) not in contents.keys)):
            # The journal holding the lessons in memory was deleted or replaced: only this
            # model has them now; kept until the repair under the write lock (_restore_sync).
            raise journal.JournalError(f"{self.journal_path} was changed or deleted under the service while "
                                       f"{self.pending} lessons wait in it")
        self._close_journal()
        self.model, self.digest, self.file_stamp = model, digest, stamp
        self._forget_journal()
        self.pending, self.observed, self.must_save, self.unconfirmed = 0, 0, False, None
        if contents is None:
            return
        self.journal_stamp = contents.stamp
        if contents.folded(digest):
            self._lessons_came(contents.lessons)  # (in this file: they let kept messages go all the same)
            return  # (removed under the write lock: _load_sync)
        if contents.base != digest:
            log.warning("%s: %s holds %d lessons acknowledged for a model file that was replaced or deleted under "
                        "the service; they are applied to %s", self.who, self.journal_path, len(contents.lessons),
                        self.path)
        elif contents.size > contents.end:
            log.warning("%s: %d bytes after the last intact record of %s dropped (a write interrupted by a crash)",
                        self.who, contents.size - contents.end, self.journal_path)
        journal.replay(model, contents.lessons, self.who)
        self._lessons_came(contents.lessons)
        self.pending, self.oldest_pending = len(contents.lessons), time.monotonic()
        self.journal_ident, self.journal_inode, self.journal_end = contents.ident, contents.stamp[0], contents.end
        self.journal_seen = set(contents.keys)
        self.journal_last = next((crc for end, crc in contents.keys if end == contents.end), None)
        # Appended to only while it is this file's, whole, and has fold marks (v2).
        self.save_first = contents.base != digest or contents.size > contents.end or contents.version == 1

    def _follow_sync(self) -> bool:
        """Apply the lessons appended to the journal since this process last read it (by
        another process serving the model: :func:`streamnb.service.journal.follow_journal`).
        False, nothing changed, when the files changed otherwise (the model file replaced,
        the journal deleted, replaced or damaged): they are to be read again."""
        if journal.stamp(self.path) != self.file_stamp or self.digest is None:
            return False
        now = journal.stamp(self.journal_path)
        if now == self.journal_stamp or (now is None and self.journal_ident is None):
            self.journal_stamp = now  # (a journal already folded into this file, gone now)
            return True
        try:
            tail = journal.follow_journal(self.path, self.digest, self.journal_ident, self.journal_end,
                                          self.journal_last)
        except journal.JournalError:  # damaged: an outside change
            return False
        if tail is None:
            return False
        if tail.lessons:
            journal.replay(self.model, tail.lessons, self.who)
            self._lessons_came(tail.lessons)
            if not self.pending:
                self.oldest_pending = time.monotonic()
            self.pending += len(tail.lessons)
        self.journal_stamp, self.journal_ident, self.journal_inode = tail.stamp, tail.ident, tail.stamp[0]
        self.journal_end = tail.end
        self.journal_seen.update(tail.keys)
        if tail.keys:
            self.journal_last = tail.keys[-1][1]
        self.save_first = tail.torn or tail.version == 1
        return True

    def _keep_observed(self, message: bytes, verdict: Any) -> None:
        """Keep an observed message to observe it again (the oldest let go beyond the cap)."""
        if message in self.kept_observed:  # the model keeps the label it was first delivered as
            self.kept_observed.move_to_end(message)
            return
        self.kept_observed[message] = verdict
        self.kept_observed_bytes += len(message) + KEPT_ENTRY_BYTES
        while self.kept_observed_bytes > MAX_KEPT_OBSERVED_BYTES:
            oldest, _ = self.kept_observed.popitem(last=False)
            self.kept_observed_bytes -= len(oldest) + KEPT_ENTRY_BYTES

    def _lessons_came(self, lessons: list[Lesson]) -> None:
        """A lesson about a kept message: its label came, it is not observed again."""
        for lesson in lessons:
            if self.kept_observed.pop(lesson.message, None) is not None:
                self.kept_observed_bytes -= len(lesson.message) + KEPT_ENTRY_BYTES

    def _let_kept_go(self) -> None:
        self.kept_observed.clear()
        self.kept_observed_bytes = 0

    def _changed_on_disk(self) -> bool:
        """Has another writer replaced the model file or written to the journal since we last read them?"""
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
                model, digest, _ = journal.read_model(self.path)
            except FileNotFoundError:
                log.warning("%s: %s was deleted under the service; written back with its %d acknowledged "
                            "lessons", self.who, self.path, self.pending)
            except (OSError, StreamNBError) as error:
                aside = journal.set_aside(self.path)
                log.error("%s: %s cannot be read (%s); set aside as %s and written back from memory with "
                          "its %d acknowledged lessons", self.who, self.path, error, aside, self.pending)
            else:
                if digest != self.unconfirmed:
                    # The journal read (its base is self.digest): its first `pending` records are
                    # the lessons in memory; a record after them was never applied here (an append
                    # that failed, or one another process made after the file was replaced).
                    lessons = journal.pending_lessons(self.path, self.digest or "")[: self.pending]
                    journal.replay(model, lessons, self.who)
                    self.model = model
                    log.warning("%s: %s was replaced under the service; its %d acknowledged lessons are "
                                "applied to the new file", self.who, self.path, len(lessons))
        else:
            # Records other processes serving the model added that this one has not applied:
            # after where it stopped reading, or in a journal one made after this one was lost.
            lessons, damaged = journal.salvage(self.path, self.digest or "", self.journal_inode, self.journal_end,
                                               self.journal_seen)
            journal.replay(self.model, lessons, self.who)
            log.warning("%s: %s was changed or deleted under the service; the model is saved with its %d "
                        "acknowledged lessons", self.who, self.journal_path, self.pending + len(lessons))
            if damaged:
                log.error("%s: %s is not a journal any more; set aside as %s", self.who, self.journal_path,
                          journal.set_aside(self.journal_path))
        self._save_sync()

    def _save_sync(self) -> None:
        """Write the model in memory to its file, then drop the journal (under the write lock)."""
        from ..persist import dumps

        data = dumps(self.model)
        digest = hashlib.sha256(data).hexdigest()
        self._close_journal()
        self.must_save, self.unconfirmed = True, digest  # until the journal is gone
        # A crash after the file is written leaves the journal marked folded into it.
        journal.save_folded(self.path, data, digest)
        self.digest, self.file_stamp = digest, journal.stamp(self.path)
        self._forget_journal()
        self.pending, self.observed, self.must_save, self.unconfirmed = 0, 0, False, None
        self._let_kept_go()

    def _append_sync(self, lessons: list[Lesson]) -> bool:
        """Journal the lessons durably; False (nothing written) if another writer changed the files."""
        with self._held():
            try:
                if self._follow_sync():
                    pass
                elif self._outside_change():
                    self._restore_sync()
                else:
                    return False
                if self.must_save or self.save_first:  # never after a record not whole, nor to another file's
                    self._save_sync()
            except OSError:
                raise
            except Exception as error:  # the model's own save failed: the lesson cannot be made durable
                raise OSError(f"the model could not be saved before the lesson was journaled: "
                              f"{type(error).__name__}: {' '.join(str(error).split())}") from error
            if self.journal_fd is None:
                assert self.digest is not None  # set with the model this journal follows
                self.journal_fd = (journal.create_journal(self.path, self.digest) if self.journal_ident is None
                                   else journal.open_journal(self.path))
            start = os.fstat(self.journal_fd).st_size  # under the lock nobody else appends
            try:
                journal.append_lessons(self.journal_fd, lessons)
            except OSError:
                # Not acknowledged, but perhaps (partly) written: nothing more goes after it.
                self.must_save = True
                self._close_journal()
                raise
            finally:
                self.journal_stamp = journal.stamp(self.journal_path)
            # Under the lock nobody else appends: the journal ends with these lessons.
            if self.journal_ident is None:  # made now
                self.journal_ident = journal.ident_of(self.path)
            keys = journal.record_keys(lessons, start)
            self.journal_seen.update(keys)
            self.journal_inode, self.journal_end, self.journal_last = os.fstat(self.journal_fd).st_ino, *keys[-1]
            return True

    def _fold_sync(self, wait: bool = True) -> bool:
        """Save the model with its lessons, then drop the journal; False if the files changed under us.
        ``wait=False``: ModelLockedError at once if another writer holds the lock."""
        with self._held(None if wait else 0.0):
            if self._follow_sync():
                self._save_sync()
                return True
            if self._outside_change():
                self._restore_sync()
                return True
            return False

    def _forget_journal(self) -> None:
        """No journal read (the model in memory is the model file's alone, for now)."""
        self.journal_stamp, self.journal_ident, self.journal_inode, self.journal_end = None, None, None, 0
        self.journal_seen, self.journal_last, self.save_first = set(), None, False

    def _close_journal(self) -> None:
        if self.journal_fd is not None:
            os.close(self.journal_fd)
            self.journal_fd = None
