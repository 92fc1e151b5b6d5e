"""The recommended filter (issue 15): EmailWeights, EmailNB and LogOddsRule, all exact."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import streamnb
from streamnb import EmailNB, EmailTokenizer, EmailWeights, MultinomialNB
from streamnb.errors import IncompatibleModelsError, InvalidParameterError, InvalidTypeError
from streamnb.features.weighting import QUANTUM_BITS
from streamnb.filter.decision import HAM, SPAM, UNSURE, LogOddsRule, PosteriorRule, SpamFilter, progressive_filter
from streamnb.models import Fusion
from tests.retrain_support import read_members, write_members
from tests.state import snapshot

SPAM_WORDS = "cheap pills viagra discount offer winner prize casino loan free".split()
HAM_WORDS = "meeting agenda project report lunch review draft schedule notes team".split()


def mail(i: int, kind: str, sender: str | None = None) -> bytes:
    words = SPAM_WORDS if kind == SPAM else HAM_WORDS
    body = " ".join(words[(i * 3 + k) % len(words)] for k in range(6 + i % 5))
    sender = sender or (f"deals{i % 3}@offers.example.com" if kind == SPAM else f"person{i % 4}@work.example.org")
    head = f"From: {sender}\nTo: me@example.org\nSubject: {words[i % len(words)]} {i}\n"
    if i % 4 == 0:
        head += "Content-Type: text/html\n"
        body = f"<p>{body}</p><a href='http://{kind}{i % 2}.example.net/x'>here</a>"
    return (head + f"\n{body}\nline {i} word{i}\n").encode()


def stream(n: int = 40) -> list[tuple[bytes, str]]:
    return [(mail(i, SPAM if i % 3 else HAM), SPAM if i % 3 else HAM) for i in range(n)]


PROBES = [mail(100 + i, kind) for i in range(6) for kind in (SPAM, HAM)] + [b"Subject: hello\n\nzzz cheap meeting\n"]


def scores(model) -> list[dict]:
    return [model.predict_log_proba_one(x) for x in PROBES]


def trained(messages, **params) -> EmailNB:
    model = EmailNB(**params)
    for x, y in messages:
        model.learn_one(x, y)
    return model


# -- EmailWeights ---------------------------------------------------------------------------------

def test_weights_carry_each_fields_mass_and_depend_on_the_message_alone():
    weights = EmailWeights()
    raw = mail(4, SPAM)
    w = weights(raw)
    assert w == weights(raw) == EmailWeights()(raw)  # nothing learned, nothing remembered
    totals: dict[str, float] = {}
    for feature, value in w.items():
        totals[weights.field(feature)] = totals.get(weights.field(feature), 0.0) + value
    step = 2.0 ** -QUANTUM_BITS
    for name, total in totals.items():
        n = sum(weights.field(f) == name for f in w)
        assert abs(total - weights.mass_of(name)) <= n * step / 2 + 1e-12, name
    assert totals["body"] == pytest.approx(30.0, abs=1e-3) and totals["sender"] == pytest.approx(6.0, abs=1e-3)
    assert "from-address:deals1@offers.example.com" in w
    assert all(value * 2 ** QUANTUM_BITS == round(value * 2 ** QUANTUM_BITS) for value in w.values())


def test_weights_are_log1p_of_counts_within_a_field():
    weights = EmailWeights(EmailTokenizer(), body_mass=10.0)
    w = weights(b"Subject: x\n\nspam spam spam eggs\n")
    assert w["spam"] / w["eggs"] == pytest.approx(math.log(4) / math.log(2), rel=1e-4)
    assert w["spam"] + w["eggs"] == pytest.approx(10.0, abs=1e-4)


def test_reweigh_scales_back_to_the_masses():
    weights = EmailWeights(EmailTokenizer(), body_mass=4.0, field_mass=1.0)
    out = weights.reweigh({"a": 1.0, "b": 1.0, "subject:c": 2.0}, {"a": 3.0})
    assert out == pytest.approx({"a": 3.0, "b": 1.0, "subject:c": 1.0})


def test_weights_settings_round_trip_and_are_checked():
    weights = EmailWeights(body_mass=20.0, masses={"sender": 1.0, "url": 2.0})
    assert EmailWeights(**weights.get_params()) == weights
    assert pickle.loads(pickle.dumps(weights)) == weights
    for bad in ({"body_mass": 0}, {"field_mass": math.inf}, {"masses": {"body": 2.0}}, {"masses": {"nope": 1.0}},
                {"masses": {"url": -1.0}}):
        with pytest.raises(InvalidParameterError):
            EmailWeights(**bad)
    with pytest.raises(InvalidTypeError):
        EmailWeights(tokenizer="email")


def test_the_sender_address_feature_is_opt_in():
    raw = b'From: "Jo" <Jo.Doe@Mail.Example.com>\nSubject: hi\n\nhello\n'
    assert not any(f.startswith("from-address:") for f in EmailTokenizer()(raw))
    with_sender = EmailTokenizer(sender_address=True)
    features = with_sender(raw)
    assert features["from-address:jo.doe@mail.example.com"] == 1
    assert with_sender.field("from-address:jo.doe@mail.example.com") == "sender"
    assert EmailTokenizer().field("from-address:x@y.z") == "other"
    assert {f: v for f, v in features.items() if not f.startswith("from-address:")} == EmailTokenizer()(raw)


# -- EmailNB: exact in every way -------------------------------------------------------------------

def test_unlearning_any_message_gives_the_model_that_never_saw_it():
    messages = stream()
    full = trained(messages)
    for k in (0, 17, len(messages) - 1):  # first, middle, last learned
        without = trained(messages[:k] + messages[k + 1:])
        model = trained(messages)
        model.unlearn_one(*messages[k])
        assert scores(model) == scores(without)  # bit for bit
        if k:  # (without the first message, the classes were met in the other order)
            assert snapshot(model) == snapshot(without)
    assert scores(full) != scores(trained(messages[1:]))


def test_merge_is_concatenation_bit_for_bit():
    messages = stream()
    a, b = trained(messages[:25]), trained(messages[25:])
    a.merge(b)
    assert scores(a) == scores(trained(messages))
    with pytest.raises(IncompatibleModelsError):
        trained(messages[:5]).merge(trained(messages[5:], idf=False))


def test_a_model_saved_before_idf_offset_existed_loads_with_scikit_learn_s_offset(tmp_path):
    model = trained(stream(), idf_offset=1.0)
    model.save(tmp_path / "m.snb")
    metadata, members = read_members(tmp_path / "m.snb")
    params = dict(metadata["state"]["$map"])["params"]["$map"]  # the saved get_params(), as pairs
    params.remove(["idf_offset", 1.0])  # what a file of the code before the parameter holds
    write_members(tmp_path / "old.snb", metadata, members)
    loaded = streamnb.load(tmp_path / "old.snb")
    assert loaded.idf_offset == 1.0 and scores(loaded) == scores(model)
    assert scores(loaded) != scores(trained(stream()))  # the default offset scores otherwise


def test_save_load_and_pickle_round_trip(tmp_path):
    model = trained(stream(), ledger=100, half_life=50.0, idf_offset=0.5)
    model.save(tmp_path / "m.snb")
    loaded = streamnb.load(tmp_path / "m.snb")
    assert type(loaded) is EmailNB and loaded.get_params() == model.get_params()
    assert scores(loaded) == scores(model)
    assert scores(pickle.loads(pickle.dumps(model))) == scores(model)
    loaded.learn_one(mail(200, SPAM), SPAM)  # and it keeps learning
    model.learn_one(mail(200, SPAM), SPAM)
    assert scores(loaded) == scores(model)


def test_a_ledger_moves_a_message_and_a_forgetting_model_unlearns_what_it_still_weighs():
    messages = stream()
    model = trained(messages, ledger=1000, half_life=30.0)
    assert model.feature_doc_counts("word20")
    model.unlearn_one(*messages[20])  # the ledger knows its age
    assert model.feature_doc_counts("word20") == {}  # every decayed trace of it is gone
    messages = stream()
    relearned = trained(messages, ledger=1000)
    relearned.learn_one(messages[3][0], HAM if messages[3][1] == SPAM else SPAM)  # moved to the other class
    moved = messages[:3] + [(messages[3][0], HAM if messages[3][1] == SPAM else SPAM)] + messages[4:]
    assert scores(relearned) == scores(trained(moved))


def test_scores_use_the_idf_of_the_counts_as_they_stand():
    model = trained(stream())
    x = mail(123, SPAM)
    weights = model.tokenizer(x)
    counts = model.document_counts(weights)
    n = counts.class_docs.sum()
    docs = dict(zip(counts.features, counts.docs.sum(axis=1)))
    factors = {f: math.log((1 + n) / (1 + docs.get(f, 0.0))) + model.idf_offset for f in weights}
    expected = model.tokenizer.reweigh(weights, factors)
    assert model.score_weights(x) == pytest.approx(expected)
    plain = MultinomialNB(alpha=model.alpha, mu=100.0, class_prior="uniform", tokenizer=model.tokenizer)
    for raw, label in stream():
        plain.learn_one(raw, label)
    assert model.predict_log_proba_one(x) == pytest.approx(plain.predict_log_proba_one(expected), abs=1e-12)
    assert model.predict_log_proba_one(weights) == model.predict_log_proba_one(x)  # a mapping: the weights
    no_idf = trained(stream(), idf=False)
    assert no_idf.predict_log_proba_one(x) == pytest.approx(plain.predict_log_proba_one(weights), abs=1e-12)
    split = model.contributions_one(x)
    log_proba = model.predict_log_proba_one(x)
    s, h = split.classes.index(SPAM), split.classes.index(HAM)
    assert (split.rest[s] + split.terms[:, s].sum()) - (split.rest[h] + split.terms[:, h].sum()) == pytest.approx(
        log_proba[SPAM] - log_proba[HAM], abs=1e-9)
    assert model.predict_many([x, PROBES[0]]) == [model.predict_one(x), model.predict_one(PROBES[0])]


def test_defaults_and_bad_parameters():
    model = EmailNB()
    params = model.get_params()
    assert (params["alpha"], params["mu"], params["class_prior"], params["idf"], params["idf_offset"]) == (
        0.3, 100.0, "uniform", True, 0.03)
    assert isinstance(model.tokenizer, EmailWeights) and model.predict_log_proba_one(mail(1, SPAM)) == {}
    with pytest.raises(InvalidTypeError):
        EmailNB(tokenizer=EmailTokenizer())
    with pytest.raises(InvalidParameterError):
        EmailNB(idf="yes")
    for bad in (-0.1, 2e6, 10**400, math.inf, math.nan, True, "1", None):
        with pytest.raises(InvalidParameterError, match="idf_offset must be a finite number"):
            EmailNB(idf_offset=bad)
    with pytest.raises(InvalidParameterError, match="idf_offset"):
        model.idf_offset = -1.0
    with pytest.raises(InvalidParameterError, match="idf_offset"):  # the core's own guard
        model._core.set_idf(model.tokenizer._core, math.nan)
    assert model.idf_offset == 0.03 and EmailNB(idf_offset=np.float32(0.5)).idf_offset == 0.5


def test_the_idf_offset_can_be_set_on_a_trained_model_and_survives_other_settings():
    messages = stream()
    model = trained(messages)
    model.idf_offset = 1.0
    assert scores(model) == scores(trained(messages, idf_offset=1.0)) != scores(trained(messages))
    model.tokenizer = EmailWeights()
    model.idf = False
    model.idf = True
    assert scores(model) == scores(trained(messages, idf_offset=1.0))
    with pytest.raises(IncompatibleModelsError):
        trained(messages[:5]).merge(trained(messages[5:], idf_offset=1.0))


BARE = b"Date: Mon, 1 Jul 2002 10:00:00 +0000\nFrom: a@b.example\nSubject: s\n\nhello there\n"
LISTED = b"Date: Mon, 1 Jul 2002 10:00:00 +0000\nFrom: a@b.example\nSubject: s\nList-Id: x\n\nhello there\n"


def test_a_feature_in_every_message_weighs_the_idf_offset():
    """idf_f = ln((1 + N) / (1 + D_f)) + idf_offset: a header name every message has (D_f = N)
    weighs the offset beside a rarer one of its field, and a field made only of such features
    still carries its mass (with offset 0 it carries nothing)."""
    for offset in (1.0, 0.03, 0.0):
        model = EmailNB(idf_offset=offset)
        model.learn_one(BARE, SPAM).learn_one(BARE, HAM)
        listed = model.score_weights(LISTED)
        rare = math.log(3) + offset  # header:list-id: D_f = 0 of N = 2
        mass = model.tokenizer.mass_of("header")
        share = offset / (3 * offset + rare)
        assert listed.get("header:from", 0.0) == pytest.approx(mass * share, abs=1e-12)
        assert listed["header:list-id"] == pytest.approx(mass * rare / (3 * offset + rare))
        bare = model.score_weights(BARE)
        expected = {"header:date", "header:from", "header:subject"} if offset else set()
        assert {f for f in bare if f.startswith("header:")} == expected
        assert sum(v for f, v in bare.items() if f.startswith("header:")) == pytest.approx(mass if offset else 0.0)


# -- LogOddsRule and the default filter ----------------------------------------------------------

def test_log_odds_rule_cutoffs_move_with_the_class_counts():
    rule = LogOddsRule(-5.0, 16.0, 8.0)
    model = trained(stream(30))  # 20 spam, 10 ham
    h, t = rule.cutoffs(model)
    assert (h, t) == (pytest.approx(-5.0 - 800 / 20), pytest.approx(16.0 + 800 / 10))
    for z, verdict in [(t, SPAM), (t - 1e-9, UNSURE), (h, UNSURE), (h - 1e-9, HAM), (math.inf, SPAM),
                       (-math.inf, HAM), (0.0, UNSURE)]:
        score = rule.scaled(z, h, t)  # for display: it shows the verdict, decided on z
        assert rule.decide(z, h, t) == verdict, z
        assert PosteriorRule(rule.ham_cutoff, rule.spam_cutoff).decide(score) == verdict, (z, score)
    zs = np.linspace(h - 50, t + 50, 400)
    assert np.all(np.diff([rule.scaled(z, h, t) for z in zs]) > 0)  # strictly monotone
    assert LogOddsRule(caution=0.0).cutoffs(model) == (-5.0, 16.0)
    assert rule.judge(trained(stream(30)[1:3]), {}, math.inf, 1.0, SPAM, HAM) == (UNSURE, pytest.approx(0.55))
    for bad in ({"ham_log_odds": 1.0, "spam_log_odds": 0.0}, {"caution": -1.0}, {"spam_log_odds": math.nan}):
        with pytest.raises(InvalidParameterError):
            LogOddsRule(**bad)


def test_the_default_filter_is_the_recommended_one():
    spam_filter = SpamFilter()
    assert isinstance(spam_filter.model, Fusion) and isinstance(spam_filter.model.nb, EmailNB)
    assert isinstance(spam_filter.rule, LogOddsRule)
    assert (spam_filter.rule.ham_log_odds, spam_filter.rule.spam_log_odds) == (-2.0, 3.0)  # the fusion's cutoffs
    assert SpamFilter(EmailNB()).rule.spam_log_odds == 16.0  # an EmailNB keeps its own
    report = progressive_filter(spam_filter, stream(60))
    assert report.verdicts[0] == UNSURE and set(report.verdicts) <= {SPAM, HAM, UNSURE}
    assert spam_filter.classify(mail(300, SPAM)).log_odds > 0 > spam_filter.classify(mail(300, HAM)).log_odds
    before = scores(spam_filter.model.nb)
    spam_filter.learn(mail(301, HAM), HAM)
    spam_filter.unlearn(mail(301, HAM), HAM)
    assert scores(spam_filter.model.nb) == before  # naive Bayes unlearns exactly (the rest: tests/models/test_fusion.py)


def test_the_filter_hands_raw_messages_to_a_model_that_reads_them():
    spam_filter = SpamFilter(EmailNB())
    raw = mail(7, SPAM)
    assert spam_filter.features(raw) is raw  # EmailNB reads it in the core: no dict per message
    weights = spam_filter.model.tokenizer
    by_dict = SpamFilter(EmailNB(), tokenizer=weights)
    assert by_dict.features(raw) == weights(raw)
    for x, y in stream():
        spam_filter.learn(x, y)
        by_dict.learn(x, y)
    for probe in PROBES:
        a, b = spam_filter.classify(probe), by_dict.classify(probe)
        assert (a.label, a.log_odds) == (b.label, pytest.approx(b.log_odds, rel=1e-12, abs=1e-12))
        assert [e.feature for e in a.evidence] == [e.feature for e in b.evidence]
