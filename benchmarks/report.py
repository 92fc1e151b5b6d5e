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
    "STREAMNB_SPAMASSASSIN=../shared/data/spamassassin-public-corpus.tgz .venv/bin/python -m benchmarks --only store"
    "   # opt-in: several hosts sharing models through Redis (needs redis-server)",
    "STREAMNB_TREC07P=PATH/trec07p-dev .venv/bin/python -m benchmarks.trec_speed"
    "   # the trec section's speed figure alone (the default filter against the numpy baseline), in a minute",
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


def _summary(results: dict[str, Any]) -> list[str]:
    """At most five lines for the README: speed, memory, spam filtering, feedback, the service."""
    sections = results["sections"]
    lines = []
    if "throughput" in sections:
        rows = sections["throughput"]["data"]["rows"]
        ours, river = (rows.get("text/full/streamnb MNB + EmailTokenizer"), rows.get("text/full/river BagOfWords | MNB"))
        if ours and river:
            lines.append("**Speed**: prequential multinomial naive Bayes from raw mail, "
                         f"{ours['msg_per_s']['median']:,.0f} messages a second against river's "
                         f"{river['msg_per_s']['median']:,.0f}.")
    if "memory" in sections:
        rows = sections["memory"]["data"]["rows"]
        ours, river = rows.get("streamnb MNB"), rows.get("river MNB")
        if ours and river:
            lines.append(f"**Memory**: a trained MultinomialNB holds {ours['rss_bytes']['median'] / 2**20:.1f} MiB "
                         f"where river's holds {river['rss_bytes']['median'] / 2**20:.1f} MiB.")
    if "classic" in sections and "feedback" in sections:
        classic = sections["classic"]["data"]["rows"]
        full = sections["feedback"]["data"]["tasks"]["full"]
        if all(name in classic for name in ("streamnb", "bogofilter")) and "bogofilter" in full:
            lines.append("**Spam filtering**, (1-AUC)%, lower is better: the default filter "
                         f"{number(full['streamnb default']['ranking']['whole'])} on TREC 2007's first 50,000 "
                         f"messages (bogofilter {number(full['bogofilter']['ranking']['whole'])}, a numpy logistic "
                         f"regression {number(full['numpy baseline']['ranking']['whole'])}); "
                         f"{number(classic['streamnb']['one_minus_auc_percent'])} on the SpamAssassin corpus "
                         f"(bogofilter {number(classic['bogofilter']['one_minus_auc_percent'])}).")
    if "feedback" in sections:
        tasks = sections["feedback"]["data"]["tasks"]
        parts = [f"{task} {number(tasks[task]['streamnb default']['ranking']['whole'])} "
                 f"({tasks[task]['streamnb default']['vs_baseline']:.2f}x)"
                 for task in ("delay", "partial", "active") if task in tasks]
        if parts:
            lines.append("**Late and partial labels** (TREC 2007's tasks), the default filter's (1-AUC)% and its "
                         "ratio to the numpy baseline's: " + "; ".join(parts) + ".")
    if "serve" in sections:
        rows = sections["serve"]["data"]["rows"]
        ours, spamd = rows.get("streamnb serve"), rows.get("spamd (Bayes only)")
        if ours and "8" in ours:
            line = f"**Service**: {ours['8']['msg_per_s']['median']:,.0f} checks a second through spamc (8 clients)"
            if spamd and "8" in spamd:
                line += f", SpamAssassin's spamd {spamd['8']['msg_per_s']['median']:,.0f}"
            lines.append(line + ".")
    return [f"- {line}" for line in lines]


def _took(results: dict[str, Any]) -> str:
    """How long the default sections and the opt-in ones took, in words."""
    def minutes(default: bool) -> float:
        return sum(section["run"]["wall_seconds"] for name, section in results["sections"].items()
                   if name in SECTIONS and SECTIONS[name].DEFAULT == default) / 60

    opt_in = [name for name in results["sections"] if name in SECTIONS and not SECTIONS[name].DEFAULT]
    return f"the default sections took {minutes(True):.0f} minutes" + (
        f"; the opt-in ones ({', '.join(opt_in)}) {minutes(False):.0f} more" if opt_in else "")


def readme_section(results: dict[str, Any]) -> str:
    """The README's performance section (markers included): a summary that links RESULTS.md."""
    judged = [target for target in results["targets"] if target["status"] in ("PASS", "MISS")]
    met = sum(target["status"] == "PASS" for target in judged)
    lines = [START, "<!-- generated by `python -m benchmarks.report` from benchmarks/results.json; do not edit -->",
             *_summary(results), "",
             f"{met} of the {len(judged)} measured targets are met. Every figure, the misses, the machine and how to "
             "reproduce each: [benchmarks/RESULTS.md](benchmarks/RESULTS.md).", END]
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
    lines += ["", "## Reproducing", "", f"Each section's command ({_took(results)}; the TREC corpus is for research "
              "use only and never in the repository: point the variables at your copy):", "", "```sh", *REPRODUCE, "```"]
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
