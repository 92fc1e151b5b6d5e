"""A bounded soak of ``streamnb serve`` (issue 28): many clients for minutes of CHECK and TELL.

    python -m benchmarks.serve_soak            # 32 clients, 10 minutes after 3 of warm-up
    python -m benchmarks.serve_soak --minutes 0.15 --warmup 4 --window 2 --every 0.5 --pool 100 \
        --snapshot-seconds 1                   # what the test suite runs

A ``streamnb serve --allow-tell`` subprocess on 127.0.0.1 serves ``--users`` users. First
every message of a pool (``--pool`` generated messages, half spam; 1-3 KB each) is taught
to every user (TELL), so the models stop growing; then ``--clients`` clients send requests
back to back, each a CHECK, or with probability ``--tell`` a TELL of a pool message under its
label (a lesson the ledger already has: journaled, fsynced and folded all the same), of a
random user and message, one connection per request as spamc does. After ``--warmup``
seconds the clients pause, the service's open files are counted idle, and the measured run
of ``--minutes`` starts; at its end they are counted idle again. The warm-up spans a few
periods of the service's folds (``--snapshot-seconds``, 60 s as the service's default): the
first folds of the users' journals raise the resident memory once (their buffers, in each
thread of the service's executor), and a warm-up that ends with them counts that step as
growth (+8.4% with a 60 s warm-up, the samples flat from the third minute on).

Printed (and written with ``--json``): requests and errors (any reply that is not EX_OK), p50
and p99 latency (connect to the end of the reply, as the client sees it, the client's own
Python included, on the same cores as the service), the service's resident memory (VmRSS,
the median sample of the last ``--window`` seconds of the warm-up and of the run: growth
between the two is what leaks, while a fold of a user's model holds a second copy of it for
a moment, a spike a median passes over; the highest samples are reported too) and its open
file descriptors; then the service is stopped
(SIGTERM) and every user's model file must load and hold exactly the pool's messages.
Passes when: no error, RSS growth <= 5%, idle open files after the run <= before it plus the
users (a journal each), the models exact, exit code 0.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .service import Service, request

SPAM_WORDS = [f"offer{i}" for i in range(1500)]
HAM_WORDS = [f"meeting{i}" for i in range(1500)]


def message(number: int, spam: bool, rng: random.Random) -> bytes:
    words = SPAM_WORDS if spam else HAM_WORDS
    body = " ".join(rng.choice(words) for _ in range(rng.randint(150, 400)))
    sender = f"deals{number % 40}@offers.example.com" if spam else f"colleague{number % 40}@work.example.org"
    return (f"Received: from mx{number % 7}.example.net by mail.example.org; Mon, 2 Sep 2002 10:00:00 +0000\n"
            f"From: {sender}\nTo: me@example.org\nSubject: {' '.join(rng.choice(words) for _ in range(5))}\n"
            f"Date: Mon, {1 + number % 28:02d} Sep 2002 10:{number % 60:02d}:00 +0000\n"
            f"Message-ID: <soak{number}@example>\n\n{body}\nsoak{number:06d}\n").encode()


def pool(size: int, seed: int) -> list[tuple[bytes, str]]:
    rng = random.Random(seed)
    return [(message(i, i % 2 == 1, rng), "spam" if i % 2 else "ham") for i in range(size)]


async def exchange(port: int, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        return await reader.read()
    finally:
        writer.close()


def ok(method: str, reply: bytes) -> bool:
    if method == "TELL":
        return reply.startswith(b"SPAMD/1.5 0 EX_OK\r\n")
    return reply.startswith(b"SPAMD/1.5 0 EX_OK\r\nSpam: ")


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


class Soak:
    def __init__(self, service: Service, messages: list[tuple[bytes, str]], users: list[str], clients: int,
                 tell: float, seed: int) -> None:
        self.service, self.messages, self.users = service, messages, users
        self.clients, self.tell, self.seed = clients, tell, seed
        self.errors: list[str] = []
        self.latencies: dict[str, list[float]] = {"CHECK": [], "TELL": []}
        self.samples: list[tuple[float, int, int]] = []  # (seconds since the start, RSS KiB, open files)
        self.measuring = False
        self.running = asyncio.Event()
        self.stopping = False

    async def one(self, method: str, user: str, raw: bytes, label: str) -> None:
        started = time.monotonic()
        try:
            reply = await asyncio.wait_for(exchange(self.service.port, request(method, user, raw, label)), 60)
        except (OSError, asyncio.TimeoutError) as error:
            self.errors.append(f"{method} {user}: {error!r}")
            return
        if not ok(method, reply):
            self.errors.append(f"{method} {user}: {reply[:120]!r}")
        elif self.measuring:
            self.latencies[method].append(time.monotonic() - started)

    async def teach(self) -> None:
        """Every pool message to every user, once (the models stop growing after this)."""
        lessons = iter([(user, raw, label) for raw, label in self.messages for user in self.users])

        async def client() -> None:
            for user, raw, label in lessons:
                await self.one("TELL", user, raw, label)

        await asyncio.gather(*(client() for _ in range(self.clients)))

    async def client(self, number: int) -> None:
        rng = random.Random(self.seed * 7919 + number)
        while not self.stopping:
            await self.running.wait()
            raw, label = rng.choice(self.messages)
            await self.one("TELL" if rng.random() < self.tell else "CHECK", rng.choice(self.users), raw, label)

    def sample(self, started: float) -> tuple[int, int]:
        rss, files = self.service.rss_kib(), self.service.open_files()
        self.samples.append((time.monotonic() - started, rss, files))
        return rss, files

    async def run(self, warmup: float, seconds: float, window: float, every: float) -> dict[str, Any]:
        began = time.monotonic()
        await self.teach()
        taught = time.monotonic() - began
        started = time.monotonic()
        self.running.set()
        tasks = [asyncio.ensure_future(self.client(k)) for k in range(self.clients)]
        while time.monotonic() - started < warmup:
            await asyncio.sleep(every)
            self.sample(started)
        warm = [s for s in self.samples if s[0] >= warmup - window]
        self.running.clear()  # idle: every client waits before its next request
        await asyncio.sleep(2.0)
        idle_before = self.sample(started)
        measured_from = time.monotonic()
        self.measuring = True
        self.running.set()
        while time.monotonic() - measured_from < seconds:
            await asyncio.sleep(every)
            self.sample(started)
        self.measuring = False
        self.stopping = True
        await asyncio.gather(*tasks)
        ran = time.monotonic() - measured_from
        end = [s for s in self.samples if s[0] >= (measured_from - started) + seconds - window]
        await asyncio.sleep(2.0)
        idle_after = self.sample(started)
        every_latency = self.latencies["CHECK"] + self.latencies["TELL"]
        rss_warm, rss_end = statistics.median(s[1] for s in warm), statistics.median(s[1] for s in end)
        return {
            "teach_seconds": round(taught, 1), "measured_seconds": round(ran, 1),
            "requests": len(every_latency), "requests_per_second": round(len(every_latency) / ran),
            "checks": len(self.latencies["CHECK"]), "tells": len(self.latencies["TELL"]),
            "errors": len(self.errors), "first_errors": self.errors[:10],
            "p50_ms": round(1e3 * statistics.median(every_latency), 2),
            "p99_ms": round(1e3 * quantile(every_latency, 0.99), 2),
            "check_p50_ms": round(1e3 * statistics.median(self.latencies["CHECK"]), 2),
            "check_p99_ms": round(1e3 * quantile(self.latencies["CHECK"], 0.99), 2),
            "tell_p50_ms": round(1e3 * statistics.median(self.latencies["TELL"]), 2) if self.latencies["TELL"] else None,
            "tell_p99_ms": round(1e3 * quantile(self.latencies["TELL"], 0.99), 2) if self.latencies["TELL"] else None,
            "rss_kib_warm": rss_warm, "rss_kib_end": rss_end, "rss_growth": round(rss_end / rss_warm - 1, 4),
            "rss_kib_warm_max": max(s[1] for s in warm), "rss_kib_end_max": max(s[1] for s in end),
            "open_files_idle_before": idle_before[1], "open_files_idle_after": idle_after[1],
            "open_files_load_max_warm": max(s[2] for s in warm), "open_files_load_max_end": max(s[2] for s in end),
            "samples": [list(s) for s in self.samples],
        }


def exact_models(models: Path, users: list[str], messages: list[tuple[bytes, str]]) -> list[str]:
    """What is wrong with the users' model files (nothing: an empty list)."""
    import streamnb

    expected = {label: float(sum(1 for _, other in messages if other == label)) for label in ("spam", "ham")}
    problems = []
    for user in users:
        counts = streamnb.load(models / f"{user}.snb").class_counts
        if counts != expected:
            problems.append(f"{user}: {counts} instead of {expected}")
    return problems


