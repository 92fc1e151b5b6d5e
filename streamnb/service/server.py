"""The server: the models folder checked, a crash's journals folded, connections answered.

A check never passes a message as clean because something failed: spamc, given an error
reply, passes the message on unmarked and exits 0 as for ham. A check is answered by the
user's model and the site model (:mod:`streamnb.service.site`), which then observe the
message. When one of them cannot be used (unreadable, damaged, a file system gone bad), the
reply is EX_OK with the verdict
"unsure" (score halfway between the cutoffs, ``X-StreamNB-Status: unsure``, the
``STREAMNB_UNSURE`` and ``STREAMNB_UNSCORED`` symbols) and the cause goes to the log. A
check never waits for another writer's lock: while one holds it, the files are read without
it (safe: they are replaced whole, and a journal names the file it follows); when they
cannot be read, the model last read is used.

The models folder must exist (it is never made) and be writable: the server makes, fsyncs
and removes a file in it at start, and refuses to start if it cannot. ``--read-only`` serves
a folder as it is instead, writing nothing (the journals left in it are applied in memory),
observing nothing and refusing TELL with 69. The site model's file must be a file of the
folder (not a symbolic link), or the server refuses to start.
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import functools
import logging
import os
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar

from ..errors import ModelFormatError, StreamNBError
from ..filter.decision import SpamFilter
from ..filter.sources import mail_problem
from . import journal
from .journal import FORGET, LEARN, Lesson, ModelLockedError
from .logs import LogTarget, Outcome, request_line
from .metrics import Metrics
from .protocol import (
    EX_DATAERR,
    EX_IOERR,
    EX_OK,
    EX_SOFTWARE,
    EX_TEMPFAIL,
    EX_TIMEOUT,
    MODEL_SUFFIX,
    PROTOCOL,
    ProtocolError,
    Request,
    failure,
    inside_models,
    log,
    model_path,
    protocol_error,
    read_body,
    read_head,
    site_model_path,
    unavailable,
)
from .redis_store import RedisStore, StoreUnavailable
from .replies import check_reply, score_fields, unscored_verdict
from .served import Evicted
from .settings import Settings
from .site import Answer, Scored, answer
from .users import ModelCache, Served

#: The signals the service handles: SIGTERM and SIGINT stop it, SIGHUP re-reads its settings.
HANDLED_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

_T = TypeVar("_T")


async def _within(awaitable: Awaitable[_T], seconds: float) -> _T:
    """``await awaitable``, or asyncio.TimeoutError after ``seconds``: ``asyncio.wait_for``, through
    ``asyncio.timeout`` from Python 3.11 on (3.11's wait_for makes a task for the awaitable:
    12 µs, four times a request)."""
    if sys.version_info < (3, 11):
        return await asyncio.wait_for(awaitable, seconds)
    async with asyncio.timeout(seconds):
        return await awaitable


class ServiceError(StreamNBError):
    """The service cannot start as asked (the models folder, the address to listen on)."""


def check_models_folder(models: Path, read_only: bool) -> None:
    """A models folder the service can use, or ServiceError saying what is wrong with it.

    A folder that cannot be written is refused unless ``read_only``: the service would run,
    but could acknowledge no lesson and fold no journal (and every first look at a model
    takes its lock, a file in the folder). The test is a real write (a file made, fsynced
    and removed), so a read-only mount, a full disk or a missing permission are all found.

    Parameters
    ----------
    models
        The models folder.
    read_only
        Whether it is served read-only (``--read-only``): then it need only be readable.

    Raises
    ------
    ServiceError
        The folder does not exist, is a file, or cannot be written (read, when ``read_only``).
    """
    if not models.exists():
        raise ServiceError(f"the models folder {str(models)!r} does not exist (make it first)")
    if not models.is_dir():
        raise ServiceError(f"the models folder {str(models)!r} is a file, not a folder")
    try:
        if read_only:
            os.listdir(models)
            return
        descriptor, probe = tempfile.mkstemp(dir=models, prefix=".streamnb-write-test-")
        try:
            os.write(descriptor, b"x")
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
            os.unlink(probe)
    except OSError as error:
        raise ServiceError(f"the models folder {str(models)!r} cannot be {'read' if read_only else 'written'} "
                           f"({error.strerror or error})" + ("" if read_only else
                           "; make it writable, or serve its models as they are with --read-only (TELL refused)"))\
            from None


def listen_error(host: str, port: int, error: OSError, option: str | None = None) -> ServiceError:
    """What went wrong when binding host:port, in words that name them.

    Parameters
    ----------
    host, port
        Where the server was asked to listen (``--host``, ``--port``).
    error
        The error of the bind (or of the name's lookup: ``socket.gaierror``).
    option
        The option that named the address (default ``--host HOST --port PORT``).

    Returns
    -------
    ServiceError
        One line naming ``--host`` and ``--port``, the reason and a hint (address in use,
        a port below 1024, an address not of this machine, an unknown name).
    """
    # asyncio words a failed bind at length ("error while attempting to bind on address ..."): the errno says it
    reason = os.strerror(error.errno) if error.errno and not isinstance(error, socket.gaierror) else \
        (error.strerror or str(error))
    if isinstance(error, socket.gaierror):  # its errno is getaddrinfo's, not errno's
        hint = " (not an address, nor a host name this machine knows)"
    else:
        hint = {errno.EADDRINUSE: " (another spamd or streamnb serve?)",
                errno.EACCES: " (ports below 1024 need root or CAP_NET_BIND_SERVICE)" if port < 1024 else "",
                errno.EADDRNOTAVAIL: " (not an address of this machine)"}.get(error.errno or 0, "")
    return ServiceError(f"cannot listen on {option or f'--host {host} --port {port}'}: {reason}{hint}")


def listen(host: str, port: int) -> list[socket.socket]:
    """TCP sockets listening on every address of host (port 0: any free port): the addresses
    ``asyncio.start_server(host, port)`` binds (``""``: every interface, IPv4 and IPv6; a
    name: each address it resolves to). One process accepts on them; with ``--workers`` the
    first process binds them and every worker accepts.

    Parameters
    ----------
    host, port
        Where to listen (``--host``, ``--port``).

    Returns
    -------
    list of socket.socket
        The listening sockets.

    Raises
    ------
    ServiceError
        An address cannot be listened on (:func:`~streamnb.service.server.listen_error`).
    """
    sockets: list[socket.socket] = []
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        for family, kind, proto, _, address in dict.fromkeys(infos):  # each address once, in order
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # as asyncio: the IPv4 addresses have sockets of their own
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen()
    except OSError as error:  # socket.gaierror too
        for sock in sockets:
            sock.close()
        raise listen_error(host, port, error) from None
    return sockets


def recover(models: Path, lock_timeout: float = 60.0) -> int:
    """Fold every journal left in DIR by a crash (before serving): a journal of the model
    file's base, or of a file that was replaced or deleted meanwhile
    (:func:`streamnb.service.journal.pending_lessons`); one folded into the file already is
    deleted.

    A journal that cannot be read is set aside (``<journal>.damaged-<time>``); one that
    cannot be folded now (locked, a file that cannot be read or written) is logged and left
    for the user's next load.

    Parameters
    ----------
    models
        The models folder.
    lock_timeout
        Seconds to wait for each model's write lock.

    Returns
    -------
    int
        The lessons folded.
    """
    from ..persist import dumps, load

    folded = 0
    for name in sorted(os.listdir(models)):
        if not name.endswith(MODEL_SUFFIX + journal.JOURNAL_SUFFIX):
            continue
        path = models / name[: -len(journal.JOURNAL_SUFFIX)]
        try:
            with journal.write_lock(path, lock_timeout):
                if not path.exists():
                    log.warning("%s: a journal without its model file; left alone", models / name)
                    continue
                try:
                    lessons = journal.pending_lessons(path, journal.file_digest(path))
                except journal.JournalError as error:
                    log.error("%s; set aside as %s", error, journal.set_aside(models / name))
                    continue
                if lessons:
                    model = load(path)
                    journal.replay(model, lessons, str(models / name))
                    journal.save_folded(path, dumps(model))
                    folded += len(lessons)
                    log.warning("%s: folded %d lessons journaled before a crash", path, len(lessons))
                else:
                    journal.remove_journal(path)
        except Exception as error:  # one model that cannot be folded keeps its journal; the others go on
            reason = failure(error)
            log.error("%s: could not recover its journal now (it is folded when the user is next served): %s",
                      path, reason)
    return folded


# The checks whose reply needs no message: when it cannot be read (too big, cut short, too
# slow, a bad zlib stream) they are answered "unsure" (PROCESS and HEADERS must return it).
CHECKS_WITHOUT_BODY = ("CHECK", "SYMBOLS", "REPORT", "REPORT_IFSPAM")


class Server:
    """The spamd-compatible service: ``await Server(settings).serve(host, port)``.

    Parameters
    ----------
    settings
        The models folder, the decision rule, the model of a new user, the limits ...
    reread
        Reads the settings again, and the log level (SIGHUP); None: SIGHUP keeps them.
    log_target
        Where the log goes: reopened on SIGHUP (a log file that logrotate moved).
    metrics
        The metrics each request counts (``--metrics``), or None.
    """

    def __init__(self, settings: Settings, reread: Callable[[], tuple[Settings, str]] | None = None,
                 log_target: LogTarget | None = None, metrics: Metrics | None = None) -> None:
        self.settings = settings
        self.reread = reread
        self.log_target = log_target
        self.metrics = metrics
        self.store = RedisStore(settings.store) if settings.store else None
        self.cache = ModelCache(settings, self.store)
        self.active = 0
        self.tasks: set[asyncio.Task] = set()
        self._servers: list[asyncio.base_events.Server] = []
        self._stopping: asyncio.Event | None = None
        self._empty: SpamFilter | None = None
        self._background: set[asyncio.Future] = set()

    def empty_filter(self) -> SpamFilter:
        """The verdicts of a user without a model file when there is no site model either: an
        empty model (always unsure).

        Returns
        -------
        SpamFilter
            A filter over ``settings.new_model()``, made once.
        """
        if self._empty is None:
            model = self.settings.new_model()
            self._empty = SpamFilter(model, self.settings.rule_of(model), min_per_class=self.settings.min_per_class,
                                     evidence_k=0)
        return self._empty

    async def start(self, host: str, port: int, listening: list[socket.socket] | None = None) -> list[tuple]:
        """Check the models folder, fold what a crash left, listen.

        Parameters
        ----------
        host, port
            Where to listen (port 0: any free port).
        listening
            Sockets listening already, to accept on instead (a worker of ``--workers``: the
            parent listens, every worker accepts); host and port are then only named.

        Returns
        -------
        list of tuple
            The addresses listened on, as ``socket.getsockname`` gives them.

        Raises
        ------
        ServiceError
            The models folder cannot be used (:func:`check_models_folder`), or the address
            cannot be listened on (:func:`listen_error`).
        """
        if self.store is not None:  # the models live in the store: the folder is not used
            try:
                await self.store.ping()
            except StoreUnavailable as error:
                raise ServiceError(f"--store: {error}") from None
        else:
            folder = self.settings.folder
            check_models_folder(folder, self.settings.read_only)
            site = site_model_path(folder)
            if self.settings.site and not inside_models(folder, site):
                raise ServiceError(f"the site model {str(site)!r} is a symbolic link or resolves outside the models "
                                   "folder: make it a file of the folder, or serve without it (--no-site)")
            if not self.settings.read_only:  # read-only: journals are read, never folded
                folded = await asyncio.to_thread(recover, folder)
                if folded:
                    log.warning("recovered %d journaled lessons", folded)
        self.empty_filter()  # made now: an unscored reply reads its rule, and must not fail making it
        self._stopping = asyncio.Event()
        sockets = listening if listening is not None else listen(host, port)
        try:
            limit = self.settings.limits.max_line
            self._servers = [await asyncio.start_server(self._connection, sock=sock, limit=limit) for sock in sockets]
        except OSError as error:
            raise listen_error(host, port, error) from None
        self._background.add(asyncio.ensure_future(self._snapshots()))
        if self.metrics is not None:
            self._background.add(asyncio.ensure_future(self._beat()))
        return [sock.getsockname() for server in self._servers for sock in server.sockets]

    async def serve(self, host: str, port: int, ready: Callable[[list], None] | None = None,
                    listening: list[socket.socket] | None = None) -> int:
        """Serve until SIGTERM or SIGINT, then fold every model; SIGHUP re-reads the settings
        and reopens the log file (:meth:`hang_up`).

        Parameters
        ----------
        host, port
            Where to listen.
        ready
            Called with the addresses listened on, once the server listens.
        listening
            As for :meth:`start`.

        Returns
        -------
        int
            The lessons left in journals (folds that failed: they are folded at the next start).

        Raises
        ------
        ServiceError
            As :meth:`start`.
        """
        addresses = await self.start(host, port, listening)
        assert self._stopping is not None  # made by start()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._stop_signal, sig)
        loop.add_signal_handler(signal.SIGHUP, self.hang_up)
        # a worker of --workers is forked with these blocked, so that none is lost or kills it
        # before these handlers; handled now, they are let through (a no-op when not blocked)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, HANDLED_SIGNALS)
        try:
            if ready is not None:
                ready(addresses)
            await self._stopping.wait()
            return await self.stop()
        finally:
            for sig in HANDLED_SIGNALS:
                loop.remove_signal_handler(sig)

    def _stop_signal(self, sig: int) -> None:
        assert self._stopping is not None  # made by start()
        if self._stopping.is_set():
            log.warning("%s: already stopping", signal.Signals(sig).name)
            return
        log.info("%s: stopping: no new connection; the requests under way finish, every journal is folded",
                 signal.Signals(sig).name)
        self._stopping.set()

    def hang_up(self) -> None:
        """SIGHUP, as spamd: reopen the log file, re-read the settings. The connections under
        way and the lessons are untouched: what changes applies to the requests that follow.

        What cannot change while serving (the models folder, ``--read-only``, ``--site``) is
        kept as it was, and the log says so; settings that cannot be read (a bad option in the
        ``--config`` file) leave every setting as it was, and the log says why.
        """
        log.info("SIGHUP: reopening the log file, re-reading the settings")
        if self.log_target is not None:
            try:
                self.log_target.reopen()
            except OSError as error:
                log.error("SIGHUP: could not reopen the log file (logging on to the one open): %s", error)
        if self.reread is None:
            log.info("SIGHUP: log reopened; no settings to re-read")
            return
        try:
            settings, level = self.reread()
        except Exception as error:  # a bad settings file must not stop the service
            log.error("SIGHUP: the settings were not changed: %s", " ".join(str(error).split()))
            return
        if self.log_target is not None and level != self.log_target.level:
            self.log_target.level = level
            logging.getLogger("streamnb").setLevel(level.upper())
        self.apply(settings)

    def apply(self, settings: Settings) -> None:
        """Serve with these settings from now on (SIGHUP); what cannot change is kept.

        Parameters
        ----------
        settings
            The settings read again.
        """
        options = {"models": "--models", "read_only": "--read-only", "site": "--site", "store": "--store"}
        fixed = [name for name in options if getattr(settings, name) != getattr(self.settings, name)]
        if fixed:
            log.warning("SIGHUP: %s cannot change while serving (restart the service for it); kept as it was",
                        ", ".join(options[name] for name in fixed))
            settings = dataclasses.replace(settings, **{name: getattr(self.settings, name) for name in fixed})
        changed = [field.name for field in dataclasses.fields(Settings)
                   if field.name != "new_model"
                   and getattr(settings, field.name) != getattr(self.settings, field.name)]
        self.settings = self.cache.settings = settings
        for entry in self.cache.loaded():
            entry.reconfigure(settings)
        self._empty = None
        self.empty_filter()  # with the new rule, made now (see start)
        log.info("SIGHUP: settings re-read%s", f" ({', '.join(changed)} changed)" if changed else " (no change)")

    async def stop(self, grace: float = 10.0) -> int:
        """Stop accepting, let the requests under way finish (up to ``grace`` s), fold every model.

        Parameters
        ----------
        grace
            Seconds the requests under way have to finish; then they are cancelled.

        Returns
        -------
        int
            The lessons left in journals (a fold failed: they are folded at the next start).
        """
        if self.metrics is not None:
            self.metrics.stopping = True
        for server in self._servers:
            server.close()
        if self.tasks:
            done, pending = await asyncio.wait(set(self.tasks), timeout=grace)
            for task in pending:
                task.cancel()
        left = await self.cache.close()
        for background in self._background:
            background.cancel()
        if self.store is not None:
            await self.store.close()
        log.info("stopped; %s", "nothing written (read-only)" if self.settings.read_only else
                 f"{left} lessons stay in journals (folded at the next start)" if left else
                 "every lesson is in the store" if self.store is not None else "every model folded into its file")
        return left

    async def _snapshots(self) -> None:
        """Fold the journals that have waited longer than --snapshot-seconds, and save the models
        that observed mail as long ago."""
        period = max(0.2, min(5.0, self.settings.snapshot_seconds / 4))
        assert self._stopping is not None  # made by start(), which starts this task
        while not self._stopping.is_set():
            await asyncio.sleep(period)
            now = time.monotonic()
            for entry in self.cache.loaded():
                if (entry.pending and now - entry.oldest_pending >= self.settings.snapshot_seconds) or \
                        (entry.observed and now - entry.oldest_observed >= self.settings.snapshot_seconds):
                    try:
                        await entry.fold(wait=False)  # never holds up the checks behind another writer
                    except Exception:  # fold() logs its own failures; this task must outlive any other
                        log.exception("%s: its snapshot failed", entry.who)

    async def _beat(self) -> None:
        """Every second: the metrics' gauges, and the mark /health looks for."""
        assert self.metrics is not None and self._stopping is not None  # started with metrics, by start()
        while not self._stopping.is_set():
            self.metrics.beat(self.cache.loaded(), self.active, self.store)
            await asyncio.sleep(1.0)

    # -- one connection ---------------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None  # each connection runs in a task of its own
        self.tasks.add(task)
        outcome = Outcome()
        told = False
        try:
            if self.active >= self.settings.limits.max_connections:
                reply = self._refuse(outcome, ProtocolError(
                    EX_TEMPFAIL, f"Service Unavailable: (too many connections; limit "
                                 f"{self.settings.limits.max_connections})"))
                told = self._account(outcome)
                await self._finish(writer, reader, reply, drain=True)
                return
            self.active += 1
            try:
                afterwards: list[Callable[[], Awaitable[None]]] = []
                reply, drain = await self._answer(reader, outcome, afterwards)
                told = self._account(outcome)  # before the reply: once the client has it, the log and metrics do
                await self._finish(writer, reader, reply, drain, afterwards)
            finally:
                self.active -= 1
        except Exception as error:  # a broken connection must never take the server down
            log.exception("connection failed")
            if not told:
                outcome.outcome, outcome.reason = "error", f"{type(error).__name__}: {error}"
                told = self._account(outcome)
            writer.transport.abort()
        finally:
            self.tasks.discard(task)

    def _account(self, outcome: Outcome) -> bool:
        """The request's line in the log (but SKIP's) and its count in the metrics; True."""
        level = {"ok": logging.INFO, "error": logging.ERROR}.get(outcome.outcome, logging.WARNING)
        if outcome.command != "SKIP" and log.isEnabledFor(level):
            log.log(level, "%s", request_line(outcome))
        if self.metrics is not None:
            self.metrics.record(outcome)
        return True

    @staticmethod
    def _refuse(outcome: Outcome, error: ProtocolError, result: str = "refused") -> bytes:
        """The error reply, with what it says in the request's outcome (its log line, its metrics)."""
        outcome.outcome, outcome.code, outcome.reason = result, error.code, error.text
        return error.reply()

    async def _answer(self, reader: asyncio.StreamReader, outcome: Outcome,
                      afterwards: list[Callable[[], Awaitable[None]]]) -> tuple[bytes, bool]:
        """(reply, whether unread input may remain) for one request; ``outcome`` says what it came to,
        ``afterwards`` gets what is to be done once the reply is sent."""
        limits = self.settings.limits
        deadline = asyncio.get_running_loop().time() + limits.timeout
        body_read = False
        try:
            request = await _within(read_head(reader, limits), limits.timeout)
            outcome.command = request.method
            if request.method == "PING":
                return f"{PROTOCOL} {EX_OK} PONG\r\n".encode(), False
            if request.method == "SKIP":
                return b"", False
            outcome.user = request.user
            if request.method == "TELL":
                if self.settings.read_only:
                    raise unavailable("the models folder is served read-only (--read-only): TELL is refused")
                if not self.settings.allow_tell:
                    raise unavailable("TELL commands are not enabled, set the --allow-tell switch.")
                if self.store is None:  # refuse a file that is a link before the body
                    model_path(self.settings.folder, request.user)
            remaining = max(0.0, deadline - asyncio.get_running_loop().time())
            try:
                request.body = await _within(read_body(reader, request, limits), remaining)
            except (ProtocolError, asyncio.TimeoutError) as error:
                if request.method not in CHECKS_WITHOUT_BODY:
                    raise
                why = f"{limits.timeout:g} second timeout reading the message" \
                    if isinstance(error, asyncio.TimeoutError) else f"{error.code} {error.text}"
                return self._unscored(request, outcome, f"the message could not be read: {why}",
                                      "the message could not be read (the service's log says why)"), True
            body_read = True
            outcome.size = len(request.body)
            if request.method == "TELL":
                return await self._tell(request, outcome), False
            return await self._check(request, outcome, afterwards), False
        except asyncio.TimeoutError:
            return self._refuse(outcome, ProtocolError(EX_TIMEOUT, f"Timeout: ({limits.timeout:g} second timeout "
                                                                   "reading input from client)")), True
        except ProtocolError as error:
            return self._refuse(outcome, error), not body_read
        except ConnectionError as error:  # the client reset the connection: no one to answer
            outcome.outcome, outcome.reason = "gone", f"the client went away: {error}"
            return b"", False
        except ModelLockedError as error:
            return self._refuse(outcome, ProtocolError(EX_TEMPFAIL, f"Service Unavailable: ({error})")), \
                not body_read
        except (OSError, ModelFormatError, journal.JournalError) as error:  # the files, not the message
            return self._refuse(outcome, ProtocolError(EX_IOERR, f"I/O error: ({' '.join(str(error).split())[:200]})"
                                                       )), not body_read
        except (StreamNBError, ValueError, TypeError) as error:  # the model refused the message
            return self._refuse(outcome, ProtocolError(EX_DATAERR, "Message refused: "
                                                       f"({' '.join(str(error).split())[:200]})")), not body_read
        except Exception as error:
            log.exception("internal error")
            return self._refuse(outcome, ProtocolError(EX_SOFTWARE, f"Internal error: ({type(error).__name__})"),
                                "error"), not body_read

    def _unscored(self, request: Request, outcome: Outcome, reason: str, said: str | None = None) -> bytes:
        """The reply to a check that could not be scored: "unsure", with the STREAMNB_UNSCORED
        symbol; the reason goes to the log (``said``: what a REPORT says of it)."""
        rule = self.empty_filter().rule  # made at start: its cutoffs on the score are the reply's
        verdict = unscored_verdict(rule)
        outcome.outcome, outcome.reason = "unscored", reason
        outcome.verdict, outcome.score = verdict.label, score_fields(verdict, rule)[1]
        return check_reply(request.method, Answer(verdict, False, {}, None, 1.0), request.body, request.user,
                           self.settings, rule, scored=False, why=said)

    async def _check(self, request: Request, outcome: Outcome,
                     afterwards: list[Callable[[], Awaitable[None]]]) -> bytes:
        """The verdict of the user's model and the site model (:mod:`streamnb.service.site`);
        when they cannot give one, an "unsure" that says so. Each model that answered then
        observes the message (``--observe``): put in ``afterwards``, so that the client does
        not wait for it.

        An error reply would make spamc pass the message on as it came, unmarked, and exit 0
        as for ham (its default without -x): a check that cannot be made is answered
        unsure with the STREAMNB_UNSCORED symbol instead, and logged.
        """
        explain = request.method in ("REPORT", "REPORT_IFSPAM")
        settings, site = self.settings, self.cache.site
        user = None
        said: dict[str, Scored | None] = {"site": None, "user": None}
        try:
            if await self.cache.has_model(request.user):
                user = self.cache.get(request.user)
                said["user"] = await user.classify(request.body, explain)
            if site is not None:
                said["site"] = await site.classify(request.body, explain)
            answering = user if user is not None and said["user"] is not None else site  # whose rule decides
            rule = answering.spam_filter().rule if answering is not None else self.empty_filter().rule
            result = answer(said["site"], said["user"], settings.site_blend, rule, settings.min_per_class,
                            10 if explain else 0)
            if result is None:  # no model file: an empty model's verdict, nothing written
                rule = self.empty_filter().rule
                result = Answer(self.empty_filter().classify(request.body, explain=False), False, {}, None, 1.0)
        except Exception as error:  # whatever it was, the mail must not pass as clean
            return self._unscored(request, outcome, "the model could not score the message: "
                                  f"{type(error).__name__}: {' '.join(str(error).split())}")
        outcome.verdict, outcome.score = result.verdict.label, score_fields(result.verdict, rule)[1]
        reply = check_reply(request.method, result, request.body, request.user, settings, rule)
        if settings.observe and not settings.read_only:  # once the reply is built: the verdict it gives
            answered = [entry for entry, name in ((site, "site"), (user, "user"))
                        if entry is not None and said[name] is not None]
            afterwards.append(functools.partial(self._observe, request, answered, result))
        return reply

    @staticmethod
    async def _observe(request: Request, entries: list[Served], result: Answer) -> None:
        """Each model that answered observes the message, delivered with the verdict given
        (a failure is logged: the verdict stands, and nothing acknowledged depends on it)."""
        for entry in entries:
            try:
                await entry.observe(request.body, result.verdict)
            except Exception as error:
                log.warning("%s: could not observe a checked message: %s: %s", entry.who, type(error).__name__,
                            " ".join(str(error).split()))

    async def _tell(self, request: Request, outcome: Outcome) -> bytes:
        headers = request.headers
        sets = {part.strip() for part in headers.get("Set", "").split(",") if part.strip()}
        removes = {part.strip() for part in headers.get("Remove", "").split(",") if part.strip()}
        if "local" in sets and "local" in removes:
            raise protocol_error("Unable to set local and remove local in the same operation.")
        if "local" in sets:
            label = headers.get("Message-class")
            if label not in ("spam", "ham"):
                raise protocol_error(f"Message-class must be spam or ham, got {str(label)[:20]!r}")
            lesson = self._lesson(LEARN, label, request.body)
        elif "local" in removes:
            lesson = self._lesson(FORGET, None, request.body)
        else:
            return f"{PROTOCOL} {EX_OK} EX_OK\r\n\r\n".encode()  # nothing local asked: nothing done
        outcome.verdict = lesson.label if lesson.action == LEARN else "forget"
        for _ in range(3):
            try:
                changed = await self.cache.get(request.user).tell(lesson)
                break
            except Evicted:
                continue
        else:
            raise ProtocolError(EX_TEMPFAIL, "Service Unavailable: (the model is being unloaded; try again)")
        done = ""
        if changed:
            done = "DidSet: local\r\n" if lesson.action == LEARN else "DidRemove: local\r\n"
        return f"{PROTOCOL} {EX_OK} EX_OK\r\n{done}\r\n".encode()

    @staticmethod
    def _lesson(action: str, label: str | None, body: bytes) -> Lesson:
        """A TELL's lesson, its message checked as ``streamnb learn`` checks a source (the one
        check of what is mail, :func:`streamnb.filter.sources.mail_problem`): both learn the
        same input. ProtocolError (65) for bytes that are not mail."""
        problem = mail_problem(body)
        if problem is not None:
            raise ProtocolError(EX_DATAERR, f"Message refused: (the message {problem})")
        return Lesson(action, label, body)

    async def _finish(self, writer: asyncio.StreamWriter, reader: asyncio.StreamReader, reply: bytes,
                      drain: bool, afterwards: Sequence[Callable[[], Awaitable[None]]] = ()) -> None:
        """Send the reply, do what it does not wait for (``afterwards``), and close; unread input
        is drained briefly first, so that closing does not reset the connection before the
        client has read the reply."""
        timeout = self.settings.limits.timeout
        try:
            if reply:
                writer.write(reply)
            for step in afterwards:  # the client reads the reply meanwhile; no other request runs in between
                await step()
            if reply:
                await _within(writer.drain(), timeout)
            if drain and writer.can_write_eof():
                writer.write_eof()
                await _within(self._discard(reader), min(2.0, timeout))
        except (asyncio.TimeoutError, ConnectionError, OSError):
            pass
        finally:
            writer.close()
            try:
                await _within(writer.wait_closed(), 2.0)
            except (asyncio.TimeoutError, ConnectionError, OSError):
                pass

    @staticmethod
    async def _discard(reader: asyncio.StreamReader, limit: int = 64 << 20) -> None:
        seen = 0
        while seen < limit:
            chunk = await reader.read(65536)
            if not chunk:
                return
            seen += len(chunk)
