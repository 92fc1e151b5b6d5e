"""Byte n-grams of a raw message: the features of the online filters that ranked best at TREC.

``ByteNgrams(n=4, max_bytes=3000)`` turns a message into the set of its n-grams (every
window of n consecutive bytes) in the first ``max_bytes`` bytes, each with value 1. No
parsing at all: headers, MIME structure, encodings and obfuscated words are read alike,
and the cost is bounded by ``max_bytes`` whatever the message. Goodman & Yih (2006) and
the TREC 2007 spam track (Cormack 2007) found online logistic regression on 4-grams of the
first few thousand bytes among the best filters; :class:`streamnb.LogisticRegression`
reads them in the core, straight from bytes to feature ids.

A gram is named by its bytes read as Latin-1 (a ``str`` of n characters), after
``prefix``. With ``email=EmailTokenizer(...)`` the features are the email tokenizer's (as
binary features) together with the grams; a prefix such as ``"b:"`` keeps the grams apart
from the email tokenizer's words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import _core
from ..errors import InvalidTypeError, describe
from ..validate import check_int, check_reads_in_core
from .email import EmailTokenizer, _to_bytes
from .text import PicklesSettings


class ByteNgrams(PicklesSettings):
    """Callable raw message -> {gram: 1} (see the module docstring).

    Parameters
    ----------
    n : int
        The length of a gram in bytes (>= 1).
    max_bytes : int
        How many bytes of the message's head are read (>= 1).
    prefix : str
        Put before each gram's name.
    email : EmailTokenizer, mapping or None
        An email tokenizer (or its settings) whose features join the grams, as binary
        features; it must read messages in the core (the default token pattern, no stemmer).

    Raises
    ------
    InvalidParameterError
        For an ``n`` or ``max_bytes`` below 1, or an email tokenizer that does not read in the core.
    InvalidTypeError
        For a ``prefix`` or ``email`` of the wrong type.
    """

    def __init__(self, n: int = 4, max_bytes: int = 3000, *, prefix: str = "",
                 email: EmailTokenizer | Mapping[str, Any] | None = None) -> None:
        n, max_bytes = check_int("n", n, 1), check_int("max_bytes", max_bytes, 1)
        if not isinstance(prefix, str):
            raise InvalidTypeError(f"prefix must be a str, got {describe(prefix)}")
        if isinstance(email, Mapping):
            email = EmailTokenizer(**email)
        if email is not None and not isinstance(email, EmailTokenizer):
            raise InvalidTypeError(f"email must be an EmailTokenizer, its settings or None, got {describe(email)}")
        check_reads_in_core(email)
        self.n, self.max_bytes, self.prefix, self.email = n, max_bytes, prefix, email
        self._core = _core.ByteNgrams(n=n, max_bytes=max_bytes, prefix=prefix,
                                      email=None if email is None else email._core)

    def get_params(self) -> dict[str, Any]:
        """Settings as JSON-serialisable values; ``ByteNgrams(**t.get_params()) == t``."""
        return {"n": self.n, "max_bytes": self.max_bytes, "prefix": self.prefix,
                "email": None if self.email is None else self.email.get_params()}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ByteNgrams):
            return NotImplemented
        return self.get_params() == other.get_params()

    def __hash__(self) -> int:
        return hash((self.n, self.max_bytes, self.prefix, self.email))

    def __repr__(self) -> str:
        extra = "" if self.prefix == "" else f", prefix={self.prefix!r}"
        extra += "" if self.email is None else f", email={self.email!r}"
        return f"ByteNgrams(n={self.n}, max_bytes={self.max_bytes}{extra})"

    def __call__(self, message: bytes | str) -> dict[str, int]:
        """{feature: 1} of a raw message (str is encoded as UTF-8 first).

        Parameters
        ----------
        message : bytes or str
            A raw message (a str is read as its UTF-8).

        Returns
        -------
        dict
            Feature -> 1 for each gram (and each feature of ``email``).
        """
        return self._core.features(_to_bytes(message))
