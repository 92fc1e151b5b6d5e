"""TREC 2007's feedback tasks (issue 34): the labels each task gives, read from a TREC-layout
corpus (streamnb.filter.trec.load_trec_task), the filter run under a task
(streamnb.filter.tasks.run_task), and ``streamnb evaluate --task``; on a tiny made-up corpus
written here (tests/trec_corpus.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import streamnb
from streamnb import SpamFilter
from streamnb.errors import CorpusNotFoundError, InvalidInputError, InvalidParameterError
from streamnb.filter.evaluate import one_minus_auc_percent
from streamnb.filter.tasks import DEFAULT_QUOTA, TASKS, run_task
from streamnb.filter.trec import FEEDBACK_ENV, load_trec, load_trec_task, load_trec_tasks
from tests.trec_corpus import (
    DELAYED,
    N_MESSAGES,
    index_text,
    label_of,
    labelled,
    raw_message,
    write_archive,
    write_trec_archives,
    write_trec_folder,
)

ROOT = Path(__file__).resolve().parents[2]
STREAM = [(raw_message(i), label_of(i)) for i in range(N_MESSAGES)]


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    monkeypatch.delenv(FEEDBACK_ENV, raising=False)
    return write_trec_folder(tmp_path / "trec07p-tiny")


class Recorder:
    """The default SpamFilter, recording what run_task asks of it; ``asks`` overrides its
    verdicts' ``ask`` (True: it wants every label)."""

    def __init__(self, asks: bool | None = None) -> None:
        self.inner = SpamFilter()
        self.asks = asks
        self.calls: list[tuple] = []

    def classify(self, x, *, explain=True, budget=None):
        verdict = self.inner.classify(x, explain=explain, budget=budget)
        if self.asks is not None:
            verdict = verdict._replace(ask=self.asks)
        self.calls.append(("classify", x, budget, verdict))
        return verdict

    def learn(self, x, label):
        self.calls.append(("learn", x, label))
        self.inner.learn(x, label)

    def observe(self, x, verdict):
        self.calls.append(("observe", x, verdict))
        self.inner.observe(x, verdict)

    def after_each_classify(self) -> list[tuple]:
        """The call that followed each classify, in order."""
        return [self.calls[k + 1] for k, call in enumerate(self.calls) if call[0] == "classify"]


# -- the labels each task gives ------------------------------------------------------------------

