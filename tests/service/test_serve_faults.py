"""streamnb serve under faults (issue 28): nothing acknowledged is lost, nothing half-written is
read, and a check it cannot make is answered "unsure", never a clean "not spam".

Faults are real where the machine allows it (a read-only or full tmpfs mounted here, when the
tests may mount), and injected otherwise and for what cannot be made on demand (permission
denied for root, EIO from fsync, SIGKILL at each step of a save): see tests/faults.py. The
serve are subprocesses; every lesson is a message with a word of its own (uniqNNNNN), so
the model files say exactly which lessons they hold, and how many times.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import streamnb
from streamnb.service import journal
from tests.faults import KILL_PHASES
from tests.served import ROOT, Served
from tests.service.test_serve import SPAMC, Expected, check, docs, error_line, ham, spam, tell_raw

LEARNED = b"SPAMD/1.5 0 EX_OK\r\nDidSet: local\r\n\r\n"


def streamnb_command(*args: str, faults: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    program = ["-m", "tests.faults", *faults, "--"] if faults else ["-m", "streamnb"]
    return subprocess.run([sys.executable, *program, *args], capture_output=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def learned(model) -> dict[int, dict]:
    """Lesson number -> {label: documents} for every lesson message (numbers below 100) the model holds."""
    return {i: docs(model, f"uniq{i:05d}") for i in range(100) if docs(model, f"uniq{i:05d}")}


def lesson(i: int) -> tuple[bytes, str]:
    return (spam(i), "spam") if i % 2 else (ham(i), "ham")


def once_each(numbers) -> dict[int, dict]:
    return {i: {lesson(i)[1]: 1.0} for i in numbers}


def trained_model(path: Path, numbers) -> None:
    """A model file as `streamnb serve` makes them, taught the given lessons."""
    expected = Expected()
    for i in numbers:
        raw, label = lesson(i)
        expected.tell(journal.LEARN, label, raw)
    expected.model.save(path)


# -- mounts: a real read-only or full file system, where the tests may mount one ------------------------

class Mount:
    """A small tmpfs mounted on a folder (needs root and a kernel that lets this process mount)."""

    def __init__(self, where: Path, size: str) -> None:
        where.mkdir()
        result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where)],
                                capture_output=True)
        if result.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here ({result.stderr.decode().strip() or result.returncode}); "
                        "the injected-fault tests cover the same paths")
        self.where = where

    def remount(self, option: str) -> None:
        subprocess.run(["mount", "-o", f"remount,{option}", str(self.where)], check=True)

    def unmount(self) -> None:
        subprocess.run(["umount", "-l", str(self.where)], check=False)


@pytest.fixture
def tmpfs(tmp_path):
    mounts: list[Mount] = []

    def make(size: str = "2m") -> Mount:
        if shutil.which("mount") is None or os.geteuid() != 0:
            pytest.skip("mounting a tmpfs needs root and mount(8); the injected-fault tests cover the same paths")
        mounts.append(Mount(tmp_path / f"mount{len(mounts)}", size))
        return mounts[-1]

    yield make
    for mount in mounts:
        mount.unmount()


# -- a folder that cannot be written: refused at start, or served read-only -------------------------------

def assert_refused_at_start(result: subprocess.CompletedProcess, folder: Path, reason: str) -> None:
    assert result.returncode == 3, result
    lines = [line for line in result.stderr.decode().strip().splitlines() if not line.startswith("fault: ")]
    assert len(lines) == 1 and str(folder) in lines[0] and reason in lines[0] and "--read-only" in lines[0], lines


def assert_served_read_only(server: Served, models: Path) -> None:
    """Checks score with the users' models and the site model (their journals included), and
    observe nothing; TELL is refused with 69; nothing is written."""
    before = {name: (models / name).read_bytes() for name in os.listdir(models)}
    expected = Expected(site=Expected())
    for i in range(6):
        expected.tell(journal.LEARN, *reversed(lesson(i)))
    for raw in (spam(50), ham(50), spam(50)):
        verdict = expected.verdict(raw)
        reply = check(server.port, raw, method="CHECK")
        assert f"X-StreamNB-Status: {verdict.label}\r\nX-StreamNB-Log-Odds: {verdict.log_odds:.6f}\r\n".encode() \
            in reply, reply
    assert "answered by the site model (weight" in check(server.port, ham(51), method="REPORT").decode()
    code, text = error_line(tell_raw(server.port, spam(60), "spam"))
    assert code == 69 and "read-only" in text
    server.stop()
    assert {name: (models / name).read_bytes() for name in os.listdir(models)} == before  # nothing written


def models_with_a_journal(models: Path) -> None:
    """alice.snb and the site model @site.snb (4 lessons each) and a journal of 2 more each, as a crash leaves them."""
    models.mkdir(exist_ok=True)
    for name in ("alice.snb", "@site.snb"):
        path = models / name
        trained_model(path, range(4))
        descriptor = journal.create_journal(path, journal.file_digest(path))
        journal.append_lessons(descriptor, [journal.Lesson(journal.LEARN, label, raw)
                                            for raw, label in (lesson(4), lesson(5))])
        os.close(descriptor)


def test_a_read_only_mount_is_refused_at_start_or_served_read_only(tmpfs, serve):
    mount = tmpfs()
    models_with_a_journal(mount.where)
    mount.remount("ro")
    assert_refused_at_start(streamnb_command("serve", "--models", str(mount.where), "--port", "0", "--allow-tell"),
                            mount.where, "Read-only file system")
    server = serve(mount.where, "--read-only")
    assert_served_read_only(server, mount.where)


@pytest.mark.parametrize("fault, reason", [("readonly", "Read-only file system"), ("denied", "Permission denied")])
def test_an_unwritable_folder_is_refused_at_start_or_served_read_only(fault, reason, tmp_path, serve):
    models = tmp_path / "models"
    models_with_a_journal(models)
    faults = (f"{fault}={models}",)
    assert_refused_at_start(streamnb_command("serve", "--models", str(models), "--port", "0", faults=faults),
                            models, reason)
    server = serve(models, "--read-only", faults=faults)
    assert_served_read_only(server, models)
    assert "fault:" not in server.text()  # read-only: not one write was even tried


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv(1) to run the service as another user")
def test_a_folder_the_service_user_may_not_write_is_refused_at_start():
    """A real EACCES: the service runs as nobody, the folder is root's (chmod stops nobody, not root)."""
    models = Path(tempfile.mkdtemp(prefix="streamnb-denied-", dir="/tmp"))  # not under pytest's 0700 folder
    try:
        os.chmod(models, 0o755)
        result = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-m",
                                 "streamnb", "serve", "--models", str(models), "--port", "0"], capture_output=True,
                                timeout=120, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT),
                                                            "PYTHONDONTWRITEBYTECODE": "1"})
        assert_refused_at_start(result, models, "Permission denied")
        assert os.listdir(models) == []
    finally:
        shutil.rmtree(models)


