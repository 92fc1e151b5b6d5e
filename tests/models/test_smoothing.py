"""Smoothing chosen online: alpha="auto" (MultinomialNB, ComplementNB, BernoulliNB) and
mu="auto" (MultinomialNB), see src/smoothing.rs.

The choice is checked on streams drawn from the model's own generative story, where the
best smoothing is known: class word distributions drawn from a symmetric Dirichlet(beta)
make additive smoothing with alpha = beta the Bayes posterior predictive, and ones drawn
from Dirichlet(mu * p) around a shared distribution p make Dirichlet smoothing with that mu
the best. The rest checks what the evidence is a record of, and that every exact operation
of the counts still holds.
"""

from __future__ import annotations

import copy
import pickle
import zipfile
from dataclasses import replace

import numpy as np
import pytest

import streamnb
from streamnb import BernoulliNB, ComplementNB, MultinomialNB, _core
from streamnb.errors import IncompatibleModelsError, InvalidInputError, InvalidParameterError, ModelFormatError
from streamnb.models import Smoothing
from tests.retrain_support import npy, read_members, write_members
from tests.state import snapshot, spam_ham_stream

GRID = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
MU_GRID = (10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0)


def dirichlet_stream(seed: int, concentration: float, base: str, n: int = 600, n_words: int = 200,
                     n_classes: int = 3, length: int = 6) -> list[tuple[dict, str]]:
    """Documents of `length` words from class distributions drawn from Dirichlet(concentration
    * p): p uniform (base="uniform": additive smoothing's story) or itself drawn from
    Dirichlet(1) (base="pooled": Dirichlet smoothing's)."""
    rng = np.random.default_rng(seed)
    p = np.full(n_words, 1.0 / n_words) if base == "uniform" else rng.dirichlet(np.ones(n_words))
    scale = concentration * n_words if base == "uniform" else concentration  # Dirichlet(beta, ..., beta)
    theta = rng.dirichlet(scale * p, size=n_classes)
    stream = []
    for _ in range(n):
        c = int(rng.integers(n_classes))
        counts = rng.multinomial(length, theta[c])
        stream.append(({f"w{j}": int(v) for j, v in enumerate(counts) if v}, f"c{c}"))
    return stream


def learned(model, stream, predict_first=False):
    for x, y in stream:
        if predict_first:
            model.predict_proba_one(x)
        model.learn_one(x, y)
    return model


SPAM = spam_ham_stream(300, 3, ["cheap", "pills", "offer", "win"], ["meeting", "agenda", "lunch", "notes"],
                       ["the", "now", "you", "and", "for"], 4)
AUTO_MODELS = [
    lambda **kw: MultinomialNB(alpha="auto", **kw),
    lambda **kw: ComplementNB(alpha="auto", **kw),
    lambda **kw: ComplementNB(alpha="auto", norm=True, **kw),
    lambda **kw: BernoulliNB(alpha="auto", **kw),
    lambda **kw: MultinomialNB(alpha=0.01, mu="auto", **kw),
    lambda **kw: MultinomialNB(alpha="auto", mu=50.0, **kw),
]
IDS = ["mnb", "cnb", "cnb-norm", "bnb", "mnb-mu", "mnb-alpha-with-mu"]
# ComplementNB(norm=True) keeps its normaliser (a sum over the vocabulary) incrementally from
# the first scoring that needs it, so its scores, and the evidence built on them, depend on
# the calls made in their last bits (as a fixed-alpha model's scores do): compared to 1e-9.
NORM = AUTO_MODELS[2]


def same(a, b, make) -> bool:
    """Equal, bit for bit; to 1e-9 (relative) for ComplementNB(norm=True)."""
    if make is not NORM:
        return a == b
    if isinstance(a, tuple):  # an evidence state: (values, documents scored)
        return a[1] == b[1] and same(a[0], b[0], make)
    return a == pytest.approx(b, rel=1e-9, abs=1e-12)


