"""Tests of streamnb.evaluate (metrics against scikit-learn, progressive evaluation) and streamnb.progress."""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from streamnb.errors import InvalidInputError, InvalidParameterError
from streamnb.filter.evaluate import (
    EPS,
    BinaryCounts,
    RunningMetrics,
    accuracy,
    binary_counts,
    brier_score,
    confusion_matrix,
    expected_calibration_error,
    false_negative_rate,
    false_positive_rate,
    log_loss,
    one_minus_auc_percent,
    precision_recall_f1,
    progressive_evaluate,
    progressive_evaluate_alphas,
    reliability_table,
    roc_auc,
)
from tests.state import spam_ham_stream


def random_predictions(seed: int, n: int = 500):
    """Labels, noisy predicted labels and tie-heavy probabilities (rounded to 0.1)."""
    rng = np.random.default_rng(seed)
    y_true = rng.choice(["ham", "spam"], size=n, p=[0.65, 0.35]).tolist()
    is_spam = np.array([y == "spam" for y in y_true])
    p = np.clip(0.3 + 0.4 * is_spam + rng.normal(0, 0.25, n), 0, 1).round(1)
    p[:5] = [0.0, 1.0, 0.0, 1.0, 0.5]  # certain predictions exercise log-loss clipping
    y_pred = np.where(p >= 0.5, "spam", "ham").tolist()
    return y_true, y_pred, p


# --- label metrics against scikit-learn -------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_label_metrics_equal_sklearn(seed):
    y_true, y_pred, _ = random_predictions(seed)
    assert accuracy(y_true, y_pred) == skm.accuracy_score(y_true, y_pred)
    assert np.array_equal(confusion_matrix(y_true, y_pred), skm.confusion_matrix(y_true, y_pred))
    scores = precision_recall_f1(y_true, y_pred)
    precision, recall, f1, support = skm.precision_recall_fscore_support(
        y_true, y_pred, labels=["ham", "spam"], zero_division=0
    )
    assert list(scores) == ["ham", "spam"]
    for i, label in enumerate(["ham", "spam"]):
        assert scores[label].precision == precision[i]
        assert scores[label].recall == recall[i]
        assert scores[label].f1 == f1[i]
        assert scores[label].support == support[i]
    (tn, fp), (fn, tp) = skm.confusion_matrix(y_true, y_pred, labels=["ham", "spam"])
    assert binary_counts(y_true, y_pred) == BinaryCounts(tp=tp, fp=fp, tn=tn, fn=fn)
    assert false_positive_rate(y_true, y_pred) == fp / (fp + tn)
    assert false_negative_rate(y_true, y_pred) == fn / (fn + tp)


def test_multiclass_precision_recall_f1_with_an_absent_prediction():
    y_true = ["a", "b", "c", "a", "b", "c", "a"]
    y_pred = ["a", "a", "b", "a", "b", "b", "a"]  # "c" is never predicted: precision 0/0 -> 0
    scores = precision_recall_f1(y_true, y_pred)
    p, r, f, s = skm.precision_recall_fscore_support(y_true, y_pred, labels=["a", "b", "c"], zero_division=0)
    assert [scores[c].precision for c in "abc"] == list(p)
    assert [scores[c].recall for c in "abc"] == list(r)
    assert [scores[c].f1 for c in "abc"] == list(f)
    assert scores["c"] == scores["c"].__class__(precision=0.0, recall=0.0, f1=0.0, support=2)
    assert scores["a"].precision == 3 / 4 and scores["a"].recall == 1.0


def test_rates_by_hand():
    y_true = ["ham", "ham", "ham", "ham", "spam", "spam"]
    y_pred = ["ham", "spam", "ham", "ham", "ham", "spam"]
    assert false_positive_rate(y_true, y_pred) == 1 / 4
    assert false_negative_rate(y_true, y_pred) == 1 / 2
    assert false_positive_rate(y_true, y_pred, positive="ham") == 1 / 2
    assert math.isnan(false_positive_rate(["spam"], ["spam"]))  # no ham: undefined


def test_confusion_matrix_with_explicit_labels():
    matrix = confusion_matrix(["spam", "ham", "spam"], ["spam", "spam", "x"], labels=["spam", "ham"])
    assert matrix.tolist() == [[1, 0], [1, 0]]  # the pair with "x" is not counted


