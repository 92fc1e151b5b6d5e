"""``python -m benchmarks.report``: RESULTS.md, the plots and the README's performance section, from results.json.

Everything here is a pure function of results.json, so the committed README section can be
checked against the committed results (tests/test_benchmarks.py does). The README section
lies between ``<!-- performance:start -->`` and ``<!-- performance:end -->``.

Targets are judged here, one rule for all: a target ``value >= threshold`` (or ``<=``)
PASSes or MISSes; a miss says by what factor (threshold / value for ``>=``, value /
threshold for ``<=``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .common import cell
from .sections import SECTIONS

START, END = "<!-- performance:start -->", "<!-- performance:end -->"
HERE = Path(__file__).resolve().parent
REPRODUCE = [
    "STREAMNB_SPAMASSASSIN=../shared/data/spamassassin-public-corpus.tgz .venv/bin/python -m benchmarks",
    "STREAMNB_SPAMASSASSIN=../shared/data/spamassassin-public-corpus.tgz .venv/bin/python -m benchmarks --only classic"
    "   # opt-in: bogofilter, spamprobe, SpamAssassin (installs the Debian packages as root when missing)",
    "STREAMNB_SPAMASSASSIN=../shared/data/spamassassin-public-corpus.tgz .venv/bin/python -m benchmarks --only serve"
    "   # opt-in: needs spamc, and spamd + spamassassin to compare",
    "STREAMNB_SPAMASSASSIN=../shared/data/spamassassin-public-corpus.tgz "
    "STREAMNB_20NEWS=../shared/data/20news-bydate.jsonl.gz STREAMNB_TREC07P=PATH/trec07p-dev "
    ".venv/bin/python -m benchmarks --only smoothing"
    "   # opt-in: alpha=\"auto\" against every fixed alpha (trec07p-dev: research use only, kept out of the repository)",
    "STREAMNB_SPAMASSASSIN=../shared/data/spamassassin-public-corpus.tgz "
    "STREAMNB_20NEWS=../shared/data/20news-bydate.jsonl.gz .venv/bin/python -m benchmarks --only logistic"
    "   # opt-in: LogisticRegression on 20 Newsgroups, parameter mixing, speed on raw mail",
    "STREAMNB_SPAMASSASSIN=../shared/data/spamassassin-public-corpus.tgz STREAMNB_TREC07P=PATH/trec07p-dev "
    ".venv/bin/python -m benchmarks --only trec"
    "   # opt-in: trec07p-dev against bogofilter, spamprobe and the numpy baseline (research use only)",
    "STREAMNB_SPAMASSASSIN=../shared/data/spamassassin-public-corpus.tgz STREAMNB_TREC07P=PATH/trec07p-dev "
    "STREAMNB_TREC07P_FEEDBACK=PATH/trec07p-dev-feedback.tar.xz .venv/bin/python -m benchmarks --only feedback"
    "   # opt-in: TREC 2007's feedback tasks (full, delay, partial, active) and the SpamAssassin stream",
    "STREAMNB_SPAMASSASSIN=../shared/data/spamassassin-public-corpus.tgz STREAMNB_TREC07P=PATH/trec07p-dev "
    "STREAMNB_TREC07P_FEEDBACK=PATH/trec07p-dev-feedback.tar.xz .venv/bin/python -m benchmarks --only site"
    "   # opt-in: the site model and observed mail in streamnb serve (trec07p-dev's partial task; needs spamc)",
    ".venv/bin/python -m benchmarks.report   # RESULTS.md, plots and this section, from results.json",
]


# -- targets --------------------------------------------------------------------------------

def judge(target: dict[str, Any]) -> dict[str, Any]:
    """The target with ``status`` (PASS, MISS, or n/a when not measured) and ``factor`` (how far off)."""
    value, threshold = target["value"], target["threshold"]
    if value is None:
        return {**target, "status": "n/a", "factor": None}
    passed = value >= threshold if target["op"] == ">=" else value <= threshold
    factor = (threshold / value if target["op"] == ">=" else value / threshold) if value else None
    return {**target, "status": "PASS" if passed else "MISS", "factor": factor}


def evaluate_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Every section's targets, judged, in section order."""
    judged = []
    for name, section in results["sections"].items():
        module = SECTIONS.get(name)
        if module is not None and hasattr(module, "targets"):
            judged += [judge({**t, "section": name}) for t in module.targets(section["data"])]
    return judged


