"""The settings a discrete naive Bayes model groups: how it forgets, and how it prunes.

Each is a small frozen value, checked once when it is built. The models' constructors keep
their keywords (``half_life=...``, ``max_features=...``: users, ``get_params``, the river
adapters and saved files name them one by one) and hand them to these, so a subclass builds
``Forgetting(...)`` and ``Pruning(...)`` and passes two objects to ``DiscreteNB`` rather
than five keywords.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..validate import check_positive


@dataclass(frozen=True)
class Forgetting:
    """How a model forgets old documents; nothing is forgotten by default.

    Parameters
    ----------
    half_life : float or None
        A document learned ``a`` documents ago weighs 2 ** (-a / half_life): a finite
        number > 0, or None.
    half_life_seconds : float or None
        A document with timestamp ``t`` weighs 2 ** (-(T - t) / half_life_seconds), T the
        latest timestamp learned: a finite number > 0, or None. Both may be set (the
        weights multiply).

    Raises
    ------
    InvalidParameterError
        For a value that is neither None nor a finite number > 0.
    """

    half_life: float | None = None
    half_life_seconds: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "half_life", check_positive("half_life", self.half_life, integer=False))
        object.__setattr__(self, "half_life_seconds",
                           check_positive("half_life_seconds", self.half_life_seconds, integer=False))


@dataclass(frozen=True)
class Pruning:
    """Which features a model drops to bound its memory; none by default.

    Parameters
    ----------
    max_features : int or None
        Cap on |V| (an int >= 1, or None): past it, a pass drops the lowest totals down to
        90% of the cap.
    min_count : float or None
        In every pass, drop the features whose total (decayed) count is below this (a
        finite number > 0, or None).
    expire_after : int or None
        Drop the features not seen in the last ``expire_after`` learned documents (an int
        >= 1, or None); a pass runs every ``expire_after // 10`` documents.

    Raises
    ------
    InvalidParameterError
        For a value out of its range.
    """

    max_features: int | None = None
    min_count: float | None = None
    expire_after: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_features", check_positive("max_features", self.max_features, integer=True))
        object.__setattr__(self, "min_count", check_positive("min_count", self.min_count, integer=False))
        object.__setattr__(self, "expire_after", check_positive("expire_after", self.expire_after, integer=True))