def test_a_folder_that_stops_being_writable_while_serving(tmp_path, serve):
    """Checks still score with each user's model and the site model, a TELL is refused (74,
    not acknowledged), a stop says its lessons stay in the journals; nothing acknowledged is
    lost, in the user's model or the site model's."""
    models, switch = tmp_path / "models", tmp_path / "broken"
    models.mkdir()
    trained_model(models / "bob.snb", range(10, 16))  # a user the server has not loaded yet
    server = serve(models, "--allow-tell", "--snapshot-every", "1000", faults=(f"readonly={models}@{switch}",))
    site = Expected()
    for i in range(4):
        assert tell_raw(server.port, *lesson(i)) == LEARNED
        site.tell(journal.LEARN, *reversed(lesson(i)))
    switch.touch()  # the file system goes read-only
    code, text = error_line(tell_raw(server.port, *lesson(4)))
    assert code == 74 and "Read-only file system" in text
    bob = Expected()
    for i in range(10, 16):
        bob.tell(journal.LEARN, *reversed(lesson(i)))
    bob.site = site  # bob's file was made without the service: its lessons are not the site model's
    reply = check(server.port, spam(70), user="bob", method="CHECK")  # no lock can be made: read without it
    verdict = bob.verdict(spam(70))
    assert f"X-StreamNB-Status: {verdict.label}\r\nX-StreamNB-Log-Odds: {verdict.log_odds:.6f}\r\n".encode() \
        in reply, reply
    alice = check(server.port, spam(70), method="CHECK")
    assert alice.startswith(b"SPAMD/1.5 0 EX_OK\r\n") and b"UNSCORED" not in alice
    server.stop(expect=3)  # the fold fails: the lessons stay in the journals, and the exit code says so
    assert "8 acknowledged lessons could not be folded" in server.text()  # 4 in alice's journal, 4 in the site's
    switch.unlink()
    again = serve(models, "--allow-tell")
    again.stop()
    assert learned(streamnb.load(models / "alice.snb")) == once_each(range(4))
    assert learned(streamnb.load(models / "@site.snb")) == once_each(range(4))


