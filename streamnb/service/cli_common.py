"""What the ``streamnb`` commands share: the model the options describe, the decision rule,
the mail sources, the checks of the paths a command reads and writes, and a few texts.

Nothing here imports numpy or a model at import time: each function imports what it needs
when it runs, so ``streamnb classify`` starts without them.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import StreamNBError

if TYPE_CHECKING:
    from ..filter.rules import DecisionRule, RuleOptions
    from ..filter.sources import RawMessage
    from ..filter.spam_filter import SpamFilter
    from ..models.base import DiscreteNB

EXIT_SPAM, EXIT_HAM, EXIT_UNSURE, EXIT_ERROR = 0, 1, 2, 3
EXIT_OUTPUT_CLOSED = 141  # the reader of the output went away: 128 + SIGPIPE, as the shell reports other tools
EXIT_INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT, the shells' convention
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
# --alpha and --mu by model type: EmailNB's own defaults (streamnb.models.email; tests/service/
# test_cli.py checks they agree) for the fusion and EmailNB; the plain naive Bayes models get
# alpha 0.01 and no mu (additive smoothing: model_alpha, model_mu).
DEFAULT_ALPHA = {"email": 0.3, "fusion": 0.3}
DEFAULT_MU = {"email": 100.0, "fusion": 100.0}
# The ledger of a model made by `streamnb serve` for a new user: the last 100,000 messages
# learned are remembered, so a TELL repeated is a no-op and one in the other class moves.
SERVE_LEDGER = 100_000
LOCK_TIMEOUT = 600.0  # seconds a command waits for another writer of the same model file


class CommandError(StreamNBError):
    """A command cannot run as asked (a file exists, a model lacks the spam/ham classes ...)."""



# -- building blocks ------------------------------------------------------------------------------

def build_model(args: argparse.Namespace) -> Any:
    """The model the options describe; empty messages (e.g. an image only) still count.

    ``args.ledger`` (when given) remembers that many learned messages (see streamnb.ledger);
    a fusion keeps the steps of as many (``records``; else its default).

    Parameters
    ----------
    args
        The parsed command line: ``model_type``, ``alpha``, ``mu``, ``class_prior``,
        ``tokenizer``, ``counts`` and (optionally) ``ledger``.

    Returns
    -------
    Any
        A new, empty model (a Fusion, EmailNB, MultinomialNB, BernoulliNB or ComplementNB).

    Raises
    ------
    CommandError
        ``--mu`` for a model without Dirichlet smoothing.
    """
    from ..features.email import EmailTokenizer
    from ..features.text import Tokenizer
    from ..models import BernoulliNB, ComplementNB, MultinomialNB

    ledger = getattr(args, "ledger", None) or None  # 0: no ledger
    alpha, mu = model_alpha(args), model_mu(args)
    if args.model_type == "email":
        from ..models import EmailNB

        return EmailNB(alpha=alpha, mu=mu, class_prior=args.class_prior, ledger=ledger)
    if args.model_type == "fusion":
        from ..models import EmailNB, Fusion, Pruning
        from ..models.fusion import DEFAULT_NB_MAX_FEATURES, DEFAULT_RECORDS, default_lr

        nb = EmailNB(alpha=alpha, mu=mu, class_prior=args.class_prior, ledger=ledger,
                     pruning=Pruning(max_features=DEFAULT_NB_MAX_FEATURES))
        # the steps of as many messages as the ledger holds: each one it can move or forget is undone exactly
        return Fusion(nb, default_lr(), records=ledger or DEFAULT_RECORDS)
    binary = not args.counts
    tokenizer = EmailTokenizer(body={"binary": binary}) if args.tokenizer == "email" else Tokenizer(binary=binary)
    model_types: dict[str, Callable[..., DiscreteNB]] = {
        "multinomial": MultinomialNB, "bernoulli": BernoulliNB, "complement": ComplementNB}
    model_type = model_types[args.model_type]
    extra = {"mu": mu} if args.model_type == "multinomial" else {}
    if mu is not None and args.model_type != "multinomial":
        raise CommandError(f"--mu is for the fusion, email and multinomial models, not {args.model_type}")
    return model_type(alpha=alpha, class_prior=args.class_prior, tokenizer=tokenizer,
                      empty_documents="learn", ledger=ledger, **extra)


def model_alpha(args: argparse.Namespace) -> float | str:
    """--alpha, or the model type's default: 0.3 for the fusion and EmailNB, 0.01 for the
    plain models.

    Parameters
    ----------
    args
        Its ``alpha`` and ``model_type``.

    Returns
    -------
    float or str
        The additive smoothing, or ``"auto"``.
    """
    return args.alpha if args.alpha is not None else DEFAULT_ALPHA.get(args.model_type, 0.01)


def model_mu(args: argparse.Namespace) -> float | str | None:
    """--mu, or the model type's default.

    Parameters
    ----------
    args
        Its ``mu`` and ``model_type``.

    Returns
    -------
    float, str or None
        The Dirichlet smoothing, ``"auto"``, or None (additive smoothing).
    """
    return args.mu if args.mu is not None else DEFAULT_MU.get(args.model_type)


def min_per_class(args: argparse.Namespace) -> float:
    """--min-per-class, or the rule's default (:attr:`RuleOptions.required_per_class`).

    Parameters
    ----------
    args
        The parsed command line: the decision rule's options.

    Returns
    -------
    float
        The messages of each class a model learns before its verdicts leave "unsure".

    Raises
    ------
    CommandError
        The rule's options do not go together.
    """
    return rule_options(args).required_per_class


def labelled(args: argparse.Namespace) -> Iterator[tuple[Any, Any]]:
    """(message, label) from --spam and --ham mail sources and --data JSONL/CSV files.

    Parameters
    ----------
    args
        Its ``spam``, ``ham`` and ``data`` lists, and the columns of ``data``.

    Yields
    ------
    tuple
        The message (raw bytes of a mail, or the text of a --data row) and its label.

    Raises
    ------
    SourceError
        A source that cannot be read.
    """
    for _, x, label in sourced(args):
        yield x, label


def sourced(args: argparse.Namespace) -> Iterator[tuple[str, Any, Any]]:
    """(origin, message, label): :func:`labelled`, with where each message came from, as an
    error about it names it (``path``, ``mbox#N``, ``data.jsonl#N`` for the N-th row, from 0).

    Parameters
    ----------
    args
        As :func:`labelled`.

    Yields
    ------
    tuple
        The origin, the message and its label.

    Raises
    ------
    SourceError
        A source that cannot be read.
    """
    from ..filter.sources import read_labelled, read_mail

    for label in ("spam", "ham"):
        for path in getattr(args, label) or []:
            for message in read_mail(path):
                yield message.origin, message.raw, label
    for path in args.data or []:
        for row, (text, label) in enumerate(read_labelled(path, args.text_column, args.label_column)):
            yield f"{path}#{row}", text, label


def stdin_messages(max_size: int) -> list[RawMessage]:
    """The messages on standard input: one message, or each of an mbox (``stdin#N``).

    Parameters
    ----------
    max_size
        The most bytes read (``--max-size``): more is refused, and /dev/zero stops at once.

    Returns
    -------
    list of RawMessage
        What standard input held: one message, or each of an mbox's.

    Raises
    ------
    CommandError
        Standard input holds more than ``max_size`` bytes.
    SourceError
        Standard input is empty, or not mail.
    """
    from ..filter.sources import split_mail

    raw = sys.stdin.buffer.read(max_size + 1)
    if len(raw) > max_size:
        raise CommandError(f"standard input holds more than {max_size:,} bytes (--max-size): give a larger "
                           "--max-size, or the file as SRC")
    return split_mail(raw, "stdin", "standard input")


def in_date_order(items: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Messages sorted by their Date header (undated ones keep their place after the dated).

    Parameters
    ----------
    items
        (message, label) pairs.

    Returns
    -------
    list of tuple
        The same pairs in Date order.
    """
    from ..filter.datasets import parse_date

    dated = [(parse_date(x) if isinstance(x, bytes) else None, i) for i, (x, _) in enumerate(items)]
    order = sorted(range(len(items)), key=lambda i: (dated[i][0] is None, dated[i][0] or 0.0, i))
    return [items[i] for i in order]


def with_progress(items: list, label: str) -> Iterator:
    """The items, with a tqdm bar on stderr when it is a terminal.

    Parameters
    ----------
    items
        What to go through.
    label
        The bar's label.

    Returns
    -------
    Iterator
        The items, in order.
    """
    from tqdm import tqdm

    return iter(tqdm(items, desc=label, unit="msg", disable=None))


def check_model_file(path: str) -> None:
    """An existing model file; nothing is created.

    Parameters
    ----------
    path
        The model file given on the command line.

    Raises
    ------
    CommandError
        The path is a folder, a device, or does not exist (the message names it).
    """
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
    (a model file: a device or a pipe there would be replaced by the new file).

    Parameters
    ----------
    path
        The file.
    what
        What the file is, as the error names it (``"model file"``, ``"--json"`` ...).
    replaced
        Whether the file is replaced whole (then only a file may stand there).

    Raises
    ------
    CommandError
        The path is a folder, is not a file (when ``replaced``), or its folder does not exist.
    """
    where = Path(path)
    if where.is_dir():
        raise CommandError(f"{what} {path!r} is a folder; give a file name")
    if replaced and where.exists() and not where.is_file():
        raise CommandError(f"{what} {path!r} is not a file (a device, a pipe ...): it would be replaced")
    if not where.absolute().parent.is_dir():
        raise CommandError(f"{what} {path!r}: the folder {str(where.absolute().parent)!r} does not exist")


def check_new_folder(path: str, what: str) -> None:
    """A folder this command will write into: an existing folder, or one to make in an existing folder.

    Parameters
    ----------
    path
        The folder.
    what
        The option that names it, as the error names it (``"--plots"``, ``"--out"``).

    Raises
    ------
    CommandError
        The path is a file, or its parent folder does not exist.
    """
    where = Path(path)
    if where.exists() and not where.is_dir():
        raise CommandError(f"{what} {path!r} is a file, not a folder")
    if not where.absolute().parent.is_dir():
        raise CommandError(f"{what} {path!r}: the folder {str(where.absolute().parent)!r} does not exist")


def load_model(path: str) -> Any:
    """The model in a model file given on the command line.

    Parameters
    ----------
    path
        The model file, as given on the command line (checked first: nothing is created).

    Returns
    -------
    Any
        The model (``streamnb.load``).

    Raises
    ------
    CommandError
        The path is not an existing model file (:func:`check_model_file`).
    ModelFormatError
        The file is not a model file, or is damaged.
    """
    check_model_file(path)
    from ..persist import load

    return load(path)


#: How many times :func:`load_served_model` reads a model file and its journal again when a
#: save comes between the two (a busy service folds its journal each few seconds at most).
READ_ATTEMPTS = 5


def load_served_model(path: str) -> tuple[Any, list[Any]]:
    """The model of a model file as ``streamnb serve`` sees it: with the lessons its journal
    holds (told to the service, acknowledged, not yet folded into the file) applied in
    memory. Read only: neither file is written, no lock is taken. The file is read once (its
    model and digest from the same bytes); when it was replaced before the journal was read (a
    snapshot of the service), both are read again, so that no lesson is lost or applied twice.

    Parameters
    ----------
    path
        The model file, as given on the command line.

    Returns
    -------
    tuple
        The model, and the journaled lessons applied to it (:class:`streamnb.service.journal.Lesson`).

    Raises
    ------
    CommandError, ModelFormatError
        As :func:`load_model` (a journal that is not one is said in a warning, and left out).
    """
    from . import journal

    check_model_file(path)
    where = journal.journal_path(path)
    for _ in range(READ_ATTEMPTS):
        if not Path(where).exists():
            return load_model(path), []  # the file holds every lesson acknowledged before it was read
        try:
            model, digest, stamp = journal.read_model(path)
        except FileNotFoundError:
            check_model_file(path)  # deleted: said so; else replaced between the check and the read
            continue
        try:
            contents = journal.read_journal(where)
        except journal.JournalError as error:  # the service sets such a journal aside and serves the file alone
            print(f"streamnb: warning: {error}: its lessons are not counted", file=sys.stderr)
            return model, []
        now = journal.stamp(path)
        if now is None:
            check_model_file(path)  # deleted since it was read
        if now == stamp:  # else a save came between the two reads: the journal may follow another file
            lessons = journal.lessons_to_replay(contents, where, digest)
            journal.replay(model, lessons, where)
            return model, lessons
    raise CommandError(f"{path!r}: the model file was replaced while it was read, {READ_ATTEMPTS} times; try again")


def counts_text(counts: dict) -> str:
    """Class counts as "spam 41, ham 40" (documents are whole numbers unless the model forgets).

    Parameters
    ----------
    counts
        The model's class counts.

    Returns
    -------
    str
        The counts, or ``"none"`` without any.
    """
    return ", ".join(f"{label} {count:g}" for label, count in counts.items()) or "none"


def messages_text(n: int, what: str = "message") -> str:
    """A count and its noun: "1 message", "1,200 messages".

    Parameters
    ----------
    n
        How many.
    what
        The noun, singular.

    Returns
    -------
    str
        The count with thousands separators, and the noun in the plural when ``n != 1``.
    """
    return f"{n:,} {what}{'' if n == 1 else 's'}"


def warn_without_ledger(model: Any, items: list[tuple[Any, Any]], path: str, command: str) -> None:
    """Say so when lessons will count twice: a model without a ledger cannot tell a message it
    learned before from a new one (see streamnb.ledger).

    Parameters
    ----------
    model
        The model the lessons are for.
    items
        The (message, label) pairs about to be learned.
    path
        The model file, as the warning names it.
    command
        ``"learn"`` (always warned without a ledger) or ``"train"`` (warned when messages
        repeat).
    """
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
    """The spam filter the options ask for, over a model of spam and ham.

    Parameters
    ----------
    model
        The model.
    args
        The parsed command line: the decision rule's options and ``evidence``.

    Returns
    -------
    SpamFilter
        The model with the rule (:func:`decision_rule`) and ``min_per_class``.

    Raises
    ------
    CommandError
        The model's classes are not spam and ham, or the rule's options do not go together.
    """
    from ..filter.spam_filter import SpamFilter

    classes = set(getattr(model, "classes", []))
    if not {"spam", "ham"} <= classes:
        raise CommandError(f"the model's classes are {sorted(map(str, classes))}; a spam filter needs 'spam' and 'ham'")
    return SpamFilter(model, decision_rule(args, model), min_per_class=min_per_class(args), evidence_k=args.evidence)



def rule_options(args: argparse.Namespace) -> RuleOptions:
    """The decision rule's options as the command line gives them (``--rule`` and the options
    of :func:`~streamnb.service.cli_options.decision_options`).

    Parameters
    ----------
    args
        The parsed command line.

    Returns
    -------
    RuleOptions
        The options; :func:`decision_rule` makes the rule of a model from them.

    Raises
    ------
    CommandError
        An option the rule does not read (named, with the option that moves that rule).
    """
    from ..filter.rules import RuleOptions

    with _rule_errors():
        return RuleOptions(args.rule, ham_log_odds=args.ham_log_odds, spam_log_odds=args.spam_log_odds,
                           caution=args.caution, ham_cutoff=args.ham_cutoff, spam_cutoff=args.spam_cutoff,
                           min_per_class=args.min_per_class)


def decision_rule(args: argparse.Namespace, model: Any) -> DecisionRule:
    """The decision rule the options ask for (:func:`rule_options`), for a model: the log-odds
    cutoffs not given are the model's own.

    Parameters
    ----------
    args
        The parsed command line: ``rule`` and its options.
    model
        The model (or its class) whose own logodds cutoffs are the defaults.

    Returns
    -------
    DecisionRule
        What :meth:`RuleOptions.rule_for` makes of them.

    Raises
    ------
    CommandError
        The options do not go together (the rule's error, with the options' names).
    """
    options = rule_options(args)
    with _rule_errors():
        return options.rule_for(model)


@contextlib.contextmanager
def _rule_errors() -> Iterator[None]:
    """A rule's InvalidParameterError as a CommandError that names the options (``--spam-cutoff``)."""
    from ..errors import InvalidParameterError

    try:
        yield
    except InvalidParameterError as error:  # the options together (each alone was checked by its type)
        raise CommandError(_RULE_PARAMETER.sub(lambda m: "--" + m.group().replace("_", "-"), str(error))) from None


# The rule's parameters, as its errors name them, and the options that set them.
_RULE_PARAMETER = re.compile(r"\b(ham_log_odds|spam_log_odds|caution|ham_cutoff|spam_cutoff)\b")