def number(value: float | None, unit: str = "") -> str:
    """A figure with as many digits as it deserves."""
    if value is None:
        return "not measured"
    if value and abs(value) < 1e-4:  # a rounding residue, or a tolerance: its order of magnitude
        return f"{value:.1e}{unit}"
    digits = 4 if abs(value) < 0.1 else 2 if abs(value) < 10 else 1 if abs(value) < 100 else 0
    return f"{value:,.{digits}f}{unit}"


def verdict(target: dict[str, Any]) -> str:
    """PASS, or MISS with the factor by which the target was missed."""
    if target["status"] != "MISS":
        return target["status"]
    if target["factor"] is None:
        return "MISS"
    if target["op"] == ">=":
        return f"MISS: {target['factor']:.2f} times short ({100 / target['factor']:.0f}% of the goal)"
    return f"MISS: {target['factor']:.2f} times over the limit"


def target_line(target: dict[str, Any]) -> str:
    """One line for the console: status, measured, goal, what."""
    goal = f"{target['op']} {number(target['threshold'], target['unit'])}"
    return f"{target['status']:4s}  {number(target['value'], target['unit']):>12s}  (goal {goal})  {target['what']}" + (
        f"  [{verdict(target)}]" if target["status"] == "MISS" else "")


def targets_table(targets: list[dict[str, Any]]) -> list[str]:
    lines = ["| target | measured | goal | status |", "|---|---:|---:|---|"]
    for t in targets:
        goal = f"{t['op']} {number(t['threshold'], t['unit'])}"
        lines.append(f"| {cell(t['what'])} | {number(t['value'], t['unit'])} | {goal} | {verdict(t)} |")
    return lines


# -- text ----------------------------------------------------------------------------------

def _when(results: dict[str, Any]) -> str:
    """When, where and under which load: one run, or each day's sections when ``--only`` runs were merged."""
    machine, suite = results["machine"], results["suite"]
    where = f"{machine['cpu']} ({machine['cores']} cores, a machine shared with other jobs"
    days: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for name, section in results["sections"].items():
        days.setdefault(section["run"]["started"]["time"][:10], []).append((name, section["run"]))
    if len(days) <= 1:
        start = suite["started"]["load_average"] or ["?"]
        end = (suite["finished"] or suite["started"])["load_average"] or ["?"]
        return (f"Measured {suite['started']['time'][:10]} on {where}; load average {start[0]} at the start, "
                f"{end[0]} at the end)")
    parts = []
    for day, runs in sorted(days.items()):
        start = runs[0][1]["started"]["load_average"] or ["?"]
        end = runs[-1][1]["finished"]["load_average"] or ["?"]
        parts.append(f"{day} ({', '.join(name for name, _ in runs)}; load average {start[0]} at the start, "
                     f"{end[0]} at the end)")
    return f"Measured on {where}), section by section: " + "; ".join(parts)


def setting(results: dict[str, Any]) -> str:
    """One paragraph: machine, load, versions, corpus, clocks."""
    machine, versions, suite = results["machine"], results["versions"], results["suite"]
    corpus = results.get("corpus") or {}
    if corpus.get("name") == "spamassassin":
        data = f"the SpamAssassin public corpus ({corpus['messages']:,} messages, {corpus['spam']:,} spam, Date order)"
    elif corpus:
        data = f"a SYNTHETIC corpus ({corpus['messages']:,} generated messages; not real mail)"
    else:
        data = "synthetic streams only"
    libraries = ", ".join(f"{name} {versions[name]}" for name in ("streamnb", "river", "scikit-learn", "numpy")
                          if versions.get(name))
    quick = " QUICK SMOKE RUN (small sizes, 1 round): not figures to quote." if suite["quick"] else ""
    return (f"{_when(results)}, Python {machine['python']}, "
            f"{libraries}; on {data}. Times are CPU seconds of the process (time.process_time) unless marked wall; "
            f"each figure is the median of {suite['repeats']} round(s), the contenders taking turns within a round, "
            f"with min and max; ratios are taken within each round.{quick}")


