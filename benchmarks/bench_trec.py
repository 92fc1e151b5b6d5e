"""trec07p: the default filter against the classic filters and online logistic regression.

Protocol of the TREC spam track (Cormack 2007): every message of the corpus in delivery
order is classified by the filter as it stands, then learned with its true label
(immediate feedback). Every contender runs on the same messages in this one run:

- **streamnb default**: ``SpamFilter()``, the :class:`~streamnb.models.Fusion` of EmailNB
  and logistic regression on byte 4-grams, with its LogOddsRule verdicts (what ``streamnb
  evaluate``, ``train`` and ``serve`` use);
- **EmailNB**: the previous default, ``SpamFilter(EmailNB())``;
- **LogisticRegression**: streamnb's logistic regression alone on ``ByteNgrams(4, 3000)``,
  hashed into 2^18 buckets (the fusion's second part), ranked by its log-odds;
- **numpy baseline**: the reference online logistic regression of the track (Goodman &
  Yih 2006), ``benchmarks.contenders.NumpyByteGramLR``, written for the benchmark;
- **bogofilter**, **spamprobe**: their Debian packages with their defaults, one process per
  call as in ``bench_classic`` (per-message results cached under benchmarks/_cache/classic/).

Figures: (1-AUC)% over the whole stream and over its first 40,000 and last 10,000 messages
(by each filter's own score: log-odds, bogofilter's spamicity, spamprobe's score); the
verdicts (ham called spam, spam called ham, unsure); CPU time per message (in this process
for streamnb and the numpy baseline, which take turns every 1,000 messages so that the
machine's changing load falls on all alike, the speed ratios taken chunk by chunk; the
child processes' for the classic filters); the
model file after the run and its memory once loaded (in a fresh process: the growth of its
resident set, and the core's own count, ``model.nbytes``), against bogofilter's wordlist.

What was tuned where: the fusion's settings and cutoffs were chosen on the first 40,000
messages of trec07p-dev and the Date-ordered SpamAssassin stream; the last 10,000 messages
are out of sample. The corpus is research-use only: it is found through
``STREAMNB_TREC07P`` (a folder or an archive) and never stored by the benchmark.
Opt-in: ``python -m benchmarks --only trec`` (about 45 minutes on a loaded 2-core machine,
most of it the classic filters' 200,000 processes; their results are cached).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from streamnb.filter.evaluate import one_minus_auc_percent

from . import bench_classic, common
from .contenders import NumpyByteGramLR

NAME = "trec"
TITLE = "trec07p: the default filter against bogofilter, spamprobe and online logistic regression"
DEFAULT = False
REPEATED = False
TREC_ENV = "STREAMNB_TREC07P"
FIRST, LAST = 40_000, 10_000
CHUNK = 1_000  # messages each in-process contender runs before the next takes its turn  # the part the settings were chosen on, and the part after it
QUICK_MESSAGES = 2_000
# Two messages labelled ham that are spam by any reading (a German stock-promotion spam, one of
# a campaign of 40 labelled spam around it; an HTML spam of word salad): their share of each
# ranking is reported beside it.
DISPUTED = {"inmail.23337": "a stock-promotion spam labelled ham", "inmail.20553": "an HTML spam labelled ham"}


def auc(labels: Sequence[str], scores: Sequence[float]) -> float | None:
    if len(set(labels)) < 2:
        return None
    return one_minus_auc_percent(list(labels), np.nan_to_num(np.asarray(scores, dtype=float), posinf=1e300,
                                                              neginf=-1e300))


def ranking(labels: Sequence[str], scores: Sequence[float]) -> dict[str, float | None]:
    n = len(labels)
    figures = {"whole": auc(labels, scores)}
    if n > FIRST:
        figures["first_40000"] = auc(labels[:FIRST], scores[:FIRST])
        figures["last_10000"] = auc(labels[-LAST:], scores[-LAST:])
    return figures


def disputed_share(names: Sequence[str], labels: Sequence[str], scores: Sequence[float]) -> dict[str, float]:
    """Each disputed ham's share of (1-AUC)%: the spam it outranks, over all (ham, spam) pairs."""
    z = np.nan_to_num(np.asarray(scores, dtype=float), posinf=1e300, neginf=-1e300)
    is_spam = np.array([label == "spam" for label in labels])
    spam_scores = np.sort(z[is_spam])
    pairs = is_spam.sum() * (~is_spam).sum()
    shares = {}
    for i, name in enumerate(names):
        if name in DISPUTED and not is_spam[i]:
            below = np.searchsorted(spam_scores, z[i], "left")
            ties = np.searchsorted(spam_scores, z[i], "right") - below
            shares[name] = float(100 * (below + 0.5 * ties) / pairs)
    return shares


