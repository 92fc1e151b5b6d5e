"""The replies to a check: the score, the symbols, the report and the rewritten message.

Scores: the decision rule's display score in [0, 1] (the command's default, LogOddsRule,
decides on the log-odds and draws them on it: spam from 0.9; with ``--rule chi2``, the
chi-square indicator I) times 10, cut (not rounded) to one decimal, over the rule's spam
cutoff on that score times 10: ``9.9 / 9.0``. ``Spam:
True`` exactly when the verdict is spam, so spamc's exit code says spam (1) or not (0);
"unsure" (the score between the cutoffs, or a model not yet trained on ``--min-per-class``
messages of each class) cannot travel in that exit code and is carried by the
``X-StreamNB-Status`` header and the ``STREAMNB_UNSURE`` symbol; ``STREAMNB_ASK`` marks a
message whose label the filter wants (``Verdict.ask``: its verdict is unsure), so that a
review folder can collect them. The score is for display: the log-odds the verdict was drawn
from travel in every reply's ``X-StreamNB-Log-Odds`` header (and the REPORT), for a client
that ranks messages.
"""

from __future__ import annotations

import math
from typing import Any

from .. import _core
from ..filter.decision import SPAM, DecisionRule, Verdict
from ..filter.headers import rewrite_headers
from .names import shown
from .protocol import EX_OK, PROTOCOL
from .settings import Settings
from .site import Answer


