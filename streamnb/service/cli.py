"""The ``streamnb`` command: a naive Bayes spam filter for real mail.

    streamnb train MODEL --spam SRC --ham SRC [--data FILE.jsonl]   build a model file
    streamnb classify MODEL [SRC ...] [--tag]                       verdicts (stdin: a message or an mbox)
    streamnb learn MODEL --spam SRC | --ham SRC                     corrections, in place
    streamnb unlearn MODEL --spam SRC | --ham SRC                   take messages back out
    streamnb evaluate (--corpus PATH | --spam SRC --ham SRC)        progressive evaluation
    streamnb evaluate --corpus TREC --task TASK [--quota N]         TREC 2007's feedback tasks
    streamnb inspect MODEL                                          classes, counts, |V|, top tokens
    streamnb demo                                                   the SpamAssassin stream, end to end
    streamnb serve --models DIR [--allow-tell]                      spamd-compatible service (spamc)

A source (SRC) is a Maildir, an mbox file, a folder of message files or one message file
(see ``streamnb.filter.sources``); ``--data`` takes JSONL/CSV files with text and label columns.
The model file is streamnb's persistence format (``streamnb.persist``): written atomically,
so a failed command leaves it as it was. learn, unlearn and train --force hold the model's
write lock (``streamnb.service.journal``) from load to save, so commands run at once on one file (or
beside ``streamnb serve``) each add their lessons: none is lost to a concurrent writer.

Imports are made where they are needed: ``streamnb classify`` loads the model and the
tokenizer (the model file without numpy, its ledger and kept steps included), and nothing for
evaluation, calibration, plots or the corpus.

Exit codes (``--help`` lists them): ``classify`` of one message returns 0 for spam, 1 for
ham, 2 for unsure (as bogofilter does); every command returns 3 on an error, with a one-line
message on stderr (a usage error too: the usage is what --help prints; options are never
abbreviated, and an unknown one is named), 130 when interrupted (Ctrl-C), and 141 when the
reader of its output went away (``| head``), as a tool stopped by SIGPIPE. No path given to
a command makes a folder: a typo is an error, not a new folder. Standard input is read up
to ``--max-size`` bytes, as the service reads a message.

This module holds the parser, :func:`main`, and the commands that run the filter on mail as
it arrives: ``classify`` and ``serve``. The other commands are in
:mod:`~streamnb.service.cli_model` (train, learn, unlearn, inspect) and
:mod:`~streamnb.service.cli_evaluate` (evaluate, demo), on what they share in
:mod:`~streamnb.service.cli_common`; their public names are re-exported here.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn

from .. import __version__
from ..errors import StreamNBError
from ..filter.headers import tag_message
from .cli_common import (
    DEFAULT_ALPHA,
    DEFAULT_MODEL,
    DEFAULT_MU,
    DEFAULT_PRIOR,
    DEFAULT_TOKENIZER,
    EXIT_CODES,
    EXIT_ERROR,
    EXIT_HAM,
    EXIT_INTERRUPTED,
    EXIT_OUTPUT_CLOSED,
    EXIT_SPAM,
    EXIT_UNSURE,
    LOCK_TIMEOUT,
    MODEL_TYPES,
    SERVE_LEDGER,
    TOKENIZERS,
    CommandError,
    build_model,
    check_model_file,
    check_new_file,
    check_new_folder,
    counts_text,
    decision_rule,
    in_date_order,
    labelled,
    load_model,
    load_served_model,
    messages_text,
    min_per_class,
    model_alpha,
    model_mu,
    rule_options,
    sourced,
    spam_filter,
    stdin_messages,
    warn_without_ledger,
    with_progress,
)
from .cli_evaluate import (
    check_outputs,
    check_plotting,
    check_task_options,
    cmd_demo,
    cmd_evaluate,
    count_fields,
    evaluation_items,
    metrics_table,
    model_name,
    order_fields,
    orders_table,
    other_orders,
    report_fields,
    rule_fields,
    run_evaluation,
    run_task_evaluation,
    task_fields,
    task_table,
    write_plots,
)
from .cli_model import (
    check_distinct,
    cmd_inspect,
    cmd_learn,
    cmd_train,
    cmd_unlearn,
    discriminative_features,
    unlearn_error,
    warn_one_class,
)
from .cli_options import (
    count,
    decision_options,
    finite_float,
    model_options,
    nonnegative_float,
    number,
    port,
    positive_float,
    positive_int,
    probability,
    smoothing,
    source_options,
)
from .cli_serve import SyslogFacilities, address, run_serve, store_url
from .settings import LOG_LEVELS, SYSLOG_SOCKET, Limits, Settings

__all__ = [
    # the command line
    "main", "build_parser", "parse_arguments", "error_text", "output_closed", "cmd_classify", "one_message",
    "stdin_messages", "exit_codes_text",
    "cmd_serve",
    # what the commands share (streamnb.service.cli_common)
    "EXIT_SPAM", "EXIT_HAM", "EXIT_UNSURE", "EXIT_ERROR", "EXIT_OUTPUT_CLOSED", "EXIT_INTERRUPTED", "EXIT_CODES",
    "MODEL_TYPES",
    "TOKENIZERS", "DEFAULT_MODEL", "DEFAULT_TOKENIZER", "DEFAULT_PRIOR", "DEFAULT_ALPHA", "DEFAULT_MU",
    "SERVE_LEDGER", "LOCK_TIMEOUT", "CommandError", "build_model", "model_alpha", "model_mu",
    "min_per_class", "labelled", "in_date_order", "with_progress", "check_model_file", "check_new_file",
    "check_new_folder", "load_model", "load_served_model", "sourced", "counts_text", "messages_text",
    "warn_without_ledger", "spam_filter",
    "decision_rule", "rule_options",
    # the options the commands share, and the types of their values (streamnb.service.cli_options)
    "model_options", "source_options", "decision_options", "number", "positive_float", "nonnegative_float",
    "finite_float", "probability", "count", "positive_int", "port", "smoothing",
    # train, learn, unlearn, inspect (streamnb.service.cli_model)
    "cmd_train", "cmd_learn", "cmd_unlearn", "cmd_inspect", "discriminative_features", "warn_one_class",
    "check_distinct", "unlearn_error",
    # evaluate, demo (streamnb.service.cli_evaluate)
    "evaluation_items", "other_orders", "check_outputs", "cmd_evaluate", "run_evaluation", "report_fields",
    "rule_fields", "order_fields", "orders_table", "metrics_table", "write_plots", "cmd_demo", "check_task_options",
    "check_plotting", "count_fields", "model_name",
    "run_task_evaluation", "task_fields", "task_table",
    # names this module has always given
    "StreamNBError", "tag_message", "Limits", "Settings",
]


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (not the usage, which --help prints)
    and exits with code 3 (2 means "unsure" for classify); an option is never abbreviated
    (``--spa`` is not ``--spam``: a typo is named, not guessed); --help ends with the exit codes."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")




# -- classify ----------------------------------------------------------------------------------------

def cmd_classify(args: argparse.Namespace) -> int:
    """``streamnb classify``: the verdict of one message (stdin, or one file), or a line per message.

    Parameters
    ----------
    args
        The options of ``streamnb classify``: the model file, the sources (none: standard
        input, at most ``--max-size`` bytes: one message, or an mbox), ``--tag``,
        ``--evidence`` and the decision rule's.

    Returns
    -------
    int
        For one message on standard input (or with ``--tag``/``--evidence``): 0 spam, 1 ham,
        2 unsure (as bogofilter); for a line per message, 0.

    Raises
    ------
    CommandError
        ``--tag`` with ``--evidence``, a model file that is not there or not of spam and ham,
        standard input over ``--max-size``, or not one message where one is needed.
    SourceError, ModelFormatError, OSError
        A source or standard input that is not mail, or a model file that cannot be read.
    """
    from ..filter.sources import read_mail

    if args.tag and args.evidence:
        raise CommandError("--tag writes the message back and --evidence prints its clues: give one of them")
    model, _ = load_served_model(args.model)  # with the lessons the service journaled: its verdicts
    spam = spam_filter(model, args)
    if args.tag or args.evidence:
        raw = one_message(args.sources, "--tag" if args.tag else "--evidence", args.max_size)
    else:
        messages = [m for source in args.sources for m in read_mail(source)] if args.sources else \
            stdin_messages(args.max_size)
        if args.sources or len(messages) != 1:  # a line per message (an mbox on stdin: each of its messages)
            for message in messages:
                verdict = spam.classify(message.raw, explain=False)  # one line each: no clues
                print(f"{message.origin}\t{verdict.label}\t{verdict.score:.6f}")
            return 0
        raw = messages[0].raw
    verdict = spam.classify(raw, explain=bool(args.evidence))
    if args.tag:
        sys.stdout.buffer.write(tag_message(raw, verdict))
    else:
        print(f"{verdict.label}\t{verdict.score:.6f}")
        for clue in verdict.evidence[: args.evidence]:
            print(f"  {clue.feature}\t{clue.weight:+.3f}")
    return EXIT_CODES[verdict.label]


def one_message(sources: list[str], option: str, max_size: int = Limits.max_size) -> bytes:
    """The message on standard input (no sources), or the one message the sources hold.

    Parameters
    ----------
    sources
        The sources given on the command line (none: standard input).
    option
        The option that needs one message, as the error names it.
    max_size
        The most bytes read from standard input (``--max-size``).

    Returns
    -------
    bytes
        The raw message, checked to be mail.

    Raises
    ------
    CommandError
        The sources (or standard input, an mbox) hold no message or more than one, or
        standard input is over ``max_size``.
    SourceError
        Standard input is empty, or not a mail message.
    """
    from ..filter.sources import read_mail

    if sources:
        messages = [m for source in sources for m in read_mail(source)]
        where = ", ".join(map(repr, sources))
    else:
        messages, where = stdin_messages(max_size), "standard input"
    if len(messages) != 1:
        raise CommandError(f"{option} takes one message (on standard input, or one file); "
                           f"{messages_text(len(messages))} in {where}")
    return messages[0].raw


# -- the parser ------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    """The ``streamnb`` command's parser, with a subparser per command.

    Returns
    -------
    argparse.ArgumentParser
        The parser; each command sets ``run`` (its function) and ``command_parser``.
    """
    parser = _Parser(prog="streamnb", description="Streaming naive Bayes spam filtering for real mail.")
    parser.add_argument("--version", action="version", version=f"streamnb {__version__}")
    # not required here: parse_arguments names a missing command, or the unknown option given instead
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    train = commands.add_parser("train", help="build a model file from labelled mail")
    train.add_argument("model", help="model file to write")
    source_options(train)
    model_options(train)
    train.add_argument("--force", action="store_true", help="replace an existing model file")
    train.add_argument("--ledger", type=count, default=SERVE_LEDGER, metavar="N",
                       help="remember the last N messages learned: learning one again is a no-op, under the "
                            "other class it moves; 'streamnb serve' TELL needs one (default "
                            f"{SERVE_LEDGER:,}, as the service's new models; 0: none)")
    train.set_defaults(run=cmd_train)

    classify = commands.add_parser("classify", help="verdicts: one message on stdin, or many from sources")
    classify.add_argument("model")
    classify.add_argument("sources", nargs="*", metavar="SRC", help="Maildir, mbox, folder or files (default: stdin)")
    classify.add_argument("--tag", action="store_true",
                          help="write the message back with X-StreamNB-Status and X-StreamNB-Score headers "
                               "(one message: on stdin, or one file)")
    classify.add_argument("--evidence", type=count, default=0, metavar="K",
                          help="print the K strongest clues (one message: on stdin, or one file; without --tag)")
    classify.add_argument("--max-size", type=positive_int, default=Limits.max_size, metavar="BYTES",
                          help=f"most bytes read from standard input (default {Limits.max_size}, as "
                               "'streamnb serve' and spamc); more is an error")
    decision_options(classify)
    classify.set_defaults(run=cmd_classify)

    for name, run, what in (("learn", cmd_learn, "add labelled messages (corrections) to a model file"),
                            ("unlearn", cmd_unlearn, "remove messages learned earlier from a model file")):
        command = commands.add_parser(name, help=what)
        command.add_argument("model")
        source_options(command)
        command.set_defaults(run=run)

    evaluate = commands.add_parser("evaluate", help="progressive evaluation: classify, then learn, each message")
    evaluate.add_argument("--corpus", help="the SpamAssassin corpus, or the TREC 2007 one (streamnb.filter.trec), "
                                           "as a folder or an archive, instead of --spam/--ham")
    source_options(evaluate)
    model_options(evaluate)
    decision_options(evaluate)
    evaluate.add_argument("--order", choices=("date", "file", "shuffle"), default="date")
    evaluate.add_argument("--seed", type=count, default=0, help="seed of --order shuffle")
    evaluate.add_argument("--also-orders", metavar="ORDERS", default=None,
                          help="then run the same settings on these orders and print a table: date, file, "
                               "shuffle:SEED, comma-separated, or none (default with --corpus: "
                               "file,shuffle:1,shuffle:2,shuffle:3; otherwise none)")
    evaluate.add_argument("--task", choices=("full", "delay", "partial", "active"),
                          help="on a TREC-layout corpus, run one of TREC 2007's feedback tasks: full (every label), "
                               "delay (the first 10,000), partial (one recipient's), active (the labels the filter "
                               "asks for); every message is scored; delay/index and partial/index are read from the "
                               "corpus or $STREAMNB_TREC07P_FEEDBACK")
    evaluate.add_argument("--quota", type=count, metavar="N",
                          help="with --task active: the labels the filter may ask for (default 1,000)")
    evaluate.add_argument("--json", metavar="FILE", help="write the metrics as JSON")
    evaluate.add_argument("--plots", metavar="DIR", help="write learning curve, ROC and reliability PNGs")
    evaluate.add_argument("--save", metavar="MODEL", help="save the model learned along the way")
    evaluate.set_defaults(run=cmd_evaluate)

    inspect = commands.add_parser("inspect", help="classes, counts, |V| and top tokens of a model file")
    inspect.add_argument("model")
    inspect.add_argument("--top", type=count, default=15, metavar="K",
                         help="the K most telling tokens of each class (default 15; 0: none)")
    inspect.set_defaults(run=cmd_inspect)

    demo = commands.add_parser("demo", help="stream the SpamAssassin corpus through the filter")
    demo.add_argument("--corpus", help="corpus folder or archive (default: $STREAMNB_SPAMASSASSIN)")
    demo.add_argument("--download", action="store_true", help="download the official archives if not found")
    demo.add_argument("--out", default="demo-output",
                      help="folder for report.json, plots and model (default: ./demo-output)")
    model_options(demo)
    decision_options(demo)
    demo.set_defaults(run=cmd_demo)

    serve = commands.add_parser("serve", help="spamd-compatible filter service for spamc (per-user models)")
    serve.add_argument("--models", metavar="DIR",
                       help="folder of the per-user models DIR/<user>.snb (needed unless --store keeps them)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=port, default=783, help="TCP port (default 783, spamd's; 0: any free port)")
    serve.add_argument("--allow-tell", action="store_true", help="accept TELL (spamc -L spam|ham|forget)")
    serve.add_argument("--read-only", action="store_true",
                       help="never write in the models folder (needed to serve one that cannot be written); "
                            "TELL is refused")
    serve.add_argument("--store", type=store_url, metavar="redis://HOST:PORT/DB",
                       help="keep the models' lessons and snapshots in this Redis database, shared by every host "
                            "serving it (default: the models folder alone)")
    serve.add_argument("--workers", type=positive_int, default=1, metavar="N",
                       help="serve with N processes on the one port, to use N cores (default 1): each reads the "
                            "lessons the others journaled (or, with --store, put in Redis) before it scores")
    # the defaults: streamnb.service.settings (Settings and Limits), as the server's own
    serve.add_argument("--max-models", type=positive_int, default=Settings.max_models,
                       help=f"models kept loaded (default {Settings.max_models})")
    serve.add_argument("--max-memory", type=positive_int, metavar="BYTES",
                       help="bytes the users' models in memory may hold together, with the messages they observed "
                            "since their last save (the least recently used are let go beyond it; default: no cap "
                            "but --max-models)")
    serve.add_argument("--max-size", type=positive_int, default=Limits.max_size, metavar="BYTES",
                       help=f"largest message accepted (default {Limits.max_size}, spamc's default)")
    serve.add_argument("--timeout", type=positive_float, default=Limits.timeout, metavar="SECONDS",
                       help=f"time a client has to send a whole request (default {Limits.timeout:g})")
    serve.add_argument("--max-connections", type=positive_int, default=Limits.max_connections,
                       help=f"connections served at once; more are refused with EX_TEMPFAIL "
                            f"(default {Limits.max_connections})")
    serve.add_argument("--snapshot-every", type=positive_int, default=Settings.snapshot_every, metavar="N",
                       help=f"fold a user's journal into the model file after N lessons "
                            f"(default {Settings.snapshot_every})")
    serve.add_argument("--snapshot-seconds", type=positive_float, default=Settings.snapshot_seconds,
                       metavar="SECONDS",
                       help=f"... or once its oldest lesson is this old (default {Settings.snapshot_seconds:g})")
    serve.add_argument("--lock-timeout", type=positive_float, default=Limits.lock_timeout, metavar="SECONDS",
                       help=f"wait this long for a model file another writer holds (default {Limits.lock_timeout:g})")
    serve.add_argument("--ledger", type=positive_int, default=SERVE_LEDGER, metavar="N",
                       help=f"ledger of a new user's model (default {SERVE_LEDGER:,})")
    serve.add_argument("--site", action=argparse.BooleanOptionalAction, default=Settings.site,
                       help="a site model (DIR/@site.snb) beside each user's: a user's verdict blends the two, and a "
                            "user without lessons gets the site model's (default: on)")
    serve.add_argument("--site-learns", action=argparse.BooleanOptionalAction, default=Settings.site_learns,
                       help="every TELL teaches the site model too (default: on; off: it only answers)")
    serve.add_argument("--site-blend", type=positive_float, default=Settings.site_blend, metavar="K",
                       help="a user's model that knows n messages of its rarer class weighs n / (n + K) against the "
                            f"site model (default {Settings.site_blend:g})")
    serve.add_argument("--observe", action=argparse.BooleanOptionalAction, default=Settings.observe,
                       help="each check lets the site model and the user's own observe its message (mail without a "
                            "label yet; in memory until the model is saved; default: on)")
    serve.add_argument("--log-level", choices=LOG_LEVELS, default="info",
                       help="info (default): a line per request, the start, signals and stop; warning: refusals, "
                            "checks not scored and what went wrong; error: what could not be done")
    serve.add_argument("-v", "--verbose", action="store_true", help="--log-level debug")
    where = serve.add_mutually_exclusive_group()
    where.add_argument("--log-file", metavar="PATH",
                       help="append the log to PATH (reopened on SIGHUP, for logrotate; default: standard error)")
    where.add_argument("--syslog", nargs="?", const="mail", choices=SyslogFacilities(),
                       metavar="FACILITY", help="log to syslog (facility mail, as spamd, unless named)")
    serve.add_argument("--syslog-socket", default=SYSLOG_SOCKET, metavar="PATH",
                       help=f"syslog's socket (default {SYSLOG_SOCKET})")
    serve.add_argument("--metrics", type=address, metavar="HOST:PORT",
                       help="answer Prometheus metrics at http://HOST:PORT/metrics and a health check at /health")
    serve.add_argument("--config", metavar="FILE",
                       help="more options of streamnb serve, as on the command line (# comments), read after it and "
                            "again on SIGHUP")
    model_options(serve)
    decision_options(serve)
    serve.set_defaults(run=cmd_serve)
    every: list[tuple[str | None, argparse.ArgumentParser]] = [(None, parser), *commands.choices.items()]
    for command_name, each in every:
        if command_name is not None:
            each.set_defaults(command_parser=each)  # for the errors parse_arguments finds
        each.epilog = exit_codes_text(command_name)
        each.allow_abbrev = False  # read when parsing: `--spa` is not `--spam`
        each.formatter_class = argparse.RawDescriptionHelpFormatter  # read by --help: the epilog's lines kept
    return parser


def exit_codes_text(command: str | None) -> str:
    """The exit codes, as --help lists them (``streamnb --help``: every command's).

    Parameters
    ----------
    command
        The command (None: the ``streamnb`` command as a whole).

    Returns
    -------
    str
        The epilog of the command's --help.
    """
    verdicts = [f"  {EXIT_SPAM}    spam (one message)", f"  {EXIT_HAM}    ham (one message)",
                f"  {EXIT_UNSURE}    unsure (one message)"]
    if command == "classify":
        codes = [*verdicts, f"  {EXIT_SPAM}    done (a line per message: many sources, or an mbox on stdin)"]
    elif command is None:
        codes = [f"  {EXIT_SPAM}    done", *[f"{line}, for classify" for line in verdicts]]
    else:
        codes = [f"  {EXIT_SPAM}    done"]
    codes += [f"  {EXIT_ERROR}    an error, said in one line on stderr",
              f"  {EXIT_INTERRUPTED}  interrupted (Ctrl-C): nothing was saved",
              f"  {EXIT_OUTPUT_CLOSED}  the reader of the output went away (| head)"]
    return "exit codes:\n" + "\n".join(codes)


def cmd_serve(args: argparse.Namespace) -> int:
    """``streamnb serve``: the spamd-compatible service, until SIGTERM or SIGINT
    (:mod:`streamnb.service.cli_serve`).

    Parameters
    ----------
    args
        The options of ``streamnb serve``: the models folder, where to listen, the limits,
        and the model and rule of a new user.

    Returns
    -------
    int
        0, or 3 when lessons could not be folded into their model files (they stay in
        their journals).

    Raises
    ------
    ServiceError
        The models folder cannot be used, or the address cannot be listened on.
    CommandError
        Options that do not go together (in the ``--config`` file too).
    OSError
        The log file cannot be opened.
    """
    return run_serve(args)


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, checked; a usage error exits (3) with one line on stderr.

    Parameters
    ----------
    argv
        The words to parse (None: ``sys.argv[1:]``).

    Returns
    -------
    argparse.Namespace
        The options, with ``run`` (the command's function) and ``command_parser``.
    """
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if args.command is None:
        if extra:  # `streamnb --frobnicate`: the option is the error, not the command it stood in for
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        parser.error("a command is needed (train, classify, learn, unlearn, evaluate, inspect, demo or serve)")
    if extra:
        # argparse gives a list of positionals (classify's SRC ...) only the words before the
        # first option; the words after one (`classify m.snb --tag FILE`) come back here.
        command = args.command_parser
        if not isinstance(getattr(args, "sources", None), list) or any(word.startswith("-") for word in extra):
            command.error(f"unrecognized arguments: {' '.join(extra)}")
        args.sources += extra
    return args


def error_text(error: BaseException) -> str:
    """One line naming what went wrong: an OSError as "PATH: reason", not "[Errno 13] ...".

    Parameters
    ----------
    error
        The error a command raised.

    Returns
    -------
    str
        Its message on one line.
    """
    if isinstance(error, OSError) and not isinstance(error, StreamNBError) and error.strerror:
        where = " -> ".join(repr(name) for name in (error.filename, error.filename2) if name is not None)
        return f"{where}: {error.strerror}" if where else error.strerror
    return " ".join(str(error).split())


def main(argv: list[str] | None = None) -> int:
    """Run the ``streamnb`` command (the console script, ``python -m streamnb``).

    Parameters
    ----------
    argv
        The command line after the program's name (None: the process's own).

    Returns
    -------
    int
        The command's exit code: 3 with a one-line message on stderr for an error, 141 when
        the reader of the output went away; ``classify`` of one message 0, 1 or 2 for spam,
        ham or unsure.
    """
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
    except KeyboardInterrupt:  # model files are replaced whole, or not at all
        print(f"streamnb {args.command}: interrupted; nothing was saved", file=sys.stderr)
        return EXIT_INTERRUPTED


def output_closed() -> int:
    """The reader of the output went away (``streamnb classify m.snb Maildir | head -1``): stop
    without a word and exit 141, as a tool that SIGPIPE stops does (128 + 13). Standard output
    goes to /dev/null so that the interpreter's last flush has nowhere to fail.

    Returns
    -------
    int
        141.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_OUTPUT_CLOSED


if __name__ == "__main__":
    sys.exit(main())
