"""The lessons and snapshots of every served model in Redis (``streamnb serve --store redis://...``).

Several hosts serve the same users; each keeps the models it serves in memory and applies
every model's lessons in the order Redis gives them, so hosts that applied the same lessons
hold byte-identical models (:mod:`streamnb.service.shared` applies them; this module only
moves bytes). Per model (its name: the user's file stem, :func:`streamnb.service.names.file_stem`,
or ``@site`` for the site model), three keys:

    streamnb:{<name>}:lessons   a stream; each entry one lesson: action (learn, forget),
                                label, the SHA-256 of the message, the message, and the
                                origin (which host's TELL, for its reply)
    streamnb:{<name>}:snapshot  a hash: the model's bytes (``model``), the id of the last
                                entry they include (``id``; ``0-0``: none), and the id below
                                which the stream was trimmed (``trimmed``)
    streamnb:{<name>}:lease     the lease of the host writing the snapshot (SET NX PX)

A TELL's entries (the user's stream and the site model's) go in one MULTI/EXEC, so both or
neither are there. A snapshot at entry S trims the stream behind the snapshot before it
(``XTRIM MINID``): a host whose model includes an entry at or after that one reads on from
the stream, one behind it reads the snapshot again. Every error of Redis or of the connection
(refused, reset, timed out, Redis loading its file, out of memory, a read-only replica) is a
:class:`StoreUnavailable`; after one, the store is not tried again for :data:`RETRY_SECONDS`,
so that checks served from memory while it is down do not each wait for a connection timeout.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from ..errors import StreamNBError

log = logging.getLogger("streamnb.serve")

# After a failure the store is not tried again for this long: every check meanwhile is served
# from memory at once instead of waiting for a connection (or its timeout) of its own.
RETRY_SECONDS = 1.0
# Seconds to connect, and to wait for a reply: a loopback or LAN round trip takes well under a millisecond.
CONNECT_TIMEOUT = 2.0
REPLY_TIMEOUT = 5.0
# Seconds a host holds a model's snapshot lease; writing a snapshot takes far less.
LEASE_SECONDS = 30.0
NO_ENTRY = "0-0"  # the position of a model that includes no entry of its stream


class StoreUnavailable(StreamNBError):
    """The lesson store cannot be reached, or did not answer (the reason is in the message)."""


class Entry(NamedTuple):
    """One entry of a model's stream: its id and its fields (bytes keys and values)."""

    id: str
    fields: dict[bytes, bytes]


class Marks(NamedTuple):
    """A model's snapshot as far as a host reading its stream needs it: the snapshot's
    position and the id below which the stream was trimmed (None: no snapshot)."""

    snapshot: str | None
    trimmed: str | None


class Snapshot(NamedTuple):
    """A model's bytes and the id of the last stream entry they include."""

    data: bytes
    position: str


def stream_id(text: str) -> tuple[int, int]:
    """A stream id ``<milliseconds>-<sequence>`` as a pair, for comparing two ids.

    >>> stream_id("1700000000000-3") < stream_id("1700000000001-0")
    True
    """
    milliseconds, _, sequence = text.partition("-")
    return int(milliseconds), int(sequence or 0)


def _text(value: Any) -> str | None:
    return None if value is None else value.decode("ascii") if isinstance(value, bytes) else str(value)


