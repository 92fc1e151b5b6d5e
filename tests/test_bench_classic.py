"""benchmarks/bench_classic.py: parsing the classic filters' output, the figures, the runner.

The parsers are pure functions tested on output captured from bogofilter 1.2.5, spamprobe
1.4d and spamd/spamc 4.0.1 (Debian 12), so they run everywhere. The runner is tested with
a stand-in filter (a small Python script, one process per call), so it needs no Debian
package either.
"""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

from benchmarks import bench_classic as classic
from benchmarks.bench_classic import HAM, SPAM, UNSURE, ClassicFilterError, Classified
from streamnb.filter.decision import FilterReport

# -- bogofilter ---------------------------------------------------------------------------------

BOGOFILTER_QUERY = """# bogofilter version 1.2.5

robx        = 0.520000  # (5.20e-01)
robs        = 0.017800  # (1.78e-02)
min_dev     = 0.375000  # (3.75e-01)
ham_cutoff  = 0.450000  # (4.50e-01)
spam_cutoff = 0.990000  # (9.90e-01)
ns_esf      = 1.000000  # (1.00e+00)
sp_esf      = 1.000000  # (1.00e+00)

block-on-subnets  = No
encoding          = utf-8
spamicity-formats = %0.6f, %0.6f, %0.6f
"""


@pytest.mark.parametrize("stdout, returncode, expected", [
    ("0.5200000000000000\n", 2, Classified(UNSURE, 0.52)),  # an empty wordlist: robx
    ("0.9565519077780225\n", 2, Classified(UNSURE, 0.9565519077780225)),
    ("0.9999999999966693\n", 0, Classified(SPAM, 0.9999999999966693)),
    ("2.258470867391469e-08\n", 1, Classified(HAM, 2.258470867391469e-08)),
    ("0\n", 1, Classified(HAM, 0.0)),
])
def test_parse_bogofilter_reads_the_exit_code_and_the_spamicity(stdout, returncode, expected):
    assert classic.parse_bogofilter(stdout, returncode) == expected


def test_parse_bogofilter_raises_on_its_error_exit_and_on_garbage():
    stderr = ("Can't open file 'wordlist.db' in directory 'wl'.\nerror #2 - No such file or directory.\n\n"
              "Remember to register some spam and ham messages before you\nuse bogofilter to evaluate mail")
    with pytest.raises(ClassicFilterError, match="exited 3.*wordlist.db"):
        classic.parse_bogofilter("", 3, stderr)
    with pytest.raises(ClassicFilterError, match="expected one number"):
        classic.parse_bogofilter("S 0.999\n", 0)  # -T's format, not -TT's
    with pytest.raises(ClassicFilterError, match="not in"):
        classic.parse_bogofilter("1.5\n", 0)


def test_parse_bogofilter_settings():
    settings = classic.parse_bogofilter_settings(BOGOFILTER_QUERY)
    assert settings == {"robx": 0.52, "robs": 0.0178, "min_dev": 0.375, "ham_cutoff": 0.45, "spam_cutoff": 0.99,
                        "ns_esf": 1.0, "sp_esf": 1.0}
    with pytest.raises(ClassicFilterError, match="ham_cutoff"):
        classic.parse_bogofilter_settings(BOGOFILTER_QUERY.replace("ham_cutoff", "hamcutoff"))


# -- spamprobe ------------------------------------------------------------------------------------

SPAMPROBE_HELP = """Command Line Options:
 -C count
    Sets minimum count for a word to use computed probability.
    Default value is 5.
 -d dirname
    Sets base directory in which spamprobe config file and database are stored.
 -l number
    Sets the spam threshold value.  The number must be between 0.0 and 1.0.
    All messages with scores >= the threshold will be considered spam.  Default
    value is 0.6.
 -m
    Causes SpamProbe to treat the message as an mbox file even if the command
 -p num_words
    Sets maximum number of words per phrase (default 2)
 -P num_messages
    Causes terms with count <= 2 to be purged from database evern num_messages
 -r max_repeats
    Sets maximum number of times words can appear in top tokens for scoring.
    Default is 2.
 -R
    Causes SpamProbe to return exit status 0 if message was good or 1 if spam.
 -w num_terms
    Sets number of terms used to compute score (default 27).
 -x
    Causes SpamProbe to extend top terms array to hold all highly significant terms
"""


