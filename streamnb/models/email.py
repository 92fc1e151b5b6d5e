"""The spam filter's model: multinomial naive Bayes over field-weighted email features,
scored with inverse document frequencies read from its own counts.

:class:`EmailNB` is a :class:`MultinomialNB` (Dirichlet smoothing, uniform class prior)
whose tokenizer is :class:`streamnb.weighting.EmailWeights` (a raw message -> weights that
depend on the message alone) and whose predictions reweigh each message at scoring time:

    s_f = m_F * w_f * idf_f / sum_{g in F} w_g * idf_g,    idf_f = ln((1 + N) / (1 + D_f)) + 1

w_f the message's weight for feature f (``EmailWeights``), F the field of f (body, subject,
sender ...), m_F its mass, N the messages learned and D_f those containing f, both read from
the model's document counts as they stand (decayed, with forgetting). The log-odds are then
those of the multinomial model on s: log P(c) + sum_f s_f log P(f|c).

Why split it so. Counts learned from message-alone weights keep every exact operation of
the count store (learn / unlearn / merge / forgetting / save and load, the ledger), and
since the IDF is a function of the counts as they stand, the score of a message depends only
on the model, never on the order it learned in: unlearning a message gives exactly the model
that never saw it (to the last bit: see :data:`streamnb.weighting.QUANTUM_BITS`). The IDF is
what made ``EmailPipeline`` the best ranking measured, but there it was applied when
learning, with the document frequencies of the messages before, so the counts depended on
the order and nothing could be unlearned or merged exactly. Measured on the Date-ordered
SpamAssassin stream (benchmarks/accuracy_variants.py), applying it at scoring time only
ranks at least as well: (1-AUC)% 0.081 without the sender's address, 0.077 with it
(``EmailPipeline``: 0.084; EmailNB with ``idf=False``: 0.089; without word pairs: 0.092).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

from ..errors import InvalidParameterError, InvalidTypeError, describe
from ..persist import register_model
from ..validate import Label
from .base import Contributions, Document
from .multinomial import MultinomialNB

#: EmailNB's smoothing: Dirichlet toward the pooled distribution (mu in units of weight; a
#: message weighs about 50), and a little additive smoothing of the pooled distribution.
DEFAULT_ALPHA = 0.03
DEFAULT_MU = 100.0


def _default_weights() -> Any:
    from ..weighting import EmailWeights  # the mail reader is needed only by this model

    return EmailWeights()


@register_model
class EmailNB(MultinomialNB):
    """Multinomial NB on :class:`~streamnb.weighting.EmailWeights`, scored with the IDF of its
    own document counts (see the module docstring). The recommended spam-filter model.

    Parameters are MultinomialNB's, with other defaults: ``alpha=0.03``, ``mu=100``,
    ``class_prior="uniform"``, ``empty_documents="learn"`` and ``tokenizer=EmailWeights()``
    (any tokenizer with ``reweigh(weights, factors)``, as EmailWeights has). ``idf=False``
    scores the learned weights as they are (a plain MultinomialNB on EmailWeights).

    Documents are raw messages (bytes or str), or mappings of the tokenizer's weights (what
    ``SpamFilter.features`` gives). Learning, unlearning, merging, forgetting and saving are
    MultinomialNB's, on those weights; predictions, ``joint_log_likelihood_one`` and
    ``contributions_one`` use the reweighted message. The log-linear view (``log_linear``,
    ``top_features``) is the model's, per unit of weight.
    """

    def __init__(self, alpha: float = DEFAULT_ALPHA, *, mu: float | None = DEFAULT_MU,
                 class_prior: str | Mapping[Label, float] = "uniform", tokenizer: Any = None, idf: bool = True,
                 empty_documents: str = "learn", **params: Any) -> None:
        if tokenizer is None:
            tokenizer = _default_weights()
        if not (callable(tokenizer) and callable(getattr(tokenizer, "reweigh", None))):
            raise InvalidTypeError("tokenizer must be an EmailWeights (a callable with reweigh), "
                                   f"got {describe(tokenizer)}")
        if not isinstance(idf, bool):
            raise InvalidParameterError(f"idf must be a bool, got {describe(idf)}")
        self.idf = idf
        super().__init__(alpha, mu=mu, class_prior=class_prior, tokenizer=tokenizer,
                         empty_documents=empty_documents, **params)

    def get_params(self) -> dict:
        return {**super().get_params(), "idf": self.idf}

    def __repr__(self) -> str:
        return (f"EmailNB(alpha={self.alpha!r}, mu={self.mu!r}, idf={self.idf!r}, classes={len(self.classes)}, "
                f"features={self.n_features})")

    # -- scoring weights ---------------------------------------------------------------------
    def weights(self, x: Document) -> Mapping[Hashable, float]:
        """The weights the model learns from x: the tokenizer's for a raw message, x itself for a mapping."""
        if isinstance(x, (str, bytes)):
            return self.tokenizer(x)
        return x

    def score_weights(self, x: Document) -> dict[Hashable, float]:
        """The weights a prediction uses: ``weights(x)`` times idf_f, each field scaled back to its mass.

        idf_f = ln((1 + N) / (1 + D_f)) + 1 with N the messages learned and D_f those
        containing f (0 for a feature the model does not know), from the counts as they stand.
        """
        weights = self.weights(x)
        if not self.idf or not isinstance(weights, Mapping) or not weights:
            return dict(weights) if isinstance(weights, Mapping) else weights
        counts = self.document_counts(weights)
        known = dict(zip(counts.features, map(sum, counts.rows())))  # D_f: summed over the classes
        top = math.log1p(float(sum(counts.totals()))) + 1.0
        log1p = math.log1p
        factors = {feature: top - log1p(known.get(feature, 0.0)) for feature in weights}
        return self.tokenizer.reweigh(weights, factors)

    # -- predictions on the scoring weights -----------------------------------------------------
    def predict_one(self, x: Document) -> Label | None:
        return super().predict_one(self.score_weights(x))

    def predict_proba_one(self, x: Document) -> dict[Label, float]:
        return super().predict_proba_one(self.score_weights(x))

    def predict_log_proba_one(self, x: Document) -> dict[Label, float]:
        return super().predict_log_proba_one(self.score_weights(x))

    def predict_many(self, X: Iterable[Document]) -> list[Label | None]:
        return super().predict_many([self.score_weights(x) for x in X])

    def predict_proba_many(self, X: Iterable[Document]) -> list[dict[Label, float]]:
        return super().predict_proba_many([self.score_weights(x) for x in X])

    def predict_log_proba_many(self, X: Iterable[Document]) -> list[dict[Label, float]]:
        return super().predict_log_proba_many([self.score_weights(x) for x in X])

    def joint_log_likelihood_one(self, x: Document) -> dict[Label, float]:
        return super().joint_log_likelihood_one(self.score_weights(x))

    def contributions_one(self, x: Document) -> Contributions:
        return super().contributions_one(self.score_weights(x))
