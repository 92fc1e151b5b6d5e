"""The streamnb command, run for real in a subprocess on mail written here (issue 7)."""

from __future__ import annotations

import email
import json
import mailbox
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import streamnb
from streamnb.service import cli
from tests.state import snapshot

ROOT = Path(__file__).resolve().parents[2]

SPAM_WORDS = ["cheap", "pills", "viagra", "discount", "offer", "winner", "prize", "casino", "loan", "free"]
HAM_WORDS = ["meeting", "agenda", "project", "report", "lunch", "review", "draft", "schedule", "notes", "team"]


def message(i: int, words: list[str], sender: str, subject: str, newline: str = "\n") -> bytes:
    body = " ".join(words[(i + k) % len(words)] for k in range(8))
    lines = [f"From: {sender}", "To: me@example.org", f"Subject: {subject} {i}",
             f"Date: Mon, {1 + i % 28:02d} Sep 2002 10:00:00 +0000", "Message-ID: <%d@x>" % i, "",
             body, f"second line {i} of the body", ""]
    return newline.join(lines).encode()


def spam(i: int) -> bytes:
    return message(i, SPAM_WORDS, "deals@offers.example.com", "Cheap pills")


def ham(i: int) -> bytes:
    return message(i, HAM_WORDS, "alice@work.example.org", "Project meeting")


def run(*args: str, stdin: bytes | None = None, cwd: Path | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {**(os.environ if env is None else env), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "streamnb", *args], input=stdin, capture_output=True,
                          env=environment, cwd=cwd, timeout=120)


N_EACH = 40


@pytest.fixture(scope="module")
def mail(tmp_path_factory) -> dict[str, Path]:
    """A Maildir of ham, an mbox of spam, a folder of single files, and a trained model.

    40 of each: the default rule (LogOddsRule) is cautious while a class is little known
    (spam from log-odds 16 + 800 / hams learned); with 40 of each it decides these messages.
    """
    root = tmp_path_factory.mktemp("mail")
    maildir = mailbox.Maildir(root / "ham_maildir", create=True)
    for i in range(N_EACH):
        maildir.add(ham(i))
    box = mailbox.mbox(root / "spam.mbox", create=True)
    for i in range(N_EACH):
        box.add(spam(i))
    box.flush()
    box.close()
    folder = root / "more"
    folder.mkdir()
    (folder / "s1.eml").write_bytes(spam(50))
    (folder / "h1.eml").write_bytes(ham(50))
    model = root / "model.snb"
    result = run("train", str(model), "--spam", str(root / "spam.mbox"), "--ham", str(root / "ham_maildir"))
    assert result.returncode == 0, result.stderr
    return {"root": root, "maildir": root / "ham_maildir", "mbox": root / "spam.mbox", "folder": folder,
            "model": model}


def test_train_reads_maildir_and_mbox(mail):
    model = streamnb.load(mail["model"])
    assert model.class_counts == {"spam": 40.0, "ham": 40.0}
    # The default model (issue 26): a Fusion of EmailNB over EmailWeights (an EmailTokenizer
    # inside) and a logistic regression over byte 4-grams.
    assert isinstance(model, streamnb.models.Fusion)
    assert isinstance(model.nb, streamnb.EmailNB) and isinstance(model.nb.tokenizer, streamnb.EmailWeights)
    assert isinstance(model.nb.tokenizer.tokenizer, streamnb.EmailTokenizer)
    assert isinstance(model.lr, streamnb.LogisticRegression) and isinstance(model.lr.tokenizer, streamnb.ByteNgrams)
    assert model.lr.class_counts == {"spam": 40.0, "ham": 40.0}


def test_classify_one_message_exit_codes(mail):
    spam_result = run("classify", str(mail["model"]), stdin=spam(99))
    assert spam_result.returncode == 0, spam_result.stderr
    assert spam_result.stdout.decode().split("\t")[0] == "spam"
    ham_result = run("classify", str(mail["model"]), stdin=ham(99))
    assert ham_result.returncode == 1
    assert ham_result.stdout.decode().startswith("ham\t")
    # a message with no clue either way: unsure
    neutral = b"From: x@y.example\nSubject: hello\n\nzzz qqq\n"
    unsure = run("classify", str(mail["model"]), stdin=neutral)
    assert unsure.returncode == 2 and unsure.stdout.decode().startswith("unsure")


def test_min_per_class_keeps_a_young_filter_unsure(mail, tmp_path):
    young = tmp_path / "young.snb"
    assert run("train", str(young), "--spam", str(mail["folder"] / "s1.eml"),
               "--ham", str(mail["folder"] / "h1.eml")).returncode == 0
    result = run("classify", str(young), stdin=spam(3))
    assert result.returncode == 2  # the default rule's caution: spam only from log-odds 16 + 800 / 1
    eager = ("--caution", "0", "--spam-log-odds", "0", "--ham-log-odds", "0")  # spam iff log-odds >= 0
    assert run("classify", str(young), *eager, stdin=spam(3)).returncode == 0
    assert run("classify", str(young), *eager, "--min-per-class", "2", stdin=spam(3)).returncode == 2
    assert run("classify", str(young), "--rule", "chi2", stdin=spam(3)).returncode == 2  # chi2: 10 a class
    assert run("classify", str(young), "--rule", "chi2", "--min-per-class", "1", stdin=spam(3)).returncode == 0


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_tag_adds_headers_and_keeps_the_body_byte_for_byte(mail, newline):
    raw = message(7, SPAM_WORDS, "deals@offers.example.com", "Cheap pills", newline=newline)
    raw += f"trailing  spaces   {newline}=E9 binary \xe9{newline}".encode("latin-1")
    result = run("classify", str(mail["model"]), "--tag", stdin=raw)
    assert result.returncode == 0
    tagged = result.stdout
    parsed = email.message_from_bytes(tagged)
    assert parsed["X-StreamNB-Status"] == "spam"
    assert 0.9 <= float(parsed["X-StreamNB-Score"]) <= 1.0
    assert parsed["Subject"] == "Cheap pills 7"
    sep = newline.encode() * 2
    assert tagged.split(sep, 1)[1] == raw.split(sep, 1)[1]
    # classifying a tagged message again replaces the tags
    again = run("classify", str(mail["model"]), "--tag", stdin=tagged).stdout
    assert again.count(b"X-StreamNB-Status:") == 1


def test_classify_many_messages_one_line_each(mail):
    result = run("classify", str(mail["model"]), str(mail["folder"]), str(mail["mbox"]))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    assert len(lines) == 2 + N_EACH
    verdicts = {Path(line.split("\t")[0]).name: line.split("\t")[1] for line in lines[:2]}
    assert verdicts == {"h1.eml": "ham", "s1.eml": "spam"}
    assert all(line.split("\t")[1] == "spam" for line in lines[2:])


def fused_scores(model, probes: list[bytes]) -> list[float]:
    """Everything a default model's verdict reads: the fused log-odds, each part's, the stacker's weights."""
    return ([model.log_odds_one(p) for p in probes] + [z for p in probes for z in model.part_log_odds(p)]
            + list(model.weights))


def largest_change(a: list[float], b: list[float]) -> float:
    return max(abs(x - y) for x, y in zip(a, b))


