"""Complement naive Bayes (Rennie et al. 2003): each class is scored by what the OTHER classes say."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InvalidParameterError, describe
from ..persist import register_model
from ..store import CountStore
from .base import DiscreteNB, Encoded, LogLinear

# Incremental sums drift by about one rounding error per update, whatever its size (a bulk
# update from learn_many or merge adds its terms to the running sum in one addition, like a
# single document); after this many updates the normaliser is re-derived exactly
# (O(|V| K), i.e. O(|V| K / REDERIVE_EVERY) per update amortised).
REDERIVE_EVERY = 50_000


@dataclass
class _Normaliser:
    """sum_{k in V} log(F_notc,k + alpha) per class, kept in step with one store."""

    store: CountStore
    alpha: float
    scale: float
    versions: tuple  # store.class_version when the sums were last right
    sums: np.ndarray  # (K,) L_c
    zero_sum: float  # L of a class with no counts: sum_k log(total_k + alpha)
    updates: int = 0  # incremental updates since the last exact derivation


@register_model
class ComplementNB(DiscreteNB):
    """Complement naive Bayes over a growing vocabulary, as scikit-learn's ComplementNB.

    theta_cw = log((F_notc,w + alpha) / (F_notc + alpha*|V|)), where F_notc,w = total_w - T_cw is
    the count of w in every class except c and F_notc = sum_w F_notc,w. The weights are
    w_cw = -theta_cw, or with ``norm=True`` (Rennie's weight normalisation)
    w_cw = theta_cw / sum_{k in V} theta_ck, and the score is sum_w x_w w_cw. As in
    scikit-learn the score carries no class prior, except while a single class has been
    seen (then the prior is added, and the probability is 1 anyway).

    Cost: the normaliser sum_{k in V} theta_ck = L_c - |V| log(F_notc + alpha*|V|) needs
    L_c = sum_{k in V} log(F_notc,k + alpha), a sum over the whole vocabulary. It is kept
    incrementally: every count change replaces the old terms of the touched features by
    their new ones (O(features touched x K)); a new feature adds a term to every class, a
    feature leaving V removes its terms. The sums are re-derived exactly (O(|V| K)) after
    ``REDERIVE_EVERY`` incremental updates and whenever the counts changed behind the
    hook (pruning, rescaling, decay, a restored backup, a loaded file). So predict_one is
    O(distinct tokens x classes) with and without ``norm``, except the first prediction
    after such a change (forgetting that rescales the counts at every update therefore
    costs O(|V| K) per normalised prediction).

    TWCNB (Rennie's transformed, weight-normalised CNB) is this model with ``norm=True``
    fed TF-IDF documents: transform each document (tf -> log(1 + tf), times IDF, then L2
    length normalisation) before learn_one and before predict_one, e.g. with
    ``streamnb.text.OnlineTfidf`` (``learn_one(x)`` then ``transform_one(x)``). Float
    values are learned as (fractional) counts. A unit-length document carries little mass,
    so alpha = 1 smooths it away on a large vocabulary: on the SpamAssassin stream
    alpha = 0.01 did far better (benchmarks/bench_complement.py).

    ``alpha`` must be > 0: with alpha = 0 a word seen in one class only has an infinite weight.
    """

    def __init__(self, alpha: float = 1.0, *, norm: bool = False, **kwargs) -> None:
        if not isinstance(norm, (bool, np.bool_)):
            raise InvalidParameterError(f"norm must be True or False, got {describe(norm)}")
        if kwargs.get("allow_zero_alpha"):
            raise InvalidParameterError(
                "ComplementNB needs alpha > 0 (allow_zero_alpha=True is not supported): with alpha = 0 "
                "a word seen in only one class gets an infinite weight")
        self.norm = bool(norm)
        super().__init__(alpha, **kwargs)
        self._normaliser: _Normaliser | None = None

    def get_params(self) -> dict:
        return {**super().get_params(), "norm": self.norm}

    # -- scoring ----------------------------------------------------------------------
    def _complement_log_denominator(self) -> np.ndarray:
        """log(F_notc + alpha*|V|) for every class, F_notc = T - T_c."""
        class_tokens = self.store.true_class_tokens()
        return np.log(class_tokens.sum() - class_tokens + self.alpha * self.store.n_features)

    def _complement_log_prob(self, tokens: np.ndarray, log_denominator: np.ndarray) -> np.ndarray:
        """theta_cw = log(F_notc,w + alpha) - log(F_notc + alpha*|V|) for rows of (n, K) token counts."""
        total = tokens.sum(axis=1, keepdims=True)
        return np.log(total + self.alpha - tokens) - log_denominator

    def _joint_log_likelihood(self, doc: Encoded) -> np.ndarray:
        store = self.store
        log_denominator = self._complement_log_denominator()
        tokens = store.gather_tokens(doc.ids)
        theta_x = doc.values @ self._complement_log_prob(tokens, log_denominator)  # sum_w x_w theta_cw
        if self.unseen == "score" and len(doc.unseen_values):
            # An unseen word as a zero-count word: F_notc,w = 0 for every class.
            theta_x = theta_x + doc.unseen_values.sum() * (np.log(self.alpha) - log_denominator)
        if self.norm:
            jll = _normalised(theta_x, self._theta_sums(log_denominator), store.n_features)
        else:
            jll = -theta_x
        if len(self._active()) == 1:
            jll = jll + self._log_prior()
        return jll

    def _log_likelihood(self, doc: Encoded) -> np.ndarray:
        """The complement score without the prior it borrows while a single class is seen."""
        jll = self._joint_log_likelihood(doc)
        if len(self._active()) == 1:
            with np.errstate(invalid="ignore"):
                jll = jll - self._log_prior()
        return jll

    def _theta_sums(self, log_denominator: np.ndarray) -> np.ndarray:
        """sum_{k in V} theta_ck = L_c - |V| log(F_notc + alpha*|V|), for every class."""
        state = self._synced_normaliser()
        if state is None or state.updates >= REDERIVE_EVERY:
            state = self._derive_normaliser()
        return state.sums - self.store.n_features * log_denominator

    def feature_log_prob(self) -> tuple[list, np.ndarray]:
        """(features, weights w_cw as a (|V|, K) array over the active classes).

        These equal scikit-learn's ``feature_log_prob_.T``: -theta, or theta / sum_k theta_ck.
        """
        store = self.store
        ids = store.feature_ids()
        active = self._active()
        tokens = store.gather_tokens(ids)
        theta = self._complement_log_prob(tokens, self._complement_log_denominator())
        weights = _normalised(theta, theta.sum(axis=0), store.n_features) if self.norm else -theta
        return store.vocabulary.tokens(ids), weights[:, active]

    def log_linear(self) -> LogLinear:
        """bias_c = 0 (log P(c) while a single class is seen), weight_wc = w_cw."""
        features, weights = self.feature_log_prob()
        active = self._active()
        bias = self._log_prior()[active] if len(active) == 1 else np.zeros(len(active))
        return LogLinear(self.classes, features, bias, weights)

    # -- the normaliser L_c -----------------------------------------------------------
    def _update_counts(self, c: int, ids: np.ndarray, token_delta: np.ndarray, doc_delta: np.ndarray,
                       docs_delta: float) -> None:
        """Change counts through the store and move L_c by the new terms minus the old ones."""
        state = self._synced_normaliser() if self.norm else None
        if state is None:
            # Without norm nothing to keep; a stale normaliser is re-derived when next needed.
            self.store.update(c, ids, token_delta, doc_delta, docs_delta)
            return
        before, before_zero = self._log_terms(ids)
        self.store.update(c, ids, token_delta, doc_delta, docs_delta)  # raises: nothing changed
        after, after_zero = self._log_terms(ids)
        state.sums = state.sums + (after - before)
        state.zero_sum += after_zero - before_zero
        state.versions = tuple(self.store.class_version)
        state.updates += 1

    def _log_terms(self, ids: np.ndarray) -> tuple[np.ndarray, float]:
        """Over the features among ids that are in V: (sum log(total_k - T_ck + alpha) per class,
        sum log(total_k + alpha), the terms of a class with no counts)."""
        store = self.store
        ids = ids[store.known(ids)]
        tokens = store.gather_tokens(ids)
        total = tokens.sum(axis=1, keepdims=True)
        return np.log(total + self.alpha - tokens).sum(axis=0), float(np.log(total + self.alpha).sum())

    def _synced_normaliser(self) -> _Normaliser | None:
        """The maintained sums if they still match the store, else None (re-derive).

        Classes added since the last update have no counts yet, so their L is zero_sum.
        Any other change the hook did not see shows up in class_version or the scale.
        """
        state, store = self._normaliser, self.store
        if state is None or state.store is not store or state.alpha != self.alpha or state.scale != store.scale:
            return None
        known = len(state.versions)
        if tuple(store.class_version[:known]) != state.versions or any(store.class_version[known:]):
            return None
        if store.n_classes > known:
            state.sums = np.append(state.sums, np.full(store.n_classes - known, state.zero_sum))
            state.versions = tuple(store.class_version)
        return state

    def _derive_normaliser(self) -> _Normaliser:
        """L_c from scratch: O(|V| K)."""
        store = self.store
        sums, zero_sum = self._log_terms(store.feature_ids())
        self._normaliser = _Normaliser(store, self.alpha, store.scale, tuple(store.class_version), sums, zero_sum)
        return self._normaliser


def _normalised(theta: np.ndarray, sums: np.ndarray, n_features: int) -> np.ndarray:
    """Rennie's weight normalisation theta_c / sum_{k in V} theta_ck.

    With |V| >= 2 and alpha > 0 every theta is < 0, so the sum is too. With |V| = 1 the
    one theta is log 1 = 0 and the ratio 0/0 is taken as 0 (scikit-learn gives NaN): a
    single word tells the classes nothing.
    """
    if n_features <= 1:
        return np.zeros(np.broadcast(theta, sums).shape)
    return theta / sums
