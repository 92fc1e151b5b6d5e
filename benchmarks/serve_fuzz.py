"""A hostile-client fuzzer for ``streamnb serve``'s spamd request parser (issue 28).

    python -m benchmarks.serve_fuzz                      # 100,000 requests (a few minutes)
    python -m benchmarks.serve_fuzz --requests 2000      # what the test suite runs

A ``streamnb serve --allow-tell --timeout 1`` subprocess on 127.0.0.1 gets generated
requests from ``--concurrency`` clients at once: well-formed ones of every method (controls,
some of them compressed), unknown and malformed methods, bad, huge and lying Content-lengths,
missing headers and blank lines, header floods, endless lines, bad user names, bad zlib
streams and zip bombs, binary garbage, valid requests with bytes flipped, truncated bodies,
senders that stop, that go silent, that dribble a byte at a time, and clients that reset the
connection. Each case is drawn from its own seeded generator (``--seed``, the case number),
so a failing case can be replayed alone (``--case N``).

A case passes when the connection ends with a reply that is a spamd reply: ``SPAMD/1.5 0``
with what the method returns, or one line ``SPAMD/1.5 <code> <text>`` with a code spamd uses
for a bad request (65, 69, 74, 75, 76, 79); nothing at all only after SKIP or a client reset.
Code 70 (an internal error), a reply that is anything else, no reply within the timeout, the
service not answering PING (asked every ``--ping-every`` cases), a dead service or a
traceback in its log are failures. Bounded: 127.0.0.1 only, ``--concurrency`` connections at
most, every case within the service's timeout plus 10 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import socket
import struct
import sys
import tempfile
import time
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .service import Service

METHODS = ("CHECK", "SYMBOLS", "REPORT", "REPORT_IFSPAM", "PROCESS", "HEADERS", "PING", "SKIP", "TELL")
ERROR_CODES = {65, 69, 74, 75, 76, 79}  # what spamd answers a request it will not serve
REPLY_LINE = re.compile(rb"SPAMD/1\.5 (\d+) ([^\r\n]*)\r\n")
SERVER_TIMEOUT = 1.0  # the service's --timeout: how long a dribbling or silent client may hold a connection
MAX_SIZE = 64 * 1024  # the service's --max-size
WORDS = ("cheap pills viagra discount offer winner prize casino loan free meeting agenda project report lunch "
         "review draft schedule notes team invoice unsubscribe").split()


@dataclass
class Case:
    kind: str
    data: bytes
    send: str  # "whole" (then shut the write side), "open" (and wait), "slow", "silent", "reset"


def mail(rng: random.Random) -> bytes:
    body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 60)))
    subject = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 5)))
    return (f"From: someone{rng.randint(0, 9)}@example.{rng.choice(['com', 'org', 'net'])}\r\n"
            f"Subject: {subject}\r\nMessage-ID: <{rng.getrandbits(32)}@fuzz>\r\n\r\n{body}\r\n").encode()


def valid(rng: random.Random, method: str | None = None) -> bytes:
    """A well-formed request of any method (what spamc sends)."""
    method = method or rng.choice(METHODS)
    version = rng.choice(["1.5", "1.5", "1.4", "1.3", "1.2"])
    if method in ("PING", "SKIP"):
        return f"{method} SPAMC/{version}\r\n\r\n".encode() if version == "1.5" else f"{method} SPAMC/{version}\r\n".encode()
    body = mail(rng)
    headers = [f"User: {rng.choice(['alice', 'bob', 'default', 'c.d@example.org'])}"]
    if method == "TELL":
        headers += (["Message-class: " + rng.choice(["spam", "ham"]), "Set: local"] if rng.random() < 0.8
                    else ["Remove: local"])
    if rng.random() < 0.2:
        body = zlib.compress(body)
        headers.append("Compress: zlib")
    headers.append(f"Content-length: {len(body)}")
    rng.shuffle(headers)
    return f"{method} SPAMC/{version}\r\n".encode() + "".join(h + "\r\n" for h in headers).encode() + b"\r\n" + body


def garbage(rng: random.Random, size: int) -> bytes:
    alphabet = rng.choice([bytes(range(256)), b"\r\n\0 :ABCDEFGHIJKLMNOPQRSTUVWXYZ/.0123456789", b"A\r\n", b"\n"])
    return bytes(rng.choice(alphabet) for _ in range(size))


def with_headers(rng: random.Random, method: str, headers: list[bytes], body: bytes = b"") -> bytes:
    return f"{method} SPAMC/1.5\r\n".encode() + b"".join(h + b"\r\n" for h in headers) + b"\r\n" + body


def bad_method(rng: random.Random) -> bytes:
    first = rng.choice([
        rng.choice(METHODS).lower() + " SPAMC/1.5", "EXPLODE SPAMC/1.5", "GET / HTTP/1.1", "CHECK", "CHECK SPAMC",
        "CHECK SPAMC/", "CHECK SPAMC/x.y", "CHECK SPAMD/1.5", "CHECK  SPAMC/1.5", " CHECK SPAMC/1.5", "CHECK SPAMC/1.5 ",
        "A" * rng.randint(21, 300) + " SPAMC/1.5", "CHECK SPAMC/1234.5", "", "\0CHECK SPAMC/1.5",
        rng.choice(METHODS) + " SPAMC/1.5\0", garbage(rng, rng.randint(1, 40)).decode("latin-1")])
    body = mail(rng)
    return first.encode("latin-1") + b"\r\nContent-length: " + str(len(body)).encode() + b"\r\n\r\n" + body


def bad_length(rng: random.Random) -> bytes:
    body = mail(rng)
    length = rng.choice([b"abc", b"-5", b"1e3", b"", b"0x10", b" 12 3", b"9" * rng.randint(19, 60), b"+7", b"12.0",
                         str(len(body) + rng.randint(1, 5000)).encode(), str(max(0, len(body) - rng.randint(1, 50))).encode(),
                         str(MAX_SIZE + rng.randint(1, 10**9)).encode(), b"\xff\xfe", b"1" * 18])
    return with_headers(rng, rng.choice(METHODS[:6] + ("TELL",)),
                        [b"User: alice", b"Content-length: " + length, b"Message-class: spam", b"Set: local"], body)


def bad_headers(rng: random.Random) -> bytes:
    method = rng.choice(("CHECK", "TELL", "PROCESS", "SYMBOLS"))
    body = mail(rng)
    length = b"Content-length: %d" % len(body)
    choice = rng.randrange(12)
    if choice == 0:  # a flood of headers
        headers = [b"X-Junk-%d: 1" % i for i in range(rng.randint(250, 400))] + [length]
    elif choice == 1:  # a line longer than the service reads
        headers = [b"X-Long: " + b"a" * rng.randint(8200, 70000), length]
    elif choice == 2:
        headers = [b"no colon here", length]
    elif choice == 3:
        headers = [b"Content-length: 5", length]  # conflicting
    elif choice == 4:
        user = rng.choice(["../../etc/passwd", "/etc/shadow", ".hidden", "-rf", "a/b", "x" * 65, "", "a b", "caf\xe9",
                           "..", "a\0b", "nul\x7f"])
        headers = [b"User: " + user.encode("latin-1"), length]
    elif choice == 5:
        headers = [b"Compress: " + rng.choice([b"gzip", b"zlib9", b"", b"ZLIB"]), length]
    elif choice == 6:  # zlib that is not
        body = garbage(rng, rng.randint(0, 300))
        headers = [b"Compress: zlib", b"Content-length: %d" % len(body)]
    elif choice == 7:  # a zip bomb
        body = zlib.compress(b"a" * rng.randint(MAX_SIZE + 1, 20 << 20), 9)
        headers = [b"Compress: zlib", b"Content-length: %d" % len(body)]
    elif choice == 8:  # a truncated zlib stream
        packed = zlib.compress(body)
        body = packed[: rng.randint(0, len(packed) - 1)]
        headers = [b"Compress: zlib", b"Content-length: %d" % len(body)]
    elif choice == 9:
        headers = [b"Message-class: " + rng.choice([b"junk", b"", b"spam, ham"]), b"Set: local", length]
    elif choice == 10:
        headers = [b"Set: local", b"Remove: local", b"Message-class: spam", length]
    else:
        headers = [garbage(rng, rng.randint(1, 100)).replace(b"\n", b"") for _ in range(rng.randint(1, 5))] + [length]
    return with_headers(rng, method, headers, body)


def no_blank_line(rng: random.Random) -> bytes:
    request = valid(rng, rng.choice(("CHECK", "TELL", "PROCESS")))
    head, _, body = request.partition(b"\r\n\r\n")
    return head + b"\r\n" + body if rng.random() < 0.5 else head


def no_length(rng: random.Random) -> bytes:
    body = mail(rng) if rng.random() < 0.7 else garbage(rng, rng.randint(0, MAX_SIZE * 2))
    return with_headers(rng, rng.choice(("CHECK", "PROCESS", "REPORT")), [b"User: bob"], body)


def mutated(rng: random.Random) -> bytes:
    data = bytearray(valid(rng))
    for _ in range(rng.randint(1, 8)):
        where = rng.randrange(len(data) + 1)
        edit = rng.randrange(3)
        if edit == 0 and where < len(data):
            data[where] = rng.randrange(256)
        elif edit == 1:
            data[where:where] = bytes([rng.randrange(256)])
        elif where < len(data):
            del data[where]
    return bytes(data)


def truncated(rng: random.Random) -> bytes:
    request = valid(rng, rng.choice(("CHECK", "TELL", "REPORT", "PROCESS")))
    return request[: rng.randrange(len(request))]


def generate(seed: int, number: int) -> Case:
    """Case ``number``: its own generator, so that it can be replayed alone."""
    rng = random.Random(seed * 1_000_003 + number)
    roll = rng.random()
    if roll < 0.15:
        return Case("valid", valid(rng), "whole")
    makers = [("bad method", bad_method), ("bad Content-length", bad_length), ("bad headers", bad_headers),
              ("no blank line", no_blank_line), ("no Content-length", no_length), ("mutated", mutated),
              ("truncated", truncated)]
    if roll < 0.80:
        kind, maker = rng.choice(makers)
        return Case(kind, maker(rng), "whole" if rng.random() < 0.9 else "open")
    if roll < 0.90:
        return Case("garbage", garbage(rng, rng.choice([0, 1, 2, 10, 100, 1000, 10_000, 100_000])), "whole")
    if roll < 0.97:
        kind, maker = rng.choice(makers)
        return Case(kind, maker(rng), "reset")
    if roll < 0.995:
        return Case("slow sender", rng.choice([valid, truncated])(rng)[:400], "slow")
    return Case("silent", b"", "silent")


def judge(case: Case, reply: bytes) -> str | None:
    """None if the reply is one a spamd client can take; otherwise what is wrong with it."""
    if not reply:
        return None if case.data.startswith(b"SKIP SPAMC/") else "no reply"
    match = REPLY_LINE.match(reply)
    if match is None:
        return "not a spamd reply"
    code = int(match.group(1))
    if code == 0:
        if reply.startswith(b"SPAMD/1.5 0 PONG\r\n") or reply.startswith(b"SPAMD/1.5 0 EX_OK\r\n"):
            return None
        return "a reply with code 0 that is neither PONG nor EX_OK"
    if code == 70:
        return "EX_SOFTWARE: an internal error"
    if code not in ERROR_CODES:
        return f"code {code} is not one spamd answers a bad request with"
    if reply != match.group(0):
        return "an error reply of more than its one line"
    return None


async def play(case: Case, port: int, rng: random.Random) -> tuple[bytes | None, float]:
    """Send the case as it says; (the reply, or None after a reset; seconds)."""
    started = time.monotonic()
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
    try:
        if case.send == "reset":
            writer.write(case.data[: rng.randint(0, len(case.data))])
            await asyncio.sleep(rng.random() * 0.01)
            # linger 0: closing sends a reset (RST) instead of an orderly end of stream
            writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return None, time.monotonic() - started
        parts = []
        if case.send == "slow":  # a few bytes at a time, until the service answers (it times out after 1 s)
            step = rng.choice([1, 3, 17])
            for at in range(0, len(case.data), step):
                writer.write(case.data[at:at + step])
                try:
                    parts.append(await asyncio.wait_for(reader.read(1 << 16), rng.uniform(0.0, 0.06)))
                    break  # an answer, or the end of the connection
                except asyncio.TimeoutError:
                    continue
        elif case.send != "silent":
            writer.write(case.data)
        try:
            await writer.drain()
            if case.send in ("whole", "slow") and writer.can_write_eof() and not parts:
                writer.write_eof()
        except ConnectionError:
            pass  # answered and closed before taking everything (a body too big ...)
        while True:
            try:
                part = await reader.read(1 << 16)
            except ConnectionResetError:
                break
            if not part:
                break
            parts.append(part)
        return b"".join(parts), time.monotonic() - started
    finally:
        writer.close()


async def ping(port: int) -> bool:
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"PING SPAMC/1.5\r\n\r\n")
        reply = await asyncio.wait_for(reader.read(), 10)
        writer.close()
        return reply == b"SPAMD/1.5 0 PONG\r\n"
    except (OSError, asyncio.TimeoutError):
        return False


async def fuzz(port: int, requests: int, concurrency: int, seed: int, ping_every: int,
               cases: list[int] | None = None) -> dict[str, Any]:
    numbers = iter(cases if cases is not None else range(requests))
    kinds: Counter = Counter()
    codes: Counter = Counter()
    failures: list[dict[str, Any]] = []
    pings = {"asked": 0, "failed": 0}
    slowest = 0.0
    done = 0

    async def client() -> None:
        nonlocal done, slowest
        for number in numbers:
            case = generate(seed, number)
            kinds[case.kind] += 1
            try:
                reply, seconds = await asyncio.wait_for(play(case, port, random.Random(number)), SERVER_TIMEOUT + 10)
            except (asyncio.TimeoutError, OSError) as error:
                failures.append({"case": number, "kind": case.kind, "send": case.send, "problem": repr(error)})
                continue
            slowest = max(slowest, seconds)
            if reply is not None:
                match = REPLY_LINE.match(reply)
                codes[int(match.group(1)) if match else "none" if not reply else "other"] += 1
                problem = judge(case, reply)
                if problem:
                    failures.append({"case": number, "kind": case.kind, "send": case.send, "problem": problem,
                                     "request": case.data[:120].decode("latin-1"),
                                     "reply": reply[:200].decode("latin-1")})
            done += 1
            if done % ping_every == 0:
                pings["asked"] += 1
                if not await ping(port):
                    pings["failed"] += 1

    await asyncio.gather(*(client() for _ in range(concurrency)))
    return {"kinds": dict(kinds), "codes": {str(k): v for k, v in sorted(codes.items(), key=str)},
            "failures": failures, "pings": pings, "slowest_case_s": round(slowest, 3)}


def run(requests: int = 100_000, concurrency: int = 32, seed: int = 1, ping_every: int = 1000,
        cases: list[int] | None = None) -> dict[str, Any]:
    """Start a service, fuzz it, stop it; the figures (``failures`` empty and ``crashed`` False: a pass)."""
    with tempfile.TemporaryDirectory(prefix="streamnb-fuzz-") as folder:
        service = Service(Path(folder), "--allow-tell", "--timeout", str(SERVER_TIMEOUT), "--max-size",
                          str(MAX_SIZE), "--max-connections", str(concurrency + 8), "--snapshot-every", "200")
        try:
            before = {"rss_kib": service.rss_kib(), "open_files": service.open_files()}
            started = time.monotonic()
            figures = asyncio.run(fuzz(service.port, requests, concurrency, seed, ping_every, cases))
            seconds = time.monotonic() - started
            final_ping = asyncio.run(ping(service.port))
            after = {"rss_kib": service.rss_kib(), "open_files": service.open_files()}
            alive = service.alive()
        finally:
            code = service.stop()
        log = "".join(service.log)
    tracebacks = log.count("Traceback")
    internal = len(re.findall(r"internal error|connection failed", log))
    io_errors = log.count("I/O error")  # a client's doing logged as the machine's
    count = len(cases) if cases is not None else requests
    return {"requests": count, "concurrency": concurrency, "seed": seed,
            "seconds": round(seconds, 1), "requests_per_second": round(count / seconds),
            **figures, "final_ping": final_ping, "alive_at_end": alive, "exit_code": code,
            "tracebacks_in_log": tracebacks, "internal_errors_in_log": internal, "io_errors_in_log": io_errors,
            "before": before, "after": after,
            "crashed": not alive or not final_ping or code != 0 or tracebacks > 0 or internal > 0
            or figures["pings"]["failed"] > 0 or io_errors > 0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ping-every", type=int, default=1000)
    parser.add_argument("--case", type=int, action="append", help="replay these case numbers only")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)
    figures = run(args.requests, args.concurrency, args.seed, args.ping_every, args.case)
    text = json.dumps(figures, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 1 if figures["crashed"] or figures["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
