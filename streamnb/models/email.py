"""The spam filter's model: multinomial naive Bayes over field-weighted email features,
scored with inverse document frequencies read from its own counts.

:class:`EmailNB` is a :class:`MultinomialNB` (Dirichlet smoothing, uniform class prior)
whose tokenizer is :class:`streamnb.features.weighting.EmailWeights` (a raw message -> weights that
depend on the message alone) and whose predictions reweigh each message at scoring time:

    s_f = m_F * w_f * idf_f / sum_{g in F} w_g * idf_g,    idf_f = ln((1 + N) / (1 + D_f)) + k

w_f the message's weight for feature f (``EmailWeights``), F the field of f (body, subject,
sender ...), m_F its mass, N the messages learned and D_f those containing f, both read from
the model's document counts as they stand (decayed, with forgetting), and k the IDF offset
(``idf_offset``), what a feature in every message weighs. The log-odds are then those of
the multinomial model on s: log P(c) + sum_f s_f log P(f|c).

Why k = 0.03, not scikit-learn's 1: a feature that every message holds (the Date, From,
Message-ID, Subject and To headers' names) says nearly nothing about the class, and with
k = 1 it still took a share of its field from the names that do (a mailing list's headers).
With k small it weighs almost nothing beside them, yet a field made only of such features
(bare headers) keeps its mass: with k = 0 that field would carry nothing, and the bare
headers are themselves spam evidence. benchmarks/accuracy_variants.py measures the offsets
tried (CHANGELOG.md, "Spam filter accuracy", has the figures).

Why split it so. Counts learned from message-alone weights keep every exact operation of
the count store (learn / unlearn / merge / forgetting / save and load, the ledger), and
since the IDF is a function of the counts as they stand, the score of a message depends only
on the model, never on the order it learned in: unlearning a message gives exactly the model
that never saw it (to the last bit: see :data:`streamnb.features.weighting.QUANTUM_BITS`). Applying
the IDF when learning instead, with the document frequencies of the messages before (as
``EmailPipeline`` does), makes the counts depend on the order, so nothing could be
unlearned or merged exactly; applying it at scoring time only ranks at least as well on the
SpamAssassin stream (benchmarks/accuracy_variants.py).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from ..errors import InvalidTypeError, describe
from ..features.weighting import EmailWeights
from ..persist import register_model
from ..validate import Label, check_finite, check_flag
from .multinomial import MultinomialNB
from .settings import Forgetting, Pruning, Smoothing, Storage, takes_flat_settings
from .values import Document, FeatureValues

#: What a feature in every message weighs in the scoring IDF (see the module docstring).
#: A model saved before the parameter existed (it had no ``idf_offset``) loads with
#: scikit-learn's 1, the offset it was scoring with.
DEFAULT_IDF_OFFSET = 0.03
SAVED_WITHOUT_OFFSET = 1.0

#: EmailNB's smoothing: Dirichlet toward the pooled distribution (mu in units of weight; a
#: message weighs about 50), and additive smoothing of the pooled distribution
#: (benchmarks/accuracy_variants.py compares the settings tried).
DEFAULT_ALPHA = 0.3
DEFAULT_MU = 100.0


def _default_weights() -> EmailWeights:
    return EmailWeights()


@register_model
class EmailNB(MultinomialNB):
    """Multinomial NB on :class:`~streamnb.features.weighting.EmailWeights`, scored with the IDF of its
    own document counts (see the module docstring). The naive Bayes part of the spam filter's
    default model, :class:`~streamnb.models.Fusion` (alone: ``streamnb train --model-type email``).

    Documents are raw messages (bytes or str), or mappings of the tokenizer's weights (what
    ``SpamFilter.features`` gives). Learning, unlearning, merging, forgetting and saving are
    MultinomialNB's, on those weights; predictions, ``joint_log_likelihood_one`` and
    ``contributions_one`` use the reweighted message (computed in the core, src/weighting.rs
    and ``Core.idf_values`` in src/python/model.rs: a raw message goes bytes -> weights ->
    scores with no Python string per token). The log-linear view (``log_linear``,
    ``top_features``) is the model's, per unit of weight.

    Parameters
    ----------
    alpha, mu
        MultinomialNB's smoothing, with other defaults: ``alpha=0.3``, ``mu=100``.
    class_prior
        As MultinomialNB's; default ``"uniform"``.
    tokenizer
        An :class:`~streamnb.features.weighting.EmailWeights` (default ``EmailWeights()``).
    idf
        True (the default) scores with the IDF; False scores the learned weights as they are
        (a plain MultinomialNB on EmailWeights).
    idf_offset
        k in the IDF, what a feature in every message weighs (default 0.03, a number in
        [0, 1e6]). A model saved before the parameter existed loads with 1, the offset it
        scored with; to score it as a new model does, set ``model.idf_offset = 0.03`` and
        save it again.
    smoothing, forgetting, pruning, storage, ledger
        As MultinomialNB's.
    empty_documents
        As MultinomialNB's; default ``"learn"``.

    Raises
    ------
    InvalidTypeError
        For a tokenizer that is not an EmailWeights.
    InvalidParameterError
        For ``idf`` not a bool, or another parameter out of its range.
    """

    _tokenizer: EmailWeights  # the tokenizer setter lets no other in

    @takes_flat_settings
    def __init__(self, alpha: float | str = DEFAULT_ALPHA, *, mu: float | str | None = DEFAULT_MU,
                 class_prior: str | Mapping[Label, float] = "uniform", tokenizer: EmailWeights | None = None,
                 idf: bool = True, idf_offset: float = DEFAULT_IDF_OFFSET, smoothing: Smoothing | None = None,
                 forgetting: Forgetting | None = None, pruning: Pruning | None = None,
                 storage: Storage | None = None, ledger: int | None = None, empty_documents: str = "learn") -> None:
        if tokenizer is None:
            tokenizer = _default_weights()
        if not isinstance(tokenizer, EmailWeights):
            raise InvalidTypeError(f"tokenizer must be an EmailWeights, got {describe(tokenizer)}")
        self._idf = check_flag("idf", idf)
        self._idf_offset = check_finite("idf_offset", idf_offset)  # its range: the core's (set_idf)
        super().__init__(alpha, mu=mu, class_prior=class_prior, tokenizer=tokenizer, smoothing=smoothing,
                         forgetting=forgetting, pruning=pruning, storage=storage, ledger=ledger,
                         empty_documents=empty_documents)

    @property
    def tokenizer(self) -> EmailWeights:
        return self._tokenizer

    @tokenizer.setter
    def tokenizer(self, tokenizer: object) -> None:
        if not isinstance(tokenizer, EmailWeights):
            raise InvalidTypeError(f"tokenizer must be an EmailWeights, got {describe(tokenizer)}")
        MultinomialNB.tokenizer.fset(self, tokenizer)  # type: ignore[attr-defined]
        self._set_scoring(self._idf, self._idf_offset)

    @property
    def idf(self) -> bool:
        return self._idf

    @idf.setter
    def idf(self, idf: bool) -> None:
        idf = check_flag("idf", idf)
        self._set_scoring(idf, self._idf_offset)  # first: the core may refuse (n_buckets), and nothing changes
        self._idf = idf

    @property
    def idf_offset(self) -> float:
        return self._idf_offset

    @idf_offset.setter
    def idf_offset(self, offset: float) -> None:
        offset = check_finite("idf_offset", offset)
        self._set_scoring(self._idf, offset)  # first: the core refuses an offset out of [0, 1e6]
        self._idf_offset = offset

    def _set_scoring(self, idf: bool, offset: float) -> None:
        self._core.set_idf(self._tokenizer._core if idf else None, offset)

    @classmethod
    def _from_saved_params(cls, params: Mapping[str, Any]) -> EmailNB:
        if "idf_offset" not in params:  # saved before it existed
            params = {**params, "idf_offset": SAVED_WITHOUT_OFFSET}
        return super()._from_saved_params(params)

    def __repr__(self) -> str:
        return (f"EmailNB(alpha={self.alpha!r}, mu={self.mu!r}, idf={self.idf!r}, idf_offset={self.idf_offset!r}, "
                f"classes={len(self.classes)}, features={self.n_features})")

    # -- the weights, for inspection -----------------------------------------------------------
    def weights(self, x: Document) -> FeatureValues:
        """The weights the model learns from x: the tokenizer's for a raw message, x itself for a mapping."""
        if isinstance(x, (str, bytes)):
            return self.tokenizer(x)
        return x

    def score_weights(self, x: Document) -> dict[Hashable, float]:
        """The weights a prediction uses: ``weights(x)`` times idf_f, each field scaled back to its mass.

        idf_f = ln((1 + N) / (1 + D_f)) + idf_offset with N the messages learned and D_f those
        containing f (0 for a feature the model does not know), from the counts as they stand
        (computed by the core; with ``idf=False``, the weights as learned).
        """
        return self._core.score_weights(x)
