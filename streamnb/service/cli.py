"""The ``streamnb`` command: a naive Bayes spam filter for real mail.

    streamnb train MODEL --spam SRC --ham SRC [--data FILE.jsonl]   build a model file
    streamnb classify MODEL [SRC ...] [--tag]                       verdicts (stdin: one message)
    streamnb learn MODEL --spam SRC | --ham SRC                     corrections, in place
    streamnb unlearn MODEL --spam SRC | --ham SRC                   take messages back out
    streamnb evaluate (--corpus PATH | --spam SRC --ham SRC)        progressive evaluation
    streamnb inspect MODEL                                          classes, counts, |V|, top tokens
    streamnb demo                                                   the SpamAssassin stream, end to end
    streamnb serve --models DIR [--allow-tell]                      spamd-compatible service (spamc)

A source (SRC) is a Maildir, an mbox file, a folder of message files or one message file
(see ``streamnb.sources``); ``--data`` takes JSONL/CSV files with text and label columns.
The model file is streamnb's persistence format (``streamnb.persist``): written atomically,
so a failed command leaves it as it was. learn, unlearn and train --force hold the model's
write lock (``streamnb.journal``) from load to save, so commands run at once on one file (or
beside ``streamnb serve``) each add their lessons: none is lost to a concurrent writer.

Imports are made where they are needed: ``streamnb classify`` loads numpy, the model and the
tokenizer, and nothing for evaluation, calibration, plots or the corpus.

Exit codes: ``classify`` of one message returns 0 for spam, 1 for ham, 2 for unsure (as
bogofilter does); every command returns 3 on an error, with a one-line message on stderr
(a usage error too: the usage is what --help prints), and 141 when the reader of its output
went away (``| head``), as a tool stopped by SIGPIPE. No path given to a command makes a
folder: a typo is an error, not a new folder.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeGuard

from .. import __version__
from ..errors import StreamNBError
from ..filter.headers import tag_message
from .settings import Limits, Settings

if TYPE_CHECKING:
    from ..filter.datasets import Order
    from ..filter.decision import FilterReport, SpamFilter

EXIT_SPAM, EXIT_HAM, EXIT_UNSURE, EXIT_ERROR = 0, 1, 2, 3
EXIT_OUTPUT_CLOSED = 141  # the reader of the output went away: 128 + SIGPIPE, as the shell reports other tools
EXIT_CODES = {"spam": EXIT_SPAM, "ham": EXIT_HAM, "unsure": EXIT_UNSURE}
MODEL_TYPES = ("fusion", "email", "multinomial", "bernoulli", "complement")
TOKENIZERS = ("email", "words")
# The filter's default model: Fusion (streamnb.models.fusion): EmailNB (multinomial NB over
# field-weighted email features, scored with the IDF of its own counts; Dirichlet smoothing,
# alpha 0.3 and mu 100, a uniform class prior, at most 500,000 features) and a logistic
# regression on byte 4-grams of the first 3,000 bytes, their log-odds fused online. Naive
# Bayes ranks best on few messages, logistic regression on many: the fusion ranks the
# SpamAssassin stream better than EmailNB alone, and trec07p-dev better than either
# (benchmarks/bench_trec.py). "email" is EmailNB alone (exact unlearning of everything).
DEFAULT_MODEL, DEFAULT_TOKENIZER, DEFAULT_PRIOR = "fusion", "email", "uniform"
DEFAULT_ALPHA = {"email": 0.3, "fusion": 0.3}  # others: 0.01 (EmailNB's own default: streamnb.models.email)
DEFAULT_MU = {"email": 100.0, "fusion": 100.0}  # others: none (additive smoothing)
# The default verdicts: LogOddsRule (streamnb.decision) at the model's own cutoffs
# (LogOddsRule.for_model: a fusion's, ham below -2 and spam from 3; EmailNB's, -5 and 16),
# each cutoff moved out by caution * 100 / (messages learned of the class it rules out).
DEFAULT_RULE = "logodds"
# The ledger of a model made by `streamnb serve` for a new user: the last 100,000 messages
# learned are remembered, so a TELL repeated is a no-op and one in the other class moves.
SERVE_LEDGER = 100_000
LOCK_TIMEOUT = 600.0  # seconds a command waits for another writer of the same model file


class CommandError(StreamNBError):
    """A command cannot run as asked (a file exists, a model lacks the spam/ham classes ...)."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (not the usage, which --help prints)
    and exits with code 3 (2 means "unsure" for classify)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


# -- building blocks ------------------------------------------------------------------------------