@pytest.mark.parametrize("stdout, expected", [
    ("GOOD 0.3000000 30facc79dcbf1407073d114c425164d4\n", Classified(HAM, 0.3)),  # an empty database
    ("GOOD 0.0000010 04a1c45b5182801f4d6679247fae3986\n", Classified(HAM, 0.000001)),
    ("SPAM 0.9999999 3bd312797981feff79bf18683086089a\n", Classified(SPAM, 0.9999999)),
    ("SPAM 0.6000000 da89b51576e9152212b9c49ef4c33e2b", Classified(SPAM, 0.6)),
])
def test_parse_spamprobe_reads_verdict_and_score(stdout, expected):
    assert classic.parse_spamprobe(stdout, 0) == expected


def test_parse_spamprobe_raises_on_failure_and_on_garbage():
    with pytest.raises(ClassicFilterError, match="exited 1.*runtime exception"):
        classic.parse_spamprobe("", 1, "caught runtime exception: No such file or directory\n")
    for text in ("", "UNSURE 0.5 abc\n", "GOOD 0.1 abc\nGOOD 0.2 def\n", "GOOD high abc\n"):
        with pytest.raises(ClassicFilterError, match="expected 'SPAM|GOOD"):
            classic.parse_spamprobe(text, 0)


def test_parse_spamprobe_settings():
    assert classic.parse_spamprobe_settings(SPAMPROBE_HELP) == {
        "min_count": 5.0, "spam_threshold": 0.6, "phrase_words": 2.0, "max_repeats": 2.0, "terms": 27.0}
    with pytest.raises(ClassicFilterError, match="threshold"):
        classic.parse_spamprobe_settings(SPAMPROBE_HELP.replace(" -l number", " -L number"))


# -- SpamAssassin (spamd + spamc) ----------------------------------------------------------------

SPAMC_OUTPUT = textwrap.dedent("""\
    From 12a1mailbot1@web.de  Thu Aug 22 13:17:22 2002
    Return-Path: <12a1mailbot1@web.de>
    X-Spam-Checker-Version: SpamAssassin 4.0.1 (2024-03-25) on vm
    X-Spam-Level: ***
    X-Spam-Status: No, score=4.0 required=5.0 tests=BAYES_99,BAYES_999
    \tautolearn=disabled version=4.0.1
    X-Spam-StreamnbBayes: {bayes}
    X-Spam-StreamnbVerdict: {verdict} score=4.0 required=5.0
    Delivered-To: zzzz@localhost.spamassassin.taint.org
    Subject: Life Insurance - Why Pay More?

    X-Spam-StreamnbVerdict: Yes score=9 required=5.0 (in the body: not a header)
    Cheap life insurance.
    """)


def test_parse_spamassassin_reads_its_own_headers():
    assert classic.parse_spamassassin(SPAMC_OUTPUT.format(bayes="1.0000", verdict="No"), 0) == Classified(HAM, 1.0)
    assert classic.parse_spamassassin(SPAMC_OUTPUT.format(bayes="0.5", verdict="No"), 0) == Classified(HAM, 0.5)
    crlf = SPAMC_OUTPUT.format(bayes="0.9973", verdict="Yes").replace("\n", "\r\n")
    assert classic.parse_spamassassin(crlf, 0) == Classified(SPAM, 0.9973)


def test_parse_spamassassin_raises_when_spamc_passed_the_message_through():
    unscanned = "From: someone@example.org\nSubject: hi\n\nX-Spam-StreamnbBayes: 0.1\nX-Spam-StreamnbVerdict: No\n"
    with pytest.raises(ClassicFilterError, match="no X-Spam-StreamnbBayes"):
        classic.parse_spamassassin(unscanned, 0)
    with pytest.raises(ClassicFilterError, match="exited 70"):
        classic.parse_spamassassin("", 70, "connection refused")
    with pytest.raises(ClassicFilterError, match="expected a probability"):
        classic.parse_spamassassin(SPAMC_OUTPUT.format(bayes="", verdict="No"), 0)
    with pytest.raises(ClassicFilterError, match="expected Yes or No"):
        classic.parse_spamassassin(SPAMC_OUTPUT.format(bayes="0.2", verdict="Maybe"), 0)


