"""The model and tokenizer types a model file may name, and how a tokenizer is described.

A file names its model type (``register_model``) and describes its tokenizer by type name
and ``get_params()`` (``describe_tokenizer``, ``build_tokenizer``); :mod:`streamnb.persist`
saves and loads the files, and re-exports every name here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload

from .archive import decode_value, encode_value
from .errors import InvalidTypeError, ModelFormatError, StreamNBError, describe
from .validate import check_name_free

if TYPE_CHECKING:
    from .store import Arrays

__all__ = ["Saveable", "MODEL_TYPES", "register_model", "model_type", "register_tokenizer", "tokenizer_types",
           "describe_tokenizer", "build_tokenizer"]


class Saveable(Protocol):
    """What a model type gives to be saved (see "Adding a model type" in :mod:`streamnb.persist`)."""

    def _state(self) -> tuple[dict[str, Any], Arrays]: ...

    @classmethod
    def _from_state(cls, state: dict[str, Any], arrays: Arrays) -> Saveable: ...


_ModelType = TypeVar("_ModelType", bound="type[Saveable]")

MODEL_TYPES: dict[str, type[Saveable]] = {}
_TOKENIZER_TYPES: dict[str, type] = {}
# The modules of the built-in tokenizers, and the module name a file saves their type under:
# "streamnb.mail.EmailTokenizer" since format version 1, wherever the class lives now (a type
# name is part of the file format, so streamnb/features/ moved no saved name).
_TOKENIZER_MODULES = {
    "streamnb.features.text": "streamnb.text", "streamnb.features.email": "streamnb.mail",
    "streamnb.features.weighting": "streamnb.weighting", "streamnb.features.ngrams": "streamnb.ngrams",
}


@overload
def register_model(cls: _ModelType, *, name: str | None = None) -> _ModelType: ...
@overload
def register_model(cls: None = None, *, name: str | None = None) -> Callable[[_ModelType], _ModelType]: ...


def register_model(cls: _ModelType | None = None, *,
                   name: str | None = None) -> _ModelType | Callable[[_ModelType], _ModelType]:
    """Class decorator: make a model type saveable and loadable under ``name`` (default:
    the class name). ``@register_model`` or ``@register_model(name="river.MultinomialNB")``;
    a name already taken by another class raises InvalidParameterError.

    Parameters
    ----------
    cls : type or None
        The model type (None when called with ``name`` only, as a decorator factory).
    name : str or None
        The name files give the type; None for the class name.

    Returns
    -------
    type or callable
        The class itself, or the decorator.
    """

    def register(model_type: _ModelType) -> _ModelType:
        key = name or model_type.__name__
        check_name_free(key, MODEL_TYPES.get(key), model_type)
        MODEL_TYPES[key] = model_type
        setattr(model_type, "_persist_name", key)  # noqa: B010 (a class attribute the protocol does not declare)
        return model_type

    return register if cls is None else register(cls)


def model_type(name: object) -> type[Saveable] | None:
    """The registered model type of this name; a built-in one is imported on first use
    (``streamnb.models`` imports each model's module when it is asked for).

    Parameters
    ----------
    name : object
        A model type's name, as a file gives it.

    Returns
    -------
    type or None
        The registered type, or None for an unknown name.
    """
    if not isinstance(name, str):
        return None
    if name not in MODEL_TYPES:
        models = importlib.import_module("streamnb.models")
        # importing a model's module registers it; an unknown name imports them all (for the error's list)
        for builtin in [name] if name in models.__all__ else models.__all__:
            getattr(models, builtin)
    return MODEL_TYPES.get(name)


def register_tokenizer(cls: type) -> type:
    """Class decorator: make a tokenizer type (with ``get_params()``) saveable.

    Parameters
    ----------
    cls : type
        A tokenizer type: callable instances, ``get_params()``, rebuilt by ``cls(**params)``.

    Returns
    -------
    type
        The class itself.
    """
    _TOKENIZER_TYPES[_type_name(cls)] = cls
    return cls


def _type_name(cls: type) -> str:
    return f"{_TOKENIZER_MODULES.get(cls.__module__, cls.__module__)}.{cls.__qualname__}"


def tokenizer_types() -> dict[str, type]:
    """Known tokenizer types by name: the registered ones and those of streamnb.text/mail."""
    known = dict(_TOKENIZER_TYPES)
    for module_name in _TOKENIZER_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for value in vars(module).values():
            if (isinstance(value, type) and value.__module__ == module_name and _defines_call(value)
                    and callable(getattr(value, "get_params", None))):
                known.setdefault(_type_name(value), value)
    return known


def _defines_call(cls: type) -> bool:
    """Are instances callable (text -> features), as a tokenizer must be?"""
    return any("__call__" in vars(base) for base in cls.__mro__[:-1])


def describe_tokenizer(tokenizer: object) -> dict[str, Any] | None:
    """{"type", "params"} for a saveable tokenizer; InvalidTypeError, naming it, for any other.

    Parameters
    ----------
    tokenizer : object or None
        A tokenizer.

    Returns
    -------
    dict or None
        Its type name and parameters; None for None.
    """
    if tokenizer is None:
        return None
    cls = type(tokenizer)
    name = _type_name(cls)
    known = tokenizer_types()
    get_params = getattr(tokenizer, "get_params", None)
    if known.get(name) is not cls or not callable(get_params):
        raise InvalidTypeError(
            f"cannot save tokenizer {describe(tokenizer)}: only tokenizer classes with get_params() from "
            f"{', '.join(_TOKENIZER_MODULES.values())} or registered with streamnb.persist.register_tokenizer can be "
            f"saved (known: {sorted(known) or 'none'})")
    params = encode_value(get_params())
    rebuilt = cls(**decode_value(params))
    if encode_value(getattr(rebuilt, "get_params")()) != params:  # noqa: B009 (its class has get_params: checked above)
        raise InvalidTypeError(f"cannot save tokenizer {describe(tokenizer)}: {name}(**get_params()) "
                               "does not rebuild it with the same settings")
    return {"type": name, "params": params}


def build_tokenizer(description: object) -> object:
    """The tokenizer a description stands for; ModelFormatError for an unknown type.

    Parameters
    ----------
    description : object
        What :func:`describe_tokenizer` gave, read from a file.

    Returns
    -------
    object
        The tokenizer (None for None).
    """
    if description is None:
        return None
    if not (isinstance(description, dict) and set(description) == {"type", "params"}):
        raise ModelFormatError(f"tokenizer must be null or {{type, params}}, got {describe(description)}")
    cls = tokenizer_types().get(description["type"])
    if cls is None:
        raise ModelFormatError(f"unknown tokenizer type {description['type']!r}")
    params = decode_value(description["params"])
    if not isinstance(params, dict):
        raise ModelFormatError(f"tokenizer params must be a mapping, got {describe(params)}")
    try:
        return cls(**params)
    except (StreamNBError, TypeError, ValueError) as exc:
        raise ModelFormatError(f"tokenizer {description['type']} rejects its saved params: {exc}") from None