def filter_step(spam_filter: Any) -> Callable[[bytes, str], tuple[float, str, float]]:
    """A SpamFilter's step: classify a message (its log-odds, verdict, and the spam cutoff its
    rule applied), then learn it."""

    def step(raw: bytes, label: str) -> tuple[float, str, float]:
        _, spam_cutoff = spam_filter.rule.cutoffs(spam_filter.model, spam_filter.positive, spam_filter.negative)
        verdict = spam_filter.classify(raw, explain=False)
        spam_filter.learn(raw, label)
        return verdict.log_odds, verdict.label, spam_cutoff

    return step


#: How much higher the default's spam cutoff is set in the sweep of its verdicts.
CUTOFF_RAISES = (0.0, 1.0, 3.0, 5.0, 7.0)


def spam_cutoff_sweep(labels: Sequence[str], scores: Sequence[float], verdicts: Sequence[str],
                      cutoffs: Sequence[float]) -> list[dict[str, float]]:
    """Ham called spam and unsure had the spam cutoff stood higher by each of CUTOFF_RAISES
    (the ham cutoff as it was): a spam verdict stays one while z >= the cutoff applied + the
    raise, else it becomes unsure. On the stream as scored: the model learns the same."""
    z = np.asarray(scores, dtype=float)
    is_ham = np.array([label == "ham" for label in labels])
    was_spam = np.array([v == "spam" for v in verdicts])
    was_unsure = np.array([v == "unsure" for v in verdicts])
    out = []
    for raise_by in CUTOFF_RAISES:
        spam = was_spam & (z >= np.asarray(cutoffs) + raise_by)
        unsure = was_unsure | (was_spam & ~spam)
        out.append({"raise": raise_by, "ham_as_spam_count": int((spam & is_ham).sum()),
                    "ham_as_spam": float((spam & is_ham).sum() / is_ham.sum()), "unsure": float(unsure.mean())})
    return out


def run_interleaved(steps: dict[str, Callable[[bytes, str], Any]], raws: Sequence[bytes], labels: Sequence[str],
                    log: Callable[[str], None], chunk: int = CHUNK) -> dict[str, dict[str, Any]]:
    """Every contender's scores (and verdicts) of every message, classified then learned, and
    its CPU time: the contenders take turns chunk by chunk, so a change in the machine's load
    falls on all of them alike (the speed ratios are also taken chunk by chunk)."""
    rows: dict[str, dict[str, Any]] = {name: {"scores": [], "verdicts": [], "cutoffs": [], "chunk_cpu": []}
                                       for name in steps}
    for start in range(0, len(raws), chunk):
        part = list(zip(raws[start:start + chunk], labels[start:start + chunk]))
        for name, step in steps.items():
            row = rows[name]
            cpu = time.process_time()
            results = [step(raw, label) for raw, label in part]
            row["chunk_cpu"].append(time.process_time() - cpu)
            for result in results:
                if isinstance(result, tuple):
                    row["scores"].append(result[0])
                    row["verdicts"].append(result[1])
                    row["cutoffs"].append(result[2])
                else:
                    row["scores"].append(result)
        if (start + chunk) % 10_000 == 0:
            log(f"  {start + chunk:,} messages")
    for row in rows.values():
        row["cpu_seconds"] = sum(row["chunk_cpu"])
        verdicts, cutoffs = row.pop("verdicts"), row.pop("cutoffs")
        if verdicts:
            row.update(bench_classic.verdict_figures(labels, verdicts, row["scores"]))
            row["spam_cutoff_sweep"] = spam_cutoff_sweep(labels, row["scores"], verdicts, cutoffs)
    return rows


