"""Multinomial naive Bayes: documents as bags of token counts."""

from __future__ import annotations

import numpy as np

from ..persist import register_model
from .base import DiscreteNB, Encoded, LogLinear


@register_model
class MultinomialNB(DiscreteNB):
    """Multinomial naive Bayes over a growing vocabulary.

    log P(w|c) = log(T_cw + alpha) - log(T_c + alpha*|V|), with T_cw the token count of w in
    class c, T_c = sum_w T_cw and |V| the current vocabulary size (the same for every class,
    so a new word changes every denominator at once). The score of a document x is
    log P(c) + sum_w x_w log P(w|c).

    >>> from streamnb import MultinomialNB
    >>> model = MultinomialNB(alpha=1.0)
    >>> for doc, label in [({"chinese": 2, "beijing": 1}, "china"), ({"chinese": 2, "shanghai": 1}, "china"),
    ...                    ({"chinese": 1, "macao": 1}, "china"), ({"tokyo": 1, "japan": 1, "chinese": 1}, "japan")]:
    ...     _ = model.learn_one(doc, label)
    >>> round(model.predict_proba_one({"chinese": 3, "tokyo": 1, "japan": 1})["china"], 4)
    0.6897
    """

    def _joint_log_likelihood(self, doc: Encoded) -> np.ndarray:
        store = self.store
        alpha = self.alpha
        log_denominator = np.log(store.class_tokens * store.scale + alpha * store.n_features)
        tokens = store.gather_tokens(doc.ids)
        jll = self._log_prior() + doc.values @ np.log(tokens + alpha) - doc.values.sum() * log_denominator
        if self.unseen == "score" and len(doc.unseen_values):
            jll += doc.unseen_values.sum() * (np.log(alpha) - log_denominator)
        return jll

    def feature_log_prob(self) -> tuple[list, np.ndarray]:
        """(features, log P(w|c) as a (|V|, K) array) over the active classes."""
        store = self.store
        ids = store.feature_ids()
        active = self._active()
        tokens = store.gather_tokens(ids)
        with np.errstate(divide="ignore"):
            log_prob = (np.log(tokens[:, active] + self.alpha)
                        - np.log(store.true_class_tokens()[active] + self.alpha * store.n_features))
        return store.vocabulary.tokens(ids), log_prob

    def log_linear(self) -> LogLinear:
        """bias_c = log P(c), weight_wc = log P(w|c): score_c(x) = bias_c + sum_w x_w weight_wc."""
        features, weights = self.feature_log_prob()
        active = self._active()
        return LogLinear(self.classes, features, self._log_prior()[active], weights)

