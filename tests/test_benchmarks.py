"""The benchmark suite: its --quick smoke run on a generated corpus, results.json's schema, the README section.

The smoke run happens in a subprocess without STREAMNB_SPAMASSASSIN, so it uses the
synthetic fallback corpus and never touches the committed results. Timings are not
tested (they are the suite's output, not a property of the code); the structure is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

for _module in ("river", "sklearn", "matplotlib", "pandas"):
    pytest.importorskip(_module)

from benchmarks import report  # noqa: E402
from benchmarks.data import SYNTHETIC, load_corpus, synthetic_messages  # noqa: E402
from benchmarks.sections import SECTIONS, default_sections  # noqa: E402
from benchmarks.suite import SCHEMA, parse_sections  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "benchmarks" / "results.json"
PNG = b"\x89PNG\r\n\x1a\n"
TARGET_IDS = {"mnb_vs_river", "mnb_email_vs_river", "mnb_dicts_vs_river", "bnb_vs_river", "bnb_dicts_whole_stream",
              "cnb_vs_river", "cnb_dicts_whole_stream", "mnb_vs_sklearn", "batch_vs_sklearn", "predict_cost_vs_vocabulary",
              "memory_vs_river", "tokenizer_vs_river", "email_tokenizer_vs_river", "email_tokenizer_vs_email_parse",
              "corrections_right_after", "corrections_in_between", "corrections_command_service",
              "corrections_command_service_between"}
OPT_IN_TARGET_IDS = {  # sections not run by default
    "serve": {"serve_vs_classify", "classify_one_message", "serve_default_vs_previous", "explain_cost", "library_scaling",
              "serve_scaling_spamc", "serve_scaling_in_process", "serve_p50_one_client"},
    "site": {"site_partial_vs_library", "site_check_throughput"},
    "store": {"store_propagation_p99", "store_workers_scaling"},
    "smoothing": {"smoothing_20news_mnb_prequential", "smoothing_20news_mnb_test", "smoothing_20news_cnb_prequential",
                  "smoothing_20news_cnb_test", "smoothing_sa_mnb", "smoothing_sa_cnb", "smoothing_sa_bnb",
                  "smoothing_trec_mnb", "smoothing_trec_cnb", "smoothing_trec_bnb", "smoothing_predict_cost",
                  "smoothing_learn_cost", "smoothing_learn_alone_cost", "smoothing_learn_many_cost"},
    "trec": {"trec_ranking", "trec_ham_as_spam", "trec_spam_as_ham", "trec_unsure", "trec_speed", "trec_lr_speed",
             "trec_improves", "trec_file_size", "trec_memory"},
    "logistic": {"lr_speed_raw_mail", "lr_20news"},
    "feedback": {"feedback_delay_vs_baseline", "feedback_partial_vs_baseline", "feedback_active_vs_baseline",
                 "feedback_full_ranking", "feedback_full_spam_as_ham", "feedback_observe_cost",
                 *(f"feedback_{task}_{what}" for task in ("full", "delay", "partial", "active")
                   for what in ("ham_as_spam", "unsure")),
                 "feedback_sa_ranking", "feedback_sa_ham_as_spam", "feedback_sa_spam_as_ham", "feedback_sa_unsure"},
}


def run_quick(out, *args, unset=("STREAMNB_SPAMASSASSIN",), set_=None):
    """(results, the finished process) of ``python -m benchmarks --quick *args --out out``, with the
    variables ``unset`` left out of the environment (the synthetic corpus instead of the real ones)
    and those of ``set_`` given."""
    env = {**{k: v for k, v in os.environ.items() if k not in unset}, **(set_ or {})}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", *args, "--out", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((out / "results.json").read_text()), done


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """(output folder, results, stdout) of ``python -m benchmarks --quick`` on the synthetic corpus."""
    out = tmp_path_factory.mktemp("bench")
    results, done = run_quick(out, "--quiet")
    return out, results, done.stdout


def summaries(node, path="results"):
    """Every timed summary ({"median", "min", "max", ...}) in the results, with where it is."""
    if isinstance(node, dict):
        if "median" in node:
            yield path, node
        for key, value in node.items():
            yield from summaries(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from summaries(value, f"{path}[{i}]")


def check_schema(results, quick: bool) -> None:
    assert results["schema"] == SCHEMA
    assert set(results) == {"schema", "suite", "machine", "versions", "corpus", "sections", "targets"}
    suite = results["suite"]
    assert suite["quick"] is quick and suite["repeats"] >= 1
    assert suite["command"].startswith("python -m benchmarks")
    for moment in (suite["started"], suite["finished"]):
        assert set(moment) == {"time", "load_average"}
    machine = results["machine"]
    assert {"cpu", "cores", "python", "os", "threads"} <= set(machine)
    assert machine["cores"] >= 1
    assert {"streamnb", "river", "scikit-learn", "numpy"} <= set(results["versions"])
    assert all(results["versions"][name] for name in ("streamnb", "river", "scikit-learn", "numpy"))
    corpus = results["corpus"]
    assert corpus["messages"] == corpus["spam"] + corpus["ham"] > 0
    assert set(default_sections()) <= set(results["sections"])
    for name, section in results["sections"].items():
        assert name in SECTIONS
        assert {"run", "data"} == set(section)
        assert section["run"]["repeats"] >= 1 and section["run"]["quick"] is quick
    for where, stat in summaries(results["sections"]):
        assert stat["min"] <= stat["median"] <= stat["max"], where
        if "runs" in stat:
            assert len(stat["runs"]) == results["sections"][where.split(".")[1]]["run"]["repeats"], where
        if "clock" in stat and stat["clock"] is not None:
            assert stat["clock"] in ("cpu", "wall"), where
    targets = results["targets"]
    opt_in = set().union(*(ids for name, ids in OPT_IN_TARGET_IDS.items() if name in results["sections"]))
    assert {t["id"] for t in targets} == TARGET_IDS | opt_in
    for t in targets:
        assert t["status"] in ("PASS", "MISS", "n/a")
        if t["value"] is None:
            assert t["status"] == "n/a"
        else:
            passed = t["value"] >= t["threshold"] if t["op"] == ">=" else t["value"] <= t["threshold"]
            assert t["status"] == ("PASS" if passed else "MISS")
    assert targets == report.evaluate_targets(results)


def test_smoke_run_writes_results_with_the_schema(smoke):
    _, results, _ = smoke
    check_schema(results, quick=True)
    assert results["corpus"]["name"] == SYNTHETIC


def test_smoke_run_figures_are_plausible(smoke):
    _, results, _ = smoke
    sections = results["sections"]
    throughput = sections["throughput"]["data"]
    n, prefix = throughput["messages"], throughput["prefix"]
    for row in throughput["rows"].values():
        assert row["messages"] == (n if row["span"] == "full" else prefix)
        assert row["msg_per_s"]["median"] > 0
    whole = sections["fullstream"]["data"]
    assert whole["checkpoints"][-1] == whole["messages"] == n
    series = {f"{model} {input_}" for model in ("BNB", "CNB") for input_ in ("text", "dicts")}
    assert set(whole["streamnb"]) == set(whole["river"]) == set(whole["ratios"]) == series
    assert set(whole["river_exact"]) == {"BNB dicts"}
    for clock in [s["checkpoints"] for group in ("streamnb", "river", "river_exact") for s in whole[group].values()]:
        assert len(clock) == len(whole["checkpoints"]) and clock == sorted(clock) and clock[0] > 0
    for key, river in whole["river"].items():
        # every message learned, 1 in `stride` predicted (at least one per slice)
        assert sum(river["sampled"]) >= whole["messages"] // whole["stride"] and min(river["sampled"]) >= 1
        exact = whole["river_exact"].get(key)
        river_total = (exact or river)["checkpoints"][-1]
        assert whole["ratios"][key]["value"] == river_total / whole["streamnb"][key]["seconds"]["median"]
    assert whole["estimate_error"] == (whole["river"]["BNB dicts"]["checkpoints"][-1]
                                       / whole["river_exact"]["BNB dicts"]["checkpoints"][-1] - 1)
    ceilings = sections["ceilings"]["data"]
    seconds = {name: stat["runs"] for name, stat in ceilings["seconds"].items()}
    for input_, river in (("text", "river BagOfWords | MNB"), ("dicts", "river MNB")):
        full = seconds[f"public API ({input_})"]
        assert ceilings["call_share"][input_]["runs"] == [a / b for a, b in zip(seconds["two no-op calls"], full)]
        assert ceilings["ceiling"][input_]["runs"] == [a / b for a, b in zip(seconds[river],
                                                                             seconds["two no-op calls"])]
        assert 0 < ceilings["call_share"][input_]["median"] < ceilings["empty_share"][input_]["median"] < 1
    batch = sections["batch"]["data"]["rows"]
    # scikit-learn's CountVectorizer and streamnb's Tokenizer share a token pattern: same vocabulary
    assert batch["streamnb MultinomialNB(tokenizer=Tokenizer()).learn_many"]["n_features"] == \
        batch["scikit-learn CountVectorizer + MultinomialNB.fit"]["n_features"]
    accuracy = sections["accuracy"]["data"]
    for table in ("prequential", "prequential_prefix", "split_80_20"):
        for row in accuracy[table].values():
            assert 0 <= row["accuracy"] <= 1 and 0 <= row["fpr"] <= 1
    # the same tokens and formulas give the same held-out predictions as scikit-learn
    split = accuracy["split_80_20"]
    for model in ("MNB", "BNB", "CNB"):
        assert split[f"streamnb {model} + Tokenizer"]["accuracy"] == \
            split[f"scikit-learn CountVectorizer + {model}"]["accuracy"]
    memory = sections["memory"]["data"]["rows"]
    assert all(row["rss_bytes"]["median"] > 0 for row in memory.values())
    assert all(row["tracemalloc_bytes"] > 0 for row in memory.values() if row["library"] == "river")
    assert all(row["nbytes"] > 0 for row in memory.values() if row["library"] == "streamnb")
    for series in sections["scaling"]["data"]["vocabulary"]["series"].values():
        assert series["points"]


def test_smoke_run_writes_report_and_plots(smoke):
    out, results, stdout = smoke
    text = (out / "RESULTS.md").read_text()
    for name in results["sections"]:
        assert f"## {SECTIONS[name].TITLE}" in text
    assert "QUICK SMOKE RUN" in text and "SYNTHETIC" in text
    pngs = sorted(out.glob("*.png"))
    assert {p.name for p in pngs} >= {"throughput.png", "batch.png", "scaling_vocabulary.png", "scaling_classes.png",
                                      "memory.png", "accuracy.png", "tokenizers.png"}
    for png in pngs:
        assert png.read_bytes()[:8] == PNG
        assert f"]({png.name})" in text
    for target in results["targets"]:
        assert target["what"] in stdout and target["status"] in stdout


def test_classic_section_quick_run_runs_or_skips_each_filter(tmp_path):
    """``--quick --only classic``: the first 30 messages through every installed classic filter; the others are
    recorded as skipped with the reason, and the log says so."""
    from benchmarks import bench_classic

    results, done = run_quick(tmp_path, "--only", "classic")
    data = results["sections"]["classic"]["data"]
    assert data["messages"] == bench_classic.QUICK_PREFIX == data["spam"] + data["ham"]
    for name, f in bench_classic.FILTERS.items():
        if f.missing():
            assert name not in data["rows"] and "--quick never installs" in data["skipped"][name]
            assert f"{name}: SKIPPED" in done.stdout
        else:
            row = data["rows"][name]
            assert row["messages"] == data["messages"] and row["msg_per_s_wall"] > 0
            for rate in ("ham_as_spam", "spam_as_ham", "unsure"):
                assert 0 <= row[rate] <= 1
            assert set(data["commands"][name]) >= {"classify", "train spam", "train ham"}
    assert data["rows"]["streamnb"]["messages"] == data["messages"]
    text = (tmp_path / "RESULTS.md").read_text()
    assert f"## {bench_classic.TITLE}" in text and "streamnb evaluate (defaults, in-process)" in text


@pytest.mark.parametrize("model", ["BNB", "CNB"])
@pytest.mark.parametrize("text", [False, True])
def test_river_predictions_leave_its_model_unchanged(model, text):
    """bench_fullstream times 1 in `stride` of river's predictions and skips the others: sound only because a
    prediction changes nothing in river's model (unknown words included)."""
    import pickle

    from benchmarks.contenders import river_model, river_pipeline

    corpus = load_corpus(SYNTHETIC, limit=60)
    xs = corpus.texts if text else corpus.dicts
    learner = river_pipeline(model) if text else river_model(model)
    for x, y in zip(xs[:30], corpus.labels[:30]):
        learner.learn_one(x, y)
    before = pickle.dumps(learner)
    for x in xs[30:] + [{"never-seen-word": 3}] * (not text) + ["never seen words"] * text:
        learner.predict_one(x)
        learner.predict_proba_one(x)
    assert pickle.dumps(learner) == before


