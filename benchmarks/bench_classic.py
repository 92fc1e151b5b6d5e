"""Classic filters: bogofilter, spamprobe and SpamAssassin's Bayes on the same stream, with their defaults.

Protocol, as ``streamnb evaluate``: for each message in Date order, classify it with the
filter as it stands (one process, the message on stdin, as a mail server runs it), record
its verdict (spam / ham / unsure) and score, then train it on its TRUE label (a second
process). Each filter starts from a fresh, empty database in a temporary folder; $HOME
points there too, so no user configuration is read.

- **bogofilter** (Debian ``bogofilter``, Berkeley DB wordlist): ``bogoutil -l wordlist.db
  < /dev/null`` creates the empty wordlist (without one bogofilter exits 3 on the first
  message instead of scoring it); classify ``bogofilter -C -d DIR -TT`` (-C: no
  configuration file, so the compiled-in defaults; -TT prints the spamicity to 16
  significant digits; the exit code is the verdict: 0 spam, 1 ham, 2 unsure); train
  ``bogofilter -C -d DIR -s`` (spam) or ``-n`` (ham). Its defaults (``bogofilter -C -Q``):
  ham_cutoff 0.45, spam_cutoff 0.99 (tri-state: ham <= 0.45 < unsure < 0.99 <= spam),
  robx 0.52, robs 0.0178, min_dev 0.375, no effective size factors.
- **spamprobe** (Debian ``spamprobe``): ``spamprobe -c -d DIR create-db``; classify
  ``spamprobe -d DIR score`` (prints ``SPAM 0.9999999 <md5>`` or ``GOOD ...``); train
  ``spamprobe -d DIR spam`` or ``good``. Its defaults (``spamprobe help``): spam when the
  score is >= 0.6 (two-state: it never says unsure), the 27 most significant terms, at most
  2 repeats of a term, phrases of up to 2 words, computed probabilities from 5 occurrences.
- **SpamAssassin's Bayes** (Debian ``spamassassin``, ``spamd``, ``spamc``): one spamd per
  run (``--local``: no network; ``--nouser-config``; ``--allow-tell``) on a UNIX socket in
  DIR, whose rules folder holds the default preferences, the Bayes rules with their
  default scores and nothing else (see ``SA_FILES``, ``SA_LOCAL``); classify ``spamc -U
  DIR/spamd.sock -x`` (one spamc per message, as a mail server calls it) and read back two
  headers the configuration adds, the verdict (_YESNO_) and the Bayes probability
  (_BAYES_); train ``spamc -U DIR/spamd.sock -x -L spam|ham`` (spamd's TELL). Auto-learning
  is off, so it learns only the true labels. Its verdict is spam when the score reaches
  required_score 5; the Bayes rules alone score at most 4.0, so it never says spam; and its
  Bayes gives 0.5 until it has learned 200 spam and 200 ham, so (1-AUC)% is also reported
  from that message on, for every filter.

Figures are computed with streamnb.evaluate's metric functions, exactly as
``streamnb evaluate`` computes its own (``verdict_figures`` is tested against
``streamnb.decision.FilterReport``): ham called spam = ham with verdict spam / all ham,
spam called ham = spam with verdict ham / all spam, unsure share, accuracy among decided
messages, (1-AUC)% from each filter's own score (bogofilter's spamicity, spamprobe's
score, SpamAssassin's Bayes probability). Speed: messages per second of classify + train,
in wall time (process start, database open and this process's bookkeeping included) and in
the CPU time of the child processes (``getrusage(RUSAGE_CHILDREN)``; spamd's included). For comparison the section also runs the
``streamnb evaluate`` command's defaults in-process on the same messages (its msg/s has no
process start per message, so it is not comparable with the classic ones).

Setup: when a filter is missing, a full run installs its Debian package (``apt-get
install``, as root, only when missing; ``STREAMNB_BENCH_INSTALL=0`` forbids it) and
says so; ``--quick`` never installs: it runs the first 30 messages with the filters that
are installed and records, with the reason, the ones it skipped. Opt-in:
``python -m benchmarks --only classic`` (whole stream: about 12,000 processes per filter;
about half an hour on a loaded 2-core machine, most of it SpamAssassin).
Per-message results are cached under ``benchmarks/_cache/classic/`` (keyed by the stream's
content and the filter's version) for ``benchmarks/accuracy_variants.py``'s contender rows.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import os
import re
import resource
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from streamnb.filter.evaluate import accuracy, false_positive_rate, one_minus_auc_percent

from . import common

NAME = "classic"
TITLE = "Classic filters (bogofilter, spamprobe, SpamAssassin's Bayes), one process per call"
DEFAULT = False  # installs Debian packages and starts ~36,000 processes: opt-in
REPEATED = False  # one pass (each pass takes minutes); deterministic verdicts and scores
QUICK_PREFIX = 30
CACHE = Path(__file__).resolve().parent / "_cache" / "classic"
HAM, SPAM, UNSURE = "ham", "spam", "unsure"
INSTALL_ENV = "STREAMNB_BENCH_INSTALL"


class ClassicFilterError(RuntimeError):
    """A classic filter failed or printed something its parser does not understand."""


class Classified(NamedTuple):
    """One classification: the filter's verdict ("spam", "ham" or "unsure") and its score in [0, 1]."""

    verdict: str
    score: float


