"""The discrete models' parameters: statistics first, the rest as settings objects
(Smoothing, Forgetting, Pruning, Storage), each field checked where it is declared; the flat
keywords of before still taken, with a warning naming the new spelling."""

from __future__ import annotations

import copy
import inspect
import json
import zipfile

import pytest

import streamnb
from streamnb import _moved
from streamnb.archive import decode_value
from streamnb.errors import IncompatibleModelsError, InvalidParameterError
from streamnb.models import BernoulliNB, ComplementNB, EmailNB, Forgetting, MultinomialNB, Pruning, Smoothing, Storage

MODELS = [MultinomialNB, BernoulliNB, ComplementNB, EmailNB]
SHARED = ["class_prior", "tokenizer", "smoothing", "forgetting", "pruning", "storage", "ledger", "empty_documents"]


@pytest.mark.parametrize("model_type", MODELS)
def test_statistics_first_then_settings_keyword_only(model_type):
    parameters = inspect.signature(model_type).parameters
    assert list(parameters)[0] == "alpha" and parameters["alpha"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in list(parameters.values())[1:])
    own = [name for name in parameters if name not in SHARED]
    assert own[0] == "alpha" and len(own) <= 4  # alpha, then the model's own: mu, binarize, norm (EmailNB's idf ...)
    assert set(SHARED) <= set(parameters)
    assert len(parameters) <= 12
    # river's checks allow only plain defaults: the settings default to None, their defaults
    assert all(parameters[name].default is None for name in ("smoothing", "forgetting", "pruning", "storage"))


def test_settings_are_frozen_hashable_comparable_values():
    forgetting = Forgetting(half_life=100)
    assert forgetting == Forgetting(half_life=100.0) and hash(forgetting) == hash(Forgetting(half_life=100.0))
    assert forgetting != Forgetting(half_life_seconds=100.0)
    assert repr(forgetting) == "Forgetting(half_life=100.0, half_life_seconds=None)"
    assert Smoothing(grid=[1.0, 0.1]).grid == (0.1, 1.0)  # a tuple, in increasing order: hashable
    assert len({Smoothing(), Smoothing(unseen="ignore"), Storage(), Pruning(), Pruning(max_features=5)}) == 4
    with pytest.raises(AttributeError):
        forgetting.half_life = 5  # type: ignore[misc]


@pytest.mark.parametrize("build, message", [
    (lambda: Forgetting(half_life=-1), "Forgetting.half_life must be a finite number > 0 or None, got -1"),
    (lambda: Forgetting(half_life_seconds=float("inf")), "Forgetting.half_life_seconds must be a finite number > 0"),
    (lambda: Pruning(max_features=0), "Pruning.max_features must be an int >= 1 or None, got 0"),
    (lambda: Pruning(min_count="2"), "Pruning.min_count must be a finite number > 0 or None, got '2'"),
    (lambda: Pruning(expire_after=2.5), "Pruning.expire_after must be an int >= 1 or None"),
    (lambda: Storage(n_buckets=2**32), "Storage.n_buckets must be below 2\\*\\*32"),
    (lambda: Storage(dense_max_classes=0), "Storage.dense_max_classes must be a positive int, got 0"),
    (lambda: Smoothing(unseen="skip"), "Smoothing.unseen must be one of \\('ignore', 'score'\\), got 'skip'"),
    (lambda: Smoothing(allow_zero_alpha=1), "Smoothing.allow_zero_alpha must be True or False, got 1"),
    (lambda: Smoothing(grid=[0.1, 0.1]), "Smoothing.grid must hold distinct values"),
    (lambda: Smoothing(evidence_half_life=0), "Smoothing.evidence_half_life must be a finite number > 0"),
    (lambda: Smoothing(sample_evidence="yes"), "Smoothing.sample_evidence must be True or False, got 'yes'"),
    (lambda: MultinomialNB(forgetting={"half_life": 3}), "forgetting must be a Forgetting \\(or None\\), got"),
    (lambda: MultinomialNB(storage=Pruning()), "storage must be a Storage \\(or None\\), got"),
])
def test_a_bad_setting_is_named_on_one_line(build, message):
    with pytest.raises(InvalidParameterError, match=message) as caught:
        build()
    assert "\n" not in str(caught.value)


def model_with_settings(model_type):
    return model_type(alpha="auto", class_prior="laplace", ledger=50, empty_documents="learn",
                      smoothing=Smoothing(unseen="score", grid=[0.1, 1.0], evidence_half_life=200.0),
                      forgetting=Forgetting(half_life=500.0), pruning=Pruning(max_features=1000, min_count=0.5),
                      storage=Storage(dense_max_classes=2))


