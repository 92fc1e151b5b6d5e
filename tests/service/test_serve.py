"""streamnb serve (issue 16): Debian's real spamc against the server, durability, abuse.

Servers run as subprocesses (``python -m streamnb serve --port 0``); spamc is the system's
(``.ci/run`` installs Debian's when missing). Expected verdicts are recomputed here from the
same lessons on a model built the same way, so every number spamc prints is checked.
"""

from __future__ import annotations

import asyncio
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import pytest

import streamnb
from streamnb import EmailTokenizer, MultinomialNB
from streamnb.errors import InvalidParameterError
from streamnb.filter.decision import RuleOptions, SpamFilter
from streamnb.ledger import message_fingerprint
from streamnb.persist import dumps
from streamnb.service import cli, journal
from streamnb.service.journal import FORGET, LEARN, Lesson
from streamnb.service.protocol import SITE_NAME, site_model_path
from streamnb.service.serve import Settings, UserModel, recover, rewrite_message, score_fields, symbols
from streamnb.service.site import Answer, Scored
from streamnb.service.site import answer as site_answer
from tests.retrain_support import snapshot
from tests.served import ROOT, Served, expected_check

SPAMC = shutil.which("spamc")
needs_spamc = pytest.mark.skipif(SPAMC is None, reason="Debian's spamc is not installed (.ci/run installs it)")

SPAM_WORDS = ["cheap", "pills", "viagra", "discount", "offer", "winner", "prize", "casino", "loan", "free"]
HAM_WORDS = ["meeting", "agenda", "project", "report", "lunch", "review", "draft", "schedule", "notes", "team"]


def message(i: int, words: list[str], sender: str, subject: str) -> bytes:
    body = " ".join(words[(i + k) % len(words)] for k in range(8))
    return (f"From: {sender}\nTo: me@example.org\nSubject: {subject} {i}\n"
            f"Date: Mon, {1 + i % 28:02d} Sep 2002 10:00:00 +0000\nMessage-ID: <{i}@x>\n\n"
            f"{body}\nuniq{i:05d} is this message's own word\n").encode()


def docs(model, token: str) -> dict:
    """Messages of each class that contain token (classes with none left out): the naive Bayes
    counts (a fusion's naive Bayes part)."""
    counts = getattr(model, "nb", model).feature_doc_counts(token)
    return {label: count for label, count in counts.items() if count}


def spam(i: int) -> bytes:
    return message(i, SPAM_WORDS, "deals@offers.example.com", "Cheap pills")


def ham(i: int) -> bytes:
    return message(i, HAM_WORDS, "alice@work.example.org", "Project meeting")


# -- running servers and clients -------------------------------------------------------------------

def spamc(port: int, *args: str, stdin: bytes, user: str = "alice") -> subprocess.CompletedProcess:
    return subprocess.run([SPAMC, "-d", "127.0.0.1", "-p", str(port), "-u", user, *args], input=stdin,
                          capture_output=True, timeout=60)


def request(port: int, data: bytes, *, shutdown: bool = True, timeout: float = 20.0) -> bytes:
    """Send raw bytes, read until the server closes; the reply."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        try:
            connection.sendall(data)
            if shutdown:
                connection.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed before taking everything
        return read_all(connection)


def read_all(connection: socket.socket) -> bytes:
    parts = []
    while True:
        try:
            part = connection.recv(65536)
        except ConnectionResetError:
            break
        if not part:
            break
        parts.append(part)
    return b"".join(parts)


def check(port: int, raw: bytes, user: str = "alice", method: str = "SYMBOLS") -> bytes:
    return request(port, f"{method} SPAMC/1.5\r\nUser: {user}\r\nContent-length: {len(raw)}\r\n\r\n".encode() + raw)


def tell_raw(port: int, raw: bytes, label: str | None, user: str = "alice") -> bytes:
    headers = f"Message-class: {label}\r\nSet: local\r\n" if label else "Remove: local\r\n"
    return request(port, f"TELL SPAMC/1.5\r\n{headers}User: {user}\r\nContent-length: {len(raw)}\r\n\r\n"
                   .encode() + raw)


# -- what the server should say, recomputed here -----------------------------------------------------

SERVE_ARGS = cli.build_parser().parse_args(["serve", "--models", "unused"])


class Expected:
    """A model built as the server builds a new user's, taught the same lessons in the same order.

    With ``site`` (another Expected, standing for the site model), each lesson teaches it too,
    and a verdict is the blend of the two the server gives (streamnb/service/site.py). A model
    that was never taught anything has no file on the server: it gives no verdict.
    """

    def __init__(self, site: Expected | None = None) -> None:
        self.model = cli.build_model(SERVE_ARGS)
        # The server's defaults: the command's rule (LogOddsRule) and its min_per_class.
        self.filter = SpamFilter(self.model, cli.decision_rule(SERVE_ARGS, self.model),
                                 min_per_class=cli.min_per_class(SERVE_ARGS))
        self.site = site
        self.taught = False

    def tell(self, action: str, label: str | None, raw: bytes) -> bool:
        changed = journal.apply_lesson(self.model, Lesson(action, label, raw))
        self.taught = True
        if self.site is not None:
            changed = self.site.tell(action, label, raw) or changed
        return changed

    def scored(self, raw: bytes, explain: bool = False) -> Scored | None:
        """This model's own verdict (None before its first lesson: the server has no file)."""
        if not self.taught:
            return None
        self.filter.evidence_k = 10 if explain else 0
        return Scored(self.filter.classify(raw, explain=explain), self.filter.ready, self.model.class_counts)

    def answer(self, raw: bytes, explain: bool = False) -> Answer:
        site = self.site.scored(raw, explain) if self.site is not None else None
        found = site_answer(site, self.scored(raw, explain), Settings.site_blend, self.filter.rule,
                            self.filter.min_per_class, 10 if explain else 0)
        assert found is not None, "neither model has been taught"
        return found

    def verdict(self, raw: bytes, explain: bool = False):
        return self.answer(raw, explain).verdict

    def observe(self, raw: bytes, explain: bool = False) -> None:
        """Check raw and observe it as the server does (``--observe``): each model with a file."""
        verdict = self.verdict(raw, explain)
        for model in (self.site, self):
            if model is not None and model.taught:
                model.filter.observe(raw, verdict)