class RedisStore:
    """A Redis database holding the models' streams and snapshots (one client, shared by the
    event loop's tasks).

    Parameters
    ----------
    url
        ``redis://HOST:PORT/DB`` (``rediss://`` for TLS), as the redis library reads it.
    """

    def __init__(self, url: str) -> None:
        import redis.asyncio  # imported here: file mode never needs the redis library

        self.url = url
        self.client = redis.asyncio.from_url(
            url, socket_connect_timeout=CONNECT_TIMEOUT, socket_timeout=REPLY_TIMEOUT, decode_responses=False
        )
        self.reachable = True
        self.stale_checks = 0  # checks scored from memory while the store could not be reached
        self._retry_at = 0.0

    # -- keys --------------------------------------------------------------------------------------
    @staticmethod
    def key(name: str, part: str) -> str:
        """The key of a model's ``lessons``, ``snapshot`` or ``lease`` (the braces keep a model's
        keys in one slot of a Redis Cluster)."""
        return f"streamnb:{{{name}}}:{part}"

    # -- reachability --------------------------------------------------------------------------
    async def _call(self, operation: Callable[[], Awaitable[Any]]) -> Any:
        """Run one operation against Redis (not even tried within :data:`RETRY_SECONDS` of a
        failure); StoreUnavailable for any failure of the connection."""
        import redis.exceptions

        if not self.reachable and time.monotonic() < self._retry_at:
            raise StoreUnavailable(
                f"the lesson store {self.url} cannot be reached (tried again in at most {RETRY_SECONDS:g} s)"
            )
        try:
            result = await operation()
        except (redis.exceptions.RedisError, OSError) as error:  # unreachable, loading, out of memory, a replica ...
            self._lost(error)
            raise StoreUnavailable(
                f"the lesson store {self.url} cannot be reached: {' '.join(str(error).split()) or type(error).__name__}"
            ) from None
        if not self.reachable:
            self.reachable = True
            log.warning(
                "the lesson store %s is reached again: lessons are taken and models brought up to date", self.url
            )
        return result

    def _lost(self, error: BaseException) -> None:
        self._retry_at = time.monotonic() + RETRY_SECONDS
        if self.reachable:
            self.reachable = False
            log.error(
                "the lesson store %s cannot be reached (%s): checks are scored with the models in memory, "
                "which may be stale; TELLs are refused with 75 (to be told again later) until it is back",
                self.url,
                " ".join(str(error).split()) or type(error).__name__,
            )

    async def ping(self) -> None:
        """Reach the store once (at start).

        Raises
        ------
        StoreUnavailable
            It cannot be reached.
        """
        import redis.exceptions

        try:
            await self.client.ping()
        except (
            redis.exceptions.ConnectionError,
            redis.exceptions.TimeoutError,
            OSError,
            redis.exceptions.BusyLoadingError,
        ) as error:
            raise StoreUnavailable(
                f"the lesson store {self.url} cannot be reached: {' '.join(str(error).split()) or type(error).__name__}"
            ) from None

    async def close(self) -> None:
        """Close the connections."""
        await self.client.aclose()

    # -- lessons -------------------------------------------------------------------------------------
    async def append(self, entries: list[tuple[str, dict[str, bytes]]]) -> list[str]:
        """Add one entry to each model's stream, all of them or none (MULTI/EXEC).

        Parameters
        ----------
        entries
            (model name, fields) pairs.

        Returns
        -------
        list of str
            The entries' ids, in order: once this returns, Redis has them (written to its
            append-only file as its ``appendfsync`` says).

        Raises
        ------
        StoreUnavailable
            The store cannot be reached: nothing is known to be added.
        """
        pipe = self.client.pipeline(transaction=True)
        for name, fields in entries:
            pipe.xadd(self.key(name, "lessons"), fields)  # type: ignore[arg-type]  # (bytes values)
        return [_text(ident) or "" for ident in await self._call(pipe.execute)]

    async def read(self, name: str, after: str, count: int) -> tuple[Marks, list[Entry]]:
        """The snapshot's marks and up to ``count`` entries after ``after``, read atomically (a
        trim cannot come between the two).

        Raises
        ------
        StoreUnavailable
            The store cannot be reached.
        """
        pipe = self.client.pipeline(transaction=True)
        pipe.hmget(self.key(name, "snapshot"), ["id", "trimmed"])
        pipe.xrange(self.key(name, "lessons"), min=f"({after}", max="+", count=count)
        (snapshot, trimmed), entries = await self._call(pipe.execute)
        return Marks(_text(snapshot), _text(trimmed)), [
            Entry(_text(ident) or "", fields) for ident, fields in entries or []
        ]

    async def exists(self, name: str) -> bool:
        """Whether the model has a snapshot or lessons (a user without either has no model yet).

        Raises
        ------
        StoreUnavailable
            The store cannot be reached.
        """
        return bool(await self._call(lambda: self.client.exists(self.key(name, "snapshot"), self.key(name, "lessons"))))

    # -- snapshots -----------------------------------------------------------------------------------
    async def snapshot(self, name: str) -> Snapshot | None:
        """The model's snapshot, or None without one.

        Raises
        ------
        StoreUnavailable
            The store cannot be reached.
        """
        data, position = await self._call(lambda: self.client.hmget(self.key(name, "snapshot"), ["model", "id"]))
        if data is None or position is None:
            return None
        return Snapshot(data, _text(position) or NO_ENTRY)

    async def create(self, name: str, data: bytes) -> None:
        """The first snapshot of a new model (the model a new user starts with, at no entry),
        unless another host made one first: every host then starts from the same bytes.

        Raises
        ------
        StoreUnavailable
            The store cannot be reached.
        """
        key = self.key(name, "snapshot")
        pipe = self.client.pipeline(transaction=True)
        pipe.hsetnx(key, "model", data)
        pipe.hsetnx(key, "id", NO_ENTRY)
        pipe.hsetnx(key, "trimmed", NO_ENTRY)
        await self._call(pipe.execute)

    def lease(self, name: str) -> Any:
        """The lease of the host that writes the model's snapshot (``redis.asyncio.lock.Lock``:
        SET NX PX, released only by its holder, expiring after :data:`LEASE_SECONDS`)."""
        return self.client.lock(
            self.key(name, "lease"), timeout=LEASE_SECONDS, blocking=False, raise_on_release_error=False
        )

    async def hold(self, lease: Any) -> bool:
        """Try to take a lease at once: False if another host holds it.

        Raises
        ------
        StoreUnavailable
            The store cannot be reached.
        """
        return bool(await self._call(lambda: lease.acquire(blocking=False)))

    async def release(self, lease: Any) -> None:
        """Give a lease back (one that expired meanwhile is left to its new holder).

        Raises
        ------
        StoreUnavailable
            The store cannot be reached (the lease then expires by itself).
        """
        await self._call(lease.release)

    async def put_snapshot(self, name: str, data: bytes, position: str) -> bool:
        """Write the model's bytes at ``position`` unless the snapshot there is as new, and trim
        the stream behind the snapshot it replaces. Atomic (WATCH, MULTI/EXEC): a host whose
        lease expired while it wrote cannot put an older snapshot over a newer one.

        Returns
        -------
        bool
            Whether this snapshot was written.

        Raises
        ------
        StoreUnavailable
            The store cannot be reached (nothing written).
        """
        import redis.exceptions

        key = self.key(name, "snapshot")

        async def write() -> bool:
            async with self.client.pipeline(transaction=True) as pipe:
                await pipe.watch(key)
                current = _text(await pipe.hget(key, "id")) or NO_ENTRY
                if stream_id(current) >= stream_id(position):
                    return False
                pipe.multi()  # type: ignore[no-untyped-call]  # (redis declares it untyped)
                pipe.hset(key, mapping={"model": data, "id": position, "trimmed": current})
                pipe.xtrim(self.key(name, "lessons"), minid=current, approximate=False)
                try:
                    await pipe.execute()
                except redis.exceptions.WatchError:  # another snapshot came first
                    return False
                return True

        return bool(await self._call(write))
