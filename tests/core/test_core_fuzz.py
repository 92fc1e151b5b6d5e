"""A fuzz target at the Python boundary of the core (issue 13): arbitrary documents, labels,
weights and operation sequences thrown at every kind of model.

The oracle, for every call: it raises a ``streamnb.errors`` error and the model is exactly
as it was (a full snapshot), or it succeeds and then
- a learned document unlearns exactly (the snapshot returns bit for bit, docs/design.md inv. 3),
- every prediction is {} (nothing learned) or a distribution over ``model.classes`` whose
  log-probabilities are <= 0 and sum to 1,
- a save/load round trip and a pickle give back the same model (or saving refuses with a
  streamnb error naming the value it cannot write).
No other exception may escape (a ``PanicException`` derives from BaseException: it would).

CI runs a few hundred inputs; ``STREAMNB_FUZZ_EXAMPLES=100000`` runs the long campaign.
Inputs that once broke an invariant are pinned below with ``@example``.
"""

from __future__ import annotations

import atexit
import math
import os
import pickle
import sys
from collections import Counter
from decimal import Decimal
from fractions import Fraction

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from streamnb import BernoulliNB, ComplementNB, EmailTokenizer, MultinomialNB, Tokenizer, persist
from streamnb.errors import StreamNBError
from streamnb.models import Forgetting, Pruning, Storage
from tests.retrain_support import counts, snapshot

FUZZ_EXAMPLES = int(os.environ.get("STREAMNB_FUZZ_EXAMPLES", "0"))
TALLY: Counter = Counter()  # (operation, outcome) over the whole run, printed after a long campaign


@atexit.register
def _report() -> None:
    if FUZZ_EXAMPLES and TALLY:
        calls = sum(n for (op, _), n in TALLY.items() if op != "example")
        print(f"\nfuzz: {TALLY['example', 'run']} inputs, {calls} calls:", file=sys.stderr)
        for (op, outcome), n in sorted(TALLY.items()):
            print(f"  {op:14s} {outcome:28s} {n}", file=sys.stderr)

scalars = st.one_of(
    st.text(max_size=8), st.integers(), st.integers(-2**70, 2**70).map(lambda i: i * 10**300),
    st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.none(), st.binary(max_size=6))
keys = st.one_of(st.text(max_size=12), st.sampled_from(["a", "b", "cheap", "\ud800", "\udc80x", ""]),
                 st.integers(-5, 5), st.tuples(st.text(max_size=3), st.integers(0, 3)), st.none(), st.booleans(),
                 st.floats(allow_nan=True), st.binary(max_size=4), st.just(frozenset({1})))
values = st.one_of(
    st.integers(0, 4), st.floats(0.01, 5.0), st.floats(allow_nan=True, allow_infinity=True),
    st.integers(), st.sampled_from([-1, 0, 1e300, 5e-324, -0.0, 10**400, True, np.float32(2.5), np.int64(3)]),
    st.just(Fraction(1, 3)), st.just(Decimal("1")), st.text(max_size=2), st.none(), st.just([1.0]))
mappings = st.dictionaries(keys, values, max_size=6)
clean_mappings = st.dictionaries(st.sampled_from(["a", "b", "c", "cheap", "\u00e9t\u00e9", 7, ("t", 1)]),
                                 st.integers(1, 3), min_size=1, max_size=4)
texts = st.one_of(st.text(max_size=60), st.sampled_from(["cheap pills now", "Meeting at NOON", "\ud800ab cd\udfff"]),
                  st.binary(max_size=60).map(lambda b: b"Subject: x\r\n\r\n" + b))
hostile_documents = st.one_of(mappings, st.integers(), st.none(), st.lists(st.integers(), max_size=2))
documents = st.one_of(clean_mappings, clean_mappings, texts, texts, hostile_documents)  # about half sane
sane_labels = st.sampled_from(["spam", "ham", 3, True])
labels = st.one_of(sane_labels, sane_labels, sane_labels, scalars, st.lists(st.integers(), max_size=1))
sane_weights = st.sampled_from([1.0, 0.5, 2.0, 0.3])
weights = st.one_of(sane_weights, sane_weights, sane_weights, st.floats(allow_nan=True, allow_infinity=True),
                    st.integers(-3, 3), st.just(10**400), st.text(max_size=1))

MODELS = [
    ("multinomial", lambda: MultinomialNB()),
    ("mu", lambda: MultinomialNB(mu=2.0, storage=Storage(dense_max_classes=1))),
    ("bernoulli", lambda: BernoulliNB(binarize=0.5)),
    ("complement-norm", lambda: ComplementNB(norm=True, pruning=Pruning(max_features=6))),
    ("hashed", lambda: MultinomialNB(storage=Storage(n_buckets=32), forgetting=Forgetting(half_life=5.0))),
    ("words", lambda: MultinomialNB(tokenizer=Tokenizer(ngram_range=(1, 2)))),
    ("email", lambda: BernoulliNB(tokenizer=EmailTokenizer())),
]
op_names = st.sampled_from(["learn_one", "unlearn_one", "learn_many", "unlearn_many", "unlearn_last", "predict",
                           "merge", "save"])