def _headline(results: dict[str, Any]) -> list[str]:
    """A few figures for the README: speeds, batch time, memory, accuracy."""
    sections = results["sections"]
    lines = []
    if "throughput" in sections:
        rows = sections["throughput"]["data"]["rows"]
        picks = [("text/full/streamnb MNB + Tokenizer", "streamnb MultinomialNB + Tokenizer"),
                 ("text/full/streamnb MNB + EmailTokenizer", "streamnb MultinomialNB + EmailTokenizer"),
                 ("text/full/river BagOfWords | MNB", "river BagOfWords | MultinomialNB")]
        lines.append("Prequential from raw text (msg/s): " + "; ".join(
            f"{label} {rows[key]['msg_per_s']['median']:,.0f}" for key, label in picks if key in rows) + ".")
        full = sections["throughput"]["data"]["full_vocabulary_predict"]
        cost = full["seconds_per_predict"]
        parts = [f"{model} streamnb {cost[f'streamnb {model}']['median'] * 1e3:.2f} ms, river "
                 f"{cost[f'river {model}']['median'] * 1e3:,.0f} ms ({full['ratios'][model]['median']:,.0f}x)"
                 for model in ("BNB", "CNB")]
        lines.append(f"predict_one once the whole stream is learned (|V| = {full['n_features_streamnb']:,}): "
                     + "; ".join(parts) + ".")
    if "fullstream" in sections and "ratios" in sections["fullstream"]["data"]:
        data = sections["fullstream"]["data"]

        def river_time(key: str) -> str:
            seconds = (data["river_exact"].get(key) or data["river"][key])["checkpoints"][-1]
            return f"{seconds / 60:,.1f} min" if seconds >= 60 else f"{seconds:,.1f} s"

        parts = []
        for model in ("BNB", "CNB"):
            text, dicts = data["ratios"][f"{model} text"], data["ratios"][f"{model} dicts"]
            parts.append(f"{model} {text['value']:,.0f}x from raw text, {dicts['value']:,.0f}x on token dicts (river "
                         f"{river_time(f'{model} dicts')} on token dicts, "
                         f"{'measured' if dicts['river_method'] == 'exact' else 'estimated'})")
        lines.append(f"Whole stream ({data['messages']:,} messages), prequential, river / streamnb: " + "; ".join(parts)
                     + f". river's estimates time its predictions on 1 message in {data['stride']}; on BNB token "
                     f"dicts the estimate is {100 * data['estimate_error']:+.1f}% off the full run.")
    if "batch" in sections:
        rows = sections["batch"]["data"]["rows"]
        lines.append("Batch training from raw text (CPU s): " + "; ".join(
            f"{name.split(' ')[0]} {row['seconds']['median']:.2f}" for name, row in rows.items()) + ".")
    if "memory" in sections:
        rows = sections["memory"]["data"]["rows"]
        parts = []
        for row in rows.values():
            if row["model"] != "MNB" or row["library"] not in ("streamnb", "river"):
                continue
            held = (f"model.nbytes {row['nbytes'] / 2**20:.1f} MiB" if row.get("nbytes") is not None
                    else f"tracemalloc {row['tracemalloc_bytes'] / 2**20:.1f} MiB")
            parts.append(f"{row['library']} {row['rss_bytes']['median'] / 2**20:.1f} MiB ({held})")
        lines.append("Trained MultinomialNB state, RSS growth in a fresh process: " + "; ".join(parts) + ".")
    if "ceilings" in sections and "call_share" in sections["ceilings"]["data"]:
        data = sections["ceilings"]["data"]
        lines.append("The Python call itself (two no-op calls into the core per message) is "
                     f"{100 * data['call_share']['text']['median']:.1f}% of streamnb's predict + learn from raw text, "
                     f"{100 * data['call_share']['dicts']['median']:.1f}% on token dicts; the public API's fixed cost "
                     f"(an empty document) {100 * data['empty_share']['text']['median']:.0f}% and "
                     f"{100 * data['empty_share']['dicts']['median']:.0f}%. Ceiling, river's time over the two calls "
                     f"(the best ratio any library calling from Python twice per message could reach): "
                     f"{data['ceiling']['text']['median']:,.0f}x from raw text, "
                     f"{data['ceiling']['dicts']['median']:,.0f}x on token dicts.")
    if "classic" in sections:
        data = sections["classic"]["data"]

        def rate(value):
            return "n/a" if value is None else f"{100 * value:.2f}%"

        def auc(value):
            return "n/a" if value is None else f"{value:.3f}"

        parts = [f"{row['filter'].split(' (')[0]} {row.get('version') or ''}".strip() + f" {rate(row['ham_as_spam'])} / "
                 f"{rate(row['spam_as_ham'])} / {rate(row['unsure'])} / {auc(row['one_minus_auc_percent'])} / "
                 f"{row['msg_per_s_wall']:,.0f}" for row in data["rows"].values()]
        line = ("Classic filters with their defaults, one process per call, and `streamnb evaluate` (in-process): ham "
                "called spam / spam called ham / unsure / (1-AUC)% / msg/s wall: " + "; ".join(parts) + ".")
        if "spamassassin" in data["rows"] and data.get("window_start") is not None:
            line += (" SpamAssassin's Bayes rules alone never reach its required score, and its Bayes scores only "
                     f"from message {data['window_start'] + 1:,} (200 spam and 200 ham learned); from there, (1-AUC)%: "
                     + ", ".join(f"{row['filter'].split(' (')[0]} {auc(row.get('one_minus_auc_percent_window'))}"
                                 for row in data["rows"].values()) + ".")
        lines.append(line)
    if "accuracy" in sections:
        rows = sections["accuracy"]["data"]["prequential"]
        picks = ["streamnb MNB + Tokenizer", "streamnb MNB + EmailTokenizer", "river BagOfWords + MNB",
                 "river BagOfWords + LogisticRegression"]
        lines.append("Prequential accuracy / FPR / (1-AUC)%: " + "; ".join(
            f"{name} {100 * rows[name]['accuracy']:.2f}% / {100 * rows[name]['fpr']:.2f}% / "
            f"{number(rows[name]['one_minus_auc_percent'])}" for name in picks if name in rows) + ".")
    if "serve" in sections:
        data = sections["serve"]["data"]
        parts = [f"{name} " + " / ".join(f"{row[str(c)]['msg_per_s']['median']:,.0f}" for c in data["clients"])
                 + f" msg/s (p50 {row['1']['p50_ms']['median']:.1f} ms at 1 client)" for name, row in data["rows"].items()]
        missing = [name for name, ok in data["installed"].items() if not ok]
        lines.append(f"Filter service, spamc -c with {' / '.join(map(str, data['clients']))} clients (wall): "
                     + "; ".join(parts) + (f" ({', '.join(missing)} not installed)" if missing else "")
                     + f"; streamnb classify, one process per message: "
                     f"{data['classify']['seconds_per_message']['median']:.2f} s per message.")
    return [f"- {line}" for line in lines]


