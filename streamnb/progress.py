"""A tiny progress bar for long loops, written to stderr.

It draws only when its stream is a terminal (or ``force=True``): in a pipe, a log file or
CI it stays silent, so output stays clean without the caller having to check.
It is called with the number of items done, which also makes it usable as the
``progress=`` callback of :func:`streamnb.evaluate.progressive_evaluate`.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["ProgressBar"]


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes:02d}:{seconds:02d}"


class ProgressBar:
    """One-line progress display: ``label [#####.....] 120/6046 2% 00:01<00:48``.

    Redraws at most every ``min_interval`` seconds (redrawing per item would cost more
    than the work in a fast loop). Without a ``total`` it shows the count and the rate.
    """

    def __init__(
        self,
        total: int | None = None,
        *,
        label: str = "",
        stream: TextIO | None = None,
        force: bool = False,
        min_interval: float = 0.2,
        width: int = 30,
    ) -> None:
        self.total = total
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = force or bool(isatty and isatty())
        self.min_interval = min_interval
        self.width = width
        self.done = 0
        self._start = time.monotonic()
        self._last_draw = float("-inf")
        self._closed = False

    def __call__(self, done: int, total: int | None = None) -> None:
        """Record that ``done`` items are finished (optionally updating the total), redrawing if due."""
        if total is not None:
            self.total = total
        self.done = done
        now = time.monotonic()
        if self.enabled and (now - self._last_draw >= self.min_interval or done == self.total):
            self._draw(now)

    def update(self, n: int = 1) -> None:
        """Advance by ``n`` items."""
        self(self.done + n)

    def render(self, now: float | None = None) -> str:
        """The current line, without the carriage return (useful for tests and logs)."""
        elapsed = (time.monotonic() if now is None else now) - self._start
        prefix = f"{self.label} " if self.label else ""
        if self.total:
            fraction = min(self.done / self.total, 1.0)
            filled = int(fraction * self.width)
            bar = "#" * filled + "." * (self.width - filled)
            remaining = elapsed / fraction - elapsed if fraction > 0 else 0.0
            return (
                f"{prefix}[{bar}] {self.done}/{self.total} {fraction:4.0%} "
                f"{_clock(elapsed)}<{_clock(remaining)}"
            )
        rate = self.done / elapsed if elapsed > 0 else 0.0
        return f"{prefix}{self.done} done {_clock(elapsed)} {rate:.0f}/s"

    def _draw(self, now: float) -> None:
        self._last_draw = now
        self.stream.write("\r" + self.render(now))
        self.stream.flush()

    def close(self) -> None:
        """Draw the final state and end the line."""
        if self.enabled and not self._closed:
            self._draw(time.monotonic())
            self.stream.write("\n")
            self.stream.flush()
        self._closed = True

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
