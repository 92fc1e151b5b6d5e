"""The replies to a check: the score, the symbols, the report and the rewritten message.

Scores: the decision rule's score in [0, 1] (the command's default, LogOddsRule, maps the
log-odds onto it: spam from 0.9; with ``--rule chi2``, the chi-square indicator I) times 10,
cut (not rounded) to one decimal, over the spam cutoff times 10: ``9.9 / 9.0``. ``Spam:
True`` exactly when the verdict is spam, so spamc's exit code says spam (1) or not (0);
"unsure" (the score between the cutoffs, or a model not yet trained on ``--min-per-class``
messages of each class) cannot travel in that exit code and is carried by the
``X-StreamNB-Status`` header and the ``STREAMNB_UNSURE`` symbol.
"""

from __future__ import annotations

import math
from typing import Any

from ..filter.decision import SPAM, Verdict
from ..filter.headers import rewrite_headers
from .protocol import EX_OK, PROTOCOL
from .settings import Settings


def score_fields(verdict: Verdict, spam_cutoff: float) -> tuple[str, str, str]:
    """("True"/"False", score, threshold) as spamd writes them: the rule's score and the spam cutoff, times 10.

    Parameters
    ----------
    verdict
        The verdict of the user's filter.
    spam_cutoff
        The rule's spam cutoff, in [0, 1].

    Returns
    -------
    tuple of str
        ``"True"`` exactly when the verdict is spam (else ``"False"``), the score times 10 cut
        (not rounded) to one decimal (0.0 for a score that is not finite), and the cutoff times
        10 to one decimal.
    """
    # Cut, not rounded: a score shown as 9.0 is never below a 9.0 threshold.
    score = math.floor(verdict.score * 100.0) / 10.0 if math.isfinite(verdict.score) else 0.0
    return ("True" if verdict.label == SPAM else "False"), f"{score:.1f}", f"{10.0 * spam_cutoff:.1f}"


def symbols(verdict: Verdict, ready: bool, scored: bool = True) -> list[str]:
    """The symbols of a verdict, as SYMBOLS lists them and X-Spam-Status's ``tests=`` names them.

    Parameters
    ----------
    verdict
        The verdict.
    ready
        Whether the model has learned ``min_per_class`` messages of each class.
    scored
        False when the user's model could not be used (the verdict is :func:`unscored_verdict`).

    Returns
    -------
    list of str
        ``STREAMNB_SPAM``, ``STREAMNB_HAM`` or ``STREAMNB_UNSURE``, then ``STREAMNB_UNSCORED``
        (not scored) or ``STREAMNB_UNTRAINED`` (scored, not ready).
    """
    names = [f"STREAMNB_{verdict.label.upper()}"]
    if not scored:
        names.append("STREAMNB_UNSCORED")
    elif not ready:
        names.append("STREAMNB_UNTRAINED")
    return names


def unscored_verdict(rule: Any) -> Verdict:
    """What a check answers when the user's model cannot score the message: unsure, halfway
    between the rule's cutoffs, with nothing known about the message.

    Parameters
    ----------
    rule
        The decision rule (its ``ham_cutoff`` and ``spam_cutoff``).

    Returns
    -------
    Verdict
        Label ``"unsure"``, the score halfway between the cutoffs, NaN probability and
        log-odds, no evidence.
    """
    return Verdict("unsure", (rule.ham_cutoff + rule.spam_cutoff) / 2, math.nan, [], math.nan)


def report_text(verdict: Verdict, user: str, counts: dict, settings: Settings, scored: bool = True) -> str:
    """The body of a REPORT: the verdict, the score against the rule's cutoffs, the posterior,
    what the model learned, and the strongest clues.

    Parameters
    ----------
    verdict
        The verdict (with its evidence, for the clues).
    user
        The user whose model gave it.
    counts
        The model's class counts (``{"spam": ..., "ham": ...}``).
    settings
        The server's settings: the rule and ``min_per_class``.
    scored
        False when the user's model could not be used: the report says so, and nothing else.

    Returns
    -------
    str
        The report, lines ending in ``\\r\\n``.
    """
    rule = settings.rule
    if not scored:
        return (f"streamnb verdict for user {user}: unsure\r\n  not scored: the model of user {user} could not be "
                "used (the service's log says why)\r\n")
    lines = [f"streamnb verdict for user {user}: {verdict.label}",
             f"  score {10 * verdict.score:.2f} of 10 (rule {type(rule).__name__}: spam from "
             f"{10 * rule.spam_cutoff:.1f}, ham below {10 * rule.ham_cutoff:.1f})",
             f"  P(spam|x) = {verdict.probability:.6f} (naive Bayes posterior)",
             f"  model: {counts.get('spam', 0):g} spam and {counts.get('ham', 0):g} ham learned"
             + (f" (unsure until {settings.min_per_class:g} of each)"
                if min(counts.get("spam", 0), counts.get("ham", 0)) < settings.min_per_class else "")]
    if verdict.evidence:
        lines += ["", "Strongest clues (weight: > 0 toward spam, < 0 toward ham):"]
        lines += [f"  {clue.weight:+8.3f}  {clue.feature}" for clue in verdict.evidence]
    return "\r\n".join(lines) + "\r\n"


