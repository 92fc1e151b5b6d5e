"""Persistence: save/load round trips (docs/design.md invariant 5), tokenizers, pickling, atomic
writes, and hostile files (truncated, bit-flipped, wrong version, wrong shape, non-finite,
pickle payloads) that must all give ModelFormatError without running anything."""

from __future__ import annotations

import collections
import hashlib
import json
import os
import pathlib
import pickle
import re
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streamnb
from streamnb import BernoulliNB, MultinomialNB, persist
from streamnb.errors import InvalidTypeError, ModelFormatError
from streamnb.models import Forgetting, Pruning, Smoothing, Storage
from tests.retrain_support import MODEL_TYPES, PROBES, counts, log_probas, npy, read_members, snapshot, write_members

TOKENS = [f"w{i}" for i in range(10)] + [("w1", "w2"), ("w3", "w4"), 17, "naïve", "\udcff"]
documents = st.dictionaries(st.sampled_from(TOKENS), st.integers(1, 3), min_size=1, max_size=5)
LABELS = ["spam", 7, False]
streams = st.lists(st.tuples(documents, st.sampled_from(LABELS), st.sampled_from([0.5, 1.0, 3.0])), max_size=30)
OPTIONS = [{}, {"forgetting": Forgetting(half_life=3.0)}, {"forgetting": Forgetting(half_life_seconds=60.0)},
           {"ledger": 5}, {"pruning": Pruning(max_features=6, min_count=1.5)}, {"pruning": Pruning(expire_after=5)},
           {"storage": Storage(n_buckets=16)}, {"storage": Storage(dense_max_classes=2)},
           {"class_prior": {"spam": 0.2, 7: 0.3, False: 0.5}},
           {"class_prior": "laplace", "smoothing": Smoothing(unseen="score"), "alpha": 0.25}]
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                          HealthCheck.function_scoped_fixture])
PROBES_HERE = PROBES + [{("w1", "w2"): 2, 17: 1}, {"naïve": 1, "\udcff": 2}]


def train(model, stream, start=0.0):
    for i, (doc, label, weight) in enumerate(stream):
        model.learn_one(doc, label, weight, t=start + 7.0 * i)
    return model


def make_model(model_type=MultinomialNB, n=40, **options):
    rng = np.random.default_rng(0)
    model = model_type(**options)
    for i in range(n):
        doc = {f"w{j}": int(rng.integers(1, 4)) for j in rng.choice(30, 4, replace=False)}
        model.learn_one(doc, ["spam", "ham"][i % 2])
    return model


# -- invariant 5 ------------------------------------------------------------------------
@SETTINGS
@given(st.sampled_from(MODEL_TYPES), st.sampled_from(OPTIONS), streams, streams)
def test_load_of_save_predicts_exactly_and_keeps_learning(tmp_path, model_type, options, stream, more):
    model = train(model_type(**options), stream)
    path = tmp_path / "model.snb"
    model.save(path)
    loaded = streamnb.load(path)
    assert type(loaded) is model_type
    assert snapshot(loaded) == snapshot(model)  # ids, free ids, stamps, ledger, clocks: everything
    assert log_probas(loaded, PROBES_HERE) == log_probas(model, PROBES_HERE)  # bit for bit
    assert [type(c) for c in loaded.classes] == [type(c) for c in model.classes]
    train(model, more, start=1000.0)
    train(loaded, more, start=1000.0)
    assert snapshot(loaded) == snapshot(model)
    assert log_probas(loaded, PROBES_HERE) == log_probas(model, PROBES_HERE)
    assert (loaded.n_learned, loaded.store.scale, loaded.last_t) == (model.n_learned, model.store.scale, model.last_t)


@pytest.mark.parametrize("model_type", MODEL_TYPES)
def test_unlearning_after_a_round_trip_still_inverts_learning(tmp_path, model_type):
    model = model_type(ledger=10, forgetting=Forgetting(half_life=4.0))
    stream = [({"a": 1, "b": 2}, "x"), ({"c": 1}, "y"), ({"a": 3}, "y")]
    for doc, label in stream:
        model.learn_one(doc, label)
    model.save(tmp_path / "m")
    loaded = streamnb.load(tmp_path / "m")
    loaded.unlearn_one({"c": 1}, "y")  # the saved ledger gives its stamp
    model.unlearn_one({"c": 1}, "y")
    assert counts(loaded) == counts(model) and "c" not in loaded.store.vocabulary.mapping()


class Words:
    """A tokenizer with settings (registered below, as streamnb.text's tokenizers are known)."""

    def __init__(self, lowercase: bool = True, stop_words: list | None = None) -> None:
        self.lowercase = lowercase
        self.stop_words = list(stop_words or [])

    def __call__(self, text):
        words = [w for w in (text.lower() if self.lowercase else text).split() if w not in self.stop_words]
        return {w: float(words.count(w)) for w in words}

    def get_params(self):
        return {"lowercase": self.lowercase, "stop_words": self.stop_words}


persist.register_tokenizer(Words)


