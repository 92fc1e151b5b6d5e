"""``streamnb serve --workers N``: N processes answering on one port, to use N cores.

One Python process answers one request at a time whatever the cores: its event loop holds
the interpreter's lock for most of a check. So the parent binds and listens, then forks N
workers that accept on those sockets, each a :class:`~streamnb.service.server.Server` of its
own with its models in memory. Before it scores, each worker reads the lessons the others
acknowledged since it last looked: in a models folder, the records appended to the model's
journal after the last one it read (:meth:`streamnb.service.userfiles.UserFiles._follow_sync`);
with a store, the entries of the model's stream, as the hosts of a site do
(:mod:`streamnb.service.shared`). So a lesson acknowledged by one worker is in the verdicts
of all.

The parent answers nothing. It logs where the service listens once every worker is ready,
hands SIGTERM, SIGINT and SIGHUP on to the workers (each stops, or re-reads its settings and
reopens its log, as one process serving alone does), and exits once every worker has stopped,
with the worst of their exit codes. A worker that cannot start at first (the store
unreachable) stops the others, and the command fails with its reason. A worker that ends
while the others serve is started again, at once the first time and then after a wait that
doubles while it keeps ending within :data:`QUICK_DEATH_SECONDS` of its start (up to
:data:`MAX_RESTART_WAIT`); when no worker is left serving and the last one to end had just
started, the parent stops with its exit code.

With ``--metrics``, one more process, forked after the workers, answers ``/metrics`` and
``/health`` with the workers' metrics added up (:class:`~streamnb.service.metrics.WorkersMetrics`);
it is started again when it ends, and stops with the workers.

Signals are blocked while a worker is forked and stay blocked in it until its event loop
has its own handlers (:meth:`~streamnb.service.server.Server.serve` unblocks them): a signal
that arrives meanwhile waits, it neither kills the worker nor is lost.
"""

from __future__ import annotations

import ctypes
import glob
import logging
import os
import signal
import socket
import time
from collections.abc import Callable

from prometheus_client import multiprocess

from .logs import LogTarget
from .metrics import MetricsServer
from .protocol import log
from .server import HANDLED_SIGNALS, ServiceError

__all__ = ["run_workers"]

#: A worker that ends this many seconds or fewer after its start waits longer to be started
#: again each time (a worker that cannot serve would otherwise be started over and over).
QUICK_DEATH_SECONDS = 1.0
#: The longest wait before a worker that keeps ending is started again.
MAX_RESTART_WAIT = 30.0
#: Exit code of a worker that raised (EX_SOFTWARE, as an internal error's reply code).
WORKER_FAILED = 70
#: How often the parent looks at its workers and the signals it got.
POLL_SECONDS = 0.05
PR_SET_PDEATHSIG = 1  # prctl(2)


