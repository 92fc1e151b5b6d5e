"""Every error streamnb raises on purpose.

Each class subclasses the built-in exception a caller would expect (ValueError for a bad
value, TypeError for a value of the wrong kind), so ``except ValueError`` keeps working,
while ``except streamnb.errors.StreamNBError`` catches all of ours. Messages name the bad
value and say what was expected.
"""

from __future__ import annotations


class StreamNBError(Exception):
    """Base class of every error raised on purpose by streamnb."""


class InvalidParameterError(StreamNBError, ValueError):
    """A constructor or function parameter is out of its allowed range."""


class InvalidInputError(StreamNBError, ValueError):
    """A document, count, weight or value is not acceptable (NaN, negative, empty ...)."""


class InvalidTypeError(StreamNBError, TypeError):
    """A document, value or label has the wrong type."""


class InvalidLabelError(InvalidTypeError):
    """A class label is not a str, int or bool (or is unhashable)."""


class UnknownClassError(InvalidInputError):
    """An operation names a class the model has never learned (e.g. unlearn)."""


class IncompatibleModelsError(StreamNBError, ValueError):
    """Two models cannot be merged; the message names the first difference found."""


class ModelFormatError(StreamNBError, ValueError):
    """A model file cannot be read: unknown version, truncated, corrupted or tampered."""


class InternalError(StreamNBError, RuntimeError):
    """A bug inside streamnb's compiled core (a Rust panic caught at the boundary); the
    operation was refused. Please report it with the message."""


class CorpusNotFoundError(StreamNBError, FileNotFoundError):
    """A data set could not be found; the message says how to get it."""


def describe(value: object, limit: int = 60) -> str:
    """Short repr of a value for error messages, with its type (a value whose repr fails,
    e.g. a tuple nested past the recursion limit, is named by its type alone).

    Parameters
    ----------
    value : object
        Any value.
    limit : int
        The most characters of its repr shown.

    Returns
    -------
    str
        Its repr (cut short), with its type.
    """
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__} without a usable repr>"
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"{text} (type {type(value).__name__})"


class CorpusIntegrityError(StreamNBError, ValueError):
    """A downloaded or cached data file fails verification (checksum mismatch, not an archive)."""