def readme_section(results: dict[str, Any]) -> str:
    """The README's performance section (markers included)."""
    def minutes(default: bool) -> float:
        return sum(section["run"]["wall_seconds"] for name, section in results["sections"].items()
                   if name in SECTIONS and SECTIONS[name].DEFAULT == default) / 60

    opt_in = [name for name in results["sections"] if name in SECTIONS and not SECTIONS[name].DEFAULT]
    took = f"the default sections took {minutes(True):.0f} minutes" + (
        f"; the opt-in ones ({', '.join(opt_in)}) {minutes(False):.0f} more" if opt_in else "")
    lines = [START, "<!-- generated by `python -m benchmarks.report` from benchmarks/results.json; do not edit -->", "",
             setting(results), "", *targets_table(results["targets"]), "", *_headline(results), "",
             "Every table, the plots and the method of each measurement: "
             f"[benchmarks/RESULTS.md](benchmarks/RESULTS.md). To reproduce ({took}):",
             "", "```sh", *REPRODUCE, "```", END]
    return "\n".join(lines)


def results_markdown(results: dict[str, Any], plots: dict[str, list[str]]) -> str:
    """RESULTS.md: setting, targets, then each section's tables and plots."""
    machine, versions = results["machine"], results["versions"]
    lines = ["# streamnb benchmark results", "",
             "<!-- generated by `python -m benchmarks.report` from results.json; do not edit -->", "",
             setting(results), "",
             f"Machine: {machine['cpu']}; {machine['cores']} cores ({machine['cores_usable']} usable); "
             f"{(machine['memory_bytes'] or 0) / 2**30:.1f} GiB; {machine['os']}; {machine['implementation']} "
             f"{machine['python']}; BLAS threads {machine['threads']}. Versions: "
             + ", ".join(f"{k} {v}" for k, v in versions.items() if v) + ".", "",
             f"Command: `{results['suite']['command'].strip()}`", "", "## Targets", ""]
    lines += targets_table(results["targets"])
    for name, section in results["sections"].items():
        module = SECTIONS.get(name)
        if module is None:
            continue
        run = section["run"]
        load = (run["started"]["load_average"] or ["?"])[0], (run["finished"]["load_average"] or ["?"])[0]
        lines += ["", f"## {module.TITLE}", "",
                  f"_Section `{name}`: {run['repeats']} round(s), {run['wall_seconds']} s wall, load average "
                  f"{load[0]} -> {load[1]}, started {run['started']['time']}._", "",
                  (module.__doc__ or "").strip().split("\n\n")[0].replace("\n", " "), ""]
        lines += module.markdown(section["data"])
        for png in plots.get(name, []):
            lines += ["", f"![{png}]({png})"]
    return "\n".join(lines) + "\n"


