"""Multinomial naive Bayes: documents as bags of token counts."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from ..errors import UnknownClassError
from ..persist import register_model
from ..validate import Label, check_auto_grid, check_count, check_label, check_one_auto, check_positive, check_seed
from .base import DiscreteNB, Document, LogLinear, TextTokenizer, discrete_args

if TYPE_CHECKING:
    import numpy as np

    from .base import Floats
else:
    from .._lazy import numpy as np


#: mu="auto": the candidates when no ``mu_grid`` is given, 10^1.5 to 10^5 in half decades (mu is
#: in units of token mass: a class that holds much less than mu stays near the pooled
#: distribution); the best fixed mu measured lies inside it (benchmarks/bench_smoothing.py;
#: CHANGELOG.md, "Defaults and the measurements that chose them").
DEFAULT_MU_GRID = tuple(10.0 ** (k / 2) for k in range(3, 11))


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
    it; as T_c grows the class's own counts take over. mu is in units of token mass. Every
    quantity is a count, so learn / unlearn / merge / forgetting stay exact, and a
    prediction still costs O(distinct tokens x classes). The formulas are evaluated in the
    core (src/nb/scorer.rs, ``Terms::Additive``, ``Terms::Dirichlet``).

    Parameters
    ----------
    alpha, alpha_grid, evidence_half_life, sample_evidence
        Additive smoothing, fixed or chosen online, as ``DiscreteNB``. With ``mu``, alpha
        only smooths the pooled distribution P(w).
    class_prior, unseen, tokenizer, allow_zero_alpha, n_buckets, dense_max_classes, empty_documents, ledger
        As ``DiscreteNB``.
    half_life, half_life_seconds, max_features, min_count, expire_after
        Forgetting (the first two) and pruning (the other three): as ``Forgetting`` and ``Pruning``.
    mu
        Dirichlet-prior smoothing (above): a finite number > 0, None (additive smoothing
        alone), or ``"auto"``: chosen online among ``mu_grid`` as ``alpha="auto"`` chooses
        alpha; alpha stays fixed then (both at once are refused).
    mu_grid
        The candidates of ``mu="auto"`` (distinct numbers > 0; default ``DEFAULT_MU_GRID``).

    Raises
    ------
    InvalidParameterError
        For a parameter out of its range, a grid without its ``"auto"``, or alpha and mu
        both ``"auto"``.

    >>> from streamnb import MultinomialNB
    >>> model = MultinomialNB(alpha=1.0)
    >>> for doc, label in [({"chinese": 2, "beijing": 1}, "china"), ({"chinese": 2, "shanghai": 1}, "china"),
    ...                    ({"chinese": 1, "macao": 1}, "china"), ({"tokyo": 1, "japan": 1, "chinese": 1}, "japan")]:
    ...     _ = model.learn_one(doc, label)
    >>> round(model.predict_proba_one({"chinese": 3, "tokyo": 1, "japan": 1})["china"], 4)
    0.6898
    """

    _kind = "multinomial"

    def __init__(self, alpha: float | str = 1.0, *, mu: float | str | None = None,
                 mu_grid: Sequence[float] | None = None,
                 class_prior: str | Mapping[Label, float] = "mle", unseen: str = "ignore",
                 tokenizer: TextTokenizer | None = None, allow_zero_alpha: bool = False,
                 n_buckets: int | None = None, dense_max_classes: int = 4, empty_documents: str = "raise",
                 half_life: float | None = None, half_life_seconds: float | None = None,
                 max_features: int | None = None, min_count: float | None = None,
                 expire_after: int | None = None, ledger: int | None = None,
                 alpha_grid: Sequence[float] | None = None, evidence_half_life: float | None = None,
                 sample_evidence: bool = False) -> None:
        check_one_auto(alpha, mu)
        self.mu: float | str | None = "auto" if mu == "auto" else check_positive("mu", mu, integer=False)
        self.mu_grid = check_auto_grid("mu", mu, mu_grid, DEFAULT_MU_GRID)
        super().__init__(**discrete_args(locals()))

    def _kind_params(self) -> tuple[float | None, float, bool]:
        # with mu chosen online, each candidate carries its own (src/smoothing.rs)
        return (None if self.mu == "auto" else cast("float | None", self.mu)), 0.0, False

    def _candidates(self) -> list[tuple[float, float | None]] | None:
        if self.mu_grid is None:
            return super()._candidates()
        return [(cast(float, self.alpha), mu) for mu in self.mu_grid]

    def get_params(self) -> dict[str, Any]:
        return {**super().get_params(), "mu": self.mu, "mu_grid": self.mu_grid}

    def __repr__(self) -> str:
        if self.mu is None:
            return super().__repr__()
        return (f"{type(self).__name__}(alpha={self.alpha!r}, mu={self.mu!r}, classes={len(self.classes)}, "
                f"features={self.n_features})")

    def feature_log_prob(self) -> tuple[list[Hashable | None], Floats]:
        """(features, log P(w|c) as a (|V|, K) array) over the active classes."""
        _, features, log_prob, _ = self._feature_weights()
        return features, log_prob

    def log_linear(self) -> LogLinear:
        """bias_c = log P(c), weight_wc = log P(w|c): score_c(x) = bias_c + sum_w x_w weight_wc."""
        classes, features, weights, _ = self._feature_weights()
        return LogLinear(classes, features, self._log_prior(), weights)

    def log_odds_against_uniform_one(self, x: Document, label: Label) -> float:
        """log P(x | label) - log U(x), U uniform over the vocabulary (1/|V| per unit of mass).

        Summed over x's known features with the values a prediction uses (unseen ones left
        out, as predictions leave them out by default). U is what additive smoothing gives a
        class that has learned nothing (alpha / (alpha |V|)), so this is the log-odds of
        ``label`` against such a class with equal priors: large when x resembles what
        ``label`` learned, low when x is new to it. :class:`streamnb.filter.decision.SpamFilter`
        scores with it while the model has learned only one of its two classes. Computed in
        the core (src/nb/predict.rs, ``log_odds_against_uniform``).

        Parameters
        ----------
        x
            A document (a mapping, or raw text with a tokenizer).
        label
            A class the model has learned.

        Returns
        -------
        float
            The log-odds, in nats.

        Raises
        ------
        UnknownClassError
            When ``label`` has learned nothing.
        """
        # the core answers None only for models that are not multinomial
        return cast(float, self._core.log_odds_against_uniform(x, check_label(label), self._call_alpha))

    def generate(self, label: Label, n_words: int,
                 seed: int | np.random.Generator | None = None) -> dict[Hashable, int]:
        """Sample a bag of n_words words from class label's multinomial P(w|c): word -> count.

        Draws (n_1, ..., n_|V|) ~ Multinomial(n_words, P(.|c)) with P(w|c) of ``feature_log_prob``
        (both smoothings sum to 1 over V); words drawn zero times are left out.

        Parameters
        ----------
        label
            A class the model has learned.
        n_words
            How many words to draw (an int >= 0).
        seed
            An int >= 0, a numpy Generator, or None; the same seed gives the same bag.

        Returns
        -------
        dict
            Word -> how many times it was drawn (words drawn at least once).

        Raises
        ------
        UnknownClassError
            For a class never learned.
        InvalidParameterError
            For n_words or seed out of range.
        """
        label = check_label(label)
        if label not in self.classes:
            raise UnknownClassError(
                f"cannot generate from class {label!r}: it was never learned (classes: {self.classes})")
        n_words = check_count("n_words", n_words)
        seed = check_seed(seed)
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        features, log_prob = self.feature_log_prob()
        p = np.exp(log_prob[:, self.classes.index(label)])
        counts = rng.multinomial(n_words, p / p.sum())
        return {features[i]: int(counts[i]) for i in np.flatnonzero(counts)}