def rewrite_message(raw: bytes, verdict: Verdict, score: str, threshold: str, tests: list[str]) -> bytes:
    """The message with streamnb's and spamd-compatible X-Spam-* headers (earlier ones replaced).

    Parameters
    ----------
    raw
        The message as it came.
    verdict
        Its verdict.
    score, threshold
        The score and the spam cutoff as :func:`score_fields` writes them.
    tests
        The verdict's :func:`symbols`.

    Returns
    -------
    bytes
        The message with X-StreamNB-Status, X-StreamNB-Score, X-Spam-Status and (spam only)
        X-Spam-Flag headers; its body byte for byte.
    """
    spam = verdict.label == SPAM
    headers = [("X-StreamNB-Status", verdict.label), ("X-StreamNB-Score", f"{verdict.score:.6f}"),
               ("X-Spam-Status", f"{'Yes' if spam else 'No'}, score={score} required={threshold} "
                                 f"tests={','.join(tests)}")]
    if spam:
        headers.append(("X-Spam-Flag", "YES"))
    return rewrite_headers(raw, headers, remove=("X-StreamNB-Status", "X-StreamNB-Score", "X-Spam-Status",
                                                  "X-Spam-Flag"))


def check_reply(method: str, verdict: Verdict, ready: bool, raw: bytes, user: str, counts: dict,
                settings: Settings, scored: bool = True) -> bytes:
    """The whole reply to a check (CHECK, SYMBOLS, REPORT, REPORT_IFSPAM, PROCESS, HEADERS).

    Parameters
    ----------
    method
        The request's method.
    verdict
        The verdict of the user's filter (or :func:`unscored_verdict`).
    ready
        Whether the model has learned ``min_per_class`` messages of each class.
    raw
        The message, for PROCESS and HEADERS.
    user
        The user, for REPORT.
    counts
        The model's class counts, for REPORT.
    settings
        The server's settings.
    scored
        False when the user's model could not be used.

    Returns
    -------
    bytes
        ``SPAMD/1.5 0 EX_OK``, the ``Spam:`` and ``X-StreamNB-Status:`` headers, and (but for
        CHECK) a ``Content-length`` and the method's body.
    """
    flag, score, threshold = score_fields(verdict, settings.spam_cutoff)
    tests = symbols(verdict, ready, scored)
    head = f"{PROTOCOL} {EX_OK} EX_OK\r\n"
    extra = f"Spam: {flag} ; {score} / {threshold}\r\nX-StreamNB-Status: {verdict.label}\r\n"
    if method == "CHECK":
        return (head + extra + "\r\n").encode("ascii")
    if method == "SYMBOLS":
        body = ",".join(tests).encode("ascii")
    elif method == "REPORT" or (method == "REPORT_IFSPAM" and verdict.label == SPAM):
        body = report_text(verdict, user, counts, settings, scored).encode("utf-8", "replace")
    elif method == "REPORT_IFSPAM":
        body = b""
    else:
        body = rewrite_message(raw, verdict, score, threshold, tests)
        if method == "HEADERS":
            body = _headers_only(body)
    return (head + f"Content-length: {len(body)}\r\n" + extra + "\r\n").encode("ascii") + body


def _headers_only(message: bytes) -> bytes:
    """The message up to and including the empty line after its headers (spamd's HEADERS)."""
    ends = [i for i in (message.find(b"\r\n\r\n"), message.find(b"\n\n")) if i >= 0]
    if not ends:
        return message
    end = min(ends)
    return message[: end + (4 if message[end:end + 4] == b"\r\n\r\n" else 2)]
