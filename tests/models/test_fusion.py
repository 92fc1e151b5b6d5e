"""streamnb.models.Fusion: naive Bayes and logistic regression fused online. The stacker's
step against a reference, what learn / unlearn / merge do to each part, persistence, and
the spam filter on raw messages."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import streamnb
from streamnb import LogisticRegression, MultinomialNB, Tokenizer
from streamnb.errors import IncompatibleModelsError, InvalidInputError, InvalidParameterError
from streamnb.filter.decision import SpamFilter
from streamnb.models import Fusion

TEXTS = [
    ("cheap pills now buy cheap", "spam"), ("meeting at noon about the report", "ham"),
    ("buy now limited offer pills", "spam"), ("the report is due at noon", "ham"),
    ("cheap offer on the report", "spam"), ("lunch meeting moved to noon", "ham"),
] * 4


def small(**kwargs) -> Fusion:
    return Fusion(MultinomialNB(0.5, tokenizer=Tokenizer()), LogisticRegression(0.2, tokenizer=Tokenizer()), **kwargs)


def odds(log_proba, pair):
    return log_proba[pair[1]] - log_proba[pair[0]]


def test_the_stacker_steps_on_the_parts_log_odds_before_they_learn():
    model = small(nb_scale=10.0, nb_clip=2.0, learning_rate=0.05, initial_weights=(1.0, 0.5))
    a, b, c = 1.0, 0.5, 0.0
    for text, label in TEXTS:
        pair = model.classes[:2]
        if len(pair) == 2:
            z_nb = odds(model.nb.predict_log_proba_one(text), pair)
            z_lr = odds(model.lr.predict_log_proba_one(text), pair)
            inputs = (max(-2.0, min(2.0, z_nb / 10.0)), z_lr)
            z = a * inputs[0] + b * inputs[1] + c
            assert model.log_odds_one(text) == pytest.approx(z, abs=1e-12)
            assert model.predict_log_proba_one(text)[pair[1]] == pytest.approx(-math.log1p(math.exp(-z)), abs=1e-12)
            g = (1.0 if label == pair[1] else 0.0) - 1 / (1 + math.exp(-z))
            a, b, c = a + 0.05 * g * inputs[0], b + 0.05 * g * inputs[1], c + 0.05 * g
        model.learn_one(text, label)
        assert model.weights == pytest.approx((a, b, c), abs=1e-12)
    assert model.classes == ["spam", "ham"]
    assert model.predict_one("cheap pills") == "spam" and model.predict_one("noon meeting") == "ham"


def test_before_both_classes_it_is_naive_bayes():
    model = small()
    assert model.predict_log_proba_one("anything") == {}
    model.learn_one("cheap pills", "spam")
    assert model.predict_log_proba_one("cheap") == model.nb.predict_log_proba_one("cheap")
    assert model.weights == (1.0, 0.5, 0.0)  # nothing to fuse yet: the stacker has not moved


def test_a_third_class_is_refused_and_changes_nothing():
    model = small()
    for text, label in TEXTS[:4]:
        model.learn_one(text, label)
    before = (model.predict_log_proba_one("cheap report"), model.weights, model.class_counts)
    with pytest.raises(InvalidInputError, match="two classes"):
        model.learn_one("hello", "newsletter")
    assert (model.predict_log_proba_one("cheap report"), model.weights, model.class_counts) == before


def scores(model, probes):
    """Everything a prediction reads: the fused log-odds, each part's, and the stacker's weights."""
    return [model.log_odds_one(p) for p in probes] + [z for p in probes for z in model.part_log_odds(p)] + \
        list(model.weights)


def assert_close(got, want, tolerance=1e-9):
    assert max(abs(a - b) for a, b in zip(got, want)) <= tolerance, (got, want)


PROBES = ["cheap noon", "the report offer", "pills pills now", "lunch at noon", "zzz unseen"]


@pytest.mark.parametrize("lesson", [("cheap noon pills", "spam"), ("a report at lunch", "ham"),
                                    ("never seen words here", "ham")])
def test_unlearn_right_after_learn_gives_every_score_back(lesson):
    """Naive Bayes' counts, logistic regression's and the stacker's kept steps: all undone exactly."""
    model, without = small(), small()
    for text, label in TEXTS:
        model.learn_one(text, label)
        without.learn_one(text, label)
    before = scores(model, PROBES)
    model.learn_one(*lesson)
    assert max(abs(a - b) for a, b in zip(scores(model, PROBES), before)) > 0.01
    model.unlearn_one(*lesson)
    assert_close(scores(model, PROBES), before)
    assert model.nb.predict_log_proba_one("cheap noon") == without.nb.predict_log_proba_one("cheap noon")
    assert model.class_counts == without.class_counts and model.lr.class_counts == without.lr.class_counts


