"""The commands that measure the filter: ``evaluate`` (progressive: classify, then learn,
each message) and ``demo`` (the SpamAssassin stream, end to end), with their report,
tables and plots.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from .cli_common import (
    CommandError,
    build_model,
    check_new_file,
    check_new_folder,
    decision_rule,
    in_date_order,
    labelled,
    min_per_class,
    model_alpha,
    model_mu,
)

if TYPE_CHECKING:
    from ..filter.datasets import Order
    from ..filter.decision import FilterReport, SpamFilter
    from ..filter.tasks import TaskReport
    from ..filter.trec import TrecTask

def evaluation_items(args: argparse.Namespace, order: Order, seed: int) -> list[tuple[Any, Any]]:
    """The labelled messages of --corpus or the sources, in the given order. A TREC corpus
    (streamnb.filter.trec) is read in delivery order for "date" and "file" (its index's order).

    Parameters
    ----------
    args
        The parsed command line: ``corpus``, or the sources.
    order
        ``"date"``, ``"file"`` or ``"shuffle"``.
    seed
        The seed of ``"shuffle"``.

    Returns
    -------
    list of tuple
        (message, label) pairs.
    """
    import numpy as np

    from ..filter.datasets import load_spamassassin
    from ..filter.trec import is_trec, load_trec

    if args.corpus is not None:
        if is_trec(args.corpus):
            trec_order = "shuffle" if order == "shuffle" else "delivery"
            return [(m.raw, m.label) for m in load_trec(args.corpus, order=trec_order, seed=seed)]
        return [(m.raw, m.label) for m in load_spamassassin(args.corpus, order=order, seed=seed)]
    items = list(labelled(args))
    if order == "date":
        items = in_date_order(items)
    elif order == "shuffle":
        np.random.default_rng(seed).shuffle(items)
    return items


def _is_order(name: str) -> TypeGuard[Order]:
    """Whether name is an order load_spamassassin takes (date, file or shuffle)."""
    return name in ("date", "file", "shuffle")


def other_orders(args: argparse.Namespace) -> list[tuple[Order, int]]:
    """--also-orders as (order, seed) pairs: "file,shuffle:1" -> [("file", 0), ("shuffle", 1)].

    Parameters
    ----------
    args
        The parsed command line: ``also_orders`` and ``corpus`` (for the default).

    Returns
    -------
    list of tuple
        (order, seed) pairs; none for ``none``.

    Raises
    ------
    CommandError
        A part that is not date, file or shuffle:SEED.
    """
    spec = args.also_orders
    if spec is None:  # the default: on the SpamAssassin corpus, file order and three shuffles
        from ..filter.trec import is_trec

        spam_assassin = args.corpus is not None and not is_trec(args.corpus)
        spec = "file,shuffle:1,shuffle:2,shuffle:3" if spam_assassin else "none"
    if spec.strip() == "none":
        return []
    pairs = []
    for part in spec.split(","):
        order, _, seed = part.strip().partition(":")
        if not _is_order(order) or (seed and not seed.isdigit()) or (seed and order != "shuffle"):
            raise CommandError(f"--also-orders takes date, file and shuffle:SEED separated by commas, or none; "
                               f"got {part.strip()!r}")
        pairs.append((order, int(seed or 0)))
    return pairs


def check_outputs(args: argparse.Namespace) -> None:
    """--json, --plots and --save name places that can be written: refused before the long run.

    Parameters
    ----------
    args
        Its ``json``, ``plots`` and ``save`` (each may be None).

    Raises
    ------
    CommandError
        A path that cannot be written (:func:`check_new_file`, :func:`check_new_folder`).
    """
    if args.json:
        check_new_file(args.json, "--json", replaced=False)  # written, not replaced: /dev/stdout works
    if args.plots:
        check_new_folder(args.plots, "--plots")
        check_plotting("--plots")
    if args.save:
        check_new_file(args.save, "--save")


def check_plotting(asked_by: str) -> None:
    """Plots can be drawn: matplotlib (an optional extra) is there; refused before the long run.

    Parameters
    ----------
    asked_by
        What asks for plots, as the error names it (``"--plots"``, ``"streamnb demo"``).

    Raises
    ------
    CommandError
        matplotlib cannot be imported.
    """
    try:
        import matplotlib  # noqa: F401  (imported once here: the plots import it again, at no cost)
    except ImportError:
        from ..filter.plots import INSTALL_HINT

        raise CommandError(f"{asked_by} draws plots with matplotlib, which is not installed: {INSTALL_HINT}") from None


def cmd_evaluate(args: argparse.Namespace) -> int:
    """``streamnb evaluate``: progressive evaluation (classify, then learn, each message).

    Parameters
    ----------
    args
        The options of ``streamnb evaluate``: the corpus or the sources, the model's and
        the rule's options, the orders, the outputs.

    Returns
    -------
    int
        0 once the metrics are printed and the outputs written.

    Raises
    ------
    CommandError
        A bad ``--also-orders``, an output that cannot be written, nothing to evaluate, or
        ``--task`` options that do not go together (:func:`check_task_options`).
    CorpusNotFoundError, SourceError, OSError
        The corpus or a source cannot be read, or an output cannot be written.
    """
    if args.task is not None or args.quota is not None:
        return run_task_evaluation(args)
    orders = other_orders(args)  # a bad option fails before the long run
    check_outputs(args)
    items = evaluation_items(args, args.order, args.seed)
    if not items:
        raise CommandError("nothing to evaluate: give --corpus, or --spam/--ham/--data sources")
    return run_evaluation(items, args, orders)


def run_evaluation(items: list[tuple[Any, Any]], args: argparse.Namespace,
                   orders: list[tuple[Order, int]] | None = None, calibrate: bool = True) -> int:
    """Classify-then-learn every message, print the metrics, write what was asked for.

    Parameters
    ----------
    items
        (message, label) pairs, in the order they are streamed.
    args
        The parsed command line: the model, the rule, ``json``, ``plots``, ``save``.
    orders
        Other orders of the same messages to run with the same settings (frozen: nothing is
        tuned again), summed up in one table after the main run's.
    calibrate
        Whether the filter has an online isotonic calibrator (its ECE reported beside the
        model's, its P(spam) plotted beside the model's); without one, the model's P(spam) alone.

    Returns
    -------
    int
        0 (an error raises).
    """
    from ..filter.decision import progressive_filter

    def run(stream: list[tuple[Any, Any]]) -> tuple[Any, FilterReport]:
        model, spam = _evaluation_filter(args, calibrate)
        return model, progressive_filter(spam, stream, progress=True)

    model, report = run(items)
    summary = report_fields(report, args, calibrate)
    print(metrics_table(summary))
    if orders:
        rows = [order_fields(report, args.order, args.seed)]
        for order, seed in orders:
            rows.append(order_fields(run(evaluation_items(args, order, seed))[1], order, seed))
        summary["orders"] = rows
        print(orders_table(rows))
    _write_outputs(args, summary, model,
                   lambda folder: write_plots(report, folder, model_name(args), calibrated=calibrate))
    return 0


def _evaluation_filter(args: argparse.Namespace, calibrate: bool = True) -> tuple[Any, SpamFilter]:
    """(model, filter) of an evaluation: the model the options give, with the options' rule
    and (``calibrate``) an online isotonic calibrator.

    Parameters
    ----------
    args
        The parsed command line: the model's and the rule's options.
    calibrate
        Whether the filter has a calibrator.

    Returns
    -------
    tuple
        The new model, and the SpamFilter around it.
    """
    from ..filter.calibrate import IsotonicCalibrator
    from ..filter.decision import SpamFilter

    model = build_model(args)
    calibrator = IsotonicCalibrator() if calibrate else None
    return model, SpamFilter(model, decision_rule(args, model), calibrator, min_per_class=min_per_class(args))


def model_name(args: argparse.Namespace) -> str:
    """The model the options describe, as plots and headings name it ("Fusion", "EmailNB" ...).

    Parameters
    ----------
    args
        Its ``model_type``.

    Returns
    -------
    str
        The model's name.
    """
    return {"fusion": "Fusion", "email": "EmailNB", "multinomial": "multinomial NB", "bernoulli": "Bernoulli NB",
            "complement": "complement NB"}[args.model_type]


def _write_outputs(args: argparse.Namespace, fields: dict[str, Any], model: Any,
                  plots: Callable[[Path], list[Path]]) -> None:
    """What ``--json``, ``--plots`` and ``--save`` ask for, each file named as it is written.

    Parameters
    ----------
    args
        Its ``json``, ``plots`` and ``save`` (each may be None).
    fields
        The report written by ``--json``.
    model
        The model saved by ``--save``.
    plots
        folder -> the PNG files written there.
    """
    import json

    if args.json:
        Path(args.json).write_text(json.dumps(fields, indent=2) + "\n")
        print(f"wrote {args.json}")
    if args.plots:
        for path in plots(Path(args.plots)):
            print(f"wrote {path}")
    if args.save:
        model.save(args.save)
        print(f"saved the model to {args.save}")



def report_fields(report: FilterReport, args: argparse.Namespace, calibrated: bool = True) -> dict[str, Any]:
    """The JSON report: settings, the model's argmax metrics, calibration, the verdicts.

    Parameters
    ----------
    report
        The run's report.
    args
        The parsed command line (the settings reported).
    calibrated
        Whether the run's filter had a calibrator (without one, ``ece_calibrated`` and
        ``log_loss_calibrated`` are None: nothing was calibrated).

    Returns
    -------
    dict
        The report's fields, as written by ``--json``.
    """
    from ..filter.evaluate import brier_score, precision_recall_f1

    truth = list(report.y_true)
    predicted = [p if p is not None else "none" for p in report.model_predictions]
    per_class = precision_recall_f1(truth, predicted, labels=["ham", "spam"])
    return {
        "messages": report.n,
        "seconds": round(report.seconds, 3),
        "messages_per_second": report.n / report.seconds if report.seconds > 0 else None,
        "model": _model_fields(args),
        "rule": rule_fields(args),
        "order": getattr(args, "order", None),
        **count_fields(report),
        "accuracy": report.model_accuracy,
        "false_positive_rate": report.model_false_positive_rate,
        "false_negative_rate": report.model_false_negative_rate,
        "one_minus_auc_percent": report.one_minus_auc_percent,
        "log_loss": report.log_loss_model,
        "brier": brier_score(truth, report.model_probability),
        "ece": report.ece_model,
        "ece_calibrated": report.ece_calibrated if calibrated else None,
        "log_loss_calibrated": report.log_loss_calibrated if calibrated else None,
        "unsure_rate": report.unsure_rate,
        "decided_accuracy": report.decided_accuracy,
        "verdict_false_positive_rate": report.verdict_false_positive_rate,
        "verdict_false_negative_rate": report.verdict_false_negative_rate,
        "per_class": {str(label): {"precision": s.precision, "recall": s.recall, "f1": s.f1, "support": s.support}
                      for label, s in per_class.items()},
    }


def count_fields(report: FilterReport | TaskReport) -> dict[str, dict[str, int]]:
    """The counts of a run, kept apart: the messages of each true class, the verdicts given
    (they sum to the messages), and the errors among them.

    Parameters
    ----------
    report
        The run's report.

    Returns
    -------
    dict
        ``class_counts`` {ham, spam}, ``verdict_counts`` {ham, spam, unsure} and
        ``error_counts`` {ham_as_spam, spam_as_ham}.
    """
    counts = report.verdict_counts()
    verdicts = [str(v) for v in report.verdicts]
    return {"class_counts": {"ham": counts["ham"], "spam": counts["spam"]},
            "verdict_counts": {label: verdicts.count(label) for label in ("ham", "spam", "unsure")},
            "error_counts": {"ham_as_spam": counts["ham_as_spam"], "spam_as_ham": counts["spam_as_ham"]}}


def _model_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The model's settings as the report states them.

    Parameters
    ----------
    args
        The model's options.

    Returns
    -------
    dict
        Its type, smoothing, tokenizer, counts and class prior.
    """
    return {"type": args.model_type, "alpha": model_alpha(args), "mu": model_mu(args),
            "tokenizer": {"email": "email (EmailWeights)", "fusion": "email (EmailWeights) and byte 4-grams"}.get(
                args.model_type, args.tokenizer),
            "counts": args.counts, "class_prior": args.class_prior}


