"""Email features weighted field by field from the message alone: the spam filter's tokenizer.

:class:`EmailWeights` is a tokenizer (raw message -> ``{feature: weight}``) over
:class:`streamnb.features.email.EmailTokenizer` features: every feature weighs ``log(1 + count)``,
scaled so that each field of the message (body words, subject, sender, links, address
domains, header names, MIME structure ...) carries a fixed total mass. The weights depend
on the message alone, never on what a model learned before it, so a model fed with them
keeps every exact operation of the count store: ``learn_one`` then ``unlearn_one`` restores
the counts, ``merge`` is concatenation, forgetting and save/load are exact, and a ledger can
unlearn any message it remembers by reading it again.

Why a fixed mass per field, measured on the Date-ordered SpamAssassin stream
(benchmarks/accuracy_variants.py): raw counts let a long message pile up hundreds of weakly
spammy words (long newsletters people asked for scored log-odds above 100); a fixed mass
bounds what any message can say, and separate masses keep the short fields (subject,
sender, links, MIME structure) from being drowned by the body.

:meth:`EmailWeights.reweigh` is the second half of the recommended setting: at scoring time
(:class:`streamnb.models.email.EmailNB`) each weight is multiplied by an inverse document
frequency read from the model's own document counts, and every field is scaled back to its
mass. Since that reads the counts as they stand, it is a function of the model, not of the
order it learned in, so it keeps exactness too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import _core
from ..errors import InvalidTypeError, describe
from ..validate import check_field_name, check_finite_positive
from .email import EmailTokenizer, _to_bytes
from .text import PicklesSettings

__all__ = ["EmailWeights", "DEFAULT_TOKENIZER", "DEFAULT_MASSES"]

#: The tokenizer settings of the recommended filter: words and word pairs in the body and
#: the subject, and the sender's address (``from-address:``) besides the defaults.
DEFAULT_TOKENIZER: dict[str, Any] = {"body": {"ngram_range": [1, 2]}, "sender_address": True}

#: Masses of the fields that do not take ``field_mass``: the sender's address weighs as much
#: as two ordinary fields (it is the only field that names one correspondent), the address
#: domains (From, To, Cc, Reply-To, Sender: five headers in one field) one and a half
#: (measured on every order of the SpamAssassin stream: benchmarks/accuracy_variants.py).
DEFAULT_MASSES: dict[str, float] = {"sender": 6.0, "address": 4.5}

#: Weights are multiples of 2**-QUANTUM_BITS: sums and differences of such numbers are exact
#: in float64 (below 2**(53 - QUANTUM_BITS) ~ 1.4e11 in total), so learning a message and
#: unlearning it restores the counts bit for bit, whatever was learned in between, and a
#: merge equals one model trained on both streams to the last bit. (Without it, 0.1 + 0.2 -
#: 0.2 != 0.1: the counts would come back to within rounding only.) The step, 1.5e-5, is far
#: below any weight that matters (a body word weighs about 0.1). The rounding is the core's
#: (src/weighting.rs, ``quantise``).
QUANTUM_BITS: int = _core.QUANTUM_BITS

_FIELDS: tuple[str, ...] = tuple(_core.EmailWeights.FIELDS)


class EmailWeights(PicklesSettings):
    """Callable: a raw message -> ``{feature: weight}``, from the message alone.

    For the features x_f of :class:`EmailTokenizer` (default settings
    :data:`DEFAULT_TOKENIZER`), ``weight_f = m * log(1 + x_f) / S``, S the sum of
    ``log(1 + x_g)`` over the features g of the same field (:meth:`EmailTokenizer.field`)
    and m the field's mass: ``body_mass`` for the body, ``masses[field]`` where given
    (default :data:`DEFAULT_MASSES`), else ``field_mass``. The fields are the core's eight
    (:meth:`EmailTokenizer.field`; a subclass's own ``field`` is not consulted), and the
    formulas run in the core (src/weighting.rs). Every field present carries
    its mass, however long the message (to within the rounding of each weight to a
    multiple of 2**-16, :data:`QUANTUM_BITS`, which keeps learning and unlearning bit-exact).

    >>> w = EmailWeights(EmailTokenizer(), body_mass=2.0, field_mass=1.0)
    >>> weights = w(b"Subject: hi\\n\\nhi hi there")
    >>> {f: round(v, 3) for f, v in weights.items() if ":" not in f or f.startswith("subject")}
    {'hi': 1.226, 'there': 0.774, 'subject:hi': 1.0}

    Parameters
    ----------
    tokenizer : EmailTokenizer, mapping or None
        The email tokenizer whose features are weighed, or its settings; None for
        :data:`DEFAULT_TOKENIZER`.
    body_mass : float
        The mass of the body's features (> 0).
    field_mass : float
        The mass of each other field not named in ``masses`` (> 0).
    masses : mapping or None
        Field -> mass (> 0) for fields other than the body; None for :data:`DEFAULT_MASSES`.

    Raises
    ------
    InvalidParameterError
        For a mass that is not a finite number > 0, or a field that is not one of the core's.
    InvalidTypeError
        For a tokenizer of the wrong type.
    """

    def __init__(
        self,
        tokenizer: EmailTokenizer | Mapping[str, Any] | None = None,
        *,
        body_mass: float = 30.0,
        field_mass: float = 3.0,
        masses: Mapping[str, float] | None = None,
    ) -> None:
        if tokenizer is None:
            tokenizer = EmailTokenizer(**DEFAULT_TOKENIZER)
        elif isinstance(tokenizer, Mapping):
            tokenizer = EmailTokenizer(**tokenizer)
        elif not isinstance(tokenizer, EmailTokenizer):
            raise InvalidTypeError(
                f"tokenizer must be an EmailTokenizer, a dict of its settings or None, got {describe(tokenizer)}")
        self.tokenizer = tokenizer
        self.body_mass = check_finite_positive("body_mass", body_mass)
        self.field_mass = check_finite_positive("field_mass", field_mass)
        masses = dict(DEFAULT_MASSES if masses is None else masses)
        for name, value in masses.items():
            check_field_name(name, _FIELDS)
            masses[name] = check_finite_positive(f"masses[{name!r}]", value)
        self.masses = masses
        # the weighting itself runs in the core (src/weighting.rs), with these masses; the
        # core reads the message too unless the tokenizer is a subclass (its own __call__)
        # or needs Python for the body
        self._core = _core.EmailWeights(tokenizer._core, [self.mass_of(name) for name in _FIELDS])
        self._reads_in_core = type(tokenizer) is EmailTokenizer and tokenizer._in_core

    def get_params(self) -> dict[str, Any]:
        """Settings as JSON-serialisable values; ``EmailWeights(**w.get_params())`` is the same."""
        return {"tokenizer": self.tokenizer.get_params(), "body_mass": self.body_mass,
                "field_mass": self.field_mass, "masses": dict(self.masses)}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EmailWeights):
            return NotImplemented
        return self.get_params() == other.get_params()

    def __hash__(self) -> int:
        return hash(repr(self.get_params()))

    def __repr__(self) -> str:
        return (f"EmailWeights({self.tokenizer!r}, body_mass={self.body_mass:g}, field_mass={self.field_mass:g}, "
                f"masses={self.masses!r})")

    def mass_of(self, name: str) -> float:
        """The mass a field carries."""
        if name == "body":
            return self.body_mass
        return self.masses.get(name, self.field_mass)

    def field(self, feature: str) -> str:
        """The field a feature is weighed in: the core's rule (:meth:`EmailTokenizer.field`).

        Parameters
        ----------
        feature : str
            A feature of the tokenizer.

        Returns
        -------
        str
            The field it belongs to.
        """
        return self._core.field(feature)

    def __call__(self, message: bytes | str) -> dict[str, float]:
        """The weights of a raw message (see the class docstring), as a dict for inspection
        (a model reads a message into weights in the core, with no dict).

        Parameters
        ----------
        message : bytes or str
            A raw message, read as :class:`EmailTokenizer` reads it.

        Returns
        -------
        dict
            Feature -> its weight (a multiple of 2**-16).
        """
        if self._reads_in_core:
            return self._core.weigh_message(_to_bytes(message))
        return self._core.weigh(self.tokenizer(message))

    def weigh(self, features: Mapping[str, float]) -> dict[str, float]:
        """The weights of a message given as its :class:`EmailTokenizer` features (counts),
        each rounded to a multiple of 2**-QUANTUM_BITS (at least one step)."""
        return self._core.weigh(features)

    def reweigh(self, weights: Mapping[str, float], factors: Mapping[str, float] | None = None) -> dict[str, float]:
        """``weights`` times ``factors`` (1 where missing), each field scaled back to its mass.

        With ``factors=None``: ``weights`` scaled to the field masses (what ``weigh`` does to
        ``log(1 + count)``). Features whose product is not > 0 are left out.
        """
        return self._core.reweigh(weights, factors)