def build_model(args: argparse.Namespace) -> Any:
    """The model the options describe; empty messages (e.g. an image only) still count.

    ``args.ledger`` (when given) remembers that many learned messages (see streamnb.ledger).
    """
    from ..features.email import EmailTokenizer
    from ..models import BernoulliNB, ComplementNB, MultinomialNB
    from ..features.text import Tokenizer

    ledger = getattr(args, "ledger", None) or None  # 0: no ledger
    alpha, mu = model_alpha(args), model_mu(args)
    if args.model_type == "email":
        from ..models import EmailNB

        return EmailNB(alpha=alpha, mu=mu, class_prior=args.class_prior, ledger=ledger)
    if args.model_type == "fusion":
        from ..models import EmailNB, Fusion
        from ..models.fusion import DEFAULT_NB_MAX_FEATURES, default_lr

        nb = EmailNB(alpha=alpha, mu=mu, class_prior=args.class_prior, ledger=ledger,
                     max_features=DEFAULT_NB_MAX_FEATURES)
        return Fusion(nb, default_lr())
    binary = not args.counts
    tokenizer = EmailTokenizer(body={"binary": binary}) if args.tokenizer == "email" else Tokenizer(binary=binary)
    model_type = {"multinomial": MultinomialNB, "bernoulli": BernoulliNB, "complement": ComplementNB}[args.model_type]
    extra = {"mu": mu} if args.model_type == "multinomial" else {}
    if mu is not None and args.model_type != "multinomial":
        raise CommandError(f"--mu is for the fusion, email and multinomial models, not {args.model_type}")
    return model_type(alpha=alpha, class_prior=args.class_prior, tokenizer=tokenizer,
                      empty_documents="learn", ledger=ledger, **extra)


def model_alpha(args: argparse.Namespace) -> float | str:
    """--alpha, or the model type's default."""
    return args.alpha if args.alpha is not None else DEFAULT_ALPHA.get(args.model_type, 0.01)


def model_mu(args: argparse.Namespace) -> float | str | None:
    """--mu, or the model type's default (None: additive smoothing)."""
    return args.mu if args.mu is not None else DEFAULT_MU.get(args.model_type)


def min_per_class(args: argparse.Namespace) -> float:
    """--min-per-class, or the rule's default: 1 for logodds (cautious on its own), else 10."""
    if args.min_per_class is not None:
        return args.min_per_class
    return 1.0 if args.rule == "logodds" else 10.0


def labelled(args: argparse.Namespace) -> Iterator[tuple[Any, Any]]:
    """(message, label) from --spam and --ham mail sources and --data JSONL/CSV files."""
    from ..filter.sources import read_labelled, read_mail

    for label in ("spam", "ham"):
        for path in getattr(args, label) or []:
            for message in read_mail(path):
                yield message.raw, label
    for path in args.data or []:
        yield from read_labelled(path, args.text_column, args.label_column)


