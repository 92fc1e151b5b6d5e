"""A ``streamnb serve`` subprocess for the service's benchmarks (serve, site, serve_fuzz, serve_soak):
on 127.0.0.1, a free port, its log kept, and what it holds of the machine read from /proc; and
the requests a spamd client sends it."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child_env() -> dict[str, str]:
    """This environment, with bytecode caching on (as for an installed package) and streamnb importable."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def outside_env() -> dict[str, str]:
    """This environment without PYTHONPATH: for another interpreter with a streamnb of its own
    (:mod:`benchmarks.previous_service`), which must import its own, not this tree's."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


class Service:
    """``streamnb serve --models MODELS --port 0 OPTIONS`` until :meth:`stop`; ``python``:
    another interpreter, with a streamnb of its own installed (:mod:`benchmarks.previous_service`),
    run outside this tree so that its streamnb is the one imported; ``program``: what runs the
    command (``-m streamnb``, or ``-c CODE`` that calls it)."""

    def __init__(self, models: Path, *options: str, python: Path | None = None,
                 program: tuple[str, ...] = ("-m", "streamnb")) -> None:
        env = child_env() if python is None else outside_env()
        self.process = subprocess.Popen(
            [str(python or sys.executable), *program, "serve", "--models", str(models), "--port", "0", *options],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
            cwd=None if python is None else models)
        assert self.process.stderr is not None
        self.log: list[str] = []
        for raw in self.process.stderr:
            line = raw.decode(errors="replace")
            self.log.append(line)
            match = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            if match:
                self.port = int(match.group(1))
                break
        else:
            raise RuntimeError(f"streamnb serve did not start (exit {self.process.wait()}): {''.join(self.log)}")
        threading.Thread(target=self._collect, daemon=True).start()

    def _collect(self) -> None:
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            self.log.append(raw.decode(errors="replace"))

    def alive(self) -> bool:
        return self.process.poll() is None

    def rss_kib(self) -> int:
        """Resident memory (VmRSS), KiB."""
        with open(f"/proc/{self.process.pid}/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))

    def cpu_seconds(self) -> float:
        """CPU seconds the service has used (user and system, from /proc)."""
        with open(f"/proc/{self.process.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def open_files(self) -> int:
        """Open file descriptors (sockets, journals, the log pipe ...)."""
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def stop(self, timeout: float = 120) -> int:
        """SIGTERM (the service folds every journal), then its exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def free_port() -> int:
    """A loopback port free at the time of asking."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def redis_server_args(program: str, port: int, folder: Path) -> list[str]:
    """A redis-server command line for the tests and benchmarks: loopback ``port``, its files
    in ``folder``, the append-only file fsynced at every write (what the service guide
    recommends), no RDB snapshots, in the foreground."""
    return [program, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder), "--appendonly", "yes",
            "--appendfsync", "always", "--save", "", "--daemonize", "no", "--logfile", str(folder / "redis.log")]


def request(method: str, user: str, raw: bytes, label: str | None = None) -> bytes:
    """A spamd request as spamc sends it (TELL with ``label``: learn the message as that class)."""
    extra = f"Message-class: {label}\r\nSet: local\r\n" if method == "TELL" else ""
    return f"{method} SPAMC/1.5\r\n{extra}User: {user}\r\nContent-length: {len(raw)}\r\n\r\n".encode() + raw


def exchange(port: int, data: bytes, timeout: float = 60.0) -> bytes:
    """One request on a connection of its own, as spamc makes them: the whole reply."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        connection.sendall(data)
        parts = []
        while part := connection.recv(65536):
            parts.append(part)
    return b"".join(parts)