sane_calls = st.tuples(op_names, st.one_of(clean_mappings, texts), sane_labels, sane_weights)
any_calls = st.tuples(op_names, documents, labels, weights)
operations = st.lists(st.one_of(sane_calls, any_calls), min_size=1, max_size=8)


def invertible(model, x, w) -> bool:
    """Does unlearning x right after learning it restore the counts (up to rounding)? Not in a
    model that forgets (the rest aged meanwhile) or prunes (a pass may have dropped other
    features), nor for magnitudes 2^53 apart, where a class total cannot hold both (see
    tests/core/test_core_hostile.py::test_learning_then_unlearning_a_huge_document_restores_its_class)."""
    if model.forgetting.half_life is not None or model.pruning.max_features is not None:
        return False
    moderate = lambda v: isinstance(v, (int, float)) and 1e-3 <= abs(v) <= 1e3  # noqa: E731
    if not moderate(w):
        return False
    return isinstance(x, (str, bytes)) or all(moderate(v) or v == 0 for v in x.values())


def assert_counts_close(model, expected: dict) -> None:
    got = counts(model)
    assert got["n_features"] == expected["n_features"] and got["classes"].keys() == expected["classes"].keys()
    assert got["cells"].keys() == expected["cells"].keys()
    for label, n in expected["classes"].items():
        assert math.isclose(got["classes"][label], n, rel_tol=1e-9)
    for key, (t, d) in expected["cells"].items():
        assert math.isclose(got["cells"][key][0], t, rel_tol=1e-9, abs_tol=1e-12), key
        assert math.isclose(got["cells"][key][1], d, rel_tol=1e-9, abs_tol=1e-12), key


def check_prediction(model, x) -> None:
    try:
        got = model.predict_log_proba_one(x)
    except StreamNBError:
        return
    if not model.classes:
        assert got == {}
        return
    assert list(got) == model.classes
    values = np.array(list(got.values()))
    assert not np.isnan(values).any() and (values <= 1e-12).all(), got
    assert abs(np.logaddexp.reduce(values)) <= 1e-9, got


def check_round_trips(model) -> None:
    before = snapshot(model)
    try:
        data = persist.dumps(model)
    except StreamNBError as error:  # a feature name no format can hold: refused, the model as it was
        assert "cannot save" in str(error)
        assert snapshot(model) == before
        TALLY["save", "refused"] += 1
        return
    assert snapshot(persist.loads(data)) == before
    assert snapshot(pickle.loads(pickle.dumps(model))) == before


def run(name: str, ops: list) -> None:
    TALLY["example", "run"] += 1
    model = dict(MODELS)[name]()
    model.learn_one("cheap pills" if name in ("words", "email") else {"cheap": 1}, "spam")
    learned: list = []
    for op, x, label, w in ops:
        before = snapshot(model)
        try:
            if op == "learn_one":
                before_counts = counts(model)
                model.learn_one(x, label, w)
                if invertible(model, x, w):
                    model.unlearn_one(x, label, w)
                    assert_counts_close(model, before_counts)
                    model.learn_one(x, label, w)
                learned.append((x, label, w))
            elif op == "unlearn_last":  # a document learned earlier (with what else was learned since)
                if not learned:
                    continue
                model.unlearn_one(*learned.pop(), **({"learned_at": model.n_learned} if model.forgetting.half_life else {}))
            elif op == "unlearn_one":
                model.unlearn_one(x, label, w, **({"learned_at": model.n_learned} if model.forgetting.half_life else {}))
            elif op == "learn_many":
                model.learn_many([x, {"cheap": 2}], [label, "ham"], [w, 1.0])
            elif op == "unlearn_many":
                model.unlearn_many([x], [label], [w], **({"learned_at": [model.n_learned]} if model.forgetting.half_life else {}))
            elif op == "predict":
                check_prediction(model, x)
            elif op == "merge":
                other = dict(MODELS)[name]()
                other.learn_one(x, label, w)
                model.merge(other)
            else:
                check_round_trips(model)
            TALLY[op, "ok"] += 1
        except StreamNBError as error:
            TALLY[op, type(error).__name__] += 1
            assert snapshot(model) == before, (op, x, label, w)
        check_prediction(model, x)


@settings(max_examples=FUZZ_EXAMPLES or 150, deadline=None, database=None if FUZZ_EXAMPLES else settings().database,
          suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from([name for name, _ in MODELS]), ops=operations)
@example(name="email", ops=[("learn_one", "00", True, 3.0), ("unlearn_one", "0", True, 2.0)])  # D_cf > N_c: NaN
@example(name="multinomial", ops=[("learn_one", {"a": 1}, "spam", 10**400)])  # OverflowError in the weight check
@example(name="hashed", ops=[("learn_one", {(((("x",),),),): 1}, "spam", 1.0)])
@example(name="multinomial", ops=[("learn_one", {"a": 1, "b": math.nan}, "spam", 1.0)])
@example(name="words", ops=[("learn_one", "\ud800ab cd\udfff", "spam", 1.0), ("save", None, None, None)])
@example(name="email", ops=[("learn_one", b"Subject: x\r\n\r\n\xff\xfe\xc3\x28", "ham", 1.0), ("save", None, None, None)])
def test_fuzz_the_core_boundary(name, ops):
    run(name, ops)