@pytest.mark.parametrize("model_type", MODELS)
def test_get_params_rebuild_an_equal_model_and_the_settings_are_the_model_s(model_type):
    model = model_with_settings(model_type)
    params = model.get_params()
    assert list(params) == list(inspect.signature(model_type).parameters)
    assert model_type(**params).get_params() == params
    assert copy.deepcopy(model).get_params() == params
    assert model.forgetting == Forgetting(half_life=500.0) and model.pruning.max_features == 1000
    assert model.smoothing.grid == (0.1, 1.0)
    with pytest.raises(AttributeError):
        model.pruning = Pruning()  # fixed at construction: the clocks and passes run from them
    # a fixed smoothing keeps no grid; alpha="auto" keeps the default one it chose from
    assert model_type().smoothing.grid is None
    assert model_type(alpha="auto").smoothing.grid == streamnb.models.base.DEFAULT_ALPHA_GRID


def test_the_flat_keywords_of_before_warn_and_build_the_same_model():
    with pytest.warns(DeprecationWarning) as caught:
        old = MultinomialNB(alpha="auto", half_life=10, max_features=50, alpha_grid=[0.5, 1.0], n_buckets=64)
    message = str(caught[0].message)
    assert caught[0].filename == __file__
    assert message == ("MultinomialNB(half_life=..., max_features=..., alpha_grid=..., n_buckets=...) is now "
                       "MultinomialNB(forgetting=Forgetting(half_life=...), pruning=Pruning(max_features=...), "
                       "smoothing=Smoothing(grid=...), storage=Storage(n_buckets=...)); the old keywords go in "
                       f"streamnb {_moved.REMOVED_IN}")
    new = MultinomialNB(alpha="auto", forgetting=Forgetting(half_life=10), pruning=Pruning(max_features=50),
                        smoothing=Smoothing(grid=[0.5, 1.0]), storage=Storage(n_buckets=64))
    assert old.get_params() == new.get_params()
    with pytest.warns(DeprecationWarning, match=r"EmailNB\(unseen=\.\.\.\) is now EmailNB\(smoothing=Smoothing"):
        assert EmailNB(unseen="score").smoothing.unseen == "score"
    with pytest.warns(DeprecationWarning, match=r"mu_grid=\.\.\."):
        assert MultinomialNB(alpha=0.1, mu="auto", mu_grid=[10.0]).smoothing.grid == (10.0,)


@pytest.mark.filterwarnings("ignore:.*the old keywords go:DeprecationWarning")
@pytest.mark.parametrize("params, message", [
    ({"half_life": 10, "forgetting": Forgetting()}, "half_life is a field of forgetting: give it once"),
    ({"alpha": "auto", "alpha_grid": [1.0], "mu_grid": [2.0]}, "mu_grid is a field of smoothing: give it once"),
    ({"half_life": -1}, "Forgetting.half_life must be a finite number > 0"),
])
def test_a_flat_keyword_beside_its_object_or_out_of_range_is_refused(params, message):
    with pytest.raises(InvalidParameterError, match=message):
        MultinomialNB(**params)


def test_an_unknown_keyword_is_still_an_error():
    with pytest.raises(TypeError, match="half_lives"):
        MultinomialNB(half_lives=10)


def test_a_model_file_keeps_the_settings_flat_as_files_always_have(tmp_path):
    model = model_with_settings(MultinomialNB)
    model.learn_one({"a": 1}, "x").learn_one({"b": 1}, "y")
    path = tmp_path / "model.snb"
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        params = decode_value(json.loads(archive.read("metadata.json"))["state"])["params"]
    assert {"half_life", "half_life_seconds", "max_features", "min_count", "expire_after", "unseen",
            "allow_zero_alpha", "alpha_grid", "evidence_half_life", "sample_evidence", "n_buckets",
            "dense_max_classes"} <= set(params)
    assert not {"smoothing", "forgetting", "pruning", "storage"} & set(params)
    loaded = streamnb.load(path)
    assert loaded.get_params() == model.get_params()
    assert loaded.predict_log_proba_one({"a": 1, "c": 2}) == model.predict_log_proba_one({"a": 1, "c": 2})


def test_models_differing_only_in_their_layout_merge():
    dense, sparse = MultinomialNB(), MultinomialNB(storage=Storage(dense_max_classes=1))
    dense.learn_one({"a": 1}, "x")
    sparse.learn_one({"b": 1}, "y")
    assert dense.merge(sparse).class_counts == {"x": 1.0, "y": 1.0}
    with pytest.raises(IncompatibleModelsError, match="storage differ"):
        MultinomialNB().merge(MultinomialNB(storage=Storage(n_buckets=64)))
    with pytest.raises(IncompatibleModelsError, match="forgetting differ"):
        MultinomialNB().merge(MultinomialNB(forgetting=Forgetting(half_life=5)))