def test_learn_then_unlearn_restores_the_model(mail, tmp_path):
    """Issue 34: the model file keeps the steps logistic regression and the stacker took, so
    ``streamnb unlearn`` right after ``streamnb learn`` gives every score back."""
    model_file = tmp_path / "model.snb"
    model_file.write_bytes(mail["model"].read_bytes())
    original = streamnb.load(model_file)
    before = snapshot(original.nb)
    learned = run("learn", str(model_file), "--spam", str(mail["folder"] / "h1.eml"))  # a misfiled ham
    assert learned.returncode == 0, learned.stderr
    misled = streamnb.load(model_file)
    assert misled.class_counts["spam"] == 41.0
    unlearned = run("unlearn", str(model_file), "--spam", str(mail["folder"] / "h1.eml"))
    assert unlearned.returncode == 0, unlearned.stderr
    restored = streamnb.load(model_file)
    assert snapshot(restored.nb) == before  # naive Bayes: exactly
    probes = [(mail["folder"] / "h1.eml").read_bytes(), spam(60), ham(61), b"Subject: hi\n\ncheap meeting\n"]
    assert largest_change(fused_scores(misled, probes), fused_scores(original, probes)) > 0.5
    assert largest_change(fused_scores(restored, probes), fused_scores(original, probes)) <= 1e-9


def test_learning_a_message_as_the_other_class_moves_it_exactly(mail, tmp_path):
    """With a ledger, ``streamnb learn`` of a message learned as the other class moves it in
    one call: the model is the one that only ever learned it in its new class."""
    moved, direct = tmp_path / "moved.snb", tmp_path / "direct.snb"
    assert run("train", str(moved), "--ledger", "1000", "--spam", str(mail["mbox"]),
               "--ham", str(mail["maildir"])).returncode == 0
    direct.write_bytes(moved.read_bytes())
    h1 = str(mail["folder"] / "h1.eml")
    assert run("learn", str(moved), "--spam", h1).returncode == 0  # misfiled
    result = run("learn", str(moved), "--ham", h1)  # the user files it again, as ham
    assert result.returncode == 0, result.stderr
    assert run("learn", str(direct), "--ham", h1).returncode == 0
    a, b = streamnb.load(moved), streamnb.load(direct)
    assert a.class_counts == b.class_counts == {"spam": 40.0, "ham": 41.0}
    assert snapshot(a.nb) == snapshot(b.nb)
    probes = [(mail["folder"] / "h1.eml").read_bytes(), spam(60), ham(61)]
    assert largest_change(fused_scores(a, probes), fused_scores(b, probes)) <= 1e-9


def test_unlearn_after_other_lessons_replays_them(mail, tmp_path):
    """The model file keeps the window of documents: ``streamnb unlearn`` of a lesson learned
    before ten others (each in its own run, so the file was saved and loaded between) gives
    logistic regression's scores of the model that learned only the others."""
    model_file, never = tmp_path / "model.snb", tmp_path / "never.snb"
    model_file.write_bytes(mail["model"].read_bytes())
    never.write_bytes(mail["model"].read_bytes())
    lesson = str(mail["folder"] / "h1.eml")
    assert run("learn", str(model_file), "--spam", lesson).returncode == 0  # misfiled
    others = tmp_path / "others"
    others.mkdir()
    for i in range(5):
        (others / f"s{i}.eml").write_bytes(spam(80 + i))
        (others / f"h{i}.eml").write_bytes(ham(90 + i))
    for path in sorted(others.iterdir()):
        for target in (model_file, never):
            option = "--spam" if path.name.startswith("s") else "--ham"
            assert run("learn", str(target), option, str(path)).returncode == 0
    result = run("unlearn", str(model_file), "--spam", lesson)
    assert result.returncode == 0, result.stderr
    a, b = streamnb.load(model_file), streamnb.load(never)
    probes = [Path(lesson).read_bytes(), spam(60), ham(61), b"Subject: hi\n\ncheap meeting\n"]
    assert largest_change([a.part_log_odds(p)[1] for p in probes], [b.part_log_odds(p)[1] for p in probes]) <= 1e-9
    assert snapshot(a.nb) == snapshot(b.nb)


def test_email_nb_unlearns_exactly_through_the_command(mail, tmp_path):
    """Issue 15: train, learn one message, unlearn it: every score is the model's that never saw it."""
    learned, never = tmp_path / "learned.snb", tmp_path / "never.snb"
    assert run("train", str(learned), "--model-type", "email", "--spam", str(mail["mbox"]),
               "--ham", str(mail["maildir"])).returncode == 0
    never.write_bytes(learned.read_bytes())
    novel = message(70, ["quarterly", "invoice", "unsubscribe", "meeting", "cheap"], "newsletter@news.example.net",
                    "Your quarterly invoice")
    (tmp_path / "novel.eml").write_bytes(novel)  # new words, a new sender: it grows the vocabulary
    (tmp_path / "later.eml").write_bytes(spam(71))
    assert run("learn", str(learned), "--ham", str(tmp_path / "novel.eml")).returncode == 0
    for path in (learned, never):  # something learned after it: the unlearned message is not the last
        assert run("learn", str(path), "--spam", str(tmp_path / "later.eml")).returncode == 0
    between = streamnb.load(learned)
    assert between.predict_log_proba_one(novel) != streamnb.load(never).predict_log_proba_one(novel)
    result = run("unlearn", str(learned), "--ham", str(tmp_path / "novel.eml"))
    assert result.returncode == 0, result.stderr
    a, b = streamnb.load(learned), streamnb.load(never)
    assert isinstance(a, streamnb.EmailNB)
    assert snapshot(a) == snapshot(b)
    probes = [novel, spam(80), ham(80), b"Subject: hello\n\nzzz cheap meeting quarterly\n"]
    for probe in probes:  # bit for bit, not approximately
        assert a.predict_log_proba_one(probe) == b.predict_log_proba_one(probe)
    folder = tmp_path / "probes"
    folder.mkdir()
    for i, probe in enumerate(probes):
        (folder / f"{i}.eml").write_bytes(probe)
    verdicts = [run("classify", str(path), str(folder)).stdout for path in (learned, never)]
    assert verdicts[0] == verdicts[1] and verdicts[0].count(b"\n") == len(probes)


def test_the_command_s_email_defaults_are_email_nb_s():
    # cli.py restates them (so that `streamnb classify` starts without importing the model)
    from streamnb import EmailNB
    from streamnb.service import cli

    model = EmailNB()
    assert (cli.DEFAULT_ALPHA["email"], cli.DEFAULT_MU["email"]) == (model.alpha, model.mu) == (0.3, 100.0)


def test_evaluate_writes_a_json_report(mail, tmp_path):
    report_file = tmp_path / "report.json"
    result = run("evaluate", "--spam", str(mail["mbox"]), "--ham", str(mail["maildir"]),
                 "--min-per-class", "2", "--json", str(report_file), "--also-orders", "file,shuffle:1")
    assert result.returncode == 0, result.stderr
    report = json.loads(report_file.read_text())
    assert report["messages"] == 2 * N_EACH
    for key in ("accuracy", "false_positive_rate", "false_negative_rate", "one_minus_auc_percent",
                "ece", "ece_calibrated", "unsure_rate", "log_loss", "brier", "per_class", "verdict_counts",
                "class_counts", "error_counts"):
        assert key in report
    assert 0.5 <= report["accuracy"] <= 1.0
    assert set(report["per_class"]) == {"ham", "spam"}
    assert report["model"]["type"] == "fusion" and report["rule"]["name"] == "logodds"  # the defaults
    assert (report["rule"]["ham_log_odds"], report["rule"]["spam_log_odds"]) == (-2.0, 3.0)  # the fusion's
    out = result.stdout.decode()
    assert "model argmax: accuracy" in out
    # The table shows the verdicts' error rates and counts as the report holds them.
    # The true classes, the verdicts and the errors apart (the verdicts sum to the messages: issue 35).
    assert report["class_counts"] == {"ham": N_EACH, "spam": N_EACH}
    counts = report["verdict_counts"]
    assert set(counts) == {"ham", "spam", "unsure"} and sum(counts.values()) == report["messages"]
    errors = report["error_counts"]
    assert set(errors) == {"ham_as_spam", "spam_as_ham"}
    assert errors["ham_as_spam"] <= counts["spam"] and errors["spam_as_ham"] <= counts["ham"]
    ham_as_spam = f"{report['verdict_false_positive_rate']:.2%} ({errors['ham_as_spam']} of {N_EACH})"
    unsure = f"{report['unsure_rate']:.2%} ({counts['unsure']} of {2 * N_EACH})"
    lines = out.splitlines()
    assert any(line.startswith("verdict spam on ham (ham called spam)") and line.endswith(ham_as_spam)
               for line in lines)
    assert any(line.startswith("unsure (logodds") and line.endswith(unsure) for line in lines)
    # ... and the same settings on the other orders asked for, the main run first.
    assert [row["order"] for row in report["orders"]] == ["date", "file", "shuffle (seed 1)"]
    assert report["orders"][0]["unsure"] == report["unsure_rate"]
    assert any(line.startswith("shuffle (seed 1)") for line in lines)
    bad = run("evaluate", "--spam", str(mail["mbox"]), "--ham", str(mail["maildir"]), "--also-orders", "sideways")
    assert bad.returncode == 3 and b"--also-orders" in bad.stderr


