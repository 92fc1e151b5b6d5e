"""What the server does with a model in memory, whatever keeps its lessons: the filter over it
and a verdict. Two kinds of served model share it: :class:`streamnb.service.users.UserModel`
(a model file and its journal, the default) and :class:`streamnb.service.shared.SharedModel`
(a Redis stream and its snapshots, ``--store``); :class:`streamnb.service.users.ModelCache`
holds either, and the server asks both the same things (``classify``, ``observe``, ``tell``,
``fold``, ``close``).
"""

from __future__ import annotations

from typing import Any

from ..filter.decision import LogOddsRule, SpamFilter
from .settings import Settings
from .site import Scored


class Evicted(Exception):
    """The user's model left the cache while a TELL waited: look it up again."""


class ServedModel:
    """The filter over a served model (made again when the model object changes) and its verdicts.

    A subclass sets ``model`` (None until loaded) and ``settings``, and holds its own lock
    around :meth:`scored`.
    """

    model: Any
    settings: Settings
    _filter: SpamFilter | None = None

    def spam_filter(self) -> SpamFilter:
        """The filter over the model in memory (made again when the model object changes).

        Returns
        -------
        SpamFilter
            The model with the rule of :meth:`Settings.rule_of` and ``min_per_class``.
        """
        if self._filter is None or self._filter.model is not self.model:
            self._filter = SpamFilter(
                self.model, self.settings.rule_of(self.model), min_per_class=self.settings.min_per_class
            )
        return self._filter

    def reconfigure(self, settings: Settings) -> None:
        """Use these settings from now on (SIGHUP): the next check makes its filter with their rule.

        Parameters
        ----------
        settings
            The server's settings, read again.
        """
        self.settings = settings
        self._filter = None

    def scored(self, raw: bytes, explain: bool) -> Scored:
        """The model's verdict on a message (call with the model loaded and its lock held).

        Parameters
        ----------
        raw
            The message.
        explain
            Whether to gather the ten strongest clues (REPORT).

        Returns
        -------
        Scored
            The verdict, whether the model has learned ``min_per_class`` messages of each
            class, its class counts, its type's name and its label coverage.
        """
        spam_filter = self.spam_filter()
        spam_filter.evidence_k = 10 if explain else 0
        verdict = spam_filter.classify(raw, explain=explain)
        return Scored(verdict, spam_filter.ready, self.model.class_counts, type(self.model).__name__,
                      LogOddsRule.coverage_of(self.model))