# --- score metrics against scikit-learn --------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_roc_auc_with_ties_equals_sklearn(seed):
    y_true, _, p = random_predictions(seed)
    expected = skm.roc_auc_score([y == "spam" for y in y_true], p)
    assert abs(roc_auc(y_true, p) - expected) <= 1e-12
    assert abs(one_minus_auc_percent(y_true, p) - 100 * (1 - expected)) <= 1e-10


def test_roc_auc_small_cases():
    assert roc_auc(["ham", "spam"], [0.2, 0.9]) == 1.0
    assert roc_auc(["ham", "spam"], [0.9, 0.2]) == 0.0
    assert roc_auc(["ham", "spam", "ham", "spam"], [0.5, 0.5, 0.5, 0.5]) == 0.5
    # One tie between a positive and a negative out of 4 pairs counts 1/2: (3 + 0.5) / 4.
    assert roc_auc(["ham", "ham", "spam", "spam"], [0.1, 0.4, 0.4, 0.8]) == 0.875
    assert roc_auc([0, 0, 1, 1], [-3.0, 10.0, 7.0, 12.0], positive=1) == 0.75  # any real scores


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.integers(0, 6)), min_size=2, max_size=60).filter(
        lambda pairs: 0 < sum(b for b, _ in pairs) < len(pairs)
    )
)
def test_roc_auc_property_equals_sklearn(pairs):
    labels = ["spam" if b else "ham" for b, _ in pairs]
    scores = [s / 6 for _, s in pairs]
    expected = skm.roc_auc_score([b for b, _ in pairs], scores)
    assert abs(roc_auc(labels, scores) - expected) <= 1e-12


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_log_loss_equals_sklearn(seed):
    y_true, _, p = random_predictions(seed)
    expected = skm.log_loss(y_true, p, labels=["ham", "spam"])
    assert log_loss(y_true, p) == expected


def test_log_loss_clipping_is_documented_value():
    # A certain mistake costs -log(eps), a certain hit -log(1 - eps).
    assert log_loss(["spam"], [0.0]) == -math.log(EPS)
    assert log_loss(["ham"], [0.0]) == -np.log(1 - EPS)
    assert log_loss(["spam", "ham"], [0.8, 0.4]) == pytest.approx(-(math.log(0.8) + math.log(0.6)) / 2, abs=1e-15)
    assert log_loss(["spam"], [0.0], eps=1e-3) == pytest.approx(-math.log(1e-3), abs=1e-15)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_brier_equals_sklearn(seed):
    y_true, _, p = random_predictions(seed)
    expected = skm.brier_score_loss(y_true, p, pos_label="spam")
    assert abs(brier_score(y_true, p) - expected) <= 1e-12
    assert brier_score(["spam", "ham"], [0.75, 0.5]) == (0.25**2 + 0.5**2) / 2


def test_expected_calibration_error_by_hand():
    p = [0.05, 0.15, 0.12, 0.95, 0.85, 0.55, 1.0]
    y = ["ham", "spam", "ham", "spam", "spam", "ham", "ham"]
    # Bins of width 0.1: b0 {0.05: ham}, b1 {0.15: spam, 0.12: ham}, b5 {0.55: ham},
    # b8 {0.85: spam}, b9 {0.95: spam, 1.0: ham}.
    # ECE = (1*|0.05-0| + 2*|0.135-0.5| + 1*|0.55-0| + 1*|0.85-1| + 2*|0.975-0.5|) / 7 = 2.43 / 7
    assert expected_calibration_error(y, p) == pytest.approx(2.43 / 7, abs=1e-12)
    table = reliability_table(y, p)
    assert [b.count for b in table] == [1, 2, 0, 0, 0, 1, 0, 0, 1, 2]
    assert table[1].mean_predicted == pytest.approx(0.135, abs=1e-15)
    assert table[1].observed_frequency == 0.5
    assert table[9].mean_predicted == pytest.approx(0.975, abs=1e-15)
    assert (table[9].lower, table[9].upper) == (0.9, 1.0)
    assert math.isnan(table[2].mean_predicted) and math.isnan(table[2].observed_frequency)
    # One bin: |mean p - spam rate| = |3.67/7 - 3/7|.
    assert expected_calibration_error(y, p, n_bins=1) == pytest.approx(0.67 / 7, abs=1e-12)


