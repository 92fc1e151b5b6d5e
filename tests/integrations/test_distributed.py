"""Distributed training on Dask (issue 9): partition models merged up a tree == one process.

The cluster is a real ``distributed.LocalCluster`` with two worker processes (one thread
each), so models, tokenizers and errors really cross process boundaries. Every model is
compared with single-process ``learn_many`` on the same records: every (token, class)
count, the class counts and their order, |V|, and log-probabilities on held-out documents.

To cover a new model (ComplementNB, CategoricalNB ...), add it to ``MODELS``.
"""

from __future__ import annotations

import importlib
import logging
import math
import os
import random
import re
import sys
from collections import Counter

import pytest

dask = pytest.importorskip("dask")
db = pytest.importorskip("dask.bag")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")
distributed_lib = pytest.importorskip("distributed")

import numpy as np  # noqa: E402

from streamnb import BernoulliNB, LogisticRegression, MultinomialNB  # noqa: E402
from streamnb.errors import InvalidInputError, InvalidLabelError, InvalidParameterError, InvalidTypeError  # noqa: E402
from streamnb.integrations import distributed  # noqa: E402
from streamnb.models import Storage  # noqa: E402
from tests.state import snapshot  # noqa: E402

# The tests put their records in the graph (db.from_sequence); distributed warns about that
# for the real corpus. The example scatters the data instead.
pytestmark = pytest.mark.filterwarnings("ignore:Sending large graph:UserWarning")

REAL_CORPUS = os.environ.get("STREAMNB_SPAMASSASSIN")
WORD = re.compile(r"\b\w\w+\b")


def words(text: str) -> dict[str, int]:
    """Lowercased words of 2+ word characters (module level: workers import it by name)."""
    return dict(Counter(WORD.findall(text.lower())))


try:  # the text module's tokenizer when it is there (another branch adds it)
    from streamnb.features.text import Tokenizer as _Tokenizer
    TOKENIZER = _Tokenizer()
except ImportError:
    TOKENIZER = words

# Each entry builds an empty model; params are passed through (tokenizer=...).
MODELS = {
    "multinomial": lambda **params: MultinomialNB(alpha=0.5, **params),
    "bernoulli": lambda **params: BernoulliNB(alpha=1.0, **params),
    # 2**16 buckets: no two words of the generated corpus share a bucket (asserted below), so
    # exactness checks merging by bucket id without meeting the in-document collision issue.
    "multinomial-hashed": lambda **params: MultinomialNB(alpha=1.0, storage=Storage(n_buckets=2 ** 16), **params),
}
TEXT_MODELS = ["multinomial", "bernoulli"]  # the ones trained on the real corpus


# -- fixtures -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def client():
    """Two worker processes, one thread each; not set as Dask's default (tests say which)."""
    with distributed_lib.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None, silence_logs=logging.ERROR) as cluster:
        with distributed_lib.Client(cluster, set_as_default=False) as dask_client:
            yield dask_client


def generated_corpus(n: int = 1500, seed: int = 7) -> list[tuple[str, str]]:
    """Texts of three classes over a Zipf-like vocabulary; class "late" appears only near the end.

    The late class checks that merging in partition order keeps the class order of a
    single pass.
    """
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(3000)]
    weights = [1.0 / (rank + 1) for rank in range(len(vocabulary))]
    records = []
    for i in range(n):
        late = 1100 <= i < 1200 or i >= 1400  # the end of the training part, and some held out
        label = "late" if late and i % 3 == 0 else rng.choice(["ham", "spam"])
        shift = {"ham": 0, "spam": 40, "late": 400}[label]
        length = rng.randint(3, 60)
        tokens = rng.choices(vocabulary[shift:], weights[: len(vocabulary) - shift], k=length)
        records.append((" ".join(tokens), label))
    return records


@pytest.fixture(scope="module")
def generated():
    records = generated_corpus()
    return records[:1200], records[1200:]


@pytest.fixture(scope="module")
def spamassassin():
    if not REAL_CORPUS:
        pytest.skip("STREAMNB_SPAMASSASSIN is not set (point it at the SpamAssassin corpus to run)")
    from streamnb.filter.datasets import load_spamassassin
    records = [(m.raw.decode("latin-1"), m.label) for m in load_spamassassin(REAL_CORPUS)]
    cut = int(len(records) * 0.8)  # Date order: train on the past, hold out the future
    train_records = records[:cut]
    # Tokenized once for the single-process references of every model (the tokenizer is a
    # pure function: learning these dicts equals learning the texts with the tokenizer).
    features = [TOKENIZER(text) for text, _ in train_records]
    return train_records, records[cut:][::4], features


