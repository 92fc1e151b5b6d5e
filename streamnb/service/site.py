"""The site model beside each user's: a user's verdict from both, weighed by the user's lessons.

The formulas below are the core's (``src/site.rs``); this module picks which model answers
and converts.

A few users report mail (TELL), everybody's mail is checked. The site model
(``DIR/@site.snb``, :func:`streamnb.service.protocol.site_model_path`) learns every user's
lessons, so a user who never taught anything still gets a verdict, and a user's own model
speaks for that user's taste as it learns. A check of user u blends the two log-odds:

    z = (1 - l) z_site + l z_u,    l = n / (n + K)

n is the messages of the class u's model has learned fewest of (a model tells the two
classes apart only as well as it knows the rarer one: a user who reports spam alone keeps
the site's verdicts), K the lessons at which u's own model weighs as much as the site's
(``--site-blend``, :attr:`streamnb.service.settings.Settings.site_blend`). When u has a model
and the site model knows fewer than two classes (or there is none), l = 1: u's model answers
alone, as without a site model. Otherwise, when u has no model or one that knows fewer than
two classes, l = 0: u gets the site model's verdict as it stands, its rule and cutoffs
included.

Between the two, the verdict is the rule of u's model applied to z, reading the blend as a
model that learned (1 - l) N_site + l N_u messages of each class (the cautious cutoffs of
:class:`~streamnb.filter.rules.LogOddsRule` and ``--min-per-class`` look at those counts),
whose label coverage is the higher of the two models';
its evidence is each model's strongest clues, weighed by its share. A rule that scores
something other than the log-odds (``--rule chi2``, word counts) cannot blend: the command
refuses it with a site model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from .. import _core
from ..filter.decision import HAM, SPAM, UNSURE, DecisionRule, Evidence, Verdict, model_posterior

__all__ = ["Scored", "Answer", "user_share", "answer"]


class Scored(NamedTuple):
    """What one model said of a message: its filter's verdict, whether it is ready
    (``--min-per-class`` of each class learned), its class counts, what model it is (its
    type's name: ``Fusion``, ``EmailNB`` ...) and its label coverage (``label_coverage``; 1
    for a model that keeps none)."""

    verdict: Verdict
    ready: bool
    counts: Mapping[Any, float]
    model: str = "model"
    coverage: float = 1.0


class Answer(NamedTuple):
    """A check's verdict and the models that gave it.

    ``share`` is l, the weight of the user's model (1: it answered alone; 0: the site model
    did); ``counts`` the user's model's class counts ({} without one), ``site_counts`` the
    site model's (None without one); ``model`` what model gave the log-odds (``Fusion``; two
    names for a blend of two types); ``coverage`` the label coverage the rule read (1 for
    models that keep none).
    """

    verdict: Verdict
    ready: bool
    counts: Mapping[Any, float]
    site_counts: Mapping[Any, float] | None
    share: float
    model: str = "model"
    coverage: float = 1.0


class _Counts(NamedTuple):
    """The blend as the rules read a model: its class counts (LogOddsRule's cutoffs, the
    posterior) and its label coverage (the fresher of the two models': labels still coming
    to either keep its evidence fresh)."""

    class_counts: Mapping[Any, float]
    label_coverage: float


def _pair(counts: Mapping[Any, float] | None) -> tuple[float, float]:
    """(spam, ham) of a model's class counts; (0, 0) for a model there is not."""
    return (float(counts.get(SPAM, 0.0)), float(counts.get(HAM, 0.0))) if counts else (0.0, 0.0)


def user_share(user_counts: Mapping[Any, float] | None, site_counts: Mapping[Any, float] | None,
               k: float) -> float:
    """l, the weight of the user's model against the site model's (see the module docstring;
    the formula: the core's ``site::user_share``).

    Parameters
    ----------
    user_counts, site_counts
        The class counts of the user's model and of the site model; None for a model there is not.
    k
        K: the lessons of each class at which the user's model weighs as much as the site's (> 0).

    Returns
    -------
    float
        n / (n + K); 1 when the site model knows fewer than two classes; 0 when the user's does.

    Examples
    --------
    >>> user_share({"spam": 300.0, "ham": 2000.0}, {"spam": 9e3, "ham": 8e3}, 300.0)
    0.5
    >>> user_share(None, {"spam": 9e3, "ham": 8e3}, 300.0), user_share({"spam": 5.0, "ham": 5.0}, None, 300.0)
    (0.0, 1.0)
    """
    return _core.site_user_share(_pair(user_counts), _pair(site_counts), float(k))


def _clues(site: list[Evidence], user: list[Evidence], share: float, k: int) -> list[Evidence]:
    """The k strongest clues of both models, each weight times its model's share (the core's
    ``site::blend_clues``: the features are numbered here, in order of first appearance)."""
    numbers: dict[Any, int] = {}
    for clue in (*site, *user):
        numbers.setdefault(clue.feature, len(numbers))
    features = list(numbers)
    strongest = _core.site_blend_clues(len(features), [(numbers[c.feature], float(c.weight)) for c in site],
                                       [(numbers[c.feature], float(c.weight)) for c in user], float(share), k)
    return [Evidence(features[i], weight) for i, weight in strongest]


def answer(site: Scored | None, user: Scored | None, k: float, rule: DecisionRule, min_per_class: float,
           evidence_k: int) -> Answer | None:
    """The verdict of a check from the site model's and the user's (either may be None).

    Parameters
    ----------
    site, user
        What each model said, or None for a model there is not.
    k
        K of :func:`user_share`.
    rule
        The decision rule of the user's model (a rule that decides on the log-odds).
    min_per_class
        The messages of each class the blend must know before its verdict leaves "unsure".
    evidence_k
        How many clues a blended verdict names.

    Returns
    -------
    Answer or None
        None when neither model answered.
    """
    if user is None:
        return None if site is None else Answer(site.verdict, site.ready, {}, site.counts, 0.0, site.model,
                                                site.coverage)
    if site is None:
        return Answer(user.verdict, user.ready, user.counts, None, 1.0, user.model, user.coverage)
    counts = user.counts
    share, z, spam, ham = _core.site_blend((float(site.verdict.log_odds), *_pair(site.counts)),
                                           (float(user.verdict.log_odds), *_pair(counts)), float(k))
    if share >= 1.0:
        return Answer(user.verdict, user.ready, counts, site.counts, 1.0, user.model, user.coverage)
    if share <= 0.0:
        return Answer(site.verdict, site.ready, counts, site.counts, 0.0, site.model, site.coverage)
    view = _Counts({SPAM: spam, HAM: ham}, max(site.coverage, user.coverage))
    probability = model_posterior(view, z, SPAM, HAM)
    label, score = rule.judge(view, {}, z, probability, SPAM, HAM)  # a blend has no features of its own
    ready = all(n > 0 and n >= min_per_class for n in (spam, ham))
    if not ready:
        label = UNSURE
    clues = _clues(site.verdict.evidence, user.verdict.evidence, share, evidence_k)
    blended = site.model if site.model == user.model else f"{site.model} and {user.model}"
    return Answer(Verdict(label, float(score), probability, clues, z, label == UNSURE), ready, counts, site.counts,
                  share, blended, view.label_coverage)
