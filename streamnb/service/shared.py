"""A model served by several hosts: its lessons in a Redis stream, applied in stream order
(``streamnb serve --store redis://HOST:PORT/DB``; the keys: :mod:`streamnb.service.redis_store`).

Every model is deterministic given the order of its lessons (naive Bayes' counts, logistic
regression's steps, the ledger's decisions), so hosts that apply one model's stream in the
stream's order hold byte-identical models: state machine replication, the stream being the
log. What a host does with a model:

- **a check** first brings the model up to date (under the model's lock: the entries after the
  one it includes, read and applied in order; the user's, then the site model's), then scores.
  So a check on any host scores with every lesson acknowledged before it began. When the store
  cannot be reached, the check is scored with the model in memory (the log says once that the
  models may be stale, ``streamnb_store_reachable`` is 0 and ``streamnb_stale_checks_total``
  counts them); a model never loaded is "unsure" (``STREAMNB_UNSCORED``), as in file mode.
- **a TELL** adds the lesson to the user's stream and to the site model's in one MULTI/EXEC,
  with the message's SHA-256 and an origin token of this host's, then brings both models up
  to date: the reply (``DidSet`` or not, a refusal) is what applying that entry did, in the
  stream's order. It is acknowledged only once Redis has accepted it; when Redis cannot be
  reached it is answered 75 (EX_TEMPFAIL: spamc and mail servers retry), nothing added.
  The same message taught through two hosts at once is two entries: the ledger makes the
  second a no-op on every host alike (a message learned under the same label is left alone,
  under the other one it moves, as in file mode).
- **a snapshot** is written by one host at a time (a lease in Redis), every
  ``--snapshot-every`` lessons or ``--snapshot-seconds``: the model's bytes and the id of the
  last entry they include, the stream trimmed behind the snapshot before it. A host that
  starts, comes back after ``kill -9``, loads a user for the first time, or finds its model
  behind the trimmed part, reads the snapshot and applies the entries after it. The
  first snapshot of a new model is the bytes of the model a new user starts with, made once
  by the first host that needs it: every host starts from those same bytes.

What a model observes of the mail it checks (``--observe``) is not shared: it would make each
host's model depend on the mail that host checked, so a shared model observes nothing.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import os
import socket
import time
from typing import Any

from ..errors import StreamNBError
from ..filter.decision import Verdict
from . import journal
from .journal import Lesson
from .names import file_stem
from .protocol import EX_TEMPFAIL, SITE_NAME, ProtocolError, failure, log, unavailable
from .redis_store import NO_ENTRY, Entry, RedisStore, StoreUnavailable, stream_id
from .served import Evicted, ServedModel
from .settings import Settings
from .site import Scored

# What applying a lesson did: whether it changed the model, and the model's refusal (or None).
Outcome = tuple[bool, Exception | None]
# Entries read from a stream at a time: bounded memory for a backlog of large messages.
READ_COUNT = 64


class SharedModel(ServedModel):
    """One model as this host holds it: the bytes of a snapshot plus the stream's entries after
    it, applied in order (``position``: the id of the last one).

    ``lock`` (asyncio) serialises what is done with the model on this host (bringing it up
    to date, checks, snapshots); adding a lesson to the stream needs no lock (the stream
    orders the lessons of every host).

    Parameters
    ----------
    user
        The user's name, or :data:`~streamnb.service.protocol.SITE_NAME` for the site model.
    store
        The Redis store.
    settings
        The server's settings.
    site
        The model each lesson teaches too (the site model), or None.
    """

    _origins = itertools.count()
    _host = f"{socket.gethostname()}:{os.getpid()}:{os.urandom(4).hex()}"

    def __init__(
        self, user: str, store: RedisStore, settings: Settings, site: SharedModel | None = None, is_site: bool = False
    ) -> None:
        self.user = user
        self.is_site = is_site
        self.name = SITE_NAME if is_site else file_stem(user)  # a user named "@site" is %40site
        self.who = "the site model" if is_site else f"user {user!r}"
        self.store = store
        self.settings = settings
        self.site = site
        self.lock = asyncio.Lock()
        self.model: Any = None
        self.position = NO_ENTRY  # the id of the last entry of the stream the model includes
        self.snapshot = NO_ENTRY  # the position of the newest snapshot this host knows of
        self.pending = 0  # lessons applied since that snapshot
        self.oldest_pending = 0.0
        self.observed, self.oldest_observed = 0, 0.0  # (a shared model observes nothing)
        self.waiting: dict[bytes, asyncio.Future[Outcome]] = {}  # origin token -> this host's TELL's outcome
        self.closed = False

    # -- bringing the model up to date ----------------------------------------------------------
    async def _catch_up(self, create: bool) -> bool:
        """Apply every entry after ``position`` (reading the snapshot first when there is no
        model or it is behind the trimmed part of the stream); call with the lock held.

        Returns
        -------
        bool
            False when the model has neither snapshot nor lessons (and ``create`` is false).

        Raises
        ------
        StoreUnavailable
            The store cannot be reached (the model stays as it was, or as far as it got).
        """
        while True:
            marks, entries = await self.store.read(self.name, self.position, READ_COUNT)
            if self.model is not None and marks.snapshot is None:
                # Its data lost (a Redis without its append-only file) or deleted: what this host
                # holds, no other can read, so it serves what the store holds, as they do.
                log.error(
                    "%s: the lesson store holds no snapshot of it any more (its data lost or deleted); "
                    "the model in memory is dropped for the store's",
                    self.who,
                )
                self.model, self.position, self.snapshot, self.pending = None, NO_ENTRY, NO_ENTRY, 0
                continue
            behind = marks.trimmed is not None and stream_id(self.position) < stream_id(marks.trimmed)
            if self.model is None or behind:
                if not await self._load(create or bool(entries)):
                    return False
                continue
            if marks.snapshot is not None and stream_id(marks.snapshot) > stream_id(self.snapshot):
                self.snapshot, self.pending = marks.snapshot, 0  # another host wrote one
            if entries:
                await self._apply(entries)
            if len(entries) < READ_COUNT:
                return True

    async def _load(self, create: bool) -> bool:
        """The model from its snapshot (made from the model a new user starts with, if asked
        and there is none); False without one."""
        from ..persist import dumps, loads

        found = await self.store.snapshot(self.name)
        if found is None:
            if not create:
                return False
            await self.store.create(self.name, await asyncio.to_thread(dumps, self.settings.new_model()))
            found = await self.store.snapshot(self.name)
            if found is None:
                raise StoreUnavailable(f"the lesson store {self.store.url} lost the snapshot of {self.who} just made")
        self.model = await asyncio.to_thread(loads, found.data)
        self.position = self.snapshot = found.position
        self.pending = 0
        log.info("%s: loaded its snapshot at %s from %s", self.who, found.position, self.store.url)
        return True

    async def _apply(self, entries: list[Entry]) -> None:
        """Apply entries in order (in a thread: a backlog may take a while), then give this
        host's TELLs among them their outcome."""
        outcomes: list[tuple[bytes, Outcome]] = []
        if not self.pending:
            self.oldest_pending = time.monotonic()
        try:
            await asyncio.to_thread(self._apply_sync, entries, outcomes)
        finally:  # (whatever stopped it: the entries applied have their outcome and are counted)
            for origin, outcome in outcomes:
                future = self.waiting.pop(origin, None)
                if future is not None and not future.done():
                    future.set_result(outcome)

    def _apply_sync(self, entries: list[Entry], outcomes: list[tuple[bytes, Outcome]]) -> None:
        """Apply each entry, then move ``position`` past it: an entry is applied once, even
        when something unforeseen stops the batch."""
        for entry in entries:
            lesson = _lesson(entry)
            outcome: Outcome
            if lesson is None:  # the same on every host: each one skips it
                log.error("%s: entry %s of its stream is not a lesson (damaged?); skipped", self.who, entry.id)
                outcome = (False, StreamNBError(f"entry {entry.id} of the lesson stream is damaged"))
            else:
                try:
                    outcome = (journal.apply_lesson(self.model, lesson), None)
                except (StreamNBError, ValueError, TypeError) as error:  # refused on every host alike
                    outcome = (False, error)
                    if entry.fields.get(b"origin") not in self.waiting:
                        log.warning(
                            "%s: a %s lesson was refused (as on every host): %s",
                            self.who,
                            lesson.action,
                            failure(error),
                        )
            self.position = entry.id
            self.pending += 1
            outcomes.append((entry.fields.get(b"origin", b""), outcome))

    # -- what the server asks -------------------------------------------------------------------
    async def classify(self, raw: bytes, explain: bool) -> Scored | None:
        """The model's verdict, brought up to date first; None when the user has no model.

        Raises
        ------
        StoreUnavailable
            The store cannot be reached and no model was loaded before.
        """
        async with self.lock:
            try:
                found = await self._catch_up(create=False)
            except StoreUnavailable:
                if self.model is None:
                    raise
                self.store.stale_checks += 1
                found = True
            if not found:
                return None
            return self.scored(raw, explain)

    async def observe(self, raw: bytes, verdict: Verdict) -> None:
        """Nothing: what one host observed would make its model unlike the others' (see the
        module docstring)."""

    async def ready_to_learn(self) -> None:
        """Load the model (making its first snapshot if need be) and check it takes lessons.

        Raises
        ------
        ProtocolError
            The model has no ledger (69), or the store cannot be reached (75).
        Evicted
            The model left the cache.
        """
        if self.model is not None and getattr(self.model, "ledger", None) is not None and not self.closed:
            return
        async with self.lock:
            if self.closed:
                raise Evicted()
            try:
                await self._catch_up(create=True)
            except StoreUnavailable as error:
                raise _retry(error) from None
            if getattr(self.model, "ledger", None) is None:
                whose = "the site model" if self.is_site else f"the model of {self.who}"
                raise unavailable(
                    f"{whose} has no ledger, which TELL needs to learn a message once (train it with --ledger)"
                )

    async def tell(self, lesson: Lesson) -> bool:
        """Add the lesson to the stream (the site model's too), then apply it in stream order.

        Returns
        -------
        bool
            Whether the lesson changed the model, or the site model it teaches too.

        Raises
        ------
        ProtocolError
            75 when the store cannot be reached (nothing acknowledged); 69 for a model without
            a ledger.
        StreamNBError, ValueError, TypeError
            The model refused the lesson (it is in the stream, and refused the same way by every host).
        Evicted
            The model left the cache before the lesson was added.
        """
        models = [self] + ([self.site] if self.site is not None else [])
        for model in reversed(models):  # the site model first: a lesson it cannot take adds nothing
            await model.ready_to_learn()
        origin = f"{self._host}:{next(self._origins)}".encode()
        fields = {
            "action": lesson.action.encode(),
            "label": (lesson.label or "").encode(),
            "digest": hashlib.sha256(lesson.message).hexdigest().encode(),
            "message": lesson.message,
            "origin": origin,
        }
        futures = [model._expect(origin) for model in models]
        try:
            await self.store.append([(model.name, fields) for model in models])
            for model in models:
                async with model.lock:
                    await model._catch_up(create=True)
        except StoreUnavailable as error:
            raise _retry(error) from None
        finally:
            for model in models:
                model.waiting.pop(origin, None)
        # Not done only when a snapshot that includes the entry was read instead of the entry
        # (two snapshots between the append and the read): applied, its outcome unknown.
        outcomes = [future.result() if future.done() else (False, None) for future in futures]
        (changed, refusal), (site_changed, site_refusal) = outcomes[0], outcomes[-1]
        if refusal is not None:
            raise refusal
        if site_refusal is not None and len(models) > 1:
            log.warning("%s: its model took a lesson the site model refused: %s", self.who, failure(site_refusal))
        for model in models:
            if model.pending >= self.settings.snapshot_every:
                await model.fold()
        return changed or (site_changed if len(models) > 1 else False)

    def _expect(self, origin: bytes) -> asyncio.Future[Outcome]:
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self.waiting[origin] = future
        return future

    async def fold(self, wait: bool = True) -> None:
        """Write the model's snapshot, unless another host holds the lease or wrote one as new
        (a failure is logged: the lessons are in the stream all the same). ``wait`` is file
        mode's; a snapshot never waits for another host."""
        async with self.lock:
            await self._snapshot()

    async def _snapshot(self) -> bytes | None:
        """Write the snapshot if the model has lessons the last one lacks and no other host holds
        the lease; the model's bytes when they were made, None otherwise (with the lock held)."""
        from ..persist import dumps

        if self.model is None or not self.pending:
            return None
        lease = self.store.lease(self.name)
        data = None
        try:
            if not await self.store.hold(lease):  # another host is writing it
                self.oldest_pending = time.monotonic()
                return None
            try:
                data = await asyncio.to_thread(dumps, self.model)
                written = await self.store.put_snapshot(self.name, data, self.position)
            finally:
                await self.store.release(lease)
        except StoreUnavailable as error:
            self.oldest_pending = time.monotonic()
            log.warning("%s: its snapshot was not written (tried again later): %s", self.who, error)
            return data
        self.snapshot, self.pending = self.position, 0
        if written:
            log.info("%s: snapshot of %d bytes written at %s", self.who, len(data), self.position)
        return data

    async def close(self) -> int:
        """Bring the model up to date, write its snapshot if it has lessons the last one lacks,
        log its position and the SHA-256 of its bytes (hosts at one position hold the same
        bytes), and let go (eviction, shutdown).

        Returns
        -------
        int
            0: every acknowledged lesson is in the store, whatever happens here.
        """
        from ..persist import dumps

        async with self.lock:
            self.closed = True
            if self.model is None:
                return 0
            try:
                await self._catch_up(create=False)
            except StoreUnavailable as error:
                log.warning("%s: not brought up to date before letting go: %s", self.who, error)
            data = await self._snapshot()
            if data is None:
                data = await asyncio.to_thread(dumps, self.model)
            digest = hashlib.sha256(data).hexdigest()
            log.info("%s: let go at %s, model sha256:%s", self.who, self.position, digest)
            return 0


def _lesson(entry: Entry) -> Lesson | None:
    """The lesson an entry holds; None for one that is not (a field missing or wrong, a message
    whose digest is not the one recorded)."""
    fields = entry.fields
    try:
        action = fields[b"action"].decode("ascii")
        label = fields[b"label"].decode("utf-8") or None
        message, digest = fields[b"message"], fields[b"digest"].decode("ascii")
    except (KeyError, UnicodeDecodeError):
        return None
    if action not in (journal.LEARN, journal.FORGET) or hashlib.sha256(message).hexdigest() != digest:
        return None
    return Lesson(action, label, message)


def _retry(error: StoreUnavailable) -> ProtocolError:
    """A TELL the store could not take: 75, which spamc and mail servers retry."""
    return ProtocolError(EX_TEMPFAIL, f"Service Unavailable: ({error}; try again)")


async def has_model(store: RedisStore, user: str) -> bool:
    """Whether a user has a model in the store (a snapshot or lessons).

    Raises
    ------
    StoreUnavailable
        The store cannot be reached.
    """
    return await store.exists(file_stem(user))