def test_inspect(mail):
    result = run("inspect", str(mail["model"]), "--top", "3")
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode()
    assert "'spam': 40 messages" in out and "'ham': 40 messages" in out
    assert "top 3 tokens for 'spam'" in out


def test_train_from_jsonl_and_csv(tmp_path):
    rows = [{"text": " ".join(SPAM_WORDS[i:i + 4]), "label": "spam"} for i in range(5)]
    rows += [{"text": " ".join(HAM_WORDS[i:i + 4]), "label": "ham"} for i in range(5)]
    jsonl = tmp_path / "data.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in rows))
    csv_file = tmp_path / "data.csv"
    csv_file.write_text("text,label\n" + "\n".join(f"{r['text']},{r['label']}" for r in rows))
    for data in (jsonl, csv_file):
        model_file = tmp_path / f"{data.suffix[1:]}.snb"
        result = run("train", str(model_file), "--data", str(data), "--tokenizer", "words")
        assert result.returncode == 0, result.stderr
        assert streamnb.load(model_file).class_counts == {"spam": 5.0, "ham": 5.0}


# -- bad input: one line on stderr, exit code 3, the model file untouched -------------------------

def assert_error(result: subprocess.CompletedProcess, *needles: str) -> None:
    assert result.returncode == 3, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.decode().strip().splitlines()
    assert len(lines) == 1, lines
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.fixture
def model_copy(mail, tmp_path) -> Path:
    target = tmp_path / "model.snb"
    target.write_bytes(mail["model"].read_bytes())
    return target


def test_unreadable_path(model_copy):
    before = model_copy.read_bytes()
    assert_error(run("learn", str(model_copy), "--spam", "/no/such/folder"), "/no/such/folder", "no such file")
    assert model_copy.read_bytes() == before


def test_empty_mailbox(model_copy, tmp_path):
    empty = tmp_path / "empty.mbox"
    empty.write_bytes(b"")
    before = model_copy.read_bytes()
    assert_error(run("learn", str(model_copy), "--ham", str(empty)), "empty.mbox", "empty")
    folder = tmp_path / "empty_maildir"
    mailbox.Maildir(folder, create=True)
    assert_error(run("learn", str(model_copy), "--ham", str(folder)), "no mail message")
    assert model_copy.read_bytes() == before


def test_non_mail_file(model_copy, tmp_path):
    picture = tmp_path / "picture.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    before = model_copy.read_bytes()
    assert_error(run("learn", str(model_copy), "--spam", str(picture)), "picture.png", "not a mail message")
    assert_error(run("classify", str(model_copy), stdin=picture.read_bytes()), "not a mail message")
    assert model_copy.read_bytes() == before


def test_corrupt_model_file(tmp_path):
    broken = tmp_path / "broken.snb"
    broken.write_bytes(b"PK\x03\x04 this is not a model")
    before = broken.read_bytes()
    assert_error(run("classify", str(broken), stdin=spam(1)), "broken.snb")
    (tmp_path / "one.eml").write_bytes(spam(1))
    assert_error(run("learn", str(broken), "--spam", str(tmp_path / "one.eml")), "broken.snb")
    assert broken.read_bytes() == before
    assert_error(run("inspect", str(tmp_path / "missing.snb")), "does not exist")


def test_missing_label_column(model_copy, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"text": "cheap pills", "category": "spam"}) + "\n")
    before = model_copy.read_bytes()
    assert_error(run("learn", str(model_copy), "--data", str(data)), "'label'", "category")
    assert model_copy.read_bytes() == before


def test_unlearning_what_was_never_learned(model_copy):
    before = model_copy.read_bytes()
    never = model_copy.parent / "never.eml"
    never.write_bytes(b"From: a@b.example\nSubject: unheard of\n\nxylophone quasar\n")
    assert_error(run("unlearn", str(model_copy), "--spam", str(never)), "never learned")
    assert model_copy.read_bytes() == before


def test_train_refuses_to_overwrite(mail):
    before = mail["model"].read_bytes()
    assert_error(run("train", str(mail["model"]), "--spam", str(mail["mbox"])), "exists")
    assert mail["model"].read_bytes() == before


def test_usage_errors_exit_3():
    result = run("classify")
    assert result.returncode == 3
    assert "error" in result.stderr.decode()


def test_demo_without_a_corpus_says_how_to_get_it(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "STREAMNB_SPAMASSASSIN"}
    env["STREAMNB_CACHE"] = str(tmp_path / "empty-cache")  # no cached download either
    result = run("demo", "--out", str(tmp_path / "out"), cwd=tmp_path, env=env)
    assert_error(result, "STREAMNB_SPAMASSASSIN", "--corpus PATH", "--download")
    assert not (tmp_path / "out").exists()


# -- many writers at once (issue 16): the write lock around load-learn-save ------------------------

def unique_message(i: int, kind: str) -> bytes:
    words = SPAM_WORDS if kind == "spam" else HAM_WORDS
    return message(i, words, "someone@example.net", f"{kind} {i}") + f"solo{i:04d}\n".encode()


def present(model, token: str) -> dict:
    """Messages of each class holding token: the naive Bayes counts (a fusion's naive Bayes part)."""
    counts = getattr(model, "nb", model).feature_doc_counts(token)
    return {label: count for label, count in counts.items() if count}


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "streamnb", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})


def _command(argv: list[str]) -> None:
    from streamnb.service.cli import main

    sys.stdout = open(os.devnull, "w")
    sys.exit(main(argv))


def run_at_once(*commands: list[str]) -> None:
    """Each command in its own process, all started together; every one must succeed.

    The processes are forked from this one (streamnb already imported), so they reach the
    model file within milliseconds of each other instead of after an interpreter start each.
    """
    context = multiprocessing.get_context("fork")
    processes = [context.Process(target=_command, args=(argv,)) for argv in commands]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=300)
    assert [process.exitcode for process in processes] == [0] * len(processes)


def test_sixteen_concurrent_learns_on_one_file_add_sixteen_messages(model_copy, tmp_path):
    before = streamnb.load(model_copy).class_counts
    files = []
    for i in range(16):
        kind = "spam" if i % 2 else "ham"
        files.append((tmp_path / f"m{i}.eml", kind))
        files[-1][0].write_bytes(unique_message(i, kind))
    run_at_once(*[["learn", str(model_copy), f"--{kind}", str(path)] for path, kind in files])
    model = streamnb.load(model_copy)
    assert model.class_counts == {"spam": before["spam"] + 8, "ham": before["ham"] + 8}
    for i, (_, kind) in enumerate(files):
        assert present(model, f"solo{i:04d}") == {kind: 1.0}


