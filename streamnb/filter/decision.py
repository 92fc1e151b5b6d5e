"""Spam decisions on top of a naive Bayes model: cutoffs, an unsure band, evidence.

The names of the filter, from the modules that hold them (this module re-exports them, and
the old path ``streamnb.decision`` warns and re-exports this one):

- :mod:`~streamnb.filter.base`: the verdicts ``HAM``, ``UNSURE``, ``SPAM`` and ``FilterModel``;
- :mod:`~streamnb.filter.evidence`: :func:`evidence` and :func:`log_odds_terms`;
- :mod:`~streamnb.filter.combining`: Robinson/Fisher chi-square combining;
- :mod:`~streamnb.filter.rules`: the decision rules (:class:`LogOddsRule`, the default,
  :class:`ChiSquareRule`, :class:`PosteriorRule`, :class:`ArgmaxRule`);
- :mod:`~streamnb.filter.spam_filter`: :class:`SpamFilter` and its :class:`Verdict`;
- :mod:`~streamnb.filter.report`: :func:`progressive_filter` and its :class:`FilterReport`.
"""

from __future__ import annotations

from .base import HAM, SPAM, UNSURE, FilterModel
from .combining import ChiSquareResult, chi2_sf_even, chi_square_indicator, fisher_combine, robinson_probabilities
from .evidence import Evidence, LogOddsTerms, evidence, log_odds_terms
from .report import FilterReport, progressive_filter
from .rules import ArgmaxRule, ChiSquareRule, DecisionRule, LogOddsRule, PosteriorRule, RuleOptions, model_posterior
from .spam_filter import SpamFilter, Verdict

__all__ = [
    "HAM", "UNSURE", "SPAM", "Evidence", "LogOddsTerms", "log_odds_terms", "evidence",
    "chi2_sf_even", "fisher_combine", "robinson_probabilities", "ChiSquareResult", "chi_square_indicator",
    "FilterModel", "DecisionRule", "ArgmaxRule", "PosteriorRule", "ChiSquareRule", "LogOddsRule", "RuleOptions",
    "Verdict",
    "SpamFilter", "FilterReport", "progressive_filter", "model_posterior",
]
