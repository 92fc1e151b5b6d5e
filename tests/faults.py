"""Faults injected into a ``streamnb`` process, for the tests of issue 28.

    python -m tests.faults FAULT [FAULT ...] -- ARGS ...     (ARGS: a streamnb command line)

The process runs ``streamnb ARGS`` with the system calls below failing as a sick machine
makes them fail. Each fault is active while its switch file exists (``...@SWITCH``), so a
test turns it on and off while the process runs; without ``@SWITCH`` it is always on.

    readonly=DIR[@SWITCH]     every write under DIR fails with EROFS (a file system remounted read-only)
    denied=DIR[@SWITCH]       ... with EACCES (permission denied: the tests run as root, whom
                              chmod does not stop)
    full=DIR[@SWITCH]         os.write and fsync of files under DIR fail with ENOSPC (a full disk)
    fsync=GLOB[@SWITCH]       fsync of a file or folder whose path matches GLOB (fnmatch) fails with
                              EIO (the disk lost what was written since the last fsync)
    kill=PHASE                SIGKILL in a save of a user's model (``UserModel._save_sync``), at
                              PHASE: see KILL_PHASES
    savebug=GLOB[@SWITCH]     a save of a model file whose path matches GLOB raises ValueError before
                              writing anything (a bug in a model's save, like issue 35's "'ham' is
                              not in list"): ``persist.write_atomically`` is replaced
    slowobserve=SECONDS[@SWITCH]
                              ``SpamFilter.observe`` sleeps SECONDS first (a model slow to observe:
                              what a check's client waits for shows)

Before acting, a fault writes one line to stderr (``fault: ...``), so a test can check that
the fault it meant is the one that struck. Only os.* calls are wrapped (those the journal,
the lock and ``persist.write_atomically`` make), except by kill and savebug.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

# A save (fold) of a user's model, as system calls: fsync of the temporary file, os.replace
# onto the model file, fsync of the folder, unlink of the journal, fsync of the folder.
# "before N" / "after N" name the moment around the N-th of those calls in the save.
KILL_PHASES = ("start", "before 1", "before 2", "before 3", "before 4", "before 5", "after 5")
_SAVE_CALLS = ("fsync", "replace", "unlink")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _say(text: str) -> None:
    os.write(2, f"fault: {text}\n".encode())


def _fd_path(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


def _under(path: Any, folder: str) -> bool:
    if isinstance(path, int):
        path = _fd_path(path)
    try:
        full = os.path.abspath(os.fsdecode(path))
    except TypeError:
        return False
    return full == folder or full.startswith(folder + os.sep)


def _switch(spec: str) -> tuple[str, Callable[[], bool]]:
    value, _, switch = spec.partition("@")
    return value, (lambda: os.path.exists(switch)) if switch else (lambda: True)


def _wrap(name: str, wrapper: Callable[..., Any]) -> None:
    original = getattr(os, name)
    setattr(os, name, lambda *args, **kwargs: wrapper(original, *args, **kwargs))


def _refuse_writes(folder: str, active: Callable[[], bool], code: int) -> None:
    """Every call that would change something under folder fails with code."""

    def fail(what: str, path: Any) -> OSError:
        _say(f"{what} {path!r}: {errno.errorcode[code]}")
        return OSError(code, os.strerror(code), os.fsdecode(path) if not isinstance(path, int) else _fd_path(path))

    def opening(original: Callable, path: Any, flags: int, *args: Any, **kwargs: Any) -> Any:
        if flags & _WRITE_FLAGS and active() and _under(path, folder):
            raise fail("open", path)
        return original(path, flags, *args, **kwargs)

    def changing(original: Callable, path: Any, *args: Any, **kwargs: Any) -> Any:
        if active() and _under(path, folder):
            raise fail(original.__name__, path)
        return original(path, *args, **kwargs)

    _wrap("open", opening)
    for name in ("replace", "rename", "unlink", "remove", "mkdir", "rmdir"):
        _wrap(name, changing)


def _full(folder: str, active: Callable[[], bool]) -> None:
    def writing(original: Callable, fd: int, *args: Any) -> Any:
        if active() and _under(fd, folder):
            _say(f"{original.__name__} {_fd_path(fd)!r}: ENOSPC")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), _fd_path(fd))
        return original(fd, *args)

    _wrap("write", writing)
    _wrap("fsync", writing)


def _fsync(pattern: str, active: Callable[[], bool]) -> None:
    def syncing(original: Callable, fd: int) -> Any:
        path = _fd_path(fd)
        if active() and fnmatch.fnmatch(path, pattern):
            _say(f"fsync {path!r}: EIO")
            raise OSError(errno.EIO, os.strerror(errno.EIO), path)
        return original(fd)

    _wrap("fsync", syncing)


def _kill(phase: str) -> None:
    if phase not in KILL_PHASES:
        raise SystemExit(f"kill=PHASE: PHASE is one of {', '.join(KILL_PHASES)}; got {phase!r}")
    from streamnb.service import serve

    # per thread: a user's save and the site model's may run at once, each in a thread of
    # its own, and each counts its own calls (one shared count let both pass the phase)
    state = threading.local()

    def die(where: str) -> None:
        _say(f"kill at {where}")
        os.kill(os.getpid(), signal.SIGKILL)

    def counting(original: Callable, *args: Any) -> Any:
        saving = getattr(state, "saving", False)
        if saving:
            state.calls += 1
            if phase == f"before {state.calls}":
                die(f"{phase} ({original.__name__})")
        result = original(*args)
        if saving and phase == f"after {state.calls}":
            die(f"{phase} ({original.__name__})")
        return result

    for name in _SAVE_CALLS:
        _wrap(name, counting)
    save = serve.UserModel._save_sync

    def saving(self: Any) -> None:
        if phase == "start":
            die("start")
        state.saving, state.calls = True, 0
        try:
            save(self)
        finally:
            state.saving = False

    serve.UserModel._save_sync = saving  # type: ignore[method-assign]


def _savebug(pattern: str, active: Callable[[], bool]) -> None:
    from streamnb import persist

    write = persist.write_atomically

    def failing(path: str, data: bytes) -> None:
        if active() and fnmatch.fnmatch(os.path.abspath(path), pattern):
            _say(f"save {path!r}: ValueError")
            raise ValueError("'ham' is not in list")
        write(path, data)

    persist.write_atomically = failing


def _slowobserve(seconds: str, active: Callable[[], bool]) -> None:
    import time

    from streamnb import SpamFilter

    observe = SpamFilter.observe

    def slow(self: Any, *args: Any, **kwargs: Any) -> Any:
        if active():
            _say(f"observe: sleeping {seconds} s")
            time.sleep(float(seconds))
        return observe(self, *args, **kwargs)

    SpamFilter.observe = slow  # type: ignore[method-assign]


def install(faults: list[str]) -> None:
    for fault in faults:
        kind, _, spec = fault.partition("=")
        if kind == "kill":
            _kill(spec)
            continue
        value, active = _switch(spec)
        if kind in ("readonly", "denied"):
            _refuse_writes(os.path.abspath(value), active, errno.EROFS if kind == "readonly" else errno.EACCES)
        elif kind == "full":
            _full(os.path.abspath(value), active)
        elif kind == "fsync":
            _fsync(value, active)
        elif kind == "savebug":
            _savebug(value, active)
        elif kind == "slowobserve":
            _slowobserve(value, active)
        else:
            raise SystemExit(f"unknown fault {fault!r} (see tests/faults.py)")


def main(argv: list[str]) -> int:
    if "--" not in argv:
        raise SystemExit(__doc__)
    split = argv.index("--")
    install(argv[:split])
    from streamnb.service.cli import main as streamnb

    return streamnb(argv[split + 1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