def logistic_step() -> Callable[[bytes, str], float]:
    from streamnb.models.fusion import default_lr

    model = default_lr()

    def step(raw: bytes, label: str) -> float:
        log_proba = model.predict_log_proba_one(raw)
        model.learn_one(raw, label)
        return log_proba["spam"] - log_proba["ham"] if len(log_proba) == 2 else 0.0

    return step


def numpy_step() -> Callable[[bytes, str], float]:
    baseline = NumpyByteGramLR()

    def step(raw: bytes, label: str) -> float:
        ids = baseline.features(raw)
        z = baseline.log_odds(ids)
        baseline.learn(ids, z, label == "spam")
        return z

    return step


LOADED_RSS = """
import json, sys
from benchmarks.common import rss_bytes
import streamnb
before = rss_bytes()
model = streamnb.load(sys.argv[1])
print(json.dumps({"rss_growth": rss_bytes() - before, "nbytes": model.nbytes}))
"""


def memory(model: Any) -> dict[str, Any]:
    """The model's file size, and its memory once loaded in a fresh process."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.snb"
        model.save(path)
        size = path.stat().st_size
        done = subprocess.run([sys.executable, "-c", LOADED_RSS, str(path)], capture_output=True, timeout=600,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    loaded = json.loads(done.stdout.decode().splitlines()[-1]) if done.returncode == 0 else {}
    return {"file_bytes": size, "nbytes": model.nbytes, **loaded}


def chunk_ratios(numerator: Sequence[float], denominator: Sequence[float]) -> dict[str, float]:
    """Median, min and max of the chunk-by-chunk ratios (one pass, not rounds: no "runs")."""
    ratios = [a / b for a, b in zip(numerator, denominator)]
    return {"median": float(np.median(ratios)), "min": min(ratios), "max": max(ratios), "chunks": len(ratios)}


def skipped_without_corpus(ctx: common.Context) -> dict[str, str] | None:
    """The section's data when $STREAMNB_TREC07P is not set (the reason, also logged), else None."""
    if os.environ.get(TREC_ENV):
        return None
    reason = f"{TREC_ENV} is not set (the TREC 2007 corpus, research use only, is not distributed)"
    ctx.log(f"  SKIPPED: {reason}")
    return {"skipped": reason}