class Forgetful(Words):
    """Its get_params() does not rebuild it: a state (documents seen) that __init__ drops."""

    def __init__(self, lowercase: bool = True, stop_words: list | None = None, seen: int = 0) -> None:
        super().__init__(lowercase, stop_words)
        self.seen = 0

    def __call__(self, text):
        self.seen += 1
        return super().__call__(text)

    def get_params(self):
        return {**super().get_params(), "seen": self.seen}


persist.register_tokenizer(Forgetful)


def test_tokenizer_settings_are_saved_and_raw_text_scores_the_same(tmp_path):
    model = MultinomialNB(tokenizer=Words(lowercase=False, stop_words=["a"]))
    model.learn_one("Cheap pills a Cheap", "spam").learn_one("lunch a meeting", "ham")
    model.save(tmp_path / "m")
    loaded = streamnb.load(tmp_path / "m")
    assert type(loaded.tokenizer) is Words and loaded.tokenizer.get_params() == {"lowercase": False, "stop_words": ["a"]}
    for text in ["cheap Cheap a", "Lunch meeting", "nothing known"]:
        assert loaded.predict_log_proba_one(text) == model.predict_log_proba_one(text)
    metadata, _ = read_members(tmp_path / "m")
    assert metadata["tokenizer"] == {"type": f"{Words.__module__}.Words",
                                     "params": {"$map": [["lowercase", False], ["stop_words", ["a"]]]}}


@pytest.mark.parametrize("tokenizer, words", [
    (lambda text: {w: 1 for w in text.split()}, "cannot save tokenizer"),
    (collections.Counter, "cannot save tokenizer"),
    (Forgetful(), "does not rebuild it"),
])
def test_an_unsaveable_tokenizer_is_refused_before_anything_is_written(tmp_path, tokenizer, words):
    model = MultinomialNB(tokenizer=tokenizer).learn_one("a b", "x")
    with pytest.raises(InvalidTypeError, match=words):
        model.save(tmp_path / "m")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("model_type", MODEL_TYPES)
def test_plain_pickling_works_too(model_type):
    model = make_model(model_type, ledger=10, forgetting=Forgetting(half_life=20.0), pruning=Pruning(max_features=25))
    clone = pickle.loads(pickle.dumps(model))
    assert snapshot(clone) == snapshot(model)
    clone.learn_one({"w1": 1, "new": 2}, "ham")
    model.learn_one({"w1": 1, "new": 2}, "ham")
    assert log_probas(clone) == log_probas(model)


def test_labels_keep_their_types(tmp_path):
    model = MultinomialNB().learn_one({"a": 1}, "1").learn_one({"b": 1}, 1).learn_one({"c": 1}, False)
    model.save(tmp_path / "m")
    loaded = streamnb.load(tmp_path / "m")
    assert loaded.classes == ["1", 1, False] and [type(c) for c in loaded.classes] == [str, int, bool]


def test_the_file_is_the_documented_format(tmp_path):
    path = tmp_path / "m.snb"
    make_model(BernoulliNB, ledger=3).save(path)
    data = path.read_bytes()
    assert data[-80:-64].endswith(b"streamnb-model v7 sha256:"[-16:]) and data[-64:].isalnum()
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
        assert infos[0].filename == "metadata.json"
        assert all(info.compress_type == zipfile.ZIP_STORED for info in infos)
        metadata = json.loads(archive.read("metadata.json"))
        assert (metadata["format"], metadata["version"], metadata["model"]) == ("streamnb-model", 7, "BernoulliNB")
        arrays = {}
        for name, spec in metadata["arrays"].items():
            with archive.open(f"arrays/{name}.npy") as member:
                arrays[name] = np.lib.format.read_array(member, allow_pickle=False)
            assert arrays[name].dtype.str == spec["dtype"] and list(arrays[name].shape) == spec["shape"]
    assert set(metadata["arrays"]) >= {"class_docs", "class_tokens", "cell_feature", "cell_class", "cell_tokens",
                                       "cell_docs", "feature_id", "feature_key", "feature_key_end", "free_id",
                                       "feature_born", "feature_last_seen", "ledger_fingerprint"}
    # The vocabulary: each token's UTF-8 bytes, back to back in feature_id's order.
    keys = arrays["feature_key"].tobytes()
    starts = np.concatenate([[0], arrays["feature_key_end"][:-1]])
    tokens = [keys[a:b].decode() for a, b in zip(starts, arrays["feature_key_end"])]
    model = streamnb.load(path)
    assert tokens == model.store.vocabulary.tokens(arrays["feature_id"]) and '"features"' not in json.dumps(metadata["state"])


def test_saving_is_atomic_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "m"
    make_model(n=10).save(path)
    old = path.read_bytes()
    bigger = make_model(n=30)

    def disk_full(descriptor):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space"):
        bigger.save(path)
    assert path.read_bytes() == old and sorted(p.name for p in tmp_path.iterdir()) == ["m"]
    monkeypatch.undo()
    bigger.save(path)
    assert streamnb.load(path).n_learned == 30 and sorted(p.name for p in tmp_path.iterdir()) == ["m"]


