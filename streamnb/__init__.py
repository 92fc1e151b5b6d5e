"""streamnb: streaming naive Bayes text classification.

Count tables grow as data arrives; the model after N documents is exactly the batch model
of those N documents. See docs/design.md for the formulas and invariants.

The names below are imported on first use (PEP 562), so ``import streamnb.cli`` or
``import streamnb.journal`` does not pay for numpy and the models until they are needed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what __getattr__ gives, for type checkers and the API reference (mkdocstrings)
    from . import errors
    from .mail import EmailTokenizer
    from .merging import merge
    from .models import (BernoulliNB, CategoricalNB, ComplementNB, EmailNB, GaussianNB, LogisticRegression, MixedNB,
                         MultinomialNB)
    from .ngrams import ByteNgrams
    from .persist import load
    from .text import OnlineTfidf, Tokenizer
    from .weighting import EmailWeights

__all__ = ["MultinomialNB", "BernoulliNB", "ComplementNB", "GaussianNB", "CategoricalNB", "MixedNB", "EmailNB",
           "LogisticRegression", "ByteNgrams", "Tokenizer", "EmailTokenizer", "EmailWeights", "OnlineTfidf", "errors",
           "load", "merge"]
__version__ = "0.1.0"

_NAMES = {
    "MultinomialNB": "models", "BernoulliNB": "models", "ComplementNB": "models", "GaussianNB": "models",
    "CategoricalNB": "models", "MixedNB": "models", "EmailNB": "models", "LogisticRegression": "models",
    "ByteNgrams": "ngrams", "Tokenizer": "text",
    "OnlineTfidf": "text", "EmailTokenizer": "mail", "EmailWeights": "weighting", "load": "persist", "merge": "merging",
}


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        value = getattr(importlib.import_module(f"{__name__}.{_NAMES[name]}"), name)
    else:
        try:
            value = importlib.import_module(f"{__name__}.{name}")  # a submodule: streamnb.errors ...
        except ModuleNotFoundError as error:
            if error.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