def test_perfect_calibration_has_zero_ece():
    y = ["spam", "ham", "ham", "ham", "spam", "spam", "spam", "ham"]
    p = [0.25, 0.25, 0.25, 0.25, 0.75, 0.75, 0.75, 0.75]
    assert expected_calibration_error(y, p) == 0.0
    assert expected_calibration_error(y, p, n_bins=2) == 0.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: accuracy(["spam"], ["spam", "ham"]), "1 items but y_pred has 2"),
        (lambda: accuracy([], []), "empty"),
        (lambda: accuracy("spam", "spam"), "'spam'"),
        (lambda: log_loss(["spam"], [1.5]), "1.5"),
        (lambda: brier_score(["spam"], [-0.1]), "-0.1"),
        (lambda: roc_auc(["spam", "ham"], [0.1, float("nan")]), "nan"),
        (lambda: roc_auc(["spam", "spam"], [0.1, 0.2]), "2 positive .* 0 negative"),
        (lambda: expected_calibration_error(["spam"], [0.5], n_bins=0), "n_bins .* 0"),
        (lambda: log_loss(["spam"], [0.5], eps=0.0), "eps"),
        (lambda: log_loss(["spam"], ["high"]), "must be numbers"),
    ],
)
def test_bad_inputs_are_named(call, message):
    with pytest.raises((InvalidInputError, InvalidParameterError), match=message):
        call()


# --- running metrics -----------------------------------------------------------------------------


def test_running_metrics_match_batch_functions():
    y_true, y_pred, p = random_predictions(5, n=300)
    running = RunningMetrics(curve=None)
    for t, pr, s in zip(y_true, y_pred, p):
        running.update(t, pr, s)
    assert running.n == 300
    assert running.accuracy == accuracy(y_true, y_pred)
    assert running.false_positive_rate == false_positive_rate(y_true, y_pred)
    assert running.false_negative_rate == false_negative_rate(y_true, y_pred)
    assert running.log_loss == pytest.approx(log_loss(y_true, p), abs=1e-12)
    assert running.brier == pytest.approx(brier_score(y_true, p), abs=1e-12)
    assert running.curve == []


def test_running_metrics_curve_schedules():
    every = RunningMetrics(curve=3)
    log = RunningMetrics(curve="log")
    for i in range(120):
        y = "spam" if i % 4 == 0 else "ham"
        pred = "spam" if i % 5 == 0 else "ham"
        every.update(y, pred)
        log.update(y, pred)
    assert [pt.n for pt in every.curve] == list(range(3, 121, 3))
    assert [pt.n for pt in log.curve] == [1, 2, 3, 4, 5, 6, 8, 10, 13, 16, 20, 25, 32, 40, 50, 63, 79, 100]
    log.checkpoint()
    log.checkpoint()  # once per position
    assert [pt.n for pt in log.curve][-2:] == [100, 120]
    # Point at n=4: messages 0..3 are spam, ham, ham, ham; predicted spam, ham, ham, ham.
    point = log.curve[3]
    assert (point.n, point.accuracy, point.false_positive_rate, point.false_negative_rate) == (4, 1.0, 0.0, 0.0)
    assert math.isnan(point.log_loss)  # no scores were given
    with pytest.raises(InvalidParameterError, match="curve"):
        RunningMetrics(curve=0)


# --- fake models -----------------------------------------------------------------------------------


class LookupModel:
    """Predicts the label frequencies seen with the same x, else the overall class frequencies."""

    def __init__(self):
        self.by_x = defaultdict(Counter)
        self.overall = Counter()
        self.learn_calls = 0

    def learn_one(self, x, y, w=1.0):
        self.by_x[x][y] += 1
        self.overall[y] += 1
        self.learn_calls += 1

    def predict_proba_one(self, x):
        counts = self.by_x[x] if self.by_x.get(x) else self.overall
        total = sum(counts.values())
        return {label: n / total for label, n in counts.items()}

    @property
    def classes(self):
        return set(self.overall)


