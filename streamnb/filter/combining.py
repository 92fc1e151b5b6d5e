"""Chi-square combining: Fisher's method and Gary Robinson's degrees of belief, as SpamBayes uses them.

The maths of :class:`~streamnb.filter.rules.ChiSquareRule`: per-word spam probabilities f(w)
(:func:`robinson_probabilities`), Fisher's combined p-value (:func:`fisher_combine`, on the
chi-square survival function :func:`chi2_sf_even`) and the indicator I = (1 + H - S) / 2
(:func:`chi_square_indicator`). Plain ``math``: no numpy.

References: G. Robinson, "A statistical approach to the spam problem", Linux Journal 107
(2003); R. A. Fisher, Statistical Methods for Research Workers (1925), section 21.1 (combining
independent tests); the SpamBayes project's defaults (strength 0.45, background 0.5, minimum
distance 0.1 from 0.5, 150 discriminators, cutoffs 0.20/0.90).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Hashable, Iterable
from typing import NamedTuple

from ..errors import InvalidInputError, describe
from ..validate import check_even_dof

__all__ = ["chi2_sf_even", "fisher_combine", "robinson_probabilities", "ChiSquareResult", "chi_square_indicator"]


def chi2_sf_even(statistic: float, dof: int) -> float:
    """P(X >= statistic) for X ~ chi-square with an even number of degrees of freedom dof = 2n.

    Exact closed form for even dof: with m = statistic / 2,
    P = exp(-m) * sum_{i=0}^{n-1} m^i / i!  (the probability of at most n-1 events of a
    Poisson(m) variable). Summed in log space, so it neither overflows nor underflows
    early for the hundreds of terms a long message can give.

    >>> round(chi2_sf_even(4.0, 4), 9)  # exp(-2) * (1 + 2)
    0.40600585

    Parameters
    ----------
    statistic : float
        The chi-square value (>= 0).
    dof : int
        The degrees of freedom (even, >= 2).

    Returns
    -------
    float
        The survival probability.

    Raises
    ------
    InvalidParameterError
        For a ``dof`` that is not an even int >= 2.
    InvalidInputError
        For a negative statistic.
    """
    check_even_dof(dof)
    if not statistic >= 0:
        raise InvalidInputError(f"a chi-square statistic must be >= 0, got {describe(statistic)}")
    m = statistic / 2.0
    if m == 0.0:
        return 1.0
    log_m = math.log(m)
    log_terms = [i * log_m - m - math.lgamma(i + 1.0) for i in range(dof // 2)]  # lgamma(i + 1) = log(i!)
    top = max(log_terms)
    return min(1.0, math.exp(top) * math.fsum(math.exp(t - top) for t in log_terms))


def fisher_combine(p_values: Iterable[float]) -> float:
    """Fisher's combined p-value: P(chi2 with 2n dof >= -2 sum ln p_i); 1.0 for no p-values.

    If the p_i were independent and uniform on (0, 1), -2 sum ln p_i would follow a
    chi-square distribution with 2n degrees of freedom; a small result says they are
    jointly too small to be chance.

    >>> round(fisher_combine([0.9, 0.2, 0.21, 0.89, 0.2, 0.78]), 9)  # Robinson's first example
    0.572203879

    Parameters
    ----------
    p_values : iterable of float
        The p-values, each in (0, 1].

    Returns
    -------
    float
        The combined p-value.

    Raises
    ------
    InvalidInputError
        For a p-value outside (0, 1].
    """
    p = [float(v) for v in p_values]
    if not p:
        return 1.0
    bad = [v for v in p if not 0.0 < v <= 1.0]
    if bad:
        raise InvalidInputError(f"p-values must be in (0, 1], got {bad[0]!r}")
    return chi2_sf_even(max(0.0, -2.0 * math.fsum(map(math.log, p))), 2 * len(p))


def robinson_probabilities(spam_docs: Iterable[float], ham_docs: Iterable[float], n_spam: float, n_ham: float,
                           strength: float = 0.45, background: float = 0.5) -> array[float]:
    """Robinson's degree of belief f(w) that a message containing word w is spam, per word.

    With D_spam,w and D_ham,w the spam and ham messages containing w, and N_spam, N_ham
    the messages of each class: b(w) = D_spam,w / N_spam, g(w) = D_ham,w / N_ham,
    p(w) = b(w) / (b(w) + g(w)) (the class sizes cancel out), and, with n = D_spam,w + D_ham,w,

        f(w) = (s * x + n * p(w)) / (s + n),

    a background belief x (0.5: no opinion) worth s messages, which the word's own data
    outweighs as n grows. A word never seen (n = 0) gets x; so does every word while a
    class has no messages (no comparison possible). Returns an ``array.array`` of floats
    (``np.asarray`` reads it without a copy).

    Parameters
    ----------
    spam_docs, ham_docs : iterable of float
        D_spam,w and D_ham,w of each word.
    n_spam, n_ham : float
        The messages of each class.
    strength : float
        s, the weight of the background belief, in messages.
    background : float
        x, the belief in a word never seen.

    Returns
    -------
    array.array
        f(w) of each word.
    """
    pairs = list(zip(map(float, spam_docs), map(float, ham_docs), strict=True))
    if n_spam <= 0 or n_ham <= 0:
        return array("d", [float(background)] * len(pairs))
    f = array("d")
    for spam, ham in pairs:
        b, g = spam / n_spam, ham / n_ham
        p = b / (b + g) if b + g > 0 else float(background)
        n = spam + ham
        f.append((strength * background + n * p) / (strength + n))
    return f


class ChiSquareResult(NamedTuple):
    """Chi-square combining of one message: indicator I = (1 + H - S) / 2, its parts, the clues used."""

    indicator: float
    ham_p: float  # H: Fisher's combined p-value of the f(w) (near 0: many hammy words)
    spam_p: float  # S: Fisher's combined p-value of the 1 - f(w) (near 0: many spammy words)
    clues: list[tuple[Hashable, float]]  # [(feature, f(w))] of the words used, most extreme first


def chi_square_indicator(probabilities: Iterable[float]) -> tuple[float, float, float]:
    """(I, H, S) of Robinson's chi-square combining for the given word probabilities f(w).

    H = C^-1(-2 ln prod f(w), 2n) and S = C^-1(-2 ln prod (1 - f(w)), 2n), C^-1 the
    chi-square survival function (Fisher's method on the f(w), and on the 1 - f(w));
    I = (1 + H - S) / 2 is near 1 for spam, near 0 for ham, near 1/2 when the evidence is
    weak or points both ways. No words: I = 1/2. (SpamBayes writes the same with
    H' = 1 - S and S' = 1 - H: I = (S' - H' + 1) / 2.)

    Parameters
    ----------
    probabilities : iterable of float
        f(w) of each word used.

    Returns
    -------
    tuple of float
        (I, H, S).
    """
    f = [float(p) for p in probabilities]
    h = fisher_combine(f)
    s = fisher_combine([1.0 - p for p in f])
    return (1.0 + h - s) / 2.0, h, s