# -- hostile files ------------------------------------------------------------------------
@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "model.snb"
    make_model(BernoulliNB, n=12, ledger=4, forgetting=Forgetting(half_life=50.0)).save(path)
    return path


def test_every_truncation_is_detected(saved, tmp_path):
    data = saved.read_bytes()
    broken = tmp_path / "broken"
    for length in sorted(set(range(0, len(data), 97)) | set(range(len(data) - 70, len(data)))):
        broken.write_bytes(data[:length])
        with pytest.raises(ModelFormatError):
            streamnb.load(broken)


def test_every_flipped_bit_is_detected(saved):
    data = saved.read_bytes()
    rng = np.random.default_rng(1)
    descriptor = os.open(saved, os.O_RDWR)  # flip in place: rewriting the file each time is slow
    try:
        for position in range(len(data)):
            os.pwrite(descriptor, bytes([data[position] ^ (1 << int(rng.integers(8)))]), position)
            with pytest.raises(ModelFormatError):
                streamnb.load(saved)
            os.pwrite(descriptor, data[position:position + 1], position)
    finally:
        os.close(descriptor)
    assert streamnb.load(saved).n_learned == 12


@pytest.mark.parametrize("hash_apart", [0, persist._HASH_APART])
def test_a_corrupted_file_is_reported_as_corrupted_whatever_reading_it_found(saved, monkeypatch, hash_apart):
    """Big files are verified in a thread while they are read: the checksum's verdict wins
    over a reading that failed (a broken header) or succeeded (a changed count)."""
    monkeypatch.setattr(persist, "_HASH_APART", hash_apart)
    data = saved.read_bytes()
    at_metadata = data.index(b'"format"')
    metadata, members = read_members(saved)
    counts_at = data.index(members["arrays/cell_tokens.npy"][-8:])
    for position in (at_metadata, counts_at + 6):
        broken = bytearray(data)
        broken[position] ^= 0x01
        saved.write_bytes(bytes(broken))
        with pytest.raises(ModelFormatError, match="checksum mismatch"):
            streamnb.load(saved)
    saved.write_bytes(data)
    assert streamnb.load(saved).n_learned == 12


@pytest.mark.parametrize("hash_apart", [0, persist._HASH_APART])
def test_a_file_read_with_its_digest_gives_the_sha256_of_all_its_bytes(saved, monkeypatch, hash_apart):
    """The journal names a model file by the SHA-256 of its bytes: the same pass as the checksum."""
    monkeypatch.setattr(persist, "_HASH_APART", hash_apart)
    data = saved.read_bytes()
    model, digest = persist.loads_with_digest(data)
    assert digest == hashlib.sha256(data).hexdigest() and model.n_learned == 12
    broken = bytearray(data)
    broken[data.index(b'"format"')] ^= 0x01
    with pytest.raises(ModelFormatError, match="checksum mismatch"):
        persist.loads_with_digest(bytes(broken))


def test_file_bytes_load_from_a_bytearray_or_a_memoryview(saved):
    data = saved.read_bytes()
    expected = log_probas(streamnb.load(saved))
    for view in (bytearray(data), memoryview(data)):
        assert log_probas(persist.loads(view)) == expected


def test_a_version_1_token_list_of_the_wrong_length_is_named(tmp_path):
    path = tmp_path / "m.snb"
    path.write_bytes((VERSION_1 / "multinomial.snb").read_bytes())
    metadata, members = read_members(path)
    for pair in metadata["state"]["$map"]:
        if pair[0] == "features":
            pair[1].pop()
    metadata["version"] = persist.VERSION  # rewritten by today's packer: a version-1 state in a today's file
    write_members(path, metadata, members)
    with pytest.raises(ModelFormatError, match=r"the vocabulary must list \d+ tokens, it lists \d+"):
        streamnb.load(path)


def test_another_format_version_is_refused_by_name(saved):
    metadata, members = read_members(saved)
    data = persist._pack(json.dumps(metadata).encode(), members)
    saved.write_bytes(data[:-80] + data[-80:].replace(b"v7 sha256", b"v8 sha256"))
    with pytest.raises(ModelFormatError, match="format version 8 is not supported"):
        streamnb.load(saved)
    metadata["version"] = 1
    write_members(saved, metadata, members)
    with pytest.raises(ModelFormatError, match="format version 1 in the metadata, but the file says version 7"):
        streamnb.load(saved)


DATA = pathlib.Path(__file__).parents[1] / "data"
VERSION_1 = DATA / "format-v1"