def _stop_with(parent: int) -> None:
    """Have the kernel send this worker SIGTERM when the parent dies (Linux's
    PR_SET_PDEATHSIG): a parent killed with -9 leaves no worker serving on behind it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the workers stop when they are told to
        return
    if os.getppid() != parent:  # the parent died before the call: nobody will tell this worker
        os.kill(os.getpid(), signal.SIGTERM)


def _worker(number: int, serve: Callable[[list[socket.socket], Callable[[], None]], int],
            listening: list[socket.socket], ready_to: int, parent: int, metrics_folder: str | None) -> None:
    """The body of worker ``number`` in the forked child (the handed-on signals blocked):
    serve, then leave with its exit code (never returns: the parent's stack must not run on
    in the child). A worker that never served leaves no metrics files behind."""
    code = WORKER_FAILED
    ready = False
    try:
        for sig in HANDLED_SIGNALS:  # (blocked: the event loop's handlers replace these, then unblock)
            signal.signal(sig, signal.SIG_DFL)
        os.setpgid(0, 0)  # a terminal's Ctrl-C reaches the parent only, which hands it on once
        _stop_with(parent)

        def said_ready() -> None:
            nonlocal ready, ready_to
            ready = True
            if ready_to >= 0:  # (a worker started again later has no one waiting)
                os.write(ready_to, b"ready\n")
                os.close(ready_to)  # the parent sees the end of the pipe once every worker said
                ready_to = -1

        code = serve(listening, said_ready)
    except (ServiceError, OSError) as error:
        reason = " ".join(str(error).split())
        if ready_to >= 0 and not ready:  # cannot start: the parent reports the reason
            os.write(ready_to, f"error {reason}\n".encode(errors="replace")[:4000])
        else:
            log.error("worker %d %s: %s", number, "stopped" if ready else "cannot serve", reason)
        code = 3
    except BaseException:
        log.exception("worker %d failed", number)
    finally:
        if metrics_folder is not None and not ready:  # it counted nothing: its files would only pile up
            for path in glob.glob(os.path.join(glob.escape(metrics_folder), f"*_{os.getpid()}.db")):
                os.unlink(path)
        logging.shutdown()  # the log's buffered lines out before _exit
        os._exit(code)


def _answer_metrics(http: MetricsServer, parent: int) -> None:
    """The body of the metrics process in the forked child (the handed-on signals blocked):
    answer HTTP until told to stop twice (never returns). The first SIGTERM or SIGINT (the
    service stops) turns ``/health`` to 503 "stopping" while the workers finish; the parent
    sends the second once they have."""

    def told(*_: object) -> None:
        if http.metrics.stopping:
            os._exit(0)  # nothing of its own to save
        http.metrics.stopping = True

    code = WORKER_FAILED
    try:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, told)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        os.setpgid(0, 0)
        _stop_with(parent)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, HANDLED_SIGNALS)
        http.httpd.serve_forever()
        code = 0
    except BaseException:
        log.exception("the metrics process failed")
    finally:
        logging.shutdown()
        os._exit(code)


class _Supervisor:
    """The parent's state: the workers (and the metrics process, number ``workers``), the
    signals it got, the restarts to come."""

    def __init__(self, workers: int, listening: list[socket.socket],
                 serve: Callable[[list[socket.socket], Callable[[], None]], int],
                 log_target: LogTarget | None, http: MetricsServer | None, metrics_folder: str | None) -> None:
        self.workers, self.listening, self.serve, self.log_target = workers, listening, serve, log_target
        self.http, self.metrics_folder = http, metrics_folder
        self.children: dict[int, tuple[int, float]] = {}  # pid -> (worker number, when it started)
        self.waits = [0.0] * (workers + 1)  # the wait before each is next started again
        self.restarts: dict[int, float] = {}  # worker number -> when it is started again
        self.signals: list[signal.Signals] = []
        self.stopping = False
        self.worst = 0
        self.parent = os.getpid()

    def start(self, number: int, ready_to: int = -1) -> int | None:
        """Fork worker ``number`` (the signals blocked around the fork: the child inherits the
        mask, and its event loop unblocks them); None while stopping."""
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED_SIGNALS)
        try:
            if self.stopping:
                return None
            pid = os.fork()
            if pid == 0:  # each child closes what it inherited and does not serve, so that
                # a child left draining never holds a port a new service needs
                if number == self.workers:
                    assert self.http is not None  # (number ``workers`` only with metrics)
                    for sock in self.listening:
                        sock.close()
                    _answer_metrics(self.http, self.parent)
                if self.http is not None:
                    self.http.httpd.server_close()
                _worker(number, self.serve, self.listening, ready_to, self.parent, self.metrics_folder)
            self.children[pid] = (number, time.monotonic())
            return pid
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def name(self, number: int) -> str:
        return "the metrics process" if number == self.workers else f"worker {number}"

    def serving(self) -> bool:
        """Is a worker (not the metrics process) alive?"""
        return any(number < self.workers for number, _ in self.children.values())

    def tell_all(self, sig: signal.Signals) -> None:
        for pid in list(self.children):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:  # ended already; it is collected next
                pass

    def stop(self, why: str) -> None:
        if not self.stopping:
            self.stopping = True
            self.restarts.clear()
            others = " and the metrics process" if self.workers in {n for n, _ in self.children.values()} else ""
            log.info("%s: stopping the %d workers%s", why, sum(n < self.workers for n, _ in self.children.values()),
                     others)
        self.tell_all(signal.SIGTERM)

    def got(self, signum: int, _frame: object) -> None:
        self.signals.append(signal.Signals(signum))  # acted on by the loop, outside the handler

    def act_on_signals(self) -> None:
        while self.signals:
            sig = self.signals.pop(0)
            if sig != signal.SIGHUP:
                self.stop(sig.name)
                continue
            log.info("SIGHUP: handed on to the %d workers", sum(n < self.workers for n, _ in self.children.values()))
            if self.log_target is not None:
                try:
                    self.log_target.reopen()
                except OSError as error:
                    log.error("SIGHUP: could not reopen the log file (logging on to the one open): %s", error)
            self.tell_all(sig)

    def collect(self) -> None:
        """Collect the workers that ended; plan when each is started again."""
        while self.children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                return
            number, since = self.children.pop(pid)
            code = os.waitstatus_to_exitcode(status)
            code = code if code >= 0 else 128 - code  # ended by a signal: the shell's 128 + N
            if self.metrics_folder is not None and number < self.workers:
                # its gauges leave the sums
                multiprocess.mark_process_dead(pid, self.metrics_folder)  # type: ignore[no-untyped-call]
            if self.stopping:
                if number < self.workers:
                    self.worst = max(self.worst, code)
                continue
            quick = time.monotonic() - since <= QUICK_DEATH_SECONDS
            self.waits[number] = min(MAX_RESTART_WAIT, max(1.0, 2 * self.waits[number])) if quick else 0.0
            if quick and number < self.workers and not self.serving():  # none serving; this one had just started
                log.error("%s (pid %d) ended (exit code %d) within %g s of its start and no worker is left "
                          "serving: stopping", self.name(number), pid, code, QUICK_DEATH_SECONDS)
                self.worst = max(self.worst, code)
                self.stop("no worker serving")
                continue
            log.error("%s (pid %d) ended (exit code %d); it is started again in %g s", self.name(number), pid, code,
                      self.waits[number])
            self.restarts[number] = time.monotonic() + self.waits[number]

    def restart_due(self) -> None:
        now = time.monotonic()
        for number, when in sorted(self.restarts.items()):
            if when <= now:
                del self.restarts[number]
                pid = self.start(number)
                if pid is not None:
                    log.info("%s started again (pid %d)", self.name(number), pid)


def run_workers(workers: int, listening: list[socket.socket],
                serve: Callable[[list[socket.socket], Callable[[], None]], int],
                log_target: LogTarget | None = None, http: MetricsServer | None = None,
                metrics_folder: str | None = None) -> int:
    """Fork ``workers`` processes that each call ``serve(listening, ready)``, and supervise them
    until they have all stopped (see the module docstring).

    Parameters
    ----------
    workers
        How many processes (>= 1).
    listening
        The sockets every worker accepts on (:func:`~streamnb.service.server.listen`).
    serve
        A worker's service: serves until SIGTERM or SIGINT (unblocking the handed-on signals
        once it handles them), calls ``ready()`` once it accepts, returns its exit code; a
        ServiceError or OSError before ``ready`` means it cannot start.
    log_target
        The parent's log, reopened on SIGHUP (each worker reopens its own).
    http
        The metrics' HTTP server, bound (``--metrics``), for the metrics process to answer
        on; None: no metrics.
    metrics_folder
        The multiprocess folder the workers' metrics go to
        (:func:`~streamnb.service.metrics.share_between_processes`), with ``http``.

    Returns
    -------
    int
        The worst exit code of the workers (0 when every one stopped cleanly).

    Raises
    ------
    ServiceError
        A worker could not start: the reason it gave (the others are stopped).
    """
    supervisor = _Supervisor(workers, listening, serve, log_target, http, metrics_folder)
    previous = {sig: signal.signal(sig, supervisor.got) for sig in HANDLED_SIGNALS}
    readiness_from, ready_to = os.pipe()
    try:
        for number in range(workers):
            supervisor.start(number, ready_to)
        os.close(ready_to)
        with os.fdopen(readiness_from, "rb") as readiness:
            said = [readiness.readline().decode(errors="replace").strip() for _ in range(workers)]
        supervisor.act_on_signals()
        failed = next((line for line in said if line != "ready"), None)
        if failed is not None and not supervisor.stopping:  # a worker could not start: the others stop too
            supervisor.stopping = True
            supervisor.tell_all(signal.SIGTERM)
            while supervisor.children:
                supervisor.children.pop(os.wait()[0], None)
            raise ServiceError(failed.removeprefix("error ") or "a worker ended before it served")
        if http is not None:
            supervisor.start(workers)  # the metrics process
        if not supervisor.stopping:
            where = ", ".join("%s:%s" % sock.getsockname()[:2] for sock in listening)
            log.info("listening on %s with %d workers (pids %s)", where, workers,
                     " ".join(str(pid) for pid, (number, _) in sorted(supervisor.children.items())
                              if number < workers))
        while supervisor.children or supervisor.restarts:
            supervisor.act_on_signals()
            supervisor.collect()
            if supervisor.stopping and not supervisor.serving():
                supervisor.tell_all(signal.SIGTERM)  # the workers are gone: the metrics process goes too
            supervisor.restart_due()
            time.sleep(POLL_SECONDS)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return supervisor.worst