def test_concurrent_learns_and_unlearns_each_take_effect(model_copy, tmp_path):
    paths = []
    for i in range(8):
        paths.append(tmp_path / f"u{i}.eml")
        paths[-1].write_bytes(unique_message(100 + i, "spam"))
    assert run("learn", str(model_copy), *[arg for p in paths[:4] for arg in ("--spam", str(p))]).returncode == 0
    before = streamnb.load(model_copy).class_counts
    run_at_once(*[["unlearn", str(model_copy), "--spam", str(p)] for p in paths[:4]],
                *[["learn", str(model_copy), "--spam", str(p)] for p in paths[4:]])
    model = streamnb.load(model_copy)
    assert model.class_counts == before
    assert [present(model, f"solo{100 + i:04d}") for i in range(8)] == [{}] * 4 + [{"spam": 1.0}] * 4


def test_concurrent_train_force_leaves_one_whole_model(mail, tmp_path):
    target = tmp_path / "model.snb"
    sources = []
    for k in range(4):  # four different training sets: k + 1 spam each
        folder = tmp_path / f"set{k}"
        folder.mkdir()
        for i in range(k + 1):
            (folder / f"{i}.eml").write_bytes(unique_message(10 * k + i, "spam"))
        sources.append(folder)
    run_at_once(*[["train", str(target), "--force", "--spam", str(folder), "--ham", str(mail["folder"] / "h1.eml")]
                  for folder in sources])
    model = streamnb.load(target)
    k = int(model.class_counts["spam"]) - 1  # one of the four models, whole
    assert 0 <= k < 4 and model.class_counts == {"spam": k + 1.0, "ham": 1.0}
    assert all(present(model, f"solo{10 * k + i:04d}") == {"spam": 1.0} for i in range(k + 1))


def test_train_with_a_ledger_learns_a_message_once(mail, tmp_path):
    target = tmp_path / "ledger.snb"
    assert run("train", str(target), "--spam", str(mail["mbox"]), "--ham", str(mail["maildir"]),
               "--ledger", "1000").returncode == 0
    assert streamnb.load(target).ledger == 1000
    one = str(mail["folder"] / "s1.eml")
    run_at_once(["learn", str(target), "--spam", one], ["learn", str(target), "--spam", one])
    assert streamnb.load(target).class_counts == {"spam": 41.0, "ham": 40.0}  # twice as spam: once
    run_at_once(["learn", str(target), "--ham", one])
    assert streamnb.load(target).class_counts == {"spam": 40.0, "ham": 41.0}  # as ham: moved


def test_learn_waits_for_the_write_lock(model_copy, tmp_path):
    from streamnb.service import journal

    lesson = tmp_path / "late.eml"
    lesson.write_bytes(unique_message(7, "ham"))
    before = streamnb.load(model_copy).class_counts
    with journal.write_lock(model_copy):
        process = start("learn", str(model_copy), "--ham", str(lesson))
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(timeout=2)  # blocked on the lock: the file is ours until we let go
        assert streamnb.load(model_copy).class_counts == before
    _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert streamnb.load(model_copy).class_counts == {"spam": before["spam"], "ham": before["ham"] + 1}


def test_classify_imports_only_what_it_needs(mail, tmp_path):
    """One message classified on the default model (a fusion, its ledger and kept steps)
    without numpy, scipy, calibration, plots, corpus code (streamnb/_lazy.py)."""
    model = tmp_path / "default.snb"
    assert run("train", str(model), "--spam", str(mail["mbox"]), "--ham", str(mail["maildir"])).returncode == 0
    script = ("import io, json, sys\n"
              "from streamnb.service.cli import main\n"
              "sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[2].encode()))\n"
              "code = main(['classify', sys.argv[1]])\n"
              "print(json.dumps({'code': code, 'modules': sorted(sys.modules)}))\n")
    saved_from_a_mailbox = "From deals@offers.example.com Thu Jun 28 04:04:45 2001\n" + spam(5).decode()
    result = subprocess.run([sys.executable, "-c", script, str(model), saved_from_a_mailbox],
                            capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.decode().splitlines()[-1])
    assert report["code"] == 0  # spam
    modules = set(report["modules"])
    for unwanted in ("numpy", "scipy", "scipy.special", "scipy.sparse._csr", "scipy.stats", "streamnb.filter.calibrate",
                     "streamnb.filter.datasets", "streamnb.filter.plots", "streamnb.integrations.river", "streamnb.service.serve",
                     "matplotlib", "river", "sklearn", "pandas", "filelock",
                     "asyncio", "tarfile", "urllib.request", "logging.handlers", "mailbox"):
        assert unwanted not in modules, unwanted


# -- user mistakes (issue 28): one line naming what was wrong, nothing created, nothing changed ----

@pytest.mark.parametrize("argv, needles", [
    ([], ["a command is needed"]),
    (["train", "x.snb", "--alpha", "abc"], ["--alpha", "a finite number > 0", "'abc'"]),
    (["train", "x.snb", "--ledger", "-2"], ["--ledger", "an integer >= 0"]),
    (["classify", "m.snb", "--evidence", "-3"], ["--evidence", "an integer >= 0", "'-3'"]),
    (["classify", "m.snb", "--spam-log-odds", "nan"], ["--spam-log-odds", "a finite number"]),
    (["classify", "m.snb", "--min-per-class", "-1"], ["--min-per-class", ">= 0"]),
    (["classify", "m.snb", "--ham-cutoff", "2"], ["--ham-cutoff", "from 0 to 1"]),
    (["classify", "m.snb", "--bogus"], ["unrecognized arguments: --bogus"]),
    (["inspect", "m.snb", "--top", "-1"], ["--top", "an integer >= 0"]),
    (["evaluate", "--seed", "-1"], ["--seed", "an integer >= 0"]),
    (["serve", "--models", "d", "--port", "99999"], ["--port", "0 to 65535", "'99999'"]),
    (["serve", "--models", "d", "--port", "http"], ["--port", "'http'"]),
    (["serve", "--models", "d", "--read-only", "--allow-tell"], ["--read-only", "--allow-tell"]),
    (["serve", "--port", "0"], ["--models DIR is needed", "--store"]),
    (["serve", "--models", "d", "--workers", "0"], ["--workers", "an integer >= 1", "'0'"]),
    (["serve", "--models", "d", "--syslog", "frob"], ["--syslog", "'frob'", "'local0'", "'mail'"]),
])
def test_usage_errors_are_one_line_that_names_the_option(argv, needles, tmp_path):
    result = run(*argv, cwd=tmp_path)
    assert_error(result, *needles)
    assert "usage:" not in result.stderr.decode()
    assert list(tmp_path.iterdir()) == []


def test_rule_options_that_contradict_each_other_are_named(model_copy):
    assert_error(run("classify", str(model_copy), "--ham-log-odds", "20", "--spam-log-odds", "10", stdin=spam(1)),
                 "--ham-log-odds", "--spam-log-odds")
    assert_error(run("classify", str(model_copy), "--rule", "posterior", "--ham-cutoff", "0.95", stdin=spam(1)),
                 "--ham-cutoff", "--spam-cutoff")