def rule_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The decision rule's settings as the run used them: logodds' log-odds cutoffs and caution
    (the model type's own for those not given), or the other rules' score cutoffs.

    Parameters
    ----------
    args
        Its ``rule``, cutoffs, ``caution``, ``min_per_class`` and ``model_type``.

    Returns
    -------
    dict
        The rule's name, ``min_per_class`` and cutoffs.
    """
    from ..filter.rules import LogOddsRule
    from ..models import EmailNB, Fusion

    rule = decision_rule(args, Fusion if args.model_type == "fusion" else EmailNB)
    fields: dict[str, Any] = {"name": args.rule, "min_per_class": min_per_class(args)}
    if isinstance(rule, LogOddsRule):
        fields.update(ham_log_odds=rule.ham_log_odds, spam_log_odds=rule.spam_log_odds, caution=rule.caution)
    else:
        fields.update(ham_cutoff=rule.ham_cutoff, spam_cutoff=rule.spam_cutoff)
    return fields


def order_fields(report: FilterReport, order: str, seed: int) -> dict[str, Any]:
    """The verdict rates, (1-AUC)% and speed of one run, for the table of orders.

    Parameters
    ----------
    report
        The run's report.
    order, seed
        The order the run streamed the messages in.

    Returns
    -------
    dict
        A row of :func:`orders_table`.
    """
    return {"order": f"shuffle (seed {seed})" if order == "shuffle" else order,
            "ham_as_spam": report.verdict_false_positive_rate, "spam_as_ham": report.verdict_false_negative_rate,
            "unsure": report.unsure_rate, "one_minus_auc_percent": report.one_minus_auc_percent,
            "messages_per_second": report.n / report.seconds if report.seconds > 0 else None}


def orders_table(rows: list[dict[str, Any]]) -> str:
    """The table of the runs on other orders, as printed.

    Parameters
    ----------
    rows
        :func:`order_fields` of each run.

    Returns
    -------
    str
        The table, one line per run.
    """
    lines = ["", "the same settings on other orders of the messages (frozen: nothing tuned again)",
             f"{'order':18s} {'ham called spam':>15s} {'spam called ham':>15s} {'unsure':>7s} {'(1-AUC)%':>8s} "
             f"{'msg/s':>6s}"]
    for row in rows:
        speed = row["messages_per_second"]
        lines.append(f"{row['order']:18s} {row['ham_as_spam']:15.2%} {row['spam_as_ham']:15.2%} "
                     f"{row['unsure']:7.2%} {row['one_minus_auc_percent']:8.4f} "
                     f"{(f'{speed:6.0f}' if speed else '-'):>6s}")
    return "\n".join(lines)


def metrics_table(fields: dict[str, Any]) -> str:
    """The metrics of a run, as printed: the verdicts' error and unsure rates, (1-AUC)%, the
    model's argmax accuracy, log loss, Brier and ECE, and each class's precision and recall.

    Parameters
    ----------
    fields
        :func:`report_fields` of the run.

    Returns
    -------
    str
        One line per metric, the names aligned.
    """
    speed = fields.get("messages_per_second")
    rows = [
        ("messages", f"{fields['messages']}" + (f" ({fields['order']} order)" if fields.get("order") else "")
         + (f", {speed:,.0f} msg/s" if speed else "")),
        *_verdict_rows(fields),
        ("(1-AUC)% (ranked by log-odds)", f"{fields['one_minus_auc_percent']:.4f}"),
        ("accuracy among decided", f"{fields['decided_accuracy']:.4%}"),
        ("model argmax: accuracy", f"{fields['accuracy']:.4%}"),
        ("model argmax: ham as spam / spam as ham",
         f"{fields['false_positive_rate']:.4%} / {fields['false_negative_rate']:.4%}"),
        ("log loss / Brier", f"{fields['log_loss']:.4f} / {fields['brier']:.4f}"),
        ("ECE before -> after calibration", f"{fields['ece']:.4f} -> {fields['ece_calibrated']:.4f}")
        if fields["ece_calibrated"] is not None
        else ("ECE (the model's P(spam), not calibrated)", f"{fields['ece']:.4f}"),
    ]
    for label, scores in fields["per_class"].items():
        rows.append((f"{label}: precision / recall / F1",
                     f"{scores['precision']:.4f} / {scores['recall']:.4f} / {scores['f1']:.4f}"))
    return _aligned(rows)


def _verdict_rows(fields: dict[str, Any]) -> list[tuple[str, str]]:
    """The verdicts' lines of a table: ham called spam, spam called ham, unsure (with the
    rule's cutoffs), each a rate and a count.

    Parameters
    ----------
    fields
        A report's ``rule``, ``class_counts``, ``verdict_counts``, ``error_counts``,
        ``messages`` and verdict rates.

    Returns
    -------
    list of (str, str)
        (name, value) rows.
    """
    rule = fields["rule"]
    if rule["name"] == "logodds":
        cutoffs = (f"logodds: spam from {rule['spam_log_odds']:g}, ham below {rule['ham_log_odds']:g}, "
                   f"caution {rule['caution']:g}")
    else:
        cutoffs = f"{rule['name']}, {rule['ham_cutoff']}/{rule['spam_cutoff']}"
    classes, errors = fields["class_counts"], fields["error_counts"]
    return [
        ("verdict spam on ham (ham called spam)",
         f"{fields['verdict_false_positive_rate']:.2%} ({errors['ham_as_spam']} of {classes['ham']})"),
        ("verdict ham on spam (spam called ham)",
         f"{fields['verdict_false_negative_rate']:.2%} ({errors['spam_as_ham']} of {classes['spam']})"),
        (f"unsure ({cutoffs})",
         f"{fields['unsure_rate']:.2%} ({fields['verdict_counts']['unsure']} of {fields['messages']})"),
    ]


def _aligned(rows: list[tuple[str, str]]) -> str:
    """(name, value) rows as printed: one a line, the values aligned."""
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


def write_plots(report: FilterReport | TaskReport, folder: Path, model: str = "the model",
                calibrated: bool = True) -> list[Path]:
    """The ROC of a run and, for a classify-then-learn run (a FilterReport), its learning
    curve and reliability plots, as PNG files.

    Parameters
    ----------
    report
        The run's report.
    folder
        Where to write them (made if need be; its parent must exist).
    model
        The model's name, as the legends give it (:func:`model_name`).
    calibrated
        Whether the run's filter had a calibrator (its P(spam) drawn beside the model's).

    Returns
    -------
    list of Path
        The files written.
    """
    from ..filter import plots  # matplotlib is an optional extra
    from ..filter.report import FilterReport

    folder.mkdir(exist_ok=True)  # its parent exists (check_outputs): a typo makes no folders
    truth = list(report.y_true)
    roc = plots.plot_roc(truth, {f"{model} log-odds": report.log_odds}, folder / "roc.png", title="ROC")
    if not isinstance(report, FilterReport):  # a task's run: no learning curve, no calibration
        return [roc]
    series = {f"{model} P(spam|x)": report.model_probability}
    if calibrated:
        series["calibrated (isotonic, online)"] = report.probability
    return [
        plots.plot_learning_curve(report, folder / "learning_curve.png",
                                  title=f"{model}: running accuracy and FPR"),
        roc,
        plots.plot_reliability(truth, series, folder / "reliability.png", title=f"Reliability of {model}'s P(spam)"),
    ]


# -- TREC 2007's feedback tasks (--task) -------------------------------------------------------

def check_task_options(args: argparse.Namespace) -> None:
    """``--task`` and ``--quota`` go together, on a TREC-layout corpus read in its index's
    order: refused before the long run.

    Parameters
    ----------
    args
        Its ``task``, ``quota``, ``corpus``, ``order`` and ``also_orders``.

    Raises
    ------
    CommandError
        ``--quota`` without ``--task active``, ``--task`` without a TREC-layout ``--corpus``,
        or with another order.
    """
    from ..filter.trec import is_trec

    if args.quota is not None and args.task != "active":
        raise CommandError("--quota goes with --task active")
    if args.corpus is None:
        raise CommandError("--task needs --corpus: a TREC-layout corpus (a folder holding full/index, or its "
                           "archive)")
    if not is_trec(args.corpus):
        raise CommandError(f"--task needs a TREC-layout corpus (a folder holding full/index, or its archive); "
                           f"{args.corpus!r} is not one")
    if args.order != "date" or args.also_orders not in (None, "none"):
        raise CommandError("--task streams the corpus in its index's order: --order and --also-orders do not apply")


def run_task_evaluation(args: argparse.Namespace) -> int:
    """``streamnb evaluate --task``: the filter under one of TREC 2007's feedback tasks
    (:mod:`streamnb.filter.tasks`), its ranking, verdicts and the labels it used.

    Parameters
    ----------
    args
        The options of ``streamnb evaluate``: ``--corpus``, ``--task``, ``--quota``, the
        model's and the rule's options, the outputs.

    Returns
    -------
    int
        0 once the figures are printed and the outputs written.

    Raises
    ------
    CommandError
        Options that do not go together (:func:`check_task_options`), an output that
        cannot be written.
    CorpusNotFoundError
        The corpus, or the task's index, cannot be read (the message names what is missing).
    """
    from ..filter.trec import load_trec_task

    check_task_options(args)
    check_outputs(args)
    stream = load_trec_task(args.corpus, args.task)
    model, spam = _evaluation_filter(args)
    report = stream.run(spam, quota=args.quota, progress=True)
    fields = task_fields(report, stream, args)
    print(task_table(fields))
    _write_outputs(args, fields, model, lambda folder: write_plots(report, folder, model_name(args)))
    return 0


def task_fields(report: TaskReport, stream: TrecTask, args: argparse.Namespace) -> dict[str, Any]:
    """The JSON report of a task's run: the task, the settings, (1-AUC)% (the whole stream,
    and its first 40,000 and last 10,000 messages when longer), the verdicts, the labels.

    Parameters
    ----------
    report
        The run's report.
    stream
        The task's stream (where its labels came from).
    args
        The parsed command line (the settings reported).

    Returns
    -------
    dict
        The report's fields, as written by ``--json``.
    """
    return {
        "task": report.task,
        "quota": report.quota,
        "index": stream.index,
        "messages": report.n,
        "seconds": round(report.seconds, 3),
        "messages_per_second": report.n / report.seconds if report.seconds > 0 else None,
        "model": _model_fields(args),
        "rule": rule_fields(args),
        "one_minus_auc_percent": report.ranking(),
        **count_fields(report),
        "verdict_false_positive_rate": report.verdict_false_positive_rate,
        "verdict_false_negative_rate": report.verdict_false_negative_rate,
        "unsure_rate": report.unsure_rate,
        "labels_given": stream.labels_given if report.task != "active" else 0,
        "labels_used": report.labels_used,
        "labels_asked": report.labels_asked,
    }


def task_table(fields: dict[str, Any]) -> str:
    """The figures of a task's run, as printed.

    Parameters
    ----------
    fields
        :func:`task_fields` of the run.

    Returns
    -------
    str
        One line per figure, the names aligned.
    """
    ranking = fields["one_minus_auc_percent"]
    parts = [f"{name.split('_')[0]} {int(name.split('_')[1]):,}: {_figure(value)}" for name, value in ranking.items()
             if name != "whole"]  # first_40000 -> first 40,000
    speed = fields.get("messages_per_second")
    given = (f" of a quota of {fields['quota']:,}; asked for {fields['labels_asked']:,}" if fields["task"] == "active"
             else f" (given by {fields['index']})")
    return _aligned([
        ("task", fields["task"]),
        ("messages", f"{fields['messages']:,}" + (f", {speed:,.0f} msg/s" if speed else "")),
        ("(1-AUC)% (ranked by log-odds)", _figure(ranking["whole"]) + (f" ({', '.join(parts)})" if parts else "")),
        *_verdict_rows(fields),
        ("labels used", f"{fields['labels_used']:,}{given}"),
    ])


def _figure(value: float | None) -> str:
    return "n/a (one class)" if value is None else f"{value:.4f}"


def cmd_demo(args: argparse.Namespace) -> int:
    """``streamnb demo``: locate the corpus, stream it through the filter, show the metrics, save
    plots and model.

    Parameters
    ----------
    args
        The options of ``streamnb demo``: ``--corpus``, ``--download``, ``--out``, the model's
        and the rule's options.

    Returns
    -------
    int
        0 once report.json, the plots and model.snb are in ``--out``.

    Raises
    ------
    CommandError
        ``--out`` cannot be made.
    CorpusNotFoundError
        The SpamAssassin corpus is not found (the message names --corpus and --download).
    """
    from ..errors import CorpusNotFoundError
    from ..filter.datasets import load_spamassassin

    check_new_folder(args.out, "--out")
    check_plotting("streamnb demo")
    try:
        messages = load_spamassassin(args.corpus, download=args.download)
    except CorpusNotFoundError as error:
        raise CorpusNotFoundError(f"{error} (on the command line: --corpus PATH, or --download)") from None
    out = Path(args.out)
    out.mkdir(exist_ok=True)
    what = {"fusion": "Fusion (EmailNB and logistic regression on byte 4-grams)",
            "email": "EmailNB (field-weighted email features, IDF scoring)"}.get(
        args.model_type, f"{args.model_type} NB over the {args.tokenizer} tokenizer")
    print(f"SpamAssassin public corpus: {len(messages)} messages in Date order; {what}, alpha {model_alpha(args)}"
          + (f", mu {model_mu(args)}" if model_mu(args) is not None else "") + "; predict, then learn each message")
    args.json = str(out / "report.json")
    args.plots = str(out)
    args.save = str(out / "model.snb")
    # No calibrator: on this stream the fusion's own P(spam) is the better calibrated (ECE 0.0028
    # against 0.0101 after online isotonic calibration: `streamnb evaluate --corpus
    # spamassassin-public-corpus.tgz --also-orders none`, issue 35); `evaluate` reports both.
    return run_evaluation([(m.raw, m.label) for m in messages], args, calibrate=False)
