"""``streamnb serve``'s options made into the server's settings, read again on SIGHUP.

``--config FILE`` holds more options of ``streamnb serve``, written as on the command line
(any number a line, ``#`` starts a comment, quotes as in a shell); they are read after the
command line's, so the file's win. On SIGHUP the file is read again over the command line:
the decision rule and its cutoffs, the model of a new user, the limits, ``--allow-tell``,
``--observe``, ``--site-blend``, the snapshots and ``--log-level`` change for the requests
that follow; where the service listens, where it logs, its models folder, ``--read-only``
and ``--site`` need a restart (the log says so, and they are kept).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import functools
import io
import logging
import shlex
from collections.abc import Iterator
from pathlib import Path

from .cli_common import CommandError, build_model, decision_rule, rule_options
from .settings import Limits, Settings

log = logging.getLogger("streamnb.serve")

# Options a SIGHUP cannot change (the service keeps them, and the log says so).
RESTART_OPTIONS = {"host": "--host", "port": "--port", "workers": "--workers", "metrics": "--metrics",
                   "log_file": "--log-file",
                   "syslog": "--syslog", "syslog_socket": "--syslog-socket"}


class SyslogFacilities:
    """``--syslog``'s choices: ``SysLogHandler``'s facility names, read each time argparse
    looks (a name given, a name refused), so that building the parser, and commands other than
    ``serve``, do not import ``logging.handlers`` (10 ms of ``streamnb classify``'s start)."""

    def __iter__(self) -> Iterator[str]:
        from logging.handlers import SysLogHandler

        return iter(sorted(SysLogHandler.facility_names))

    def __contains__(self, name: object) -> bool:
        return name in list(self)


def address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``--metrics``): the host and a TCP port (0: any free one).

    Parameters
    ----------
    text
        The option's value, e.g. ``127.0.0.1:9783`` or ``[::1]:9783``.

    Returns
    -------
    tuple of (str, int)
        The host (without brackets) and the port.

    Raises
    ------
    argparse.ArgumentTypeError
        Not HOST:PORT with a port from 0 to 65535.
    """
    host, colon, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not colon or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT (a port from 0 to 65535), e.g. 127.0.0.1:9783")
    return host, int(port)


def store_url(text: str) -> str:
    """``redis://HOST:PORT/DB`` (``--store``): where the models' lessons and snapshots are shared.

    Parameters
    ----------
    text
        The option's value, e.g. ``redis://10.0.0.5:6379/0`` (``rediss://`` for TLS).

    Returns
    -------
    str
        The URL as given.

    Raises
    ------
    argparse.ArgumentTypeError
        Not a redis:// or rediss:// URL with a host, a port from 1 to 65535 and a database number.
    """
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        parts, port = None, None
    database = parts.path.lstrip("/") if parts is not None else ""
    if parts is None or parts.scheme not in ("redis", "rediss") or not parts.hostname or port is None \
            or port == 0 or not (database == "" or database.isdigit()):
        raise argparse.ArgumentTypeError(f"{text!r} is not redis://HOST:PORT/DB (a port from 1 to 65535, a database "
                                         "number), e.g. redis://127.0.0.1:6379/0")
    return text


def log_level(args: argparse.Namespace) -> str:
    """The log level the options ask for (``-v`` is ``debug``).

    Parameters
    ----------
    args
        ``streamnb serve``'s options.

    Returns
    -------
    str
        ``debug``, ``info``, ``warning`` or ``error``.
    """
    return "debug" if args.verbose else args.log_level


def with_config(args: argparse.Namespace) -> argparse.Namespace:
    """The command line's options with those of ``--config FILE`` read after them.

    Parameters
    ----------
    args
        ``streamnb serve``'s command line, parsed.

    Returns
    -------
    argparse.Namespace
        The options (``args`` itself without ``--config``).

    Raises
    ------
    CommandError
        The file cannot be read, or holds an option ``streamnb serve`` refuses (named).
    """
    if args.config is None:
        return args
    try:
        words = shlex.split(Path(args.config).read_text(encoding="utf-8"), comments=True)
    except (OSError, ValueError) as error:  # ValueError: an unclosed quote; UnicodeDecodeError is one
        raise CommandError(f"--config {args.config}: {getattr(error, 'strerror', None) or error}") from None
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):  # argparse's one line, into the error
            given = ["--models", args.models] if args.models is not None else []
            options = args.command_parser.parse_args([*given, *words], namespace=copy.copy(args))
    except SystemExit:
        raise CommandError(f"--config {args.config}: {' '.join(said.getvalue().split())}") from None
    if options.config != args.config:
        raise CommandError(f"--config {args.config}: --config cannot be given in the file itself")
    return options  # type: ignore[no-any-return]  # (argparse's parse_args returns the namespace given)


def serve_settings(args: argparse.Namespace) -> Settings:
    """The server's settings from ``streamnb serve``'s options.

    Parameters
    ----------
    args
        The options (:func:`with_config`).

    Returns
    -------
    Settings
        The settings.

    Raises
    ------
    CommandError
        Options that do not go together (``--read-only`` with ``--allow-tell``, ``--rule chi2``
        with a site model), or a rule's options the model refuses.
    """
    if args.models is None and args.store is None:
        raise CommandError("--models DIR is needed: the folder of the users' models (or --store redis://HOST:PORT/DB "
                           "to keep them in Redis)")
    if args.read_only and args.allow_tell:
        raise CommandError("--read-only refuses every TELL: it cannot go with --allow-tell")
    if args.store is not None:
        if args.read_only:
            raise CommandError("--read-only serves a models folder as it is: it cannot go with --store")
        try:
            import redis  # noqa: F401 (only whether it is there)
        except ImportError:
            raise CommandError("--store needs the redis library: pip install 'streamnb[redis]'") from None
    if args.site and args.rule == "chi2":
        raise CommandError("--rule chi2 scores words, not log-odds: it cannot blend the site model's verdict with a "
                           "user's; use another --rule, or --no-site")
    decision_rule(args, build_model(args))  # a bad option fails now, not at the first user
    return Settings(
        models=Path(args.models).resolve() if args.models is not None else None,
        new_model=functools.partial(build_model, args), rule=rule_options(args),
        allow_tell=args.allow_tell, read_only=args.read_only,
        max_models=args.max_models, snapshot_every=args.snapshot_every, snapshot_seconds=args.snapshot_seconds,
        site=args.site, site_learns=args.site_learns, site_blend=args.site_blend, observe=args.observe,
        max_memory=args.max_memory, store=args.store,
        limits=Limits(max_size=args.max_size, timeout=args.timeout, max_connections=args.max_connections,
                      lock_timeout=args.lock_timeout))


def run_serve(command_line: argparse.Namespace) -> int:
    """``streamnb serve``: the log opened, the settings made, the service run until SIGTERM or SIGINT.

    Parameters
    ----------
    command_line
        ``streamnb serve``'s command line, parsed.

    Returns
    -------
    int
        0, or 3 when lessons could not be folded into their model files (with ``--workers``, the
        worst exit code of the workers: :func:`streamnb.service.serve.run`).

    Raises
    ------
    CommandError
        Bad options (in the ``--config`` file too).
    OSError
        The log file cannot be opened, or syslog's socket reached.
    ServiceError
        The models folder cannot be used, or an address cannot be listened on.
    """
    from .logs import LogTarget
    from .serve import run

    args = with_config(command_line)
    settings = serve_settings(args)
    target = LogTarget(log_level(args), args.log_file, args.syslog, args.syslog_socket)
    target.open()

    def reread() -> tuple[Settings, str]:
        again = with_config(command_line)
        for name, option in RESTART_OPTIONS.items():
            if getattr(again, name) != getattr(args, name):
                log.warning("SIGHUP: %s cannot change while serving (restart the service for it); kept as it was",
                            option)
        return serve_settings(again), log_level(again)

    try:
        return run(settings, args.host, args.port, reread=reread, log_target=target, metrics=args.metrics,
                   workers=args.workers)
    finally:
        target.close()
