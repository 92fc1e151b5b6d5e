"""What the filter's modules share: the three verdicts and what a filter asks of a model.

A filter says "ham", "spam" or, when the evidence is weak or mixed, "unsure" (a message for a
person to look at): :data:`HAM`, :data:`UNSURE` and :data:`SPAM`. :class:`FilterModel` is the
model the evidence (:mod:`streamnb.filter.evidence`), the decision rules
(:mod:`streamnb.filter.rules`) and :class:`~streamnb.filter.spam_filter.SpamFilter` read.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

if TYPE_CHECKING:
    from ..validate import Label

__all__ = ["HAM", "UNSURE", "SPAM", "Verdicts", "FilterModel"]

HAM: Final = "ham"
UNSURE: Final = "unsure"
SPAM: Final = "spam"
Verdicts = Literal["ham", "unsure", "spam"]


class FilterModel(Protocol):
    """What a SpamFilter and its rules ask of a model: every streamnb discrete model has it.

    Used when the model has them: ``strongest_one`` (a verdict's clues, chosen in the core),
    ``contributions_one`` (exact evidence, else ``log_linear``),
    ``document_counts`` (chi-square combining), ``unlearn_one`` (corrections),
    ``log_odds_against_uniform_one`` (ranking while one class is learned) and ``tokenizer``
    (raw messages).
    """

    @property
    def class_counts(self) -> Mapping[Label, float]: ...

    def predict_one(self, x: Any) -> Hashable | None: ...

    def predict_log_proba_one(self, x: Any) -> Mapping[Label, float]: ...

    def learn_one(self, x: Any, y: Label) -> object: ...
