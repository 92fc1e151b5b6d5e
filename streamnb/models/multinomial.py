"""Multinomial naive Bayes: documents as bags of token counts."""

from __future__ import annotations

import numbers
from collections.abc import Hashable
from typing import NamedTuple

import numpy as np

from ..errors import InvalidParameterError, UnknownClassError, describe
from ..persist import register_model
from ..store import Label, check_label
from .base import Contributions, DiscreteNB, Document, Encoded, LogLinear, _check_positive


class LogProb(NamedTuple):
    """log P(w|c) = numerator[i, c] - denominator[c] for rows of gathered counts.

    Kept apart so that a score sum_i x_i log P(w_i|c) is computed as
    x @ numerator - sum(x) * denominator (one matrix product, as before ``mu`` existed).
    """

    numerator: np.ndarray  # (n, K)
    denominator: np.ndarray  # (K,)
    unseen: float  # the numerator of a word not in V (scored with unseen="score")


@register_model
class MultinomialNB(DiscreteNB):
    """Multinomial naive Bayes over a growing vocabulary.

    log P(w|c) = log(T_cw + alpha) - log(T_c + alpha*|V|), with T_cw the token count of w in
    class c, T_c = sum_w T_cw and |V| the current vocabulary size (the same for every class,
    so a new word changes every denominator at once). The score of a document x is
    log P(c) + sum_w x_w log P(w|c).

    ``mu`` (a finite number > 0; None, the default, keeps the additive smoothing above)
    switches to Dirichlet-prior smoothing toward the pooled distribution (Zhai & Lafferty
    2001)::

        P(w|c) = (T_cw + mu * P(w)) / (T_c + mu),   P(w) = (T_w + alpha) / (T + alpha*|V|)

    with T_w = sum_c T_cw and T = sum_c T_c. A class holding little mass (T_c << mu) stays
    close to the pooled P(w), so a word missing from a small class is weak evidence against
    it; as T_c grows the class's own counts take over. mu is in units of token mass (a
    document of counts weighs its number of tokens). An unseen word scored with
    ``unseen="score"`` has T_cw = T_w = 0: P(w|c) = (mu*alpha / (T + alpha*|V|)) / (T_c + mu).
    Every quantity is a count, so learn / unlearn / merge / forgetting stay exact, and a
    prediction still costs O(distinct tokens x classes) (T_w is the row sum of the counts
    gathered for the document; T and |V| are store totals).

    >>> from streamnb import MultinomialNB
    >>> model = MultinomialNB(alpha=1.0)
    >>> for doc, label in [({"chinese": 2, "beijing": 1}, "china"), ({"chinese": 2, "shanghai": 1}, "china"),
    ...                    ({"chinese": 1, "macao": 1}, "china"), ({"tokyo": 1, "japan": 1, "chinese": 1}, "japan")]:
    ...     _ = model.learn_one(doc, label)
    >>> round(model.predict_proba_one({"chinese": 3, "tokyo": 1, "japan": 1})["china"], 4)
    0.6898
    """

    def __init__(self, alpha: float = 1.0, *, mu: float | None = None, **kwargs) -> None:
        self.mu = _check_positive("mu", mu, integer=False)
        super().__init__(alpha, **kwargs)

    def get_params(self) -> dict:
        return {**super().get_params(), "mu": self.mu}

    def __repr__(self) -> str:
        if self.mu is None:
            return super().__repr__()
        return (f"{type(self).__name__}(alpha={self.alpha!r}, mu={self.mu!r}, classes={len(self.classes)}, "
                f"features={self.n_features})")

    # -- the smoothing formula (the one place it is written) -----------------------------
    def _log_prob(self, tokens: np.ndarray) -> LogProb:
        """log P(w|c) for rows of true token counts T_cw (n, every class of the store).

        Additive: log(T_cw + alpha) - log(T_c + alpha*|V|), unseen numerator log(alpha).
        Dirichlet (``mu``): log(T_cw + mu*P(w)) - log(T_c + mu) with
        P(w) = (T_w + alpha) / (T + alpha*|V|), T_w the row sum; unseen numerator
        log(mu*alpha / (T + alpha*|V|)). Before any token is counted (T + alpha*|V| = 0)
        P(w) is undefined; every class then has T_c = 0 and the same P(w|c), so an unseen
        word is given log P(w|c) = 0 (it cannot tell the classes apart either way).
        """
        store = self.store
        alpha = self.alpha
        class_tokens = store.true_class_tokens()
        with np.errstate(divide="ignore"):
            if self.mu is None:
                return LogProb(np.log(tokens + alpha), np.log(class_tokens + alpha * store.n_features),
                               np.log(alpha) if alpha > 0 else -np.inf)
            mu = self.mu
            pooled = float(class_tokens.sum()) + alpha * store.n_features
            if pooled > 0:
                background = (mu / pooled) * (tokens.sum(axis=1, keepdims=True) + alpha)  # mu * P(w)
                unseen = np.log(mu * alpha / pooled) if alpha > 0 else -np.inf
            else:  # nothing counted yet: V is empty and every T_c = 0
                background, unseen = 0.0, np.log(mu)
            return LogProb(np.log(tokens + background), np.log(class_tokens + mu), unseen)

    def _joint_log_likelihood(self, doc: Encoded) -> np.ndarray:
        parts = self._log_prob(self.store.gather_tokens(doc.ids))
        jll = self._log_prior() + doc.values @ parts.numerator - doc.values.sum() * parts.denominator
        return jll + self._unseen_terms(doc, parts)

    def _unseen_terms(self, doc: Encoded, parts: LogProb) -> np.ndarray | float:
        """With unseen="score", the unseen words' sum(x) log P(unseen|c); 0 otherwise."""
        if self.unseen != "score" or not len(doc.unseen_values):
            return 0.0
        return doc.unseen_values.sum() * (parts.unseen - parts.denominator)

    def contributions_one(self, x: Document) -> Contributions:
        """The score of x split by feature, over the active classes (what ``evidence`` reads).

        terms[i, c] = x_i log P(w_i|c) for the known features w_i of x; rest[c] = log P(c),
        plus, with unseen="score", the unseen words' sum(x) log P(unseen|c) (see ``_log_prob``).
        rest + terms.sum(axis=0) is the joint log-likelihood ``predict_log_proba_one`` normalises.
        """
        doc = self._encode(x)
        store = self.store
        active = self._active()
        parts = self._log_prob(store.gather_tokens(doc.ids))
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = doc.values[:, None] * (parts.numerator - parts.denominator)
            rest = self._log_prior() + self._unseen_terms(doc, parts)
        return Contributions(self.classes, store.vocabulary.tokens(doc.ids), terms[:, active], rest[active])

    def feature_log_prob(self) -> tuple[list, np.ndarray]:
        """(features, log P(w|c) as a (|V|, K) array) over the active classes."""
        store = self.store
        ids = store.feature_ids()
        active = self._active()
        parts = self._log_prob(store.gather_tokens(ids))
        log_prob = parts.numerator[:, active] - parts.denominator[active]
        return store.vocabulary.tokens(ids), log_prob
    def log_linear(self) -> LogLinear:
        """bias_c = log P(c), weight_wc = log P(w|c): score_c(x) = bias_c + sum_w x_w weight_wc."""
        features, weights = self.feature_log_prob()
        active = self._active()
        return LogLinear(self.classes, features, self._log_prior()[active], weights)

    def generate(self, label: Label, n_words: int,
                 seed: int | np.random.Generator | None = None) -> dict[Hashable, int]:
        """Sample a bag of n_words words from class label's multinomial P(w|c): word -> count.

        Draws (n_1, ..., n_|V|) ~ Multinomial(n_words, P(.|c)) with P(w|c) of ``feature_log_prob``
        ((T_cw + alpha) / (T_c + alpha*|V|), or the Dirichlet form with ``mu``; both sum to 1
        over V); words drawn zero times are left out.
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