@pytest.mark.parametrize("task", TASKS)
def test_each_task_reads_every_message_and_the_labels_its_index_gives(corpus, task):
    stream = load_trec_task(corpus, task)
    assert [(m.raw, m.label) for m in stream.messages] == STREAM  # every message, scored against its true label
    assert [m.name for m in stream.messages] == [f"inmail.{i + 1}" for i in range(N_MESSAGES)]
    index = "full" if task == "active" else task
    assert stream.labelled == [labelled(index, i) for i in range(N_MESSAGES)]
    assert stream.index == f"{index}/index"
    assert stream.labels_given == {"full": N_MESSAGES, "active": N_MESSAGES, "delay": DELAYED,
                                   "partial": N_MESSAGES // 3}[task]
    assert load_trec_task(corpus, task, limit=10).labelled == stream.labelled[:10]


def test_every_task_from_one_reading_of_the_corpus(corpus):
    streams = load_trec_tasks(corpus, ("partial", "active", "delay"))
    assert list(streams) == ["partial", "active", "delay"]
    assert streams["partial"].messages is streams["delay"].messages is streams["active"].messages
    for task, stream in streams.items():
        alone = load_trec_task(corpus, task)
        assert (stream.task, stream.labelled, stream.index) == (alone.task, alone.labelled, alone.index)
    with pytest.raises(InvalidParameterError, match="task"):
        load_trec_tasks(corpus, ("full", "later"))


def test_the_feedback_indexes_come_from_a_second_archive_or_inside_the_first(tmp_path, monkeypatch):
    monkeypatch.delenv(FEEDBACK_ENV, raising=False)
    main, feedback = write_trec_archives(tmp_path)
    expected = [labelled("partial", i) for i in range(N_MESSAGES)]
    named = load_trec_task(main, "partial", feedback=feedback)
    assert [(m.raw, m.label) for m in named.messages] == STREAM and named.labelled == expected
    assert named.index == f"{feedback}: partial/index"
    monkeypatch.setenv(FEEDBACK_ENV, str(feedback))
    assert load_trec_task(main, "partial").labelled == expected
    # the corpus's own index comes before the environment's
    whole = write_archive(tmp_path / "trec07p-whole.tar.gz", {
        "t/full/index": index_text("full").encode(), "t/delay/index": index_text("delay").encode(),
        **{f"t/data/inmail.{i + 1}": raw_message(i) for i in range(N_MESSAGES)}})
    own = load_trec_task(whole, "delay")
    assert own.index == "delay/index" and own.labelled == [labelled("delay", i) for i in range(N_MESSAGES)]
    # an archive whose index comes first is read only as far as the messages asked for
    assert [m.name for m in load_trec(whole, limit=3)] == ["inmail.1", "inmail.2", "inmail.3"]


def test_what_a_task_lacks_is_named(corpus, tmp_path, monkeypatch):
    bare = write_trec_folder(tmp_path / "bare", feedback=False)
    with pytest.raises(CorpusNotFoundError, match=f"has no delay/index, which the delay task needs .*{FEEDBACK_ENV}"):
        load_trec_task(bare, "delay")
    assert len(load_trec_task(bare, "active").messages) == N_MESSAGES  # full/index is all the active task needs
    with pytest.raises(CorpusNotFoundError, match="no such folder or archive"):
        load_trec_task(bare, "partial", feedback=tmp_path / "absent")
    monkeypatch.setenv(FEEDBACK_ENV, str(tmp_path / "absent"))
    with pytest.raises(CorpusNotFoundError, match="absent"):
        load_trec_task(bare, "partial")
    monkeypatch.setenv(FEEDBACK_ENV, str(bare))
    with pytest.raises(CorpusNotFoundError, match="has no partial/index"):
        load_trec_task(bare, "partial")
    with pytest.raises(InvalidParameterError, match="task"):
        load_trec_task(corpus, "immediate")
    lines = index_text("delay").splitlines()
    (corpus / "delay" / "index").write_text("\n".join([lines[1], lines[0], *lines[2:]]) + "\n")
    with pytest.raises(CorpusNotFoundError, match="delay/index: line 1 is ham inmail.2, full/index says spam inmail.1"):
        load_trec_task(corpus, "delay")
    (corpus / "delay" / "index").write_text("\n".join(lines[:10]) + "\n")
    with pytest.raises(CorpusNotFoundError, match="lists 10 messages, full/index 48"):
        load_trec_task(corpus, "delay")
    (corpus / "delay" / "index").write_text("SPAM ../data/inmail.1\n")
    with pytest.raises(CorpusNotFoundError, match="line 1 of delay/index is not"):
        load_trec_task(corpus, "delay")
    (corpus / "full" / "index").write_text("Spam ../data/inmail.1\n")  # full/index gives every label
    with pytest.raises(CorpusNotFoundError, match="line 1 of full/index is not 'spam|ham PATH'"):
        load_trec_task(corpus, "full")


# -- the filter under a task ---------------------------------------------------------------------

def test_full_learns_every_message_right_after_it_is_classified():
    recorder = Recorder()
    report = run_task(recorder, STREAM, "full")
    assert recorder.after_each_classify() == [("learn", raw, label) for raw, label in STREAM]
    assert [call[2] for call in recorder.calls if call[0] == "classify"] == [None] * N_MESSAGES  # no budget
    verdicts = [call[3] for call in recorder.calls if call[0] == "classify"]
    assert list(report.verdicts) == [v.label for v in verdicts] and list(report.log_odds) == [v.log_odds for v in verdicts]
    assert report.labels_used == N_MESSAGES and report.labels_asked == 0 and report.quota is None


@pytest.mark.parametrize("task", ["delay", "partial"])
def test_delay_and_partial_learn_the_labels_given_and_observe_the_rest_with_their_verdict(task):
    recorder = Recorder()
    given = [labelled(task, i) for i in range(N_MESSAGES)]
    report = run_task(recorder, STREAM, task, labelled=given)
    verdicts = [call[3] for call in recorder.calls if call[0] == "classify"]
    expected = [("learn", raw, label) if given[i] else ("observe", raw, verdicts[i])
                for i, (raw, label) in enumerate(STREAM)]
    assert recorder.after_each_classify() == expected
    assert list(report.learned) == given and report.labels_used == sum(given)
    assert 0 < sum(given) < N_MESSAGES
    counts = report.verdict_counts()
    assert counts["ham"] + counts["spam"] == N_MESSAGES and counts["ham"] == sum(label == "ham" for _, label in STREAM)


def test_active_asks_within_the_quota_at_the_pace_of_the_stream():
    quota = 6
    recorder = Recorder()
    report = run_task(recorder, STREAM, "active", quota=quota)
    classified = [call for call in recorder.calls if call[0] == "classify"]
    left, budgets = quota, []
    for i, (call, after) in enumerate(zip(classified, recorder.after_each_classify())):
        budgets.append(call[2])
        assert call[2] == (left, N_MESSAGES - i)  # the labels left, the messages to come with this one
        wanted = call[3].ask and left > 0
        assert after == (("learn", STREAM[i][0], STREAM[i][1]) if wanted else ("observe", STREAM[i][0], call[3]))
        left -= wanted
    assert report.labels_used == quota - left <= quota
    assert report.labels_asked == sum(call[3].ask for call in classified) == report.labels_used  # asks only with labels left
    assert list(report.asked) == [call[3].ask for call in classified] and report.quota == quota


def test_active_never_spends_more_than_the_quota_on_a_filter_that_asks_for_everything():
    recorder = Recorder(asks=True)
    report = run_task(recorder, STREAM, "active", quota=5)
    assert [after[0] for after in recorder.after_each_classify()] == ["learn"] * 5 + ["observe"] * (N_MESSAGES - 5)
    assert report.labels_used == 5 and report.labels_asked == N_MESSAGES
    assert [call[2][0] for call in recorder.calls if call[0] == "classify"][5:] == [0] * (N_MESSAGES - 5)
    assert run_task(Recorder(asks=True), STREAM[:3], "active").quota == DEFAULT_QUOTA


def test_the_ranking_of_the_parts_is_the_ranking_of_their_messages():
    report = run_task(SpamFilter(), STREAM, "full")
    labels = [label for _, label in STREAM]
    ranking = report.ranking(first=30, last=12)
    assert set(ranking) == {"whole", "first_30", "last_12"}
    assert ranking["whole"] == report.one_minus_auc_percent == one_minus_auc_percent(labels, report.log_odds)
    assert ranking["first_30"] == one_minus_auc_percent(labels[:30], report.log_odds[:30])
    assert ranking["last_12"] == one_minus_auc_percent(labels[-12:], report.log_odds[-12:])
    assert set(report.ranking()) == {"whole"}  # no parts on a stream of 40,000 messages or fewer
    assert report.ranking(first=30, last=1)["last_1"] is None  # one class


@pytest.mark.parametrize("call, error, match", [
    (lambda f: run_task(f, STREAM, "immediate"), InvalidParameterError, "task"),
    (lambda f: run_task(f, STREAM, "full", quota=3), InvalidParameterError, "quota goes with the active task"),
    (lambda f: run_task(f, STREAM, "active", quota=-1), InvalidParameterError, "quota must be an int >= 0"),
    (lambda f: run_task(f, STREAM, "active", quota=2.5), InvalidParameterError, "quota must be an int >= 0"),
    (lambda f: run_task(f, STREAM, "delay"), InvalidInputError, "the delay task needs labelled"),
    (lambda f: run_task(f, STREAM, "partial", labelled=[True] * 3), InvalidInputError, "one bool per message"),
    (lambda f: run_task(f, STREAM, "partial", labelled=[1] * N_MESSAGES), InvalidInputError, "one bool per message"),
    (lambda f: run_task(f, STREAM, "full", labelled=[True] * N_MESSAGES), InvalidInputError,
     "labelled goes with the delay and partial tasks"),
    (lambda f: run_task(f, [*STREAM, (b"x", "eggs")], "full"), InvalidInputError, "stream item 48 has label"),
    (lambda f: run_task(f, [*STREAM, b"x"], "full"), InvalidInputError, "stream item 48"),
    (lambda f: run_task(f, [], "full"), InvalidInputError, "no .x, y. pairs"),
    (lambda f: run_task(f, STREAM, "full", progress="yes"), InvalidParameterError, "progress"),
])
def test_bad_input_is_named_before_any_message_is_classified(call, error, match):
    recorder = Recorder()
    with pytest.raises(error, match=match):
        call(recorder)
    assert recorder.calls == []


def test_a_trec_task_runs_as_run_task_on_its_stream(corpus):
    stream = load_trec_task(corpus, "partial")
    report = stream.run(SpamFilter())
    direct = run_task(SpamFilter(), STREAM, "partial", labelled=[labelled("partial", i) for i in range(N_MESSAGES)])
    assert list(report.log_odds) == list(direct.log_odds) and list(report.verdicts) == list(direct.verdicts)
    assert report.labels_used == stream.labels_given
    assert load_trec_task(corpus, "active").run(SpamFilter(), quota=4).labels_used <= 4


# -- streamnb evaluate --task --------------------------------------------------------------------

def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != FEEDBACK_ENV}
    environment.update(env or {}, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "streamnb", *args], capture_output=True, env=environment, timeout=120,
                          text=True)