def in_date_order(items: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Messages sorted by their Date header (undated ones keep their place after the dated)."""
    from ..filter.datasets import parse_date

    dated = [(parse_date(x) if isinstance(x, bytes) else None, i) for i, (x, _) in enumerate(items)]
    order = sorted(range(len(items)), key=lambda i: (dated[i][0] is None, dated[i][0] or 0.0, i))
    return [items[i] for i in order]


def with_progress(items: list, label: str) -> Iterator:
    """The items, with a tqdm bar on stderr when it is a terminal."""
    from tqdm import tqdm

    return iter(tqdm(items, desc=label, unit="msg", disable=None))


def check_model_file(path: str) -> None:
    """An existing model file; CommandError naming the path otherwise (nothing is created)."""
    where = Path(path)
    if where.is_dir():
        raise CommandError(f"{path!r} is a folder, not a model file (the model file comes first: "
                           "streamnb COMMAND MODEL ...)")
    if not where.exists():
        raise CommandError(f"model file {path!r} does not exist (create one with 'streamnb train')")
    if where.is_char_device() or where.is_block_device():  # /dev/zero would be read forever
        raise CommandError(f"{path!r} is a device, not a model file")


def check_new_file(path: str, what: str, replaced: bool = True) -> None:
    """A file this command will write: its folder must exist (a typo makes no folders) and the
    path must not be a folder; nor anything but a file, when the file is ``replaced`` whole
    (a model file: a device or a pipe there would be replaced by the new file)."""
    where = Path(path)
    if where.is_dir():
        raise CommandError(f"{what} {path!r} is a folder; give a file name")
    if replaced and where.exists() and not where.is_file():
        raise CommandError(f"{what} {path!r} is not a file (a device, a pipe ...): it would be replaced")
    if not where.absolute().parent.is_dir():
        raise CommandError(f"{what} {path!r}: the folder {str(where.absolute().parent)!r} does not exist")


def check_new_folder(path: str, what: str) -> None:
    """A folder this command will write into: an existing folder, or one to make in an existing folder."""
    where = Path(path)
    if where.exists() and not where.is_dir():
        raise CommandError(f"{what} {path!r} is a file, not a folder")
    if not where.absolute().parent.is_dir():
        raise CommandError(f"{what} {path!r}: the folder {str(where.absolute().parent)!r} does not exist")


def load_model(path: str) -> Any:
    check_model_file(path)
    from ..persist import load

    return load(path)


def counts_text(counts: dict) -> str:
    """Class counts as "spam 41, ham 40" (documents are whole numbers unless the model forgets)."""
    return ", ".join(f"{label} {count:g}" for label, count in counts.items()) or "none"


def messages_text(n: int, what: str = "message") -> str:
    return f"{n:,} {what}{'' if n == 1 else 's'}"


def warn_without_ledger(model: Any, items: list[tuple[Any, Any]], path: str, command: str) -> None:
    """Say so when lessons will count twice: a model without a ledger cannot tell a message it
    learned before from a new one (see streamnb.ledger)."""
    if getattr(model, "ledger", None):
        return
    repeated = len(items) - len({x if isinstance(x, (bytes, str)) else repr(x) for x, _ in items})
    if command == "learn":
        print(f"streamnb learn: warning: {path} has no ledger: a message it learned before counts again, and one "
              "learned under the other class stays there (unlearn it first; 'streamnb train --ledger N' makes a "
              "model that learns each message once)", file=sys.stderr)
    elif repeated:
        print(f"streamnb {command}: warning: messages repeated in the sources count again ({repeated} of "
              f"{len(items)}); --ledger N learns each message once", file=sys.stderr)


def spam_filter(model: Any, args: argparse.Namespace) -> SpamFilter:
    from ..filter.decision import SpamFilter

    classes = set(getattr(model, "classes", []))
    if not {"spam", "ham"} <= classes:
        raise CommandError(f"the model's classes are {sorted(map(str, classes))}; a spam filter needs 'spam' and 'ham'")
    return SpamFilter(model, _rule(args, model), min_per_class=min_per_class(args), evidence_k=args.evidence)


# -- commands ---------------------------------------------------------------------------------------

def cmd_train(args: argparse.Namespace) -> int:
    from . import journal

    target = Path(args.model)
    check_new_file(args.model, "model file")
    if target.exists() and not args.force:
        raise CommandError(f"{str(target)!r} exists; use 'streamnb learn' to add to it, or --force to replace it")
    items = list(labelled(args))
    if not items:
        raise CommandError("nothing to learn: give --spam, --ham or --data sources")
    journal.check_lock_file(target)  # before the training, not after it (the sources are read: a typo made nothing)
    model = build_model(args)
    warn_without_ledger(model, items, args.model, "train")
    # In Date order, as the mail arrived: naive Bayes' counts do not depend on the order, but a
    # logistic regression (the default model's second part) learns a step at a time, and a
    # folder of spam then a folder of ham would teach it one class, then the other.
    for x, label in with_progress(in_date_order(items), "train"):
        model.learn_one(x, label)
    with journal.write_lock(target, LOCK_TIMEOUT):
        if target.exists() and not args.force:  # made by another command while this one trained
            raise CommandError(f"{str(target)!r} exists; use 'streamnb learn' to add to it, or --force to replace it")
        model.save(target)
        journal.remove_journal(target)  # lessons for the model this one replaces
    print(f"trained {type(model).__name__} on {messages_text(len(items))} ({counts_text(model.class_counts)}); "
          f"|V| = {model.n_features:,}; saved {target}")
    return 0


def _correct(args: argparse.Namespace, unlearn: bool) -> int:
    from . import journal

    check_model_file(args.model)  # before the lock, whose file a typo would otherwise leave behind
    items = list(labelled(args))  # read the mail before taking the lock: others wait less
    if not items:
        raise CommandError(f"nothing to {'unlearn' if unlearn else 'learn'}: give --spam, --ham or --data sources")
    with journal.write_lock(args.model, LOCK_TIMEOUT):
        model = load_model(args.model)
        folded = journal.fold_pending(args.model, model)  # lessons `streamnb serve` acknowledged
        if not unlearn:
            warn_without_ledger(model, items, args.model, "learn")
        change = model.unlearn_many if unlearn else model.learn_many
        change([x for x, _ in items], [label for _, label in items])  # all or nothing
        model.save(args.model)
        journal.remove_journal(args.model)
    verb = "unlearned" if unlearn else "learned"
    also = f" (and {messages_text(folded, 'journaled lesson')})" if folded else ""
    print(f"{verb} {messages_text(len(items))}{also}; classes now {counts_text(model.class_counts)}; "
          f"saved {args.model}")
    return 0


def cmd_learn(args: argparse.Namespace) -> int:
    return _correct(args, unlearn=False)


def cmd_unlearn(args: argparse.Namespace) -> int:
    return _correct(args, unlearn=True)


def cmd_classify(args: argparse.Namespace) -> int:
    from ..filter.sources import read_mail

    if args.tag and args.evidence:
        raise CommandError("--tag writes the message back and --evidence prints its clues: give one of them")
    model = load_model(args.model)
    spam = spam_filter(model, args)
    if not args.sources or args.tag or args.evidence:
        raw = one_message(args.sources, "--tag" if args.tag else "--evidence")
        verdict = spam.classify(raw, explain=bool(args.evidence))
        if args.tag:
            sys.stdout.buffer.write(tag_message(raw, verdict))
        else:
            print(f"{verdict.label}\t{verdict.score:.6f}")
            for clue in verdict.evidence[: args.evidence]:
                print(f"  {clue.feature}\t{clue.weight:+.3f}")
        return EXIT_CODES[verdict.label]
    messages = [m for source in args.sources for m in read_mail(source)]
    for message in messages:
        verdict = spam.classify(message.raw, explain=False)  # one line each: no clues
        print(f"{message.origin}\t{verdict.label}\t{verdict.score:.6f}")
    return 0


def one_message(sources: list[str], option: str) -> bytes:
    """The message on standard input (no sources), or the one message the sources hold."""
    from ..filter.sources import SourceError, looks_like_mail, read_mail

    if sources:
        messages = [m for source in sources for m in read_mail(source)]
        if len(messages) != 1:
            raise CommandError(f"{option} takes one message (on standard input, or one file); "
                               f"{messages_text(len(messages))} in {', '.join(map(repr, sources))}")
        return messages[0].raw
    raw = sys.stdin.buffer.read()
    if not raw.strip():
        raise SourceError("no message on standard input")
    if not looks_like_mail(raw):
        raise SourceError("standard input is not a mail message (it does not start with a header line)")
    return raw


def evaluation_items(args: argparse.Namespace, order: Order, seed: int) -> list[tuple[Any, Any]]:
    """The labelled messages of --corpus or the sources, in the given order. A TREC corpus
    (streamnb.trec) is read in delivery order for "date" and "file" (its index's order)."""
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
    """--also-orders as (order, seed) pairs: "file,shuffle:1" -> [("file", 0), ("shuffle", 1)]."""
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
    """--json, --plots and --save name places that can be written: refused before the long run."""
    if args.json:
        check_new_file(args.json, "--json", replaced=False)  # written, not replaced: /dev/stdout works
    if args.plots:
        check_new_folder(args.plots, "--plots")
    if args.save:
        check_new_file(args.save, "--save")


def cmd_evaluate(args: argparse.Namespace) -> int:
    orders = other_orders(args)  # a bad option fails before the long run
    check_outputs(args)
    items = evaluation_items(args, args.order, args.seed)
    if not items:
        raise CommandError("nothing to evaluate: give --corpus, or --spam/--ham/--data sources")
    return run_evaluation(items, args, orders)


def run_evaluation(items: list[tuple[Any, Any]], args: argparse.Namespace,
                   orders: list[tuple[Order, int]] | None = None) -> int:
    """Classify-then-learn every message, print the metrics, write what was asked for.

    ``orders``: other orders of the same messages to run with the same settings (frozen:
    nothing is tuned again), summed up in one table after the main run's.
    """
    import json

    from ..filter.calibrate import IsotonicCalibrator
    from ..filter.decision import SpamFilter, progressive_filter

    def run(stream: list[tuple[Any, Any]]) -> tuple[Any, FilterReport]:
        model = build_model(args)
        spam = SpamFilter(model, _rule(args, model), IsotonicCalibrator(), min_per_class=min_per_class(args))
        return model, progressive_filter(spam, stream, progress=True)

    model, report = run(items)
    summary = report_fields(report, args)
    print(metrics_table(summary))
    if orders:
        rows = [order_fields(report, args.order, args.seed)]
        for order, seed in orders:
            rows.append(order_fields(run(evaluation_items(args, order, seed))[1], order, seed))
        summary["orders"] = rows
        print(orders_table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
        print(f"wrote {args.json}")
    if args.plots:
        for path in write_plots(report, Path(args.plots)):
            print(f"wrote {path}")
    if args.save:
        model.save(args.save)
        print(f"saved the model to {args.save}")
    return 0


def _rule(args: argparse.Namespace, model: Any) -> Any:
    """The decision rule the options ask for; logodds cutoffs not given are the model's own."""
    from ..filter.decision import ArgmaxRule, ChiSquareRule, LogOddsRule, PosteriorRule
    from ..errors import InvalidParameterError

    try:
        if args.rule == "argmax":
            return ArgmaxRule()
        if args.rule == "logodds":
            return LogOddsRule.for_model(model, ham_log_odds=args.ham_log_odds, spam_log_odds=args.spam_log_odds,
                                         caution=args.caution, ham_cutoff=args.ham_cutoff, spam_cutoff=args.spam_cutoff)
        return {"chi2": ChiSquareRule, "posterior": PosteriorRule}[args.rule](args.ham_cutoff, args.spam_cutoff)
    except InvalidParameterError as error:  # the options together (each alone was checked by its type)
        raise CommandError(_RULE_PARAMETER.sub(lambda m: "--" + m.group().replace("_", "-"), str(error))) from None


# The rule's parameters, as its errors name them, and the options that set them.
_RULE_PARAMETER = re.compile(r"\b(ham_log_odds|spam_log_odds|caution|ham_cutoff|spam_cutoff)\b")


def report_fields(report: FilterReport, args: argparse.Namespace) -> dict[str, Any]:
    """The JSON report: settings, the model's argmax metrics, calibration, the verdicts."""
    from ..filter.evaluate import brier_score, precision_recall_f1

    truth = list(report.y_true)
    predicted = [p if p is not None else "none" for p in report.model_predictions]
    per_class = precision_recall_f1(truth, predicted, labels=["ham", "spam"])
    positive = report.y_true == report.positive
    return {
        "messages": report.n,
        "seconds": round(report.seconds, 3),
        "messages_per_second": report.n / report.seconds if report.seconds > 0 else None,
        "model": {"type": args.model_type, "alpha": model_alpha(args), "mu": model_mu(args),
                  "tokenizer": {"email": "email (EmailWeights)", "fusion": "email (EmailWeights) and byte 4-grams"}.get(
                      args.model_type, args.tokenizer),
                  "counts": args.counts, "class_prior": args.class_prior},
        "rule": rule_fields(args),
        "order": getattr(args, "order", None),
        "verdict_counts": {"ham_as_spam": int(((report.verdicts == "spam") & ~positive).sum()),
                           "spam_as_ham": int(((report.verdicts == "ham") & positive).sum()),
                           "unsure": int((report.verdicts == "unsure").sum()),
                           "ham": int((~positive).sum()), "spam": int(positive.sum())},
        "accuracy": report.model_accuracy,
        "false_positive_rate": report.model_false_positive_rate,
        "false_negative_rate": report.model_false_negative_rate,
        "one_minus_auc_percent": report.one_minus_auc_percent,
        "log_loss": report.log_loss_model,
        "brier": brier_score(truth, report.model_probability),
        "ece": report.ece_model,
        "ece_calibrated": report.ece_calibrated,
        "log_loss_calibrated": report.log_loss_calibrated,
        "unsure_rate": report.unsure_rate,
        "decided_accuracy": report.decided_accuracy,
        "verdict_false_positive_rate": report.verdict_false_positive_rate,
        "verdict_false_negative_rate": report.verdict_false_negative_rate,
        "per_class": {str(label): {"precision": s.precision, "recall": s.recall, "f1": s.f1, "support": s.support}
                      for label, s in per_class.items()},
    }


def rule_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The decision rule's settings as the run used them (the model type's own logodds cutoffs
    for those not given)."""
    fields = {"name": args.rule, "ham_cutoff": args.ham_cutoff, "spam_cutoff": args.spam_cutoff,
              "min_per_class": min_per_class(args)}
    if args.rule == "logodds":
        from ..models import EmailNB, Fusion

        rule = _rule(args, Fusion if args.model_type == "fusion" else EmailNB)
        fields.update(ham_log_odds=rule.ham_log_odds, spam_log_odds=rule.spam_log_odds, caution=rule.caution)
    return fields


def order_fields(report: FilterReport, order: str, seed: int) -> dict[str, Any]:
    """The verdict rates, (1-AUC)% and speed of one run, for the table of orders."""
    return {"order": f"shuffle (seed {seed})" if order == "shuffle" else order,
            "ham_as_spam": report.verdict_false_positive_rate, "spam_as_ham": report.verdict_false_negative_rate,
            "unsure": report.unsure_rate, "one_minus_auc_percent": report.one_minus_auc_percent,
            "messages_per_second": report.n / report.seconds if report.seconds > 0 else None}


def orders_table(rows: list[dict[str, Any]]) -> str:
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
    rule = fields["rule"]
    if rule["name"] == "logodds":
        cutoffs = (f"logodds: spam from {rule['spam_log_odds']:g}, ham below {rule['ham_log_odds']:g}, "
                   f"caution {rule['caution']:g}")
    else:
        cutoffs = f"{rule['name']}, {rule['ham_cutoff']}/{rule['spam_cutoff']}"
    counts = fields["verdict_counts"]
    speed = fields.get("messages_per_second")
    rows = [
        ("messages", f"{fields['messages']}" + (f" ({fields['order']} order)" if fields.get("order") else "")
         + (f", {speed:,.0f} msg/s" if speed else "")),
        ("verdict spam on ham (ham called spam)",
         f"{fields['verdict_false_positive_rate']:.2%} ({counts['ham_as_spam']} of {counts['ham']})"),
        ("verdict ham on spam (spam called ham)",
         f"{fields['verdict_false_negative_rate']:.2%} ({counts['spam_as_ham']} of {counts['spam']})"),
        (f"unsure ({cutoffs})", f"{fields['unsure_rate']:.2%} ({counts['unsure']} of {fields['messages']})"),
        ("(1-AUC)% (ranked by log-odds)", f"{fields['one_minus_auc_percent']:.4f}"),
        ("accuracy among decided", f"{fields['decided_accuracy']:.4%}"),
        ("model argmax: accuracy", f"{fields['accuracy']:.4%}"),
        ("model argmax: ham as spam / spam as ham",
         f"{fields['false_positive_rate']:.4%} / {fields['false_negative_rate']:.4%}"),
        ("log loss / Brier", f"{fields['log_loss']:.4f} / {fields['brier']:.4f}"),
        ("ECE before -> after calibration", f"{fields['ece']:.4f} -> {fields['ece_calibrated']:.4f}"),
    ]
    for label, scores in fields["per_class"].items():
        rows.append((f"{label}: precision / recall / F1",
                     f"{scores['precision']:.4f} / {scores['recall']:.4f} / {scores['f1']:.4f}"))
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


def write_plots(report: FilterReport, folder: Path) -> list[Path]:
    from ..filter import plots  # matplotlib is an optional extra

    folder.mkdir(exist_ok=True)  # its parent exists (check_outputs): a typo makes no folders
    truth = list(report.y_true)
    return [
        plots.plot_learning_curve(report, folder / "learning_curve.png", title="Running accuracy and FPR"),
        plots.plot_roc(truth, {"naive Bayes log-odds": report.log_odds}, folder / "roc.png", title="ROC"),
        plots.plot_reliability(truth, {"naive Bayes P(spam|x)": report.model_probability,
                                       "calibrated (isotonic, online)": report.probability},
                               folder / "reliability.png", title="Reliability of P(spam)"),
    ]


def cmd_inspect(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    print(f"{type(model).__name__}: {model!r}")
    counts = getattr(model, "class_counts", {})
    print("classes: " + ", ".join(f"{label!r}: {count:g} message{'' if count == 1 else 's'}"
                                  for label, count in counts.items()))
    if hasattr(model, "n_features"):
        print(f"|V| = {model.n_features} features")
    smoothing = getattr(model, "smoothing_", None)
    if smoothing is not None:
        print(smoothing)
    if hasattr(model, "log_linear") and len(counts) >= 2 and args.top:
        for label, features in discriminative_features(model, args.top).items():
            print(f"top {args.top} tokens for {label!r} (log P(w|c) minus the mean over the other classes):")
            for feature, weight in features:
                print(f"  {feature}\t{weight:+.3f}")
    return 0


def discriminative_features(model: Any, k: int) -> dict[Any, list[tuple[Any, float]]]:
    """Per class, the k features whose weight most exceeds their mean weight in the other classes."""
    import numpy as np

    view = model.log_linear()
    weights = view.weights
    top = {}
    for c, label in enumerate(view.classes):
        others = np.delete(weights, c, axis=1).mean(axis=1)
        lift = weights[:, c] - others
        order = np.argsort(-lift, kind="stable")[:k]
        top[label] = [(view.features[i], float(lift[i])) for i in order]
    return top


def cmd_demo(args: argparse.Namespace) -> int:
    """Locate the corpus, stream it through the filter, show the metrics, save plots and model."""
    from ..filter.datasets import load_spamassassin
    from ..errors import CorpusNotFoundError

    check_new_folder(args.out, "--out")
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
    return run_evaluation([(m.raw, m.label) for m in messages], args)


# -- the parser ------------------------------------------------------------------------------------

def _model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model-type", choices=MODEL_TYPES, default=DEFAULT_MODEL,
                        help="fusion (default): the recommended filter, naive Bayes and logistic regression fused; "
                             "email: EmailNB alone; or a plain naive Bayes variant")
    parser.add_argument("--alpha", type=_smoothing, default=None,
                        help="additive smoothing (> 0, or auto: chosen online among 8 candidates; default 0.3 for "
                             "fusion and email, 0.01 otherwise)")
    parser.add_argument("--mu", type=_smoothing, default=None,
                        help="Dirichlet smoothing toward the pooled distribution (fusion, email, multinomial; > 0, "
                             "or auto; default 100 for fusion and email, none otherwise)")
    parser.add_argument("--tokenizer", choices=TOKENIZERS, default=DEFAULT_TOKENIZER,
                        help="plain models: email (headers, subject, URLs, MIME and body words) or words")
    parser.add_argument("--counts", action="store_true",
                        help="plain models: count repeated words (default: presence, 0/1)")
    parser.add_argument("--class-prior", choices=("mle", "laplace", "uniform"), default=DEFAULT_PRIOR)


def _sources(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spam", action="append", metavar="SRC", help="spam: Maildir, mbox, folder or file")
    parser.add_argument("--ham", action="append", metavar="SRC", help="ham: Maildir, mbox, folder or file")
    parser.add_argument("--data", action="append", metavar="FILE", help="JSONL or CSV with text and label columns")
    parser.add_argument("--text-column", default="text")
    parser.add_argument("--label-column", default="label")


def _decision_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rule", choices=("logodds", "chi2", "posterior", "argmax"), default=DEFAULT_RULE,
                        help="logodds: cutoffs on the model's log-odds, cautious while a class is little known "
                             "(default); chi2: Robinson/Fisher combining; posterior: P(spam|x); argmax")
    parser.add_argument("--spam-log-odds", type=_finite_float, default=None,
                        help="logodds: spam from this log-odds (default: the model's, 3 for the fusion, 16 for "
                             "EmailNB) ...")
    parser.add_argument("--ham-log-odds", type=_finite_float, default=None,
                        help="logodds: ... ham below this (default: the model's, -2 for the fusion, -5 for EmailNB)")
    parser.add_argument("--caution", type=_nonnegative_float, default=None,
                        help="logodds: each cutoff moves out by caution * 100 / messages learned of the class "
                             "it rules out (default: the model's, 0.5 for the fusion, 8 for EmailNB)")
    parser.add_argument("--ham-cutoff", type=_probability, default=0.20, help="score below: ham (default 0.20)")
    parser.add_argument("--spam-cutoff", type=_probability, default=0.90, help="score from here: spam (default 0.90)")
    parser.add_argument("--min-per-class", type=_nonnegative_float, default=None,
                        help="unsure until the model has learned this many spam and ham (default 1 for logodds, "
                             "10 for the other rules)")


def _number(kind: Callable[[str], Any], fits: Callable[[Any], bool], expected: str) -> Callable[[str], Any]:
    """An argparse type: text -> int or float, refused with a message naming what was expected
    (argparse puts the option's name before it: "argument --alpha: expected ...")."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if not fits(value):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value

    return parse


_positive_float = _number(float, lambda v: v > 0 and math.isfinite(v), "a finite number > 0")
_nonnegative_float = _number(float, lambda v: v >= 0 and math.isfinite(v), "a finite number >= 0")
_finite_float = _number(float, math.isfinite, "a finite number")
_probability = _number(float, lambda v: 0 <= v <= 1, "a number from 0 to 1")
_count = _number(int, lambda v: v >= 0, "an integer >= 0")
_positive_int = _number(int, lambda v: v >= 1, "an integer >= 1")
_port = _number(int, lambda v: 0 <= v <= 65535, "a TCP port from 0 to 65535")


def _smoothing(text: str) -> float | str:
    """A smoothing value: a finite number > 0, or "auto" (chosen online)."""
    if text == "auto":
        return text
    try:
        return _positive_float(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0 or auto, got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="streamnb", description="Streaming naive Bayes spam filtering for real mail.")
    parser.add_argument("--version", action="version", version=f"streamnb {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    train = commands.add_parser("train", help="build a model file from labelled mail")
    train.add_argument("model", help="model file to write")
    _sources(train)
    _model_options(train)
    train.add_argument("--force", action="store_true", help="replace an existing model file")
    train.add_argument("--ledger", type=_count, default=0, metavar="N",
                       help="remember the last N messages learned: learning one again is a no-op, under the "
                            "other class it moves (needed by 'streamnb serve' TELL; default 0: none)")
    train.set_defaults(run=cmd_train)

    classify = commands.add_parser("classify", help="verdicts: one message on stdin, or many from sources")
    classify.add_argument("model")
    classify.add_argument("sources", nargs="*", metavar="SRC", help="Maildir, mbox, folder or files (default: stdin)")
    classify.add_argument("--tag", action="store_true",
                          help="write the message back with X-StreamNB-Status and X-StreamNB-Score headers "
                               "(one message: on stdin, or one file)")
    classify.add_argument("--evidence", type=_count, default=0, metavar="K",
                          help="print the K strongest clues (one message: on stdin, or one file; without --tag)")
    _decision_options(classify)
    classify.set_defaults(run=cmd_classify)

    for name, run, what in (("learn", cmd_learn, "add labelled messages (corrections) to a model file"),
                            ("unlearn", cmd_unlearn, "remove messages learned earlier from a model file")):
        command = commands.add_parser(name, help=what)
        command.add_argument("model")
        _sources(command)
        command.set_defaults(run=run)

    evaluate = commands.add_parser("evaluate", help="progressive evaluation: classify, then learn, each message")
    evaluate.add_argument("--corpus", help="the SpamAssassin corpus, or the TREC 2007 one (streamnb.trec), as a folder "
                                           "or an archive, instead of --spam/--ham")
    _sources(evaluate)
    _model_options(evaluate)
    _decision_options(evaluate)
    evaluate.add_argument("--order", choices=("date", "file", "shuffle"), default="date")
    evaluate.add_argument("--seed", type=_count, default=0, help="seed of --order shuffle")
    evaluate.add_argument("--also-orders", metavar="ORDERS", default=None,
                          help="then run the same settings on these orders and print a table: date, file, "
                               "shuffle:SEED, comma-separated, or none (default with --corpus: "
                               "file,shuffle:1,shuffle:2,shuffle:3; otherwise none)")
    evaluate.add_argument("--json", metavar="FILE", help="write the metrics as JSON")
    evaluate.add_argument("--plots", metavar="DIR", help="write learning curve, ROC and reliability PNGs")
    evaluate.add_argument("--save", metavar="MODEL", help="save the model learned along the way")
    evaluate.set_defaults(run=cmd_evaluate)

    inspect = commands.add_parser("inspect", help="classes, counts, |V| and top tokens of a model file")
    inspect.add_argument("model")
    inspect.add_argument("--top", type=_count, default=15, metavar="K",
                         help="the K most telling tokens of each class (default 15; 0: none)")
    inspect.set_defaults(run=cmd_inspect)

    demo = commands.add_parser("demo", help="stream the SpamAssassin corpus through the filter")
    demo.add_argument("--corpus", help="corpus folder or archive (default: $STREAMNB_SPAMASSASSIN)")
    demo.add_argument("--download", action="store_true", help="download the official archives if not found")
    demo.add_argument("--out", default="demo-output",
                      help="folder for report.json, plots and model (default: ./demo-output)")
    _model_options(demo)
    _decision_options(demo)
    demo.set_defaults(run=cmd_demo)

    serve = commands.add_parser("serve", help="spamd-compatible filter service for spamc (per-user models)")
    serve.add_argument("--models", required=True, metavar="DIR", help="folder of the per-user models DIR/<user>.snb")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=_port, default=783, help="TCP port (default 783, spamd's; 0: any free port)")
    serve.add_argument("--allow-tell", action="store_true", help="accept TELL (spamc -L spam|ham|forget)")
    serve.add_argument("--read-only", action="store_true",
                       help="never write in the models folder (needed to serve one that cannot be written); "
                            "TELL is refused")
    # the defaults: streamnb.service.settings (Settings and Limits), as the server's own
    serve.add_argument("--max-models", type=_positive_int, default=Settings.max_models,
                       help=f"models kept loaded (default {Settings.max_models})")
    serve.add_argument("--max-size", type=_positive_int, default=Limits.max_size, metavar="BYTES",
                       help=f"largest message accepted (default {Limits.max_size}, spamc's default)")
    serve.add_argument("--timeout", type=_positive_float, default=Limits.timeout, metavar="SECONDS",
                       help=f"time a client has to send a whole request (default {Limits.timeout:g})")
    serve.add_argument("--max-connections", type=_positive_int, default=Limits.max_connections,
                       help=f"connections served at once; more are refused with EX_TEMPFAIL "
                            f"(default {Limits.max_connections})")
    serve.add_argument("--snapshot-every", type=_positive_int, default=Settings.snapshot_every, metavar="N",
                       help=f"fold a user's journal into the model file after N lessons "
                            f"(default {Settings.snapshot_every})")
    serve.add_argument("--snapshot-seconds", type=_positive_float, default=Settings.snapshot_seconds,
                       metavar="SECONDS",
                       help=f"... or once its oldest lesson is this old (default {Settings.snapshot_seconds:g})")
    serve.add_argument("--lock-timeout", type=_positive_float, default=Limits.lock_timeout, metavar="SECONDS",
                       help=f"wait this long for a model file another writer holds (default {Limits.lock_timeout:g})")
    serve.add_argument("--ledger", type=_positive_int, default=SERVE_LEDGER, metavar="N",
                       help=f"ledger of a new user's model (default {SERVE_LEDGER:,})")
    serve.add_argument("-v", "--verbose", action="store_true", help="log every refused request and model event")
    _model_options(serve)
    _decision_options(serve)
    serve.set_defaults(run=cmd_serve)
    for command in commands.choices.values():
        command.set_defaults(command_parser=command)  # for the errors parse_arguments finds
    return parser


def cmd_serve(args: argparse.Namespace) -> int:
    import functools
    import logging

    from .serve import run

    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s streamnb serve: %(message)s")
    if args.read_only and args.allow_tell:
        args.command_parser.error("--read-only refuses every TELL: it cannot go with --allow-tell")
    rule = _rule(args, build_model(args))  # a bad option fails now, not at the first user
    settings = Settings(
        models=Path(args.models).resolve(), new_model=functools.partial(build_model, args), rule=rule,
        rule_for=functools.partial(_rule, args), spam_cutoff=rule.spam_cutoff, min_per_class=min_per_class(args),
        allow_tell=args.allow_tell, read_only=args.read_only,
        max_models=args.max_models, snapshot_every=args.snapshot_every, snapshot_seconds=args.snapshot_seconds,
        limits=Limits(max_size=args.max_size, timeout=args.timeout, max_connections=args.max_connections,
                      lock_timeout=args.lock_timeout))
    return run(settings, args.host, args.port)


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, checked; a usage error exits (3) with one line on stderr."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        # argparse gives a list of positionals (classify's SRC ...) only the words before the
        # first option; the words after one (`classify m.snb --tag FILE`) come back here.
        command = args.command_parser
        if not isinstance(getattr(args, "sources", None), list) or any(word.startswith("-") for word in extra):
            command.error(f"unrecognized arguments: {' '.join(extra)}")
        args.sources += extra
    return args


def error_text(error: BaseException) -> str:
    """One line naming what went wrong: an OSError as "PATH: reason", not "[Errno 13] ..."."""
    if isinstance(error, OSError) and not isinstance(error, StreamNBError) and error.strerror:
        where = " -> ".join(repr(name) for name in (error.filename, error.filename2) if name is not None)
        return f"{where}: {error.strerror}" if where else error.strerror
    return " ".join(str(error).split())


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    try:
        code: int = args.run(args)
        sys.stdout.flush()  # a reader that went away is noticed here, not at the interpreter's exit
        return code
    except BrokenPipeError:
        return output_closed()
    except (StreamNBError, OSError) as error:  # SourceError, ModelLockedError ... are StreamNBErrors
        print(f"streamnb {args.command}: error: {error_text(error)}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print(f"streamnb {args.command}: interrupted; nothing was saved", file=sys.stderr)
        return EXIT_ERROR


def output_closed() -> int:
    """The reader of the output went away (``streamnb classify m.snb Maildir | head -1``): stop
    without a word and exit 141, as a tool that SIGPIPE stops does (128 + 13). Standard output
    goes to /dev/null so that the interpreter's last flush has nowhere to fail."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_OUTPUT_CLOSED


if __name__ == "__main__":
    sys.exit(main())
