"""Complement naive Bayes (Rennie et al. 2003): each class is scored by what the OTHER classes say."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING

from ..errors import InvalidParameterError
from ..persist import register_model
from ..validate import Label, check_bool, check_complement_alpha
from .base import DiscreteNB
from .settings import Forgetting, Pruning, Smoothing, Storage, resolved, takes_flat_settings
from .values import LogLinear, TextTokenizer

if TYPE_CHECKING:
    import numpy as np

    from .values import Floats
else:
    from .._lazy import numpy as np


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
    L_c = sum_{k in V} log(F_notc,k + alpha), a sum over the whole vocabulary. The core keeps
    it incrementally (every count change replaces the old terms of the touched features by
    the new ones, O(features touched x K)) and re-derives it exactly (O(|V| K)) every
    ``streamnb._core.REDERIVE_EVERY`` updates and whenever the counts changed behind it
    (pruning, rescaling, decay, a loaded file). So predict_one is O(distinct tokens x
    classes) with and without ``norm``, except the first prediction after such a change.

    TWCNB (Rennie's transformed, weight-normalised CNB) is this model with ``norm=True``
    fed TF-IDF documents (``streamnb.features.text.OnlineTfidf``: ``learn_one(x)`` then
    ``transform_one(x)``). A unit-length document carries little mass, so alpha = 1
    smooths it away on a large vocabulary: on the SpamAssassin stream alpha = 0.01 did far
    better (benchmarks/bench_complement.py).

    Parameters
    ----------
    alpha
        Additive smoothing of theta, fixed or chosen online, as ``DiscreteNB``. ``alpha``
        must be > 0: with alpha = 0 a word seen in one class only has an infinite weight
        (``Smoothing(allow_zero_alpha=True)`` is refused).
    norm
        Rennie's weight normalisation (a bool; default False).
    class_prior, tokenizer, smoothing, forgetting, pruning, storage, ledger, empty_documents
        As ``DiscreteNB``.

    Raises
    ------
    InvalidParameterError
        For a parameter out of its range, ``norm`` not a bool, or ``Smoothing(allow_zero_alpha=True)``.
    """

    _kind = "complement"

    @takes_flat_settings
    def __init__(self, alpha: float | str = 1.0, *, norm: bool = False,
                 class_prior: str | Mapping[Label, float] = "mle", tokenizer: TextTokenizer | None = None,
                 smoothing: Smoothing | None = None, forgetting: Forgetting | None = None,
                 pruning: Pruning | None = None, storage: Storage | None = None, ledger: int | None = None,
                 empty_documents: str = "raise") -> None:
        self.norm = check_bool("norm", norm, InvalidParameterError)
        check_complement_alpha(resolved(smoothing, Smoothing).allow_zero_alpha)
        super().__init__(alpha, class_prior=class_prior, tokenizer=tokenizer, smoothing=smoothing,
                         forgetting=forgetting, pruning=pruning, storage=storage, ledger=ledger,
                         empty_documents=empty_documents)

    def _kind_params(self) -> tuple[float | None, float, bool]:
        return None, 0.0, self.norm

    def feature_log_prob(self) -> tuple[list[Hashable | None], Floats]:
        """(features, weights w_cw as a (|V|, K) array over the active classes).

        These equal scikit-learn's ``feature_log_prob_.T``: -theta, or theta / sum_k theta_ck.
        """
        _, features, weights, _ = self._feature_weights()
        return features, weights

    def log_linear(self) -> LogLinear:
        """bias_c = 0 (log P(c) while a single class is seen), weight_wc = w_cw."""
        classes, features, weights, _ = self._feature_weights()
        bias = self._log_prior() if len(classes) == 1 else np.zeros(len(classes))
        return LogLinear(classes, features, bias, weights)
