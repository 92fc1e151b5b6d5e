"""What a discrete model holds and why it predicts what it does: its counts, the log-linear
view, a document's score split by feature, and the report of a smoothing chosen online.

``InspectionParts`` is the part of ``DiscreteNB`` (``base.py``) that reads the counts and
changes nothing.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import numpy as np

    from .values import Floats
else:
    from .._lazy import numpy as np

from ..validate import Label
from .parts import ModelParts
from .values import Contributions, Document, DocumentCounts, SmoothingReport


class InspectionParts(ModelParts):
    """The counts, the weights and the reasons of a prediction (a part of ``DiscreteNB``)."""
    @property
    def smoothing_(self) -> SmoothingReport | None:
        """What the smoothing chosen online is now, and the evidence of each candidate (see
        ``SmoothingReport``); None when the smoothing is fixed."""
        report = self._core.smoothing_report()
        if report is None:
            return None
        pairs, evidence, temperatures, documents, chosen = report
        parameter = "alpha" if self.alpha == "auto" else "mu"
        values = tuple(float(alpha if parameter == "alpha" else cast(float, mu)) for alpha, mu in pairs)
        return SmoothingReport(parameter, values[chosen], values, tuple(evidence), tuple(temperatures), documents)

    def joint_log_likelihood_one(self, x: Document) -> dict[Label, float]:
        """The unnormalised score log P(c) + log P(x | c) of every active class."""
        return self._core.joint_log_likelihood(x, self._call_alpha)

    def contributions_one(self, x: Document) -> Contributions:
        """The score of x split by feature, over the active classes (what ``evidence`` reads).

        rest + terms.sum(axis=0) is the joint log-likelihood ``predict_log_proba_one``
        normalises; each model's docstring says what its terms are.

        Parameters
        ----------
        x
            A document (a mapping, or raw text with a tokenizer).

        Returns
        -------
        Contributions
            The active classes, x's features scored, their (n, K) terms and the rest.
        """
        features, terms, rest, classes = self._core.contributions(x, self._call_alpha)
        return Contributions(classes, features, terms, list(rest))

    def strongest_one(self, x: Document, k: int, positive: Label, negative: Label) -> list[tuple[Hashable, float]]:
        """The k features of x that push its log-odds of ``positive`` against ``negative``
        most, strongest first: (feature, weight), weight the difference of the two classes'
        terms of :meth:`contributions_one` (chosen in the core: what ``evidence`` reads).
        """
        return self._core.strongest(x, self._call_alpha, positive, negative, k)

    def document_counts(self, x: Document) -> DocumentCounts:
        """x's known features with a value > 0 and their document counts (chi-square combining).

        Parameters
        ----------
        x
            The document whose features are looked up.

        Returns
        -------
        DocumentCounts
            Every class of the model, those features, D_cf per class and N_c.
        """
        features, docs = self._core.document_counts(x)
        return DocumentCounts(self._core.labels, features, docs, self._core.class_docs())

    def _feature_weights(self) -> tuple[list[Label], list[Hashable | None], Floats, Floats | None]:
        """(active classes, features in V, first, second weight tables over the active classes)."""
        ids = self.store.feature_ids()
        first, second = self._core.feature_weights(ids.tolist(), self._call_alpha)
        k = self._core.n_classes
        active = np.flatnonzero(self.store.true_class_docs() > 0)

        def table(data: bytearray) -> Floats:
            return np.frombuffer(data, dtype=np.float64).reshape(len(ids), k)[:, active]

        return (self.classes, self.store.vocabulary.tokens(ids), table(first),
                None if second is None else table(second))

    # -- introspection ------------------------------------------------------------------------
    @property
    def n_features(self) -> int:
        """|V|: features with a nonzero count."""
        return self._core.n_features

    @property
    def nbytes(self) -> int:
        """Bytes the model holds in the compiled core (vocabulary, counts, stamps, sums)."""
        return self._core.nbytes()

    @property
    def class_counts(self) -> dict[Label, float]:
        """N_c: documents (sum of weights) per class."""
        return self._core.class_counts()

    def feature_counts(self, feature: Hashable) -> dict[Label, float]:
        """Token counts T_cf of one feature per class (empty when not in V).

        Parameters
        ----------
        feature
            A feature (a token, or a key of the documents' mappings).

        Returns
        -------
        dict
            Active class -> T_cf.
        """
        return self._feature_table(feature, 0)

    def feature_doc_counts(self, feature: Hashable) -> dict[Label, float]:
        """Document counts D_cf of one feature per class (empty when not in V): as
        ``feature_counts``, counting documents."""
        return self._feature_table(feature, 1)

    def _feature_table(self, feature: Hashable, which: int) -> dict[Label, float]:
        ids = self.store.vocabulary.find([feature])
        if ids[0] < 0 or not self.store.known(ids)[0]:
            return {}
        row = self.store.gather(ids)[which][0]
        docs = self._core.class_docs()
        return {label: float(row[c]) for c, label in enumerate(self._core.labels) if docs[c] > 0}

