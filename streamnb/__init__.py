"""streamnb: streaming naive Bayes text classification.

Count tables grow as data arrives; the model after N documents is exactly the batch model
of those N documents. See docs/design.md for the formulas and invariants.

The package is laid out by layer (ARCHITECTURE.md draws it): the base modules here (errors,
validate, store, persist, clock, ledger, pruning, merging), ``features/`` (tokenizers and
weightings), ``models/``, then ``filter/`` (the spam filter), ``service/`` (the command and
the server) and ``integrations/`` (river, Dask). The names below are imported on first use
(PEP 562), so ``import streamnb.service.cli`` does not pay for numpy and the models until
they are needed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._moved import MOVED as _MOVED
from ._moved import warn_moved as _warn_moved

if TYPE_CHECKING:  # what __getattr__ gives, for type checkers and the API reference (mkdocstrings)
    from . import errors
    from .features.email import EmailTokenizer
    from .features.ngrams import ByteNgrams
    from .features.text import OnlineTfidf, Tokenizer
    from .features.weighting import EmailWeights
    from .filter.decision import SpamFilter
    from .merging import merge
    from .models import (
        BernoulliNB,
        CategoricalNB,
        ComplementNB,
        EmailNB,
        GaussianNB,
        LogisticRegression,
        MixedNB,
        MultinomialNB,
    )
    from .persist import load

__all__ = ["MultinomialNB", "BernoulliNB", "ComplementNB", "GaussianNB", "CategoricalNB", "MixedNB", "EmailNB",
           "LogisticRegression", "ByteNgrams", "Tokenizer", "EmailTokenizer", "EmailWeights", "OnlineTfidf", "errors",
           "SpamFilter", "load", "merge"]
__version__ = "0.1.0"

_NAMES = {
    "MultinomialNB": "models", "BernoulliNB": "models", "ComplementNB": "models", "GaussianNB": "models",
    "CategoricalNB": "models", "MixedNB": "models", "EmailNB": "models", "LogisticRegression": "models",
    "ByteNgrams": "features.ngrams", "Tokenizer": "features.text", "OnlineTfidf": "features.text",
    "EmailTokenizer": "features.email", "EmailWeights": "features.weighting", "SpamFilter": "filter.decision",
    "load": "persist", "merge": "merging",
}


def __getattr__(name: str) -> Any:
    if name in _MOVED:  # ``from streamnb import decision``: warn at that line, give the new module
        _warn_moved(f"{__name__}.{name}", f"{__name__}.{_MOVED[name]}", stacklevel=3)
        return importlib.import_module(f"{__name__}.{_MOVED[name]}")
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
