"""The site model and observed mail in ``streamnb serve`` (issue 34); not run by default (``--only site``).

Three parts.

**partial**: TREC 2007's partial-feedback task (a few users report, everybody's mail is
filtered) through the service. The messages of trec07p-dev in delivery order; each is checked
(CHECK) as user ``other``, who never teaches anything, and, when ``partial/index`` gives its
label (a lower-case label: the one recipient who reports), told (TELL) as user ``reporter``.
``other``'s verdicts are the site model's; the site model learns the reporter's lessons and
observes every checked message. The ranking is by the log-odds the service sends with every
check (``X-StreamNB-Log-Odds``; spamd's score is a display score, cut to one decimal and
saturating at 10), (1-AUC)% against every message's true label (``full/index``). The library's
figure comes from the same run: ``SpamFilter()`` under the task (``streamnb.filter.tasks``:
each message classified, then learned when labelled, else observed). The requests are spamd's, one connection each as spamc makes them,
sent by this process (spamc prints the score and nothing else of a CHECK), to a service that
takes messages of any size (``--max-size`` 64 MiB: spamc would pass the few over 500 KB
unchecked, the library classifies them). Needs $STREAMNB_TREC07P, and the ``partial/index``
in it or in $STREAMNB_TREC07P_FEEDBACK (``streamnb.filter.trec.load_trec_task``; research use
only: nothing of it, nor any message's result, is kept); ``STREAMNB_SITE_MESSAGES=N`` runs the
first N messages (``--quick``: 2,000).

**blend**: how a user's verdict weighs the site model against the user's own
(streamnb/service/site.py: z = (1 - l) z_site + l z_user, l = n / (n + K)), as (1-AUC)% of the
user's mail for K from 3 to 1,000, K = 0 (the user's model alone) and no K (the site model
alone), in process through the service's own ``user_share``. Two sites: (a) the user's mail is
the SpamAssassin stream in Date order and the others' the first trec07p-dev messages, four for
each of the user's, the site model learning all of it (the user's mail unlike the site's);
(b) the user is every fifth message of the first 30,000 of trec07p-dev and the others the rest
(the same mail). Every message is labelled; each of the user's is scored by both models before
they learn it. Needs $STREAMNB_SPAMASSASSIN and $STREAMNB_TREC07P.

**throughput**: CHECK through Debian's spamc (as ``bench_serve``: one spamc process per
message, 1 and 8 clients, msg/s over the wall time) against services that differ only in their
options: the service as it was before the site model (``--no-site --no-observe``: one model,
read-only checks), with the site model (``--no-observe``), observing (``--no-site``), and the
default (both), the last also for a user without a model (the site model alone answers and
observes). The user's model and the site model are the command's default filter trained on the
corpus less the checked messages (every k-th), so that each check observes a message no model
has learned (an observed message is observed once: each run starts from a fresh copy of the
models). Wall clock; the clients share the machine's cores with the service.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from . import common
from .bench_serve import check_run
from .service import Service, exchange, request

NAME = "site"
TITLE = "The site model and observed mail in streamnb serve: TREC's partial task, the blend, CHECK throughput"
DEFAULT = False
TREC_ENV = "STREAMNB_TREC07P"
MESSAGES_ENV = "STREAMNB_SITE_MESSAGES"
QUICK_MESSAGES = 2_000
LIBRARY_PARTIAL = 0.0587  # the library's (1-AUC)% on the first 50,000 (issue 34, measured by the lead)
CLIENTS = (1, 8)
KS = (0, 3, 10, 30, 100, 300, 1000, None)  # 0: the user's model alone; None: the site model's alone
SERVICES = {  # name: (options, user checked)
    "before the site model (--no-site --no-observe)": (("--no-site", "--no-observe"), "bench"),
    "site model, no observing (--no-observe)": (("--no-observe",), "bench"),
    "observing, no site model (--no-site)": (("--no-site",), "bench"),
    "site model and observing (the default)": ((), "bench"),
    "the default, a user without a model": ((), "nobody"),
}
BEFORE, DEFAULT_SERVICE = "before the site model (--no-site --no-observe)", "site model and observing (the default)"


def serve_args():
    from streamnb.service import cli

    return cli.build_parser().parse_args(["serve", "--models", "unused"])


def new_filter():
    """A filter over the model ``streamnb serve`` makes for a new user, with its rule."""
    from streamnb import SpamFilter
    from streamnb.service import cli

    args = serve_args()
    model = cli.build_model(args)
    return SpamFilter(model, cli.decision_rule(args, model), min_per_class=cli.min_per_class(args))


def auc(labels: list[str], scores: list[float]) -> float | None:
    from streamnb.filter.scores import one_minus_auc_percent

    return one_minus_auc_percent(labels, scores) if len(set(labels)) == 2 else None


# -- partial: TREC's partial-feedback task through the service -----------------------------------

def library_partial(task) -> tuple[list[float], float]:
    """(log-odds of each message, CPU seconds): ``SpamFilter()`` under the task (streamnb.filter.tasks)."""
    from streamnb import SpamFilter

    start = time.process_time()
    report = task.run(SpamFilter())
    return [float(z) for z in report.log_odds], time.process_time() - start


def log_odds(reply: bytes) -> float:
    for line in reply.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        if line.startswith(b"X-StreamNB-Log-Odds: "):
            return float(line.split(b": ", 1)[1])
    raise RuntimeError(f"a check without log-odds: {reply[:200]!r}")


def service_partial(messages, labelled: list[bool], ctx: common.Context) -> dict[str, Any]:
    """The same stream through ``streamnb serve``: CHECK as ``other``, TELL the labelled as ``reporter``."""
    with tempfile.TemporaryDirectory(prefix="bench-site-") as scratch:
        models = Path(scratch)
        # every message checked, as the library does (spamc's own limit, 500 KB, would pass a few unchecked)
        service = Service(models, "--allow-tell", "--max-size", str(64 << 20))
        scores, check_seconds, tell_seconds = [], 0.0, 0.0
        try:
            for i, (message, given) in enumerate(zip(messages, labelled), 1):
                start = time.perf_counter()
                scores.append(log_odds(exchange(service.port, request("CHECK", "other", message.raw))))
                middle = time.perf_counter()
                if given:
                    reply = exchange(service.port, request("TELL", "reporter", message.raw, message.label))
                    if not reply.startswith(b"SPAMD/1.5 0 EX_OK\r\n"):
                        raise RuntimeError(f"a TELL was refused: {reply[:200]!r}")
                tell_seconds += time.perf_counter() - middle
                check_seconds += middle - start
                if i % 5000 == 0:
                    ctx.log(f"    {i:,} messages through the service")
        finally:
            code = service.stop()
        if code != 0:
            raise RuntimeError(f"streamnb serve exited {code}: {''.join(service.log)[-2000:]}")
        files = {name: (models / name).stat().st_size for name in sorted(os.listdir(models)) if name.endswith(".snb")}
    return {"scores": scores, "check_seconds": check_seconds, "tell_seconds": tell_seconds, "model_bytes": files}


def partial(ctx: common.Context) -> dict[str, Any]:
    from streamnb.errors import CorpusNotFoundError
    from streamnb.filter.trec import load_trec_task

    if not os.environ.get(TREC_ENV):
        return {"skipped": f"${TREC_ENV} is not set (the TREC 2007 corpus, research use only, is not distributed)"}
    limit = int(os.environ[MESSAGES_ENV]) if os.environ.get(MESSAGES_ENV) else ctx.pick(None, QUICK_MESSAGES)
    try:
        task = load_trec_task(task="partial", limit=limit)
    except CorpusNotFoundError as error:
        return {"skipped": str(error)}
    messages, labelled = task.messages, task.labelled
    labels = [message.label for message in messages]
    ctx.log(f"  partial: {len(messages):,} messages, {sum(labelled):,} labelled ({task.index}); the library ...")
    library, library_seconds = library_partial(task)
    ctx.log("  partial: the service ...")
    served = service_partial(messages, labelled, ctx)
    data = {
        "messages": len(messages), "labelled": sum(labelled), "spam": labels.count("spam"),
        "library_auc": auc(labels, library), "service_auc": auc(labels, served["scores"]),
        "library_cpu_seconds": library_seconds, "service_check_seconds": served["check_seconds"],
        "service_tell_seconds": served["tell_seconds"], "model_bytes": served["model_bytes"],
        # the same log-odds? (the service's are sent to 6 decimals)
        "largest_log_odds_difference": max(abs(a - b) for a, b in zip(library, served["scores"])),
    }
    if data["library_auc"] and data["service_auc"] is not None:
        data["service_vs_library_percent"] = 100.0 * abs(data["service_auc"] - data["library_auc"]) / data["library_auc"]
    ctx.log(f"  partial: (1-AUC)% library {data['library_auc']}, service {data['service_auc']}; checks "
            f"{len(messages) / served['check_seconds']:.0f}/s, TELLs {sum(labelled) / max(served['tell_seconds'], 1e-9):.0f}/s")
    return data


# -- blend: the K of l = n / (n + K) ----------------------------------------------------------------

def blend_run(stream) -> list[tuple[str, float, float, dict, dict]]:
    """(label, site log-odds, user log-odds, site counts, user counts) of each of the user's
    messages, scored before either model learns it; stream: (raw, label, the user's?)."""
    site, user = new_filter(), new_filter()
    rows = []
    for raw, label, mine in stream:
        if mine:
            rows.append((label, site.classify(raw, explain=False).log_odds, user.classify(raw, explain=False).log_odds,
                         dict(site.model.class_counts), dict(user.model.class_counts)))
            user.learn(raw, label)
        site.learn(raw, label)
    return rows


def blend_figures(rows) -> dict[str, float | None]:
    from streamnb.service.site import user_share

    labels = [row[0] for row in rows]
    figures = {}
    for k in KS:
        shares = [0.0 if k is None else 1.0 if k == 0 else user_share(row[4], row[3], float(k)) for row in rows]
        figures["site" if k is None else str(k)] = auc(labels, [(1 - share) * row[1] + share * row[2]
                                                               for share, row in zip(shares, rows)])
    return figures


def blend(ctx: common.Context) -> dict[str, Any]:
    from streamnb.filter.datasets import load_spamassassin
    from streamnb.filter.trec import load_trec

    trec, spamassassin = os.environ.get(TREC_ENV), os.environ.get("STREAMNB_SPAMASSASSIN")
    if not trec or not spamassassin:
        return {"skipped": f"needs ${TREC_ENV} and $STREAMNB_SPAMASSASSIN"}
    mine = load_spamassassin(spamassassin, order="date")[: ctx.pick(None, 500)]
    others = load_trec(trec, limit=ctx.pick(30_000, 2_500))
    unlike = []
    for i, message in enumerate(mine):
        unlike += [(other.raw, other.label, False) for other in others[4 * i: 4 * i + 4]]
        unlike.append((message.raw, message.label, True))
    alike = [(message.raw, message.label, i % 5 == 0) for i, message in enumerate(others)]
    data = {"unlike": {"user_messages": len(mine), "site_messages": len(unlike)},
            "alike": {"user_messages": len(alike[::5]), "site_messages": len(alike)}}
    for name, stream in (("unlike", unlike), ("alike", alike)):
        data[name]["auc"] = blend_figures(blend_run(stream))
        ctx.log(f"  blend, {name}: " + ", ".join(f"K {k} {v:.4f}" for k, v in data[name]["auc"].items() if v is not None))
    return data


# -- throughput: CHECK through spamc, with and without the site model and observing ------------------

def throughput(ctx: common.Context) -> dict[str, Any]:
    spamc = shutil.which("spamc")
    if spamc is None:
        return {"skipped": "spamc is not installed (Debian package spamc)"}
    from streamnb.service import cli

    messages = ctx.corpus().messages
    n_check = ctx.pick(400, 60)
    step = max(2, len(messages) // n_check)
    checked = [message for i, message in enumerate(messages) if i % step == 0][:n_check]
    taught = [message for i, message in enumerate(messages) if i % step != 0 or i // step >= n_check]
    with tempfile.TemporaryDirectory(prefix="bench-site-throughput-") as scratch:
        folder = Path(scratch)
        trained, mail = folder / "trained", folder / "mail"
        trained.mkdir()
        mail.mkdir()
        model = cli.build_model(serve_args())
        for message in taught:
            model.learn_one(message.raw, message.label)
        model.save(trained / "bench.snb")
        shutil.copy(trained / "bench.snb", trained / "@site.snb")  # a site of one reporting user
        files = []
        for i, message in enumerate(checked):
            (mail / f"{i:04d}.eml").write_bytes(message.raw)
            files.append((mail / f"{i:04d}.eml", message.label))
        warmup = folder / "warmup.eml"
        warmup.write_bytes(taught[0].raw)

        def run(options: tuple[str, ...], user: str, clients: int) -> dict[str, Any]:
            models = folder / "models"
            shutil.rmtree(models, ignore_errors=True)
            shutil.copytree(trained, models)
            service = Service(models, *options)
            try:
                check_run(spamc, service.port, [(warmup, "spam")], 1, user)  # the models loaded
                cpu = service.cpu_seconds()
                result = check_run(spamc, service.port, files, clients, user)
                return {**result, "cpu_ms": 1e3 * (service.cpu_seconds() - cpu) / len(files)}
            finally:
                service.stop()

        jobs = {f"{name}|{clients}": (lambda options=options, user=user, clients=clients: run(options, user, clients))
                for name, (options, user) in SERVICES.items() for clients in CLIENTS}
        results = common.rounds(jobs, ctx.repeats, ctx.log)
    data: dict[str, Any] = {"messages_checked": len(files), "messages_taught": len(taught), "rows": {}}
    for key, runs in results.items():
        name, clients = key.split("|")
        data["rows"].setdefault(name, {})[clients] = {
            "msg_per_s": common.summary([r["msg_per_s"] for r in runs], common.WALL),
            "p50_ms": common.summary([r["p50_ms"] for r in runs], common.WALL),
            "service_cpu_ms": common.summary([r["cpu_ms"] for r in runs], common.CPU),
            "errors": sum(r["n_errors"] for r in runs), "error_samples": [e for r in runs for e in r["errors"]][:3]}
        ctx.log(f"  {name}, {clients} clients: {data['rows'][name][clients]['msg_per_s']['median']:.0f} msg/s")
    data["vs_before"] = {name: {str(clients): common.ratio([r["msg_per_s"] for r in results[f"{name}|{clients}"]],
                                                           [r["msg_per_s"] for r in results[f"{BEFORE}|{clients}"]])
                                for clients in CLIENTS} for name in SERVICES if name != BEFORE}
    data["cpu_vs_before"] = {name: common.ratio([r["cpu_ms"] for r in results[f"{name}|1"]],
                                                [r["cpu_ms"] for r in results[f"{BEFORE}|1"]])
                             for name in SERVICES if name != BEFORE}
    return data


# -- the section ---------------------------------------------------------------------------------

def run(ctx: common.Context) -> dict[str, Any]:
    return {"partial": partial(ctx), "blend": blend(ctx), "throughput": throughput(ctx)}


def markdown(data: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for key, what, write in (("partial", "Partial task", partial_lines), ("blend", "Blend", blend_lines),
                             ("throughput", "Throughput", throughput_lines)):
        part = data[key]
        lines += [f"{what}: not measured ({part['skipped']}).", ""] if "skipped" in part else write(part)
    return lines


def partial_lines(part: dict[str, Any]) -> list[str]:
    return [f"TREC 2007's partial task through the service: the first {part['messages']:,} messages of "
            f"trec07p-dev ({part['spam']:,} spam), each checked as a user without lessons, the "
            f"{part['labelled']:,} labelled ones told as the reporting user; ranked by the log-odds the service "
            "sends.", "",
            "| | (1-AUC)% |", "|---|---:|",
            f"| the library: SpamFilter(), classify then learn or observe | {part['library_auc']:.4f} |",
            f"| streamnb serve: the site model's verdicts for a user without lessons | {part['service_auc']:.4f} |",
            "",
            f"The two differ by {part.get('service_vs_library_percent', float('nan')):.2f}% (the largest "
            f"difference of one message's log-odds: {part['largest_log_odds_difference']:.2g}). The run: "
            f"{part['messages'] / part['service_check_seconds']:.0f} checks a second and "
            f"{part['labelled'] / max(part['service_tell_seconds'], 1e-9):.0f} TELLs a second from one client "
            "(each TELL fsynced in the reporter's journal and the site model's, and the folds every 1,000 "
            f"lessons); the library took {part['library_cpu_seconds']:.0f} s of CPU. Model files at the end: "
            + ", ".join(f"{name} {size / 1e6:.1f} MB" for name, size in part["model_bytes"].items()) + ".", ""]


def blend_lines(part: dict[str, Any]) -> list[str]:
    ks = list(part["unlike"]["auc"])
    names = {"0": "the user's model alone", "site": "the site model alone"}
    lines = ["A user's (1-AUC)% by K, the lessons at which the user's model weighs as much as the site model "
             "(l = n / (n + K)):", "",
             "| site | user's messages | " + " | ".join(names.get(k, f"K {k}") for k in ks) + " |",
             "|---|---:|" + "---:|" * len(ks)]
    for name, what in (("unlike", "the user's mail unlike the others' (SpamAssassin among trec07p)"),
                       ("alike", "the same mail (every fifth trec07p message)")):
        figures = part[name]["auc"]
        lines.append(f"| {what} | {part[name]['user_messages']:,} | "
                     + " | ".join("n/a" if figures[k] is None else f"{figures[k]:.4f}" for k in ks) + " |")
    return lines + [""]


def throughput_lines(part: dict[str, Any]) -> list[str]:
    lines = [f"CHECK throughput through spamc, {part['messages_checked']} messages no model has learned, the "
             f"models taught the other {part['messages_taught']:,}; the service's own CPU per check (its process, "
             "user and system), which the load of the machine's other work leaves alone where the wall clock "
             "does not:", "",
             "| service | clients | msg/s (min-max) | p50 ms | msg/s vs before the site model | service CPU ms "
             "per check | errors |", "|---|---:|---:|---:|---:|---:|---:|"]
    for name, row in part["rows"].items():
        for clients, r in row.items():
            rate, ratio = r["msg_per_s"], part["vs_before"].get(name, {}).get(clients)
            lines.append(f"| {name} | {clients} | {rate['median']:,.0f} ({rate['min']:,.0f}-{rate['max']:,.0f}) | "
                         f"{r['p50_ms']['median']:.1f} | " + (f"{ratio['median']:.2f}x" if ratio else "") +
                         f" | {r['service_cpu_ms']['median']:.2f} | {r['errors']} |")
    return lines + ["", "Service CPU per check over the service before the site model (1 client): "
                    + ", ".join(f"{name} {r['median']:.2f}x ({r['min']:.2f}-{r['max']:.2f})"
                                for name, r in part["cpu_vs_before"].items()) + ".", ""]


def targets(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 34: the partial task through the service within 10% of the library's figure; CHECK
    throughput of the default service at least 0.9x the service before the site model (8 clients)."""
    part, speed = data["partial"], data["throughput"]
    ratio = speed.get("vs_before", {}).get(DEFAULT_SERVICE, {}).get("8")
    return [
        {"id": "site_partial_vs_library", "what": "TREC's partial task through streamnb serve, (1-AUC)% of a user "
         "without lessons: how far from the library's figure in the same run", "value":
         part.get("service_vs_library_percent"), "op": "<=", "threshold": 10.0, "unit": "%"},
        {"id": "site_check_throughput", "what": "CHECK throughput (spamc, 8 clients) of the default service (site "
         "model, observing) over the service before the site model", "value": ratio["median"] if ratio else None,
         "op": ">=", "threshold": 0.9, "unit": "x"},
    ]


if __name__ == "__main__":
    import sys

    from .suite import main

    raise SystemExit(main(["--only", NAME, *sys.argv[1:]]))
