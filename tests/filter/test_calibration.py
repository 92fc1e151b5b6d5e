"""Tests of streamnb.calibrate: Platt and isotonic calibration, online, on known distortions and the real stream."""

from __future__ import annotations

import os
import re
from collections import Counter

import numpy as np
import pytest
from scipy import optimize
from scipy.special import expit
from sklearn.isotonic import IsotonicRegression

from streamnb import MultinomialNB
from streamnb.errors import InvalidInputError, InvalidParameterError
from streamnb.filter.calibrate import (
    IsotonicCalibrator,
    PlattCalibrator,
    calibrate_prequential,
    default_edges,
)
from streamnb.filter.decision import ChiSquareRule, SpamFilter, progressive_filter
from streamnb.filter.evaluate import expected_calibration_error


def labels(outcomes):
    return ["spam" if y else "ham" for y in outcomes]


def distorted_stream(n: int, distortion, seed: int = 0):
    """True log-odds t ~ N(0, 2^2), outcomes ~ Bernoulli(sigmoid(t)), observed score distortion(t)."""
    rng = np.random.default_rng(seed)
    t = rng.normal(0.0, 2.0, n)
    outcomes = rng.random(n) < expit(t)
    return distortion(t), outcomes, expit(t)


# --- Platt ----------------------------------------------------------------------------------


def test_platt_starts_as_the_identity():
    calibrator = PlattCalibrator()
    assert (calibrator.a, calibrator.b) == (1.0, 0.0)
    assert calibrator.transform(1.5) == pytest.approx(expit(1.5), rel=1e-15)


def test_platt_recovers_a_known_sigmoid_distortion():
    # The score is 4 t + 1: four times too confident and shifted. sigmoid(a s + b) is calibrated
    # for a = 1/4, b = -1/4.
    scores, outcomes, _ = distorted_stream(20000, lambda t: 4 * t + 1)
    calibrator = PlattCalibrator(window=20000, refit_every=50)
    for s, y in zip(scores, outcomes):
        calibrator.update(s, y)
    calibrator.refit()
    assert calibrator.a == pytest.approx(0.25, abs=0.01)
    assert calibrator.b == pytest.approx(-0.25, abs=0.05)


def test_platt_prequential_calibration_of_an_overconfident_score():
    scores, outcomes, _ = distorted_stream(6000, lambda t: 4 * t + 1, seed=1)
    raw = expected_calibration_error(labels(outcomes), expit(scores))
    calibrated = calibrate_prequential(PlattCalibrator(), scores, outcomes)
    after = expected_calibration_error(labels(outcomes), calibrated)
    assert raw > 0.08
    assert after < 0.02
    # The ECE of the true probabilities on the same outcomes: sampling noise is this large.
    _, _, truth = distorted_stream(6000, lambda t: 4 * t + 1, seed=1)
    assert after < 2.5 * expected_calibration_error(labels(outcomes), truth) + 0.005


def test_platt_fit_is_the_documented_optimum_over_the_window():
    rng = np.random.default_rng(5)
    scores = rng.normal(0, 30, 400)
    outcomes = rng.random(400) < expit(scores / 10 - 0.5)
    calibrator = PlattCalibrator(window=150)
    for s, y in zip(scores, outcomes):
        calibrator.update(s, y)
    z, y = scores[-150:], outcomes[-150:]
    n_pos, n_neg = y.sum(), (~y).sum()
    t = np.where(y, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))
    np.testing.assert_allclose(np.sort(calibrator.targets()), np.sort(t), rtol=1e-15)

    def loss(theta):
        u = theta[0] * z + theta[1]
        return np.sum(np.logaddexp(0, u) - t * u) + 0.5 * 1e-3 * (theta @ theta)

    best = optimize.minimize(loss, np.array([0.0, 0.0]), method="Nelder-Mead",
                             options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 20000}).x
    assert calibrator.a == pytest.approx(best[0], abs=1e-6)
    assert calibrator.b == pytest.approx(best[1], abs=1e-5)
    assert calibrator.loss(calibrator.a, calibrator.b) <= loss(best) + 1e-9