@pytest.mark.parametrize("task", TASKS)
def test_evaluate_task_prints_and_writes_the_figures(corpus, tmp_path, task):
    report_file = tmp_path / "report.json"
    done = run("evaluate", "--corpus", str(corpus), "--task", task, "--json", str(report_file),
               *(["--quota", "7"] if task == "active" else []))
    assert done.returncode == 0, done.stderr
    report = json.loads(report_file.read_text())
    expected = run_task(SpamFilter(), STREAM, task, quota=7 if task == "active" else None,
                        labelled=[labelled(task, i) for i in range(N_MESSAGES)] if task in ("delay", "partial") else None)
    assert report["task"] == task and report["messages"] == N_MESSAGES
    assert report["one_minus_auc_percent"] == {"whole": expected.one_minus_auc_percent}  # the command's default filter
    expected_counts = expected.verdict_counts()
    assert report["class_counts"] == {"ham": expected_counts["ham"], "spam": expected_counts["spam"]}
    assert report["error_counts"] == {k: expected_counts[k] for k in ("ham_as_spam", "spam_as_ham")}
    verdicts = [str(v) for v in expected.verdicts]
    assert report["verdict_counts"] == {label: verdicts.count(label) for label in ("ham", "spam", "unsure")}
    assert sum(report["verdict_counts"].values()) == N_MESSAGES
    assert report["labels_used"] == expected.labels_used and report["labels_asked"] == expected.labels_asked
    if task == "active":
        assert report["quota"] == 7 and report["labels_used"] <= 7 and report["labels_given"] == 0
    else:
        assert report["quota"] is None and report["labels_used"] == report["labels_given"] == sum(
            labelled(task, i) for i in range(N_MESSAGES))
    lines = done.stdout.splitlines()
    errors, classes = report["error_counts"], report["class_counts"]
    assert lines[0].split() == ["task", task]
    assert any(line.startswith("(1-AUC)% (ranked by log-odds)") and line.endswith(f"{expected.one_minus_auc_percent:.4f}")
               for line in lines)
    assert any(line.startswith("verdict spam on ham (ham called spam)") and line.endswith(
        f"({errors['ham_as_spam']} of {classes['ham']})") for line in lines)
    assert any(line.startswith("labels used") and f"  {report['labels_used']:,}" in line for line in lines)


