"""streamnb serve --store redis://... (issue 37): hosts sharing their models through Redis streams.

A real ``redis-server`` (Debian's; ``.ci/apt-install`` installs it when missing, else these
tests skip and say why) runs on a free loopback port in a folder of the test's own, with the
append-only file fsynced at every write (``appendonly yes``, ``appendfsync always``: the
setting the service guide recommends). The hosts are ``streamnb serve --store`` subprocesses
on loopback. Expected verdicts are recomputed in process from the same lessons, and the
models are read back from Redis the way a host reads them (its snapshot, then its stream).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from benchmarks.service import redis_server_args
from streamnb.persist import dumps
from streamnb.service import cli
from streamnb.service.cli_serve import serve_settings
from streamnb.service.journal import FORGET, LEARN
from streamnb.service.redis_store import RedisStore
from streamnb.service.shared import SharedModel
from tests.served import ROOT, free_port
from tests.service.test_serve import (
    Expected,
    assert_acknowledged_once,
    assert_answers,
    check,
    docs,
    ham,
    spam,
    tell_raw,
)

redis = pytest.importorskip("redis", reason="the redis library is not installed (pip install -e '.[dev]')")

OK_SET = b"SPAMD/1.5 0 EX_OK\r\nDidSet: local\r\n\r\n"
OK_SAME = b"SPAMD/1.5 0 EX_OK\r\n\r\n"


def redis_server_or_skip() -> str:
    """The redis-server program, installed if missing and possible; else the test skips, saying why."""
    program = shutil.which("redis-server")
    if program is None and os.geteuid() == 0:
        result = subprocess.run(
            ["bash", str(ROOT / ".ci" / "apt-install"), "redis-server"], capture_output=True, text=True, timeout=600
        )
        if result.returncode != 0:
            pytest.skip(f"cannot install redis-server: {result.stderr.strip()}")
        program = shutil.which("redis-server")
    if program is None:
        pytest.skip("Debian's redis-server is not installed and cannot be (not root): .ci/run installs it")
    return program


class RedisServer:
    """A redis-server on a loopback port, its append-only file fsynced at every write, in ``folder``."""

    def __init__(self, program: str, folder: Path) -> None:
        self.program, self.folder, self.port = program, folder, free_port()
        folder.mkdir(parents=True, exist_ok=True)
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        self.process = subprocess.Popen(
            redis_server_args(self.program, self.port, self.folder),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = self.client()
        deadline = time.monotonic() + 30
        while True:
            try:
                if client.ping():
                    return
            except (redis.exceptions.ConnectionError, redis.exceptions.BusyLoadingError):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    pytest.skip(f"redis-server did not start: {(self.folder / 'redis.log').read_text()[-500:]}")
                time.sleep(0.05)

    def kill(self) -> None:
        """kill -9: no goodbye, nothing flushed but what its append-only file already holds."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=30)

    def client(self):
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5)


@pytest.fixture
def redis_server(tmp_path):
    server = RedisServer(redis_server_or_skip(), tmp_path / "redis")
    yield server
    if server.process is not None and server.process.poll() is None:
        server.kill()


def host(serve, tmp_path: Path, redis_server: RedisServer, number: int, *options: str):
    """A ``streamnb serve --store`` process (its own, unused, models folder)."""
    return serve(tmp_path / f"host{number}", "--store", redis_server.url, "--allow-tell", "--no-observe", *options)


def stored_model(url: str, user: str, site: bool = False):
    """The model as a host that starts now reads it from the store: its snapshot, then its stream."""
    settings = serve_settings(cli.build_parser().parse_args(["serve", "--models", ".", "--store", url]))

    async def read():
        store = RedisStore(url)
        try:
            model = SharedModel(user, store, settings, is_site=site)
            assert await model._catch_up(create=False), f"no model for {user!r} in the store"
            return model.model, model.position
        finally:
            await store.close()

    return asyncio.run(read())


def let_go(server) -> dict[str, tuple[str, str]]:
    """Stop a host; what its log says of each model it held: (position, SHA-256 of its bytes)."""
    server.stop()
    return {
        who: (position, digest)
        for who, position, digest in re.findall(
            r"INFO: (.+?): let go at (\S+), model sha256:([0-9a-f]{64})", server.text(wait=0.3)
        )
    }


