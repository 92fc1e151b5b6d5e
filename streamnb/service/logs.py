"""The service's log: where it goes, its one format, and the line each request leaves.

Every line has one format: ``<time> streamnb serve[<pid>] <level>: <message>``, the time in
ISO 8601 with milliseconds and the UTC offset (``2026-12-06T10:00:00.123+0000``). The log
goes to standard error, to a file (``--log-file PATH``: appended to, reopened on SIGHUP so
that logrotate can move it) or to syslog (``--syslog``: facility ``mail`` as spamd's, the
local socket ``/dev/log``; syslog stamps the time itself). ``--log-level`` (default
``info``) picks what is written:

- ``info``: one line per request (:func:`request_line`: the command, the user, the outcome,
  the verdict and score of a check, the milliseconds, the message's bytes, the reply's code),
  the start, the signals, the stop;
- ``warning``: what went wrong but was answered: a refused request with its reason (a TELL
  refused, a malformed request), a check answered "unsure" because it could not be scored,
  a model folded late; ``error``: what the service could not do (a fold that failed).
"""

from __future__ import annotations

import errno
import logging
import logging.handlers
import os
import stat
import time
from dataclasses import dataclass, field

from .names import shown
from .settings import SYSLOG_SOCKET

_ROOT = "streamnb"  # the service's logger ("streamnb.serve") and the journal's ("streamnb.journal")


