"""The checks of the spam filter and its evaluation (streamnb/filter/), the featurizers
(streamnb/features/), the integrations and the storage modules."""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable, Mapping
from pathlib import PurePath
from typing import Any, cast

from ..errors import InvalidParameterError, InvalidTypeError, describe
from .common import T, check_finite

# --- filter, feature and storage parameters ---



def check_edges(edges: Any, given: object) -> None:
    """Bin edges (a numpy array) of one dimension, not empty, finite and strictly increasing;
    ``given`` is what the caller passed, for the message."""
    values = edges.tolist() if edges.ndim == 1 else []
    if not values or not all(map(math.isfinite, values)) or any(b <= a for a, b in zip(values, values[1:])):
        raise InvalidParameterError(f"edges must be finite and strictly increasing, got {describe(given)}")


def check_int(name: str, value: object, low: int) -> int:
    """An int >= ``low`` (a numpy integer too; not a bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise InvalidParameterError(f"{name} must be an int >= {low}, got {describe(value)}")
    return int(value)


def check_positive_int(name: str, value: object) -> int:
    """An int >= 1 (a numpy integer too; not a bool), for the parameters whose message says "positive"."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise InvalidParameterError(f"{name} must be a positive int, got {describe(value)}")
    return int(value)


def check_interval(name: str, value: object, low: float, high: float, closed: str = "()", *,
                   noun: str = "") -> float:
    """A number between ``low`` and ``high``; ``closed`` says which ends belong to the interval.

    Parameters
    ----------
    name : str
        The parameter's name, for the message.
    value : object
        The value to check: a real number, not a bool.
    low, high : float
        The ends of the interval.
    closed : {"()", "(]", "[)", "[]"}
        A bracket for an end that belongs to the interval, a parenthesis for one that does not.
    noun : str
        Words before "in" in the message (``"a number "``: "must be a number in [0, 1]").

    Returns
    -------
    float
        The value as a float.

    Raises
    ------
    InvalidParameterError
        For anything else, with the interval in the message.
    """
    number = cast(float, value)  # compared as the number it is (an int too large for a float included)
    inside = isinstance(value, numbers.Real) and not isinstance(value, bool) and (
        (low <= number if closed[0] == "[" else low < number)
        and (number <= high if closed[1] == "]" else number < high))
    if not inside:
        raise InvalidParameterError(
            f"{name} must be {noun}in {closed[0]}{low:g}, {high:g}{closed[1]}, got {describe(value)}")
    return float(number)


def check_one_of(name: str, value: T, choices: tuple[object, ...], expected: str) -> T:
    """One of ``choices`` (compared with ``==``); the message says what was ``expected``.

    Parameters
    ----------
    name : str
        The parameter's name, for the message.
    value : object
        The value to check.
    choices : tuple
        The values allowed.
    expected : str
        How the message names them (``"'date', 'file' or 'shuffle'"``).

    Returns
    -------
    object
        The value.

    Raises
    ------
    InvalidParameterError
        For a value not among the choices.
    """
    if value not in choices:
        raise InvalidParameterError(f"{name} must be {expected}, got {describe(value)}")
    return value


def check_not_above(low_name: str, low: object, high_name: str, high: object) -> None:
    """``low`` <= ``high``, for a pair of bounds already checked one by one."""
    if low > high:  # type: ignore[operator]  # numbers: checked by the caller
        raise InvalidParameterError(f"{low_name} ({low!r}) must not exceed {high_name} ({high!r})")


def check_finite_nonnegative(name: str, value: object) -> float:
    """A finite number (``check_finite``'s message), then >= 0 (a message of its own)."""
    number = check_finite(name, value)
    if number < 0:
        raise InvalidParameterError(f"{name} must be >= 0, got {describe(value)}")
    return number


def check_cutoffs(ham_cutoff: object, spam_cutoff: object) -> tuple[float, float]:
    """A pair of score cutoffs in [0, 1], ham's not above spam's, as floats."""
    for name, value in (("ham_cutoff", ham_cutoff), ("spam_cutoff", spam_cutoff)):
        check_interval(name, value, 0.0, 1.0, "[]", noun="a number ")
    check_not_above("ham_cutoff", ham_cutoff, "spam_cutoff", spam_cutoff)
    return float(ham_cutoff), float(spam_cutoff)  # type: ignore[arg-type]  # numbers: checked above


def check_even_dof(dof: object) -> int:
    """Degrees of freedom of a chi-square with a closed form: an even int >= 2."""
    if isinstance(dof, bool) or not isinstance(dof, numbers.Integral) or dof < 2 or dof % 2:
        raise InvalidParameterError(f"dof must be an even int >= 2, got {describe(dof)}")
    return int(dof)


