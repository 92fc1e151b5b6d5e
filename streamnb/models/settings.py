"""The settings a discrete naive Bayes model takes as objects, beside its statistical parameters.

``MultinomialNB(alpha, *, mu, class_prior, tokenizer, smoothing=Smoothing(...),
forgetting=Forgetting(...), pruning=Pruning(...), storage=Storage(...), ledger,
empty_documents)``: each object groups one concern (how the smoothing is applied and chosen,
how old documents fade, which features are dropped, how the counts are stored). Each is a
frozen dataclass (hashable, comparable, repr'd), every field checked when it is built: the
check of a field is declared beside it (``_field``), as scikit-learn's ``_parameter_constraints``
declare theirs; the checks themselves are ``streamnb.validate``'s.

A model file keeps the fields flat among the model's parameters (``half_life``,
``max_features`` ... as files always have), and the models' constructors still take those
keywords, with a DeprecationWarning naming the new spelling (``regroup``, ``takes_flat_settings``).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeVar

from .._moved import REMOVED_IN
from ..errors import InvalidParameterError
from ..validate import (
    check_bool,
    check_choice,
    check_grid,
    check_instance,
    check_n_buckets,
    check_positive,
    check_positive_int,
    check_settings_once,
)

UNSEEN_CHOICES = ("ignore", "score")

_Check = Callable[[str, Any], Any]


def _field(default: Any, check: _Check) -> Any:
    """A settings field and the check its value passes (given the field's full name)."""
    return field(default=default, metadata={"check": check})


def _positive_number(name: str, value: object) -> float | None:
    return check_positive(name, value, integer=False)


def _positive_int(name: str, value: object) -> int | None:
    return check_positive(name, value, integer=True)


def _flag(name: str, value: object) -> bool:
    return check_bool(name, value, InvalidParameterError)


def _grid(name: str, value: object) -> tuple[float, ...] | None:
    return None if value is None else check_grid(name, value)


def _unseen(name: str, value: object) -> str:
    return str(check_choice(name, value, UNSEEN_CHOICES))


class _Settings:
    """Checks every field on construction (the check its ``_field`` declares); a bad value
    raises InvalidParameterError naming ``Class.field``."""

    def __post_init__(self) -> None:
        for item in fields(self):  # type: ignore[arg-type]  # every subclass is a dataclass
            checked = item.metadata["check"](f"{type(self).__name__}.{item.name}", getattr(self, item.name))
            object.__setattr__(self, item.name, checked)


@dataclass(frozen=True)
class Smoothing(_Settings):
    """How a model's smoothing meets words it never saw, and how it is chosen online.

    Parameters
    ----------
    unseen : str
        Words never seen in training, at prediction time: ``"ignore"`` (the default; equals
        a batch model whose vocabulary is the training vocabulary) or ``"score"`` (each one
        counts as a zero-count word, as river does).
    allow_zero_alpha : bool
        Allow ``alpha=0``: then a word with a zero count in a class rules that class out
        (log P = -inf); if every class is ruled out, the prediction falls back to the class
        prior alone.
    grid : sequence of float or None
        The candidates of ``alpha="auto"`` (or MultinomialNB's ``mu="auto"``): distinct
        numbers > 0, kept in increasing order; None (the default) takes the model's default
        grid (``DEFAULT_ALPHA_GRID``, ``DEFAULT_MU_GRID``).
    evidence_half_life : float or None
        With a smoothing chosen online, age the evidence: the record before each document
        scored is multiplied by 2 ** (-1 / evidence_half_life), so the choice follows drift.
        None (the default) keeps the whole stream's evidence.
    sample_evidence : bool
        With a smoothing chosen online, score the documents learned without a prediction of
        them on a schedule (every one while the evidence counts fewer than 1,024 documents,
        then runs of 32 in every 1,024, each weighing 32 times), so that learning without
        predicting costs about what a fixed smoothing's does, and the choice reads a sample
        of those documents. A document learned right after a prediction of it always counts.
        False (the default) scores every document learned.

    Raises
    ------
    InvalidParameterError
        For a field out of its range, named ``Smoothing.<field>``.
    """

    unseen: str = _field("ignore", _unseen)
    allow_zero_alpha: bool = _field(False, _flag)
    grid: tuple[float, ...] | None = _field(None, _grid)
    evidence_half_life: float | None = _field(None, _positive_number)
    sample_evidence: bool = _field(False, _flag)


@dataclass(frozen=True)
class Forgetting(_Settings):
    """How a model forgets old documents; nothing is forgotten by default.

    The model equals a batch model trained with the documents' weights (smoothing included),
    at O(1) per document: one global scale in the store. BernoulliNB's sum over absent words
    (and ComplementNB's norm) depend on every count, so with forgetting their first
    prediction after a learn costs O(|V|).

    Parameters
    ----------
    half_life : float or None
        A document learned ``a`` documents ago weighs 2 ** (-a / half_life): a finite
        number > 0, or None.
    half_life_seconds : float or None
        A document with timestamp ``t`` weighs 2 ** (-(T - t) / half_life_seconds), T the
        latest timestamp learned: a finite number > 0, or None. Both may be set (the
        weights multiply). ``learn_one(..., t=...)`` gives timestamps (default: now).

    Raises
    ------
    InvalidParameterError
        For a value that is neither None nor a finite number > 0.
    """

    half_life: float | None = _field(None, _positive_number)
    half_life_seconds: float | None = _field(None, _positive_number)


@dataclass(frozen=True)
class Pruning(_Settings):
    """Which features a model drops to bound its memory; none by default.

    The automatic passes run rarely enough that the cost per learned document stays
    amortised O(1). Once a pass (these, ``prune``, ``select_features``) has dropped a
    feature, unlearning needs each document's stamp: keep a ledger, or pass ``learned_at=``.

    Parameters
    ----------
    max_features : int or None
        Cap on |V| (an int >= 1, or None): past it, a pass drops the lowest totals down to
        90% of the cap.
    min_count : float or None
        In every pass, drop the features whose total (decayed) count is below this (a
        finite number > 0, or None).
    expire_after : int or None
        Drop the features not seen in the last ``expire_after`` learned documents (an int
        >= 1, or None); a pass runs every ``expire_after // 10`` documents.

    Raises
    ------
    InvalidParameterError
        For a value out of its range.
    """

    max_features: int | None = _field(None, _positive_int)
    min_count: float | None = _field(None, _positive_number)
    expire_after: int | None = _field(None, _positive_int)


@dataclass(frozen=True)
class Storage(_Settings):
    """How a model stores its counts: the layout changes memory and speed, never a prediction
    (``n_buckets`` aside: hashing merges features).

    Parameters
    ----------
    n_buckets : int or None
        Hash features into this many ids (an int in [1, 2**32)) instead of keeping a
        vocabulary: bounded memory, feature names lost. None (the default) keeps the
        vocabulary.
    dense_max_classes : int
        Beyond this many classes the count table switches from dense rows of K counts to
        sparse rows holding only the nonzero cells (an int >= 1; default 4). Models that
        differ only in this still merge.

    Raises
    ------
    InvalidParameterError
        For a value out of its range.
    """

    #: The fields that only choose a layout: models differing in them still merge.
    LAYOUT_ONLY: ClassVar[tuple[str, ...]] = ("dense_max_classes",)

    n_buckets: int | None = _field(None, lambda name, value: check_n_buckets(value, name))
    dense_max_classes: int = _field(4, check_positive_int)


#: The settings objects of a discrete model, by the keyword that takes each.
SETTINGS: dict[str, type[_Settings]] = {"smoothing": Smoothing, "forgetting": Forgetting, "pruning": Pruning,
                                        "storage": Storage}
#: Each field's flat name (a model file's, and the keywords before the grouping) -> (keyword, field).
FLAT: dict[str, tuple[str, str]] = {item.name: (keyword, item.name) for keyword, kind in SETTINGS.items()
                                    for item in fields(kind)}  # type: ignore[arg-type]
del FLAT["grid"]
FLAT.update({"alpha_grid": ("smoothing", "grid"), "mu_grid": ("smoothing", "grid")})


def regroup(params: Mapping[str, Any], owner: str = "") -> dict[str, Any]:
    """``params`` with the flat settings keywords (``half_life=...``) grouped into their objects
    (``forgetting=Forgetting(half_life=...)``); the others as they are.

    ``owner`` (a class name) warns: a DeprecationWarning naming the new spelling, for a
    caller that wrote the old keywords. A file's params regroup silently.

    Raises
    ------
    InvalidParameterError
        For an object given beside one of its flat fields, or alpha_grid beside mu_grid.
    """
    flat = [name for name in params if name in FLAT]
    if not flat:
        return dict(params)
    grouped = {name: value for name, value in params.items() if name not in FLAT}
    fields_of: dict[str, dict[str, Any]] = {}
    for name in flat:
        keyword, field_name = FLAT[name]
        given = fields_of.setdefault(keyword, {})
        value = params[name]
        if field_name == "grid" and "grid" in given and None in (value, given["grid"]):
            given["grid"] = value if given["grid"] is None else given["grid"]  # a file's alpha_grid (None), mu_grid
            continue
        check_settings_once(name, field_name in given or grouped.get(keyword) is not None, keyword)
        given[field_name] = value
    for keyword, values in fields_of.items():
        grouped[keyword] = SETTINGS[keyword](**values)
    if owner:
        spelled = ", ".join(f"{keyword}={SETTINGS[keyword].__name__}({'=..., '.join(names)}=...)"
                            for keyword, names in fields_of.items())
        old = ", ".join(f"{name}=..." for name in flat)
        warnings.warn(f"{owner}({old}) is now {owner}({spelled}); the old keywords go in streamnb {REMOVED_IN}",
                      DeprecationWarning, stacklevel=3)
    return grouped


def flatten(settings: Mapping[str, _Settings], grid_of: str = "alpha") -> dict[str, Any]:
    """The settings objects' fields, flat (as a model file keeps them); ``grid`` under
    ``<grid_of>_grid`` (the parameter chosen online), and ``alpha_grid`` beside it as None."""
    flat: dict[str, Any] = {"alpha_grid": None}
    for value in settings.values():
        for item in fields(value):  # type: ignore[arg-type]
            name = f"{grid_of}_grid" if item.name == "grid" else item.name
            flat[name] = getattr(value, item.name)
    return flat


_Init = TypeVar("_Init", bound=Callable[..., None])


def takes_flat_settings(init: _Init) -> _Init:
    """A model constructor that also takes the settings' flat keywords (``half_life=...``), as
    constructors did before the grouping: regrouped, with a DeprecationWarning naming the new
    spelling. ``inspect.signature`` shows the constructor's own parameters."""

    @functools.wraps(init)
    def regrouping(self: Any, *args: Any, **kwargs: Any) -> None:
        if any(name in FLAT for name in kwargs):
            kwargs = regroup(kwargs, owner=type(self).__name__)
        init(self, *args, **kwargs)

    return regrouping  # type: ignore[return-value]


def resolved(settings: _Settings | None, kind: type[_Settings]) -> Any:
    """The settings given, or the defaults; InvalidParameterError for another kind of value."""
    return kind() if settings is None else check_instance(kind.__name__.lower(), settings, kind,
                                                           f"a {kind.__name__} (or None)")


__all__ = ["Smoothing", "Forgetting", "Pruning", "Storage", "SETTINGS", "FLAT", "regroup", "flatten",
           "takes_flat_settings", "resolved"]
