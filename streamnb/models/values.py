"""What the discrete naive Bayes models take and give: the types of documents, and the
values their inspection methods return (``LogLinear``, ``Contributions``,
``SmoothingReport``, ``DocumentCounts``).

Each is importable from ``streamnb.models.base`` too, where it was first defined.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, Union, cast

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    from .._lazy import numpy as np

from ..validate import Label

Document = Union[Mapping[Hashable, float], str, bytes]  # text needs a tokenizer
# What a tokenizer returns: feature -> count or weight. The keys are typed Any because Mapping's
# key type is invariant: Mapping[Hashable, float] would refuse the dict[str, int] (Tokenizer,
# EmailTokenizer) and dict[str, float] (EmailWeights) the tokenizers return.
FeatureValues = Mapping[Any, float]
TextTokenizer = Callable[[str], FeatureValues]
if TYPE_CHECKING:
    Floats = npt.NDArray[np.float64]


class LogLinear(NamedTuple):
    """A model as the linear model it is: score_c(x) = bias[c] + x . weights[:, c]."""

    classes: list[Label]
    features: list[Hashable | None]
    bias: Floats  # (K,)
    weights: Floats  # (|V|, K)

    def top(self, k: int) -> dict[Label, list[tuple[Hashable, float]]]:
        """The k features with the largest weight per class (ties: the first listed)."""
        top = {}
        for c, label in enumerate(self.classes):
            order = np.argsort(-self.weights[:, c], kind="stable")[:k]
            top[label] = [(self.features[i], float(self.weights[i, c])) for i in order]
        return top


class Contributions:
    """One document's joint log-likelihood split by feature: jll_c = rest[c] + sum_i terms[i, c].

    ``rest`` holds everything no single feature of the document owns: the class prior, and
    for Bernoulli the sum over absent words; unseen words (when scored) go there too.
    ``terms`` is an (n, K) numpy array; ``rows()`` gives the same numbers as n lists of K
    floats, without numpy (what ``streamnb classify``'s evidence reads).
    """

    __slots__ = ("classes", "features", "rest", "_terms")

    def __init__(self, classes: list[Label], features: list[Hashable], terms: bytes | bytearray,
                 rest: list[float]) -> None:
        self.classes, self.features, self.rest = classes, features, rest
        self._terms = terms  # n * K float64, row by row, as the core returns them

    @property
    def terms(self) -> Floats:
        """(n, K)"""
        return np.frombuffer(self._terms, dtype=np.float64).reshape(len(self.features), len(self.classes))

    def rows(self) -> list[list[float]]:
        k, flat = len(self.classes), cast("list[float]", memoryview(self._terms).cast("d").tolist())
        return [flat[i * k:(i + 1) * k] for i in range(len(self.features))]


class SmoothingReport(NamedTuple):
    """What a model choosing its smoothing online (``alpha="auto"``, ``mu="auto"``) chose and why.

    ``evidence[j]`` is candidate j's tempered log-likelihood of the true classes of the
    documents learned so far (nats, <= 0; see src/smoothing.rs): each document scored before
    it was learned, its joint log-likelihoods divided by ``temperatures[j]``, the temperature
    that fits that candidate best (with ``Smoothing.sample_evidence``, past the first 1,024 documents
    a sample of 1 in 32 of those learned without a prediction is scored, each weighing 32). ``chosen`` is the
    candidate with the largest evidence (ties: the larger value, the smoother model), what
    predictions use now. ``documents`` counts the documents the evidence stands for (those
    learned into a class that, with another, already had documents), scored or not.
    """

    parameter: str
    chosen: float
    candidates: tuple[float, ...]
    evidence: tuple[float, ...]
    temperatures: tuple[float, ...]
    documents: int

    def __str__(self) -> str:
        lines = [f"{self.parameter} chosen online: {self.chosen:g} ({len(self.candidates)} candidates, "
                 f"evidence of {self.documents} documents)"]
        best = max(self.evidence) if self.evidence else 0.0
        for value, evidence, temperature in zip(self.candidates, self.evidence, self.temperatures):
            mark = "  <- chosen" if value == self.chosen else ""
            lines.append(f"  {self.parameter} {value:<10.4g} evidence {evidence:14.2f} nats "
                         f"({evidence - best:+.2f}; temperature {temperature:g}){mark}")
        return "\n".join(lines)


class DocumentCounts:
    """A document's known features (value > 0) with their document counts D_cf per class.

    ``docs`` (n, K) and ``class_docs`` (K, N_c) are numpy arrays; ``rows()`` and ``totals()``
    give the same numbers as lists, without numpy (what ``streamnb classify`` reads).
    """

    __slots__ = ("classes", "features", "_docs", "_class_docs")

    def __init__(self, classes: list[Label], features: list[Hashable], docs: bytes | bytearray,
                 class_docs: list[float]) -> None:
        self.classes, self.features = classes, features  # classes: every class of the model, in index order
        self._docs, self._class_docs = docs, class_docs  # docs: n * K float64, row by row, as the core returns them

    @property
    def docs(self) -> Floats:
        """(n, K)"""
        return np.frombuffer(self._docs, dtype=np.float64).reshape(len(self.features), len(self.classes))

    @property
    def class_docs(self) -> Floats:
        """(K,) N_c"""
        return np.array(self._class_docs, dtype=np.float64)

    def rows(self) -> list[list[float]]:
        k, flat = len(self.classes), cast("list[float]", memoryview(self._docs).cast("d").tolist())
        return [flat[i * k:(i + 1) * k] for i in range(len(self.features))]

    def totals(self) -> list[float]:
        return list(self._class_docs)