def test_without_records_unlearn_takes_the_reverse_steps():
    model, without = small(records=None), small()
    for text, label in TEXTS:
        model.learn_one(text, label)
        without.learn_one(text, label)
    before = scores(without, PROBES)
    model.learn_one("cheap noon pills", "spam")
    model.unlearn_one("cheap noon pills", "spam")
    left = max(abs(a - b) for a, b in zip(scores(model, PROBES), before))
    assert 1e-6 < left < 0.05  # close, not exact: the step backwards is taken at today's gradient
    assert model.nb.predict_log_proba_one("cheap noon") == without.nb.predict_log_proba_one("cheap noon")


def test_a_lesson_before_both_classes_is_undone_too():
    """The first ham after spam only: the stacker had nothing to fuse (no step kept for it)."""
    model = small()
    for text in ("cheap pills", "buy pills", "cheap buy"):
        model.learn_one(text, "spam")
    before = (model.predict_log_proba_one("cheap report"), model.weights, model.lr.n_features)
    model.learn_one("the report at noon", "ham")
    model.unlearn_one("the report at noon", "ham")
    assert model.classes == ["spam"]
    assert (model.predict_log_proba_one("cheap report"), model.weights) == before[:2]


def test_with_a_ledger_a_move_is_as_if_the_message_had_only_been_learned_in_its_new_class():
    def fusion():
        return Fusion(MultinomialNB(0.5, tokenizer=Tokenizer(), ledger=100), LogisticRegression(0.2, tokenizer=Tokenizer()))

    moved, direct = fusion(), fusion()
    for text, label in TEXTS[:12]:
        moved.learn_one(text, label)
        direct.learn_one(text, label)
    moved.learn_one("cheap lunch offer", "spam")
    moved.learn_one("cheap lunch offer", "ham")  # one call: undone as spam exactly, learned as ham
    direct.learn_one("cheap lunch offer", "ham")
    assert_close(scores(moved, PROBES), scores(direct, PROBES))
    assert moved.class_counts == direct.class_counts and moved.lr.class_counts == direct.lr.class_counts


def test_learned_as_is_the_label_a_message_was_learned_as_and_none_for_one_only_observed():
    fusion = Fusion(MultinomialNB(0.5, tokenizer=Tokenizer(), ledger=100), LogisticRegression(0.2, tokenizer=Tokenizer()))
    for text, label in TEXTS[:12]:
        fusion.learn_one(text, label)
    assert fusion.learned_as("cheap lunch offer") is None
    fusion.observe_one("cheap lunch offer")
    assert fusion.learned_as("cheap lunch offer") is None  # observed: no label yet
    fusion.learn_one("cheap lunch offer", "ham")
    assert fusion.learned_as("cheap lunch offer") == "ham"
    fusion.unlearn_one("cheap lunch offer", "ham")
    assert fusion.learned_as("cheap lunch offer") is None


def test_unlearn_many_undoes_the_messages_learned_last_first():
    model, replayed, reference = small(window=0), small(), small(window=0)
    for text, label in TEXTS:
        for m in (model, replayed, reference):
            m.learn_one(text, label)
    before = scores(model, PROBES)
    lessons = [("cheap noon pills", "spam"), ("a report at lunch", "ham"), ("buy a lunch offer", "spam")]
    for text, label in lessons:
        for m in (model, replayed, reference):
            m.learn_one(text, label)
    model.unlearn_many([t for t, _ in lessons], [label for _, label in lessons])  # given oldest first
    assert_close(scores(model, PROBES), before)
    for text, label in lessons:  # one at a time in that order: each step undone with later ones in place
        reference.unlearn_one(text, label)
        replayed.unlearn_one(text, label)  # by replay: the later ones taken again without it
    assert max(abs(a - b) for a, b in zip(scores(reference, PROBES), before)) > 1e-9
    assert_close(scores(replayed, PROBES), before)