def test_parse_spamassassin_settings():
    prefs = "# header\nrequired_score           5\nok_locales              all\n"
    scores = ("score BAYES_00  0  0 -1.5   -1.9\nscore BAYES_99  0  0  3.8    3.5\nscore BAYES_999 0  0  0.2    0.2\n"
              "score OTHER_RULE 1.0\n")
    settings = classic.parse_spamassassin_settings(prefs, scores)
    assert settings == {"required_score": 5.0, "bayes_min_spam_num": 200.0, "bayes_min_ham_num": 200.0,
                        "BAYES_00": -1.5, "BAYES_99": 3.8, "BAYES_999": 0.2}
    with pytest.raises(ClassicFilterError, match="required_score"):
        classic.parse_spamassassin_settings("ok_locales all\n", scores)


# -- the figures ----------------------------------------------------------------------------------

def test_verdict_figures_by_hand():
    y = [HAM, HAM, HAM, HAM, SPAM, SPAM, SPAM, SPAM, SPAM]
    v = [HAM, SPAM, UNSURE, HAM, SPAM, HAM, UNSURE, SPAM, SPAM]
    scores = [0.1, 0.95, 0.5, 0.2, 0.99, 0.3, 0.6, 1.0, 0.97]
    figures = classic.verdict_figures(y, v, scores)
    assert figures["ham_as_spam"] == 1 / 4 and figures["spam_as_ham"] == 1 / 5
    assert figures["unsure"] == 2 / 9 and figures["unsure_ham"] == 1 / 4 and figures["unsure_spam"] == 1 / 5
    assert figures["decided_accuracy"] == 5 / 7
    assert figures["spam_verdict_accuracy"] == 6 / 9  # unsure counted as not spam
    # ranks: one spam (0.3) below two ham (0.5, 0.95), one spam (0.6) below one ham (0.95): 3 of 20 pairs
    assert figures["one_minus_auc_percent"] == pytest.approx(100 * 3 / 20)
    assert classic.verdict_figures([SPAM, SPAM], [SPAM, HAM], [0.9, 0.1])["one_minus_auc_percent"] is None


def test_verdict_figures_equal_streamnbs_filter_report():
    rng = np.random.default_rng(1)
    n = 500
    y = rng.choice([HAM, SPAM], n).tolist()
    v = rng.choice([HAM, SPAM, UNSURE], n, p=[0.45, 0.45, 0.1]).tolist()
    scores = rng.random(n)
    log_odds = np.log(scores / (1 - scores))
    labels = np.empty(n, dtype=object)
    labels[:] = y
    report = FilterReport(positive=SPAM, negative=HAM, y_true=labels, verdicts=np.array(v, dtype=object),
                          scores=scores, log_odds=log_odds, model_predictions=labels, model_probability=scores,
                          probability=scores, curve=[])
    figures = classic.verdict_figures(y, v, scores.tolist())
    assert figures["ham_as_spam"] == report.verdict_false_positive_rate
    assert figures["spam_as_ham"] == report.verdict_false_negative_rate
    assert figures["unsure"] == report.unsure_rate
    assert figures["unsure_ham"] == report.unsure_rate_of(HAM)
    assert figures["decided_accuracy"] == pytest.approx(report.decided_accuracy, abs=1e-15)
    assert figures["one_minus_auc_percent"] == pytest.approx(report.one_minus_auc_percent, abs=1e-12)


def test_bayes_window_and_printed_score():
    labels = [SPAM] * 3 + [HAM, SPAM, HAM, HAM, SPAM]
    assert classic.bayes_window(labels, spam=3, ham=2) == 6  # after 3 spam and the 2nd ham (index 5)
    assert classic.bayes_window(labels, spam=3, ham=9) is None
    assert classic.printed_score(0.99999951) == 1.0 and classic.printed_score(0.1234564) == 0.123456


def test_stream_key_depends_on_messages_labels_and_order():
    raws, labels = [b"a", b"b"], [SPAM, HAM]
    key = classic.stream_key(raws, labels)
    assert key == classic.stream_key(list(raws), list(labels))
    assert key != classic.stream_key(raws[::-1], labels[::-1])
    assert key != classic.stream_key(raws, [HAM, HAM])


# -- the runner, with a stand-in filter ------------------------------------------------------------

