"""A real mail server in front of ``streamnb serve`` (issue 35): Debian's Postfix with
spamass-milter, which calls Debian's spamc for every message Postfix receives over SMTP.

The set-up is the service guide's (docs/guides/service.md, "Mail servers"): the milter's
``OPTIONS`` and the ``main.cf`` lines are read from the guide, so the guide says what runs
here. Postfix runs from a folder of its own (``postfix -c``: its own configuration and queue,
127.0.0.1 on a free port, delivery by its virtual agent into one mbox file per recipient) and
never touches the machine's mail set-up; everything is stopped and deleted at the end.

Needs root (Postfix's master runs as root; the milter runs as its own user, as Debian's start
script runs it) and the packages postfix, spamass-milter and spamc: ``.ci/apt-install``
installs the missing ones (``.ci/run`` does too); where it cannot, the tests skip and say why.
"""

from __future__ import annotations

import mailbox
import os
import pwd
import re
import shlex
import shutil
import smtplib
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from email.message import Message
from pathlib import Path

import pytest

from tests.served import ROOT, Served, free_port
from tests.service.test_serve import N_EACH, ham, spam

GUIDE = ROOT / "docs" / "guides" / "service.md"
PACKAGES = {"postfix": "/usr/sbin/postfix", "spamass-milter": "/usr/sbin/spamass-milter", "spamc": "/usr/bin/spamc"}
DOMAIN = "example.test"
USERS = ("alice", "bob")  # the mailboxes; bob's model file is damaged (see the ``site`` fixture)
GUIDE_PORT = "7830"  # the guide's service port; the service here listens on a free one


def installed_or_skip() -> None:
    """Skip (saying why) unless running as root with the packages installed, or installable."""
    if os.geteuid() != 0:
        pytest.skip("Postfix's master runs as root: the Postfix tests need root")
    missing = [package for package, program in PACKAGES.items() if not Path(program).exists()]
    if missing:
        result = subprocess.run(["bash", str(ROOT / ".ci" / "apt-install"), *missing], capture_output=True,
                                text=True, timeout=600)
        if result.returncode != 0:
            pytest.skip(f"cannot install {' '.join(missing)}: {result.stderr.strip()}")


def guide_lines(first_line: str) -> list[str]:
    """The settings of the guide's fenced block that begins with ``first_line`` (the comment
    naming the file they go in), comments left out."""
    blocks = [block for block in re.findall(r"```\w*\n(.*?)```", GUIDE.read_text(), flags=re.S)
              if block.startswith(first_line + "\n")]
    assert len(blocks) == 1, f"the service guide has {len(blocks)} blocks beginning {first_line!r}"
    return [line for line in blocks[0].splitlines() if line and not line.startswith("#")]


def milter_options(service_port: int, reject: bool) -> list[str]:
    """The guide's spamass-milter OPTIONS, with this service's port (and ``-r -1`` before ``--``
    when spam is to be rejected, as the guide says)."""
    [line] = guide_lines("# /etc/default/spamass-milter")
    match = re.fullmatch(r'OPTIONS="(.*)"', line)
    assert match, line
    options = shlex.split(match.group(1))
    spamc = options.index("--")
    assert options[spamc + 1:] == ["-d", "127.0.0.1", "-p", GUIDE_PORT], options
    options[-1] = str(service_port)
    if reject:
        options[spamc:spamc] = ["-r", "-1"]
    return options


def wait_for(ready, what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout} s")
        time.sleep(0.05)