def check_methods(what: str, value: object, methods: Iterable[str]) -> None:
    """``value`` has each method, named as in ``methods`` (``"with_alpha(alpha)"``: the
    attribute is the name before the parenthesis).

    Parameters
    ----------
    what : str
        What the value is, for the message (``"model"``).
    value : object
        The object to check.
    methods : iterable of str
        The methods it needs, as the message names them.

    Raises
    ------
    InvalidParameterError
        For the first method missing (or not callable).
    """
    for method in methods:
        if not callable(getattr(value, method.partition("(")[0], None)):
            raise InvalidParameterError(f"{what} {describe(value)} has no {method} method")


def check_filter_model(model: object) -> None:
    """What a spam filter needs of a model: ``learn_one``, ``predict_log_proba_one`` and
    ``class_counts``."""
    check_methods("model", model, ("learn_one", "predict_log_proba_one"))
    if not hasattr(model, "class_counts"):
        raise InvalidParameterError(f"model {describe(model)} has no class_counts (documents per class)")


def check_calibrator(calibrator: object) -> None:
    """None, or an object with ``update(score, outcome)`` and ``transform(score)``."""
    if calibrator is not None and not (callable(getattr(calibrator, "update", None))
                                       and callable(getattr(calibrator, "transform", None))):
        raise InvalidParameterError(
            f"calibrator {describe(calibrator)} needs update(score, outcome) and transform(score)")


def check_filter_tokenizer(tokenizer: object) -> None:
    """A spam filter's tokenizer: None, or a callable (a message -> its features)."""
    if tokenizer is not None and not callable(tokenizer):
        raise InvalidParameterError(f"tokenizer must be callable (message -> mapping), got {describe(tokenizer)}")


def check_distinct_labels(positive: object, negative: object) -> None:
    """The two classes of a binary filter differ."""
    if positive == negative:
        raise InvalidParameterError(f"positive and negative must differ, both are {positive!r}")


def check_curve(curve: object) -> None:
    """When a learning curve records a point: "log", an int n >= 1 (every n messages) or None."""
    if curve is not None and curve != "log" and (not isinstance(curve, int) or isinstance(curve, bool) or curve < 1):
        raise InvalidParameterError(f"curve must be 'log', a positive int or None, got {describe(curve)}")


def check_progress(progress: object) -> None:
    """A progress argument: True (a bar), False or None (none) or a callable(done, total)."""
    if not (progress is None or progress is True or progress is False or callable(progress)):
        raise InvalidParameterError(f"progress must be a bool or a callable(done, total), got {describe(progress)}")


def check_alphas(alphas: Iterable[object]) -> list[float]:
    """Smoothing values evaluated side by side: at least one, each finite and >= 0, distinct."""
    values = list(alphas)
    if not values:
        raise InvalidParameterError("alphas is empty; expected at least one smoothing value")
    for alpha in values:
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not math.isfinite(alpha) or alpha < 0:
            raise InvalidParameterError(f"each alpha must be a finite number >= 0, got {describe(alpha)}")
    if len(set(values)) != len(values):
        raise InvalidParameterError(f"alphas must be distinct, got {values}")
    return values  # type: ignore[return-value]  # numbers: checked above


def check_png_path(path: object) -> None:
    """A path a plot is written to: its name ends in .png."""
    if PurePath(path).suffix.lower() != ".png":  # type: ignore[arg-type]  # a str or os.PathLike
        raise InvalidParameterError(f"plots are written as PNG; the path must end in .png, got {str(path)!r}")


def check_one_array(calibrated: object) -> None:
    """One series of probabilities (a mapping of several goes in another argument)."""
    if isinstance(calibrated, Mapping):
        raise InvalidParameterError("calibrated takes one array; pass a mapping as probabilities to compare more")


def check_group(group: object, aliases: Mapping[str, str], groups: Iterable[str]) -> str:
    """A SpamAssassin group by any of its names (``aliases``); its official name.

    Parameters
    ----------
    group : object
        A group's name, in either spelling.
    aliases : mapping
        Every spelling -> the official name.
    groups : iterable of str
        The official names, for the message.

    Returns
    -------
    str
        The official name.

    Raises
    ------
    InvalidParameterError
        For an unknown group.
    """
    if group not in aliases:
        raise InvalidParameterError(f"unknown SpamAssassin group {describe(group)}; expected one of {list(groups)}")
    return aliases[group]  # type: ignore[index]  # a key: checked above