@pytest.mark.parametrize("version", [1, 2, 3, 5, 6, 7])
@pytest.mark.parametrize("name", ["multinomial", "bernoulli", "complement", "hashed", "text", "email"])
def test_older_format_files_still_load(version, name, tmp_path):
    """Files written by the code of an older format (tests/data/make_format_files.py) give
    the same log-probabilities, bit for bit, and save again in today's format."""
    folder = DATA / f"format-v{version}"
    expected = json.loads((folder / "expected.json").read_text())["log_proba"][name]
    assert (folder / f"{name}.snb").read_bytes()[-80:-64].endswith(f"v{version} sha256:".encode())
    model = streamnb.load(folder / f"{name}.snb")
    resaved = tmp_path / "again.snb"
    model.save(resaved)
    assert resaved.read_bytes()[-80:-64].endswith(f"v{persist.VERSION} sha256:".encode())
    again = streamnb.load(resaved)
    for case in expected:
        probe = persist.decode_value(case["probe"])
        want = persist.decode_value(case["log_proba"])
        assert model.predict_log_proba_one(probe) == want
        assert again.predict_log_proba_one(probe) == want
    assert again.store.vocabulary.mapping() == model.store.vocabulary.mapping()


@pytest.mark.parametrize("name", ["settings", "settings-mu", "fusion"])
def test_files_written_before_the_settings_objects_load_with_them(name, tmp_path):
    """Format-7 files of the code before the models took settings objects (their fields flat
    among the params, as files keep them still): the same log-probabilities, bit for bit, the
    settings grouped, the ledger and the evidence of the smoothing chosen online kept."""
    from streamnb.models.fusion import DEFAULT_NB_MAX_FEATURES

    folder = DATA / "format-v7"
    model = streamnb.load(folder / f"{name}.snb")
    resaved = tmp_path / "again.snb"
    model.save(resaved)
    again = streamnb.load(resaved)
    for case in json.loads((folder / "expected.json").read_text())["log_proba"][name]:
        probe, want = persist.decode_value(case["probe"]), persist.decode_value(case["log_proba"])
        assert model.predict_log_proba_one(probe) == want and again.predict_log_proba_one(probe) == want
    if name == "fusion":
        assert model.nb.pruning == Pruning(max_features=DEFAULT_NB_MAX_FEATURES)
        return
    if name == "settings":
        assert model.smoothing == Smoothing(unseen="score", grid=(0.1, 1.0), evidence_half_life=50.0,
                                            sample_evidence=True)
        assert model.forgetting == Forgetting(half_life=20.0)
        assert model.pruning == Pruning(max_features=40, min_count=0.1, expire_after=30)
        assert model.storage == Storage(dense_max_classes=1) and model.ledger == 10
        assert len(model._learner.ledger) == 3 and model.smoothing_.documents > 0
    else:
        assert model.mu == "auto" and model.smoothing.grid == (10.0, 100.0)
        assert model.forgetting == Forgetting(half_life_seconds=3600.0) and model.last_t is not None
    assert again.get_params() == model.get_params()
    assert again._core.evidence_state() == model._core.evidence_state()


def test_a_merged_pruning_survives_saving_and_arrays_a_model_does_not_read_are_refused(tmp_path):
    doc = {"a": 1, "b": 1, "c": 1}
    a = MultinomialNB().learn_one(doc, "x")
    other = MultinomialNB().learn_one(doc, "x").select_features(2)
    assert set(other.store.vocabulary.mapping()) == {"a", "b"}
    a.merge(other)
    path = tmp_path / "merged.snb"
    a.save(path)
    metadata, members = read_members(path)
    assert {"merged_first", "merged_last", "merged_exception_end", "merged_exception_feature",
            "merged_exception_from"} <= set(metadata["arrays"])
    loaded = streamnb.load(path).unlearn_one(doc, "x", learned_at=2)
    assert [loaded.feature_counts(f) for f in "abc"] == [{"x": 1.0}, {"x": 1.0}, {"x": 1.0}]
    # a reader that skipped them would unlearn wrongly: refused, as is any array it does not know
    for name, change, words in [
        ("merged_last", lambda values: values + 5, "merged pruning"),
        ("merged_exception_from", lambda values: values * 0 + 7, "exception stamps"),
        ("merged_exception_end", lambda values: values + 1, "within"),
        ("merged_exception_end", lambda values: values * 0, "no empty record"),
        ("merged_exception_end", None, "come together"),
    ]:
        metadata, members = read_members(path)
        if change is None:
            del metadata["arrays"][name], members[f"arrays/{name}.npy"]
        else:
            array = change(np.lib.format.read_array(__import__("io").BytesIO(members[f"arrays/{name}.npy"])))
            members[f"arrays/{name}.npy"] = npy(array)
        edited = tmp_path / f"{name}.snb"
        write_members(edited, metadata, members)
        with pytest.raises(ModelFormatError, match=words):
            streamnb.load(edited)
    metadata, members = read_members(path)
    metadata["arrays"]["merged_extra"] = {"dtype": "<u4", "shape": [1]}
    members["arrays/merged_extra.npy"] = npy(np.zeros(1, dtype=np.uint32))
    write_members(path, metadata, members)
    with pytest.raises(ModelFormatError, match=r"arrays \['merged_extra'\] are not arrays of a MultinomialNB"):
        streamnb.load(path)


