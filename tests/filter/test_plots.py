"""Tests of streamnb.plots: PNG files written and readable, ROC points against scikit-learn, missing matplotlib."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from sklearn import metrics as skm

from streamnb import MultinomialNB
from streamnb.errors import InvalidInputError, InvalidParameterError
from streamnb.filter.decision import SpamFilter, progressive_filter
from streamnb.filter.evaluate import progressive_evaluate, roc_auc
from streamnb.filter.plots import plot_learning_curve, plot_reliability, plot_roc, roc_points

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def stream(n=240, seed=0):
    rng = np.random.default_rng(seed)
    items = []
    for _ in range(n):
        label = "spam" if rng.random() < 0.4 else "ham"
        own = "s" if label == "spam" else "h"
        words = [f"{own}{rng.integers(0, 20)}" for _ in range(3)] + [f"c{rng.integers(0, 20)}" for _ in range(4)]
        if rng.random() < 0.15:
            words += [f"{'h' if own == 's' else 's'}{rng.integers(0, 20)}" for _ in range(4)]
        items.append(({w: words.count(w) for w in words}, label))
    return items


@pytest.fixture(scope="module")
def report():
    return progressive_filter(SpamFilter(MultinomialNB(), min_per_class=5), stream())


def check_png(path, width_inches, height_inches, dpi=120):
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    assert len(data) > 5000
    from matplotlib import image

    pixels = image.imread(path)
    height, width = pixels.shape[:2]
    # Constrained layout keeps the figure size: the image is figsize * dpi pixels.
    assert (width, height) == (round(width_inches * dpi), round(height_inches * dpi))
    assert pixels[..., :3].std() > 0.05  # not a blank canvas


def test_learning_curve_png(tmp_path, report):
    path = plot_learning_curve(report, tmp_path / "curve.png", title="test")
    assert path == tmp_path / "curve.png"
    check_png(path, 7.5, 6.0)


def test_learning_curve_accepts_reports_lists_and_mappings(tmp_path):
    evaluated = progressive_evaluate(MultinomialNB(), stream(120, seed=1))
    one = plot_learning_curve(evaluated.curve, tmp_path / "list.png")
    two = plot_learning_curve({"alpha 1": evaluated, "again": evaluated.curve}, tmp_path / "two.png")
    check_png(one, 7.5, 6.0)
    check_png(two, 7.5, 6.0)
    with pytest.raises(InvalidInputError, match="empty"):
        plot_learning_curve([], tmp_path / "empty.png")


def test_roc_png_with_several_score_series(tmp_path, report):
    path = plot_roc(list(report.y_true), {"log-odds": report.log_odds, "chi-square": report.scores},
                    tmp_path / "roc.png", title="ROC test")
    check_png(path, 11.0, 5.0)


def test_reliability_png_before_and_after(tmp_path, report):
    path = plot_reliability(list(report.y_true), report.model_probability, tmp_path / "rel.png",
                            calibrated=np.clip(report.model_probability, 0.1, 0.9))
    check_png(path, 6.5, 7.5)


def test_non_png_paths_are_refused(tmp_path, report):
    with pytest.raises(InvalidParameterError, match="png"):
        plot_roc(list(report.y_true), report.log_odds, tmp_path / "roc.svg")
    assert not (tmp_path / "roc.svg").exists()


def test_roc_points_match_scikit_learn():
    rng = np.random.default_rng(3)
    y = rng.random(300) < 0.4
    scores = np.round(rng.random(300) + 0.4 * y, 1)  # many ties
    labels = ["spam" if v else "ham" for v in y]
    fpr, tpr, thresholds = roc_points(labels, scores)
    sk_fpr, sk_tpr, sk_thresholds = skm.roc_curve(y, scores, drop_intermediate=False)
    np.testing.assert_allclose(fpr, sk_fpr, rtol=0, atol=1e-15)
    np.testing.assert_allclose(tpr, sk_tpr, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(thresholds[1:], sk_thresholds[1:])
    trapezoids = np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2)
    assert trapezoids == pytest.approx(roc_auc(labels, scores), abs=1e-12)


def test_roc_points_handle_infinite_scores_and_need_both_classes():
    fpr, tpr, _ = roc_points(["ham", "spam", "spam"], [-np.inf, np.inf, 1.0])
    assert fpr.tolist() == [0.0, 0.0, 0.0, 1.0]
    assert tpr.tolist() == [0.0, 0.5, 1.0, 1.0]
    with pytest.raises(InvalidInputError, match="both classes"):
        roc_points(["spam", "spam"], [0.1, 0.2])


def test_missing_matplotlib_names_the_extra(tmp_path, monkeypatch, report):
    for name in list(sys.modules):
        if name == "matplotlib" or name.startswith("matplotlib."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib...` raise ImportError
    with pytest.raises(ImportError, match=r"pip install streamnb\[plots\]"):
        plot_reliability(list(report.y_true), report.model_probability, tmp_path / "rel.png")
    assert not (tmp_path / "rel.png").exists()
