"""Bernoulli naive Bayes: documents as sets of present words; absent words count too."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..persist import register_model
from ..validate import Label, check_finite
from .base import DiscreteNB, LogLinear, TextTokenizer, discrete_args

if TYPE_CHECKING:
    from .base import Floats


@register_model
class BernoulliNB(DiscreteNB):
    """Bernoulli naive Bayes over a growing vocabulary.

    p_cw = (D_cw + alpha) / (D_c + 2*alpha), D_cw documents of class c containing w and D_c
    documents of class c. The score is log P(c) + sum over ALL w in V of
    [x_w log p_cw + (1 - x_w) log(1 - p_cw)], x_w = 1 when the value exceeds ``binarize``.

    The absent-word sum is kept so that a prediction never walks the vocabulary:
    sum_{w in V} log(1 - p_cw) = sum_w log(D_c - D_cw + alpha) - |V| log(D_c + 2*alpha), and
    the first sum only needs, per class, how many features share each value of D_cw (a
    histogram the store keeps up to date); words with D_cw = 0 all contribute
    log(D_c + alpha). A present word then adds log(D_cw + alpha) - log(D_c - D_cw + alpha).
    The formulas are evaluated in the core (src/nb/scorer.rs, ``Terms::Bernoulli``).

    Parameters
    ----------
    alpha, alpha_grid, evidence_half_life, sample_evidence
        Additive smoothing of p_cw, fixed or chosen online, as ``DiscreteNB``.
    class_prior, unseen, tokenizer, allow_zero_alpha, n_buckets, dense_max_classes, empty_documents, ledger
        As ``DiscreteNB``.
    half_life, half_life_seconds, max_features, min_count, expire_after
        Forgetting (the first two) and pruning (the other three): as ``Forgetting`` and ``Pruning``.
    binarize
        A value above this is a present word (any finite number; default 0).

    Raises
    ------
    InvalidParameterError
        For a parameter out of its range (``binarize``: not a finite number).
    """

    _kind = "bernoulli"

    def __init__(self, alpha: float | str = 1.0, *, binarize: float = 0.0,
                 class_prior: str | Mapping[Label, float] = "mle", unseen: str = "ignore",
                 tokenizer: TextTokenizer | None = None, allow_zero_alpha: bool = False,
                 n_buckets: int | None = None, dense_max_classes: int = 4, empty_documents: str = "raise",
                 half_life: float | None = None, half_life_seconds: float | None = None,
                 max_features: int | None = None, min_count: float | None = None,
                 expire_after: int | None = None, ledger: int | None = None,
                 alpha_grid: Sequence[float] | None = None, evidence_half_life: float | None = None,
                 sample_evidence: bool = False) -> None:
        self.binarize = check_finite("binarize", binarize)
        super().__init__(**discrete_args(locals()))

    def _kind_params(self) -> tuple[float | None, float, bool]:
        return None, self.binarize, False

    def get_params(self) -> dict[str, Any]:
        return {**super().get_params(), "binarize": self.binarize}

    def feature_log_prob(self) -> tuple[list[Hashable | None], Floats, Floats]:
        """(features, log p_cw, log(1 - p_cw)) as (|V|, K) arrays over the active classes."""
        _, features, log_p, log_not_p = self._feature_weights()
        assert log_not_p is not None  # the core gives Bernoulli both tables
        return features, log_p, log_not_p

    def log_linear(self) -> LogLinear:
        """For binary x: bias_c = log P(c) + sum_w log(1-p_cw), weight_wc = log p_cw - log(1-p_cw)."""
        features, log_p, log_not_p = self.feature_log_prob()
        bias = self._log_prior() + log_not_p.sum(axis=0)
        return LogLinear(self.classes, features, bias, log_p - log_not_p)
