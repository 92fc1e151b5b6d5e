"""Parameter and input checks, written once for every module.

Each check returns the value in its normal form (a float, an int, a tuple ...) or raises the
``streamnb.errors`` class that fits, with a message naming the parameter, the bad value and
what was expected. Documents themselves (feature mappings, raw text) are checked by the
compiled core as it reads them.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypeVar, Union, overload

from .errors import (InvalidInputError, InvalidLabelError, InvalidParameterError, InvalidTypeError,
                     UnknownClassError, describe)

Label = Union[str, int, bool]
T = TypeVar("T")

PRIOR_CHOICES = ("mle", "laplace", "uniform")


def is_finite(value: numbers.Real) -> bool:
    """math.isfinite, False for an int too large for a float (where math.isfinite raises OverflowError)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def check_label(y: object) -> Label:
    """y as a plain str/int/bool label, or InvalidLabelError.

    numpy scalars become their Python equivalents so that ``np.int64(1)`` and ``1`` are the
    same class (and the label survives JSON persistence).
    """
    if type(y) is str:  # the common case, first: this runs on every learned document
        return y
    numpy = _numpy()
    if isinstance(y, bool) or (numpy is not None and isinstance(y, numpy.bool_)):
        return bool(y)
    if isinstance(y, int) or (numpy is not None and isinstance(y, numpy.integer)):
        return int(y)
    if isinstance(y, str):
        return str(y)
    raise InvalidLabelError(f"class label must be a str, int or bool, got {describe(y)}")


def _numpy() -> Any:
    """numpy if it was imported, else None: no value is a numpy scalar before numpy is
    imported, and a classification (``streamnb classify``) must not import it."""
    return sys.modules.get("numpy")


def check_bool(name: str, value: object, error: type[Exception] = InvalidTypeError) -> bool:
    numpy = _numpy()
    if not (isinstance(value, bool) or (numpy is not None and isinstance(value, numpy.bool_))):
        raise error(f"{name} must be True or False, got {describe(value)}")
    return bool(value)


def check_choice(name: str, value: T, choices: tuple[T, ...]) -> T:
    if not isinstance(value, (str, type(None))) or value not in choices:
        raise InvalidParameterError(f"{name} must be one of {choices}, got {describe(value)}")
    return value


@overload
def check_positive(name: str, value: object, *, integer: Literal[True]) -> int | None: ...
@overload
def check_positive(name: str, value: object, *, integer: Literal[False]) -> float | None: ...


def check_positive(name: str, value: object, *, integer: bool) -> float | int | None:
    """None, or a finite number > 0 (an int >= 1 when ``integer``)."""
    if value is None:
        return None
    if integer:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise InvalidParameterError(f"{name} must be an int >= 1 or None, got {describe(value)}")
        return int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not is_finite(value) or value <= 0:
        raise InvalidParameterError(f"{name} must be a finite number > 0 or None, got {describe(value)}")
    return float(value)