class StubbornModel:
    """Never changes its mind: always {"ham": 1.0}; counts learn calls."""

    def __init__(self):
        self.learn_calls = 0

    def learn_one(self, x, y, w=1.0):
        self.learn_calls += 1

    def predict_proba_one(self, x):
        return {"ham": 1.0}


STREAM = [("a", "spam"), ("a", "spam"), ("b", "ham"), ("a", "ham"), ("b", "ham"), ("a", "spam")]


def test_regime_all_by_hand():
    model = LookupModel()
    report = progressive_evaluate(model, STREAM, curve=2)
    # Traced by hand in the order of STREAM (see LookupModel).
    assert report.y_pred.tolist() == [None, "spam", "spam", "spam", "ham", "spam"]
    assert report.scores.tolist() == [0.5, 1.0, 1.0, 1.0, 0.0, 2 / 3]
    assert report.learned.tolist() == [1, 1, 1, 1, 1, 1]
    assert report.n == 6 and report.n_learned == 6 == model.learn_calls
    assert report.accuracy == 0.5
    assert report.false_positive_rate == 2 / 3  # messages 3 and 4 of the 3 ham
    assert report.false_negative_rate == 1 / 3  # the untrained first message
    assert report.counts == BinaryCounts(tp=2, fp=2, tn=1, fn=1)
    assert report.roc_auc == roc_auc(report.y_true, report.scores)
    assert report.log_loss == log_loss(report.y_true, report.scores)
    assert report.brier == brier_score(report.y_true, report.scores)
    assert report.per_class["spam"].precision == 2 / 4
    assert [(pt.n, pt.accuracy) for pt in report.curve] == [(2, 0.5), (4, 0.25), (6, 0.5)]
    assert "6 messages" in report.summary() and "accuracy 50.0000%" in report.summary()


def test_regime_on_error_by_hand():
    model = LookupModel()
    report = progressive_evaluate(model, STREAM, regime="on_error")
    assert report.learned.tolist() == [1, 0, 1, 1, 0, 0]
    assert report.n_learned == 3 == model.learn_calls
    # Last message: "a" seen once as spam and once as ham: a tie, the first label wins.
    assert report.y_pred.tolist() == [None, "spam", "spam", "spam", "ham", "spam"]
    assert report.scores.tolist() == [0.5, 1.0, 1.0, 1.0, 0.0, 0.5]
    assert np.array_equal(report.learned == 1, report.y_pred != report.y_true)


def test_regime_until_no_error_by_hand():
    model = LookupModel()
    report = progressive_evaluate(model, STREAM, regime="until_no_error")
    # Message 4 ("a", ham) needs two learns before "a" leans to ham; message 6 then errs.
    assert report.learned.tolist() == [1, 0, 1, 2, 0, 1]
    assert report.n_learned == 5 == model.learn_calls
    assert report.y_pred.tolist() == [None, "spam", "spam", "spam", "ham", "ham"]
    assert report.accuracy == 2 / 6
    assert model.by_x["a"] == {"spam": 2, "ham": 2}
    # With a cap of one learn it behaves as on_error here.
    capped = progressive_evaluate(LookupModel(), STREAM, regime="until_no_error", max_repeats=1)
    assert capped.learned.tolist() == [1, 0, 1, 1, 0, 0]


def test_until_no_error_stops_at_the_cap():
    model = StubbornModel()
    report = progressive_evaluate(model, [("x", "spam"), ("y", "ham")], regime="until_no_error", max_repeats=4)
    assert report.learned.tolist() == [4, 0]
    assert model.learn_calls == 4
    assert report.false_positive_rate == 0.0 and report.false_negative_rate == 1.0


