"""Several hosts sharing their models through Redis (``streamnb serve --store``, issue 37); not run
by default (``--only store``).

A redis-server of this run's own (Debian's; the section says why it skipped when there is none)
on a free loopback port, its append-only file fsynced at every write (``appendonly yes``,
``appendfsync always``: the setting the service guide recommends), in a temporary folder.
Every request is spamd's, one connection each as spamc makes them, sent by this process.
One run, wall clock; the hosts, Redis and the clients share the machine's cores.

**propagation**: three hosts. Lesson after lesson (the corpus's messages, as user ``bench``) is
told through host 0; from the moment its acknowledgement arrives, hosts 1 and 2 are asked at
once (REPORT, one client thread each) until the counts they report include it. The time
until both do: p50, p99, max, and apart the first lesson's (when hosts 1 and 2 first meet
the user: they read its snapshot and the site model's).

**throughput**: TELL then CHECK of the same messages (distinct lessons, then the same messages
checked), by ``clients`` threads, through one host of file mode (``--models``: journals
fsynced) and one host with the store, each starting empty; requests a second and the ratio
store / file.

**memory**: one host with the store and ``--max-models M``; one lesson each for U users (a new
model each: its first snapshot made, the model loaded, the lesson applied; the least recently
used model let go beyond M); the host's resident memory at the end, and the models it holds.
"""

from __future__ import annotations

import concurrent.futures
import os
import re
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from . import common
from .bench_serve import run_clients
from .service import Service, exchange, free_port, redis_server_args, request

NAME = "store"
TITLE = "Several hosts sharing models through Redis (streamnb serve --store): propagation, throughput, memory"
DEFAULT = False
REPEATED = False  # one run: the latencies are many samples of one run; the rates are wall clock
LEARNED = re.compile(rb"model: (\d+) spam and (\d+) ham learned")


