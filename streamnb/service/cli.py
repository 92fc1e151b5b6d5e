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
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from .. import __version__
from ..errors import StreamNBError
from ..filter.headers import tag_message
from .cli_common import (DEFAULT_ALPHA, DEFAULT_MODEL, DEFAULT_MU, DEFAULT_PRIOR, DEFAULT_RULE, DEFAULT_TOKENIZER,
                         EXIT_CODES, EXIT_ERROR, EXIT_HAM, EXIT_OUTPUT_CLOSED, EXIT_SPAM, EXIT_UNSURE, LOCK_TIMEOUT,
                         MODEL_TYPES, SERVE_LEDGER, TOKENIZERS, CommandError, _rule, build_model, check_model_file,
                         check_new_file, check_new_folder, counts_text, in_date_order, labelled, load_model,
                         messages_text, min_per_class, model_alpha, model_mu, spam_filter, warn_without_ledger,
                         with_progress)
from .cli_evaluate import (check_outputs, cmd_demo, cmd_evaluate, evaluation_items, metrics_table, order_fields,
                           orders_table, other_orders, report_fields, rule_fields, run_evaluation, write_plots)
from .cli_model import cmd_inspect, cmd_learn, cmd_train, cmd_unlearn, discriminative_features
from .settings import Limits, Settings

__all__ = [
    # the command line
    "main", "build_parser", "parse_arguments", "error_text", "output_closed", "cmd_classify", "one_message",
    "cmd_serve",
    # what the commands share (streamnb.service.cli_common)
    "EXIT_SPAM", "EXIT_HAM", "EXIT_UNSURE", "EXIT_ERROR", "EXIT_OUTPUT_CLOSED", "EXIT_CODES", "MODEL_TYPES",
    "TOKENIZERS", "DEFAULT_MODEL", "DEFAULT_TOKENIZER", "DEFAULT_PRIOR", "DEFAULT_ALPHA", "DEFAULT_MU",
    "DEFAULT_RULE", "SERVE_LEDGER", "LOCK_TIMEOUT", "CommandError", "build_model", "model_alpha", "model_mu",
    "min_per_class", "labelled", "in_date_order", "with_progress", "check_model_file", "check_new_file",
    "check_new_folder", "load_model", "counts_text", "messages_text", "warn_without_ledger", "spam_filter",
    # train, learn, unlearn, inspect (streamnb.service.cli_model)
    "cmd_train", "cmd_learn", "cmd_unlearn", "cmd_inspect", "discriminative_features",
    # evaluate, demo (streamnb.service.cli_evaluate)
    "evaluation_items", "other_orders", "check_outputs", "cmd_evaluate", "run_evaluation", "report_fields",
    "rule_fields", "order_fields", "orders_table", "metrics_table", "write_plots", "cmd_demo",
    # names this module has always given
    "StreamNBError", "tag_message", "Limits", "Settings",
]


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (not the usage, which --help prints)
    and exits with code 3 (2 means "unsure" for classify)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")



# -- classify ----------------------------------------------------------------------------------------

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
