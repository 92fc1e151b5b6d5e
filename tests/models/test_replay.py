"""Unlearning with lessons in between, by replay (src/replay.rs, src/records.rs): a message
among the newest ``window`` steps is unlearned by undoing the steps after it, its own, and
taking the later ones again, so logistic regression becomes the model that never learned it
(every score to 1e-9); older messages take their own step back; model files keep the window."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

import streamnb
from streamnb import LogisticRegression, MultinomialNB, Tokenizer
from streamnb.errors import IncompatibleModelsError, InvalidInputError, ModelFormatError
from streamnb.ledger import text_fingerprint
from streamnb.models import Fusion

WORDS = ("cheap pills offer buy now meeting report noon lunch agenda the a at on of viagra free win prize team "
         "budget plan call today weekly notes").split()


def stream(n: int, seed: int) -> list[tuple[str, str]]:
    """n short texts, each with a number of its own (so each is a new message), and labels."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        label = rng.choice(["spam", "ham"])
        pool = WORDS[:12] if label == "spam" else WORDS[8:]
        out.append((" ".join(rng.choices(pool, k=rng.randint(3, 9))) + f" n{seed}x{i}", label))
    return out


PROBES = [text for text, _ in stream(25, seed=99)]
SETTINGS = [dict(schedule=schedule, idf_power=idf, l2=l2, margin=margin, class_weight=weights)
            for schedule, (idf, l2, margin, weights) in itertools.product(
                ("adagrad", "constant"),
                [(0.0, 0.0, None, None), (2.0, 0.0, None, None), (1.0, 0.01, None, "balanced"),
                 (2.0, 0.0, 0.5, {"spam": 2.0})])]


def lr(**settings) -> LogisticRegression:
    return LogisticRegression(0.3, tokenizer=Tokenizer(), ledger=500, **settings)


def scores(model) -> list[float]:
    return [v for p in PROBES for v in model.predict_log_proba_one(p).values()]


def assert_close(got: list[float], want: list[float], tolerance: float = 1e-9) -> None:
    assert len(got) == len(want)
    assert max(abs(a - b) for a, b in zip(got, want)) <= tolerance, max(abs(a - b) for a, b in zip(got, want))


def learned(model, messages):
    for text, label in messages:
        model.learn_one(text, label)
    return model


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: "-".join(map(str, s.values())))
@pytest.mark.parametrize("k", [1, 10, 100])
def test_unlearning_with_lessons_in_between_gives_the_model_that_never_learned_it(settings, k):
    base, lesson, between = stream(60, seed=1), ("cheap report pills at noon", "ham"), stream(k, seed=2)
    model = learned(lr(**settings), base + [lesson] + between)
    model.unlearn_one(*lesson)
    never = learned(lr(**settings), base + between)
    assert_close(scores(model), scores(never))
    assert model.class_counts == never.class_counts
    # the later steps were taken again: unlearning one of them replays too, exactly
    model.unlearn_one(*between[0])
    assert_close(scores(model), scores(learned(lr(**settings), base + between[1:])))


@pytest.mark.parametrize("k", [1, 10, 100])
def test_a_move_with_lessons_in_between_is_the_model_that_learned_it_last(k):
    base, between = stream(60, seed=3), stream(k, seed=4)
    text = "free lunch at the team meeting"
    model = learned(lr(), base + [(text, "spam")] + between)
    model.learn_one(text, "ham")  # held as spam: out by replay, in as the newest
    assert_close(scores(model), scores(learned(lr(), base + between + [(text, "ham")])))