def reference(name: str, records, weights=None):
    """Single-process learn_many on all records (the model a cluster must reproduce)."""
    model = MODELS[name](tokenizer=TOKENIZER)
    return model.learn_many([text for text, _ in records], [label for _, label in records], weights)


def assert_same_model(got, want, held_out) -> None:
    """Equal counts, vocabulary, class order, |V|; log-probabilities within 1e-9."""
    assert type(got) is type(want)
    assert got.get_params() == want.get_params()
    assert got.classes == want.classes
    assert got.class_counts == want.class_counts
    assert got.n_features == want.n_features > 0
    assert snapshot(got) == snapshot(want)  # every (token, class) token and document count
    for text, _ in held_out:
        assert got.predict_one(text) == want.predict_one(text)
        mine, theirs = got.predict_log_proba_one(text), want.predict_log_proba_one(text)
        assert list(mine) == list(theirs)
        for label in theirs:
            assert mine[label] == pytest.approx(theirs[label], abs=1e-9, rel=0)


def task_workers(stream, function_name: str) -> set[str]:
    """Workers that ran tasks of a function (Dask names keys after the function)."""
    return {task["worker"] for task in stream.data if function_name in str(task["key"])}


# -- exactness on a cluster of worker processes ------------------------------------------------
@pytest.mark.parametrize("name", list(MODELS))
def test_cluster_training_equals_single_process_generated(client, generated, name):
    train_records, held_out = generated
    bag = db.from_sequence(train_records, npartitions=24)
    with distributed_lib.get_task_stream(client) as stream:
        model = distributed.train(MODELS[name](tokenizer=TOKENIZER), bag, split_every=4, scheduler=client)
    assert len(task_workers(stream, "_learn_partition")) == 2  # both worker processes learned
    assert model.tokenizer is TOKENIZER
    assert_same_model(model, reference(name, train_records), held_out)
    assert model.classes[-1] == "late"  # first seen in the last partitions, so last here too
    distinct_words = {w for text, _ in train_records for w in TOKENIZER(text)}
    assert model.n_features == len(distinct_words)


@pytest.mark.parametrize("name", TEXT_MODELS)
def test_cluster_training_equals_single_process_spamassassin(client, spamassassin, name):
    train_records, held_out, features = spamassassin
    bag = db.from_sequence(train_records, npartitions=16)
    model = distributed.train(MODELS[name](tokenizer=TOKENIZER), bag, split_every=4, scheduler=client)
    want = MODELS[name](tokenizer=TOKENIZER).learn_many(features, [label for _, label in train_records])
    assert model.class_counts == want.class_counts and sum(want.class_counts.values()) == len(train_records)
    assert_same_model(model, want, held_out)


def test_dataframe_with_named_columns_and_weights_on_cluster(client, generated):
    train_records, held_out = generated
    # Weights that are binary fractions add up exactly in any order: counts must be equal.
    weights = [(0.5, 1.0, 2.0, 3.0)[i % 4] for i in range(len(train_records))]
    frame = pd.DataFrame({"body": [t for t, _ in train_records], "cls": [y for _, y in train_records],
                          "w": weights, "other": 1})
    data = dd.from_pandas(frame, npartitions=9)
    for name in MODELS:
        model = distributed.train(MODELS[name](tokenizer=TOKENIZER), data, text="body", label="cls",
                                  weight="w", split_every=3, scheduler=client)
        want = reference(name, train_records, weights)
        assert model.class_counts == want.class_counts
        assert model.class_counts["ham"] == sum(w for w, (_, y) in zip(weights, train_records) if y == "ham")
        assert_same_model(model, want, held_out)


def test_weighted_bag_records_equal_weighted_learn_many(client, generated):
    train_records, held_out = generated
    records = [(t, y, 2.0) if i % 5 == 0 else (t, y) for i, (t, y) in enumerate(train_records)]
    weights = [2.0 if i % 5 == 0 else 1.0 for i in range(len(train_records))]
    model = distributed.train(MODELS["bernoulli"](tokenizer=TOKENIZER), db.from_sequence(records, npartitions=6),
                              scheduler=client)
    assert_same_model(model, reference("bernoulli", train_records, weights), held_out)


def test_feature_dicts_without_tokenizer(client, generated):
    train_records, held_out = generated
    features = [(words(t), y) for t, y in train_records]
    model = distributed.train(MultinomialNB(), db.from_sequence(features, npartitions=5), scheduler=client)
    assert model.tokenizer is None
    want = MultinomialNB().learn_many([x for x, _ in features], [y for _, y in features])
    assert_same_model(model, want, [(words(t), y) for t, y in held_out])


