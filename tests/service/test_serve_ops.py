"""streamnb serve (issue 35, items 2-4): signals as spamd's, the log, metrics and health.

SIGHUP re-reads the settings (``--config``) and reopens the log file without dropping a
connection or a lesson; SIGTERM and SIGINT fold the journals and stop; each is logged. One
line per request in one timestamped format, to stderr, a file or syslog, at a level. The
Prometheus metrics at /metrics, and /health.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

import streamnb
from streamnb.service import cli
from streamnb.service.metrics import Metrics, MetricsServer
from tests.served import ROOT, Served
from tests.service.test_serve import check, error_line, ham, request, spam, tell_raw, unscored

LINE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d{4} streamnb serve\[\d+\] (DEBUG|INFO|WARNING|ERROR): \S")


def lines_with(server: Served, text: str) -> list[str]:
    return [line for line in server.text().splitlines() if text in line]


def wait_for(condition, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


# -- signals -----------------------------------------------------------------------------------------

def test_sighup_rereads_the_settings_without_dropping_a_connection_or_a_lesson(serve, tmp_path):
    config = tmp_path / "serve.conf"
    config.write_text("# the settings SIGHUP reads again\n--allow-tell\n")
    models = tmp_path / "models"
    server = serve(models, "--config", str(config), "--no-site")
    assert tell_raw(server.port, spam(1), "spam") == b"SPAMD/1.5 0 EX_OK\r\nDidSet: local\r\n\r\n"
    # a TELL half sent when the signal comes: it is answered, and its lesson kept
    raw = ham(2)
    half = f"TELL SPAMC/1.5\r\nMessage-class: ham\r\nSet: local\r\nUser: alice\r\nContent-length: {len(raw)}\r\n\r\n"
    with socket.create_connection(("127.0.0.1", server.port), timeout=20) as connection:
        connection.sendall(half.encode() + raw[:10])
        config.write_text("--allow-tell --snapshot-every 500 --max-size 2000\n")
        server.process.send_signal(signal.SIGHUP)
        wait_for(lambda: lines_with(server, "SIGHUP: settings re-read"))
        connection.sendall(raw[10:])
        connection.shutdown(socket.SHUT_WR)
        reply = connection.recv(1000)
    assert reply == b"SPAMD/1.5 0 EX_OK\r\nDidSet: local\r\n\r\n"
    assert re.search(r"INFO: SIGHUP: settings re-read \(snapshot_every, limits changed\)", server.text())
    unscored(check(server.port, spam(4) + b"x" * 3000))  # --max-size 2000 now
    config.write_text("")  # --allow-tell taken out (the command line did not give it)
    server.process.send_signal(signal.SIGHUP)
    wait_for(lambda: "(allow_tell, snapshot_every, limits changed)" in server.text(wait=0))
    code, text = error_line(tell_raw(server.port, spam(3), "spam"))
    assert code == 69 and "--allow-tell" in text
    assert server.alive()
    server.stop()
    assert streamnb.load(models / "alice.snb").class_counts == {"spam": 1.0, "ham": 1.0}
    assert not (models / "alice.snb.journal").exists()


def test_sighup_with_bad_settings_keeps_the_old_ones_and_says_why(serve, tmp_path):
    config = tmp_path / "serve.conf"
    config.write_text("--allow-tell\n")
    server = serve(tmp_path / "models", "--config", str(config), "--no-site")
    for bad, said in (("--site-blend -1\n", "--site-blend"), ("--frobnicate\n", "--frobnicate"),
                      ("--read-only\n", "--read-only refuses every TELL"), ("--port 9\n", "--port cannot change")):
        config.write_text("--allow-tell " + bad)
        server.process.send_signal(signal.SIGHUP)
        wait_for(lambda: said in server.text(wait=0))
        assert server.alive()
    assert re.search(r"ERROR: SIGHUP: the settings were not changed: --config \S+: .*--frobnicate", server.text())
    assert re.search(r"WARNING: SIGHUP: --port cannot change while serving \(restart the service for it\); kept",
                     server.text())
    os.unlink(config)
    server.process.send_signal(signal.SIGHUP)
    wait_for(lambda: "No such file or directory" in server.text(wait=0))
    assert tell_raw(server.port, spam(1), "spam") == b"SPAMD/1.5 0 EX_OK\r\nDidSet: local\r\n\r\n"  # still allowed
    server.stop()


def test_a_bad_config_file_is_refused_at_start_with_one_line(tmp_path):
    config = tmp_path / "serve.conf"
    config.write_text("--max-size lots\n")
    (tmp_path / "models").mkdir()
    result = subprocess.run([sys.executable, "-m", "streamnb", "serve", "--models", str(tmp_path / "models"),
                             "--port", "0", "--config", str(config)], capture_output=True, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert result.returncode == 3
    assert result.stderr.count("\n") == 1 and f"--config {config}:" in result.stderr and "--max-size" in result.stderr


def test_sighup_reopens_the_log_file_for_logrotate(serve, tmp_path):
    log = tmp_path / "serve.log"
    server = serve(tmp_path / "models", "--log-file", str(log))
    assert request(server.port, b"PING SPAMC/1.5\r\n\r\n") == b"SPAMD/1.5 0 PONG\r\n"
    wait_for(lambda: "PING user=- outcome=ok" in log.read_text())
    os.rename(log, tmp_path / "serve.log.1")  # logrotate moves it ...
    server.process.send_signal(signal.SIGHUP)  # ... and signals the service
    wait_for(lambda: log.exists() and "SIGHUP" in log.read_text())
    check(server.port, spam(1))
    wait_for(lambda: "SYMBOLS user=alice outcome=ok" in log.read_text())
    server.stop()
    old, new = (tmp_path / "serve.log.1").read_text(), log.read_text()
    assert "listening on" in old and "PING user=-" in old and "SYMBOLS" not in old
    assert "SYMBOLS user=alice outcome=ok" in new and "SIGTERM: stopping" in new and "stopped; " in new
    assert "SIGHUP: reopening the log file" in old and "SIGHUP: settings re-read" in new
    assert server.process.stderr.read() == b""  # the log went to the file only
    assert all(LINE.match(line) for line in (old + new).splitlines()), old + new


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_and_sigint_fold_the_journals_and_stop(sig, serve, tmp_path):
    models = tmp_path / "models"
    server = serve(models, "--allow-tell")
    for i in range(3):
        assert tell_raw(server.port, spam(i), "spam").startswith(b"SPAMD/1.5 0 EX_OK")
    assert (models / "alice.snb.journal").exists()
    server.process.send_signal(sig)
    assert server.process.wait(timeout=60) == 0
    text = server.text()
    assert f"INFO: {sig.name}: stopping: no new connection; the requests under way finish, every journal is folded" \
        in text
    assert "INFO: stopped; every model folded into its file" in text
    assert not (models / "alice.snb.journal").exists() and not (models / "@site.snb.journal").exists()
    assert streamnb.load(models / "alice.snb").class_counts == {"spam": 3.0}


# -- the log -----------------------------------------------------------------------------------------------

def test_one_timestamped_line_per_request_with_its_fields(serve, tmp_path):
    server = serve(tmp_path / "models", "--allow-tell")
    tell_raw(server.port, spam(1), "spam", user="alice")
    check(server.port, spam(1), user="alice", method="CHECK")
    request(server.port, b"PING SPAMC/1.5\r\n\r\n")
    request(server.port, b"EXPLODE SPAMC/1.5\r\n\r\n")
    server.stop()
    text = server.text()
    assert all(LINE.match(line) for line in text.splitlines()), text
    raw = spam(1)
    assert re.search(rf" INFO: TELL user=alice outcome=ok verdict=spam ms=\d+\.\d bytes={len(raw)} code=0\n", text)
    assert re.search(rf" INFO: CHECK user=alice outcome=ok verdict=(spam|ham|unsure) score=\d+\.\d ms=\d+\.\d "
                     rf"bytes={len(raw)} code=0\n", text)
    assert re.search(r" INFO: PING user=- outcome=ok ms=\d+\.\d bytes=0 code=0\n", text)
    assert re.search(r" WARNING: - user=- outcome=refused ms=\S+ bytes=0 code=76 reason=\"Bad header line: \(unknown "
                     r"request 'EXPLODE SPAMC/1.5'\)\"\n", text)


def test_log_levels(serve, tmp_path):
    """--log-level warning: refusals only (set here by a SIGHUP, so that the start is seen)."""
    config = tmp_path / "serve.conf"
    config.write_text("--allow-tell\n")
    server = serve(tmp_path / "models", "--config", str(config))
    config.write_text("--allow-tell --log-level warning\n")
    server.process.send_signal(signal.SIGHUP)
    # (the handler runs whole between two requests: once it has said this, the new level is set)
    wait_for(lambda: "SIGHUP: reopening the log file" in server.text(wait=0))
    before = len(server.text().splitlines())
    assert check(server.port, spam(1)).startswith(b"SPAMD/1.5 0 EX_OK")
    assert tell_raw(server.port, spam(1), "spam").startswith(b"SPAMD/1.5 0 EX_OK")
    assert error_line(request(server.port, b"EXPLODE SPAMC/1.5\r\n\r\n"))[0] == 76
    server.stop()
    after = server.text().splitlines()[before:]
    assert len(after) == 1 and " WARNING: - user=- outcome=refused " in after[0], after
    with pytest.raises(SystemExit):
        cli.parse_arguments(["serve", "--models", str(tmp_path), "--log-level", "loud"])


def test_syslog(tmp_path):
    """--syslog: each line a datagram to the socket, facility mail, the level as syslog's priority."""
    path = str(tmp_path / "log.sock")
    sink = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sink.bind(path)
    sink.settimeout(30)
    (tmp_path / "models").mkdir()
    process = subprocess.Popen([sys.executable, "-m", "streamnb", "serve", "--models", str(tmp_path / "models"),
                                "--port", "0", "--syslog", "--syslog-socket", path], cwd=ROOT,
                               env={**os.environ, "PYTHONPATH": str(ROOT)}, stderr=subprocess.PIPE)
    try:
        while not (match := re.match(rb"<22>streamnb\[(\d+)\]: INFO: listening on 127\.0\.0\.1:(\d+) ",
                                     sink.recv(65536))):
            pass
        assert int(match.group(1)) == process.pid
        assert request(int(match.group(2)), b"PING SPAMC/1.5\r\n\r\n") == b"SPAMD/1.5 0 PONG\r\n"
        assert re.match(rb"<22>streamnb\[\d+\]: INFO: PING user=- outcome=ok .*code=0\x00$", sink.recv(65536))
        request(int(match.group(2)), b"EXPLODE SPAMC/1.5\r\n\r\n")
        assert re.match(rb"<20>streamnb\[\d+\]: WARNING: - user=- outcome=refused ", sink.recv(65536))  # mail.warning
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
        sink.close()
    assert process.stderr.read() == b""