# -- the choice --------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("beta", [0.3, 1.0])
def test_alpha_auto_picks_the_dirichlet_concentration_the_stream_was_drawn_with(seed, beta):
    model = learned(MultinomialNB(alpha="auto", smoothing=Smoothing(grid=GRID)), dirichlet_stream(seed, beta, "uniform"))
    report = model.smoothing_
    assert report.chosen == beta
    ranked = sorted(report.evidence, reverse=True)
    assert ranked[0] - ranked[1] > 0.5, report  # clearly ahead of the next candidate (by 0.9 to 17 nats)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mu_auto_picks_the_mu_the_stream_was_drawn_with(seed):
    model = learned(MultinomialNB(alpha=0.01, mu="auto", smoothing=Smoothing(grid=MU_GRID)), dirichlet_stream(seed, 100.0, "pooled"))
    assert model.smoothing_.parameter == "mu"
    assert model.smoothing_.chosen == 100.0


def test_before_any_evidence_the_smoothest_candidate_is_chosen():
    model = MultinomialNB(alpha="auto", smoothing=Smoothing(grid=[0.5, 0.01, 2.0]))
    assert model.smoothing.grid == (0.01, 0.5, 2.0)  # kept in increasing order
    model.learn_one({"a": 1}, "x").learn_one({"b": 1}, "y")  # neither scored: a class had no documents
    report = model.smoothing_
    assert (report.chosen, report.documents, report.evidence) == (2.0, 0, (0.0, 0.0, 0.0))
    assert model.predict_proba_one({"a": 1}) == model.with_alpha(2.0).predict_proba_one({"a": 1})


@pytest.mark.parametrize("make", AUTO_MODELS, ids=IDS)
def test_predictions_are_those_of_the_chosen_smoothing_bit_for_bit(make):
    model = learned(make(), SPAM[:200], predict_first=True)
    report = model.smoothing_
    assert report.documents == 198  # every document once both classes had one
    fixed = copy.deepcopy(model)  # the same counts, with the chosen smoothing fixed
    params = fixed.get_params()
    params.update({report.parameter: report.chosen, "smoothing": replace(params["smoothing"], grid=None)})
    fixed = type(model)(**params)
    for x, y in SPAM[:200]:
        fixed.learn_one(x, y)
    for x, _ in SPAM[200:240]:
        assert same(model.predict_log_proba_one(x), fixed.predict_log_proba_one(x), make)
    for many, (x, _) in zip(model.predict_log_proba_many([x for x, _ in SPAM[200:240]]), SPAM[200:240]):
        assert same(many, fixed.predict_log_proba_one(x), make)
    assert same(model.joint_log_likelihood_one(SPAM[0][0]), fixed.joint_log_likelihood_one(SPAM[0][0]), make)
    if report.parameter == "alpha":
        view = model.with_alpha(report.chosen)
        assert same(view.predict_log_proba_one(SPAM[201][0]), fixed.predict_log_proba_one(SPAM[201][0]), make)


# -- what the evidence is a record of ---------------------------------------------------------

@pytest.mark.parametrize("make", AUTO_MODELS, ids=IDS)
def test_the_evidence_does_not_depend_on_which_documents_were_predicted(make):
    """A prediction leaves its candidates' scores for the learning that follows; a learning
    without one scores the document itself (while the record is young: see the schedule
    below): the record is the same, bit for bit."""
    predicted = learned(make(), SPAM[:120], predict_first=True)
    unpredicted = learned(make(), SPAM[:120])
    assert predicted.smoothing_.chosen == unpredicted.smoothing_.chosen
    assert same(predicted._core.evidence_state(), unpredicted._core.evidence_state(), make)
    # a prediction of another document in between does not leak into the next learning
    mixed = make()
    for (x, y), (other, _) in zip(SPAM[:120], SPAM[1:121]):
        mixed.predict_proba_one(x)
        mixed.predict_proba_one(other)
        mixed.learn_one(x, y)
    assert same(mixed._core.evidence_state(), unpredicted._core.evidence_state(), make)


RAMP, PERIOD, BLOCK = _core.SCHEDULE_RAMP, _core.SCHEDULE_PERIOD, _core.SCHEDULE_BLOCK
# past the ramp and through two runs of scored documents
LONG = dirichlet_stream(5, 0.3, "uniform", n=RAMP + PERIOD + 2 * BLOCK + 10, n_classes=2)


def scheduled(counted: int) -> bool:
    """Does the schedule score a document learned without a prediction, `counted` documents
    into the record (src/smoothing.rs)?"""
    return counted < RAMP or (counted - RAMP) % PERIOD < BLOCK