def run(minutes: float = 10.0, clients: int = 32, users: int = 8, pool_size: int = 400, tell: float = 0.1,
        warmup: float = 180.0, window: float = 60.0, every: float = 5.0, seed: int = 1,
        snapshot_seconds: float = 60.0, max_rss_growth: float = 0.05) -> dict[str, Any]:
    messages = pool(pool_size, seed)
    names = [f"user{k}" for k in range(users)]
    with tempfile.TemporaryDirectory(prefix="streamnb-soak-") as folder:
        service = Service(Path(folder), "--allow-tell", "--max-connections", str(clients + 8),
                          "--snapshot-seconds", str(snapshot_seconds))
        try:
            soak = Soak(service, messages, names, clients, tell, seed)
            figures = asyncio.run(soak.run(warmup, 60.0 * minutes, min(window, warmup), every))
        finally:
            code = service.stop()
        problems = exact_models(Path(folder), names, messages) if code == 0 else ["the service did not stop cleanly"]
    figures.update(clients=clients, users=users, pool=pool_size, tell_share=tell, warmup_seconds=warmup,
                   snapshot_seconds=snapshot_seconds, exit_code=code, model_problems=problems,
                   log_lines=len(service.log))
    figures["passed"] = (figures["errors"] == 0 and figures["rss_growth"] <= max_rss_growth and code == 0 and not problems
                         and figures["open_files_idle_after"] <= figures["open_files_idle_before"] + users)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="the measured run (default 10)")
    parser.add_argument("--warmup", type=float, default=180.0, help="seconds of load before it (default 180)")
    parser.add_argument("--window", type=float, default=60.0,
                        help="RSS: the highest sample of the last WINDOW seconds of each (default 60)")
    parser.add_argument("--every", type=float, default=5.0, help="seconds between samples (default 5)")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--users", type=int, default=8)
    parser.add_argument("--pool", type=int, default=400, help="messages taught to every user first (default 400)")
    parser.add_argument("--tell", type=float, default=0.1, help="share of requests that are TELL (default 0.1)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--snapshot-seconds", type=float, default=60.0,
                        help="the service's --snapshot-seconds (default 60, its own default)")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)
    figures = run(args.minutes, args.clients, args.users, args.pool, args.tell, args.warmup, args.window, args.every,
                  args.seed, args.snapshot_seconds)
    text = json.dumps({k: v for k, v in figures.items() if k != "samples"}, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0 if figures["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