def test_unpicklable_by_name_tokenizer_survives_the_merges(client, generated):
    """A lambda is pickled by value, so each worker has its own unequal copy of it."""
    train_records, held_out = generated
    tokenizer = lambda text: dict(Counter(text.split()))  # noqa: E731
    model = distributed.train(MultinomialNB(tokenizer=tokenizer), db.from_sequence(train_records, npartitions=8),
                              split_every=2, scheduler=client)
    assert model.tokenizer is tokenizer
    want = MultinomialNB(tokenizer=tokenizer).learn_many([t for t, _ in train_records], [y for _, y in train_records])
    assert_same_model(model, want, held_out)


def test_active_client_is_the_default_scheduler(client, generated):
    train_records, held_out = generated
    with client.as_current(), distributed_lib.get_task_stream(client) as stream:
        model = distributed.train(MODELS["multinomial"](tokenizer=TOKENIZER),
                                  db.from_sequence(train_records, npartitions=6))
    assert len(task_workers(stream, "_learn_partition")) >= 1
    assert_same_model(model, reference("multinomial", train_records), held_out)


# -- the threaded scheduler ------------------------------------------------------------------
@pytest.mark.parametrize("name", list(MODELS))
def test_threaded_scheduler_equals_single_process(generated, name):
    train_records, held_out = generated
    template = MODELS[name](tokenizer=TOKENIZER)
    model = distributed.train(template, db.from_sequence(train_records, npartitions=10), split_every=3,
                              scheduler="threads")
    assert template.n_features == 0 and model is not template  # the template is left empty
    assert_same_model(model, reference(name, train_records), held_out)


def test_empty_partitions_are_harmless(generated):
    train_records, held_out = generated
    parts = [train_records[:300], [], train_records[300:], []]
    bag = db.from_delayed([dask.delayed(list)(part) for part in parts])
    model = distributed.train(MODELS["bernoulli"](tokenizer=TOKENIZER), bag, scheduler="threads")
    assert_same_model(model, reference("bernoulli", train_records), held_out)


# -- continuing a model ------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(MODELS))
def test_learn_adds_a_distributed_batch_to_a_trained_model(client, generated, name):
    train_records, held_out = generated
    first, rest = train_records[:500], train_records[500:]
    model = MODELS[name](tokenizer=TOKENIZER).learn_many([t for t, _ in first], [y for _, y in first])
    returned = distributed.learn(model, db.from_sequence(rest, npartitions=7), scheduler=client)
    assert returned is model
    assert_same_model(model, reference(name, train_records), held_out)
    # and it keeps learning one document at a time afterwards
    model.learn_one(held_out[0][0], held_out[0][1])
    assert model.class_counts[held_out[0][1]] == reference(name, train_records).class_counts[held_out[0][1]] + 1


def test_failed_learn_leaves_the_model_unchanged(client, generated):
    train_records, _ = generated
    model = MODELS["multinomial"](tokenizer=TOKENIZER).learn_many([t for t, _ in train_records[:100]],
                                                                    [y for _, y in train_records[:100]])
    before = snapshot(model)
    parts = [train_records[100:150], train_records[150:200], [("some text", "ham"), ("more text", None)]]
    bag = db.from_delayed([dask.delayed(list)(part) for part in parts])
    with pytest.raises(InvalidLabelError, match="partition 2: .*None"):
        distributed.learn(model, bag, scheduler=client)
    assert snapshot(model) == before


# -- prediction at scale -------------------------------------------------------------------------
def test_predict_dataframe_on_cluster_keeps_order_and_index(client, generated):
    train_records, held_out = generated
    model = reference("multinomial", train_records)
    texts = [t for t, _ in held_out]
    index = [f"doc{i}" for i in reversed(range(len(texts)))]  # not sorted, not a RangeIndex
    data = dd.from_pandas(pd.DataFrame({"body": texts}, index=index), npartitions=7, sort=False)
    result = distributed.predict(model, data, text="body").compute(scheduler=client)
    assert list(result.index) == index
    scattered = distributed.predict(model, data, text="body", client=client).compute(scheduler=client)
    pd.testing.assert_frame_equal(scattered, result)
    assert list(result.columns) == ["prediction"] + [f"proba_{c}" for c in model.classes]
    assert sorted(model.classes) == ["ham", "late", "spam"]
    assert list(result["prediction"]) == [model.predict_one(t) for t in texts]
    for row, text in zip(result.itertuples(index=False), texts):
        want = model.predict_proba_one(text)
        for c in model.classes:
            assert getattr(row, f"proba_{c}") == pytest.approx(want[c], abs=1e-12)
        assert sum(want.values()) == pytest.approx(1.0)

    logs = distributed.predict(model, data, text="body", log=True, prefix="log_").compute(scheduler=client)
    for (_, row), text in zip(logs.iterrows(), texts):
        want = model.predict_log_proba_one(text)
        assert [row[f"log_{c}"] for c in model.classes] == pytest.approx([want[c] for c in model.classes], abs=1e-9)


