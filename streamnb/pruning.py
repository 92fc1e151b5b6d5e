"""Feature selection by mutual information with the class (``DiscreteNB.select_features``).

The pruning policies (expiry, minimum count, the size cap) select in the core
(src/pruning.rs, ``DiscreteNB.prune``). Dropping takes the features' counts out of the
class totals too, so a pruned model equals a batch model whose vocabulary never had them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
else:
    from ._lazy import numpy as np


def mutual_information(docs: np.ndarray, class_docs: np.ndarray) -> np.ndarray:
    """I(presence of w; class) in nats for each feature, from document counts.

    docs is (|F|, K) with D_cw, class_docs is (K,) with N_c, N = sum_c N_c. With
    P(1, c) = D_cw / N, P(0, c) = (N_c - D_cw) / N, P(c) = N_c / N, P(1) = D_w / N:
    I = sum_{e in {0,1}} sum_c P(e, c) log(P(e, c) / (P(e) P(c))), where 0 log 0 = 0.

    Parameters
    ----------
    docs : numpy.ndarray
        (|F|, K): D_cw, the documents of class c holding feature w.
    class_docs : numpy.ndarray
        (K,): N_c, the documents of class c.

    Returns
    -------
    numpy.ndarray
        (|F|,): the mutual information of each feature with the class, in nats.
    """
    docs = np.asarray(docs, dtype=float)
    total = float(class_docs.sum())
    if total <= 0 or not docs.size:
        return np.zeros(docs.shape[0])
    p_class = class_docs / total
    present = docs / total
    absent = np.maximum(class_docs[None, :] - docs, 0.0) / total  # rounding may leave -1e-17
    p_present = present.sum(axis=1, keepdims=True)
    p_absent = np.maximum(1.0 - p_present, 0.0)
    return _plogp_ratio(present, p_present * p_class).sum(axis=1) + _plogp_ratio(absent, p_absent * p_class).sum(axis=1)


def _plogp_ratio(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """p log(p / q), with 0 where p = 0."""
    positive = p > 0
    out = np.zeros_like(p)
    out[positive] = p[positive] * np.log(p[positive] / q[positive])
    return out
