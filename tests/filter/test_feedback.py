"""Mail without labels: ``SpamFilter.observe`` / ``Fusion.observe_one`` (label coverage, the
lean towards logistic regression, provisional lessons replaced exactly by the label), and the
labels a filter asks for (``classify(x, budget=...)``, streamnb.filter.asking)."""

from __future__ import annotations

import pytest

from streamnb import LogisticRegression, MultinomialNB, SpamFilter, Tokenizer, load
from streamnb.errors import InvalidInputError, InvalidTypeError, ModelFormatError
from streamnb.filter.asking import LabelRequests, check_budget
from streamnb.filter.rules import LogOddsRule
from streamnb.ledger import text_fingerprint
from streamnb.models import Fusion

TEXTS = [
    ("cheap pills now buy cheap", "spam"), ("meeting at noon about the report", "ham"),
    ("buy now limited offer pills", "spam"), ("the report is due at noon", "ham"),
    ("cheap offer on the report", "spam"), ("lunch meeting moved to noon", "ham"),
] * 4
PROBES = ["cheap report", "noon pills", "buy lunch", "offer meeting", "the cheap noon"]
UNLABELLED = ["cheap cheap pills offer", "report meeting noon lunch", "pills at noon", "buy the report now"]


def small(**kwargs) -> Fusion:
    return Fusion(MultinomialNB(0.5, tokenizer=Tokenizer(), ledger=1000), LogisticRegression(0.2, tokenizer=Tokenizer()),
                  **kwargs)


def trained(**kwargs) -> Fusion:
    model = small(**kwargs)
    for text, label in TEXTS:
        model.learn_one(text, label)
    return model


def state(model: Fusion) -> list[float]:
    """What a prediction reads: the answer, each part's log-odds, the stacker's weights, and
    the account of unlabelled mail."""
    u, clock, *wins = model._core.feedback()
    return ([model.log_odds_one(p) for p in PROBES] + [z for p in PROBES for z in model.part_log_odds(p)]
            + list(model.weights) + [u, float(clock), *wins])


def assert_close(got: list[float], want: list[float], tolerance: float = 1e-9) -> None:
    assert max(abs(a - b) for a, b in zip(got, want)) <= tolerance, (got, want)


def test_a_label_replaces_the_provisional_lesson_exactly():
    observed, labelled = trained(), trained()
    taught = 0
    for text, label in zip(UNLABELLED, ["spam", "ham", "spam", "ham"]):
        observed.observe_one(text)
        taught += bool(observed._records.get(text_fingerprint(text)).lr.g)
        observed.learn_one(text, label)  # the label comes before any other lesson
        labelled.learn_one(text, label)
        assert_close(state(observed), state(labelled))
    assert taught, "no provisional lesson was taken"
    assert not any(steps.provisional for _, steps in observed._records.items())


def test_a_provisional_lesson_moves_the_weights_by_its_own_step():
    model = trained()
    before = [model.part_log_odds(p)[1] for p in PROBES]
    for text in UNLABELLED:
        model.observe_one(text)
    assert [model.part_log_odds(p)[1] for p in PROBES] != before
    for text in UNLABELLED:  # each taken back as it moved the weights, in any order
        model.lr._core.take_back_provisional(text, text_fingerprint(text))
    model._version += 1
    assert_close([model.part_log_odds(p)[1] for p in PROBES], before, 1e-12)


def test_observing_a_message_learned_or_observed_already_changes_nothing():
    model = trained()
    before = state(model)
    model.observe_one(TEXTS[0][0])  # learned
    assert state(model) == before
    model.observe_one(UNLABELLED[0])
    once = state(model)
    model.observe_one(UNLABELLED[0])
    assert state(model) == once
    assert model._core.feedback()[1] == len(set(TEXTS)) + 1  # the clock: messages seen, each once


def test_unlearning_a_message_only_observed_is_refused_and_changes_nothing():
    model = trained()
    model.observe_one(UNLABELLED[0])
    before = state(model)
    with pytest.raises(InvalidInputError):
        model.unlearn_one(UNLABELLED[0], "spam")
    assert state(model) == before


def lean(model: Fusion, lr_wins: float, nb_wins: float) -> None:
    """Set the account's tallies of disagreements won, keeping its coverage and clock."""
    u, clock, _, _ = model._core.feedback()
    model._core.load_feedback(u, clock, (lr_wins, nb_wins))