def test_predict_bag_keeps_order_with_integer_labels(client, generated):
    train_records, held_out = generated
    codes = {"ham": 0, "spam": 1, "late": 2}
    model = BernoulliNB(tokenizer=TOKENIZER).learn_many([t for t, _ in train_records],
                                                        [codes[y] for _, y in train_records])
    texts = [t for t, _ in held_out]
    bag = db.from_sequence(texts, npartitions=6)
    labels = distributed.predict(model, bag, proba=False).compute(scheduler=client)
    assert labels == [model.predict_one(t) for t in texts]
    assert set(labels) <= {0, 1, 2} and len(set(labels)) > 1
    pairs = distributed.predict(model, bag).compute(scheduler=client)
    assert [label for label, _ in pairs] == labels
    scattered = distributed.predict(model, bag, client=client)  # the model sent ahead as a future
    assert scattered.compute(scheduler=client) == pairs
    for (_, proba), text in zip(pairs, texts):
        want = model.predict_proba_one(text)
        assert list(proba) == list(want)
        assert list(proba.values()) == pytest.approx(list(want.values()), abs=1e-12)
    frame = distributed.predict(model, dd.from_pandas(pd.DataFrame({"text": texts}), npartitions=3)).compute()
    assert sorted(model.classes) == [0, 1, 2]
    assert list(frame.columns) == ["prediction"] + [f"proba_{c}" for c in model.classes]
    assert list(frame["prediction"]) == labels


# -- bad input -----------------------------------------------------------------------------------
def test_data_of_the_wrong_type_is_rejected(generated):
    train_records, _ = generated
    for data in (train_records, pd.DataFrame({"text": ["a"], "label": ["x"]}), None):
        with pytest.raises(InvalidTypeError, match="dask.bag.Bag"):
            distributed.train(MultinomialNB(tokenizer=TOKENIZER), data)
        with pytest.raises(InvalidTypeError, match="dask.bag.Bag"):
            distributed.predict(MultinomialNB(tokenizer=TOKENIZER), data)


def test_missing_columns_are_named():
    data = dd.from_pandas(pd.DataFrame({"body": ["ab cd", "ef gh"], "label": ["x", "y"]}), npartitions=1)
    with pytest.raises(InvalidParameterError, match=r"\['text'\] not in the dataframe; its columns are \['body', 'label'\]"):
        distributed.train(MultinomialNB(tokenizer=TOKENIZER), data)
    with pytest.raises(InvalidParameterError, match=r"\['weight'\] not in"):
        distributed.train(MultinomialNB(tokenizer=TOKENIZER), data, text="body", weight="weight")
    with pytest.raises(InvalidParameterError, match="different columns"):
        distributed.train(MultinomialNB(tokenizer=TOKENIZER), data, text="body", label="body")
    with pytest.raises(InvalidParameterError, match=r"\['text'\] not in"):
        distributed.predict(MultinomialNB(tokenizer=TOKENIZER), data)


def test_bad_parameters():
    bag = db.from_sequence([("ab cd", "x")])
    for split_every in (1, 0, 2.0, True):
        with pytest.raises(InvalidParameterError, match="split_every"):
            distributed.train(MultinomialNB(tokenizer=TOKENIZER), bag, split_every=split_every)
    model = MultinomialNB(tokenizer=TOKENIZER).learn_one("ab cd", "x")
    frame = dd.from_pandas(pd.DataFrame({"text": ["ab"]}), npartitions=1)
    with pytest.raises(InvalidParameterError, match="collide"):
        distributed.predict(model, frame, prediction="proba_x")


@pytest.mark.parametrize("records, error, message", [
    (["just text"], InvalidTypeError, r"partition 1: record 0: expected \(document, label\)"),
    ([("ab cd", "x", 1.0, "extra")], InvalidTypeError, "partition 1: record 0"),
    ([("ab cd", 1.5)], InvalidLabelError, "partition 1: .*1.5"),
    ([(42, "x")], InvalidTypeError, "partition 1: .*mapping feature -> value, or str/bytes text"),
    ([("ab cd", "x", -1.0)], InvalidInputError, "partition 1: .*weight.*-1.0"),
    ([("ab cd", "x", "heavy")], InvalidInputError, "partition 1: .*weight.*heavy"),
    ([("", "x")], InvalidInputError, "partition 1: empty document at row 0"),
])
def test_bad_records_fail_with_the_models_error_across_processes(client, records, error, message):
    bag = db.from_delayed([dask.delayed(list)([("good words", "x")]), dask.delayed(list)(records)])
    with pytest.raises(error, match=message):
        distributed.train(MultinomialNB(tokenizer=TOKENIZER), bag, scheduler=client)