@pytest.mark.parametrize("sample", [True, False], ids=["sampled", "every document"])
@pytest.mark.parametrize("predict_first", [False, True], ids=["learned", "predicted-then-learned"])
def test_the_schedule_scores_exactly_the_documents_it_says(predict_first, sample):
    """With sample_evidence, without a prediction: every document while the record is young,
    then runs of BLOCK every PERIOD, each weighing PERIOD / BLOCK; the others counted, not
    scored. After a prediction of it, or without sample_evidence: every document, with its
    own weight."""
    model = MultinomialNB(alpha="auto", smoothing=Smoothing(sample_evidence=sample))
    scored = counting = 0
    for x, y in LONG:
        counted, before = model.smoothing_.documents, model._core.evidence_state()
        if predict_first:
            model.predict_proba_one(x)
        model.learn_one(x, y)
        after = model._core.evidence_state()
        if after[1] == counted:
            assert after == before  # a document that does not count (a class's first)
            continue
        assert after[1] == counted + 1
        expected = predict_first or not sample or scheduled(counted)
        assert (after[0] != before[0]) == expected, counted
        scored += expected
        counting += 1
    assert counting > RAMP + PERIOD + BLOCK
    assert scored == (RAMP + 2 * BLOCK if sample and not predict_first else counting)


