"""Multinomial naive Bayes: documents as bags of token counts."""

from __future__ import annotations

import numbers
from collections.abc import Hashable

import numpy as np

from ..errors import InvalidParameterError, UnknownClassError, describe
from ..persist import register_model
from ..store import Label, check_label
from .base import Contributions, DiscreteNB, Document, Encoded, LogLinear


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
    0.6898
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

    def contributions_one(self, x: Document) -> Contributions:
        """The score of x split by feature, over the active classes (what ``evidence`` reads).

        terms[i, c] = x_i log P(w_i|c) for the known features w_i of x; rest[c] = log P(c),
        plus, with unseen="score", the unseen words' sum(x) (log alpha - log(T_c + alpha*|V|)).
        rest + terms.sum(axis=0) is the joint log-likelihood ``predict_log_proba_one`` normalises.
        """
        doc = self._encode(x)
        store = self.store
        active = self._active()
        log_denominator = np.log(store.true_class_tokens() + self.alpha * store.n_features)
        tokens, _ = store.gather(doc.ids)
        with np.errstate(divide="ignore"):
            terms = doc.values[:, None] * (np.log(tokens + self.alpha) - log_denominator)
            rest = self._log_prior().copy()
            if self.unseen == "score" and len(doc.unseen_values):
                rest += doc.unseen_values.sum() * (np.log(self.alpha) - log_denominator)
        return Contributions(self.classes, store.vocabulary.tokens(doc.ids), terms[:, active], rest[active])

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

    def generate(self, label: Label, n_words: int,
                 seed: int | np.random.Generator | None = None) -> dict[Hashable, int]:
        """Sample a bag of n_words words from class label's multinomial P(w|c): word -> count.

        Draws (n_1, ..., n_|V|) ~ Multinomial(n_words, P(.|c)) with
        P(w|c) = (T_cw + alpha) / (T_c + alpha*|V|); words drawn zero times are left out.
        ``seed`` is an int or a numpy Generator; the same seed gives the same bag.
        """
        label = check_label(label)
        c = self.store.class_id(label)
        if c is None or self.store.class_docs[c] <= 0:
            raise UnknownClassError(
                f"cannot generate from class {label!r}: it was never learned (classes: {self.classes})")
        if isinstance(n_words, bool) or not isinstance(n_words, numbers.Integral) or n_words < 0:
            raise InvalidParameterError(f"n_words must be an int >= 0, got {describe(n_words)}")
        if not (seed is None or isinstance(seed, np.random.Generator)
                or (isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0)):
            raise InvalidParameterError(f"seed must be an int >= 0, a numpy Generator or None, got {describe(seed)}")
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        features, log_prob = self.feature_log_prob()
        column = int(np.flatnonzero(self._active() == c)[0])
        p = np.exp(log_prob[:, column])
        counts = rng.multinomial(int(n_words), p / p.sum())
        return {features[i]: int(counts[i]) for i in np.flatnonzero(counts)}