def test_text_without_a_tokenizer_is_rejected():
    bag = db.from_sequence([("ab cd", "x")])
    with pytest.raises(InvalidTypeError, match="no tokenizer"):
        distributed.train(MultinomialNB(), bag, scheduler="sync")


def test_bad_weight_column_type():
    frame = pd.DataFrame({"text": ["ab cd", "ef gh"], "label": ["x", "y"], "w": ["one", "two"]})
    with pytest.raises(InvalidInputError, match="partition 0: .*weight.*'one'"):
        distributed.train(MultinomialNB(tokenizer=TOKENIZER), dd.from_pandas(frame, npartitions=1), weight="w",
                          scheduler="sync")


def test_missing_dask_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "dask", None)  # import dask now raises ImportError
    monkeypatch.delitem(sys.modules, "streamnb.integrations.distributed")
    with pytest.raises(ImportError, match=r"pip install streamnb\[dask\]"):
        importlib.import_module("streamnb.integrations.distributed")


# -- the merge that makes it exact for hashed vocabularies -------------------------------------------
def test_merge_of_hashed_models_keeps_buckets():
    a = MultinomialNB(storage=Storage(n_buckets=64)).learn_many([{"x": 1, "y": 2}], ["s"])
    b = MultinomialNB(storage=Storage(n_buckets=64)).learn_many([{"x": 3}, {"z": 1}], ["h", "s"])
    both = MultinomialNB(storage=Storage(n_buckets=64)).learn_many([{"x": 1, "y": 2}, {"x": 3}, {"z": 1}], ["s", "h", "s"])
    a.merge(b)
    assert snapshot(a) == snapshot(both)
    assert a.feature_counts("x") == {"s": 1.0, "h": 3.0}
    assert a.predict_log_proba_one({"x": 1}) == pytest.approx(both.predict_log_proba_one({"x": 1}), abs=1e-12)
    assert math.isclose(sum(math.exp(v) for v in a.predict_log_proba_one({"x": 1}).values()), 1.0)


# -- logistic regression: parameter mixing (approximate) ----------------------------------------
def test_logistic_regression_partitions_are_mixed_by_their_documents(generated):
    """Issue 26: partition models mixed in partition order = the documents-weighted average of
    the partition models' weights (whatever the tree), not the model of one pass."""
    train_records, held_out = generated
    mixed = random.Random(3).sample(train_records, len(train_records))
    parts = [mixed[:400], mixed[400:800], mixed[800:]]  # every partition holds every class
    bag = db.from_delayed([dask.delayed(list)(part) for part in parts])
    template = LogisticRegression(tokenizer=TOKENIZER)
    model = distributed.train(template, bag, split_every=2, scheduler="threads")
    locals_ = [LogisticRegression(tokenizer=TOKENIZER).learn_many([t for t, _ in part], [y for _, y in part])
               for part in parts]
    sizes = [len(part) for part in parts]
    views = [m.log_linear() for m in locals_]
    features = sorted(set().union(*(v.features for v in views)))
    classes = model.classes
    assert set(classes) == {"spam", "ham", "late"} and all(set(m.classes) == set(classes) for m in locals_)

    def weights(view):
        rows = {f: dict(zip(view.classes, row)) for f, row in zip(view.features, view.weights)}
        return np.array([[rows.get(f, {}).get(c, 0.0) for c in classes] for f in features])

    expected = sum(n * weights(v) for n, v in zip(sizes, views)) / sum(sizes)
    got = weights(model.log_linear())
    # centred weights (a softmax is unchanged by a shift shared by the classes) mix linearly
    assert np.abs((got - got.mean(axis=1, keepdims=True)) - (expected - expected.mean(axis=1, keepdims=True))).max() \
        < 1e-9
    # approximate, but a useful model: close to one process's accuracy on the held-out records
    one = LogisticRegression(tokenizer=TOKENIZER).learn_many([t for t, _ in train_records],
                                                                   [y for _, y in train_records])
    accuracy = [np.mean([m.predict_one(t) == y for t, y in held_out]) for m in (model, one)]
    assert accuracy[0] >= accuracy[1] - 0.05, accuracy
