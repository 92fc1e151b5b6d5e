"""The options the ``streamnb`` commands share, and the argparse types that check their values.

A value is refused with a message naming what was expected; argparse puts the option's name
before it (``argument --alpha: expected a finite number > 0, got 'abc'``).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

from ..filter.rules import HAM_SCORE, LOG_ODDS_CUTOFFS, MIN_PER_CLASS, RULES, SPAM_SCORE
from .cli_common import DEFAULT_MODEL, DEFAULT_PRIOR, DEFAULT_TOKENIZER, MODEL_TYPES, TOKENIZERS


def model_options(parser: argparse.ArgumentParser) -> None:
    """Add the options that describe a model: --model-type, --alpha, --mu, --tokenizer, --counts,
    --class-prior.

    Parameters
    ----------
    parser
        The command's parser.
    """
    parser.add_argument("--model-type", choices=MODEL_TYPES, default=DEFAULT_MODEL,
                        help="fusion (default): the recommended filter, naive Bayes and logistic regression fused; "
                             "email: EmailNB alone; or a plain naive Bayes variant")
    parser.add_argument("--alpha", type=smoothing, default=None,
                        help="additive smoothing (> 0, or auto: chosen online among 8 candidates; default 0.3 for "
                             "fusion and email, 0.01 otherwise)")
    parser.add_argument("--mu", type=smoothing, default=None,
                        help="Dirichlet smoothing toward the pooled distribution (fusion, email, multinomial; > 0, "
                             "or auto; default 100 for fusion and email, none otherwise)")
    parser.add_argument("--tokenizer", choices=TOKENIZERS, default=DEFAULT_TOKENIZER,
                        help="plain models: email (headers, subject, URLs, MIME and body words) or words")
    parser.add_argument("--counts", action="store_true",
                        help="plain models: count repeated words (default: presence, 0/1)")
    parser.add_argument("--class-prior", choices=("mle", "laplace", "uniform"), default=DEFAULT_PRIOR)


def source_options(parser: argparse.ArgumentParser) -> None:
    """Add the options that name labelled mail: --spam, --ham, --data and its columns.

    Parameters
    ----------
    parser
        The command's parser.
    """
    parser.add_argument("--spam", action="append", metavar="SRC", help="spam: Maildir, mbox, folder or file")
    parser.add_argument("--ham", action="append", metavar="SRC", help="ham: Maildir, mbox, folder or file")
    parser.add_argument("--data", action="append", metavar="FILE", help="JSONL or CSV with text and label columns")
    parser.add_argument("--text-column", default="text")
    parser.add_argument("--label-column", default="label")


def decision_options(parser: argparse.ArgumentParser) -> None:
    """Add the options of the decision rule (:class:`~streamnb.filter.rules.RuleOptions`): --rule,
    the options that move its verdicts, --min-per-class. Each is refused with a rule it would not
    move; a default not given is the rule's (or the model's), written there once.

    Parameters
    ----------
    parser
        The command's parser.
    """
    parser.add_argument("--rule", choices=RULES, default=RULES[0],
                        help="logodds: cutoffs on the model's log-odds, cautious while a class is little known "
                             "(default); chi2: Robinson/Fisher combining; posterior: P(spam|x); argmax")
    model_own = "default: the model's own; {} for a model that declares none, as EmailNB"
    parser.add_argument("--spam-log-odds", type=finite_float, default=None,
                        help="logodds: spam from this log-odds, one higher while fewer than one recent message in "
                             "a thousand came with a label (" + model_own.format(f"{LOG_ODDS_CUTOFFS[1]:g}") + ")")
    parser.add_argument("--ham-log-odds", type=finite_float, default=None,
                        help="logodds: ham below this log-odds (" + model_own.format(f"{LOG_ODDS_CUTOFFS[0]:g}") + ")")
    parser.add_argument("--caution", type=nonnegative_float, default=None,
                        help="logodds: each log-odds cutoff moves out by caution * 100 / messages learned of the "
                             "class it rules out (" + model_own.format(f"{LOG_ODDS_CUTOFFS[2]:g}") + ")")
    parser.add_argument("--spam-cutoff", type=probability, default=None,
                        help=f"chi2 and posterior: spam from this score, 0 to 1 (default {SPAM_SCORE:g}); "
                             "for logodds see --spam-log-odds")
    parser.add_argument("--ham-cutoff", type=probability, default=None,
                        help=f"chi2 and posterior: ham below this score (default {HAM_SCORE:g}); "
                             "for logodds see --ham-log-odds")
    parser.add_argument("--min-per-class", type=nonnegative_float, default=None,
                        help="unsure until the model has learned this many spam and ham (default, by rule: "
                             + ", ".join(f"{rule} {n:g}" for rule, n in MIN_PER_CLASS.items()) + ")")


def number(kind: Callable[[str], Any], fits: Callable[[Any], bool], expected: str) -> Callable[[str], Any]:
    """An argparse type: text -> int or float, refused with a message naming what was expected
    (argparse puts the option's name before it: "argument --alpha: expected ...").

    Parameters
    ----------
    kind
        ``int`` or ``float``.
    fits
        Whether a value is acceptable.
    expected
        What is acceptable, in words (``"a finite number > 0"``).

    Returns
    -------
    Callable
        text -> value; ``argparse.ArgumentTypeError`` for text that is not one.
    """

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if not fits(value):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value

    return parse


positive_float = number(float, lambda v: v > 0 and math.isfinite(v), "a finite number > 0")
nonnegative_float = number(float, lambda v: v >= 0 and math.isfinite(v), "a finite number >= 0")
finite_float = number(float, math.isfinite, "a finite number")
probability = number(float, lambda v: 0 <= v <= 1, "a number from 0 to 1")
count = number(int, lambda v: v >= 0, "an integer >= 0")
positive_int = number(int, lambda v: v >= 1, "an integer >= 1")
port = number(int, lambda v: 0 <= v <= 65535, "a TCP port from 0 to 65535")


def smoothing(text: str) -> float | str:
    """A smoothing value: a finite number > 0, or "auto" (chosen online).

    Parameters
    ----------
    text
        The option's value.

    Returns
    -------
    float or str
        The number, or ``"auto"``.

    Raises
    ------
    argparse.ArgumentTypeError
        Anything else.
    """
    if text == "auto":
        return text
    try:
        return positive_float(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0 or auto, got {text!r}") from None