def test_sampled_prequential_learns_everything_and_predicts_one_in_stride():
    from benchmarks.bench_fullstream import estimate, sampled_prequential

    class Recorder:
        def __init__(self):
            self.calls = []

        def predict_one(self, x):
            self.calls.append(("predict", x))

        def learn_one(self, x, y):
            self.calls.append(("learn", x, y))

    recorder = Recorder()
    xs, ys = list(range(23)), [f"c{i % 2}" for i in range(23)]
    sample = sampled_prequential(recorder, xs, ys, every=5, stride=8)
    assert [c[1:] for c in recorder.calls if c[0] == "learn"] == list(zip(xs, ys))  # every message, in order
    # the middle of each run of 8 (4, 12, 20), and the last message of a slice of 5 that had none (9, 19)
    assert [c[1] for c in recorder.calls if c[0] == "predict"] == [4, 9, 12, 19, 20]
    assert sample["sampled"] == [1, 1, 1, 1, 1] and len(sample["learn_seconds"]) == 5
    # a message is predicted right before it is learned
    assert recorder.calls.index(("predict", 12)) == recorder.calls.index(("learn", 12, "c0")) - 1
    fake = {"learn_seconds": [1.0, 2.0], "sampled_predict_seconds": [0.5, 0.3], "sampled": [2, 3]}
    assert estimate(fake, [10, 9]) == [1.0 + 10 * 0.25, 2.0 + 9 * 0.1]