def test_a_lesson_told_through_one_host_scores_the_same_on_the_others(serve, tmp_path, redis_server):
    """Lessons told through host 0 (learn, a move, a forget, a lesson told twice) are scored with
    on hosts 1 and 2 at once, and hosts 0 and 1 hold no more than two models (the third is read
    again from the store); snapshots every 10 lessons trim the streams; host 2, started after
    every lesson, reads the snapshots and replays the rest; every reply is the in-process model's."""
    hosts = [host(serve, tmp_path, redis_server, k, "--snapshot-every", "10", "--max-models", "2") for k in range(2)]
    site = Expected()
    users = {name: Expected(site) for name in ("alice", "bob", "carol")}
    for i in range(24):
        for u, (name, expected) in enumerate(users.items()):
            j = 100 * u + i
            raw, label = (spam(j), "spam") if j % 2 else (ham(j), "ham")
            changed = expected.tell(LEARN, label, raw)
            assert tell_raw(hosts[0].port, raw, label, user=name) == (OK_SET if changed else OK_SAME)
    alice = users["alice"]
    assert alice.tell(LEARN, "spam", ham(2))  # a move ...
    assert tell_raw(hosts[0].port, ham(2), "spam") == OK_SET
    assert alice.tell(FORGET, None, spam(3))  # ... a forget ...
    assert tell_raw(hosts[0].port, spam(3), None) == b"SPAMD/1.5 0 EX_OK\r\nDidRemove: local\r\n\r\n"
    assert not alice.tell(LEARN, "ham", ham(4))  # ... a lesson told again, through another host: no change
    assert tell_raw(hosts[1].port, ham(4), "ham") == OK_SAME
    hosts.append(host(serve, tmp_path, redis_server, 2))  # a host that starts now

    probes = [spam(900), ham(901), spam(3), ham(2), spam(105)]
    for name, expected in users.items():
        for raw in probes:
            replies = {check(server.port, raw, user=name) for server in hosts}
            assert len(replies) == 1, replies  # byte for byte the same reply on every host
            assert_answers(replies.pop(), expected.verdict(raw))
    assert_answers(check(hosts[2].port, spam(900), user="nobody"), site.scored(spam(900)).verdict)

    client = redis_server.client()
    for name in users:
        snapshot = client.hget(f"streamnb:{{{name}}}:snapshot", "id").decode()
        assert snapshot != "0-0"  # written at least once ...
        assert client.xlen(f"streamnb:{{{name}}}:lessons") < 24  # ... and the stream trimmed behind
    stops = [let_go(server) for server in hosts]
    for name, expected in users.items():
        model, position = stored_model(redis_server.url, name)
        held = {stop[f"user {name!r}"] for stop in stops if f"user {name!r}" in stop}
        assert held == {(position, hashlib.sha256(dumps(model)).hexdigest())}  # every host: the same bytes
        assert dumps(model) == dumps(expected.model)  # the model taught in process, byte for byte
    model, _ = stored_model(redis_server.url, "@site", site=True)
    assert dumps(model) == dumps(site.model)


def test_the_same_message_taught_through_two_hosts_at_once_counts_once(serve, tmp_path, redis_server):
    hosts = [host(serve, tmp_path, redis_server, k) for k in range(2)]
    replies: list[bytes] = []

    def teach(server, i: int) -> None:
        replies.append(tell_raw(server.port, spam(i), "spam", user="dora"))

    for i in range(20):
        threads = [threading.Thread(target=teach, args=(server, i)) for server in hosts]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert sorted(replies) == sorted([OK_SET, OK_SAME] * 20)  # the first in the stream learned it, then a no-op
    assert redis_server.client().xlen("streamnb:{dora}:lessons") == 40  # both are in the stream ...
    for user, site in (("dora", False), ("@site", True)):
        model, _ = stored_model(redis_server.url, user, site)
        assert model.class_counts == {"spam": 20.0}  # ... and count once
        assert all(docs(model, f"uniq{i:05d}") == {"spam": 1.0} for i in range(20))


