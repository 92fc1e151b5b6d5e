"""Bernoulli naive Bayes: documents as sets of present words; absent words count too."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING

from ..persist import register_model
from ..validate import Label, check_finite
from .base import DiscreteNB
from .settings import Forgetting, Pruning, Smoothing, Storage, takes_flat_settings
from .values import LogLinear, TextTokenizer

if TYPE_CHECKING:
    from .values import Floats


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
    alpha
        Additive smoothing of p_cw, fixed or chosen online, as ``DiscreteNB``.
    binarize
        A value above this is a present word (any finite number; default 0).
    class_prior, tokenizer, smoothing, forgetting, pruning, storage, ledger, empty_documents
        As ``DiscreteNB``.

    Raises
    ------
    InvalidParameterError
        For a parameter out of its range (``binarize``: not a finite number).
    """

    _kind = "bernoulli"

    @takes_flat_settings
    def __init__(self, alpha: float | str = 1.0, *, binarize: float = 0.0,
                 class_prior: str | Mapping[Label, float] = "mle", tokenizer: TextTokenizer | None = None,
                 smoothing: Smoothing | None = None, forgetting: Forgetting | None = None,
                 pruning: Pruning | None = None, storage: Storage | None = None, ledger: int | None = None,
                 empty_documents: str = "raise") -> None:
        self.binarize = check_finite("binarize", binarize)
        super().__init__(alpha, class_prior=class_prior, tokenizer=tokenizer, smoothing=smoothing,
                         forgetting=forgetting, pruning=pruning, storage=storage, ledger=ledger,
                         empty_documents=empty_documents)

    def _kind_params(self) -> tuple[float | None, float, bool]:
        return None, self.binarize, False

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
