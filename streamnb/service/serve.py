"""``streamnb serve``: the spam filter as a service that speaks SpamAssassin's spamd protocol.

Debian's ``spamc`` (and any other spamd client) works unchanged: a mail server pipes each
message through ``spamc``, which sends it here over TCP and prints what comes back. One
Python process serves every message (or N of them, with ``--store`` and ``--workers``), so a
verdict costs a few milliseconds instead of the interpreter start, imports and model load that
``streamnb classify`` pays per message.

The server is made of these modules of ``streamnb.service``, whose public names this module
re-exports:

- :mod:`~streamnb.service.protocol`: the spamd protocol, requests read and checked, the
  errors (``76 Bad header line``, ``65``, ``69``, ``74``, ``75``, ``79``, ``70``);
  :mod:`~streamnb.service.names`: any user's name and its model's file name;
- :mod:`~streamnb.service.replies`: the replies to a check (score, symbols, report, the
  message with its headers);
- :mod:`~streamnb.service.site`: a user's verdict from the site model and the user's own;
- :mod:`~streamnb.service.users`: each user's model (durability: no acknowledged lesson is
  lost) and the cache of loaded models; :mod:`~streamnb.service.userfiles`: a user's model
  file and journal on disk, the blocking half run in a thread;
- :mod:`~streamnb.service.workers`: ``--workers``, several processes on one port;
- :mod:`~streamnb.service.server`: the models folder checked, the journals a crash left
  folded, the connections answered (a check never passes a message as clean because
  something failed), the signals; :mod:`~streamnb.service.logs`: the log and its line per
  request; :mod:`~streamnb.service.metrics`: ``/metrics`` and ``/health``.

This module adds :func:`run`, the ``streamnb serve`` command's loop.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from ..errors import ModelFormatError, StreamNBError
from ..filter.decision import SPAM, SpamFilter, Verdict
from ..filter.headers import rewrite_headers
from . import journal
from .journal import FORGET, LEARN, Lesson, ModelLockedError, read_model
from .logs import LogTarget
from .metrics import Metrics, MetricsServer, WorkersMetrics, share_between_processes
from .protocol import (
    DEFAULT_USER,
    EX_DATAERR,
    EX_IOERR,
    EX_OK,
    EX_PROTOCOL,
    EX_SOFTWARE,
    EX_TEMPFAIL,
    EX_TIMEOUT,
    EX_UNAVAILABLE,
    METHODS,
    MODEL_SUFFIX,
    PROTOCOL,
    SITE_NAME,
    ProtocolError,
    Request,
    check_user,
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
from .replies import answered_by, check_reply, report_text, rewrite_message, score_fields, symbols, unscored_verdict
from .served import Evicted
from .server import Server, ServiceError, check_models_folder, listen, listen_error, recover
from .settings import Limits, Settings
from .site import Answer, Scored, answer, user_share
from .userfiles import UserFiles
from .users import JOURNAL_FOLD_BYTES, ModelCache, UserModel
from .workers import run_workers

__all__ = [
    # protocol
    "PROTOCOL", "EX_OK", "EX_DATAERR", "EX_UNAVAILABLE", "EX_SOFTWARE", "EX_IOERR", "EX_TEMPFAIL", "EX_PROTOCOL",
    "EX_TIMEOUT", "METHODS", "DEFAULT_USER", "MODEL_SUFFIX", "SITE_NAME", "ProtocolError",
    "protocol_error", "unavailable", "Request", "read_head", "read_body", "check_user", "model_path",
    "site_model_path", "inside_models", "failure", "log",
    # replies
    "score_fields", "symbols", "unscored_verdict", "answered_by", "report_text", "rewrite_message", "check_reply",
    # site
    "Scored", "Answer", "user_share", "answer",
    # users
    "JOURNAL_FOLD_BYTES", "read_model", "UserFiles", "UserModel", "Evicted", "ModelCache",
    # server
    "ServiceError", "check_models_folder", "listen", "listen_error", "recover", "Server", "run",
    # what the server is made of, under the names this module has always given them
    "journal", "ModelFormatError", "StreamNBError", "SPAM", "SpamFilter", "Verdict", "rewrite_headers", "FORGET",
    "LEARN", "Lesson", "ModelLockedError", "Limits", "Settings",
]


def run(settings: Settings, host: str, port: int, *, reread: Callable[[], tuple[Settings, str]] | None = None,
        log_target: LogTarget | None = None, metrics: tuple[str, int] | None = None, workers: int = 1) -> int:
    """Serve until SIGTERM/SIGINT (the ``streamnb serve`` command); logs where it listens.

    Parameters
    ----------
    settings
        The server's settings.
    host, port
        Where to listen.
    reread
        Reads the settings again, and the log level, on SIGHUP (None: SIGHUP reopens the log only).
    log_target
        Where the log goes (reopened on SIGHUP).
    metrics
        (host, port) to answer ``/metrics`` and ``/health`` on (``--metrics``), or None.
    workers
        Processes answering on the port (``--workers``; above 1:
        :mod:`streamnb.service.workers`).

    Returns
    -------
    int
        The command's exit code: 0, or 3 when lessons could not be folded into their model
        files and stay in their journals; with workers, the worst of theirs (70: one raised;
        128 + N: one was ended by signal N).

    Raises
    ------
    ServiceError
        The models folder cannot be used, or an address cannot be listened on.
    """
    if workers > 1:
        return _run_workers(settings, host, port, workers, reread, log_target, metrics)
    counted = http = None
    if metrics is not None:
        counted = Metrics()
        http = _metrics_server(counted, metrics)

    def ready(addresses: list) -> None:
        if http is not None:  # (said first: a reader of the log that waits for "listening" has both)
            http.start()
            log.info("metrics on http://%s:%s/metrics, health on /health", *http.address)
        for address in addresses:
            log.info("listening on %s:%s (models in %s)", address[0], address[1], settings.store or settings.models)

    try:
        left = _run_loop(Server(settings, reread, log_target, counted).serve(host, port, ready))
    finally:
        if http is not None:
            http.stop()
    return _exit_code(left)


T = TypeVar("T")


def _run_loop(main: Coroutine[Any, Any, T]) -> T:
    """Run the service's event loop until ``main`` returns: uvloop's (asyncio's loop on
    libuv), on which one client's check through spamc takes about 0.92x the time it takes on
    asyncio's own loop (``python -m benchmarks --only serve``); asyncio's own where uvloop is
    not installed (it has no build for Windows or PyPy) or is older than 0.18 (no ``run``)."""
    try:
        from uvloop import run as run_on_uvloop
    except ImportError:
        return asyncio.run(main)
    return run_on_uvloop(main)


def _metrics_server(metrics: Metrics | WorkersMetrics, address: tuple[str, int]) -> MetricsServer:
    """The HTTP server of ``--metrics HOST:PORT``, bound (ServiceError naming the option if it cannot be)."""
    try:
        return MetricsServer(metrics, *address)
    except OSError as error:
        raise listen_error(*address, error, option=f"--metrics {address[0]}:{address[1]}") from None


def _exit_code(left: int) -> int:
    """0, or 3 when ``left`` acknowledged lessons could not be folded (logged)."""
    if left:  # durable in the journals, but the model files alone do not hold them: say so, and fail
        log.error("stopped; %d acknowledged lessons could not be folded into their model files and stay in their "
                  "journals (the lines above say why); the next start folds them", left)
        return 3
    return 0


def _run_workers(settings: Settings, host: str, port: int, workers: int,
                 reread: Callable[[], tuple[Settings, str]] | None, log_target: LogTarget | None,
                 metrics: tuple[str, int] | None) -> int:
    """:func:`run` with ``workers`` processes (:mod:`streamnb.service.workers`), their metrics
    added up by one more (``--metrics``: :class:`~streamnb.service.metrics.WorkersMetrics`)."""
    listening = listen(host, port)
    folder = http = None
    try:
        if metrics is not None:
            folder = share_between_processes()
            http = _metrics_server(WorkersMetrics(folder), metrics)
            log.info("metrics on http://%s:%s/metrics, health on /health (the workers' figures in %s)",
                     *http.address, folder)

        def serve(sockets: list[socket.socket], ready: Callable[[], None]) -> int:
            counted = Metrics(shared=True) if folder is not None else None
            return _exit_code(_run_loop(Server(settings, reread, log_target, counted).serve(
                host, port, lambda _: ready(), sockets)))

        return run_workers(workers, listening, serve, log_target, http, folder)
    finally:
        for sock in listening:
            sock.close()
        if http is not None:
            http.httpd.server_close()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
