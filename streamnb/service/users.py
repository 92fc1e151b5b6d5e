"""The users' models: each one's model file and journal, loaded, told and folded.

Users: the ``User`` header picks ``DIR/<user>.snb`` (``default`` without one). Any name is
served, under a file name that encodes it (:mod:`streamnb.service.names`), so no path ever
leaves DIR (symbolic links are refused too). A
user's model file is made at the first TELL, with the default filter of ``streamnb train``
plus a ledger; before that, that user's messages get the site model's verdict
(:mod:`streamnb.service.site`; unsure without one) and nothing is written for the user. At
most ``--max-models`` models stay loaded, holding at most ``--max-memory`` bytes together
(least recently used out); the site model
(``DIR/@site.snb``) is one more model, made at the first TELL, that always stays.

Durability (see :mod:`streamnb.service.journal`): one writer per model (the model file's lock, shared
with ``streamnb learn``); each TELL is appended to ``DIR/<user>.snb.journal`` and to the site
model's journal and fsynced before the reply (TELLs arriving together share one fsync), and
only then acknowledged; a lesson that cannot be made durable (a full disk, an fsync that
fails) is answered 74 and not applied, and the model is saved before anything more is
appended to that journal. The journal is folded into the model file by an atomic save every
``--snapshot-every`` lessons or ``--snapshot-seconds``, once it holds 64 MiB, when a model
leaves the cache, and on SIGTERM/SIGINT (then the server exits; with exit code 3 if a fold
failed, the lessons staying in their journals). What a model observed of the mail it checked
is kept in memory and saved with it (then, or ``--snapshot-seconds`` after the first of it):
never journaled, it is lost in a crash. At start every journal left by a crash is folded.
After a clean stop ``DIR/<user>.snb`` loads with ``streamnb.load`` and holds every
acknowledged lesson. Lessons another process serving the folder (``--workers``) appended to a
journal are applied before the next check or append (:class:`~streamnb.service.userfiles.UserFiles`);
a file changed by another writer otherwise (``streamnb learn`` on it, a fold) is noticed and reloaded; a model file
deleted, replaced or damaged by anything else while lessons wait in the journal is made good
(:class:`UserModel`): nothing acknowledged is dropped, and a damaged file is set aside, never
read or deleted.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from pathlib import Path

from ..errors import StreamNBError
from ..filter.decision import Verdict
from . import journal
from .journal import Lesson, ModelLockedError
from .protocol import SITE_NAME, failure, log, model_path, site_model_path, unavailable
from .redis_store import RedisStore
from .served import Evicted, ServedModel
from .settings import Settings
from .shared import SharedModel, has_model
from .site import Scored
from .userfiles import UserFiles

# A journal holds whole messages: fold it once it is this big, whatever --snapshot-every says,
# so that a burst of large messages neither fills the disk nor makes the replay at start slow.
JOURNAL_FOLD_BYTES = 64 << 20


# How often a save of what a model observed reads the files again after another process saved
# them first, before it leaves the rest to the next save.
READ_AGAIN_TO_SAVE = 3


class UserModel(ServedModel, UserFiles):
    """One user's model in memory: the only writer of DIR/<user>.snb in this process. The site
    model (DIR/@site.snb) is one more: the user :data:`~streamnb.service.protocol.SITE_NAME`.

    ``lock`` (asyncio) serialises everything done with the model (checks, the messages they
    observe, lessons); blocking file work (the write lock shared with other processes, appends
    and fsyncs, saves: :class:`UserFiles`) runs in a thread while the caller holds it.

    A user's model with a ``site`` teaches it each of its lessons: a lesson is acknowledged once
    it is durable in both journals, and applied to each model in the order of its journal.
    While it waits for the site model's journal, the user's lock is held (the user's lessons
    keep their order); the site model never waits for a user's lock, so the two cannot wait
    for each other.

    Parameters
    ----------
    user
        The user's name, as checked by :func:`streamnb.service.protocol.check_user`.
    path
        The user's model file, ``DIR/<user>.snb``.
    settings
        The server's settings.
    site
        The model each lesson teaches too (the site model), or None.
    """

    def __init__(self, user: str, path: Path, settings: Settings, site: UserModel | None = None) -> None:
        super().__init__(user, path, settings)
        self.site = site
        self.lock = asyncio.Lock()
        self.queue: list[tuple[Lesson, asyncio.Future]] = []
        self.committing = False
        self._committer: asyncio.Future | None = None
        self.closed = False

    async def _reload(self, create: bool) -> bool:
        if self.settings.read_only:
            return await asyncio.to_thread(self._read_sync)
        return await asyncio.to_thread(self._load_sync, create)

    async def current(self, create: bool) -> bool:
        """Make sure the model is loaded and is what the files say (call with self.lock held);
        a lesson also needs a state loaded under the write lock.

        Parameters
        ----------
        create
            For a lesson: make the model file if there is none, and load under the write lock.

        Returns
        -------
        bool
            False when there is no model file (and ``create`` is false).

        Raises
        ------
        OSError, StreamNBError
            The files cannot be read (``ModelFormatError``), or their lock taken
            (``ModelLockedError``).
        """
        if self.model is None or (create and not self.owner) or not await self._followed():
            return await self._reload(create)
        return True

    async def _followed(self) -> bool:
        """True when the model in memory is what the files say, after applying the lessons
        another process appended to the journal (:meth:`_follow_sync`); False: they are to be
        read again."""
        return not self._changed_on_disk() or await asyncio.to_thread(self._follow_sync)

    async def classify(self, raw: bytes, explain: bool) -> Scored | None:
        """(verdict, ready, class counts), or None when the user has no model file yet.

        A check never waits for another writer: while one holds the write lock (or none can
        be taken, on a file system gone read-only), the files are read without it. When they
        cannot be read at all, the model last read is used (logged); with none, the error is
        raised (the caller answers "unsure": :meth:`streamnb.service.server.Server._check`).
        ``raw`` and ``explain``: as for :meth:`~streamnb.service.served.ServedModel.scored`.

        Returns
        -------
        Scored or None
            (verdict, whether the model has learned ``min_per_class`` messages of each class,
            the model's class counts); None when the user has no model file.

        Raises
        ------
        OSError, StreamNBError
            The files cannot be read, and no model was read before.
        """
        async with self.lock:
            try:
                if self.model is None and not self.path.exists():
                    # A stat on the loop: a model that has no file (the site model, often)
                    # costs every check neither a thread nor the write lock.
                    return None
                if self.settings.read_only:
                    found = await self.current(create=False)
                elif self.model is not None and await self._followed():
                    found = True
                else:
                    try:
                        found = await asyncio.to_thread(self._load_sync, False, False)
                    except (ModelLockedError, journal.LockFileError):
                        found = await asyncio.to_thread(self._read_sync)
            except (OSError, StreamNBError) as error:
                if self.model is None:
                    raise
                log.warning("%s: its model files cannot be read now (%s); scoring with the model last read",
                            self.who, error)
                found = True
            if not found:
                return None
            return self.scored(raw, explain)

    async def observe(self, raw: bytes, verdict: Verdict) -> None:
        """The message was checked and delivered with this verdict, no label yet
        (:meth:`SpamFilter.observe <streamnb.filter.spam_filter.SpamFilter.observe>`): the model
        learns from it in memory, saved with the model (by a fold, a stop, or once
        ``--snapshot-seconds`` old), never journaled: it is not an acknowledged lesson, and a
        crash loses what was observed since the last save. Nothing for a model not loaded
        (the user has none), read-only serving, or a model without ``observe_one``.

        Parameters
        ----------
        raw
            The message, as checked (the same object: the filter reuses its reading).
        verdict
            The verdict the check answered.
        """
        async with self.lock:
            if self.model is None or self.closed or self.settings.read_only \
                    or getattr(self.model, "observe_one", None) is None:
                return
            self.spam_filter().observe(raw, verdict)
            if not self.observed:
                self.oldest_observed = time.monotonic()
            self.observed += 1
            if self.model.learned_as(raw) is None:  # a message learned is not observed: nothing to do again
                self._keep_observed(raw, verdict._replace(evidence=[]))  # its label is what is observed again

    def _read_files(self, locked: bool) -> None:
        """The files read again (:meth:`UserFiles._read_files`), then the messages observed since
        the last save observed again: the files may be another process's save, which did not
        hold them (``--workers``); one the file holds already changes nothing
        (:meth:`SpamFilter.observe <streamnb.filter.spam_filter.SpamFilter.observe>`)."""
        super()._read_files(locked)
        if not self.kept_observed:
            return
        again = 0
        try:
            spam_filter = self.spam_filter()
            for raw, verdict in self.kept_observed.items():
                spam_filter.observe(raw, verdict)
                again += 1
        except Exception as error:  # observations are not lessons: the files read stand
            log.warning("%s: the %d messages it observed since its last save could not be observed again in %s: %s",
                        self.who, len(self.kept_observed), self.path, failure(error))
            self._let_kept_go()
        self.observed = again

    async def tell(self, lesson: Lesson) -> bool:
        """Journal the lesson (fsynced), apply it, and say whether it changed the model (or
        the site model it teaches too).

        Lessons told together share one lock, append and fsync; each is acknowledged (this
        returns) only once it is on disk, in the site model's journal too.

        Parameters
        ----------
        lesson
            Learn a message as spam or ham, or forget it.

        Returns
        -------
        bool
            Whether the model changed (False: it already was that way).

        Raises
        ------
        ProtocolError
            The model (or the site model) has no ledger (69).
        OSError, ModelLockedError, JournalError, ModelFormatError
            The lesson could not be made durable (here or in the site model's journal), the
            lock could not be taken, or the files could not be read: nothing was acknowledged,
            and the lesson is not applied.
        StreamNBError, ValueError, TypeError
            The model refused the lesson (it is journaled, and refused again on replay). The
            site model's refusal of a lesson this model took is logged, not raised.
        """
        changed, refusal = await self._submit(lesson)
        if refusal is not None:
            raise refusal
        return changed

    async def _submit(self, lesson: Lesson) -> tuple[bool, Exception | None]:
        """Queue a lesson for the group commit: (changed, the model's refusal or None) once it
        is durable and applied; raises when it could not be made durable."""
        future = asyncio.get_running_loop().create_future()
        self.queue.append((lesson, future))
        if not self.committing:
            self.committing = True
            self._committer = asyncio.ensure_future(self._commit())  # kept: a task without a reference may vanish
        return await future

    async def ready_to_learn(self) -> None:
        """Load the model under the write lock (making its file if need be) and check it takes
        lessons: a user's lesson is refused before it is journaled when the site model would
        refuse it (no ledger, files that cannot be read or locked).

        Raises
        ------
        ProtocolError, OSError, ModelLockedError, StreamNBError, Evicted
            As :meth:`tell`, before anything is journaled.
        """
        if self.owner and not self.closed and getattr(self.model, "ledger", None) is not None:
            return  # loaded under the write lock, with a ledger: a change on disk is seen when it commits
        async with self.lock:
            if self.closed:
                raise Evicted()
            await self.current(create=True)
            self._check_ledger()

    def _check_ledger(self) -> None:
        if getattr(self.model, "ledger", None) is None:
            whose = "the site model" if self.is_site else f"the model of {self.who}"
            raise unavailable(f"{whose} has no ledger, which TELL needs to learn a message once (train it with "
                              "--ledger)")

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
                            future.set_exception(error if isinstance(error, Exception) else Evicted())
                    if not isinstance(error, Exception):
                        raise
        finally:
            self.committing = False

    async def _commit_batch(self, batch: list[tuple[Lesson, asyncio.Future]]) -> None:
        async with self.lock:
            if self.closed:
                raise Evicted()
            if self.site is not None:  # first: a lesson the site model cannot take changes nothing here
                await self.site.ready_to_learn()
            await self.current(create=True)
            self._check_ledger()
            lessons = [lesson for lesson, _ in batch]
            while not await asyncio.to_thread(self._append_sync, lessons):
                await self._reload(create=True)  # another writer changed the files: start from them
            if not self.pending:
                self.oldest_pending = time.monotonic()
            self.pending += len(lessons)
            at_site = await self._teach_site(lessons)
            unacknowledged = False
            for (lesson, future), site in zip(batch, at_site):
                if isinstance(site, BaseException):
                    # Journaled here but not durable in the site model's journal: not
                    # acknowledged, so not applied; the model is saved (without it) at once,
                    # and if that fails, before anything more is journaled.
                    self.must_save = unacknowledged = True
                    future.set_exception(site if isinstance(site, Exception) else Evicted())
                    continue
                try:
                    changed = journal.apply_lesson(self.model, lesson)
                except (StreamNBError, ValueError, TypeError) as error:
                    future.set_result((False, error))  # refused now, and again (the same way) on replay
                else:
                    if site[1] is not None:  # the client asked this user's model: it took the lesson
                        log.warning("%s: its model took a lesson the site model refused: %s", self.who,
                                    failure(site[1]))
                    future.set_result((changed or site[0], None))
            self._lessons_came(lessons)
            journal_bytes = self.journal_stamp[1] if self.journal_stamp else 0
            # A record left unacknowledged in the journal is counted in `pending` (which the
            # repair of a replaced model file replays): the save drops it with the journal.
            if unacknowledged or self.pending >= self.settings.snapshot_every or journal_bytes >= JOURNAL_FOLD_BYTES:
                await self._fold_locked()

    async def _teach_site(self, lessons: list[Lesson]) -> list:
        """Each lesson's outcome in the site model ((changed, refusal), or the exception that
        kept it from being durable there); (False, None) each without a site model."""
        if self.site is None:
            return [(False, None)] * len(lessons)
        return await asyncio.gather(*(self.site._submit(lesson) for lesson in lessons), return_exceptions=True)

    async def _fold_locked(self, wait: bool = True) -> None:
        """Save the model with its journaled lessons (then drop the journal), and with what it
        observed. A model read without the write lock is read again under it first (observing
        again what it observed). Under the lock, the save first applies what other processes
        journaled, or reads the files again when they were replaced (:meth:`_fold_sync`),
        observes again in them what it observed, and saves that. Never raises: a failure
        (of the files, or of the model's own save) is logged, the lessons stay in the journal.

        ``wait=False`` (the snapshot task): when another writer holds the write lock, give up
        at once and try again ``--snapshot-seconds`` later; waiting would hold ``self.lock``,
        and with it every check of this model (of every user's, for the site model)."""
        if self.model is None or self.settings.read_only or not (self.pending or self.observed):
            return
        try:
            if self.observed and not self.owner:
                # Read without the write lock (another writer held it): read again under it,
                # observing again what this model observed, for the save below to hold it.
                if not await asyncio.to_thread(self._load_sync, False, wait):
                    # no model file any more: observations are not lessons to write back
                    self.observed = 0
                    self._let_kept_go()
                    return
            for _ in range(READ_AGAIN_TO_SAVE):
                if await asyncio.to_thread(self._fold_sync, wait):
                    break
                # Another writer saved the files (folding our journal): read them again, with
                # what this model observed since its last save observed again; that is saved
                # into them now (it is in no file yet). The snapshot task does not wait here
                # either. A file deleted meanwhile is made again only for lessons.
                if not await asyncio.to_thread(self._load_sync, bool(self.pending or self.must_save), wait):
                    self.observed = 0
                    self._let_kept_go()
                    return
                if not (self.observed and self.owner):
                    break
        except ModelLockedError as error:
            if wait:
                self._fold_failed(error)
            else:  # the lessons are durable in the journal, the observations in memory: later will do
                self.oldest_pending = self.oldest_observed = time.monotonic()
                log.info("%s: another writer holds %s; its save is tried again in %g s", self.who, self.path,
                         self.settings.snapshot_seconds)
        except Exception as error:  # whatever failed (the files, or the model's own save), the others go on
            self._fold_failed(error)

    def _fold_failed(self, error: Exception) -> None:
        reason = failure(error)
        if self.pending:
            log.error("%s: could not fold %d lessons into %s (they stay in the journal): %s",
                      self.who, self.pending, self.path, reason)
        else:
            log.error("%s: could not save the %d messages it observed into %s (not lessons: lost if the "
                      "service stops before a save succeeds): %s", self.who, self.observed, self.path, reason)

    async def fold(self, wait: bool = True) -> None:
        """Fold the journal (and what the model observed) into the model file now (a failure is
        logged; the lessons stay); ``wait=False``: not if another writer holds the write lock
        (tried again later: :meth:`_fold_locked`)."""
        async with self.lock:
            await self._fold_locked(wait)

    async def close(self) -> int:
        """Fold and let go (eviction, shutdown); a TELL still queued is sent to a fresh entry.

        Returns
        -------
        int
            The lessons left in the journal (not folded: they are folded at the next start);
            0 when serving read-only (nothing is folded then).
        """
        async with self.lock:
            self.closed = True
            await self._fold_locked()
            self._close_journal()
            return 0 if self.settings.read_only else self.pending


Served = UserModel | SharedModel  # what the cache holds: a model of the models folder, or of the store


class ModelCache:
    """Loaded user models, least recently used out beyond ``max_models`` (or ``max_memory``
    bytes), and the site model (``site``: None without one), which stays. Each is a :class:`UserModel` (its file and
    journal in the models folder), or with a ``store`` a
    :class:`~streamnb.service.shared.SharedModel` (its stream and snapshots in Redis).

    Parameters
    ----------
    settings
        The server's settings: the models folder, ``max_models``, ``site`` and ``site_learns``.
    store
        The Redis store the models are shared through (``--store``), or None: the models folder.
    """

    def __init__(self, settings: Settings, store: RedisStore | None = None) -> None:
        self.settings = settings
        self.store = store
        self.entries: OrderedDict[str, Served] = OrderedDict()
        self.closing: set[asyncio.Task] = set()
        self.site: Served | None = None
        if settings.site:
            self.site = UserModel(SITE_NAME, site_model_path(settings.folder), settings) if store is None else \
                SharedModel(SITE_NAME, store, settings, is_site=True)

    def get(self, user: str) -> Served:
        """The user's model, loaded or not yet (the least recently used beyond ``max_models``,
        or ``max_memory`` bytes, is folded and let go, in the background).

        Parameters
        ----------
        user
            Whose model: a name :func:`streamnb.service.protocol.check_user` accepts.

        Returns
        -------
        UserModel or SharedModel
            The user's entry (its model is read by its first use).

        Raises
        ------
        ProtocolError
            An invalid user name (:func:`streamnb.service.protocol.model_path`).
        """
        entry = self.entries.get(user)
        if entry is not None:
            self.entries.move_to_end(user)
            return entry
        site = self.site if self.settings.site_learns else None
        if self.store is None:
            assert not isinstance(site, SharedModel)  # (made with the cache, of the same kind)
            entry = UserModel(user, model_path(self.settings.folder, user), self.settings, site)
        else:
            assert not isinstance(site, UserModel)
            entry = SharedModel(user, self.store, self.settings, site)
        self.entries[user] = entry
        while len(self.entries) > self.settings.max_models or self._over_memory():
            _, old = self.entries.popitem(last=False)
            task = asyncio.ensure_future(old.close())
            self.closing.add(task)
            task.add_done_callback(self.closing.discard)
        return entry

    def _over_memory(self) -> bool:
        """Do the users' models in memory hold more than ``max_memory`` bytes (the newest entry,
        just asked for, always stays)?"""
        cap = self.settings.max_memory
        if cap is None or len(self.entries) < 2:
            return False
        return sum(int(getattr(entry.model, "nbytes", 0)) + getattr(entry, "kept_observed_bytes", 0)
                   for entry in self.entries.values()) > cap

    async def has_model(self, user: str) -> bool:
        """Whether the user's model is loaded, or its file (its snapshot or lessons, with a store) exists.

        Parameters
        ----------
        user
            Whose model to look for (in memory first, then in the models folder or the store).

        Returns
        -------
        bool
            False: the user has no model yet (checks get an empty model's verdict).

        Raises
        ------
        StoreUnavailable
            With a store that cannot be reached, for a user whose model is not loaded.
        """
        if user in self.entries:
            return True
        if self.store is not None:
            return await has_model(self.store, user)
        return model_path(self.settings.folder, user).exists()

    def loaded(self) -> list[Served]:
        """Every model in the cache, and the site model.

        Returns
        -------
        list of UserModel or SharedModel
            The users' entries, then the site model's (when there is one).
        """
        return [*self.entries.values(), *([self.site] if self.site is not None else [])]

    async def close(self) -> int:
        """Fold and close every model: the users' first (a lesson under way waits for the site
        model's journal), then the site model.

        Returns
        -------
        int
            The lessons left in journals (folds that failed).
        """
        if self.closing:
            await asyncio.gather(*self.closing, return_exceptions=True)  # evicted: folded again when next loaded
        entries, self.entries = list(self.entries.values()), OrderedDict()
        left = sum([await entry.close() for entry in entries])
        return left + (await self.site.close() if self.site is not None else 0)