class Redis:
    """A redis-server of this run's own: a free loopback port, appendfsync always, in ``folder``."""

    def __init__(self, program: str, folder: Path) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = subprocess.Popen(
            redis_server_args(program, self.port, folder),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as connection:
                    connection.sendall(b"PING\r\n")
                    if connection.recv(64).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start: {(folder / 'redis.log').read_text()[-300:]}")
            time.sleep(0.05)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def counts(reply: bytes) -> int:
    """The lessons a REPORT's user model has learned (0 before it has any)."""
    match = LEARNED.search(reply)
    return int(match.group(1)) + int(match.group(2)) if match else 0


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def propagation(ctx: common.Context, redis: Redis, folder: Path) -> dict[str, Any]:
    messages = ctx.corpus().messages[: ctx.pick(301, 31)]
    hosts = [Service(folder / f"host{k}", "--store", redis.url, "--allow-tell", "--no-observe") for k in range(3)]
    probe = messages[0].raw
    delays: list[float] = []
    try:
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            for k, message in enumerate(messages, 1):
                reply = exchange(hosts[0].port, request("TELL", "bench", message.raw, message.label))
                acknowledged = time.perf_counter()
                if not reply.startswith(b"SPAMD/1.5 0 "):
                    raise RuntimeError(f"TELL refused: {reply[:200]!r}")

                def until_scored(port: int, lessons: int = k) -> float:
                    while counts(exchange(port, request("REPORT", "bench", probe))) < lessons:
                        pass
                    return time.perf_counter()

                done = [future.result() for future in [pool.submit(until_scored, host.port) for host in hosts[1:]]]
                delays.append(max(done) - acknowledged)
    finally:
        for host in hosts:
            host.stop()
    first, rest = delays[0], delays[1:]  # the first: hosts 1 and 2 meet the user (and the site model) then
    return {
        "lessons": len(rest),
        "hosts": 3,
        "first_ms": 1e3 * first,
        "p50_ms": 1e3 * statistics.median(rest),
        "p99_ms": 1e3 * percentile(rest, 0.99),
        "max_ms": 1e3 * max(rest),
    }


def hammer(port: int, items: list[bytes], clients: int) -> float:
    """Send every request (one connection each) from ``clients`` threads; requests a second."""
    work = list(items)
    lock = threading.Lock()
    failures: list[bytes] = []

    def client() -> None:
        while True:
            with lock:
                if not work:
                    return
                data = work.pop()
            reply = exchange(port, data)
            if not reply.startswith(b"SPAMD/1.5 0 "):
                failures.append(reply[:200])

    wall = run_clients(client, clients)
    if failures:
        raise RuntimeError(f"{len(failures)} requests refused, e.g. {failures[0]!r}")
    return len(items) / wall


def throughput(ctx: common.Context, redis: Redis, folder: Path) -> dict[str, Any]:
    messages = ctx.corpus().messages[: ctx.pick(1000, 60)]
    clients = ctx.pick(8, 2)
    tells = [request("TELL", "bench", m.raw, m.label) for m in messages]
    checks = [request("CHECK", "bench", m.raw) for m in messages]
    rates: dict[str, dict[str, float]] = {}
    for mode, options in (("file", ()), ("store", ("--store", redis.url))):
        host = Service(folder / f"throughput-{mode}", "--allow-tell", "--no-observe", *options)
        try:
            rates[mode] = {
                "tell_per_s": hammer(host.port, tells, clients),
                "check_per_s": hammer(host.port, checks, clients),
            }
        finally:
            host.stop()
    return {
        "messages": len(messages),
        "clients": clients,
        **rates,
        "tell_store_vs_file": rates["store"]["tell_per_s"] / rates["file"]["tell_per_s"],
        "check_store_vs_file": rates["store"]["check_per_s"] / rates["file"]["check_per_s"],
    }


def workers(ctx: common.Context, redis: Redis, folder: Path) -> dict[str, Any]:
    """CHECKs a second from in-process clients (one connection each, no client process to
    start), 1 and 8 at once, of a host with one worker and of a host with one per core
    (``--workers``), the user's and the site model taught the same lessons through each."""
    messages = ctx.corpus().messages
    taught = messages[: ctx.pick(1500, 60)]
    checks = [request("CHECK", "bench", m.raw) for m in messages[len(taught): len(taught) + ctx.pick(600, 60)]]
    cores = os.cpu_count() or 1
    rows: dict[str, dict[str, Any]] = {}
    for count in sorted({1, max(2, cores)}):
        name = f"--workers {count}"
        options = ("--workers", str(count)) if count > 1 else ()
        host = Service(folder / f"workers-{count}", "--store", redis.url, "--allow-tell", "--no-observe", *options)
        try:
            for m in taught:
                reply = exchange(host.port, request("TELL", "bench", m.raw, m.label))
                if not reply.startswith(b"SPAMD/1.5 0 "):
                    raise RuntimeError(f"TELL refused: {reply[:200]!r}")
            hammer(host.port, checks[:20], 2)  # warm-up: the models read from the store
            runs = [(hammer(host.port, checks, 1), hammer(host.port, checks, 8)) for _ in range(ctx.pick(3, 1))]
        finally:
            host.stop()
        ratios = sorted(many / one for one, many in runs)
        rows[name] = {"one_per_s": statistics.median(one for one, _ in runs),
                      "eight_per_s": statistics.median(many for _, many in runs),
                      "eight_over_one": statistics.median(ratios), "runs": ratios}
        ctx.log(f"  {name}: 8 clients over 1: {rows[name]['eight_over_one']:.2f}x")
    return {"taught": len(taught), "checks": len(checks), "cores": cores, "rows": rows}


def memory(ctx: common.Context, redis: Redis, folder: Path) -> dict[str, Any]:
    users, cap = ctx.pick(10_000, 30), ctx.pick(1000, 10)
    messages = ctx.corpus().messages
    host = Service(folder / "memory", "--store", redis.url, "--allow-tell", "--no-observe", "--max-models", str(cap))
    try:
        rss_start = host.rss_kib()
        start = time.perf_counter()
        for u in range(users):
            message = messages[u % len(messages)]
            reply = exchange(host.port, request("TELL", f"user{u:05d}", message.raw, message.label))
            if not reply.startswith(b"SPAMD/1.5 0 "):
                raise RuntimeError(f"TELL refused: {reply[:200]!r}")
        seconds = time.perf_counter() - start
        time.sleep(1.0)  # the models let go in the background
        rss_end = host.rss_kib()
    finally:
        host.stop()
    return {"users": users, "max_models": cap, "seconds": seconds, "rss_start_kib": rss_start, "rss_end_kib": rss_end}


def run(ctx: common.Context) -> dict[str, Any]:
    program = shutil.which("redis-server")
    if program is None:
        return {"skipped": "redis-server is not installed (Debian's redis-server; .ci/run installs it)"}
    try:
        import redis  # noqa: F401 (whether the service's client library is there)
    except ImportError:
        return {"skipped": "the redis library is not installed (pip install -e '.[redis]')"}
    with tempfile.TemporaryDirectory(prefix="bench-store-") as temporary:
        folder = Path(temporary)
        for name in ("redis", "host0", "host1", "host2", "throughput-file", "throughput-store", "memory",
                     "workers-1", f"workers-{max(2, os.cpu_count() or 1)}"):
            (folder / name).mkdir()
        store = Redis(program, folder / "redis")
        try:
            ctx.log("store: propagation through three hosts")
            spread = propagation(ctx, store, folder)
            ctx.log("store: throughput, file mode and the store")
            speed = throughput(ctx, store, folder)
            ctx.log("store: memory of one host under --max-models")
            held = memory(ctx, store, folder)
            ctx.log("store: in-process CHECKs, one worker and one per core")
            cores = workers(ctx, store, folder)
        finally:
            store.stop()
    return {"propagation": spread, "throughput": speed, "memory": held, "workers": cores, "cpus": os.cpu_count()}


def markdown(data: dict[str, Any]) -> list[str]:
    if "skipped" in data:
        return [f"Not measured: {data['skipped']}.", ""]
    spread, speed, held = data["propagation"], data["throughput"], data["memory"]
    return [
        f"From a TELL's acknowledgement by one host until the two others score with it (REPORT counts it), "
        f"{spread['lessons']} lessons one after the other: p50 {spread['p50_ms']:.2f} ms, p99 "
        f"{spread['p99_ms']:.2f} ms, max {spread['max_ms']:.2f} ms (a check brings the model up to date before "
        "it scores: the time is one check's). The lesson before them, when hosts 1 and 2 first met the user and "
        f"read its snapshot and the site model's: {spread['first_ms']:.0f} ms.",
        "",
        f"Throughput of one host, {speed['messages']:,} messages, {speed['clients']} clients, one connection "
        "per request:",
        "",
        "| | file mode (journals fsynced) | --store (Redis, appendfsync always) | store / file |",
        "|---|---:|---:|---:|",
        f"| TELL a second | {speed['file']['tell_per_s']:.0f} | {speed['store']['tell_per_s']:.0f} | "
        f"{speed['tell_store_vs_file']:.2f}x |",
        f"| CHECK a second | {speed['file']['check_per_s']:.0f} | {speed['store']['check_per_s']:.0f} | "
        f"{speed['check_store_vs_file']:.2f}x |",
        "",
        f"Memory: {held['users']:,} users taught one lesson each through one host with --max-models "
        f"{held['max_models']:,} (in {held['seconds']:.0f} s): resident {held['rss_end_kib'] / 1024:.0f} MiB at "
        f"the end ({held['rss_start_kib'] / 1024:.0f} MiB at the start).",
        "",
        *workers_lines(data.get("workers")),
    ]


def workers_lines(part: dict[str, Any] | None) -> list[str]:
    if part is None:
        return []
    lines = [f"CHECKs a second from in-process clients (one connection each, no spamc process to start) on "
             f"{part['cores']} cores, the user's and the site model taught {part['taught']:,} lessons, "
             f"{part['checks']:,} checks a run:", "",
             "| host | 1 client | 8 clients | 8 over 1 (runs) |", "|---|---:|---:|---:|"]
    for name, row in part["rows"].items():
        lines.append(f"| {name} | {row['one_per_s']:.0f} | {row['eight_per_s']:.0f} | "
                     f"{row['eight_over_one']:.2f}x ({', '.join(f'{r:.2f}' for r in row['runs'])}) |")
    return lines + [""]


def targets(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 37: a lesson acknowledged by one host is scored with by every host within 50 ms (p99).
    Issue 35: 8 in-process clients get at least 1.8x one client's CHECKs a second from a host
    with a worker per core (two cores)."""
    spread = data.get("propagation", {})
    rows = data.get("workers", {}).get("rows", {})
    many = [row for name, row in rows.items() if name != "--workers 1"]
    return [
        {
            "id": "store_workers_scaling",
            "what": "streamnb serve --store --workers (one per core): CHECKs a second from in-process clients, "
                    "8 over 1",
            "value": many[0]["eight_over_one"] if many else None,
            "op": ">=",
            "threshold": 1.8,
            "unit": "x",
        },
        {
            "id": "store_propagation_p99",
            "what": "time from a TELL's acknowledgement until every other host scores with it (p99, three hosts)",
            "value": spread.get("p99_ms"),
            "op": "<=",
            "threshold": 50.0,
            "unit": "ms",
        }
    ]


if __name__ == "__main__":
    import sys

    from .suite import main

    raise SystemExit(main(["--only", NAME, *sys.argv[1:]]))