def test_a_scheduled_document_weighs_period_over_block():
    """Past the ramp a scored document stands for the ones passed over: its log-likelihoods
    count PERIOD / BLOCK times (those of a prediction, once)."""
    young = MultinomialNB(alpha="auto", smoothing=Smoothing(sample_evidence=True))
    stream = iter(LONG)
    while young.smoothing_.documents < RAMP:
        young.learn_one(*next(stream))
    x, y = next(stream)
    by_schedule, by_prediction = copy.deepcopy(young), copy.deepcopy(young)
    by_schedule.learn_one(x, y)
    by_prediction.predict_proba_one(x)
    by_prediction.learn_one(x, y)
    start = young._core.evidence_state()[0]
    for s, p, v in zip(by_schedule._core.evidence_state()[0], by_prediction._core.evidence_state()[0], start):
        assert s - v == pytest.approx((PERIOD // BLOCK) * (p - v), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("sample", [True, False], ids=["sampled", "every document"])
@pytest.mark.parametrize("make", AUTO_MODELS, ids=IDS)
def test_learn_many_follows_the_schedule_of_its_rows_in_turn(make, sample):
    streamed = learned(make(smoothing=Smoothing(sample_evidence=sample)), LONG)
    batched = make(smoothing=Smoothing(sample_evidence=sample)).learn_many([x for x, _ in LONG], [y for _, y in LONG])
    assert same(batched._core.evidence_state(), streamed._core.evidence_state(), make)
    assert snapshot(batched) == snapshot(streamed)
    # and so does a batch that continues a model, from any point of the schedule
    cut = RAMP + BLOCK // 2
    continued = learned(make(smoothing=Smoothing(sample_evidence=sample)), LONG[:cut])
    continued.learn_many([x for x, _ in LONG[cut:]], [y for _, y in LONG[cut:]])
    assert same(continued._core.evidence_state(), streamed._core.evidence_state(), make)


def test_an_email_model_scores_a_learned_message_as_its_predictions_do():
    """EmailNB scores with IDF weights: a learn without a prediction, one by one or in a
    batch, records the scores a prediction would have left (a batch's rows, read before
    any is learned, hold their features in another order: their sums agree to the last bits)."""
    from streamnb import EmailNB

    messages = [(f"Subject: {' '.join(list(x)[:2])}\nFrom: someone@{y}.example\n\n{' '.join(x)}".encode(), y)
                for x, y in SPAM[:80]]
    predicted = learned(EmailNB(alpha="auto"), messages, predict_first=True)
    streamed = learned(EmailNB(alpha="auto"), messages)
    batched = EmailNB(alpha="auto").learn_many([m for m, _ in messages], [y for _, y in messages])
    assert streamed._core.evidence_state() == predicted._core.evidence_state()
    assert same(batched._core.evidence_state(), predicted._core.evidence_state(), NORM)
    assert predicted.smoothing_.documents == 78


@pytest.mark.parametrize("make", AUTO_MODELS, ids=IDS)
def test_learn_many_records_each_row_against_the_rows_before_it(make):
    # (a batch's rows are read before any is learned, so their features come in another
    # order: ComplementNB(norm=True)'s sums then agree to their last bits, see NORM)
    streamed = learned(make(), SPAM[:100])
    batched = make().learn_many([x for x, _ in SPAM[:100]], [y for _, y in SPAM[:100]])
    assert same(batched._core.evidence_state(), streamed._core.evidence_state(), make)
    assert snapshot(batched) == snapshot(streamed)


def test_a_refused_batch_changes_nothing():
    """learn_many learns a model choosing online one row at a time, but checks the whole batch first."""
    model = learned(MultinomialNB(alpha="auto"), SPAM[:20]).learn_one({"big": 1e299}, "spam")
    before = (snapshot(model), model._core.evidence_state(), model.n_learned)
    with pytest.raises(InvalidInputError, match="would overflow"):
        model.learn_many([{"big": 5e299}, {"big": 5e299}], ["spam", "spam"])
    with pytest.raises(InvalidInputError, match="empty document at row 1"):
        model.learn_many([{"cheap": 1}, {}], ["spam", "ham"])
    assert (snapshot(model), model._core.evidence_state(), model.n_learned) == before


def test_the_counts_are_those_of_a_fixed_model():
    auto = learned(MultinomialNB(alpha="auto"), SPAM, predict_first=True)
    fixed = MultinomialNB(alpha=0.1).learn_many([x for x, _ in SPAM], [y for _, y in SPAM])
    assert snapshot(auto) == snapshot(fixed)


@pytest.mark.parametrize("make", AUTO_MODELS, ids=IDS)
def test_unlearning_restores_the_counts_and_leaves_the_evidence(make):
    model = learned(make(), SPAM[:150])
    counts, evidence = snapshot(model), model._core.evidence_state()
    probe = SPAM[160][0]
    before = model.predict_log_proba_one(probe)
    x, y = SPAM[150]
    model.learn_one(x, y)
    assert model._core.evidence_state() != evidence  # learning recorded it
    recorded = model._core.evidence_state()
    model.unlearn_one(x, y)
    assert snapshot(model) == counts
    assert model._core.evidence_state() == recorded  # a record of the stream: unchanged
    if model.smoothing_.chosen == learned(make(), SPAM[:150]).smoothing_.chosen:
        assert model.predict_log_proba_one(probe) == pytest.approx(before, abs=1e-9)


def test_merging_appends_the_records():
    a_stream, b_stream = SPAM[:150], SPAM[150:]
    a = learned(MultinomialNB(alpha="auto", smoothing=Smoothing(evidence_half_life=50)), a_stream)
    b = learned(MultinomialNB(alpha="auto", smoothing=Smoothing(evidence_half_life=50)), b_stream)
    a_values, a_scored = a._core.evidence_state()
    b_values, b_scored = b._core.evidence_state()
    a.merge(b)
    values, scored = a._core.evidence_state()
    age = (2.0 ** (-1.0 / 50)) ** b_scored  # what the record ages by: the decay per document, b_scored times
    assert scored == a_scored + b_scored
    assert values == [age * x + y for x, y in zip(a_values, b_values)]
    # the counts are those of one model trained on both streams (the evidence is not: each
    # document was scored by the model that learned it)
    assert snapshot(a) == snapshot(learned(MultinomialNB(alpha="auto", smoothing=Smoothing(evidence_half_life=50)), SPAM))


@pytest.mark.parametrize("other", [
    lambda: MultinomialNB(alpha=0.1),
    lambda: MultinomialNB(alpha="auto", smoothing=Smoothing(grid=[0.1, 1.0])),
    lambda: MultinomialNB(alpha="auto", smoothing=Smoothing(evidence_half_life=10)),
], ids=["fixed", "other-grid", "other-decay"])
def test_models_choosing_among_other_candidates_do_not_merge(other):
    model = learned(MultinomialNB(alpha="auto"), SPAM[:50])
    before, evidence = snapshot(model), model._core.evidence_state()
    with pytest.raises(IncompatibleModelsError):
        model.merge(learned(other(), SPAM[50:80]))
    assert (snapshot(model), model._core.evidence_state()) == (before, evidence)


def test_the_evidence_decays_with_its_half_life():
    stream = SPAM[:200]
    kept = learned(MultinomialNB(alpha="auto"), stream)
    aged = learned(MultinomialNB(alpha="auto", smoothing=Smoothing(evidence_half_life=20)), stream)
    assert kept.smoothing_.documents == aged.smoothing_.documents == 198
    # what 198 documents of evidence weigh: sum of 2^(-i/20) over i < 198, about 29 documents' worth
    assert min(aged._core.evidence_state()[0]) > min(kept._core.evidence_state()[0]) / 4
    # the same stream ending in another regime moves the aged choice, not the kept one
    flipped = [(x, {"spam": "ham", "ham": "spam"}[y]) for x, y in SPAM[200:300]]
    assert learned(copy.deepcopy(aged), flipped).smoothing_ != aged.smoothing_


# -- persistence ---------------------------------------------------------------------------

@pytest.mark.parametrize("make", AUTO_MODELS, ids=IDS)
def test_save_and_load_round_trip_the_choice_bit_for_bit(make, tmp_path):
    model = learned(make(), SPAM[:150], predict_first=True)
    path = tmp_path / "auto.snb"
    model.save(path)
    loaded = streamnb.load(path)
    assert loaded.smoothing_ == model.smoothing_
    assert loaded._core.evidence_state() == model._core.evidence_state()
    assert loaded.get_params() == model.get_params()
    for x, _ in SPAM[150:170]:
        assert same(loaded.predict_log_proba_one(x), model.predict_log_proba_one(x), make)
    # and both go on alike
    for m in (model, loaded):
        learned(m, SPAM[150:], predict_first=True)
    assert same(loaded._core.evidence_state(), model._core.evidence_state(), make)
    assert pickle.loads(pickle.dumps(model))._core.evidence_state() == model._core.evidence_state()


def test_save_and_load_keep_the_place_in_the_schedule(tmp_path):
    """The schedule depends on the documents counted alone, which the file keeps: a model
    loaded between two runs of scored documents goes on as the original does."""
    cut = RAMP + BLOCK + 5  # passed over, waiting for the next run
    model = learned(MultinomialNB(alpha="auto", smoothing=Smoothing(sample_evidence=True)), LONG[:cut])
    path = tmp_path / "auto.snb"
    model.save(path)
    loaded = streamnb.load(path)
    assert loaded._core.evidence_state() == model._core.evidence_state()
    for m in (model, loaded):
        learned(m, LONG[cut:])
    assert loaded._core.evidence_state() == model._core.evidence_state()
    assert loaded.smoothing.sample_evidence
    assert loaded._core.evidence_state() == learned(MultinomialNB(alpha="auto", smoothing=Smoothing(sample_evidence=True)),
                                                    LONG)._core.evidence_state()


def test_a_damaged_or_missing_evidence_is_refused_by_name(tmp_path):
    path = tmp_path / "auto.snb"
    learned(MultinomialNB(alpha="auto"), SPAM[:40]).save(path)
    metadata, members = read_members(path)
    assert set(metadata["arrays"]) >= {"smoothing_evidence", "smoothing_scored"}
    with zipfile.ZipFile(path) as archive, archive.open("arrays/smoothing_evidence.npy") as member:
        evidence = np.lib.format.read_array(member)
    positive, nan = evidence.copy(), evidence.copy()
    positive[2, 5], nan[2, 5] = 0.5, np.nan
    for changed, message in [
        (evidence[:3], r"array 'smoothing_evidence' must be <f8 of shape \[8, 33\]"),
        (positive, "a log-likelihood is a finite number <= 0"),
        (nan, "a log-likelihood is a finite number <= 0"),
    ]:
        meta = copy.deepcopy(metadata)
        meta["arrays"]["smoothing_evidence"]["shape"] = list(changed.shape)
        write_members(path, meta, {**members, "arrays/smoothing_evidence.npy": npy(changed)})
        with pytest.raises(ModelFormatError, match=message):
            streamnb.load(path)
    meta = copy.deepcopy(metadata)
    for name in ("smoothing_evidence", "smoothing_scored"):
        del meta["arrays"][name]
    write_members(path, meta, {name: data for name, data in members.items() if "smoothing_" not in name})
    with pytest.raises(ModelFormatError, match="keeps its evidence"):
        streamnb.load(path)


# -- parameters ----------------------------------------------------------------------------

@pytest.mark.parametrize("params, message", [
    ({"alpha": 0.1, "smoothing": {"grid": [0.1, 1.0]}}, "Smoothing.grid holds the candidates of alpha='auto'"),
    ({"alpha": "auto", "smoothing": {"grid": []}}, "Smoothing.grid must hold at least one candidate"),
    ({"alpha": "auto", "smoothing": {"grid": [0.1, 0.0]}}, "Smoothing.grid must hold finite numbers > 0, got 0.0"),
    ({"alpha": "auto", "smoothing": {"grid": [0.1, float("nan")]}}, "finite numbers > 0, got nan"),
    ({"alpha": "auto", "smoothing": {"grid": [0.1, "1"]}}, "finite numbers > 0, got '1'"),
    ({"alpha": "auto", "smoothing": {"grid": [0.1, 0.1]}}, "distinct values"),
    ({"alpha": "auto", "smoothing": {"grid": "0.1"}}, "must be a list of numbers"),
    ({"alpha": "Auto"}, "alpha must be a finite number > 0, got 'Auto'"),
    ({"alpha": 0.1, "smoothing": {"evidence_half_life": 100}}, "this model's smoothing is fixed"),
    ({"alpha": "auto", "smoothing": {"evidence_half_life": 0}},
     "Smoothing.evidence_half_life must be a finite number > 0"),
    ({"alpha": "auto", "mu": "auto"}, "choose alpha or mu online, not both"),
    ({"alpha": 0.1, "mu": 10.0, "smoothing": {"grid": [1.0]}}, "holds the candidates of alpha='auto' \\(or mu='auto'\\)"),
    ({"alpha": 0.1, "mu": "auto", "smoothing": {"grid": [-1.0]}}, "finite numbers > 0, got -1.0"),
])
def test_bad_parameters_are_named(params, message):
    with pytest.raises(InvalidParameterError, match=message):
        settings = params.get("smoothing")
        MultinomialNB(**{**params, "smoothing": None if settings is None else Smoothing(**settings)})


def test_a_fixed_smoothing_has_no_report_and_auto_round_trips_its_parameters():
    assert MultinomialNB(alpha=0.5).smoothing_ is None
    for model in (MultinomialNB(alpha="auto", smoothing=Smoothing(grid=[1.0, 0.1], evidence_half_life=500.0)),
                  MultinomialNB(alpha=0.01, mu="auto"), BernoulliNB(alpha="auto"), ComplementNB(alpha="auto")):
        assert type(model)(**model.get_params()).get_params() == model.get_params()
    model = learned(MultinomialNB(alpha="auto", smoothing=Smoothing(grid=[0.1, 1.0])), SPAM[:30])
    text = str(model.smoothing_)
    assert text.startswith(f"alpha chosen online: {model.smoothing_.chosen:g} (2 candidates, evidence of 28 documents)")
    assert "<- chosen" in text


def test_inspect_shows_the_choice(tmp_path, capsys):
    from streamnb.service.cli import main

    path = tmp_path / "auto.snb"
    learned(MultinomialNB(alpha="auto"), SPAM[:60]).save(path)
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "alpha chosen online" in out and "<- chosen" in out


@pytest.mark.parametrize("name", ["MultinomialNB", "ComplementNB", "BernoulliNB"])
def test_river_checks_pass_with_auto(name):
    pytest.importorskip("river")
    from river import checks

    from streamnb.integrations import river as snr

    checks.check_estimator(getattr(snr, name)(alpha="auto"))


def test_the_command_trains_with_alpha_auto(tmp_path, capsys):
    from streamnb.service.cli import main

    data = tmp_path / "d.csv"
    data.write_text("text,label\n" + "".join(f"{' '.join(x)},{y}\n" for x, y in SPAM[:60]))
    path = tmp_path / "m.snb"
    assert main(["train", str(path), "--model-type", "multinomial", "--tokenizer", "words", "--alpha", "auto",
                 "--data", str(data)]) == 0
    model = streamnb.load(path)
    assert model.alpha == "auto" and model.smoothing_.documents == 58
    with pytest.raises(SystemExit):
        main(["train", str(tmp_path / "other.snb"), "--alpha", "Auto", "--data", str(data)])
    assert "must be a finite number > 0 or auto, got 'Auto'" in capsys.readouterr().err