@pytest.mark.parametrize("where, said", [(("--log-file", "nowhere/serve.log"), "No such file or directory"),
                                         (("--syslog", "--syslog-socket", "nowhere/log"), "is a syslog daemon running?"),
                                         (("--syslog", "--syslog-socket", "models"), "not a socket")])
def test_a_log_that_cannot_be_opened_is_refused_at_start(where, said, tmp_path):
    (tmp_path / "models").mkdir()
    where = [str(tmp_path / word) if "/" in word or word == "models" else word for word in where]
    result = subprocess.run([sys.executable, "-m", "streamnb", "serve", "--models", str(tmp_path / "models"),
                             "--port", "0", *where], capture_output=True, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert result.returncode == 3 and result.stderr.count("\n") == 1, result.stderr
    assert where[-1] in result.stderr and said in result.stderr, result.stderr


# -- metrics and health -------------------------------------------------------------------------------------

def scrape(port: int) -> dict[tuple[str, tuple], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=20) as response:
        assert response.status == 200 and response.headers["Content-Type"].startswith("text/plain; version=")
        text = response.read().decode()
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def test_metrics_count_requests_verdicts_refusals_and_the_models(serve, tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    args = cli.build_parser().parse_args(["serve", "--models", str(models)])
    args.ledger = 0
    cli.build_model(args).save(models / "carol.snb")  # no ledger: its TELLs are refused
    server = serve(models, "--allow-tell", "--metrics", "127.0.0.1:0", "--max-size", "3000")
    assert server.metrics_port is not None
    for i in range(3):
        tell_raw(server.port, spam(i), "spam")
        tell_raw(server.port, ham(i), "ham")
    for i in range(4):
        check(server.port, spam(10 + i), method="CHECK")
    unscored(check(server.port, spam(20) + b"y" * 4000))  # over --max-size: unscored
    assert error_line(tell_raw(server.port, spam(1), "spam", user="carol"))[0] == 69
    request(server.port, b"PING SPAMC/1.5\r\n\r\n")
    wait_for(lambda: scrape(server.metrics_port).get(("streamnb_journal_lessons", ())) == 12.0)  # 6 each, site too
    seen = scrape(server.metrics_port)
    assert seen[("streamnb_requests_total", (("command", "TELL"), ("outcome", "ok")))] == 6
    assert seen[("streamnb_requests_total", (("command", "TELL"), ("outcome", "refused")))] == 1
    assert seen[("streamnb_requests_total", (("command", "CHECK"), ("outcome", "ok")))] == 4
    assert seen[("streamnb_requests_total", (("command", "SYMBOLS"), ("outcome", "unscored")))] == 1
    assert seen[("streamnb_requests_total", (("command", "PING"), ("outcome", "ok")))] == 1
    assert sum(value for (name, labels), value in seen.items() if name == "streamnb_verdicts_total") == 5
    assert seen[("streamnb_verdicts_total", (("verdict", "unsure"),))] >= 1
    assert seen[("streamnb_unscored_checks_total", ())] == 1
    assert seen[("streamnb_refused_tells_total", (("code", "69"),))] == 1
    assert seen[("streamnb_request_seconds_count", (("command", "CHECK"),))] == 4
    assert seen[("streamnb_request_seconds_bucket", (("command", "CHECK"), ("le", "+Inf")))] == 4
    assert seen[("streamnb_models_loaded", ())] == 3  # alice, carol and the site model
    assert seen[("streamnb_model_bytes", ())] > 0
    assert seen[("streamnb_process_resident_memory_bytes", ())] > 10 << 20
    with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/health", timeout=20) as response:
        assert (response.status, response.read()) == (200, b"ok\n")
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/other", timeout=20)
    assert missing.value.code == 404
    server.stop()
    assert "metrics on http://127.0.0.1:" in server.text()


def test_health_is_503_when_stopping_or_stalled():
    metrics = Metrics()
    http = MetricsServer(metrics, "127.0.0.1", 0)
    http.start()
    url = f"http://127.0.0.1:{http.address[1]}/health"
    try:
        with urllib.request.urlopen(url, timeout=20) as response:
            assert response.read() == b"ok\n"
        metrics.last_beat -= 60  # the event loop has not marked a second for a minute
        with pytest.raises(urllib.error.HTTPError) as stalled:
            urllib.request.urlopen(url, timeout=20)
        assert stalled.value.code == 503 and b"has not run for 60 s" in stalled.value.read()
        metrics.stopping = True
        with pytest.raises(urllib.error.HTTPError) as stopping:
            urllib.request.urlopen(url, timeout=20)
        assert stopping.value.code == 503 and stopping.value.read() == b"stopping\n"
    finally:
        http.stop()


def test_a_metrics_address_in_use_is_refused_at_start(tmp_path):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    (tmp_path / "models").mkdir()
    try:
        result = subprocess.run([sys.executable, "-m", "streamnb", "serve", "--models", str(tmp_path / "models"),
                                 "--port", "0", "--metrics", f"127.0.0.1:{port}"], capture_output=True, text=True,
                                cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    finally:
        taken.close()
    assert result.returncode == 3 and result.stderr.count("\n") == 1, result.stderr
    assert f"cannot listen on --metrics 127.0.0.1:{port}: Address already in use" in result.stderr
    bad = subprocess.run([sys.executable, "-m", "streamnb", "serve", "--models", str(tmp_path / "models"),
                          "--metrics", "9783"], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert bad.returncode == 3 and "is not HOST:PORT" in bad.stderr


def test_documented_scrape_names_exist(serve, tmp_path):
    """Every metric the service guide's example scrape shows is one the service exports."""
    guide = (ROOT / "docs" / "guides" / "service.md").read_text()
    example = guide[guide.index("<!-- scrape -->"):guide.index("<!-- /scrape -->")]
    documented = set(re.findall(r"^(streamnb_\w+?)(?:\{| )", example, re.M))
    server = serve(tmp_path / "models", "--metrics", "127.0.0.1:0")
    check(server.port, spam(1), method="CHECK")
    tell_raw(server.port, spam(1), "spam")  # refused: no --allow-tell
    exported = {name for name, _ in scrape(server.metrics_port)}
    server.stop()
    assert documented and documented <= exported, documented - exported


def test_the_service_runs_on_uvloop_and_on_asyncio_without_it(monkeypatch, serve, tmp_path):
    """The command's event loop is uvloop's (one client's check through spamc takes 0.92x the
    time: ``python -m benchmarks --only serve``); where uvloop is not installed, or too old to
    have ``run``, asyncio's own, and the command serves and stops on it as well."""
    import asyncio
    import types

    uvloop = pytest.importorskip("uvloop")
    from streamnb.service import serve as service

    async def loop_type() -> type:
        return type(asyncio.get_running_loop())

    assert issubclass(service._run_loop(loop_type()), uvloop.Loop)
    server = serve(tmp_path / "models")
    if os.path.exists(f"/proc/{server.process.pid}/maps"):
        with open(f"/proc/{server.process.pid}/maps") as maps:
            assert "uvloop" in maps.read()  # `streamnb serve` itself
    assert check(server.port, ham(1), method="CHECK").startswith(b"SPAMD/1.5 0 EX_OK\r\nSpam: False")
    server.stop()
    monkeypatch.setitem(sys.modules, "uvloop", types.ModuleType("uvloop"))  # an uvloop without run (< 0.18)
    assert not issubclass(service._run_loop(loop_type()), uvloop.Loop)
    monkeypatch.setitem(sys.modules, "uvloop", None)  # `import uvloop` raises ImportError
    assert not issubclass(service._run_loop(loop_type()), uvloop.Loop)
    without = subprocess.Popen(  # the command itself on asyncio's loop: it serves, and SIGTERM stops it
        [sys.executable, "-c", "import sys; sys.modules['uvloop'] = None; from streamnb.service.cli import main; "
         "sys.exit(main())", "serve", "--models", str(tmp_path / "models"), "--port", "0"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    watchdog = threading.Timer(60, without.kill)  # a service that never says where it listens
    watchdog.start()
    listening = None
    try:
        assert without.stderr is not None
        for line in without.stderr:
            listening = re.search(rb"listening on 127\.0\.0\.1:(\d+)", line)
            if listening:
                break
        assert listening, "the service on asyncio's loop did not start"
        if os.path.exists(f"/proc/{without.pid}/maps"):
            with open(f"/proc/{without.pid}/maps") as maps:
                assert "uvloop" not in maps.read()
        assert check(int(listening.group(1)), ham(2), method="CHECK").startswith(b"SPAMD/1.5 0 EX_OK\r\nSpam: False")
        without.send_signal(signal.SIGTERM)
        assert without.wait(timeout=60) == 0
    finally:
        watchdog.cancel()
        if without.poll() is None:
            without.kill()