N_EACH = 40


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A server with --allow-tell and user alice taught N_EACH spam and N_EACH ham through ``spamc -L``
    (the site model too); its checks observe nothing (--no-observe), so that every verdict
    is the one the models taught those lessons give.

    40 of each: the default rule is cautious while a class is little known (spam from
    log-odds 16 + 800 / hams learned); with 40 of each it decides these messages.
    """
    if SPAMC is None:
        pytest.skip("Debian's spamc is not installed (.ci/run installs it)")
    server = Served(tmp_path_factory.mktemp("trained") / "models", "--allow-tell", "--no-observe")
    expected = Expected(site=Expected())
    try:
        for i in range(N_EACH):
            for raw, label in ((spam(i), "spam"), (ham(i), "ham")):
                result = spamc(server.port, "-L", label, stdin=raw)
                assert result.returncode == 0 and result.stdout == b"Message successfully un/learned\n", result
                expected.tell(LEARN, label, raw)
        yield server, expected
    finally:
        if server.alive():
            server.stop()


# -- every method through spamc ------------------------------------------------------------------

@needs_spamc
def test_ping(trained):
    server, _ = trained
    result = spamc(server.port, "-K", stdin=b"")
    assert result.returncode == 0
    assert result.stdout == b"SPAMD/1.5 0\n"


@needs_spamc
@pytest.mark.parametrize("kind", ["spam", "ham"])
def test_check_prints_score_and_exits_one_for_spam(trained, kind):
    server, expected = trained
    raw, verdict, score, threshold = expected_check(expected, spam if kind == "spam" else ham, 100)
    result = spamc(server.port, "-c", stdin=raw)
    assert result.stdout == f"{score}/{threshold}\n".encode()
    assert threshold == "9.0"
    if kind == "spam":
        assert verdict.label == "spam" and float(score) >= 9.0 and result.returncode == 1
    else:
        assert verdict.label == "ham" and float(score) < 2.0 and result.returncode == 0


@needs_spamc
def test_symbols(trained):
    server, _ = trained
    assert spamc(server.port, "-y", stdin=spam(101)).stdout == b"STREAMNB_SPAM"
    assert spamc(server.port, "-y", stdin=ham(101)).stdout == b"STREAMNB_HAM"
    # a user without a model: the site model's verdict, and nothing is written for it
    assert spamc(server.port, "-y", stdin=spam(101), user="nobody").stdout == b"STREAMNB_SPAM"
    assert not (server.models / "nobody.snb").exists()


@needs_spamc
def test_report_has_the_score_the_posterior_and_the_counts(trained):
    server, expected = trained
    raw = spam(102)
    verdict = expected.verdict(raw, explain=True)
    _, score, threshold = score_fields(verdict, expected.filter.rule)
    lines = spamc(server.port, "-R", stdin=raw).stdout.decode().splitlines()
    assert lines[0] == f"{score}/{threshold}"
    assert lines[1] == "streamnb verdict for user alice: spam"
    assert f"  P(spam|x) = {verdict.probability:.6f} (Fusion posterior)" in lines  # the default model, by name
    assert f"  model: {N_EACH} spam and {N_EACH} ham learned" in lines
    clues = [line for line in lines if re.match(r"\s+[+-]\d+\.\d{3}  ", line)]
    # (a feature may hold a space: the default model's word pairs, "viagra discount")
    assert [line.strip().split(None, 1)[1] for line in clues] == [str(clue.feature) for clue in verdict.evidence]
    assert len(clues) == 10


@needs_spamc
def test_report_ifspam_reports_spam_only(trained):
    server, expected = trained
    spam_report = spamc(server.port, "-r", stdin=spam(103))
    _, score, threshold = score_fields(expected.verdict(spam(103)), expected.filter.rule)
    assert spam_report.stdout.decode().startswith(f"{score}/{threshold}\nstreamnb verdict for user alice: spam\r\n")
    assert spamc(server.port, "-r", stdin=ham(103)).stdout == b""


@needs_spamc
@pytest.mark.parametrize("kind", ["spam", "ham"])
def test_process_and_headers_tag_the_message(trained, kind):
    server, expected = trained
    raw, verdict, score, threshold = expected_check(expected, spam if kind == "spam" else ham, 104)
    tagged = rewrite_message(raw, verdict, score, threshold, symbols(verdict, True))
    processed = spamc(server.port, stdin=raw)
    assert processed.returncode == 0
    assert processed.stdout == tagged
    head, body = tagged.split(b"\n\n", 1)
    assert raw.split(b"\n\n", 1)[1] == body  # the body byte for byte
    assert f"X-StreamNB-Status: {kind}".encode() in head.split(b"\n")
    assert f"X-Spam-Status: {'Yes' if kind == 'spam' else 'No'}, score={score} required=9.0 tests=STREAMNB_"\
        .encode() in head
    assert (b"X-Spam-Flag: YES" in head.split(b"\n")) == (kind == "spam")
    # HEADERS: the server sends the headers only, spamc adds the original body: the same message
    assert spamc(server.port, "--headers", stdin=raw).stdout == tagged
    # -E: the exit code says spam
    assert spamc(server.port, "-E", stdin=raw).returncode == (1 if kind == "spam" else 0)


@needs_spamc
def test_process_replaces_earlier_tags(trained):
    server, _ = trained
    once = spamc(server.port, stdin=spam(105)).stdout
    twice = spamc(server.port, stdin=once).stdout
    assert twice.count(b"X-StreamNB-Status:") == 1 and twice.count(b"X-Spam-Flag:") == 1


@needs_spamc
def test_skip_gets_no_answer(trained):
    server, _ = trained
    assert request(server.port, b"SKIP SPAMC/1.5\r\n\r\n") == b""
    assert request(server.port, b"PING SPAMC/1.2\r\n") == b"SPAMD/1.5 0 PONG\r\n"  # before 1.5: no headers


@needs_spamc
def test_compressed_request_is_answered_like_a_plain_one(trained):
    # Debian's spamc is built without zlib; libspamc sends zlib's compress2() output, as here.
    server, _ = trained
    raw = spam(106)
    plain = request(server.port, f"CHECK SPAMC/1.5\r\nUser: alice\r\nContent-length: {len(raw)}\r\n\r\n".encode() + raw)
    packed = zlib.compress(raw)
    compressed = request(server.port, f"CHECK SPAMC/1.5\r\nUser: alice\r\nCompress: zlib\r\n"
                                      f"Content-length: {len(packed)}\r\n\r\n".encode() + packed)
    assert plain == compressed
    assert plain.startswith(b"SPAMD/1.5 0 EX_OK\r\nSpam: True ; ") and b"X-StreamNB-Status: spam\r\n" in plain


# -- TELL -----------------------------------------------------------------------------------------

def counts_line(port: int, user: str) -> str:
    report = spamc(port, "-R", stdin=ham(999), user=user).stdout.decode()
    return next(line.strip() for line in report.splitlines() if line.strip().startswith("model:"))


@needs_spamc
def test_tell_learns_moves_and_forgets(serve, tmp_path):
    server = serve(tmp_path / "models", "--allow-tell")
    raw, other = spam(1), spam(2)

    def tell(*args: str) -> bytes:
        result = spamc(server.port, *args, stdin=raw, user="bob")
        assert result.returncode == 0, result
        return result.stdout

    assert tell("-L", "spam") == b"Message successfully un/learned\n"
    assert counts_line(server.port, "bob").startswith("model: 1 spam and 0 ham learned")
    assert tell("-L", "spam") == b"Message was already un/learned\n"  # the same message, the same class
    assert counts_line(server.port, "bob").startswith("model: 1 spam and 0 ham learned")
    assert tell("-L", "ham") == b"Message successfully un/learned\n"  # moved
    assert counts_line(server.port, "bob").startswith("model: 0 spam and 1 ham learned")
    assert spamc(server.port, "-L", "spam", stdin=other, user="bob").stdout == b"Message successfully un/learned\n"
    assert tell("-L", "forget") == b"Message successfully un/learned\n"
    assert counts_line(server.port, "bob").startswith("model: 1 spam and 0 ham learned")
    assert tell("-L", "forget") == b"Message was already un/learned\n"  # nothing left to forget
    server.stop()
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["@site.snb", "@site.snb.lock", "bob.snb",
                                                                       "bob.snb.lock"]  # journals folded
    for name in ("bob.snb", "@site.snb"):  # the site model learned, moved and forgot the same
        model = streamnb.load(tmp_path / "models" / name)  # loads with streamnb.load after a clean stop
        assert model.class_counts == {"spam": 1.0}
        assert docs(model, "uniq00002") == {"spam": 1.0}
        assert docs(model, "uniq00001") == {}
        assert model.ledger == cli.SERVE_LEDGER


def assert_same_scores(model, expected, probes: list[bytes]) -> None:
    """Naive Bayes' scores the same (its clock may have moved on: stamps differ), every other
    log-odds and the stacker's weights to 1e-9."""
    for probe in probes:
        assert model.nb.predict_log_proba_one(probe) == expected.nb.predict_log_proba_one(probe)
    got = [z for p in probes for z in (model.log_odds_one(p), *model.part_log_odds(p))] + list(model.weights)
    want = [z for p in probes for z in (expected.log_odds_one(p), *expected.part_log_odds(p))] + list(expected.weights)
    assert max(abs(a - b) for a, b in zip(got, want)) <= 1e-9