def test_coverage_falls_without_labels_and_the_answer_leans_on_the_part_that_won():
    model = trained()
    assert model._core.coverage == 1.0
    for probe in PROBES:  # every message labelled: the stacker's fused log-odds, bit for bit
        assert model.log_odds_one(probe) == model._core.fused(*model.part_log_odds(probe))
    for i in range(3000):
        model.observe_one(f"unlabelled message number {i}")
    coverage = model._core.coverage
    assert 0 < coverage < 0.2
    for lr_wins, nb_wins in [(1.0, 40.0), (4.0, 4.0)]:  # naive Bayes ahead; level
        lean(model, lr_wins, nb_wins)
        for probe in PROBES:
            assert model.log_odds_one(probe) == model._core.fused(*model.part_log_odds(probe))
    lean(model, 4.5, 4.0)  # logistic regression ahead: the answer moves towards its log-odds
    for probe in PROBES:
        z_nb, z_lr = model.part_log_odds(probe)
        want = coverage * model._core.fused(z_nb, z_lr) + (1 - coverage) * z_lr
        assert model.log_odds_one(probe) == pytest.approx(want, abs=1e-12)


def test_the_spam_cutoff_rises_once_labels_have_stopped_and_a_label_brings_it_back():
    """LogOddsRule asks one more nat of a spam verdict while the model's label coverage is
    below one in a thousand (src/rule.rs): about ten thousand messages observed after the
    last label. The ham cutoff stays; a label, and the unlearn of that label, move it back."""
    spam_filter = SpamFilter(trained())
    model, rule = spam_filter.model, spam_filter.rule
    fresh = rule.cutoffs(model)
    observed = 0
    while model.label_coverage >= 1e-3:
        spam_filter.observe(f"unlabelled message number {observed}")
        observed += 1
    assert 9_000 < observed < 11_000  # a half-life of 1,000 messages: ten of them
    assert dict(model.class_counts) == {"spam": 3.0, "ham": 3.0}  # observing teaches no class count
    h, t = rule.cutoffs(model)
    assert (h, t) == (fresh[0], fresh[1] + 1.0) == (fresh[0], rule.spam_log_odds + rule.caution * 100 / 3 + 1.0)
    spam_filter.learn("one more report at noon", "ham")
    assert model.label_coverage >= 1e-3
    assert rule.cutoffs(model)[1] == rule.spam_log_odds + rule.caution * 100 / 4  # fresh again
    spam_filter.unlearn("one more report at noon", "ham")
    assert model.label_coverage < 1e-3 and rule.cutoffs(model) == (h, t)
    z = t - 0.5  # between the two spam cutoffs: spam while labels come, unsure once they have stopped
    assert LogOddsRule.decide(z, h, t) == "unsure" and LogOddsRule.decide(z, h, t - 1.0) == "spam"


def test_learn_then_unlearn_gives_everything_back_while_labels_are_scarce():
    model = trained()
    for i in range(1500):
        model.observe_one(f"unlabelled message number {i}")
    lean(model, 40.0, 4.0)
    assert model._core.coverage < 0.5
    for text, label in [("cheap noon report offer", "ham"), ("lunch pills meeting", "spam")]:
        before = state(model)
        model.learn_one(text, label)
        assert max(abs(a - b) for a, b in zip(state(model), before)) > 1e-6
        model.unlearn_one(text, label)
        after = state(model)
        assert after[-3] == before[-3] + 1  # the clock keeps the message's place
        assert_close(after[:-3] + after[-2:], before[:-3] + before[-2:])


def test_a_refused_lesson_leaves_the_account_as_it_was():
    model = trained()
    model.observe_one(UNLABELLED[0])
    before = model._core.feedback()
    with pytest.raises(InvalidInputError):
        model.learn_one("", "spam")  # an empty document: naive Bayes refuses it
    with pytest.raises(InvalidInputError):
        model.learn_one(UNLABELLED[1], "newsletter")  # a third class
    assert model._core.feedback() == before