def test_progress_callback_and_silent_bar(capsys):
    calls = []
    progressive_evaluate(LookupModel(), STREAM, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(i, 6) for i in range(1, 7)]
    calls.clear()
    progressive_evaluate(LookupModel(), iter(STREAM), progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (6, None)  # a generator has no length
    progressive_evaluate(LookupModel(), STREAM, progress=True)
    assert capsys.readouterr().err == ""  # stderr is not a terminal under pytest


@pytest.mark.parametrize(
    ("kwargs", "stream", "message"),
    [
        ({"regime": "sometimes"}, STREAM, "'sometimes'"),
        ({"max_repeats": 0}, STREAM, "max_repeats .* 0"),
        ({}, [], "no \\(x, y\\) pairs"),
        ({}, [("a", "spam"), "oops"], "item 1 is 'oops'"),
        ({"progress": "yes"}, STREAM, "progress"),
    ],
)
def test_progressive_evaluate_errors(kwargs, stream, message):
    with pytest.raises((InvalidInputError, InvalidParameterError), match=message):
        progressive_evaluate(LookupModel(), stream, **kwargs)


# --- alpha sweep -------------------------------------------------------------------------------------


class TinyNB:
    """A minimal multinomial naive Bayes with a with_alpha view sharing its counts."""

    def __init__(self, alpha=1.0, state=None):
        self.alpha = alpha
        self.state = state if state is not None else {
            "docs": Counter(), "words": defaultdict(Counter), "tokens": Counter(), "learns": 0,
        }

    def learn_one(self, x, y, w=1.0):
        s = self.state
        s["docs"][y] += 1
        for word, n in x.items():
            s["words"][y][word] += n
            s["tokens"][y] += n
        s["learns"] += 1

    def predict_proba_one(self, x):
        s = self.state
        if not s["docs"]:
            return {}
        vocabulary = set().union(*s["words"].values())
        total_docs = sum(s["docs"].values())
        logs = {}
        for c, n_docs in s["docs"].items():
            score = math.log(n_docs / total_docs)
            denominator = s["tokens"][c] + self.alpha * len(vocabulary)
            for word, n in x.items():
                if word in vocabulary:
                    score += n * math.log((s["words"][c][word] + self.alpha) / denominator)
            logs[c] = score
        top = max(logs.values())
        exps = {c: math.exp(v - top) for c, v in logs.items()}
        total = sum(exps.values())
        return {c: v / total for c, v in exps.items()}

    def with_alpha(self, alpha):
        return TinyNB(alpha, self.state)


def word_stream(seed, n=200):
    return spam_ham_stream(n, seed, ["free", "win", "cash", "now"], ["meeting", "lunch", "report"],
                           ["the", "a", "you"], n_shared=2)


def test_alpha_sweep_equals_separate_runs():
    stream = word_stream(11)
    alphas = [0.01, 0.5, 1.0, 3.0]
    shared = TinyNB()
    sweep = progressive_evaluate_alphas(shared, stream, alphas, curve=25)
    assert list(sweep) == alphas
    assert shared.state["learns"] == len(stream)  # each message learned once, for all alphas
    for alpha in alphas:
        alone = progressive_evaluate(TinyNB(alpha), stream, curve=25)
        swept = sweep[alpha]
        assert swept.alpha == alpha
        assert swept.y_pred.tolist() == alone.y_pred.tolist()
        assert swept.scores.tolist() == alone.scores.tolist()
        assert swept.curve == alone.curve
        for name in ("accuracy", "false_positive_rate", "false_negative_rate", "roc_auc", "log_loss", "brier", "ece"):
            assert getattr(swept, name) == getattr(alone, name), name
    # The sweep is not trivially the same model: smoothing changes the scores.
    assert sweep[0.01].scores.tolist() != sweep[3.0].scores.tolist()


@pytest.mark.parametrize(
    ("alphas", "model", "message"),
    [
        ([], TinyNB(), "alphas is empty"),
        ([1.0, 1.0], TinyNB(), "distinct"),
        ([-1.0], TinyNB(), "-1.0"),
        ([float("inf")], TinyNB(), "inf"),
        ([1.0], LookupModel(), "with_alpha"),
    ],
)
def test_alpha_sweep_errors(alphas, model, message):
    with pytest.raises(InvalidParameterError, match=message):
        progressive_evaluate_alphas(model, STREAM, alphas)


# --- progress bar ----------------------------------------------------------------------------------------


def test_progress_true_draws_nothing_off_a_terminal(capsys):
    """progress=True is a tqdm bar on stderr that stays silent when stderr is not a terminal (pytest's capture)."""
    report = progressive_evaluate(LookupModel(), STREAM, progress=True)
    assert report.n == len(STREAM)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""