FAKE = """
import json, os, sys
folder, command = sys.argv[1], sys.argv[2]
path = os.path.join(folder, "counts.json")
counts = json.load(open(path))
text = sys.stdin.buffer.read()
if command == "classify":
    score = 0.9 if b"cheap" in text else 0.1 if b"meeting" in text else 0.5
    print(("SPAM" if score >= 0.6 else "GOOD") + " %.7f %d" % (score, counts["spam"] + counts["ham"]))
else:
    counts[command] += 1
    json.dump(counts, open(path, "w"))
"""


@pytest.fixture
def fake_filter(tmp_path):
    script = tmp_path / "fake_filter.py"
    script.write_text(FAKE)
    return classic.ClassicFilter(
        name="fake", packages=("python3",), programs=(sys.executable,),
        create=lambda d: [sys.executable, "-c", f"import json; json.dump({{'spam': 0, 'ham': 0}}, "
                                                f"open({d + '/counts.json'!r}, 'w'))"],
        classify=lambda d: [sys.executable, str(script), d, "classify"],
        train=lambda d, label: [sys.executable, str(script), d, label],
        parse=classic.parse_spamprobe, version_command=(sys.executable, "--version"), settings=dict)


def test_run_filter_classifies_then_trains_each_message_in_its_own_process(fake_filter, tmp_path, monkeypatch):
    raws = [b"Subject: cheap pills\n\ncheap", b"Subject: meeting\n\nmeeting at ten", b"Subject: x\n\nhello",
            b"Subject: cheap\n\ncheap", b"Subject: lunch\n\nmeeting"]
    labels = [SPAM, HAM, HAM, SPAM, HAM]
    record = classic.run_filter(fake_filter, raws, labels)
    assert record["verdicts"] == [SPAM, HAM, HAM, SPAM, HAM]
    assert record["scores"] == [0.9, 0.1, 0.5, 0.9, 0.1]
    assert record["messages"] == 5 and record["stream"] == classic.stream_key(raws, labels)
    for key in ("classify_wall", "classify_cpu", "train_wall", "train_cpu"):
        assert len(record[key]) == 5 and all(t >= 0 for t in record[key])
    assert record["child_cpu_seconds"] >= sum(record["classify_cpu"]) + sum(record["train_cpu"]) - 1e-6 > 0
    row = classic.summarise(record, labels)
    assert row["ham_as_spam"] == 0 and row["spam_as_ham"] == 0 and row["unsure"] == 0
    assert row["one_minus_auc_percent"] == 0.0 and row["msg_per_s_wall"] > 0 and row["msg_per_s_cpu"] > 0

    monkeypatch.setattr(classic, "CACHE", tmp_path / "cache")
    first, hit = classic.cached_run(fake_filter, raws, labels)
    assert not hit and classic.cached(fake_filter, raws, labels) == first
    again, hit = classic.cached_run(fake_filter, raws, labels)
    assert hit and again == first
    assert classic.cached(fake_filter, raws[:3], labels[:3]) is None


def test_run_filter_stops_on_a_failed_training_call(fake_filter):
    broken = classic.ClassicFilter(**{**fake_filter.__dict__, "train": lambda d, label: [sys.executable, "-c",
                                                                                           "raise SystemExit(4)"]})
    with pytest.raises(ClassicFilterError, match="training message 0 as spam exited 4"):
        classic.run_filter(broken, [b"cheap"], [SPAM])


def test_missing_filters_are_reported_not_run(monkeypatch):
    absent = classic.ClassicFilter(**{**classic.BOGOFILTER.__dict__, "name": "absent",
                                      "programs": ("no-such-program-streamnb",)})
    logged = []
    unavailable = classic.ensure_installed([absent], install=False, log=logged.append, why="--quick never installs")
    assert unavailable == {"absent": "no-such-program-streamnb not installed (Debian packages: bogofilter); "
                                     "--quick never installs"}
    assert logged == []


def test_commands_name_the_database_folder():
    commands = classic.BOGOFILTER.commands("DIR")
    assert commands == {"create": "bogoutil -l DIR/wordlist.db < /dev/null",
                        "classify": "bogofilter -C -d DIR -TT < message",
                        "train spam": "bogofilter -C -d DIR -s < message",
                        "train ham": "bogofilter -C -d DIR -n < message"}
    assert classic.SPAMASSASSIN.commands("DIR")["train ham"] == "spamc -U DIR/spamd.sock -x -L ham < message"
