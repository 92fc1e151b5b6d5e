"""``python -m benchmarks``: run the benchmark sections and write results.json, RESULTS.md and the plots.

Examples::

    python -m benchmarks                          # every default section, 3 rounds each
    python -m benchmarks --quick                  # smoke run: small sizes, 1 round, 300 messages
    python -m benchmarks --only throughput,accuracy
    python -m benchmarks --only distributed       # sections not run by default
    python -m benchmarks --list

The corpus is ``--corpus PATH`` or $STREAMNB_SPAMASSASSIN; without either (or with
``--corpus synthetic``) a small generated corpus stands in (see ``benchmarks.data``).

Output goes to ``--out`` (default: ``benchmarks/`` for a full run, ``benchmarks/_cache/quick/``
for ``--quick``, so a smoke run never overwrites the committed results). With ``--only``
the other sections already in that folder's results.json are kept (when they were measured
in the same mode on the same corpus), each section carrying its own start/end time and
load average. A full run into ``benchmarks/`` also rewrites the
README's performance section (``python -m benchmarks.report`` does the same from
results.json alone).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from . import common, report
from .data import corpus_name
from .sections import SECTIONS, default_sections

SCHEMA = 1
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE
QUICK_OUT = HERE / "_cache" / "quick"
README = HERE.parent / "README.md"


def parse_sections(text: str | None, skip: str | None) -> list[str]:
    names = default_sections() if not text else [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names + (skip.split(",") if skip else []) if name not in SECTIONS]
    if unknown:
        raise SystemExit(f"unknown section(s) {unknown}; known: {', '.join(SECTIONS)}")
    skipped = set(skip.split(",")) if skip else set()
    return [name for name in SECTIONS if name in names and name not in skipped]


def previous_results(path: Path, quick: bool, corpus: str) -> dict[str, Any] | None:
    """The results already in ``path``, if they can be merged with this run (same schema, mode and corpus)."""
    if not path.exists():
        return None
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if old.get("schema") != SCHEMA or old.get("suite", {}).get("quick") != quick:
        return None
    if (old.get("corpus") or {}).get("name", corpus) != corpus:
        return None
    return old


def write_json(results: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(results, indent=1, sort_keys=False, allow_nan=False) + "\n")
    temporary.replace(path)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("--quick", action="store_true", help="smoke run: small sizes, 1 round, a 300-message slice")
    parser.add_argument("--only", help="comma-separated sections to run (default: every default section)")
    parser.add_argument("--skip", help="comma-separated sections to leave out")
    parser.add_argument("--repeats", type=int, help="rounds per figure (default 3; 1 with --quick)")
    parser.add_argument("--corpus", help="SpamAssassin corpus (folder or archive), or 'synthetic'")
    parser.add_argument("--out", type=Path, help="output folder (results.json, RESULTS.md, PNGs)")
    parser.add_argument("--no-report", action="store_true", help="write results.json only")
    parser.add_argument("--list", action="store_true", help="list the sections and exit")
    parser.add_argument("--quiet", action="store_true", help="print only the targets")
    args = parser.parse_args(argv)
    if args.list:
        for name, module in SECTIONS.items():
            print(f"{name:12s} {'default ' if module.DEFAULT else 'opt-in  '} {module.TITLE}")
        return 0
    sections = parse_sections(args.only, args.skip)
    repeats = args.repeats or (1 if args.quick else 3)
    out_dir = (args.out or (QUICK_OUT if args.quick else DEFAULT_OUT)).resolve()
    path = out_dir / "results.json"
    ctx = common.Context(quick=args.quick, repeats=repeats, corpus_path=args.corpus, out_dir=out_dir,
                         verbose=not args.quiet)

    old = previous_results(path, args.quick, corpus_name(args.corpus)) if args.only else None
    results: dict[str, Any] = {
        "schema": SCHEMA,
        "suite": {"command": "python -m benchmarks " + shlex.join(argv), "quick": args.quick, "repeats": repeats,
                  "sections": sections, "started": common.stamp(), "finished": None},
        "machine": common.machine_info(),
        "versions": common.library_versions(),
        "corpus": old.get("corpus") if old else None,
        "sections": dict(old["sections"]) if old else {},
        "targets": [],
    }
    ctx.log(f"benchmarks: sections {', '.join(sections)}; {repeats} round(s); output {out_dir}")
    ctx.log(f"machine: {results['machine']['cpu']}, {results['machine']['cores']} cores, "
            f"load average {results['suite']['started']['load_average']}")
    for name in sections:
        module = SECTIONS[name]
        ctx.log(f"\n== {name}: {module.TITLE}")
        started, clock = common.stamp(), time.perf_counter()
        data = module.run(ctx)
        corpus = ctx.loaded_corpus
        results["sections"][name] = {
            "run": {"started": started, "finished": common.stamp(),
                    "wall_seconds": round(time.perf_counter() - clock, 1),
                    "repeats": repeats if getattr(module, "REPEATED", True) else 1, "quick": args.quick,
                    "corpus": corpus.name if corpus is not None else None},
            "data": data,
        }
        if ctx.loaded_corpus is not None:
            results["corpus"] = ctx.loaded_corpus.describe()
        write_json(results, path)
    results["suite"]["finished"] = common.stamp()
    results["sections"] = {name: results["sections"][name] for name in SECTIONS if name in results["sections"]}
    results["targets"] = report.evaluate_targets(results)
    write_json(results, path)
    print("\nTargets:" if results["targets"] else "\nTargets: none in these sections")
    for target in results["targets"]:
        print("  " + report.target_line(target))
    if results["corpus"] and results["corpus"]["name"] == "synthetic":
        print("  (synthetic corpus: these figures say nothing about real mail)")
    if not args.no_report:
        written = report.write_report(results, out_dir,
                                      readme=README if out_dir == DEFAULT_OUT and not args.quick else None)
        ctx.log(f"\nwrote {path} and " + ", ".join(str(p.name) for p in written))
    return 0
