"""A ``streamnb serve`` subprocess for the tests (tests/test_serve*.py; the ``serve`` fixture
is in conftest.py)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A loopback port free at the time of asking."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Served:
    """A ``streamnb serve`` subprocess on a free port; stderr collected for failures.

    ``faults``: run it under tests/faults.py with these faults injected.
    """

    def __init__(self, models: Path, *options: str, faults: tuple[str, ...] = ()) -> None:
        self.models = models
        models.mkdir(parents=True, exist_ok=True)  # the server makes no folder (issue 28)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        program = ["-m", "tests.faults", *faults, "--"] if faults else ["-m", "streamnb"]
        self.process = subprocess.Popen(
            [sys.executable, *program, "serve", "--models", str(models), "--port", "0", *options],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ROOT)
        self.log: list[str] = []
        # --log-file: the log is read from the file (standard error holds only what fails before it opens)
        self.log_file = Path(options[options.index("--log-file") + 1]) if "--log-file" in options else None
        if self.log_file is not None:
            deadline = time.monotonic() + 60
            while not (match := re.search(r"listening on 127\.0\.0\.1:(\d+)", self.text(wait=0))):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.process.kill()
                    raise AssertionError(f"the server did not start: {self.process.stderr.read().decode()}")
                time.sleep(0.05)
        else:
            watchdog = threading.Timer(60, self.process.kill)  # a server that never says where it listens
            watchdog.start()
            for raw in self.process.stderr:  # log lines (a recovery ...) may come before the address
                line = raw.decode(errors="replace")
                self.log.append(line)
                match = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
                if match:
                    break
            else:
                raise AssertionError(f"the server did not start: {''.join(self.log)}")
            watchdog.cancel()
        self.port = int(match.group(1))
        metrics = re.search(r"metrics on http://127\.0\.0\.1:(\d+)/metrics", self.text(wait=0))
        self.metrics_port = int(metrics.group(1)) if metrics else None
        threading.Thread(target=self._collect, daemon=True).start()

    def _collect(self) -> None:
        for line in self.process.stderr:
            self.log.append(line.decode(errors="replace"))

    def stop(self, expect: int = 0) -> None:
        """SIGTERM: the server folds every journal into its model file and exits 0 (3 if a fold failed)."""
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(timeout=60) == expect, "".join(self.log)

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def alive(self) -> bool:
        return self.process.poll() is None

    def text(self, wait: float = 0.2) -> str:
        """Its log so far (stderr, or the --log-file)."""
        time.sleep(wait)  # the collecting thread (the server's writes) may be a line behind
        if self.log_file is not None:
            return self.log_file.read_text(errors="replace") if self.log_file.exists() else ""
        return "".join(self.log)


def expected_check(expected, message, i: int) -> tuple:
    """Message ``message(i)``, the verdict ``expected`` (the server's model, in process) gives it,
    and the score and threshold spamc should print for it (the rule's spam cutoff on the score)."""
    from streamnb.service.serve import score_fields

    raw = message(i)
    verdict = expected.verdict(raw)
    _, score, threshold = score_fields(verdict, expected.filter.rule)
    return raw, verdict, score, threshold