# -- parsing the filters' output (pure functions, tested on captured output) -------------------

BOGOFILTER_EXIT = {0: SPAM, 1: HAM, 2: UNSURE}  # bogofilter(1): 3 is an error


def parse_bogofilter(stdout: str, returncode: int, stderr: str = "") -> Classified:
    """The verdict of ``bogofilter -TT`` (its exit code) and its spamicity (the one number it prints)."""
    if returncode not in BOGOFILTER_EXIT:
        raise ClassicFilterError(f"bogofilter exited {returncode}: {stderr.strip() or stdout.strip()!r}")
    try:
        score = float(stdout.strip())
    except ValueError:
        raise ClassicFilterError(f"bogofilter -TT printed {stdout!r}; expected one number") from None
    if not 0.0 <= score <= 1.0:
        raise ClassicFilterError(f"bogofilter's spamicity {score!r} is not in [0, 1]")
    return Classified(BOGOFILTER_EXIT[returncode], score)


_SPAMPROBE = re.compile(r"^(SPAM|GOOD)\s+([0-9.]+)(?:\s+\S+)?\s*$")


def parse_spamprobe(stdout: str, returncode: int = 0, stderr: str = "") -> Classified:
    """The verdict and score of ``spamprobe score``: one line ``SPAM|GOOD <score> <md5 digest>``."""
    if returncode != 0:
        raise ClassicFilterError(f"spamprobe exited {returncode}: {stderr.strip() or stdout.strip()!r}")
    lines = [line for line in stdout.splitlines() if line.strip()]
    match = _SPAMPROBE.match(lines[0].strip()) if len(lines) == 1 else None
    if match is None:
        raise ClassicFilterError(f"spamprobe score printed {stdout!r}; expected 'SPAM|GOOD <score> <digest>'")
    score = float(match.group(2))
    if not 0.0 <= score <= 1.0:
        raise ClassicFilterError(f"spamprobe's score {score!r} is not in [0, 1]")
    return Classified(SPAM if match.group(1) == "SPAM" else HAM, score)


_QUERY = re.compile(r"^([a-z_]+)\s*=\s*([0-9.eE+-]+)\s*#", re.MULTILINE)


def parse_bogofilter_settings(query: str) -> dict[str, float]:
    """The numeric settings ``bogofilter -Q`` prints (robx, robs, min_dev, ham_cutoff, spam_cutoff, ...)."""
    settings = {name: float(value) for name, value in _QUERY.findall(query)}
    missing = {"ham_cutoff", "spam_cutoff", "robx", "robs", "min_dev"} - set(settings)
    if missing:
        raise ClassicFilterError(f"bogofilter -Q did not print {sorted(missing)}")
    return settings


def parse_spamprobe_settings(help_text: str) -> dict[str, float]:
    """The defaults ``spamprobe help`` states: spam threshold (-l), terms (-w), repeats (-r), phrase words (-p),
    minimum count (-C)."""
    wanted = {"-l": ("spam_threshold", r"Default\s+value\s+is\s+([0-9]*\.?[0-9]+)"),
              "-w": ("terms", r"\(default\s+([0-9]+)\)"), "-r": ("max_repeats", r"Default\s+is\s+([0-9]+)"),
              "-p": ("phrase_words", r"\(default\s+([0-9]+)\)"), "-C": ("min_count", r"Default\s+value\s+is\s+([0-9]+)")}
    settings = {}
    for block in re.split(r"\n\s*(?=-[A-Za-z0-9]\s)", "\n" + help_text):
        option = block.strip()[:2]
        if option in wanted and wanted[option][0] not in settings:
            name, pattern = wanted[option]
            found = re.search(pattern, block)
            if found:
                settings[name] = float(found.group(1))
    if "spam_threshold" not in settings:
        raise ClassicFilterError("spamprobe help does not state the default spam threshold (-l)")
    return settings


# -- the figures: computed by streamnb.evaluate's functions, as for streamnb -------------------

def _auc(labels: Sequence[str], scores: Sequence[float]) -> float | None:
    """(1-AUC)% of the scores (streamnb.evaluate.one_minus_auc_percent), None with one class only."""
    try:
        return one_minus_auc_percent(list(labels), list(scores), SPAM)
    except ValueError:  # one class only (InvalidInputError)
        return None


def verdict_figures(y_true: Sequence[str], verdicts: Sequence[str], scores: Sequence[float]) -> dict[str, Any]:
    """Verdict rates, unsure share, accuracy among decided messages and (1-AUC)% of one filter's run.

    Equal to ``streamnb.decision.FilterReport``'s verdict_false_positive_rate,
    verdict_false_negative_rate, unsure_rate and decided_accuracy for the same verdicts
    (unsure is neither a false positive nor a false negative). "spam called ham" is
    evaluate's false_positive_rate with ham as the positive label: spam with verdict ham
    over all spam.
    """
    y, v = list(y_true), list(verdicts)
    decided = [i for i, verdict in enumerate(v) if verdict != UNSURE]
    is_spam = np.array([label == SPAM for label in y])
    unsure = np.array([verdict == UNSURE for verdict in v])
    auc = _auc(y, scores)
    return {
        "messages": len(y), "spam": int(is_spam.sum()), "ham": int((~is_spam).sum()),
        "ham_as_spam": false_positive_rate(y, v, SPAM),
        "spam_as_ham": false_positive_rate(y, v, HAM),
        "unsure": float(unsure.mean()),
        "unsure_ham": float(unsure[~is_spam].mean()) if (~is_spam).any() else None,
        "unsure_spam": float(unsure[is_spam].mean()) if is_spam.any() else None,
        "decided_accuracy": accuracy([y[i] for i in decided], [v[i] for i in decided]) if decided else None,
        "spam_verdict_accuracy": accuracy(y, [SPAM if verdict == SPAM else HAM for verdict in v]),
        "one_minus_auc_percent": auc,
    }


