"""``streamnb serve --workers N``: N processes answering on one port, to use N cores.

One Python process answers one request at a time whatever the cores: its event loop holds
the interpreter's lock for most of a check. So the parent binds and listens, then forks N
workers that accept on that one socket, each a :class:`~streamnb.service.server.Server` of
its own with its models in memory. They share their lessons through the store (``--store``):
each worker reads the others' lessons from it before it scores, as the hosts of a site do
(:mod:`streamnb.service.shared`), so a lesson acknowledged by one worker is in the verdicts
of all. (In a models folder each model has one writer; a second process would read the whole
model again after every lesson of the first: the command refuses ``--workers`` without
``--store``.)

The parent answers nothing. It logs where the service listens once every worker is ready,
hands SIGTERM, SIGINT and SIGHUP on to the workers (each stops, or re-reads its settings and
reopens its log, as one process serving alone does), starts a worker again when one dies, and
exits once every worker has stopped, with the worst of their exit codes. A worker that cannot
start (the store unreachable) stops the others, and the command fails with its reason.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import socket
import time
from collections.abc import Callable

from .logs import LogTarget
from .protocol import log
from .server import ServiceError, listen_error

__all__ = ["listen", "run_workers"]

#: A worker that dies this many seconds or fewer after it started is not started again: the
#: others are stopped (a worker that cannot serve would be started over and over).
QUICK_DEATH_SECONDS = 1.0
#: Exit code of a worker that raised (EX_SOFTWARE, as an internal error's reply code).
WORKER_FAILED = 70
HANDED_ON = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
PR_SET_PDEATHSIG = 1  # prctl(2)


def listen(host: str, port: int, backlog: int) -> socket.socket:
    """A TCP socket listening on host:port (port 0: any free port), for the workers to accept on.

    Parameters
    ----------
    host, port
        Where to listen (``--host``, ``--port``).
    backlog
        Connections the kernel queues before a worker accepts them.

    Returns
    -------
    socket.socket
        The listening socket (blocking: each worker's event loop makes its copy non-blocking).

    Raises
    ------
    ServiceError
        The address cannot be listened on (:func:`~streamnb.service.server.listen_error`).
    """
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
        return socket.create_server((host, port), family=family, backlog=backlog)
    except OSError as error:  # socket.gaierror too
        raise listen_error(host, port, error) from None


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


def _worker(number: int, serve: Callable[[socket.socket, Callable[[], None]], int], listening: socket.socket,
            ready_to: int, parent: int) -> None:
    """The body of worker ``number`` in the forked child: serve, then leave with its exit code
    (never returns: the parent's stack must not run on in the child)."""
    code = WORKER_FAILED
    try:
        for sig in HANDED_ON:  # the parent's handlers: until the worker's own, a signal stops it at once
            signal.signal(sig, signal.SIG_DFL)
        os.setpgid(0, 0)  # a terminal's Ctrl-C reaches the parent only, which hands it on once
        _stop_with(parent)

        def ready() -> None:
            nonlocal ready_to
            if ready_to >= 0:  # (a worker started again later has no one waiting)
                os.write(ready_to, b"ready\n")
                os.close(ready_to)  # the parent sees the end of the pipe once every worker said
                ready_to = -1

        code = serve(listening, ready)
    except (ServiceError, OSError) as error:  # cannot start: the parent reports the reason
        reason = " ".join(str(error).split())
        if ready_to >= 0:
            os.write(ready_to, f"error {reason}\n".encode(errors="replace")[:4000])
        else:
            log.error("worker %d cannot serve: %s", number, reason)
        code = 3
    except BaseException:
        log.exception("worker %d failed", number)
    finally:
        logging.shutdown()  # the log's buffered lines out before _exit
        os._exit(code)


def run_workers(workers: int, listening: socket.socket, serve: Callable[[socket.socket, Callable[[], None]], int],
                log_target: LogTarget | None = None) -> int:
    """Fork ``workers`` processes that each call ``serve(listening, ready)``, and supervise them
    until they have all stopped (see the module docstring).

    Parameters
    ----------
    workers
        How many processes (>= 1).
    listening
        The socket every worker accepts on (:func:`listen`).
    serve
        A worker's service: serves until SIGTERM or SIGINT, calls ``ready()`` once it
        accepts, returns its exit code; a ServiceError or OSError before ``ready`` means it
        cannot start.
    log_target
        The parent's log, reopened on SIGHUP (each worker reopens its own).

    Returns
    -------
    int
        The worst exit code of the workers (0 when every one stopped cleanly).

    Raises
    ------
    ServiceError
        A worker could not start: the reason it gave (the others are stopped).
    """
    children: dict[int, tuple[int, float]] = {}  # pid -> (worker number, when it started)
    stopping = False
    readiness_from, ready_to = os.pipe()
    parent = os.getpid()

    def start(number: int) -> None:
        pid = os.fork()
        if pid == 0:
            if ready_to >= 0:
                os.close(readiness_from)
            _worker(number, serve, listening, ready_to, parent)
        children[pid] = (number, time.monotonic())

    def tell_all(sig: signal.Signals) -> None:
        for pid in list(children):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:  # ended already; os.wait collects it
                pass

    def stop(sig: signal.Signals) -> None:
        nonlocal stopping
        if not stopping:
            stopping = True
            log.info("%s: stopping the %d workers", sig.name, len(children))
        tell_all(signal.SIGTERM)

    def handed_on(signum: int, _frame: object) -> None:
        sig = signal.Signals(signum)
        if sig == signal.SIGHUP:
            log.info("SIGHUP: handed on to the %d workers", len(children))
            if log_target is not None:
                try:
                    log_target.reopen()
                except OSError as error:
                    log.error("SIGHUP: could not reopen the log file (logging on to the one open): %s", error)
            tell_all(sig)
        else:
            stop(sig)

    previous = {sig: signal.signal(sig, handed_on) for sig in HANDED_ON}
    worst = 0
    try:
        for number in range(workers):
            start(number)
        os.close(ready_to)
        ready_to = -1
        with os.fdopen(readiness_from, "rb") as readiness:
            for _ in range(workers):
                line = readiness.readline().decode(errors="replace").strip()
                if line != "ready":  # a worker could not start (or died at once): the others stop too
                    tell_all(signal.SIGTERM)
                    while children:
                        children.pop(os.wait()[0], None)
                    raise ServiceError(line.removeprefix("error ") or "a worker ended before it served")
        host, port = listening.getsockname()[:2]
        log.info("listening on %s:%s with %d workers (pids %s)", host, port, workers,
                 " ".join(str(pid) for pid in sorted(children)))
        while children:
            pid, status = os.wait()
            number, since = children.pop(pid)
            code = os.waitstatus_to_exitcode(status)
            code = code if code >= 0 else 128 - code  # killed by a signal: the shell's 128 + N
            if stopping:
                worst = max(worst, code)
                continue
            log.error("worker %d (pid %d) ended with exit code %d while serving", number, pid, code)
            if time.monotonic() - since <= QUICK_DEATH_SECONDS:
                log.error("worker %d ended within %g s of its start: stopping the others", number,
                          QUICK_DEATH_SECONDS)
                worst, stopping = max(worst, code), True
                tell_all(signal.SIGTERM)
            else:
                start(number)
                log.info("worker %d started again (pid %d)", number,
                         next(p for p, (n, _) in children.items() if n == number))
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if ready_to >= 0:
            os.close(ready_to)
    return worst
