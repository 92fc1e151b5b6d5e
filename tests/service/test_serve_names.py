"""streamnb serve (issue 35, item 1): every message marked.

Any user name a client sends is served, under a file name that encodes it reversibly and
never leaves the models folder (the names of before load as they are); a check that cannot
be scored is answered unsure with a symbol; every refusal is in the default log, with its
reason. spamc is Debian's (``.ci/run`` installs it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import streamnb
from streamnb.service import cli
from streamnb.service.journal import LEARN, Lesson, apply_lesson
from streamnb.service.names import MAX_STEM, file_stem, shown, user_of
from tests.service.test_serve import ham, request, spam, tell_raw, unscored

SPAMC = shutil.which("spamc")
needs_spamc = pytest.mark.skipif(SPAMC is None, reason="Debian's spamc is not installed (.ci/run installs it)")

# Legal e-mail local parts (RFC 5322 atext, a quoted one, UTF-8 of RFC 6531), a path, over 64 characters
# (a name starting with "-" spamc's own getopt refuses: the raw requests below send one).
NAMES = ["o'brien", "first&last", "josé", "a/b", "x" * 70, "..", ".", "@site", "a b", "a\\b", "~x", "100%"]


def spamc(port: int, user: str, *args: str, stdin: bytes) -> subprocess.CompletedProcess:
    return subprocess.run([SPAMC, "-d", "127.0.0.1", "-p", str(port), "-u", user, *args], input=stdin,
                          capture_output=True, timeout=60)


# -- the file names ---------------------------------------------------------------------------------

@given(st.text(min_size=1, max_size=80))
def test_every_name_has_a_file_of_the_folder_and_comes_back_from_it(user):
    stem = file_stem(user)
    assert stem and "/" not in stem and "\0" not in stem and not stem.startswith((".", "-", "@"))
    assert len((stem + ".snb.journal.damaged-20261206T100000").encode()) <= 255
    assert re.fullmatch(r"[A-Za-z0-9_.@+=%~-]+", stem)
    if "~" not in stem:
        assert user_of(stem) == user


@given(st.binary(min_size=1, max_size=60))
def test_any_bytes_of_a_header_are_a_name_and_come_back(data):
    user = data.decode("utf-8", "surrogateescape")  # as the protocol reads the User header
    assert user_of(file_stem(user)) == user
    assert shown(user).isprintable()


def test_the_names_of_before_are_their_own_file_names():
    for user in ["alice", "bob.smith@example.org", "a+b=c", "_x", "x" * 64, "U-1"]:
        assert file_stem(user) == user


def test_names_too_long_to_encode_get_a_distinct_hashed_file_name():
    a, b = "é" * 120 + "a", "é" * 120 + "b"
    assert len(file_stem(a)) <= MAX_STEM and "~" in file_stem(a)
    assert file_stem(a) != file_stem(b) and user_of(file_stem(a)) is None


# -- through the service --------------------------------------------------------------------------------

@needs_spamc
def test_spamc_users_of_any_name_are_served_and_stored_inside_the_folder(serve, tmp_path):
    models = tmp_path / "models"
    server = serve(models, "--allow-tell", "--no-site")
    for user in NAMES + [""]:
        for i in range(2):  # a user's own model of both classes
            for raw, label in ((spam(i), "spam"), (ham(i), "ham")):
                result = spamc(server.port, user, "-L", label, stdin=raw)
                assert result.returncode == 0 and result.stdout == b"Message successfully un/learned\n", (user, result)
        result = spamc(server.port, user, "-c", stdin=spam(100))
        assert result.returncode in (0, 1) and re.fullmatch(rb"\d+\.\d/9\.0\n", result.stdout), (user, result)
        assert result.stdout != b"0/0\n"
        result = spamc(server.port, user, "-y", stdin=ham(100))
        assert result.stdout.startswith(b"STREAMNB_") and b"UNSCORED" not in result.stdout, (user, result)
    server.stop()
    assert sorted(tmp_path.iterdir()) == [models]  # nothing outside the models folder
    stored = sorted(name for name in os.listdir(models) if name.endswith(".snb"))
    assert stored == sorted(f"{file_stem(user or 'default')}.snb" for user in NAMES + [""])
    assert "o%27brien.snb" in stored and "a%2Fb.snb" in stored and "jos%C3%A9.snb" in stored
    for name in stored:
        model = streamnb.load(models / name)
        assert model.class_counts == {"spam": 2.0, "ham": 2.0}, name
        assert user_of(name[:-4]) in NAMES + ["default"]
    log = server.text()
    assert "TELL user=o'brien outcome=ok verdict=spam" in log and "CHECK user=josé outcome=ok verdict=" in log
    assert 'SYMBOLS user="a b" outcome=ok verdict=' in log


def test_raw_names_of_any_bytes_are_served_inside_the_folder(serve, tmp_path):
    models = tmp_path / "models"
    server = serve(models, "--allow-tell", "--no-site")
    names = [b"../../x", b"/etc/passwd", b".hidden", b"-rf", b"caf\xe9", b"\xff\xfe", b"a\x1bb", b"x" * 300,
             "é".encode() * 120]
    for user in names:
        head = b"TELL SPAMC/1.5\r\nMessage-class: spam\r\nSet: local\r\nUser: " + user + b"\r\nContent-length: "
        reply = request(server.port, head + str(len(spam(1))).encode() + b"\r\n\r\n" + spam(1))
        assert reply == b"SPAMD/1.5 0 EX_OK\r\nDidSet: local\r\n\r\n", (user, reply)
        reply = request(server.port, b"CHECK SPAMC/1.5\r\nUser: " + user + b"\r\nContent-length: 5\r\n\r\nhello")
        assert reply.startswith(b"SPAMD/1.5 0 EX_OK\r\nSpam: "), (user, reply)
    server.stop()
    assert sorted(tmp_path.iterdir()) == [models] and not Path("/x.snb").exists()
    stems = {name[:-4] for name in os.listdir(models) if name.endswith(".snb")}
    assert stems == {file_stem(user.decode("utf-8", "surrogateescape")) for user in names}
    assert {user_of(stem) for stem in stems} >= {"../../x", "/etc/passwd", ".hidden", "caf\udce9"}
    log = server.text()
    assert 'TELL user="a\\\\x1bb" outcome=ok' in log  # an escape cannot reach the log as it came
    assert "\x1b" not in log
    assert "TELL user=" + "x" * 200 + "... outcome=ok" in log  # a long name cut in the log (a line stays a line)


def test_models_stored_under_plain_names_load_as_they_are(serve, tmp_path):
    """A model file of before (a name of the old rule) is the file its user's name finds."""
    models = tmp_path / "models"
    models.mkdir()
    args = cli.build_parser().parse_args(["serve", "--models", str(models)])
    model = cli.build_model(args)
    for i in range(12):
        apply_lesson(model, Lesson(LEARN, "spam", spam(i)))
        apply_lesson(model, Lesson(LEARN, "ham", ham(i)))
    model.save(models / "bob.smith@example.org.snb")
    server = serve(models, "--no-site")
    reply = request(server.port, f"REPORT SPAMC/1.5\r\nUser: bob.smith@example.org\r\nContent-length: "
                                 f"{len(spam(50))}\r\n\r\n".encode() + spam(50))
    assert b"answered by user bob.smith@example.org's model" in reply and b"12 spam and 12 ham learned" in reply


