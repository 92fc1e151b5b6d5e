"""The state every part of ``DiscreteNB`` reads, declared once for the type checker.

``DiscreteNB`` (``base.py``) is one class assembled from a part per concern: learning and
pruning (``learning.py``), persistence (``state.py``) and inspection (``inspection.py``).
Each part is a mixin over ``ModelParts``, which only names the attributes ``DiscreteNB``'s
constructor sets and the methods one part calls on another; it holds no code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .. import _core
    from ..clock import Clock
    from ..ledger import Ledger
    from ..store import CountStore
    from ..validate import Label
    from .settings import Forgetting, Pruning


class ModelParts:
    """The attributes of a discrete model (set by ``DiscreteNB.__init__``)."""

    if TYPE_CHECKING:
        alpha: float | str
        class_prior: str | Mapping[Label, float]
        pruning: Pruning
        store: CountStore
        _core: _core.Core[Label]
        _clock: Clock
        _ledger: Ledger | None
        _call_alpha: float | None  # None: the smoothing chosen online
        _pass_at: int  # n_learned at the last pruning pass

        @property
        def forgetting(self) -> Forgetting: ...

        @property
        def classes(self) -> list[Label]: ...

        @property
        def n_learned(self) -> int: ...

        @property
        def last_t(self) -> float | None: ...

        def get_params(self) -> dict[str, Any]: ...