def test_an_unreachable_store_scores_from_memory_and_refuses_tells_with_75(serve, tmp_path, redis_server):
    server = host(serve, tmp_path, redis_server, 0, "--metrics", "127.0.0.1:0")
    expected = Expected(Expected())
    for i in range(30):
        raw, label = (spam(i), "spam") if i % 2 else (ham(i), "ham")
        assert tell_raw(server.port, raw, label) == OK_SET
        expected.tell(LEARN, label, raw)
    redis_server.kill()
    assert_answers(check(server.port, spam(700)), expected.verdict(spam(700)))  # from memory, scored
    assert tell_raw(server.port, spam(701), "spam").startswith(
        b"SPAMD/1.5 75 Service Unavailable: (the lesson store redis://"
    )
    never_loaded = check(server.port, spam(700), user="erin")
    assert b"STREAMNB_UNSCORED" in never_loaded  # no model in memory: unsure, never clean
    log = server.text()
    assert "cannot be reached" in log and "which may be stale" in log
    time.sleep(1.2)  # the metrics' gauges are set every second
    metrics = metrics_text(server)
    assert "streamnb_store_reachable 0.0" in metrics
    assert re.search(r"streamnb_stale_checks_total [1-9]", metrics)

    redis_server.start()  # back, with every acknowledged lesson (its append-only file)
    time.sleep(1.1)  # past the pause between tries
    assert tell_raw(server.port, spam(701), "spam") == OK_SET
    expected.tell(LEARN, "spam", spam(701))
    assert_answers(check(server.port, spam(700)), expected.verdict(spam(700)))
    assert "is reached again" in server.text()
    time.sleep(1.2)
    assert "streamnb_store_reachable 1.0" in metrics_text(server)


def metrics_text(server) -> str:
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=10) as reply:
        return reply.read().decode()


def test_kill_9_of_a_host_and_of_redis_in_a_tell_burst_loses_no_acknowledged_lesson(serve, tmp_path, redis_server):
    """Four clients teach distinct messages through three hosts (the next host on a refusal or a
    dead host, as spamc -d does; snapshots every 25 lessons); host 1 is killed -9, then Redis
    (restarted from its append-only file), then host 1 comes back. Every acknowledged lesson is
    in the models, none twice, and the hosts end with the same bytes."""
    options = ("--snapshot-every", "25")
    hosts = [host(serve, tmp_path, redis_server, k, *options) for k in range(3)]
    acknowledged: set[int] = set()
    sent: set[int] = set()
    odd: list[bytes] = []  # replies that are neither an acknowledgement nor "try again"
    tried_again: list[int] = []  # lessons refused (75) or cut off by a kill, then told through another host
    lock = threading.Lock()
    stop = threading.Event()

    def client(k: int) -> None:
        turn = k
        for i in range(k, 100_000, 4):
            raw, label = (spam(i), "spam") if i % 3 else (ham(i), "ham")
            with lock:
                sent.add(i)
            while not stop.is_set():
                server = hosts[turn % len(hosts)]
                turn += 1
                try:
                    reply = tell_raw(server.port, raw, label, user="alice")
                except OSError:
                    tried_again.append(i)
                    continue  # a host killed under the request: the next one
                if reply in (OK_SET, OK_SAME):  # (the same: a try refused after Redis took it)
                    with lock:
                        acknowledged.add(i)
                    break
                if not (reply == b"" or reply.startswith(b"SPAMD/1.5 75 ")):  # a dying host, the store away
                    odd.append(reply)
                tried_again.append(i)
                time.sleep(0.01)
            if stop.is_set():
                return

    def until(count: int) -> None:
        deadline = time.monotonic() + 60
        while len(acknowledged) < count:
            assert time.monotonic() < deadline, f"{len(acknowledged)} lessons acknowledged"
            time.sleep(0.01)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    until(60)
    hosts[1].kill()
    until(120)
    redis_server.kill()
    time.sleep(0.3)
    redis_server.start()
    until(180)
    hosts[1] = host(serve, tmp_path, redis_server, 1, *options)
    until(240)
    stop.set()
    for thread in threads:
        thread.join()
    assert odd == []
    assert tried_again  # the kills came in the middle of the burst

    probes = [spam(100_001), ham(100_002)]
    for raw in probes:
        replies = {check(server.port, raw) for server in hosts}
        assert len(replies) == 1, replies
    stops = [let_go(server) for server in hosts]
    for who, user, site in (("user 'alice'", "alice", False), ("the site model", "@site", True)):
        model, position = stored_model(redis_server.url, user, site)
        assert {stop[who] for stop in stops} == {(position, hashlib.sha256(dumps(model)).hexdigest())}
        assert_acknowledged_once(model, sent, acknowledged)