def run(ctx: common.Context) -> dict[str, Any]:
    skipped = skipped_without_corpus(ctx)
    if skipped is not None:
        return skipped
    path = os.environ[TREC_ENV]
    from streamnb.filter.decision import SpamFilter
    from streamnb.filter.trec import load_trec
    from streamnb.models import EmailNB

    messages = load_trec(path, limit=ctx.pick(None, QUICK_MESSAGES))
    raws, labels, names = [m.raw for m in messages], [m.label for m in messages], [m.name for m in messages]
    ctx.log(f"  {len(raws):,} messages ({labels.count('spam'):,} spam) in delivery order")
    default, email_nb = SpamFilter(), SpamFilter(EmailNB())
    rows = run_interleaved({"streamnb default": filter_step(default), "EmailNB": filter_step(email_nb),
                            "LogisticRegression": logistic_step(), "numpy baseline": numpy_step()},
                           raws, labels, ctx.log)
    default_memory, email_memory = memory(default.model), memory(email_nb.model)
    rows["streamnb default"]["stacker_weights"] = list(default.model.weights)
    del email_nb
    why = "--quick never installs" if ctx.quick else ("" if bench_classic.install_allowed()
                                                      else f"{bench_classic.INSTALL_ENV}=0 forbids installing")
    classic = [bench_classic.BOGOFILTER, bench_classic.SPAMPROBE]
    unavailable = bench_classic.ensure_installed(classic, install=not why, log=ctx.log, why=why)
    n_classic = min(len(raws), bench_classic.QUICK_PREFIX) if ctx.quick else len(raws)
    for f in classic:
        if f.name in unavailable:
            ctx.log(f"  {f.name}: SKIPPED, {unavailable[f.name]}")
            continue
        ctx.log(f"  {f.name}: {n_classic:,} messages, one process per call")
        record, from_cache = bench_classic.cached_run(f, raws[:n_classic], labels[:n_classic], ctx.log)
        summary = bench_classic.summarise(record, labels[:n_classic])
        rows[f.name] = {"scores": record["scores"], "cpu_seconds": record["child_cpu_seconds"],
                        "wall_seconds": record["wall_seconds"], "database_bytes": record["database_bytes"],
                        "from_cache": from_cache, "version": record["version"],
                        **{k: summary[k] for k in ("ham_as_spam", "spam_as_ham", "unsure", "ham_as_spam_count",
                                                   "spam_as_ham_count", "unsure_count") if k in summary}}
    for name, row in rows.items():
        n = len(row["scores"])
        row["messages"] = n
        row["ranking"] = ranking(labels[:n], row["scores"])
        row["disputed_share"] = disputed_share(names[:n], labels[:n], row["scores"])
        row["cpu_us_per_message"] = 1e6 * row["cpu_seconds"] / n
        del row["scores"]
        ctx.log(f"  {name}: (1-AUC)% {row['ranking']}, {row['cpu_us_per_message']:.0f} us a message (CPU)")
    baseline_chunks = rows["numpy baseline"].pop("chunk_cpu")
    speed = {name: {"whole": sum(baseline_chunks) / row["cpu_seconds"],
                    "chunks": chunk_ratios(baseline_chunks, row["chunk_cpu"])}
             for name, row in rows.items() if name in ("streamnb default", "EmailNB", "LogisticRegression")}
    for row in rows.values():
        row.pop("chunk_cpu", None)
    return {"messages": len(raws), "spam": labels.count("spam"), "ham": labels.count("ham"), "rows": rows,
            "speed_vs_numpy": speed, "chunk": CHUNK, "memory": {"streamnb default": default_memory, "EmailNB": email_memory},
            "bogofilter_wordlist_bytes": rows.get("bogofilter", {}).get("database_bytes"),
            "skipped": unavailable, "disputed": DISPUTED}


# -- report ---------------------------------------------------------------------------------

