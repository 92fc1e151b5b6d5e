"""Forgetting: the clocks of a model that lets old documents fade (``Forgetting(half_life=...)``,
``Forgetting(half_life_seconds=...)``).

A document learned ``a`` documents and ``s`` seconds ago weighs
gamma = 2 ** -(a / half_life + s / half_life_seconds) of what it weighed when it was learned
(a half-life that is not set counts as infinite). The count store applies gamma to every
count at once through its global scale, so forgetting costs O(1) per document; this module
computes the factors and keeps the latest timestamp learned.
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    from ._lazy import numpy as np

from .errors import InvalidInputError, describe
from .validate import is_finite


class Clock:
    """The two forgetting clocks of one model: documents learned (the store's ``n_learned``)
    and seconds (``last_t``, the latest timestamp learned).

    Parameters
    ----------
    half_life : float or None
        Documents after which a count weighs half; None for no forgetting by documents.
    half_life_seconds : float or None
        Seconds after which a count weighs half; None for no forgetting in time.
    """

    def __init__(self, half_life: float | None, half_life_seconds: float | None) -> None:
        self.half_life = half_life
        self.half_life_seconds = half_life_seconds
        self.last_t: float | None = None

    @property
    def forgets(self) -> bool:
        return self.half_life is not None or self.half_life_seconds is not None

    def forgetting(self, docs_ago: float | npt.NDArray[np.float64],
                   seconds_ago: float | npt.NDArray[np.float64]) -> float | npt.NDArray[np.float64]:
        """gamma^age = 2 ** -(docs_ago / half_life + seconds_ago / half_life_seconds): the one
        forgetting formula (learning, unlearning, learn_many and merge all use it).

        Parameters
        ----------
        docs_ago, seconds_ago : float or numpy.ndarray
            The age in documents and in seconds.

        Returns
        -------
        float or numpy.ndarray
            The factor of each age, in (0, 1].
        """
        exponent: float | npt.NDArray[np.float64] = 0.0
        if self.half_life is not None:
            exponent = exponent + docs_ago / self.half_life
        if self.half_life_seconds is not None:
            exponent = exponent + seconds_ago / self.half_life_seconds
        return 2.0 ** -exponent

    def after(self, n_docs: int, t: float | None) -> tuple[float, float | None]:
        """(decay factor of the counts held, latest timestamp) after n_docs more documents,
        the last at time t; changes nothing.

        Parameters
        ----------
        n_docs : int
            The documents to learn.
        t : float or None
            The timestamp of the last of them.

        Returns
        -------
        tuple
            (decay factor, latest timestamp).
        """
        if t is None and self.half_life is None:
            return 1.0, self.last_t  # no forgetting (t is None unless half_life_seconds is set)
        seconds, last_t = 0.0, self.last_t
        if t is not None:
            if last_t is None:
                last_t = t
            elif t > last_t:
                seconds, last_t = t - last_t, t
        return float(self.forgetting(n_docs, seconds)), last_t

    def aged(self, weight: float, when: float | None, last_t: float | None) -> float:
        """The weight a document with timestamp ``when`` has at time ``last_t`` (an older
        timestamp than the latest learned makes it weigh less).

        Parameters
        ----------
        weight : float
            The document's weight.
        when : float or None
            Its timestamp.
        last_t : float or None
            The latest timestamp learned.

        Returns
        -------
        float
            Its weight now.
        """
        if when is None or when == last_t or last_t is None:
            return weight
        return weight * float(self.forgetting(0, last_t - when))

    def age_factor(self, learned_at: int | None, t: float | None, n_learned: int) -> float:
        """gamma^age of a document learned at stamp ``learned_at`` and time ``t``.

        Parameters
        ----------
        learned_at : int or None
            The document's stamp on the documents clock.
        t : float or None
            Its timestamp.
        n_learned : int
            The documents learned so far.

        Returns
        -------
        float
            gamma^age.

        Raises
        ------
        InvalidInputError
            When the model forgets and the age it needs is not given.
        """
        docs_ago = seconds_ago = 0.0
        if self.half_life is not None:
            if learned_at is None:
                raise InvalidInputError(
                    "this model forgets (half_life is set), so unlearning needs the document's age: pass "
                    "learned_at=<model.n_learned right after it was learned>, or build the model with ledger=...")
            docs_ago = n_learned - learned_at
        if self.half_life_seconds is not None:
            if t is None:
                raise InvalidInputError(
                    "this model forgets in time (half_life_seconds is set), so unlearning needs the timestamp "
                    "the document was learned with: pass t=..., or build the model with ledger=...")
            seconds_ago = 0.0 if self.last_t is None else self.last_t - t
        return float(self.forgetting(docs_ago, seconds_ago))

    def check_time(self, t: object, default_now: bool) -> float | None:
        """A validated timestamp (None when the model does not forget in time).

        Parameters
        ----------
        t : object
            A timestamp in seconds, or None.
        default_now : bool
            Give the current time for None.

        Returns
        -------
        float or None
            The timestamp.

        Raises
        ------
        InvalidInputError
            For a value that is not a finite number.
        """
        if t is not None and (isinstance(t, bool) or not isinstance(t, numbers.Real) or not is_finite(t)):
            raise InvalidInputError(f"timestamp t must be a finite number of seconds, got {describe(t)}")
        if self.half_life_seconds is None:
            return None
        if t is None:
            return time.time() if default_now else None
        return float(t)

    def check_times(self, t: object, n: int) -> npt.NDArray[np.float64] | None:
        """Timestamps of a batch: one for all rows or one per row (None without half_life_seconds).

        Parameters
        ----------
        t : object
            One timestamp, an iterable of one per document, or None.
        n : int
            The documents of the batch.

        Returns
        -------
        numpy.ndarray or None
            A timestamp per document.

        Raises
        ------
        InvalidInputError
            For a timestamp that is not a finite number, or a count that is not ``n``.
        """
        if t is None or isinstance(t, numbers.Real):
            when = self.check_time(t, default_now=True)
            return None if when is None else np.full(n, when)
        # anything else must be an iterable of timestamps (a non-iterable raises TypeError here)
        times = [self.check_time(v, default_now=True) for v in cast("Iterable[object]", t)]
        if len(times) != n:
            raise InvalidInputError(f"t has {len(times)} timestamps but there are {n} documents")
        return None if self.half_life_seconds is None else np.array(times, dtype=float)


def check_stamp(learned_at: object, n_learned: int) -> int | None:
    """A document stamp on the n_learned clock: an int in [1, n_learned], or None.

    Parameters
    ----------
    learned_at : object
        A stamp, or None.
    n_learned : int
        The documents learned so far.

    Returns
    -------
    int or None
        The stamp.

    Raises
    ------
    InvalidInputError
        For a stamp that is not an int in [1, n_learned].
    """
    if learned_at is None:
        return None
    if isinstance(learned_at, bool) or not isinstance(learned_at, numbers.Integral) \
            or not 1 <= int(learned_at) <= n_learned:
        raise InvalidInputError(
            f"learned_at must be a document stamp in [1, {n_learned}] (model.n_learned right "
            f"after the document was learned), got {describe(learned_at)}")
    return int(learned_at)