class _Formatter(logging.Formatter):
    """ISO 8601 times with milliseconds and the UTC offset (the second's text made once)."""

    _second: tuple[int, str, str] = (-1, "", "")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802 (logging's name)
        second = int(record.created)
        if second != self._second[0]:
            stamp = time.localtime(second)
            self._second = (second, time.strftime("%Y-%m-%dT%H:%M:%S", stamp), time.strftime("%z", stamp))
        return f"{self._second[1]}.{int(record.msecs):03d}{self._second[2]}"


class ReopenedFileHandler(logging.FileHandler):
    """A log file appended to, that :meth:`reopen` opens again (after logrotate moved it)."""

    def reopen(self) -> None:
        """Close the file and open its path again (made anew if it was moved away)."""
        self.acquire()
        try:
            old = self.setStream(self._open())
            if old is not None:
                old.close()
        finally:
            self.release()


@dataclass
class LogTarget:
    """Where the log goes, as the options say: standard error, a file, or syslog.

    Parameters
    ----------
    level
        One of :data:`streamnb.service.settings.LOG_LEVELS`.
    path
        The log file (``--log-file``), or None.
    syslog
        The syslog facility (``--syslog``), or None.
    syslog_socket
        The syslog socket (``/dev/log``).
    """

    level: str = "info"
    path: str | None = None
    syslog: str | None = None
    syslog_socket: str = SYSLOG_SOCKET
    handler: logging.Handler | None = field(default=None, repr=False)

    def open(self) -> None:
        """Send the service's log to this target (replacing the one before).

        Raises
        ------
        OSError
            The log file cannot be opened, or the syslog socket is missing (or not a socket).
        """
        if self.path is not None:
            handler: logging.Handler = ReopenedFileHandler(self.path, encoding="utf-8", errors="backslashreplace")
            handler.setFormatter(_Formatter("%(asctime)s streamnb serve[%(process)d] %(levelname)s: %(message)s"))
        elif self.syslog is not None:
            # the handler would drop every line, each with a traceback, when nothing listens there
            try:
                is_socket = stat.S_ISSOCK(os.stat(self.syslog_socket).st_mode)
            except OSError as error:
                raise OSError(error.errno, f"{error.strerror} (syslog's socket: is a syslog daemon running? "
                                           "--syslog-socket names another)", self.syslog_socket) from None
            if not is_socket:
                raise OSError(errno.ENOTSOCK, "not a socket (syslog's: --syslog-socket)", self.syslog_socket)
            handler = logging.handlers.SysLogHandler(self.syslog_socket,
                                                     logging.handlers.SysLogHandler.facility_names[self.syslog])
            handler.setFormatter(logging.Formatter("streamnb[%(process)d]: %(levelname)s: %(message)s"))
        else:
            handler = logging.StreamHandler()
            handler.setFormatter(_Formatter("%(asctime)s streamnb serve[%(process)d] %(levelname)s: %(message)s"))
        # A line per request: what no line shows is not gathered (the logging HOWTO's "Optimization").
        logging._srcfile = None  # the caller's file and line
        logging.logThreads = False
        logging.logMultiprocessing = False
        root = logging.getLogger(_ROOT)
        if self.handler is not None:
            root.removeHandler(self.handler)
            self.handler.close()
        root.addHandler(handler)
        root.setLevel(self.level.upper())
        root.propagate = False  # one line per record, whatever the root logger does
        self.handler = handler

    def reopen(self) -> None:
        """Open the log file again (SIGHUP): nothing for standard error or syslog.

        Raises
        ------
        OSError
            The log file cannot be opened (the old one is kept).
        """
        if isinstance(self.handler, ReopenedFileHandler):
            self.handler.reopen()

    def close(self) -> None:
        """Let go of the handler (the end of the service)."""
        if self.handler is not None:
            logging.getLogger(_ROOT).removeHandler(self.handler)
            self.handler.close()
            self.handler = None


@dataclass
class Outcome:
    """What one request came to: its log line (:func:`request_line`) and its metrics.

    Parameters
    ----------
    command
        The request's method (``-`` before one was read).
    user
        The user, as the request named it.
    started
        ``time.monotonic()`` when the connection was taken.
    size
        The message's bytes (0 before it was read).
    code
        The reply's code (0: EX_OK).
    outcome
        ``ok``, ``unscored`` (a check answered unsure because it could not be scored),
        ``refused`` (an error reply: the request was not done) or ``error`` (an internal one).
    verdict, score
        A check's verdict and its score (times 10, as spamc prints it); a TELL's lesson
        (``spam``, ``ham``, ``forget``) and no score.
    reason
        Why it was refused, or not scored.
    """

    command: str = "-"
    user: str = "-"
    started: float = field(default_factory=time.monotonic)
    size: int = 0
    code: int = 0
    outcome: str = "ok"
    verdict: str | None = None
    score: str | None = None
    reason: str | None = None

    @property
    def milliseconds(self) -> float:
        """The milliseconds since the connection was taken."""
        return 1000.0 * (time.monotonic() - self.started)


def _value(text: str) -> str:
    """A field's value: as it is, or quoted when it holds a space, a quote or ``=``."""
    text = shown(text)
    if text and not any(c in text for c in ' "=\\'):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def request_line(outcome: Outcome) -> str:
    """The log line of one request: ``CHECK user=alice outcome=ok verdict=spam score=9.9
    ms=2.1 bytes=1234 code=0`` (and ``reason="..."`` for a refusal or a check not scored).

    Parameters
    ----------
    outcome
        What the request came to.

    Returns
    -------
    str
        The fields, ``name=value`` (a value with a space or a quote in double quotes; a
        character that is not printable as ``\\xNN``; a user's name cut at 200 characters).
    """
    user = outcome.user if len(outcome.user) <= 200 else outcome.user[:200] + "..."  # a line stays a line
    fields = [outcome.command, f"user={_value(user)}", f"outcome={outcome.outcome}"]
    if outcome.verdict is not None:
        fields.append(f"verdict={outcome.verdict}")
    if outcome.score is not None:
        fields.append(f"score={outcome.score}")
    fields += [f"ms={outcome.milliseconds:.1f}", f"bytes={outcome.size}", f"code={outcome.code}"]
    if outcome.reason:
        fields.append(f"reason={_value(' '.join(outcome.reason.split())[:300])}")
    return " ".join(fields)