@pytest.mark.parametrize("k", [1, 10, 100])
def test_the_fusions_logistic_regression_replays_its_lessons_and_provisional_steps(k):
    """Its logistic regression becomes the one that took the other lessons and the same
    provisional lessons (class and weight as they were decided); the fused log-odds stay
    within what naive Bayes' kept inputs leave."""
    base, lesson, between = stream(80, seed=5), ("cheap pills noon meeting offer", "spam"), stream(k, seed=6)
    model = Fusion(MultinomialNB(0.5, tokenizer=Tokenizer(), ledger=1000), LogisticRegression(0.2, tokenizer=Tokenizer()))
    learned(model, base)
    start = [model.log_odds_one(p) for p in PROBES]
    model.learn_one(*lesson)
    moved = max(abs(a - b) for a, b in zip((model.log_odds_one(p) for p in PROBES), start))
    unlabelled = [text for text, _ in stream(13, seed=7)]
    operations = []  # logistic regression's steps after the lesson, as the records kept them
    for i, (text, label) in enumerate(between):
        if i % 8 == 0:
            model.observe_one(unlabelled[i // 8])
            kept = model._records.get(text_fingerprint(unlabelled[i // 8]))
            operations.append(("observe", unlabelled[i // 8], kept.label, kept.weight, bool(kept.lr.g)))
        model.learn_one(text, label)
        operations.append(("learn", text, label, 1.0, True))
    moved_text, moved_label = between[k // 2][0], "ham" if between[k // 2][1] == "spam" else "spam"
    model.learn_one(moved_text, moved_label)  # a move among them
    taught = [op for op in operations if op[0] == "observe" and op[4]]
    assert taught, "no provisional lesson was taken"
    model.unlearn_one(*lesson)
    # the reference: logistic regression alone, the same lessons and provisional lessons in order
    reference = LogisticRegression(0.2, tokenizer=Tokenizer())
    learned(reference, base)
    for kind, text, label, weight, moved_lr in operations:
        if text == moved_text:
            continue
        if kind == "learn":
            reference.learn_one(text, label, weight)
        elif moved_lr:
            reference._core.provisional_one(text, label, weight, streamnb._core.FusionCore.provisional_rate)
    reference.learn_one(moved_text, moved_label)
    assert_close([model.part_log_odds(p)[1] for p in PROBES],
                 [reference.predict_log_proba_one(p)["spam"] - reference.predict_log_proba_one(p)["ham"]
                  for p in PROBES])
    never = Fusion(MultinomialNB(0.5, tokenizer=Tokenizer(), ledger=1000), LogisticRegression(0.2, tokenizer=Tokenizer()))
    learned(never, base)
    for kind, text, label, _, _ in operations:
        if kind == "learn":
            never.learn_one(text, label)
        else:
            never.observe_one(text)
    never.learn_one(moved_text, moved_label)
    left = max(abs(model.log_odds_one(p) - never.log_odds_one(p)) for p in PROBES)
    assert left <= 0.1 * moved, (left, moved)  # the stacker's kept naive Bayes inputs (bench_corrections.py)


@pytest.mark.parametrize("k", [1, 10, 100])
def test_the_window_is_saved_and_an_unlearn_after_a_reload_replays(k, tmp_path):
    base, lesson, between = stream(40, seed=8), ("win a prize today", "ham"), stream(k, seed=9)
    model = learned(lr(idf_power=2.0), base + [lesson] + between)
    model.save(tmp_path / "m.snb")
    loaded = streamnb.load(tmp_path / "m.snb")
    assert loaded._steps == model._steps and loaded._steps.documents == len(base) + 1 + k
    loaded.unlearn_one(*lesson)
    assert_close(scores(loaded), scores(learned(lr(idf_power=2.0), base + between)))
    assert pickle_round_trip(model)._steps == model._steps


def pickle_round_trip(model):
    import pickle

    return pickle.loads(pickle.dumps(model))


def test_a_message_older_than_the_window_takes_its_own_step_back():
    base, lesson, between = stream(20, seed=10), ("buy cheap pills now", "spam"), stream(10, seed=11)
    small, none = lr(window=5), lr(window=0)
    for model in (small, none):
        learned(model, base + [lesson] + between)
        assert not model._steps.get(text_fingerprint(lesson[0])).document
        model.unlearn_one(*lesson)
    assert scores(small) == scores(none)
    assert small._steps.documents == 5
    never = learned(lr(), base + between)
    assert max(abs(a - b) for a, b in zip(scores(small), scores(never))) > 1e-6  # what the replay takes out


def test_merging_keeps_the_steps_and_empties_the_window():
    a, b = learned(lr(), stream(20, seed=12)), learned(lr(), stream(20, seed=13))
    a.merge(b)
    assert len(a._steps) == 40 and a._steps.documents == 0
    before = scores(a)
    a.learn_one("a new lesson after the merge", "spam")
    assert a._steps.documents == 1
    a.unlearn_one("a new lesson after the merge", "spam")
    assert_close(scores(a), before)
    with pytest.raises(IncompatibleModelsError, match="same message"):
        a.merge(learned(lr(), stream(1, seed=12)))


def test_unlearning_what_cannot_be_replayed_is_refused_and_changes_nothing():
    model = Fusion(MultinomialNB(0.5, tokenizer=Tokenizer(), ledger=100), LogisticRegression(0.2, tokenizer=Tokenizer()))
    learned(model, stream(30, seed=14))
    model.observe_one("an unlabelled message about lunch")
    before = [model.log_odds_one(p) for p in PROBES]
    fingerprint = text_fingerprint("an unlabelled message about lunch")
    with pytest.raises(InvalidInputError, match="observed without a label"):
        model._core.unlearn_kept(model.lr._core, "an unlabelled message about lunch", fingerprint, model._pair())
    with pytest.raises(InvalidInputError, match="not kept"):
        model._core.unlearn_kept(model.lr._core, "never learned", text_fingerprint("never learned"), model._pair())
    with pytest.raises(InvalidInputError, match="16 bytes"):
        model.lr._core.unlearn_kept("x", b"short")
    assert [model.log_odds_one(p) for p in PROBES] == before


def saved(model):
    state, arrays = model._state()
    return state, {name: np.array(value) for name, value in arrays.items()}


@pytest.mark.parametrize("change, words", [
    (lambda a: a.update(ledger_doc_length=a["ledger_doc_length"] + 1), "add up to the document bytes"),
    (lambda a: a.update(ledger_doc_length=a["ledger_doc_length"][:-1]), "has shape"),
    (lambda a: a["ledger_doc"].__setitem__(slice(0, 1), 200), "a kept document is damaged"),
    (lambda a: a.pop("ledger_doc"), "come together"),
    (lambda a: a.update(ledger_doc_length=np.where(np.arange(len(a["ledger_doc_length"])) == 2, 0,
                                                   a["ledger_doc_length"]),
                        ledger_doc=np.delete(a["ledger_doc"], np.s_[int(a["ledger_doc_length"][:2].sum()):
                                                                   int(a["ledger_doc_length"][:3].sum())])),
     "after a kept document must keep its document"),
    (lambda a: a.update(ledger_doc=a["ledger_doc"].astype(np.int64)), "is <i8, not \\|u1"),
])
def test_bad_saved_windows_are_refused_with_one_line(change, words):
    model = learned(lr(), stream(6, seed=15))
    state, arrays = saved(model)
    change(arrays)
    with pytest.raises(ModelFormatError, match=words) as raised:
        LogisticRegression._from_state(state, arrays)
    assert "\n" not in str(raised.value)


def _with(array, position, value):
    changed = array.copy()
    changed[position] = value
    return changed


@pytest.mark.parametrize("change, words", [
    (lambda a: a.update(records_seen_at=_with(a["records_seen_at"], -1, 99)), "stamp above the clock 13"),
    (lambda a: a.update(records_seen_at=_with(a["records_seen_at"], -1, 12)), "share a stamp"),
    (lambda a: a.update(records_stacker=_with(a["records_stacker"], -1, [0.5, 0.5, 0.1])), "or a stacker step"),
    (lambda a: a.update(records_class=_with(a["records_class"], 0, 2)), "classes out of range"),
    (lambda a: a.update(records_class=_with(a["records_class"], 0, -2)), "classes out of range"),
])
def test_a_fusions_bad_saved_records_are_refused_with_one_line(change, words):
    """The records of messages observed without a label are checked against the fusion's
    clock of messages seen (10 lessons and 3 observations: the clock is 13)."""
    model = Fusion(MultinomialNB(0.5, tokenizer=Tokenizer(), ledger=100), LogisticRegression(0.2, tokenizer=Tokenizer()))
    learned(model, stream(10, seed=21))
    for text in ("lunch at noon today", "cheap offer", "a note"):
        model.observe_one(text)
    state, arrays = saved(model)
    assert state["feedback"][1] == 13 and list(arrays["records_seen_at"][-3:]) == [11, 12, 13]
    Fusion._from_state(state, arrays)  # as saved: loads
    change(arrays)
    with pytest.raises(ModelFormatError, match=words) as raised:
        Fusion._from_state(state, arrays)
    assert "\n" not in str(raised.value)


def test_a_saved_window_larger_than_the_model_allows_is_refused():
    model = learned(lr(), stream(6, seed=16))
    state, arrays = saved(model)
    state["params"]["window"] = 3
    with pytest.raises(ModelFormatError, match="6 kept documents exceed the window 3"):
        LogisticRegression._from_state(state, arrays)


def test_a_format_6_file_loads_with_its_steps_and_an_empty_window():
    """tests/data/format-v6 (written by format 6's code): the steps kept, no document; a
    message it learned takes its own step back, and the window fills with new lessons."""
    import json
    import pathlib

    folder = pathlib.Path(__file__).parents[1] / "data" / "format-v6"
    expected = json.loads((folder / "expected.json").read_text())["log_proba"]
    for name in ("logistic-ledger", "fusion"):
        model = streamnb.load(folder / f"{name}.snb")
        for case in expected[name]:
            assert model.predict_log_proba_one(streamnb.persist.decode_value(case["probe"])) == \
                streamnb.persist.decode_value(case["log_proba"])
        records = model._steps if name == "logistic-ledger" else model._records
        assert len(records) >= 2 and records.documents == 0 and records.window == min(1000, records.max_entries)
    model = streamnb.load(folder / "logistic-ledger.snb")
    own_step = LogisticRegression(tokenizer=Tokenizer(), ledger=10, window=0)
    for text, label in [("cheap pills now", "spam"), ("the meeting agenda", "ham"), ("cheap meeting", "ham")]:
        own_step.learn_one(text, label)
    model.unlearn_one("the meeting agenda", "ham")
    own_step.unlearn_one("the meeting agenda", "ham")
    assert_close(scores(model), scores(own_step), 1e-12)
    model.learn_one("a lesson after the load", "spam")
    assert model._steps.documents == 1


def test_steps_taken_before_a_class_came_are_replayed_without_it():
    """The lesson was learned while the model knew one class (its step moved nothing), and
    a third class came after it: each later step is taken again over the classes it knew."""
    lessons = [("cheap pills now", "spam"), ("lunch at noon?", "ham"), ("offer: cheap lunch", "spam"),
               ("the report is due", "ham"), ("a poem about noon", "other"), ("cheap poem offer", "other")]
    for settings in ({}, {"class_weight": "balanced"}, {"idf_power": 0.0, "schedule": "constant"}):
        model = learned(lr(**settings), [("the report, cheap", "spam")] + lessons)
        model.unlearn_one("the report, cheap", "spam")
        assert_close(scores(model), scores(learned(lr(**settings), lessons)))


def test_a_fusion_unlearns_a_message_after_the_last_of_the_other_class_was_unlearned():
    """Naive Bayes hides a class once its last message is unlearned, but the stacker's kept
    steps of the lessons after it were taken with both classes: unlearning an earlier
    message replays them (it was refused, and naive Bayes had unlearned it already)."""
    def fusion():
        return Fusion(MultinomialNB(0.5, tokenizer=Tokenizer(), ledger=100),
                      LogisticRegression(0.2, tokenizer=Tokenizer()))

    first, other, last = ("lunch at noon", "ham"), ("cheap pills now", "spam"), ("the weekly report", "ham")
    model = learned(fusion(), [first, other, last])
    model.unlearn_one(*other)
    assert model.classes == ["ham"]
    model.unlearn_one(*first)
    assert model.class_counts == {"ham": 1.0}
    assert model.nb.learned_as(first[0]) is None and model.nb.learned_as(last[0]) == "ham"
    # logistic regression still knows both classes: as one that learned only the other two, then unlearned `other`
    alone = learned(LogisticRegression(0.2, tokenizer=Tokenizer(), ledger=100), [other, last]).unlearn_one(*other)
    assert_close(*([p[c] for p in map(part.predict_log_proba_one, PROBES) for c in ("ham", "spam")]
                   for part in (model.lr, alone)))
    model.unlearn_one(*last)
    assert model.class_counts == {}


def test_a_fusion_refuses_a_third_class_after_naive_bayes_hid_one():
    """Logistic regression and the stacker still hold the class whose last message naive
    Bayes unlearned: a third class is refused, by learn_one and learn_many, changing nothing."""
    model = Fusion(MultinomialNB(0.5, tokenizer=Tokenizer(), ledger=100), LogisticRegression(0.2, tokenizer=Tokenizer()))
    learned(model, [("lunch at noon", "ham"), ("cheap pills now", "spam")])
    model.unlearn_one("cheap pills now", "spam")
    before = (model.class_counts, [model.log_odds_one(p) for p in PROBES])
    with pytest.raises(InvalidInputError, match="got a third, 'promo'"):
        model.learn_one("win a prize today", "promo")
    with pytest.raises(InvalidInputError, match="two classes apart"):
        model.learn_many(["win a prize today"], ["promo"])
    assert (model.class_counts, [model.log_odds_one(p) for p in PROBES]) == before
    model.learn_one("win a prize today", "spam")  # the class it had
    assert model.classes == ["ham", "spam"]


def test_a_message_observed_then_merged_in_as_a_lesson_unlearns():
    """Its record here is the observation, its lesson came with the merge (the other
    fusion's record of it already dropped): naive Bayes' ledger holds it, and the record is
    not taken for its lesson's steps."""
    def fusion():
        return Fusion(MultinomialNB(0.5, tokenizer=Tokenizer(), ledger=100),
                      LogisticRegression(0.2, tokenizer=Tokenizer()), records=2)

    text = "lunch with the team at noon"
    other = learned(fusion(), [(text, "ham"), ("cheap pills now", "spam"), ("weekly report", "ham"), ("buy now", "spam")])
    model = learned(fusion(), [("agenda for today", "ham"), ("win a prize", "spam")])
    model.observe_one(text, "ham")
    model.merge(other)
    assert model.nb.learned_as(text) == "ham" and model._records.get(text_fingerprint(text)).provisional
    model.unlearn_one(text, "ham")
    assert model.nb.learned_as(text) is None and model.class_counts == {"ham": 2.0, "spam": 3.0}


def test_fusions_that_learned_the_same_message_still_merge_and_empty_their_window():
    def fusion():
        return Fusion(MultinomialNB(0.5, tokenizer=Tokenizer()), LogisticRegression(0.2, tokenizer=Tokenizer()))

    shared = stream(10, seed=17)
    a, b = learned(fusion(), shared + stream(10, seed=18)), learned(fusion(), shared)
    a.merge(b)  # naive Bayes without a ledger counts the shared messages twice, as it always did
    assert len(a._records) == 20 and a._records.documents == 0


def test_a_fingerprint_taken_again_of_the_same_message_is_not_hashed_again(monkeypatch):
    """text_fingerprint remembers the message it hashed last (by identity): the same object
    gives the same digest without hashing again; another message, or the same text as str
    rather than bytes, is hashed for its own; each digest is BLAKE2b of the message."""
    import hashlib

    from streamnb import ledger

    def reference(text):
        if isinstance(text, bytes):
            return hashlib.blake2b(b"bytes\0" + text, digest_size=ledger.FINGERPRINT_BYTES).digest()
        return hashlib.blake2b(b"text\0" + text.encode("utf-8", "surrogatepass"),
                               digest_size=ledger.FINGERPRINT_BYTES).digest()

    hashed = []
    real_blake2b = hashlib.blake2b

    class Counting:
        @staticmethod
        def blake2b(*args, **kwargs):
            hashed.append(args)
            return real_blake2b(*args, **kwargs)

    monkeypatch.setattr(ledger, "hashlib", Counting)
    first, second = b"Subject: one\n\nbody", b"Subject: two\n\nbody"
    as_text = first.decode()
    calls = [(first, 1), (first, 0), (second, 1), (first, 1), (as_text, 1), (as_text, 0), ("\udcff x", 1),
             (bytes(bytearray(first)), 1)]
    for message, hashes in calls:
        before = len(hashed)
        assert text_fingerprint(message) == reference(message), message
        assert len(hashed) - before == hashes, message