def printed_score(score: float, decimals: int = 6) -> float:
    """The score as the filter's mail header prints it (bogofilter's X-Bogosity: %0.6f)."""
    return round(score, decimals)


# -- the filters ------------------------------------------------------------------------------

def _run(command: Sequence[str], data: bytes | None = None, env: dict[str, str] | None = None,
         cwd: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(list(command), input=data, capture_output=True, env=env, cwd=cwd, check=False)


def _first_line(command: Sequence[str]) -> str | None:
    try:
        done = _run(command)
    except OSError:
        return None
    text = (done.stdout or done.stderr).decode("utf-8", "replace").strip()
    return text.splitlines()[0] if text else None


def debian_version(package: str) -> str | None:
    """The installed Debian package's version (dpkg-query), or None."""
    if shutil.which("dpkg-query") is None:
        return None
    done = _run(["dpkg-query", "-W", "-f", "${Version}", package])
    return done.stdout.decode().strip() or None if done.returncode == 0 else None


@dataclass
class ClassicFilter:
    """How to run one classic filter: create its database, classify a message, train one.

    Commands take the run's folder (which holds the database, configuration and sockets).
    A filter with a ``daemon`` (spamd) has it started in that folder before the first
    message and stopped after the last; its CPU time counts once it has been stopped.
    """

    name: str
    packages: tuple[str, ...]
    programs: tuple[str, ...]
    classify: Callable[[str], list[str]]
    train: Callable[[str, str], list[str]]  # (folder, label)
    parse: Callable[[str, int, str], Classified]
    version_command: tuple[str, ...]
    settings: Callable[[], dict[str, float]]
    create: Callable[[str], list[str]] | None = None  # folder -> command creating an empty database there
    create_stdin: bytes | None = None
    prepare: Callable[[str], None] | None = None  # writes configuration files into the folder
    daemon: Callable[[str], list[str]] | None = None
    ping: Callable[[str], list[str]] | None = None  # exits 0 once the daemon answers

    def missing(self) -> list[str]:
        return [program for program in self.programs if shutil.which(program) is None]

    def version(self) -> str | None:
        """The version the program reports (``bogofilter -V``, ``spamprobe -V``), e.g. "1.2.5"."""
        found = re.search(r"\bv?(\d+\.\d+[\w.]*)", _first_line(self.version_command) or "")
        return found.group(1) if found else None

    def commands(self, folder: str = "DIR") -> dict[str, str]:
        """The commands, with the run's folder written as ``folder``."""
        out = {}
        if self.daemon is not None:
            out["server"] = " ".join(self.daemon(folder))
        if self.create is not None:
            out["create"] = " ".join(self.create(folder)) + (" < /dev/null" if self.create_stdin is not None else "")
        out.update({"classify": " ".join(self.classify(folder)) + " < message",
                    "train spam": " ".join(self.train(folder, SPAM)) + " < message",
                    "train ham": " ".join(self.train(folder, HAM)) + " < message"})
        return out


def _bogofilter_settings() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        done = _run(["bogofilter", "-C", "-Q", "-d", folder])
    return parse_bogofilter_settings(done.stdout.decode("utf-8", "replace"))


def _spamprobe_settings() -> dict[str, float]:
    done = _run(["spamprobe", "help"])
    return parse_spamprobe_settings((done.stdout + done.stderr).decode("utf-8", "replace"))


BOGOFILTER = ClassicFilter(
    name="bogofilter", packages=("bogofilter",), programs=("bogofilter", "bogoutil"),
    create=lambda d: ["bogoutil", "-l", os.path.join(d, "wordlist.db")], create_stdin=b"",
    classify=lambda d: ["bogofilter", "-C", "-d", d, "-TT"],
    train=lambda d, label: ["bogofilter", "-C", "-d", d, "-s" if label == SPAM else "-n"],
    parse=parse_bogofilter, version_command=("bogofilter", "-V"), settings=_bogofilter_settings)

SPAMPROBE = ClassicFilter(
    name="spamprobe", packages=("spamprobe",), programs=("spamprobe",),
    create=lambda d: ["spamprobe", "-c", "-d", d, "create-db"],
    classify=lambda d: ["spamprobe", "-d", d, "score"],
    train=lambda d, label: ["spamprobe", "-d", d, "spam" if label == SPAM else "good"],
    parse=parse_spamprobe, version_command=("spamprobe", "-V"), settings=_spamprobe_settings)


# SpamAssassin, Bayes only: spamd reads a rules folder that holds the default preferences,
# the TLD list (URIs are tokenized by registrar domain), the Bayes rules with their default
# scores and the Bayes stop words, and nothing else: no network, no other rule.
SA_SHARE = "/usr/share/spamassassin"
SA_FILES = ("10_default_prefs.cf", "20_aux_tlds.cf", "23_bayes.cf", "60_bayes_stopwords.cf")
SA_PLUGINS = "loadplugin Mail::SpamAssassin::Plugin::Check\nloadplugin Mail::SpamAssassin::Plugin::Bayes\n"
SA_LOCAL = """use_bayes 1
bayes_auto_learn 0
bayes_path {bayes}/bayes
bayes_file_mode 0777
lock_method flock
skip_rbl_checks 1
report_safe 0
add_header all StreamnbBayes _BAYES_
add_header all StreamnbVerdict _YESNO_ score=_SCORE_ required=_REQD_
"""


def _sa_paths(folder: str) -> dict[str, str]:
    return {name: os.path.join(folder, name) for name in ("rules", "site", "bayes", "spamd.sock")}


def _spamassassin_prepare(folder: str) -> None:
    paths = _sa_paths(folder)
    for name in ("rules", "site", "bayes"):
        os.makedirs(paths[name], exist_ok=True)
    for path in (os.path.dirname(folder), folder, paths["rules"], paths["site"]):
        os.chmod(path, 0o755)  # spamd run as root drops to nobody, who must read the rules
    os.chmod(paths["bayes"], 0o777)  # ... and write the Bayes database
    for name in SA_FILES:
        os.symlink(os.path.join(SA_SHARE, name), os.path.join(paths["rules"], name))
    scores = [line for line in Path(SA_SHARE, "50_scores.cf").read_text(errors="replace").splitlines()
              if line.startswith("score BAYES_")]
    Path(paths["rules"], "50_bayes_scores.cf").write_text("\n".join(scores) + "\n")
    Path(paths["rules"], "bayes_only.pre").write_text(SA_PLUGINS)
    Path(paths["site"], "local.cf").write_text(SA_LOCAL.format(bayes=paths["bayes"]))


def _spamd(folder: str) -> list[str]:
    paths = _sa_paths(folder)
    user = ["--username", "nobody"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    return ["spamd", "--configpath", paths["rules"], "--siteconfigpath", paths["site"], "--local",
            "--nouser-config", "--allow-tell", "--socketpath", paths["spamd.sock"], "--min-children=1",
            "--max-children=1", "--min-spare=1", "--max-spare=1", "--syslog=stderr", *user]


_HEADER = re.compile(r"^X-Spam-Streamnb(Bayes|Verdict):[ \t]*(.*)$", re.MULTILINE | re.IGNORECASE)


def parse_spamassassin(stdout: str, returncode: int = 0, stderr: str = "") -> Classified:
    """SpamAssassin's verdict (X-Spam-StreamnbVerdict: Yes/No) and Bayes probability (X-Spam-StreamnbBayes)
    in the message ``spamc`` returns; the headers are the ones SA_LOCAL adds (_YESNO_ and _BAYES_)."""
    if returncode != 0:
        raise ClassicFilterError(f"spamc exited {returncode}: {stderr.strip()!r}")
    head = re.split(r"\r?\n\r?\n", stdout, maxsplit=1)[0]
    found = {name.lower(): value.strip() for name, value in _HEADER.findall(head)}
    if set(found) != {"bayes", "verdict"}:
        raise ClassicFilterError(f"spamc returned no X-Spam-StreamnbBayes/Verdict headers: {head[:300]!r}")
    verdict = found["verdict"].split()[0].lower() if found["verdict"] else ""
    if verdict not in ("yes", "no"):
        raise ClassicFilterError(f"X-Spam-StreamnbVerdict is {found['verdict']!r}; expected Yes or No")
    try:
        score = float(found["bayes"])
    except ValueError:
        raise ClassicFilterError(f"X-Spam-StreamnbBayes is {found['bayes']!r}; expected a probability") from None
    return Classified(SPAM if verdict == "yes" else HAM, score)


def _spamassassin_settings() -> dict[str, float]:
    """required_score (10_default_prefs.cf), the Bayes minimums and the BAYES_ rules' scores (score set 2)."""
    prefs = Path(SA_SHARE, "10_default_prefs.cf").read_text(errors="replace")
    scores = Path(SA_SHARE, "50_scores.cf").read_text(errors="replace")
    return parse_spamassassin_settings(prefs, scores)


def parse_spamassassin_settings(prefs: str, scores: str) -> dict[str, float]:
    """required_score from the default preferences, and the score of each BAYES_ rule with Bayes on and the
    network off (score set 2, the third of four columns); Bayes needs 200 spam and 200 ham learned
    (bayes_min_spam_num, bayes_min_ham_num: compiled-in defaults) before it gives a probability."""
    required = re.search(r"^required_score\s+([0-9.]+)", prefs, re.MULTILINE)
    if required is None:
        raise ClassicFilterError("the default preferences set no required_score")
    out = {"required_score": float(required.group(1)), "bayes_min_spam_num": 200.0, "bayes_min_ham_num": 200.0}
    for name, *values in (line.split()[1:] for line in scores.splitlines() if line.startswith("score BAYES_")):
        out[name] = float(values[2] if len(values) == 4 else values[0])
    return out


SPAMASSASSIN = ClassicFilter(
    name="spamassassin", packages=("spamassassin", "spamc", "spamd"), programs=("spamd", "spamc"),
    prepare=_spamassassin_prepare, daemon=_spamd,
    ping=lambda d: ["spamc", "-U", _sa_paths(d)["spamd.sock"], "-K"],
    classify=lambda d: ["spamc", "-U", _sa_paths(d)["spamd.sock"], "-x"],
    train=lambda d, label: ["spamc", "-U", _sa_paths(d)["spamd.sock"], "-x", "-L", label],
    parse=parse_spamassassin, version_command=("spamassassin", "-V"), settings=_spamassassin_settings)

FILTERS = {f.name: f for f in (BOGOFILTER, SPAMPROBE, SPAMASSASSIN)}


# -- setup: install when missing (guarded) ------------------------------------------------------

def install_allowed() -> bool:
    return os.environ.get(INSTALL_ENV, "1").strip().lower() not in ("0", "no", "false", "")


def ensure_installed(filters: Sequence[ClassicFilter], install: bool, log: Callable[[str], None],
                     why: str = "") -> dict[str, str]:
    """Install the Debian packages of the missing filters when ``install``; returns name -> why it is unavailable.

    Guarded: only what is missing, only as root with apt-get; ``apt-get update`` only when
    the install fails without it (a fresh machine has no package lists). ``why`` says why
    installing was not allowed, for the reason recorded when it was not.
    """
    missing = [f for f in filters if f.missing()]
    if missing and install:
        packages = [package for f in missing for package in f.packages]
        if shutil.which("apt-get") is None or os.geteuid() != 0:
            why = "no apt-get on this machine" if shutil.which("apt-get") is None else "not running as root"
            log(f"  cannot install {', '.join(packages)}: {why}")
        else:
            log(f"  installing {', '.join(packages)} (apt-get; missing on this machine)")
            env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
            command = ["apt-get", "install", "-y", "-q", "--no-install-recommends", *packages]
            if _run(command, env=env).returncode != 0:
                _run(["apt-get", "update", "-q"], env=env)
                done = _run(command, env=env)
                why = "apt-get install failed: " + done.stderr.decode("utf-8", "replace").strip()[-300:]
                if done.returncode != 0:
                    log(f"  {why}")
    unavailable = {}
    for f in filters:
        absent = f.missing()
        if absent:
            unavailable[f.name] = (f"{', '.join(absent)} not installed (Debian packages: {', '.join(f.packages)})"
                                   + (f"; {why}" if why else ""))
    return unavailable


# -- running a filter over a stream ----------------------------------------------------------

def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def stream_key(raws: Sequence[bytes], labels: Sequence[str]) -> str:
    """A digest of the stream's content and order (messages and labels)."""
    digest = hashlib.sha256()
    for raw, label in zip(raws, labels):
        digest.update(hashlib.sha256(raw).digest() + label.encode() + b"\0")
    return digest.hexdigest()[:20]


@contextlib.contextmanager
def _daemon(f: ClassicFilter, folder: str, env: dict[str, str], timeout: float = 180.0):
    """Start the filter's server in ``folder``, wait until it answers, stop it (SIGTERM, then wait) at the end."""
    if f.daemon is None:
        yield
        return
    with open(os.path.join(folder, "daemon.log"), "wb") as log_file:
        server = subprocess.Popen(f.daemon(folder), stdout=log_file, stderr=subprocess.STDOUT, env=env, cwd=folder)
        try:
            deadline = time.monotonic() + timeout
            while f.ping is not None and _run(f.ping(folder), env=env).returncode != 0:
                if server.poll() is not None or time.monotonic() > deadline:
                    tail = Path(folder, "daemon.log").read_text(errors="replace")[-1500:]
                    raise ClassicFilterError(f"{f.name}: the server did not start: {tail}")
                time.sleep(0.2)
            yield
        finally:
            server.terminate()
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


class Session:
    """A classic filter's database in a fresh folder (its server running, when it has one):
    messages classified and trained one at a time, each call one process, timed (wall, and
    the CPU of the client process)."""

    def __init__(self, f: ClassicFilter, folder: str, env: dict[str, str], home: str) -> None:
        self.f, self.folder, self.env, self.home = f, folder, env, home
        self.times: dict[str, list[float]] = {key: [] for key in ("classify_wall", "classify_cpu", "train_wall",
                                                                  "train_cpu")}

    def classify(self, raw: bytes) -> Classified:
        """The filter's verdict and score of one message, from the database as it stands."""
        cpu, wall = _child_cpu(), time.perf_counter()
        done = _run(self.f.classify(self.folder), raw, self.env, self.home)
        self.times["classify_wall"].append(time.perf_counter() - wall)
        self.times["classify_cpu"].append(_child_cpu() - cpu)
        return self.f.parse(done.stdout.decode("utf-8", "replace"), done.returncode,
                            done.stderr.decode("utf-8", "replace"))

    def train(self, raw: bytes, label: str, number: int) -> None:
        """Train one message (message ``number`` of the stream, for the error) as ``label``."""
        cpu, wall = _child_cpu(), time.perf_counter()
        done = _run(self.f.train(self.folder, label), raw, self.env, self.home)
        self.times["train_wall"].append(time.perf_counter() - wall)
        self.times["train_cpu"].append(_child_cpu() - cpu)
        if done.returncode != 0:
            raise ClassicFilterError(f"{self.f.name}: training message {number} as {label} exited {done.returncode}: "
                                     f"{done.stderr.decode('utf-8', 'replace').strip()!r}")

    def database_bytes(self) -> int:
        return sum(p.stat().st_size for p in Path(self.folder).rglob("*") if p.is_file() and not p.is_symlink())


@contextlib.contextmanager
def session(f: ClassicFilter):
    """A :class:`Session` on an empty database in a temporary folder ($HOME too, so no user
    configuration is read); the server stopped and the folder removed at the end."""
    with tempfile.TemporaryDirectory(prefix=f"streamnb-{f.name}-") as home:
        folder = os.path.join(home, "db")
        os.mkdir(folder)
        env = {k: v for k, v in os.environ.items() if not k.startswith("BOGOFILTER")}
        env["HOME"] = home
        if f.prepare is not None:
            f.prepare(folder)
        if f.create is not None:
            done = _run(f.create(folder), f.create_stdin, env, home)
            if done.returncode != 0:
                raise ClassicFilterError(f"{f.name}: creating the database failed: "
                                         f"{done.stderr.decode('utf-8', 'replace')}")
        with _daemon(f, folder, env):
            yield Session(f, folder, env, home)


def run_filter(f: ClassicFilter, raws: Sequence[bytes], labels: Sequence[str],
               log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Classify then train every message in order, each call one process; per-message verdicts, scores, times.

    ``child_cpu_seconds`` is the CPU time of every process the run started (the server's
    included, counted when it stops); the per-call ``*_cpu`` lists hold the client
    processes' alone.
    """
    verdicts: list[str] = []
    scores: list[float] = []
    started, started_cpu = time.perf_counter(), _child_cpu()
    with session(f) as run:
        ready = time.perf_counter()
        for i, (raw, label) in enumerate(zip(raws, labels)):
            verdict, score = run.classify(raw)
            verdicts.append(verdict)
            scores.append(score)
            run.train(raw, label, i)
            if log is not None and (i + 1) % 1000 == 0:
                log(f"  {f.name}: {i + 1:,}/{len(raws):,} messages, {time.perf_counter() - started:.0f} s")
        streamed = time.perf_counter() - ready
        database_bytes = run.database_bytes()
    return {"filter": f.name, "version": f.version(), "debian_packages": list(f.packages),
            "debian_version": debian_version(f.packages[0]), "messages": len(raws),
            "stream": stream_key(raws, labels), "wall_seconds": time.perf_counter() - started,
            "stream_seconds": streamed, "child_cpu_seconds": _child_cpu() - started_cpu,
            "database_bytes": database_bytes, "verdicts": verdicts, "scores": scores,
            **{key: [round(t, 6) for t in values] for key, values in run.times.items()}}


def cache_path(f: ClassicFilter, raws: Sequence[bytes], labels: Sequence[str], variant: str = "") -> Path:
    """Where the run of this filter (this version) on this stream is cached; ``variant`` names
    another protocol than classify-then-train-everything (bench_feedback's tasks)."""
    version = re.sub(r"[^A-Za-z0-9.]+", "_", debian_version(f.packages[0]) or f.version() or "unknown")
    return CACHE / f"{f.name}-{variant + '-' if variant else ''}{version}-{len(raws)}-{stream_key(raws, labels)}.json"


def write_cache(record: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(record))
    temporary.replace(path)


def cached(f: ClassicFilter, raws: Sequence[bytes], labels: Sequence[str], variant: str = "") -> dict[str, Any] | None:
    """The cached per-message record of this filter on this stream (under the protocol
    ``variant`` names: :func:`cache_path`), or None."""
    path = cache_path(f, raws, labels, variant)
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def cached_run(f: ClassicFilter, raws: Sequence[bytes], labels: Sequence[str],
               log: Callable[[str], None] | None = None) -> tuple[dict[str, Any], bool]:
    """(per-message record, whether it came from the cache): the cached run of this stream, or a new one."""
    record = cached(f, raws, labels)
    if record is not None:
        return record, True
    record = run_filter(f, raws, labels, log)
    write_cache(record, cache_path(f, raws, labels))
    return record, False


def bayes_window(labels: Sequence[str], spam: int = 200, ham: int = 200) -> int | None:
    """Index of the first message classified after ``spam`` spam and ``ham`` ham were learned, or None.

    SpamAssassin's Bayes gives no probability (0.5) before that (bayes_min_spam_num and
    bayes_min_ham_num, 200 each by default), so (1-AUC)% is also reported from there on.
    """
    seen = {SPAM: 0, HAM: 0}
    for i, label in enumerate(labels):
        if seen[SPAM] >= spam and seen[HAM] >= ham:
            return i
        seen[label] = seen.get(label, 0) + 1
    return None


def summarise(record: dict[str, Any], labels: Sequence[str]) -> dict[str, Any]:
    """The figures of one filter's run (per-message lists left out)."""
    n = record["messages"]
    scores = record["scores"]
    figures = verdict_figures(labels, record["verdicts"], scores)
    figures["one_minus_auc_percent_printed"] = _auc(labels, [printed_score(s) for s in scores])
    window = bayes_window(labels)
    figures["window_start"] = window
    figures["one_minus_auc_percent_window"] = None if window is None else _auc(labels[window:], scores[window:])
    figures["tied_scores"] = {"0": sum(s == 0.0 for s in record["scores"]),
                              "1": sum(s == 1.0 for s in record["scores"])}
    wall = sum(record["classify_wall"]) + sum(record["train_wall"])
    cpu = record["child_cpu_seconds"]
    return {
        **{k: record[k] for k in ("filter", "version", "debian_packages", "debian_version", "database_bytes",
                                  "child_cpu_seconds")},
        **figures,
        "run_seconds": record["wall_seconds"],
        "msg_per_s_wall": n / wall if wall else None,
        "msg_per_s_cpu": n / cpu if cpu else None,
        "ms_per_classify_wall": 1e3 * float(np.median(record["classify_wall"])),
        "ms_per_train_wall": 1e3 * float(np.median(record["train_wall"])),
    }


# -- streamnb's command on the same messages --------------------------------------------------

def streamnb_command_row(raws: Sequence[bytes], labels: Sequence[str]) -> dict[str, Any]:
    """``streamnb evaluate``'s defaults on these messages (in this process), as the command reports them."""
    from streamnb.service import cli

    with tempfile.TemporaryDirectory() as folder:
        report = os.path.join(folder, "report.json")
        args = cli.build_parser().parse_args(["evaluate", "--corpus", "-", "--json", report])
        start_cpu, start = time.process_time(), time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            cli.run_evaluation(list(zip(raws, labels)), args)
        wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        fields = json.loads(Path(report).read_text())
    n = len(raws)
    return {"filter": "streamnb evaluate (defaults, in-process)", "version": common.library_versions()["streamnb"],
            "settings": {**fields["model"], **fields["rule"]},
            "messages": n, "spam": list(labels).count(SPAM), "ham": list(labels).count(HAM),
            "ham_as_spam": fields["verdict_false_positive_rate"], "spam_as_ham": fields["verdict_false_negative_rate"],
            "unsure": fields["unsure_rate"], "decided_accuracy": fields["decided_accuracy"],
            "one_minus_auc_percent": fields["one_minus_auc_percent"],
            "one_minus_auc_percent_window": _streamnb_window_auc(args, raws, labels, fields["one_minus_auc_percent"]),
            "run_seconds": wall, "msg_per_s_wall": n / wall, "msg_per_s_cpu": n / cpu}


def _streamnb_window_auc(args: Any, raws: Sequence[bytes], labels: Sequence[str], whole: float | None) -> float | None:
    """(1-AUC)% of the command's model from :func:`bayes_window` on, or None.

    The command reports no per-message scores, so its model and rule are run again through
    ``progressive_filter`` (the calibrator changes neither the log-odds nor the verdicts);
    the figure is kept only if this run's whole-stream (1-AUC)% equals the command's.
    """
    from streamnb.filter.decision import SpamFilter, progressive_filter
    from streamnb.service.cli_common import build_model, decision_rule, min_per_class

    window = bayes_window(labels)
    if window is None:
        return None
    model = build_model(args)
    spam_filter = SpamFilter(model, decision_rule(args, model), min_per_class=min_per_class(args))
    report = progressive_filter(spam_filter, list(zip(raws, labels)), curve=None)
    if whole is None or not math.isclose(report.one_minus_auc_percent, whole, rel_tol=1e-12, abs_tol=1e-12):
        return None
    return _auc(labels[window:], list(report.log_odds[window:]))


# -- the section --------------------------------------------------------------------------------

def finite(node: Any) -> Any:
    """The figures with NaN (a rate over no message) as None: JSON has no NaN."""
    if isinstance(node, dict):
        return {key: finite(value) for key, value in node.items()}
    if isinstance(node, float) and math.isnan(node):
        return None
    return node


def run(ctx: common.Context) -> dict[str, Any]:
    corpus = ctx.corpus()
    n = min(QUICK_PREFIX, len(corpus)) if ctx.quick else len(corpus)
    raws, labels = corpus.raw[:n], corpus.labels[:n]
    filters = list(FILTERS.values())
    why = "--quick never installs" if ctx.quick else "" if install_allowed() else f"{INSTALL_ENV}=0 forbids installing"
    unavailable = ensure_installed(filters, install=not why, log=ctx.log, why=why)
    rows: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    commands: dict[str, Any] = {}
    for f in filters:
        if f.name in unavailable:
            ctx.log(f"  {f.name}: SKIPPED, {unavailable[f.name]}")
            continue
        ctx.log(f"  {f.name}: {n:,} messages, classify then train, one process per call")
        record = run_filter(f, raws, labels, ctx.log)
        write_cache(record, cache_path(f, raws, labels))
        rows[f.name] = finite(summarise(record, labels))
        settings[f.name] = f.settings()
        commands[f.name] = f.commands()
        r = rows[f.name]
        ctx.log(f"  {f.name}: ham as spam {_percent(r['ham_as_spam'])}%, spam as ham {_percent(r['spam_as_ham'])}%, "
                f"unsure {_percent(r['unsure'], 1)}%, (1-AUC)% {_number(r['one_minus_auc_percent'], 3)}, "
                f"{r['msg_per_s_wall']:.0f} msg/s wall, {r['run_seconds']:.0f} s")
    rows["streamnb"] = finite(streamnb_command_row(raws, labels))
    return {"messages": n, "spam": labels.count(SPAM), "ham": labels.count(HAM), "window_start": bayes_window(labels),
            "rows": rows, "skipped": unavailable, "settings": settings, "commands": commands}


# -- report ---------------------------------------------------------------------------------

def _number(value: float | None, digits: int) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _percent(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{100 * value:.{digits}f}"


def _spamassassin_note(data: dict[str, Any]) -> str | None:
    values = data["settings"].get("spamassassin")
    if not values:
        return None
    top = values.get("BAYES_99", 0.0) + values.get("BAYES_999", 0.0)
    start = data.get("window_start")
    when = f" (message {start + 1:,} of this stream)" if start is not None else " (never, on this stream)"
    return (f"SpamAssassin's verdict is its own (spam when the score reaches required_score "
            f"{values['required_score']:g}). With the Bayes rules alone a message scores at most "
            f"{top:g} (BAYES_99 + BAYES_999), so "
            + ("it can never say spam" if top < values["required_score"] else "it can say spam")
            + "; its Bayes gives no probability (0.5) until it has learned "
            f"{values['bayes_min_spam_num']:.0f} spam and {values['bayes_min_ham_num']:.0f} ham{when}, hence the "
            "(1-AUC)% from there on. Its probability is printed with 4 decimals (_BAYES_).")


def markdown(data: dict[str, Any]) -> list[str]:
    start = data.get("window_start")
    window = f"(1-AUC)% from message {start + 1:,}" if start is not None else "(1-AUC)% from message n/a"
    lines = [f"{data['messages']:,} messages in Date order ({data['spam']:,} spam, {data['ham']:,} ham); each "
             "classified by the filter as it stands, then trained on its true label. Rates in percent of the ham "
             "(ham called spam) or of the spam (spam called ham); unsure is neither. (1-AUC)% from each filter's own "
             "score: at full precision, rounded to 6 decimals (as bogofilter's X-Bogosity header prints it), and "
             "from the first message SpamAssassin's Bayes scores. msg/s: classify + train, wall (per-call process "
             "start included) and CPU of all child processes (spamd's included).", "",
             f"| filter | ham called spam % | spam called ham % | unsure % | accuracy among decided % | (1-AUC)% | "
             f"(1-AUC)% at 6 decimals | {window} | msg/s wall | msg/s CPU | run s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in data["rows"].values():
        label = f"{r['filter']} {r.get('debian_version') or r.get('version') or ''}".strip()
        lines.append(f"| {common.cell(label)} | {_percent(r['ham_as_spam'])} | {_percent(r['spam_as_ham'])} | "
                     f"{_percent(r['unsure'], 1)} | {_percent(r['decided_accuracy'])} | "
                     f"{_number(r['one_minus_auc_percent'], 3)} | {_number(r.get('one_minus_auc_percent_printed'), 3)} | "
                     f"{_number(r.get('one_minus_auc_percent_window'), 3)} | {r['msg_per_s_wall']:,.1f} | "
                     f"{r['msg_per_s_cpu']:,.1f} | {r['run_seconds']:,.0f} |")
    for name, reason in data["skipped"].items():
        lines.append(f"| {name} | skipped: {common.cell(reason)} | | | | | | | | | |")
    lines += ["", "Defaults (compiled in or shipped; no configuration file of ours changes them):", ""]
    for name, values in data["settings"].items():
        lines.append(f"- {name}: " + ", ".join(f"{k} {v:g}" for k, v in values.items()))
    if "streamnb" in data["rows"]:
        settings = data["rows"]["streamnb"]["settings"]
        lines.append("- streamnb evaluate: " + ", ".join(f"{k} {v}" for k, v in settings.items())
                     + ". It runs in this process (no process start per message; its CPU is this process's): its msg/s "
                     "is not comparable.")
    note = _spamassassin_note(data)
    if note:
        lines += ["", note]
    lines += ["", "Commands (DIR: a fresh folder; the message on stdin; one process per call):", ""]
    for name, commands in data["commands"].items():
        lines += [f"- {name}: " + "; ".join(f"{what} `{command}`" for what, command in commands.items())]
    if "spamassassin" in data["commands"]:
        lines += ["", "spamd's rules folder holds only " + ", ".join(SA_FILES) + " (from " + SA_SHARE + "), the "
                  "BAYES_ scores of 50_scores.cf and a .pre loading the Check and Bayes plugins; DIR/site/local.cf "
                  "turns auto-learning off and adds the two headers read back: `"
                  + SA_LOCAL.format(bayes="DIR/bayes").strip().replace("\n", "; ") + "`."]
    return lines


if __name__ == "__main__":
    import sys

    from .suite import main

    raise SystemExit(main(["--only", NAME, *sys.argv[1:]]))
