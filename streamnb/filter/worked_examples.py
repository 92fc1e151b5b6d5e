"""The small worked examples of the literature, with the numbers their sources print.

:func:`china_japan` (Manning, Raghavan & Schuetze 2008, chapter 13) for the multinomial and
Bernoulli models, and :func:`play_tennis` (Mitchell 1997) for categorical naive Bayes. Each
carries the reference numbers the source prints, as exact fractions.
:mod:`streamnb.filter.datasets` re-exports every name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

__all__ = ["WorkedExample", "china_japan", "play_tennis"]


@dataclass(frozen=True)
class WorkedExample:
    """A tiny data set from a textbook, with the numbers the book computes on it.

    ``train`` holds (x, y) pairs, ``test`` the x to classify; ``expected`` maps a model
    name to {class: unnormalised score P(c) * prod P(x_i|c)} as an exact Fraction, plus
    the predicted class under ``"<model>_prediction"``.
    """

    name: str
    citation: str
    train: tuple[tuple[Any, str], ...]
    test: tuple[Any, ...]
    expected: Mapping[str, Any]


def _word_counts(text: str) -> dict[str, int]:
    return dict(Counter(text.split()))


def china_japan(as_text: bool = False) -> WorkedExample:
    """The China example of Manning, Raghavan & Schuetze, Introduction to IR (2008), ch. 13.

    Table 13.1: four training documents with class "China" or "not China" (the book's
    binary class c = China and its complement; document 4 is the Japanese one), test
    document 5 "Chinese Chinese Chinese Tokyo Japan". Vocabulary: 6 words.

    Example 13.1 (multinomial, add-one smoothing): P(Chinese|c) = 6/14 = 3/7,
    P(Tokyo|c) = P(Japan|c) = 1/14; P(Chinese|not c) = P(Tokyo|not c) = P(Japan|not c) = 2/9;
    scores 3/4 * (3/7)^3 * (1/14)^2 ~ 0.0003 and 1/4 * (2/9)^5 ~ 0.0001: "China".

    Example 13.2 (Bernoulli, add-one smoothing): P(Chinese|c) = 4/5, P(Japan|c) = P(Tokyo|c)
    = 1/5, P(Beijing|c) = P(Macao|c) = P(Shanghai|c) = 2/5; P(Chinese|not c) = P(Japan|not c)
    = P(Tokyo|not c) = 2/3, the others 1/3; scores ~0.005 and ~0.022: "not China".

    ``x`` is a word-count dict, or the raw text with ``as_text=True``.

    Parameters
    ----------
    as_text : bool
        Give the documents as text rather than as word counts.

    Returns
    -------
    WorkedExample
        The data and the book's numbers.
    """
    docs = [
        ("Chinese Beijing Chinese", "China"),
        ("Chinese Chinese Shanghai", "China"),
        ("Chinese Macao", "China"),
        ("Tokyo Japan Chinese", "not China"),
    ]
    test_doc = "Chinese Chinese Chinese Tokyo Japan"
    f = Fraction
    expected = {
        "multinomial": {
            "China": f(3, 4) * f(3, 7) ** 3 * f(1, 14) ** 2,
            "not China": f(1, 4) * f(2, 9) ** 5,
        },
        "multinomial_prediction": "China",
        "bernoulli": {
            # present: Chinese, Tokyo, Japan; absent: Beijing, Shanghai, Macao
            "China": f(3, 4) * f(4, 5) * f(1, 5) * f(1, 5) * (1 - f(2, 5)) ** 3,
            "not China": f(1, 4) * f(2, 3) ** 3 * (1 - f(1, 3)) ** 3,
        },
        "bernoulli_prediction": "not China",
        "alpha": 1,
    }
    make = (lambda t: t) if as_text else _word_counts
    return WorkedExample(
        name="china_japan",
        citation=(
            "C. D. Manning, P. Raghavan, H. Schuetze, Introduction to Information Retrieval, "
            "Cambridge University Press, 2008, chapter 13, Table 13.1, Examples 13.1 and 13.2"
        ),
        train=tuple((make(text), label) for text, label in docs),
        test=(make(test_doc),),
        expected=expected,
    )


def play_tennis() -> WorkedExample:
    """The PlayTennis data of Mitchell, Machine Learning (1997), Table 3.2, for categorical NB.

    14 days described by outlook, temperature, humidity and wind, class "yes"/"no" (9 yes,
    5 no; the data go back to Quinlan 1986). Section 6.9.1 classifies the new day
    (sunny, cool, high, strong) with unsmoothed (maximum-likelihood) estimates:
    P(yes) P(sunny|yes) P(cool|yes) P(high|yes) P(strong|yes) = 9/14 * 2/9 * 3/9 * 3/9 * 3/9
    ~ 0.0053 and the same for "no" = 5/14 * 3/5 * 1/5 * 4/5 * 3/5 ~ 0.0206: "no".
    Values are lower-case strings; features are named outlook, temperature, humidity, wind.
    """
    rows = [
        ("sunny", "hot", "high", "weak", "no"),
        ("sunny", "hot", "high", "strong", "no"),
        ("overcast", "hot", "high", "weak", "yes"),
        ("rain", "mild", "high", "weak", "yes"),
        ("rain", "cool", "normal", "weak", "yes"),
        ("rain", "cool", "normal", "strong", "no"),
        ("overcast", "cool", "normal", "strong", "yes"),
        ("sunny", "mild", "high", "weak", "no"),
        ("sunny", "cool", "normal", "weak", "yes"),
        ("rain", "mild", "normal", "weak", "yes"),
        ("sunny", "mild", "normal", "strong", "yes"),
        ("overcast", "mild", "high", "strong", "yes"),
        ("overcast", "hot", "normal", "weak", "yes"),
        ("rain", "mild", "high", "strong", "no"),
    ]
    features = ("outlook", "temperature", "humidity", "wind")
    f = Fraction
    return WorkedExample(
        name="play_tennis",
        citation=(
            "T. M. Mitchell, Machine Learning, McGraw-Hill, 1997, Table 3.2 (data) and "
            "section 6.9.1 (naive Bayes on the new instance)"
        ),
        train=tuple((dict(zip(features, row[:4])), row[4]) for row in rows),
        test=({"outlook": "sunny", "temperature": "cool", "humidity": "high", "wind": "strong"},),
        expected={
            "categorical": {
                "yes": f(9, 14) * f(2, 9) * f(3, 9) * f(3, 9) * f(3, 9),
                "no": f(5, 14) * f(3, 5) * f(1, 5) * f(4, 5) * f(3, 5),
            },
            "categorical_prediction": "no",
            "alpha": 0,
        },
    )