@pytest.mark.parametrize("option, instead", [("--spam-cutoff", "--spam-log-odds"), ("--ham-cutoff", "--ham-log-odds")])
def test_a_score_cutoff_is_refused_by_the_log_odds_rule_it_would_not_move(model_copy, option, instead):
    # The logodds rule decides on log-odds: a score cutoff would change no verdict, so it is
    # refused, naming the option that moves that rule's verdicts.
    assert_error(run("classify", str(model_copy), option, "0.5", stdin=spam(1)), option, instead, "no verdict")
    assert_error(run("classify", str(model_copy), "--rule", "chi2", "--caution", "1", stdin=spam(1)), "--caution")


def test_options_after_the_message_file(mail, tmp_path):
    one = mail["folder"] / "s1.eml"
    tagged = run("classify", str(mail["model"]), "--tag", str(one))
    assert tagged.returncode == 0, tagged.stderr  # spam: the exit code of one message
    assert tagged.stdout == run("classify", str(mail["model"]), "--tag", stdin=one.read_bytes()).stdout
    assert b"X-StreamNB-Status: spam" in tagged.stdout
    clues = run("classify", str(mail["model"]), "--evidence", "3", str(one))
    assert clues.returncode == 0, clues.stderr
    lines = clues.stdout.decode().splitlines()
    assert lines[0].startswith("spam\t") and len(lines) == 4 and all(line.startswith("  ") for line in lines[1:])
    assert clues.stdout == run("classify", str(mail["model"]), "--evidence", "3", stdin=one.read_bytes()).stdout
    # the sources may also come on both sides of an option
    both = run("classify", str(mail["model"]), str(one), "--rule", "logodds", str(mail["folder"] / "h1.eml"))
    assert [line.split("\t")[1] for line in both.stdout.decode().splitlines()] == ["spam", "ham"]


def test_tag_and_evidence_take_one_message_and_not_together(mail):
    assert_error(run("classify", str(mail["model"]), "--tag", "--evidence", "3", stdin=spam(1)), "--tag", "--evidence")
    assert_error(run("classify", str(mail["model"]), "--tag", str(mail["maildir"])), "--tag", "one message",
                 "40 messages")


def test_inspect_top(mail):
    zero = run("inspect", str(mail["model"]), "--top", "0")
    assert zero.returncode == 0 and "top " not in zero.stdout.decode()
    two = run("inspect", str(mail["model"]), "--top", "2").stdout.decode().splitlines()
    assert len([line for line in two if line.startswith("  ")]) == 4  # 2 tokens for each of the 2 classes