def test_no_provisional_lesson_while_labels_come_and_the_parts_disagree():
    model = trained()
    agreed = disagreed = 0
    for i in range(60):
        text = " ".join(["cheap", "noon", "pills", "report", "lunch", "offer", "buy", "meeting"][j]
                        for j in range(8) if (i >> (j % 6)) & 1 or j == i % 8)
        z_nb, z_lr = model.part_log_odds(text)
        if z_nb == 0 or z_lr == 0 or model._records.get(text_fingerprint(text)) is not None:
            continue
        model.observe_one(text)
        steps = model._records.get(text_fingerprint(text))
        assert steps is not None and steps.provisional
        if (z_nb > 0) == (z_lr > 0):
            agreed += 1
            assert steps.lr.g and steps.label == model.classes[int(z_lr > 0)]
        else:
            disagreed += 1
            assert not steps.lr.g, text
    assert agreed and disagreed


def test_provisional_weight_zero_and_records_none_teach_nothing():
    for kwargs in ({"provisional_weight": 0.0}, {"records": None}):
        model = trained(**kwargs)
        parts = [model.part_log_odds(p) for p in PROBES]
        for text in UNLABELLED:
            model.observe_one(text)
        assert [model.part_log_odds(p) for p in PROBES] == parts, kwargs


def test_save_and_load_keep_the_account_and_the_provisional_lessons(tmp_path):
    model = trained()
    for text in UNLABELLED:
        model.observe_one(text)
    model.save(tmp_path / "m.snb")
    loaded = load(tmp_path / "m.snb")
    assert_close(state(loaded), state(model), 0.0)
    for text, label in zip(UNLABELLED, ["spam", "ham", "spam", "ham"]):  # the labels replace the lessons
        loaded.learn_one(text, label)
        model.learn_one(text, label)
    assert_close(state(loaded), state(model), 1e-12)
    assert not any(steps.provisional for _, steps in loaded._records.items())


def test_a_bad_saved_account_is_a_model_format_error_and_changes_nothing():
    model = trained()
    model.observe_one(UNLABELLED[0])
    before = model._core.feedback()
    with pytest.raises(ModelFormatError, match="unlabelled"):
        model._core.load_feedback(1.5, 3, (1.0, 1.0))
    with pytest.raises(ModelFormatError, match="won"):
        model._core.load_feedback(0.5, 3, (0.0, 1.0))
    assert model._core.feedback() == before
    state_, arrays = model._state()
    for bad in ([0.1, 2, 1.0], [0.1, -1, 1.0, 1.0], [0.1, 2.5, 1.0, 1.0], "x", [2.0, 2, 1.0, 1.0], [0.1, 2, 1.0, -1.0]):
        with pytest.raises(ModelFormatError):
            Fusion._from_state({**state_, "feedback": bad}, arrays)
    old_state, old_arrays = trained()._state()  # a file from before: every message labelled
    del old_state["feedback"]
    assert Fusion._from_state(old_state, old_arrays)._core.feedback()[0] == 0.0


def test_the_spam_filter_observes_through_its_model_and_the_label_replaces_the_lesson():
    spam_filter, labelled = SpamFilter(trained()), SpamFilter(trained())
    verdict = spam_filter.classify(UNLABELLED[0])
    spam_filter.observe(UNLABELLED[0], verdict)
    kept = spam_filter.model._records.get(text_fingerprint(UNLABELLED[0]))
    assert kept is not None and kept.provisional
    with pytest.raises(InvalidTypeError, match="Verdict"):
        spam_filter.observe(UNLABELLED[1], "spam")
    spam_filter.learn(UNLABELLED[0], "ham")
    labelled.learn(UNLABELLED[0], "ham")
    assert_close(state(spam_filter.model), state(labelled.model))


def test_mail_seen_without_labels_does_not_push_out_the_lessons_records():
    model = small(records=30)
    for text, label in TEXTS:
        model.learn_one(text, label)
    lessons = {f for f, steps in model._records.items() if not steps.provisional}
    for i in range(200):
        model.observe_one(f"unlabelled message number {i}")
    assert {f for f, steps in model._records.items() if not steps.provisional} == lessons
    assert sum(steps.provisional for _, steps in model._records.items()) == 30


def test_a_merge_keeps_this_fusion_s_observations_and_the_other_s_lessons():
    a, b = trained(), small()
    for text, label in TEXTS[:6]:
        b.learn_one(text + " extra", label)
    a.observe_one(UNLABELLED[0])
    b.observe_one(UNLABELLED[1])
    b.learn_one(UNLABELLED[2], "spam")
    a.merge(b)
    assert a._records.get(text_fingerprint(UNLABELLED[0])).provisional
    assert a._records.get(text_fingerprint(UNLABELLED[1])) is None  # its stamp was on b's clock
    assert not a._records.get(text_fingerprint(UNLABELLED[2])).provisional
    a.unlearn_one(UNLABELLED[2], "spam")  # b's lesson: unlearned in the merged fusion