@pytest.mark.parametrize("text", [False, True])
def test_ceilings_core_calls_train_the_model_the_public_api_trains(text):
    """The ceilings section times `Core.learn_one(x, y, 1.0, 1.0)` as the public learn_one minus its Python layer."""
    from benchmarks.contenders import streamnb_model

    corpus = load_corpus(SYNTHETIC, limit=50)
    xs = corpus.texts if text else corpus.dicts
    direct, public = (streamnb_model("MNB", "Tokenizer" if text else None) for _ in range(2))
    for x, y in zip(xs, corpus.labels):
        direct._core.predict_one(x, direct.alpha)
        direct._core.learn_one(x, y, 1.0, 1.0)
        public.predict_one(x)
        public.learn_one(x, y)
    assert direct.n_learned == public.n_learned == 50 and direct.class_counts == public.class_counts
    for x in xs[:10]:
        assert direct.predict_log_proba_one(x) == public.predict_log_proba_one(x)


def test_committed_results_have_the_schema():
    results = json.loads(COMMITTED.read_text())
    check_schema(results, quick=False)
    assert results["corpus"]["name"] == "spamassassin"


def test_readme_section_is_generated_from_committed_results():
    results = json.loads(COMMITTED.read_text())
    results["targets"] = report.evaluate_targets(results)
    readme = (ROOT / "README.md").read_text()
    assert report.current_section(readme) == report.readme_section(results), \
        "README performance section is stale: run python -m benchmarks.report"