def edit_array(path, name, change):
    metadata, members = read_members(path)
    array = change(np.lib.format.read_array(__import__("io").BytesIO(members[f"arrays/{name}.npy"])))
    members[f"arrays/{name}.npy"] = npy(array)
    metadata["arrays"][name] = {"dtype": array.dtype.str, "shape": list(array.shape)}
    write_members(path, metadata, members)


@pytest.mark.parametrize("name, change, words", [
    ("cell_tokens", lambda a: a[:-1], "shape"),
    ("class_docs", lambda a: np.append(a, 1.0), "shape"),
    ("cell_tokens", lambda a: a.reshape(1, -1), "1-d"),
    ("cell_class", lambda a: a.astype(np.float64), "int64"),
    ("cell_tokens", lambda a: np.where(np.arange(len(a)) == 0, np.nan, a), "non-finite"),
    ("class_docs", lambda a: np.where(np.arange(len(a)) == 1, np.inf, a), "non-finite"),
    ("cell_docs", lambda a: -a, "negative"),
    ("cell_docs", lambda a: np.where(np.arange(len(a)) == 0, 1e6, a), "a Bernoulli model needs D_cf <= N_c"),
    ("cell_feature", lambda a: a + 1000, "cell features must be listed"),
    ("cell_feature", lambda a: np.zeros_like(a), "duplicate|no count"),
    ("feature_born", lambda a: a + 10**6, "stamps"),
    ("ledger_class", lambda a: a + 7, "ledger classes"),
    ("ledger_weight", lambda a: a * np.nan, "ledger weights"),
    ("ledger_weight", lambda a: a[:-1], "'ledger_weight' must be <f8 of shape"),
    ("ledger_class", lambda a: a.astype(np.float64), "'ledger_class' must be <i8"),
    ("ledger_class", lambda a: a.reshape(1, -1), "'ledger_class' must have one dimension"),
    ("ledger_learned_at", lambda a: a + 10**6, "ledger stamps"),
    ("ledger_t", lambda a: a * np.nan, "ledger timestamps"),
    ("ledger_fingerprint", lambda a: np.tile(a[:16], len(a) // 16), "duplicate ledger fingerprints"),
    ("feature_key", lambda a: np.where(np.arange(len(a)) == 0, 0xFE, a).astype(np.uint8),
     "vocabulary key 0 is not the key of a feature name"),
    ("feature_key", lambda a: np.append(a, np.uint8(ord("x"))), "bytes past the last key"),
    ("feature_key", lambda a: a.astype(np.int64), "uint8"),
    ("feature_key_end", lambda a: a[::-1].copy(), "increasing"),
    ("feature_key_end", lambda a: a[:-1], "shape"),
    ("feature_key_end", lambda a: a * 0 + a[-1], "distinct"),
])
def test_tampered_arrays_are_refused_even_with_a_valid_checksum(saved, name, change, words):
    edit_array(saved, name, change)
    with pytest.raises(ModelFormatError, match=words):
        streamnb.load(saved)


def edit_member(path, name, change):
    metadata, members = read_members(path)
    members[f"arrays/{name}.npy"] = change(members[f"arrays/{name}.npy"])
    write_members(path, metadata, members)


@pytest.mark.parametrize("change, words", [
    (lambda raw: raw[:-8], "truncated"),
    (lambda raw: raw + b"\0" * 8, "trailing bytes"),
    (lambda raw: raw.replace(b"'fortran_order': False", b"'fortran_order': True "), "outside the format"),
    (lambda raw: raw.replace(b"'descr': '<f8'", b"'descr': '|O8'"), "outside the format"),
    (lambda raw: raw.replace(b"'shape': (", b"'shape': __import__('os').getpid() or (", 1), "unreadable"),
    (lambda raw: raw[:6] + b"\x03\x00" + raw[8:], "unsupported .npy version"),
    (lambda raw: b"PK" + raw[2:], "not a .npy member"),
])
def test_malformed_npy_members_are_refused(saved, change, words):
    """The .npy members are read without numpy: each part of the format is checked."""
    edit_member(saved, "cell_docs", change)
    with pytest.raises(ModelFormatError, match=words):
        streamnb.load(saved)


def test_arrays_load_as_numpy_arrays_and_as_bytes(saved):
    data = saved.read_bytes()
    metadata, arrays = persist._read_archive(data, persist.VERSION)
    dtype, shape, buffer, start, end = arrays.raw("cell_docs")
    assert (dtype, list(shape)) == ("<f8", metadata["arrays"]["cell_docs"]["shape"])
    assert buffer is data and end - start == 8 * shape[0]  # the file's bytes, read in place
    assert arrays["cell_docs"].tobytes() == data[start:end] and arrays["cell_docs"].flags.writeable
    assert "cell_docs" in arrays and "missing" not in arrays and len(arrays) == len(metadata["arrays"])


@pytest.mark.parametrize("edit, words", [
    (lambda m: m.update(model="os.system"), "unknown model type"),
    (lambda m: m.update(tokenizer={"type": "builtins.eval", "params": {"$map": []}}), "unknown tokenizer type"),
    (lambda m: m["state"]["$map"].append(["extra", 1]) or m, "state keys"),
    (lambda m: m["arrays"]["cell_docs"].update(shape=[3]), "the metadata says"),
    (lambda m: m["arrays"]["cell_docs"].update(dtype="|O"), "bad spec"),
    (lambda m: m.update(format="something-else"), "format"),
])
def test_tampered_metadata_is_refused(saved, edit, words):
    metadata, members = read_members(saved)
    edit(metadata)
    write_members(saved, metadata, members)
    with pytest.raises(ModelFormatError, match=words):
        streamnb.load(saved)


def set_state(path, key, value):
    metadata, members = read_members(path)
    pairs = metadata["state"]["$map"]
    for pair in pairs:
        if pair[0] == key:
            pair[1] = value
    write_members(path, metadata, members)


@pytest.mark.parametrize("key, value, words", [
    ("scale", 0.0, "scale"),
    ("scale", 2.0, "scale"),
    ("labels", ["spam", "spam"], "duplicate class labels"),
    ("labels", ["spam", 1.5], "not a str, int or bool"),
    ("n_learned", -1, "n_learned"),
    ("last_t", "yesterday", "last_t"),
])
def test_tampered_state_values_are_refused(saved, key, value, words):
    set_state(saved, key, value)
    with pytest.raises(ModelFormatError, match=words):
        streamnb.load(saved)


def test_bad_params_are_refused(saved):
    metadata, members = read_members(saved)
    params = dict(metadata["state"]["$map"])["params"]["$map"]
    for pair in params:
        if pair[0] == "alpha":
            pair[1] = -1.0
    write_members(saved, metadata, members)
    with pytest.raises(ModelFormatError, match="alpha"):
        streamnb.load(saved)


def test_non_finite_numbers_in_the_metadata_are_refused(saved):
    metadata, members = read_members(saved)
    text = re.sub(r'\["scale", [^\]]+\]', '["scale", NaN]', json.dumps(metadata))
    assert "NaN" in text
    saved.write_bytes(persist._pack(text.encode(), members))
    with pytest.raises(ModelFormatError, match="non-finite"):
        streamnb.load(saved)


def test_unexpected_members_are_refused(saved):
    metadata, members = read_members(saved)
    members["arrays/extra.npy"] = npy(np.zeros(3))
    write_members(saved, metadata, members)
    with pytest.raises(ModelFormatError, match="do not match"):
        streamnb.load(saved)


class Payload:
    """Unpickling this would create a marker file."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return pathlib.Path.touch, (pathlib.Path(self.marker),)


def test_a_pickle_is_never_unpickled(tmp_path, saved):
    marker = tmp_path / "executed"
    assert not marker.exists()
    pickle.loads(pickle.dumps(Payload(marker)))  # the payload works when unpickled ...
    assert marker.exists()
    marker.unlink()
    hostile = tmp_path / "hostile"

    hostile.write_bytes(pickle.dumps(Payload(marker)))  # a bare pickle
    with pytest.raises(ModelFormatError, match="not a streamnb model file"):
        streamnb.load(hostile)

    payload = np.array([Payload(marker)], dtype=object)
    metadata, members = read_members(saved)
    members["arrays/cell_docs.npy"] = npy(payload)  # an object array, declared as floats
    write_members(hostile, metadata, members)
    with pytest.raises(ModelFormatError, match="cell_docs"):
        streamnb.load(hostile)
    metadata["arrays"]["cell_docs"] = {"dtype": "|O", "shape": [1]}  # declared as what it is
    write_members(hostile, metadata, members)
    with pytest.raises(ModelFormatError, match="bad spec"):
        streamnb.load(hostile)

    valid = saved.read_bytes()
    hostile.write_bytes(valid + pickle.dumps(Payload(marker)))  # appended after the archive
    with pytest.raises(ModelFormatError):
        streamnb.load(hostile)
    assert not marker.exists()  # ... and loading never ran it


def test_a_missing_file_is_a_file_not_found_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        streamnb.load(tmp_path / "nothing-here")


def test_streamnb_tokenizers_round_trip_and_score_raw_email_the_same(tmp_path):
    from streamnb import EmailTokenizer, Tokenizer

    raw_spam = b"Subject: cheap pills\r\nFrom: a@spam.example\r\n\r\nBuy the cheap pills now http://x.example/a"
    raw_ham = b"Subject: lunch\r\nFrom: bob@work.example\r\n\r\nMeeting at noon for the lunch"
    for tokenizer in (Tokenizer(ngram_range=(1, 2), stop_words=["the"]), EmailTokenizer()):
        spam, ham = raw_spam, raw_ham
        if isinstance(tokenizer, Tokenizer):  # text, not raw email bytes
            spam, ham = spam.decode(), ham.decode()
        model = MultinomialNB(tokenizer=tokenizer, ledger=10).learn_one(spam, "spam").learn_one(ham, "ham")
        model.save(tmp_path / "m")
        loaded = streamnb.load(tmp_path / "m")
        assert type(loaded.tokenizer) is type(tokenizer)
        assert loaded.tokenizer.get_params() == tokenizer.get_params()
        query = "Subject: pills\r\n\r\ncheap lunch at noon"
        query = query if isinstance(tokenizer, Tokenizer) else query.encode()
        assert loaded.predict_log_proba_one(query) == model.predict_log_proba_one(query)
        before = snapshot(loaded)
        loaded.learn_one(spam, "spam")  # the saved ledger still knows this message
        assert snapshot(loaded) == before
        twin = MultinomialNB(tokenizer=type(tokenizer)(**tokenizer.get_params()), ledger=10).learn_one(query, "ham")
        assert streamnb.merge([model, twin]).class_counts == {"spam": 1.0, "ham": 2.0}  # equal settings merge


def test_model_type_names_are_unique_and_subclasses_must_register():
    class Adapter(MultinomialNB):
        pass

    with pytest.raises(InvalidTypeError, match="not a registered model type"):
        persist.save(Adapter().learn_one({"a": 1}, "x"), "unused")
    with pytest.raises(streamnb.errors.InvalidParameterError, match="already registered"):
        persist.register_model(Adapter, name="MultinomialNB")
    assert persist.MODEL_TYPES["MultinomialNB"] is MultinomialNB


@pytest.mark.parametrize("norm", [False, True])
def test_complement_nb_round_trips_too(tmp_path, norm):
    from streamnb import ComplementNB

    rng = np.random.default_rng(4)
    model = ComplementNB(norm=norm, forgetting=Forgetting(half_life=30.0))
    for i in range(60):
        model.learn_one({f"w{j}": int(rng.integers(1, 4)) for j in rng.choice(25, 4, replace=False)}, "abc"[i % 3])
    model.save(tmp_path / "c")
    loaded = streamnb.load(tmp_path / "c")
    assert type(loaded) is ComplementNB and loaded.norm is norm
    assert counts(loaded) == counts(model)
    for a, b in zip(log_probas(loaded), log_probas(model)):  # the normaliser is re-derived: rounding only
        assert a == pytest.approx(b, abs=1e-12)
    loaded.learn_one({"w1": 2, "new": 1}, "a")
    model.learn_one({"w1": 2, "new": 1}, "a")
    for a, b in zip(log_probas(loaded), log_probas(model)):
        assert a == pytest.approx(b, abs=1e-12)


records = st.dictionaries(st.sampled_from(["size", "hour", "links", ("a", 1)]),
                          st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=4)
GAUSSIAN_PROBES = [{"size": 10.0}, {"hour": -3.0, "links": 2.0}, {"size": 0.5, ("a", 1): 7.0}]


@SETTINGS
@given(st.lists(st.tuples(records, st.sampled_from(LABELS)), max_size=25), st.data())
def test_gaussian_nb_round_trips_through_the_record_hook(tmp_path, stream, data):
    from streamnb import GaussianNB

    model = GaussianNB(var_smoothing=1e-6)
    for record, label in stream:
        model.learn_one(record, label)
    for i in data.draw(st.lists(st.sampled_from(range(len(stream))), unique=True)) if stream else []:
        model.unlearn_one(*stream[i])
    model.save(tmp_path / "g")
    loaded = streamnb.load(tmp_path / "g")
    assert type(loaded) is GaussianNB and loaded.labels == model.labels
    assert [loaded.predict_log_proba_one(x) for x in GAUSSIAN_PROBES] == \
        [model.predict_log_proba_one(x) for x in GAUSSIAN_PROBES]
    for record, label in stream[:3]:
        loaded.learn_one(record, label)
        model.learn_one(record, label)
    assert [loaded.predict_log_proba_one(x) for x in GAUSSIAN_PROBES] == \
        [model.predict_log_proba_one(x) for x in GAUSSIAN_PROBES]
    assert loaded.features.mapping() == model.features.mapping()


@pytest.mark.parametrize("name, change, words", [
    ("n", lambda a: -a, "below 0"),
    ("mean", lambda a: a * np.nan, "non-finite"),
    ("pooled_n", lambda a: a * 0, "no learned value"),
    ("m2", lambda a: a[:, :-1], "shape"),
    ("class_weights", lambda a: np.append(a, 2.0), "shape"),
])
def test_tampered_gaussian_files_are_refused(tmp_path, name, change, words):
    from streamnb import GaussianNB

    model = GaussianNB().learn_one({"a": 1.0, "b": 2.0}, "x").learn_one({"a": 3.0}, "y")
    path = tmp_path / "g"
    model.save(path)
    edit_array(path, name, change)
    with pytest.raises(ModelFormatError, match=words):
        streamnb.load(path)


def test_categorical_and_mixed_models_round_trip(tmp_path):
    from streamnb import CategoricalNB, ComplementNB, MixedNB, Tokenizer

    rng = np.random.default_rng(6)
    domains = ["x.biz", "work.org", "a.org", 7, True, 2.5]
    categorical = CategoricalNB(min_categories={"hour": 24}, unseen="score")
    mixed = MixedNB({"text": "text", "size": "numeric", "domain": "categorical"},
                    text=ComplementNB(norm=True, tokenizer=Tokenizer()))
    rows = []
    for i in range(40):
        record = {"domain": domains[int(rng.integers(6))], "hour": int(rng.integers(24))}
        label = "spam" if i % 3 else "ham"
        categorical.learn_one(record, label)
        row = {"text": " ".join(f"w{j}" for j in rng.integers(0, 12, 4)), "size": float(rng.normal(1000, 300)),
               "domain": record["domain"]}
        mixed.learn_one(row, label)
        rows.append((record, row, label))
    categorical.unlearn_one(rows[0][0], rows[0][2])
    mixed.unlearn_one(rows[1][1], rows[1][2])
    for model, probes in ((categorical, [{"domain": "x.biz", "hour": 3}, {"domain": "new", "hour": 30}]),
                          (mixed, [{"text": "w1 w2 zz", "size": 900.0, "domain": 7}, {"size": 2000.0}])):
        model.save(tmp_path / "m")
        loaded = streamnb.load(tmp_path / "m")
        assert type(loaded) is type(model) and loaded.labels == model.labels
        for x in probes:
            assert loaded.predict_log_proba_one(x) == pytest.approx(model.predict_log_proba_one(x), abs=1e-12)
        record, row, label = rows[5]
        for m in (loaded, model):
            m.learn_one(record if m.__class__ is CategoricalNB else row, label)
        for x in probes:
            assert loaded.predict_log_proba_one(x) == pytest.approx(model.predict_log_proba_one(x), abs=1e-12)
    assert streamnb.load(tmp_path / "m").text.tokenizer.get_params() == Tokenizer().get_params()


@pytest.mark.parametrize("edit, words", [
    (lambda tables: tables["categories"][0].append(tables["categories"][0][0]), "distinct"),
    (lambda tables: tables["categories"][0].append(None), "str/int/bool/finite float"),
    (lambda tables: tables["features"].pop(), "tokens"),
])
def test_tampered_categorical_tables_are_refused(tmp_path, edit, words):
    from streamnb import CategoricalNB

    path = tmp_path / "c"
    CategoricalNB().learn_one({"domain": "x.biz", "hour": 3}, "spam").learn_one({"domain": "y"}, "ham").save(path)
    metadata, members = read_members(path)
    state = persist.decode_value(metadata["state"])
    edit(state["tables"])
    metadata["state"] = persist.encode_value(state)
    write_members(path, metadata, members)
    with pytest.raises(ModelFormatError, match=words):
        streamnb.load(path)


@pytest.mark.parametrize("model_type, name", [("gaussian", "zzz"), ("mixed", "zzz"), ("mixed", "numeric_zzz"),
                                               ("mixed", "text_zzz")])
def test_record_models_refuse_arrays_they_do_not_read(tmp_path, model_type, name):
    from streamnb import GaussianNB, MixedNB
    if model_type == "gaussian":
        model = GaussianNB().learn_one({"size": 1.0}, "a").learn_one({"size": 3.0}, "b")
    else:
        model = MixedNB({"text": "text", "size": "numeric"})
        model.learn_one({"text": {"cheap": 1}, "size": 1.0}, "a").learn_one({"text": {"meeting": 1}, "size": 3.0}, "b")
    path = tmp_path / "m.snb"
    model.save(path)
    assert streamnb.load(path).predict_log_proba_one({"size": 2.0}) == model.predict_log_proba_one({"size": 2.0})
    metadata, members = read_members(path)
    metadata["arrays"][name] = {"dtype": "<f8", "shape": [1]}
    members[f"arrays/{name}.npy"] = npy(np.zeros(1))
    write_members(path, metadata, members)
    with pytest.raises(ModelFormatError, match=r"arrays \['(\w+_)?zzz'\] are not arrays of a"):
        streamnb.load(path)


def test_a_mixed_part_of_the_wrong_kind_is_refused(tmp_path):
    from streamnb import MixedNB

    path = tmp_path / "m"
    MixedNB({"text": "text", "size": "numeric"}).learn_one({"text": {"a": 1}, "size": 2.0}, "x").save(path)
    metadata, members = read_members(path)
    state = persist.decode_value(metadata["state"])
    state["tables"]["numeric"]["model"] = "MultinomialNB"
    metadata["state"] = persist.encode_value(state)
    write_members(path, metadata, members)
    with pytest.raises(ModelFormatError, match="numeric part: 'MultinomialNB' is not a known GaussianNB type"):
        streamnb.load(path)


def test_a_deeply_nested_state_is_refused(saved):
    metadata, members = read_members(saved)
    deep = ["x"]
    for _ in range(900):
        deep = [deep, 1]
    metadata["state"]["$map"].append(["deep", deep])
    write_members(saved, metadata, members)
    with pytest.raises(ModelFormatError):
        streamnb.load(saved)