def test_forget_and_a_move_through_the_server_undo_a_lesson_exactly(serve, tmp_path):
    """Issue 34: a lesson the service is told, then told to forget (or to learn as the other
    class) right after, leaves the user's model and the site model as if that lesson had never
    been told: naive Bayes by its counts, logistic regression and the stacker by the steps
    they kept."""
    server = serve(tmp_path / "models", "--allow-tell")
    expected = Expected()
    for i in range(12):
        for raw, label in ((spam(i), "spam"), (ham(i), "ham")):
            assert tell_raw(server.port, raw, label, user="carol").startswith(b"SPAMD/1.5 0 EX_OK")
            expected.tell(LEARN, label, raw)
    for lesson, then in ((ham(50), None), (ham(51), "ham"), (spam(52), None)):
        assert tell_raw(server.port, lesson, "spam", user="carol").startswith(b"SPAMD/1.5 0 EX_OK")  # misfiled
        assert tell_raw(server.port, lesson, then, user="carol").startswith(b"SPAMD/1.5 0 EX_OK")  # forget, or move
        if then is not None:
            expected.tell(LEARN, then, lesson)
    server.stop()
    for name in ("carol.snb", "@site.snb"):
        model = streamnb.load(tmp_path / "models" / name)
        assert model.class_counts == expected.model.class_counts == {"spam": 12.0, "ham": 13.0}
        assert_same_scores(model, expected.model, [ham(50), ham(51), spam(52), spam(60), ham(61)])


def test_a_forget_after_other_lessons_replays_them(serve, tmp_path):
    """A lesson forgotten after ten others were told (the model folded and saved between):
    logistic regression is the one that learned only the others (its window is in the file)."""
    server = serve(tmp_path / "models", "--allow-tell")
    expected = Expected()
    for i in range(8):
        for raw, label in ((spam(i), "spam"), (ham(i), "ham")):
            assert tell_raw(server.port, raw, label, user="dave").startswith(b"SPAMD/1.5 0 EX_OK")
            expected.tell(LEARN, label, raw)
    assert tell_raw(server.port, ham(50), "spam", user="dave").startswith(b"SPAMD/1.5 0 EX_OK")  # misfiled
    server.stop()
    server = serve(tmp_path / "models", "--allow-tell")  # a new process: the model read from its file
    for i in range(20, 25):
        for raw, label in ((spam(i), "spam"), (ham(i), "ham")):
            assert tell_raw(server.port, raw, label, user="dave").startswith(b"SPAMD/1.5 0 EX_OK")
            expected.tell(LEARN, label, raw)
    assert tell_raw(server.port, ham(50), None, user="dave").startswith(b"SPAMD/1.5 0 EX_OK")  # forget
    server.stop()
    probes = [ham(50), spam(60), ham(61)]
    for name in ("dave.snb", "@site.snb"):  # the site model replays as the user's does
        model = streamnb.load(tmp_path / "models" / name)
        assert max(abs(model.part_log_odds(p)[1] - expected.model.part_log_odds(p)[1]) for p in probes) <= 1e-9


@needs_spamc
def test_tell_is_refused_without_allow_tell(serve, tmp_path):
    server = serve(tmp_path / "models")
    result = spamc(server.port, "-L", "spam", stdin=spam(1))
    assert result.returncode == 74  # spamc: the server closed after its error line
    reply = tell_raw(server.port, spam(1), "spam")
    assert reply == (b"SPAMD/1.5 69 Service Unavailable: (TELL commands are not enabled, "
                     b"set the --allow-tell switch.)\r\n")
    assert list((tmp_path / "models").iterdir()) == []
    refusals = re.findall(r"WARNING: TELL user=alice outcome=refused .* code=69 reason=\"Service Unavailable: "
                          r"\(TELL commands are not enabled, set the --allow-tell switch\.\)\"", server.text())
    assert len(refusals) == 2  # spamc's and the raw one: each logged at the default level, with its reason