def test_replace_section_swaps_only_the_marked_part():
    text = f"intro\n{report.START}\nold\n{report.END}\noutro\n"
    new = f"{report.START}\nnew\n{report.END}"
    assert report.replace_section(text, new) == f"intro\n{new}\noutro\n"
    with pytest.raises(ValueError, match="markers"):
        report.replace_section("no markers here", new)


def test_judge_says_by_how_much_a_target_is_missed():
    missed = report.judge({"value": 5.0, "threshold": 15, "op": ">=", "unit": "x", "what": "speed"})
    assert missed["status"] == "MISS" and missed["factor"] == pytest.approx(3.0)
    assert "3.00 times short" in report.verdict(missed)
    over = report.judge({"value": 0.6, "threshold": 0.4, "op": "<=", "unit": "x", "what": "memory"})
    assert over["status"] == "MISS" and "1.50 times over" in report.verdict(over)
    assert report.judge({"value": 0.3, "threshold": 0.4, "op": "<=", "unit": "x", "what": "m"})["status"] == "PASS"
    assert report.judge({"value": None, "threshold": 1.3, "op": "<=", "unit": "", "what": "m"})["status"] == "n/a"


def test_section_selection():
    assert parse_sections(None, None) == default_sections()
    assert parse_sections("accuracy,throughput", None) == ["throughput", "accuracy"]  # suite order
    assert "distributed" not in default_sections() and parse_sections("distributed", None) == ["distributed"]
    assert "serve" not in default_sections() and parse_sections("serve", None) == ["serve"]
    assert parse_sections(None, "memory") == [name for name in default_sections() if name != "memory"]
    with pytest.raises(SystemExit, match="unknown section"):
        parse_sections("nonsense", None)


