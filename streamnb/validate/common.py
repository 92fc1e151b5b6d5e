"""The checks every module shares: numbers, ranges, choices, labels, weights and names."""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypeVar, Union, overload

from ..errors import (
    InvalidInputError,
    InvalidLabelError,
    InvalidParameterError,
    InvalidTypeError,
    UnknownClassError,
    describe,
)

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