def read_some_then_close(*args: str, lines: int = 1) -> tuple[int, bytes]:
    """Run the command into a pipe, read a few lines and close the pipe, as `| head -1` does."""
    process = subprocess.Popen([sys.executable, "-m", "streamnb", *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    for _ in range(lines):
        process.stdout.readline()
    process.stdout.close()
    _, err = process.communicate(timeout=120)
    return process.returncode, err


def test_a_reader_that_goes_away_stops_the_command_quietly(mail, tmp_path):
    many = tmp_path / "many.mbox"
    box = mailbox.mbox(many, create=True)
    for i in range(3000):  # more lines than a pipe holds
        box.add(ham(i))
    box.close()
    assert read_some_then_close("classify", str(mail["model"]), str(many)) == (141, b"")
    # a model of thousands of features: its listing is more than a pipe holds, whatever the timing
    big = tmp_path / "big.snb"
    assert run("train", str(big), "--spam", str(mail["mbox"]), "--ham", str(many)).returncode == 0
    assert read_some_then_close("inspect", str(big), "--top", "20000") == (141, b"")


def test_paths_with_typos_create_nothing(mail, tmp_path):
    missing = tmp_path / "no" / "such"
    assert_error(run("train", str(missing / "x.snb"), "--spam", str(mail["mbox"])), str(missing), "does not exist")
    assert_error(run("evaluate", "--spam", str(mail["mbox"]), "--ham", str(mail["maildir"]), "--json",
                     str(missing / "r.json")), "--json", "does not exist")
    assert_error(run("evaluate", "--spam", str(mail["mbox"]), "--ham", str(mail["maildir"]), "--plots",
                     str(missing / "plots")), "--plots", "does not exist")
    assert_error(run("demo", "--out", str(missing / "out")), "--out", "does not exist")
    assert_error(run("serve", "--models", str(missing)), str(missing), "does not exist")
    assert not (tmp_path / "no").exists()
    # learn on a model file that is not there leaves no lock file behind
    assert_error(run("learn", str(tmp_path / "typo.snb"), "--spam", str(mail["mbox"])), "typo.snb", "does not exist")
    assert list(tmp_path.iterdir()) == []


def test_a_folder_where_a_file_belongs_and_back(mail, tmp_path):
    assert_error(run("classify", str(mail["maildir"]), stdin=spam(1)), "ham_maildir", "is a folder, not a model file")
    assert_error(run("train", str(tmp_path / "x.snb"), "--data", str(mail["maildir"])), "is a folder", ".jsonl")
    assert list(tmp_path.iterdir()) == []  # not even a lock file
    assert_error(run("train", str(mail["maildir"]), "--spam", str(mail["mbox"])), "is a folder")
    assert_error(run("serve", "--models", str(mail["model"])), "model.snb", "is a file, not a folder")


def test_devices_are_neither_read_nor_replaced(mail, tmp_path):
    assert_error(run("classify", "/dev/zero", stdin=spam(1)), "/dev/zero", "a device")
    assert_error(run("learn", str(mail["model"]), "--spam", "/dev/zero"), "/dev/zero", "a device")
    assert_error(run("train", "/dev/null", "--force", "--spam", str(mail["mbox"])), "/dev/null", "not a file")
    assert Path("/dev/null").is_char_device()
    report = run("evaluate", "--spam", str(mail["mbox"]), "--ham", str(mail["maildir"]), "--json", "/dev/stdout",
                 "--also-orders", "none")
    assert report.returncode == 0, report.stderr
    assert b'"messages": 80' in report.stdout  # the JSON, written where asked


def test_a_model_file_where_no_file_can_be_made_fails_at_once(mail):
    started = time.monotonic()
    assert_error(run("train", "/proc/streamnb-test.snb", "--spam", str(mail["mbox"])), "/proc/streamnb-test.snb.lock")
    assert time.monotonic() - started < 30  # it waited ten minutes for a lock it could never take


def test_counts_are_printed_as_whole_numbers(mail, tmp_path):
    target = tmp_path / "m.snb"
    trained = run("train", str(target), "--spam", str(mail["folder"] / "s1.eml"), "--ham", str(mail["maildir"]))
    assert trained.returncode == 0, trained.stderr
    assert "on 41 messages (ham 40, spam 1)" in trained.stdout.decode()  # classes in the order learned (Date order)
    (tmp_path / "s2.eml").write_bytes(spam(51))
    learned = run("learn", str(target), "--spam", str(tmp_path / "s2.eml"))
    assert learned.stdout.decode().startswith("learned 1 message; classes now ham 40, spam 2; saved ")


def test_a_mailbox_of_one_message_is_named_by_its_path(mail, tmp_path):
    single = tmp_path / "single.mbox"
    box = mailbox.mbox(single, create=True)
    box.add(spam(3))
    box.close()
    result = run("classify", str(mail["model"]), str(single), str(mail["mbox"]))
    lines = result.stdout.decode().splitlines()
    assert lines[0].split("\t")[0] == str(single)
    assert lines[1].split("\t")[0] == f"{mail['mbox']}#0"


def test_learning_twice_without_a_ledger_is_said(mail, tmp_path):
    one = str(mail["folder"] / "s1.eml")
    trained = run("train", str(tmp_path / "twice.snb"), "--spam", one, "--spam", one, "--ham", str(mail["maildir"]),
                  "--ledger", "0")
    assert trained.returncode == 0 and "messages repeated in the sources count again (1 of 42)" in trained.stderr.decode()
    learned = run("learn", str(tmp_path / "twice.snb"), "--spam", one)
    assert learned.returncode == 0
    assert "has no ledger" in learned.stderr.decode() and "counts again" in learned.stderr.decode()
    with_ledger = run("train", str(tmp_path / "ledger.snb"), "--spam", one, "--ham", str(mail["maildir"]),
                      "--ledger", "100")
    assert with_ledger.returncode == 0 and with_ledger.stderr == b""
    assert run("learn", str(tmp_path / "ledger.snb"), "--spam", one).stderr == b""


def test_an_email_nb_model_file_keeps_its_own_cutoffs(mail, tmp_path):
    """Issue 26: old model files keep scoring as they did. An EmailNB file (what `train` made
    before the fusion became the default) is judged with EmailNB's LogOddsRule (spam from 16,
    ham below -5, caution 8), not the fusion's."""
    from streamnb.filter.decision import LogOddsRule, SpamFilter

    target = tmp_path / "email.snb"
    assert run("train", str(target), "--model-type", "email", "--spam", str(mail["mbox"]),
               "--ham", str(mail["maildir"])).returncode == 0
    model = streamnb.load(target)
    assert isinstance(model, streamnb.EmailNB)
    for message in (spam(90), ham(90)):
        verdict = SpamFilter(model, LogOddsRule(-5.0, 16.0, 8.0)).classify(message)
        printed = run("classify", str(target), stdin=message).stdout.decode().split("\t")
        assert printed[0] == verdict.label and float(printed[1]) == pytest.approx(verdict.score, abs=1e-6)


# -- issue 35: the command as a new user finds it ------------------------------------------------

def test_standard_input_is_capped_at_max_size(mail):
    """`classify MODEL < /dev/zero` stops after --max-size bytes, with one line (it read 10.5 GB)."""
    started = time.monotonic()
    with open("/dev/zero", "rb") as zero:
        result = subprocess.run([sys.executable, "-m", "streamnb", "classify", str(mail["model"])], stdin=zero,
                                capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert_error(result, "standard input holds more than 512,000 bytes (--max-size)")
    assert time.monotonic() - started < 30
    big = spam(1) + b"padding " * 20_000  # 160 kB: under the default, over --max-size 100000
    assert run("classify", str(mail["model"]), stdin=big).returncode == 0
    assert_error(run("classify", str(mail["model"]), "--max-size", "100000", stdin=big),
                 "more than 100,000 bytes (--max-size)")


def test_an_mbox_on_standard_input_is_classified_message_by_message(mail):
    result = run("classify", str(mail["model"]), stdin=mail["mbox"].read_bytes())
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    assert len(lines) == N_EACH
    assert [line.split("\t")[0] for line in lines[:2]] == ["stdin#0", "stdin#1"]
    assert all(line.split("\t")[1] == "spam" for line in lines)
    # the same verdicts as the mbox given as a file
    from_file = run("classify", str(mail["model"]), str(mail["mbox"])).stdout.decode().splitlines()
    assert [line.split("\t", 1)[1] for line in lines] == [line.split("\t", 1)[1] for line in from_file]
    # an mbox of one message on stdin: one verdict and its exit code, as a message
    single = b"From deals@offers.example.com Mon Sep  2 10:00:00 2002\n" + spam(4)
    one = run("classify", str(mail["model"]), stdin=single)
    assert one.returncode == 0 and one.stdout.decode().startswith("spam\t")
    # --tag and --evidence need one message: refused, never the first one only
    assert_error(run("classify", str(mail["model"]), "--tag", stdin=mail["mbox"].read_bytes()),
                 "--tag takes one message", f"{N_EACH} messages in standard input")


def test_a_pipe_as_a_source_is_read_once_and_named(mail, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    command = [sys.executable, "-m", "streamnb", "classify", str(mail["model"]), str(fifo)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as process:
        with open(fifo, "wb") as writer:
            writer.write(mail["mbox"].read_bytes())
        out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert out.decode().splitlines()[1].startswith(f"{fifo}#1\tspam\t")
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as process:
        with open(fifo, "wb") as writer:
            writer.write(b"\x00\xff binary, not mail")
        out, err = process.communicate(timeout=60)
    assert process.returncode == 3 and out == b""
    assert err.decode().strip() == f"streamnb classify: error: {str(fifo)!r} is not a mail message (it does not " \
                                   "start with a header line)"


@pytest.mark.parametrize("argv, needle", [
    (["learn", "m.snb", "--spa", "x"], "unrecognized arguments: --spa x"),  # not taken as --spam
    (["train", "m.snb", "--led", "5", "--spam", "x"], "unrecognized arguments: --led 5"),
    (["--frobnicate"], "unrecognized arguments: --frobnicate"),
    (["--frobnicate", "inspect", "m.snb"], "unrecognized arguments: --frobnicate"),
])
def test_options_are_never_abbreviated_and_unknown_ones_are_named(argv, needle, tmp_path):
    result = run(*argv, cwd=tmp_path)
    assert_error(result, needle)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [[], ["classify"], ["train"], ["serve"]])
def test_help_lists_the_exit_codes(command):
    result = run(*command, "--help")
    assert result.returncode == 0
    text = result.stdout.decode()
    epilog = text[text.index("exit codes:"):]
    for line in ("3    an error", "130  interrupted (Ctrl-C): nothing was saved", "141  the reader of the output"):
        assert line in epilog, epilog
    if command in ([], ["classify"]):
        assert "1    ham (one message)" in epilog and "2    unsure (one message)" in epilog


def test_ctrl_c_exits_130_and_saves_nothing(mail, tmp_path):
    """train waits on a pipe that never ends; SIGINT stops it: 130, one line, no model file."""
    import signal

    fifo, target = tmp_path / "spam-pipe", tmp_path / "new.snb"
    os.mkfifo(fifo)
    command = [sys.executable, "-m", "streamnb", "train", str(target), "--spam", str(fifo), "--ham",
               str(mail["maildir"])]
    # as from a terminal: SIGINT not ignored (run in the background, as `cmd &` or under nohup, every
    # program started inherits SIGINT ignored, and Python then never raises KeyboardInterrupt)
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env={**os.environ, "PYTHONPATH": str(ROOT)},
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)) as process:
        deadline = time.monotonic() + 60
        while True:  # opening the write end without blocking succeeds once train has opened the pipe to read
            try:
                writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.05)
        try:
            os.write(writer, spam(1))  # half a source: train reads on, waiting for the rest
            time.sleep(0.2)
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=60)
        finally:
            os.close(writer)
    assert process.returncode == 130, err
    assert err.decode().strip() == "streamnb train: interrupted; nothing was saved"
    assert not target.exists() and not Path(f"{target}.lock").exists()


def test_train_with_one_class_warns(mail, tmp_path):
    result = run("train", str(tmp_path / "spam-only.snb"), "--spam", str(mail["mbox"]))
    assert result.returncode == 0, result.stderr
    assert result.stderr.decode().strip() == ("streamnb train: warning: every message is spam: the model tells nothing "
                                              "apart until it learns ham too (streamnb learn MODEL --ham SRC)")
    both = run("train", str(tmp_path / "both.snb"), "--spam", str(mail["folder"] / "s1.eml"), "--ham",
               str(mail["folder"] / "h1.eml"))
    assert both.returncode == 0 and both.stderr == b""