def test_the_kept_steps_are_saved_and_loaded(tmp_path):
    model = Fusion()
    for raw, label in MESSAGES[:8]:
        model.learn_one(raw, label)
    before = scores(model, [raw for raw, _ in MESSAGES[:4]])
    lesson = (b"From: new@cheap.example\nSubject: new offer\n\nNever seen cheap gadgets", "spam")
    model.learn_one(*lesson)
    model.save(tmp_path / "f.snb")
    loaded = streamnb.load(tmp_path / "f.snb")
    assert loaded._records == model._records and len(loaded._records) == 5  # 4 messages, learned twice, and 1
    loaded.unlearn_one(*lesson)
    assert_close(scores(loaded, [raw for raw, _ in MESSAGES[:4]]), before)
    assert pickle.loads(pickle.dumps(model))._records == model._records


def test_a_file_from_before_kept_steps_loads_and_unlearns_by_the_reverse_steps():
    """tests/data/format-v5 (format 5's code): the default fusion scores as it did and keeps
    no steps, so a message it learned takes the reverse steps; one learned since is undone exactly."""
    import json
    import pathlib

    folder = pathlib.Path(__file__).parents[1] / "data" / "format-v5"
    model = streamnb.load(folder / "fusion.snb")
    cases = json.loads((folder / "expected.json").read_text())["log_proba"]["fusion"]
    for case in cases:
        probe = streamnb.persist.decode_value(case["probe"])
        assert model.predict_log_proba_one(probe) == streamnb.persist.decode_value(case["log_proba"])
    assert model.records == streamnb.models.fusion.DEFAULT_RECORDS and len(model._records) == 0
    probe = b"Subject: noon\r\n\r\ncheap pills at noon\r\n"
    without = streamnb.load(folder / "fusion.snb")
    without._records = None  # a fusion that keeps no steps: the reverse steps
    learned = streamnb.persist.decode_value(cases[0]["probe"])  # the file learned it as spam, twice
    model.unlearn_one(learned, "spam")
    without.unlearn_one(learned, "spam")
    assert scores(model, [probe]) == scores(without, [probe])
    assert model.class_counts == {"spam": 1.0, "ham": 1.0}
    before = scores(model, [probe])
    model.learn_one(b"Subject: new\r\n\r\nnew words\r\n", "ham")
    model.unlearn_one(b"Subject: new\r\n\r\nnew words\r\n", "ham")
    assert_close(scores(model, [probe]), before)


@pytest.mark.parametrize("change, words", [
    (lambda arrays: arrays.pop("records_stacker"), "step record arrays missing: \\['records_stacker'\\]"),
    (lambda arrays: arrays.update(records_stacker=arrays["records_stacker"][:, :2]), "has shape \\(3, 2\\), not \\(3, 3\\)"),
    (lambda arrays: arrays.update(records_stacker=arrays["records_stacker"] + np.inf), "must be finite"),
    (lambda arrays: arrays.update(records_decay=arrays["records_decay"] - 0.5), "decays must be this model's, 1.0"),
    (lambda arrays: arrays.update(records_class=arrays["records_class"] - 1), "classes out of range"),
    (lambda arrays: arrays.update(records_other=arrays["records_class"], surplus=arrays["records_class"]),
     "arrays \\['records_other', 'surplus'\\] are not arrays of a Fusion"),
])
def test_bad_kept_steps_are_refused_with_one_line(change, words):
    model = small()
    for text, label in TEXTS[:3]:
        model.learn_one(text, label)
    state, arrays = model._state()
    arrays = dict(arrays)
    change(arrays)
    with pytest.raises(streamnb.errors.ModelFormatError, match=words) as raised:
        Fusion._from_state(state, arrays)
    assert "\n" not in str(raised.value)
    state["params"] = {**state["params"], "records": None}
    with pytest.raises(streamnb.errors.ModelFormatError, match="step record arrays in a Fusion without records"):
        Fusion._from_state(state, dict(model._state()[1]))