class Postfix:
    """Postfix from ``folder`` (its own main.cf, master.cf, queue and mailboxes), listening on
    127.0.0.1 at a free port, with the guide's ``main.cf`` lines."""

    def __init__(self, folder: Path) -> None:
        self.config, self.queue, self.mail = folder / "config", folder / "queue", folder / "mail"
        self.log_file = folder / "maillog"
        for made in (self.config, self.queue, self.mail):
            made.mkdir()
        nobody = pwd.getpwnam("nobody")  # the virtual agent delivers as nobody
        shutil.chown(self.mail, nobody.pw_uid, nobody.pw_gid)
        self.port = free_port()
        mailboxes = ", ".join(f"{user}@{DOMAIN}={user}" for user in USERS)
        (self.config / "main.cf").write_text("\n".join([
            "compatibility_level = 3.6",
            f"queue_directory = {self.queue}",
            f"data_directory = {folder / 'data'}",
            f"maillog_file = {self.log_file}",
            f"maillog_file_prefixes = {folder}",
            "mail_owner = postfix",
            "inet_interfaces = loopback-only",
            "inet_protocols = ipv4",
            "myhostname = mx.example.test",
            "mydestination =",
            "alias_maps =",
            "alias_database =",
            f"virtual_mailbox_domains = {DOMAIN}",
            f"virtual_mailbox_base = {self.mail}",
            f"virtual_mailbox_maps = inline:{{ {mailboxes} }}",
            f"virtual_uid_maps = static:{nobody.pw_uid}",
            f"virtual_gid_maps = static:{nobody.pw_gid}",
            *guide_lines("# /etc/postfix/main.cf"),
        ]) + "\n")
        # The services this Postfix needs, none chrooted; smtpd on 127.0.0.1 only, at the free port.
        (self.config / "master.cf").write_text("\n".join([
            f"127.0.0.1:{self.port} inet n - n - - smtpd",
            "pickup unix n - n 60 1 pickup",
            "cleanup unix n - n - 0 cleanup",
            "qmgr unix n - n 300 1 qmgr",
            "rewrite unix - - n - - trivial-rewrite",
            "bounce unix - - n - 0 bounce",
            "defer unix - - n - 0 bounce",
            "trace unix - - n - 0 bounce",
            "verify unix - - n - 1 verify",
            "flush unix n - n 1000? 0 flush",
            "proxymap unix - - n - - proxymap",
            "showq unix n - n - - showq",
            "error unix - - n - - error",
            "retry unix - - n - - error",
            "discard unix - - n - - discard",
            "anvil unix - - n - 1 anvil",
            "scache unix - - n - 1 scache",
            "postlog unix-dgram n - n - 1 postlogd",
            "virtual unix - n n - - virtual",
        ]) + "\n")
        self.postfix("start")
        try:
            wait_for(self.listening, f"Postfix listening on 127.0.0.1:{self.port}")
        except AssertionError:
            self.stop()
            raise

    def postfix(self, command: str) -> None:
        result = subprocess.run(["postfix", "-c", str(self.config), command], capture_output=True, text=True,
                                timeout=60)
        assert result.returncode == 0, f"postfix {command}: {result.stderr}{self.log()}"

    def listening(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            return True
        except OSError:
            return False

    def master_running(self) -> bool:
        pid_file = self.queue / "pid" / "master.pid"
        try:
            os.kill(int(pid_file.read_text()), 0)
            return True
        except (OSError, ValueError):
            return False

    def stop(self) -> None:
        self.postfix("stop")
        wait_for(lambda: not self.master_running(), "Postfix's master exiting")

    def log(self) -> str:
        return self.log_file.read_text(errors="replace") if self.log_file.exists() else ""

    def send(self, raw: bytes, *users: str) -> None:
        """Send ``raw`` over SMTP to ``users``; smtplib's exception when Postfix refuses it."""
        with smtplib.SMTP("127.0.0.1", self.port, timeout=60) as client:
            client.sendmail(f"sender@{DOMAIN}", [f"{user}@{DOMAIN}" for user in users], raw)

    def delivered(self, user: str) -> list[Message]:
        """``user``'s mailbox, read under the locks Postfix's virtual agent takes (fcntl and dotlock)."""
        path = self.mail / user
        if not path.exists():
            return []
        box = mailbox.mbox(path, create=False)
        wait_for(lambda: locked(box), f"the lock of {user}'s mailbox")
        try:
            return list(box)
        finally:
            box.unlock()

    def arrived(self, user: str, message_id: str) -> Message:
        """The message with this Message-ID in ``user``'s mailbox, once it is there."""
        def found() -> list[Message]:
            return [message for message in self.delivered(user) if message["Message-ID"] == message_id]

        wait_for(found, f"{message_id} delivered to {user}")
        [message] = found()
        return message


def locked(box: mailbox.mbox) -> bool:
    try:
        box.lock()
        return True
    except mailbox.ExternalClashError:  # Postfix is delivering
        return False


class Milter:
    """spamass-milter as Debian's start script runs it: as its own user, the socket
    ``spamass/spamass.sock`` in Postfix's queue folder, owned by postfix, mode 0660."""

    def __init__(self, queue: Path, options: list[str]) -> None:
        folder = queue / "spamass"
        folder.mkdir(exist_ok=True)
        shutil.chown(folder, "spamass-milter")
        self.socket = folder / "spamass.sock"
        self.socket.unlink(missing_ok=True)
        self.process = subprocess.Popen(["/usr/sbin/spamass-milter", "-p", str(self.socket), *options],
                                        user="spamass-milter", group="spamass-milter", extra_groups=[],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        try:
            wait_for(lambda: self.socket.exists() or self.process.poll() is not None, "the milter's socket")
            assert self.process.poll() is None, f"spamass-milter {options} exited {self.process.returncode}"
        except AssertionError:
            self.stop()
            raise
        shutil.chown(self.socket, "postfix", "postfix")
        self.socket.chmod(0o660)

    def stop(self) -> None:
        self.process.kill()  # the milter holds no state; its socket goes with it (the next one makes its own)
        self.process.wait(timeout=30)
        self.socket.unlink(missing_ok=True)


def sent(postfix: Postfix, raw: bytes, *users: str) -> str:
    """Send ``raw`` to ``users``; its Message-ID (spam(i) and ham(i) share one: every i here is new)."""
    postfix.send(raw, *users)
    match = re.search(rb"^Message-ID: (.*)$", raw, flags=re.M | re.I)
    assert match
    return match.group(1).decode()


def status(message: Message) -> str:
    value = message["X-Spam-Status"]
    assert value is not None, f"no X-Spam-Status in:\n{message}"
    return " ".join(str(value).split())  # unfolded


def body(message: Message) -> str:
    """The body as delivered, without the blank line that ends each message of an mbox file."""
    payload = message.get_payload()
    assert isinstance(payload, str) and payload.endswith("\n\n"), payload
    return payload[:-1]


# -- fixtures --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def folder() -> Iterator[Path]:
    """A throwaway folder the Postfix daemons (postfix, nobody, spamass-milter) may pass through."""
    installed_or_skip()
    path = Path(tempfile.mkdtemp(prefix="streamnb-postfix-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def service(folder: Path) -> Iterator[Served]:
    """``streamnb serve --allow-tell`` (the guide's), alice taught N_EACH spam and N_EACH ham
    through spamc (the site model learns them too); bob's model file is damaged, so that his
    checks cannot be scored."""
    models = folder / "models"
    models.mkdir()
    (models / "bob.snb").write_bytes(b"not a model file")
    server = Served(models, "--allow-tell")
    try:
        for i in range(N_EACH):
            for raw, label in ((spam(i), "spam"), (ham(i), "ham")):
                result = subprocess.run([PACKAGES["spamc"], "-d", "127.0.0.1", "-p", str(server.port), "-u", "alice",
                                         "-L", label], input=raw, capture_output=True, timeout=60)
                assert result.returncode == 0, result
        yield server
    finally:
        if server.alive():
            server.stop()


@pytest.fixture(scope="module")
def postfix(folder: Path) -> Iterator[Postfix]:
    started = Postfix(folder)
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
def milter(postfix: Postfix) -> Iterator:
    """Start the guide's spamass-milter (``milter(port, reject=False)``); stopped at the end."""
    running: list[Milter] = []

    def start(port: int, reject: bool = False) -> Milter:
        running.append(Milter(postfix.queue, milter_options(port, reject)))
        return running[-1]

    yield start
    for started in running:
        started.stop()


# -- the tests -------------------------------------------------------------------------------------

def test_mail_sent_over_smtp_arrives_marked_by_the_recipients_model(service, postfix, milter):
    milter(service.port)
    spam_id = sent(postfix, spam(1000), "alice")
    ham_id = sent(postfix, ham(1100), "alice")
    unscored_id = sent(postfix, spam(1200), "bob")
    both_id = sent(postfix, spam(1300), "alice", "bob")

    marked = postfix.arrived("alice", spam_id)
    assert re.fullmatch(r"Yes, score=(9\.\d|10\.0) required=9\.0 tests=STREAMNB_SPAM", status(marked))
    assert marked["X-Spam-Flag"] == "YES"
    assert body(marked) == spam(1000).split(b"\n\n", 1)[1].decode()  # -m: the body as it came
    assert marked["Subject"] == "Cheap pills 1000"

    clean = postfix.arrived("alice", ham_id)
    assert re.fullmatch(r"No, score=\d\.\d required=9\.0 tests=STREAMNB_HAM", status(clean))
    assert clean["X-Spam-Flag"] is None

    # bob is checked with his own model, which cannot be read: unsure, never a clean pass.
    unscored = postfix.arrived("bob", unscored_id)
    assert status(unscored) == "No, score=5.5 required=9.0 tests=STREAMNB_UNSURE,STREAMNB_UNSCORED"
    assert unscored["X-Spam-Flag"] is None

    # Two recipients: checked once, as the user spamass-milter (no model of its own), so with
    # the site model only; both copies carry the same headers.
    for user in ("alice", "bob"):
        copy = postfix.arrived(user, both_id)
        assert re.fullmatch(r"Yes, score=(9\.\d|10\.0) required=9\.0 tests=STREAMNB_SPAM", status(copy))
    assert not (service.models / "spamass-milter.snb").exists()  # a check makes no model


def test_spam_is_rejected_at_smtp_time_when_configured(service, postfix, milter):
    milter(service.port, reject=True)
    with pytest.raises(smtplib.SMTPDataError) as refused:
        postfix.send(spam(1010), "alice")
    assert (refused.value.smtp_code, refused.value.smtp_error) == (550, b"5.7.1 Blocked by SpamAssassin")
    ham_id = sent(postfix, ham(1110), "alice")
    assert "STREAMNB_HAM" in status(postfix.arrived("alice", ham_id))
    assert not [message for message in postfix.delivered("alice") if message["Subject"] == "Cheap pills 1010"]
    assert "milter-reject: END-OF-MESSAGE" in postfix.log()


def test_with_the_milter_down_postfix_asks_the_sender_to_retry(postfix):
    # No milter: milter_default_action = tempfail (the guide's) refuses the mail for now.
    with pytest.raises(smtplib.SMTPResponseException) as refused:
        postfix.send(spam(1020), "alice")
    assert refused.value.smtp_code == 451
    assert not [message for message in postfix.delivered("alice") if message["Subject"] == "Cheap pills 1020"]


def test_with_the_service_down_mail_arrives_without_spam_headers(postfix, milter):
    # spamass-milter 0.4.0 ignores spamc's exit code: with nothing listening, the message is
    # delivered with no X-Spam-* header at all (not marked clean: not marked). The guide says so.
    milter(free_port())
    unchecked_id = sent(postfix, spam(1030), "alice")
    unchecked = postfix.arrived("alice", unchecked_id)
    assert not [name for name in unchecked.keys() if name.lower().startswith("x-spam")]
    assert body(unchecked) == spam(1030).split(b"\n\n", 1)[1].decode()
