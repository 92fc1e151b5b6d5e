"""Bernoulli naive Bayes: documents as sets of present words; absent words count too."""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import InvalidParameterError, describe
from ..persist import register_model
from .base import Contributions, DiscreteNB, Document, Encoded, LogLinear


@register_model
class BernoulliNB(DiscreteNB):
    """Bernoulli naive Bayes over a growing vocabulary.

    p_cw = (D_cw + alpha) / (D_c + 2*alpha), D_cw documents of class c containing w and D_c
    documents of class c. The score is log P(c) + sum over ALL w in V of
    [x_w log p_cw + (1 - x_w) log(1 - p_cw)], x_w = 1 when the value exceeds ``binarize``.

    The absent-word sum is rewritten so that a prediction never walks the vocabulary:
    sum_{w in V} log(1 - p_cw) = sum_w log(D_c - D_cw + alpha) - |V| log(D_c + 2*alpha), and
    the first sum only needs, per class, how many features share each value of D_cw (a
    histogram the store keeps up to date). Words with D_cw = 0 all contribute log(D_c + alpha).
    A present word then adds log(D_cw + alpha) - log(D_c - D_cw + alpha).
    """

    _needs_doc_histogram = True

    def __init__(self, alpha: float = 1.0, *, binarize: float = 0.0, **kwargs) -> None:
        if isinstance(binarize, bool) or not isinstance(binarize, numbers.Real) or not np.isfinite(binarize):
            raise InvalidParameterError(f"binarize must be a finite number, got {describe(binarize)}")
        self.binarize = float(binarize)
        super().__init__(alpha, **kwargs)
        self._absent_cache: dict[int, tuple[tuple, float, float]] = {}

    def get_params(self) -> dict:
        return {**super().get_params(), "binarize": self.binarize}

    def _present(self, values: np.ndarray) -> np.ndarray:
        return values > self.binarize

    def _learned_values(self, values: np.ndarray) -> np.ndarray:
        return np.ones_like(values)

    def _check_values(self, values: np.ndarray) -> None:
        """Any finite value is fine: it is only compared with the threshold."""

    def _absent_terms(self, c: int) -> tuple[float, float]:
        """(sum over w with D_cw > 0 of log(D_c - D_cw + alpha), number of such w), cached."""
        store = self.store
        key = (store.class_version[c], self.alpha, store.scale)
        cached = self._absent_cache.get(c)
        if cached is not None and cached[0] == key:
            return cached[1], cached[2]
        histogram = store.doc_histogram[c]
        values = np.fromiter(histogram.keys(), float, len(histogram))
        counts = np.fromiter(histogram.values(), float, len(histogram))
        # Sorted, so that the sum does not depend on the order the values arrived in (a
        # loaded or merged model then scores bit for bit like the original).
        order = values.argsort(kind="stable")
        values, counts = values[order] * store.scale, counts[order]
        class_docs = store.class_docs[c] * store.scale
        total = float(counts @ np.log(class_docs - values + self.alpha))
        self._absent_cache[c] = (key, total, float(counts.sum()))
        return total, float(counts.sum())

    def _absent_log_sum(self) -> np.ndarray:
        """sum over w in V of log(1 - p_cw), for every class."""
        store = self.store
        class_docs = store.true_class_docs()
        n_features = store.n_features
        result = np.empty(store.n_classes)
        for c in range(store.n_classes):
            seen, n_seen = self._absent_terms(c)
            result[c] = seen + (n_features - n_seen) * np.log(class_docs[c] + self.alpha)
        return result - n_features * np.log(class_docs + 2 * self.alpha)

    def _joint_log_likelihood(self, doc: Encoded) -> np.ndarray:
        store = self.store
        class_docs = store.true_class_docs()
        jll = self._log_prior() + self._absent_log_sum()
        present = self._present(doc.values)
        jll += self._present_terms(store.gather_docs(doc.ids[present]), class_docs).sum(axis=0)
        return jll + self._unseen_terms(doc, class_docs)

    def _present_terms(self, docs: np.ndarray, class_docs: np.ndarray) -> np.ndarray:
        """log p_cw - log(1 - p_cw) per present word: what it adds to the all-absent score."""
        return np.log(docs + self.alpha) - np.log(class_docs - docs + self.alpha)

    def _unseen_terms(self, doc: Encoded, class_docs: np.ndarray) -> np.ndarray | float:
        """With unseen="score", each unseen present word as a zero-count word: log p_cw with
        D_cw = 0 (it is not in V, so it adds no absent-word term); 0 otherwise."""
        if self.unseen != "score" or not len(doc.unseen_values):
            return 0.0
        n_unseen = int(self._present(doc.unseen_values).sum())
        return n_unseen * (np.log(self.alpha) - np.log(class_docs + 2 * self.alpha))

    def contributions_one(self, x: Document) -> Contributions:
        """The score of x split by present feature, over the active classes (what ``evidence`` reads).

        terms[i, c] = log p_cw - log(1 - p_cw) for the known words w_i present in x (the change
        from "absent" to "present"); rest[c] = log P(c) + sum over ALL w in V of log(1 - p_cw),
        plus the unseen present words' terms with unseen="score".
        rest + terms.sum(axis=0) is the joint log-likelihood ``predict_log_proba_one`` normalises.
        """
        doc = self._encode(x)
        store = self.store
        active = self._active()
        class_docs = store.true_class_docs()
        present = self._present(doc.values)
        ids = doc.ids[present]
        docs = store.gather_docs(ids)
        with np.errstate(divide="ignore"):
            terms = self._present_terms(docs, class_docs)
            rest = self._log_prior() + self._absent_log_sum() + self._unseen_terms(doc, class_docs)
        return Contributions(self.classes, store.vocabulary.tokens(ids), terms[:, active], rest[active])

    def feature_log_prob(self) -> tuple[list, np.ndarray, np.ndarray]:
        """(features, log p_cw, log(1 - p_cw)) as (|V|, K) arrays over the active classes."""
        store = self.store
        ids = store.feature_ids()
        active = self._active()
        docs = store.gather_docs(ids)
        docs = docs[:, active]
        class_docs = store.true_class_docs()[active]
        denominator = np.log(class_docs + 2 * self.alpha)
        with np.errstate(divide="ignore"):
            return (store.vocabulary.tokens(ids), np.log(docs + self.alpha) - denominator,
                    np.log(class_docs - docs + self.alpha) - denominator)

    def log_linear(self) -> LogLinear:
        """For binary x: bias_c = log P(c) + sum_w log(1-p_cw), weight_wc = log p_cw - log(1-p_cw)."""
        features, log_p, log_not_p = self.feature_log_prob()
        active = self._active()
        bias = self._log_prior()[active] + log_not_p.sum(axis=0)
        return LogLinear(self.classes, features, bias, log_p - log_not_p)