def test_a_saved_observation_record_must_fit_the_clock(tmp_path):
    model = trained()
    model.observe_one(UNLABELLED[0])
    state_, arrays = model._state()
    stamps = arrays["records_seen_at"].copy()
    for bad in (state_["feedback"][1] + 5, ):
        arrays["records_seen_at"] = stamps.copy()
        arrays["records_seen_at"][stamps > 0] = bad
        with pytest.raises(ModelFormatError, match="stamp"):
            Fusion._from_state(state_, arrays)


def test_budget_is_checked():
    for bad in [(1,), (1, 0), (-1, 5), (1.0, 5), (True, 5), [1, 5], None]:
        with pytest.raises(InvalidInputError, match="budget"):
            check_budget(bad)
    assert check_budget((0, 1)) == (0, 1)
    with pytest.raises(InvalidInputError, match="budget"):
        SpamFilter().classify(b"Subject: x\n\ny", budget=(3, 0))


def test_label_requests_spend_the_quota_on_the_least_sure_messages():
    requests = LabelRequests(window=100, warmup=10)
    assert all(requests.ask(50.0, (5, 100)) for _ in range(10))  # warm-up: asked while labels are left
    assert not requests.ask(0.0, (0, 100))  # none left
    assert requests.ask(50.0, (5, 5))  # as many labels as messages: every one
    for i in range(100):
        requests.ask(float(i), (1, 10_000))
    # a tenth of the labels per message: the tenth of the recent |log-odds| nearest 0
    assert requests.ask(9.0, (10, 100)) and not requests.ask(11.0, (10, 100))
    assert requests.ask(-3.0, (10, 100))  # |log-odds|


def test_without_a_budget_ask_says_whether_the_verdict_is_unsure():
    spam_filter = SpamFilter(trained())
    for probe in PROBES + UNLABELLED:
        verdict = spam_filter.classify(probe)
        assert verdict.ask == (verdict.label == "unsure")


def _mail(kind: str, i: int) -> bytes:
    if kind == "spam":
        return f"Subject: cheap pills {i}\n\nbuy cheap pills now, offer {i}\n".encode()
    return f"Subject: lunch {i}\n\nmeeting at noon about the report {i}\n".encode()


@pytest.mark.parametrize("lessons, observe, forget", [
    ([("spam", 0), ("ham", 1), ("ham", 2)], False, ("spam", 0)),  # the first lesson, its class's only one
    ([("ham", 1), ("ham", 2), ("spam", 0)], True, ("spam", 0)),
    ([("spam", 0), ("ham", 1)], True, ("spam", 0)),
    ([("ham", 1)], True, ("ham", 1)),
])
def test_unlearning_a_class_last_message_leaves_a_model_that_saves_and_learns_on(tmp_path, lessons, observe, forget):
    """Naive Bayes hides a class whose last message it unlearns; logistic regression, the stacker
    and the records (observed mail included) still name it: the unlearn takes the steps back under
    the two classes they were taken under, the file keeps the records, and the class comes back."""
    spam_filter = SpamFilter()
    for kind, i in lessons:
        spam_filter.learn(_mail(kind, i), kind)
    if observe:
        for raw in (_mail("spam", 500), _mail("ham", 501)):
            spam_filter.observe(raw, spam_filter.classify(raw))
    spam_filter.unlearn(_mail(forget[0], forget[1]), forget[0])
    assert forget[0] not in spam_filter.model.classes
    path = tmp_path / "filter.snb"
    spam_filter.model.save(path)
    loaded = load(path)
    probes = [_mail("spam", 900), _mail("ham", 901)]
    assert [loaded.log_odds_one(p) for p in probes] == [spam_filter.model.log_odds_one(p) for p in probes]
    for model in (spam_filter.model, loaded):
        model.learn_one(_mail(forget[0], 7), forget[0])
        assert set(model.classes) == {kind for kind, _ in lessons}
        model.save(tmp_path / "again.snb")
    assert [load(tmp_path / "again.snb").log_odds_one(p) for p in probes] == [loaded.log_odds_one(p) for p in probes]