def test_evaluate_task_finds_the_feedback_archive_through_the_environment(tmp_path):
    main, feedback = write_trec_archives(tmp_path)
    report_file = tmp_path / "report.json"
    done = run("evaluate", "--corpus", str(main), "--task", "delay", "--json", str(report_file), "--plots",
               str(tmp_path / "plots"), "--save", str(tmp_path / "model.snb"), env={FEEDBACK_ENV: str(feedback)})
    assert done.returncode == 0, done.stderr
    report = json.loads(report_file.read_text())
    assert report["labels_used"] == DELAYED and report["index"] == f"{feedback}: delay/index"
    assert [p.name for p in (tmp_path / "plots").iterdir()] == ["roc.png"]  # a task's run has no learning curve
    assert (tmp_path / "plots" / "roc.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert streamnb.load(tmp_path / "model.snb").class_counts == {"spam": 11, "ham": 5}  # what it learned: the first 16
    missing = run("evaluate", "--corpus", str(main), "--task", "delay")
    assert missing.returncode == 3 and missing.stderr.count("\n") == 1
    assert "has no delay/index, which the delay task needs" in missing.stderr and FEEDBACK_ENV in missing.stderr


@pytest.mark.parametrize("args, needles", [
    (["--task", "immediate"], ["--task", "invalid choice: 'immediate'"]),
    (["--task", "active", "--quota", "-1"], ["--quota", "an integer >= 0", "'-1'"]),
    (["--task", "active", "--quota", "many"], ["--quota", "an integer >= 0", "'many'"]),
    (["--task", "full", "--quota", "3"], ["--quota goes with --task active"]),
    (["--quota", "3"], ["--quota goes with --task active"]),
    (["--task", "delay", "--order", "shuffle"], ["--order and --also-orders do not apply"]),
    (["--task", "full", "--also-orders", "file"], ["--order and --also-orders do not apply"]),
])
def test_evaluate_task_options_that_do_not_fit_are_named(corpus, tmp_path, args, needles):
    done = run("evaluate", "--corpus", str(corpus), *args, "--json", str(tmp_path / "report.json"))
    assert done.returncode == 3 and done.stderr.count("\n") == 1, done.stderr
    for needle in needles:
        assert needle in done.stderr
    assert not (tmp_path / "report.json").exists()


def test_evaluate_task_needs_a_trec_corpus(tmp_path):
    not_trec = tmp_path / "mail"
    not_trec.mkdir()
    done = run("evaluate", "--corpus", str(not_trec), "--task", "full")
    assert done.returncode == 3 and "--task needs a TREC-layout corpus" in done.stderr and str(not_trec) in done.stderr
    without = run("evaluate", "--spam", str(not_trec), "--ham", str(not_trec), "--task", "full")
    assert without.returncode == 3 and "--task needs --corpus" in without.stderr


def test_evaluate_help_names_the_tasks():
    done = run("evaluate", "--help")
    assert done.returncode == 0
    for needle in ("--task {full,delay,partial,active}", "--quota N", FEEDBACK_ENV):
        assert needle in " ".join(done.stdout.split())
