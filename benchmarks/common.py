"""Shared helpers of the benchmark suite: clocks, rounds and medians, machine facts, memory.

Clocks. Single-threaded work is timed with CPU time (``time.process_time``): on a shared
machine the time other processes take the core does not count against whoever happened to
be running. It still drifts (caches and memory bandwidth are shared), so contenders take
turns within each round (:func:`rounds`) and a figure is the median over rounds, reported
with its min and max. Ratios are taken round by round (two contenders of one round ran
under the same load) and summarised the same way.

A timed figure in results.json is a :func:`summary`: ``{"median", "min", "max", "runs",
"clock"}`` where clock is ``"cpu"`` (process_time) or ``"wall"`` (perf_counter).
"""

from __future__ import annotations

import gc
import importlib.metadata
import os
import platform
import statistics
import time
import tracemalloc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CPU = "cpu"
WALL = "wall"
LIBRARIES = ("streamnb", "river", "scikit-learn", "numpy", "scipy", "pandas", "matplotlib", "dask", "distributed")


# -- summaries and rounds ---------------------------------------------------------------------

def summary(values: Sequence[float], clock: str | None = None) -> dict[str, Any]:
    """Median, min and max of repeated measurements, with the runs themselves."""
    values = [float(v) for v in values]
    out: dict[str, Any] = {"median": statistics.median(values), "min": min(values), "max": max(values),
                           "runs": values}
    if clock is not None:
        out["clock"] = clock
    return out


def rate(seconds: Mapping[str, Any], amount: float) -> dict[str, Any]:
    """``amount / seconds`` as a summary (the slowest run gives the min rate)."""
    return {"median": amount / seconds["median"], "min": amount / seconds["max"], "max": amount / seconds["min"],
            "clock": seconds.get("clock")}


def ratio(numerator: Sequence[float], denominator: Sequence[float]) -> dict[str, Any]:
    """Round-by-round ratio numerator[r] / denominator[r], summarised."""
    return summary([a / b for a, b in zip(numerator, denominator)])


def cpu_seconds(function: Callable[[], Any]) -> float:
    """CPU seconds of this process spent in ``function()`` (garbage collected first)."""
    gc.collect()
    start = time.process_time()
    function()
    return time.process_time() - start


def rounds(contenders: Mapping[str, Callable[[], Any]], repeats: int,
           log: Callable[[str], None] | None = None) -> dict[str, list[Any]]:
    """Run every contender once per round, ``repeats`` rounds; returns name -> list of results.

    Within a round the contenders take turns; the starting contender rotates from round to
    round so that none is always first (or always right after the slowest one).
    """
    names = list(contenders)
    results: dict[str, list[Any]] = {name: [] for name in names}
    for r in range(repeats):
        shift = r % len(names) if names else 0
        for name in names[shift:] + names[:shift]:
            results[name].append(contenders[name]())
        if log is not None:
            log(f"  round {r + 1}/{repeats} done")
    return results


def cell(text: str) -> str:
    """Text for a markdown table cell: its bars escaped (``BagOfWords | MNB``, ``|V|``)."""
    return str(text).replace("|", "\\|")


# -- memory -------------------------------------------------------------------------------

def rss_bytes() -> int | None:
    """Resident set size of this process (Linux /proc), or None where it cannot be read."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def traced_bytes(build: Callable[[], Any]) -> tuple[int, Any]:
    """(bytes still allocated after ``build()``, its result), by tracemalloc.

    Only allocations made during the build are seen: objects that existed before (the
    caller's documents, their strings) are not counted even when the result keeps them.
    """
    gc.collect()
    tracemalloc.start()
    try:
        result = build()
        gc.collect()
        current, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return current, result


# -- machine facts ------------------------------------------------------------------------

def cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo on Linux)."""
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_average() -> list[float] | None:
    """1, 5 and 15-minute load averages, or None where the OS has none."""
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except (OSError, AttributeError):
        return None


def memory_total() -> int | None:
    """Physical memory in bytes (Linux /proc/meminfo), or None."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def machine_info() -> dict[str, Any]:
    """CPU, cores, memory, Python, OS and the thread-pool settings of this run."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "cores_usable": usable,
        "memory_bytes": memory_total(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "os": platform.platform(),
        "threads": {name: os.environ.get(name) for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                             "MKL_NUM_THREADS")},
    }


def library_versions() -> dict[str, str | None]:
    """Installed versions of streamnb and the libraries compared or used."""
    versions: dict[str, str | None] = {}
    for name in LIBRARIES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    if versions["streamnb"] is None:  # running from a checkout that is not installed
        import streamnb

        versions["streamnb"] = getattr(streamnb, "__version__", None)
    return versions


def stamp() -> dict[str, Any]:
    """When, and under which load, something started or ended."""
    return {"time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "load_average": load_average()}


# -- the context handed to each section ---------------------------------------------------

@dataclass
class Context:
    """What a section needs: sizes (quick or full), repeats, the corpus, a logger."""

    quick: bool
    repeats: int
    corpus_path: str | None = None
    out_dir: Path = Path(".")
    verbose: bool = True
    _corpus: Any = field(default=None, repr=False)

    def pick(self, full: Any, quick: Any) -> Any:
        """The full-run value or the --quick one."""
        return quick if self.quick else full

    def corpus(self):
        """The message stream (loaded once): the real corpus, or the synthetic fallback."""
        if self._corpus is None:
            from .data import QUICK_MESSAGES, load_corpus

            self._corpus = load_corpus(self.corpus_path, limit=QUICK_MESSAGES if self.quick else None)
        return self._corpus

    @property
    def loaded_corpus(self):
        """The corpus if a section has loaded it, else None (the scaling section needs none)."""
        return self._corpus

    def log(self, message: str) -> None:
        if self.verbose:
            print(message, flush=True)