def test_platt_stays_finite_on_separable_data():
    calibrator = PlattCalibrator()
    for z in (-50.0, -20.0, -5.0):
        calibrator.update(z, False)
    for z in (5.0, 30.0):
        calibrator.update(z, True)
    # Separable data: without Platt's targets the likelihood would push a to infinity.
    assert 0 < calibrator.a < 1 and np.isfinite(calibrator.b)
    # At the optimum the mean fitted probability equals the mean target (the b component of
    # the gradient, up to the tiny ridge): (2 * 3/4 + 3 * 1/5) / 5 = 0.42.
    fitted = [calibrator.transform(z) for z in (-50.0, -20.0, -5.0, 5.0, 30.0)]
    assert np.mean(fitted) == pytest.approx(0.42, abs=1e-3)
    assert max(fitted) < 0.9 and min(fitted) > 0.02


# --- isotonic ----------------------------------------------------------------------------------


def test_isotonic_values_match_scikit_learn():
    """The calibrator's bin values are the weighted isotonic fit of its smoothed rates."""
    rng = np.random.default_rng(7)
    for _ in range(20):
        n_edges = int(rng.integers(1, 30))
        calibrator = IsotonicCalibrator(edges=np.sort(rng.choice(np.arange(-50.0, 50.0), n_edges, replace=False)))
        for z in rng.normal(0.0, 20.0, int(rng.integers(1, 200))):
            calibrator.update(float(z), bool(rng.random() < 0.5))
        m = calibrator.smoothing
        rates, weights = (calibrator.spams + m / 2) / (calibrator.counts + m), calibrator.counts + m
        bins = np.arange(len(rates))
        expected = IsotonicRegression().fit(bins, rates, sample_weight=weights).predict(bins)
        np.testing.assert_allclose(calibrator.values(), expected, rtol=1e-12, atol=1e-12)


def test_isotonic_bins_and_smoothed_values_by_hand():
    calibrator = IsotonicCalibrator(edges=[-1.0, 0.0, 1.0], smoothing=1.0)
    assert [calibrator.bin_of(z) for z in (-5.0, -1.0, -0.5, 0.0, 0.99, 1.0, 7.0)] == [0, 1, 1, 2, 2, 3, 3]
    assert calibrator.values().tolist() == [0.5] * 4  # nothing seen: every bin 1/2
    for z, y in [(-3.0, False), (-2.0, False), (-0.5, True), (0.5, False), (0.5, False), (2.0, True)]:
        calibrator.update(z, y)
    # Smoothed rates (k + 1/2) / (n + 1): bin0 0.5/3, bin1 1.5/2, bin2 0.5/3, bin3 1.5/2.
    # Bins 1 and 2 violate the order and pool with weights 2 and 3: (1.5 + 0.5) / 5 = 0.4.
    assert calibrator.values().tolist() == pytest.approx([0.5 / 3, 0.4, 0.4, 0.75], rel=1e-15)
    assert calibrator.transform(-0.2) == pytest.approx(0.4)
    assert calibrator.transform(9.0) == pytest.approx(0.75)


def test_isotonic_decay_forgets():
    calibrator = IsotonicCalibrator(edges=[0.0], decay=0.5)
    calibrator.update(1.0, False)
    calibrator.update(1.0, True)
    assert calibrator.counts.tolist() == [0.0, 1.5]
    assert calibrator.spams.tolist() == [0.0, 1.0]


def test_isotonic_recovers_a_non_sigmoid_monotone_distortion():
    # Score t^3: no sigmoid of a linear map fits it, any monotone map does.
    scores, outcomes, _ = distorted_stream(8000, lambda t: t ** 3, seed=2)
    isotonic = calibrate_prequential(IsotonicCalibrator(), scores, outcomes)
    platt = calibrate_prequential(PlattCalibrator(), scores, outcomes)
    raw = expected_calibration_error(labels(outcomes), expit(scores))
    iso_ece = expected_calibration_error(labels(outcomes), isotonic)
    assert raw > 0.06
    assert iso_ece < 0.025
    assert iso_ece < expected_calibration_error(labels(outcomes), platt)


def test_isotonic_values_are_monotone_and_inside_zero_one():
    scores, outcomes, _ = distorted_stream(3000, lambda t: 7 * t - 3, seed=4)
    calibrator = IsotonicCalibrator()
    calibrate_prequential(calibrator, scores, outcomes)
    values = calibrator.values()
    assert (np.diff(values) >= -1e-15).all()
    assert (values > 0).all() and (values < 1).all()
    assert len(values) == len(default_edges()) + 1