def check_checksum(name: str, checksum: str) -> tuple[str, str]:
    """(algorithm, lowercase hex) of 'sha256:<hex>', 'md5:<hex>', or bare hex (64 -> sha256, 32 -> md5).

    Parameters
    ----------
    name : str
        The archive's name, for the message.
    checksum : str
        The expected digest.

    Returns
    -------
    tuple of str
        (algorithm, lowercase hex digest).

    Raises
    ------
    InvalidParameterError
        For a digest of neither form.
    """
    algorithm, _, value = checksum.rpartition(":")
    value = value.strip().lower()
    if not algorithm:
        algorithm = {64: "sha256", 32: "md5"}.get(len(value), "")
    algorithm = algorithm.lower()
    lengths = {"sha256": 64, "md5": 32}
    if algorithm not in lengths or len(value) != lengths[algorithm] or not re.fullmatch(r"[0-9a-f]+", value):
        raise InvalidParameterError(
            f"checksum for {name} must be 'sha256:<64 hex>', 'md5:<32 hex>' or bare hex, got {describe(checksum)}"
        )
    return algorithm, value


def check_not_empty(name: str, value: Mapping[Any, Any], what: str) -> None:
    """A mapping that names at least one ``what``."""
    if not value:
        raise InvalidParameterError(f"{name} must name at least one {what}, got an empty mapping")


def check_columns(columns: Iterable[object], wanted: list[str]) -> None:
    """A dataframe (its ``columns``) holds every wanted column."""
    present = list(columns)
    missing = [name for name in wanted if name not in present]
    if missing:
        raise InvalidParameterError(f"column(s) {missing!r} not in the dataframe; its columns are {present!r}")


def check_distinct_columns(wanted: list[str]) -> None:
    """The text, label and weight columns are different ones."""
    if len(set(wanted)) != len(wanted):
        raise InvalidParameterError(f"text, label and weight must name different columns, got {wanted!r}")


def check_output_columns(prediction: str, names: list[str]) -> None:
    """The output columns of a prediction (its label, one per class) do not collide."""
    if len(set(names)) != len(names) or prediction in names:
        raise InvalidParameterError(
            f"output columns collide: {prediction!r} and {names!r}; choose another prediction= or prefix=")


def check_stop_words(value: object) -> str | tuple[str, ...] | None:
    """Normalise stop_words to None, "english" or a sorted tuple of str (JSON-friendly)."""
    if value is None:
        return None
    if isinstance(value, str):
        if value == "english":
            return "english"
        raise InvalidParameterError(
            f"stop_words must be None, 'english' or an iterable of str, got {value!r}"
        )
    if not isinstance(value, Iterable):
        raise InvalidTypeError(f"stop_words must be None, 'english' or an iterable of str, got {describe(value)}")
    words = list(value)
    for word in words:
        if not isinstance(word, str):
            raise InvalidTypeError(f"stop_words must contain only str, found {describe(word)}")
    return tuple(sorted(set(words)))


def check_token_pattern(token_pattern: object) -> re.Pattern[str]:
    """A regular expression (a str) with at most one capture group, compiled."""
    if not isinstance(token_pattern, str):
        raise InvalidTypeError(f"token_pattern must be a str regex, got {describe(token_pattern)}")
    try:
        regex = re.compile(token_pattern)
    except re.error as exc:
        raise InvalidParameterError(
            f"token_pattern {token_pattern!r} is not a valid regular expression: {exc}"
        ) from None
    if regex.groups > 1:
        raise InvalidParameterError(
            f"token_pattern must have at most one capture group, {token_pattern!r} has {regex.groups}"
        )
    return regex


def check_some_ngrams(ngram_range: object, char_ngram_range: object) -> None:
    """A tokenizer emits word n-grams, character n-grams or both."""
    if ngram_range is None and char_ngram_range is None:
        raise InvalidParameterError(
            "ngram_range and char_ngram_range cannot both be None: the tokenizer would emit nothing"
        )


def check_reads_in_core(email: object) -> None:
    """None, or an email tokenizer that reads messages in the core (``_in_core``)."""
    if email is not None and not getattr(email, "_in_core"):  # noqa: B009 (a private attribute, read by name)
        raise InvalidParameterError("email must read messages in the core (the default token pattern, "
                                    "no stemmer)")


def check_field_name(name: object, fields: tuple[str, ...]) -> None:
    """A field mass names a field other than the body (whose mass is a parameter of its own)."""
    if name not in fields or name == "body":
        raise InvalidParameterError(f"masses names a field of {[f for f in fields if f != 'body']}; "
                                    f"got {describe(name)}")


def check_bucket_count(n_buckets: object) -> int | None:
    """None, or a number of hash buckets: an int in [1, 2**32)."""
    if n_buckets is not None and (not isinstance(n_buckets, int) or isinstance(n_buckets, bool)
                                  or not 1 <= n_buckets < 2**32):
        raise InvalidParameterError(f"n_buckets must be an int in [1, 2**32) or None, got {describe(n_buckets)}")
    return n_buckets


def check_name_free(key: str, taken: object, registering: object) -> None:
    """A model type's name is not registered for another class (``taken``: the class it names, or None)."""
    if taken is not None and taken is not registering:
        raise InvalidParameterError(f"model type name {key!r} is already registered for {taken!r}")
