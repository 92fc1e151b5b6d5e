"""Merging many models into one: the functional form of ``DiscreteNB.merge``."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol, TypeVar

from .errors import InvalidInputError

if TYPE_CHECKING:
    from typing_extensions import Self


class Mergeable(Protocol):
    """What merge needs of a model (every streamnb model has it)."""

    def _check_mergeable(self, other: Self) -> None: ...

    def merge(self, other: Self) -> object: ...


Model = TypeVar("Model", bound=Mergeable)


def merge(models: Iterable[Model]) -> Model:
    """A new model equal to training on the models' streams one after the other.

    The inputs are not changed. Raises IncompatibleModelsError naming the first difference
    (model type, alpha, tokenizer settings, hashing, forgetting ...) and InvalidInputError
    for an empty sequence. merge([a, b, c]) == merge([merge([a, b]), c]) == merge([a, merge([b, c])]).

    >>> from streamnb import MultinomialNB, merge
    >>> a = MultinomialNB().learn_one({"cheap": 2}, "spam")
    >>> b = MultinomialNB().learn_one({"meeting": 1}, "ham")
    >>> merge([a, b]).class_counts
    {'spam': 1.0, 'ham': 1.0}

    Parameters
    ----------
    models : iterable of models
        Models of one type and the same parameters, in stream order.

    Returns
    -------
    model
        A new model.

    Raises
    ------
    IncompatibleModelsError
        For models that cannot be merged.
    InvalidInputError
        For no model at all.
    """
    models = list(models)
    if not models:
        raise InvalidInputError("merge needs at least one model, got none")
    for model in models[1:]:
        models[0]._check_mergeable(model)  # refuse before copying anything
    merged = copy.deepcopy(models[0])  # the first model's own layout, parts and settings
    for model in models[1:]:
        merged.merge(model)
    return merged