# --- prequential use and bad input ---------------------------------------------------------------


@pytest.mark.parametrize("calibrator_class", [PlattCalibrator, IsotonicCalibrator])
def test_prequential_output_does_not_see_its_own_outcome(calibrator_class):
    scores, outcomes, _ = distorted_stream(200, lambda t: 3 * t, seed=9)
    first = calibrate_prequential(calibrator_class(), scores, outcomes)
    flipped = outcomes.copy()
    flipped[120] = not flipped[120]
    second = calibrate_prequential(calibrator_class(), scores, flipped)
    np.testing.assert_array_equal(first[:121], second[:121])
    assert not np.array_equal(first[121:], second[121:])


@pytest.mark.parametrize("calibrator", [PlattCalibrator(), IsotonicCalibrator()])
@pytest.mark.parametrize("score, outcome", [(float("nan"), True), (float("inf"), True), ("1", True), (1.0, 2),
                                            (1.0, "spam")])
def test_bad_updates_are_rejected_and_change_nothing(calibrator, score, outcome):
    before = calibrator.n
    with pytest.raises(InvalidInputError):
        calibrator.update(score, outcome)
    assert calibrator.n == before


@pytest.mark.parametrize("make", [lambda: PlattCalibrator(window=0), lambda: PlattCalibrator(l2=0.0),
                                  lambda: IsotonicCalibrator(edges=[1.0, 0.0]), lambda: IsotonicCalibrator(edges=[]),
                                  lambda: IsotonicCalibrator(decay=0.0), lambda: IsotonicCalibrator(smoothing=-1)])
def test_bad_parameters_are_rejected(make):
    with pytest.raises(InvalidParameterError):
        make()


def test_calibrate_prequential_needs_equal_lengths():
    with pytest.raises(InvalidInputError, match="outcomes"):
        calibrate_prequential(PlattCalibrator(), [1.0, 2.0], [True])


# --- the real stream ---------------------------------------------------------------------------------

REAL_CORPUS = os.environ.get("STREAMNB_SPAMASSASSIN")
WORD = re.compile(r"\b\w\w+\b")


def words(raw: bytes) -> dict[str, int]:
    return dict(Counter(WORD.findall(raw.decode("latin-1").lower())))


@pytest.fixture(scope="module")
def spamassassin_report():
    from streamnb.filter.datasets import load_spamassassin

    messages = load_spamassassin(REAL_CORPUS, order="date")
    spam_filter = SpamFilter(MultinomialNB(alpha=1.0), ChiSquareRule(), IsotonicCalibrator(), tokenizer=words,
                             min_per_class=10, evidence_k=0)
    return progressive_filter(spam_filter, [(m.raw, m.label) for m in messages])


@pytest.mark.skipif(not REAL_CORPUS, reason="STREAMNB_SPAMASSASSIN is not set (point it at the corpus to run)")
def test_calibration_on_the_spamassassin_stream(spamassassin_report):
    report = spamassassin_report
    assert report.n == 6046
    assert report.ece_calibrated <= 0.03
    assert report.ece_calibrated < report.ece_model
    assert report.log_loss_calibrated < report.log_loss_model
    # Platt on the same prequential log-odds also meets the target (window 500).
    finite = np.isfinite(report.log_odds)
    is_spam = np.array([y == "spam" for y in report.y_true])
    platt = report.model_probability.copy()
    platt[finite] = calibrate_prequential(PlattCalibrator(), report.log_odds[finite], is_spam[finite])
    assert expected_calibration_error(list(report.y_true), platt) <= 0.03


@pytest.mark.skipif(not REAL_CORPUS, reason="STREAMNB_SPAMASSASSIN is not set (point it at the corpus to run)")
def test_chi_square_verdicts_on_the_spamassassin_stream(spamassassin_report):
    report = spamassassin_report
    # The unsure band takes the hard messages: the decided ones are more often right than
    # the model's own argmax over everything, and fewer ham are lost to the spam folder.
    assert 0.0 < report.unsure_rate < 0.10
    assert report.decided_accuracy > report.model_accuracy + 0.02
    assert report.verdict_false_positive_rate < report.model_false_positive_rate / 2