def test_a_model_the_store_lost_is_dropped_by_the_hosts_that_held_it(serve, tmp_path, redis_server):
    """Redis without the data (FLUSHDB here; a Redis without its append-only file after a
    crash): the host serves what the store holds, as a host that starts now does, not what
    only it still remembers."""
    hosts = [host(serve, tmp_path, redis_server, 0)]
    for i in range(30):
        raw, label = (spam(i), "spam") if i % 2 else (ham(i), "ham")
        assert tell_raw(hosts[0].port, raw, label) == OK_SET
    taught = check(hosts[0].port, spam(800))
    redis_server.client().flushdb()
    hosts.append(host(serve, tmp_path, redis_server, 1))
    replies = {check(server.port, spam(800)) for server in hosts}
    assert len(replies) == 1 and replies != {taught}, replies
    assert b"no snapshot of it any more" in hosts[0].text().encode()
    assert tell_raw(hosts[1].port, spam(1), "spam") == OK_SET  # learned anew, by every host
    assert len({check(server.port, spam(800)) for server in hosts}) == 1


def test_the_models_a_host_holds_stay_under_its_memory_cap(serve, tmp_path, redis_server):
    """--max-memory 1: a host keeps only the model in use (the others are let go, then read
    again from the store), and answers as the in-process models do."""
    server = host(serve, tmp_path, redis_server, 0, "--max-memory", "1", "--metrics", "127.0.0.1:0")
    site = Expected()
    users = {name: Expected(site) for name in ("ann", "ben", "cat")}
    for i in range(20):
        for u, (name, expected) in enumerate(users.items()):
            raw, label = (spam(i + 50 * u), "spam") if i % 2 else (ham(i + 50 * u), "ham")
            expected.tell(LEARN, label, raw)
            assert tell_raw(server.port, raw, label, user=name) == OK_SET
    for name, expected in users.items():
        assert_answers(check(server.port, spam(900), user=name), expected.verdict(spam(900)))
    time.sleep(1.2)  # the gauges are set every second
    assert re.search(r"^streamnb_models_loaded 2\.0$", metrics_text(server), re.M)  # one user's, and the site's
    assert server.text().count("let go at") >= 3 * 20  # each user's model let go at every other user's lesson


# -- --workers: several processes on one port, sharing their lessons through the store -------------

def pids(pattern: str, text: str) -> set[int]:
    return {int(pid) for pid in re.findall(pattern, text)}


def gone(pid: int) -> bool:
    """The process has ended (a zombie nobody reaped counts as ended)."""
    try:
        return "\nState:\tZ" in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True