def test_merge_adds_the_counts_and_mixes_the_rest():
    left, right, both = small(), small(), small()
    for i, (text, label) in enumerate(TEXTS):
        (left if i % 3 else right).learn_one(text, label)
        both.learn_one(text, label)
    n_left, n_right = sum(left.class_counts.values()), sum(right.class_counts.values())
    # left learned a ham first, right a spam: their class 1 differ, so right's log-odds (in
    # and out) have the other sign, and in left's terms only its bias flips
    assert left.classes == ["ham", "spam"] and right.classes == ["spam", "ham"]
    a, b, c = right.weights
    stacker = (np.array(left.weights) * n_left + np.array([a, b, -c]) * n_right) / (n_left + n_right)
    left.merge(right)
    assert left.class_counts == both.class_counts
    assert left.nb.predict_log_proba_one("cheap report") == pytest.approx(both.nb.predict_log_proba_one("cheap report"),
                                                                          abs=1e-12)
    assert left.weights == pytest.approx(tuple(stacker), abs=1e-12)
    with pytest.raises(IncompatibleModelsError, match="other settings"):
        left.merge(small(nb_scale=5.0))


def test_a_ledger_in_naive_bayes_keeps_all_three_parts_in_step():
    model = Fusion(MultinomialNB(tokenizer=Tokenizer(), ledger=100), LogisticRegression(tokenizer=Tokenizer()))
    for text, label in TEXTS[:6]:
        model.learn_one(text, label)
    before = (model.predict_log_proba_one("cheap report"), model.weights, model.lr.n_learned)
    model.learn_one(TEXTS[0][0], "spam")  # known under the same label: nothing moves
    assert (model.predict_log_proba_one("cheap report"), model.weights, model.lr.n_learned) == before
    model.learn_one(TEXTS[0][0], "ham")  # moved: unlearned as spam, learned as ham, by every part
    assert model.class_counts == {"spam": 2.0, "ham": 4.0}
    assert model.lr.class_counts == {"spam": 2.0, "ham": 4.0}


def test_save_load_and_pickle_round_trip(tmp_path):
    model = small()
    for text, label in TEXTS:
        model.learn_one(text, label)
    path = tmp_path / "fusion.snb"
    model.save(path)
    loaded = streamnb.load(path)
    assert type(loaded) is Fusion and loaded.weights == model.weights
    for text, _ in TEXTS[:6]:
        assert loaded.predict_log_proba_one(text) == model.predict_log_proba_one(text)
    loaded.learn_one("cheap cheap", "spam")
    model.learn_one("cheap cheap", "spam")
    assert loaded.predict_log_proba_one("noon") == model.predict_log_proba_one("noon")
    again = pickle.loads(pickle.dumps(model))
    assert again.predict_log_proba_one("offer") == model.predict_log_proba_one("offer")


@pytest.mark.parametrize("kwargs, words", [
    (dict(nb=LogisticRegression()), "nb must be a naive Bayes model"),
    (dict(lr=MultinomialNB()), "lr must be a LogisticRegression"),
    (dict(nb_scale=0), "nb_scale must be a finite number > 0"),
    (dict(nb_clip=float("nan")), "nb_clip"),
    (dict(learning_rate=-1), "learning_rate"),
    (dict(initial_weights=(1.0,)), "initial_weights must be a pair"),
    (dict(records=0), "records must be an int >= 1 or None"),
    (dict(lr=LogisticRegression(ledger=5)), "lr must have no ledger: a Fusion keeps its logistic regression's steps"),
])
def test_bad_parameters_are_named(kwargs, words):
    with pytest.raises(InvalidParameterError, match=words):
        Fusion(**kwargs)


MESSAGES = [
    (b"From: deals@cheap.example\nSubject: cheap pills\n\nBuy cheap pills now, limited offer!", "spam"),
    (b"From: alice@work.example\nSubject: report\n\nThe quarterly report is attached; see you at noon.", "ham"),
    (b"From: offers@cheap.example\nSubject: limited offer\n\nCheap watches, buy now.", "spam"),
    (b"From: bob@work.example\nSubject: lunch\n\nLunch at noon to go over the report?", "ham"),
] * 5


def test_the_spam_filter_default_reads_raw_messages_with_both_parts():
    spam = SpamFilter(Fusion())
    for raw, label in MESSAGES:
        verdict = spam.classify(raw)
        assert math.isfinite(verdict.log_odds)
        spam.learn(raw, label)
    # the logistic regression read byte grams of the raw message, not the email weights
    assert spam.model.lr.n_features > 100 and spam.model.lr.class_counts == {"spam": 10.0, "ham": 10.0}
    assert spam.classify(b"Subject: cheap offer\n\nbuy cheap pills").log_odds > 0
    assert spam.classify(b"Subject: report\n\nthe report at noon").log_odds < 0