# -- a full disk ----------------------------------------------------------------------------------------

def fill(folder: Path) -> Path:
    """Fill the file system of folder to the last byte."""
    filler = folder / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(descriptor, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(descriptor)
    return filler


def assert_full_disk_loses_nothing(server: Served, models: Path, make_full, make_room, serve) -> None:
    """Lessons are acknowledged until the disk is full (a real one still takes a few records in
    the journal's last page), then refused with 74; checks go on; after room is made, lessons
    are acknowledged again; after a kill -9, the model holds exactly the acknowledged ones."""
    acknowledged = []
    for i in range(5):
        assert tell_raw(server.port, *lesson(i)) == LEARNED
        acknowledged.append(i)
    make_full()
    refused = []
    for i in range(5, 60):
        reply = tell_raw(server.port, *lesson(i))
        if reply == LEARNED:
            assert not refused, "a lesson acknowledged after one refused on a disk still full"
            acknowledged.append(i)
        else:
            assert error_line(reply)[0] == 74, reply
            refused.append(i)
            if len(refused) == 3:
                break
    assert len(refused) == 3
    reply = check(server.port, spam(80), method="CHECK")
    assert reply.startswith(b"SPAMD/1.5 0 EX_OK\r\n") and b"UNSCORED" not in reply
    make_room()
    for i in range(60, 63):
        assert tell_raw(server.port, *lesson(i)) == LEARNED
        acknowledged.append(i)
    server.kill()  # no fold at the end: what is on disk must hold every acknowledged lesson
    again = serve(models, "--allow-tell")
    again.stop()
    assert learned(streamnb.load(models / "alice.snb")) == once_each(acknowledged)
    assert learned(streamnb.load(models / "@site.snb")) == once_each(acknowledged)


def test_a_real_full_disk_loses_no_acknowledged_lesson(tmpfs, serve):
    mount = tmpfs("1m")
    server = serve(mount.where, "--allow-tell", "--snapshot-every", "4")
    filler: list[Path] = []
    assert_full_disk_loses_nothing(server, mount.where, lambda: filler.append(fill(mount.where)),
                                   lambda: filler[0].unlink(), serve)


def test_an_injected_full_disk_loses_no_acknowledged_lesson(tmp_path, serve):
    models, switch = tmp_path / "models", tmp_path / "full"
    server = serve(models, "--allow-tell", "--snapshot-every", "4", faults=(f"full={models}@{switch}",))
    assert_full_disk_loses_nothing(server, models, switch.touch, switch.unlink, serve)
    assert "ENOSPC" in server.text()


def assert_command_failed_cleanly(result: subprocess.CompletedProcess, model: Path, before: bytes, reason: str) -> None:
    """Exit 3, one line naming the reason, the model file as it was and no temporary file left."""
    assert result.returncode == 3, result
    lines = [line for line in result.stderr.decode().splitlines() if not line.startswith("fault: ")]
    assert len(lines) == 1 and reason in lines[0], lines
    assert model.read_bytes() == before
    assert not [name for name in os.listdir(model.parent) if name.endswith(".tmp")]


def test_the_command_on_a_real_full_disk_leaves_the_model_as_it_was(tmpfs, tmp_path):
    mount = tmpfs("1m")
    model = mount.where / "m.snb"
    trained_model(model, range(4))
    (tmp_path / "more.eml").write_bytes(spam(20))
    journal.check_lock_file(model)  # the lock file is made while there is room
    filler = fill(mount.where)
    before = model.read_bytes()
    assert_command_failed_cleanly(streamnb_command("learn", str(model), "--spam", str(tmp_path / "more.eml")),
                                  model, before, "No space left on device")
    filler.unlink()
    assert streamnb_command("learn", str(model), "--spam", str(tmp_path / "more.eml")).returncode == 0
    assert learned(streamnb.load(model)) == {**once_each(range(4)), 20: {"spam": 1.0}}


@pytest.mark.parametrize("fault, reason", [("full", "No space left on device"), ("fsync", "Input/output error")])
def test_the_command_under_a_failing_disk_leaves_the_model_as_it_was(fault, reason, tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    model = models / "m.snb"
    trained_model(model, range(4))
    (tmp_path / "more.eml").write_bytes(spam(20))
    (tmp_path / "more-ham.eml").write_bytes(ham(21))  # both classes: train has no warning to give
    before = model.read_bytes()
    spec = f"full={models}" if fault == "full" else f"fsync={models}/*"
    for command in (("learn", str(model), "--spam", str(tmp_path / "more.eml")),
                    ("train", str(model), "--force", "--spam", str(tmp_path / "more.eml"), "--ham",
                     str(tmp_path / "more-ham.eml"))):
        assert_command_failed_cleanly(streamnb_command(*command, faults=(spec,)), model, before, reason)


# -- fsync failures ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("failing", ["alice.snb.journal", "?site.snb.journal"])  # ?: the @ of @site.snb
def test_a_failed_fsync_of_the_journal_is_not_acknowledged_and_poisons_nothing(failing, tmp_path, serve):
    """The record that failed may be on disk, whole or torn: the lessons after it must not be
    appended behind it (a replay stops at a torn record), so the model is saved first. When the
    site model's journal fails, the lesson is in the user's journal already: not acknowledged,
    it is not applied there either, and that model is saved before its next append too."""
    models, switch = tmp_path / "models", tmp_path / "eio"
    server = serve(models, "--allow-tell", "--snapshot-every", "1000", faults=(f"fsync={models}/{failing}@{switch}",))
    for i in range(3):
        assert tell_raw(server.port, *lesson(i)) == LEARNED
    switch.touch()
    code, text = error_line(tell_raw(server.port, *lesson(3)))
    assert code == 74 and "Input/output error" in text
    switch.unlink()
    for i in range(4, 7):
        assert tell_raw(server.port, *lesson(i)) == LEARNED
    assert "fsync" in server.text() and "EIO" in server.text()
    server.kill()
    again = serve(models, "--allow-tell")
    again.stop()
    assert learned(streamnb.load(models / "alice.snb")) == once_each([0, 1, 2, 4, 5, 6])
    assert learned(streamnb.load(models / "@site.snb")) == once_each([0, 1, 2, 4, 5, 6])


def test_a_lesson_the_site_models_journal_failed_is_never_applied_to_a_restored_file(tmp_path, serve):
    """A TELL answered 74 because the site model's journal failed is in the user's journal
    already: the running service must never apply it, not even when the user's model file is
    replaced under it (a restore), which gets the acknowledged lessons of the journal."""
    models, switch = tmp_path / "models", tmp_path / "eio"
    server = serve(models, "--allow-tell", "--snapshot-every", "1000", faults=(f"fsync={models}/?site.snb.journal@{switch}",))
    for i in range(2):
        assert tell_raw(server.port, *lesson(i)) == LEARNED
    switch.touch()
    assert error_line(tell_raw(server.port, *lesson(2)))[0] == 74
    switch.unlink()
    trained_model(models / "restored.tmp", range(50, 52))
    os.replace(models / "restored.tmp", models / "alice.snb")  # a restore, `cp` say
    assert tell_raw(server.port, *lesson(3)) == LEARNED
    server.stop()
    assert 2 not in learned(streamnb.load(models / "alice.snb"))
    assert 2 not in learned(streamnb.load(models / "@site.snb"))


def test_a_save_that_fails_after_its_rename_is_never_applied_twice(tmp_path, serve):
    """fsync of the folder fails after os.replace put the new model file in place: the server
    does not know the file is its own, and must not apply the journal to it again."""
    models, switch = tmp_path / "models", tmp_path / "eio"
    server = serve(models, "--allow-tell", "--snapshot-every", "3", faults=(f"fsync={models}@{switch}",))
    assert tell_raw(server.port, *lesson(0)) == LEARNED  # the model file exists
    switch.touch()
    for i in range(1, 3):  # the third lesson triggers a fold, whose folder fsync fails
        assert tell_raw(server.port, *lesson(i)) == LEARNED
    time.sleep(0.5)
    switch.unlink()
    assert "fsync" in server.text() and "could not fold" in server.text()
    for i in range(3, 5):
        assert tell_raw(server.port, *lesson(i)) == LEARNED
    server.stop()
    assert learned(streamnb.load(models / "alice.snb")) == once_each(range(5))
    assert learned(streamnb.load(models / "@site.snb")) == once_each(range(5))


def wait_for(condition, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


def test_a_model_whose_save_raises_keeps_its_journal_and_stops_nothing_else(tmp_path, serve):
    """A save that raises something no file error is (a bug in a model's save: ValueError)
    fails that model's fold alone: logged with the user and why, its lessons kept in its
    journal; the snapshot task goes on folding the others, the user's checks are scored, and
    a restart after kill -9 recovers every other journal and starts."""
    models, switch = tmp_path / "models", tmp_path / "bug"
    faults = (f"savebug={models}/bob.snb@{switch}",)
    server = serve(models, "--allow-tell", "--snapshot-seconds", "0.5", faults=faults)
    assert tell_raw(server.port, *lesson(0), user="bob") == LEARNED  # bob.snb made, the lesson journaled
    switch.touch()
    assert tell_raw(server.port, *lesson(1), user="alice") == LEARNED
    assert wait_for(lambda: "user bob: could not fold 1 lessons" in server.text())
    assert "ValueError: 'ham' is not in list" in server.text()
    assert wait_for(lambda: not (models / "alice.snb.journal").exists())
    for i in (2, 3):  # told after bob's fold failed: folded all the same (the snapshot task lives)
        assert tell_raw(server.port, *lesson(i), user="alice") == LEARNED
        assert (models / "alice.snb.journal").exists()
        assert wait_for(lambda: not (models / "alice.snb.journal").exists())
    assert learned(streamnb.load(models / "alice.snb")) == once_each([1, 2, 3])
    assert (models / "bob.snb.journal").exists()
    assert check(server.port, ham(90), user="bob", method="CHECK").startswith(b"SPAMD/1.5 0 EX_OK\r\nSpam: ")
    # bob's model must be saved before its journal takes another lesson: that save raising, the
    # lesson is refused as one that cannot be made durable (74, so that spamc -L says so and
    # the sender tries again), not as a message the model refused (65), and is not applied
    refused = tell_raw(server.port, *lesson(5), user="bob")
    assert refused.startswith(b"SPAMD/1.5 74 "), refused
    assert wait_for(lambda: re.search(r"TELL user=bob outcome=refused .*the model could not be saved before the "
                                      r"lesson was journaled: ValueError", server.text()))
    server.kill()  # bob's lessons are in its journal alone
    again = serve(models, "--allow-tell", faults=faults)  # recover() fails bob's journal alone, and serves
    assert re.search(r"bob\.snb: could not recover its journal now .*ValueError: 'ham' is not in list", again.text())
    again.stop()
    switch.unlink()  # the bug fixed: bob's lessons, kept in its journal, are folded
    serve(models).stop()
    assert learned(streamnb.load(models / "bob.snb")) == once_each([0])
    assert learned(streamnb.load(models / "@site.snb")) == once_each(range(4))
    assert not (models / "bob.snb.journal").exists()


def test_a_user_whose_save_raises_is_served_after_leaving_the_cache(tmp_path, serve):
    """The user's model left the cache with its fold failed (its save raises ValueError):
    loaded again, its checks are scored all the same (the file plus the journal's lessons, in
    memory), its fold at the stop fails again, and the lessons stay in the journal."""
    models, switch = tmp_path / "models", tmp_path / "bug"
    faults = (f"savebug={models}/bob.snb@{switch}",)
    server = serve(models, "--allow-tell", "--max-models", "1", "--snapshot-every", "1000", faults=faults)
    for i in range(4):
        assert tell_raw(server.port, *lesson(i), user="bob") == LEARNED
    switch.touch()
    assert tell_raw(server.port, *lesson(10), user="alice") == LEARNED  # bob leaves the cache
    assert wait_for(lambda: "user bob: could not fold 4 lessons" in server.text())
    reply = check(server.port, ham(90), user="bob")
    assert reply.startswith(b"SPAMD/1.5 0 EX_OK") and b"STREAMNB_UNSCORED" not in reply, reply
    server.stop(expect=3)  # bob's lessons stay in its journal
    assert len(re.findall(r"user bob: could not fold 4 lessons .*ValueError: 'ham' is not in list", server.text())) == 2
    switch.unlink()
    serve(models).stop()
    assert learned(streamnb.load(models / "bob.snb")) == once_each(range(4))


# -- kill -9 at every step of a save ----------------------------------------------------------------------

@pytest.mark.parametrize("whose, options", [("@site.snb", ()), ("alice.snb", ("--no-site-learns",))])
@pytest.mark.parametrize("phase", KILL_PHASES)
def test_kill_9_at_every_step_of_a_save_loses_nothing_and_leaves_a_whole_file(phase, whose, options, tmp_path, serve):
    """The first save is the site model's (its journal takes each lesson right after the
    user's), or, with --no-site-learns, the user's."""
    models = tmp_path / "models"
    server = serve(models, "--allow-tell", "--snapshot-every", "5", *options, faults=(f"kill={phase}",))
    acknowledged = []
    for i in range(5):  # the fifth lesson starts the save that is killed
        try:
            reply = tell_raw(server.port, *lesson(i))
        except OSError:
            reply = b""
        if reply != LEARNED:
            break
        acknowledged.append(i)
    server.process.wait(timeout=30)
    assert server.process.returncode == -signal.SIGKILL
    assert f"fault: kill at {phase}" in server.text()
    assert acknowledged[:4] == [0, 1, 2, 3]
    on_disk = learned(streamnb.load(models / whose))  # whole: the old file or the new one
    assert on_disk in ({}, once_each(range(5)))
    again = serve(models, "--allow-tell", *options)
    again.stop()
    for name in ("alice.snb", "@site.snb") if not options else ("alice.snb",):
        after = learned(streamnb.load(models / name))
        assert set(acknowledged) <= set(after) <= set(range(5))  # the fifth, under way at the kill, may be in
        assert after == once_each(after)  # each once
        assert not (models / f"{name}.journal").exists()
    if options:  # a site model that does not learn is never made by the service
        assert not (models / "@site.snb").exists()


# -- the model file replaced, deleted or damaged under the running service ----------------------------------

@pytest.fixture
def pending(tmp_path, serve):
    """A server with lessons 0-3 for alice acknowledged and only in the journals (alice's and the site model's)."""
    models = tmp_path / "models"
    server = serve(models, "--allow-tell", "--snapshot-every", "1000")
    for i in range(4):
        assert tell_raw(server.port, *lesson(i)) == LEARNED
    assert (models / "alice.snb.journal").exists() and (models / "@site.snb.journal").exists()
    return server, models


MODELS = ("alice.snb", "@site.snb")  # a user's model file, and the site model's: the same guarantees


def the_other(name: str) -> str:
    return next(other for other in MODELS if other != name)


@pytest.mark.parametrize("name", MODELS)
def test_a_model_file_deleted_under_the_service_is_written_back(name, pending):
    server, models = pending
    os.unlink(models / name)
    assert tell_raw(server.port, *lesson(4)) == LEARNED
    server.stop()
    assert "was deleted under the service" in server.text()
    for each in MODELS:
        assert learned(streamnb.load(models / each)) == once_each(range(5))


@pytest.mark.parametrize("name, counts_line", [("alice.snb", b"\r\n  model: 3 spam and 4 ham learned\r\n"),
                                               ("@site.snb", b"\r\n  site model: 3 spam and 4 ham learned\r\n")])
def test_a_model_file_replaced_under_the_service_gets_the_acknowledged_lessons(name, counts_line, pending, tmp_path):
    server, models = pending
    trained_model(tmp_path / "restored.snb", range(20, 23))
    shutil.copyfile(tmp_path / "restored.snb", models / name)  # a restore with cp, not the lock
    reply = check(server.port, spam(90), method="REPORT")
    assert counts_line in reply  # 20-22 (1 spam, 2 ham) and the journal's 0-3 (2, 2)
    assert tell_raw(server.port, *lesson(4)) == LEARNED
    server.stop()
    assert "was replaced under the service" in server.text()
    assert learned(streamnb.load(models / name)) == once_each([*range(5), *range(20, 23)])
    assert learned(streamnb.load(models / the_other(name))) == once_each(range(5))


@pytest.mark.parametrize("name", MODELS)
def test_a_damaged_model_file_under_the_service_is_set_aside_never_read(name, pending):
    server, models = pending
    damage = b"PK\x03\x04 not a model any more"
    (models / name).write_bytes(damage)
    expected = Expected(site=Expected())
    for i in range(4):
        expected.tell(journal.LEARN, *reversed(lesson(i)))
    reply = check(server.port, spam(91), method="CHECK")  # scored with the models in memory
    assert f"X-StreamNB-Status: {expected.verdict(spam(91)).label}\r\n".encode() in reply, reply
    server.stop()
    assert "cannot be read" in server.text() and "set aside" in server.text()
    aside = [other for other in os.listdir(models) if other.startswith(f"{name}.damaged-")]
    assert len(aside) == 1 and (models / aside[0]).read_bytes() == damage  # kept for a person, as it was
    for each in MODELS:
        assert learned(streamnb.load(models / each)) == once_each(range(4))


@pytest.mark.parametrize("name", MODELS)
def test_a_journal_deleted_under_the_service_is_made_good(name, pending):
    server, models = pending
    os.unlink(models / f"{name}.journal")
    assert tell_raw(server.port, *lesson(4)) == LEARNED
    server.stop()
    for each in MODELS:
        assert learned(streamnb.load(models / each)) == once_each(range(5))


# -- checks that cannot be scored: "unsure", with a symbol and a log line, never a clean "not spam" -----------

@pytest.mark.parametrize("damaged", ["carol.snb", "@site.snb"])
def test_a_model_that_cannot_be_read_gives_unsure_with_a_symbol(damaged, tmp_path, serve):
    """The user's model, or the site model (even for a user without a model of their own)."""
    models = tmp_path / "models"
    models.mkdir()
    (models / damaged).write_bytes(b"PK\x03\x04 damaged")
    if damaged == "@site.snb":
        trained_model(models / "carol.snb", range(4))
    server = serve(models, "--allow-tell")
    for user in ("carol", "dan") if damaged == "@site.snb" else ("carol",):
        reply = check(server.port, spam(1), user=user)
        assert reply.endswith(b"\r\n\r\nSTREAMNB_UNSURE,STREAMNB_UNSCORED"), reply  # unsure, and not worth a label
        assert b"X-StreamNB-Status: unsure\r\n" in reply and b"Spam: False ; 5.5 / 9.0\r\n" in reply
        assert b"X-StreamNB-Log-Odds" not in reply
    report = check(server.port, spam(1), user="carol", method="REPORT")
    assert b"not scored: a model that answers for user carol could not be used" in report
    processed = check(server.port, spam(1), user="carol", method="PROCESS")
    assert b"X-StreamNB-Status: unsure\r\n" in processed or b"X-StreamNB-Status: unsure\n" in processed
    assert b"tests=STREAMNB_UNSURE,STREAMNB_UNSCORED" in processed
    assert re.search(r"WARNING: SYMBOLS user=carol outcome=unscored verdict=unsure score=5\.5 .*reason=\"the model "
                     r"could not score the message: .*" + re.escape(damaged), server.text())
    code, _ = error_line(tell_raw(server.port, spam(2), "spam", user="carol"))
    assert code == 74  # a lesson for it cannot be acknowledged
    assert re.search(r"WARNING: TELL user=carol outcome=refused .*code=74 reason=\"I/O error: .*" + re.escape(damaged),
                     server.text())
    assert (models / damaged).read_bytes() == b"PK\x03\x04 damaged"  # never overwritten
    if damaged == "@site.snb":  # refused before anything was journaled for carol
        assert not (models / "carol.snb.journal").exists()


@pytest.mark.skipif(SPAMC is None, reason="Debian's spamc is not installed (.ci/run installs it)")
def test_spamc_marks_the_message_unsure_when_the_model_cannot_be_read(tmp_path, serve):
    models = tmp_path / "models"
    models.mkdir()
    (models / "dave.snb").write_bytes(b"garbage")
    server = serve(models)
    result = subprocess.run([SPAMC, "-d", "127.0.0.1", "-p", str(server.port), "-u", "dave"], input=spam(3),
                            capture_output=True, timeout=60)
    head = result.stdout.split(b"\n\n", 1)[0].split(b"\n")
    assert b"X-StreamNB-Status: unsure" in head and b"X-Spam-Flag: YES" not in head


@pytest.mark.parametrize("locked", ["erin.snb", "@site.snb"])
def test_a_check_does_not_wait_for_another_writer(locked, tmp_path, serve):
    models = tmp_path / "models"
    models.mkdir()
    trained_model(models / "erin.snb", range(30, 40))
    trained_model(models / "@site.snb", range(40, 60))
    server = serve(models, "--lock-timeout", "20")
    site, expected = Expected(), Expected()
    for i in range(40, 60):
        site.tell(journal.LEARN, *reversed(lesson(i)))
    for i in range(30, 40):
        expected.tell(journal.LEARN, *reversed(lesson(i)))
    expected.site = site  # both files were made without the service: neither taught the other
    with journal.write_lock(models / locked):  # `streamnb learn` at work, say
        started = time.monotonic()
        reply = check(server.port, ham(95), user="erin", method="CHECK")
        assert time.monotonic() - started < 5
    verdict = expected.verdict(ham(95))
    assert f"X-StreamNB-Status: {verdict.label}\r\nX-StreamNB-Log-Odds: {verdict.log_odds:.6f}\r\n".encode() in reply


def test_checks_do_not_wait_while_another_writer_holds_a_model_with_observed_mail(tmp_path, serve):
    """Once the site model observed mail, the snapshot task saves it; while another writer
    holds its lock, that save must not hold up the checks (every user's go through the site
    model): it tries the lock without waiting and tries again later, and saves once the lock
    is free."""
    models = tmp_path / "models"
    server = serve(models, "--allow-tell", "--snapshot-seconds", "0.5", "--lock-timeout", "10")
    for i in range(6):
        assert tell_raw(server.port, *lesson(i)) == LEARNED
    assert wait_for(lambda: not (models / "@site.snb.journal").exists())  # folded: only observations to save
    with journal.write_lock(models / "@site.snb"):  # `streamnb learn DIR/@site.snb` at work, say
        before = journal.stamp(models / "@site.snb")
        times, until = [], time.monotonic() + 3
        while time.monotonic() < until:  # observed by the site model: the snapshot task wants to save it
            started = time.monotonic()
            reply = check(server.port, ham(200 + len(times)), user="nobody", method="CHECK")
            times.append(time.monotonic() - started)
            assert reply.startswith(b"SPAMD/1.5 0 EX_OK\r\nSpam: False"), reply
            time.sleep(0.1)
        assert max(times) < 1, times
        assert journal.stamp(models / "@site.snb") == before
        assert "the site model: another writer holds" in server.text()  # the save was tried, and put off
    assert wait_for(lambda: journal.stamp(models / "@site.snb") != before)  # saved once the lock is free
    server.stop()


# -- where to listen ----------------------------------------------------------------------------------------------

def test_listening_errors_name_the_host_and_port(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    result = streamnb_command("serve", "--models", str(models), "--host", "256.1.1.1", "--port", "0")
    assert result.returncode == 3 and result.stderr.decode().count("\n") == 1
    assert "--host 256.1.1.1" in result.stderr.decode()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = streamnb_command("serve", "--models", str(models), "--port", str(port))
    assert result.returncode == 3 and result.stderr.decode().count("\n") == 1
    assert f"--port {port}: Address already in use" in result.stderr.decode()
    assert os.listdir(models) == []