def test_a_trained_model_is_teachable_by_the_service(mail):
    """`streamnb train` keeps a ledger by default (as the service's new models): TELL needs one to learn a message
    once and to forget one; the service refused TELL on a trained model before (issue 35)."""
    from streamnb.service import journal

    model = streamnb.load(mail["model"])
    assert model.ledger == 100_000
    assert mail["model"].stat().st_mode & 0o777 == 0o600  # the guide says so: its owner's only
    before = dict(model.class_counts)
    assert journal.apply_lesson(model, journal.Lesson("learn", "spam", spam(0))) is False  # learned by train: once
    assert journal.apply_lesson(model, journal.Lesson("learn", "ham", spam(0))) is True  # moves
    assert model.class_counts == {"spam": before["spam"] - 1, "ham": before["ham"] + 1}
    assert journal.apply_lesson(model, journal.Lesson("forget", None, spam(0))) is True
    assert model.class_counts == {"spam": before["spam"] - 1, "ham": before["ham"]}


def test_inspect_and_classify_count_the_lessons_the_service_journaled(model_copy):
    """A model left by a killed `streamnb serve`: its journal holds acknowledged lessons the file lacks."""
    from streamnb.service import journal

    before = model_copy.read_bytes()
    descriptor = journal.create_journal(model_copy, journal.file_digest(model_copy))
    lessons = [journal.Lesson("learn", "spam", spam(60 + i)) for i in range(3)] + [journal.Lesson("learn", "ham", ham(60))]
    journal.append_lessons(descriptor, lessons)
    os.close(descriptor)
    result = run("inspect", str(model_copy), "--top", "0")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    assert lines[1] == ("journal: 4 lessons told to 'streamnb serve' and not yet folded into the file (learn spam 3, "
                        "learn ham 1); counted below")
    assert lines[2] == "classes: 'spam': 43 messages, 'ham': 41 messages"
    assert run("classify", str(model_copy), stdin=spam(99)).returncode == 0
    assert model_copy.read_bytes() == before and Path(f"{model_copy}.journal").exists()  # read only
    # a journal that is not one (the service sets it aside): said, and the file alone is read
    Path(f"{model_copy}.journal").write_bytes(b"not a journal\n")
    damaged = run("inspect", str(model_copy), "--top", "0")
    assert damaged.returncode == 0
    assert damaged.stderr.decode().strip() == (f"streamnb: warning: '{model_copy}.journal' is not a streamnb journal "
                                               "(bad header): its lessons are not counted")
    assert "classes: 'spam': 40 messages, 'ham': 40 messages" in damaged.stdout.decode().splitlines()


def fold(path: Path, later: list) -> None:
    """What `streamnb serve` does at a snapshot: the journal's lessons saved into the file,
    then a new journal for the lessons told after."""
    from streamnb import persist
    from streamnb.service import journal

    model, _ = journal.fold_pending(path)
    digest = journal.save_folded(path, persist.dumps(model))
    journal.append_lessons(journal.create_journal(path, digest), later)


def test_classify_reads_the_model_and_its_journal_again_when_a_save_comes_between(model_copy, monkeypatch):
    """classify and inspect read without the lock: a snapshot the service saves between
    their read of the model file and of its journal must not lose or double a lesson."""
    from streamnb import SpamFilter, persist
    from streamnb.service import cli_common, journal

    first = [journal.Lesson("learn", "spam", spam(80 + i)) for i in range(3)]
    later = [journal.Lesson("learn", "ham", ham(80))]
    journal.append_lessons(journal.create_journal(model_copy, journal.file_digest(model_copy)), first)
    read_journal, folds = journal.read_journal, []

    def read_after_a_fold(where):
        if not folds:
            folds.append(where)
            with monkeypatch.context() as inside:
                inside.setattr(journal, "read_journal", read_journal)
                fold(model_copy, later)
        return read_journal(where)

    monkeypatch.setattr(journal, "read_journal", read_after_a_fold)
    model, lessons = cli_common.load_served_model(str(model_copy))
    assert folds and lessons == later
    expected = persist.load(model_copy)  # the first lessons folded in, the later one applied
    journal.replay(expected, later, "")
    for probe in (spam(90), ham(90)):
        assert SpamFilter(model).classify(probe).log_odds == SpamFilter(expected).classify(probe).log_odds


@pytest.mark.parametrize("read", ["read_model", "read_journal"])
def test_classify_of_a_model_deleted_while_it_is_read_says_it_does_not_exist(model_copy, monkeypatch, read):
    """Deleted before the model file's read, or after it (before the journal's)."""
    from streamnb.service import cli_common, journal

    journal.append_lessons(journal.create_journal(model_copy, journal.file_digest(model_copy)),
                           [journal.Lesson("learn", "spam", spam(82))])
    original = getattr(journal, read)

    def deleted_first(path):
        model_copy.unlink()
        return original(path)

    monkeypatch.setattr(journal, read, deleted_first)
    with pytest.raises(cli_common.CommandError, match="does not exist"):
        cli_common.load_served_model(str(model_copy))


def test_classify_gives_up_when_every_read_meets_a_save(model_copy, monkeypatch):
    from streamnb.service import cli_common, journal

    journal.append_lessons(journal.create_journal(model_copy, journal.file_digest(model_copy)),
                           [journal.Lesson("learn", "spam", spam(81))])
    read_journal = journal.read_journal

    def read_after_a_fold(where):
        with monkeypatch.context() as inside:
            inside.setattr(journal, "read_journal", read_journal)
            fold(model_copy, [journal.Lesson("learn", "ham", ham(81))])
        return read_journal(where)

    monkeypatch.setattr(journal, "read_journal", read_after_a_fold)
    with pytest.raises(cli_common.CommandError, match="replaced while it was read, 5 times; try again"):
        cli_common.load_served_model(str(model_copy))


def test_train_where_a_deleted_model_left_its_journal_learns_its_lessons(model_copy, mail):
    """The model file was deleted while its journal held lessons `streamnb serve`
    acknowledged: a model trained at that path learns them, as the service would; one that
    replaces a model (--force) drops the replaced model's."""
    from streamnb.service import journal

    descriptor = journal.create_journal(model_copy, journal.file_digest(model_copy))
    journal.append_lessons(descriptor, [journal.Lesson("learn", "spam", spam(70)), journal.Lesson("learn", "ham", ham(70))])
    os.close(descriptor)
    model_copy.unlink()
    result = run("train", str(model_copy), "--spam", str(mail["mbox"]), "--ham", str(mail["maildir"]))
    assert result.returncode == 0, result.stderr
    assert "on 80 messages (and 2 journaled lessons) (spam 41, ham 41)" in result.stdout.decode()
    assert streamnb.load(model_copy).class_counts == {"spam": 41.0, "ham": 41.0}
    assert not Path(f"{model_copy}.journal").exists()
    descriptor = journal.create_journal(model_copy, journal.file_digest(model_copy))
    journal.append_lessons(descriptor, [journal.Lesson("learn", "spam", spam(71))])
    os.close(descriptor)
    replaced = run("train", str(model_copy), "--force", "--spam", str(mail["mbox"]), "--ham", str(mail["maildir"]))
    assert replaced.returncode == 0, replaced.stderr
    assert "journaled" not in replaced.stdout.decode()
    assert streamnb.load(model_copy).class_counts == {"spam": 40.0, "ham": 40.0}
    assert not Path(f"{model_copy}.journal").exists()
    # a journal that is not one, beside no model file: refused as `learn` refuses it, nothing written
    model_copy.unlink()
    Path(f"{model_copy}.journal").write_bytes(b"not a journal\n")
    assert_error(run("train", str(model_copy), "--spam", str(mail["mbox"]), "--ham", str(mail["maildir"])),
                 f"'{model_copy}.journal' is not a streamnb journal (bad header)")
    assert not model_copy.exists() and Path(f"{model_copy}.journal").read_bytes() == b"not a journal\n"