def until(condition, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def checks_together(port: int, raw: bytes, n: int = 8) -> list[bytes]:
    """``n`` checks of one message at once, each on its connection: the workers share them out."""
    replies: list[bytes] = []
    threads = [threading.Thread(target=lambda: replies.append(check(port, raw))) for _ in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return replies


def test_workers_answer_on_one_port_with_every_lesson_and_stop_together(serve, tmp_path, redis_server):
    """--workers 2: two processes accept on one port; after each lesson told through either, the
    checks both answer are the in-process model's; SIGHUP reaches each; a worker killed with -9
    is started again and serves the same verdicts; SIGTERM stops every worker."""
    from streamnb.service.workers import QUICK_DEATH_SECONDS

    server = host(serve, tmp_path, redis_server, 0, "--workers", "2")
    started = time.monotonic()
    workers = {int(p) for p in re.search(r"with 2 workers \(pids (\d+) (\d+)\)", server.text(wait=0)).groups()}
    assert len(workers) == 2 and server.process.pid not in workers
    site = Expected()
    alice = Expected(site)
    probe = spam(900)
    for i in range(10):
        raw, label = (spam(i), "spam") if i % 2 else (ham(i), "ham")
        assert alice.tell(LEARN, label, raw)
        assert tell_raw(server.port, raw, label) == OK_SET
        for reply in checks_together(server.port, probe):
            assert_answers(reply, alice.verdict(probe))  # whichever worker answered knows the lesson
    until(lambda: pids(r"serve\[(\d+)\] INFO: SYMBOLS ", server.text(wait=0)) == workers)  # both answered

    server.process.send_signal(signal.SIGHUP)
    until(lambda: pids(r"serve\[(\d+)\] INFO: SIGHUP: reopening", server.text(wait=0)) == workers)

    time.sleep(max(0.0, started + QUICK_DEATH_SECONDS + 0.5 - time.monotonic()))  # it served a while: at once
    killed = min(workers)
    os.kill(killed, signal.SIGKILL)
    until(lambda: "started again" in server.text(wait=0))
    assert re.search(rf"worker \d \(pid {killed}\) ended \(exit code 137\); it is started again in 0 s",
                     server.text(wait=0))
    again = int(re.search(r"worker \d started again \(pid (\d+)\)", server.text(wait=0)).group(1))

    def answered_by_both() -> bool:  # the worker started again reads the models from the store, and answers
        for reply in checks_together(server.port, probe):
            assert_answers(reply, alice.verdict(probe))
        return again in pids(r"serve\[(\d+)\] INFO: SYMBOLS ", server.text(wait=0))

    until(answered_by_both)
    server.stop()
    assert all(gone(pid) for pid in workers | {again})
    assert pids(r"serve\[(\d+)\] INFO: stopped; every lesson is in the store", server.text(wait=0)) == \
        workers - {killed} | {again}


def test_signals_while_the_workers_start_wait_for_them(tmp_path, redis_server):
    """SIGHUP and SIGTERM sent while the workers cannot start yet (Redis paused: each waits in
    its first request to it) neither kill a worker nor are lost: once Redis answers, the
    workers start, take the SIGHUP, stop on the SIGTERM, and the command exits 0."""
    assert redis_server.process is not None
    redis_server.process.send_signal(signal.SIGSTOP)
    try:
        service = subprocess.Popen(
            [sys.executable, "-m", "streamnb", "serve", "--models", str(tmp_path / "models"), "--port", "0",
             "--store", redis_server.url, "--workers", "2"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)})
        time.sleep(1.5)  # forked, each worker waiting for Redis
        service.send_signal(signal.SIGHUP)
        time.sleep(0.2)
        service.send_signal(signal.SIGTERM)
        time.sleep(0.2)
    finally:
        redis_server.process.send_signal(signal.SIGCONT)
    assert service.wait(timeout=60) == 0
    text = service.stderr.read().decode() if service.stderr else ""
    assert "exit code" not in text and "error" not in text.lower(), text
    assert len(pids(r"serve\[(\d+)\] INFO: SIGHUP: reopening", text)) == 2, text
    assert len(pids(r"serve\[(\d+)\] INFO: stopped; every lesson is in the store", text)) == 2, text


def test_a_worker_that_cannot_start_again_waits_while_the_others_serve(serve, tmp_path, redis_server):
    """With Redis away, a worker killed cannot start again (it must read the store): it is
    tried again after a growing wait while the other worker goes on answering from memory;
    with Redis back, it starts and serves."""
    server = host(serve, tmp_path, redis_server, 0, "--workers", "2")
    workers = {int(p) for p in re.search(r"with 2 workers \(pids (\d+) (\d+)\)", server.text(wait=0)).groups()}
    assert tell_raw(server.port, spam(1), "spam") == OK_SET
    assert tell_raw(server.port, ham(2), "ham") == OK_SET
    until(lambda: len(checks_together(server.port, spam(900))) == 8
          and pids(r"serve\[(\d+)\] INFO: SYMBOLS ", server.text(wait=0)) == workers)  # both hold alice's model
    time.sleep(1.5)  # the workers served a while: one that dies is started again at once
    before = set(checks_together(server.port, spam(900)))
    assert len(before) == 1 and b"STREAMNB_UNSCORED" not in next(iter(before)), before
    redis_server.kill()
    killed = min(workers)
    os.kill(killed, signal.SIGKILL)
    def waits() -> list[float]:
        return [float(w) for w in re.findall(r"ended \(exit code \d+\); it is started again in ([\d.]+) s",
                                             server.text(wait=0))]

    until(lambda: len(waits()) >= 3)
    assert waits()[:3] == [0.0, 1.0, 2.0], waits()  # at once, then a wait that doubles
    assert re.search(r"worker \d cannot serve: --store: .*cannot be reached", server.text(wait=0))
    assert server.alive()
    assert set(checks_together(server.port, spam(900))) == before  # the other worker answers, from memory
    redis_server.start()

    def the_last_started_answers() -> bool:
        checks_together(server.port, spam(900))
        last = int(re.findall(r"worker \d started again \(pid (\d+)\)", server.text(wait=0))[-1])
        return last in pids(r"serve\[(\d+)\] INFO: SYMBOLS ", server.text(wait=0))

    until(the_last_started_answers)
    server.stop()


def test_workers_stop_when_their_parent_is_killed(serve, tmp_path, redis_server):
    server = host(serve, tmp_path, redis_server, 0, "--workers", "2")
    workers = {int(p) for p in re.search(r"with 2 workers \(pids (\d+) (\d+)\)", server.text(wait=0)).groups()}
    server.kill()  # kill -9 of the parent alone
    until(lambda: all(gone(pid) for pid in workers))


def test_workers_that_cannot_reach_the_store_fail_the_command_with_its_reason(tmp_path):
    closed = free_port()
    result = subprocess.run([sys.executable, "-m", "streamnb", "serve", "--models", str(tmp_path), "--port", "0", "--store",
                             f"redis://127.0.0.1:{closed}/0", "--workers", "2"], capture_output=True, timeout=120,
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 3, result
    last = result.stderr.decode().strip().splitlines()[-1]
    assert last.startswith("streamnb serve: error: --store:") and str(closed) in last, last


@pytest.mark.parametrize("host_name", ["127.0.0.1", "localhost", ""])
def test_workers_listen_on_the_addresses_one_process_listens_on(host_name):
    from streamnb.service.server import listen

    async def one_process() -> set[tuple[int, str]]:
        server = await asyncio.start_server(lambda r, w: None, host_name or None, 0, reuse_address=True)
        bound = {(sock.family, sock.getsockname()[0]) for sock in server.sockets}
        server.close()
        await server.wait_closed()
        return bound

    sockets = listen(host_name, 0)
    try:
        assert {(sock.family, sock.getsockname()[0]) for sock in sockets} == asyncio.run(one_process())
    finally:
        for sock in sockets:
            sock.close()


def test_a_host_with_a_store_needs_no_models_folder(tmp_path, redis_server):
    where = tmp_path / "where-it-runs"
    where.mkdir()
    service = subprocess.Popen(
        [sys.executable, "-m", "streamnb", "serve", "--port", "0", "--store", redis_server.url, "--allow-tell"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=where,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert service.stderr is not None
        line = service.stderr.readline().decode()
        port = int(re.search(r"listening on 127\.0\.0\.1:(\d+) \(models in redis://", line).group(1))
        site = Expected()
        alice = Expected(site)
        for i in range(4):
            raw, label = (spam(i), "spam") if i % 2 else (ham(i), "ham")
            assert alice.tell(LEARN, label, raw)
            assert tell_raw(port, raw, label) == OK_SET
        assert_answers(check(port, spam(900)), alice.verdict(spam(900)))
    finally:
        service.send_signal(signal.SIGTERM)
        assert service.wait(timeout=60) == 0
    assert list(where.iterdir()) == []  # no folder made, nothing written where it ran


def metric(text: str, name: str) -> float:
    """A sample's value in Prometheus text (``name`` with its labels, as written)."""
    match = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    assert match is not None, f"{name} not in:\n{text}"
    return float(match.group(1))


def test_workers_metrics_add_up_the_workers_and_health_follows_them(serve, tmp_path, redis_server):
    """--workers 2 --metrics: one more process answers /metrics with both workers' counts added
    up (and the models each holds), /health 200; a worker killed leaves the gauges and keeps
    its counts in them; no worker holds the metrics port; the metrics process killed is started
    again; while the service stops /health says so; SIGTERM stops every process, 0, and the
    workers' metrics folder is removed."""
    server = host(serve, tmp_path, redis_server, 0, "--workers", "2", "--metrics", "127.0.0.1:0")
    workers = {int(p) for p in re.search(r"with 2 workers \(pids (\d+) (\d+)\)", server.text(wait=0)).groups()}
    assert server.metrics_port is not None
    assert tell_raw(server.port, spam(1), "spam") == OK_SET
    assert tell_raw(server.port, ham(2), "ham") == OK_SET
    sent = [0]

    def both_answered() -> bool:
        sent[0] += len(checks_together(server.port, spam(900)))
        return pids(r"serve\[(\d+)\] INFO: SYMBOLS ", server.text(wait=0)) == workers

    until(both_answered)
    text = metrics_text(server)
    assert metric(text, 'streamnb_requests_total{command="SYMBOLS",outcome="ok"}') == sent[0]  # both, added up
    assert metric(text, 'streamnb_requests_total{command="TELL",outcome="ok"}') == 2
    until(lambda: metric(metrics_text(server), "streamnb_models_loaded") == 4)  # alice's and the site's, in each
    assert metric(text, "streamnb_process_resident_memory_bytes") > 0
    assert health(server) == (200, "ok")
    time.sleep(1.2)  # they served a while: a worker that dies is started again at once
    killed = min(workers)
    os.kill(killed, signal.SIGKILL)
    until(lambda: "started again" in server.text(wait=0))
    until(lambda: metric(metrics_text(server), "streamnb_models_loaded") == 2)  # the dead one's gauges are gone
    assert metric(metrics_text(server), 'streamnb_requests_total{command="SYMBOLS",outcome="ok"}') == sent[0]
    assert health(server) == (200, "ok")  # one worker serves, the other starts again

    # no worker holds the metrics port (one left draining would keep a new service from it)
    workers = {int(p) for p in re.findall(r"worker \d started again \(pid (\d+)\)", server.text(wait=0))} | \
        (workers - {killed})
    metrics_sockets = listening_inodes(server.metrics_port)
    assert metrics_sockets and not any(socket_inodes(pid) & metrics_sockets for pid in workers)

    # the metrics process killed is started again, and answers
    metrics_pid = next(pid for pid in children(server.process.pid) if pid not in workers)
    os.kill(metrics_pid, signal.SIGKILL)
    until(lambda: "the metrics process started again" in server.text(wait=0))
    until(lambda: health(server) == (200, "ok"))

    # stopping: /health says so while a worker finishes (held here with SIGSTOP)
    held = min(workers)
    os.kill(held, signal.SIGSTOP)
    server.process.send_signal(signal.SIGTERM)
    until(lambda: health(server) == (503, "stopping"))
    os.kill(held, signal.SIGCONT)
    assert server.process.wait(timeout=60) == 0
    folder = re.search(r"the workers' figures in (\S+)\)", server.text(wait=0.3)).group(1)
    assert not os.path.exists(folder)


def health(server) -> tuple[int, str]:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/health", timeout=10) as reply:
            return reply.status, reply.read().decode().strip()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode().strip()


def children(pid: int) -> set[int]:
    return {int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}


def socket_inodes(pid: int) -> set[str]:
    """The inodes of the sockets a process holds open."""
    found = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            found.add(target[len("socket:["):-1])
    return found


def listening_inodes(port: int) -> set[str]:
    """The inodes of the TCP sockets listening on ``port`` (/proc/net/tcp, tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":  # 0A: LISTEN
                found.add(fields[9])
    return found
