"""The checks of the models' constructors and methods (streamnb/models/) and of the models
the service hands a lesson: each raises InvalidParameterError with the message the model gave
when it made the check itself."""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

from ..errors import InvalidParameterError, describe
from .common import T, _numpy, check_finite, check_positive

# --- model parameters ---------------------------------------------------------------------
# The checks of the models' constructors and methods (streamnb/models/): each raises
# InvalidParameterError with the message the model gave when it made the check itself.


def check_auto_grid(grid: tuple[float, ...] | None, auto: str | None,
                    default: tuple[float, ...]) -> tuple[float, ...] | None:
    """The candidates of the parameter chosen online (``auto``: "alpha", "mu", or None when the
    smoothing is fixed): ``grid`` (``Smoothing.grid``, already checked), or ``default`` when
    None; None for a fixed smoothing, and then a grid given is refused."""
    if auto is None:
        if grid is not None:
            raise InvalidParameterError("Smoothing.grid holds the candidates of alpha='auto' (or mu='auto'); "
                                        "this model's smoothing is fixed")
        return None
    return default if grid is None else grid


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
        raise InvalidParameterError("Smoothing.evidence_half_life ages the evidence of a smoothing chosen online "
                                    "(alpha='auto'); this model's smoothing is fixed")


def check_tokenizer(tokenizer: T) -> T:
    """None or a callable (text -> mapping feature -> value)."""
    if tokenizer is not None and not callable(tokenizer):
        raise InvalidParameterError(f"tokenizer must be callable (text -> mapping), got {describe(tokenizer)}")
    return tokenizer


def check_n_buckets(n_buckets: object, name: str = "n_buckets") -> int | None:
    """None, or an int in [1, 2**32): hashed feature ids are u32."""
    value = check_positive(name, n_buckets, integer=True)
    if value is not None and value >= 2**32:
        raise InvalidParameterError(f"{name} must be below 2**32, got {n_buckets!r}")
    return value


def check_settings_once(name: str, clash: bool, keyword: str) -> None:
    """A flat settings keyword (``half_life``) given once: not beside its object
    (``forgetting=``), nor beside a second flat name of the same field (``alpha_grid`` beside
    ``mu_grid``); ``clash`` says it was."""
    if clash:
        raise InvalidParameterError(f"{name} is a field of {keyword}: give it once, inside {keyword}=...")


def check_passes(passes: object) -> int:
    """An int >= 1: None, which check_positive lets through, is refused."""
    value = check_positive("passes", passes, integer=True)
    if value is None:
        raise InvalidParameterError("passes must be an int >= 1, got None")
    return value


def check_ledger_passes(ledger: int | None, passes: int) -> None:
    """A ledger learns each message once: with one, ``passes`` must be 1."""
    if ledger is not None and passes != 1:
        raise InvalidParameterError(f"a ledger learns each message once: passes must be 1 with ledger={ledger}, "
                                    f"got passes={passes}")


def check_no_ledger(name: str, model: object, keeper: str) -> None:
    """A part whose ledger its holder keeps for it (``keeper`` names the holder's option)."""
    if getattr(model, "ledger", None) is not None:
        raise InvalidParameterError(f"{name} must have no ledger: {keeper}")


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
            "ComplementNB needs alpha > 0 (Smoothing(allow_zero_alpha=True) is not supported): with alpha = 0 "
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