def check_optional_int(name: str, value: object) -> int | None:
    """None or an int >= 1 (InvalidTypeError for a non-int, InvalidParameterError below 1)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidTypeError(f"{name} must be an int >= 1 or None, got {describe(value)}")
    if value < 1:
        raise InvalidParameterError(f"{name} must be >= 1 or None, got {value!r}")
    return value


def check_finite(name: str, value: object) -> float:
    """A finite number (int or float, not bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not is_finite(value):
        raise InvalidParameterError(f"{name} must be a finite number, got {describe(value)}")
    return float(value)


def check_finite_positive(name: str, value: object) -> float:
    """A finite number > 0 (int or float, not bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not is_finite(value) or value <= 0:
        raise InvalidParameterError(f"{name} must be a finite number > 0, got {describe(value)}")
    return float(value)


def check_nonnegative(name: str, value: object) -> float:
    """A finite number >= 0 (int or float, not bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not is_finite(value) or value < 0:
        raise InvalidParameterError(f"{name} must be a finite number >= 0, got {describe(value)}")
    return float(value)


def check_class_weight(value: object) -> str | dict[Label, float] | None:
    """None, "balanced", or a mapping label -> weight (each finite and > 0)."""
    if value is None or (isinstance(value, str) and value == "balanced"):
        return value
    if isinstance(value, Mapping):
        return {check_label(label): check_finite_positive(f"class_weight[{label!r}]", w) for label, w in value.items()}
    raise InvalidTypeError(f"class_weight must be None, 'balanced' or a mapping label -> weight, got {describe(value)}")


def check_range(name: str, value: object) -> tuple[int, int] | None:
    """An (min_n, max_n) pair with 1 <= min_n <= max_n, or None."""
    if value is None:
        return None
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise InvalidTypeError(f"{name} must be a pair (min_n, max_n) or None, got {describe(value)}")
    low, high = value
    for bound in (low, high):
        if isinstance(bound, bool) or not isinstance(bound, int):
            raise InvalidTypeError(f"{name} bounds must be ints, got {describe(value)}")
    if not 1 <= low <= high:
        raise InvalidParameterError(f"{name} must satisfy 1 <= min_n <= max_n, got {tuple(value)!r}")
    return (low, high)


def check_alpha(alpha: object, allow_zero: bool) -> float:
    """Additive smoothing: a finite number > 0 (or 0 with ``allow_zero``)."""
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not is_finite(alpha):
        raise InvalidParameterError(f"alpha must be a finite number > 0, got {describe(alpha)}")
    if alpha < 0 or (alpha == 0 and not allow_zero):
        raise InvalidParameterError(f"alpha must be > 0 (alpha = 0 needs allow_zero_alpha=True), got {alpha!r}")
    return float(alpha)


def check_grid(name: str, grid: object) -> tuple[float, ...]:
    """The candidates of a smoothing chosen online: distinct finite numbers > 0, returned in
    increasing order (ties in the evidence go to the larger, the smoother model)."""
    if isinstance(grid, (str, bytes)) or not isinstance(grid, Iterable):
        raise InvalidParameterError(f"{name} must be a list of numbers > 0, got {describe(grid)}")
    values = list(grid)
    for value in values:
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not is_finite(value) or value <= 0:
            raise InvalidParameterError(f"{name} must hold finite numbers > 0, got {describe(value)}")
    if not values:
        raise InvalidParameterError(f"{name} must hold at least one candidate")
    if len(set(values)) != len(values):
        raise InvalidParameterError(f"{name} must hold distinct values, got {values!r}")
    return tuple(sorted(float(value) for value in values))


def check_weight(w: object) -> float:
    """A sample weight: a finite number > 0."""
    if type(w) is float and 0.0 < w < math.inf:  # the common case, first (numbers.Real is an ABC: slow)
        return w
    if isinstance(w, bool) or not isinstance(w, numbers.Real) or not is_finite(w) or w <= 0:
        raise InvalidInputError(f"sample weight must be a finite number > 0, got {describe(w)}")
    return float(w)


def check_class_prior(prior: object) -> str | dict[Label, float]:
    """"mle", "laplace", "uniform", or a mapping label -> prior probability (> 0)."""
    if isinstance(prior, str):
        if prior not in PRIOR_CHOICES:
            raise InvalidParameterError(f"class_prior must be one of {PRIOR_CHOICES} or a mapping, got {prior!r}")
        return prior
    if isinstance(prior, Mapping):
        fixed = {}
        for label, p in prior.items():
            if isinstance(p, bool) or not isinstance(p, numbers.Real) or p <= 0 or not p < math.inf:
                raise InvalidParameterError(f"fixed prior of class {label!r} must be a number > 0, got {describe(p)}")
            fixed[check_label(label)] = float(p)
        if not fixed:
            raise InvalidParameterError("a fixed class_prior needs at least one class")
        return fixed
    raise InvalidParameterError(f"class_prior must be one of {PRIOR_CHOICES} or a mapping, got {describe(prior)}")


def check_class_allowed(class_prior: str | Mapping[Label, float], label: Label) -> None:
    """A fixed class prior names every class a model may learn."""
    if type(class_prior) is not str and isinstance(class_prior, Mapping) and label not in class_prior:
        raise UnknownClassError(
            f"class {label!r} has no entry in the fixed class_prior (classes: {list(class_prior)})")


def check_strings(name: str, value: object) -> tuple[str, ...]:
    """An iterable of str (not a str itself), as a tuple."""
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InvalidTypeError(f"{name} must be a list of str, got {describe(value)}")
    items = tuple(value)
    for item in items:
        if not isinstance(item, str):
            raise InvalidTypeError(f"{name} must contain only str, found {describe(item)}")
    return items


# --- model parameters ---------------------------------------------------------------------
# The checks of the models' constructors and methods (streamnb/models/): each raises
# InvalidParameterError with the message the model gave when it made the check itself.

def check_auto_grid(name: str, value: object, grid: object, default: tuple[float, ...]) -> tuple[float, ...] | None:
    """The candidates of ``name="auto"`` (``grid``, or ``default`` when None); None when ``value``
    is not "auto", and then a grid given is refused."""
    if grid is not None and value != "auto":
        raise InvalidParameterError(f"{name}_grid holds the candidates of {name}='auto'; {name} is {value!r}")
    return check_grid(f"{name}_grid", default if grid is None else grid) if value == "auto" else None


def check_one_auto(alpha: object, mu: object) -> None:
    """alpha and mu are not both chosen online."""
    if mu == "auto" and alpha == "auto":
        raise InvalidParameterError(
            "choose alpha or mu online, not both: with mu, alpha only smooths the pooled distribution "
            "(fix alpha, e.g. alpha=0.01, and keep mu='auto')")


def check_evidence_half_life(evidence_half_life: float | None, online: bool) -> None:
    """An evidence_half_life (checked by ``check_positive``) is set only on a model choosing its
    smoothing online (``online``)."""
    if evidence_half_life is not None and not online:
        raise InvalidParameterError("evidence_half_life ages the evidence of a smoothing chosen online "
                                    "(alpha='auto'); this model's smoothing is fixed")


def check_tokenizer(tokenizer: T) -> T:
    """None or a callable (text -> mapping feature -> value)."""
    if tokenizer is not None and not callable(tokenizer):
        raise InvalidParameterError(f"tokenizer must be callable (text -> mapping), got {describe(tokenizer)}")
    return tokenizer


def check_n_buckets(n_buckets: object) -> int | None:
    """None, or an int in [1, 2**32): hashed feature ids are u32."""
    value = check_positive("n_buckets", n_buckets, integer=True)
    if value is not None and value >= 2**32:
        raise InvalidParameterError(f"n_buckets must be below 2**32, got {n_buckets!r}")
    return value


def check_positive_int(name: str, value: object) -> int:
    """An int >= 1 (not bool, not None)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidParameterError(f"{name} must be a positive int, got {describe(value)}")
    return value


def check_passes(passes: object) -> int:
    """An int >= 1: None, which check_positive lets through, is refused."""
    value = check_positive("passes", passes, integer=True)
    if value is None:
        raise InvalidParameterError("passes must be an int >= 1, got None")
    return value


def check_count(name: str, value: object) -> int:
    """An int >= 0 (any integral number, not bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise InvalidParameterError(f"{name} must be an int >= 0, got {describe(value)}")
    return int(value)


def check_seed(seed: Any) -> Any:
    """None, an int >= 0 or a numpy Generator."""
    numpy = _numpy()  # a Generator exists only once numpy is imported
    if not (seed is None or (numpy is not None and isinstance(seed, numpy.random.Generator))
            or (isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and int(seed) >= 0)):
        raise InvalidParameterError(f"seed must be an int >= 0, a numpy Generator or None, got {describe(seed)}")
    return seed


def check_flag(name: str, value: object) -> bool:
    """A bool, strictly (``check_bool`` takes numpy's too)."""
    if not isinstance(value, bool):
        raise InvalidParameterError(f"{name} must be a bool, got {describe(value)}")
    return value


def check_complement_alpha(allow_zero_alpha: object) -> None:
    """ComplementNB refuses alpha = 0."""
    if allow_zero_alpha:
        raise InvalidParameterError(
            "ComplementNB needs alpha > 0 (allow_zero_alpha=True is not supported): with alpha = 0 "
            "a word seen in only one class gets an infinite weight")


def check_instance(name: str, value: T, kind: type, expected: str) -> T:
    """An instance of ``kind`` (``expected`` says what that is, for the message)."""
    if not isinstance(value, kind):
        raise InvalidParameterError(f"{name} must be {expected}, got {describe(value)}")
    return value


def check_finite_pair(name: str, value: object) -> tuple[float, float]:
    """A pair (tuple or list) of finite numbers."""
    if not (isinstance(value, (tuple, list)) and len(value) == 2):
        raise InvalidParameterError(f"{name} must be a pair (a, b), got {describe(value)}")
    return check_finite(f"{name}[0]", value[0]), check_finite(f"{name}[1]", value[1])


def check_schema(schema: object, kinds: tuple[str, ...]) -> dict[Any, str]:
    """A non-empty mapping field -> kind (one of ``kinds``), at most one of them "text"."""
    if not isinstance(schema, Mapping) or not schema:
        raise InvalidParameterError(f"schema must be a non-empty mapping field -> kind, got {describe(schema)}")
    for field, kind in schema.items():
        if kind not in kinds:
            raise InvalidParameterError(
                f"schema kind of field {field!r} must be one of {kinds}, got {describe(kind)}")
    text_fields = [field for field, kind in schema.items() if kind == "text"]
    if len(text_fields) > 1:
        raise InvalidParameterError(f"at most one text field, got {text_fields!r}; join them in one text")
    return dict(schema)


def check_part(name: str, classes: list[Any], class_prior: object, settings: Mapping[str, object]) -> None:
    """A part of a MixedNB: untrained, without a fixed class prior, and none of ``settings``
    (the text part's forgetting, pruning and ledger, those that are set) chosen."""
    if classes:
        raise InvalidParameterError(f"the {name} part must be untrained; it has classes {classes!r}")
    if isinstance(class_prior, Mapping):
        raise InvalidParameterError(
            f"the {name} part must not have a fixed class_prior: MixedNB's class_prior is the one prior")
    if settings:
        raise InvalidParameterError(
            f"the {name} part must not forget, prune or keep a ledger inside MixedNB, got {dict(settings)!r}")


# --- command and service parameters ---

def check_ledger_to_forget(model: Any) -> None:
    """A model that can forget a message it may never have learned: one with a ledger.

    Parameters
    ----------
    model
        The model a lesson "forget" (``spamc -L forget``, a journal's replay) is for.

    Raises
    ------
    InvalidParameterError
        The model has no ledger (``model.ledger`` missing or None): it cannot tell a message
        it learned from one it never saw, and would take out counts the message never added.
    """
    if getattr(model, "ledger", None) is None:
        raise InvalidParameterError("forgetting a message needs a model with a ledger (one that remembers what it "
                                    "learned); this model has none")