# -- refusals: what the client sees, what the log says ----------------------------------------------------

@needs_spamc
def test_a_tell_refused_for_a_model_without_ledger_is_logged_with_its_reason(serve, tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    args = cli.build_parser().parse_args(["serve", "--models", str(models)])
    args.ledger = 0  # as `streamnb train` makes it by default
    model = cli.build_model(args)
    assert getattr(model, "ledger", None) is None
    model.save(models / "carol.snb")
    server = serve(models, "--allow-tell", "--no-site")
    result = spamc(server.port, "carol", "-L", "spam", stdin=spam(1))
    assert result.returncode == 74  # spamc's word for "the server refused": nothing learned
    reply = tell_raw(server.port, spam(1), "spam", user="carol")
    assert reply.startswith(b"SPAMD/1.5 69 Service Unavailable: (the model of user carol has no ledger")
    lines = [line for line in server.text().splitlines() if "TELL user=carol" in line]
    assert len(lines) == 2 and all(" WARNING: " in line and "outcome=refused" in line and "code=69" in line
                                   and "has no ledger, which TELL needs" in line for line in lines), lines
    result = spamc(server.port, "carol", "-y", stdin=spam(1))  # checks still answered
    assert result.returncode == 0 and result.stdout.startswith(b"STREAMNB_")


@needs_spamc
def test_a_tell_refused_by_a_read_only_service_is_logged_with_its_reason(serve, tmp_path):
    server = serve(tmp_path / "models", "--read-only")
    result = spamc(server.port, "dave", "-L", "ham", stdin=ham(1))
    assert result.returncode == 74
    assert re.search(r"WARNING: TELL user=dave outcome=refused .*code=69 reason=\"Service Unavailable: \(the models "
                     r"folder is served read-only \(--read-only\): TELL is refused\)\"", server.text())


@needs_spamc
def test_a_check_that_cannot_be_read_is_marked_unsure_through_spamc(serve, tmp_path):
    """spamc sends what it is given; a service with a smaller --max-size than spamc's answers unsure."""
    server = serve(tmp_path / "models", "--max-size", "1000")
    big = spam(1) + b"x" * 5000 + b"\n"
    result = spamc(server.port, "erin", "-y", stdin=big)
    assert result.returncode == 0 and result.stdout == b"STREAMNB_UNSURE,STREAMNB_UNSCORED", result
    result = spamc(server.port, "erin", "-R", stdin=big)
    assert b"not scored: the message could not be read" in result.stdout, result
    result = spamc(server.port, "erin", "-c", stdin=big)
    assert result.stdout == b"5.5/9.0\n"
    unscored(request(server.port, b"SYMBOLS SPAMC/1.5\r\nUser: erin\r\nContent-length: " + str(len(big)).encode()
                     + b"\r\n\r\n" + big))
    lines = [line for line in server.text().splitlines() if "user=erin" in line]
    assert len(lines) == 4 and all(" WARNING: " in line and "outcome=unscored verdict=unsure score=5.5" in line
                                   and "the message could not be read: 65 Message too big" in line
                                   for line in lines), lines