@needs_spamc
def test_eight_clients_tell_400_messages_all_counted(serve, tmp_path):
    server = serve(tmp_path / "models", "--allow-tell", "--snapshot-every", "64")
    failures: list = []

    def client(k: int) -> None:
        for i in range(k * 50, (k + 1) * 50):
            raw, label = (spam(i), "spam") if i % 2 else (ham(i), "ham")
            result = spamc(server.port, "-L", label, stdin=raw, user="carol")
            if result.returncode != 0 or result.stdout != b"Message successfully un/learned\n":
                failures.append((i, result))

    threads = [threading.Thread(target=client, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert counts_line(server.port, "carol").startswith("model: 200 spam and 200 ham learned")
    server.stop()
    model = streamnb.load(tmp_path / "models" / "carol.snb")
    assert model.class_counts == {"ham": 200.0, "spam": 200.0}
    assert all(docs(model, f"uniq{i:05d}") == {("spam" if i % 2 else "ham"): 1.0} for i in range(400))


@pytest.mark.parametrize("snapshot_every", [40, 100_000])
def test_kill_9_during_a_tell_burst_loses_no_acknowledged_lesson(serve, tmp_path, snapshot_every):
    """Killed at a random moment (folds every 40 lessons: perhaps in one), or with every lesson in the journal."""
    models = tmp_path / "models"
    server = serve(models, "--allow-tell", "--snapshot-every", str(snapshot_every))
    acknowledged: set[int] = set()
    sent: set[int] = set()
    lock = threading.Lock()
    stop = threading.Event()

    def client(k: int) -> None:
        for i in range(k, 100_000, 4):
            if stop.is_set():
                return
            raw, label = (spam(i), "spam") if i % 3 else (ham(i), "ham")
            with lock:
                sent.add(i)
            try:
                reply = tell_raw(server.port, raw, label)
            except OSError:
                return
            if reply == b"SPAMD/1.5 0 EX_OK\r\nDidSet: local\r\n\r\n":
                with lock:
                    acknowledged.add(i)
            else:
                return  # the server died under this request

    threads = [threading.Thread(target=client, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 60
    while len(acknowledged) < 150 and time.monotonic() < deadline:
        time.sleep(0.01)
    server.kill()  # SIGKILL in the middle of the burst: no fold, no goodbye
    stop.set()
    for thread in threads:
        thread.join()
    assert len(acknowledged) >= 150
    if snapshot_every > len(sent):  # nothing folded before the kill: the lessons live in the journal only
        assert streamnb.load(models / "alice.snb").class_counts == {}
        assert len(journal.read_journal(journal.journal_path(models / "alice.snb")).lessons) >= len(acknowledged)

    again = serve(models, "--allow-tell")  # replays the journals at start
    again.stop()
    for name in ("alice.snb", "@site.snb"):  # the user's model, and the site model's the same
        assert not (models / f"{name}.journal").exists()
        assert_acknowledged_once(streamnb.load(models / name), sent, acknowledged)


def assert_acknowledged_once(model, sent: set[int], acknowledged: set[int], under_way: int = 4) -> None:
    """Lessons ``uniq<i>`` told as spam unless i % 3 == 0: every acknowledged one is in the
    model, once, and at most ``under_way`` more (requests under way when it was cut off)."""
    learned = {i for i in sent if docs(model, f"uniq{i:05d}")}
    assert acknowledged <= learned  # every acknowledged lesson is in the model ...
    assert len(learned - acknowledged) <= under_way  # ... plus at most the requests under way
    for i in learned:  # ... and none twice
        assert docs(model, f"uniq{i:05d}") == {("spam" if i % 3 else "ham"): 1.0}
    labels = ["spam" if i % 3 else "ham" for i in learned]
    assert model.class_counts == {label: float(labels.count(label)) for label in set(labels)}


def test_a_crash_between_snapshot_and_journal_removal_applies_each_lesson_once(tmp_path, monkeypatch):
    models = tmp_path / "models"
    models.mkdir()
    settings = Settings(models=models, new_model=lambda: cli.build_model(SERVE_ARGS), rule=RuleOptions("chi2"),
                        allow_tell=True)

    class Crash(Exception):
        pass

    def crash(path):
        raise Crash("the power went out")

    async def scenario() -> None:
        entry = UserModel("erin", models / "erin.snb", settings)
        assert await entry.tell(Lesson(LEARN, "spam", spam(1))) is True
        assert await entry.tell(Lesson(LEARN, "ham", spam(2))) is True
        assert await entry.tell(Lesson(LEARN, "spam", spam(2))) is True  # moved
        assert await entry.tell(Lesson(FORGET, None, spam(1))) is True
        assert await entry.tell(Lesson(LEARN, "ham", ham(3))) is True
        monkeypatch.setattr(journal, "remove_journal", crash)
        async with entry.lock:
            with pytest.raises(Crash):
                await asyncio.to_thread(entry._fold_sync)

    asyncio.run(scenario())
    monkeypatch.undo()
    # the model file has every lesson; the journal, still there, names the file it was written for
    stale = journal.read_journal(journal.journal_path(models / "erin.snb"))
    assert len(stale.lessons) == 5 and stale.base != journal.file_digest(models / "erin.snb")
    assert recover(models) == 0  # recognised as folded: not replayed
    assert not os.path.exists(journal.journal_path(models / "erin.snb"))
    model = streamnb.load(models / "erin.snb")
    assert model.class_counts == {"spam": 1.0, "ham": 1.0}
    assert docs(model, "uniq00001") == {}
    assert docs(model, "uniq00002") == {"spam": 1.0}
    assert docs(model, "uniq00003") == {"ham": 1.0}


def test_a_lesson_the_site_model_refuses_is_answered_with_the_users_models_outcome(tmp_path, monkeypatch, caplog):
    """The user's model took the lesson, the site model refused it: the client hears the user's
    model's outcome (not 65), and the site model's refusal is logged (checked in process)."""
    models = tmp_path / "models"
    models.mkdir()
    settings = Settings(models=models, new_model=lambda: cli.build_model(SERVE_ARGS), rule=RuleOptions("chi2"),
                        allow_tell=True)
    apply = journal.apply_lesson

    async def scenario() -> None:
        site = UserModel(SITE_NAME, site_model_path(models), settings)
        alice = UserModel("alice", models / "alice.snb", settings, site)
        assert await alice.tell(Lesson(LEARN, "spam", spam(1))) is True

        def refusing(model, lesson: Lesson) -> bool:
            if model is site.model:
                raise ValueError("the site model cannot take this")
            return apply(model, lesson)

        monkeypatch.setattr(journal, "apply_lesson", refusing)
        assert await alice.tell(Lesson(LEARN, "ham", ham(2))) is True
        assert docs(alice.model, "uniq00002") == {"ham": 1.0} and docs(site.model, "uniq00002") == {}
        await alice.close()
        await site.close()

    asyncio.run(scenario())
    assert re.search(r"WARNING .*user alice: its model took a lesson the site model refused: ValueError: the site "
                     r"model cannot take this", caplog.text), caplog.text


def test_a_check_of_a_model_without_a_file_takes_neither_a_thread_nor_the_lock(tmp_path, monkeypatch):
    """The site model, before anyone teaches it, has no file: each check learns so from a stat
    (no thread, no lock file made), and a file that appears later is read at the next check."""
    models = tmp_path / "models"
    models.mkdir()
    settings = Settings(models=models, new_model=lambda: cli.build_model(SERVE_ARGS), rule=RuleOptions("chi2"))
    threaded = []
    real_to_thread = asyncio.to_thread

    async def counting_to_thread(function, /, *args, **kwargs):
        threaded.append(function.__name__)
        return await real_to_thread(function, *args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", counting_to_thread)

    async def scenario() -> None:
        site = UserModel(SITE_NAME, site_model_path(models), settings)
        for _ in range(3):
            assert await site.classify(spam(1), explain=False) is None
        assert threaded == [] and sorted(p.name for p in models.iterdir()) == []
        model = cli.build_model(SERVE_ARGS)
        for i in range(3):
            model.learn_one(spam(i), "spam")
            model.learn_one(ham(i), "ham")
        model.save(site_model_path(models))
        scored = await site.classify(spam(7), explain=False)
        assert scored is not None and scored.counts == {"spam": 3.0, "ham": 3.0} and threaded == ["_load_sync"]
        await site.close()

    asyncio.run(scenario())


def test_journals_are_folded_after_snapshot_seconds(serve, tmp_path):
    models = tmp_path / "models"
    server = serve(models, "--allow-tell", "--snapshot-seconds", "0.5")
    assert tell_raw(server.port, spam(1), "spam", user="ivy") == b"SPAMD/1.5 0 EX_OK\r\nDidSet: local\r\n\r\n"
    deadline = time.monotonic() + 10
    while (models / "ivy.snb.journal").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not (models / "ivy.snb.journal").exists()  # folded while the server runs
    assert streamnb.load(models / "ivy.snb").class_counts == {"spam": 1.0}


# -- the site model, observed mail, labels asked for (issue 34) --------------------------------------

def reply_fields(reply: bytes) -> dict[str, str]:
    """The headers of a check's reply, and its body as "body"."""
    head, _, body = reply.partition(b"\r\n\r\n")
    fields = dict(line.split(": ", 1) for line in head.decode().split("\r\n")[1:])
    return {**fields, "body": body.decode()}


def assert_answers(reply: bytes, verdict) -> None:
    """The reply states the verdict: its status and (to the 6 decimals sent) its log-odds."""
    fields = reply_fields(reply)
    assert fields["X-StreamNB-Status"] == verdict.label, reply
    assert fields["X-StreamNB-Log-Odds"] == f"{verdict.log_odds:.6f}", (reply, verdict)


def test_a_user_without_lessons_gets_the_site_models_verdict(serve, tmp_path):
    """A user who never taught anything is checked with the site model, its rule and cutoffs
    (not "unsure"); a user who taught some gets the blend of the two; nothing is written for the
    first. Without a site model (--no-site) the first is unsure again."""
    models = tmp_path / "models"
    server = serve(models, "--allow-tell", "--no-observe")
    site = Expected()
    alice, carol, nobody = Expected(site), Expected(site), Expected(site)
    assert_answers(check(server.port, spam(200), user="nobody"), nobody.filter.classify(spam(200)))  # none: empty
    alice.tell(LEARN, "spam", spam(500))
    assert tell_raw(server.port, spam(500), "spam") == b"SPAMD/1.5 0 EX_OK\r\nDidSet: local\r\n\r\n"
    assert_answers(check(server.port, spam(200), user="nobody"), site.scored(spam(200)).verdict)  # one class known
    assert_answers(check(server.port, spam(200)), alice.scored(spam(200)).verdict)  # the site's knows too little
    for i in range(40):
        for raw, label in ((spam(i), "spam"), (ham(i), "ham")):
            assert tell_raw(server.port, raw, label) == b"SPAMD/1.5 0 EX_OK\r\nDidSet: local\r\n\r\n"
            alice.tell(LEARN, label, raw)
    for i in range(100, 103):  # the site model learns more than alice's lessons
        for raw, label in ((spam(i), "spam"), (ham(i), "ham")):
            assert tell_raw(server.port, raw, label, user="carol").startswith(b"SPAMD/1.5 0 EX_OK")
            carol.tell(LEARN, label, raw)
    for raw, label in ((spam(200), "spam"), (ham(200), "ham")):
        verdict = site.scored(raw).verdict
        assert verdict.label == label and nobody.verdict(raw) == verdict  # the site model's own verdict
        reply = check(server.port, raw, user="nobody")
        assert_answers(reply, verdict)
        assert reply_fields(reply)["body"] == f"STREAMNB_{label.upper()}"
        blended = alice.answer(raw)
        assert 0 < blended.share < 1 and blended.verdict.log_odds != verdict.log_odds
        assert_answers(check(server.port, raw), blended.verdict)
    report = reply_fields(check(server.port, ham(201), user="nobody", method="REPORT"))["body"].split("\r\n")
    assert "  answered by the site model (user nobody has no model of both classes)" in report
    assert "  model: 0 spam and 0 ham learned" in report and "  site model: 44 spam and 43 ham learned" in report
    assert f"  log-odds {site.scored(ham(201)).verdict.log_odds:+.6f}" in report
    report = reply_fields(check(server.port, ham(201), method="REPORT"))["body"].split("\r\n")
    assert "  answered by the site model (weight 0.88) and user alice's model (weight 0.12)" in report  # 40 / 340
    assert not [name for name in os.listdir(models) if name.startswith("nobody")]  # nothing for nobody
    server.stop()
    alone = serve(models, "--no-site")
    reply = check(alone.port, spam(200), user="nobody")
    assert reply_fields(reply)["body"] == "STREAMNB_UNSURE,STREAMNB_UNTRAINED,STREAMNB_ASK"
    assert_answers(check(alone.port, spam(200)), alice.scored(spam(200)).verdict)  # alice's model alone
    alone.stop()


def test_a_blended_check_weighs_the_two_models_log_odds_by_hand(serve, tmp_path):
    """The blend, computed here from the formula of docs/design.md section 6 and each model's
    own log-odds (not with streamnb.service.site): z = (1 - l) z_site + l z_user with
    l = n / (n + K), n the messages of the class the user's model learned fewest of, K
    --site-blend."""
    k = 50.0
    server = serve(tmp_path / "models", "--allow-tell", "--no-observe", "--site-blend", "50")
    site = Expected()
    alice, carol = Expected(site), Expected(site)
    for teacher, user, numbers in ((alice, "alice", range(20)), (carol, "carol", range(100, 130))):
        for i in numbers:
            for raw, label in ((spam(i), "spam"), (ham(i), "ham")):
                assert tell_raw(server.port, raw, label, user=user) == b"SPAMD/1.5 0 EX_OK\r\nDidSet: local\r\n\r\n"
                teacher.tell(LEARN, label, raw)
    counts = alice.model.class_counts
    n = min(counts["spam"], counts["ham"])
    assert n == 20.0 and min(site.model.class_counts.values()) == 50.0
    share = n / (n + k)
    for raw in (spam(300), ham(300), spam(301), ham(301)):
        z_site = site.filter.classify(raw).log_odds
        z_user = alice.filter.classify(raw).log_odds
        blended = (1 - share) * z_site + share * z_user
        swapped = share * z_site + (1 - share) * z_user
        assert abs(blended - swapped) > 1e-3  # the messages tell the two apart
        served = float(reply_fields(check(server.port, raw))["X-StreamNB-Log-Odds"])
        assert served == pytest.approx(blended, abs=2e-6), (served, blended, swapped)


def test_a_tell_teaches_the_users_model_and_the_site_model(serve, tmp_path):
    """Each user's lessons go to that user's model and to the site model, which holds a message
    once, under the label told last; --no-site-learns and --no-site teach the user's model alone."""
    models = tmp_path / "models"
    server = serve(models, "--allow-tell")
    for i, user in ((1, "alice"), (2, "alice"), (3, "bob"), (4, "bob")):
        assert tell_raw(server.port, *lesson_of(i), user=user) == b"SPAMD/1.5 0 EX_OK\r\nDidSet: local\r\n\r\n"
    # bob files alice's spam 1 as ham: a new lesson for bob, a move for the site model
    assert tell_raw(server.port, spam(1), "ham", user="bob") == b"SPAMD/1.5 0 EX_OK\r\nDidSet: local\r\n\r\n"
    # alice tells it again: nothing changes for her, the site model moves it back: told
    assert tell_raw(server.port, spam(1), "spam") == b"SPAMD/1.5 0 EX_OK\r\nDidSet: local\r\n\r\n"
    assert tell_raw(server.port, spam(1), "spam") == b"SPAMD/1.5 0 EX_OK\r\n\r\n"  # nothing anywhere
    server.stop()
    held = {name: {i: docs(streamnb.load(models / f"{name}.snb"), f"uniq{i:05d}") for i in range(1, 5)}
            for name in ("alice", "bob", "@site")}
    assert held["alice"] == {1: {"spam": 1.0}, 2: {"ham": 1.0}, 3: {}, 4: {}}
    assert held["bob"] == {1: {"ham": 1.0}, 2: {}, 3: {"spam": 1.0}, 4: {"ham": 1.0}}
    assert held["@site"] == {1: {"spam": 1.0}, 2: {"ham": 1.0}, 3: {"spam": 1.0}, 4: {"ham": 1.0}}
    for option in ("--no-site-learns", "--no-site"):
        folder = tmp_path / option
        server = serve(folder, "--allow-tell", option)
        assert tell_raw(server.port, spam(1), "spam") == b"SPAMD/1.5 0 EX_OK\r\nDidSet: local\r\n\r\n"
        server.stop()
        assert sorted(os.listdir(folder)) == ["alice.snb", "alice.snb.lock"]


def lesson_of(i: int) -> tuple[bytes, str]:
    return (spam(i), "spam") if i % 2 else (ham(i), "ham")


def recorded(model, raw: bytes):
    """What a fusion keeps of a message (its steps), or None."""
    return model._records.get(message_fingerprint(model.nb, raw))


def test_a_check_observes_its_message_and_a_later_tell_replaces_it(serve, tmp_path):
    """A CHECK lets the site model observe the message (and the user's own model, when there is
    one): each learns it provisionally (src/feedback.rs), in memory, saved with the model at
    the stop; a TELL of it later replaces the provisional lesson. Each model ends as the
    library's SpamFilter.observe then learn leaves it."""
    models = tmp_path / "models"
    server = serve(models, "--allow-tell")
    site = Expected()
    alice, bob = Expected(site), Expected(site)
    for i in range(12):
        for raw, label in ((spam(i), "spam"), (ham(i), "ham")):
            assert tell_raw(server.port, raw, label).startswith(b"SPAMD/1.5 0 EX_OK")
            alice.tell(LEARN, label, raw)
    first, second = spam(300), ham(301)
    assert_answers(check(server.port, first, user="bob"), bob.verdict(first))  # bob: no model, the site's alone
    bob.observe(first)
    assert_answers(check(server.port, second), alice.verdict(second))
    alice.observe(second)
    server.stop()  # what was observed is saved with the models
    saved_site, saved_alice = streamnb.load(models / "@site.snb"), streamnb.load(models / "alice.snb")
    assert recorded(saved_site, first).provisional and recorded(saved_site, second).provisional
    assert recorded(saved_site, first).lr.g and recorded(saved_site, first).label == "spam"  # a step was taken
    assert recorded(saved_alice, second).provisional and recorded(saved_alice, first) is None
    probes = [first, second, spam(60), ham(61)]
    assert_same_scores(saved_site, site.model, probes)
    assert_same_scores(saved_alice, alice.model, probes)
    again = serve(models, "--allow-tell")
    assert tell_raw(again.port, first, "spam") == b"SPAMD/1.5 0 EX_OK\r\nDidSet: local\r\n\r\n"
    alice.tell(LEARN, "spam", first)
    again.stop()
    saved_site = streamnb.load(models / "@site.snb")
    assert not recorded(saved_site, first).provisional and recorded(saved_site, first).label == "spam"
    assert_same_scores(saved_site, site.model, probes)
    assert_same_scores(streamnb.load(models / "alice.snb"), alice.model, probes)


def test_a_check_is_answered_before_its_models_observe_and_no_request_runs_in_between(serve, tmp_path):
    """The models observe a checked message once its reply is written: spamc, which does not
    wait for the connection to close, has the verdict without waiting for them; the
    connection closes after, and a request that came meanwhile is answered after that."""
    models, switch = tmp_path / "models", tmp_path / "slow"
    server = serve(models, "--allow-tell", faults=(f"slowobserve=0.5@{switch}",))
    for i in range(6):
        assert tell_raw(server.port, *lesson_of(i)).startswith(b"SPAMD/1.5 0 EX_OK")
    switch.touch()  # from now on, each model takes 0.5 s to observe: two models, 1 s a check
    raw = spam(500)
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", server.port), timeout=20) as first:
        first.sendall(f"CHECK SPAMC/1.5\r\nUser: alice\r\nContent-length: {len(raw)}\r\n\r\n".encode() + raw)
        reply = b""
        while not reply.endswith(b"\r\n\r\n"):
            reply += first.recv(65536)
        answered = time.monotonic() - started
        assert reply.startswith(b"SPAMD/1.5 0 EX_OK\r\nSpam: ")
        replies: list[tuple[bytes, float]] = []
        second = threading.Thread(target=lambda: replies.append((check(server.port, ham(501), method="CHECK"),
                                                                  time.monotonic() - started)))
        second.start()
        assert read_all(first) == b""
        closed = time.monotonic() - started
    second.join(30)
    assert answered < 0.5 <= 2 * 0.5 <= closed, (answered, closed)
    assert replies[0][0].startswith(b"SPAMD/1.5 0 EX_OK") and replies[0][1] >= closed + 2 * 0.5  # after, and observed too
    switch.unlink()
    server.stop()
    for name in ("@site.snb", "alice.snb"):
        saved = streamnb.load(models / name)
        assert recorded(saved, raw).provisional and recorded(saved, ham(501)).provisional


def test_observing_is_optional_and_changes_nothing_on_disk_when_off(serve, tmp_path):
    models = tmp_path / "models"
    server = serve(models, "--allow-tell")
    for i in range(6):
        assert tell_raw(server.port, *lesson_of(i)).startswith(b"SPAMD/1.5 0 EX_OK")
    server.stop()
    before = {name: (models / name).read_bytes() for name in ("@site.snb", "alice.snb")}
    quiet = serve(models, "--no-observe")
    for user in ("alice", "bob"):
        check(quiet.port, spam(400), user=user, method="CHECK")
    quiet.stop()
    assert {name: (models / name).read_bytes() for name in before} == before  # nothing saved: nothing changed
    observing = serve(models)
    check(observing.port, spam(400), method="CHECK")
    observing.stop()
    for name in before:
        assert recorded(streamnb.load(models / name), spam(400)).provisional


def test_a_read_only_service_observes_nothing(tmp_path):
    """Not even in memory: a model served read-only is the files' (checked in process)."""
    models = tmp_path / "models"
    models.mkdir()
    expected = Expected()
    for i in range(6):
        expected.tell(LEARN, *reversed(lesson_of(i)))
    expected.model.save(models / "alice.snb")
    settings = Settings(models=models, new_model=lambda: cli.build_model(SERVE_ARGS), rule=cli.rule_options(SERVE_ARGS),
                        read_only=True)

    async def scenario() -> None:
        entry = UserModel("alice", models / "alice.snb", settings)
        scored = await entry.classify(spam(400), False)
        await entry.observe(spam(400), scored.verdict)
        assert recorded(entry.model, spam(400)) is None and entry.observed == 0

    asyncio.run(scenario())
    assert sorted(os.listdir(models)) == ["alice.snb"]


def test_unsure_verdicts_ask_for_their_label(serve, tmp_path):
    """STREAMNB_ASK (Verdict.ask: the verdict is unsure) in SYMBOLS, in PROCESS's X-Spam-Status
    and in the REPORT, so that a review folder can collect those messages; none on a sure verdict."""
    models = tmp_path / "models"
    server = serve(models, "--allow-tell", "--no-observe")
    expected = Expected(site=Expected())
    for i in range(2):  # two of each: the default rule is cautious, most verdicts are unsure
        for raw, label in ((spam(i), "spam"), (ham(i), "ham")):
            assert tell_raw(server.port, raw, label).startswith(b"SPAMD/1.5 0 EX_OK")
            expected.tell(LEARN, label, raw)
    raw = ham(500)
    verdict = expected.verdict(raw)
    assert verdict.label == "unsure" and verdict.ask
    assert reply_fields(check(server.port, raw))["body"] == "STREAMNB_UNSURE,STREAMNB_ASK"
    processed = reply_fields(check(server.port, raw, method="PROCESS"))["body"]
    assert f"X-Spam-Status: No, score={score_fields(verdict, expected.filter.rule)[1]} required=9.0 tests=STREAMNB_UNSURE,STREAMNB_ASK\n" \
        in processed
    report = reply_fields(check(server.port, raw, method="REPORT"))["body"]
    assert "\r\n  asks for this message's label (STREAMNB_ASK): its verdict is unsure\r\n" in report
    server.stop()


def test_a_site_model_file_that_is_a_symbolic_link_is_refused_at_start(tmp_path, serve):
    models = tmp_path / "models"
    models.mkdir()
    os.symlink(tmp_path / "elsewhere.snb", models / "@site.snb")
    done = subprocess.run([sys.executable, "-m", "streamnb", "serve", "--models", str(models), "--port", "0"],
                          capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert done.returncode == 3 and done.stderr.decode().count("\n") == 1
    assert "@site.snb" in done.stderr.decode() and "symbolic link" in done.stderr.decode()
    server = serve(models, "--no-site")  # without a site model, the link is nothing to the service
    assert check(server.port, spam(1)).endswith(b"STREAMNB_UNSURE,STREAMNB_UNTRAINED,STREAMNB_ASK")
    server.stop()
    assert not (tmp_path / "elsewhere.snb").exists()


def test_the_chi_square_rule_cannot_blend_with_a_site_model(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    done = subprocess.run([sys.executable, "-m", "streamnb", "serve", "--models", str(models), "--port", "0", "--rule",
                           "chi2"], capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert done.returncode == 3 and done.stderr.decode().count("\n") == 1
    assert "--rule chi2" in done.stderr.decode() and "--no-site" in done.stderr.decode()
    assert os.listdir(models) == []


# -- users, the cache, other writers ------------------------------------------------------------------

@needs_spamc
def test_least_recently_used_models_are_folded_out_of_the_cache(serve, tmp_path):
    models = tmp_path / "models"
    server = serve(models, "--allow-tell", "--max-models", "2")
    for user, i in (("u1", 1), ("u2", 2), ("u3", 3)):
        assert spamc(server.port, "-L", "spam", stdin=spam(i), user=user).returncode == 0
    # u1 left the cache when u3 came: its lesson is folded into its model file (while u3 is
    # served: the reply to u3 may come first), and no journal is left
    deadline = time.monotonic() + 10
    while (models / "u1.snb.journal").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not (models / "u1.snb.journal").exists()
    assert streamnb.load(models / "u1.snb").class_counts == {"spam": 1.0}
    assert (models / "u3.snb.journal").exists()
    assert counts_line(server.port, "u1").startswith("model: 1 spam and 0 ham")  # loaded again
    assert spamc(server.port, "-L", "ham", stdin=ham(4), user="u1").returncode == 0
    server.stop()
    assert streamnb.load(models / "u1.snb").class_counts == {"spam": 1.0, "ham": 1.0}
    assert all(streamnb.load(models / f"{user}.snb").class_counts == {"spam": 1.0} for user in ("u2", "u3"))


@needs_spamc
def test_streamnb_learn_beside_the_server_loses_nothing(serve, tmp_path):
    models = tmp_path / "models"
    server = serve(models, "--allow-tell")
    assert spamc(server.port, "-L", "spam", stdin=spam(1), user="fay").returncode == 0  # journaled, not folded
    assert (models / "fay.snb.journal").exists()
    (tmp_path / "more.eml").write_bytes(ham(2))
    done = subprocess.run([sys.executable, "-m", "streamnb", "learn", str(models / "fay.snb"), "--ham",
                           str(tmp_path / "more.eml")], capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert b"(and 1 journaled lesson)" in done.stdout
    assert streamnb.load(models / "fay.snb").class_counts == {"spam": 1.0, "ham": 1.0}
    # the server notices the new file and goes on from it
    assert counts_line(server.port, "fay").startswith("model: 1 spam and 1 ham")
    assert spamc(server.port, "-L", "spam", stdin=spam(3), user="fay").returncode == 0
    server.stop()
    model = streamnb.load(models / "fay.snb")
    assert model.class_counts == {"spam": 2.0, "ham": 1.0}


# -- abuse -------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def strict(tmp_path_factory):
    """A server with a 1-second request timeout and at most 3 connections."""
    root = tmp_path_factory.mktemp("strict")
    server = Served(root / "models", "--allow-tell", "--timeout", "1", "--max-connections", "3")
    yield server, root
    if server.alive():
        server.stop()


def error_line(reply: bytes) -> tuple[int, str]:
    match = re.fullmatch(rb"SPAMD/1\.5 (\d+) (.*)\r\n", reply)
    assert match, reply[:200]
    return int(match.group(1)), match.group(2).decode()


def unscored(reply: bytes, method: str = "SYMBOLS") -> None:
    """The reply of a check that could not be scored: EX_OK, unsure, the STREAMNB_UNSCORED symbol
    (SYMBOLS), never an error reply spamc would pass as clean."""
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"SPAMD/1.5 0 EX_OK\r\n"), reply[:200]
    assert b"Spam: False ; 5.5 / 9.0" in head and b"X-StreamNB-Status: unsure" in head, reply[:200]
    if method == "SYMBOLS":
        assert body == b"STREAMNB_UNSURE,STREAMNB_UNSCORED", reply[:200]


@pytest.mark.parametrize("length", [b"abc", b"-5", b"1e3", b"", b"99999999999999"])
def test_bad_content_length(strict, length):
    server, _ = strict
    for method in ("CHECK", "SYMBOLS", "PROCESS"):
        reply = request(server.port, f"{method} SPAMC/1.5\r\nContent-length: ".encode() + length + b"\r\n\r\nhi")
        if length == b"99999999999999" and method != "PROCESS":  # a request spamc could send: marked unsure
            unscored(reply, method)
            continue
        code, text = error_line(reply)
        if length == b"99999999999999":
            assert code == 65 and text.startswith("Message too big")
        else:
            assert code == 76 and "Content-length" in text
    if length == b"99999999999999":
        assert re.search(r"SYMBOLS user=default outcome=unscored verdict=unsure score=5\.5 .*reason=\"the message "
                         r"could not be read: 65 Message too big: \(99999999999999 bytes", server.text())
    else:
        assert re.search(r"WARNING: - user=- outcome=refused .*code=76 reason=\"Bad header line: \(Content-length ",
                         server.text())


def test_short_body_and_malformed_requests(strict):
    server, _ = strict
    code, text = error_line(request(server.port, b"PROCESS SPAMC/1.5\r\nContent-length: 500\r\n\r\nonly this"))
    assert code == 76 and text == "Bad header line: (Content-Length mismatch: Expected 500 bytes, got 9 bytes)"
    unscored(request(server.port, b"SYMBOLS SPAMC/1.5\r\nContent-length: 500\r\n\r\nonly this"))
    unscored(request(server.port, b"SYMBOLS SPAMC/1.5\r\nCompress: zlib\r\nContent-length: 5\r\n\r\nnope!"))
    assert "SYMBOLS user=default outcome=unscored verdict=unsure score=5.5 ms=" in server.text()
    assert 'reason="the message could not be read: 76 Bad header line: (zlib: ' in server.text()
    assert error_line(request(server.port, b"EXPLODE SPAMC/1.5\r\n\r\n"))[0] == 76
    assert error_line(request(server.port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"))[0] == 76
    assert error_line(request(server.port, b"CHECK SPAMC/1.5\r\nno colon here\r\n\r\n"))[0] == 76
    assert error_line(request(server.port, b"CHECK SPAMC/1.5\r\nCompress: gzip\r\n\r\n"))[0] == 76
    code, text = error_line(request(server.port, b"PROCESS SPAMC/1.5\r\nCompress: zlib\r\nContent-length: 5\r\n\r\nnope!"))
    assert code == 76 and text.startswith("Bad header line: (zlib:")
    code, _ = error_line(request(server.port, b"TELL SPAMC/1.5\r\nSet: local\r\nContent-length: 2\r\n\r\nhi"))
    assert code == 76  # learning needs a Message-class
    code, _ = error_line(request(server.port, b"TELL SPAMC/1.5\r\nSet: local\r\nRemove: local\r\n"
                                              b"Message-class: spam\r\nContent-length: 2\r\n\r\nhi"))
    assert code == 76


def test_endless_headers_and_endless_lines(strict):
    server, _ = strict
    code, text = error_line(request(server.port, b"CHECK SPAMC/1.5\r\n" + b"X-Junk: 1\r\n" * 300))
    assert (code, text) == (76, "Bad header line: (too many headers)")
    code, text = error_line(request(server.port, b"CHECK SPAMC/1.5\r\nX-Junk: " + b"a" * 20000 + b"\r\n\r\n"))
    assert (code, text) == (76, "Bad header line: (line too long)")


def test_ten_megabyte_bodies_are_refused(strict):
    """PROCESS must return the message: too big, it is refused (65); a check is answered unsure."""
    server, _ = strict
    big = b"Subject: big\r\n\r\n" + b"x" * (10 << 20)
    code, text = error_line(request(server.port, f"PROCESS SPAMC/1.5\r\nContent-length: {len(big)}\r\n\r\n".encode() + big))
    assert code == 65 and text == f"Message too big: ({len(big)} bytes; the limit is {500 * 1024})"
    code, _ = error_line(request(server.port, b"PROCESS SPAMC/1.5\r\n\r\n" + big))  # no Content-length: read to EOF
    assert code == 65
    bomb = zlib.compress(b"a" * (10 << 20), 9)  # 10 KB that inflate to 10 MB
    code, text = error_line(request(server.port, f"PROCESS SPAMC/1.5\r\nCompress: zlib\r\nContent-length: {len(bomb)}"
                                                 "\r\n\r\n".encode() + bomb))
    assert code == 65 and "decompressed" in text
    unscored(request(server.port, f"SYMBOLS SPAMC/1.5\r\nContent-length: {len(big)}\r\n\r\n".encode() + big))
    unscored(request(server.port, b"SYMBOLS SPAMC/1.5\r\n\r\n" + big))
    unscored(request(server.port, f"SYMBOLS SPAMC/1.5\r\nCompress: zlib\r\nContent-length: {len(bomb)}"
                                  "\r\n\r\n".encode() + bomb))
    log = server.text()
    assert re.search(r"PROCESS user=default outcome=refused ms=\S+ bytes=0 code=65 reason=\"Message too big: "
                     rf"\({len(big)} bytes; the limit is {500 * 1024}\)\"", log)
    assert "more than 512000 bytes decompressed" in log


def test_slow_clients_time_out(strict):
    server, _ = strict
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as connection:
        connection.sendall(b"CHECK SPAMC/1.5\r\n")
        for _ in range(25):  # slowloris: one byte every 0.2 s, never a whole request, until answered
            if select.select([connection], [], [], 0.2)[0]:
                break
            connection.sendall(b"X")
        reply = read_all(connection)
    assert error_line(reply) == (79, "Timeout: (1 second timeout reading input from client)")
    assert time.monotonic() - started < 5
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as connection:  # silent: the same
        assert error_line(read_all(connection))[0] == 79


def test_connections_beyond_the_limit_are_refused(tmp_path):
    # Its own server, with a request timeout long enough that the idle connections are
    # still open when the fourth one comes, however loaded the machine is.
    server = Served(tmp_path / "models", "--timeout", "30", "--max-connections", "3")
    try:
        idle = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(3)]
        try:
            deadline = time.monotonic() + 20
            while True:  # until the server has taken the three idle connections in
                reply = request(server.port, b"PING SPAMC/1.5\r\n\r\n")
                if reply != b"SPAMD/1.5 0 PONG\r\n" or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            code, text = error_line(reply)
            assert code == 75 and "too many connections" in text
        finally:
            for connection in idle:
                connection.close()
        deadline = time.monotonic() + 20
        while True:  # the closed ones free their places
            reply = request(server.port, b"PING SPAMC/1.5\r\n\r\n")
            if reply == b"SPAMD/1.5 0 PONG\r\n" or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert reply == b"SPAMD/1.5 0 PONG\r\n"
    finally:
        server.stop()


def test_symbolic_links_in_the_models_folder_are_refused(strict, tmp_path):
    server, root = strict
    outside = tmp_path / "elsewhere.snb"
    os.symlink(outside, root / "models" / "mallory.snb")
    reply = tell_raw(server.port, spam(1), "spam", user="mallory")
    assert error_line(reply)[0] == 76
    unscored(check(server.port, spam(1), user="mallory"))  # a check is answered, unsure, and reads nothing there
    assert not outside.exists()
    assert re.search(r"TELL user=mallory outcome=refused .*code=76 reason=\"Bad header line: \(the model file of "
                     r"user 'mallory' is a symbolic link", server.text())
    os.unlink(root / "models" / "mallory.snb")


def test_the_server_is_still_up_after_the_abuse(strict):
    server, root = strict
    assert server.alive()
    assert request(server.port, b"PING SPAMC/1.5\r\n\r\n") == b"SPAMD/1.5 0 PONG\r\n"
    reply = tell_raw(server.port, spam(7), "spam", user="grace")
    assert reply == b"SPAMD/1.5 0 EX_OK\r\nDidSet: local\r\n\r\n"
    server.stop()
    assert streamnb.load(root / "models" / "grace.snb").class_counts == {"spam": 1.0}


# -- the journal ---------------------------------------------------------------------------------

def journaled_model(path: Path):
    """A model without a ledger (learning twice would count twice) saved at ``path``, with a
    journal of three spam lessons for it."""
    from streamnb import EmailTokenizer, MultinomialNB

    model = MultinomialNB(tokenizer=EmailTokenizer())
    model.learn_one(ham(0), "ham")
    model.save(path)
    descriptor = journal.create_journal(path, journal.file_digest(path))
    journal.append_lessons(descriptor, [Lesson(LEARN, "spam", spam(i)) for i in range(1, 4)])
    os.close(descriptor)
    return model


def test_journal_replay_is_exactly_once_even_without_a_ledger(tmp_path, monkeypatch):
    """A journal names the model file it was written for, and a fold marks it folded into the
    file it writes: once folded, never replayed, even when the writer died before removing it."""
    path = tmp_path / "plain.snb"
    journaled_model(path)

    class Crash(Exception):
        pass

    def crash(_path):
        raise Crash("the power went out")

    # a writer folds: load, replay, save ... and dies before removing the journal
    with journal.write_lock(path):
        folding, pending = journal.fold_pending(path)
        assert pending == 3
        monkeypatch.setattr(journal, "remove_journal", crash)
        with pytest.raises(Crash):
            journal.save_folded(path, dumps(folding))
        monkeypatch.undo()
    assert journal.read_journal(journal.journal_path(path)).folded(journal.file_digest(path))
    # the next writer finds the journal folded: nothing is learned twice
    again, pending = journal.fold_pending(path)
    assert pending == 0
    assert again.class_counts == {"ham": 1.0, "spam": 3.0}
    assert docs(again, "uniq00002") == {"spam": 1.0}


def test_a_journal_whose_model_file_was_replaced_is_applied_to_the_new_file(tmp_path):
    """The model file replaced by something else (a backup put back, with no fold): the
    journal's acknowledged lessons are in no file, so they are applied to the file there now;
    a journal written before fold marks (v1) is taken as folded, as it was then."""
    from streamnb import EmailTokenizer, MultinomialNB

    path = tmp_path / "plain.snb"
    journaled_model(path)
    restored = MultinomialNB(tokenizer=EmailTokenizer()).learn_one(ham(9), "ham")
    restored.save(path)
    lessons = journal.pending_lessons(path, journal.file_digest(path))
    assert [lesson.message for lesson in lessons] == [spam(i) for i in range(1, 4)]
    with journal.write_lock(path):
        model, pending = journal.fold_pending(path)
        assert pending == 3
        journal.save_folded(path, dumps(model))
    assert streamnb.load(path).class_counts == {"ham": 1.0, "spam": 3.0}
    assert not os.path.exists(journal.journal_path(path))

    old = tmp_path / "old.snb"
    journaled_model(old)
    written = Path(journal.journal_path(old))
    header, rest = written.read_bytes().split(b"\n", 1)
    written.write_bytes(header.split(b" id ")[0].replace(b" v2 ", b" v1 ") + b"\n" + rest)
    restored.save(old)
    assert journal.pending_lessons(old, journal.file_digest(old)) == []


def test_forgetting_without_a_ledger_is_refused_before_anything_changes():
    """A forget lesson learns the message, then unlearns it with what the ledger recorded:
    without a ledger it could take out counts the message never added, so it is refused."""
    model = MultinomialNB(tokenizer=EmailTokenizer()).learn_one(spam(1), "spam").learn_one(ham(2), "ham")
    before = snapshot(model)
    with pytest.raises(InvalidParameterError, match="needs a model with a ledger"):
        journal.apply_lesson(model, Lesson(FORGET, None, spam(3)))
    assert snapshot(model) == before
    assert journal.replay(model, [Lesson(FORGET, None, spam(1))]) == 0  # logged, skipped
    assert snapshot(model) == before


def test_a_torn_or_damaged_journal_tail_is_dropped(tmp_path):
    path = tmp_path / "m.snb"
    cli.build_model(SERVE_ARGS).save(path)
    digest = journal.file_digest(path)
    descriptor = journal.create_journal(path, digest)
    lessons = [Lesson(LEARN, "spam", spam(1)), Lesson(FORGET, None, spam(1)), Lesson(LEARN, "ham", ham(2))]
    journal.append_lessons(descriptor, lessons)
    os.close(descriptor)
    whole = Path(journal.journal_path(path)).read_bytes()
    assert journal.pending_lessons(path, digest) == lessons
    Path(journal.journal_path(path)).write_bytes(whole[:-7])  # a crash in the middle of the last append
    assert journal.pending_lessons(path, digest) == lessons[:2]
    damaged = bytearray(whole)
    damaged[-len(ham(2)) // 2] ^= 0x20  # one flipped bit in the last record: its CRC fails
    Path(journal.journal_path(path)).write_bytes(bytes(damaged))
    assert journal.pending_lessons(path, digest) == lessons[:2]
    # written for a file since replaced, not folded into this one: its lessons are this file's to take
    assert journal.pending_lessons(path, "0" * 64) == lessons[:2]
    Path(journal.journal_path(path)).write_bytes(b"not a journal at all\n")
    with pytest.raises(journal.JournalError, match="not a streamnb journal"):
        journal.pending_lessons(path, digest)