def score_fields(verdict: Verdict, rule: DecisionRule) -> tuple[str, str, str]:
    """("True"/"False", score, threshold) as spamd writes them: the verdict's score and the
    rule's spam cutoff on that score, times 10.

    Parameters
    ----------
    verdict
        The verdict.
    rule
        The rule that gave it (its ``spam_cutoff``, in [0, 1]).

    Returns
    -------
    tuple of str
        ``"True"`` exactly when the verdict is spam (else ``"False"``), the score times 10 cut
        (not rounded) to one decimal (0.0 for a score that is not finite), and the cutoff times
        10 to one decimal.
    """
    # Cut, not rounded: a score shown as 9.0 is never below a 9.0 threshold.
    score = math.floor(verdict.score * 100.0) / 10.0 if math.isfinite(verdict.score) else 0.0
    return ("True" if verdict.label == SPAM else "False"), f"{score:.1f}", f"{10.0 * rule.spam_cutoff:.1f}"


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
        (not scored) or ``STREAMNB_UNTRAINED`` (scored, not ready), then ``STREAMNB_ASK`` when
        the verdict asks for the message's label.
    """
    names = [f"STREAMNB_{verdict.label.upper()}"]
    if not scored:
        names.append("STREAMNB_UNSCORED")
    elif not ready:
        names.append("STREAMNB_UNTRAINED")
    if verdict.ask:
        names.append("STREAMNB_ASK")
    return names


def unscored_verdict(rule: DecisionRule) -> Verdict:
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


def answered_by(answer: Answer, user: str) -> str:
    """Which models gave a verdict, and their weights (a REPORT's line).

    Parameters
    ----------
    answer
        The verdict and the models behind it.
    user
        The user checked.

    Returns
    -------
    str
        E.g. ``the site model (weight 0.62) and user alice's model (weight 0.38)``.
    """
    if answer.share <= 0.0:
        return f"the site model (user {user} has no model of both classes)"
    if answer.site_counts is None:
        return f"user {user}'s model" if answer.counts else "no model (none has learned anything yet)"
    if answer.share >= 1.0:
        return f"user {user}'s model (the site model does not know both classes yet)"
    return f"the site model (weight {1.0 - answer.share:.2f}) and user {user}'s model (weight {answer.share:.2f})"


def _learned(counts: Any) -> str:
    return f"{counts.get('spam', 0):g} spam and {counts.get('ham', 0):g} ham learned"


def report_text(answer: Answer, user: str, settings: Settings, rule: DecisionRule, scored: bool = True,
                why: str | None = None) -> str:
    """The body of a REPORT: the verdict, the score against the rule's cutoffs, the posterior
    and the log-odds, which models answered and what each learned, whether the verdict asks
    for the message's label, and the strongest clues.

    Parameters
    ----------
    answer
        The verdict (with its evidence, for the clues) and the models behind it.
    user
        The user checked.
    settings
        The server's settings: ``min_per_class``.
    rule
        The rule that gave the verdict.
    scored
        False when the message could not be scored: the report says so, and nothing else.
    why
        What the report says of an unscored message (default: a model could not be used).

    Returns
    -------
    str
        The report, lines ending in ``\\r\\n``.
    """
    verdict, counts = answer.verdict, answer.counts
    if not scored:
        why = why or (f"a model that answers for user {shown(user)} could not be used (the service's log says "
                      "which, and why)")
        return f"streamnb verdict for user {shown(user)}: unsure\r\n  not scored: {why}\r\n"
    lines = [f"streamnb verdict for user {shown(user)}: {verdict.label}",
             f"  score {10 * verdict.score:.2f} of 10 (spam from {10 * rule.spam_cutoff:.1f}, ham below "
             f"{10 * rule.ham_cutoff:.1f})",
             f"  rule {rule!r}",
             f"  P(spam|x) = {verdict.probability:.6f} ({answer.model} posterior)",
             f"  log-odds {verdict.log_odds:+.6f}",
             f"  answered by {answered_by(answer, shown(user))}",
             f"  model: {_learned(counts)}"
             + ("" if answer.ready else f" (unsure until {settings.min_per_class:g} of each)")]
    if answer.site_counts is not None:
        lines.append(f"  site model: {_learned(answer.site_counts)}")
    if answer.coverage < 1.0:
        lines.append(f"  labels: {100 * answer.coverage:.3g}% of the recent messages came with one"
                     + (f" (under {100 * _core.STALE_COVERAGE:g}%: a log-odds rule's spam cutoff stands "
                        f"{_core.STALE_SPAM_RAISE:g} higher)" if answer.coverage < _core.STALE_COVERAGE else ""))
    if verdict.ask:
        lines.append("  asks for this message's label (STREAMNB_ASK): its verdict is unsure")
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


def check_reply(method: str, answer: Answer, raw: bytes, user: str, settings: Settings, rule: DecisionRule,
                scored: bool = True, why: str | None = None) -> bytes:
    """The whole reply to a check (CHECK, SYMBOLS, REPORT, REPORT_IFSPAM, PROCESS, HEADERS).

    Parameters
    ----------
    method
        The request's method.
    answer
        The verdict (or :func:`unscored_verdict`), whether it is ready (``min_per_class`` of
        each class learned), and the models behind it, for REPORT.
    raw
        The message, for PROCESS and HEADERS.
    user
        The user, for REPORT.
    settings
        The server's settings.
    rule
        The rule that gave the verdict (its cutoffs are the reply's threshold).
    scored
        False when the message could not be scored.
    why
        Why not, as a REPORT says it (:func:`report_text`).

    Returns
    -------
    bytes
        ``SPAMD/1.5 0 EX_OK``, the ``Spam:``, ``X-StreamNB-Status:`` and (scored)
        ``X-StreamNB-Log-Odds:`` headers, and (but for CHECK) a ``Content-length`` and the
        method's body.
    """
    verdict = answer.verdict
    flag, score, threshold = score_fields(verdict, rule)
    tests = symbols(verdict, answer.ready, scored)
    head = f"{PROTOCOL} {EX_OK} EX_OK\r\n"
    extra = f"Spam: {flag} ; {score} / {threshold}\r\nX-StreamNB-Status: {verdict.label}\r\n"
    if scored and math.isfinite(verdict.log_odds):
        extra += f"X-StreamNB-Log-Odds: {verdict.log_odds:.6f}\r\n"
    if method == "CHECK":
        return (head + extra + "\r\n").encode("ascii")
    if method == "SYMBOLS":
        body = ",".join(tests).encode("ascii")
    elif method == "REPORT" or (method == "REPORT_IFSPAM" and verdict.label == SPAM):
        body = report_text(answer, user, settings, rule, scored, why).encode("utf-8", "replace")
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