# -- files ---------------------------------------------------------------------------------

def replace_section(readme_text: str, section: str) -> str:
    """The README text with the part between the markers (markers included) replaced by ``section``."""
    start, end = readme_text.find(START), readme_text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the README has no {START} ... {END} markers")
    return readme_text[:start] + section + readme_text[end + len(END):]


def current_section(readme_text: str) -> str:
    """The README's performance section as it stands (markers included)."""
    start, end = readme_text.find(START), readme_text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the README has no {START} ... {END} markers")
    return readme_text[start:end + len(END)]


def draw_plots(results: dict[str, Any], out_dir: Path) -> dict[str, list[str]]:
    """Every section's PNGs in out_dir: section -> file names."""
    drawn = {}
    for name, section in results["sections"].items():
        module = SECTIONS.get(name)
        if module is not None and hasattr(module, "plots"):
            drawn[name] = module.plots(section["data"], out_dir)
    return drawn


def write_report(results: dict[str, Any], out_dir: Path, readme: Path | None = None) -> list[Path]:
    """Write the plots, RESULTS.md and (when a README path is given) its performance section."""
    out_dir.mkdir(parents=True, exist_ok=True)
    drawn = draw_plots(results, out_dir)
    written = [out_dir / png for names in drawn.values() for png in names]
    target = out_dir / "RESULTS.md"
    target.write_text(results_markdown(results, drawn))
    written.append(target)
    if readme is not None:
        readme.write_text(replace_section(readme.read_text(), readme_section(results)))
        written.append(readme)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.report", description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=HERE / "results.json")
    parser.add_argument("--readme", type=Path, default=HERE.parent / "README.md")
    parser.add_argument("--no-readme", action="store_true", help="leave the README alone")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if the README section differs from what results.json gives")
    args = parser.parse_args(argv)
    results = json.loads(args.results.read_text())
    results["targets"] = evaluate_targets(results)
    if args.check:
        same = current_section(args.readme.read_text()) == readme_section(results)
        print("README performance section is up to date" if same else
              "README performance section differs from results.json: run python -m benchmarks.report")
        return 0 if same else 1
    written = write_report(results, args.results.parent, None if args.no_readme else args.readme)
    print("wrote " + ", ".join(str(p) for p in written))
    for target in results["targets"]:
        print("  " + target_line(target))
    return 0


if __name__ == "__main__":
    sys.exit(main())
