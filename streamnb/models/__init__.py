"""The naive Bayes models, one per file over the shared bases in ``base.py`` and ``record.py``,
and the settings objects the discrete ones take (``settings.py``: ``Smoothing``,
``Forgetting``, ``Pruning``, ``Storage``).

Each is imported on first use (PEP 562): loading a MultinomialNB file does not import the
record models (Gaussian, categorical, mixed).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what __getattr__ gives, for type checkers and the API reference (mkdocstrings)
    from .bernoulli import BernoulliNB
    from .categorical import CategoricalNB
    from .complement import ComplementNB
    from .email import EmailNB
    from .fusion import Fusion
    from .gaussian import GaussianNB
    from .logistic import LogisticRegression
    from .mixed import MixedNB
    from .multinomial import MultinomialNB
    from .settings import Forgetting, Pruning, Smoothing, Storage

__all__ = ["MultinomialNB", "BernoulliNB", "ComplementNB", "GaussianNB", "CategoricalNB", "MixedNB", "EmailNB",
           "LogisticRegression", "Fusion", "Smoothing", "Forgetting", "Pruning", "Storage"]

_MODULES = {"MultinomialNB": "multinomial", "BernoulliNB": "bernoulli", "ComplementNB": "complement",
            "GaussianNB": "gaussian", "CategoricalNB": "categorical", "MixedNB": "mixed", "EmailNB": "email",
            "LogisticRegression": "logistic", "Fusion": "fusion", "Smoothing": "settings", "Forgetting": "settings",
            "Pruning": "settings", "Storage": "settings"}


def __getattr__(name: str) -> Any:
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_MODULES[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