def test_unlearn_errors_speak_of_the_message(model_copy, mail, tmp_path):
    before = model_copy.read_bytes()
    stranger = tmp_path / "stranger.eml"
    stranger.write_bytes(ham(70).replace(b"meeting", b"zebra"))
    known = tmp_path / "known.eml"
    known.write_bytes(ham(0))  # in the Maildir the model was trained on
    assert_error(run("unlearn", str(model_copy), "--ham", str(known), "--ham", str(stranger)),
                 f"{stranger}: {model_copy} never learned this message as ham (some of its words were never learned "
                 "as ham); nothing was unlearned")
    assert_error(run("unlearn", str(model_copy), "--ham", str(mail["mbox"])),
                 f"{mail['mbox']}#0: {model_copy} never learned this message as ham (this message was learned as "
                 "'spam', not as 'ham')")
    assert_error(run("unlearn", str(model_copy), "--spam", str(mail["mbox"]), "--spam", str(mail["mbox"])),
                 f"{mail['mbox']}#0 is given twice: a message is unlearned once")
    assert "feature" not in run("unlearn", str(model_copy), "--ham", str(stranger)).stderr.decode()
    assert model_copy.read_bytes() == before


def tell(port: int, raw: bytes, label: str, user: str = "alice") -> bytes:
    """A TELL (spamc -L LABEL) to `streamnb serve`, its reply's first line."""
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(f"TELL SPAMC/1.5\r\nMessage-class: {label}\r\nSet: local\r\nUser: {user}\r\n"
                           f"Content-length: {len(raw)}\r\n\r\n".encode() + raw)
        connection.shutdown(socket.SHUT_WR)
        reply = b""
        while part := connection.recv(65536):
            reply += part
    return reply.split(b"\r\n")[0]


def test_the_command_and_the_service_learn_the_same_inputs(serve, mail, tmp_path):
    """One check of what is mail (streamnb.filter.sources.mail_problem): random bytes are refused by `streamnb learn`
    and by a TELL; a file of header-like lines (/proc/self/status) is learned by both. And a model made by
    `streamnb train` takes a TELL (its ledger: a message it learned is not counted twice)."""
    models = tmp_path / "models"
    models.mkdir()
    (models / "alice.snb").write_bytes(mail["model"].read_bytes())
    server = serve(models, "--allow-tell", "--no-site")
    inputs = {"random": bytes(range(256)) * 4, "status": b"Name:\tpython3\nUmask:\t0022\nState:\tR (running)\n"}
    for name, raw in inputs.items():
        source = tmp_path / name
        source.write_bytes(raw)
        copy = tmp_path / f"{name}.snb"
        copy.write_bytes(mail["model"].read_bytes())
        learned = run("learn", str(copy), "--spam", str(source))
        told = tell(server.port, raw, "spam")
        if name == "random":
            assert_error(learned, f"{str(source)!r} is not a mail message (it does not start with a header line)")
            assert told == b"SPAMD/1.5 65 Message refused: (the message is not a mail message (it does not start with " \
                           b"a header line))"
        else:
            assert learned.returncode == 0, learned.stderr
            assert told == b"SPAMD/1.5 0 EX_OK"
    assert tell(server.port, spam(0), "spam") == b"SPAMD/1.5 0 EX_OK"  # learned by train: nothing changes
    server.stop()
    assert streamnb.load(models / "alice.snb").class_counts == {"spam": N_EACH + 1.0, "ham": float(N_EACH)}


def without_matplotlib(tmp_path: Path) -> dict[str, str]:
    """An environment where `import matplotlib` fails, as where the plots extra is not installed."""
    shadow = tmp_path / "no-matplotlib" / "matplotlib"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named matplotlib')\n")
    return {**os.environ, "PYTHONPATH": f"{shadow.parent}{os.pathsep}{ROOT}"}


@pytest.fixture(scope="module")
def small_corpus(mail) -> Path:
    """The SpamAssassin layout (easy_ham/, spam/), 40 messages of each."""
    corpus = mail["root"] / "corpus"
    for group, make in (("easy_ham", ham), ("spam", spam)):
        (corpus / group).mkdir(parents=True)
        for i in range(N_EACH):
            (corpus / group / f"{i:05d}.{i:032x}").write_bytes(make(i))  # the official names: number.md5
    return corpus


def test_plots_without_matplotlib_are_refused_before_any_work(mail, small_corpus, tmp_path):
    env = without_matplotlib(tmp_path)

    def command(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "streamnb", *args], capture_output=True, env=env, cwd=tmp_path,
                              timeout=120)

    out = tmp_path / "demo-out"
    assert_error(command("demo", "--corpus", str(small_corpus), "--out", str(out)),
                 "streamnb demo draws plots with matplotlib, which is not installed: pip install streamnb[plots]")
    assert not out.exists()
    report, plots = tmp_path / "report.json", tmp_path / "plots"
    result = command("evaluate", "--spam", str(mail["mbox"]), "--ham", str(mail["maildir"]), "--json", str(report),
                     "--plots", str(plots))
    assert_error(result, "--plots draws plots with matplotlib, which is not installed")
    assert result.stdout == b"" and not report.exists() and not plots.exists()  # nothing evaluated, nothing written
    without_plots = command("evaluate", "--spam", str(mail["mbox"]), "--ham", str(mail["maildir"]), "--json",
                            str(report))
    assert without_plots.returncode == 0, without_plots.stderr


def test_demo_reports_the_model_s_own_probability_and_names_the_model(small_corpus, tmp_path, monkeypatch):
    """The demo applies no calibrator (on the SpamAssassin stream isotonic calibration made the fusion's ECE worse:
    issue 35); its report and table say so, and the plots' legends name the model (a fusion, not naive Bayes)."""
    from streamnb.filter import plots
    from streamnb.service import cli_evaluate

    drawn: dict[str, object] = {}
    monkeypatch.setattr(plots, "plot_roc", lambda truth, series, path, **kw: drawn.setdefault("roc", series) and path)
    monkeypatch.setattr(plots, "plot_learning_curve", lambda report, path, **kw: drawn.setdefault("curve", kw) and path)
    monkeypatch.setattr(plots, "plot_reliability",
                        lambda truth, series, path, **kw: drawn.setdefault("reliability", (series, kw)) and path)
    out = tmp_path / "demo-out"
    args = cli.parse_arguments(["demo", "--corpus", str(small_corpus), "--out", str(out)])
    assert cli_evaluate.cmd_demo(args) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["ece_calibrated"] is None and report["log_loss_calibrated"] is None and 0 <= report["ece"] <= 1
    assert list(drawn["roc"]) == ["Fusion log-odds"]
    series, options = drawn["reliability"]
    assert list(series) == ["Fusion P(spam|x)"] and options["title"] == "Reliability of Fusion's P(spam)"
    assert drawn["curve"]["title"].startswith("Fusion: ")
    assert streamnb.load(out / "model.snb").class_counts == {"ham": N_EACH, "spam": N_EACH}
    # evaluate keeps its calibrator, drawn beside the model's own P(spam)
    drawn.clear()
    evaluated = cli.parse_arguments(["evaluate", "--corpus", str(small_corpus), "--also-orders", "none", "--plots",
                                     str(tmp_path / "plots"), "--model-type", "email"])
    assert cli_evaluate.cmd_evaluate(evaluated) == 0
    assert list(drawn["reliability"][0]) == ["EmailNB P(spam|x)", "calibrated (isotonic, online)"]