def test_synthetic_corpus_is_deterministic_and_in_date_order(monkeypatch):
    monkeypatch.delenv("STREAMNB_SPAMASSASSIN", raising=False)
    corpus = load_corpus(None, limit=120)
    assert corpus.name == SYNTHETIC and len(corpus) == 120
    assert {"ham", "spam"} == set(corpus.labels)
    dates = [m.date for m in corpus.messages]
    assert dates == sorted(dates)
    assert [m.raw for m in synthetic_messages(120)] == corpus.raw
    assert all(b"\nDate: " in raw and b"\n\n" in raw for raw in corpus.raw)


def test_smoothing_section_quick_run_measures_or_says_what_it_skipped(tmp_path):
    """``--quick --only smoothing`` on the synthetic corpus, without the 20 Newsgroups and
    trec07p-dev variables: the SpamAssassin-shaped stream and the cost are measured, the two
    corpora are recorded as skipped with the reason, and their targets are n/a."""
    from benchmarks import bench_smoothing

    results, _ = run_quick(tmp_path, "--only", "smoothing",
                           unset=("STREAMNB_SPAMASSASSIN", bench_smoothing.NEWSGROUPS_ENV, bench_smoothing.TREC_ENV))
    data = results["sections"]["smoothing"]["data"]
    assert set(data["skipped"]) == {"20 Newsgroups", "trec07p-dev"}
    rows = data["spamassassin"]["streams"]["Date order"]
    assert set(rows) == {"MNB", "CNB", "BNB", "MNB mu"}
    for row in rows.values():
        assert row["best_fixed"]["figure"] == min(row["fixed"].values())
        assert 0 <= row["auto"] <= 100 and row["documents"] > 0
    cost = data["cost"]["spamassassin token dicts"]["kinds"]["MNB"]
    assert cost["predict"]["ratio"]["median"] > 0 and cost["nbytes"]["auto"] > cost["nbytes"]["fixed"]
    status = {t["id"]: t["status"] for t in results["targets"]}
    assert status["smoothing_20news_mnb_test"] == status["smoothing_trec_bnb"] == "n/a"
    assert status["smoothing_sa_mnb"] in ("PASS", "MISS")
    assert f"## {bench_smoothing.TITLE}" in (tmp_path / "RESULTS.md").read_text()


def test_the_spam_cutoff_sweep_turns_spam_verdicts_below_the_raised_cutoff_into_unsure():
    from benchmarks.bench_trec import CUTOFF_RAISES, spam_cutoff_sweep

    labels = ["ham", "ham", "spam", "spam", "ham"]
    scores = [4.0, 9.0, 10.0, -3.0, 0.0]
    verdicts = ["spam", "spam", "spam", "ham", "unsure"]
    cutoffs = [3.0, 3.0, 3.0, 3.0, 3.0]
    sweep = {row["raise"]: row for row in spam_cutoff_sweep(labels, scores, verdicts, cutoffs)}
    assert list(sweep) == list(CUTOFF_RAISES) and CUTOFF_RAISES[0] == 0.0
    assert (sweep[0.0]["ham_as_spam_count"], sweep[0.0]["unsure"]) == (2, 1 / 5)  # as the filter said
    assert (sweep[3.0]["ham_as_spam_count"], sweep[3.0]["unsure"]) == (1, 2 / 5)  # z 4 < 6: unsure now
    assert (sweep[7.0]["ham_as_spam_count"], sweep[7.0]["unsure"]) == (0, 3 / 5)  # 9 < 10: unsure; 10 stays spam
    assert sweep[7.0]["ham_as_spam"] == 0.0


FEEDBACK_UNSET = ("STREAMNB_SPAMASSASSIN", "STREAMNB_TREC07P", "STREAMNB_TREC07P_FEEDBACK")