def _fmt(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _pct(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{100 * value:.{digits}f}%"


def markdown(data: dict[str, Any]) -> list[str]:
    if "skipped" in data and "rows" not in data:
        return [f"Skipped: {data['skipped']}."]
    lines = [f"{data['messages']:,} messages of trec07p in delivery order ({data['spam']:,} spam, {data['ham']:,} ham); "
             "each classified, then learned with its label.", "",
             "| filter | (1-AUC)% whole | first 40,000 | last 10,000 | ham called spam | spam called ham | unsure | "
             "CPU per message | disputed hams' share |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, row in data["rows"].items():
        rank = row["ranking"]
        verdicts = ([_pct(row.get(k)) for k in ("ham_as_spam", "spam_as_ham")] + [_pct(row.get("unsure"), 2)]
                    if "ham_as_spam" in row else ["(scores only)"] * 3)
        share = sum(row["disputed_share"].values())
        lines.append(f"| {name} | {_fmt(rank['whole'])} | {_fmt(rank.get('first_40000'))} | "
                     f"{_fmt(rank.get('last_10000'))} | {' | '.join(verdicts)} | {row['cpu_us_per_message']:.0f} us | "
                     f"{_fmt(share)} |")
    lines += ["", f"Speed, CPU time of the numpy baseline over each's (the in-process contenders taking turns every "
              f"{data.get('chunk', CHUNK):,} messages; the whole stream, then the median and range of the chunks' "
              "ratios): " + ", ".join(f"{name} {r['whole']:.2f}x ({r['chunks']['median']:.2f}x, "
                                      f"{r['chunks']['min']:.2f}-{r['chunks']['max']:.2f})"
                                      for name, r in data["speed_vs_numpy"].items()) + "."]
    wordlist = data.get("bogofilter_wordlist_bytes")
    for name, mem in data["memory"].items():
        lines.append(f"- {name} after the run: model file {mem['file_bytes'] / 1e6:.1f} MB, {mem['nbytes'] / 1e6:.1f} MB "
                     "in the core once loaded" + (f", the loading process grew by {mem['rss_growth'] / 1e6:.1f} MB"
                                                  if "rss_growth" in mem else "")
                     + (f" (bogofilter's wordlist: {wordlist / 1e6:.1f} MB)" if wordlist else ""))
    sweep = data["rows"]["streamnb default"].get("spam_cutoff_sweep")
    if sweep:
        lines += ["", "The default filter's verdicts had its spam cutoff stood higher (the ham cutoff as it was; "
                  "spam called ham does not move): " + "; ".join(
                      f"+{s['raise']:g}: ham called spam {s['ham_as_spam_count']} ({_pct(s['ham_as_spam'])}), "
                      f"unsure {_pct(s['unsure'], 2)}" for s in sweep) + "."]
    lines += ["", "Disputed hams (their share of each (1-AUC)% is the last column): "
              + "; ".join(f"{name}, {why}" for name, why in data["disputed"].items()) + "."]
    if data.get("skipped"):
        lines.append("Skipped: " + "; ".join(f"{k} ({v})" for k, v in data["skipped"].items()) + ".")
    return lines


def targets(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 26's goals on trec07p-dev."""
    if "rows" not in data:
        return []
    row = data["rows"]["streamnb default"]
    rank = row["ranking"]
    mem = data["memory"]["streamnb default"]
    wordlist = data.get("bogofilter_wordlist_bytes")
    out = [
        {"id": "trec_ranking", "what": "trec07p-dev: (1-AUC)% of the default filter", "value": rank["whole"],
         "op": "<=", "threshold": 0.006, "unit": ""},
        {"id": "trec_ham_as_spam", "what": "trec07p-dev: ham called spam by the default filter", "value": 100 * row["ham_as_spam"], "op": "<=",
         "threshold": 0.01, "unit": "%"},
        {"id": "trec_spam_as_ham", "what": "trec07p-dev: spam called ham by the default filter", "value": 100 * row["spam_as_ham"], "op": "<=",
         "threshold": 0.10, "unit": "%"},
        {"id": "trec_unsure", "what": "trec07p-dev: unsure verdicts of the default filter", "value": 100 * row["unsure"], "op": "<=", "threshold": 2.0, "unit": "%"},
        {"id": "trec_speed", "what": "trec07p-dev: the default filter's speed over the numpy baseline's (CPU, median of 1,000-message turns)",
         "value": data["speed_vs_numpy"]["streamnb default"]["chunks"]["median"], "op": ">=", "threshold": 1.0,
         "unit": "x"},
        {"id": "trec_lr_speed", "what": "trec07p-dev: LogisticRegression on byte 4-grams over the numpy baseline (CPU)",
         "value": data["speed_vs_numpy"]["LogisticRegression"]["chunks"]["median"], "op": ">=", "threshold": 3.0,
         "unit": "x"},
    ]
    if rank.get("last_10000") is not None:
        out.append({"id": "trec_improves", "what": "(1-AUC)% of the last 10,000 over that of the first 40,000",
                    "value": rank["last_10000"] / rank["first_40000"], "op": "<=", "threshold": 1.0, "unit": "x"})
    if wordlist:
        out += [{"id": "trec_file_size", "what": "default model file over bogofilter's wordlist",
                 "value": mem["file_bytes"] / wordlist, "op": "<=", "threshold": 1.0, "unit": "x"},
                {"id": "trec_memory", "what": "default model in memory once loaded (core) over bogofilter's wordlist",
                 "value": mem["nbytes"] / wordlist, "op": "<=", "threshold": 1.5, "unit": "x"}]
    return out


if __name__ == "__main__":
    from .suite import main

    raise SystemExit(main(["--only", NAME, *sys.argv[1:]]))