def test_feedback_section_quick_run_on_a_made_up_trec_corpus(tmp_path):
    """``--quick --only feedback`` with STREAMNB_TREC07P naming a tiny TREC-layout corpus written here (its
    delay and partial indexes inside) and the synthetic SpamAssassin stand-in: every contender under every task on
    the same stream, each figure the one run_task gives, only the labels each task allows, the targets judged."""
    from benchmarks import bench_classic, bench_feedback
    from streamnb import SpamFilter
    from streamnb.filter.tasks import TASKS, run_task
    from tests.trec_corpus import N_MESSAGES, label_of, labelled, raw_message, write_trec_folder

    corpus = write_trec_folder(tmp_path / "trec07p-tiny")
    out = tmp_path / "out"
    results, _ = run_quick(out, "--only", "feedback", unset=FEEDBACK_UNSET, set_={"STREAMNB_TREC07P": str(corpus)})
    data = results["sections"]["feedback"]["data"]
    assert data["messages"] == N_MESSAGES and data["quota"] == 1  # 1,000 in 50,000: the same share
    assert data["labels_given"] == {"delay": 16, "partial": 16}
    assert data["indexes"] == {"full": "full/index", "delay": "delay/index", "partial": "partial/index",
                               "active": "full/index"}
    stream = [(raw_message(i), label_of(i)) for i in range(N_MESSAGES)]
    bogofilter = bench_classic.BOGOFILTER
    for task in TASKS:
        rows = data["tasks"][task]
        expected = {"streamnb default", "previous default", "numpy baseline"} | (
            set() if bogofilter.missing() else {"bogofilter"})
        assert set(rows) == expected
        given = [labelled(task, i) for i in range(N_MESSAGES)] if task in ("delay", "partial") else None
        direct = run_task(SpamFilter(), stream, task, labelled=given, quota=1 if task == "active" else None)
        default = rows["streamnb default"]
        assert default["ranking"] == {"whole": direct.one_minus_auc_percent}
        assert (default["ham_as_spam_count"], default["spam_as_ham_count"], default["unsure_count"]) == tuple(
            direct.verdict_counts()[k] for k in ("ham_as_spam", "spam_as_ham", "unsure"))
        assert rows["numpy baseline"]["vs_baseline"] == 1.0 and "ham_as_spam" not in rows["numpy baseline"]
        assert default["vs_baseline"] == default["ranking"]["whole"] / rows["numpy baseline"]["ranking"]["whole"]
        for name, row in rows.items():
            n = row["messages"]
            assert n == (bench_classic.QUICK_PREFIX if name == "bogofilter" else N_MESSAGES)
            labels_allowed = {"full": n, "delay": min(n, 16), "partial": sum(labelled("partial", i) for i in range(n))}
            if task == "active":
                assert row["labels_used"] <= 1 and row["labels_asked"] >= row["labels_used"]
            else:
                assert row["labels_used"] == labels_allowed[task], (task, name)
            assert set(row["disputed_share"]) == set()  # the made-up corpus has none of the disputed messages
    cost = data["cost"]
    assert {task: c["observed"] for task, c in cost["tasks"].items()} == {"delay": 32, "partial": 32, "active": 47}
    assert cost["chunks"]["chunks"] == 3 and cost["chunks"]["min"] <= cost["chunks"]["median"] <= cost["chunks"]["max"]
    sa = data["spamassassin"]
    assert sa["corpus"] == SYNTHETIC and len(sa["runs"]) == 3
    for what, rows in sa["runs"].items():
        assert set(rows) == {"streamnb default", "previous default"}
        for row in rows.values():
            assert row["labels_used"] == (sa["messages"] if what.startswith("full") else sa["messages"] // 5)
    ids = {t["id"]: t["status"] for t in results["targets"]}
    assert set(ids) == OPT_IN_TARGET_IDS["feedback"] and set(ids.values()) <= {"PASS", "MISS"}
    text = (out / "RESULTS.md").read_text()
    assert f"## {bench_feedback.TITLE}" in text and "**active**" in text and "Cost of `observe`" in text
    causes = bench_feedback.ham_causes(stream)
    assert not any(causes)
    assert data["hams_by_cause"] == {what: causes.count(what) for what in bench_feedback.CAUSES}
    for task in TASKS:
        for name, row in data["tasks"][task].items():
            if name != "numpy baseline":
                by_cause = row["ham_as_spam_by_cause"]
                assert set(by_cause) == {*bench_feedback.CAUSES, "other"}
                assert sum(by_cause.values()) == row["ham_as_spam_count"]
                for what in bench_feedback.CAUSES:
                    assert by_cause[what] <= data["hams_by_cause"][what]
            assert row["ranking_unmarked"] == row["ranking"]["whole"]  # the made-up corpus marks no ham


def test_hams_whose_like_was_labelled_spam_are_found_in_stream_order():
    """A ham is marked "subject" when a message before it with the same (whitespace-normalised)
    Subject was labelled spam, "list" when one before it of its List-Id (case aside) was, and
    "disputed" by its name: not when the spam comes after, not for an empty Subject or
    List-Id, never a spam; the Subject is looked at first."""
    from benchmarks.bench_feedback import ham_causes

    def message(subject: str | None, list_id: str | None = None) -> bytes:
        head = f"Subject: {subject}\n" if subject is not None else ""
        head += f"List-Id: {list_id}\n" if list_id is not None else ""
        return f"From: a@example.org\n{head}\nbody\n".encode()

    stream = [(message("Newsletter  7"), "ham"), (message("Newsletter 7"), "spam"), (message("Newsletter 7"), "spam"),
              (message("Newsletter 7"), "ham"), (message(""), "spam"), (message(""), "ham"), (message(None), "ham"),
              (message("other"), "ham"), (b"\xff\x00 not mail", "ham"),
              (message("a", "<Reform.example>"), "ham"), (message("b", "<reform.example>"), "spam"),
              (message("c", "<reform.example>"), "ham"), (message("Newsletter 7", "<reform.example>"), "ham"),
              (message("d", ""), "ham"), (message("e"), "ham")]
    names = [f"inmail.{i}" for i in range(len(stream) - 1)] + ["inmail.23337"]
    assert ham_causes(stream, names) == [None, None, None, "subject", None, None, None, None, None,
                                         None, None, "list", "subject", None, "disputed"]
    assert ham_causes(stream)[-1] is None


def test_feedback_section_skips_with_its_reason(tmp_path):
    """Without STREAMNB_TREC07P, or on a corpus without its feedback indexes, the section says why it did not run."""
    from benchmarks import bench_feedback
    from tests.trec_corpus import write_trec_folder

    results, done = run_quick(tmp_path / "none", "--only", "feedback", unset=FEEDBACK_UNSET)
    assert results["sections"]["feedback"]["data"] == {"skipped": "STREAMNB_TREC07P is not set (the TREC 2007 corpus, "
                                                                  "research use only, is not distributed)"}
    assert results["targets"] == [] and "SKIPPED: STREAMNB_TREC07P is not set" in done.stdout
    bare = write_trec_folder(tmp_path / "bare", feedback=False)
    run_quick(tmp_path / "bare-out", "--only", "feedback", unset=FEEDBACK_UNSET, set_={"STREAMNB_TREC07P": str(bare)})
    data = json.loads((tmp_path / "bare-out" / "results.json").read_text())["sections"]["feedback"]["data"]
    assert "has no delay/index, which the delay task needs" in data["skipped"]
    assert f"## {bench_feedback.TITLE}" in (tmp_path / "bare-out" / "RESULTS.md").read_text()


def test_classic_section_scores_streamnb_from_spamassassins_window(monkeypatch):
    """Past SpamAssassin's Bayes window (200 spam and 200 ham learned) the classic section runs the
    command's model and rule again for the window's (1-AUC)%: that path must run and agree with the
    whole-stream figure it checks against (--quick's 30 messages never reach it)."""
    from benchmarks import bench_classic

    monkeypatch.delenv("STREAMNB_SPAMASSASSIN", raising=False)
    corpus = load_corpus(None, limit=700)
    window = bench_classic.bayes_window(corpus.labels)
    assert window is not None and window < len(corpus)
    row = bench_classic.streamnb_command_row(corpus.raw, corpus.labels)
    assert row["messages"] == len(corpus)
    assert row["one_minus_auc_percent_window"] is not None
    assert 0.0 <= row["one_minus_auc_percent_window"] <= 100.0


# The opt-in sections with a quick-run test of their own above; every other one runs below, so a
# section that breaks fails here (classic, feedback and smoothing are run by their own tests).
QUICK_TESTED_ELSEWHERE = {"classic", "feedback", "smoothing"}


@pytest.mark.parametrize("name", sorted(set(SECTIONS) - set(default_sections()) - QUICK_TESTED_ELSEWHERE))
def test_every_opt_in_section_quick_run_measures_or_says_why_not(tmp_path, name):
    """``--quick --only NAME`` with this machine's corpora (the synthetic stream for SpamAssassin's):
    it exits 0 and its section either holds figures and its targets, or the reason it skipped."""
    results, done = run_quick(tmp_path, "--only", name)
    data = results["sections"][name]["data"]
    skipped = data.get("skipped")
    if isinstance(skipped, str):  # the whole section: its data is missing here
        assert skipped in done.stdout and set(data) == {"skipped"}
        return
    assert len(data) > 1
    ids = {target["id"] for target in results["targets"] if target["section"] == name}
    if name in OPT_IN_TARGET_IDS:  # --quick's small stream measures what it can (no last 10,000 of trec07p-dev ...)
        assert ids and ids <= OPT_IN_TARGET_IDS[name]
    assert (tmp_path / "RESULTS.md").read_text().count(f"## {SECTIONS[name].TITLE}") == 1


def test_the_previous_service_trains_with_its_own_code_and_says_why_it_cannot_be_built(tmp_path, monkeypatch):
    """benchmarks.previous_service: the model is trained by the interpreter given, outside this tree and without
    PYTHONPATH, on the messages in order (here this interpreter: today's default, a Fusion, which is refused where
    EmailNB is expected); a commit the clone does not hold is a one-line RuntimeError, and nothing is marked built."""
    from benchmarks import previous_service
    from streamnb import load

    messages = synthetic_messages(40)
    model = tmp_path / "model.snb"
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "elsewhere"))
    assert previous_service.train(Path(sys.executable), messages, model, tmp_path / "scratch", expect="Fusion") == "Fusion"
    assert sum(load(model).class_counts.values()) == 40
    with pytest.raises(RuntimeError, match="is a 'Fusion', not EmailNB: another streamnb was imported"):
        previous_service.train(Path(sys.executable), messages, tmp_path / "again.snb", tmp_path / "scratch-2")
    monkeypatch.setattr(previous_service, "COMMIT", "0" * 40)
    monkeypatch.setattr(previous_service, "CACHE", tmp_path / "cache")
    with pytest.raises(RuntimeError, match=r"^git -C \S+ failed \(exit \d+\): .*") as raised:
        previous_service.build(lambda line: None)
    assert "\n" not in str(raised.value)
    assert not (tmp_path / "cache" / "built").exists()


def test_feedback_figures_count_the_hams_called_spam_by_cause_and_rank_the_unmarked_hams():
    """figures() with causes: the hams called spam counted under their cause (the rest as "other", adding up to
    the count), and (1-AUC)% over the hams no cause marks against every spam, as bench_trec.auc gives it."""
    import numpy as np

    from benchmarks import bench_feedback, bench_trec
    from streamnb.filter.tasks import TaskReport

    rng = np.random.default_rng(3)
    y_true = np.array(["spam", "ham"] * 100, dtype=object)
    log_odds = rng.normal(scale=2.0, size=200) + np.where(y_true == "spam", 1.0, -1.0)
    verdicts = np.where(log_odds > 0.5, "spam", np.where(log_odds < -0.5, "ham", "unsure")).astype(object)
    report = TaskReport("delay", None, "spam", "ham", y_true, verdicts, log_odds, np.zeros(200, dtype=bool),
                        np.zeros(200, dtype=bool))
    hams = [i for i in range(200) if y_true[i] == "ham"]
    causes: list[str | None] = [None] * 200
    for k, i in enumerate(hams[::3]):
        causes[i] = bench_feedback.CAUSES[k % 3]
    row = bench_feedback.figures(report, causes=causes)
    called = [i for i in hams if verdicts[i] == "spam"]
    assert len(called) >= 5 and any(causes[i] for i in called) and not all(causes[i] for i in called)
    assert sum(row["ham_as_spam_by_cause"].values()) == row["ham_as_spam_count"] == len(called)
    for what in bench_feedback.CAUSES:
        assert row["ham_as_spam_by_cause"][what] == sum(causes[i] == what for i in called)
    assert row["ham_as_spam_by_cause"]["other"] == sum(causes[i] is None for i in called)
    kept = [i for i in range(200) if causes[i] is None]
    assert row["ranking_unmarked"] == bench_trec.auc([y_true[i] for i in kept], [log_odds[i] for i in kept])
    assert row["ranking_unmarked"] != row["ranking"]["whole"]
